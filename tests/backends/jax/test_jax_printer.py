"""The JAX target's printer (:mod:`sls.backends.jax.printer`) and the numpy target's batch printer it shares its array
printing with (:class:`sls.backends.python.printer.ArrayPrinting`): the printed code, evaluated with ``jnp`` and
``np``, equals sympy's own evaluation of the expression (``Max``/``Min`` of three arguments, ``Heaviside`` with and
without its value at zero, ``Piecewise``, small powers, square roots, floats)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import sympy

from sls.backends.jax.printer import JNP
from sls.backends.python.printer import BATCH

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax.config.update("jax_enable_x64", True)  # as a generated package does on import

x, y = sympy.symbols("x y")
EXPRESSIONS = [
    sympy.Max(x, y, 1),
    sympy.Min(x, 2 * y, -0.5),
    sympy.Heaviside(x),
    sympy.Heaviside(x - y, 1),
    sympy.Piecewise((x**2, x > 0), (y**3, y < 0.2), (sympy.sqrt(y + 2), True)),
    sympy.sin(x) ** 2 * sympy.cos(y) ** 3 + sympy.Float(0.1) * x,
]
POINTS = [(0.7, -0.3), (-0.4, 0.1), (0.0, 0.5), (-1.2, 0.0), (0.3, 0.3)]


def plain(text: str) -> str:
    """The printed code without the lowering's marks of names and library calls."""
    return re.sub("[\x01\x02\x03]", "", text)


def reference(expr: sympy.Expr, a: float, b: float) -> float:
    return float(expr.subs({x: a, y: b}).evalf(30))


@pytest.mark.parametrize("expr", EXPRESSIONS, ids=range(len(EXPRESSIONS)))
def test_printed_code_evaluates_as_sympy(expr):
    jax_code, numpy_code = plain(JNP.doprint(expr)), plain(BATCH.doprint(expr))
    assert "jnp." in jax_code and "np." in numpy_code and "jnp." not in numpy_code
    for a, b in POINTS:
        want = reference(expr, a, b)
        got_jax = eval(jax_code, {"jnp": jnp}, {"x": jnp.float64(a), "y": jnp.float64(b)})  # noqa: S307 (our own code)
        got_numpy = eval(numpy_code, {"np": np}, {"x": np.float64(a), "y": np.float64(b)})  # noqa: S307
        assert float(got_jax) == pytest.approx(want, rel=1e-14, abs=1e-14)
        assert float(got_numpy) == pytest.approx(want, rel=1e-14, abs=1e-14)


def test_small_powers_are_products_in_jax_and_powers_in_numpy():
    assert plain(JNP.doprint(x**2)) == "(x*x)" and plain(BATCH.doprint(x**2)) == "x**2"
    assert plain(JNP.doprint(sympy.sqrt(x))) == "jnp.sqrt(x)"
