"""Every generated function's program: the array functions' kernels (:class:`Lowered`) and the solves
(:mod:`sls.lowering.solve`), built per function of the registry (:func:`lowerers`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from sls import functions
from sls.arrays import flatten, shape_of
from sls.derive import Dynamics, acceleration_symbols, direction_symbols, function_arrays, multiplier_symbols
from sls.lowering.expr import Expr
from sls.lowering.reduce import Path, Printed, Reducer, reducer
from sls.lowering.solve import lower_solve


@dataclass(frozen=True)
class Lowered:
    """An array function on one path: the printed entries and, per output, its shape and slice of them."""

    printed: Printed
    outputs: dict[str, tuple[tuple, slice]]

    def output(self, name: str) -> tuple[tuple, list[Expr], list[float | None]]:
        """``(shape, entries, constants)`` of output ``name``."""
        shape, part = self.outputs[name]
        return shape, self.printed.entries[part], self.printed.constants[part]


def lower_kernel(arrays: dict, floats: frozenset, reduce: Reducer, paths: Sequence[Path]) -> list[Lowered]:
    """Reduce ``arrays`` (name → nested tuple of entries) together; one :class:`Lowered` per path."""
    flats = {name: list(flatten(array)) for name, array in arrays.items()}
    printed = reduce([expr for flat in flats.values() for expr in flat], floats, paths)
    outputs = {}
    start = 0
    for name, flat in flats.items():
        outputs[name] = (shape_of(arrays[name]), slice(start, start + len(flat)))
        start += len(flat)
    return [Lowered(p, outputs) for p in printed]


def function_floats(dynamics: Dynamics, function: functions.Function) -> frozenset:
    """The symbols bound to floats in ``function``: states, inputs, (``tau_fun``) the accelerations, (the
    directional functions) the direction and (``constrained_residual_jac_fun``) the multipliers."""
    model = dynamics.model
    floats = frozenset(model.state) | frozenset(model.inputs)
    if functions.ACCELERATION in function.arguments:
        floats |= frozenset(acceleration_symbols(model.n))
    if functions.DIRECTION in function.arguments:
        floats |= frozenset(direction_symbols(len(model.state)))
    if functions.MULTIPLIERS_ARGUMENT in function.arguments:
        floats |= frozenset(multiplier_symbols(model.k))
    return floats


def lowerers(dynamics: Dynamics, paths: Sequence[Path], unroll_max: int | None = None) -> dict[str, Callable | None]:
    """How to lower every generated function: name → zero-argument callable returning one result per path
    (:class:`Lowered` for array functions, :class:`~sls.lowering.solve.SolveProgram` for the solving ones), or
    ``None`` for a function solved at run time (a constrained model's solves); wrappers have no entry."""
    arrays = dynamics.arrays if dynamics.arrays is not None else function_arrays(dynamics)
    reduce = reducer(dynamics.graph)
    # a robot tree's coordinates come after their parents': M = Lᵀ D L from the leaves has no fill-in
    leaves_first = dynamics.method == "tree"
    result: dict[str, Callable | None] = {}
    for function in functions.for_model(dynamics.model):
        if function.uses:
            continue  # a wrapper: no code of its own
        if function.numeric:
            result[function.name] = None
            continue
        keys = function.graph_arrays if function.graph_arrays and dynamics.graph is not None else function.arrays
        chosen = {key: arrays[key] for key in keys}
        floats = function_floats(dynamics, function)
        if function.solve:
            solve = partial(lower_solve, function.solve, chosen, floats, reduce, paths, unroll_max, leaves_first)
            result[function.name] = solve
        else:
            result[function.name] = partial(lower_kernel, chosen, floats, reduce, paths)
    return result
