"""The Agent Client Protocol: any agent that speaks ACP (Gemini CLI, Codex, OpenCode, …).

One client for the protocol (``rpc`` the JSON-RPC connection, ``schema`` the messages,
``process`` the long-lived agent with its sessions, ``turn`` one prompt as an ``AgentTurn``,
``translate`` the updates as neutral events, ``probe`` the handshake `doctor` runs, ``agent``
what the protocol lets agentdoc count on); what single agents do differently is a row in
``quirks``. Other packages import the names in ``__all__`` from here.
"""

from agentdoc.agents.acp.agent import ACP
from agentdoc.agents.acp.launch import WarmAcp, WarmAcpStart
from agentdoc.agents.acp.launch import start as start_acp
from agentdoc.agents.acp.launch import warm as warm_acp
from agentdoc.agents.acp.process import AcpProcess
from agentdoc.agents.acp.quirks import QUIRKS, Quirks
from agentdoc.agents.acp.sessions import SessionHow, SessionOpened
from agentdoc.agents.acp.translate import UpdateTranslator
from agentdoc.agents.acp.turn import AcpTurn

__all__ = [
    "ACP",
    "QUIRKS",
    "AcpProcess",
    "AcpTurn",
    "Quirks",
    "SessionHow",
    "SessionOpened",
    "UpdateTranslator",
    "WarmAcp",
    "WarmAcpStart",
    "start_acp",
    "warm_acp",
]
