"""Offline vendor APIs on loopback: the demo's canned model and the end-to-end tests' fakes.

`script` reads and validates scripts (one model for every vendor); `wire` is Anthropic's
Messages API, `gemini` Gemini's, `responses` OpenAI's Responses API and `chat` its Chat
Completions, each a `dialect` that turns an entry into SSE events and JSON bodies; `server`
answers the agent's requests. Others use `FakeMessagesAPI` (Claude Code, OpenCode),
`FakeGeminiAPI`, `FakeResponsesAPI` and `FakeChatAPI` (Qwen Code, pi).
"""

from agentdoc.agents.fakeapi.server import (
    FakeChatAPI,
    FakeGeminiAPI,
    FakeMessagesAPI,
    FakeResponsesAPI,
)

__all__ = [
    "FakeChatAPI",
    "FakeGeminiAPI",
    "FakeMessagesAPI",
    "FakeResponsesAPI",
]
