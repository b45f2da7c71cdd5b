"""Names and values of a model: which names a symbol may have, which values a parameter may take, the
labels (model name, source) that are written into generated headers, the name a user gives a model
(:func:`with_name`), and the closest valid name to a misspelt one (``did you mean 'fric'?``)."""

from __future__ import annotations

import builtins
import difflib
import keyword
import math
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, SupportsFloat, SupportsIndex

import sympy

from sls.algebra.expressions import CONSTANTS, FUNCTIONS
from sls.errors import ModelError, SlsError, brief

if TYPE_CHECKING:
    from sls.model.model import Model

#: Names that cannot be used for states, inputs or parameters: the generated
#: functions' own argument names, the modules they use, whitelisted functions.
RESERVED_NAMES = frozenset({"np", "math"}) | frozenset(FUNCTIONS) | frozenset(CONSTANTS)
#: The generated functions' positional arguments: states and inputs may use
#: these names (the code consumes the arguments before unpacking the state),
#: parameters may not (they are keyword arguments of the same functions).
ARGUMENT_NAMES = frozenset({"x", "u", "qddot", "lam"})
#: Largest magnitude of a number a model file or a parameter may hold: larger is absurd in SI units (and products
#: of such values overflow floating point); expression literals have their own bound
#: (:data:`sls.algebra.expressions.MAX_LITERAL`).
MAX_MAGNITUDE = 1e15


def check_name(name: object, what: str, *, parameter: bool = False) -> str:
    """Return ``name`` if it can be a symbol in generated code, else raise.

    A valid name is a plain ASCII identifier, not a Python keyword or builtin,
    not starting with ``_`` and not one of :data:`RESERVED_NAMES` (nor, for a
    ``parameter``, one of :data:`ARGUMENT_NAMES`).
    """
    if not isinstance(name, str):
        raise ModelError(f"{what}: name must be a string, got {name!r}")
    if not (name.isascii() and name.isidentifier()):
        raise ModelError(
            f"{what}: {name!r} is not a plain identifier (letters, digits and '_', not starting with a digit)"
        )
    if keyword.iskeyword(name):
        raise ModelError(f"{what}: {name!r} is a reserved name (a Python keyword)")
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
    except OverflowError:  # an integer beyond floating point
        raise ModelError(f"{label}: {brief(repr(value), 60)} {magnitude_problem(math.inf)}") from None
    except (TypeError, ValueError, AttributeError):
        raise ModelError(problem) from None
    if not math.isfinite(number):
        raise ModelError(problem)
    too_large = magnitude_problem(number)
    if too_large:
        raise ModelError(f"{label}: {brief(repr(value), 60)} {too_large}")
    return number


def magnitude_problem(number: float) -> str | None:
    """What is wrong with the finite ``number`` as a value of a model (``"is too large ..."``), or ``None``."""
    if abs(number) > MAX_MAGNITUDE:
        return f"is too large (the limit is {MAX_MAGNITUDE:g} in magnitude: is a unit or an exponent wrong?)"
    return None


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


def closest(word: object, choices: Iterable[str]) -> str | None:
    """The valid name closest to a misspelt ``word``, or ``None`` when none is close.

    A name that differs only in case comes first; otherwise :func:`difflib.get_close_matches` (ratio ≥ 0.6).
    """
    if not isinstance(word, str) or not word:
        return None
    options = list(choices)
    for option in options:
        if option.lower() == word.lower():
            return option
    found = difflib.get_close_matches(word, options, n=1)
    return found[0] if found else None


def did_you_mean(word: object, choices: Iterable[str]) -> str:
    """``"; did you mean 'fric'?"`` for the choice closest to ``word`` (see :func:`closest`), else ``""``."""
    match = closest(word, choices)
    return f"; did you mean '{match}'?" if match is not None else ""


def unknown_key(key: object, allowed: Sequence[str], suggest: Iterable[str] = ()) -> str:
    """The message for an unknown key of a table: ``unknown key 'fricc'; did you mean 'fric'?`` when a valid
    key is close (among ``allowed`` and ``suggest``, keys valid elsewhere in the file), else the allowed keys."""
    hint = did_you_mean(key, [*allowed, *suggest])
    shown = f"'{key}'" if isinstance(key, str) else brief(repr(key), 60)
    return f"unknown key {shown}{hint}" if hint else f"unknown key {shown} (allowed: {', '.join(allowed)})"


#: Longest name ``--name`` (:func:`check_model_name`) accepts.
MAX_MODEL_NAME = 100


def check_model_name(name: object, where: str = "name", error: type[SlsError] = ModelError) -> str:
    """``name`` if it can name a model (the generated C functions' prefix and header, the name in every header):
    a plain ASCII identifier that does not start with ``_``, at most :data:`MAX_MODEL_NAME` characters; else
    ``error`` in one line starting with ``where``."""
    if not isinstance(name, str) or not name:
        raise error(f"{where}: give the model a name, e.g. {where} my_robot")
    shown = brief(repr(name), 60)
    if not (name.isascii() and name.isidentifier()) or name.startswith("_"):
        raise error(
            f"{where} {shown}: a model name is a plain identifier (ASCII letters, digits and '_', starting with a "
            "letter), e.g. my_robot"
        )
    if len(name) > MAX_MODEL_NAME:
        raise error(f"{where} {shown}: a model name has at most {MAX_MODEL_NAME} characters, got {len(name)}")
    return name


def with_name(model: Model, name: object, where: str = "name", error: type[SlsError] = ModelError) -> Model:
    """``model`` named ``name`` (checked by :func:`check_model_name`), whatever it was read from."""
    return replace(model, name=check_model_name(name, where, error))
