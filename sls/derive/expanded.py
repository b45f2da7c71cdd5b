"""The expanded route: every term as one flat sympy expression, by the classic Christoffel derivation.

For a :class:`~sls.model.Model` with coordinates ``q`` (n), rates ``q̇`` and state ``x = [q; q̇]`` (2n):

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

The most readable code (one formula per entry) and the fastest for small models; its cost grows with the
number of terms of the expanded ``T`` (see :func:`~sls.derive.routes.choose_method`).
"""

from __future__ import annotations

from collections.abc import Collection

import sympy

from sls.algebra.calculus import diff
from sls.derive.constraint_terms import constraint_terms, jacobian
from sls.derive.dynamics import Dynamics
from sls.model import Model, quadratic_terms

ZERO = sympy.Integer(0)


def mass_matrix(model: Model, simplify: bool = False) -> tuple:
    """``M = ∂²T/∂q̇²`` as an (n, n) nested tuple, symmetric by construction.

    With ``simplify``, each entry goes through ``sympy.trigsimp`` (e.g.
    ``sin(q)**2 + cos(q)**2`` → ``1``), so everything derived from ``M`` is
    shorter too.
    """
    n = model.n
    entries: list[list[list[sympy.Expr]]] = [[[] for _ in range(n)] for _ in range(n)]
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
    for col in range(n):
        upper = {(a, b): diff(M[a][b], q[col]) for a in range(n) for b in range(a, n)}
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

    def d2(a: int, b: int, i: int, col: int) -> sympy.Expr:
        key = (min(a, b), max(a, b), min(i, col), max(i, col))
        if key not in second:
            first = dM[key[2]][key[0]][key[1]]
            second[key] = diff(first, q[key[3]]) if first != 0 else ZERO
        return second[key]

    half = sympy.Rational(1, 2)
    jac = [[[None] * (2 * n) for _ in range(n)] for _ in range(n)]
    for k in range(n):
        for j in range(n):
            for col in range(n):
                terms = []
                for i in range(n):
                    # Most second derivatives vanish: build the sum only from the ones that do not.
                    a, b, e = d2(k, j, i, col), d2(k, i, j, col), d2(i, j, k, col)
                    if a != 0 or b != 0 or e != 0:
                        terms.append(half * (a + b - e) * dq[i])
                jac[k][j][col] = sympy.Add(*terms)
                jac[k][j][n + col] = c[col][j][k]
    return tuple(tuple(tuple(row) for row in plane) for plane in jac)


def derive_expanded(model: Model, simplify: bool = False, wanted: Collection[str] | None = None) -> Dynamics:
    """Every term of :class:`Dynamics` as flat expressions (M read off the expanded T).

    ``wanted`` (names of :func:`~sls.derive.named_arrays.function_arrays`, ``None``: all) skips the
    Christoffel symbols, ``∂C/∂x``, ``∂φ/∂x`` and ``∂B_u/∂x`` when no wanted
    array needs them (those fields are then ``None``).
    """
    n, q, dq, x = model.n, model.q, model.dq, model.state

    def needs(*names: str) -> bool:
        return wanted is None or any(name in wanted for name in names)

    M = mass_matrix(model, simplify)
    # The fields nothing wanted needs stay None. Each group of names below is a subset of the one before
    # (C needs ∂M/∂q, ∂C/∂x needs C), hence the nesting.
    skipped: dict = dict.fromkeys(
        ("mass_matrix_jac", "christoffel", "coriolis", "coriolis_jac", "coriolis_force", "coriolis_force_jac"), None
    )
    if needs("M_jac", "dM", "C", "C_jac", "rhs", "tau", "drhs"):
        dM = mass_matrix_derivatives(M, q)
        skipped["mass_matrix_jac"] = tuple(
            tuple(tuple(dM[col][a][b] for col in range(n)) + (ZERO,) * n for b in range(n)) for a in range(n)
        )
        if needs("C", "C_jac", "rhs", "tau", "drhs"):
            c = christoffel(dM)
            C = coriolis(c, dq)
            skipped.update(christoffel=c, coriolis=C)
            skipped["coriolis_force"] = tuple(sympy.Add(*(C[k][j] * dq[j] for j in range(n))) for k in range(n))
            if needs("C_jac", "drhs"):
                C_jac = coriolis_jacobian(dM, c, q, dq)
                # ∂(C q̇)_k/∂q_l = Σ_j ∂C_kj/∂q_l q̇_j and ∂(C q̇)/∂q̇ = 2C (Christoffel symmetry).
                skipped["coriolis_jac"] = C_jac
                skipped["coriolis_force_jac"] = tuple(
                    tuple(sympy.Add(*(C_jac[k][j][col] * dq[j] for j in range(n))) for col in range(n))
                    + tuple(2 * C[k][col] for col in range(n))
                    for k in range(n)
                )
    phi = tuple(diff(model.V, qk) for qk in q)
    if simplify:
        phi = tuple(sympy.trigsimp(entry) for entry in phi)
    phi_jac = None
    if needs("phi_jac", "drhs"):
        upper = tuple(tuple(diff(phi[k], q[col]) if col >= k else None for col in range(n)) for k in range(n))
        phi_jac = tuple(tuple(upper[min(k, col)][max(k, col)] for col in range(n)) + (ZERO,) * n for k in range(n))
    B = tuple(tuple(diff(force, u) for u in model.inputs) for force in model.forces)
    B_jac = None
    if needs("B_u_jac", "drhs"):
        B_jac = tuple(tuple(tuple(diff(b, xl) if b != 0 else ZERO for xl in x) for b in row) for row in B)
    constraints = constraint_terms(model, model.dq)
    skipped.update(
        potential_gradient_jac=phi_jac,
        friction_jac=jacobian(model.fric, x) if needs("fric_jac", "drhs") else None,
        input_matrix_jac=B_jac,
    )
    return Dynamics(
        **constraints,
        **skipped,
        model=model,
        mass_matrix=M,
        potential_gradient=phi,
        friction=model.fric,
        input_matrix=B,
    )
