"""The guard of the yaw-pitch-roll chart: :func:`sls.control.simulate` stops where an Euler-angle base turns singular.

A floating base written with Euler angles (``--base-orientation euler``:
``<base>_yaw``, ``<base>_pitch``, ``<base>_roll``) is singular at
``<base>_pitch = ±90°``: yaw and roll then turn about the same axis, ``M``
is singular and the Euler rates of a body turning at a finite rate grow as
``1/cos(pitch)``. A package of such a robot names the pitch coordinates in
``CHART_PITCH`` and the margin in ``CHART_MARGIN`` (``|cos(pitch)|`` below it
is refused: pitch within about ``CHART_MARGIN`` rad of ±90°); its Python
functions ``qddot_fun`` and ``linearized_model`` refuse such states, and
:func:`sls.control.simulate` stops there with one line (:func:`guard`), also
when a step jumps over the margin (a terminal event on ``cos(pitch) = ±margin``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

import numpy as np

from sls.errors import ControlError

__all__ = ["ChartError", "ChartGuard", "StepObserver", "guard"]

#: What a package without CHART_MARGIN but with CHART_PITCH uses (the value sls writes).
DEFAULT_MARGIN = 1e-3

Event = Callable[[float, np.ndarray], float]


class ChartError(ControlError):
    """A simulation entered the margin of a yaw-pitch-roll base's singularity."""


@dataclass(frozen=True)
class ChartGuard:
    """The pitch coordinates of a package's yaw-pitch-roll bases (state index, name) and the margin."""

    pitch: tuple[tuple[int, str], ...]
    margin: float

    def inside(self, x: np.ndarray) -> tuple[int, str] | None:
        """The first pitch coordinate of the state ``x`` within the margin of ±90°, or ``None``."""
        for index, name in self.pitch:
            if abs(math.cos(float(x[index]))) < self.margin:
                return index, name
        return None

    def message(self, name: str, value: float, t: float) -> str:
        """The one line of a simulation that entered the margin at time ``t`` with ``name = value``."""
        pole = "90°" if math.sin(value) > 0 else "-90°"
        return (
            f"the yaw-pitch-roll base is singular at {name} = ±90°: {name} came within {self.margin:g} rad of {pole} "
            f"at t = {t:.6g}, where the simulation stopped; generate the robot with the default "
            "--base-orientation quaternion"
        )

    def check(self, t: float, x: np.ndarray) -> None:
        """Raise :class:`ControlError` with :meth:`message` if ``x`` is inside the margin."""
        hit = self.inside(x)
        if hit is not None:
            raise ChartError(self.message(hit[1], float(x[hit[0]]), t))

    def events(self) -> list[Event]:
        """Terminal events ``cos(pitch) ∓ margin`` for solve_ivp: a step that enters the margin, or jumps over it
        once (``cos(pitch)`` changes sign), crosses one of them."""
        events: list[Event] = []
        for index, _ in self.pitch:
            for offset in (-self.margin, self.margin):
                events.append(_event(index, offset))
        return events

    def observer(self) -> StepObserver:
        """An event that never fires but sees every accepted step (solve_ivp calls each event once per step, in
        order): it finds a step that jumps over a pole twice or more, which ``cos(pitch)`` does not show."""
        return StepObserver(self)


class StepObserver:
    """Called by solve_ivp as an event at the start and after every accepted step; records the first step whose
    ends lie on different sides of a pole (the unwrapped pitch passed ``π/2 + kπ``)."""

    terminal = False
    direction = 0.0

    def __init__(self, chart: ChartGuard) -> None:
        self.chart = chart
        self.last: tuple[float, np.ndarray] | None = None
        self.crossing: tuple[float, str, float] | None = None

    def __call__(self, t: float, x: np.ndarray) -> float:
        if self.crossing is None and self.last is not None:
            t_old, x_old = self.last
            for index, name in self.chart.pitch:
                before, after = float(x_old[index]), float(x[index])
                k_before, k_after = _pole_index(before), _pole_index(after)
                if k_before != k_after:
                    pole = math.pi / 2 + math.pi * min(k_before, k_after)
                    t_pole = t_old + (t - t_old) * (pole - before) / (after - before)
                    self.crossing = (t_pole, name, pole)
                    break
        self.last = (t, np.array(x, dtype=float))
        return 1.0


def _pole_index(pitch: float) -> int:
    """``k`` with ``pitch`` in ``[π/2 + (k − 1)π, π/2 + kπ)``: it changes where the pitch passes a pole."""
    return math.floor((pitch - math.pi / 2) / math.pi) + 1


def _event(index: int, offset: float) -> Event:
    def event(t: float, x: np.ndarray) -> float:
        return math.cos(float(x[index])) + offset

    event.terminal = True  # type: ignore[attr-defined]
    return event


def guard(module: ModuleType) -> ChartGuard | None:
    """The chart guard of a package whose robot has a yaw-pitch-roll floating base (its ``CHART_PITCH`` names the
    pitch coordinates), else ``None``."""
    names = tuple(getattr(module, "CHART_PITCH", ()))
    if not names:
        return None
    state = list(module.STATE)
    pitch = tuple((state.index(name), name) for name in names if name in state)
    margin = float(getattr(module, "CHART_MARGIN", DEFAULT_MARGIN))
    return ChartGuard(pitch, margin) if pitch else None
