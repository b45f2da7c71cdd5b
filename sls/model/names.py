"""Names and values of a model: which names a symbol may have, which values a parameter may take, and the
labels (model name, source) that are written into generated headers."""

from __future__ import annotations

import builtins
import keyword
import math
from typing import SupportsFloat, SupportsIndex

import sympy

from sls.algebra.expressions import CONSTANTS, FUNCTIONS
from sls.errors import ModelError, brief

#: Names that cannot be used for states, inputs or parameters: the generated
#: functions' own argument names, the modules they use, whitelisted functions.
RESERVED_NAMES = frozenset({"np", "math"}) | frozenset(FUNCTIONS) | frozenset(CONSTANTS)
#: The generated functions' positional arguments: states and inputs may use
#: these names (the code consumes the arguments before unpacking the state),
#: parameters may not (they are keyword arguments of the same functions).
ARGUMENT_NAMES = frozenset({"x", "u", "qddot"})


def check_name(name: object, what: str, *, parameter: bool = False) -> str:
    """Return ``name`` if it can be a symbol in generated code, else raise.

    A valid name is a plain ASCII identifier, not a Python keyword or builtin,
    not starting with ``_`` and not one of :data:`RESERVED_NAMES` (nor, for a
    ``parameter``, one of :data:`ARGUMENT_NAMES`).
    """
    if not isinstance(name, str):
        raise ModelError(f"{what}: name must be a string, got {name!r}")
    if not (name.isascii() and name.isidentifier()) or keyword.iskeyword(name):
        raise ModelError(
            f"{what}: {name!r} is not a plain identifier (letters, digits and '_', not starting with a digit)"
        )
    if name.startswith("_"):
        raise ModelError(f"{what}: {name!r} starts with '_', which is reserved for generated code")
    if name in RESERVED_NAMES or hasattr(builtins, name):
        raise ModelError(
            f"{what}: {name!r} is a reserved name (function, constant, Python builtin or generated-code argument)"
        )
    if parameter and name in ARGUMENT_NAMES:
        raise ModelError(
            f"{what}: {name!r} cannot be a parameter: it is an argument of the generated functions "
            f"({', '.join(sorted(ARGUMENT_NAMES))}); rename it"
        )
    return name


def check_value(name: str, value: object, what: str | None = None) -> float:
    """Return a parameter value as a finite float, or raise :class:`ModelError`.

    ``what`` names the value in the message (default: ``parameter 'NAME'``).
    """
    label = what or f"parameter '{name}'"
    problem = f"{label}: value must be a finite number, got {brief(repr(value), 60)}"
    if isinstance(value, (bool, str, bytes)) or (isinstance(value, sympy.Basic) and not value.is_number):
        raise ModelError(problem)
    if not isinstance(value, (SupportsFloat, SupportsIndex)):  # what float() takes, strings and buffers aside
        raise ModelError(problem)
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError, AttributeError):
        raise ModelError(problem) from None
    if not math.isfinite(number):
        raise ModelError(problem)
    return number


def safe_label(text: object, default: str) -> str:
    """``text`` made safe for a comment or docstring of generated code.

    Model names and sources come from file names and API arguments; they are
    written into headers, so line breaks, quotes and backslashes (which could
    end a comment or a docstring) and non-ASCII characters become ``_``.
    """
    if not isinstance(text, str) or not text:
        return default
    cleaned = "".join(c if c.isascii() and c.isprintable() and c not in "\"'\\`" else "_" for c in text)
    return cleaned[:120]
