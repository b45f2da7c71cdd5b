"""The solving functions (``qddot_fun``, ``linearized_model``): the unrolled ``M = L D Lᵀ`` as statements.

:func:`lower_solve` reduces a solving function's arrays together and, unless
``n`` is over the target's ``unroll_max``, unrolls the factorization and the
solves into straight-line :class:`~sls.lowering.statements.Let`\\ s,
:class:`~sls.lowering.statements.Check`\\ s (a pivot must be positive) and
:class:`~sls.lowering.statements.Fail`\\ s (a pivot known to be ≤ 0 at
generation time), folding what is known at generation time. The arithmetic
uses ``+ - * /``, names and float literals only, which read the same in every
target. The temporaries' names are :class:`SolveNames`'s. A robot tree's ``M``
(the tree route) is factored from the leaves, ``M = Lᵀ D L`` (:class:`Factor`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sls import functions
from sls.arrays import flatten, shape_of
from sls.derive import acceleration_symbols
from sls.lowering.expr import Expr
from sls.lowering.reduce import Path, Printed, Reducer, same
from sls.lowering.statements import Check, Fail, Let, Statement, Value, negated

#: The lower triangle of an unrolled ``L`` (``(i, j) → value``, ``i > j``, below its unit diagonal).
Lower = dict[tuple[int, int], Value]


@dataclass(frozen=True)
class Factor:
    """An unrolled factorization of ``M``: ``L`` (unit lower triangular, :data:`Lower`) and the reciprocal
    pivots ``1/D``.

    In index order (``leaves_first`` false) ``M = L D Lᵀ``, the first coordinate eliminated first. Leaves first
    (Featherstone's ``LTDL``, for a kinematic tree whose coordinates come after their parents') ``M = Lᵀ D L``,
    the last coordinate eliminated first: ``L[i, j]`` is then nonzero only where coordinate ``j`` is an ancestor
    of ``i`` (``M``'s own pattern: no fill-in), and the folded zeros leave their products out.
    """

    lower: Lower
    reciprocal: list[Value]
    leaves_first: bool = False

    def solve(self, emit: Emitter, column: list[Value], tag: str) -> list[Value]:
        """Unrolled ``M z = column``; returns the values of ``z``."""
        if self.leaves_first:
            return _solve_leaves_first(emit, self.lower, self.reciprocal, column, tag)
        return _solve(emit, self.lower, self.reciprocal, column, tag)

    def nonzero(self) -> list[tuple[int, int]]:
        """The entries of ``L`` below its diagonal that are not the constant 0, row by row."""
        return [key for key in sorted(self.lower) if not _is_zero(self.lower[key])]


class SolveNames:
    """The names of the unrolled solve's temporaries (a path's ``local`` makes them its own): the one place
    they are written."""

    @staticmethod
    def pivot(j: int) -> str:
        """Pivot ``D[j]``."""
        return f"_d{j}"

    @staticmethod
    def reciprocal(j: int) -> str:
        """``1/D[j]``."""
        return f"_r{j}"

    @staticmethod
    def eliminated(i: int, j: int) -> str:
        """``E[i, j] = L[i, j] D[j]`` (row ``i`` of ``M`` less the earlier columns' parts); leaves first
        ``L[i, j] D[i]`` (see :class:`Factor`)."""
        return f"_e{i}_{j}"

    @staticmethod
    def lower(i: int, j: int) -> str:
        """``L[i, j]``."""
        return f"_l{i}_{j}"

    @staticmethod
    def forward(tag: str, i: int) -> str:
        """Entry ``i`` of ``y`` in ``L y = b`` (leaves first ``Lᵀ y = b``) for the right-hand side ``tag``."""
        return f"_y{tag}_{i}"

    @staticmethod
    def back(tag: str, i: int) -> str:
        """Entry ``i`` of ``z`` in ``D Lᵀ z = y`` (leaves first ``D L z = y``) for the right-hand side ``tag``."""
        return f"_z{tag}_{i}"

    @staticmethod
    def column(col: int, a: int) -> str:
        """Entry ``a`` of the right-hand side of column ``col`` of ``∂q̈/∂x`` (``linearized_model``)."""
        return f"_c{col}_{a}"

    @staticmethod
    def entry(prefix: str, k: int) -> str:
        """Entry ``k`` of an array bound to a name, with the path's prefix of that array (``_M0``, ``_rhs1``)."""
        return f"{prefix}{k}"


@dataclass(frozen=True)
class SolveProgram:
    """A solving function on one path.

    ``lines`` bind the shared temporaries (printed by the path); ``bindings``
    bind entries to names; ``values`` holds every array's entries as names or
    float constants (``M`` in full, n×n, flat) and ``shapes`` their shapes,
    for a target's fallback. ``factor`` is the factorization (``None`` when
    not unrolled), ``steps`` the solves, and ``results`` the outputs' values:
    ``{"qddot": [n]}`` or ``{"A": n rows of 2n, "B": n rows of m}`` (the
    lower halves of ``A`` and ``B``; their upper halves are ``[0, I]`` and 0).

    A *phased* program (the graph route's ``linearized_model``, arrays ``M``,
    ``rhs``, ``residual_jac``, ``B_u``) has entries that depend on ``q̈``:
    ``steps`` solve ``q̈`` (``results["qddot"]``), the target binds the
    names ``accelerations`` to it, then runs ``late`` (the temporaries and
    entries depending on ``q̈``) and ``tail`` (the solves of ``A`` and ``B``).
    Without the unrolled factorization the target solves ``q̈`` from
    ``values`` itself, binds ``accelerations``, runs ``late`` and solves
    ``A = −M⁻¹ residual_jac``, ``B = M⁻¹ B_u``. ``ldl`` holds the unrolled
    factor for a target that solves ``A`` and ``B`` in loops (the C target).
    """

    lines: list[Let]
    bindings: list[Statement]
    values: dict[str, list[Value]]
    shapes: dict[str, tuple]
    factor: list[Statement] | None = None
    steps: list[Statement] = field(default_factory=list)
    results: dict[str, list] = field(default_factory=dict)
    accelerations: list[str] = field(default_factory=list)
    late: list[Statement] = field(default_factory=list)
    tail: list[Statement] = field(default_factory=list)
    #: The unrolled factor's values (:class:`Factor`: ``L`` below its unit diagonal, the reciprocal pivots
    #: ``1/D``, and whether ``M = Lᵀ D L`` leaves first; ``None`` unless a phased program is unrolled); a target
    #: may solve ``A`` and ``B`` with them in loops instead of running ``tail``.
    ldl: Factor | None = None

    @property
    def phased(self) -> bool:
        """True for a program in two phases (the graph route's ``linearized_model``)."""
        return bool(self.accelerations)

    @property
    def unrolled(self) -> bool:
        return self.factor is not None


def _literal(value: float) -> str:
    return repr(value) if value >= 0 else f"({value!r})"


class Emitter:
    """Straight-line statements over values that are float constants or expressions.

    Folds what is known at generation time: products with ``0`` vanish,
    with ``1`` are the other factor, constants combine.
    """

    def __init__(self, local: Callable[[str], str] = same) -> None:
        self.statements: list[Statement] = []
        self.local = local

    def let(self, name: str, value: Value) -> Value:
        """Bind ``value`` (a constant, a name or an expression) to the local ``name`` and return what stands
        for it (a constant or a name stands for itself)."""
        if isinstance(value, float) or value.is_name:
            return value
        local = self.local(name)
        self.statements.append(Let(local, value))
        return Expr.name(local)

    def take(self) -> list[Statement]:
        """The statements emitted since the last call."""
        taken, self.statements = self.statements, []
        return taken

    @staticmethod
    def product(a: Value, b: Value) -> Value:
        if isinstance(a, float) and isinstance(b, float):
            return a * b
        if isinstance(a, float):
            a, b = b, a
        assert not isinstance(a, float)
        if isinstance(b, float):
            if b == 0.0:
                return 0.0
            return a if b == 1.0 else Expr.join(a, "*", _literal(b))
        return Expr.join(a, "*", b)

    @classmethod
    def combine(cls, base: Value, products: Sequence[tuple[Value, Value]]) -> Value:
        """``base − Σ a·b`` over ``products = [(a, b), …]``, folded."""
        constant = base if isinstance(base, float) else 0.0
        terms = [] if isinstance(base, float) else [base]
        subtracted: list[Expr] = []
        for a, b in products:
            p = cls.product(a, b)
            if isinstance(p, float):
                constant -= p
            else:
                subtracted.append(p)
        if not terms and not subtracted:
            return constant
        items: list[str | Expr] = [terms[0]] if terms else ["-", subtracted.pop(0)]
        for p in subtracted:
            items += [" - ", p]
        if constant != 0.0:
            items.append(f" + {constant!r}" if constant > 0 else f" - {-constant!r}")
        return Expr.join(*items)


def _factor(emit: Emitter, M: list[list[Value]], n: int) -> tuple[Lower, list[Value]]:
    """Unrolled ``M = L D Lᵀ``; returns ``L`` ((i, j) → value, i > j) and the reciprocal pivots."""
    L: Lower = {}
    E: Lower = {}
    reciprocal: list[Value] = []
    for j in range(n):
        pivot = emit.let(SolveNames.pivot(j), emit.combine(M[j][j], [(E[j, k], L[j, k]) for k in range(j)]))
        if isinstance(pivot, float):
            if not pivot > 0.0:
                emit.statements.append(Fail())
            reciprocal.append(1.0 / pivot if pivot != 0.0 else 0.0)
        else:
            emit.statements.append(Check(pivot))
            reciprocal.append(emit.let(SolveNames.reciprocal(j), Expr.join("1.0/", pivot)))
        for i in range(j + 1, n):
            e = emit.let(SolveNames.eliminated(i, j), emit.combine(M[j][i], [(E[i, k], L[j, k]) for k in range(j)]))
            E[i, j] = e
            L[i, j] = emit.let(SolveNames.lower(i, j), emit.product(e, reciprocal[j]))
    return L, reciprocal


def _factor_leaves_first(emit: Emitter, M: list[list[Value]], n: int) -> tuple[Lower, list[Value]]:
    """Unrolled ``M = Lᵀ D L`` eliminating the last coordinate first; returns ``L`` ((i, j) → value, i > j) and
    the reciprocal pivots. ``M[i][j] = L[j, i] D[j] + Σ_{k>j} E[k, i] L[k, j]`` for ``i < j``, with
    ``E[k, i] = L[k, i] D[k]`` (:meth:`SolveNames.eliminated`\\ ``(k, i)``)."""
    L: Lower = {}
    E: Lower = {}
    reciprocal: list[Value] = [0.0] * n  # each set before it is read
    for j in reversed(range(n)):
        later = range(j + 1, n)
        pivot = emit.let(SolveNames.pivot(j), emit.combine(M[j][j], [(E[k, j], L[k, j]) for k in later]))
        if isinstance(pivot, float):
            if not pivot > 0.0:
                emit.statements.append(Fail())
            reciprocal[j] = 1.0 / pivot if pivot != 0.0 else 0.0
        else:
            emit.statements.append(Check(pivot))
            reciprocal[j] = emit.let(SolveNames.reciprocal(j), Expr.join("1.0/", pivot))
        for i in reversed(range(j)):
            e = emit.let(SolveNames.eliminated(j, i), emit.combine(M[i][j], [(E[k, i], L[k, j]) for k in later]))
            E[j, i] = e
            L[j, i] = emit.let(SolveNames.lower(j, i), emit.product(e, reciprocal[j]))
    return L, reciprocal


def _solve_leaves_first(emit: Emitter, L: Lower, reciprocal: list[Value], column: list[Value], tag: str) -> list[Value]:
    """Unrolled ``Lᵀ D L z = column`` (the factor of :func:`_factor_leaves_first`): ``Lᵀ y = column`` from the
    last row up, then ``L z = D⁻¹ y`` from the first row down; returns the values of ``z``."""
    n = len(column)
    y: list[Value] = [0.0] * n  # each set before it is read
    for i in reversed(range(n)):
        products = [(L[k, i], y[k]) for k in range(i + 1, n)]
        y[i] = emit.let(SolveNames.forward(tag, i), emit.combine(column[i], products))
    z: list[Value] = []
    for i in range(n):
        scaled = emit.product(y[i], reciprocal[i])
        z.append(emit.let(SolveNames.back(tag, i), emit.combine(scaled, [(L[i, k], z[k]) for k in range(i)])))
    return z


def _is_zero(value: Value) -> bool:
    return isinstance(value, float) and value == 0.0


def _solve(emit: Emitter, L: Lower, reciprocal: list[Value], column: list[Value], tag: str) -> list[Value]:
    """Unrolled ``L D Lᵀ z = column``; returns the values of ``z``."""
    n = len(column)
    y: list[Value] = []
    for i in range(n):
        y.append(emit.let(SolveNames.forward(tag, i), emit.combine(column[i], [(L[i, k], y[k]) for k in range(i)])))
    z: list[Value] = [0.0] * n  # each set before it is read
    for i in reversed(range(n)):
        scaled = emit.product(y[i], reciprocal[i])
        z[i] = emit.let(SolveNames.back(tag, i), emit.combine(scaled, [(L[k, i], z[k]) for k in range(i + 1, n)]))
    return z


def _entry_values(
    name: Callable[[int], str],
    entries: list[Expr],
    constants: list[float | None],
    bindings: list[Statement],
    late: list[bool] | None = None,
    late_bindings: list[Statement] | None = None,
) -> list[Value]:
    """Bind printed entries to names (``name(k)`` for entry ``k``) or float constants for the solver; entries
    flagged in ``late`` go to ``late_bindings``."""
    values: list[Value] = []
    for k, (entry, constant) in enumerate(zip(entries, constants)):
        if constant is not None:
            values.append(constant)
        elif entry.is_name:
            values.append(entry)
        else:
            chosen = late_bindings if late is not None and late_bindings is not None and late[k] else bindings
            chosen.append(Let(name(k), entry))
            values.append(Expr.name(name(k)))
    return values


def _qddot_steps(emit: Emitter, values: dict, factor: Factor) -> dict[str, list]:
    """``q̈ = M⁻¹ rhs``."""
    return {"qddot": factor.solve(emit, values["rhs"], "")}


def _linearized_steps(emit: Emitter, values: dict, factor: Factor) -> dict[str, list]:
    """Lower halves of ``(A, B)``: column ``l`` of ``∂q̈/∂x`` solves ``M z = drhs[:, l] − (∂M/∂q_l) q̈``
    (the second term only for ``l < n``), column ``j`` of ``B`` solves ``M z = B_u[:, j]``."""
    n = len(values["rhs"])
    m = len(values["B_u"]) // n if n else 0
    qddot = factor.solve(emit, values["rhs"], "q")
    dM_v, drhs_v, B_v = values["dM"], values["drhs"], values["B_u"]
    n_x = len(drhs_v) // n if n else 0  # the state's length: 2n, or more with a quaternion
    n_q = n_x - n
    A_rows: list[list[Value]] = [[0.0] * n_x for _ in range(n)]  # every entry set below
    for col in range(n_x):
        column = []
        for a in range(n):
            base = drhs_v[a * n_x + col]
            if col < n_q:
                entry = emit.combine(base, [(dM_v[(a * n + b) * n_q + col], qddot[b]) for b in range(n)])
                base = emit.let(SolveNames.column(col, a), entry)
            column.append(base)
        for a, value in enumerate(factor.solve(emit, column, str(col))):
            A_rows[a][col] = value
    return {"A": A_rows, "B": _input_columns(emit, factor, B_v, n, m)}


def _phased_tail(emit: Emitter, values: dict, factor: Factor) -> dict[str, list]:
    """Lower halves of ``(A, B)`` of a phased program: column ``l`` of ``A`` solves ``M z = −residual_jac[:, l]``,
    column ``j`` of ``B`` solves ``M z = B_u[:, j]``."""
    n = len(values["rhs"])
    m = len(values["B_u"]) // n if n else 0
    J, B_v = values["residual_jac"], values["B_u"]
    n_x = len(J) // n if n else 0  # the state's length: 2n, or more with a quaternion
    A_rows: list[list[Value]] = [[0.0] * n_x for _ in range(n)]  # every entry set below
    for col in range(n_x):
        column = [negated(J[a * n_x + col]) for a in range(n)]
        for a, value in enumerate(factor.solve(emit, column, str(col))):
            A_rows[a][col] = value
    return {"A": A_rows, "B": _input_columns(emit, factor, B_v, n, m)}


def _input_columns(emit: Emitter, factor: Factor, B_u: list[Value], n: int, m: int) -> list:
    """Lower half of ``B``: column ``j`` solves ``M z = B_u[:, j]`` (``n`` rows of ``m``)."""
    B_rows: list[list[Value]] = [[0.0] * m for _ in range(n)]
    for j in range(m):
        for a, value in enumerate(factor.solve(emit, [B_u[a * m + j] for a in range(n)], f"b{j}")):
            B_rows[a][j] = value
    return B_rows


def _namer(path: Path, array: str) -> Callable[[int], str]:
    """The names of an array's bound entries on ``path`` (``_M0``, ``_M1``, …)."""
    prefix = path.prefix(array)
    return lambda k: path.local(SolveNames.entry(prefix, k))


#: The solves of each kind of solving function (:attr:`sls.functions.Function.solve`).
_STEPS = {functions.ACCELERATIONS: _qddot_steps, functions.LINEARIZATION: _linearized_steps}


#: A tree's accelerations unroll beyond ``unroll_max`` while the unrolled factor and solve cost less than numpy's
#: (``M`` gathered, Cholesky, solve), in 10 ns (Python target, process time, shared 2-core machine): an operation 1,
#: a statement 1.4 more; numpy 1 200 + 2.5 n² (22 / 50 / 72 / 134 µs at n = 20 / 38 / 49 / 70).
NUMERIC_SOLVE_COST, NUMERIC_SOLVE_PER_ENTRY, STATEMENT_COST = 1200, 2.5, 1.4
#: From this n on numpy's LAPACK runs threaded (4–8 ms a solve at n = 100 on a shared machine): a tree unrolls while
#: the factor and solve take at most this many statements per entry of ``M`` (TIAGo's 101 joints: 0.6 ms).
THREADED_SOLVE, SPARSE_UNROLL_STATEMENTS_PER_ENTRY = 64, 1.0


def _operations(statement: Statement) -> int:
    """Operations of a factor's statement: one per reference after the first (at least one: ``a*2.0``, a check)."""
    if isinstance(statement, Let) and not isinstance(statement.value, float):
        return max(1, len(statement.value.refs) - 1)
    return 1


def _sparse_enough(kind: str, path: Path, grid: list[list[Value]], n: int, leaves_first: bool) -> bool:
    """True when a tree's ``M`` (factored leaves first, without fill-in) is sparse enough for the accelerations'
    unrolled factor and solve to cost less than numpy's (:data:`NUMERIC_SOLVE_COST`; from :data:`THREADED_SOLVE`
    coordinates on, fewer statements than ``M`` has entries); other solves, and ``M`` of other models, never."""
    if not leaves_first or kind != functions.ACCELERATIONS:
        return False
    trial = Emitter(path.local)
    L, _ = _factor_leaves_first(trial, grid, n)
    nonzero = sum(not _is_zero(value) for value in L.values())
    if n >= THREADED_SOLVE:
        statements = len(trial.statements) + 2 * n + 2 * nonzero  # the factor, then one solve
        return statements <= SPARSE_UNROLL_STATEMENTS_PER_ENTRY * n * n
    operations = sum(map(_operations, trial.statements)) + n + 4 * nonzero  # the factor, then one solve
    statements = len(trial.statements) + 2 * n
    return operations + STATEMENT_COST * statements <= NUMERIC_SOLVE_COST + NUMERIC_SOLVE_PER_ENTRY * n * n


def lower_solve(
    kind: str,
    arrays: dict,
    floats: frozenset,
    reduce: Reducer,
    paths: Sequence[Path],
    unroll_max: int | None,
    leaves_first: bool = False,
) -> list[SolveProgram]:
    """One :class:`SolveProgram` per path for a solving function of ``kind`` (:attr:`sls.functions.Function.solve`).

    ``arrays`` maps names to nested tuples (``M`` first, the (n, n) mass
    matrix); the reduction runs over the upper triangle of ``M`` and every
    other entry. The solve is unrolled unless ``n > unroll_max``
    (``None``: always; ``0``: never), or, for a tree's accelerations, the factor is sparse enough
    (:func:`_sparse_enough`); ``leaves_first`` factors ``M = Lᵀ D L`` from the last
    coordinate (a kinematic tree's, see :class:`Factor`), else ``M = L D Lᵀ``.
    """
    M = arrays["M"]
    n = len(M)
    phased = "residual_jac" in arrays
    late_symbols = acceleration_symbols(n) if phased else ()
    upper = [(a, b) for a in range(n) for b in range(a, n)]
    flats = {key: list(flatten(array)) for key, array in arrays.items() if key != "M"}
    entries = [M[a][b] for a, b in upper] + [e for flat in flats.values() for e in flat]
    if phased:
        printed = reduce(entries, floats, paths, frozenset(late_symbols))
    else:
        printed = reduce(entries, floats, paths)
    shapes = {key: shape_of(array) for key, array in arrays.items()}
    return [
        _program(kind, path, p, n, flats, shapes, late_symbols, unroll_max, leaves_first)
        for path, p in zip(paths, printed)
    ]


def _program(
    kind: str,
    path: Path,
    p: Printed,
    n: int,
    flats: dict[str, list],
    shapes: dict[str, tuple],
    late_symbols: Sequence,
    unroll_max: int | None,
    leaves_first: bool = False,
) -> SolveProgram:
    """The :class:`SolveProgram` of one path from its printed entries (see :func:`lower_solve`)."""
    phased = bool(late_symbols)
    upper = [(a, b) for a in range(n) for b in range(a, n)]
    bindings: list[Statement] = []
    late_bindings: list[Statement] = []
    start = len(upper)
    m_values = _entry_values(_namer(path, "M"), p.entries[:start], p.constants[:start], bindings)
    m_map = dict(zip(upper, m_values))
    values = {"M": [m_map[min(a, b), max(a, b)] for a in range(n) for b in range(n)]}
    for key, flat in flats.items():
        part = slice(start, start + len(flat))
        late = p.late_entries[part] if phased else None
        values[key] = _entry_values(
            _namer(path, key), p.entries[part], p.constants[part], bindings, late, late_bindings
        )
        start += len(flat)
    names = path.style.names
    accelerations = [names.get(s.name) or path.local(s.name) for s in late_symbols]
    late_statements: list[Statement] = [*p.late, *late_bindings] if phased else []
    grid = [[m_map[min(a, b), max(a, b)] for b in range(n)] for a in range(n)]
    sparse = bool(unroll_max) and _sparse_enough(kind, path, grid, n, leaves_first)  # unroll_max 0: never unrolled
    if unroll_max is not None and n > unroll_max and not sparse:
        return SolveProgram(p.lines, bindings, values, shapes, accelerations=accelerations, late=late_statements)
    emit = Emitter(path.local)
    factor = Factor(*(_factor_leaves_first if leaves_first else _factor)(emit, grid, n), leaves_first)
    factored = emit.take()
    if not phased:
        results = _STEPS[kind](emit, values, factor)
        return SolveProgram(p.lines, bindings, values, shapes, factored, emit.take(), results)
    results = _qddot_steps(emit, values, factor)
    steps = emit.take()
    results.update(_phased_tail(emit, values, factor))
    return SolveProgram(
        p.lines,
        bindings,
        values,
        shapes,
        factored,
        steps,
        results,
        tail=emit.take(),
        accelerations=accelerations,
        late=late_statements,
        ldl=factor,
    )
