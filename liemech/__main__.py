"""``python -m liemech``: the command line of ``liemech.cli``."""

from liemech.cli import main

raise SystemExit(main())
