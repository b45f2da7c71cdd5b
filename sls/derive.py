"""Stage 2: derive the symbolic terms of the equations of motion.

For a :class:`~sls.model.Model` with coordinates ``q`` (n), rates ``q̇`` and
state ``x = [q; q̇]`` (2n), the equations of motion are

.. math::

    M(q)\\,\\ddot q + C(q, \\dot q)\\,\\dot q + \\varphi(q) = B_u(x)\\,u - f(x)

with

* ``M = ∂²T/∂q̇²`` — read off the quadratic form ``T = ½ q̇ᵀ M q̇`` term by
  term (exactly the Hessian, without differentiating),
* ``c_ijk = ½(∂M_kj/∂q_i + ∂M_ki/∂q_j − ∂M_ij/∂q_k)`` — Christoffel symbols
  of the first kind, symmetric in ``i, j``,
* ``C_kj = Σ_i c_ijk q̇_i`` — the Coriolis matrix, so that ``Ṁ − 2C`` is
  skew-symmetric,
* ``φ = ∂V/∂q``, ``f = fric``, ``B_u = ∂forces/∂u`` (``I`` when fully actuated).

Jacobians with respect to ``x`` are taken with what is known in closed form:
``∂M/∂q̇ = 0``, ``∂C_kj/∂q̇_l = c_ljk``, ``∂φ/∂q̇ = 0``, and ``M`` symmetric,
so only ``∂M/∂q`` and ``∂²M/∂q∂q`` (symmetric pairs) are differentiated.

Array conventions: nested tuples of sympy expressions, the last index of a
Jacobian is the state index (``jac[...][l] = ∂(...)/∂x_l``).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from .model import Model, quadratic_terms

ZERO = sympy.Integer(0)


@dataclass(frozen=True)
class Dynamics:
    """Every symbolic term sls generates code for.

    Shapes (n degrees of freedom, m inputs): ``mass_matrix`` (n, n),
    ``mass_matrix_jac`` (n, n, 2n), ``christoffel`` (n, n, n) with
    ``christoffel[i][j][k] = c_ijk``, ``coriolis`` (n, n), ``coriolis_jac``
    (n, n, 2n), ``coriolis_force = C q̇`` (n), ``coriolis_force_jac`` (n, 2n),
    ``potential_gradient = φ`` (n), ``potential_gradient_jac`` (n, 2n),
    ``friction`` (n), ``friction_jac`` (n, 2n), ``input_matrix = B_u``
    (n, m), ``input_matrix_jac`` (n, m, 2n).
    """

    model: Model
    mass_matrix: tuple
    mass_matrix_jac: tuple
    christoffel: tuple
    coriolis: tuple
    coriolis_jac: tuple
    coriolis_force: tuple
    coriolis_force_jac: tuple
    potential_gradient: tuple
    potential_gradient_jac: tuple
    friction: tuple
    friction_jac: tuple
    input_matrix: tuple
    input_matrix_jac: tuple


def mass_matrix(model: Model, simplify: bool = False) -> tuple:
    """``M = ∂²T/∂q̇²`` as an (n, n) nested tuple, symmetric by construction.

    With ``simplify``, each entry goes through ``sympy.trigsimp`` (e.g.
    ``sin(q)**2 + cos(q)**2`` → ``1``), so everything derived from ``M`` is
    shorter too.
    """
    n = model.n
    entries = [[[] for _ in range(n)] for _ in range(n)]
    for coefficient, i, j in quadratic_terms(model.T, model.dq):
        if i == j:
            entries[i][i].append(2 * coefficient)
        else:
            entries[i][j].append(coefficient)
    tidy = sympy.trigsimp if simplify else (lambda expr: expr)
    upper = [[tidy(sympy.Add(*entries[i][j])) if j >= i else None for j in range(n)] for i in range(n)]
    return tuple(tuple(upper[min(i, j)][max(i, j)] for j in range(n)) for i in range(n))


def mass_matrix_derivatives(M: tuple, q: tuple) -> tuple:
    """``dM[l][a][b] = ∂M_ab/∂q_l``, shape (n, n, n), symmetric in ``a, b``."""
    n = len(q)
    result = []
    for l in range(n):
        upper = {(a, b): sympy.diff(M[a][b], q[l]) for a in range(n) for b in range(a, n)}
        result.append(tuple(tuple(upper[min(a, b), max(a, b)] for b in range(n)) for a in range(n)))
    return tuple(result)


def christoffel(dM: tuple) -> tuple:
    """Christoffel symbols of the first kind, ``c[i][j][k] = c_ijk``, shape (n, n, n).

    ``c_ijk = ½(∂M_kj/∂q_i + ∂M_ki/∂q_j − ∂M_ij/∂q_k)`` with ``dM[l][a][b] =
    ∂M_ab/∂q_l``; symmetric in ``i, j``.
    """
    n = len(dM)
    half = sympy.Rational(1, 2)
    cache = {}
    for i in range(n):
        for j in range(i, n):
            for k in range(n):
                cache[i, j, k] = half * (dM[i][k][j] + dM[j][k][i] - dM[k][i][j])
    return tuple(tuple(tuple(cache[min(i, j), max(i, j), k] for k in range(n)) for j in range(n)) for i in range(n))


def coriolis(c: tuple, dq: tuple) -> tuple:
    """Coriolis matrix ``C_kj = Σ_i c_ijk q̇_i``, shape (n, n)."""
    n = len(dq)
    return tuple(tuple(sympy.Add(*(c[i][j][k] * dq[i] for i in range(n))) for j in range(n)) for k in range(n))


def coriolis_jacobian(dM: tuple, c: tuple, q: tuple, dq: tuple) -> tuple:
    """``∂C_kj/∂x_l``, shape (n, n, 2n).

    For ``l < n``: ``Σ_i ½(∂²M_kj/∂q_i∂q_l + ∂²M_ki/∂q_j∂q_l − ∂²M_ij/∂q_k∂q_l) q̇_i``
    with the second derivatives taken once per symmetric pair; for the
    velocity part ``∂C_kj/∂q̇_l = c_ljk``.
    """
    n = len(q)
    second = {}

    def d2(a: int, b: int, i: int, l: int) -> sympy.Expr:
        key = (min(a, b), max(a, b), min(i, l), max(i, l))
        if key not in second:
            first = dM[key[2]][key[0]][key[1]]
            second[key] = sympy.diff(first, q[key[3]]) if first != 0 else ZERO
        return second[key]

    half = sympy.Rational(1, 2)
    jac = [[[None] * (2 * n) for _ in range(n)] for _ in range(n)]
    for k in range(n):
        for j in range(n):
            for l in range(n):
                terms = []
                for i in range(n):
                    # Most second derivatives vanish: build the sum only from the ones that do not.
                    a, b, e = d2(k, j, i, l), d2(k, i, j, l), d2(i, j, k, l)
                    if a != 0 or b != 0 or e != 0:
                        terms.append(half * (a + b - e) * dq[i])
                jac[k][j][l] = sympy.Add(*terms)
                jac[k][j][n + l] = c[l][j][k]
    return tuple(tuple(tuple(row) for row in plane) for plane in jac)


def jacobian(vector: tuple, x: tuple) -> tuple:
    """``J[a][l] = ∂vector_a/∂x_l``, shape (len(vector), len(x))."""
    return tuple(tuple(sympy.diff(entry, xl) if entry != 0 else ZERO for xl in x) for entry in vector)


def derive(model: Model, simplify: bool = False) -> Dynamics:
    """Derive every term of :class:`Dynamics` for ``model``.

    ``simplify`` applies ``sympy.trigsimp`` to ``M`` and ``φ`` before anything
    is differentiated further (off by default: it is exact but can be slow
    for large models).
    """
    n, q, dq, x = model.n, model.q, model.dq, model.state
    M = mass_matrix(model, simplify)
    dM = mass_matrix_derivatives(M, q)
    c = christoffel(dM)
    C = coriolis(c, dq)
    C_jac = coriolis_jacobian(dM, c, q, dq)
    h = tuple(sympy.Add(*(C[k][j] * dq[j] for j in range(n))) for k in range(n))
    # ∂(C q̇)_k/∂q_l = Σ_j ∂C_kj/∂q_l q̇_j and ∂(C q̇)/∂q̇ = 2C (Christoffel symmetry).
    h_jac = tuple(
        tuple(sympy.Add(*(C_jac[k][j][l] * dq[j] for j in range(n))) for l in range(n)) + tuple(2 * C[k][l] for l in range(n))
        for k in range(n)
    )
    M_jac = tuple(tuple(tuple(dM[l][a][b] for l in range(n)) + (ZERO,) * n for b in range(n)) for a in range(n))
    phi = tuple(sympy.diff(model.V, qk) for qk in q)
    if simplify:
        phi = tuple(sympy.trigsimp(entry) for entry in phi)
    phi_jac = tuple(tuple(sympy.diff(phi[k], q[l]) if l >= k else None for l in range(n)) for k in range(n))
    phi_jac = tuple(
        tuple(phi_jac[min(k, l)][max(k, l)] for l in range(n)) + (ZERO,) * n for k in range(n)
    )
    B = tuple(tuple(sympy.diff(force, u) for u in model.inputs) for force in model.forces)
    B_jac = tuple(tuple(tuple(sympy.diff(b, xl) if b != 0 else ZERO for xl in x) for b in row) for row in B)
    return Dynamics(
        model=model,
        mass_matrix=M,
        mass_matrix_jac=M_jac,
        christoffel=c,
        coriolis=C,
        coriolis_jac=C_jac,
        coriolis_force=h,
        coriolis_force_jac=h_jac,
        potential_gradient=phi,
        potential_gradient_jac=phi_jac,
        friction=model.fric,
        friction_jac=jacobian(model.fric, x),
        input_matrix=B,
        input_matrix_jac=B_jac,
    )
