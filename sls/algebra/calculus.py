"""Differentiation as sls takes it: ``Heaviside`` (and so ``Max``, ``Min``) piece by piece.

Used by the checks of :mod:`sls.model` and by the derivation of :mod:`sls.derive`, so it sits
below both.
"""

from __future__ import annotations

import sympy

ZERO = sympy.Integer(0)


class _PiecewiseStep(sympy.Function):
    """Stands for ``Heaviside(a, H0)`` while differentiating: its derivative is zero away from the switch."""

    nargs = 2

    def fdiff(self, argindex: int = 1) -> sympy.Expr:
        return ZERO


def diff(expr: sympy.Expr, s: sympy.Symbol) -> sympy.Expr:
    """``∂expr/∂s``, with ``Heaviside`` (and so ``Max``, ``Min``) differentiated piece by piece.

    sympy differentiates ``Heaviside`` into ``DiracDelta``, an impulse with no
    numeric value. The generated Jacobians are those of the smooth pieces
    instead (what a finite difference sees away from the switch), so
    contact-style laws such as ``k*Max(0, -y)**2`` keep finite derivatives;
    ``sign`` and ``abs`` keep sympy's derivatives (and are refused where they
    give a ``DiracDelta``, see :mod:`sls.derive.validate`).
    """
    if not expr.has(sympy.Heaviside):
        return sympy.diff(expr, s)
    steps = {h: _PiecewiseStep(*h.args) for h in expr.atoms(sympy.Heaviside)}
    result = sympy.diff(expr.xreplace(steps), s)
    return result.xreplace({h: sympy.Heaviside(*h.args) for h in result.atoms(_PiecewiseStep)})
