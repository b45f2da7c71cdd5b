"""The C target's code: its printer, the function bodies (dead code removed, scheduled, split when long),
the lane kernels of the batch loop and what the templates need about each function (see :mod:`sls.backends.c`)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sympy
from sympy.printing.c import C99CodePrinter

from ... import functions, lowering
from ...errors import brief
from ...graph_print import ATOM, Style
from ...lowering import Check, Fail, Let, strip_parens, text_of
from .names import HEADER_MARK

if TYPE_CHECKING:  # a type only: no import at run time
    from ...model import Model


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


def _c_assign(name: str, text: str) -> str:
    return f"const double {name} = {text};"


def _c_power(base: str, exponent: str) -> tuple:
    return f"pow({base}, {exponent})", ATOM


def _c_prefix(array: str) -> str:
    """Entry names in C start with ``_`` and a lower-case letter (``_M`` is reserved in C)."""
    return "_" + array.lower().replace("_", "")


def c_path(names: dict) -> lowering.Path:
    """The one path of the C target (every entry a double)."""
    printer = CPrinter(names)
    style = Style(printer, "", scalar=True, power=_c_power, integer=lambda k: f"{k}.0", assign=_c_assign, names=dict(names))
    return lowering.Path(text=printer.expression, style=style, assign=_c_assign, prefix=_c_prefix)


# --------------------------------------------------------------------------
# function bodies


@dataclass(frozen=True)
class Part:
    """Straight-line statements of one part of a long C function (see :func:`split`).

    Values of earlier parts are read as ``w[slot]``, values later parts need
    are stored there; ``fails`` is true when the part may return a failure code.
    """

    lines: list
    fails: bool = False


@dataclass(frozen=True)
class CFunction:
    """The code of one C function: its statements after the argument binding, dead code removed,
    and for a long function its :class:`Part`\\ s (``workspace`` doubles carry values between them)."""

    name: str
    lines: list
    parts: list
    workspace: int = 0


_DECLARATION = re.compile(r"^const double (\w+) = ")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
#: Statements per part of a long function (see :func:`split`): the compiler's time grows faster than
#: linearly with a function's length, and values crossing parts go through a small workspace array.
PART_LINES = 300


def eliminate_dead_code(lines: list) -> list:
    """Drop ``const double NAME = ...;`` lines whose ``NAME`` no later line uses."""
    used: set = set()
    kept = []
    for line in reversed(lines):
        match = _DECLARATION.match(line)
        if match and match.group(1) not in used:
            continue
        rest = line[match.end() :] if match else line
        used.update(_IDENTIFIER.findall(rest))
        kept.append(line)
    kept.reverse()
    return kept


def schedule(lines: list) -> list:
    """Reorder straight-line code so each value is computed just before it is first needed.

    Statements that are not declarations (checks, returns, output stores)
    keep their order; each pulls in, depth first, the declarations it needs
    that are not computed yet. Live ranges get short, which keeps long
    functions cheap to compile and parts (:func:`split`) nearly independent.
    """
    defined, uses, roots = {}, [], []
    for i, line in enumerate(lines):
        match = _DECLARATION.match(line)
        uses.append(_IDENTIFIER.findall(line[match.end() :] if match else line))
        if match:
            defined[match.group(1)] = i
        else:
            roots.append(i)
    done, order = set(), []
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
            for name in reversed(uses[i]):
                j = defined.get(name)
                if j is not None and j not in done:
                    stack.append((j, False))
    return [lines[i] for i in order]


def split(lines: list, size: int) -> tuple:
    """Split a long body into parts of about ``size`` statements: ``(parts, workspace)``.

    A value used in a later part than the one computing it is stored into
    the workspace ``w`` (``w[slot] = name;``) and read as ``w[slot]`` there;
    slots are reused once their value is dead, so ``workspace`` (the length
    of ``w``) stays far below the number of values.
    """
    chunks = [lines[i : i + size] for i in range(0, len(lines), size)]
    home, last = {}, {}
    for c, chunk in enumerate(chunks):
        for line in chunk:
            match = _DECLARATION.match(line)
            for name in _IDENTIFIER.findall(line[match.end() :] if match else line):
                if name in home and home[name] < c:
                    last[name] = c
            if match:
                home[match.group(1)] = c
    slots, free, active, size_used = {}, [], [], 0
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
        imported = {name for name in last if home[name] < c <= last[name]}
        out = []
        for line in chunk:
            match = _DECLARATION.match(line)
            head, rest = (line[: match.end()], line[match.end() :]) if match else ("", line)
            rest = _IDENTIFIER.sub(lambda m: f"w[{slots[m.group(0)]}]" if m.group(0) in imported else m.group(0), rest)
            out.append(head + rest)
            if match and match.group(1) in last:
                out.append(f"w[{slots[match.group(1)]}] = {match.group(1)};")
        parts.append(Part(out, fails=any(line.startswith(("if (", "return ")) for line in chunk)))
    return parts, size_used


def c_function(name: str, lines: list) -> CFunction:
    """A :class:`CFunction` from its statements: dead code removed, scheduled, split when long."""
    lines = schedule(eliminate_dead_code(lines))
    if len(lines) <= PART_LINES * 3 // 2:
        return CFunction(name, lines, [Part(lines)])
    parts, workspace = split(lines, PART_LINES)
    return CFunction(name, lines, parts, workspace)


def _fill(target: str, values: list) -> list:
    """Stores of ``values`` (texts, ``"0.0"`` for zeros) into ``target``; many zeros become one loop."""
    zeros = sum(v == "0.0" for v in values)
    if zeros < 16:
        return [f"{target}[{k}] = {v};" for k, v in enumerate(values)]
    return [f"for (size_t k = 0; k < {len(values)}; ++k) {target}[k] = 0.0;"] + [
        f"{target}[{k}] = {v};" for k, v in enumerate(values) if v != "0.0"
    ]


def _op_lines(ops: list, failure: str) -> list:
    lines = []
    for op in ops:
        if isinstance(op, Let):
            lines.append(_c_assign(op.name, op.value))
        elif isinstance(op, Check):
            lines.append(f"if (!({op.pivot} > 0.0)) return {failure};")
        elif isinstance(op, Fail):
            lines.append(f"return {failure};")
    return lines


def kernel_body(lowered: lowering.Lowered) -> list:
    """An array function: temporaries, then every entry of its one output into ``out`` (row-major)."""
    (name,) = lowered.outputs
    _, texts, constants = lowered.output(name)
    return list(lowered.printed.lines) + _fill("out", [repr(c) if c is not None else t for t, c in zip(texts, constants)])


def solve_body(name: str, program: lowering.SolveProgram, n: int, m: int, failure: str) -> list:
    """``qddot_fun``/``linearized_model``: kernel, unrolled factorization (a pivot ≤ 0 returns ``failure``), solves, outputs."""
    lines = list(program.lines) + _op_lines(program.bindings, failure) + _op_lines(program.factor, failure)
    lines += _op_lines(program.steps, failure)
    if program.phased:  # bind q̈, evaluate what depends on it, solve A and B
        qddot = program.results["qddot"]
        lines += [_c_assign(name, text_of(value)) for name, value in zip(program.accelerations, qddot)]
        lines += _op_lines(program.late, failure) + _op_lines(program.tail, failure)
    if name == "qddot_fun":
        return lines + _fill("out", [text_of(v) for v in program.results["qddot"]])
    A_rows, B_rows = program.results["A"], program.results["B"]
    A = [(1.0 if l == n + a else 0.0) if a < n else A_rows[a - n][l] for a in range(2 * n) for l in range(2 * n)]
    B = [0.0 if a < n else B_rows[a - n][j] for a in range(2 * n) for j in range(m)]
    return lines + _fill("A", [text_of(v) for v in A]) + _fill("B", [text_of(v) for v in B])


# --------------------------------------------------------------------------
# lanes: the batch kernels of the compiled package

#: Largest body (statements) given a lane kernel, and the lane count of one block.
LANE_LINES = 2000
LANES = 16
_CALL = re.compile(r"\b([A-Za-z_]\w*)\(")
_STORE = re.compile(r"^(out|A|B)\[(\d+)\] = (.*);$")


def lane_kernel(code: CFunction, prefix: str) -> dict | None:
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
    if len(code.parts) > 1 or len(code.lines) > LANE_LINES:
        return None
    calls = {m.group(1) for line in code.lines for m in _CALL.finditer(line)} - {"if"}
    if not calls <= {"sin", "cos"}:
        return None
    lines, stores = [], {}
    for line in code.lines:
        store = _STORE.match(line)
        if line.startswith("for (size_t k = 0;"):
            continue  # zeros: every output entry not stored below is zero
        if store:
            target, index, value = store.groups()
            stores.setdefault(1 if target == "B" else 0, []).append(int(index))
            line = f"{'_o1' if target == 'B' else '_o0'}[{index}][i] = {value};"
        elif line.startswith("if (!("):
            line = "_bad = _bad | " + line[len("if (") : line.rindex(")) return")] + ");"
        elif line.startswith("return "):
            line = "_bad = 1;"
        lines.append(re.sub(r"\b(sin|cos)\(", lambda m: f"{prefix}_lane_{m.group(1)}(", line))
    return {"lines": lines, "stores": stores, "trig": bool(calls)}


def c_context(model: Model, prefix: str, names: dict) -> dict:
    """Template variables of the C files."""
    params = list(model.params.items())
    return {
        "prefix": prefix,
        "macro": prefix.upper(),
        "renamed": sorted(names.items()),
        "c_params": [{"name": name, "c": names.get(name, name), "default": None if value is None else repr(float(value))} for name, value in params],
        "required": [name for name, value in params if value is None],
        "c_state": [names.get(s.name, s.name) for s in model.state],
        "c_inputs": [names.get(s.name, s.name) for s in model.inputs],
        "marker": HEADER_MARK,
    }


def function_spec(function: functions.Function, model: Model, prefix: str, names: dict, code: CFunction) -> dict:
    """What the C templates need about one generated function."""
    n, m = model.n, model.m
    arguments = [a.name for a in function.arguments]
    outputs = []
    for name, shape in function.outputs:
        dims = functions.sizes(shape, n, m)
        outputs.append(
            {"name": name, "pointer": "out" if len(function.outputs) == 1 else name, "shape": dims, "size": math.prod(dims), "shape_text": repr(dims)}
        )
    symbols = {
        "x": [s.name for s in model.state],
        "u": [s.name for s in model.inputs],
        "qddot": [f"_qddot{k}" for k in range(n)],
        "p": list(model.params),
    }
    pointers = arguments + ["p"] + [o["pointer"] for o in outputs]

    def bound(lines: list, extra: tuple = (), source: str = "{argument}[{k}]") -> dict:
        """A part's argument binding: ``const double`` locals for the names it uses, ``(void)`` for unused pointers."""
        used = set(_IDENTIFIER.findall("\n".join(lines)))
        bindings, taken = [], set()
        for argument in arguments + ["p"]:
            for k, symbol in enumerate(symbols[argument]):
                c = names.get(symbol, symbol)
                if c in used:
                    bindings.append(f"const double {c} = {source.format(argument=argument, k=k)};")
                    taken.add(argument)
        unused = [a for a in pointers + list(extra) if a not in taken and a not in used]
        return {"lines": lines, "bindings": bindings, "unused": unused, "uses_params": "p" in taken}

    parts = [
        {**bound(part.lines, ("w",)), "fails": part.fails} for part in code.parts
    ] if len(code.parts) > 1 else []
    main = bound(code.lines) if not parts else {"lines": [], "bindings": [], "unused": [], "uses_params": any(q["uses_params"] for q in parts)}
    lanes = lane_kernel(code, prefix) if function.solve else None
    if lanes is not None:
        lanes["bindings"] = bound(lanes["lines"], source="_lane_{argument}[{k}][i]")["bindings"]
    signature = ", ".join(arguments)
    if model.params:
        signature += ", *, " + ", ".join(p if v is None else f"{p}={float(v)!r}" for p, v in model.params.items())
    doc = f"{function.name}($module, {signature})\n--\n\n{function.summary}\n\n" + _argument_doc(function, model)
    return {
        "name": function.name,
        "summary": function.summary,
        "arguments": arguments,
        "sizes": [functions.sizes((a.size,), n, m)[0] for a in function.arguments],
        "outputs": outputs,
        "solve": function.solve,
        "scalar": function.outputs[0][1] == (),
        "bindings": main["bindings"],
        "unused": [a for a in main["unused"] if a != "p"] if not parts else [],
        "uses_params": main["uses_params"],
        "body": main["lines"],
        "parts": parts,
        "lanes": lanes,
        "workspace": code.workspace,
        "pointers": pointers,
        "doc": c_string(doc),
    }


def _argument_doc(function: functions.Function, model: Model) -> str:
    """The arguments and results of a compiled function, for its docstring (the Python target's conventions)."""
    n, m = model.n, model.m
    lines = []
    for argument in function.arguments:
        size = functions.sizes((argument.size,), n, m)[0]
        what = {"x": f"state [{', '.join(s.name for s in model.state)}]", "u": f"input [{', '.join(s.name for s in model.inputs)}]"}
        lines.append(f"{argument.name}: shape ({size},) or (..., {size}), the {what.get(argument.name, 'accelerations')}; leading axes are a batch.")
    for name, shape in function.outputs:
        dims = functions.sizes(shape, n, m)
        lines.append(f"Returns {name}: " + ("a float, or an array of shape (...) for a batch." if not dims else f"shape {dims}, or (...,) + {dims} for a batch."))
    if model.params:
        lines.append("Parameters are keyword arguments (numbers, or arrays broadcast against the batch).")
    return "\n".join(lines)


def c_string(text: str) -> str:
    """``text`` as a C string literal (ASCII; one source line per text line)."""
    escaped = text.encode("ascii", "backslashreplace").decode().replace("\\", "\\\\").replace('"', '\\"')
    parts = escaped.split("\n")
    return "\n".join(f'"{part}\\n"' if k < len(parts) - 1 else f'"{part}"' for k, part in enumerate(parts))
