"""The MATLAB target's code: its printer, reserved names and renames, function bodies and what the template
needs about each function (see :mod:`sls.backends.matlab`)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sympy
from sympy.printing.octave import OctaveCodePrinter

from sls import arrays, functions, lowering
from sls.errors import brief
from sls.lowering.graph_print import POW, Style

if TYPE_CHECKING:  # a type only: no import at run time
    from sls.model import Model

#: MATLAB keywords (``iskeyword``), plus Octave's that MATLAB code could meet.
KEYWORDS = frozenset(
    "break case catch classdef continue else elseif end for function global if otherwise parfor persistent return "
    "spmd switch try while endfunction endif endfor endwhile unwind_protect do until".split()
)
#: Functions and constants the generated code calls or reads (a local of that name would shadow it).
BUILTINS = frozenset(
    "pi e i j eps Inf inf NaN nan NA true false sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh "
    "exp log log10 log2 sqrt abs sign max min mod rem floor ceil round fix gamma erf erfc heaviside hypot "
    "zeros eye chol error nargin numel isfield isstruct isnumeric isreal isfinite all fieldnames setdiff isempty "
    "struct reshape double sprintf disp size ans".split()
)
#: Locals and argument names of the generated functions.
LOCAL_NAMES = frozenset("x u p qddot rhs dM drhs residual_jac R failed Z k unknown".split())
#: Output names of every generated function (each is a local in its file) and the function names.
OUTPUT_NAMES = frozenset(o for f in functions.FUNCTIONS for o, _ in f.outputs) | frozenset(functions.NAMES)
#: What the generated files never contain (Octave-only syntax), checked by the tests.
OCTAVE_ONLY = ("#", "!=", "++", "+=", "endfunction", "endif", "endfor", '"', "printf(", "!")

_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
#: A generated local as sls's lowering names it (``_t0``, ``_g3``, ``_M1``, ``_qddot0``).
_GENERATED = re.compile(r"_[A-Za-z]\w*")


def reserved(name: str) -> bool:
    """True when ``name`` cannot be a local of the generated MATLAB code as it is."""
    return (
        name in KEYWORDS
        or name in BUILTINS
        or name in LOCAL_NAMES
        or name in OUTPUT_NAMES
        or name.startswith("_")
        or name.endswith("_")
        or name.startswith("v_")
        or len(name) > 63
    )


def renames(names: list) -> dict:
    """``{name: MATLAB name}`` for the user's names MATLAB cannot use as they are (``v_`` put in front)."""
    taken = set(names)
    result = {}
    for name in names:
        if not reserved(name):
            continue
        base = "v_" + name.strip("_")[:55]
        candidate, k = base, 1
        while candidate in taken:
            candidate, k = f"{base}{k}", k + 1
        taken.add(candidate)
        result[name] = candidate
    return result


def local(name: str) -> str:
    """A generated local (``_t0``) as a MATLAB name (``t0_``: MATLAB names start with a letter); other names
    as they are (the user's names never start with ``_`` here: :func:`renames` gives them a ``v_``)."""
    return name[1:] + "_" if _GENERATED.fullmatch(name) else name


def number(value: float) -> str:
    """A float as a MATLAB literal that reads back exactly."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Inf" if value > 0 else "-Inf"
    return repr(float(value))


class MatlabPrinter(OctaveCodePrinter):
    """sympy's Octave printer restricted to MATLAB-compatible scalar code: ``*``, ``/``, ``^`` (every value is a
    scalar), exact float literals, no ``heaviside`` (Symbolic Toolbox in MATLAB), renamed symbols."""

    def __init__(self, names: dict | None = None) -> None:
        super().__init__({"inline": True})
        self.names = dict(names or {})

    def _print_Symbol(self, expr: sympy.Symbol) -> str:
        return self.names.get(expr.name) or local(expr.name)

    def _print_Float(self, expr: sympy.Float) -> str:
        return number(float(expr))

    def _print_Heaviside(self, expr: sympy.Expr) -> str:
        # H(a) = 1 for a > 0, 0 for a < 0 and H0 (sympy's default 1/2) at a = 0.
        a = self._print(expr.args[0])
        at_zero = self._print(expr.args[1]) if len(expr.args) > 1 else "1/2"
        return f"((({a}) > 0) + ({at_zero})*(({a}) == 0))"

    def expression(self, expr: sympy.Expr) -> str:
        text = self.doprint(expr)
        if self._not_supported:
            raise NotImplementedError(f"not supported in MATLAB: {brief(sorted(map(str, self._not_supported))[0], 80)}")
        return scalar_operators(text)


def scalar_operators(text: str) -> str:
    """Octave's element-wise operators as the scalar ones (the same on scalars, and easier to read)."""
    return text.replace(".^", "^").replace(".*", "*").replace("./", "/")


def _assign(name: str, text: str) -> str:
    return f"{name} = {text};"


def _power(base: str, exponent: str) -> tuple:
    return f"{base}^{exponent}", POW


def matlab_path(names: dict) -> lowering.Path:
    """The one path of the MATLAB target (every value a double scalar)."""
    printer = MatlabPrinter(names)
    style = Style(printer, scalar=True, power=_power, names=dict(names), local=local)
    return lowering.Path(text=printer.expression, style=style, local=local)


# --------------------------------------------------------------------------
# function bodies


def _index(shape: tuple, flat: int) -> str:
    """MATLAB subscripts (1-based) of row-major entry ``flat`` of an array of ``shape``."""
    return ", ".join(str(k + 1) for k in arrays.unravel(flat, shape))


def _zeros(shape: tuple) -> str:
    dims = shape if len(shape) > 1 else shape + (1,)
    return f"zeros({', '.join(map(str, dims))})"


def fill(name: str, shape: tuple, values: list) -> list:
    """``name = zeros(shape);`` then its nonzero entries (texts, or float constants) one per line."""
    if not shape:
        (value,) = values
        return [f"{name} = {value if isinstance(value, str) else number(value)};"]
    lines = [f"{name} = {_zeros(shape)};"]
    for k, value in enumerate(values):
        if isinstance(value, str):
            lines.append(f"{name}({_index(shape, k)}) = {value};")
        elif value != 0.0:
            lines.append(f"{name}({_index(shape, k)}) = {number(value)};")
    return lines


@dataclass(frozen=True)
class Body:
    """A MATLAB function body after the argument binding: its ``lines``, and the names its expressions read
    (``reads``: which arguments and parameters need binding)."""

    lines: list[str]
    reads: frozenset[str]


def _reads(ops: list, *arrays: list) -> set[str]:
    """The names read by the values of ``ops`` (:class:`~sls.lowering.Let`\\ s) and by the texts in ``arrays``."""
    texts = [op.value for op in ops] + [v for values in arrays for v in values if isinstance(v, str)]
    return {name for text in texts for name in _IDENTIFIER.findall(text)}


def kernel_body(lowered: lowering.Lowered) -> Body:
    """An array function: shared subexpressions, then its one output."""
    (name,) = lowered.outputs
    shape, texts, constants = lowered.output(name)
    values: list = [c if c is not None else t for t, c in zip(texts, constants)]
    lines = _let_lines(lowered.printed.lines) + fill(name, shape, values)
    return Body(lines, frozenset(_reads(lowered.printed.lines, values)))


def wrapper_body(n: int, accelerations: str) -> Body:
    """``xdot_fun``: ``[qdot; qddot_fun(x, u, p)]`` (``accelerations``: the name of ``qddot_fun``)."""
    return Body(["x = x(:);", f"xdot = [x({n + 1}:{2 * n}); {accelerations}(x, u, p)];"], frozenset())


def solve_body(kind: str, program: lowering.SolveProgram, n: int, m: int, failure: str) -> Body:
    """A solving function of ``kind`` (:attr:`sls.functions.Function.solve`: ``qddot_fun``, ``linearized_model``):
    ``M`` and the right-hand sides assembled, ``chol``, triangular solves."""
    reads = _reads(program.lines + program.bindings + program.late, *program.values.values())
    return Body(_solve_lines(kind, program, n, m, failure), frozenset(reads))


def _solve_lines(kind: str, program: lowering.SolveProgram, n: int, m: int, failure: str) -> list[str]:
    """The lines of :func:`solve_body`."""
    lines = _let_lines(program.lines) + _let_lines(program.bindings)
    if program.phased:
        return _phased_body(program, n, m, failure, lines)
    for array in program.values:  # the function's arrays, M first (sls.functions.Function.arrays)
        lines += fill(array, program.shapes[array], program.values[array])
    lines += ["[R, failed] = chol(M);", "if failed", f"    {failure}", "end"]
    if kind == functions.ACCELERATIONS:
        return lines + ["qddot = R \\ (R' \\ rhs);"]
    return lines + [
        "qddot = R \\ (R' \\ rhs);",
        "% d(qddot)/dq_k = M \\ (d(rhs)/dq_k - dM/dq_k * qddot); d(qddot)/dqdot_k = M \\ d(rhs)/dqdot_k",
        f"for k = 1:{n}",
        "    drhs(:, k) = drhs(:, k) - dM(:, :, k) * qddot;",
        "end",
        "Z = R \\ (R' \\ [drhs, B_u]);",
        f"A = [zeros({n}), eye({n}); Z(:, 1:{2 * n})];",
        f"B = [zeros({n}, {m}); Z(:, {2 * n + 1}:end)];",
    ]


def _let_lines(ops: list) -> list:
    """The :class:`~sls.lowering.Let`\\ s of a program as MATLAB assignments (a MATLAB solve never unrolls)."""
    return [_assign(op.name, op.value) for op in ops]


def quoted(text: str) -> str:
    """``text`` as a MATLAB single-quoted string literal."""
    return "'" + text.replace("'", "''") + "'"


@dataclass(frozen=True)
class Param:
    """A parameter as ``templates/matlab/function.m.j2`` reads it: its ``name``, the name ``quoted``, its MATLAB
    ``local``, the struct ``field`` holding it, its ``default`` literal (``None``: required) and whether the
    function reads it (``used``)."""

    name: str
    quoted: str
    local: str
    field: str
    default: str | None
    used: bool


@dataclass(frozen=True)
class MatlabSpec:
    """What ``templates/matlab/function.m.j2`` needs about one generated function."""

    name: str
    upper: str
    summary: str
    arguments: list[str]
    nargs: int
    outputs: list[str]
    result: str
    shapes: list[str]
    checks: list[str]
    params: list[Param]
    param_list: str
    param_names: str
    example: str | None
    bindings: list[str]
    body: list[str]
    wrapper: bool


def function_spec(function: functions.Function, model: Model, names: dict, body: Body) -> MatlabSpec:
    """What ``templates/matlab/function.m.j2`` needs about one generated function."""
    n, m = model.n, model.m
    arguments = [a.name for a in function.arguments]
    symbols = {
        "x": [s.name for s in model.state],
        "u": [s.name for s in model.inputs],
        "qddot": [f"qddot{k}_" for k in range(n)],
    }
    used = body.reads
    bindings = []
    for argument in arguments:
        for k, symbol in enumerate(symbols[argument]):
            local_name = names.get(symbol, symbol)
            if local_name in used:
                bindings.append(f"{local_name} = {argument}({k + 1});")
    params = []
    for pname, value in model.params.items():
        local_name = names.get(pname, pname)
        field = f"p.{pname}" if pname not in KEYWORDS else f"p.({quoted(pname)})"
        default = None if value is None else number(float(value))
        params.append(Param(pname, quoted(pname), local_name, field, default, local_name in used))
    outputs = [o for o, _ in function.outputs]
    described = {
        "x": (2 * n, f"state [{', '.join(symbols['x'])}]"),
        "u": (m, f"input [{', '.join(symbols['u'])}]"),
        "qddot": (n, "accelerations, one per coordinate"),
    }
    checks = []
    for argument in arguments:
        size, what = described[argument]
        plural = "s" if size != 1 else ""
        message = quoted(f"{function.name}: {argument} must be {size} finite number{plural}, the {what}")
        checks.append(f"if ~isnumeric({argument}) || numel({argument}) ~= {size} || ~all(isfinite({argument}(:)))")
        checks.append(f"    error('sls:badArgument', {message});")
        checks.append("end")
    shapes = []
    for o, shape in function.outputs:
        dims = functions.sizes(shape, n, m)
        shapes.append(
            f"{o}: " + ("a scalar" if not dims else "x".join(map(str, dims if len(dims) > 1 else dims + (1,))))
        )
    example = None
    if model.params:
        first = next(iter(model.params))
        example = f"{function.name}({', '.join(arguments)}, struct({quoted(first)}, value))"
    return MatlabSpec(
        name=function.name,
        upper=function.name.upper(),
        summary=function.summary,
        arguments=arguments,
        nargs=len(arguments),
        outputs=outputs,
        result=outputs[0] if len(outputs) == 1 else "[" + ", ".join(outputs) + "]",
        shapes=shapes,
        checks=checks,
        params=params,
        param_list=", ".join(quoted(p) for p in model.params),
        param_names=", ".join(model.params) or "none",
        example=example,
        bindings=bindings,
        body=body.lines,
        wrapper=function.uses is not None,
    )


def _phased_body(program: lowering.SolveProgram, n: int, m: int, failure: str, lines: list) -> list:
    """The graph route's ``linearized_model``: ``qddot`` first, then ``∂r/∂x`` at it, ``A = −M⁻¹ ∂r/∂x``."""
    for array in ("M", "rhs", "B_u"):
        lines += fill(array, program.shapes[array], program.values[array])
    lines += ["[R, failed] = chol(M);", "if failed", f"    {failure}", "end", "qddot = R \\ (R' \\ rhs);"]
    lines += [f"{name} = qddot({k + 1});" for k, name in enumerate(program.accelerations)]
    lines += _let_lines(program.late)
    lines += fill("residual_jac", program.shapes["residual_jac"], program.values["residual_jac"])
    return lines + [
        "% d(qddot)/dx = -M \\ dr/dx, r = M qddot + C qdot + phi + fric - B_u u at fixed qddot and u",
        "Z = R \\ (R' \\ [-residual_jac, B_u]);",
        f"A = [zeros({n}), eye({n}); Z(:, 1:{2 * n})];",
        f"B = [zeros({n}, {m}); Z(:, {2 * n + 1}:end)];",
    ]
