"""Stage 3: optimize the derived terms and print them as Python code.

Each generated function is built from a :class:`Kernel`: named output arrays
of sympy expressions, reduced together by common-subexpression elimination
(``sympy.cse``, temporaries ``_t0, _t1, …``) and printed twice:

* the **scalar path** (one state, ``x`` of shape ``(2n,)``) works on Python
  floats — ``x.tolist()`` once, ``math`` functions — because Python float
  arithmetic is several times faster than numpy scalars;
* the **batch path** (``x`` of shape ``(..., 2n)``) works on numpy arrays
  with ``np`` functions, one vectorised operation per temporary.

Names: states, inputs and parameters keep the user's names (validated plain
identifiers that never start with ``_``), so nothing generated can collide
with them. Output is deterministic: same model → same text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product
from typing import Callable

import sympy
from sympy.printing.numpy import NumPyPrinter
from sympy.printing.precedence import PRECEDENCE
from sympy.printing.pycode import PythonCodePrinter

from .derive import Dynamics


class _MinMax:
    """``Max``/``Min`` of any number of arguments as nested two-argument calls of ``MAX``/``MIN``."""

    MAX, MIN = "max", "min"

    def _print_Max(self, expr: sympy.Max) -> str:
        return _nested_call(self, self.MAX, expr.args)

    def _print_Min(self, expr: sympy.Min) -> str:
        return _nested_call(self, self.MIN, expr.args)


class ScalarPrinter(_MinMax, PythonCodePrinter):
    """Prints expressions for Python floats (``math.sin``, exact float literals)."""

    def __init__(self) -> None:
        super().__init__({"fully_qualified_modules": True, "standard": "python3"})

    def _print_Float(self, expr: sympy.Float) -> str:
        return repr(float(expr))

    def _print_Pow(self, expr: sympy.Pow, rational: bool = False) -> str:
        # x*x is several times faster than x**2 on Python floats (x**2 goes through pow()).
        if expr.exp in (2, 3) and not rational:
            base = self.parenthesize(expr.base, PRECEDENCE["Mul"], strict=False)
            return "(" + "*".join([base] * int(expr.exp)) + ")"
        return super()._print_Pow(expr, rational=rational)

    def _print_Heaviside(self, expr: sympy.Heaviside) -> str:
        # H(a) = 1 for a > 0, 0 for a < 0 and H0 (sympy's default 1/2) at a = 0: a float in every case.
        arg = self.parenthesize(expr.args[0], PRECEDENCE["Relational"], strict=True)
        at_zero = _float_text(self, expr.args[1]) if len(expr.args) > 1 else "0.5"
        return f"(1.0 if {arg} > 0.0 else 0.0 if {arg} < 0.0 else {at_zero})"

    def expression(self, expr: sympy.Expr) -> str:
        """``expr`` as code, without a redundant pair of outer parentheses."""
        return _strip_parens(self.doprint(expr))


class BatchPrinter(_MinMax, NumPyPrinter):
    """Prints expressions for numpy arrays (``np.sin``, exact float literals)."""

    MAX, MIN = "np.maximum", "np.minimum"

    def __init__(self) -> None:
        super().__init__({"fully_qualified_modules": True})

    def _module_format(self, fqn: str, register: bool = True) -> str:
        text = super()._module_format(fqn, register)
        return "np." + text[len("numpy.") :] if text.startswith("numpy.") else text

    def _print_Float(self, expr: sympy.Float) -> str:
        return repr(float(expr))

    def _print_Pow(self, expr: sympy.Pow, rational: bool = False) -> str:
        # Arrays are float64, so integer powers need no float workaround.
        return self._hprint_Pow(expr, rational=rational, sqrt="np.sqrt")

    def _print_Heaviside(self, expr: sympy.Heaviside) -> str:
        at_zero = _float_text(self, expr.args[1]) if len(expr.args) > 1 else "0.5"
        return f"np.heaviside({self._print(expr.args[0])}, {at_zero})"

    def _print_Piecewise(self, expr: sympy.Piecewise) -> str:
        # Nested np.where: every branch is evaluated on the whole batch, the condition picks per entry.
        text = "np.nan"
        for value, condition in reversed(expr.args):
            if condition == sympy.true:
                text = self._print(value)
            else:
                text = f"np.where({self._print(condition)}, {self._print(value)}, {text})"
        return text


def _float_text(printer: object, value: sympy.Expr) -> str:
    """``value`` printed as a float where it is a number (so Python arithmetic stays in floats)."""
    return repr(float(value)) if value.is_Number else printer._print(value)


def _nested_call(printer: object, name: str, args: tuple) -> str:
    """``name(a, name(b, c))`` for a Max/Min of any number of arguments; numbers print as floats."""
    texts = [_float_text(printer, a) for a in args]
    text = texts[-1]
    for item in reversed(texts[:-1]):
        text = f"{name}({item}, {text})"
    return text


SCALAR = ScalarPrinter()
BATCH = BatchPrinter()


@dataclass(frozen=True)
class Output:
    """One output array of a kernel: its name, shape and printed entries.

    ``scalar``/``batch`` hold the printed entries in C order (flat); ``zero``
    flags the entries that are exactly zero. Scalar entries are guaranteed to
    be Python floats (entries that depend on no state are wrapped in
    ``float(...)``), so ``np.array`` of them is float64 without a ``dtype``.
    """

    name: str
    shape: tuple
    scalar: list
    batch: list
    zero: list

    @property
    def scalar_literal(self) -> str:
        """A nested-list literal of the scalar entries (``[[a, b], [c, d]]``)."""
        return _nested(self.scalar, self.shape)

    @property
    def scalar_array(self) -> str:
        """The scalar-path expression building the output ndarray (flat list, then reshape)."""
        flat = "np.array([" + ", ".join(self.scalar) + "])"
        return flat if len(self.shape) <= 1 else f"{flat}.reshape({self.shape})"

    @property
    def indexed(self) -> list[tuple[str, str]]:
        """``(index, batch expression)`` for the non-zero entries, index like ``"0, 1"``."""
        result = []
        for position, (expr, is_zero) in enumerate(zip(self.batch, self.zero)):
            if not is_zero:
                index = _unravel(position, self.shape)
                result.append((", ".join(map(str, index)), expr))
        return result


@dataclass(frozen=True)
class Kernel:
    """Printed code of one generated function's symbolic part.

    ``scalar_lines``/``batch_lines`` assign the common subexpressions;
    ``outputs`` maps output names to :class:`Output`.
    """

    scalar_lines: list
    batch_lines: list
    outputs: dict = field(default_factory=dict)


def _float_flags(replacements: list, reduced: list, floats: frozenset) -> list:
    """For each reduced entry: is its scalar-path value certainly a Python float?

    ``floats`` are the symbols bound to Python floats (states, inputs); an
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


@dataclass(frozen=True)
class Printed:
    """A set of entries reduced together and printed for both paths.

    ``scalar_lines``/``batch_lines`` assign the shared temporaries;
    ``scalar``/``batch`` hold each entry's text (scalar entries independent of
    the states and inputs are wrapped in ``float(...)``); ``constants`` holds
    an entry's value where it is a number known at generation time, else ``None``.
    """

    scalar_lines: list
    batch_lines: list
    scalar: list
    batch: list
    constants: list


def print_cse(entries: list, floats: frozenset) -> Printed:
    """The expanded route: one ``sympy.cse`` over ``entries``, printed by sympy's printers.

    ``floats`` are the symbols that hold Python floats on the scalar path
    (states, inputs).
    """
    replacements, reduced = _cse([sympy.sympify(e) for e in entries])
    is_float = _float_flags(replacements, reduced, floats)
    return Printed(
        scalar_lines=[f"{sym} = {SCALAR.expression(expr)}" for sym, expr in replacements],
        batch_lines=[f"{sym} = {BATCH.doprint(expr)}" for sym, expr in replacements],
        scalar=[_scalar_entry(e, f) for e, f in zip(reduced, is_float)],
        batch=[BATCH.doprint(e) for e in reduced],
        constants=[float(e) if e.is_Number else None for e in reduced],
    )


class GraphReducer:
    """The graph route: entries are nodes of one :class:`~sls.graph.Graph`, printed straight from it."""

    def __init__(self, graph: object) -> None:
        from .graph_print import GraphPrinter, Style

        self.graph = graph
        self.scalar = GraphPrinter(graph, Style(SCALAR, "math", scalar=True))
        self.batch = GraphPrinter(graph, Style(BATCH, "np", scalar=False))

    def __call__(self, entries: list, floats: frozenset) -> Printed:
        g = self.graph
        mask = g.mask(g.symbol(s) for s in floats)
        scalar_lines, scalar = self.scalar.program(entries)
        batch_lines, batch = self.batch.program(entries)
        constants = [float(g.payload[e]) if g.is_number(e) else None for e in entries]
        scalar = [
            text if g.deps[e] & mask or c is not None else f"float({text})" for e, text, c in zip(entries, scalar, constants)
        ]
        scalar = [repr(c) if c is not None else text for text, c in zip(scalar, constants)]
        return Printed(scalar_lines, batch_lines, scalar, batch, constants)


def build_kernel(arrays: dict, floats: frozenset = frozenset(), reduce=print_cse) -> Kernel:
    """Reduce and print ``arrays`` (name → nested tuple of entries) as one :class:`Kernel`.

    ``floats`` are the symbols that hold Python floats on the scalar path
    (states, inputs); scalar output entries independent of them are wrapped in
    ``float(...)`` so the returned arrays are float64 whatever the parameters.
    ``reduce`` is :func:`print_cse` (sympy expressions) or a :class:`GraphReducer` (graph nodes).
    """
    shapes = {name: _shape(array) for name, array in arrays.items()}
    flats = {name: list(_flatten(array)) for name, array in arrays.items()}
    printed = reduce([expr for flat in flats.values() for expr in flat], floats)
    outputs = {}
    start = 0
    for name, flat in flats.items():
        part = slice(start, start + len(flat))
        start += len(flat)
        outputs[name] = Output(
            name=name,
            shape=shapes[name],
            scalar=printed.scalar[part],
            batch=printed.batch[part],
            zero=[c == 0.0 for c in printed.constants[part]],
        )
    return Kernel(scalar_lines=printed.scalar_lines, batch_lines=printed.batch_lines, outputs=outputs)


def _cse(exprs: list) -> tuple[list, list]:
    """One common-subexpression elimination over ``exprs`` (temporaries ``_t0, _t1, …``)."""
    temporaries = sympy.numbered_symbols("_t", real=True)
    return sympy.cse(exprs, symbols=temporaries, order="none")


def _scalar_entry(expr: sympy.Expr, is_float: bool) -> str:
    if expr.is_Number:
        return repr(float(expr))
    text = SCALAR.expression(expr)
    return text if is_float else f"float({text})"


# --------------------------------------------------------------------------
# forward dynamics and linearization: one kernel plus an unrolled solve

#: Largest n for which the solve with M is unrolled into straight-line code
#: (an LDLᵀ factorization, no numpy call); larger models call numpy's solver.
UNROLL_MAX = 8


@dataclass(frozen=True)
class SolverCode:
    """Code of ``qddot_fun`` or ``linearized_model`` after the argument unpacking.

    ``scalar_lines`` (Python floats) and ``batch_lines`` (arrays with leading
    batch axes) evaluate the fused kernel, factor ``M = L D Lᵀ`` (unrolled
    when ``unrolled``), solve and end with ``return``. A pivot ``≤ 0`` (``M``
    not positive definite) raises ``_NotPositiveDefinite``, caught in the
    same lines, which then hand the assembled arrays to the module's
    ``_generic`` (numpy's Cholesky and solve, raising ``LinAlgError`` naming
    the state).
    """

    scalar_lines: list
    batch_lines: list
    unrolled: bool


def _literal(value: float) -> str:
    return repr(value) if value >= 0 else f"({value!r})"


def _is_name(text: str) -> bool:
    return text.isidentifier()


class _Emitter:
    """Straight-line code over values that are float constants or variable names.

    Folds what is known at generation time: products with ``0`` vanish,
    with ``1`` are the other factor, constants combine.
    """

    def __init__(self) -> None:
        self.lines: list = []

    def let(self, name: str, value: object) -> object:
        """Bind ``value`` (a constant, a name or an expression text) and return what stands for it."""
        if isinstance(value, float) or _is_name(value):
            return value
        self.lines.append(f"{name} = {value}")
        return name

    @staticmethod
    def product(a: object, b: object) -> object:
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
    def combine(cls, base: object, products: list) -> object:
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


def _factor(emit: _Emitter, M: list, n: int, check) -> tuple[dict, list]:
    """Unrolled ``M = L D Lᵀ``; returns ``L`` ((i, j) → value, i > j) and the reciprocal pivots."""
    L, E, reciprocal = {}, {}, []
    for j in range(n):
        pivot = emit.let(f"_d{j}", emit.combine(M[j][j], [(E[j, k], L[j, k]) for k in range(j)]))
        if isinstance(pivot, float):
            if not pivot > 0.0:
                emit.lines.append("raise _NotPositiveDefinite")
            reciprocal.append(1.0 / pivot if pivot != 0.0 else 0.0)
        else:
            emit.lines += [check(pivot), "    raise _NotPositiveDefinite"]
            reciprocal.append(emit.let(f"_r{j}", f"1.0/{pivot}"))
        for i in range(j + 1, n):
            e = emit.let(f"_e{i}_{j}", emit.combine(M[j][i], [(E[i, k], L[j, k]) for k in range(j)]))
            E[i, j] = e
            L[i, j] = emit.let(f"_l{i}_{j}", emit.product(e, reciprocal[j]))
    return L, reciprocal


def _solve(emit: _Emitter, L: dict, reciprocal: list, column: list, tag: str) -> list:
    """Unrolled ``L D Lᵀ z = column``; returns the values of ``z``."""
    n = len(column)
    y = []
    for i in range(n):
        y.append(emit.let(f"_y{tag}_{i}", emit.combine(column[i], [(L[i, k], y[k]) for k in range(i)])))
    z = [None] * n
    for i in reversed(range(n)):
        scaled = emit.product(y[i], reciprocal[i])
        z[i] = emit.let(f"_z{tag}_{i}", emit.combine(scaled, [(L[k, i], z[k]) for k in range(i + 1, n)]))
    return z


def _entry_values(prefix: str, texts: list, constants: list, lines: list) -> list:
    """Bind printed output entries to names (or float constants) for the solver code."""
    values = []
    for k, (text, constant) in enumerate(zip(texts, constants)):
        if constant is not None:
            values.append(constant)
        elif _is_name(text):
            values.append(text)
        else:
            lines.append(f"{prefix}{k} = {text}")
            values.append(f"{prefix}{k}")
    return values


def _text(value: object) -> str:
    return repr(value) if isinstance(value, float) else value


def _assemble(values: list, shape: tuple, scalar: bool) -> str:
    """Code building an array of ``shape`` (batch axes first) from flat ``values``."""
    items = "[" + ", ".join(map(_text, values)) + "]"
    if scalar:
        return f"np.array({items}, dtype=float).reshape({shape})"
    return f"_stack({items}, _x.shape[:-1], {shape})"


def _solver_code(arrays: dict, floats: frozenset, n: int, finish, reduce=print_cse) -> SolverCode:
    """Shared part of :func:`qddot_code` and :func:`linearized_code`.

    ``arrays`` maps names to nested tuples (``M`` is the (n, n) mass matrix);
    the CSE runs over the upper triangle of ``M`` and every other entry.
    ``finish(emit, values, L, reciprocal, scalar)`` appends the solves and the
    ``return`` to ``emit.lines``; ``values`` maps names to flat value lists.
    """
    upper = [(a, b) for a in range(n) for b in range(a, n)]
    flats = {name: list(_flatten(array)) for name, array in arrays.items() if name != "M"}
    M = arrays["M"]
    printed = reduce([M[a][b] for a, b in upper] + [e for flat in flats.values() for e in flat], floats)
    result = {}
    for scalar in (True, False):
        lines = list(printed.scalar_lines if scalar else printed.batch_lines)
        texts = printed.scalar if scalar else printed.batch
        parts = {}
        start = len(upper)
        m_values = _entry_values("_M", texts[:start], printed.constants[:start], lines)
        m_map = dict(zip(upper, m_values))
        parts["M"] = [m_map[min(a, b), max(a, b)] for a in range(n) for b in range(n)]
        for name, flat in flats.items():
            part = slice(start, start + len(flat))
            parts[name] = _entry_values(f"_{name}", texts[part], printed.constants[part], lines)
            start += len(flat)
        shapes = {name: _shape(array) for name, array in arrays.items()}
        generic = "return _generic(" + ", ".join(_assemble(parts[k], shapes[k], scalar) for k in arrays) + ", _x)"
        emit = _Emitter()
        emit.lines = lines
        if n > UNROLL_MAX:
            lines.append(generic)
        else:
            grid = [[m_map[min(a, b), max(a, b)] for b in range(n)] for a in range(n)]
            check = (lambda d: f"if not {d} > 0.0:") if scalar else (lambda d: f"if not np.all({d} > 0.0):")
            before = len(lines)
            L, reciprocal = _factor(emit, grid, n, check)
            factor_lines = lines[before:]
            del lines[before:]
            if factor_lines:
                lines.append("try:")
                lines += ["    " + line for line in factor_lines]
                lines += ["except _NotPositiveDefinite:", "    " + generic]
            finish(emit, parts, L, reciprocal, scalar)
        result[scalar] = lines
    return SolverCode(scalar_lines=result[True], batch_lines=result[False], unrolled=n <= UNROLL_MAX)


def qddot_code(M: tuple, rhs: tuple, floats: frozenset, reduce=print_cse) -> SolverCode:
    """``q̈ = M⁻¹ rhs``: kernel for ``M`` and ``rhs``, unrolled solve, ``return``."""
    n = len(rhs)

    def finish(emit, values, L, reciprocal, scalar):
        z = _solve(emit, L, reciprocal, values["rhs"], "")
        if scalar:
            emit.lines.append("return np.array([" + ", ".join(map(_text, z)) + "])")
        else:
            emit.lines.append(f"_out = np.empty(_x.shape[:-1] + ({n},))")
            emit.lines += [f"_out[..., {k}] = {_text(v)}" for k, v in enumerate(z)]
            emit.lines.append("return _out")

    return _solver_code({"M": M, "rhs": rhs}, floats, n, finish, reduce)


def linearized_code(
    M: tuple, rhs: tuple, dM: tuple, drhs: tuple, B_u: tuple, floats: frozenset, reduce=print_cse
) -> SolverCode:
    """``(A, B)``: kernel for ``M, rhs, dM, drhs, B_u``, one factorization, unrolled solves, ``return``.

    Column ``l`` of ``∂q̈/∂x`` solves ``M z = drhs[:, l] − (∂M/∂q_l) q̈`` (the
    second term only for ``l < n``), column ``j`` of ``B`` solves ``M z = B_u[:, j]``.
    """
    n = len(rhs)
    m = len(B_u[0]) if B_u else 0

    def finish(emit, values, L, reciprocal, scalar):
        qddot = _solve(emit, L, reciprocal, values["rhs"], "q")
        dM_v, drhs_v, B_v = values["dM"], values["drhs"], values["B_u"]
        A_rows = [[None] * (2 * n) for _ in range(n)]
        for l in range(2 * n):
            column = []
            for a in range(n):
                base = drhs_v[a * 2 * n + l]
                if l < n:
                    entry = emit.combine(base, [(dM_v[(a * n + b) * n + l], qddot[b]) for b in range(n)])
                    base = emit.let(f"_c{l}_{a}", entry)
                column.append(base)
            for a, value in enumerate(_solve(emit, L, reciprocal, column, str(l))):
                A_rows[a][l] = value
        B_rows = [[None] * m for _ in range(n)]
        for j in range(m):
            for a, value in enumerate(_solve(emit, L, reciprocal, [B_v[a * m + j] for a in range(n)], f"b{j}")):
                B_rows[a][j] = value
        top_A = [[1.0 if b == n + a else 0.0 for b in range(2 * n)] for a in range(n)]
        if scalar:
            A_flat = [v for row in top_A + A_rows for v in row]
            B_flat = [0.0] * (n * m) + [v for row in B_rows for v in row]
            emit.lines.append("return (")
            emit.lines.append("    np.array([" + ", ".join(map(_text, A_flat)) + f"]).reshape({(2 * n, 2 * n)}),")
            emit.lines.append("    np.array([" + ", ".join(map(_text, B_flat)) + f"]).reshape({(2 * n, m)}),")
            emit.lines.append(")")
        else:
            emit.lines.append("_batch = _x.shape[:-1]")
            emit.lines.append(f"_A = np.zeros(_batch + ({2 * n}, {2 * n}))")
            emit.lines.append(f"_A[..., :{n}, {n}:] = np.eye({n})")
            for a in range(n):
                for l in range(2 * n):
                    if A_rows[a][l] != 0.0:
                        emit.lines.append(f"_A[..., {n + a}, {l}] = {_text(A_rows[a][l])}")
            emit.lines.append(f"_B = np.zeros(_batch + ({2 * n}, {m}))")
            for a in range(n):
                for j in range(m):
                    if B_rows[a][j] != 0.0:
                        emit.lines.append(f"_B[..., {n + a}, {j}] = {_text(B_rows[a][j])}")
            emit.lines.append("return _A, _B")

    arrays = {"M": M, "rhs": rhs, "dM": dM, "drhs": drhs, "B_u": B_u}
    return _solver_code(arrays, floats, n, finish, reduce)


class _SympyAlgebra:
    """Arithmetic on sympy expressions (the expanded route)."""

    zero = sympy.Integer(0)

    @staticmethod
    def total(items) -> sympy.Expr:
        return sympy.Add(*items)

    @staticmethod
    def product(a, b) -> sympy.Expr:
        return a * b

    @staticmethod
    def plus(a, b) -> sympy.Expr:
        return a + b

    @staticmethod
    def minus(a, b) -> sympy.Expr:
        return a - b

    @staticmethod
    def symbol(s: sympy.Symbol) -> sympy.Symbol:
        return s


class _GraphAlgebra:
    """The same arithmetic on nodes of a :class:`~sls.graph.Graph` (the graph route)."""

    def __init__(self, graph: object) -> None:
        self.graph = graph
        self.zero = graph.zero

    def total(self, items) -> int:
        return self.graph.add(list(items))

    def product(self, a, b) -> int:
        return self.graph.mul((a, b))

    def plus(self, a, b) -> int:
        return self.graph.add((a, b))

    def minus(self, a, b) -> int:
        return self.graph.sub(a, b)

    def symbol(self, s: sympy.Symbol) -> int:
        return self.graph.symbol(s)


def kernel_builders(dynamics: Dynamics) -> dict[str, Callable[[], object]]:
    """How to build the code of every generated module: module name → zero-argument builder.

    Array functions get a :class:`Kernel`; ``qddot_fun`` (``M`` and
    ``rhs = B_u u − C q̇ − φ − fric``) and ``linearized_model`` (adding ``dM``,
    ∂M/∂q_l stacked on the last axis, ``drhs = ∂rhs/∂x`` at fixed ``q̈``
    (n, 2n) and ``B_u``) get a :class:`SolverCode`; ``tau_fun`` computes
    ``M q̈ + C q̇ + φ + fric`` with ``q̈`` the symbols ``_qddot0 …``.
    On the graph route (``dynamics.graph`` set) the entries are graph nodes,
    combined and printed by the graph (:class:`GraphReducer`).
    """
    d = dynamics
    model = d.model
    n, m = model.n, model.m
    if d.graph is None:
        alg, reduce = _SympyAlgebra(), print_cse
    else:
        alg, reduce = _GraphAlgebra(d.graph), GraphReducer(d.graph)
    u = [alg.symbol(s) for s in model.inputs]
    h = d.coriolis_force
    rhs = tuple(
        alg.minus(
            alg.minus(alg.minus(alg.total(alg.product(d.input_matrix[k][j], u[j]) for j in range(m)), h[k]), d.potential_gradient[k]),
            d.friction[k],
        )
        for k in range(n)
    )
    drhs = tuple(
        tuple(
            alg.minus(
                alg.minus(
                    alg.minus(
                        alg.total(alg.product(d.input_matrix_jac[k][j][l], u[j]) for j in range(m)), d.coriolis_force_jac[k][l]
                    ),
                    d.potential_gradient_jac[k][l],
                ),
                d.friction_jac[k][l],
            )
            for l in range(2 * n)
        )
        for k in range(n)
    )
    qddot_symbols = [sympy.Symbol(f"_qddot{k}", real=True) for k in range(n)]
    qddot = [alg.symbol(s) for s in qddot_symbols]
    tau = tuple(
        alg.plus(
            alg.plus(alg.plus(alg.total(alg.product(d.mass_matrix[k][j], qddot[j]) for j in range(n)), h[k]), d.potential_gradient[k]),
            d.friction[k],
        )
        for k in range(n)
    )
    dM = tuple(tuple(tuple(d.mass_matrix_jac[a][b][l] for l in range(n)) for b in range(n)) for a in range(n))
    floats = frozenset(model.state) | frozenset(model.inputs)
    with_qddot = floats | frozenset(qddot_symbols)
    energies = (model.T, model.V) if d.graph is None else d.energies

    def kernel(arrays: dict, symbols: frozenset = floats) -> Callable[[], Kernel]:
        return lambda: build_kernel(arrays, symbols, reduce)

    builders = {
        "M_fun": kernel({"M": d.mass_matrix}),
        "M_jac_fun": kernel({"M_jac": d.mass_matrix_jac}),
        "C_fun": kernel({"C": d.coriolis}),
        "C_jac_fun": kernel({"C_jac": d.coriolis_jac}),
        "phi_fun": kernel({"phi": d.potential_gradient}),
        "phi_jac_fun": kernel({"phi_jac": d.potential_gradient_jac}),
        "fric_fun": kernel({"fric": d.friction}),
        "fric_jac_fun": kernel({"fric_jac": d.friction_jac}),
        "input_matrix_fun": kernel({"B_u": d.input_matrix}),
        "input_matrix_jac_fun": kernel({"B_u_jac": d.input_matrix_jac}),
        "T_fun": kernel({"T": energies[0]}),
        "V_fun": kernel({"V": energies[1]}),
        "tau_fun": kernel({"tau": tau}, with_qddot),
        "qddot_fun": lambda: qddot_code(d.mass_matrix, rhs, floats, reduce),
        "linearized_model": lambda: linearized_code(d.mass_matrix, rhs, dM, drhs, d.input_matrix, floats, reduce),
    }
    if model.constrained:
        builders.update(constraint_builders(d, kernel))
    return builders


def constraint_builders(d: Dynamics, kernel: Callable) -> dict:
    """A constrained model's kernels (``kernel(arrays)`` builds one); its ``qddot_fun``,
    ``linearized_model`` and ``multipliers_fun`` solve numerically on these and the
    unconstrained arrays (the generated ``_constrained`` module), so they have no kernel."""
    return {
        "constraint_fun": kernel({"c": d.constraint}),
        "constraint_jac_fun": kernel({"A": d.constraint_jac}),
        "constraint_jac_jac_fun": kernel({"A_jac": d.constraint_jac_jac}),
        "constraint_bias_fun": kernel({"bias": d.constraint_bias}),
        "constraint_bias_jac_fun": kernel({"bias_jac": d.constraint_bias_jac}),
        "qddot_fun": None,
        "linearized_model": None,
    }


def kernels(dynamics: Dynamics, on_module: Callable[[str], None] | None = None) -> dict[str, object]:
    """The code of every generated module, by module name (see :func:`kernel_builders`).

    ``on_module(name)`` is called after each module's code is built (progress).
    """
    result = {}
    for name, build in kernel_builders(dynamics).items():
        result[name] = build() if build is not None else None
        if on_module is not None:
            on_module(name)
    return result


def _shape(array: object) -> tuple:
    shape = []
    while isinstance(array, tuple):
        shape.append(len(array))
        array = array[0] if array else None
    return tuple(shape)


def _flatten(array: object):
    if isinstance(array, tuple):
        for item in array:
            yield from _flatten(item)
    else:
        yield array


def _unravel(position: int, shape: tuple) -> tuple:
    index = []
    for size in reversed(shape):
        index.append(position % size)
        position //= size
    return tuple(reversed(index))


def _nested(flat: list, shape: tuple) -> str:
    if not shape:
        return flat[0]
    step = len(flat) // shape[0] if shape[0] else 0
    parts = [_nested(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]
    return "[" + ", ".join(parts) + "]"


def all_indices(shape: tuple):
    """Every index tuple of ``shape`` in C order."""
    return product(*(range(s) for s in shape))


def _strip_parens(text: str) -> str:
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
