"""Where a model lives: declared ``(low, high)`` intervals of state variables (see :attr:`Model.ranges`)."""

from __future__ import annotations

from dataclasses import replace

import sympy

from sls.algebra.expressions import parse_expression
from sls.errors import ModelError, ModelTypeError, SlsError, brief
from sls.model.model import Model
from sls.model.names import check_value, did_you_mean


def check_ranges(ranges: object, state: tuple) -> dict:
    """Declared ranges as ``{name: (low, high)}`` in state order, checked.

    ``ranges`` maps state names (or symbols) to two finite numbers
    ``[low, high]`` with ``low <= high`` (equal: the checks hold that variable
    at one value); an end may be a constant expression string (``"pi/2"``).
    Raises :class:`ModelError` naming the entry.
    """
    if ranges is None:
        return {}
    if not isinstance(ranges, dict):
        raise ModelTypeError(f"ranges: expected a table of NAME = [LOW, HIGH], got {type(ranges).__name__}")
    names = [s.name for s in state]
    found = {}
    for key, value in ranges.items():
        name = key.name if isinstance(key, sympy.Symbol) else key
        if not isinstance(name, str) or name not in names:
            hint = did_you_mean(name, names) or f" (ranges are given for: {', '.join(names)})"
            raise ModelError(f"ranges: {brief(repr(name), 60)} is not a state variable{hint}")
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise ModelError(f"ranges.{name}: expected [LOW, HIGH], two numbers, got {brief(repr(value), 60)}")
        low, high = (check_value(name, _range_end(v, f"ranges.{name}"), f"ranges.{name}") for v in value)
        if low > high:
            raise ModelError(f"ranges.{name}: the low end {low:g} is above the high end {high:g}")
        found[name] = (low, high)
    return {name: found[name] for name in names if name in found}


def _range_end(value: object, what: str) -> object:
    """One end of a range: numbers as they are, a string parsed as a constant expression (``"-pi/2"``)."""
    if not isinstance(value, str):
        return value
    parsed = parse_expression(value, what)
    if parsed.free_symbols:
        raise ModelError(f"{what}: {value!r} is not a number (only constants such as pi may appear)")
    return parsed


def with_ranges(model: Model, ranges: dict) -> Model:
    """``model`` with ``ranges`` declared in addition to (and over) its own, checked by :func:`check_ranges`."""
    try:
        declared = check_ranges(ranges, model.state)
    except SlsError as exc:
        if model.file and not str(exc).startswith(model.file):
            raise type(exc)(f"{model.file}: {exc}") from None
        raise
    merged = {**model.ranges, **declared}
    return replace(model, ranges={s.name: merged[s.name] for s in model.state if s.name in merged})
