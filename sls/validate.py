"""Checks on the derived terms, before any code is written.

:mod:`sls.model` checks what can be seen in the model itself (names, shapes,
T quadratic in q̇, V free of q̇, forces linear in the inputs). This module
checks what only shows after derivation:

* no derived term contains ``DiracDelta`` or another distribution (the
  derivatives of ``sign`` and ``abs``), which numeric code cannot evaluate
  meaningfully; piecewise terms with finite values (``Heaviside``, ``Max``,
  ``Min``, ``Piecewise``, differentiated piece by piece) are accepted;
* the mass matrix is symmetric positive definite, tested numerically at a
  handful of sampled states (fixed seed, so the verdict is deterministic)
  with the default parameter values (parameters without a default are
  sampled in [0.5, 1.5]).
"""

from __future__ import annotations

import math

import numpy as np
import sympy

from .derive import Dynamics
from .errors import ModelError, brief

#: How many states the mass-matrix check samples.
SAMPLES = 8
#: Smallest accepted ratio of the smallest to the largest eigenvalue of M.
CONDITION_FLOOR = 1e-12

_NONSMOOTH = (sympy.DiracDelta, sympy.SingularityFunction)
_REFUSED = {*_NONSMOOTH, sympy.Derivative, sympy.Subs}


def check_smooth(dynamics: Dynamics) -> None:
    """Refuse derived terms containing ``DiracDelta`` (or another distribution)."""
    terms = {
        "the mass matrix M": dynamics.mass_matrix,
        "dM/dx (M_jac)": dynamics.mass_matrix_jac,
        "the Coriolis matrix C": dynamics.coriolis,
        "dC/dx (C_jac)": dynamics.coriolis_jac,
        "phi = dV/dq": dynamics.potential_gradient,
        "dphi/dx (phi_jac)": dynamics.potential_gradient_jac,
        "fric": dynamics.friction,
        "dfric/dx (fric_jac)": dynamics.friction_jac,
        "the input matrix B_u": dynamics.input_matrix,
        "dB_u/dx": dynamics.input_matrix_jac,
        "the constraints": dynamics.constraint,
        "the constraint Jacobian A": dynamics.constraint_jac,
        "dA/dx": dynamics.constraint_jac_jac,
        "the constraint bias -dA/dt qdot": dynamics.constraint_bias,
        "its Jacobian": dynamics.constraint_bias_jac,
    }
    graph = dynamics.graph
    if graph is not None and not graph.atoms(e for array in terms.values() for e in _flatten(array)) & _REFUSED:
        return  # the graph route: one walk over the shared graph clears every term at once
    for label, array in terms.items():
        for expr in _flatten(array):
            if graph is not None:
                expr = _graph_culprit(graph, expr)
            bad = expr.atoms(*_NONSMOOTH)
            if bad:
                culprit = brief(sorted(map(str, bad))[0], 100)
                raise ModelError(
                    f"{label} contains {culprit}, the derivative of a non-smooth function (sign, abs, ...), "
                    "an impulse with no numeric value; use a smooth form instead, "
                    "e.g. tanh(k*dq) for sign(dq) or sqrt(q**2 + eps**2) for abs(q), "
                    "or Max/Min/Heaviside, which sls differentiates piece by piece"
                )
            unevaluated = expr.atoms(sympy.Derivative, sympy.Subs)
            if unevaluated:
                culprit = brief(sorted(map(str, unevaluated))[0], 100)
                raise ModelError(
                    f"{label} contains {culprit}, a derivative sympy cannot evaluate; "
                    "use functions with closed-form derivatives (sin, cos, exp, log, sqrt, tanh, ...)"
                )


def _graph_culprit(graph: object, node: int) -> sympy.Expr:
    """The first function call under ``node`` sls refuses (as sympy), or ``0`` when there is none."""
    for sub in graph.reachable([node]):
        if graph.kind[sub] == "fn" and graph.payload[sub] in _REFUSED:
            return graph.as_sympy(sub)
    return sympy.Integer(0)


def check_mass_matrix(dynamics: Dynamics, samples: int = SAMPLES) -> None:
    """Refuse a mass matrix that is not symmetric positive definite at sampled states."""
    model = dynamics.model
    n = model.n
    rng = np.random.default_rng(20241121)
    params = [sympy.Symbol(name, real=True) for name in model.params]
    if dynamics.graph is None:
        evaluate = sympy.lambdify([model.state, params], [list(row) for row in dynamics.mass_matrix], modules="math")
    else:
        flat = dynamics.graph.evaluator([e for row in dynamics.mass_matrix for e in row], list(model.state) + params)
        evaluate = lambda state, values: np.reshape(flat(list(state) + list(values)), (n, n))  # noqa: E731
    for _ in range(samples):
        state = np.concatenate([rng.uniform(-math.pi, math.pi, n), rng.uniform(-1.0, 1.0, n)])
        values = [v if v is not None else float(rng.uniform(0.5, 1.5)) for v in model.params.values()]
        try:
            M = np.array(evaluate(state.tolist(), values), dtype=float)
        except (ZeroDivisionError, ValueError, OverflowError):
            continue  # a sample on a coordinate singularity says nothing; others will
        where = ", ".join(f"{s.name}={v:.3g}" for s, v in zip(model.q, state))
        if not np.all(np.isfinite(M)):
            continue
        if not np.allclose(M, M.T, rtol=1e-10, atol=1e-12):
            raise ModelError(f"the mass matrix M is not symmetric at {where}")
        eigenvalues = np.linalg.eigvalsh(M)
        scale = max(abs(eigenvalues[-1]), 1e-300)
        if eigenvalues[0] <= CONDITION_FLOOR * scale:
            kind = "singular" if abs(eigenvalues[0]) <= CONDITION_FLOOR * scale else "indefinite"
            raise ModelError(
                f"the mass matrix M = d2T/ddq2 is {kind}, not positive definite, at {where} "
                f"with the default parameters (smallest eigenvalue {eigenvalues[0]:.3g}); "
                "check T (every velocity must carry kinetic energy) and the parameter values"
            )


def _sampler(dynamics: Dynamics, entries: list):
    """A function of (state, parameter values) evaluating ``entries`` (sympy or graph nodes) as floats."""
    model = dynamics.model
    params = [sympy.Symbol(name, real=True) for name in model.params]
    if dynamics.graph is None:
        return sympy.lambdify([model.state, params], list(entries), modules="math")
    flat = dynamics.graph.evaluator(list(entries), list(model.state) + params)
    return lambda state, values: flat(list(state) + list(values))


def check_constraints(dynamics: Dynamics, samples: int = SAMPLES) -> None:
    """Refuse constraints whose Jacobian ``A`` is rank-deficient at every sampled state, naming a dependent one."""
    model = dynamics.model
    if not model.constrained:
        return
    n, k = model.n, model.k
    evaluate = _sampler(dynamics, [e for row in dynamics.constraint_jac for e in row])
    rng = np.random.default_rng(20241122)
    labels = [f"constraints[{i}]" for i in range(len(model.constraints))]
    labels += [f"velocity_constraints[{i}]" for i in range(len(model.velocity_constraints))]
    deficient = None
    for _ in range(samples):
        state = np.concatenate([rng.uniform(-math.pi, math.pi, n), rng.uniform(-1.0, 1.0, n)])
        values = [v if v is not None else float(rng.uniform(0.5, 1.5)) for v in model.params.values()]
        try:
            A = np.reshape(np.array(evaluate(state.tolist(), values), dtype=float), (k, n))
        except (ZeroDivisionError, ValueError, OverflowError):
            continue
        if not np.all(np.isfinite(A)):
            continue
        if _rank(A) == k:
            return
        deficient = (A, state)
    if deficient is None:
        return
    A, state = deficient
    row = next(i for i in range(k) if _rank(A[: i + 1]) <= i)
    where = ", ".join(f"{s.name}={v:.3g}" for s, v in zip(model.q, state))
    raise ModelError(
        f"the constraints are redundant or dependent: {labels[row]} adds nothing to the rows before it "
        f"(A = [dc/dq; d(velocity constraints)/dqdot] has rank {_rank(A)} < {k} at every sampled state, e.g. {where}); remove it"
    )


def _rank(A: np.ndarray) -> int:
    if A.size == 0:
        return 0
    singular = np.linalg.svd(A, compute_uv=False)
    return int(np.sum(singular > 1e-9 * max(singular[0], 1e-300)))


def check_dynamics(dynamics: Dynamics) -> None:
    """Run every check of this module."""
    check_smooth(dynamics)
    check_mass_matrix(dynamics)
    check_constraints(dynamics)


def _flatten(array: object):
    if isinstance(array, tuple):
        for item in array:
            yield from _flatten(item)
    elif array is not None:
        yield array
