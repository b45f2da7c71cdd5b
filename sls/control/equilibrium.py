"""Equilibria of a generated package: the input that holds a state, and the directions that keep its constraints."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import scipy.linalg

from sls.control.package import (
    Package,
    call,
    checked_params,
    constrained,
    fmt,
    load_package,
    state_vector,
)
from sls.control.tangent import unit_state
from sls.errors import ControlError

__all__ = ["constraint_basis", "equilibrium_input"]


def equilibrium_input(
    pkg: Package, x: object, *, params: Mapping[str, float] | None = None, tol: float = 1e-8
) -> tuple[np.ndarray, float]:
    """The input that holds the state ``x`` with ``q̈ = 0`` (``v̇ = 0`` with generalized speeds; ``x`` has
    ``N_Q + N_V`` entries with a quaternion base).

    Solves ``B_u(x) u = C q̇ + φ + fric`` (``= tau_fun(x, 0)``) in the least
    squares sense (minimum-norm ``u`` if several hold it). For a state at rest
    pass zero velocities; with non-zero velocities it is the input that keeps
    them constant.

    Returns
    -------
    u : ndarray, shape (m,)
    residual : float
        ``‖q̈(x, u)‖``, the acceleration left by the best ``u`` (0 up to
        rounding when ``x`` can be held).

    Raises
    ------
    ControlError
        If no input holds ``x``: the residual exceeds ``tol`` times the scale
        ``max(1, ‖q̈(x, 0)‖)``. The message names the residual.
    """
    module = load_package(pkg)
    values = checked_params(module, params)
    state = unit_state(module, state_vector(module, x, "x"), "x")
    n, m = module.N_DOF, module.N_INPUTS
    if constrained(module):
        # qddot is affine in u (lam included): qddot(x, u) = qddot(x, 0) + (dqddot/du) u.
        free = np.asarray(call(module, "qddot_fun", state, np.zeros(m), params=values), dtype=float)
        _, B = call(module, "linearized_model", state, np.zeros(m), params=values)
        u, *_ = np.linalg.lstsq(np.asarray(B, dtype=float)[n:], -free, rcond=None)
    else:
        needed = np.asarray(call(module, "tau_fun", state, np.zeros(n), params=values), dtype=float)
        B_u = np.asarray(call(module, "input_matrix_fun", state, params=values), dtype=float).reshape(n, m)
        u, *_ = np.linalg.lstsq(B_u, needed, rcond=None)
    qddot = np.asarray(call(module, "qddot_fun", state, u, params=values), dtype=float)
    residual = float(np.linalg.norm(qddot))
    scale = max(1.0, float(np.linalg.norm(call(module, "qddot_fun", state, np.zeros(m), params=values))))
    if not residual <= tol * scale:
        raise ControlError(
            f"no input holds x = {fmt(state)} at rest: the best u = {fmt(u)} leaves qddot = {fmt(qddot)} "
            f"(residual {residual:.3g}); the inputs cannot balance the forces at this state"
        )
    return u, residual


def constraint_basis(pkg: Package, x: object, *, params: Mapping[str, float] | None = None) -> np.ndarray | None:
    """An orthonormal basis ``T`` (2n × 2n − k_h − k) of the state directions that keep the constraints at ``x``.

    For a constrained package: ``δq`` in the null space of the holonomic rows
    of ``A = constraint_jac_fun(x)`` and ``δq̇`` in the null space of all of
    ``A`` (at rest, the linearized constraints are ``A_h δq = 0`` and
    ``A δq̇ = 0``). The reduced coordinates are ``z = Tᵀ δx``; :func:`lqr` and
    :func:`dlqr` design on ``(Tᵀ A T, Tᵀ B)``. ``None`` for an unconstrained package.
    """
    module = load_package(pkg)
    if not constrained(module):
        return None
    values = checked_params(module, params)
    state = state_vector(module, x, "x")
    n = module.N_DOF
    A = np.asarray(call(module, "constraint_jac_fun", state, params=values), dtype=float).reshape(-1, n)
    positions = scipy.linalg.null_space(A[: module.N_HOLONOMIC]) if module.N_HOLONOMIC else np.eye(n)
    velocities = scipy.linalg.null_space(A)
    basis: np.ndarray = scipy.linalg.block_diag(positions, velocities)
    return basis


def equilibrium_constraint_basis(
    pkg: Package, x_eq: np.ndarray, params: Mapping[str, float] | None
) -> np.ndarray | None:
    """:func:`constraint_basis` at an equilibrium, which must satisfy the constraints (positions and velocities,
    :func:`~sls.control.constraints.check_consistent`)."""
    from sls.control.constraints import check_consistent

    module = load_package(pkg)
    if not constrained(module):
        return None
    fix = "linearize at a state where they hold"
    if getattr(module, "STANCES", None):
        fix += f" (a stance of the package: --stance {next(iter(module.STANCES))}, x_eq = pkg.STANCES[...])"
    check_consistent(module, x_eq, checked_params(module, params), "x_eq", fix)
    return constraint_basis(module, x_eq, params=params)
