"""The C target's statements: the lowering's ``Let``, ``Check`` and ``Fail``, and its own (:class:`Store`,
:class:`Zeros`, :class:`CallQddot`, :class:`CallArray`, :class:`SolveRows`), each saying what it reads and writes;
their lines of C, and what a body's passes ask of them (every kind in an exhaustive ``match``)."""

from __future__ import annotations

from dataclasses import dataclass

from sls.lowering import Check, Expr, Fail, Let
from sls.lowering import unknown_statement as _unknown
from sls.lowering.arguments import PARAMETERS


@dataclass(frozen=True)
class Store:
    """``array[index] = value;`` (``value`` a name, a number or a printed expression)."""

    array: str
    index: int
    value: Expr

    @property
    def reads(self) -> tuple[str, ...]:
        return self.value.reads

    @property
    def writes(self) -> tuple[str, ...]:
        return (self.array,)


@dataclass(frozen=True)
class Zeros:
    """Every entry of ``array`` (``size`` doubles) set to ``0.0`` in one loop."""

    array: str
    size: int

    @property
    def reads(self) -> tuple[str, ...]:
        return ()

    @property
    def writes(self) -> tuple[str, ...]:
        return (self.array,)


@dataclass(frozen=True)
class CallQddot:
    """``xdot_fun``'s call of ``callee`` (the model's ``qddot_fun``) writing ``out + offset``; a failure returns
    its status."""

    callee: str
    offset: int

    @property
    def reads(self) -> tuple[str, ...]:
        return ("x", "u", PARAMETERS)

    @property
    def writes(self) -> tuple[str, ...]:
        return ("out",)


@dataclass(frozen=True)
class CallArray:
    """A call of ``callee``, an array function of ``x`` (a model with generalized speeds' ``qdot_fun`` or
    ``qdot_jac_fun``), writing its output into ``array`` from entry ``offset`` on; a failure returns its status."""

    callee: str
    array: str
    offset: int = 0

    @property
    def reads(self) -> tuple[str, ...]:
        return ("x", PARAMETERS)

    @property
    def writes(self) -> tuple[str, ...]:
        return (self.array,)


@dataclass(frozen=True)
class SolveRows:
    """``linearized_model``'s solves in loops (see :func:`solve_body`): ``M Z = R`` for the right-hand sides
    ``R = [∂r/∂x, B_u]``, each row of ``Z`` copied into the lower rows of ``A`` (negated: ``A = −M⁻¹ ∂r/∂x``) and
    ``B`` by the helper as soon as it is solved: a vectorized copy of a row in cache (a separate copy loop after
    the solves was 8 % of G1's ``linearized_model``, scalar because ``A`` might alias ``R``), the sign there rather
    than in a thousand stores of ``R``. ``R`` is the start of the
    function's workspace ``w`` (:func:`rows_size` doubles: n rows of 2n + m values padded to
    :func:`padded_columns`), stored there entry by entry as the values are computed (a long function's parts
    each store theirs: one initializer of every entry made one function that compilers took long over).

    ``M = L D Lᵀ`` with ``lower`` the entries of the unit lower triangular ``L`` below its diagonal, row by
    row (``L[1,0], L[2,0], L[2,1], …``), and ``reciprocal`` the ``1/D`` (names or float literals). With a
    ``pattern`` (a kinematic tree's factor, leaves first) ``M = Lᵀ D L`` and ``lower`` holds only the entries
    ``L[i, j]`` at the places ``(i, j)`` the pattern lists (row by row), the others being zero.
    ``callee`` is the file's helper (``<prefix>_solve_rows``), whose loops over a row's columns compilers
    vectorize; the rows of its array are padded with zeros to :func:`padded_columns`.
    """

    callee: str
    n: int
    m: int
    lower: tuple[Expr, ...]
    reciprocal: tuple[Expr, ...]
    pattern: tuple[tuple[int, int], ...] | None = None

    def values(self) -> tuple[Expr, ...]:
        """Every value the statement reads (besides ``R`` in the workspace)."""
        return self.lower + self.reciprocal

    @property
    def reads(self) -> tuple[str, ...]:
        return tuple(name for value in self.values() for name in value.reads)

    @property
    def writes(self) -> tuple[str, ...]:
        return ("A", "B", WORKSPACE) if self.m else ("A", WORKSPACE)


#: A statement of a C function body.
Statement = Let | Check | Fail | Store | Zeros | CallQddot | CallArray | SolveRows
#: Who meets a statement kind it does not know (see :func:`~sls.lowering.statements.unknown_statement`).
TARGET = "the C target"


def line(statement: Statement, failure: str) -> str:
    """One statement as a line of C (``failure``: what a pivot ``≤ 0`` returns)."""
    match statement:
        case Let(name=name, value=value):
            return f"const double {name} = {value.text()};"
        case Check(pivot=pivot):
            return f"if (!({pivot.text()} > 0.0)) return {failure};"
        case Fail():
            return f"return {failure};"
        case Store(array=array, index=index, value=value):
            return f"{array}[{index}] = {value.text()};"
        case Zeros(array=array, size=size):
            return f"for (size_t k = 0; k < {size}; ++k) {array}[k] = 0.0;"
        case SolveRows():
            return _solve_rows_lines(statement)
        case CallQddot(callee=callee, offset=offset):
            return f"{{ const int status = {callee}(x, u, p, out + {offset}); if (status != 0) return status; }}"
        case CallArray(callee=callee, array=array, offset=offset):
            where = f"{array} + {offset}" if offset else array
            return f"{{ const int status = {callee}(x, p, {where}); if (status != 0) return status; }}"
        case _:
            raise _unknown(statement, TARGET)


#: Most columns of the right-hand sides ``<prefix>_solve_rows`` updates at once (its accumulators, kept in
#: registers: nine AVX2 vectors; an update of a row is a chain of fused multiply-adds per accumulator, so fewer
#: would wait on each other's latency: 12 columns made G1's solves 40 % slower), and their vector length.
ROW_BLOCK = 36
ROW_LANES = 4


#: The workspace of a long function (values crossing its parts) and of :class:`SolveRows` (``R`` first).
WORKSPACE = "w"


def row_block(columns: int) -> int:
    """The columns ``<prefix>_solve_rows`` updates at once for rows of ``columns``: the fewest blocks of at most
    :data:`ROW_BLOCK` columns, each a whole number of :data:`ROW_LANES` (G1's 105 columns: 3 blocks of 36,
    Solo-12's 54: 2 of 28)."""
    blocks = max(1, -(-columns // ROW_BLOCK))
    return -(-columns // (blocks * ROW_LANES)) * ROW_LANES


def padded_columns(columns: int) -> int:
    """``columns`` rounded up to a multiple of :func:`row_block`: the length of a row of ``R``."""
    block = row_block(columns)
    return -(-columns // block) * block


def rows_size(n: int, m: int) -> int:
    """Doubles of :class:`SolveRows`' right-hand sides ``R`` (n rows of 2n + m, padded) in the workspace."""
    return n * padded_columns(2 * n + m)


def _solve_rows_lines(statement: SolveRows) -> str:
    """A :class:`SolveRows` as a block of C (lines after the first indented for a function body)."""
    n, m = statement.n, statement.m
    padded = padded_columns(2 * n + m)
    lower = ", ".join(value.text() for value in statement.lower)
    reciprocal = ", ".join(value.text() for value in statement.reciprocal)
    lines = [
        "{",
        f"    const double _lower[{max(len(statement.lower), 1)}] = {{{lower or '0.0'}}};",
        f"    const double _reciprocal[{n}] = {{{reciprocal}}};",
        f"    double (*_R)[{padded}] = (double (*)[{padded}]){WORKSPACE};",
        f"    {statement.callee}(_lower, _reciprocal, _R, A{', B' if m else ''});",
        "}",
    ]
    return "\n    ".join(lines)


def defines(statement: Statement) -> str | None:
    """The local a statement binds, if any."""
    match statement:
        case Let(name=name):
            return name
        case Check() | Fail() | Store() | Zeros() | CallQddot() | CallArray() | SolveRows():
            return None
        case _:
            raise _unknown(statement, TARGET)


def stores(statement: Statement) -> tuple[str, ...]:
    """The argument arrays a statement writes into."""
    match statement:
        case Store() | Zeros() | CallQddot() | CallArray() | SolveRows():
            return statement.writes
        case Let() | Check() | Fail():
            return ()
        case _:
            raise _unknown(statement, TARGET)


def calls(statement: Statement) -> frozenset[str]:
    """The functions a statement calls."""
    match statement:
        case CallQddot(callee=callee) | CallArray(callee=callee) | SolveRows(callee=callee):
            return frozenset({callee})
        case Let(value=value) | Store(value=value):
            return value.library
        case Check() | Fail() | Zeros():
            return frozenset()
        case _:
            raise _unknown(statement, TARGET)


def renamed(statement: Statement, values: dict[str, Expr]) -> Statement:
    """``statement`` reading ``values[name]`` (an expression) wherever it reads a name of ``values``."""
    match statement:
        case Let(name=name, value=value):
            return Let(name, value.substitute(values))
        case Check(pivot=pivot):
            return Check(pivot.substitute(values))
        case Store(array=array, index=index, value=value):
            return Store(array, index, value.substitute(values))
        case SolveRows(callee=callee, n=n, m=m, lower=lower, reciprocal=reciprocal, pattern=pattern):
            lower, reciprocal = (tuple(v.substitute(values) for v in group) for group in (lower, reciprocal))
            return SolveRows(callee, n, m, lower, reciprocal, pattern)
        case Fail() | Zeros() | CallQddot() | CallArray():
            return statement
        case _:
            raise _unknown(statement, TARGET)
