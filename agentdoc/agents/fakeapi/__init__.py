"""Offline vendor APIs on loopback: the demo's canned model and the end-to-end tests' fakes.

`script` reads and validates scripts (one model for every vendor); `wire` is Anthropic's
Messages API, `gemini` Gemini's, `responses` OpenAI's Responses API and `chat` its Chat
Completions, each a `dialect` that turns an entry into SSE events and JSON bodies; `server`
answers the agent's requests. Others use `FakeMessagesAPI` (Claude Code, OpenCode),
`FakeGeminiAPI`, `FakeResponsesAPI`, `FakeChatAPI` (Qwen Code, pi) and the names below.
"""

from agentdoc.agents.fakeapi.script import ScriptEntry, load_script, parse_entry
from agentdoc.agents.fakeapi.server import (
    FakeChatAPI,
    FakeGeminiAPI,
    FakeMessagesAPI,
    FakeResponsesAPI,
)
from agentdoc.agents.fakeapi.wire import RecordedRequest

__all__ = [
    "FakeChatAPI",
    "FakeGeminiAPI",
    "FakeMessagesAPI",
    "FakeResponsesAPI",
    "RecordedRequest",
    "ScriptEntry",
    "load_script",
    "parse_entry",
]
