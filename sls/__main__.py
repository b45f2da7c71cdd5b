"""``python -m sls`` runs the command line."""

from .cli import main

main()
