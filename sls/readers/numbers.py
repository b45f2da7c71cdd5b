"""The one checked conversion of a number read from a model file (a URDF or xacro attribute, an MJCF attribute or
MuJoCo's compiled value of it, a TOML value): :func:`file_number` for text, :func:`checked_number` for a value
already converted.

A number must be written as a decimal number (``1``, ``-0.5``, ``.25``, ``3e-4``: what C's ``strtod``, MuJoCo and
URDF parsers read; not ``1_000``, ``0x1F`` or non-ASCII digits, which Python's ``float`` also takes), be finite and
no larger in magnitude than :data:`~sls.model.names.MAX_MAGNITUDE` (an absurd value in SI units, and one whose
products would overflow). A number that is not is a :class:`NumberProblem`, which the readers turn into one line
naming the file, the element, the attribute and the value.
"""

from __future__ import annotations

import math
import re

from sls.errors import brief
from sls.model.names import MAX_MAGNITUDE, magnitude_problem

#: A decimal number as model files write it (optional sign, digits with an optional point, optional exponent).
DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
#: Words C's ``strtod`` (and so MuJoCo) reads as non-finite numbers.
NON_FINITE = re.compile(r"[+-]?(?:inf|infinity|nan)(?:\([0-9A-Za-z_]*\))?", re.IGNORECASE)
#: Longest value shown in a message (a 5000-digit number is shown shortened).
SHOWN = 40

__all__ = ["DECIMAL", "MAX_MAGNITUDE", "NON_FINITE", "NumberProblem", "checked_number", "file_number", "shown"]


class NumberProblem(ValueError):
    """A number of a model file that is not one, not finite or absurd; the message says which
    (``'nan' is not a finite number``), the reader adds where."""


def shown(text: str) -> str:
    """``text`` on one line, shortened for a message."""
    return brief(text.strip(), SHOWN)


def file_number(word: str) -> float:
    """The float written as ``word`` (one number of an attribute), or :class:`NumberProblem`."""
    text = word.strip()
    if NON_FINITE.fullmatch(text):
        raise NumberProblem(f"'{shown(text)}' is not a finite number")
    if not DECIMAL.fullmatch(text):
        raise NumberProblem(f"'{shown(text)}' is not a number")
    value = float(text)
    if math.isinf(value):  # a decimal number beyond floating point (1e999, 5000 digits)
        raise NumberProblem(f"'{shown(text)}' {magnitude_problem(value)}")
    return checked_number(value, text)


def checked_number(value: float, written: str | None = None) -> float:
    """``value`` as a float when it is finite and at most :data:`MAX_MAGNITUDE` in magnitude, else
    :class:`NumberProblem` (``written``: the value as the file writes it, for the message)."""
    number = float(value)
    text = shown(written if written is not None else repr(number))
    if not math.isfinite(number):
        raise NumberProblem(f"'{text}' is not a finite number")
    problem = magnitude_problem(number)
    if problem:
        raise NumberProblem(f"'{text}' {problem}")
    return number
