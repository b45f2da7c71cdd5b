"""The C target's lane kernels: a solving function's body for :data:`LANES` states at once, the compiled
package's batch loop."""

from __future__ import annotations

from dataclasses import dataclass, field

from sls.backends.c.body import CFunction
from sls.backends.c.statements import TARGET, CallArray, CallQddot, SolveRows, Statement, Store, Zeros, calls
from sls.lowering import Check, Fail, Let
from sls.lowering import unknown_statement as _unknown

#: Largest body (statements) given a lane kernel, and the lane count of one block.
LANE_LINES = 2000
LANES = 16


@dataclass(frozen=True)
class Lanes:
    """A solving function's lane kernel (see :func:`lane_kernel`): its ``lines``, the entries of each output
    it stores (``stores[0]``: the first output, ``stores[1]``: ``B``), whether it calls the lane ``sin``/``cos``
    (``trig``) and its argument ``bindings``."""

    lines: list[str]
    stores: dict[int, list[int]]
    trig: bool
    bindings: list[str] = field(default_factory=list)


#: The functions a lane kernel may call, each with its branch-free lane version (``<prefix>_lane_sin``).
LANE_FUNCTIONS = ("sin", "cos")


def _lane_line(statement: Statement, lane: dict[str, str]) -> str:
    """One statement of a lane kernel (lane ``i`` of arrays with the lane index last); ``lane`` names the lane
    versions of the functions."""
    match statement:
        case Store(array=array, index=index, value=value):
            return f"{'_o1' if array == 'B' else '_o0'}[{index}][i] = {value.text(library=lane)};"
        case Check(pivot=pivot):
            return f"_bad = _bad | !({pivot.text()} > 0.0);"
        case Fail():
            return "_bad = 1;"
        case Let(name=name, value=value):
            return f"const double {name} = {value.text(library=lane)};"
        case Zeros() | CallQddot() | CallArray() | SolveRows():
            raise TypeError(f"{TARGET}: a lane kernel has no {type(statement).__name__}")
        case _:
            raise _unknown(statement, TARGET)


def lane_kernel(code: CFunction, prefix: str) -> Lanes | None:
    """A solving function's body rewritten for :data:`LANES` states at once (the package's batch loop).

    Each statement becomes one step of a loop over the lanes of a block, on
    arrays with the lane index last, which compilers vectorize (AVX2 on
    x86-64: four states per instruction). ``sin``/``cos`` become
    branch-free polynomial versions (``<prefix>_lane_sin``, within an ulp of
    libm, ``NaN`` beyond ``|x| < 823549.6``); a pivot ``≤ 0`` sets the lane's
    flag. The package recomputes flagged lanes, lanes with results that are
    not finite (so also huge angles) and lanes with inputs that are not
    finite one by one with the C function itself. ``None`` when the body
    calls other functions or is too long.
    """
    if len(code.parts) > 1 or len(code.statements) > LANE_LINES:
        return None
    called = frozenset().union(*(calls(s) for s in code.statements))
    if not called <= set(LANE_FUNCTIONS) or any(isinstance(s, SolveRows) for s in code.statements):
        return None
    lane = {name: f"{prefix}_lane_{name}" for name in LANE_FUNCTIONS}
    lines: list[str] = []
    stores: dict[int, list[int]] = {}
    for statement in code.statements:
        if isinstance(statement, Zeros):
            continue  # zeros: every output entry not stored below is zero
        if isinstance(statement, Store):
            stores.setdefault(1 if statement.array == "B" else 0, []).append(statement.index)
        lines.append(_lane_line(statement, lane))
    return Lanes(lines, stores, bool(called))
