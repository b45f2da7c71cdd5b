"""States of packages with more coordinates than speeds (a quaternion base): the tangent space the control works in.

A package whose robot has a quaternion free-flyer base has ``N_Q`` coordinates
``q`` and ``N_V = N_DOF`` speeds ``v`` (``N_Q = N_V + 1``), the state
``x = [q; v]`` has ``N_Q + N_V`` entries. Its ``linearized_model`` is
written in the tangent space (``2 N_V`` entries): a state near ``x̄`` is
``x = (integrate(q̄, δq), v̄ + δv)``, ``δq`` in the base frame as
``pinocchio.integrate``. The LQR gains work there too: ``u = u_eq − K δx``
with ``δx = [difference(q_eq, q); v − v_eq]`` (:func:`deviation`).

A package without a quaternion (``N_Q = N_DOF``) has ``δx = x − x_eq``,
and every function here is the plain vector operation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import ModuleType

import numpy as np

from sls.control.package import call, coordinate_count
from sls.errors import ControlError

__all__ = ["deviation", "feedback", "normalized", "on_manifold", "retract", "tangent_names", "unit_state"]


def on_manifold(module: ModuleType) -> bool:
    """Whether the package has more coordinates than speeds (its state is not a vector space: a quaternion base)."""
    return coordinate_count(module) != module.N_DOF


def normalized(module: ModuleType, x: np.ndarray) -> np.ndarray:
    """The states ``x`` (..., N_Q + N_V) with the base quaternion scaled to unit norm (the package's ``normalize``);
    ``x`` itself for a package without one."""
    if not hasattr(module, "normalize"):
        return x
    n_q = coordinate_count(module)
    out = np.array(x, dtype=float)
    out[..., :n_q] = module.normalize(out[..., :n_q])
    return out


def unit_state(module: ModuleType, x: np.ndarray, what: str) -> np.ndarray:
    """The checked state ``x`` (N_Q + N_V,) with its base quaternion scaled to unit norm (a start or an equilibrium
    typed with rounded entries); a zero quaternion is refused."""
    if not hasattr(module, "normalize"):
        return x
    try:
        return normalized(module, x)
    except ValueError as exc:
        raise ControlError(f"{what}: {exc}") from None


def _speed_map(module: ModuleType, x: np.ndarray, params: Mapping[str, float]) -> np.ndarray:
    """``S(q)`` (N_Q × N_V) at ``x``: ``q̇ = S(q) v``, from the package's ``qdot_jac_fun``."""
    n_q = coordinate_count(module)
    jacobian = np.asarray(call(module, "qdot_jac_fun", x, params=params), dtype=float)
    return jacobian.reshape(n_q, -1)[:, n_q:]


def deviation(
    module: ModuleType, x_eq: np.ndarray, params: Mapping[str, float]
) -> Callable[[np.ndarray], np.ndarray] | None:
    """The map ``x ↦ δx`` (N_Q + N_V → 2 N_V) from a state to its tangent vector at ``x_eq``, or ``None`` when it
    is ``x − x_eq``.

    ``δx = [difference(q_eq, q); v − v_eq]`` with the package's ``difference``
    (a quaternion base: the base's SE(3) logarithm in ``q_eq``'s base frame,
    the joints' differences); a package with fewer speeds than coordinates and
    no ``difference`` takes ``δq = S(q_eq)⁺ (q − q_eq)``, exact to first order.
    """
    if not on_manifold(module):
        return None
    n_q = coordinate_count(module)
    q_eq, v_eq = np.array(x_eq[:n_q], dtype=float), np.array(x_eq[n_q:], dtype=float)
    if hasattr(module, "difference"):

        def tangent(x: np.ndarray) -> np.ndarray:
            x = np.asarray(x, dtype=float)
            return np.concatenate([module.difference(q_eq, x[..., :n_q]), x[..., n_q:] - v_eq], axis=-1)

        return tangent
    inverse = np.linalg.pinv(_speed_map(module, np.asarray(x_eq, dtype=float), params))

    def linear(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return np.concatenate([(x[..., :n_q] - q_eq) @ inverse.T, x[..., n_q:] - v_eq], axis=-1)

    return linear


def retract(module: ModuleType, x: np.ndarray, dx: np.ndarray, params: Mapping[str, float]) -> np.ndarray:
    """The state ``x`` moved by the tangent vector ``dx`` (2 N_V): ``(integrate(q, δq), v + δv)``, ``x + dx``
    without a quaternion (and ``q + S(q) δq`` for a package with fewer speeds and no ``integrate``)."""
    if not on_manifold(module):
        return np.asarray(x, dtype=float) + dx
    n_q, n_v = coordinate_count(module), module.N_DOF
    if hasattr(module, "integrate"):
        q = module.integrate(x[:n_q], dx[:n_v])
    else:
        q = x[:n_q] + _speed_map(module, x, params) @ dx[:n_v]
    return np.concatenate([q, x[n_q:] + dx[n_v:]])


def tangent_names(module: ModuleType) -> Sequence[str]:
    """Names of the tangent-space entries ``δx`` (the columns of an LQR gain ``K``, the rows of ``A``).

    The package's ``STATE`` when it has no quaternion. With a quaternion base
    ``<base>_x, <base>_y, <base>_z`` (the displacement in the base frame),
    ``<base>_rx, <base>_ry, <base>_rz`` (the rotation vector in the base frame),
    the joints, then the speeds; a package with fewer speeds than coordinates
    and no ``integrate`` names the coordinate directions ``dq_<speed>``.
    """
    state = tuple(getattr(module, "STATE", ()))
    n_q, n_v = coordinate_count(module), module.N_DOF
    if not state:
        return tuple(f"x{i + 1}" for i in range(2 * n_v))
    if not on_manifold(module):
        return state
    speeds = state[n_q:]
    if hasattr(module, "integrate") and n_q == n_v + 1:
        base = state[3][: -len("qx")]
        positions = (*state[0:3], f"{base}rx", f"{base}ry", f"{base}rz", *state[7:n_q])
    else:
        positions = tuple(f"dq_{name}" for name in speeds)
    return positions + speeds


def feedback(
    K: np.ndarray,
    x_eq: np.ndarray,
    u_eq: np.ndarray,
    deviation: Callable[[np.ndarray], np.ndarray] | None,
    x: object,
) -> np.ndarray:
    """The state feedback ``u = u_eq − K δx`` (m,) at the state ``x``: ``δx = x − x_eq`` (2n), or ``deviation(x)``
    (2 N_V, the tangent vector) for a package with a quaternion base."""
    state = np.asarray(x, dtype=float)
    error = state - x_eq if deviation is None else deviation(state)
    u: np.ndarray = u_eq - K @ error
    return u
