"""sls.control on packages with a quaternion base (sls/control/tangent.py and its users): a free rigid body tumbling
through pitch ±90° conserves energy and world angular momentum, the LQR hover of a quadrotor in the tangent space,
a flip through 90° against an independent integration of the rotation, and the controller's tangent vector against
Pinocchio's ``difference``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

import sls
import sls.control as control
from sls.cli.app import main
from sls.control.tangent import tangent_names
from sls.errors import ControlError
from sls.readers.urdf import load_urdf

pin = pytest.importorskip("pinocchio")
ROBOTS = Path(pin.__file__).resolve().parents[4] / "share" / "example-robot-data" / "robots"
QUADROTOR = ROBOTS / "hector_description/robots/quadrotor_base.urdf"
needs_robots = pytest.mark.skipif(not QUADROTOR.is_file(), reason="example-robot-data is not installed")

#: Principal moments of the free body: three distinct ones, the second the intermediate axis.
INERTIA = np.array([0.01, 0.02, 0.03])
BODY = f"""<robot name="body"><link name="body"><inertial><origin xyz="0 0 0"/><mass value="1.0"/>
<inertia ixx="{INERTIA[0]}" ixy="0" ixz="0" iyy="{INERTIA[1]}" iyz="0" izz="{INERTIA[2]}"/></inertial></link>
</robot>"""
NO_GRAVITY = {"g": 0.0}


@pytest.fixture(scope="module")
def body(tmp_path_factory):
    """The free rigid body: a one-link URDF, floating with the default quaternion base."""
    folder = tmp_path_factory.mktemp("body") / "pkg"
    sls.generate(load_urdf("body.urdf", text=BODY), folder)
    return control.load_package(folder)


@pytest.fixture(scope="module")
def drone(tmp_path_factory):
    folder = tmp_path_factory.mktemp("drone") / "pkg"
    sls.generate(load_urdf(QUADROTOR), folder)
    return control.load_package(folder)


def _euler_rigid_body(t_span, quat, omega, t_eval):
    """An independent torque-free rigid body: Euler's equations I ω̇ = (I ω) × ω and q̇ = q ⊗ (ω, 0) / 2 (scalar
    last), integrated with scipy."""

    def rhs(t, y):
        q, w = y[:4], y[4:]
        qv, qw = q[:3], q[3]
        dq = 0.5 * np.concatenate([qw * w + np.cross(qv, w), [-qv @ w]])
        return np.concatenate([dq, np.cross(INERTIA * w, w) / INERTIA])

    solution = solve_ivp(rhs, t_span, np.concatenate([quat, omega]), rtol=1e-12, atol=1e-13, t_eval=t_eval)
    return solution.y[:4].T, solution.y[4:].T


def _pitch(quat):
    """The pitch of a yaw-pitch-roll chain (R = Rz Ry Rx) from unit quaternions (..., 4): asin(-R[2, 0])."""
    R = Rotation.from_quat(quat).as_matrix()
    return np.arcsin(np.clip(-R[..., 2, 0], -1.0, 1.0))


def test_a_tumbling_body_conserves_energy_and_angular_momentum_through_pitch_90(body):
    """A body turning near its intermediate axis plus some spin, 10 s, through pitch 90° at t = 3 s (the start is
    found by running an independent integration backwards from a state at the pole)."""
    pole = Rotation.from_euler("ZYX", [0.4, np.pi / 2, 0.0]).as_quat()
    omega = np.array([0.05, 3.0, 0.1])
    quat, w = _euler_rigid_body((0.0, 3.0), pole, -omega, [3.0])  # back in time: the reversed rotation
    x0 = np.concatenate([[0.1, -0.2, 0.3], quat[-1], [0.0, 0.0, 0.0], -w[-1]])
    times = np.linspace(0.0, 10.0, 2001)
    assert 3.0 in times
    result = control.simulate(
        body, x0, (0.0, 10.0), method="DOP853", rtol=1e-11, atol=1e-12, params=NO_GRAVITY, t_eval=times
    )
    assert result.success
    quat, w = result.y[3:7].T, result.y[10:13].T
    np.testing.assert_allclose(np.linalg.norm(quat, axis=1), 1.0, rtol=0, atol=1e-12)
    pitch = _pitch(quat)
    assert abs(abs(pitch[times == 3.0][0]) - np.pi / 2) < 1e-4  # the pole itself (arcsin: error ~ sqrt(1e-9))
    assert pitch.min() < -1.0 and pitch.max() > 1.0  # and it tumbles through the other pole's side too
    energy = 0.5 * np.sum(INERTIA * w * w, axis=1)
    momentum = np.einsum("kij,kj->ki", Rotation.from_quat(quat).as_matrix(), INERTIA * w)
    assert np.abs(energy / energy[0] - 1).max() <= 1e-8
    assert np.abs(result.energy / result.energy[0] - 1).max() <= 1e-8
    assert np.linalg.norm(momentum - momentum[0], axis=1).max() <= 1e-8 * np.linalg.norm(momentum[0])
    # the intermediate axis flips: the body rate about y changes sign
    assert w[:, 1].min() < -2.5 and w[:, 1].max() > 2.5
    reference, _ = _euler_rigid_body((0.0, 10.0), x0[3:7], x0[10:13], times)
    turn = Rotation.from_quat(reference).inv() * Rotation.from_quat(quat)
    assert turn.magnitude().max() < 1e-6


def test_the_state_has_n_q_plus_n_v_entries(body):
    assert body.N_Q + body.N_V == 13 and len(body.STATE) == 13
    with pytest.raises(ControlError, match="length 13"):
        control.simulate(body, np.zeros(12), (0, 1))
    x = np.zeros(13)
    with pytest.raises(ControlError, match="x0: normalize: the base quaternion is zero"):
        control.simulate(body, x, (0, 1))
    x[6] = 2.0  # any non-zero quaternion is taken as its unit one
    result = control.simulate(body, x, (0, 0.1), params=NO_GRAVITY)
    assert result.y[6, 0] == 1.0 and result.n_q == 7


def test_stiff_methods_integrate_a_quaternion_base_without_an_analytic_jacobian(body):
    x0 = np.concatenate([[0, 0, 0], Rotation.from_rotvec([0.3, -0.2, 0.5]).as_quat(), [0.1, 0, 0], [0.2, 2.0, 0.3]])
    explicit = control.simulate(body, x0, (0, 2), params=NO_GRAVITY, rtol=1e-10, atol=1e-12, t_eval=[2.0])
    stiff = control.simulate(body, x0, (0, 2), method="Radau", params=NO_GRAVITY, rtol=1e-10, atol=1e-12, t_eval=[2])
    assert stiff.success
    np.testing.assert_allclose(stiff.y[:, -1], explicit.y[:, -1], atol=1e-7)


@needs_robots
def test_the_lqr_hovers_the_quadrotor_from_a_tilted_offset_start(drone):
    """Inputs base_fx..base_mz: the body wrench. Hover: the weight along the body z axis; Q, K in the tangent
    space (2 N_V); from 0.5 rad of tilt, 30° of yaw and 1 m away the loop returns to the hover."""
    mass = 1.477  # quadrotor_base.urdf
    x_eq = np.zeros(13)
    x_eq[2], x_eq[6] = 2.0, 1.0
    u_eq, residual = control.equilibrium_input(drone, x_eq)
    np.testing.assert_allclose(u_eq, [0, 0, mass * 9.81, 0, 0, 0], atol=1e-12)
    design = control.lqr(drone, x_eq, Q=[10, 10, 10, 5, 5, 5, 1, 1, 1, 1, 1, 1], R=1)
    assert design.K.shape == (6, 12) and design.A.shape == (12, 12) and design.Q.shape == (12, 12)
    assert np.all(design.poles.real < 0)
    start = np.concatenate(
        [[1.0, -0.5, 1.5], Rotation.from_euler("ZYX", [0.5, 0.3, -0.4]).as_quat(), [0.2, 0, 0], [0, 0.5, 0]]
    )
    result = control.simulate(drone, start, (0, 15), design, t_eval=np.linspace(0, 15, 301))
    assert result.success
    final = result.y[:, -1]
    np.testing.assert_allclose(final[:3], x_eq[:3], atol=1e-4)
    assert Rotation.from_quat(final[3:7]).magnitude() < 1e-4
    np.testing.assert_allclose(final[7:], 0, atol=1e-4)
    assert control.settling_time(result.t, result.y, x_eq) < 10


@needs_robots
def test_the_controller_uses_pinocchios_difference(drone):
    """u = u_eq − K [difference(q_eq, q); v − v_eq], with Pinocchio's difference as the reference."""
    peer = pin.buildModelFromUrdf(str(QUADROTOR), pin.JointModelFreeFlyer())
    x_eq = np.zeros(13)
    x_eq[3:7] = Rotation.from_euler("ZYX", [0.7, 0, 0]).as_quat()  # a yawed hover
    design = control.lqr(drone, x_eq)
    rng = np.random.default_rng(3)
    for _ in range(5):
        x = np.concatenate([rng.normal(size=3), Rotation.random(random_state=rng).as_quat(), rng.normal(size=6)])
        tangent = np.concatenate([pin.difference(peer, x_eq[:7], x[:7]), x[7:] - x_eq[7:]])
        np.testing.assert_allclose(design(0.0, x), design.u_eq - design.K @ tangent, rtol=1e-10, atol=1e-10)


@needs_robots
def test_closed_loop_jacobian_is_the_tangent_derivative_of_the_loop(drone):
    """The tangent-space Jacobian of the loop with a general controller (its derivative by differences along
    integrate) against central differences of the closed loop along (integrate(q, dq), v + dv)."""
    x_eq = np.zeros(13)
    x_eq[6] = 1.0
    design = control.lqr(drone, x_eq)

    def saturated(t, x):
        return np.clip(design(t, x), -20.0, 20.0)

    x = np.concatenate(
        [[0.1, 0.2, 0.3], Rotation.from_rotvec([0.2, -0.1, 0.3]).as_quat(), [0.1, -0.2, 0.3, 0.4, 0.1, -0.3]]
    )
    jacobian = control.closed_loop_jacobian(drone, saturated)(0.0, x)
    q0, v0 = x[:7], x[7:]

    def flow(dx):
        q, v = drone.integrate(q0, dx[:6]), v0 + dx[6:]
        state = np.concatenate([q, v])
        qdot_tangent = v  # d/dt of difference(q0, q) is v at dq = 0 only: compare the speeds' rows alone
        return np.concatenate([qdot_tangent, drone.vdot_fun(state, saturated(0.0, state))])

    h = 1e-6
    columns = []
    for j in range(12):
        step = np.zeros(12)
        step[j] = h
        columns.append((flow(step) - flow(-step)) / (2 * h))
    numeric = np.array(columns).T
    np.testing.assert_allclose(jacobian[6:], numeric[6:], rtol=1e-5, atol=1e-5)


@needs_robots
def test_the_quaternion_base_flies_through_pitch_90(drone):
    """The flip: free flight (g = 0) with a body rate of 2 rad/s about y from level: pitch 90° at t = π/4. The
    orientation is the rotation by 2 t about y (independent: scipy's Rotation)."""
    x0 = np.zeros(13)
    x0[6], x0[11] = 1.0, 2.0
    times = np.linspace(0, 3, 301)
    result = control.simulate(drone, x0, (0, 3), params=NO_GRAVITY, t_eval=times, rtol=1e-11, atol=1e-12)
    assert result.success
    expected = Rotation.from_rotvec(np.outer(2 * times, [0, 1, 0]))
    error = (expected.inv() * Rotation.from_quat(result.y[3:7].T)).magnitude()
    assert error.max() < 1e-8
    assert np.abs(_pitch(result.y[3:7].T)).max() > np.pi / 2 - 1e-2
    np.testing.assert_allclose(result.y[10:13], np.outer([0, 2, 0], np.ones(len(times))), atol=1e-9)


@needs_robots
def test_design_files_and_the_command_line_on_a_quaternion_base(drone, tmp_path):
    folder = Path(drone.__file__).parent
    gain = tmp_path / "gain.json"
    runner = CliRunner()
    hover = "0 0 1 0 0 0 1 0 0 0 0 0 0"
    out = runner.invoke(main, ["lqr", str(folder), "--x-eq", hover, "--Q", "1", "--save", str(gain)])
    assert out.exit_code == 0, out.output
    assert "base_rx..base_rz" in out.output and "6 x 12" in out.output
    document = json.loads(gain.read_text())
    assert len(document["x_eq"]) == 13 and np.shape(document["K"]) == (6, 12)
    assert document["tangent"] == list(tangent_names(drone))
    design = control.load_design(drone, gain)
    direct = control.lqr(drone, np.array(hover.split(), dtype=float))
    np.testing.assert_allclose(design.K, direct.K)
    x = np.concatenate([[0.3, 0, 1], Rotation.from_rotvec([0.2, 0.1, 0]).as_quat(), np.zeros(6)])
    np.testing.assert_allclose(design(0.0, x), direct(0.0, x), rtol=1e-12)
    start = "0.3 0 1 0.1 0 0 0.995 0 0 0 0 0 0"
    out = runner.invoke(
        main,
        [
            "simulate",
            str(folder),
            "--x0",
            start,
            "--t-end",
            "12",
            "--lqr-from",
            str(gain),
            "--csv",
            str(tmp_path / "s.csv"),
        ],
    )
    assert out.exit_code == 0, out.output
    table = np.loadtxt(tmp_path / "s.csv", delimiter=",", skiprows=1)
    np.testing.assert_allclose(np.linalg.norm(table[:, 4:8], axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(table[-1, 1:4], [0, 0, 1], atol=1e-3)
    out = runner.invoke(main, ["lqr", str(folder), "--x-eq", "0 0 1 0 0 0 1 0 0 0 0 0"])
    assert out.exit_code != 0 and "expected 13 numbers" in out.output
    out = runner.invoke(main, ["lqr", str(folder), "--x-eq", hover, "--Q", " ".join(["1"] * 13)])
    assert out.exit_code != 0 and "12 diagonal entries" in out.output


@needs_robots
def test_a_plot_of_a_quaternion_base_splits_coordinates_and_speeds(drone):
    pytest.importorskip("matplotlib")
    from sls.control.plot import simulation_figure

    x0 = np.zeros(13)
    x0[6], x0[11] = 1.0, 1.0
    result = control.simulate(drone, x0, (0, 1), params=NO_GRAVITY)
    figure = simulation_figure(result, drone.STATE)
    labels = [[line.get_label() for line in ax.get_lines()] for ax in figure.axes]
    assert labels[0] == list(drone.STATE[:7]) and labels[1] == list(drone.STATE[7:])


def test_xdot_fun_stacks_the_coordinate_rates_and_the_speed_rates(body):
    """xdot_fun(x, u) = [qdot_fun(x); vdot_fun(x, u)] (N_Q + N_V entries), for one state and a batch."""
    rng = np.random.default_rng(5)
    x = np.concatenate(
        [rng.normal(size=(4, 3)), Rotation.random(4, random_state=rng).as_quat(), rng.normal(size=(4, 6))], axis=1
    )
    u = rng.normal(size=6)
    expected = np.concatenate([body.qdot_fun(x), body.vdot_fun(x, u)], axis=-1)
    assert body.xdot_fun(x, u).shape == (4, 13)
    np.testing.assert_allclose(body.xdot_fun(x, u), expected, rtol=1e-14)
    np.testing.assert_allclose(body.xdot_fun(x[0], u), expected[0], rtol=1e-14)
