"""The CasADi target's printer: sympy's Python printer writing CasADi calls (``_ca.sin``, ``_ca.if_else``), and the
target's one :class:`~sls.lowering.Path`.

Every value of the generated code is a CasADi ``SX`` scalar (or a Python float folded at generation time), so the
operators ``+ - * / **`` and the comparisons are CasADi's own; functions, branches and logic are written as CasADi
calls (``math.sin`` → ``_ca.sin``, ``Piecewise`` → nested ``_ca.if_else``, ``Max`` → ``_ca.fmax``). A function
CasADi has no counterpart of is a :class:`NotImplementedError` (the pipeline turns it into one line).
"""

from __future__ import annotations

import math
from typing import Any

import sympy
from sympy.printing.pycode import PythonCodePrinter

from sls import lowering
from sls.lowering.expr import mark_library, mark_name, strip_parens
from sls.lowering.graph_print import POW, Style

#: The CasADi module's name in the generated code (a user name never starts with ``_``).
MODULE = "_ca"
#: The ``math`` names sympy's Python printer writes that CasADi has under the same name.
SAME = frozenset(
    "sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh exp log log10 sqrt floor ceil erf fmod pi".split(
        " "
    )
)
#: ``math`` names CasADi spells otherwise (or constants folded to their float value).
OTHER = {"fabs": f"{MODULE}.fabs", "e": repr(math.e), "inf": "_ca.inf", "nan": "_ca.nan", "expm1": None}


def _casadi_name(name: str) -> str:
    """The CasADi spelling of a name sympy's Python printer wrote (``math.sin`` → ``_ca.sin``)."""
    short = name.removeprefix("math.")
    if short in SAME:
        return f"{MODULE}.{short}"
    found = OTHER.get(short)
    if found is None:
        raise NotImplementedError(f"not supported by CasADi: {name}")
    return found


class CasadiPrinter(PythonCodePrinter):
    """Prints expressions over CasADi ``SX`` scalars (exact float literals, CasADi functions)."""

    def __init__(self) -> None:
        super().__init__({"fully_qualified_modules": True, "standard": "python3"})

    def _print_Symbol(self, expr: sympy.Symbol) -> str:
        return mark_name(super()._print_Symbol(expr))

    def _module_format(self, fqn: str, register: bool = True) -> str:
        return mark_library(_casadi_name(fqn))

    def _call(self, name: str, *args: Any) -> str:
        return f"{mark_library(f'{MODULE}.{name}')}(" + ", ".join(self._print(a) for a in args) + ")"

    def _print_Float(self, expr: sympy.Float) -> str:
        return repr(float(expr))

    def _print_Abs(self, expr: sympy.Abs) -> str:
        return self._call("fabs", expr.args[0])

    def _print_sign(self, expr: sympy.sign) -> str:
        return self._call("sign", expr.args[0])

    def _print_Max(self, expr: sympy.Max) -> str:
        return self._nested("fmax", expr.args)

    def _print_Min(self, expr: sympy.Min) -> str:
        return self._nested("fmin", expr.args)

    def _print_And(self, expr: sympy.And) -> str:
        return self._nested("logic_and", expr.args)

    def _print_Or(self, expr: sympy.Or) -> str:
        return self._nested("logic_or", expr.args)

    def _print_Not(self, expr: sympy.Not) -> str:
        return self._call("logic_not", expr.args[0])

    def _print_Heaviside(self, expr: sympy.Heaviside) -> str:
        # H(a) = 1 for a > 0, 0 for a < 0 and H0 (sympy's default 1/2) at a = 0.
        a = self._print(expr.args[0])
        at_zero = self._print(expr.args[1]) if len(expr.args) > 1 else "0.5"
        choose = mark_library(f"{MODULE}.if_else")
        return f"{choose}({a} > 0, 1.0, {choose}({a} < 0, 0.0, {at_zero}))"

    def _print_Piecewise(self, expr: sympy.Piecewise) -> str:
        # Nested if_else: the first condition that holds picks its value; NaN where none holds.
        text = mark_library(f"{MODULE}.nan")
        for value, condition in reversed(expr.args):
            if condition == sympy.true:
                text = self._print(value)
            else:
                choose = mark_library(f"{MODULE}.if_else")
                text = f"{choose}({self._print(condition)}, {self._print(value)}, {text})"
        return text

    def _nested(self, name: str, args: tuple) -> str:
        """``name(a, name(b, c))`` for a function of any number of arguments."""
        texts = [self._print(a) for a in args]
        text = texts[-1]
        for item in reversed(texts[:-1]):
            text = f"{mark_library(f'{MODULE}.{name}')}({item}, {text})"
        return text

    def expression(self, expr: sympy.Expr) -> str:
        """``expr`` as code, without a redundant pair of outer parentheses."""
        text = strip_parens(self.doprint(expr))
        if self._not_supported:
            raise NotImplementedError(f"not supported by CasADi: {sorted(map(str, self._not_supported))[0]}")
        return text


def _power(base: str, exponent: str) -> tuple[str, int]:
    """A power of printed atoms: ``base**exponent`` (CasADi's ``SX.__pow__``)."""
    return f"{base}**{exponent}", POW


PRINTER = CasadiPrinter()
#: How the graph prints (the graph route): CasADi's functions, ``**`` for powers.
STYLE = Style(PRINTER, scalar=False, power=_power)
#: The one path of the CasADi target: every value an ``SX`` scalar.
PATH = lowering.Path(text=PRINTER.expression, style=STYLE)
