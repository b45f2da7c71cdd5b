"""The JAX target's printer: ``jnp`` functions on the scalars of one state.

A generated JAX function evaluates one state (its entries are 0-d arrays or tracers) and batches by
:func:`jax.vmap`, so one path is enough: sympy's :class:`~sympy.printing.numpy.JaxPrinter` with the
library names written ``jnp.*`` and marked, exact float literals, ``Max``/``Min``, ``Piecewise`` and ``Heaviside``
as the numpy target's batch path prints them (:class:`~sls.backends.python.printer.ArrayPrinting`), and small
integer powers as products.
"""

from __future__ import annotations

import sympy
from sympy.printing.numpy import JaxPrinter
from sympy.printing.precedence import PRECEDENCE

from sls import lowering
from sls.backends.python.printer import ArrayPrinting, python_power
from sls.lowering.graph_print import Style


class JnpPrinter(ArrayPrinting, JaxPrinter):
    """Prints expressions for ``jax.numpy`` (``jnp.sin``, exact float literals)."""

    LIBRARY, MODULE = "jnp", "jax.numpy"

    def __init__(self) -> None:
        super().__init__({"fully_qualified_modules": True})

    def _print_Pow(self, expr: sympy.Pow, rational: bool = False) -> str:
        # x*x: one multiplication, and exact at x = 0 under jax.grad (x**2 is too, x**0.5 is not)
        if expr.exp in (2, 3) and not rational:
            base = self.parenthesize(expr.base, PRECEDENCE["Mul"], strict=False)
            return "(" + "*".join([base] * int(expr.exp)) + ")"
        return self._hprint_Pow(expr, rational=rational, sqrt="jnp.sqrt")


JNP = JnpPrinter()
#: How the graph prints (see :class:`~sls.lowering.graph_print.Style`): products for small powers.
STYLE = Style(JNP, scalar=True, power=python_power)
#: The one path of every JAX function: the scalars of one state.
PATH = lowering.Path(text=JNP.doprint, style=STYLE)
PATHS = [PATH]
