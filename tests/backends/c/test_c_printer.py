"""The C printer marks every function its code calls (the lane kernels choose from them) and every name it reads:
checked against the calls and identifiers of the printed text, for every function sympy's C99 printer knows."""

from __future__ import annotations

import re

import pytest
import sympy as sp
from sympy.codegen import cfunctions
from sympy.printing.c import known_functions_C99

from sls.backends.c.lanes import LANE_FUNCTIONS
from sls.backends.c.printer import CPrinter
from sls.lowering.expr import Expr

x, y, z = sp.symbols("x y z", real=True)
_CALL = re.compile(r"\b([A-Za-z_]\w*)\(")
_IDENTIFIER = re.compile(r"(?<![\w.])[A-Za-z_]\w*")


def _applied(name: str) -> sp.Expr:
    """sympy's function ``name`` (a key of sympy's C99 table) applied to arguments it accepts."""
    function = getattr(sp, name, None) or getattr(cfunctions, name)
    for args in ((x + 2,), (x + 2, y), (x + 2, y, z)):
        try:
            return function(*args)
        except TypeError:
            continue
    raise AssertionError(name)


EXPRESSIONS = [_applied(name) for name in sorted(known_functions_C99)] + [
    sp.sqrt(x + y) * sp.exp(-z),
    1 / sp.sqrt(x**2 + 1),
    (x + y) ** sp.Rational(5, 2) + x**-2,
    sp.Max(x, y, z + 1) - sp.Min(x, 2 * y),
    sp.Mod(x, y) + sp.Abs(z),
    sp.Piecewise((sp.sin(x), x > 0), (sp.cos(y), True)),
]


@pytest.mark.parametrize("expr", EXPRESSIONS, ids=str)
def test_every_call_and_name_is_marked(expr):
    printed = Expr.parse(CPrinter({"y": "y_"}).expression(expr))
    text = printed.text()
    assert printed.library == set(_CALL.findall(text)), text
    names = {name for name in _IDENTIFIER.findall(text) if name not in printed.library}
    assert set(printed.reads) == names, text
    assert "y" not in printed.reads  # renamed: y_


def test_lane_functions_are_what_the_printer_calls_them():
    for name in LANE_FUNCTIONS:
        assert Expr.parse(CPrinter().expression(getattr(sp, name)(x))).library == {name}
