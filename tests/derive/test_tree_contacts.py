"""Point contacts of a robot (sls.derive.tree_frames.contact_terms) against Pinocchio's constraintDynamics with
3-D rigid contacts in LOCAL_WORLD_ALIGNED (the same URDF, the same quaternion base): the constrained vdot_fun and
contact_forces_fun (its lambda_c); the constrained linearized_model against central differences in the tangent
space; the readers' one-line refusals."""

import importlib
import sys

import numpy as np
import pytest

import sls
from sls.readers.urdf import load_urdf

pin = pytest.importorskip("pinocchio")
from pinocchio_peers import FEET, SOLO, SOLO_JOINTS, SOLO_STANDING, feet_places, random_state, solo_on_feet  # noqa: E402

SAMPLES = 200


@pytest.fixture(scope="module")
def standing(tmp_path_factory):
    """(package, Pinocchio model, its contact models and datas) for Solo-12 on its four feet."""
    folder = tmp_path_factory.mktemp("contacts")
    model = load_urdf(SOLO, floating_base=True, contacts=FEET, name="solo_on_feet")
    sls.generate(model, folder / model.name)
    sys.path.insert(0, str(folder))
    try:
        package = importlib.import_module(model.name)
    finally:
        sys.path.remove(str(folder))
    peer, contacts, datas = solo_on_feet()
    return package, peer, contacts, datas


def test_layout_and_parameters(standing):
    package, peer, _, _ = standing
    assert package.CONTACTS == tuple(FEET) and package.N_CONSTRAINTS == 12 and package.N_HOLONOMIC == 12
    # the default anchors: the feet where they are at the neutral configuration (Pinocchio's neutral q)
    data = peer.createData()
    pin.framesForwardKinematics(peer, data, pin.neutral(peer))
    for foot in FEET:
        where = data.oMf[peer.getFrameId(foot)].translation
        assert [package.PARAMS[f"contact_{foot}_{axis}"] for axis in "xyz"] == pytest.approx(where, abs=1e-12)


def test_constrained_dynamics_equal_constraint_dynamics(standing):
    package, peer, contacts, datas = standing
    data = peer.createData()
    pin.initConstraintDynamics(peer, data, contacts, datas)
    rng = np.random.default_rng(3)
    for _ in range(SAMPLES):
        x = random_state(peer, rng)
        u = rng.normal(size=package.N_INPUTS)
        tau = package.input_matrix_fun(x) @ u
        q, v = x[: peer.nq], x[peer.nq :]
        settings = pin.ProximalSettings(1e-12, 0, 1)
        accelerations = pin.constraintDynamics(peer, data, q, v, tau, contacts, datas, settings)
        scale = max(1.0, np.abs(accelerations).max())
        assert np.abs(package.vdot_fun(x, u) - accelerations).max() <= 1e-8 * scale
        forces = data.lambda_c.reshape(4, 3)
        assert np.abs(package.contact_forces_fun(x, u) - forces).max() <= 1e-8 * max(1.0, np.abs(forces).max())
    batch = np.array([random_state(peer, rng) for _ in range(5)])
    inputs = rng.normal(size=(5, package.N_INPUTS))
    assert package.contact_forces_fun(batch, inputs).shape == (5, 4, 3)


def test_constrained_derivatives_equal_constraint_dynamics_derivatives(standing):
    """Solo-12 on four point feet, 300 random states: linearized_model's lower rows = Pinocchio's ddq_dq, ddq_dv
    (tangent space) and ddq_dtau B_u; contact_forces_jac_fun = dlambda_dq, dlambda_dv, dlambda_dtau B_u (the same
    sign and frame as contact_forces_fun: lambda_c), to 1e-8 relative."""
    package, peer, contacts, datas = standing
    data = peer.createData()
    pin.initConstraintDynamics(peer, data, contacts, datas)
    rng = np.random.default_rng(31)
    n, samples = peer.nv, 300
    states = np.array([random_state(peer, rng) for _ in range(samples)])
    inputs = rng.normal(size=(samples, package.N_INPUTS))
    A, B = package.linearized_model(states, inputs)
    F_x, F_u = package.contact_forces_jac_fun(states, inputs)
    assert F_x.shape == (samples, 4, 3, 2 * n) and F_u.shape == (samples, 4, 3, package.N_INPUTS)
    settings = pin.ProximalSettings(1e-12, 0, 1)
    for k in range(samples):
        B_u = package.input_matrix_fun(states[k])
        q, v = states[k, : peer.nq], states[k, peer.nq :]
        pin.constraintDynamics(peer, data, q, v, B_u @ inputs[k], contacts, datas, settings)
        pin.computeConstraintDynamicsDerivatives(peer, data, contacts, datas, settings)
        for ours, theirs in (
            (A[k, n:], np.hstack([data.ddq_dq, data.ddq_dv])),
            (B[k, n:], data.ddq_dtau @ B_u),
            (F_x[k].reshape(12, 2 * n), np.hstack([data.dlambda_dq, data.dlambda_dv])),
            (F_u[k].reshape(12, -1), data.dlambda_dtau @ B_u),
        ):
            assert np.abs(ours - theirs).max() <= 1e-8 * max(1.0, np.abs(theirs).max())
    one = package.contact_forces_jac_fun(states[0], inputs[0])
    assert np.abs(one[0] - F_x[0]).max() <= 1e-12 * np.abs(F_x[0]).max()
    assert np.abs(one[1] - F_u[0]).max() <= 1e-12 * np.abs(F_u[0]).max()


def test_constrained_linearization_is_the_tangent_space_difference(standing):
    """A = d/d[dq; dv] of [the tangent rate; vdot] at x = (integrate(q, dq), v + dv), by central differences."""
    package, peer, _, _ = standing
    rng = np.random.default_rng(4)
    n, h = peer.nv, 1e-6
    for _ in range(2):
        x, u = random_state(peer, rng), rng.normal(size=package.N_INPUTS)
        A, B = package.linearized_model(x, u)
        q, v = x[: peer.nq], x[peer.nq :]

        def vdot(delta, x=x, q=q, v=v, u=u):
            return package.vdot_fun(np.concatenate([package.integrate(q, delta[:n]), v + delta[n:]]), u)

        numeric = np.column_stack([(vdot(h * e) - vdot(-h * e)) / (2 * h) for e in np.eye(2 * n)])
        assert np.abs(A[n:] - numeric).max() <= 1e-5 * max(1.0, np.abs(numeric).max())
        inputs = np.column_stack(
            [(package.vdot_fun(x, u + h * e) - package.vdot_fun(x, u - h * e)) / (2 * h) for e in np.eye(len(u))]
        )
        assert np.abs(B[n:] - inputs).max() <= 1e-5 * max(1.0, np.abs(inputs).max())
        at_rest = package.linearized_model(np.concatenate([q, np.zeros(n)]), u)[0]
        assert np.array_equal(at_rest[:n], np.hstack([np.zeros((n, n)), np.eye(n)]))


@pytest.mark.parametrize(
    ("contacts", "message"),
    [
        (["FL_FOT"], "contacts: 'FL_FOT' is not a link of the robot; did you mean 'FL_FOOT'?"),
        (["FL_FOOT:line"], "the kind must be point or 6d"),
        (["FL_FOOT", "FL_FOOT:point"], "a link is named twice"),
    ],
)
def test_bad_contacts_are_one_line(contacts, message):
    with pytest.raises(sls.SlsError, match="contacts") as error:
        load_urdf(SOLO, floating_base=True, contacts=contacts)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_contacts_from_a_model_file_and_the_command_line(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from sls.cli.app import main

    (tmp_path / "solo.toml").write_text(
        f'contacts = ["FL_FOOT", "HR_FOOT:point"]\nconstraint_stabilization = 20.0\n\n[urdf]\nfile = "{SOLO}"\n'
        "floating_base = true\n"
    )
    model = sls.load_toml(tmp_path / "solo.toml")
    assert model.contacts == (("FL_FOOT", "point"), ("HR_FOOT", "point")) and model.stabilization == 20.0
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["generate", str(SOLO), "--floating-base", "--contacts", "FL_FOOT", "-o", "p"])
    assert result.exit_code == 0, result.output
    assert 'CONTACTS = ("FL_FOOT",)' in (tmp_path / "p" / "__init__.py").read_text()
    refused = CliRunner().invoke(main, ["generate", "pendulum", "--contacts", "a", "-o", "x"])
    assert refused.exit_code != 0 and "--contacts goes with a URDF robot" in refused.output


def test_the_push_recovery_from_the_command_line(tmp_path):
    """The same workflow as a user types it: a model file with the feet held where the standing pose puts them
    (``contact_at``), ``sls generate``, ``sls lqr`` at the standing pose (inputs computed), ``sls simulate`` of a
    0.3 m/s push (projected onto the contacts, --project-x0: the feet still): the trunk back at its height within
    1 cm after 2 s, the feet where they stand, the ground carrying the weight."""
    from click.testing import CliRunner

    from sls.cli import main

    def run(*args: object) -> None:
        result = CliRunner().invoke(main, [str(a) for a in args])
        assert result.exit_code == 0, result.output

    joints = SOLO_JOINTS
    peer, _, _ = solo_on_feet()
    q_eq = SOLO_STANDING
    places = feet_places(peer, q_eq)
    (tmp_path / "solo_pushed.toml").write_text(
        f"inputs = {[f'm_{joint}' for joint in joints]!r}\n".replace("'", '"')
        + f"contacts = {FEET!r}\n".replace("'", '"')
        + "constraint_stabilization = 20.0\n\n"
        + f'[urdf]\nfile = "{SOLO.as_posix()}"\nfloating_base = true\n\n[actuation]\n'
        + "".join(f'tau_{joint} = "m_{joint}"\n' for joint in joints)
        + "\n[contact_at]\n"
        + "".join(f"{foot} = [{', '.join(repr(float(c)) for c in place)}]\n" for foot, place in places.items())
    )
    run("generate", tmp_path / "solo_pushed.toml", "--out", tmp_path / "solo_pushed")
    x_eq = " ".join(repr(float(v)) for v in np.concatenate([q_eq, np.zeros(peer.nv)]))
    run("lqr", tmp_path / "solo_pushed", "--x-eq", x_eq, "--save", tmp_path / "stand.json")
    pushed = np.concatenate([q_eq, np.zeros(peer.nv)])
    pushed[peer.nq] = 0.3
    csv = tmp_path / "run.csv"
    run(
        "simulate",
        tmp_path / "solo_pushed",
        "--x0",
        " ".join(map(repr, map(float, pushed))),
        "--t-end",
        "2",
        "--lqr-from",
        tmp_path / "stand.json",
        "--project-x0",  # the push with the legs at rest moves the feet: made consistent (feet still)
        "--csv",
        csv,
    )
    last = np.loadtxt(csv, delimiter=",", skiprows=1)[-1]  # t, the state, the inputs, T, V, T + V
    end, inputs = last[1 : 1 + peer.nq + peer.nv], last[1 + peer.nq + peer.nv : -3]
    assert abs(end[2] - 0.24) < 0.01 and len(inputs) == len(joints)
    sys.path.insert(0, str(tmp_path))
    try:
        solo = importlib.import_module("solo_pushed")
    finally:
        sys.path.remove(str(tmp_path))
    assert np.abs(solo.constraint_fun(end)).max() <= 1e-6
    weight = -sum(inertia.mass for inertia in peer.inertias) * peer.gravity.linear[2]
    assert solo.contact_forces_fun(end, inputs)[:, 2].sum() == pytest.approx(weight, rel=1e-3)
