"""The constraint fields of :class:`~sls.derive.dynamics.Dynamics` as sympy expressions (the expanded route and
the route of generalized speeds): :func:`constraint_terms`."""

from __future__ import annotations

import sympy

from sls.algebra.calculus import diff
from sls.model import Model

ZERO = sympy.Integer(0)


def jacobian(vector: tuple, x: tuple) -> tuple:
    """``∂vector/∂x`` as an (len(vector), len(x)) nested tuple (zero entries stay ``0``)."""
    return tuple(tuple(diff(e, xl) if e != 0 else ZERO for xl in x) for e in vector)


def constraint_terms(model: Model, rates: tuple, S: tuple | None = None) -> dict:
    """``constraint`` (k), ``constraint_jac`` ``A`` (k, n), ``constraint_jac_jac`` (k, n, 2n), ``constraint_bias``
    ``g = −Ȧ v − 2ω A v − ω² c`` (k) and ``constraint_bias_jac`` (k, 2n); empty when unconstrained.

    ``rates`` is ``q̇`` (n) in the state's velocities ``v`` (the model's ``dq``): the rates themselves, or the
    kinematics ``S(q) v`` of a model with generalized speeds, whose holonomic rows are then ``(∂c/∂q) S``
    (``S`` (n, n) the kinematic matrix; ``None``: the identity). Velocity constraints are linear in ``v``.
    """
    if not model.constrained:
        return {}
    n, q, v, x = model.n, model.q, model.dq, model.state
    holonomic, rolling = model.constraints, model.velocity_constraints
    gradients = [[diff(c, qj) for qj in q] for c in holonomic]
    if S is not None:
        gradients = [[sympy.Add(*(row[i] * S[i][k] for i in range(n))) for k in range(n)] for row in gradients]
    A = gradients + [[diff(w, vj) for vj in v] for w in rolling]
    velocity = [sympy.Add(*(A[i][j] * v[j] for j in range(n))) for i in range(len(holonomic))] + list(rolling)
    omega = sympy.Float(model.stabilization)
    bias = []
    for i, w in enumerate(velocity):
        entry = -sympy.Add(*(diff(w, q[col]) * rates[col] for col in range(n)))
        if model.stabilization:
            entry -= 2 * omega * w + (omega**2 * holonomic[i] if i < len(holonomic) else ZERO)
        bias.append(entry)
    return {
        "constraint": tuple(holonomic) + tuple(rolling),
        "constraint_jac": tuple(tuple(row) for row in A),
        "constraint_jac_jac": tuple(jacobian(tuple(row), x) for row in A),
        "constraint_bias": tuple(bias),
        "constraint_bias_jac": jacobian(tuple(bias), x),
    }
