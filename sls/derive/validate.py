"""Checks on the derived terms, before any code is written.

:mod:`sls.model` checks what can be seen in the model itself (names, shapes,
T quadratic in q̇, V free of q̇, forces linear in the inputs). This module
checks what only shows after derivation:

* no derived term contains ``DiracDelta`` or another distribution (the
  derivatives of ``sign`` and ``abs``), which numeric code cannot evaluate
  meaningfully; piecewise terms with finite values (``Heaviside``, ``Max``,
  ``Min``, ``Piecewise``, differentiated piece by piece) are accepted;
* the mass matrix is symmetric positive definite (for a constrained model:
  positive semi-definite and definite on the velocities the constraints
  allow), tested numerically at a handful of sampled states (fixed seed, so
  the verdict is deterministic) with the default parameter values
  (parameters without a default are sampled in [0.5, 1.5]);
* the constraint Jacobian has full rank at some sampled state.

States are sampled where the model lives: the declared ranges
(:attr:`sls.model.Model.ranges`), else every coordinate in [−π, π] and every
rate in [−1, 1]. A refusal names the state it tried and how to declare a range.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import sympy

from sls.algebra.graph import Graph
from sls.derive.dynamics import Dynamics
from sls.errors import ModelError, brief
from sls.model import Model

#: Evaluates derived entries at a state and the parameter values, as floats (``_sampler``).
Sampler = Callable[[Sequence[float], Sequence[float]], list]

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


def _graph_culprit(graph: Graph, node: int) -> sympy.Expr:
    """The first function call under ``node`` sls refuses (as sympy), or ``0`` when there is none."""
    for sub in graph.reachable([node]):
        if graph.kind[sub] == "fn" and graph.payload[sub] in _REFUSED:
            return graph.as_sympy(sub)
    return sympy.Integer(0)


def unit_quaternions(model: Model, state: np.ndarray) -> np.ndarray:
    """``state`` with the quaternions of a robot's free and ball joints scaled to unit norm (sampled states are
    configurations: a ball joint's ``M`` depends on its rotation)."""
    tree = model.tree
    for slot in tree.quaternions if tree is not None else ():
        first = slot.q + (3 if slot.kind == "free" else 0)
        norm = float(np.linalg.norm(state[first : first + 4]))
        if norm > 0:
            state[first : first + 4] /= norm
    return state


def check_mass_matrix(dynamics: Dynamics, samples: int = SAMPLES) -> None:
    """Refuse a mass matrix that is not symmetric positive definite at sampled states.

    States are drawn from :meth:`Model.sample_box` (declared ranges, else
    [−π, π] per coordinate). A constrained model only needs M positive
    semi-definite and positive definite on the velocities the constraints
    allow (the null space of A; equivalently M + AᵀA positive definite): then
    its constrained dynamics are regular although M alone may be singular
    (a unit-quaternion attitude, a link without mass).
    """
    model = dynamics.model
    n = model.n
    k = model.k if model.constrained else 0
    # a generation of fewer functions may not derive A (--functions M_fun of a robot with equality constraints):
    # M is then checked alone, and a singular M is left to the functions that solve with it
    unknown_A = bool(k) and len(dynamics.constraint_jac) != k
    k = 0 if unknown_A else k
    entries = [e for row in dynamics.mass_matrix for e in row] + [e for row in dynamics.constraint_jac for e in row][
        : k * n
    ]
    evaluate = _sampler(dynamics, entries)
    failed: list = []
    usable = 0
    for state, values, flat in _samples(model, evaluate, samples, failed):
        usable += 1
        M, A = flat[: n * n].reshape(n, n), flat[n * n :].reshape(k, n)
        if not np.allclose(M, M.T, rtol=1e-10, atol=1e-12):
            raise ModelError(f"the mass matrix M is not symmetric at {_where(model, state)}")
        eigenvalues = np.linalg.eigvalsh(M)
        scale = max(abs(eigenvalues[-1]), 1e-300)
        if eigenvalues[0] > CONDITION_FLOOR * scale:
            continue
        singular = abs(eigenvalues[0]) <= CONDITION_FLOOR * scale
        if singular and k and _restricted_floor(M, A) > CONDITION_FLOOR * scale:
            continue  # singular M, but not on the motions the constraints allow
        if singular and unknown_A:
            continue
        weakest = _weakest(M, A if singular and k else None)
        hint = _range_hint(model, _involved(evaluate, state, values, n))
        raise _not_positive_definite(model, state, eigenvalues, singular, bool(k), weakest, hint)
    if not usable and failed:
        state, why = failed[0]
        raise ModelError(
            "the mass matrix M (or the constraint Jacobian) has no finite value "
            f"at any of the {samples} sampled states "
            f"(e.g. at {_where(model, state)}: {why}) with the default parameters; check the parameter values "
            f"(a mass or length too large for floating point?) and the model's domain{_range_hint(model)}"
        )


def _samples(model: Model, evaluate: Callable, samples: int, failed: list) -> Iterator[tuple]:
    """``(state, parameter values, entries)`` at ``samples`` states drawn from :meth:`Model.sample_box` (unit
    quaternions, parameters without a default drawn from [0.5, 1.5]) where every entry is finite; the others are
    appended to ``failed`` as ``(state, why)`` (a sample on a coordinate singularity says nothing; others will)."""
    rng = np.random.default_rng(20241121)
    low, high = model.sample_box()
    for _ in range(samples):
        state = unit_quaternions(model, rng.uniform(low, high))
        values = [v if v is not None else float(rng.uniform(0.5, 1.5)) for v in model.params.values()]
        try:
            with np.errstate(all="ignore"):
                flat = _real(evaluate(state.tolist(), values))
        except (ZeroDivisionError, ValueError, OverflowError) as exc:
            failed.append((state, type(exc).__name__))
            continue
        if not np.all(np.isfinite(flat)):
            failed.append((state, "not finite"))
            continue
        yield state, values, flat


def _not_positive_definite(
    model: Model,
    state: np.ndarray,
    eigenvalues: np.ndarray,
    singular: bool,
    constrained: bool,
    weakest: np.ndarray,
    hint: str,
) -> ModelError:
    """The refusal of a mass matrix that is singular (``singular``) or indefinite at ``state``: its extreme
    ``eigenvalues``, the motion ``weakest`` that carries no (or negative) kinetic energy, what to check."""
    kind = "singular" if singular else "indefinite"
    because = (
        " and the constraints do not make up for it (M is singular on the velocities A qdot = 0 allows, "
        "so M + A'A is singular too)"
        if singular and constrained
        else ""
    )
    culprit = (
        "the links' masses and inertias" if model.tree is not None else "T (every velocity must carry kinetic energy)"
    )
    energy = "no" if singular else "negative"
    return ModelError(
        f"the mass matrix M = d2T/ddq2 is {kind}, not positive definite, at {_where(model, state)}{because} "
        f"with the default parameters (smallest eigenvalue {eigenvalues[0]:.3g}, largest {eigenvalues[-1]:.3g}; "
        f"a velocity of {_moving(model, weakest)} carries {energy} kinetic energy); "
        f"check {culprit} and the parameter values{hint}"
    )


def _weakest(M: np.ndarray, A: np.ndarray | None) -> np.ndarray:
    """The unit velocity with the least kinetic energy: M's eigenvector of the smallest eigenvalue
    (on the null space of ``A`` when given)."""
    if A is None or A.size == 0:
        return np.linalg.eigh(M)[1][:, 0]
    _, singular, vt = np.linalg.svd(A)
    basis = vt[int(np.sum(singular > 1e-9 * max(singular[0], 1e-300))) :].T
    return basis @ np.linalg.eigh(basis.T @ M @ basis)[1][:, 0]


def _moving(model: Model, velocity: np.ndarray) -> str:
    """The coordinates ``velocity`` mostly moves (components at least 0.3 of the largest), named."""
    size = np.abs(velocity)
    names = [s.name for s, v in zip(model.q, size) if v >= 0.3 * size.max()]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _restricted_floor(M: np.ndarray, A: np.ndarray) -> float:
    """The smallest eigenvalue of M on the null space of A (``inf`` when A leaves no motion)."""
    if A.size == 0:
        return float(np.linalg.eigvalsh(M)[0])
    _, singular, vt = np.linalg.svd(A)
    rank = int(np.sum(singular > 1e-9 * max(singular[0], 1e-300)))
    basis = vt[rank:].T
    if basis.shape[1] == 0:
        return math.inf
    return float(np.linalg.eigvalsh(basis.T @ M @ basis)[0])


def _where(model: Model, state: np.ndarray) -> str:
    """The sampled coordinates as ``name=value``.

    The rates are left out: the checks that name them depend on q only.
    """
    return ", ".join(f"{s.name}={v:.4g}" for s, v in zip(model.q, state))


def _involved(evaluate: Sampler, state: np.ndarray, values: list, n: int) -> list[int]:
    """The coordinates the first n*n sampled entries (M) change with near ``state``: a step of 0.1 in each."""
    try:
        here = _real(evaluate(state.tolist(), values))[: n * n]
    except (ZeroDivisionError, ValueError, OverflowError):
        return []
    found = []
    for i in range(n):
        moved = state.copy()
        moved[i] += 0.1
        try:
            there = _real(evaluate(moved.tolist(), values))[: n * n]
        except (ZeroDivisionError, ValueError, OverflowError):
            found.append(i)
            continue
        if not np.allclose(here, there, rtol=1e-12, atol=0):
            found.append(i)
    return found


def _range_hint(model: Model, involved: list | None = None) -> str:
    """How to declare where the model lives, after saying where the checks sampled.

    ``involved``: indices of the coordinates the failing term depends on; the hint names the first
    of them (``None``: unknown, the first coordinate without a declared range). An empty list (the
    term depends on no coordinate) gives no hint: no range would change the verdict.
    """
    if involved is not None and not involved:
        return ""
    low, high = model.sample_box()
    box = ", ".join(f"{s.name} in [{lo:.4g}, {hi:.4g}]" for s, lo, hi in zip(model.q, low, high))
    undeclared = [s.name for s in model.q if s.name not in model.ranges]
    name = model.q[involved[0]].name if involved else (undeclared or [model.q[0].name])[0]
    return (
        f" (states sampled with {box}); if the model is only meant for part of that range, declare where it lives: "
        # a robot file has no [ranges]
        + ("" if model.tree is not None else f"[ranges] {name} = [LOW, HIGH] in the model file, ")
        + f"--range {name}=LOW:HIGH on the command line, or ranges={{'{name}': (LOW, HIGH)}} in the Python API"
    )


def _real(values: list) -> np.ndarray:
    """Sampled values as a float array.

    A complex value (a negative base to a fractional power) is a domain error (``ValueError``).
    """
    array = np.asarray(values)
    if np.iscomplexobj(array):
        raise ValueError("complex value")
    return array.astype(float)


def _sampler(dynamics: Dynamics, entries: list) -> Sampler:
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
    low, high = model.sample_box()
    labels = [f"constraints[{i}]" for i in range(len(model.constraints))]
    for link, kind in model.contacts:  # a robot's contacts: their place's rows, then a 6-D one's orientation's
        axes = ("x", "y", "z") + (("about x", "about y", "about z") if kind == "6d" else ())
        labels += [f"the contact {link}'s row {axis}" for axis in axes]
    labels += [f"velocity_constraints[{i}]" for i in range(len(model.velocity_constraints))]
    deficient = None
    for _ in range(samples):
        state = rng.uniform(low, high)
        values = [v if v is not None else float(rng.uniform(0.5, 1.5)) for v in model.params.values()]
        try:
            A = np.reshape(_real(evaluate(state.tolist(), values)), (k, n))
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
    raise ModelError(
        f"the constraints are redundant or dependent: {labels[row]} adds nothing to the rows before it "
        f"(A = [dc/dq; d(velocity constraints)/dqdot] has rank {_rank(A)} < {k} at every sampled state, "
        f"e.g. {_where(model, state)}); "
        f"remove it{_range_hint(model)}"
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


def _flatten(array: object) -> Iterator[Any]:
    if isinstance(array, tuple):
        for item in array:
            yield from _flatten(item)
    elif array is not None:
        yield array
