"""agentdoc: a conversation with a coding agent kept in a markdown file, replies streamed in."""

__version__ = "0.1.0"
