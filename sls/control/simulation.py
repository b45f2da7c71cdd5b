"""Simulation of the nonlinear model of a generated package, open or closed loop, with scipy's ``solve_ivp``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from scipy.integrate import solve_ivp

from sls.control.package import Package, call, checked_params, load_package, state_vector
from sls.errors import ControlError

__all__ = ["settling_time", "simulate"]

#: A controller: ``controller(t, x) -> u`` (length m).
Controller = Callable[[float, np.ndarray], Any]


def simulate(
    pkg: Package,
    x0: object,
    t_span: tuple[float, float],
    controller: Controller | None = None,
    *,
    params: Mapping[str, float] | None = None,
    progress: Callable[[float], None] | None = None,
    **solve_ivp_kwargs: Any,
) -> Any:
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
    values = checked_params(module, params)
    n, m = module.N_DOF, module.N_INPUTS
    start = state_vector(module, x0, "x0")
    try:
        t0, t1 = (float(t) for t in t_span)
    except (TypeError, ValueError):
        raise ControlError(f"t_span must be a pair (t0, t_end) of numbers, got {t_span!r}") from None
    if not (np.isfinite(t0) and np.isfinite(t1) and t1 > t0):
        raise ControlError(f"t_span must satisfy t0 < t_end (finite), got ({t0}, {t1})")
    if controller is not None and not callable(controller):
        raise ControlError(f"controller must be a callable controller(t, x) -> u, got {type(controller).__name__}")
    zero = np.zeros(m)

    def control(t: float, x: np.ndarray) -> np.ndarray:
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

    def rhs(t: float, x: np.ndarray) -> np.ndarray:
        now[0] = t
        if progress is not None and t >= reached[0] + step:
            reached[0] = t
            progress(min(t, t1))
        return np.concatenate([x[n:], call(module, "qddot_fun", x, control(t, x), params=values)])

    options: dict[str, Any] = {"method": "RK45", "rtol": 1e-8, "atol": 1e-10}
    options.update(solve_ivp_kwargs)
    try:
        result = solve_ivp(rhs, (t0, t1), start, **options)
    except ControlError as exc:
        raise ControlError(f"the simulation stopped at t = {now[0]:.6g}: {exc}") from None
    if progress is not None:
        progress(float(result.t[-1]))
    states = result.y.T
    result.u = np.array([control(t, x) for t, x in zip(result.t, states)]).reshape(len(result.t), m).T
    result.T = np.asarray(call(module, "T_fun", states, params=values), dtype=float).reshape(-1)
    result.V = np.asarray(call(module, "V_fun", states, params=values), dtype=float).reshape(-1)
    result.energy = result.T + result.V
    return result


def settling_time(t: object, y: object, x_eq: object, tolerance: float = 0.02) -> float:
    """First time after which ``‖y(t) − x_eq‖∞`` stays below ``tolerance`` times its initial value.

    ``y`` has shape (2n, len(t)) (a solve_ivp ``y``). Returns ``inf`` if the
    trajectory never settles within the run.
    """
    times = np.asarray(t, dtype=float)
    error = np.abs(np.asarray(y, dtype=float) - np.asarray(x_eq, dtype=float)[:, None]).max(axis=0)
    limit = tolerance * error[0]
    outside = np.nonzero(error > limit)[0]
    if len(outside) == 0:
        return float(times[0])
    if outside[-1] == len(times) - 1:
        return float("inf")
    return float(times[outside[-1] + 1])
