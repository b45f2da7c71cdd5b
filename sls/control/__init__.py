"""The control workflow on a generated package: equilibrium, LQR, ZOH, simulation.

Every function takes ``pkg``: an imported generated package (a module) or the
path of one (the folder ``sls generate --out`` wrote), and ``params``: a dict
of parameter values passed as keyword arguments to the generated functions
(missing ones keep the model's defaults), so one generation serves a sweep.

* :func:`equilibrium_input` — the input ``u`` that holds a state at rest
  (``q̈ = 0``), least squares for underactuated systems.
* :func:`lqr` — the infinite-horizon LQR gain for ``u = u_eq − K (x − x_eq)``
  on the linearization at an equilibrium, with equilibrium and
  stabilizability checks; :func:`dlqr` the same for the zero-order-hold
  discretization with sample time ``dt``.
* :func:`discretize` — exact zero-order-hold discretization of ``(A, B)``.
* :func:`ctrb`, :func:`controllability_rank` — the controllability matrix and its rank.
* :func:`state_space` — the linearization as a python-control ``StateSpace``
  (needs python-control: ``pip install control``).
* :func:`simulate` — the nonlinear model, open or closed loop, with
  :func:`scipy.integrate.solve_ivp`; the result carries the energy.

Mistakes end in :class:`sls.errors.ControlError` (a ``ValueError``) with a
one-line message, also when a generated function fails (a mass matrix that is
singular for the given parameters, a state where the model is not defined):
the message names the function, the state and the cause.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import numpy as np
import scipy.linalg
from scipy.integrate import solve_ivp

from sls.errors import ControlError, MissingDependencyError

__all__ = [
    "LQRResult",
    "controllability_rank",
    "constraint_basis",
    "ctrb",
    "discretize",
    "dlqr",
    "equilibrium_input",
    "load_package",
    "lqr",
    "settling_time",
    "simulate",
    "state_space",
    "weight_matrix",
]

#: Functions a generated package must export for the control workflow.
REQUIRED = ("qddot_fun", "linearized_model", "input_matrix_fun", "tau_fun", "T_fun", "V_fun")

_counter = itertools.count()


# --------------------------------------------------------------------------
# the package and its arguments


def load_package(pkg: ModuleType | str | Path) -> ModuleType:
    """Return ``pkg`` if it is a generated package, else import it from its folder.

    A path is imported under a fresh private module name (like
    ``importlib.util.spec_from_file_location``), so two packages of the same
    folder name do not clash.
    """
    if isinstance(pkg, ModuleType):
        module = pkg
    elif isinstance(pkg, (str, Path)):
        path = Path(pkg)
        init = path / "__init__.py"
        if not init.is_file():
            raise ControlError(
                f"{path}: not a generated package (no __init__.py); run `sls generate --out {path}` first"
            )
        name = f"_sls_control_pkg_{next(_counter)}"
        spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(path)])
        if spec is None or spec.loader is None:  # not for an existing .py file; for the type checker
            raise ControlError(f"{path}: cannot import the generated package")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # a broken or foreign package: one line
            del sys.modules[name]
            raise ControlError(f"{path}: cannot import the generated package: {type(exc).__name__}: {exc}") from None
    else:
        raise ControlError(f"pkg must be a generated package (module) or the path of one, got {type(pkg).__name__}")
    missing = [f for f in REQUIRED + ("N_DOF", "N_INPUTS") if not hasattr(module, f)]
    if missing:
        raise ControlError(
            f"{getattr(module, '__name__', pkg)}: not a generated sls package with an input map "
            f"(missing {', '.join(missing)}); regenerate it with this sls version"
        )
    return module


def _params(module: ModuleType, params: dict | None) -> dict:
    params = dict(params or {})
    known = getattr(module, "PARAMS", {})
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise ControlError(f"unknown parameter '{unknown[0]}' (the model has: {', '.join(known) or 'none'})")
    for name, value in params.items():
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ControlError(f"parameter '{name}': value must be a number, got {value!r}") from None
        if not np.isfinite(number):
            raise ControlError(f"parameter '{name}': value must be finite, got {value!r}")
    required = [name for name, default in known.items() if default is None and name not in params]
    if required:
        raise ControlError(f"parameter '{required[0]}' has no default value; pass it in params")
    return params


def _vector(value: object, size: int, what: str, names: tuple = ()) -> np.ndarray:
    """A flat vector of ``size`` finite numbers; a column ``(size, 1)`` or row ``(1, size)`` is flattened."""
    try:
        array = np.asarray(value)
        if np.iscomplexobj(array):
            raise TypeError("complex")
        array = array.astype(float)
    except (TypeError, ValueError):
        raise ControlError(f"{what} must be a vector of {size} real numbers, got {value!r}") from None
    if array.ndim == 0 and size == 1:
        array = array.reshape(1)
    if array.shape in ((size, 1), (1, size)):
        array = array.reshape(size)
    if array.shape != (size,):
        listing = f" [{', '.join(names)}]" if names else ""
        raise ControlError(f"{what} must have length {size}{listing}, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ControlError(f"{what} must be finite, got {array.tolist()}")
    return array


def _state(module: ModuleType, x: object, what: str) -> np.ndarray:
    return _vector(x, 2 * module.N_DOF, what, tuple(getattr(module, "STATE", ())))


def _input(module: ModuleType, u: object, what: str) -> np.ndarray:
    return _vector(u, module.N_INPUTS, what, tuple(getattr(module, "INPUTS", ())))


def _call(module: ModuleType, name: str, x: np.ndarray, *args, params: dict):
    """``module.name(x, *args, **params)``; a failure becomes a :class:`ControlError` naming the state and the cause."""
    try:
        return getattr(module, name)(x, *args, **params)
    except (ValueError, ArithmeticError, TypeError) as exc:  # LinAlgError and the domain errors are ValueErrors
        cause = str(exc) or type(exc).__name__
        if "x = [" not in cause:
            cause += f" at x = [{_labelled(module, x)}]"
        given = ", ".join(f"{key}={value:g}" for key, value in params.items())
        if cause.startswith(f"{name} "):  # the generated code named itself (a domain error)
            text = cause + (f" (with {given})" if given else "")
        else:
            text = f"{name}{' with ' + given if given else ''}: {cause}"
        if isinstance(exc, np.linalg.LinAlgError) and params:
            text += "; a mass, inertia or length of zero or below makes M singular: check the parameters"
        raise ControlError(text) from None


def _labelled(module: ModuleType, x: np.ndarray) -> str:
    names = tuple(getattr(module, "STATE", ())) or tuple(f"x{i + 1}" for i in range(len(x)))
    return ", ".join(f"{name}={value + 0.0:.6g}" for name, value in zip(names, np.asarray(x, dtype=float).reshape(-1)))


def _fmt(array: np.ndarray) -> str:
    values = np.asarray(array).reshape(-1)
    if np.iscomplexobj(values):
        return "[" + ", ".join(f"{v.real:.4g}{v.imag:+.4g}j" if v.imag else f"{v.real:.4g}" for v in values) + "]"
    return "[" + ", ".join(f"{v + 0.0:.4g}" for v in values) + "]"


# --------------------------------------------------------------------------
# equilibrium


def equilibrium_input(pkg, x, *, params: dict | None = None, tol: float = 1e-8) -> tuple[np.ndarray, float]:
    """The input that holds the state ``x`` with ``q̈ = 0``.

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
    params = _params(module, params)
    x = _state(module, x, "x")
    n = module.N_DOF
    if _constrained(module):
        # qddot is affine in u (lam included): qddot(x, u) = qddot(x, 0) + (dqddot/du) u.
        free = np.asarray(_call(module, "qddot_fun", x, np.zeros(module.N_INPUTS), params=params), dtype=float)
        _, B = _call(module, "linearized_model", x, np.zeros(module.N_INPUTS), params=params)
        u, *_ = np.linalg.lstsq(np.asarray(B, dtype=float)[n:], -free, rcond=None)
    else:
        needed = np.asarray(_call(module, "tau_fun", x, np.zeros(n), params=params), dtype=float)
        B_u = np.asarray(_call(module, "input_matrix_fun", x, params=params), dtype=float).reshape(n, module.N_INPUTS)
        u, *_ = np.linalg.lstsq(B_u, needed, rcond=None)
    qddot = np.asarray(_call(module, "qddot_fun", x, u, params=params), dtype=float)
    residual = float(np.linalg.norm(qddot))
    scale = max(1.0, float(np.linalg.norm(_call(module, "qddot_fun", x, np.zeros(module.N_INPUTS), params=params))))
    if not residual <= tol * scale:
        raise ControlError(
            f"no input holds x = {_fmt(x)} at rest: the best u = {_fmt(u)} leaves qddot = {_fmt(qddot)} "
            f"(residual {residual:.3g}); the inputs cannot balance the forces at this state"
        )
    return u, residual


# --------------------------------------------------------------------------
# weights


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


# --------------------------------------------------------------------------
# LQR


@dataclass(frozen=True)
class LQRResult:
    """An LQR design ``u = u_eq − K (x − x_eq)`` at an equilibrium.

    Unpacks like python-control's ``lqr``: ``K, S, E = lqr(...)``. Calling it,
    ``result(t, x)``, is the controller (the signature :func:`simulate` takes).
    """

    K: np.ndarray  #: (m, 2n) gain
    S: np.ndarray  #: (2n, 2n) solution of the continuous algebraic Riccati equation
    poles: np.ndarray  #: (2n,) closed-loop eigenvalues of A − B K
    A: np.ndarray  #: (2n, 2n) linearization at the equilibrium
    B: np.ndarray  #: (2n, m)
    x_eq: np.ndarray  #: (2n,) equilibrium state
    u_eq: np.ndarray  #: (m,) equilibrium input
    Q: np.ndarray = field(repr=False)  #: (2n, 2n) state weight
    R: np.ndarray = field(repr=False)  #: (m, m) input weight
    #: sample time of a :func:`dlqr` design (``A``, ``B`` are then the discrete ones); None: continuous
    dt: float | None = None
    #: constrained package: the basis T of the reduced coordinates z = Tᵀ δx the design was made on
    #: (``poles`` are those of the reduced loop, 2n − k_h − k of them); None otherwise
    basis: np.ndarray | None = field(default=None, repr=False)

    @property
    def E(self) -> np.ndarray:
        """The closed-loop eigenvalues (python-control's name)."""
        return self.poles

    def __iter__(self):
        return iter((self.K, self.S, self.poles))

    def __call__(self, t: float, x) -> np.ndarray:
        return self.u_eq - self.K @ (np.asarray(x, dtype=float) - self.x_eq)

    controller = __call__


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
    bad = []
    for value in clusters:
        pencil = np.hstack([A - value * np.eye(size), B])
        singular = np.linalg.svd(pencil, compute_uv=False)
        deficiency = int(np.sum(singular <= tol * scale * size))
        bad.extend([complex(value)] * deficiency)
    return bad


def lqr(
    pkg,
    x_eq,
    u_eq=None,
    Q=1.0,
    R=1.0,
    *,
    N=None,
    params: dict | None = None,
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
    x_eq : array_like, (2n,)
        Equilibrium state (zero velocities).
    u_eq : array_like, (m,), optional
        Equilibrium input; ``None`` computes it with :func:`equilibrium_input`.
    Q, R : scalar, vector or matrix
        State and input weights: a scalar (times identity), the diagonal, or
        the full symmetric matrix; ``Q`` ⪰ 0 (2n×2n), ``R`` ≻ 0 (m×m).
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
    A_full, B_full, x_eq, u_eq, Q_full, R, N_full = _linearized_equilibrium(pkg, x_eq, u_eq, Q, R, N, params, tol)
    basis = _constraint_basis(pkg, x_eq, params)
    A, B, Q, N = _reduced(basis, A_full, B_full, Q_full, N_full)
    _check_stabilizable(A, B, discrete=False)
    try:
        S = scipy.linalg.solve_continuous_are(A, B, Q, R, s=N)
    except (np.linalg.LinAlgError, ValueError) as exc:
        raise ControlError(f"the Riccati equation has no stabilizing solution ({exc}); {_UNWEIGHTED}") from None
    cross = B.T @ S if N is None else B.T @ S + N.T
    K = np.linalg.solve(R, cross)
    poles = np.linalg.eigvals(A - B @ K)
    if not np.all(poles.real < 0):
        raise ControlError(
            f"the Riccati solution does not stabilize the loop (closed-loop poles {_fmt(poles)}); {_UNWEIGHTED}"
        )
    order = np.lexsort((poles.imag, poles.real))
    K, S = _expanded(basis, K, S)
    return LQRResult(K=K, S=S, poles=poles[order], A=A_full, B=B_full, x_eq=x_eq, u_eq=u_eq, Q=Q_full, R=R, basis=basis)


def _constrained(module: ModuleType) -> bool:
    return getattr(module, "N_CONSTRAINTS", 0) > 0


def constraint_basis(pkg, x, *, params: dict | None = None) -> np.ndarray | None:
    """An orthonormal basis ``T`` (2n × 2n − k_h − k) of the state directions that keep the constraints at ``x``.

    For a constrained package: ``δq`` in the null space of the holonomic rows
    of ``A = constraint_jac_fun(x)`` and ``δq̇`` in the null space of all of
    ``A`` (at rest, the linearized constraints are ``A_h δq = 0`` and
    ``A δq̇ = 0``). The reduced coordinates are ``z = Tᵀ δx``; :func:`lqr` and
    :func:`dlqr` design on ``(Tᵀ A T, Tᵀ B)``. ``None`` for an unconstrained package.
    """
    module = load_package(pkg)
    if not _constrained(module):
        return None
    params = _params(module, params)
    x = _state(module, x, "x")
    n = module.N_DOF
    A = np.asarray(_call(module, "constraint_jac_fun", x, params=params), dtype=float).reshape(-1, n)
    positions = scipy.linalg.null_space(A[: module.N_HOLONOMIC]) if module.N_HOLONOMIC else np.eye(n)
    velocities = scipy.linalg.null_space(A)
    return scipy.linalg.block_diag(positions, velocities)


def _constraint_basis(pkg, x_eq, params):
    """:func:`constraint_basis` at an equilibrium, which must satisfy the constraints."""
    module = load_package(pkg)
    if not _constrained(module):
        return None
    values = np.asarray(_call(module, "constraint_fun", x_eq, params=_params(module, params)), dtype=float)
    if not np.all(np.abs(values) <= 1e-6 * max(1.0, float(np.abs(x_eq).max()))):
        raise ControlError(f"x_eq = {_fmt(x_eq)} violates the constraints: constraint_fun(x_eq) = {_fmt(values)}")
    return constraint_basis(module, x_eq, params=params)


def _reduced(basis, A, B, Q, N):
    """The linearization and weights in the reduced coordinates ``z = Tᵀ δx`` (unchanged without constraints)."""
    if basis is None:
        return A, B, Q, N
    return basis.T @ A @ basis, basis.T @ B, basis.T @ Q @ basis, None if N is None else basis.T @ N


def _expanded(basis, K, S):
    """A reduced design's gain and Riccati solution in the full state: ``K Tᵀ``, ``T S Tᵀ``."""
    if basis is None:
        return K, S
    return K @ basis.T, basis @ S @ basis.T


_UNWEIGHTED = "a mode on the imaginary axis is probably not weighted by Q: make Q positive definite"


def dlqr(
    pkg,
    x_eq,
    u_eq=None,
    Q=1.0,
    R=1.0,
    *,
    dt: float,
    N=None,
    params: dict | None = None,
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
    A_full, B_full, x_eq, u_eq, Q_full, R, N_full = _linearized_equilibrium(pkg, x_eq, u_eq, Q, R, N, params, tol)
    basis = _constraint_basis(pkg, x_eq, params)
    A, B, Q, N = _reduced(basis, A_full, B_full, Q_full, N_full)
    Ad, Bd = discretize(A, B, dt)
    _check_stabilizable(Ad, Bd, discrete=True)
    try:
        S = scipy.linalg.solve_discrete_are(Ad, Bd, Q, R, s=N)
    except (np.linalg.LinAlgError, ValueError) as exc:
        raise ControlError(
            f"the discrete Riccati equation has no stabilizing solution ({exc}); {_UNWEIGHTED}"
        ) from None
    cross = Bd.T @ S @ Ad if N is None else Bd.T @ S @ Ad + N.T
    K = np.linalg.solve(R + Bd.T @ S @ Bd, cross)
    poles = np.linalg.eigvals(Ad - Bd @ K)
    if not np.all(np.abs(poles) < 1):
        raise ControlError(
            f"the Riccati solution does not stabilize the loop (closed-loop poles {_fmt(poles)}); {_UNWEIGHTED}"
        )
    order = np.lexsort((poles.imag, -np.abs(poles)))
    K, S = _expanded(basis, K, S)
    if basis is not None:
        Ad, Bd = discretize(A_full, B_full, dt)
    return LQRResult(K=K, S=S, poles=poles[order], A=Ad, B=Bd, x_eq=x_eq, u_eq=u_eq, Q=Q_full, R=R, dt=dt, basis=basis)


def _linearized_equilibrium(pkg, x_eq, u_eq, Q, R, N, params, tol):
    """Checked arguments of :func:`lqr`/:func:`dlqr` and the linearization ``(A, B)`` at the equilibrium."""
    module = load_package(pkg)
    params = _params(module, params)
    n, m = module.N_DOF, module.N_INPUTS
    x_eq = _state(module, x_eq, "x_eq")
    if u_eq is None:
        u_eq, _ = equilibrium_input(module, x_eq, params=params, tol=tol)
    u_eq = _input(module, u_eq, "u_eq")
    Q = weight_matrix(Q, 2 * n, "Q", definite=False)
    R = weight_matrix(R, m, "R", definite=True)
    if N is not None:
        N = np.asarray(N, dtype=float)
        if N.shape != (2 * n, m):
            raise ControlError(f"N must be a {2 * n}x{m} matrix, got shape {N.shape}")

    xdot = np.concatenate([x_eq[n:], _call(module, "qddot_fun", x_eq, u_eq, params=params)])
    rest = np.concatenate([x_eq[:n], np.zeros(n)])
    scale = max(1.0, float(np.linalg.norm(_call(module, "qddot_fun", rest, np.zeros(m), params=params))))
    residual = float(np.linalg.norm(xdot))
    if not residual <= tol * scale:
        hint = (
            "x_eq must have zero velocities" if np.any(x_eq[n:] != 0) else "use equilibrium_input(pkg, x_eq) for u_eq"
        )
        raise ControlError(
            f"(x_eq, u_eq) is not an equilibrium: xdot = f(x_eq, u_eq) = {_fmt(xdot)} (residual {residual:.3g}); {hint}"
        )
    A, B = _call(module, "linearized_model", x_eq, u_eq, params=params)
    return np.asarray(A, dtype=float), np.asarray(B, dtype=float), x_eq, u_eq, Q, R, N


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
            f"(A, B) is not stabilizable: {len(bad)} {kind}{plural}{where} (eigenvalue{plural} {_fmt(np.array(bad))}) "
            "cannot be reached by the inputs (PBH test)"
        )


# --------------------------------------------------------------------------
# controllability and python-control


def ctrb(A, B) -> np.ndarray:
    """The controllability matrix ``[B, AB, A²B, …, A^(s−1)B]`` (``s`` = number of states), as MATLAB's ``ctrb``."""
    A, B = _system(A, B)
    blocks = [B]
    for _ in range(A.shape[0] - 1):
        blocks.append(A @ blocks[-1])
    return np.hstack(blocks)


def controllability_rank(A, B, tol: float | None = None) -> int:
    """Rank of the controllability matrix (``== len(A)``: controllable).

    ``A`` is scaled to unit norm first (the rank is the same, the powers of
    ``A`` stay of order one), so the numerical rank is meaningful for larger
    systems too; ``tol`` as :func:`numpy.linalg.matrix_rank`.
    """
    A, B = _system(A, B)
    scale = max(1.0, float(np.linalg.norm(A, 2)))
    C = ctrb(A / scale, B / max(1e-300, float(np.linalg.norm(B, 2))))
    return int(np.linalg.matrix_rank(C, tol))


def _system(A, B) -> tuple[np.ndarray, np.ndarray]:
    try:
        A = np.asarray(A, dtype=float)
        B = np.asarray(B, dtype=float)
    except (TypeError, ValueError):
        raise ControlError("A and B must be real matrices") from None
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ControlError(f"A must be a square matrix, got shape {A.shape}")
    if B.ndim == 1:
        B = B.reshape(-1, 1)
    if B.ndim != 2 or B.shape[0] != A.shape[0]:
        raise ControlError(f"B must have {A.shape[0]} rows (one per state), got shape {B.shape}")
    return A, B


CONTROL_HINT = "this needs python-control, which is not installed; install it with: pip install control"


def state_space(pkg, x, u=None, *, params: dict | None = None):
    """The linearization at ``(x, u)`` as a python-control ``StateSpace``.

    ``A``, ``B`` from ``linearized_model``, ``C = I`` (every state is an
    output), ``D = 0``; states, inputs and outputs carry the package's names.
    ``u=None`` takes the input that holds ``x`` (:func:`equilibrium_input`).
    For a sampled controller use ``sys.sample(dt)`` (or :func:`dlqr`).
    Raises :class:`~sls.errors.MissingDependencyError` without python-control.
    """
    try:
        import control
    except ImportError:
        raise MissingDependencyError(f"state_space: {CONTROL_HINT}") from None
    module = load_package(pkg)
    params = _params(module, params)
    x = _state(module, x, "x")
    u = equilibrium_input(module, x, params=params)[0] if u is None else _input(module, u, "u")
    A, B = _call(module, "linearized_model", x, u, params=params)
    size, m = A.shape[0], B.shape[1]
    states = list(getattr(module, "STATE", ())) or [f"x{i + 1}" for i in range(size)]
    inputs = list(getattr(module, "INPUTS", ())) or [f"u{j + 1}" for j in range(m)]
    return control.ss(A, B, np.eye(size), np.zeros((size, m)), states=states, inputs=inputs, outputs=states)


# --------------------------------------------------------------------------
# discretization


def discretize(A, B, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact zero-order-hold discretization of ``ẋ = A x + B u`` with step ``dt``.

    ``expm([[A, B], [0, 0]] dt) = [[Ad, Bd], [0, I]]``, so
    ``x[k+1] = Ad x[k] + Bd u[k]`` when ``u`` is held constant over each step.
    """
    A, B = _system(A, B)
    try:
        dt = float(dt)
    except (TypeError, ValueError):
        raise ControlError(f"dt must be a positive number, got {dt!r}") from None
    if not (np.isfinite(dt) and dt > 0):
        raise ControlError(f"dt must be a positive finite number, got {dt!r}")
    size, m = B.shape
    block = np.zeros((size + m, size + m))
    block[:size, :size] = A
    block[:size, size:] = B
    exp = scipy.linalg.expm(block * dt)
    return exp[:size, :size], exp[:size, size:]


# --------------------------------------------------------------------------
# simulation


def simulate(
    pkg,
    x0,
    t_span,
    controller: Callable | None = None,
    *,
    params: dict | None = None,
    progress: Callable[[float], None] | None = None,
    **solve_ivp_kwargs,
):
    """Integrate the nonlinear model ``ẋ = [q̇; q̈(x, u)]`` from ``x0``.

    Parameters
    ----------
    pkg : module or path
        A generated package.
    x0 : array_like, (2n,)
        Initial state.
    t_span : (t0, t_end)
        Time interval.
    controller : callable ``controller(t, x) -> u`` (length m), optional
        State feedback, e.g. an :class:`LQRResult`; ``None`` is zero input
        (open loop).
    params : dict, optional
        Parameter values for the generated functions.
    progress : callable ``progress(t)``, optional
        Called now and then with the time reached (for progress bars).
    **solve_ivp_kwargs
        Passed to :func:`scipy.integrate.solve_ivp`; the defaults here are
        ``method="RK45"``, ``rtol=1e-8``, ``atol=1e-10`` (tighter than
        scipy's, so that energy is conserved to a useful accuracy).

    Returns
    -------
    scipy.integrate OdeResult
        The solve_ivp result (``t``, ``y`` of shape (2n, len(t)), ``success``,
        ``message``, ...) plus ``u`` (m, len(t)) the inputs applied, and
        ``T``, ``V``, ``energy = T + V`` (len(t),) along the trajectory.
    """
    module = load_package(pkg)
    params = _params(module, params)
    n, m = module.N_DOF, module.N_INPUTS
    x0 = _state(module, x0, "x0")
    try:
        t0, t1 = (float(t) for t in t_span)
    except (TypeError, ValueError):
        raise ControlError(f"t_span must be a pair (t0, t_end) of numbers, got {t_span!r}") from None
    if not (np.isfinite(t0) and np.isfinite(t1) and t1 > t0):
        raise ControlError(f"t_span must satisfy t0 < t_end (finite), got ({t0}, {t1})")
    if controller is not None and not callable(controller):
        raise ControlError(f"controller must be a callable controller(t, x) -> u, got {type(controller).__name__}")
    zero = np.zeros(m)

    def control(t, x):
        if controller is None:
            return zero
        u = np.asarray(controller(t, x), dtype=float)
        if u.ndim == 0 and m == 1:
            u = u.reshape(1)
        if u.shape != (m,):
            raise ControlError(
                f"controller(t, x) must return {m} input(s) [{', '.join(module.INPUTS)}], got shape {u.shape}"
            )
        return u

    reached = [t0]
    step = (t1 - t0) / 100
    now = [t0]

    def rhs(t, x):
        now[0] = t
        if progress is not None and t >= reached[0] + step:
            reached[0] = t
            progress(min(t, t1))
        return np.concatenate([x[n:], _call(module, "qddot_fun", x, control(t, x), params=params)])

    options = {"method": "RK45", "rtol": 1e-8, "atol": 1e-10}
    options.update(solve_ivp_kwargs)
    try:
        result = solve_ivp(rhs, (t0, t1), x0, **options)
    except ControlError as exc:
        raise ControlError(f"the simulation stopped at t = {now[0]:.6g}: {exc}") from None
    if progress is not None:
        progress(float(result.t[-1]))
    states = result.y.T
    result.u = np.array([control(t, x) for t, x in zip(result.t, states)]).reshape(len(result.t), m).T
    result.T = np.asarray(_call(module, "T_fun", states, params=params), dtype=float).reshape(-1)
    result.V = np.asarray(_call(module, "V_fun", states, params=params), dtype=float).reshape(-1)
    result.energy = result.T + result.V
    return result


def settling_time(t, y, x_eq, tolerance: float = 0.02) -> float:
    """First time after which ``‖y(t) − x_eq‖∞`` stays below ``tolerance`` times its initial value.

    ``y`` has shape (2n, len(t)) (a solve_ivp ``y``). Returns ``inf`` if the
    trajectory never settles within the run.
    """
    t = np.asarray(t, dtype=float)
    error = np.abs(np.asarray(y, dtype=float) - np.asarray(x_eq, dtype=float)[:, None]).max(axis=0)
    limit = tolerance * error[0]
    outside = np.nonzero(error > limit)[0]
    if len(outside) == 0:
        return float(t[0])
    if outside[-1] == len(t) - 1:
        return float("inf")
    return float(t[outside[-1] + 1])
