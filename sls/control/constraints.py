"""States that keep a constrained package's constraints: the check, the projection, the Baumgarte rate.

A constrained package (``N_CONSTRAINTS > 0``: a robot on contacts, a closed loop) has the position constraints
``c(q) = 0`` (the first ``N_HOLONOMIC`` entries of ``constraint_fun``) and the velocity constraints ``A(q) v = 0``
(``A = constraint_jac_fun``, ``N_CONSTRAINTS × N_V``; for a holonomic row, ``ċ = A v``). Its ``qddot_fun`` keeps
``A v̇ + Ȧ v = −2ω A v − ω² c`` (Baumgarte, ``ω`` the parameter ``constraint_stabilization``), which holds the
constraints only where they hold at the start: a start with the feet moving makes them slide.

* :func:`constraint_violation` — the worst residual of a state: which row, which kind, how large.
* :func:`check_consistent` — one :class:`~sls.errors.ControlError` line naming it and the fix (``lqr`` checks
  ``x_eq`` this way, :func:`~sls.control.simulation.simulate` ``x0``).
* :func:`project_state` — the nearest consistent state: positions by Gauss–Newton on ``c`` (minimum-norm steps
  ``δq = −A_h⁺ c`` in the tangent space, the quaternion base moved by the package's ``integrate``), then the
  velocities projected onto the null space of ``A`` in the metric of the mass matrix ``M``:
  ``v − M⁻¹Aᵀ (A M⁻¹Aᵀ)⁺ A v``, the consistent ``v`` nearest in kinetic energy, which is the velocity a perfectly
  inelastic impulse of the constraints leaves (Pinocchio's ``impulseDynamics`` with restitution 0): a push of
  a robot's trunk stays a push of the trunk, the legs follow it with the feet still.
* :func:`default_stabilization` — the scale-aware Baumgarte rate :func:`simulate` uses by default.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType

import numpy as np

from sls.control.package import call, constrained, coordinate_count
from sls.control.tangent import deviation, retract, tangent_names
from sls.errors import ControlError

__all__ = [
    "STABILIZATION_PARAMETER",
    "Violation",
    "check_consistent",
    "constraint_violation",
    "default_stabilization",
    "project_state",
]

#: The run-time parameter of a constrained package that holds its Baumgarte rate ω (1/s).
STABILIZATION_PARAMETER = "constraint_stabilization"
#: A state is consistent when every residual is at most this times ``max(1, max |x|)``: positions ``|c|``
#: (lengths, radians) against the coordinates, velocities ``|A v|`` against the speeds.
TOLERANCE = 1e-6


@dataclass(frozen=True)
class Violation:
    """The worst residual of a state: ``kind`` ``"position"`` (``c``) or ``"velocity"`` (``A v``), ``row`` (from
    0) and its name (``FL_FOOT z``, ``constraint 2``), ``value``, and the tolerance it was held to."""

    kind: str
    row: int
    name: str
    value: float
    tolerance: float

    @property
    def violated(self) -> bool:
        return not abs(self.value) <= self.tolerance


def row_names(module: ModuleType) -> tuple:
    """Names of the constraint rows: the model's own constraints ``constraint 1`` … (holonomic first, then the
    velocity constraints), each contact's rows ``<link> x, y, z`` (a 6-D contact also ``rx, ry, rz``)."""
    k, holonomic = int(module.N_CONSTRAINTS), int(module.N_HOLONOMIC)
    params = getattr(module, "PARAMS", {})
    contact_rows: list = []
    for link in getattr(module, "CONTACTS", ()):
        axes = ("x", "y", "z", "rx", "ry", "rz") if any(p.endswith(f"{link}_roll") for p in params) else "xyz"
        contact_rows += [f"{link} {axis}" for axis in axes]
    own = holonomic - len(contact_rows)
    names = [f"constraint {i + 1}" for i in range(own)] + contact_rows
    names += [f"velocity constraint {i + 1}" for i in range(k - holonomic)]
    return tuple(names)


def residuals(module: ModuleType, x: np.ndarray, params: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """``(c, A v)``: the position residuals (``N_HOLONOMIC``, ``(..., N_HOLONOMIC)`` for a batch of states) and the
    velocity residuals (``N_CONSTRAINTS``) of the states ``x``."""
    n_q, n = coordinate_count(module), module.N_DOF
    x = np.asarray(x, dtype=float)
    c = np.asarray(call(module, "constraint_fun", x, params=params), dtype=float)
    A = np.asarray(call(module, "constraint_jac_fun", x, params=params), dtype=float)
    A = A.reshape(*x.shape[:-1], -1, n)
    velocity = np.einsum("...ij,...j->...i", A, x[..., n_q:])
    return c[..., : module.N_HOLONOMIC], velocity


def constraint_violation(module: ModuleType, x: np.ndarray, params: Mapping[str, float]) -> Violation:
    """The worst residual of the state ``x`` (:data:`TOLERANCE`): the largest ``|c|`` if it is too large (positions
    first: the velocities of a state off its constraints mean little), else the largest ``|A v|``."""
    n_q = coordinate_count(module)
    c, velocity = residuals(module, x, params)
    names = row_names(module)
    position_scale = TOLERANCE * max(1.0, float(np.abs(x[:n_q]).max(initial=0.0)))
    speed_scale = TOLERANCE * max(1.0, float(np.abs(x[n_q:]).max(initial=0.0)))
    candidates = []
    if c.size:
        i = int(np.argmax(np.abs(c)))
        candidates.append(Violation("position", i, names[i], float(c[i]), position_scale))
    if velocity.size:
        i = int(np.argmax(np.abs(velocity)))
        candidates.append(Violation("velocity", i, names[i], float(velocity[i]), speed_scale))
    violated = [v for v in candidates if v.violated]
    return (violated or candidates)[0]


def check_consistent(
    module: ModuleType, x: np.ndarray, params: Mapping[str, float], what: str, fix: str, *, velocities: bool = True
) -> None:
    """Raise one :class:`ControlError` line if the state ``x`` (named ``what``) violates the constraints: the worst
    residual (row, kind, value) and ``fix``, what to do about it. ``velocities=False`` checks the positions only."""
    if not constrained(module):
        return
    violation = constraint_violation(module, x, params)
    if not velocities and violation.kind == "velocity":
        return
    if violation.violated:
        moving = "moves at" if violation.kind == "velocity" else "is off by"
        raise ControlError(
            f"{what} violates the constraints: {violation.name} {moving} {violation.value + 0.0:.3g} "
            f"({'A v' if violation.kind == 'velocity' else 'constraint_fun'} row {violation.row + 1}, "
            f"tolerance {violation.tolerance:.1g}); {fix}"
        )


def project_state(
    module: ModuleType, x: np.ndarray, params: Mapping[str, float], *, iterations: int = 50
) -> tuple[np.ndarray, str]:
    """The consistent state nearest ``x`` and one line saying how far it moved.

    Positions by Gauss–Newton on ``c(q) = 0``: ``q ← integrate(q, −A_h⁺ c)`` (``A_h`` the holonomic rows of ``A``,
    the minimum-norm tangent step) until ``|c| ≤ 1e-12·max(1, max |q|)``; then
    ``v ← v − M⁻¹Aᵀ (A M⁻¹Aᵀ)⁺ A v`` (the ``v`` with ``A v = 0`` nearest in kinetic energy: the inelastic
    impulse). Returns the state unchanged (and the line says so) when it is consistent already.
    """
    n_q, n = coordinate_count(module), module.N_DOF
    state = np.array(x, dtype=float)
    start = state.copy()
    holonomic = int(module.N_HOLONOMIC)
    limit = 1e-12 * max(1.0, float(np.abs(state[:n_q]).max(initial=0.0)))
    for _ in range(iterations if holonomic else 0):
        c, _ = residuals(module, state, params)
        if np.abs(c).max(initial=0.0) <= limit:
            break
        A = np.asarray(call(module, "constraint_jac_fun", state, params=params), dtype=float).reshape(-1, n)
        step, *_ = np.linalg.lstsq(A[:holonomic], -c, rcond=None)
        state = retract(module, state, np.concatenate([step, np.zeros(n)]), params)
        if hasattr(module, "normalize"):
            state[:n_q] = module.normalize(state[:n_q])
    else:
        if holonomic:
            c, _ = residuals(module, state, params)
            if np.abs(c).max(initial=0.0) > 1e-9 * max(1.0, float(np.abs(state[:n_q]).max(initial=0.0))):
                raise ControlError(
                    f"cannot project the state onto the constraints: after {iterations} Gauss-Newton steps "
                    f"|c| = {np.abs(c).max():.3g} (are the constraints reachable from it?)"
                )
    A = np.asarray(call(module, "constraint_jac_fun", state, params=params), dtype=float).reshape(-1, n)
    M = np.asarray(call(module, "M_fun", state, params=params), dtype=float).reshape(n, n)
    v = state[n_q:]
    MinvAt = np.linalg.solve(M, A.T)
    impulse, *_ = np.linalg.lstsq(A @ MinvAt, A @ v, rcond=None)
    state[n_q:] = v - MinvAt @ impulse
    return state, _moved(module, start, state, params)


def _moved(module: ModuleType, before: np.ndarray, after: np.ndarray, params: Mapping[str, float]) -> str:
    """``moved q by … (most: name …), v by … (most: name …)``: the tangent distance of the positions and the change
    of the speeds, each with its largest entry."""
    n = module.N_DOF
    tangent = deviation(module, before, params)
    delta = after - before if tangent is None else tangent(after)
    names = tangent_names(module)
    parts = []
    for label, block, offset in (("q", delta[:n], 0), ("v", delta[n:], n)):
        size = float(np.linalg.norm(block))
        if size == 0.0:
            parts.append(f"{label} unchanged")
            continue
        i = int(np.argmax(np.abs(block)))
        parts.append(f"{label} moved by {size:.3g} (most: {names[offset + i]} {block[i] + 0.0:+.3g})")
    return "projected x0 onto the constraints: " + ", ".join(parts)


def default_stabilization(jacobian: np.ndarray, span: float) -> float:
    """The Baumgarte rate ``ω`` (1/s) :func:`simulate` uses unless told: the spectral radius of the loop's
    Jacobian ``∂ẋ/∂x`` at the start (the fastest mode of the dynamics, so the stabilization is as fast as the
    model and never the stiffest part of it), at least ``10 / (t_end − t0)`` (a drift is undone within a tenth of
    the run)."""
    try:
        radius = float(np.abs(np.linalg.eigvals(jacobian)).max(initial=0.0))
    except (np.linalg.LinAlgError, ValueError):
        radius = 0.0
    if not np.isfinite(radius):
        radius = 0.0
    return max(radius, 10.0 / span)
