"""Equations of motion in generalized speeds (Boltzmann–Hamel): ``M(q) v̇ + C(q, v) v + φ(q) = Q_v``.

With coordinates ``q`` (n_q), speeds ``v`` (n_v) and kinematics ``q̇ = S(q) v``
(:class:`~sls.model.kinematics.Kinematics`), the kinetic energy written in
the speeds ``T(q, v) = ½ vᵀ M(q) v`` and the potential energy ``V(q)``:

* ``M = ∂²T/∂v²`` (n_v, n_v), the momentum ``p = ∂T/∂v = M v``;
* ``X_r f = Σ_k S_kr ∂f/∂q_k``, the derivative along the r-th column of ``S``
  (for ``S = I`` just ``∂f/∂q_r``);
* ``φ = Sᵀ ∂V/∂q`` (``φ_r = X_r V``); forces in coordinate space map the same
  way (:func:`speed_components`);
* ``h = C v = Ṁ v + Γ(v)ᵀ p − Sᵀ ∂T/∂q`` with ``Ṁ = Σ_r (X_r M) v_r`` and
  ``Γ(v)[j][k] = Σ_b γ^j_kb v_b``, i.e. ``h_k = (Ṁ v)_k + Σ_jb γ^j_kb v_b p_j − X_k T``,
  where ``γ^j_ab`` are the structure coefficients ``[s_a, s_b] = Σ_j γ^j_ab s_j``
  of the Lie bracket ``[s_a, s_b] = (∂s_b/∂q) s_a − (∂s_a/∂q) s_b``.

Sign check (the tests verify it): a rigid body with body angular velocity
``v = ω`` has ``γ^j_ab = ε_abj``, so ``Γ(ω)ᵀ p = ω × Iω`` and the equations are
Euler's ``I ω̇ + ω × Iω = 0``.

Derivation (square ``S``, ``W = S⁻¹``): Lagrange's equations for
``L*(q, q̇) = T(q, W q̇) − V``, multiplied by ``Sᵀ``, give the above, using
``Σ_kl S_ka S_lb (∂W_jk/∂q_l − ∂W_jl/∂q_k) = −(W [s_b, s_a])_j`` (from ``W S = I``).
For ``n_v < n_q`` (and again for square ``S``) d'Alembert's principle projected
on the columns of ``S`` (Kane's method) gives the same: a point ``r(q)`` of mass
``m`` has partial velocities ``V_r = (∂r/∂q) s_r`` and
``m a·V_r = d/dt(∂T/∂v_r) − X_r T − m ṙ·Σ_b v_b (X_b V_r − X_r V_b)`` with
``X_b V_r − X_r V_b = (∂r/∂q)[s_b, s_r]``. When every bracket stays in the span
of ``S`` (``[s_b, s_r] = Σ_j γ^j_br s_j``, checked by
:func:`~sls.model.kinematics.structure_coefficients`) the last term is
``Σ_jb γ^j_rb v_b p_j``, fixed by ``T(q, v)`` alone and the same for every left
inverse ``W``; otherwise (nonholonomic ``S``) it is not, and such kinematics are refused.

The Coriolis matrix is ``C = C⁰ + G`` with

* ``C⁰_kj = Σ_i c_ijk v_i``, ``c_ijk = ½(X_i M_kj + X_j M_ki − X_k M_ij)`` (the
  Christoffel symbols with frame derivatives; for ``S = I`` the classic ones,
  expression for expression), so ``Ṁ − 2C⁰`` is skew-symmetric;
* ``G = Γ(v)ᵀ M − M Γ(v)``, skew-symmetric, with ``G v = Γ(v)ᵀ p`` (since
  ``Γ(v) v = 0`` by the antisymmetry of ``γ``),

so ``C v = h`` and ``Ṁ − 2C`` is skew-symmetric (``vᵀ(Ṁ − 2C)v = 0``: the power balance).

Array conventions: nested tuples of sympy expressions, as :mod:`sls.derive`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy

from sls.algebra.calculus import diff
from sls.derive.expanded import christoffel
from sls.model import quadratic_terms
from sls.model.kinematics import Kinematics, directional

ZERO = sympy.Integer(0)


@dataclass(frozen=True)
class SpeedDynamics:
    """The speed-space terms of ``M(q) v̇ + C(q, v) v + φ(q) = Q_v`` (n_v speeds).

    ``mass_matrix`` (n_v, n_v); ``frame_derivatives`` (n_v, n_v, n_v) with
    ``[r][a][b] = X_r M_ab``; ``christoffel`` (n_v, n_v, n_v) with
    ``[i][j][k] = c_ijk``; ``gyroscopic`` (n_v, n_v) = ``G``, skew;
    ``coriolis`` (n_v, n_v) = ``C = C⁰ + G``; ``coriolis_force`` (n_v) = ``C v``;
    ``potential_gradient`` (n_v) = ``φ = Sᵀ ∂V/∂q``. See the module docstring.
    """

    kinematics: Kinematics
    mass_matrix: tuple
    frame_derivatives: tuple
    christoffel: tuple
    gyroscopic: tuple
    coriolis: tuple
    coriolis_force: tuple
    potential_gradient: tuple


def speed_dynamics(T: sympy.Expr, V: sympy.Expr, kinematics: Kinematics, simplify: bool = False) -> SpeedDynamics:
    """Every term of :class:`SpeedDynamics` for ``T(q, v)`` and ``V(q)`` under ``kinematics``.

    ``T`` must be a homogeneous quadratic form in the speeds
    (:class:`~sls.errors.ModelError` otherwise). ``simplify`` applies
    ``sympy.trigsimp`` to ``M`` and ``φ`` (as :func:`sls.derive.derive` does).
    For ``v = q̇`` (``S = I``) every array equals the classic derivation's,
    expression for expression.
    """
    v = kinematics.v
    T, V = sympy.sympify(T), sympy.sympify(V)
    M = speed_mass_matrix(T, v, simplify)
    dM = mass_matrix_frame_derivatives(M, kinematics)
    c = frame_christoffel(dM)
    G = gyroscopic_matrix(kinematics.structure, M, v)
    C = coriolis_matrix(c, G, v)
    phi = potential_forces(V, kinematics)
    if simplify:
        phi = tuple(sympy.trigsimp(entry) for entry in phi)
    n = len(v)
    h = tuple(sympy.Add(*(C[k][j] * v[j] for j in range(n))) for k in range(n))
    return SpeedDynamics(
        kinematics=kinematics,
        mass_matrix=M,
        frame_derivatives=dM,
        christoffel=c,
        gyroscopic=G,
        coriolis=C,
        coriolis_force=h,
        potential_gradient=phi,
    )


def speed_mass_matrix(T: sympy.Expr, v: Sequence[sympy.Symbol], simplify: bool = False) -> tuple:
    """``M = ∂²T/∂v²`` (n_v, n_v), read off the quadratic form ``T = ½ vᵀ M v`` term by term; symmetric.

    Raises :class:`~sls.errors.ModelError` naming a term of ``T`` that is not
    quadratic in ``v``. ``simplify``: ``sympy.trigsimp`` on each entry.
    """
    n = len(v)
    entries: list[list[list[sympy.Expr]]] = [[[] for _ in range(n)] for _ in range(n)]
    for coefficient, i, j in quadratic_terms(T, tuple(v)):
        entries[i][j].append(2 * coefficient if i == j else coefficient)
    tidy = sympy.trigsimp if simplify else (lambda expr: expr)
    upper = [[tidy(sympy.Add(*entries[i][j])) if j >= i else None for j in range(n)] for i in range(n)]
    return tuple(tuple(upper[min(i, j)][max(i, j)] for j in range(n)) for i in range(n))


def frame_derivative(expr: sympy.Expr, kinematics: Kinematics, r: int) -> sympy.Expr:
    """``X_r expr = Σ_k S_kr ∂expr/∂q_k``: the derivative along the r-th speed's direction."""
    column = tuple(row[r] for row in kinematics.S)
    return directional(expr, column, kinematics.q)


def mass_matrix_frame_derivatives(M: tuple, kinematics: Kinematics) -> tuple:
    """``dM[r][a][b] = X_r M_ab`` (n_v, n_v, n_v), symmetric in ``a, b`` (each pair differentiated once)."""
    n = len(M)
    result = []
    for r in range(n):
        upper = {(a, b): frame_derivative(M[a][b], kinematics, r) for a in range(n) for b in range(a, n)}
        result.append(tuple(tuple(upper[min(a, b), max(a, b)] for b in range(n)) for a in range(n)))
    return tuple(result)


def frame_christoffel(dM: tuple) -> tuple:
    """``c[i][j][k] = c_ijk = ½(X_i M_kj + X_j M_ki − X_k M_ij)`` (n_v, n_v, n_v), symmetric in ``i, j``.

    ``dM[r][a][b] = X_r M_ab`` (:func:`mass_matrix_frame_derivatives`): the classic formula
    (:func:`sls.derive.expanded.christoffel`) on the derivatives along the columns of ``S``.
    """
    return christoffel(dM)


def structure_matrix(structure: tuple, v: Sequence[sympy.Symbol]) -> tuple:
    """``Γ(v)[j][k] = Σ_b γ^j_kb v_b`` (n_v, n_v), with ``structure[j][k][b] = γ^j_kb``; ``Γ(v) v = 0``."""
    n = len(v)
    return tuple(
        tuple(sympy.Add(*(structure[j][k][b] * v[b] for b in range(n) if structure[j][k][b] != 0)) for k in range(n))
        for j in range(n)
    )


def gyroscopic_matrix(structure: tuple, M: tuple, v: Sequence[sympy.Symbol]) -> tuple:
    """``G = Γ(v)ᵀ M − M Γ(v)`` (n_v, n_v): skew-symmetric, ``G v = Γ(v)ᵀ M v``; zero when every ``γ`` is.

    ``structure[j][k][b] = γ^j_kb`` (:attr:`Kinematics.structure`), ``M`` the
    mass matrix, ``Γ`` as in :func:`structure_matrix`.
    """
    n = len(v)
    Gamma = structure_matrix(structure, v)

    def entry(k: int, col: int) -> sympy.Expr:
        terms = [Gamma[j][k] * M[j][col] for j in range(n) if Gamma[j][k] != 0 and M[j][col] != 0]
        terms += [-M[k][j] * Gamma[j][col] for j in range(n) if M[k][j] != 0 and Gamma[j][col] != 0]
        return sympy.Add(*terms)

    upper = {(k, col): entry(k, col) for k in range(n) for col in range(k + 1, n)}
    return tuple(
        tuple(ZERO if k == col else upper[k, col] if k < col else -upper[col, k] for col in range(n)) for k in range(n)
    )


def coriolis_matrix(c: tuple, G: tuple, v: Sequence[sympy.Symbol]) -> tuple:
    """``C_kj = Σ_i c_ijk v_i + G_kj`` (n_v, n_v), from :func:`frame_christoffel` and :func:`gyroscopic_matrix`."""
    n = len(v)
    return tuple(tuple(sympy.Add(*(c[i][j][k] * v[i] for i in range(n))) + G[k][j] for j in range(n)) for k in range(n))


def mass_matrix_rate(dM: tuple, v: Sequence[sympy.Symbol]) -> tuple:
    """``Ṁ = Σ_r (X_r M) v_r`` (n_v, n_v) along a motion, from ``dM[r][a][b] = X_r M_ab``."""
    n = len(v)
    return tuple(tuple(sympy.Add(*(dM[r][a][b] * v[r] for r in range(n))) for b in range(n)) for a in range(n))


def potential_forces(V: sympy.Expr, kinematics: Kinematics) -> tuple:
    """``φ = Sᵀ ∂V/∂q`` (n_v): ``φ_r = X_r V``."""
    return tuple(frame_derivative(V, kinematics, r) for r in range(kinematics.n_v))


def speed_components(forces: Sequence[sympy.Expr], kinematics: Kinematics) -> tuple:
    """``Sᵀ Q`` (n_v) of generalized forces ``Q`` (n_q) given in coordinate space (the power ``Qᵀq̇ = (SᵀQ)ᵀv``)."""
    S = kinematics.S
    return tuple(
        sympy.Add(*(S[k][r] * forces[k] for k in range(kinematics.n_q) if S[k][r] != 0)) for r in range(kinematics.n_v)
    )


def velocity_forces(T: sympy.Expr, kinematics: Kinematics) -> tuple:
    """``h = (∂p/∂q) S v + Γ(v)ᵀ p − Sᵀ ∂T/∂q`` (n_v) straight from the momentum ``p = ∂T/∂v``.

    Equal to ``C v`` of :func:`coriolis_matrix` (another route to the same
    vector: one directional derivative of ``p`` instead of ``∂M/∂q``), the
    form a graph route can take.
    """
    q, v, n = kinematics.q, kinematics.v, kinematics.n_v
    p = [diff(T, s) for s in v]
    q_dot = [sympy.Add(*(row[r] * v[r] for r in range(n) if row[r] != 0)) for row in kinematics.S]
    Gamma = structure_matrix(kinematics.structure, v)
    return tuple(
        directional(p[k], q_dot, q)
        + sympy.Add(*(Gamma[j][k] * p[j] for j in range(n) if Gamma[j][k] != 0))
        - frame_derivative(T, kinematics, k)
        for k in range(n)
    )
