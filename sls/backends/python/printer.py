"""The Python target's printers: Python floats (one state) and numpy arrays (a batch).

Every generated Python function has two paths (:data:`PATHS`): the **scalar
path** works on Python floats (``x.tolist()`` once, ``math`` functions),
because Python float arithmetic is several times faster than numpy scalars;
the **batch path** works on numpy arrays with ``np`` functions, one
vectorised operation per temporary (a function
:attr:`~sls.functions.Function.batch_only` keeps this one alone).

Both mark the names they print (:func:`~sls.lowering.expr.mark_name`) and
the library names (``math.sin``, ``np.where``, ``max``:
:func:`~sls.lowering.expr.mark_library`), so the lowering hands the code
expressions as data (:class:`~sls.lowering.expr.Expr`): whether a module
calls :mod:`math` is read from them.
"""

from __future__ import annotations

from typing import Any

import sympy
from sympy.printing.numpy import NumPyPrinter
from sympy.printing.precedence import PRECEDENCE
from sympy.printing.pycode import PythonCodePrinter

from sls import lowering
from sls.lowering.expr import Expr, mark_library, mark_name, strip_parens
from sls.lowering.graph_print import POW, Style


class _MinMax:
    """``Max``/``Min`` of any number of arguments as nested two-argument calls of ``MAX``/``MIN``."""

    MAX, MIN = "max", "min"

    def _print_Max(self, expr: sympy.Max) -> str:
        return nested_call(self, self.MAX, expr.args)

    def _print_Min(self, expr: sympy.Min) -> str:
        return nested_call(self, self.MIN, expr.args)


class ArrayPrinting(_MinMax):
    """What the printers of an array library share (the numpy target's batch path, the JAX target): the library's
    functions written ``LIBRARY.*`` (``np.sin``, ``jnp.sin``) and marked, exact float literals, ``Max``/``Min`` as
    nested ``maximum``/``minimum``, ``Heaviside`` as the library's ``heaviside`` and ``Piecewise`` as nested
    ``where`` (every branch evaluated, the condition picks per entry). A subclass names the library (``LIBRARY``,
    the alias; ``MODULE``, its module as sympy's printer writes it) and comes before sympy's printer class."""

    LIBRARY, MODULE = "np", "numpy"

    @property
    def MAX(self) -> str:  # type: ignore[override]
        return f"{self.LIBRARY}.maximum"

    @property
    def MIN(self) -> str:  # type: ignore[override]
        return f"{self.LIBRARY}.minimum"

    def _print_Symbol(self, expr: sympy.Symbol) -> str:
        return mark_name(super()._print_Symbol(expr))  # type: ignore[misc]

    def _module_format(self, fqn: str, register: bool = True) -> str:
        text = super()._module_format(fqn, register)  # type: ignore[misc]
        prefix = self.MODULE + "."
        return mark_library(self.LIBRARY + "." + text[len(prefix) :] if text.startswith(prefix) else text)

    def _print_Float(self, expr: sympy.Float) -> str:
        return repr(float(expr))

    def _print_Heaviside(self, expr: sympy.Heaviside) -> str:
        at_zero = float_text(self, expr.args[1]) if len(expr.args) > 1 else "0.5"
        return f"{mark_library(self.LIBRARY + '.heaviside')}({self._print(expr.args[0])}, {at_zero})"  # type: ignore[attr-defined]

    def _print_Piecewise(self, expr: sympy.Piecewise) -> str:
        # Nested where: every branch is evaluated on the whole batch, the condition picks per entry.
        text = mark_library(self.LIBRARY + ".nan")
        where = mark_library(self.LIBRARY + ".where")
        for value, condition in reversed(expr.args):
            if condition == sympy.true:
                text = self._print(value)  # type: ignore[attr-defined]
            else:
                text = f"{where}({self._print(condition)}, {self._print(value)}, {text})"  # type: ignore[attr-defined]
        return text


class ScalarPrinter(_MinMax, PythonCodePrinter):
    """Prints expressions for Python floats (``math.sin``, exact float literals)."""

    def __init__(self) -> None:
        super().__init__({"fully_qualified_modules": True, "standard": "python3"})

    def _print_Symbol(self, expr: sympy.Symbol) -> str:
        return mark_name(super()._print_Symbol(expr))

    def _module_format(self, fqn: str, register: bool = True) -> str:
        return mark_library(super()._module_format(fqn, register))

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
        at_zero = float_text(self, expr.args[1]) if len(expr.args) > 1 else "0.5"
        return f"(1.0 if {arg} > 0.0 else 0.0 if {arg} < 0.0 else {at_zero})"

    def expression(self, expr: sympy.Expr) -> str:
        """``expr`` as code, without a redundant pair of outer parentheses."""
        return strip_parens(self.doprint(expr))


class BatchPrinter(ArrayPrinting, NumPyPrinter):
    """Prints expressions for numpy arrays (``np.sin``, exact float literals)."""

    def __init__(self) -> None:
        super().__init__({"fully_qualified_modules": True})

    def _print_Pow(self, expr: sympy.Pow, rational: bool = False) -> str:
        # Arrays are float64, so integer powers need no float workaround.
        return self._hprint_Pow(expr, rational=rational, sqrt="np.sqrt")


def float_text(printer: Any, value: sympy.Expr) -> str:
    """``value`` printed as a float where it is a number (so Python arithmetic stays in floats)."""
    return repr(float(value)) if value.is_Number else printer._print(value)


def nested_call(printer: Any, name: str, args: tuple) -> str:
    """``name(a, name(b, c))`` for a Max/Min of any number of arguments; numbers print as floats."""
    texts = [float_text(printer, a) for a in args]
    text = texts[-1]
    for item in reversed(texts[:-1]):
        text = f"{mark_library(name)}({item}, {text})"
    return text


def python_power(base: str, exponent: str) -> tuple[str, int]:
    """A power of printed atoms in Python: ``base**exponent``."""
    return f"{base}**{exponent}", POW


SCALAR = ScalarPrinter()
BATCH = BatchPrinter()

#: How the graph prints on the two paths (see :class:`~sls.lowering.graph_print.Style`).
SCALAR_STYLE = Style(SCALAR, scalar=True, power=python_power)
BATCH_STYLE = Style(BATCH, scalar=False, power=python_power)


def to_float(entry: Expr) -> Expr:
    """An entry of the scalar path that may be an ``int`` at run time (parameters alone) as a float."""
    return Expr.join("float(", entry, ")")


#: The two paths of every Python function: Python floats (one state) and numpy arrays (a batch).
SCALAR_PATH = lowering.Path(text=SCALAR.expression, style=SCALAR_STYLE, to_float=to_float)
BATCH_PATH = lowering.Path(text=BATCH.doprint, style=BATCH_STYLE)
PATHS = [SCALAR_PATH, BATCH_PATH]
