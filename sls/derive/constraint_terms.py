"""The constraint fields of :class:`~sls.derive.dynamics.Dynamics`: as sympy expressions (the expanded route and
the route of generalized speeds, :func:`constraint_terms`) or as nodes of the expression graph (the graph routes,
:func:`constraint_terms_graph`)."""

from __future__ import annotations

import sympy

from sls.algebra.calculus import diff
from sls.algebra.expressions import symbol
from sls.algebra.graph import Graph
from sls.arrays import nest
from sls.derive.named_arrays import acceleration_symbols, multiplier_symbols
from sls.model import Model
from sls.model.model import STABILIZATION_PARAMETER

ZERO = sympy.Integer(0)


def jacobian(vector: tuple, x: tuple) -> tuple:
    """``∂vector/∂x`` as an (len(vector), len(x)) nested tuple (zero entries stay ``0``)."""
    return tuple(tuple(diff(e, xl) if e != 0 else ZERO for xl in x) for e in vector)


def stabilization_rate(model: Model) -> sympy.Expr:
    """The Baumgarte rate ``ω`` of the constraint bias: the run-time parameter ``constraint_stabilization`` (every
    constrained model has it, :attr:`Model.stabilization` its default), else the model's number."""
    if STABILIZATION_PARAMETER in model.params:
        return symbol(STABILIZATION_PARAMETER)
    return sympy.Float(model.stabilization) if model.stabilization else ZERO


def constraint_terms(model: Model, rates: tuple, S: tuple | None = None) -> dict:
    """``constraint`` (k), ``constraint_jac`` ``A`` (k, n), ``constraint_jac_jac`` (k, n, 2n), ``constraint_bias``
    ``g = −Ȧ v − 2ω A v − ω² c`` (k; ``ω`` the parameter ``constraint_stabilization``) and ``constraint_bias_jac``
    (k, 2n); empty when unconstrained.

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
    omega = stabilization_rate(model)
    bias = []
    for i, w in enumerate(velocity):
        entry = -sympy.Add(*(diff(w, q[col]) * rates[col] for col in range(n)))
        if omega != 0:
            entry -= 2 * omega * w + (omega**2 * holonomic[i] if i < len(holonomic) else ZERO)
        bias.append(entry)
    return {
        "constraint": tuple(holonomic) + tuple(rolling),
        "constraint_jac": tuple(tuple(row) for row in A),
        "constraint_jac_jac": tuple(jacobian(tuple(row), x) for row in A),
        "constraint_bias": tuple(bias),
        "constraint_bias_jac": jacobian(tuple(bias), x),
    }


def constraint_terms_graph(model: Model, graph: Graph, q: list, dq: list, S: list | None = None) -> dict:
    """The constraint fields of :class:`Dynamics` as nodes of ``graph`` (empty when unconstrained).

    ``q`` (n_q) and ``dq`` (n: the speeds ``v``) are symbol nodes; ``S`` (n_q × n nodes) the kinematics
    ``q̇ = S(q) v`` of a model with generalized speeds (``None``: ``v = q̇``). Holonomic rows ``c(q) = 0`` get
    ``A = (∂c/∂q) S``, velocity rows (linear in ``v``) ``A = ∂w/∂v``; the bias ``g = −(∂(A v)/∂q) q̇ − 2ω A v − ω² c``
    (``ω`` the parameter ``constraint_stabilization``, :func:`stabilization_rate`). Their Jacobians over the state
    ``x = [q; v]`` are :func:`constraint_jacobians_graph`'s."""
    if not model.constrained:
        return {}
    n, n_q = len(dq), len(q)
    holonomic = [graph.from_sympy(c) for c in model.constraints]
    rolling = [graph.from_sympy(v) for v in model.velocity_constraints]
    gradients = graph.jacobian(holonomic, q) if holonomic else []
    if S is not None:
        gradients = [
            [graph.add([graph.mul((row[i], S[i][r])) for i in range(n_q) if S[i][r] != graph.zero]) for r in range(n)]
            for row in gradients
        ]
    A = gradients + (graph.jacobian(rolling, dq) if rolling else [])
    velocity = [graph.add(graph.mul((A[i][j], dq[j])) for j in range(n)) for i in range(len(holonomic))] + rolling
    rates = dq if S is None else [graph.add([graph.mul((S[i][r], dq[r])) for r in range(n)]) for i in range(n_q)]
    convective = graph.forward(velocity, dict(zip(q, rates)))
    bias = [graph.neg(e) for e in convective]
    omega = stabilization_rate(model)
    if omega != 0:
        rate = graph.from_sympy(omega)
        two_omega, omega2 = graph.mul((graph.number(2), rate)), graph.mul((rate, rate))
        for i, v in enumerate(velocity):
            terms = [bias[i], graph.neg(graph.mul((two_omega, v)))]
            if i < len(holonomic):
                terms.append(graph.neg(graph.mul((omega2, holonomic[i]))))
            bias[i] = graph.add(terms)
    A_flat = [e for row in A for e in row]
    return {
        "constraint": tuple(holonomic + rolling),
        "constraint_jac": nest(A_flat, (len(A), n)),
        "constraint_bias": tuple(bias),
    }


def constraint_jacobians_graph(graph: Graph, terms: dict, along: list, x: list) -> dict:
    """``constraint_jac_jac`` (k, n, len(x)) and ``constraint_bias_jac`` (k, len(x)) of the graph routes' constraint
    ``terms`` (:func:`constraint_terms_graph`, a robot's contacts): ``A`` differentiated along each node of ``along``
    (the coordinates, or the whole state; ``A`` depends on the coordinates alone, its other columns zero), ``g``
    along ``x``. Only the constraint functions' own Jacobians need them: the constrained derivatives never do
    (:meth:`~sls.derive.graph_route.GraphTerms._kkt_jac`)."""
    if not terms:
        return {}
    A, bias = terms["constraint_jac"], terms["constraint_bias"]
    k, n = len(A), len(A[0]) if A else 0
    A_flat = [e for row in A for e in row]
    dA = [graph.forward(A_flat, {node: graph.one}) for node in along]
    return {
        "constraint_jac_jac": nest(
            [dA[col][r] if col < len(along) else graph.zero for r in range(k * n) for col in range(len(x))],
            (k, n, len(x)),
        ),
        "constraint_bias_jac": nest([e for row in graph.jacobian(list(bias), x) for e in row], (k, len(x))),
    }


def kkt_jacobian_graph(graph: Graph, terms: dict, residual_jac: list, q: list, x: list) -> list:
    """``kkt_jac``: ``∂/∂x [r − Aᵀλ; A a − g]`` ((n + k) rows of ``len(x)`` nodes) at fixed accelerations ``a``,
    multipliers ``λ`` (:func:`~sls.derive.named_arrays.multiplier_symbols`) and inputs, from the graph routes'
    constraint ``terms`` and ``residual_jac`` (``∂r/∂x``, n rows): ``residual_jac`` less the derivative of the
    constraint forces ``Aᵀλ`` (forward mode along each coordinate ``q``: ``A`` depends on them alone), then one
    reverse pass per constraint row. Neither ``∂M/∂q`` nor ``∂A/∂x`` is formed: the constraint forces enter as
    external forces of the inverse dynamics, as in Pinocchio's ``computeConstraintDynamicsDerivatives``. A
    quaternion base's columns are derivatives along its coordinates (through ``S(q)`` the tangent ones, as
    ``residual_jac``'s)."""
    A, bias = terms["constraint_jac"], terms["constraint_bias"]
    k, n, zero = len(A), len(residual_jac), graph.zero
    lam = [graph.symbol(s) for s in multiplier_symbols(k)]
    a = [graph.symbol(s) for s in acceleration_symbols(n)]
    forces = [graph.add([graph.mul((A[i][j], lam[i])) for i in range(k) if A[i][j] != zero]) for j in range(n)]
    by_coordinate = [graph.forward(forces, {coordinate: graph.one}) for coordinate in q]
    rows = [
        [graph.sub(entry, by_coordinate[col][j]) if col < len(q) else entry for col, entry in enumerate(row)]
        for j, row in enumerate(residual_jac)
    ]
    accelerations = [
        graph.sub(graph.add([graph.mul((A[i][j], a[j])) for j in range(n) if A[i][j] != zero]), bias[i])
        for i in range(k)
    ]
    return rows + [graph.gradient(e, x) for e in accelerations]
