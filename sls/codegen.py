"""Stage 3, Python target: print the lowered programs (:mod:`sls.lowering`) as Python code.

Each generated function is built from a :class:`Kernel` (array functions) or
a :class:`SolverCode` (``qddot_fun``, ``linearized_model``): the function's
entries reduced together (shared temporaries ``_t0, _t1, …`` on the expanded
route, ``_g0, _g1, …`` on the graph route) and printed twice:

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

from . import lowering
from .derive import Dynamics
from .graph_print import Style
from .lowering import UNROLL_MAX, Check, Fail, Let, Lowered, SolveProgram, text_of


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



#: The two paths of every Python function: Python floats (one state) and numpy arrays (a batch).
SCALAR_PATH = lowering.Path(
    text=SCALAR.expression, style=Style(SCALAR, "math", scalar=True), assign=lambda name, text: f"{name} = {text}", float_entries=True
)
BATCH_PATH = lowering.Path(text=BATCH.doprint, style=Style(BATCH, "np", scalar=False), assign=lambda name, text: f"{name} = {text}")
PATHS = [SCALAR_PATH, BATCH_PATH]


def build_kernel(scalar: Lowered, batch: Lowered) -> Kernel:
    """The :class:`Kernel` of an array function from its two lowered paths."""
    outputs = {}
    for name in scalar.outputs:
        shape, scalar_texts, constants = scalar.output(name)
        _, batch_texts, _ = batch.output(name)
        outputs[name] = Output(name=name, shape=shape, scalar=scalar_texts, batch=batch_texts, zero=[c == 0.0 for c in constants])
    return Kernel(scalar_lines=scalar.printed.lines, batch_lines=batch.printed.lines, outputs=outputs)


# --------------------------------------------------------------------------
# forward dynamics and linearization: one kernel plus an unrolled solve


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
    phased: bool = False


def _assemble(values: list, shape: tuple, scalar: bool) -> str:
    """Code building an array of ``shape`` (batch axes first) from flat ``values``."""
    items = "[" + ", ".join(map(text_of, values)) + "]"
    if scalar:
        return f"np.array({items}, dtype=float).reshape({shape})"
    return f"_stack({items}, _x.shape[:-1], {shape})"


def _op_lines(ops: list, scalar: bool) -> list:
    lines = []
    for op in ops:
        if isinstance(op, Let):
            lines.append(f"{op.name} = {op.value}")
        elif isinstance(op, Check):
            lines.append(f"if not {op.pivot} > 0.0:" if scalar else f"if not np.all({op.pivot} > 0.0):")
            lines.append("    raise _NotPositiveDefinite")
        elif isinstance(op, Fail):
            lines.append("raise _NotPositiveDefinite")
    return lines


def _returns(name: str, results: dict, n: int, m: int, scalar: bool) -> list:
    """The ``return`` of a solving function from its results."""
    if name == "qddot_fun":
        z = results["qddot"]
        if scalar:
            return ["return np.array([" + ", ".join(map(text_of, z)) + "])"]
        return [f"_out = np.empty(_x.shape[:-1] + ({n},))", *[f"_out[..., {k}] = {text_of(v)}" for k, v in enumerate(z)], "return _out"]
    A_rows, B_rows = results["A"], results["B"]
    top_A = [[1.0 if b == n + a else 0.0 for b in range(2 * n)] for a in range(n)]
    if scalar:
        A_flat = [v for row in top_A + A_rows for v in row]
        B_flat = [0.0] * (n * m) + [v for row in B_rows for v in row]
        return [
            "return (",
            "    np.array([" + ", ".join(map(text_of, A_flat)) + f"]).reshape({(2 * n, 2 * n)}),",
            "    np.array([" + ", ".join(map(text_of, B_flat)) + f"]).reshape({(2 * n, m)}),",
            ")",
        ]
    lines = ["_batch = _x.shape[:-1]", f"_A = np.zeros(_batch + ({2 * n}, {2 * n}))", f"_A[..., :{n}, {n}:] = np.eye({n})"]
    for a in range(n):
        for l in range(2 * n):
            if A_rows[a][l] != 0.0:
                lines.append(f"_A[..., {n + a}, {l}] = {text_of(A_rows[a][l])}")
    lines.append(f"_B = np.zeros(_batch + ({2 * n}, {m}))")
    for a in range(n):
        for j in range(m):
            if B_rows[a][j] != 0.0:
                lines.append(f"_B[..., {n + a}, {j}] = {text_of(B_rows[a][j])}")
    lines.append("return _A, _B")
    return lines


def _phased_lines(name: str, program: SolveProgram, n: int, m: int, scalar: bool) -> list:
    """A phased program (see :class:`~sls.lowering.SolveProgram`) after its kernel and bindings.

    With the unrolled factorization: solve ``q̈``, bind it, evaluate the late
    entries, solve ``A`` and ``B``; a pivot ``≤ 0`` switches to numpy
    (``_acceleration`` raises ``LinAlgError`` naming the state when ``M`` is
    not positive definite) for ``q̈`` and the final solves (``_generic``).
    """
    assemble = {key: _assemble(program.values[key], program.shapes[key], scalar) for key in program.values}
    unpack = ", ".join(program.accelerations) + ("," if n == 1 else "")
    if scalar:
        numeric = [f"{unpack} = _acceleration(_mass, {assemble['rhs']}, _x).tolist()"]
    else:
        numeric = [f"{unpack} = np.moveaxis(_acceleration(_mass, {assemble['rhs']}, _x), -1, 0)"]
    generic = f"return _generic(_mass, {assemble['residual_jac']}, {assemble['B_u']}, _x)"
    late = _op_lines(program.late, scalar)
    if not program.unrolled:
        return [f"_mass = {assemble['M']}", *numeric, *late, generic]
    lines = ["_factored = True", "try:"]
    lines += ["    " + line for line in _op_lines(program.factor, scalar)] or ["    pass"]
    lines += ["except _NotPositiveDefinite:", "    _factored = False", "if _factored:"]
    solved = _op_lines(program.steps, scalar) + [f"{a} = {text_of(v)}" for a, v in zip(program.accelerations, program.results["qddot"])]
    lines += ["    " + line for line in solved]
    lines += ["else:", f"    _mass = {assemble['M']}", *["    " + line for line in numeric]]
    lines += late
    lines += ["if not _factored:", "    " + generic]
    lines += _op_lines(program.tail, scalar)
    return lines + _returns(name, program.results, n, m, scalar)


def solver_code(name: str, programs: list, n: int, m: int) -> SolverCode:
    """The :class:`SolverCode` of ``qddot_fun``/``linearized_model`` from its two lowered paths."""
    result = {}
    for scalar, program in zip((True, False), programs):
        lines = list(program.lines) + _op_lines(program.bindings, scalar)
        if program.phased:
            result[scalar] = lines + _phased_lines(name, program, n, m, scalar)
            continue
        generic = "return _generic(" + ", ".join(_assemble(program.values[k], program.shapes[k], scalar) for k in program.values) + ", _x)"
        if not program.unrolled:
            lines.append(generic)
        else:
            factor_lines = _op_lines(program.factor, scalar)
            if factor_lines:
                lines.append("try:")
                lines += ["    " + line for line in factor_lines]
                lines += ["except _NotPositiveDefinite:", "    " + generic]
            lines += _op_lines(program.steps, scalar)
            lines += _returns(name, program.results, n, m, scalar)
        result[scalar] = lines
    return SolverCode(scalar_lines=result[True], batch_lines=result[False], unrolled=programs[0].unrolled, phased=programs[0].phased)


def kernel_builders(dynamics: Dynamics) -> dict[str, Callable[[], object]]:
    """How to build the code of every generated module: module name → zero-argument builder.

    Array functions get a :class:`Kernel`, ``qddot_fun`` and
    ``linearized_model`` a :class:`SolverCode` (see :mod:`sls.lowering`).
    """
    n, m = dynamics.model.n, dynamics.model.m
    builders = {}
    for name, lower in lowering.lowerers(dynamics, PATHS, UNROLL_MAX).items():
        if lower is None:
            builders[name] = None  # solved at run time (a constrained model)
        elif name in ("qddot_fun", "linearized_model"):
            builders[name] = lambda name=name, lower=lower: solver_code(name, lower(), n, m)
        else:
            builders[name] = lambda lower=lower: build_kernel(*lower())
    return builders


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
