"""Values of command-line options shared by ``sls generate`` (:mod:`sls.cli.app`) and the control
commands (:mod:`sls.cli.control`): parsed here, so neither command module imports the other's."""

from __future__ import annotations

from sls.errors import UsageError
from sls.readers.numbers import NumberProblem, file_number

#: The integrators of ``sls simulate --method`` (those of :func:`sls.control.simulate`, which imports scipy: named
#: here so that the command line starts without it).
METHODS = ("RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA")


def parse_param(text: str) -> tuple[str, float]:
    """Parse ``NAME=NUMBER`` (a ``--param`` value)."""
    name, sep, value = text.partition("=")
    name, value = name.strip(), value.strip()
    if not sep or not name or not value:
        raise UsageError(f"--param {text!r}: expected NAME=NUMBER, e.g. --param m=1.5")
    if not (name.isascii() and name.isidentifier()):
        raise UsageError(f"--param {text!r}: {name!r} is not a parameter name (expected NAME=NUMBER)")
    try:
        return name, file_number(value)  # the one checked conversion of the model files' numbers
    except NumberProblem as exc:
        if "finite" in str(exc):
            raise UsageError(f"--param {text!r}: the value must be a finite number") from None
        if "too large" in str(exc):
            raise UsageError(f"--param {text!r}: {exc}") from None
        raise UsageError(f"--param {text!r}: {value!r} is not a number (expected NAME=NUMBER)") from None
