# Runtime of a constrained model's generated JAX package: the numpy target's structured solve (runtime/_constrained.py
# of the Python target) on the one-state bodies of the generated functions, in jax.numpy. Copied as _constrained.py
# after the package's header by sls.backends.jax, with the model's sizes; these leading comment lines are not copied.

import jax.numpy as jnp
from jax.scipy.linalg import cho_solve as _cho_solve

from . import _runtime
from .C_fun import _body as _C
from .C_jac_fun import _body as _C_jac
from .constraint_bias_fun import _body as _bias
from .constraint_bias_jac_fun import _body as _bias_jac
from .constraint_jac_fun import _body as _A
from .constraint_jac_jac_fun import _body as _A_jac
from .fric_jac_fun import _body as _fric_jac
from .input_matrix_fun import _body as _B_u
from .input_matrix_jac_fun import _body as _B_u_jac
from .M_fun import _body as _M
from .M_jac_fun import _body as _M_jac
from .phi_jac_fun import _body as _phi_jac
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


def linearized(x, u, *params):
    """(A, B) of the constrained xdot = [qdot; qddot(x, u)] with lam eliminated, at one state: differentiating
    M qddot = f + A' lam and A qddot = g along x_l gives M dqddot = df - dM qddot + dA' lam + A' dlam and
    A dqddot = dg - dA qddot (= h), solved with the same factor and S for every column."""
    qddot_, lam, (L, A, w, Y, S, B_u) = solve(x, u, params)
    dq = x[N_Q:]
    dM = _M_jac(x, *params)
    dA = _A_jac(x, *params)
    df = jnp.einsum("ajl,j->al", _B_u_jac(x, *params), u)
    df = df - jnp.einsum("ajl,j->al", _C_jac(x, *params), dq) - _phi_jac(x, *params) - _fric_jac(x, *params)
    df = df.at[:, N_Q:].add(-_C(x, *params))
    R = df - jnp.einsum("abl,b->al", dM, qddot_) + jnp.einsum("ial,i->al", dA, lam)
    R = jnp.concatenate([R, B_u], axis=1)
    h = _bias_jac(x, *params) - jnp.einsum("ial,a->il", dA, qddot_)
    h = jnp.concatenate([h, jnp.zeros((K, M_INPUTS), h.dtype)], axis=1)
    D = _cho_solve((L, True), R + A.T @ (w[:, None] * h))
    D = D + Y @ jnp.linalg.solve(S, h - A @ D)
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
