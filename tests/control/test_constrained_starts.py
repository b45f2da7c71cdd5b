"""Starts that keep the constraints (sls/control/constraints.py): the check of x0 (and of lqr's x_eq) in one line,
the projection onto the constraints, the Baumgarte rate as a run-time parameter and simulate's default rate.

The model is a pendulum in Cartesian coordinates held on its circle by one holonomic constraint; every reference
is written by hand from that (the circle, its tangent, the mass matrix m·I)."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

import sls
import sls.control as control
from sls.cli.app import main
from sls.control.constraints import constraint_violation, default_stabilization, project_state
from sls.errors import ControlError

PENDULUM = """\
state = ["px", "py", "dpx", "dpy"]
T = "1/2*m*(dpx^2 + dpy^2)"
V = "m*g*py"
fric = "0"
inputs = ["F"]
forces = ["F", "0"]
constraints = ["px^2 + py^2 - L^2"]
[params]
m = 1.3
g = 9.81
L = 0.8
"""
L_ = 0.8


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("constrained")
    (root / "pendulum.toml").write_text(PENDULUM)
    sls.generate(sls.load_toml(root / "pendulum.toml"), root / "pendulum")
    return root / "pendulum"


@pytest.fixture(scope="module")
def pkg(folder):
    return control.load_package(folder)


def on_circle(angle: float, rate: float) -> np.ndarray:
    """The state at the angle from the downward vertical, turning at ``rate`` (a consistent state)."""
    s, c = np.sin(angle), np.cos(angle)
    return np.array([L_ * s, -L_ * c, L_ * c * rate, L_ * s * rate])


def test_the_rate_is_a_run_time_parameter_with_the_models_default(pkg, tmp_path):
    assert pkg.PARAMS["constraint_stabilization"] == 0.0
    x, u = np.array([0.5, -0.7, 0.3, -0.2]), [0.4]  # off the circle and moving off it
    plain = pkg.qddot_fun(x, u)
    rate = 7.0
    stabilized = pkg.qddot_fun(x, u, constraint_stabilization=rate)
    # by hand: A qddot = g - 2w A v - w^2 c with M = m I, so the correction is A^T (A A^T)^-1 (-2w A v - w^2 c)
    A = np.array([2 * x[0], 2 * x[1]])
    c = x[0] ** 2 + x[1] ** 2 - L_**2
    extra = -2 * rate * (A @ x[2:]) - rate**2 * c
    np.testing.assert_allclose(stabilized - plain, A * extra / (A @ A), rtol=1e-12, atol=1e-12)
    # a model file's constraint_stabilization is the default
    (tmp_path / "p.toml").write_text(PENDULUM.replace("[params]", "constraint_stabilization = 4.5\n[params]"))
    model = sls.load_toml(tmp_path / "p.toml")
    assert model.params["constraint_stabilization"] == 4.5
    # unconstrained models have no such parameter
    assert "constraint_stabilization" not in sls.load_example("cart_pole").params


def test_generate_takes_the_rate_as_a_param(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.toml").write_text(PENDULUM)
    result = CliRunner().invoke(
        main,
        ["generate", "p.toml", "--param", "constraint_stabilization=20", "-o", "p", "-q", "--functions", "qddot_fun"],
    )
    assert result.exit_code == 0, result.output
    assert "constraint_stabilization=20.0" in (tmp_path / "p" / "qddot_fun.py").read_text().replace(" ", "")


def test_a_start_off_the_constraints_is_refused_in_one_line(pkg):
    moving = on_circle(0.4, 0.0) + np.array([0.0, 0.0, 0.1, 0.2])  # moving off the circle
    with pytest.raises(ControlError) as error:
        control.simulate(pkg, moving, (0.0, 0.1))
    message = str(error.value)
    assert "\n" not in message and message.startswith("x0 violates the constraints: constraint 1 moves at ")
    A = 2 * moving[:2]
    assert f"{A @ moving[2:]:.3g}" in message and "--project-x0" in message and "project=True" in message
    off = on_circle(0.4, 0.0) * 1.01  # 1 % off the circle, at rest
    with pytest.raises(
        ControlError, match=r"x0 violates the constraints: constraint 1 is off by .*constraint_fun row 1"
    ):
        control.simulate(pkg, off, (0.0, 0.1))
    with pytest.raises(ControlError, match=r"^x_eq violates the constraints: constraint 1 is off by"):
        control.lqr(pkg, [0.0, 2 * L_, 0.0, 0.0], u_eq=[0.0])


def test_the_projection_lands_on_the_constraints_nearest_in_kinetic_energy(pkg):
    x = np.array([0.5, -0.7, 0.3, -0.2])
    projected, line = project_state(pkg, x, {})
    q, v = projected[:2], projected[2:]
    assert abs(q @ q - L_**2) < 1e-12 and abs(q @ v) < 1e-12  # on the circle, moving along it
    # Gauss-Newton's minimum-norm steps keep to the radial line: the direction of q is that of the start
    np.testing.assert_allclose(q / np.linalg.norm(q), x[:2] / np.linalg.norm(x[:2]), atol=1e-12)
    # M = m I: v is the tangential part of the speeds (the radial part removed)
    radial = q / np.linalg.norm(q)
    np.testing.assert_allclose(v, x[2:] - (x[2:] @ radial) * radial, atol=1e-12)
    assert line.startswith("projected x0 onto the constraints: q moved by ")
    assert "v moved by" in line and "\n" not in line
    same, line = project_state(pkg, on_circle(0.3, 1.0), {})
    np.testing.assert_allclose(same, on_circle(0.3, 1.0), atol=1e-15)
    assert line == "projected x0 onto the constraints: q unchanged, v unchanged"


def test_simulate_projects_when_asked_and_keeps_the_constraints(pkg):
    x = np.array([0.5, -0.7, 0.3, -0.2])
    result = control.simulate(pkg, x, (0.0, 1.0), project=True)
    assert result.success and result.projection.startswith("projected x0")
    np.testing.assert_allclose(result.y[:, 0], project_state(pkg, x, {})[0], atol=1e-12)
    states = result.y.T
    c = np.abs(pkg.constraint_fun(states)).max()
    Av = np.abs(np.einsum("ti,ti->t", 2 * states[:, :2], states[:, 2:])).max()
    assert result.constraint_residual == pytest.approx(c, abs=1e-15)
    assert result.velocity_residual == pytest.approx(Av, abs=1e-15)
    assert c < 1e-8


def test_the_default_rate_is_the_loops_fastest_mode(pkg):
    start = on_circle(0.4, 0.0)
    result = control.simulate(pkg, start, (0.0, 0.5))
    jacobian = control.closed_loop_jacobian(pkg)(0.0, start)
    assert result.stabilization == pytest.approx(max(np.abs(np.linalg.eigvals(jacobian)).max(), 10 / 0.5))
    # small pendulum: omega = sqrt(g/L) = 3.5/s, below 10/(t_end - t0) = 20/s
    assert result.stabilization == pytest.approx(20.0)
    assert control.simulate(pkg, start, (0.0, 0.5), stabilization=3.0).stabilization == 3.0
    given = control.simulate(pkg, start, (0.0, 0.5), stabilization=3.0, params={"constraint_stabilization": 0.0})
    assert given.stabilization == 0.0  # the parameter, when given, wins
    assert default_stabilization(np.diag([-400.0, 2.0]), 1.0) == 400.0
    with pytest.raises(ControlError, match="stabilization must be a rate >= 0"):
        control.simulate(pkg, start, (0.0, 0.5), stabilization=-1.0)


def test_stabilization_pulls_a_drift_back(pkg):
    """Loose tolerances let the constraint drift; the default Baumgarte rate keeps it far smaller than none."""
    start = on_circle(2.5, 3.0)
    loose = {"rtol": 1e-4, "atol": 1e-6}
    free = control.simulate(pkg, start, (0.0, 5.0), params={"constraint_stabilization": 0.0}, **loose)
    held = control.simulate(pkg, start, (0.0, 5.0), **loose)
    assert held.constraint_residual < 0.1 * free.constraint_residual


def test_unconstrained_packages_have_no_constraint_report(tmp_path):
    sls.generate(sls.load_example("pendulum"), tmp_path / "p")
    result = control.simulate(tmp_path / "p", [0.1, 0.0], (0.0, 0.1), project=True)
    assert result.projection is None and result.stabilization is None and result.constraint_residual is None


def test_the_worst_row_is_named(pkg):
    violation = constraint_violation(pkg, np.array([0.0, -L_, 0.5, 0.0]), {})
    assert (violation.name, violation.violated) == ("constraint 1", False)  # on the circle, moving along it
    violation = constraint_violation(pkg, np.array([0.0, -L_, 0.0, 0.5]), {})
    assert (violation.kind, violation.value, violation.violated) == ("velocity", pytest.approx(-0.8), True)


def test_the_command_line_refuses_projects_and_reports(folder, tmp_path):
    runner = CliRunner()
    moving = "0.5 -0.7 0.3 -0.2"
    refused = runner.invoke(main, ["simulate", str(folder), "--x0", moving, "--t-end", "0.2", "-q"])
    assert refused.exit_code != 0
    lines = refused.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: x0 violates the constraints: constraint 1 is off by")
    ran = runner.invoke(main, ["simulate", str(folder), "--x0", moving, "--t-end", "0.2", "--project-x0"])
    assert ran.exit_code == 0, ran.output
    assert "projected x0 onto the constraints: q moved by" in ran.output
    assert "constraints: largest residual" in ran.output and "Baumgarte rate 50/s" in ran.output
    given = runner.invoke(
        main,
        [
            "simulate",
            str(folder),
            "--x0",
            moving,
            "--t-end",
            "0.2",
            "--project-x0",
            "--param",
            "constraint_stabilization=7",
        ],
    )
    assert given.exit_code == 0 and "Baumgarte rate 7/s" in given.output, given.output
