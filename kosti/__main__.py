"""``python -m kosti`` runs the command-line interface."""

from kosti.cli import main

raise SystemExit(main())
