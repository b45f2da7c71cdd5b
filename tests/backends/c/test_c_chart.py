"""The C target's guard of a yaw-pitch-roll base's singularity (``--base-orientation euler``): the compiled calls
refuse a state within CHART_MARGIN of pitch ±90° with the Python target's error (same exception, same message), on
every path (one state as a list or an array, a batch, a batch through the general path), and compute outside it."""

from __future__ import annotations

import math
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import import_package

import sls
from sls.readers.urdf import load_urdf

pin = pytest.importorskip("pinocchio")
CC = os.environ.get("CC") or "cc"
QUADROTOR = (
    Path(pin.__file__).resolve().parents[4]
    / "share/example-robot-data/robots/hector_description/robots/quadrotor_base.urdf"
)
pytestmark = [
    pytest.mark.skipif(shutil.which(CC.split()[0]) is None, reason=f"no C compiler ({CC})"),
    pytest.mark.skipif(not QUADROTOR.is_file(), reason="example-robot-data is not installed"),
]
PITCH = 4  # base_x, base_y, base_z, base_yaw, base_pitch, base_roll, then the rates


@pytest.fixture(scope="module")
def drones(tmp_path_factory):
    """(C package, Python package) of the quadrotor with the Euler base."""
    root = tmp_path_factory.mktemp("c_chart")
    model = load_urdf(QUADROTOR, base_orientation="euler")
    sls.generate(model, root / "c", target="c")
    sls.generate(model, root / "py")
    return import_package(root / "c"), import_package(root / "py")


def error_of(function, *args, **kwargs) -> tuple:
    """(exception type's name, message) of ``function(*args, **kwargs)``, which must raise."""
    with pytest.raises(Exception) as error:
        function(*args, **kwargs)
    return type(error.value).__name__, str(error.value)


@pytest.mark.parametrize("name", ["qddot_fun", "linearized_model", "xdot_fun"])
def test_states_near_the_pole_are_refused_as_in_the_python_target(drones, name):
    c, py = drones
    assert c.CHART_PITCH == ("base_pitch",) and os.path.isfile(os.path.join(os.path.dirname(c.__file__), "_chart.py"))
    u = np.array([0.3, -0.2, 15.0, 0.01, -0.02, 0.03])
    x = np.array([0.1, 0.2, 0.3, 0.4, math.pi / 2 - 1e-6, -0.3, 0.5, -0.4, 0.3, 0.2, 0.1, -0.1])
    far = x.copy()
    far[PITCH] = 1.0
    for state, inputs in ((x, u), (list(x), list(u)), (np.stack([far, x, far]), u), (np.stack([far, x]), [u, u])):
        want = error_of(getattr(py, name), state, inputs)
        assert want[0] == "ChartSingularity" and "base_pitch" in want[1]
        assert error_of(getattr(c, name), state, inputs) == want
    # the general path (a batch of lists) and a parameter given as an array
    batch, gravity = [list(far), list(x)], np.array([9.81, 9.81])
    assert error_of(getattr(c, name), batch, u, g=gravity) == error_of(getattr(py, name), batch, u, g=gravity)
    for pitch in (1.0, -math.pi / 2 + 2e-3):  # outside the margin: computed
        state = x.copy()
        state[PITCH] = pitch
        got, want = getattr(c, name)(state, u), getattr(py, name)(state, u)
        for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(w).max()))
