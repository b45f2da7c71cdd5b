# Runtime of a generated package whose robot has a yaw-pitch-roll floating base (--base-orientation euler): the guard
# of the chart's singularity at pitch = +-90 degrees, called by qddot_fun and linearized_model. Copied as _chart.py
# after the package's header by sls.backends.python, with the model's PITCH and MARGIN; these leading comment lines
# are not copied.

import math

import numpy as np

from . import _runtime

PITCH: tuple = ()  # the pitch coordinates, (state index, name) each, set when copied
MARGIN = 1e-3  # states with |cos(pitch)| below this are refused, set when copied


class ChartSingularity(_runtime.DomainError):
    """A state within the margin of a yaw-pitch-roll base's singularity (pitch = +-90 degrees): yaw and roll turn
    about the same axis there, M is singular and the Euler rates of a finite body rate are unbounded."""


def check(name, x):
    """Raise ChartSingularity if a state of x (..., n_x) has a pitch with |cos(pitch)| < MARGIN; name: the function."""
    if x.ndim == 1:
        for index, pitch in PITCH:
            if abs(math.cos(x[index])) < MARGIN:
                raise _singular(name, x, pitch)
        return
    for index, pitch in PITCH:
        inside = np.abs(np.cos(x[..., index])) < MARGIN
        if inside.any():
            raise _singular(name, x[inside][0], pitch)


def _singular(name, x, pitch):
    return ChartSingularity(
        f"{name} is not defined at x = [{_runtime.describe_state(x)}]: the yaw-pitch-roll base is singular at "
        f"{pitch} = +-90 degrees and {pitch} is within {MARGIN:g} rad of it (|cos({pitch})| < {MARGIN:g}); "
        "generate the robot with the default --base-orientation quaternion"
    )
