"""The MATLAB target's printer: sympy's Octave printer with MATLAB's scalar operators, exact float literals and
renamed symbols, and the target's one :class:`~sls.lowering.Path`."""

from __future__ import annotations

import math

import sympy
from sympy import Mul, Pow, Rational, S
from sympy.core.mul import _keep_coeff
from sympy.core.numbers import equal_valued
from sympy.printing.octave import OctaveCodePrinter
from sympy.printing.precedence import precedence

from sls import lowering
from sls.backends.matlab.names import local
from sls.errors import brief
from sls.lowering.expr import mark_name
from sls.lowering.graph_print import POW, Style


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
        return mark_name(self.names.get(expr.name) or local(expr.name))

    def _print_Float(self, expr: sympy.Float) -> str:
        return number(float(expr))

    def _print_Heaviside(self, expr: sympy.Expr) -> str:
        # H(a) = 1 for a > 0, 0 for a < 0 and H0 (sympy's default 1/2) at a = 0.
        a = self._print(expr.args[0])
        at_zero = self._print(expr.args[1]) if len(expr.args) > 1 else "1/2"
        return f"((({a}) > 0) + ({at_zero})*(({a}) == 0))"

    # Octave's printer writes the element-wise operators (.*, ./, .^) for products, quotients and powers of
    # symbols; every value here is a scalar, and the scalar operators (the same on scalars) read better. The
    # methods below are sympy's OctaveCodePrinter methods (sympy 1.14) with the scalar operators.

    def _print_Mul(self, expr: sympy.Mul) -> str:
        if expr.is_number and expr.is_imaginary and (S.ImaginaryUnit * expr).is_Integer:
            return f"{self._print(-S.ImaginaryUnit * expr)}i"
        prec = precedence(expr)
        c, e = expr.as_coeff_Mul()
        if c < 0:
            expr = _keep_coeff(-c, e)
            sign = "-"
        else:
            sign = ""
        a: list = []  # items in the numerator
        b: list = []  # items in the denominator (if any)
        pow_paren = []  # powers with more than one base element and exponent -1
        args = expr.as_ordered_factors() if self.order not in ("old", "none") else Mul.make_args(expr)
        for item in args:
            if item.is_commutative and item.is_Pow and item.exp.is_Rational and item.exp.is_negative:
                if item.exp != -1:
                    b.append(Pow(item.base, -item.exp, evaluate=False))
                else:
                    if len(item.args[0].args) != 1 and isinstance(item.base, Mul):
                        pow_paren.append(item)
                    b.append(Pow(item.base, -item.exp))
            elif item.is_Rational and item is not S.Infinity:
                if item.p != 1:
                    a.append(Rational(item.p))
                if item.q != 1:
                    b.append(Rational(item.q))
            else:
                a.append(item)
        a = a or [S.One]
        a_str = [self.parenthesize(x, prec) for x in a]
        b_str = [self.parenthesize(x, prec) for x in b]
        for item in pow_paren:
            if item.base in b:
                b_str[b.index(item.base)] = f"({b_str[b.index(item.base)]})"
        if not b:
            return sign + "*".join(a_str)
        if len(b) == 1:
            return sign + "*".join(a_str) + "/" + b_str[0]
        return sign + "*".join(a_str) + "/" + f"({'*'.join(b_str)})"

    def _print_Pow(self, expr: sympy.Pow) -> str:
        prec = precedence(expr)
        if equal_valued(expr.exp, 0.5):
            return f"sqrt({self._print(expr.base)})"
        if expr.is_commutative:
            if equal_valued(expr.exp, -0.5):
                return f"1/sqrt({self._print(expr.base)})"
            if equal_valued(expr.exp, -1):
                return f"1/{self.parenthesize(expr.base, prec)}"
        return f"{self.parenthesize(expr.base, prec)}^{self.parenthesize(expr.exp, prec)}"

    def _print_Piecewise(self, expr: sympy.Piecewise) -> str:
        if expr.args[-1].cond != sympy.true:
            raise ValueError("a Piecewise needs an (expr, True) branch last: the value where no condition holds")
        # (condition)*(value) + (~(condition))*(<the other branches>), nested
        pairs = ["({0})*({1}) + (~({0}))*(".format(self._print(c), self._print(e)) for e, c in expr.args[:-1]]
        last = self._print(expr.args[-1].expr)
        return "(" + " ...\n".join(pairs) + last + ")" * len(pairs) + ")"

    def _print_lowergamma(self, expr: sympy.Expr) -> str:
        a, x = (self._print(arg) for arg in expr.args)
        return f"(gammainc({x}, {a})*gamma({a}))"

    def _print_uppergamma(self, expr: sympy.Expr) -> str:
        a, x = (self._print(arg) for arg in expr.args)
        return f"(gammainc({x}, {a}, 'upper')*gamma({a}))"

    def expression(self, expr: sympy.Expr) -> str:
        text = self.doprint(expr)
        if self._not_supported:
            raise NotImplementedError(f"not supported in MATLAB: {brief(sorted(map(str, self._not_supported))[0], 80)}")
        return text


def _power(base: str, exponent: str) -> tuple:
    return f"{base}^{exponent}", POW


def matlab_path(names: dict) -> lowering.Path:
    """The one path of the MATLAB target (every value a double scalar)."""
    printer = MatlabPrinter(names)
    style = Style(printer, scalar=True, power=_power, names=dict(names), local=local)
    return lowering.Path(text=printer.expression, style=style, local=local)
