"""One conversation turn: which session it goes to, what is sent, how the reply streams into the
document, how it ends, and the hooks around it.

:class:`TurnRunner` runs a turn end to end: `detect` finds the prompt, `session` plans the
request, `stream` feeds the agent's events into the reply that `writer` keeps in the document,
`ending` writes its final form, and the hooks of `hooks` (the undo snapshot before; the
transcript, the marks, the snapshot after, git commit and push) run around it. What a turn
leaves behind is written through `agentdoc.records`; the commands over past turns are
`agentdoc.conversation`'s. Other packages import the names in ``__all__`` from here; each
loads its submodule on first use (see :mod:`agentdoc.lazy`).
"""

from typing import TYPE_CHECKING

from agentdoc.lazy import lazy_exports

if TYPE_CHECKING:  # names re-exported for the type checker; loaded lazily at run time
    from agentdoc.turn.approvals import request_answer as request_answer
    from agentdoc.turn.detect import submission as submission
    from agentdoc.turn.detect import wants_marker as wants_marker
    from agentdoc.turn.gitcommit import commit_undo as commit_undo
    from agentdoc.turn.gitsync import behind as behind
    from agentdoc.turn.gitsync import integrate as integrate
    from agentdoc.turn.gitsync import sync_on as sync_on
    from agentdoc.turn.gitsync import toplevel as toplevel
    from agentdoc.turn.outcome import Progress as Progress
    from agentdoc.turn.presets import apply_preset as apply_preset
    from agentdoc.turn.presets import list_presets as list_presets
    from agentdoc.turn.presets import load_preset as load_preset
    from agentdoc.turn.presets import presets_dir as presets_dir
    from agentdoc.turn.runner import Clearer as Clearer
    from agentdoc.turn.runner import TurnRunner as TurnRunner
    from agentdoc.turn.session import Mode as Mode
    from agentdoc.turn.session import prepare_turn as prepare_turn
    from agentdoc.turn.session import working_dir as working_dir

__all__, __getattr__ = lazy_exports(
    __name__,
    {
        "approvals": ("request_answer",),
        "detect": (
            "submission",
            "wants_marker",
        ),
        "gitcommit": ("commit_undo",),
        "gitsync": (
            "behind",
            "integrate",
            "sync_on",
            "toplevel",
        ),
        "outcome": ("Progress",),
        "presets": (
            "apply_preset",
            "list_presets",
            "load_preset",
            "presets_dir",
        ),
        "runner": (
            "Clearer",
            "TurnRunner",
        ),
        "session": (
            "Mode",
            "prepare_turn",
            "working_dir",
        ),
    },
)
