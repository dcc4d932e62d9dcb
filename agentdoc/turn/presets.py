"""Presets: a markdown file of settings a document starts from (`agentdoc: {preset: NAME}`).

`NAME.md` lives in `presets/` beside the user's config file. Its frontmatter may set what a
document may set about the conversation — agent, model, effort, thinking — plus files to send
with the first prompt (`include`, read under the same rules as a prompt's `@` lines); its body
is the system prompt. The document's own keys win. A preset is a file anyone can hand around,
so it sets nothing a document cannot: permissions, commands and trust stay in the user's config,
and any other key is refused by name rather than ignored.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from agentdoc.config import AGENT_NAME, config_path
from agentdoc.document import LINE_BREAK, Document
from agentdoc.errors import AgentdocError, PromptRefused

# A file name, never a path: no separators, no leading dot, no `..`.
PRESET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
MAX_BYTES = 256 * 1024  # a preset is a few settings and a system prompt
_FENCE = re.compile(r"(?:---|\.\.\.)[ \t]*")


class PresetRefused(PromptRefused):
    """The preset a document names is missing or sets what it may not; nothing is sent."""


class _Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str | None = None  # shown by `agentdoc presets`
    agent: str | None = Field(None, pattern=AGENT_NAME.pattern)
    model: str | None = Field(None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:\[\]/-]{0,127}$")
    effort: Literal["low", "medium", "high", "xhigh", "max"] | None = None
    thinking: bool | None = None
    include: tuple[str, ...] = ()


ALLOWED = tuple(_Settings.model_fields)
# The document keys a preset fills in when the document leaves them out.
_META_KEYS = ("agent", "model", "effort", "thinking")


@dataclass(frozen=True)
class Preset:
    name: str
    path: Path
    settings: _Settings
    system: str | None  # the body


def presets_dir() -> Path:
    return config_path().parent / "presets"


def _refuse(name: str, why: str) -> PresetRefused:
    return PresetRefused(f"preset {name!r}: {why}")


def load_preset(name: str) -> Preset:
    if not isinstance(name, str) or not PRESET_NAME.fullmatch(name):
        raise _refuse(
            str(name), "a preset name is letters, digits, _ and - (a file name, not a path)"
        )
    path = presets_dir() / f"{name}.md"
    try:
        data = path.read_bytes()[: MAX_BYTES + 1]
    except FileNotFoundError:
        raise _refuse(name, f"there is no {path} (`agentdoc presets` lists them)") from None
    except OSError as exc:
        raise _refuse(name, f"cannot read {path}: {exc.strerror or exc}") from exc
    if len(data) > MAX_BYTES:
        raise _refuse(name, f"{path} is over {MAX_BYTES // 1024} KiB")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _refuse(name, f"{path} is not UTF-8 text") from None
    raw, body = _split(name, text)
    return Preset(name, path, _settings(name, raw), body.strip() or None)


def _split(name: str, text: str) -> tuple[dict[str, Any], str]:
    """The frontmatter's mapping and the body."""
    lines = LINE_BREAK.split(text)
    if not lines or lines[0].rstrip() != "---":
        return {}, text
    end = next((i for i, line in enumerate(lines[1:], 1) if _FENCE.fullmatch(line)), None)
    if end is None:
        raise _refuse(name, "its frontmatter has no closing `---` line")
    try:
        raw = YAML(typ="safe").load("\n".join(lines[1:end]))
    except YAMLError as exc:
        raise _refuse(name, f"its frontmatter is not YAML: {exc}") from exc
    if raw is not None and not isinstance(raw, dict):
        raise _refuse(name, "its frontmatter must be a mapping of settings")
    return raw or {}, "\n".join(lines[end + 1 :])


def _settings(name: str, raw: dict[str, Any]) -> _Settings:
    for key in raw:
        if key not in ALLOWED:
            raise _refuse(
                name,
                f"`{key}` is not something a preset may set (it may set {', '.join(ALLOWED)}; "
                "its body is the system prompt; permissions, commands and trust come only "
                "from your own config)",
            )
    try:
        settings = _Settings.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"`{'.'.join(str(p) for p in e['loc'])}` {e['msg']}" for e in exc.errors()
        )
        raise _refuse(name, problems) from exc
    for item in settings.include:
        if not item.strip() or '"' in item or LINE_BREAK.search(item):
            raise _refuse(name, f"include {item!r} is not a path agentdoc can include")
    return settings


def apply_preset(doc: Document) -> tuple[Document, tuple[str, ...]]:
    """The document with its preset's settings under its own, and the files to include with
    its first prompt; the document itself when it names no preset."""
    name = doc.meta.preset
    if name is None:
        return doc, ()
    preset = load_preset(name)
    given = doc.meta.model_dump(exclude_none=True)
    filled = {k: getattr(preset.settings, k) for k in _META_KEYS}
    filled["system"] = preset.system
    update = {k: v for k, v in filled.items() if v is not None and k not in given}
    try:
        meta = type(doc.meta).model_validate({**given, **update})
    except ValidationError as exc:
        raise _refuse(name, str(exc)) from exc
    return dataclasses.replace(doc, meta=meta), preset.settings.include


def first_prompt(prompt: str, doc: Document, include: tuple[str, ...]) -> str:
    """The prompt, with the preset's files as `@` lines when it starts the conversation."""
    if not include or doc.turn_count() > 0:
        return prompt
    return "\n".join(f'@"{item}"' for item in include) + "\n\n" + prompt


def list_presets() -> list[tuple[str, str]]:
    """(name, description or the problem that makes it unusable) for each preset file."""
    folder = presets_dir()
    try:
        files = sorted(p for p in folder.iterdir() if p.suffix == ".md")
    except OSError:
        return []
    found = []
    for file in files:
        try:
            preset = load_preset(file.stem)
        except AgentdocError as exc:
            found.append((file.stem, f"unusable: {exc}"))
            continue
        found.append((file.stem, preset.settings.description or ""))
    return found
