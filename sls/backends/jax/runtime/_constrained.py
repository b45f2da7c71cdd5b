# Runtime of a constrained model's generated JAX package: the numpy target's structured solve (runtime/_constrained.py
# of the Python target) on the one-state bodies of the generated functions, in jax.numpy. Copied as _constrained.py
# after the package's header by sls.backends.jax, with the model's sizes; these leading comment lines are not copied.

import jax
import jax.numpy as jnp
from jax.scipy.linalg import cho_solve as _cho_solve

from . import _runtime
from ._terms import _body as _terms
from .input_matrix_fun import _body as _B_u

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


def terms(x, u, params):
    """(M (N x N), f (N,), A (K x N), g (K,)) at one state, from the fused terms (_terms.py): M qddot = f + A' lam,
    A qddot = g, f = B_u u - tau(x, 0)."""
    M, f, A, g = (_runtime.array(entries, x.dtype) for entries in _terms(x, u, *params))
    return M.reshape((N, N)), f, A.reshape((K, N)), g


def solve_terms(M, f, A, g):
    """(qddot, lam, (L, A, w, Y, S)) from the terms of one state: the Cholesky factor L of M + A'WA, the Schur
    complement S = A Ma^-1 A' for lam (jnp.linalg.solve), as the numpy target's."""
    Ma, w = _augmented(M, A)
    f = f + A.T @ (w * g)
    L = jnp.linalg.cholesky(Ma)
    Z = _cho_solve((L, True), jnp.concatenate([f[:, None], A.T], axis=1))
    free, Y = Z[:, 0], Z[:, 1:]  # Ma^-1 f and Ma^-1 A'
    S = A @ Y
    lam = jnp.linalg.solve(S, g - A @ free)
    return free + Y @ lam, lam, (L, A, w, Y, S)


def kkt_solve(factors, top, bottom):
    """(dqddot, dlam) solving [M -A'; A 0] [dqddot; dlam] = [top; bottom] with the factors of :func:`solve_terms`
    (top: N or N x columns, bottom: K or K x columns): D = Ma^-1 (top + A'W bottom), dlam = S^-1 (bottom - A D),
    dqddot = D + Ma^-1 A' dlam."""
    L, A, w, Y, S = factors
    D = _cho_solve((L, True), top + A.T @ (w * bottom.T).T)
    dlam = jnp.linalg.solve(S, bottom - A @ D)
    return D + Y @ dlam, dlam


def solve(x, u, params):
    """(qddot, lam, factors) at one state (:func:`terms`, :func:`solve_terms`)."""
    return solve_terms(*terms(x, u, params))


@jax.custom_jvp
def solution(x, u, params):
    """(qddot, lam) at one state. Its derivatives are implicit, not those of the factorizations: with the terms'
    tangents (dM, df, dA, dg) along (dx, du, dparams), [M -A'; A 0] [dqddot; dlam] = -[dM qddot - df - dA' lam;
    dA qddot - dg], solved with the factors of the solve (a gradient of a rollout compiles the terms' derivatives and
    two solves, not the derivatives of a Cholesky and an LU factorization)."""
    return solve(x, u, params)[:2]


@solution.defjvp
def _solution_jvp(primals, tangents):
    (M, f, A, g), (dM, df, dA, dg) = jax.jvp(terms, primals, tangents)
    qddot_, lam, factors = solve_terms(M, f, A, g)
    dqddot, dlam = kkt_solve(factors, -(dM @ qddot_ - df - dA.T @ lam), -(dA @ qddot_ - dg))
    return (qddot_, lam), (dqddot, dlam)


def _solved(x, u, params):
    """(qddot, lam) at one state: :func:`solution`, or :func:`solve` itself in a call on one state compiled on its own
    (_runtime.jit's, where nothing outside differentiates it: no custom_jvp to lower)."""
    return solve(x, u, params)[:2] if _runtime._ONE.get() is not None else solution(x, u, params)


def batched(body, arrays, params):
    """_runtime.batched, except in a call on one state compiled on its own (_runtime.jit's, where nothing outside maps
    or differentiates it): ``body`` itself, without the wrappers of _runtime.chunked to lower."""
    if _runtime._ONE.get() is not None and all(array.ndim == 1 for array in arrays):
        return body(*arrays, *params)
    return _runtime.batched(body, arrays, params)


def qddot(x, u, *params):
    """The constrained accelerations (speeds' rates) at one state."""
    return _solved(x, u, params)[0]


def multipliers(x, u, *params):
    """The multipliers lam at one state (M qddot + C qdot + phi + fric = B_u u + A' lam)."""
    return _solved(x, u, params)[1]


def contact_forces(x, u, *params):
    """The force (then moment, beside a 6-D contact) of each contact on the robot, world axes (contacts, 3 or 6): a
    selection of the multipliers (CONTACT_ROWS; a point contact's moment is zero)."""
    padded = jnp.concatenate([_solved(x, u, params)[1], jnp.zeros((1,))])
    return padded[jnp.array(CONTACT_ROWS, dtype=int)]


def _derivatives(x, u, params):
    """(D, dlam): the derivatives of qddot (N x (N_Q + N + M_INPUTS)) and of lam (K x ...) along x, then u, at one
    state: [M -A'; A 0] [dqddot; dlam] = -constrained_residual_jac_fun(x, u, qddot, lam) (the inverse dynamics'
    derivatives with the constraint forces as external forces, at fixed qddot and lam) and [B_u; 0] for u, solved
    with the factor of M + A'WA and S of the solve for every column."""
    from .constrained_residual_jac_fun import _body as _kkt_jac  # a package that differentiates has it

    qddot_, lam, factors = solve(x, u, params)
    kkt = _kkt_jac(x, u, qddot_, lam, *params)
    top = jnp.concatenate([-kkt[:N], _B_u(x, *params)], axis=1)
    bottom = jnp.concatenate([-kkt[N:], jnp.zeros((K, M_INPUTS), kkt.dtype)], axis=1)
    return kkt_solve(factors, top, bottom)


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
