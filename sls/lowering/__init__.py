"""Stage 3, language-neutral: lower the derived arrays to straight-line programs.

For every generated function of the registry (:mod:`sls.functions`) this
module decides *what* is computed, once for all targets:

* the **shared subexpressions** of the function's entries — one
  ``sympy.cse`` on the expanded route, the graph's own sharing on the graph
  route (:mod:`sls.lowering.graph_print`), both reduced to one :class:`Printed` form;
* for ``qddot_fun`` and ``linearized_model``, the **unrolled**
  ``M = L D Lᵀ`` **factorization and solves** as a list of abstract
  operations: :class:`Let` (bind a value), :class:`Check` (a pivot must be
  positive, else the target's "not positive definite" path) and
  :class:`Fail` (a pivot known to be ≤ 0 at generation time). Values are
  float constants or names; the arithmetic texts the solve builds use only
  ``+ - * /``, names and float literals, which read the same in Python and C.

*How* it reads is a backend's business: a :class:`Path` (one per way a
backend evaluates a function — the Python target has a float path and an
array path, the C target one) supplies the printers and the binding syntax,
and the backend turns :class:`Lowered` kernels and :class:`SolveProgram`\\ s
into its language. Output is deterministic: same model → same programs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import sympy

from sls import functions
from sls.algebra.graph import Graph
from sls.arrays import flatten, shape_of
from sls.derive import Dynamics, acceleration_symbols, function_arrays
from sls.lowering.graph_print import GraphPrinter, Style, make_plan

# --------------------------------------------------------------------------
# helpers every backend uses: nested arrays and printed text


def strip_parens(text: str) -> str:
    """``text`` without one pair of parentheses enclosing all of it."""
    if not (text.startswith("(") and text.endswith(")")):
        return text
    depth = 0
    for position, char in enumerate(text):
        depth += char == "("
        depth -= char == ")"
        if depth == 0 and position < len(text) - 1:
            return text
    return text[1:-1]


def default_prefix(array: str) -> str:
    """The name prefix of an array's bound entries (``_M0``, ``_rhs1``, ...)."""
    return f"_{array}"


@dataclass(frozen=True)
class Let:
    """Bind ``value`` (an expression printed by a path, or an arithmetic text over names and float literals)
    to ``name``: a temporary, an entry or a step of a solve. The backend writes the binding."""

    name: str
    value: str


@dataclass(frozen=True)
class Check:
    """The pivot ``pivot`` must be positive; otherwise ``M`` is not positive definite."""

    pivot: str


@dataclass(frozen=True)
class Fail:
    """A pivot is ≤ 0 whatever the state: ``M`` is never positive definite."""


#: A statement of a lowered program: what a backend turns into a line of its language.
Op = Let | Check | Fail


def _same(name: str) -> str:
    return name


@dataclass(frozen=True)
class Path:
    """How one code path of a backend prints.

    ``text`` prints a sympy expression (the expanded route), ``style`` how
    the graph prints (the graph route). With ``float_entries`` (Python
    floats), an entry that depends on no state or input is printed as
    ``float(...)`` and numbers as float literals, so every returned entry is
    a float whatever the parameters' types. ``prefix(array)`` names an
    array's bound entries, ``local(name)`` how a generated local reads (the
    ``text`` printer and ``style`` name them the same way).
    """

    text: Callable[[sympy.Expr], str]
    style: Style
    float_entries: bool = False
    prefix: Callable[[str], str] = default_prefix
    local: Callable[[str], str] = _same


@dataclass(frozen=True)
class Printed:
    """A set of entries reduced together and printed for one path.

    ``lines`` bind the shared temporaries (:class:`Let`\\ s, in evaluation
    order); ``texts`` hold each entry's text; ``constants`` holds an entry's
    value where it is a number known at generation time, else ``None``.
    ``late`` and ``late_entries``: see :class:`GraphReducer`.
    """

    lines: list[Let]
    texts: list[str]
    constants: list[float | None]
    late: list[Let] = field(default_factory=list)
    late_entries: list[bool] = field(default_factory=list)


def print_cse(entries: list, floats: frozenset, paths: list, late: frozenset = frozenset()) -> list:
    """The expanded route: one ``sympy.cse`` over ``entries``, printed for each path.

    ``floats`` are the symbols bound to floats at run time (states, inputs).
    Phased programs (``late``) are the graph route's (:class:`GraphReducer`).
    """
    if late:
        raise ValueError("the expanded route prints no phased programs")
    replacements, reduced = _cse([sympy.sympify(e) for e in entries])
    is_float = _float_flags(replacements, reduced, floats) if any(p.float_entries for p in paths) else None
    result = []
    for path in paths:
        lines = [Let(path.local(str(sym)), path.text(expr)) for sym, expr in replacements]
        if path.float_entries:
            texts = [_float_entry(path, e, f) for e, f in zip(reduced, is_float or [])]
        else:
            texts = [path.text(e) for e in reduced]
        result.append(Printed(lines, texts, [float(e) if e.is_Number else None for e in reduced]))
    return result


def _float_entry(path: Path, expr: sympy.Expr, is_float: bool) -> str:
    if expr.is_Number:
        return repr(float(expr))
    text = path.text(expr)
    return text if is_float else f"float({text})"


def _float_flags(replacements: list, reduced: list, floats: frozenset) -> list:
    """For each reduced entry: is its value certainly a float at run time?

    ``floats`` are the symbols bound to floats (states, inputs); an
    expression is a float when it involves one of them (directly or through a
    temporary) or a float literal. Anything else (numbers, parameters alone)
    may be an ``int`` when the caller passes integer parameters.
    """
    known = set(floats)
    for sym, expr in replacements:
        if _is_float(expr, known):
            known.add(sym)
    return [_is_float(expr, known) for expr in reduced]


def _is_float(expr: sympy.Expr, known: set) -> bool:
    if expr.free_symbols & known:
        return True
    return any(not a.is_Integer for a in expr.atoms(sympy.Number))


def _cse(exprs: list) -> tuple[list, list]:
    """One common-subexpression elimination over ``exprs`` (temporaries ``_t0, _t1, …``)."""
    temporaries = sympy.numbered_symbols("_t", real=True)
    return sympy.cse(exprs, symbols=temporaries, order="none")


class GraphReducer:
    """The graph route: entries are nodes of one :class:`~sls.algebra.graph.Graph`, printed straight from it."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self._printers: dict[int, tuple[Style, GraphPrinter]] = {}

    def __call__(self, entries: list, floats: frozenset, paths: list, late: frozenset = frozenset()) -> list:
        """One :class:`Printed` per path; temporaries and entries depending on the symbols ``late``
        are kept apart (:attr:`Printed.late`, :attr:`Printed.late_entries`)."""
        g = self.graph
        mask = g.mask(g.symbol(s) for s in floats | late)
        late_mask = g.mask(g.symbol(s) for s in late) if late else 0
        constants = [float(g.payload[e]) if g.is_number(e) else None for e in entries]
        late_entries = [bool(g.deps[e] & late_mask) for e in entries]
        result = []
        plan = make_plan(g, entries)
        for path in paths:
            printer = self._printers.get(id(path.style))
            if printer is None:
                printer = self._printers[id(path.style)] = (path.style, GraphPrinter(g, path.style))
            lines, late_lines, texts = printer[1].phased_program(entries, late_mask, plan=plan)
            if path.float_entries:
                texts = [
                    text if g.deps[e] & mask or c is not None else f"float({text})"
                    for e, text, c in zip(entries, texts, constants)
                ]
                texts = [repr(c) if c is not None else text for text, c in zip(texts, constants)]
            lets = [Let(name, text) for name, text in lines]
            result.append(Printed(lets, texts, constants, [Let(name, text) for name, text in late_lines], late_entries))
        return result


def reducer(dynamics: Dynamics) -> Callable:
    """How ``dynamics`` reduces entries: :func:`print_cse` or a :class:`GraphReducer`."""
    return print_cse if dynamics.graph is None else GraphReducer(dynamics.graph)


# --------------------------------------------------------------------------
# array functions


@dataclass(frozen=True)
class Lowered:
    """An array function on one path: the printed entries and, per output, its shape and slice of them."""

    printed: Printed
    outputs: dict

    def output(self, name: str) -> tuple:
        """``(shape, texts, constants)`` of output ``name``."""
        shape, part = self.outputs[name]
        return shape, self.printed.texts[part], self.printed.constants[part]


def lower_kernel(arrays: dict, floats: frozenset, reduce: Callable, paths: list) -> list:
    """Reduce ``arrays`` (name → nested tuple of entries) together; one :class:`Lowered` per path."""
    flats = {name: list(flatten(array)) for name, array in arrays.items()}
    printed = reduce([expr for flat in flats.values() for expr in flat], floats, paths)
    outputs = {}
    start = 0
    for name, flat in flats.items():
        outputs[name] = (shape_of(arrays[name]), slice(start, start + len(flat)))
        start += len(flat)
    return [Lowered(p, outputs) for p in printed]


# --------------------------------------------------------------------------
# the unrolled solve


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

    lines: list
    bindings: list
    values: dict
    shapes: dict
    factor: list | None = None
    steps: list = field(default_factory=list)
    results: dict = field(default_factory=dict)
    accelerations: list = field(default_factory=list)
    late: list = field(default_factory=list)
    tail: list = field(default_factory=list)
    #: The unrolled factor's values: ``(L, reciprocal)``, ``L[i, j]`` (``i > j``) below the unit diagonal and
    #: the reciprocal pivots ``1/D`` (empty when not unrolled); a target may solve ``A`` and ``B`` with them
    #: in loops instead of running ``tail``.
    ldl: tuple = ()

    @property
    def phased(self) -> bool:
        """True for a program in two phases (the graph route's ``linearized_model``)."""
        return bool(self.accelerations)

    @property
    def unrolled(self) -> bool:
        return self.factor is not None


#: A value in a solve: a float constant known at generation time, or a name (or arithmetic text) bound at run time.
Value = float | str


def _literal(value: float) -> str:
    return repr(value) if value >= 0 else f"({value!r})"


def is_name(text: str) -> bool:
    """True when ``text`` is a bare name (not an expression)."""
    return text.isidentifier()


def text_of(value: Value) -> str:
    """A value (float constant or name) as text."""
    return repr(value) if isinstance(value, float) else value


class _Emitter:
    """Straight-line operations over values that are float constants or names.

    Folds what is known at generation time: products with ``0`` vanish,
    with ``1`` are the other factor, constants combine.
    """

    def __init__(self, local: Callable[[str], str] = _same) -> None:
        self.ops: list[Op] = []
        self.local = local

    def let(self, name: str, value: Value) -> Value:
        """Bind ``value`` (a constant, a name or an expression text) to the local ``name`` and return what
        stands for it."""
        if isinstance(value, float) or is_name(value):
            return value
        name = self.local(name)
        self.ops.append(Let(name, value))
        return name

    @staticmethod
    def product(a: Value, b: Value) -> Value:
        if isinstance(a, float) and isinstance(b, float):
            return a * b
        if isinstance(a, float):
            a, b = b, a
        if isinstance(b, float):
            if b == 0.0:
                return 0.0
            return a if b == 1.0 else f"{a}*{_literal(b)}"
        return f"{a}*{b}"

    @classmethod
    def combine(cls, base: Value, products: list[tuple[Value, Value]]) -> Value:
        """``base − Σ a·b`` over ``products = [(a, b), …]``, folded."""
        constant = base if isinstance(base, float) else 0.0
        terms = [] if isinstance(base, float) else [base]
        subtracted = []
        for a, b in products:
            p = cls.product(a, b)
            if isinstance(p, float):
                constant -= p
            else:
                subtracted.append(p)
        if not terms and not subtracted:
            return constant
        text = terms[0] if terms else "-" + subtracted.pop(0)
        for p in subtracted:
            text += f" - {p}"
        if constant != 0.0:
            text += f" + {constant!r}" if constant > 0 else f" - {-constant!r}"
        return text


def _factor(emit: _Emitter, M: list[list[Value]], n: int) -> tuple[dict[tuple[int, int], Value], list[Value]]:
    """Unrolled ``M = L D Lᵀ``; returns ``L`` ((i, j) → value, i > j) and the reciprocal pivots."""
    L: dict[tuple[int, int], Value] = {}
    E: dict[tuple[int, int], Value] = {}
    reciprocal: list[Value] = []
    for j in range(n):
        pivot = emit.let(f"_d{j}", emit.combine(M[j][j], [(E[j, k], L[j, k]) for k in range(j)]))
        if isinstance(pivot, float):
            if not pivot > 0.0:
                emit.ops.append(Fail())
            reciprocal.append(1.0 / pivot if pivot != 0.0 else 0.0)
        else:
            emit.ops.append(Check(pivot))
            reciprocal.append(emit.let(f"_r{j}", f"1.0/{pivot}"))
        for i in range(j + 1, n):
            e = emit.let(f"_e{i}_{j}", emit.combine(M[j][i], [(E[i, k], L[j, k]) for k in range(j)]))
            E[i, j] = e
            L[i, j] = emit.let(f"_l{i}_{j}", emit.product(e, reciprocal[j]))
    return L, reciprocal


def _solve(
    emit: _Emitter, L: dict[tuple[int, int], Value], reciprocal: list[Value], column: list[Value], tag: str
) -> list[Value]:
    """Unrolled ``L D Lᵀ z = column``; returns the values of ``z``."""
    n = len(column)
    y: list[Value] = []
    for i in range(n):
        y.append(emit.let(f"_y{tag}_{i}", emit.combine(column[i], [(L[i, k], y[k]) for k in range(i)])))
    z: list[Value] = [0.0] * n  # each set before it is read
    for i in reversed(range(n)):
        scaled = emit.product(y[i], reciprocal[i])
        z[i] = emit.let(f"_z{tag}_{i}", emit.combine(scaled, [(L[k, i], z[k]) for k in range(i + 1, n)]))
    return z


def _entry_values(
    name: Callable[[int], str],
    texts: list[str],
    constants: list[float | None],
    bindings: list[Op],
    late: list[bool] | None = None,
    late_bindings: list[Op] | None = None,
) -> list[Value]:
    """Bind printed entries to names (``name(k)`` for entry ``k``) or float constants for the solver; entries
    flagged in ``late`` go to ``late_bindings``."""
    values: list[Value] = []
    for k, (text, constant) in enumerate(zip(texts, constants)):
        if constant is not None:
            values.append(constant)
        elif is_name(text):
            values.append(text)
        else:
            chosen = late_bindings if late is not None and late_bindings is not None and late[k] else bindings
            chosen.append(Let(name(k), text))
            values.append(name(k))
    return values


def negated(value: Value) -> Value:
    """``−value`` for a float constant or a name (then an expression text)."""
    return -value if isinstance(value, float) else f"-{value}"


def _qddot_steps(emit: _Emitter, values: dict, L: dict, reciprocal: list) -> dict:
    """``q̈ = M⁻¹ rhs``."""
    return {"qddot": _solve(emit, L, reciprocal, values["rhs"], "")}


def _linearized_steps(emit: _Emitter, values: dict, L: dict, reciprocal: list) -> dict:
    """Lower halves of ``(A, B)``: column ``l`` of ``∂q̈/∂x`` solves ``M z = drhs[:, l] − (∂M/∂q_l) q̈``
    (the second term only for ``l < n``), column ``j`` of ``B`` solves ``M z = B_u[:, j]``."""
    n = len(values["rhs"])
    m = len(values["B_u"]) // n if n else 0
    qddot = _solve(emit, L, reciprocal, values["rhs"], "q")
    dM_v, drhs_v, B_v = values["dM"], values["drhs"], values["B_u"]
    A_rows: list[list[Value]] = [[0.0] * (2 * n) for _ in range(n)]  # every entry set below
    for col in range(2 * n):
        column = []
        for a in range(n):
            base = drhs_v[a * 2 * n + col]
            if col < n:
                entry = emit.combine(base, [(dM_v[(a * n + b) * n + col], qddot[b]) for b in range(n)])
                base = emit.let(f"_c{col}_{a}", entry)
            column.append(base)
        for a, value in enumerate(_solve(emit, L, reciprocal, column, str(col))):
            A_rows[a][col] = value
    B_rows: list[list[Value]] = [[0.0] * m for _ in range(n)]
    for j in range(m):
        for a, value in enumerate(_solve(emit, L, reciprocal, [B_v[a * m + j] for a in range(n)], f"b{j}")):
            B_rows[a][j] = value
    return {"A": A_rows, "B": B_rows}


def _phased_tail(emit: _Emitter, values: dict, L: dict, reciprocal: list) -> dict:
    """Lower halves of ``(A, B)`` of a phased program: column ``l`` of ``A`` solves ``M z = −residual_jac[:, l]``,
    column ``j`` of ``B`` solves ``M z = B_u[:, j]``."""
    n = len(values["rhs"])
    m = len(values["B_u"]) // n if n else 0
    J, B_v = values["residual_jac"], values["B_u"]
    A_rows: list[list[Value]] = [[0.0] * (2 * n) for _ in range(n)]  # every entry set below
    for col in range(2 * n):
        for a, value in enumerate(
            _solve(emit, L, reciprocal, [negated(J[a * 2 * n + col]) for a in range(n)], str(col))
        ):
            A_rows[a][col] = value
    B_rows: list[list[Value]] = [[0.0] * m for _ in range(n)]
    for j in range(m):
        for a, value in enumerate(_solve(emit, L, reciprocal, [B_v[a * m + j] for a in range(n)], f"b{j}")):
            B_rows[a][j] = value
    return {"A": A_rows, "B": B_rows}


def _namer(path: Path, array: str) -> Callable[[int], str]:
    """The names of an array's bound entries on ``path`` (``_M0``, ``_M1``, …)."""
    prefix = path.prefix(array)
    return lambda k: path.local(f"{prefix}{k}")


#: The solves of each kind of solving function (:attr:`sls.functions.Function.solve`).
_STEPS = {functions.ACCELERATIONS: _qddot_steps, functions.LINEARIZATION: _linearized_steps}


def lower_solve(
    kind: str, arrays: dict, floats: frozenset, reduce: Callable, paths: list, unroll_max: int | None
) -> list:
    """One :class:`SolveProgram` per path for a solving function of ``kind`` (:attr:`sls.functions.Function.solve`).

    ``arrays`` maps names to nested tuples (``M`` first, the (n, n) mass
    matrix); the reduction runs over the upper triangle of ``M`` and every
    other entry. The solve is unrolled unless ``n > unroll_max``
    (``None``: always).
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
    programs = []
    for path, p in zip(paths, printed):
        bindings: list = []
        late_bindings: list = []
        start = len(upper)
        m_values = _entry_values(_namer(path, "M"), p.texts[:start], p.constants[:start], bindings)
        m_map = dict(zip(upper, m_values))
        values = {"M": [m_map[min(a, b), max(a, b)] for a in range(n) for b in range(n)]}
        for key, flat in flats.items():
            part = slice(start, start + len(flat))
            late = p.late_entries[part] if phased else None
            values[key] = _entry_values(
                _namer(path, key), p.texts[part], p.constants[part], bindings, late, late_bindings
            )
            start += len(flat)
        names = path.style.names
        accelerations = [names.get(s.name) or path.local(s.name) for s in late_symbols]
        late_ops: list[Op] = list(p.late) + late_bindings if phased else []
        if unroll_max is not None and n > unroll_max:
            programs.append(SolveProgram(p.lines, bindings, values, shapes, accelerations=accelerations, late=late_ops))
            continue
        emit = _Emitter(path.local)
        grid = [[m_map[min(a, b), max(a, b)] for b in range(n)] for a in range(n)]
        L, reciprocal = _factor(emit, grid, n)
        factor, emit.ops = emit.ops, []
        if phased:
            results = _qddot_steps(emit, values, L, reciprocal)
            steps, emit.ops = emit.ops, []
            results.update(_phased_tail(emit, values, L, reciprocal))
            programs.append(
                SolveProgram(
                    p.lines,
                    bindings,
                    values,
                    shapes,
                    factor,
                    steps,
                    results,
                    tail=emit.ops,
                    accelerations=accelerations,
                    late=late_ops,
                    ldl=(L, reciprocal),
                )
            )
            continue
        results = _STEPS[kind](emit, values, L, reciprocal)
        programs.append(SolveProgram(p.lines, bindings, values, shapes, factor, emit.ops, results))
    return programs


# --------------------------------------------------------------------------
# every function


def function_floats(dynamics: Dynamics, function: functions.Function) -> frozenset:
    """The symbols bound to floats in ``function``: states, inputs and (``tau_fun``) the accelerations."""
    model = dynamics.model
    floats = frozenset(model.state) | frozenset(model.inputs)
    if functions.ACCELERATION in function.arguments:
        floats |= frozenset(acceleration_symbols(model.n))
    return floats


def lowerers(dynamics: Dynamics, paths: list, unroll_max: int | None = None) -> dict:
    """How to lower every generated function: name → zero-argument callable returning one result per path
    (:class:`Lowered` for array functions, :class:`SolveProgram` for the solving ones), or ``None`` for a
    function solved at run time (a constrained model's solves); wrappers have no entry."""
    arrays = dynamics.arrays if dynamics.arrays is not None else function_arrays(dynamics)
    reduce = reducer(dynamics)
    result: dict[str, Callable[[], list] | None] = {}
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
            result[function.name] = partial(lower_solve, function.solve, chosen, floats, reduce, paths, unroll_max)
        else:
            result[function.name] = partial(lower_kernel, chosen, floats, reduce, paths)
    return result
