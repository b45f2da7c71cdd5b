"""The C target's printer: sympy's C99 printer with exact float literals, no integer division and the names it
reads and the functions it calls marked, and the target's one :class:`~sls.lowering.Path`."""

from __future__ import annotations

import math
from typing import Any

import sympy
from sympy.codegen.ast import real
from sympy.printing.c import C99CodePrinter

from sls import lowering
from sls.errors import brief
from sls.lowering import mark_library, mark_name, strip_parens
from sls.lowering.graph_print import ATOM, Style


class CPrinter(C99CodePrinter):
    """sympy's C99 printer for sls: exact float literals, ``x*x`` for squares and cubes, no ``M_PI`` (not C99),
    renamed symbols (:func:`~sls.backends.c.names.renames`). Names print marked
    (:func:`~sls.lowering.expr.mark_name`), and so does every function the code calls
    (:func:`~sls.lowering.expr.mark_library`): the lane kernels need to know them."""

    def __init__(self, names: dict | None = None) -> None:
        super().__init__({"strict": True} if "strict" in C99CodePrinter._default_settings else {})
        self.names = dict(names or {})

    def _print_Symbol(self, expr: sympy.Symbol) -> str:
        return mark_name(self.names.get(expr.name, expr.name))

    def _print_math_func(self, expr: sympy.Expr, nest: bool = False, known: Any = None) -> str:
        """A call of a libm function (sympy's ``_print_math_func``, with the function's name marked)."""
        if expr in self.math_macros:  # a constant <math.h> names (M_LN2, ...): as sympy prints it
            return f"{self._ns}{self.math_macros[expr]}"
        if known is None:
            known = self.known_functions[type(expr).__name__]
        if not isinstance(known, str):
            known = next(name for condition, name in known if condition(*expr.args))
        suffix = self._get_func_suffix(real) if self._ns + known in self._prec_funcs else ""
        name = mark_library(f"{self._ns}{known}{suffix}")
        args = [self._print(arg) for arg in expr.args]
        if not nest:
            return f"{name}({', '.join(args)})"
        text = args[-1]  # fmax(a, fmax(b, c)): two arguments per call
        for arg in reversed(args[:-1]):
            text = f"{name}({arg}, {text})"
        return text

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
            return f"{mark_library('sqrt')}({self._print(base)})"
        if exponent == -sympy.Rational(1, 2):
            return f"(1.0/{mark_library('sqrt')}({self._print(base)}))"
        return f"{mark_library('pow')}({self._print(base)}, {self._print(exponent)})"

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


# sympy's C99 printer prints every libm function through one method, which CPrinter marks the names of.
for _attribute, _method in list(vars(C99CodePrinter).items()):
    if _method is vars(C99CodePrinter)["_print_math_func"] and _attribute != "_print_math_func":
        setattr(CPrinter, _attribute, CPrinter._print_math_func)


def _c_power(base: str, exponent: str) -> tuple[str, int]:
    return f"{mark_library('pow')}({base}, {exponent})", ATOM


def _c_prefix(array: str) -> str:
    """Entry names in C start with ``_`` and a lower-case letter (``_M`` is reserved in C)."""
    return "_" + array.lower().replace("_", "")


def c_path(names: dict[str, str]) -> lowering.Path:
    """The one path of the C target (every entry a double)."""
    printer = CPrinter(names)
    style = Style(printer, scalar=True, power=_c_power, integer=lambda k: f"{k}.0", names=dict(names))
    return lowering.Path(text=printer.expression, style=style, prefix=_c_prefix)
