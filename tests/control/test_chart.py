"""The yaw-pitch-roll chart's guard (sls/control/chart.py and the generated runtime _chart.py): a robot generated with
``--base-orientation euler`` is refused in one line within CHART_MARGIN of pitch ±90°, by ``sls.control.simulate``
(the flip that fooled it before), the command line and the package's ``qddot_fun``/``linearized_model``; away
from the pole nothing changes, and the Euler base agrees with the quaternion base."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.spatial.transform import Rotation

import sls
import sls.control as control
from sls.cli.app import main
from sls.control.chart import ChartGuard, StepObserver
from sls.errors import ControlError
from sls.readers.urdf import load_urdf

pin = pytest.importorskip("pinocchio")
QUADROTOR = (
    Path(pin.__file__).resolve().parents[4]
    / "share/example-robot-data/robots/hector_description/robots/quadrotor_base.urdf"
)
pytestmark = pytest.mark.skipif(not QUADROTOR.is_file(), reason="example-robot-data is not installed")
NO_GRAVITY = {"g": 0.0}
PITCH = 4  # base_x, base_y, base_z, base_yaw, base_pitch, base_roll, then the rates


@pytest.fixture(scope="module")
def drones(tmp_path_factory):
    root = tmp_path_factory.mktemp("drones")
    sls.generate(load_urdf(QUADROTOR, base_orientation="euler"), root / "euler")
    sls.generate(load_urdf(QUADROTOR), root / "quaternion")
    return {name: control.load_package(root / name) for name in ("euler", "quaternion")}


def _flip(rate: float = 2.0) -> np.ndarray:
    """Level, at rest but for a pitch rate: free flight through pitch 90° at t = π/(2 rate)."""
    x0 = np.zeros(12)
    x0[6 + PITCH] = rate
    return x0


@pytest.mark.parametrize("method", control.METHODS)
@pytest.mark.parametrize("rtol", [1e-3, 1e-10])
def test_the_flip_with_the_euler_base_ends_in_one_line(drones, method, rtol):
    """Every method stops at the pole, also when a loose tolerance lets a step jump over it (the step observer)."""
    with pytest.raises(ControlError) as error:
        control.simulate(drones["euler"], _flip(), (0, 3), method=method, params=NO_GRAVITY, rtol=rtol, atol=rtol)
    text = str(error.value)
    assert "\n" not in text
    assert text.startswith("the yaw-pitch-roll base is singular at base_pitch = ±90°: base_pitch came within 0.001")
    assert "--base-orientation quaternion" in text
    t = float(text.split("at t = ")[1].split(",")[0])
    assert abs(t - math.pi / 4) <= 1e-3


def test_the_flip_is_refused_on_the_command_line(drones):
    folder = Path(drones["euler"].__file__).parent
    start = " ".join(str(v) for v in _flip())
    out = CliRunner().invoke(main, ["simulate", str(folder), "--x0", start, "--t-end", "3", "--param", "g=0", "-q"])
    assert out.exit_code != 0
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: the yaw-pitch-roll base is singular at base_pitch")


def test_a_start_inside_the_margin_is_refused_at_once(drones):
    x0 = np.zeros(12)
    x0[PITCH] = -math.pi / 2 + 1e-4
    with pytest.raises(ControlError, match=r"came within 0.001 rad of -90° at t = 0,"):
        control.simulate(drones["euler"], x0, (0, 1))


def test_a_step_over_two_poles_is_seen():
    """A step from pitch 0.5 to 5.5 passes π/2 and 3π/2 while cos(pitch) keeps its sign: the observer names the
    first pole, at the time interpolated along the step."""
    observer = StepObserver(ChartGuard(((PITCH, "base_pitch"),), 1e-3))
    before, after = np.zeros(12), np.zeros(12)
    before[PITCH], after[PITCH] = 0.5, 5.5
    assert observer(0.0, before) == 1.0 and observer(1.0, after) == 1.0
    t, name, pole = observer.crossing
    assert name == "base_pitch" and pole == pytest.approx(math.pi / 2)
    assert t == pytest.approx((math.pi / 2 - 0.5) / 5.0)


def test_the_runtime_refuses_within_the_margin_only(drones):
    """qddot_fun at π/2 − 1e-6 raises naming the pitch; at pitch 1.0 and at 2e-3 from the pole qddot_fun is the
    solution of M qddot = B_u u − tau(x, 0) and linearized_model the derivative of xdot_fun."""
    euler = drones["euler"]
    u = np.array([0.3, -0.2, 15.0, 0.01, -0.02, 0.03])
    x = np.array([0.1, 0.2, 0.3, 0.4, math.pi / 2 - 1e-6, -0.3, 0.5, -0.4, 0.3, 0.2, 0.1, -0.1])
    with pytest.raises(
        ValueError, match=r"qddot_fun is not defined at x = \[.*\]: the yaw-pitch-roll base .* base_pitch"
    ):
        euler.qddot_fun(x, u)
    for pitch in (1.0, math.pi / 2 - 2e-3):
        x[PITCH] = pitch
        M = euler.M_fun(x)
        expected = np.linalg.solve(M, euler.input_matrix_fun(x) @ u - euler.tau_fun(x, np.zeros(6)))
        np.testing.assert_allclose(euler.qddot_fun(x, u), expected, rtol=1e-9 * np.linalg.cond(M))
        A, _ = euler.linearized_model(x, u)
        h = 1e-7
        columns = [(euler.xdot_fun(x + h * e, u) - euler.xdot_fun(x - h * e, u)) / (2 * h) for e in np.eye(12)]
        numeric = np.array(columns).T
        np.testing.assert_allclose(A, numeric, rtol=0, atol=1e-5 * np.abs(numeric).max())


def test_near_the_pole_the_euler_base_agrees_with_the_quaternion_base(drones):
    """A flip with some yaw rate misses the pole by 1.4° (outside the margin): the Euler chart integrates it, and
    its orientation Rz(yaw) Ry(pitch) Rx(roll) is the quaternion base's."""
    x0 = _flip()
    x0[6 + 3] = 0.1  # yaw rate; at zero angles the body rate is (roll rate, pitch rate, yaw rate)
    times = np.linspace(0, 3, 601)
    options = dict(params=NO_GRAVITY, t_eval=times, rtol=1e-11, atol=1e-12)
    euler = control.simulate(drones["euler"], x0, (0, 3), **options)
    start = np.zeros(13)
    start[6], start[10:13] = 1.0, [0.0, 2.0, 0.1]
    quaternion = control.simulate(drones["quaternion"], start, (0, 3), **options)
    assert euler.success and quaternion.success
    assert np.abs(np.cos(euler.y[PITCH])).min() < 0.03  # close to the pole
    turn = Rotation.from_euler("ZYX", euler.y[3:6].T).inv() * Rotation.from_quat(quaternion.y[3:7].T)
    assert turn.magnitude().max() < 1e-7
