"""A legged robot from the command line alone (docs/legged.md): Solo-12 (example-robot-data) on its four feet at its
SRDF stance ``standing``, motors only; ``sls lqr --stance standing``, then ``sls simulate`` with a 0.3 m/s push of
the trunk. A push with the feet moving is refused in one line; ``--project-x0`` makes it consistent (feet still)
and says what it changed. References: Pinocchio's total mass (the contact forces hold the weight) and
``framesForwardKinematics`` (the feet along the simulated trajectory). The package is generated once (python
target) and simulated for one second with loose tolerances, to keep the test's cost small."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from sls.cli.app import main
from sls.control import load_design, load_package

pin = pytest.importorskip("pinocchio")
ROBOTS = Path(pin.__file__).resolve().parents[4] / "share/example-robot-data/robots"
SOLO = ROBOTS / "solo_description/robots/solo12.urdf"
SOLO_SRDF = ROBOTS / "solo_description/srdf/solo.srdf"
FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
#: The LQR weights: the trunk's pose 100, every other tangent entry 1; inputs 10.
Q = " ".join(["100"] * 6 + ["1"] * 30)


@pytest.fixture(scope="module")
def solo(tmp_path_factory):
    """The folder with Solo-12 generated on its feet at ``standing`` (package ``solo``) and its LQR design."""
    root = tmp_path_factory.mktemp("legged")
    runner = CliRunner()
    arguments = ["generate", str(SOLO), "--floating-base", "--contacts", ",".join(FEET)]
    arguments += ["--srdf", str(SOLO_SRDF), "--stance", "standing", "-o", str(root / "solo")]
    generated = runner.invoke(main, arguments)
    assert generated.exit_code == 0, generated.output
    lqr = runner.invoke(
        main, ["lqr", str(root / "solo"), "--stance", "standing", "--Q", Q, "--R", "10", "--save", str(root / "k.json")]
    )
    assert lqr.exit_code == 0, lqr.output
    return root, generated.output, lqr.output


@pytest.fixture(scope="module")
def peer():
    model = pin.buildModelFromUrdf(str(SOLO), pin.JointModelFreeFlyer())
    pin.loadReferenceConfigurations(model, str(SOLO_SRDF), False)
    return model


def feet(peer, q: np.ndarray) -> np.ndarray:
    """The four feet's world positions (4, 3) at ``q`` (Pinocchio's layout, which is sls's)."""
    data = peer.createData()
    pin.framesForwardKinematics(peer, data, q)
    return np.array([data.oMf[peer.getFrameId(foot)].translation for foot in FEET])


def pushed(pkg) -> str:
    x = np.array(pkg.STANCES["standing"])
    x[pkg.STATE.index("base_vx")] = 0.3
    return " ".join(repr(float(v)) for v in x)


def test_the_stance_is_held_by_the_motors_and_the_ground(solo, peer):
    root, generated, lqr = solo
    assert "inputs: tau_FL_HAA" in generated and "(the joint motors alone" in generated
    pkg = load_package(root / "solo")
    assert pkg.INPUTS == tuple(f"tau_{leg}_{j}" for leg in ("FL", "FR", "HL", "HR") for j in ("HAA", "HFE", "KFE"))
    x = np.array(pkg.STANCES["standing"])
    np.testing.assert_allclose(x[: pkg.N_Q], np.asarray(peer.referenceConfigurations["standing"]), atol=1e-15)
    assert lqr.startswith("equilibrium:\n  x_eq = [base_x=0, base_y=0, base_z=0.235,")  # wrapped at 120 columns
    u_eq = load_design(pkg, root / "k.json").u_eq  # the design sls lqr saved
    np.testing.assert_allclose(pkg.qddot_fun(x, u_eq), 0.0, atol=1e-8)  # at rest: the constrained q'' is zero
    forces = np.asarray(pkg.contact_forces_fun(x, u_eq)).reshape(4, 3)
    weight = pin.computeTotalMass(peer) * 9.81
    assert forces[:, 2].sum() == pytest.approx(weight, rel=1e-10)
    np.testing.assert_allclose(forces[:, :2].sum(axis=0), 0.0, atol=1e-10 * weight)


def test_a_push_with_the_feet_moving_is_refused_in_one_line(solo):
    root, _, _ = solo
    pkg = load_package(root / "solo")
    result = CliRunner().invoke(
        main,
        ["simulate", str(root / "solo"), "--x0", pushed(pkg), "--lqr-from", str(root / "k.json"), "--t-end", "1", "-q"],
    )
    assert result.exit_code != 0
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("error: x0 violates the constraints: FL_FOOT x moves at 0.3 (A v row 1")
    assert "--project-x0" in lines[0]


def test_stand_push_recover(solo, peer):
    root, _, _ = solo
    pkg = load_package(root / "solo")
    csv = root / "run.csv"
    arguments = ["simulate", str(root / "solo"), "--x0", pushed(pkg), "--lqr-from", str(root / "k.json")]
    arguments += ["--project-x0", "--t-end", "1", "--points", "51", "--rtol", "1e-6", "--atol", "1e-8"]
    result = CliRunner().invoke(main, arguments + ["--csv", str(csv)])
    assert result.exit_code == 0, result.output
    assert "projected x0 onto the constraints: q unchanged, v moved by" in result.output
    assert "constraints: largest residual" in result.output and "Baumgarte rate" in result.output
    table = np.loadtxt(csv, delimiter=",", skiprows=1)
    states = table[:, 1 : 1 + len(pkg.STATE)]
    stance = np.array(pkg.STANCES["standing"])
    vx = pkg.STATE.index("base_vx")
    assert states[0, vx] > 0.2  # the push survives the projection: the trunk moves, the legs follow it
    standing = feet(peer, stance[: pkg.N_Q])
    drift = max(np.abs(feet(peer, state[: pkg.N_Q]) - standing).max() for state in states)
    assert drift < 1e-3  # the feet stay within 1 mm
    trunk = np.linalg.norm(states[:, :3] - stance[:3], axis=1)
    assert trunk.max() > 5e-3  # it was pushed away ...
    assert trunk[-1] < 0.02  # ... and came back within 2 cm


def test_the_projection_on_a_quaternion_base(solo):
    """Gauss-Newton through the package's integrate (a trunk 1 cm low and tilted), then the velocities nearest in
    kinetic energy: M (v' - v) is a combination of the rows of A (an impulse of the ground), A v' = 0."""
    from sls.control.constraints import project_state

    root, _, _ = solo
    pkg = load_package(root / "solo")
    x = np.array(pkg.STANCES["standing"])
    x[2] -= 0.01
    x[3:7] = [0.02, -0.01, 0.0, 1.0]
    x[pkg.N_Q :] = np.random.default_rng(3).standard_normal(pkg.N_V)
    projected, line = project_state(pkg, x, {})
    assert np.abs(pkg.constraint_fun(projected)).max() < 1e-12
    assert np.linalg.norm(projected[3:7]) == pytest.approx(1.0, abs=1e-15)
    A, M = pkg.constraint_jac_fun(projected), pkg.M_fun(projected)
    v, v0 = projected[pkg.N_Q :], x[pkg.N_Q :]
    assert np.abs(A @ v).max() < 1e-12
    impulse, *_ = np.linalg.lstsq(A.T, M @ (v - v0), rcond=None)
    np.testing.assert_allclose(A.T @ impulse, M @ (v - v0), atol=1e-10)
    assert line.startswith("projected x0 onto the constraints: q moved by ") and "v moved by" in line
