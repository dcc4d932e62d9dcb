"""What every agent protocol shares: the agent-neutral events of a turn, the reply they build,
the request, and the turn interface.

A room inside `agentdoc.agents`: the protocol packages beside it (``claude``, ``acp``) import
its modules, and the rest of agentdoc sees what it offers through the face
(``agentdoc.agents``).
"""

# No names of its own: see the docstring.
__all__: list[str] = []
