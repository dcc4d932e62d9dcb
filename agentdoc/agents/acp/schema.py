"""The ACP (version 1) messages agentdoc sends and reads, as pydantic models.

Only the fields agentdoc uses are modelled; everything else an agent sends is ignored, so a
newer agent's additions never break a turn. Names follow the protocol's camelCase on the wire.
Facts from the protocol's published schema (``schema/v1/schema.json``) and the real agents
(``agents-acp.md``).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

PROTOCOL_VERSION = 1

# JSON-RPC error codes ACP gives a meaning to.
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
AUTH_REQUIRED = -32000


class Wire(BaseModel):
    """camelCase on the wire, snake_case in Python; unknown fields ignored."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class AgentInfo(Wire):
    name: str = ""
    title: str | None = None
    version: str | None = None


class PromptCapabilities(Wire):
    image: bool = False


class SessionCapabilities(Wire):
    # Each is an (empty) object when offered, absent or null when not.
    resume: dict[str, Any] | None = None
    fork: dict[str, Any] | None = None
    close: dict[str, Any] | None = None


class AgentCapabilities(Wire):
    load_session: bool = False
    prompt_capabilities: PromptCapabilities = PromptCapabilities()
    session_capabilities: SessionCapabilities = SessionCapabilities()
    meta: dict[str, Any] | None = Field(
        default=None, validation_alias=AliasChoices("_meta", "meta")
    )

    @property
    def pushes_login(self) -> bool:
        """The agent tells its login in AUTH_STATUS notifications (`_meta.authStatus`), the
        first of them always, though only once a probe of its own has finished."""
        return isinstance(self.meta, dict) and "authStatus" in self.meta


class AuthMethod(Wire):
    id: str = ""
    name: str = ""
    description: str | None = None


# claude-agent-acp tells its login in a notification of its own (at the handshake, after a
# probe that nothing waits for, and at session/new), not by refusing the session:
# `{"authStatus": {"kind": "none", "label": ...}}`.
AUTH_STATUS = "_auth/status_update"


def logged_out(params: dict[str, object]) -> str | None:
    """The agent's words for having no login, from an AUTH_STATUS notification (None: it has
    one, or the notification says nothing agentdoc can read)."""
    status = params.get("authStatus")
    if not isinstance(status, dict) or status.get("kind") != "none":
        return None
    label = status.get("label")
    return label if isinstance(label, str) and label else "not logged in"


class InitializeResult(Wire):
    protocol_version: int
    agent_capabilities: AgentCapabilities = AgentCapabilities()
    auth_methods: list[AuthMethod] = []
    agent_info: AgentInfo | None = None


class ModelInfo(Wire):
    model_id: str = ""
    name: str = ""


class ModelState(Wire):
    """The unstable model list (Gemini CLI still offers it instead of a config option)."""

    current_model_id: str | None = None
    available_models: list[ModelInfo] = []


class ModeInfo(Wire):
    id: str = ""
    name: str = ""
    description: str | None = None  # what it does, in the agent's words (its policy's meaning)


class ModeState(Wire):
    current_mode_id: str | None = None
    available_modes: list[ModeInfo] = []


class ConfigChoice(Wire):
    """One value of a select option; a group holds more of them under ``options``."""

    value: str | None = None
    name: str = ""
    description: str | None = None
    options: list[ConfigChoice] | None = None


class ConfigOption(Wire):
    id: str = ""
    name: str = ""
    category: str | None = None
    current_value: Any = None
    options: list[ConfigChoice] = []

    def choices(self) -> list[ConfigChoice]:
        """Every value it takes, groups flattened."""
        flat: list[ConfigChoice] = []
        for choice in self.options:
            flat.extend(c for c in choice.options or () if c.value is not None)
            if choice.value is not None:
                flat.append(choice)
        return flat


class SessionResult(Wire):
    """The answer to session/new, /load, /resume or /fork (``sessionId`` only from new, fork)."""

    session_id: str | None = None
    models: ModelState | None = None
    modes: ModeState | None = None
    config_options: list[ConfigOption] | None = None

    def model(self) -> str | None:
        if self.models and self.models.current_model_id:
            return self.models.current_model_id
        for option in self.config_options or ():
            if option.category == "model" and isinstance(option.current_value, str):
                return option.current_value
        return None


class TokenUsage(Wire):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_read_tokens: int | None = None
    cached_write_tokens: int | None = None


class PromptResult(Wire):
    stop_reason: str
    usage: TokenUsage | None = None
    meta: dict[str, Any] | None = Field(
        default=None, validation_alias=AliasChoices("_meta", "meta")
    )


class ContentBlock(Wire):
    type: str
    text: str | None = None


class ContentChunk(Wire):
    content: ContentBlock
    message_id: str | None = None


class Location(Wire):
    path: str
    line: int | None = None


class ToolCallFields(Wire):
    """A tool call (``tool_call``) or an update to one (``tool_call_update``): all but the id
    optional, only what changed is sent."""

    tool_call_id: str
    title: str | None = None
    kind: str | None = None
    status: str | None = None
    content: list[dict[str, Any]] | None = None
    locations: list[Location] | None = None
    raw_input: Any = None
    raw_output: Any = None


class Cost(Wire):
    amount: float
    currency: str


class UsageUpdate(Wire):
    used: int
    size: int
    cost: Cost | None = None


class NoticeUpdate(Wire):
    severity: str = "info"
    title: str = ""


class PermissionOptionWire(Wire):
    option_id: str
    name: str = ""
    kind: Literal["allow_once", "allow_always", "reject_once", "reject_always"]


class PermissionRequest(Wire):
    session_id: str
    tool_call: ToolCallFields
    options: list[PermissionOptionWire]


class RpcError(Wire):
    code: int = 0
    message: str = ""
    data: Any = None

    def describe(self) -> str:
        """The message, plus the details agents put in ``data`` (Gemini: ``details``; codex-acp:
        ``message``, the vendor API's own error body as JSON)."""
        message = _unwrapped(self.message)
        detail = _detail(self.data)
        if detail and detail not in message:
            return f"{message}: {detail}"
        return message or f"error {self.code}"


def error_detail(text: str) -> str | None:
    """An API error body's own message (``{"error": {"message": …}}``), else the text."""
    return _detail(text)


def _detail(data: Any) -> str | None:
    found = data
    if isinstance(data, dict):
        found = next(
            (data[k] for k in ("details", "message") if isinstance(data.get(k), str)), None
        )
    if not isinstance(found, str) or not found.strip():
        return None
    try:
        body = json.loads(found)
    except ValueError:
        return found.strip()
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) and message else found.strip()


def _unwrapped(message: str) -> str:
    """The message with a vendor's error JSON at its end replaced by that error's own message.

    OpenCode (1.18) names an error the API sent mid-stream by the event's JSON
    (``Internal error: {"type":"invalid_request_error","message":…}``), and one its own
    HTTP client met by the whole body (``… failed with HTTP 400: {"type": "error", …}``).
    """
    start = message.find("{")
    if start < 0:
        return message
    try:
        body = json.loads(message[start:])
    except ValueError:
        return message
    if not isinstance(body, dict):
        return message
    error = body.get("error")
    said = (error if isinstance(error, dict) else body).get("message")
    if not isinstance(said, str) or not said.strip():
        return message
    return message[:start] + said.strip()


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def client_capabilities() -> dict[str, Any]:
    """We offer the agent nothing beyond the prompt: its tools read and write by themselves."""
    return {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False}
