"""An offline Messages API on loopback: the demo's canned model and the end-to-end tests' fake.

`script` reads and validates scripts, `wire` turns an entry into SSE events and JSON bodies,
`server` answers the CLI's requests. Others use `FakeMessagesAPI` and the names below.
"""

from agentdoc.agents.fakeapi.script import ScriptEntry, load_script, parse_entry
from agentdoc.agents.fakeapi.server import FakeMessagesAPI
from agentdoc.agents.fakeapi.wire import RecordedRequest

__all__ = ["FakeMessagesAPI", "RecordedRequest", "ScriptEntry", "load_script", "parse_entry"]
