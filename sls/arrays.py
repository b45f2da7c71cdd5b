"""Arrays of derived terms: nested tuples of entries (sympy expressions or graph nodes), in C order.

:mod:`sls.derive` builds them, :mod:`sls.derive.validate` samples them, the lowering and the backends
flatten and index them; these helpers are the one place that knows the layout.
"""

from __future__ import annotations


def nest(flat: list, shape: tuple) -> tuple:
    """``flat`` (C order) as nested tuples of ``shape``."""
    if len(shape) == 1:
        return tuple(flat)
    step = len(flat) // shape[0]
    return tuple(nest(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0]))


def flatten(array: object) -> list:
    """The entries of a nested tuple (an array of :mod:`sls.derive`) in C order."""
    if isinstance(array, tuple):
        return [e for item in array for e in flatten(item)]
    return [array]


def shape_of(array: object) -> tuple:
    """The shape of a nested tuple (``()`` for a single entry)."""
    shape = []
    while isinstance(array, tuple):
        shape.append(len(array))
        array = array[0] if array else None
    return tuple(shape)


def unravel(position: int, shape: tuple) -> tuple:
    """The index (0-based, one per axis) of entry ``position`` of a row-major array of ``shape``."""
    index = []
    for size in reversed(shape):
        index.append(position % size)
        position //= size
    return tuple(reversed(index))
