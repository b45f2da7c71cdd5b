"""The C target's function bodies: the lowered programs as statements (:func:`kernel_body`, :func:`solve_body`,
:func:`xdot_body`), dead code removed, scheduled and split into parts when long (:func:`c_function`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sls import functions, lowering
from sls.backends.c import tangent
from sls.backends.c.statements import (
    WORKSPACE,
    CallArray,
    CallQddot,
    SolveRows,
    Statement,
    Store,
    Zeros,
    defines,
    line,
    padded_columns,
    renamed,
    rows_size,
)
from sls.backends.c.tangent import FreeFlyer
from sls.lowering import Check, Expr, Fail, Let, Value, expr_of


@dataclass(frozen=True)
class Part:
    """Straight-line statements of one part of a long C function (see :func:`split`).

    Values of earlier parts are read as ``w[slot]``, values later parts need
    are stored there; ``fails`` is true when the part may return a failure code.
    """

    statements: list[Statement]
    fails: bool = False


@dataclass(frozen=True)
class CFunction:
    """The code of one C function: its statements after the argument binding, dead code removed,
    and for a long function its :class:`Part`\\ s (``workspace`` doubles carry values between them).
    ``failure`` is what the function returns when ``M`` is not positive definite."""

    name: str
    statements: list[Statement]
    parts: list[Part]
    workspace: int = 0
    failure: str = ""

    def lines(self, statements: Iterable[Statement]) -> list[str]:
        """``statements`` (of this function) as lines of C."""
        return [line(s, self.failure) for s in statements]


#: Statements per part of a long function (see :func:`split`): the compiler's time grows faster than
#: linearly with a function's length, and values crossing parts go through a small workspace array.
PART_LINES = 300


def eliminate_dead_code(statements: list[Statement]) -> list[Statement]:
    """Drop the :class:`~sls.lowering.Let`\\ s whose name no later statement uses."""
    used: set[str] = set()
    kept = []
    for statement in reversed(statements):
        name = defines(statement)
        if name is not None and name not in used:
            continue
        used.update(statement.reads)
        kept.append(statement)
    kept.reverse()
    return kept


def schedule(statements: list[Statement]) -> list[Statement]:
    """Reorder straight-line code so each value is computed just before it is first needed.

    Statements that bind no name (checks, returns, output stores) keep their
    order; each pulls in, depth first, the bindings it needs that are not
    computed yet. Live ranges get short, which keeps long functions cheap to
    compile and parts (:func:`split`) nearly independent.
    """
    defined: dict[str, int] = {}
    reads: list[tuple[str, ...]] = []
    roots: list[int] = []
    for i, statement in enumerate(statements):
        reads.append(statement.reads)
        name = defines(statement)
        if name is not None:
            defined[name] = i
        else:
            roots.append(i)
    done: set[int] = set()
    order: list[int] = []
    for root in roots:
        stack = [(root, False)]
        while stack:
            i, ready = stack.pop()
            if i in done:
                continue
            if ready:
                done.add(i)
                order.append(i)
                continue
            stack.append((i, True))
            for used in reversed(reads[i]):
                j = defined.get(used)
                if j is not None and j not in done:
                    stack.append((j, False))
    return [statements[i] for i in order]


def split(statements: list[Statement], size: int, reserved: int = 0) -> tuple[list[Part], int]:
    """Split a long body into parts of about ``size`` statements: ``(parts, workspace)``.

    A value used in a later part than the one computing it is stored into
    the workspace ``w`` (``w[slot] = name;``, after its first ``reserved``
    entries) and read as ``w[slot]`` there; slots are reused once their value
    is dead, so ``workspace`` (the length of ``w``) stays far below the number
    of values.
    """
    chunks = [statements[i : i + size] for i in range(0, len(statements), size)]
    home: dict[str, int] = {}
    last: dict[str, int] = {}
    for c, chunk in enumerate(chunks):
        for statement in chunk:
            for used in statement.reads:
                if used in home and home[used] < c:
                    last[used] = c
            name = defines(statement)
            if name is not None:
                home[name] = c
    slots: dict[str, int] = {}
    free: list[int] = []
    active: list[str] = []
    size_used = 0
    for c in range(len(chunks)):
        for name in [name for name in active if last[name] < c]:  # dead before part c: free its slot
            active.remove(name)
            free.append(slots[name])
        for name in sorted((name for name in last if home[name] == c), key=lambda name: last[name]):
            if free:
                slots[name] = free.pop()
            else:
                slots[name] = reserved + size_used
                size_used += 1
            active.append(name)
    parts = []
    workspace = {slot: Expr.join(Expr.name(WORKSPACE), f"[{slot}]") for slot in range(reserved, reserved + size_used)}
    for c, chunk in enumerate(chunks):
        imported = {name: workspace[slots[name]] for name in last if home[name] < c <= last[name]}
        out: list[Statement] = []
        for statement in chunk:
            out.append(renamed(statement, imported))
            name = defines(statement)
            if name is not None and name in last:
                out.append(Store(WORKSPACE, slots[name], Expr.name(name)))
        parts.append(Part(out, fails=any(isinstance(s, (Check, Fail)) for s in chunk)))
    return parts, reserved + size_used


def c_function(name: str, statements: list[Statement], failure: str = "") -> CFunction:
    """A :class:`CFunction` from its statements: dead code removed, scheduled, split when long (and always
    computed in parts, with a workspace, when it solves in loops: :class:`SolveRows`' ``R`` is the workspace's
    start)."""
    statements = schedule(eliminate_dead_code(statements))
    reserved = max((rows_size(s.n, s.m) for s in statements if isinstance(s, SolveRows)), default=0)
    if len(statements) <= PART_LINES * 3 // 2 and not reserved:
        return CFunction(name, statements, [Part(statements)], failure=failure)
    parts, workspace = split(statements, PART_LINES, reserved)
    return CFunction(name, statements, parts, workspace, failure)


def _is_zero(value: Value) -> bool:
    """True for the constant ``0.0`` (not ``-0.0``, which is stored as it is)."""
    return isinstance(value, float) and value == 0.0 and math.copysign(1.0, value) > 0.0


def _fill(target: str, values: Sequence[Value]) -> list[Statement]:
    """Stores of ``values`` into ``target``; many zeros become one loop."""
    zero = [_is_zero(v) for v in values]
    if sum(zero) < 16:
        return [Store(target, k, expr_of(v)) for k, v in enumerate(values)]
    return [Zeros(target, len(values)), *(Store(target, k, expr_of(v)) for k, v in enumerate(values) if not zero[k])]


def kernel_body(lowered: lowering.Lowered) -> list[Statement]:
    """An array function: temporaries, then every entry of its one output into ``out`` (row-major)."""
    (name,) = lowered.outputs
    _, entries, constants = lowered.output(name)
    values: list[Value] = [c if c is not None else entry for entry, c in zip(entries, constants)]
    return [*lowered.printed.lines, *_fill("out", values)]


def solve_body(
    kind: str,
    program: lowering.SolveProgram,
    n: int,
    m: int,
    prefix: str = "",
    rates_jacobian: str = "",
    base: FreeFlyer | None = None,
) -> list[Statement]:
    """A solving function of ``kind`` (:attr:`sls.functions.Function.solve`: ``qddot_fun``, ``linearized_model``):
    kernel, unrolled factorization (a :class:`~sls.lowering.Check`
    fails when a pivot is ≤ 0), solves, outputs.

    The upper n rows of ``linearized_model``'s ``A`` are ``[0 I]``, or for a model with generalized speeds
    the Jacobian ``∂(S(q) v)/∂x`` of its kinematics: a call of ``rates_jacobian`` (the C function
    ``<prefix>_qdot_jac_fun``, n × 2n row-major: exactly the first n rows of ``A``). A quaternion free-flyer
    ``base`` (n_x = n_q + n state entries) has its ``A`` and ``B`` in the tangent space, written out
    (:mod:`sls.backends.c.tangent`).

    A phased ``linearized_model`` (the graph and tree routes) solves its right-hand sides ``∂r/∂x`` and
    ``B_u`` in loops (:class:`SolveRows`: one n × (2n + m) array, the helper ``<prefix>_solve_rows``, the
    result copied into the lower rows of ``A``, negated, and ``B``) rather than unrolled: 2n + m columns of
    straight-line substitutions are much of the function on a robot arm, and a loop over a row's columns
    vectorizes. A tree's factor (``M = Lᵀ D L`` leaves first) passes only the entries of ``L`` that are not
    zero, with their places.
    """
    statements: list[Statement] = [*program.lines, *program.bindings, *(program.factor or []), *program.steps]
    rows = kind == functions.LINEARIZATION and program.phased and program.ldl is not None and bool(prefix)
    if program.phased:  # bind q̈, evaluate what depends on it, solve A and B
        qddot = program.results["qddot"]
        statements += [Let(local, expr_of(value)) for local, value in zip(program.accelerations, qddot)]
        statements += [*program.late, *([] if rows else program.tail)]
    if kind == functions.ACCELERATIONS:
        return statements + _fill("out", program.results["qddot"])
    if rows:
        return statements + _rows_linearization(statements, program, n, m, prefix, rates_jacobian, base)
    return statements + _unrolled_linearization(program, n, m, rates_jacobian, base)


def _rows_linearization(
    earlier: list[Statement],
    program: lowering.SolveProgram,
    n: int,
    m: int,
    prefix: str,
    rates_jacobian: str,
    base: FreeFlyer | None,
) -> list[Statement]:
    """A phased ``linearized_model``'s last statements after ``earlier``: the right-hand sides ``∂r/∂x`` (over the
    tangent columns for a quaternion ``base``) and ``B_u`` into the workspace, ``A``'s upper rows and ``B``'s zeros,
    then the :class:`SolveRows` loops with the tree's factor."""
    factor = program.ldl
    assert factor is not None  # solve_body checked it
    J, B_u = program.values["residual_jac"], program.values["B_u"]
    statements: list[Statement] = []
    if base is None:
        rhs = [
            _unsigned_zero(J[a * 2 * n + col] if col < 2 * n else B_u[a * m + col - 2 * n])
            for a in range(n)
            for col in range(2 * n + m)
        ]
    else:  # ∂r/∂x over the tangent columns: [∂r/∂q S, ∂r/∂v]
        n_x = base.n_q + n
        rhs = [
            value
            for a in range(n)
            for value in tangent.tangent_row(J[a * n_x : (a + 1) * n_x], base) + B_u[a * m : (a + 1) * m]
        ]
        statements += tangent.basis_lets(base)
    pattern = tuple(factor.nonzero()) if factor.leaves_first else None
    places = pattern if pattern is not None else [(i, j) for i in range(n) for j in range(i)]
    solve = SolveRows(
        f"{prefix}_solve_rows",
        n,
        m,
        tuple(expr_of(factor.lower[key]) for key in places),
        tuple(expr_of(r) for r in factor.reciprocal),
        pattern,
    )
    statements += _in_order_of([*earlier, *statements], _rows_stores(rhs, n, m))
    upper_A: list[Value] = [(1.0 if col == n + a else 0.0) for a in range(n) for col in range(2 * n)]
    if base is not None:
        upper_A = tangent.kinematic_rows(base)
    upper = [CallArray(rates_jacobian, "A")] if rates_jacobian else _fill("A", upper_A)
    return statements + upper + _fill("B", [0.0] * (n * m)) + [solve]


def _unrolled_linearization(
    program: lowering.SolveProgram, n: int, m: int, rates_jacobian: str, base: FreeFlyer | None
) -> list[Statement]:
    """``linearized_model``'s stores of the unrolled solve's rows of ``A`` and ``B`` (``A``'s upper rows ``[0 I]``,
    the kinematics' Jacobian ``rates_jacobian``, or a quaternion ``base``'s tangent rows)."""
    A_rows, B_rows = program.results["A"], program.results["B"]
    B = [0.0 if a < n else B_rows[a - n][j] for a in range(2 * n) for j in range(m)]
    if base is not None:  # the solved rows over the tangent columns: [∂v̇/∂q S, ∂v̇/∂v]
        lower = [value for row in A_rows for value in tangent.tangent_row(row, base)]
        A_tangent = tangent.kinematic_rows(base) + lower
        return tangent.basis_lets(base) + _fill("A", A_tangent) + _fill("B", B)
    if rates_jacobian:
        lower_A = [A_rows[a][col] for a in range(n) for col in range(2 * n)]
        return _fill_after(CallArray(rates_jacobian, "A"), lower_A, 2 * n * n) + _fill("B", B)
    A = [(1.0 if col == n + a else 0.0) if a < n else A_rows[a - n][col] for a in range(2 * n) for col in range(2 * n)]
    return _fill("A", A) + _fill("B", B)


def _rows_stores(rhs: Sequence[Value], n: int, m: int) -> list[Statement]:
    """:class:`SolveRows`' right-hand sides ``rhs`` (n rows of 2n + m values) into the workspace's start, rows
    padded to :func:`padded_columns`: zeros in one loop, then the other values."""
    cols, padded = 2 * n + m, padded_columns(2 * n + m)
    stores = [
        Store(WORKSPACE, (k // cols) * padded + k % cols, expr_of(value))
        for k, value in enumerate(rhs)
        if not (isinstance(value, float) and value == 0.0)
    ]
    return [Zeros(WORKSPACE, rows_size(n, m)), *stores]


def _in_order_of(earlier: Sequence[Statement], stores: list[Statement]) -> list[Statement]:
    """``stores`` (a :class:`Zeros` first, then :class:`Store`\\ s) ordered by when their values are ready in
    ``earlier``: the position of the last of the locals they read (a stable sort). :func:`schedule` computes each
    value just before the first statement needing it, in the order of such statements: stores in the order their
    values are derived keep fewer values alive across the parts of a long function than row by row (the Newton–Euler
    derivatives come out pair by pair, not row by row)."""
    where = {name: k for k, statement in enumerate(earlier) if (name := defines(statement)) is not None}

    def ready(statement: Statement) -> int:
        return max((where.get(name, -1) for name in statement.reads), default=-1)

    zeros = [s for s in stores if isinstance(s, Zeros)]
    return zeros + sorted((s for s in stores if not isinstance(s, Zeros)), key=ready)


def _fill_after(call: CallArray, values: Sequence[Value], start: int) -> list[Statement]:
    """``call`` writing the first ``start`` entries of its array, and ``values`` stored after them (as
    :func:`_fill`: many zeros become one loop over the whole array, run before the call)."""
    zero = [_is_zero(v) for v in values]
    looped = sum(zero) >= 16
    stores = [Store(call.array, start + k, expr_of(v)) for k, v in enumerate(values) if not (looped and zero[k])]
    return [Zeros(call.array, start + len(values)), call, *stores] if looped else [call, *stores]


def _unsigned_zero(value: Value) -> Value:
    """A value, a zero constant of either sign as ``0.0``."""
    return 0.0 if isinstance(value, float) and value == 0.0 else value


def xdot_body(prefix: str, n: int, accelerations: str, rates: str = "", n_q: int | None = None) -> list[Statement]:
    """``xdot_fun``: the function ``accelerations`` (``qddot_fun``) into the last ``n`` entries of ``out``, ``q̇``
    into the first ``n_q`` (default ``n``): the second half of ``x``, or for a model with generalized speeds the
    function ``rates`` (``qdot_fun``: ``S(q) v``)."""
    solve = CallQddot(f"{prefix}_{accelerations}", n if n_q is None else n_q)
    if rates:
        return [solve, CallArray(f"{prefix}_{rates}", "out")]
    state = [Expr.join(Expr.name("x"), f"[{n + k}]") for k in range(n)]
    return [solve, *(Store("out", k, value) for k, value in enumerate(state))]
