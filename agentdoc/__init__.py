"""agentdoc: a conversation with Claude kept in a markdown file, replies streamed into it."""

__version__ = "0.1.0"
