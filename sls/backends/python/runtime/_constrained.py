# Runtime of a constrained model's generated package: the structured solve on its generated kernels.
# Copied as _constrained.py after the package's header by sls.backends.python, with the model's N, K and
# M_INPUTS; these leading comment lines are not copied (the relative imports resolve in the package).

import numpy as np

from . import _runtime
from .constraint_bias_fun import constraint_bias_fun
from .constraint_jac_fun import constraint_jac_fun
from .input_matrix_fun import input_matrix_fun
from .M_fun import M_fun
from .tau_fun import tau_fun

N = 0  # the model's number of degrees of freedom (speeds), set when copied
N_Q = 0  # its number of coordinates (N, or more with a quaternion base), set when copied
K = 0  # its number of constraints, set when copied
M_INPUTS = 0  # its number of inputs, set when copied
SPEEDS = False  # whether q-dot = S(q) v (generalized speeds: qdot_jac_fun gives the kinematic rows), set when copied
CONTACTS = 0  # its number of point contacts (the last 3 CONTACTS constraint rows), set when copied


def _arguments(x, u):
    """x and u checked, their batch axes broadcast together."""
    _x, _ = _runtime.as_state(x, N_Q + N)
    _u, _ = _runtime.as_vector(u, M_INPUTS, "u")
    if _x.ndim > 1 or _u.ndim > 1:
        _x, _u = _runtime.broadcast_batch(_x, _u)
    return _x, _u


def _augmented(M, A):
    """(M + A' W A, W): M made positive definite by the constraint rows, W = diag(w) (..., k).

    w_i = (trace(M) / n) / |A_i|^2 gives A' W A the scale of M. Since A qddot = g, adding
    A' W A qddot = A' W g to M qddot = f + A' lam changes no solution, but the augmented matrix
    is positive definite whenever M is positive semi-definite and definite on the velocities
    the constraints allow (A v = 0): a unit-quaternion attitude, a link without mass.
    """
    scale = np.trace(M, axis1=-2, axis2=-1) / N
    rows = np.einsum("...ia,...ia->...i", A, A)
    w = np.abs(scale)[..., None] / np.where(rows > 0, rows, 1.0)
    return M + np.einsum("...ia,...i,...ib->...ab", A, w, A), w


def _cholesky(M_aug, x):
    """The lower Cholesky factor of M + A'WA (batched); a LinAlgError naming the state where it is not
    positive definite."""
    try:
        return np.linalg.cholesky(M_aug)
    except np.linalg.LinAlgError:
        states = np.broadcast_to(x, M_aug.shape[:-2] + x.shape[-1:]).reshape(-1, x.shape[-1])
        blocks = M_aug.reshape((-1,) + M_aug.shape[-2:])
        first = next((k for k, block in enumerate(blocks) if not _definite(block)), 0)
        raise np.linalg.LinAlgError(
            f"the mass matrix M is not positive definite on the velocities the constraints allow "
            f"(M + A'WA is singular or indefinite) at x = [{_runtime.describe_state(states[first])}]"
        ) from None


def _definite(matrix):
    """Whether ``matrix`` (n, n) has a Cholesky factor."""
    try:
        np.linalg.cholesky(matrix)
    except np.linalg.LinAlgError:
        return False
    return True


def _cho_solve(L, B):
    """Solve (L L') Z = B for every column of B (..., n, r) by substitution: the factor is reused for every
    right-hand side."""
    batch = np.broadcast_shapes(L.shape[:-2], B.shape[:-2])
    B = np.broadcast_to(B, batch + B.shape[-2:])
    y = np.empty(B.shape)
    for i in range(N):
        y[..., i, :] = (B[..., i, :] - np.einsum("...j,...jr->...r", L[..., i, :i], y[..., :i, :])) / L[..., i, i, None]
    z = np.empty(B.shape)
    for i in reversed(range(N)):
        z[..., i, :] = (y[..., i, :] - np.einsum("...j,...jr->...r", L[..., i + 1 :, i], z[..., i + 1 :, :])) / L[
            ..., i, i, None
        ]
    return z


def _schur_solve(S, rhs, x):
    """Solve S z = rhs (S = A (M + A'WA)^-1 A', k x k) for the columns of rhs (..., k, r)."""
    try:
        return np.linalg.solve(S, rhs)
    except np.linalg.LinAlgError:
        where = _runtime.describe_state(x if x.ndim == 1 else x.reshape(-1, x.shape[-1])[0])
        another = " (or another state of the batch)" if x.ndim > 1 else ""
        raise np.linalg.LinAlgError(
            f"the constraints are dependent at x = [{where}]{another}: "
            "A (M + A'WA)^-1 A' is singular (A = constraint_jac_fun(x) loses rank there)"
        ) from None


def solve(x, u, params):
    """(qddot, lam, pieces) at (x, u): one Cholesky factorization of M + A'WA, the Schur complement for lam.

    M qddot = f + A' lam and A qddot = g are solved as (M + A'WA) qddot = f + A'W g + A' lam.
    """
    M = M_fun(x, **params)
    A = constraint_jac_fun(x, **params)
    g = constraint_bias_fun(x, **params)
    B_u = input_matrix_fun(x, **params)
    f = np.einsum("...aj,...j->...a", B_u, u) - tau_fun(x, np.zeros(N), **params)
    M, w = _augmented(M, A)
    f = f + np.einsum("...ia,...i->...a", A, w * g)
    L = _cholesky(M, x)
    Z = _cho_solve(L, np.concatenate([f[..., :, None], np.swapaxes(A, -1, -2)], axis=-1))
    free, Y = Z[..., :, 0], Z[..., :, 1:]  # M^-1 f and M^-1 A'
    S = A @ Y
    lam = _schur_solve(S, (g - np.einsum("...ia,...a->...i", A, free))[..., None], x)[..., 0]
    qddot = free + np.einsum("...ai,...i->...a", Y, lam)
    return qddot, lam, (L, A, w, Y, S, B_u)


def qddot_fun(x, u, params):
    _x, _u = _arguments(x, u)
    return solve(_x, _u, params)[0]


def multipliers_fun(x, u, params):
    _x, _u = _arguments(x, u)
    return solve(_x, _u, params)[1]


def _derivatives(x, u, params):
    """(D, dlam, x, batch): the derivatives of qddot (D, (..., N, N_Q + N + M_INPUTS): columns along x, then u) and
    of the multipliers (dlam, (..., K, N_Q + N + M_INPUTS)) of the constrained dynamics at (x, u).

    Differentiating M qddot = f + A' lam and A qddot = g at fixed (qddot, lam) gives
    [M -A'; A 0] [dqddot; dlam] = -[dr; dh], with [dr; dh] = constrained_residual_jac_fun(x, u, qddot, lam)
    (the inverse dynamics' derivatives with the constraint forces as external forces, and the constraint rows'
    acceleration derivatives) and [B_u; 0] for the inputs: the same structured solve (the factor of M + A'WA,
    adding A'W dh on the right, then the Schur complement S) for every column, no derivative of M itself.
    """
    from .constrained_residual_jac_fun import constrained_residual_jac_fun

    _x, _u = _arguments(x, u)
    qddot, lam, (L, A, w, Y, S, B_u) = solve(_x, _u, params)
    kkt = constrained_residual_jac_fun(_x, _u, qddot, lam, **params)
    R = -kkt[..., :N, :]
    R = np.concatenate([R, np.broadcast_to(B_u, R.shape[:-1] + (M_INPUTS,))], axis=-1)
    h = -kkt[..., N:, :]
    h = np.concatenate([h, np.zeros(h.shape[:-1] + (M_INPUTS,))], axis=-1)
    D = _cho_solve(L, R + np.einsum("...ia,...i,...ir->...ar", A, w, h))
    dlam = _schur_solve(S, h - A @ D, _x)
    return D + Y @ dlam, dlam, _x, D.shape[:-2]


def _tangent_columns(J, x, batch, params):
    """The state columns of J (..., r, N_Q + N) as the tangent space's 2 N: themselves when the coordinates are
    the speeds' integrals, the coordinates' through S(q) = dqdot/dv with a quaternion base."""
    if N_Q == N:
        return J
    from .qdot_jac_fun import qdot_jac_fun  # a package with fewer speeds than coordinates has it

    S = qdot_jac_fun(x, **params)[..., :, N_Q:]
    return np.concatenate([J[..., :, :N_Q] @ S, J[..., :, N_Q:]], axis=-1)


def linearized_model(x, u, params):
    """Jacobians (A, B) of the constrained xdot = [qdot; qddot(x, u)] with lam eliminated (:func:`_derivatives`)."""
    D, _, _x, batch = _derivatives(x, u, params)
    n_x = N_Q + N
    A_out = np.zeros(batch + (2 * N, 2 * N))
    B_out = np.zeros(batch + (2 * N, M_INPUTS))
    B_out[..., N:, :] = D[..., :, n_x:]
    A_out[..., N:, :] = _tangent_columns(D[..., :, :n_x], _x, batch, params)
    if not SPEEDS:
        A_out[..., :N, N:] = np.eye(N)
        return A_out, B_out
    from .qdot_jac_fun import qdot_jac_fun  # a package with generalized speeds has it

    if N_Q == N:  # the upper rows: d(S(q) v)/dx
        A_out[..., :N, :] = qdot_jac_fun(_x, **params)
        return A_out, B_out
    # fewer speeds than coordinates: the tangent space of x = (integrate(q, dq), v + dv), as linearized_model
    from . import _free_flyer  # fewer speeds than coordinates: a robot's quaternion base

    A_out[..., :N, :] = _free_flyer.tangent_kinematics(np.broadcast_to(_x, batch + (n_x,)))
    return A_out, B_out


def contact_forces_jac_fun(x, u, params, rows):
    """(dF/dx, dF/du) of the contact forces or wrenches: dF/dx (..., C, R, 2 N) along the tangent space of the
    state (as linearized_model's columns), dF/du (..., C, R, M_INPUTS); ``rows`` (C, R) the multipliers' index of
    each entry, K for an entry that is always zero (a point contact's moment beside a 6-D contact)."""
    _, dlam, _x, batch = _derivatives(x, u, params)
    n_x = N_Q + N
    dlam = np.concatenate([_tangent_columns(dlam[..., :, :n_x], _x, batch, params), dlam[..., :, n_x:]], axis=-1)
    padded = np.concatenate([dlam, np.zeros(batch + (1, dlam.shape[-1]))], axis=-2)
    selected = padded[..., rows, :]
    return selected[..., : 2 * N], selected[..., 2 * N :]


def contact_forces_fun(x, u, params):
    """The force each point contact exerts on the robot, world axes (CONTACTS, 3): the last multipliers."""
    _x, _u = _arguments(x, u)
    lam = solve(_x, _u, params)[1]
    return lam[..., K - 3 * CONTACTS :].reshape(lam.shape[:-1] + (CONTACTS, 3))
