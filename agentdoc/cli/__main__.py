"""`python -m agentdoc.cli`: the command line, for tests that need a process of their own."""

from agentdoc.cli import main

raise SystemExit(main())
