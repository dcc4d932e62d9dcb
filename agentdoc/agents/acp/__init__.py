"""The Agent Client Protocol: any agent that speaks ACP (Gemini CLI, Codex, OpenCode, …).

One client for the protocol (``rpc`` the JSON-RPC connection, ``schema`` the messages,
``peer`` the agent's handshake, ``process`` the long-lived agent with its sessions, ``turn``
one prompt as an ``AgentTurn``, ``translate`` the updates as neutral events, ``checks`` what
`doctor` checks, ``agent`` what the protocol lets agentdoc count on); what single agents do
differently is a row in ``quirks``. The rest of agentdoc sees only its `Agent`, ``ACP``.
"""

from agentdoc.agents.acp.agent import ACP

__all__ = [
    "ACP",
]
