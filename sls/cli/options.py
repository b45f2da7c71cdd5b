"""Options shared by the commands that integrate a generated package (``sls simulate``, ``sls sweep``): the time
span, the closed loop and the integrator, declared once (:func:`simulation_options`) and checked once
(:func:`check_simulation_options`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click

from sls.cli.values import METHODS
from sls.errors import OutputError, UsageError

Command = TypeVar("Command", bound=Callable)

_METHOD_HELP = (
    "The integrator: RK45, RK23, DOP853 (explicit) or Radau, BDF, LSODA (for stiff models, e.g. steep "
    "friction; they get the analytic Jacobian)."
)

_TOLERANCE_HELP = "tolerance of the integrator."


def simulation_options(lqr_help: str) -> Callable[[Command], Command]:
    """The options ``--t-end``, ``--t-start``, ``--lqr-from``, ``--method``, ``--rtol``, ``--atol`` (in that order
    in ``--help``), with ``lqr_help`` saying what ``--lqr-from`` closes."""
    options = (
        click.option("--t-end", "t_end", required=True, type=float, metavar="SECONDS", help="End time."),
        click.option(
            "--t-start", "t_start", default=0.0, show_default=True, type=float, metavar="SECONDS", help="Start time."
        ),
        click.option("--lqr-from", "lqr_from", type=click.Path(dir_okay=False), metavar="FILE.json", help=lqr_help),
        click.option("--method", default="RK45", show_default=True, type=click.Choice(METHODS), help=_METHOD_HELP),
        click.option("--rtol", default=1e-8, show_default=True, type=float, help=f"Relative {_TOLERANCE_HELP}"),
        click.option("--atol", default=1e-10, show_default=True, type=float, help=f"Absolute {_TOLERANCE_HELP}"),
    )

    def decorate(command: Command) -> Command:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


def check_simulation_options(t_start: float, t_end: float, rtol: float, atol: float) -> None:
    """One line (:class:`~sls.errors.UsageError`) for a time span that is not finite and forward, or tolerances that
    are not positive."""
    if not (math.isfinite(t_end) and math.isfinite(t_start) and t_end > t_start):
        raise UsageError(f"--t-end {t_end:g}: must be a finite time after --t-start {t_start:g}")
    if not (rtol > 0 and atol > 0):
        raise UsageError("--rtol and --atol must be positive")


def check_output_folder(path: str, option: str) -> None:
    """One line (:class:`~sls.errors.OutputError`) unless the folder ``path`` exists or its parent does: a command
    creates the folder or file it is told to write, never the folders above it (a typo in them is an error, as for
    ``--save``, ``--plot`` and ``--csv``, :func:`sls.output.write.check_output_file`)."""
    folder = Path(path)
    parent = folder.parent  # as the user wrote it ('.' is the current folder)
    if folder.exists() or parent.is_dir():
        return
    what = "is not a directory" if parent.exists() else "does not exist"
    raise OutputError(f"{option} {path}: the folder {parent} {what}; create it first")
