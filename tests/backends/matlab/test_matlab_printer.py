"""The MATLAB printer writes MATLAB's scalar operators itself: the same code as sympy's Octave printer with its
element-wise operators read back as scalar ones (what sls did before), on expressions using every kind of
product, quotient, power and branch."""

from __future__ import annotations

import pytest
import sympy as sp
from sympy.printing.octave import OctaveCodePrinter

from sls.backends.matlab.printer import MatlabPrinter
from sls.lowering.expr import Expr

x, y, z = sp.symbols("x y z", real=True)

EXPRESSIONS = [
    x * y,
    2 * x * y,
    x / y,
    x / (y * z),
    3 * x / (2 * y),
    -x * y / 7,
    x**2,
    x**3 * y**-2,
    x**y,
    (x + y) ** sp.Rational(3, 2),
    sp.sqrt(x),
    1 / sp.sqrt(x + y),
    1 / (x + y),
    1 / (x * y),
    x / (y + z) ** 2,
    sp.sin(x * y) ** 2 / sp.cos(z),
    sp.Piecewise((x * y, x > 0), (x**2, y < 1), (z / y, True)),
    sp.Max(x, y * z, 2) / sp.Abs(x),
    sp.sign(x) * sp.atan2(y, x) ** 2,
    sp.exp(-x / 2) * sp.tanh(y / z),
    sp.lowergamma(x, y) * sp.uppergamma(z, x),
    sp.Rational(1, 3) * x,
    sp.pi * x**2 / 4,
]


class _Elementwise(OctaveCodePrinter):
    """The reference: sympy's Octave printer, symbols printed as the MATLAB printer prints them."""

    def __init__(self) -> None:
        super().__init__({"inline": True})

    def _print_Float(self, expr: sp.Float) -> str:
        return repr(float(expr))


@pytest.mark.parametrize("expr", EXPRESSIONS, ids=str)
def test_scalar_operators_as_sympy_with_the_element_wise_ones_read_back(expr):
    want = _Elementwise().doprint(expr).replace(".^", "^").replace(".*", "*").replace("./", "/")
    got = Expr.parse(MatlabPrinter().expression(expr)).text()
    assert got == want
    assert ".*" not in got and "./" not in got and ".^" not in got
