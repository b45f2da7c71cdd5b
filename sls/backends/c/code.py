"""The C target's code: its printer, the function bodies (dead code removed, scheduled, split when long),
the lane kernels of the batch loop and what the templates need about each function (see :mod:`sls.backends.c`)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import sympy
from sympy.printing.c import C99CodePrinter

from sls import functions, lowering
from sls.backends.c.names import HEADER_MARK
from sls.errors import brief
from sls.lowering import Check, Fail, Let, strip_parens, text_of
from sls.lowering.graph_print import ATOM, Style

if TYPE_CHECKING:  # a type only: no import at run time
    from sls.model import Model


class CPrinter(C99CodePrinter):
    """sympy's C99 printer for sls: exact float literals, ``x*x`` for squares and cubes, no ``M_PI`` (not C99),
    renamed symbols (:func:`renames`)."""

    def __init__(self, names: dict | None = None) -> None:
        super().__init__({"strict": True} if "strict" in C99CodePrinter._default_settings else {})
        self.names = dict(names or {})

    def _print_Symbol(self, expr: sympy.Symbol) -> str:
        return self.names.get(expr.name, expr.name)

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
            return f"sqrt({self._print(base)})"
        if exponent == -sympy.Rational(1, 2):
            return f"(1.0/sqrt({self._print(base)}))"
        return f"pow({self._print(base)}, {self._print(exponent)})"

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


def _c_power(base: str, exponent: str) -> tuple[str, int]:
    return f"pow({base}, {exponent})", ATOM


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
    """``array[index] = value;`` (``value`` an expression text: a name, a number or a printed expression)."""

    array: str
    index: int
    value: str


@dataclass(frozen=True)
class Zeros:
    """Every entry of ``array`` (``size`` doubles) set to ``0.0`` in one loop."""

    array: str
    size: int


@dataclass(frozen=True)
class CallQddot:
    """``xdot_fun``'s call of ``callee`` (the model's ``qddot_fun``) writing ``out + offset``; a failure returns
    its status."""

    callee: str
    offset: int


@dataclass(frozen=True)
class SolveRows:
    """``linearized_model``'s solves in loops (see :func:`solve_body`): ``M Z = R`` for the right-hand sides
    ``R = [−∂r/∂x, B_u]`` (``rhs``: n rows of 2n + m texts, row by row), then ``Z`` into the lower rows of
    ``A`` and ``B``.

    ``M = L D Lᵀ`` with ``lower`` the entries of the unit lower triangular ``L`` below its diagonal, row by
    row (``L[1,0], L[2,0], L[2,1], …``), and ``reciprocal`` the ``1/D``, as texts (names or float literals).
    ``callee`` is the file's helper (``<prefix>_solve_rows``), whose loops over a row's columns compilers
    vectorize.
    """

    callee: str
    n: int
    m: int
    lower: tuple[str, ...]
    reciprocal: tuple[str, ...]
    rhs: tuple[str, ...]

    def texts(self) -> tuple[str, ...]:
        """Every value the statement reads."""
        return self.lower + self.reciprocal + self.rhs


#: A statement of a C function body.
Statement = Let | Check | Fail | Store | Zeros | CallQddot | SolveRows

_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_CALL = re.compile(r"\b([A-Za-z_]\w*)\(")
_TRIG = re.compile(r"\b(sin|cos)\(")


def line(statement: Statement, failure: str) -> str:
    """One statement as a line of C (``failure``: what a pivot ``≤ 0`` returns)."""
    if isinstance(statement, Let):
        return f"const double {statement.name} = {statement.value};"
    if isinstance(statement, Check):
        return f"if (!({statement.pivot} > 0.0)) return {failure};"
    if isinstance(statement, Fail):
        return f"return {failure};"
    if isinstance(statement, Store):
        return f"{statement.array}[{statement.index}] = {statement.value};"
    if isinstance(statement, Zeros):
        return f"for (size_t k = 0; k < {statement.size}; ++k) {statement.array}[k] = 0.0;"
    if isinstance(statement, SolveRows):
        return _solve_rows_lines(statement)
    return (
        f"{{ const int status = {statement.callee}(x, u, p, out + {statement.offset}); "
        "if (status != 0) return status; }"
    )


def _solve_rows_lines(statement: SolveRows) -> str:
    """A :class:`SolveRows` as a block of C (lines after the first indented for a function body)."""
    n, m = statement.n, statement.m
    cols = 2 * n + m
    rows = ",\n            ".join("{" + ", ".join(statement.rhs[i * cols : (i + 1) * cols]) + "}" for i in range(n))
    lines = [
        "{",
        f"    const double _lower[{max(len(statement.lower), 1)}] = {{{', '.join(statement.lower) or '0.0'}}};",
        f"    const double _reciprocal[{n}] = {{{', '.join(statement.reciprocal)}}};",
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
    """The name a statement binds, if any."""
    return statement.name if isinstance(statement, Let) else None


def uses(statement: Statement) -> list[str]:
    """The names a statement reads, in order of appearance (the identifiers of its expression text)."""
    if isinstance(statement, Let):
        return _IDENTIFIER.findall(statement.value)
    if isinstance(statement, Check):
        return _IDENTIFIER.findall(statement.pivot)
    if isinstance(statement, Store):
        return _IDENTIFIER.findall(statement.value)
    if isinstance(statement, CallQddot):
        return ["x", "u", "p"]
    if isinstance(statement, SolveRows):
        return [name for text in statement.texts() for name in _IDENTIFIER.findall(text)]
    return []


def writes(statement: Statement) -> str | None:
    """The argument array a statement writes into, if any."""
    if isinstance(statement, (Store, Zeros)):
        return statement.array
    if isinstance(statement, SolveRows):
        return "A"
    return "out" if isinstance(statement, CallQddot) else None


def calls(statement: Statement) -> set[str]:
    """The functions a statement calls."""
    if isinstance(statement, (CallQddot, SolveRows)):
        return {statement.callee}
    if isinstance(statement, (Let, Store)):
        return set(_CALL.findall(statement.value))
    return set()


def _renamed(statement: Statement, renames: dict[str, str]) -> Statement:
    """``statement`` with the names of its expression text replaced as ``renames`` says."""

    def sub(text: str) -> str:
        return _IDENTIFIER.sub(lambda m: renames.get(m.group(0), m.group(0)), text)

    if isinstance(statement, Let):
        return Let(statement.name, sub(statement.value))
    if isinstance(statement, Check):
        return Check(sub(statement.pivot))
    if isinstance(statement, Store):
        return Store(statement.array, statement.index, sub(statement.value))
    if isinstance(statement, SolveRows):
        lower, reciprocal, rhs = (
            tuple(sub(t) for t in texts) for texts in (statement.lower, statement.reciprocal, statement.rhs)
        )
        return SolveRows(statement.callee, statement.n, statement.m, lower, reciprocal, rhs)
    return statement


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

    def lines(self, statements: list[Statement]) -> list[str]:
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
        used.update(uses(statement))
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
    reads: list[list[str]] = []
    roots: list[int] = []
    for i, statement in enumerate(statements):
        reads.append(uses(statement))
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
            for used in uses(statement):
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
    for c, chunk in enumerate(chunks):
        imported = {name: f"w[{slots[name]}]" for name in last if home[name] < c <= last[name]}
        out: list[Statement] = []
        for statement in chunk:
            out.append(_renamed(statement, imported))
            name = defines(statement)
            if name is not None and name in last:
                out.append(Store("w", slots[name], name))
        parts.append(Part(out, fails=any(isinstance(s, (Check, Fail)) for s in chunk)))
    return parts, size_used


def c_function(name: str, statements: list[Statement], failure: str = "") -> CFunction:
    """A :class:`CFunction` from its statements: dead code removed, scheduled, split when long."""
    statements = schedule(eliminate_dead_code(statements))
    if len(statements) <= PART_LINES * 3 // 2:
        return CFunction(name, statements, [Part(statements)], failure=failure)
    parts, workspace = split(statements, PART_LINES)
    return CFunction(name, statements, parts, workspace, failure)


def _fill(target: str, values: list[str]) -> list[Statement]:
    """Stores of ``values`` (texts, ``"0.0"`` for zeros) into ``target``; many zeros become one loop."""
    zeros = sum(v == "0.0" for v in values)
    if zeros < 16:
        return [Store(target, k, v) for k, v in enumerate(values)]
    return [Zeros(target, len(values)), *(Store(target, k, v) for k, v in enumerate(values) if v != "0.0")]


def kernel_body(lowered: lowering.Lowered) -> list[Statement]:
    """An array function: temporaries, then every entry of its one output into ``out`` (row-major)."""
    (name,) = lowered.outputs
    _, texts, constants = lowered.output(name)
    values = [repr(c) if c is not None else t for t, c in zip(texts, constants)]
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
    rows = kind == functions.LINEARIZATION and program.phased and bool(program.ldl) and bool(prefix)
    if program.phased:  # bind q̈, evaluate what depends on it, solve A and B
        qddot = program.results["qddot"]
        statements += [Let(local, text_of(value)) for local, value in zip(program.accelerations, qddot)]
        statements += [*program.late, *([] if rows else program.tail)]
    if kind == functions.ACCELERATIONS:
        return statements + _fill("out", [text_of(v) for v in program.results["qddot"]])
    if rows:
        J, B_u = program.values["residual_jac"], program.values["B_u"]
        rhs = [
            _nonzero_text(lowering.negated(J[a * 2 * n + col]) if col < 2 * n else B_u[a * m + col - 2 * n])
            for a in range(n)
            for col in range(2 * n + m)
        ]
        L, reciprocal = program.ldl
        solve = SolveRows(
            f"{prefix}_solve_rows",
            n,
            m,
            tuple(text_of(L[i, j]) for i in range(n) for j in range(i)),
            tuple(text_of(r) for r in reciprocal),
            tuple(rhs),
        )
        upper_A = [("1.0" if col == n + a else "0.0") for a in range(n) for col in range(2 * n)]
        return statements + _fill("A", upper_A) + _fill("B", ["0.0"] * (n * m)) + [solve]
    A_rows, B_rows = program.results["A"], program.results["B"]
    A = [(1.0 if col == n + a else 0.0) if a < n else A_rows[a - n][col] for a in range(2 * n) for col in range(2 * n)]
    B = [0.0 if a < n else B_rows[a - n][j] for a in range(2 * n) for j in range(m)]
    return statements + _fill("A", [text_of(v) for v in A]) + _fill("B", [text_of(v) for v in B])


def _nonzero_text(value: lowering.Value) -> str:
    """A value as text, a zero constant of either sign as ``0.0``."""
    return "0.0" if value == 0.0 else text_of(value)


def xdot_body(prefix: str, n: int, accelerations: str) -> list[Statement]:
    """``xdot_fun``: the function ``accelerations`` (``qddot_fun``) into the lower half of ``out``, ``q̇`` into the
    upper half."""
    return [CallQddot(f"{prefix}_{accelerations}", n), *(Store("out", k, f"x[{n + k}]") for k in range(n))]


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


def _lane_line(statement: Statement, prefix: str) -> str:
    """One statement of a lane kernel (lane ``i`` of arrays with the lane index last)."""
    trig = lambda text: _TRIG.sub(lambda m: f"{prefix}_lane_{m.group(1)}(", text)  # noqa: E731
    if isinstance(statement, Store):
        return f"{'_o1' if statement.array == 'B' else '_o0'}[{statement.index}][i] = {trig(statement.value)};"
    if isinstance(statement, Check):
        return f"_bad = _bad | !({statement.pivot} > 0.0);"
    if isinstance(statement, Fail):
        return "_bad = 1;"
    assert isinstance(statement, Let), statement
    return f"const double {statement.name} = {trig(statement.value)};"


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
    called = set().union(*(calls(s) for s in code.statements))
    if not called <= {"sin", "cos"} or any(isinstance(s, SolveRows) for s in code.statements):
        return None
    lines: list[str] = []
    stores: dict[int, list[int]] = {}
    for statement in code.statements:
        if isinstance(statement, Zeros):
            continue  # zeros: every output entry not stored below is zero
        if isinstance(statement, Store):
            stores.setdefault(1 if statement.array == "B" else 0, []).append(statement.index)
        lines.append(_lane_line(statement, prefix))
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
    symbols = {
        "x": [s.name for s in model.state],
        "u": [s.name for s in model.inputs],
        "qddot": [f"_qddot{k}" for k in range(n)],
        "p": list(model.params),
    }
    pointers = arguments + ["p"] + [o.pointer for o in outputs]

    def bound(statements: list[Statement], extra: tuple = (), source: str = "{argument}[{k}]") -> Bound:
        """A part's argument binding: ``const double`` locals for the names it uses, ``(void)`` for unused pointers."""
        used = {name for s in statements for name in uses(s)} | {w for s in statements if (w := writes(s))}
        used |= {"B" for s in statements if isinstance(s, SolveRows) and s.m}
        bindings, taken = [], set()
        for argument in arguments + ["p"]:
            for k, symbol in enumerate(symbols[argument]):
                c = names.get(symbol, symbol)
                if c in used:
                    bindings.append(f"const double {c} = {source.format(argument=argument, k=k)};")
                    taken.add(argument)
        unused = [a for a in pointers + list(extra) if a not in taken and a not in used]
        return Bound(code.lines(statements), bindings, unused, "p" in taken)

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
        unused=[a for a in main.unused if a != "p"] if not parts else [],
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
