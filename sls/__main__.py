"""``python -m sls`` runs the command line."""

from sls.cli.app import main

main()
