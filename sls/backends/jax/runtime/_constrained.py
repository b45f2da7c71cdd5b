# Runtime of a constrained model's generated JAX package: the numpy target's structured solve (runtime/_constrained.py
# of the Python target) on the one-state bodies of the generated functions, in jax.numpy. Copied as _constrained.py
# after the package's header by sls.backends.jax, with the model's sizes; these leading comment lines are not copied.

import jax.numpy as jnp
from jax.scipy.linalg import cho_solve as _cho_solve

from . import _runtime
from .constraint_bias_fun import _body as _bias
from .constraint_jac_fun import _body as _A
from .input_matrix_fun import _body as _B_u
from .M_fun import _body as _M
from .tau_fun import _body as _tau

N = 0  # the model's number of degrees of freedom (speeds), set when copied
N_Q = 0  # its number of coordinates (N, or more with a quaternion base), set when copied
K = 0  # its number of constraints, set when copied
M_INPUTS = 0  # its number of inputs, set when copied
SPEEDS = False  # whether q-dot = S(q) v (generalized speeds: qdot_jac_fun gives the kinematic rows), set when copied
FREE_FLYER = False  # whether the coordinates start with a quaternion free-flyer base, set when copied
CONTACT_ROWS = ()  # per contact, each force (then moment) component's multiplier index (K: zero), set when copied

# Everything below evaluates one state: x (N_Q + N,), u (M_INPUTS,), params the parameters in the order of PARAMS.
# The public functions map it over a batch by jax.vmap. A traced function cannot raise: where M is not definite on
# the velocities the constraints allow, or the constraints are dependent, the results hold NaN or inf.


def _augmented(M, A):
    """(M + A' W A, w): M made positive definite by the constraint rows, W = diag(w), w_i = (trace(M) / n) / |A_i|^2
    (the same solution since A qddot = g; definite where M is definite on the velocities A v = 0 allows)."""
    rows = jnp.sum(A * A, axis=1)
    w = jnp.abs(jnp.trace(M) / N) / jnp.where(rows > 0, rows, 1.0)
    return M + A.T @ (w[:, None] * A), w


def solve(x, u, params):
    """(qddot, lam, pieces) at one state: the Cholesky factor of M + A'WA, the Schur complement S = A Ma^-1 A' for
    lam (jnp.linalg.solve), as the numpy target's. M qddot = f + A' lam, A qddot = g, f = B_u u - tau(x, 0)."""
    M = _M(x, *params)
    A = _A(x, *params)
    g = _bias(x, *params)
    B_u = _B_u(x, *params)
    f = B_u @ u - _tau(x, jnp.zeros(N, x.dtype), *params)
    Ma, w = _augmented(M, A)
    f = f + A.T @ (w * g)
    L = jnp.linalg.cholesky(Ma)
    Z = _cho_solve((L, True), jnp.concatenate([f[:, None], A.T], axis=1))
    free, Y = Z[:, 0], Z[:, 1:]  # Ma^-1 f and Ma^-1 A'
    S = A @ Y
    lam = jnp.linalg.solve(S, g - A @ free)
    qddot = free + Y @ lam
    return qddot, lam, (L, A, w, Y, S, B_u)


def qddot(x, u, *params):
    """The constrained accelerations (speeds' rates) at one state."""
    return solve(x, u, params)[0]


def multipliers(x, u, *params):
    """The multipliers lam at one state (M qddot + C qdot + phi + fric = B_u u + A' lam)."""
    return solve(x, u, params)[1]


def contact_forces(x, u, *params):
    """The force (then moment, beside a 6-D contact) of each contact on the robot, world axes (contacts, 3 or 6): a
    selection of the multipliers (CONTACT_ROWS; a point contact's moment is zero)."""
    padded = jnp.concatenate([solve(x, u, params)[1], jnp.zeros((1,))])
    return padded[jnp.array(CONTACT_ROWS, dtype=int)]


def _derivatives(x, u, params):
    """(D, dlam): the derivatives of qddot (N x (N_Q + N + M_INPUTS)) and of lam (K x ...) along x, then u, at one
    state: [M -A'; A 0] [dqddot; dlam] = -constrained_residual_jac_fun(x, u, qddot, lam) (the inverse dynamics'
    derivatives with the constraint forces as external forces, at fixed qddot and lam) and [B_u; 0] for u, solved
    with the factor of M + A'WA and S of the solve for every column."""
    from .constrained_residual_jac_fun import _body as _kkt_jac  # a package that differentiates has it

    qddot_, lam, (L, A, w, Y, S, B_u) = solve(x, u, params)
    kkt = _kkt_jac(x, u, qddot_, lam, *params)
    R = jnp.concatenate([-kkt[:N], B_u], axis=1)
    h = jnp.concatenate([-kkt[N:], jnp.zeros((K, M_INPUTS), kkt.dtype)], axis=1)
    D = _cho_solve((L, True), R + A.T @ (w[:, None] * h))
    dlam = jnp.linalg.solve(S, h - A @ D)
    return D + Y @ dlam, dlam


def linearized(x, u, *params):
    """(A, B) of the constrained xdot = [qdot; qddot(x, u)] with lam eliminated, at one state (:func:`_derivatives`)."""
    D, _ = _derivatives(x, u, params)
    if not SPEEDS:
        return _runtime.linearization(D, N, M_INPUTS)
    from .qdot_jac_fun import _body as _rates  # a package with generalized speeds has it

    rates = _rates(x, *params)
    if N_Q == N:
        return _runtime.linearization(D, N, M_INPUTS, rates)
    if not FREE_FLYER:
        return _runtime.linearization(D, N, M_INPUTS, *_runtime.chart_rows(rates, N))
    from . import _free_flyer

    return _runtime.linearization(D, N, M_INPUTS, _free_flyer.tangent_kinematics(x), rates[:, N_Q:])


def contact_forces_jac(x, u, *params):
    """(dF/dx, dF/du) of contact_forces at one state: (contacts, 3 or 6, 2 N) along the state's tangent space (the
    coordinates' columns through S(q) = dqdot/dv with a quaternion base) and (contacts, 3 or 6, M_INPUTS)."""
    _, dlam = _derivatives(x, u, params)
    n_x = N_Q + N
    columns = dlam[:, :n_x]
    if N_Q != N:
        from .qdot_jac_fun import _body as _rates  # a package with a quaternion base has it

        columns = jnp.concatenate([columns[:, :N_Q] @ _rates(x, *params)[:, N_Q:], columns[:, N_Q:]], axis=1)
    padded = jnp.concatenate([jnp.concatenate([columns, dlam[:, n_x:]], axis=1), jnp.zeros((1, 2 * N + M_INPUTS))])
    selected = padded[jnp.array(CONTACT_ROWS, dtype=int)]
    return selected[..., : 2 * N], selected[..., 2 * N :]
