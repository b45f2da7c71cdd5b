"""LQR designs at an equilibrium of a generated package: continuous (:func:`lqr`) and sampled (:func:`dlqr`).

Both linearize the nonlinear model with the package's ``linearized_model`` at
a checked equilibrium, check stabilizability (PBH test), solve the algebraic
Riccati equation and return an :class:`LQRResult`, which is also the
controller ``u = u_eq − K (x − x_eq)`` that :func:`sls.control.simulate` takes.
With a quaternion base the design is in the tangent space (``Q`` and ``S``
are ``2 N_V × 2 N_V``, ``K`` is ``m × 2 N_V``), the equilibrium a full state
(``N_Q + N_V``) and the controller ``u = u_eq − K [difference(q_eq, q); v − v_eq]``
(:mod:`sls.control.tangent`).
A constrained package is designed on the reduced coordinates ``z = Tᵀ δx``
(:func:`sls.control.constraint_basis`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from sls.control.equilibrium import equilibrium_constraint_basis, equilibrium_input
from sls.control.linear import discretize
from sls.control.package import (
    Package,
    call,
    checked_params,
    coordinate_count,
    coordinate_rates,
    fmt,
    input_vector,
    load_package,
    state_vector,
)
from sls.control.tangent import deviation, feedback, unit_state
from sls.errors import ControlError

__all__ = ["LQRResult", "dlqr", "lqr", "weight_matrix"]


def weight_matrix(value: object, size: int, name: str, *, definite: bool) -> np.ndarray:
    """A weight ``Q`` or ``R`` as a symmetric ``size × size`` matrix.

    ``value`` is a scalar (``value · I``), a vector of the ``size`` diagonal
    entries, or the full matrix. It must be symmetric and positive
    semidefinite (``definite=False``, ``Q``) or positive definite
    (``definite=True``, ``R``).
    """
    try:
        array = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ControlError(f"{name} must be a scalar, a vector or a matrix of numbers, got {value!r}") from None
    if array.ndim == 0:
        array = array * np.eye(size)
    elif array.ndim == 1:
        if array.shape[0] != size:
            raise ControlError(
                f"{name} as a vector holds the diagonal and must have length {size}, got length {array.shape[0]}"
            )
        array = np.diag(array)
    elif array.ndim == 2:
        if array.shape != (size, size):
            raise ControlError(f"{name} must be a {size}x{size} matrix, got shape {array.shape[0]}x{array.shape[1]}")
    else:
        raise ControlError(
            f"{name} must be a scalar, a vector of {size} diagonal entries or a {size}x{size} matrix, "
            f"got shape {array.shape}"
        )
    if not np.isfinite(array).all():
        raise ControlError(f"{name} must be finite")
    scale = max(1.0, float(np.abs(array).max()))
    if np.abs(array - array.T).max() > 1e-10 * scale:
        raise ControlError(f"{name} must be symmetric")
    array = (array + array.T) / 2
    lowest = float(np.linalg.eigvalsh(array).min())
    if definite and lowest <= 1e-12 * scale:
        raise ControlError(f"{name} must be positive definite (smallest eigenvalue {lowest:.3g})")
    if not definite and lowest < -1e-10 * scale:
        raise ControlError(f"{name} must be positive semidefinite (smallest eigenvalue {lowest:.3g})")
    return array


@dataclass(frozen=True)
class LQRResult:
    """An LQR design ``u = u_eq − K (x − x_eq)`` at an equilibrium.

    Unpacks like python-control's ``lqr``: ``K, S, E = lqr(...)``. Calling it,
    ``result(t, x)``, is the controller (the signature :func:`simulate` takes).
    With a quaternion base ``x − x_eq`` is the tangent vector
    ``δx = [difference(q_eq, q); v − v_eq]`` (``deviation``), and the sizes
    ``2n`` below are ``2 N_V`` (``x_eq`` has ``N_Q + N_V`` entries).
    """

    K: np.ndarray  #: (m, 2n) gain
    S: np.ndarray  #: (2n, 2n) solution of the continuous algebraic Riccati equation
    poles: np.ndarray  #: (2n,) closed-loop eigenvalues of A − B K
    A: np.ndarray  #: (2n, 2n) linearization at the equilibrium
    B: np.ndarray  #: (2n, m)
    x_eq: np.ndarray  #: (N_Q + N_V,) equilibrium state (2n entries without a quaternion base)
    u_eq: np.ndarray  #: (m,) equilibrium input
    Q: np.ndarray = field(repr=False)  #: (2n, 2n) state weight
    R: np.ndarray = field(repr=False)  #: (m, m) input weight
    #: sample time of a :func:`dlqr` design (``A``, ``B`` are then the discrete ones); None: continuous
    dt: float | None = None
    #: constrained package: the basis T of the reduced coordinates z = Tᵀ δx the design was made on
    #: (``poles`` are those of the reduced loop, 2n − k_h − k of them); None otherwise
    basis: np.ndarray | None = field(default=None, repr=False)
    #: the map x ↦ δx (N_Q + N_V → 2 N_V) of a package with a quaternion base; None: δx = x − x_eq
    deviation: Callable[[np.ndarray], np.ndarray] | None = field(default=None, repr=False, compare=False)

    @property
    def E(self) -> np.ndarray:
        """The closed-loop eigenvalues (python-control's name)."""
        return self.poles

    def __iter__(self) -> Iterator[np.ndarray]:
        return iter((self.K, self.S, self.poles))

    def __call__(self, t: float, x: object) -> np.ndarray:
        return feedback(self.K, self.x_eq, self.u_eq, self.deviation, x)

    controller = __call__


_UNWEIGHTED = "a mode on the imaginary axis is probably not weighted by Q: make Q positive definite"


def lqr(
    pkg: Package,
    x_eq: object,
    u_eq: object = None,
    Q: object = 1.0,
    R: object = 1.0,
    *,
    N: object = None,
    params: Mapping[str, float] | None = None,
    tol: float = 1e-8,
) -> LQRResult:
    """Infinite-horizon LQR at the equilibrium ``(x_eq, u_eq)`` of the nonlinear model.

    Minimizes ``∫ δxᵀQ δx + δuᵀR δu + 2 δxᵀN δu dt`` for the linearization
    ``δẋ = A δx + B δu`` given by the package's ``linearized_model``; the
    control law is ``u = u_eq − K (x − x_eq)``.

    Parameters
    ----------
    pkg : module or path
        A generated package.
    x_eq : array_like, (N_Q + N_V,)
        Equilibrium state (zero velocities), ``2n`` entries without a
        quaternion base.
    u_eq : array_like, (m,), optional
        Equilibrium input; ``None`` computes it with :func:`equilibrium_input`.
    Q, R : scalar, vector or matrix
        State and input weights: a scalar (times identity), the diagonal, or
        the full symmetric matrix; ``Q`` ⪰ 0 (2n×2n, the tangent space's
        2 N_V × 2 N_V with a quaternion base: :func:`sls.control.tangent.tangent_names`), ``R`` ≻ 0 (m×m).
    N : array_like, (2n, m), optional
        Cross weight.
    params : dict, optional
        Parameter values for the generated functions.
    tol : float
        Relative tolerance of the equilibrium check.

    Returns
    -------
    LQRResult
        ``K``, ``S``, ``poles`` (closed-loop eigenvalues), ``A``, ``B``, ...

    Raises
    ------
    ControlError
        If ``(x_eq, u_eq)`` is not an equilibrium (the message gives ``ẋ``),
        ``(A, B)`` is not stabilizable (it counts the uncontrollable unstable
        modes), a weight has the wrong shape or sign, or the Riccati equation
        has no stabilizing solution.
    """
    problem = _linearized_equilibrium(pkg, x_eq, u_eq, Q, R, N, params, tol)
    basis = equilibrium_constraint_basis(pkg, problem.x_eq, params)
    A, B, Qz, Nz = _reduced(basis, problem.A, problem.B, problem.Q, problem.N)
    _check_stabilizable(A, B, discrete=False)
    try:
        S = scipy.linalg.solve_continuous_are(A, B, Qz, problem.R, s=Nz)
    except (np.linalg.LinAlgError, ValueError) as exc:
        raise ControlError(f"the Riccati equation has no stabilizing solution ({exc}); {_UNWEIGHTED}") from None
    cross = B.T @ S if Nz is None else B.T @ S + Nz.T
    K = np.linalg.solve(problem.R, cross)
    poles = np.linalg.eigvals(A - B @ K)
    if not np.all(poles.real < 0):
        raise ControlError(
            f"the Riccati solution does not stabilize the loop (closed-loop poles {fmt(poles)}); {_UNWEIGHTED}"
        )
    order = np.lexsort((poles.imag, poles.real))
    K, S = _expanded(basis, K, S)
    return LQRResult(
        K=K,
        S=S,
        poles=poles[order],
        A=problem.A,
        B=problem.B,
        x_eq=problem.x_eq,
        u_eq=problem.u_eq,
        Q=problem.Q,
        R=problem.R,
        basis=basis,
        deviation=problem.deviation,
    )


def dlqr(
    pkg: Package,
    x_eq: object,
    u_eq: object = None,
    Q: object = 1.0,
    R: object = 1.0,
    *,
    dt: float,
    N: object = None,
    params: Mapping[str, float] | None = None,
    tol: float = 1e-8,
) -> LQRResult:
    """Discrete-time LQR at ``(x_eq, u_eq)`` for a controller sampling every ``dt`` (zero-order hold).

    The linearization is discretized exactly (:func:`discretize`), then
    ``Σ δx[k]ᵀQ δx[k] + δu[k]ᵀR δu[k] + 2 δx[k]ᵀN δu[k]`` is minimized with
    the discrete algebraic Riccati equation (like python-control's ``dlqr``
    on the discretized system). Arguments and checks as :func:`lqr`; the
    result's ``A``, ``B`` are the discrete ``Ad``, ``Bd``, ``poles`` lie inside
    the unit circle and ``dt`` is set. Apply ``u = u_eq − K (x − x_eq)`` at
    every sample and hold it.
    """
    try:
        dt = float(dt)
    except (TypeError, ValueError):
        raise ControlError(f"dt must be a positive number, got {dt!r}") from None
    problem = _linearized_equilibrium(pkg, x_eq, u_eq, Q, R, N, params, tol)
    basis = equilibrium_constraint_basis(pkg, problem.x_eq, params)
    A, B, Qz, Nz = _reduced(basis, problem.A, problem.B, problem.Q, problem.N)
    Ad, Bd = discretize(A, B, dt)
    _check_stabilizable(Ad, Bd, discrete=True)
    try:
        S = scipy.linalg.solve_discrete_are(Ad, Bd, Qz, problem.R, s=Nz)
    except (np.linalg.LinAlgError, ValueError) as exc:
        raise ControlError(
            f"the discrete Riccati equation has no stabilizing solution ({exc}); {_UNWEIGHTED}"
        ) from None
    cross = Bd.T @ S @ Ad if Nz is None else Bd.T @ S @ Ad + Nz.T
    K = np.linalg.solve(problem.R + Bd.T @ S @ Bd, cross)
    poles = np.linalg.eigvals(Ad - Bd @ K)
    if not np.all(np.abs(poles) < 1):
        raise ControlError(
            f"the Riccati solution does not stabilize the loop (closed-loop poles {fmt(poles)}); {_UNWEIGHTED}"
        )
    order = np.lexsort((poles.imag, -np.abs(poles)))
    K, S = _expanded(basis, K, S)
    if basis is not None:
        Ad, Bd = discretize(problem.A, problem.B, dt)
    return LQRResult(
        K=K,
        S=S,
        poles=poles[order],
        A=Ad,
        B=Bd,
        x_eq=problem.x_eq,
        u_eq=problem.u_eq,
        Q=problem.Q,
        R=problem.R,
        dt=dt,
        basis=basis,
        deviation=problem.deviation,
    )


@dataclass(frozen=True)
class _Problem:
    """The checked arguments of :func:`lqr`/:func:`dlqr` and the linearization ``(A, B)`` at the equilibrium."""

    A: np.ndarray  #: (2n, 2n)
    B: np.ndarray  #: (2n, m)
    x_eq: np.ndarray  #: (2n,)
    u_eq: np.ndarray  #: (m,)
    Q: np.ndarray  #: (2n, 2n)
    R: np.ndarray  #: (m, m)
    N: np.ndarray | None  #: (2n, m) or None
    deviation: Callable[[np.ndarray], np.ndarray] | None  #: x ↦ δx with a quaternion base, else None


def _linearized_equilibrium(
    pkg: Package,
    x_eq: object,
    u_eq: object,
    Q: object,
    R: object,
    N: object,
    params: Mapping[str, float] | None,
    tol: float,
) -> _Problem:
    module = load_package(pkg)
    values = checked_params(module, params)
    n, m = module.N_DOF, module.N_INPUTS
    n_q = coordinate_count(module)
    x = unit_state(module, state_vector(module, x_eq, "x_eq"), "x_eq")
    if u_eq is None:
        u_eq, _ = equilibrium_input(module, x, params=values, tol=tol)
    u = input_vector(module, u_eq, "u_eq")
    Q_matrix = weight_matrix(Q, 2 * n, "Q", definite=False)
    R_matrix = weight_matrix(R, m, "R", definite=True)
    N_matrix = None
    if N is not None:
        N_matrix = np.asarray(N, dtype=float)
        if N_matrix.shape != (2 * n, m):
            raise ControlError(f"N must be a {2 * n}x{m} matrix, got shape {N_matrix.shape}")

    xdot = np.concatenate([coordinate_rates(module, x, values), call(module, "qddot_fun", x, u, params=values)])
    rest = np.concatenate([x[:n_q], np.zeros(n)])
    scale = max(1.0, float(np.linalg.norm(call(module, "qddot_fun", rest, np.zeros(m), params=values))))
    residual = float(np.linalg.norm(xdot))
    if not residual <= tol * scale:
        moving = np.any(x[n_q:] != 0)
        hint = "x_eq must have zero velocities" if moving else "use equilibrium_input(pkg, x_eq) for u_eq"
        raise ControlError(
            f"(x_eq, u_eq) is not an equilibrium: xdot = f(x_eq, u_eq) = {fmt(xdot)} (residual {residual:.3g}); {hint}"
        )
    A, B = call(module, "linearized_model", x, u, params=values)
    return _Problem(
        np.asarray(A, dtype=float),
        np.asarray(B, dtype=float),
        x,
        u,
        Q_matrix,
        R_matrix,
        N_matrix,
        deviation(module, x, values),
    )


def _reduced(
    basis: np.ndarray | None, A: np.ndarray, B: np.ndarray, Q: np.ndarray, N: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """The linearization and weights in the reduced coordinates ``z = Tᵀ δx`` (unchanged without constraints)."""
    if basis is None:
        return A, B, Q, N
    return basis.T @ A @ basis, basis.T @ B, basis.T @ Q @ basis, None if N is None else basis.T @ N


def _expanded(basis: np.ndarray | None, K: np.ndarray, S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A reduced design's gain and Riccati solution in the full state: ``K Tᵀ``, ``T S Tᵀ``."""
    if basis is None:
        return K, S
    return K @ basis.T, basis @ S @ basis.T


def _uncontrollable_unstable(
    A: np.ndarray, B: np.ndarray, tol: float = 1e-9, *, discrete: bool = False
) -> list[complex]:
    """Eigenvalues of A with Re ≥ 0 (``discrete``: |z| ≥ 1) that fail the PBH rank test (with multiplicity)."""
    size = A.shape[0]
    scale = max(1.0, float(np.linalg.norm(A, 2)), float(np.linalg.norm(B, 2)))
    eigenvalues = np.linalg.eigvals(A)
    clusters: list[complex] = []
    for value in eigenvalues:
        if (abs(value) < 1 - 1e-8) if discrete else (value.real < -1e-8 * scale):
            continue
        if not any(abs(value - c) <= 1e-6 * scale for c in clusters):
            clusters.append(value)
    bad: list[complex] = []
    for value in clusters:
        pencil = np.hstack([A - value * np.eye(size), B])
        singular = np.linalg.svd(pencil, compute_uv=False)
        deficiency = int(np.sum(singular <= tol * scale * size))
        bad.extend([complex(value)] * deficiency)
    return bad


def _check_stabilizable(A: np.ndarray, B: np.ndarray, *, discrete: bool) -> None:
    bad = _uncontrollable_unstable(A, B, discrete=discrete)
    if bad:
        plural = "s" if len(bad) != 1 else ""
        scale = max(1.0, float(np.abs(A).max()))
        strict = [abs(v) > 1 + 1e-8 for v in bad] if discrete else [v.real > 1e-8 * scale for v in bad]
        kind = "unstable mode" if all(strict) else "mode"
        border = "on or outside the unit circle" if discrete else "on or right of the imaginary axis"
        where = "" if kind == "unstable mode" else f" {border}"
        raise ControlError(
            f"(A, B) is not stabilizable: {len(bad)} {kind}{plural}{where} (eigenvalue{plural} {fmt(np.array(bad))}) "
            "cannot be reached by the inputs (PBH test)"
        )
