"""The command line: ``sls generate`` and ``sls examples`` (:mod:`sls.cli.app`), ``sls lqr`` and ``sls simulate``
(:mod:`sls.cli.control`), the ``--param`` values both parse (:mod:`sls.cli.values`)."""

from sls.cli.app import main

__all__ = ["main"]
