"""`python -m agentdoc`: the same command line as the `agentdoc` script."""

from agentdoc.cli import main

raise SystemExit(main())
