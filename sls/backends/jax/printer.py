"""The JAX target's printer: ``jnp`` functions on the scalars of one state.

A generated JAX function evaluates one state (its entries are 0-d arrays or tracers) and batches by
:func:`jax.vmap`, so one path is enough: sympy's :class:`~sympy.printing.numpy.JaxPrinter` with the
library names written ``jnp.*`` and marked (:func:`~sls.lowering.expr.mark_library`), exact float literals,
small integer powers as products, ``Max``/``Min`` as nested ``jnp.maximum``/``jnp.minimum``, ``Piecewise``
as nested ``jnp.where`` and ``Heaviside`` as ``jnp.heaviside`` (as the numpy target's batch path).
"""

from __future__ import annotations

import sympy
from sympy.printing.numpy import JaxPrinter
from sympy.printing.precedence import PRECEDENCE

from sls import lowering
from sls.backends.python.printer import python_power
from sls.lowering.expr import mark_library, mark_name
from sls.lowering.graph_print import Style


def float_text(printer: JaxPrinter, value: sympy.Expr) -> str:
    """``value`` printed as a float where it is a number."""
    return repr(float(value)) if value.is_Number else printer._print(value)


def nested_call(printer: JaxPrinter, name: str, args: tuple) -> str:
    """``name(a, name(b, c))`` for a Max/Min of any number of arguments; numbers print as floats."""
    texts = [float_text(printer, a) for a in args]
    text = texts[-1]
    for item in reversed(texts[:-1]):
        text = f"{mark_library(name)}({item}, {text})"
    return text


class JnpPrinter(JaxPrinter):
    """Prints expressions for ``jax.numpy`` (``jnp.sin``, exact float literals)."""

    def __init__(self) -> None:
        super().__init__({"fully_qualified_modules": True})

    def _print_Max(self, expr: sympy.Max) -> str:
        return nested_call(self, "jnp.maximum", expr.args)

    def _print_Min(self, expr: sympy.Min) -> str:
        return nested_call(self, "jnp.minimum", expr.args)

    def _print_Symbol(self, expr: sympy.Symbol) -> str:
        return mark_name(super()._print_Symbol(expr))

    def _module_format(self, fqn: str, register: bool = True) -> str:
        text = super()._module_format(fqn, register)
        return mark_library("jnp." + text[len("jax.numpy.") :] if text.startswith("jax.numpy.") else text)

    def _print_Float(self, expr: sympy.Float) -> str:
        return repr(float(expr))

    def _print_Pow(self, expr: sympy.Pow, rational: bool = False) -> str:
        # x*x: one multiplication, and exact at x = 0 under jax.grad (x**2 is too, x**0.5 is not)
        if expr.exp in (2, 3) and not rational:
            base = self.parenthesize(expr.base, PRECEDENCE["Mul"], strict=False)
            return "(" + "*".join([base] * int(expr.exp)) + ")"
        return self._hprint_Pow(expr, rational=rational, sqrt="jnp.sqrt")

    def _print_Heaviside(self, expr: sympy.Heaviside) -> str:
        at_zero = float_text(self, expr.args[1]) if len(expr.args) > 1 else "0.5"
        return f"{mark_library('jnp.heaviside')}({self._print(expr.args[0])}, {at_zero})"

    def _print_Piecewise(self, expr: sympy.Piecewise) -> str:
        # Nested jnp.where: both branches are traced, the condition picks (as the numpy target's batch path).
        text = mark_library("jnp.nan")
        for value, condition in reversed(expr.args):
            if condition == sympy.true:
                text = self._print(value)
            else:
                text = f"{mark_library('jnp.where')}({self._print(condition)}, {self._print(value)}, {text})"
        return text


JNP = JnpPrinter()
#: How the graph prints (see :class:`~sls.lowering.graph_print.Style`): products for small powers.
STYLE = Style(JNP, scalar=True, power=python_power)
#: The one path of every JAX function: the scalars of one state.
PATH = lowering.Path(text=JNP.doprint, style=STYLE)
PATHS = [PATH]
