"""The symbolic results as sympy matrices: ``sls.symbolic(model)``.

For users who want the equations of motion themselves — to print them in
LaTeX, to check them against a textbook, or to go on with sympy — rather than
(or besides) the generated numpy code::

    eom = sls.symbolic(sls.load_example("cart_pole"))
    eom.M, eom.C, eom.phi, eom.fric, eom.B_u     # sympy.Matrix
    sympy.latex(eom.M)

The expressions are over the model's symbols, ``sympy.Symbol(name, real=True)``
(``eom.symbols["th"]``); sympy tells symbols apart by their assumptions, so
substitute with those, not with a plain ``sympy.Symbol("th")``.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from sls.derive.routes import derive
from sls.errors import ModelTypeError
from sls.model import Model

__all__ = ["Symbolic", "symbolic"]


@dataclass(frozen=True)
class Symbolic:
    """The equations of motion ``M(q) q̈ + C(q, q̇) q̇ + φ(q) + fric(q, q̇) = B_u(x) u``, symbolically.

    ``M`` (n×n), ``C`` (n×n), ``phi`` (n×1), ``fric`` (n×1) and ``B_u`` (n×m)
    are ``sympy.Matrix``; ``q``, ``dq``, ``x`` (``q`` then ``dq``) and ``u``
    are column matrices of the model's symbols; ``T`` and ``V`` the energies;
    ``params`` the parameter defaults (``None``: no default).
    """

    M: sympy.Matrix
    C: sympy.Matrix
    phi: sympy.Matrix
    fric: sympy.Matrix
    B_u: sympy.Matrix
    q: sympy.Matrix
    dq: sympy.Matrix
    u: sympy.Matrix
    T: sympy.Expr
    V: sympy.Expr
    params: dict

    @property
    def x(self) -> sympy.Matrix:
        """The state ``[q; q̇]``."""
        return self.q.col_join(self.dq)

    @property
    def symbols(self) -> dict:
        """Every symbol by name: states, inputs and parameters."""
        found = set(self.x) | set(self.u) | self.T.free_symbols | self.V.free_symbols
        for matrix in (self.M, self.C, self.phi, self.fric, self.B_u):
            found |= matrix.free_symbols
        return {s.name: s for s in sorted(found, key=lambda s: s.name)}

    def equations(self, qddot: sympy.Matrix | None = None) -> sympy.Matrix:
        """``M q̈ + C q̇ + φ + fric − B_u u`` (zero along every motion); ``qddot`` defaults to symbols ``ddq1 …``."""
        if qddot is None:
            qddot = sympy.Matrix([sympy.Symbol(f"dd{s.name}", real=True) for s in self.q])
        return self.M * qddot + self.C * self.dq + self.phi + self.fric - self.B_u * self.u


def symbolic(model: Model, *, simplify: bool = False) -> Symbolic:
    """Derive ``M``, ``C``, ``φ``, ``fric`` and ``B_u`` of ``model`` as sympy matrices.

    ``model`` comes from :func:`sls.load_toml`, :func:`sls.load_python`,
    :func:`sls.load_example`, :func:`sls.model_from_strings` or
    :func:`sls.model_from_sympy`. ``simplify`` runs ``trigsimp`` on ``M`` and
    ``φ`` first, as ``sls generate --simplify`` does. The same derivation as
    the generated code (the generated functions evaluate these matrices).
    """
    if not isinstance(model, Model):
        raise ModelTypeError(
            "symbolic: expected a model (sls.load_toml, sls.load_example, sls.model_from_sympy, ...), "
            f"got {type(model).__name__}"
        )
    dynamics = derive(model, simplify)

    def matrix(rows: tuple, columns: int | None = None) -> sympy.Matrix:
        rows = dynamics.as_sympy(rows)  # the graph route's nodes as sympy expressions
        if columns is None:
            return sympy.Matrix(rows)
        return sympy.Matrix(len(rows), columns, [e for row in rows for e in row])

    n, m = model.n, model.m
    return Symbolic(
        M=matrix(dynamics.mass_matrix, n),
        C=matrix(dynamics.coriolis, n),
        phi=matrix(dynamics.potential_gradient),
        fric=matrix(dynamics.friction),
        B_u=matrix(dynamics.input_matrix, m),
        q=sympy.Matrix(model.q),
        dq=sympy.Matrix(model.dq),
        u=sympy.Matrix(model.inputs),
        T=model.T,
        V=model.V,
        params=dict(model.params),
    )
