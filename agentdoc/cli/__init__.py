"""The command line: the click commands and what only a terminal needs.

``commands`` assembles the thin click layer (``group``, and the ``*_commands`` modules by what
they do); ``foreground`` runs a one-shot turn or the daemon in a terminal (``terminal`` draws
the live view, ``echo`` prints the reply to a pipe, ``interrupt`` handles Ctrl-C); ``logs``
shapes log lines and keeps the daemon's log file, ``names`` names documents in output;
``doctor``, ``completion``, ``recipes`` and ``demo`` serve their commands. Nothing below this
package imports it.
"""

from agentdoc.cli.commands import cli, main

__all__ = ["cli", "main"]
