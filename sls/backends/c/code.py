"""The C target's code: its printer, the function bodies (dead code removed, scheduled, split when long),
the lane kernels of the batch loop and what the templates need about each function (see :mod:`sls.backends.c`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import sympy
from sympy.codegen.ast import real
from sympy.printing.c import C99CodePrinter

from sls import functions, lowering
from sls.backends.c.names import HEADER_MARK
from sls.errors import brief
from sls.lowering import Check, Expr, Fail, Let, Value, expr_of, mark_library, mark_name, strip_parens
from sls.lowering import unknown_statement as _unknown
from sls.lowering.arguments import PARAMETERS, bind_arguments
from sls.lowering.graph_print import ATOM, Style

if TYPE_CHECKING:  # a type only: no import at run time
    from sls.model import Model


class CPrinter(C99CodePrinter):
    """sympy's C99 printer for sls: exact float literals, ``x*x`` for squares and cubes, no ``M_PI`` (not C99),
    renamed symbols (:func:`renames`). Names print marked (:func:`~sls.lowering.expr.mark_name`), and so
    does every function the code calls (:func:`~sls.lowering.expr.mark_library`): the lane kernels need to
    know them."""

    def __init__(self, names: dict | None = None) -> None:
        super().__init__({"strict": True} if "strict" in C99CodePrinter._default_settings else {})
        self.names = dict(names or {})

    def _print_Symbol(self, expr: sympy.Symbol) -> str:
        return mark_name(self.names.get(expr.name, expr.name))

    def _print_math_func(self, expr: sympy.Expr, nest: bool = False, known: Any = None) -> str:
        """A call of a libm function (sympy's ``_print_math_func``, with the function's name marked)."""
        if expr in self.math_macros:  # a constant <math.h> names (M_LN2, ...): as sympy prints it
            return f"{self._ns}{self.math_macros[expr]}"
        if known is None:
            known = self.known_functions[type(expr).__name__]
        if not isinstance(known, str):
            known = next(name for condition, name in known if condition(*expr.args))
        suffix = self._get_func_suffix(real) if self._ns + known in self._prec_funcs else ""
        name = mark_library(f"{self._ns}{known}{suffix}")
        args = [self._print(arg) for arg in expr.args]
        if not nest:
            return f"{name}({', '.join(args)})"
        text = args[-1]  # fmax(a, fmax(b, c)): two arguments per call
        for arg in reversed(args[:-1]):
            text = f"{name}({arg}, {text})"
        return text

    def _print_Float(self, expr: sympy.Float) -> str:
        return repr(float(expr))

    def _print_Pi(self, expr: sympy.Expr) -> str:
        return repr(math.pi)

    def _print_Exp1(self, expr: sympy.Expr) -> str:
        return repr(math.e)

    def _print_Integer(self, expr: sympy.Integer) -> str:
        return f"{int(expr)}.0"

    def _print_Pow(self, expr: sympy.Pow) -> str:
        base, exponent = expr.base, expr.exp
        if exponent.is_Integer and 2 <= int(exponent) <= 3:
            b = self.parenthesize(base, 50)  # below every operator: parenthesize any compound base
            return "(" + "*".join([b] * int(exponent)) + ")"
        if exponent == -1:
            return f"(1.0/{self.parenthesize(base, 50)})"
        if exponent == sympy.Rational(1, 2):
            return f"{mark_library('sqrt')}({self._print(base)})"
        if exponent == -sympy.Rational(1, 2):
            return f"(1.0/{mark_library('sqrt')}({self._print(base)}))"
        return f"{mark_library('pow')}({self._print(base)}, {self._print(exponent)})"

    def _print_Heaviside(self, expr: sympy.Expr) -> str:
        # H(a) = 1 for a > 0, 0 for a < 0 and H0 (sympy's default 1/2) at a = 0.
        a = self._print(expr.args[0])
        at_zero = self._print(expr.args[1]) if len(expr.args) > 1 else "0.5"
        return f"(({a}) > 0.0 ? 1.0 : (({a}) < 0.0 ? 0.0 : {at_zero}))"

    def _print_Piecewise(self, expr: sympy.Piecewise) -> str:
        if expr.args[-1].cond != sympy.true:
            raise NotImplementedError("a Piecewise without an 'otherwise' branch")
        text = self._print(expr.args[-1].expr)
        for value, condition in reversed(expr.args[:-1]):
            text = f"(({self._print(condition)}) ? {self._print(value)} : {text})"
        return text

    def expression(self, expr: sympy.Expr) -> str:
        text = self.doprint(expr)
        if self._not_supported:
            raise NotImplementedError(f"not supported in C: {brief(sorted(map(str, self._not_supported))[0], 80)}")
        return strip_parens(text)


# sympy's C99 printer prints every libm function through one method, which CPrinter marks the names of.
for _attribute, _method in list(vars(C99CodePrinter).items()):
    if _method is vars(C99CodePrinter)["_print_math_func"] and _attribute != "_print_math_func":
        setattr(CPrinter, _attribute, CPrinter._print_math_func)


def _c_power(base: str, exponent: str) -> tuple[str, int]:
    return f"{mark_library('pow')}({base}, {exponent})", ATOM


def _c_prefix(array: str) -> str:
    """Entry names in C start with ``_`` and a lower-case letter (``_M`` is reserved in C)."""
    return "_" + array.lower().replace("_", "")


def c_path(names: dict[str, str]) -> lowering.Path:
    """The one path of the C target (every entry a double)."""
    printer = CPrinter(names)
    style = Style(printer, scalar=True, power=_c_power, integer=lambda k: f"{k}.0", names=dict(names))
    return lowering.Path(text=printer.expression, style=style, prefix=_c_prefix)


# --------------------------------------------------------------------------
# statements: the lowering's Let, Check and Fail, and the C target's own


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
class SolveRows:
    """``linearized_model``'s solves in loops (see :func:`solve_body`): ``M Z = R`` for the right-hand sides
    ``R = [−∂r/∂x, B_u]`` (``rhs``: n rows of 2n + m values, row by row), then ``Z`` into the lower rows of
    ``A`` and ``B``.

    ``M = L D Lᵀ`` with ``lower`` the entries of the unit lower triangular ``L`` below its diagonal, row by
    row (``L[1,0], L[2,0], L[2,1], …``), and ``reciprocal`` the ``1/D`` (names or float literals).
    ``callee`` is the file's helper (``<prefix>_solve_rows``), whose loops over a row's columns compilers
    vectorize.
    """

    callee: str
    n: int
    m: int
    lower: tuple[Expr, ...]
    reciprocal: tuple[Expr, ...]
    rhs: tuple[Expr, ...]

    def values(self) -> tuple[Expr, ...]:
        """Every value the statement reads."""
        return self.lower + self.reciprocal + self.rhs

    @property
    def reads(self) -> tuple[str, ...]:
        return tuple(name for value in self.values() for name in value.reads)

    @property
    def writes(self) -> tuple[str, ...]:
        return ("A", "B") if self.m else ("A",)


#: A statement of a C function body.
Statement = Let | Check | Fail | Store | Zeros | CallQddot | SolveRows
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
        case _:
            raise _unknown(statement, TARGET)


def _solve_rows_lines(statement: SolveRows) -> str:
    """A :class:`SolveRows` as a block of C (lines after the first indented for a function body)."""
    n, m = statement.n, statement.m
    cols = 2 * n + m
    rhs = [value.text() for value in statement.rhs]
    lower = ", ".join(value.text() for value in statement.lower)
    reciprocal = ", ".join(value.text() for value in statement.reciprocal)
    rows = ",\n            ".join("{" + ", ".join(rhs[i * cols : (i + 1) * cols]) + "}" for i in range(n))
    lines = [
        "{",
        f"    const double _lower[{max(len(statement.lower), 1)}] = {{{lower or '0.0'}}};",
        f"    const double _reciprocal[{n}] = {{{reciprocal}}};",
        f"    double _R[{n}][{cols}] = {{\n            {rows}\n        }};",
        "    int _i, _c;",
        f"    {statement.callee}(_lower, _reciprocal, _R);",
        f"    for (_i = 0; _i < {n}; ++_i) {{",
        f"        for (_c = 0; _c < {2 * n}; ++_c) A[({n} + _i)*{2 * n} + _c] = _R[_i][_c];",
    ]
    if m:
        lines.append(f"        for (_c = 0; _c < {m}; ++_c) B[({n} + _i)*{m} + _c] = _R[_i][{2 * n} + _c];")
    lines += ["    }", "}"]
    return "\n    ".join(lines)


def defines(statement: Statement) -> str | None:
    """The local a statement binds, if any."""
    match statement:
        case Let(name=name):
            return name
        case Check() | Fail() | Store() | Zeros() | CallQddot() | SolveRows():
            return None
        case _:
            raise _unknown(statement, TARGET)


def stores(statement: Statement) -> tuple[str, ...]:
    """The argument arrays a statement writes into."""
    match statement:
        case Store() | Zeros() | CallQddot() | SolveRows():
            return statement.writes
        case Let() | Check() | Fail():
            return ()
        case _:
            raise _unknown(statement, TARGET)


def calls(statement: Statement) -> frozenset[str]:
    """The functions a statement calls."""
    match statement:
        case CallQddot(callee=callee) | SolveRows(callee=callee):
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
        case SolveRows(callee=callee, n=n, m=m, lower=lower, reciprocal=reciprocal, rhs=rhs):
            lower, reciprocal, rhs = (tuple(v.substitute(values) for v in group) for group in (lower, reciprocal, rhs))
            return SolveRows(callee, n, m, lower, reciprocal, rhs)
        case Fail() | Zeros() | CallQddot():
            return statement
        case _:
            raise _unknown(statement, TARGET)


# --------------------------------------------------------------------------
# function bodies


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


def split(statements: list[Statement], size: int) -> tuple[list[Part], int]:
    """Split a long body into parts of about ``size`` statements: ``(parts, workspace)``.

    A value used in a later part than the one computing it is stored into
    the workspace ``w`` (``w[slot] = name;``) and read as ``w[slot]`` there;
    slots are reused once their value is dead, so ``workspace`` (the length
    of ``w``) stays far below the number of values.
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
                slots[name] = size_used
                size_used += 1
            active.append(name)
    parts = []
    workspace = [Expr.join(Expr.name("w"), f"[{slot}]") for slot in range(size_used)]  # w[slot]
    for c, chunk in enumerate(chunks):
        imported = {name: workspace[slots[name]] for name in last if home[name] < c <= last[name]}
        out: list[Statement] = []
        for statement in chunk:
            out.append(renamed(statement, imported))
            name = defines(statement)
            if name is not None and name in last:
                out.append(Store("w", slots[name], Expr.name(name)))
        parts.append(Part(out, fails=any(isinstance(s, (Check, Fail)) for s in chunk)))
    return parts, size_used


def c_function(name: str, statements: list[Statement], failure: str = "") -> CFunction:
    """A :class:`CFunction` from its statements: dead code removed, scheduled, split when long."""
    statements = schedule(eliminate_dead_code(statements))
    if len(statements) <= PART_LINES * 3 // 2:
        return CFunction(name, statements, [Part(statements)], failure=failure)
    parts, workspace = split(statements, PART_LINES)
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


def solve_body(kind: str, program: lowering.SolveProgram, n: int, m: int, prefix: str = "") -> list[Statement]:
    """A solving function of ``kind`` (:attr:`sls.functions.Function.solve`: ``qddot_fun``, ``linearized_model``):
    kernel, unrolled factorization (a :class:`~sls.lowering.Check`
    fails when a pivot is ≤ 0), solves, outputs.

    A phased ``linearized_model`` (the graph and tree routes) solves its right-hand sides ``−∂r/∂x`` and
    ``B_u`` in loops (:class:`SolveRows`: one n × (2n + m) array, the helper ``<prefix>_solve_rows``, the
    result copied into the lower rows of ``A`` and ``B``) rather than unrolled: 2n + m columns of
    straight-line substitutions are much of the function on a robot arm, and a loop over a row's columns
    vectorizes.
    """
    statements: list[Statement] = [*program.lines, *program.bindings, *(program.factor or []), *program.steps]
    rows = kind == functions.LINEARIZATION and program.phased and program.ldl is not None and bool(prefix)
    if program.phased:  # bind q̈, evaluate what depends on it, solve A and B
        qddot = program.results["qddot"]
        statements += [Let(local, expr_of(value)) for local, value in zip(program.accelerations, qddot)]
        statements += [*program.late, *([] if rows else program.tail)]
    if kind == functions.ACCELERATIONS:
        return statements + _fill("out", program.results["qddot"])
    if rows and program.ldl is not None:
        J, B_u = program.values["residual_jac"], program.values["B_u"]
        rhs = [
            _unsigned_zero(lowering.negated(J[a * 2 * n + col]) if col < 2 * n else B_u[a * m + col - 2 * n])
            for a in range(n)
            for col in range(2 * n + m)
        ]
        L, reciprocal = program.ldl
        solve = SolveRows(
            f"{prefix}_solve_rows",
            n,
            m,
            tuple(expr_of(L[i, j]) for i in range(n) for j in range(i)),
            tuple(expr_of(r) for r in reciprocal),
            tuple(expr_of(v) for v in rhs),
        )
        upper_A = [(1.0 if col == n + a else 0.0) for a in range(n) for col in range(2 * n)]
        return statements + _fill("A", upper_A) + _fill("B", [0.0] * (n * m)) + [solve]
    A_rows, B_rows = program.results["A"], program.results["B"]
    A = [(1.0 if col == n + a else 0.0) if a < n else A_rows[a - n][col] for a in range(2 * n) for col in range(2 * n)]
    B = [0.0 if a < n else B_rows[a - n][j] for a in range(2 * n) for j in range(m)]
    return statements + _fill("A", A) + _fill("B", B)


def _unsigned_zero(value: Value) -> Value:
    """A value, a zero constant of either sign as ``0.0``."""
    return 0.0 if isinstance(value, float) and value == 0.0 else value


def xdot_body(prefix: str, n: int, accelerations: str) -> list[Statement]:
    """``xdot_fun``: the function ``accelerations`` (``qddot_fun``) into the lower half of ``out``, ``q̇`` into the
    upper half."""
    state = [Expr.join(Expr.name("x"), f"[{n + k}]") for k in range(n)]
    return [CallQddot(f"{prefix}_{accelerations}", n), *(Store("out", k, value) for k, value in enumerate(state))]


# --------------------------------------------------------------------------
# lanes: the batch kernels of the compiled package

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
        case Zeros() | CallQddot() | SolveRows():
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


def c_context(model: Model, prefix: str, names: dict) -> dict:
    """Template variables of the C files."""
    params = list(model.params.items())
    return {
        "prefix": prefix,
        "macro": prefix.upper(),
        "renamed": sorted(names.items()),
        "c_params": [
            {"name": name, "c": names.get(name, name), "default": None if value is None else repr(float(value))}
            for name, value in params
        ],
        "required": [name for name, value in params if value is None],
        "c_state": [names.get(s.name, s.name) for s in model.state],
        "c_inputs": [names.get(s.name, s.name) for s in model.inputs],
        "marker": HEADER_MARK,
    }


@dataclass(frozen=True)
class COutput:
    """One output of a C function: its ``name``, the ``pointer`` argument it is written through, its ``shape``,
    ``size`` (doubles) and the shape as Python text (``shape_text``)."""

    name: str
    pointer: str
    shape: tuple[int, ...]
    size: int
    shape_text: str


@dataclass(frozen=True)
class Bound:
    """Statements of a C function (or one of its parts) as lines, with their argument binding: ``bindings``
    (``const double`` locals for the names the lines use), ``unused`` (pointers cast to ``void``) and whether
    they read a parameter (``uses_params``); ``fails`` for a part that may return a failure code."""

    lines: list[str]
    bindings: list[str]
    unused: list[str]
    uses_params: bool
    fails: bool = False


@dataclass(frozen=True)
class CSpec:
    """What the C templates (``templates/c``) need about one generated function."""

    name: str
    summary: str
    arguments: list[str]
    sizes: list[int]
    outputs: list[COutput]
    solve: bool
    scalar: bool
    bindings: list[str]
    unused: list[str]
    uses_params: bool
    body: list[str]
    parts: list[Bound]
    lanes: Lanes | None
    workspace: int
    pointers: list[str]
    doc: str
    wrapper: bool
    solve_rows: bool = False
    #: Lines added to the function's comment in the header (its extra argument, the layout of its outputs).
    notes: tuple[str, ...] = ()
    #: Whether the function's parts are also built for AVX2 and FMA (``<PREFIX>_CLONES``; ``linearized_model``).
    clones: bool = False


def function_spec(function: functions.Function, model: Model, prefix: str, names: dict, code: CFunction) -> CSpec:
    """What the C templates need about one generated function."""
    n, m = model.n, model.m
    arguments = [a.name for a in function.arguments]
    outputs = []
    for name, shape in function.outputs:
        dims = functions.sizes(shape, n, m)
        pointer = "out" if len(function.outputs) == 1 else name
        outputs.append(COutput(name, pointer, dims, math.prod(dims), repr(dims)))
    pointers = arguments + [PARAMETERS] + [o.pointer for o in outputs]

    def bound(statements: list[Statement], extra: tuple = (), source: str = "{argument}[{k}]") -> Bound:
        """A part's argument binding: ``const double`` locals for the names it uses, ``(void)`` for unused pointers."""
        used = {name for s in statements for name in s.reads} | {w for s in statements for w in stores(s)}
        entries = bind_arguments(arguments + [PARAMETERS], model, used, lambda name: names.get(name, name))
        bindings = [f"const double {e.local} = {source.format(argument=e.argument, k=e.index)};" for e in entries]
        taken = {e.argument for e in entries}
        unused = [a for a in pointers + list(extra) if a not in taken and a not in used]
        return Bound(code.lines(statements), bindings, unused, PARAMETERS in taken)

    parts = []
    if len(code.parts) > 1:
        for part in code.parts:
            b = bound(part.statements, ("w",))
            parts.append(Bound(b.lines, b.bindings, b.unused, b.uses_params, part.fails))
    if parts:
        main = Bound([], [], [], any(q.uses_params for q in parts))
    else:
        main = bound(code.statements)
    lanes = lane_kernel(code, prefix) if function.solve else None
    if lanes is not None:
        binding = bound([s for s in code.statements if not isinstance(s, Zeros)], source="_lane_{argument}[{k}][i]")
        lanes = Lanes(lanes.lines, lanes.stores, lanes.trig, binding.bindings)
    signature = ", ".join(arguments)
    if model.params:
        signature += ", *, " + ", ".join(p if v is None else f"{p}={float(v)!r}" for p, v in model.params.items())
    doc = f"{function.name}($module, {signature})\n--\n\n{function.summary}\n\n" + _argument_doc(function, model)
    return CSpec(
        name=function.name,
        summary=function.summary,
        arguments=arguments,
        sizes=[functions.sizes((a.size,), n, m)[0] for a in function.arguments],
        outputs=outputs,
        solve=bool(function.solve),
        scalar=function.outputs[0][1] == (),
        bindings=main.bindings,
        unused=[a for a in main.unused if a != PARAMETERS] if not parts else [],
        uses_params=main.uses_params,
        body=main.lines,
        parts=parts,
        lanes=lanes,
        workspace=code.workspace,
        pointers=pointers,
        doc=c_string(doc),
        wrapper=function.uses is not None,
        solve_rows=any(isinstance(s, SolveRows) for s in code.statements),
        notes=_notes(function, model),
        clones=function.solve == functions.LINEARIZATION,
    )


def _notes(function: functions.Function, model: Model) -> tuple[str, ...]:
    """Lines of the function's comment in the header besides its outputs."""
    notes = [f"qddot: {model.n} accelerations."] if functions.ACCELERATION in function.arguments else []
    if function.solve == functions.LINEARIZATION:
        notes.append("A = [[0, I], [dqddot/dx]], B = [[0], [M^-1 B_u]].")
    return tuple(notes)


def _argument_doc(function: functions.Function, model: Model) -> str:
    """The arguments and results of a compiled function, for its docstring (the Python target's conventions)."""
    n, m = model.n, model.m
    lines = []
    for argument in function.arguments:
        size = functions.sizes((argument.size,), n, m)[0]
        what = {
            "x": f"state [{', '.join(s.name for s in model.state)}]",
            "u": f"input [{', '.join(s.name for s in model.inputs)}]",
        }
        lines.append(
            f"{argument.name}: shape ({size},) or (..., {size}), the {what.get(argument.name, 'accelerations')}; "
            "leading axes are a batch."
        )
    for name, shape in function.outputs:
        dims = functions.sizes(shape, n, m)
        lines.append(
            f"Returns {name}: "
            + (
                "a float, or an array of shape (...) for a batch."
                if not dims
                else f"shape {dims}, or (...,) + {dims} for a batch."
            )
        )
    if model.params:
        lines.append("Parameters are keyword arguments (numbers, or arrays broadcast against the batch).")
    return "\n".join(lines)


def c_string(text: str) -> str:
    """``text`` as a C string literal (ASCII; one source line per text line)."""
    escaped = text.encode("ascii", "backslashreplace").decode().replace("\\", "\\\\").replace('"', '\\"')
    parts = escaped.split("\n")
    return "\n".join(f'"{part}\\n"' if k < len(parts) - 1 else f'"{part}"' for k, part in enumerate(parts))
