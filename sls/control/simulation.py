"""Simulation of the nonlinear model of a generated package, open or closed loop, with scipy's ``solve_ivp``.

The integrator is chosen with ``method``: the explicit Runge–Kutta methods
(``RK45``, the default, ``RK23``, ``DOP853``) or the stiff ones (``Radau``,
``BDF``, ``LSODA``), which get the exact Jacobian of the closed loop from the
package's ``linearized_model`` (:func:`closed_loop_jacobian`). A stiff model
(steep friction laws such as ``c·tanh(q̇/v_s)`` with a small ``v_s``) makes
the explicit methods crawl; :func:`simulate` then says so in one line
(:class:`StiffnessWarning`, and ``result.hint``) and names ``method="Radau"``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

import numpy as np
from scipy.integrate import solve_ivp

from sls.control.chart import ChartError, ChartGuard, StepObserver, guard
from sls.control.constraints import (
    STABILIZATION_PARAMETER,
    check_consistent,
    default_stabilization,
    project_state,
    residuals,
)
from sls.control.package import (
    Package,
    call,
    checked_params,
    constrained,
    coordinate_count,
    coordinate_rates,
    load_package,
    state_vector,
)
from sls.control.tangent import normalized, on_manifold, retract, unit_state
from sls.errors import ControlError

__all__ = ["EXPLICIT_METHODS", "METHODS", "STIFF_METHODS", "StiffnessWarning", "settling_time", "simulate"]

#: A controller: ``controller(t, x) -> u`` (length m).
Controller = Callable[[float, np.ndarray], Any]

#: solve_ivp's explicit Runge–Kutta methods (no Jacobian).
EXPLICIT_METHODS = ("RK45", "RK23", "DOP853")
#: solve_ivp's methods for stiff problems: :func:`simulate` passes them the analytic Jacobian.
STIFF_METHODS = ("Radau", "BDF", "LSODA")
#: Every method :func:`simulate` takes.
METHODS = EXPLICIT_METHODS + STIFF_METHODS

#: An explicit run with at least this many steps is checked for stiffness.
STIFF_STEPS = 2000
#: Evaluations of the right-hand side per step of each explicit method (FSAL counted once).
_EVALUATIONS_PER_STEP = {"RK45": 6, "RK23": 3, "DOP853": 12}


class StiffnessWarning(UserWarning):
    """An explicit method took many more steps than the accuracy needs: the model is stiff (use ``Radau``)."""


def simulate(
    pkg: Package,
    x0: object,
    t_span: tuple[float, float],
    controller: Controller | None = None,
    *,
    method: str = "RK45",
    params: Mapping[str, float] | None = None,
    progress: Callable[[float], None] | None = None,
    project: bool = False,
    stabilization: float | None = None,
    **solve_ivp_kwargs: Any,
) -> Any:
    """Integrate the nonlinear model ``ẋ = [q̇; q̈(x, u)]`` from ``x0``.

    With generalized speeds the state is ``x = [q; v]`` and ``ẋ = [S(q) v; v̇(x, u)]``
    (the package's ``qdot_fun`` and ``qddot_fun`` = ``vdot_fun``). A package
    with a quaternion base (``normalize``) is evaluated at the state with the
    unit quaternion (the exact flow keeps its norm; the integrator's drift
    never enters the dynamics or the controller), and every state of
    ``result.y`` is returned with a unit quaternion (``result.sol`` and
    ``y_events``, if asked for, are the integrator's own). A package of a robot
    with a yaw-pitch-roll base (``CHART_PITCH``) stops with one
    :class:`~sls.errors.ControlError` line when the pitch comes within
    ``CHART_MARGIN`` of ±90° (see :mod:`sls.control.chart`).

    A constrained package (a robot on contacts, a closed loop) needs a start that keeps its constraints, in
    position (``c(q) = 0``) and velocity (``A v = 0``: the feet still): another ``x0`` is refused with one line
    naming the worst residual (:func:`~sls.control.constraints.check_consistent`), or with ``project=True``
    moved to the nearest consistent state (:func:`~sls.control.constraints.project_state`; ``result.projection``
    says how far). The run keeps the constraints with Baumgarte stabilization at the rate ``stabilization``
    (1/s, the parameter ``constraint_stabilization``); by default (``None``, and no ``constraint_stabilization``
    in ``params``) the spectral radius of the loop's Jacobian at the start, at least ``10/(t_end − t0)``
    (:func:`~sls.control.constraints.default_stabilization`): as fast as the model's fastest mode, so it does not
    make the run stiffer. ``result.constraint_residual`` and ``result.velocity_residual`` are the largest
    ``|c|`` and ``|A v|`` along the trajectory.

    Parameters
    ----------
    pkg : module or path
        A generated package.
    x0 : array_like, (N_Q + N_V,)
        Initial state (``2n`` entries without a quaternion base).
    t_span : (t0, t_end)
        Time interval.
    controller : callable ``controller(t, x) -> u`` (length m), optional
        State feedback, e.g. an :class:`LQRResult`; ``None`` is zero input
        (open loop).
    method : str
        The integrator: ``"RK45"`` (default), ``"RK23"``, ``"DOP853"``
        (explicit) or ``"Radau"``, ``"BDF"``, ``"LSODA"`` (for stiff models:
        they get the Jacobian of :func:`closed_loop_jacobian` unless
        ``jac=`` is given; with a quaternion base scipy's finite differences).
    params : dict, optional
        Parameter values for the generated functions.
    progress : callable ``progress(t)``, optional
        Called now and then with the time reached (for progress bars).
    project : bool
        A constrained package: project ``x0`` onto the constraints instead of refusing an inconsistent one.
    stabilization : float, optional
        A constrained package: the Baumgarte rate (1/s, ``0``: off); default: see above.
    **solve_ivp_kwargs
        Passed to :func:`scipy.integrate.solve_ivp`; the defaults here are
        ``rtol=1e-8``, ``atol=1e-10`` (tighter than scipy's, so that energy
        is conserved to a useful accuracy).

    Returns
    -------
    scipy.integrate OdeResult
        The solve_ivp result (``t``, ``y`` of shape (N_Q + N_V, len(t)), ``success``,
        ``message``, ``nfev``, ...) plus ``u`` (m, len(t)) the inputs applied,
        ``n_q`` the number of coordinates (the first ``n_q`` rows of ``y``),
        ``T``, ``V``, ``energy = T + V`` (len(t),) along the trajectory, and
        ``hint``: ``None``, or one line saying that an explicit method met a
        stiff model (also issued as a :class:`StiffnessWarning`). A constrained package adds
        ``projection`` (the line of ``project=True``, else ``None``), ``stabilization`` (the rate used),
        ``constraint_residual`` and ``velocity_residual``; they are ``None`` for other packages.
    """
    module = load_package(pkg)
    values = checked_params(module, params)
    m = module.N_INPUTS
    start = unit_state(module, state_vector(module, x0, "x0"), "x0")
    try:
        t0, t1 = (float(t) for t in t_span)
    except (TypeError, ValueError):
        raise ControlError(f"t_span must be a pair (t0, t_end) of numbers, got {t_span!r}") from None
    if not (np.isfinite(t0) and np.isfinite(t1) and t1 > t0):
        raise ControlError(f"t_span must satisfy t0 < t_end (finite), got ({t0}, {t1})")
    if controller is not None and not callable(controller):
        raise ControlError(f"controller must be a callable controller(t, x) -> u, got {type(controller).__name__}")
    if method not in METHODS:
        raise ControlError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    control = _inputs(module, controller)
    chart = guard(module)
    if chart is not None:
        chart.check(t0, start)
    start, projection, rate = _consistent_start(module, start, controller, values, (t0, t1), project, stabilization)
    if rate is not None:
        values = {**values, STABILIZATION_PARAMETER: rate}

    reached = [t0]
    step = (t1 - t0) / 100
    now = [t0]

    def rhs(t: float, x: np.ndarray) -> np.ndarray:
        now[0] = t
        if progress is not None and t >= reached[0] + step:
            reached[0] = t
            progress(min(t, t1))
        if chart is not None:
            chart.check(t, x)
        x = normalized(module, x)
        return np.concatenate(
            [coordinate_rates(module, x, values), call(module, "qddot_fun", x, control(t, x), params=values)]
        )

    options: dict[str, Any] = {"rtol": 1e-8, "atol": 1e-10}
    options.update(solve_ivp_kwargs)
    if method in STIFF_METHODS and "jac" not in options and not on_manifold(module):
        options["jac"] = closed_loop_jacobian(module, controller, params=values)
    given, observer = _with_chart_events(options, chart)
    try:
        result = solve_ivp(rhs, (t0, t1), start, method=method, **options)
    except ChartError:
        raise
    except ControlError as exc:
        raise ControlError(f"the simulation stopped at t = {now[0]:.6g}: {exc}") from None
    _check_chart_events(result, chart, given, observer)
    if progress is not None:
        progress(float(result.t[-1]))
    result.y = normalized(module, result.y.T).T
    result.n_q = coordinate_count(module)
    states = result.y.T
    result.u = np.array([control(t, x) for t, x in zip(result.t, states)]).reshape(len(result.t), m).T
    result.T = np.asarray(call(module, "T_fun", states, params=values), dtype=float).reshape(-1)
    result.V = np.asarray(call(module, "V_fun", states, params=values), dtype=float).reshape(-1)
    result.energy = result.T + result.V
    result.projection, result.stabilization = projection, rate
    result.constraint_residual = result.velocity_residual = None
    if constrained(module):
        c, velocity = residuals(module, states, values)
        result.constraint_residual = float(np.abs(c).max(initial=0.0))
        result.velocity_residual = float(np.abs(velocity).max(initial=0.0))
    result.hint = None
    if method in EXPLICIT_METHODS:
        result.hint = stiffness_hint(module, controller, result, method, params=values)
        if result.hint:
            warnings.warn(result.hint, StiffnessWarning, stacklevel=2)
    return result


def _consistent_start(
    module: ModuleType,
    start: np.ndarray,
    controller: Controller | None,
    values: dict[str, Any],
    span: tuple[float, float],
    project: bool,
    stabilization: float | None,
) -> tuple[np.ndarray, str | None, float | None]:
    """``(x0, projection line or None, Baumgarte rate or None)`` of a run: a constrained package's start checked
    (or projected) and its stabilization rate chosen; ``(x0, None, None)`` for other packages."""
    if not constrained(module):
        return start, None, None
    projection = None
    if project:
        start, projection = project_state(module, start, values)
    else:
        check_consistent(
            module,
            start,
            values,
            "x0",
            "start where they hold (a robot on contacts: its feet still), or project it: "
            "sls simulate --project-x0 (simulate(..., project=True))",
        )
    if STABILIZATION_PARAMETER not in getattr(module, "PARAMS", {}):
        return start, projection, None
    if STABILIZATION_PARAMETER in values:
        return start, projection, float(values[STABILIZATION_PARAMETER])
    if stabilization is not None:
        rate = float(stabilization)
        if not (np.isfinite(rate) and rate >= 0):
            raise ControlError(f"stabilization must be a rate >= 0 (1/s; 0: off), got {stabilization!r}")
        return start, projection, rate
    jacobian = closed_loop_jacobian(module, controller, params=values)(span[0], start)
    return start, projection, default_stabilization(jacobian, span[1] - span[0])


def _with_chart_events(options: dict[str, Any], chart: ChartGuard | None) -> tuple[int | None, StepObserver | None]:
    """Add the chart guard's events to ``options["events"]`` (after the caller's): the terminal ones, then the step
    observer. Returns how many events the caller gave (``None``: no ``events`` argument) and the observer."""
    if chart is None:
        return None, None
    given = options.get("events")
    caller = [] if given is None else list(given) if isinstance(given, (list, tuple)) else [given]
    observer = chart.observer()
    options["events"] = caller + chart.events() + [observer]
    return (None if given is None else len(caller)), observer


def _check_chart_events(result: Any, chart: ChartGuard | None, given: int | None, observer: Any) -> None:
    """Raise the chart guard's line if one of its events ended the run, or a step jumped over a pole; give the
    caller back only their events."""
    if chart is None:
        return
    count = given or 0
    ours = result.t_events[count : count + 2 * len(chart.pitch)]
    hits = [(float(times[0]), k) for k, times in enumerate(ours) if len(times)]
    if hits:
        t, k = min(hits)
        index, name = chart.pitch[k // 2]
        value = float(result.y_events[count + k][0][index])
        raise ChartError(chart.message(name, value, t))
    if observer.crossing is not None:
        t, name, pole = observer.crossing
        raise ChartError(chart.message(name, pole, t))
    if given is None:
        result.t_events, result.y_events = None, None
    else:
        result.t_events, result.y_events = result.t_events[:count], result.y_events[:count]


def _inputs(module: ModuleType, controller: Controller | None) -> Callable[[float, np.ndarray], np.ndarray]:
    """``u(t, x)``: the controller's output checked to be m numbers, or zero without a controller."""
    m = module.N_INPUTS
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

    return control


def closed_loop_jacobian(
    pkg: Package, controller: Controller | None = None, *, params: Mapping[str, float] | None = None
) -> Callable[[float, np.ndarray], np.ndarray]:
    """The Jacobian ``J(t, x) = ∂ẋ/∂x`` (2n × 2n) of the loop that :func:`simulate` integrates.

    ``linearized_model(x, u)`` gives ``A = ∂f/∂x`` and ``B = ∂f/∂u`` at the
    input ``u`` applied at ``x``; the controller adds ``B ∂u/∂x``:

    * no controller (open loop): ``J = A``;
    * a linear state feedback with a gain ``K`` (an :class:`LQRResult` or a
      loaded design, ``u = u_eq − K δx``): ``J = A − B K``, exact;
    * any other callable: ``∂u/∂x`` by forward differences of the controller
      alone (the model's part stays analytic), ``J = A + B ∂u/∂x``.

    With a quaternion base, ``J`` is the tangent-space one (2 N_V × 2 N_V, as
    ``linearized_model``; the controller differentiated along
    ``(integrate(q, δq), v + δv)``): its eigenvalues are the loop's, but it is
    not the Jacobian of the ``N_Q + N_V`` coordinates, and :func:`simulate`
    does not hand it to a stiff method.
    """
    module = load_package(pkg)
    values = checked_params(module, params)
    size = 2 * module.N_DOF
    control = _inputs(module, controller)
    gain = getattr(controller, "K", None)
    if gain is not None:
        gain = np.asarray(gain, dtype=float)
        if gain.shape != (module.N_INPUTS, size):
            gain = None

    def jacobian(t: float, x: np.ndarray) -> np.ndarray:
        u = control(t, x)
        A, B = call(module, "linearized_model", x, u, params=values)
        A, B = np.asarray(A, dtype=float), np.asarray(B, dtype=float)
        if controller is None:
            return A
        if gain is not None:
            return A - B @ gain
        du = np.empty((module.N_INPUTS, size))
        for j in range(size):
            h = 1e-7 * max(1.0, abs(x[j])) if not on_manifold(module) else 1e-7
            step = np.zeros(size)
            step[j] = h
            du[:, j] = (control(t, retract(module, x, step, values)) - u) / h
        return A + B @ du

    return jacobian


def stiffness_hint(
    pkg: Package,
    controller: Controller | None,
    result: Any,
    method: str,
    *,
    params: Mapping[str, float] | None = None,
) -> str | None:
    """One line if an explicit run's step count says the model is stiff, else ``None``.

    An explicit Runge–Kutta method is stable only while ``h·|λ|`` stays within
    a few units for every eigenvalue ``λ`` of the Jacobian; on a stiff model
    the fastest decaying mode (large negative ``λ``, which the solution no
    longer shows) bounds the step, not the accuracy. The run counts as stiff
    when it took at least :data:`STIFF_STEPS` steps and the stability bound
    ``(t_end − t0)·max(−Re λ)/3.3``, with ``λ`` sampled at a few states of the
    trajectory, accounts for at least half of them.
    """
    steps = int(result.nfev) // _EVALUATIONS_PER_STEP.get(method, 6)
    if steps < STIFF_STEPS or len(result.t) < 2:
        return None
    module = load_package(pkg)
    jacobian = closed_loop_jacobian(module, controller, params=params)
    fastest = 0.0
    for k in np.unique(np.linspace(0, len(result.t) - 1, 20).astype(int)):
        try:
            eigenvalues = np.linalg.eigvals(jacobian(float(result.t[k]), result.y[:, k]))
        except (ControlError, np.linalg.LinAlgError):
            continue
        fastest = max(fastest, float(-eigenvalues.real.min()))
    span = float(result.t[-1] - result.t[0])
    bound = span * fastest / 3.3
    if bound < 0.5 * steps:
        return None
    return (
        f"the model is stiff: {method} took {steps} steps, held back by a mode decaying at rate {fastest:.3g}/s; "
        'method="Radau" (sls simulate --method Radau) is usually much faster here'
    )


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
