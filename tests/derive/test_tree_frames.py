"""Frame kinematics of robots (sls.derive.tree_frames) against Pinocchio on the same URDF: world poses
(framesForwardKinematics), Jacobians (getFrameJacobian, LOCAL_WORLD_ALIGNED), the classical acceleration drift
(getFrameClassicalAcceleration after forwardKinematics(q, v, 0)), the centre of mass and its Jacobian; on 1 000
random states per robot, fixed bases and quaternion bases; and the C and MATLAB targets against the Python one."""

import importlib
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from octave import matlab_vector, needs_octave, octave_matrices

import sls
from sls.readers.urdf import load_urdf

pin = pytest.importorskip("pinocchio")
ROBOTS = Path(pin.__file__).resolve().parents[4] / "share" / "example-robot-data" / "robots"
COMPILER = shutil.which("cc") or shutil.which("gcc")
SAMPLES = 1000

#: label → (file, floating base, frames)
CASES = {
    "UR5 tool0": ("ur_description/urdf/ur5_robot.urdf", False, ["tool0"]),
    "Panda hand": ("panda_description/urdf/panda.urdf", False, ["panda_hand", "panda_leftfinger"]),
    "Solo-12 feet": ("solo_description/robots/solo12.urdf", True, ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]),
    "G1 hands and feet": (
        "g1_description/urdf/g1_29dof_rev_1_0.urdf",
        True,
        ["left_rubber_hand", "right_rubber_hand", "left_ankle_roll_link", "right_ankle_roll_link"],
    ),
}
FRAME_FUNCTIONS = [
    "frame_pose_fun",
    "frame_jacobian_fun",
    "frame_jacobian_local_fun",
    "frame_jdot_v_fun",
    "com_fun",
    "com_jacobian_fun",
]


def generated(model: sls.Model, folder: Path, target: str = "python"):
    sls.generate(model, folder / model.name, target=target, functions=FRAME_FUNCTIONS)
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module(model.name)
    finally:
        sys.path.remove(str(folder))


class Peer:
    """Pinocchio's model of the file, with maps between its (q, v) and sls's state (joints matched by name)."""

    def __init__(self, path: Path, floating: bool, coordinates: tuple) -> None:
        root = [pin.JointModelFreeFlyer()] if floating else []
        self.model = pin.buildModelFromUrdf(str(path), *root, mimic=True)
        self.data = self.model.createData()
        base_q, base_v = (7, 6) if floating else (0, 0)
        joints = coordinates[base_q:]
        ids = [self.model.getJointId(name) for name in joints]
        self.q_index = list(range(base_q)) + [self.model.joints[i].idx_q for i in ids]
        self.v_index = list(range(base_v)) + [self.model.joints[i].idx_v for i in ids]

    def state(self, x: np.ndarray, n_q: int) -> tuple:
        q, v = np.zeros(self.model.nq), np.zeros(self.model.nv)
        q[self.q_index], v[self.v_index] = x[:n_q], x[n_q:]
        return q, v

    def columns(self, J: np.ndarray) -> np.ndarray:
        """A Pinocchio Jacobian's columns in sls's order of the speeds."""
        return J[:, self.v_index]


def random_states(package, peer: Peer, count: int, seed: int = 5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n_q = len(package.STATE) - package.N_DOF
    x = np.empty((count, len(package.STATE)))
    for k in range(count):
        q = pin.randomConfiguration(peer.model, -np.ones(peer.model.nq), np.ones(peer.model.nq))
        x[k, :n_q] = q[peer.q_index]
        x[k, n_q:] = rng.normal(size=package.N_DOF)
    return x


@pytest.mark.parametrize("label", list(CASES))
def test_frames_equal_pinocchio(label, tmp_path):
    relative, floating, frames = CASES[label]
    path = ROBOTS / relative
    model = load_urdf(path, floating_base=floating, frames=frames, name="frames_" + label.split()[0].replace("-", ""))
    package = generated(model, tmp_path)
    assert package.FRAMES == tuple(frames)
    n_q = len(package.STATE) - package.N_DOF
    peer = Peer(path, floating, package.STATE[:n_q])
    x = random_states(package, peer, SAMPLES)
    poses, jacobians, drifts = package.frame_pose_fun(x), package.frame_jacobian_fun(x), package.frame_jdot_v_fun(x)
    local = package.frame_jacobian_local_fun(x)
    com, com_jacobian = package.com_fun(x), package.com_jacobian_fun(x)
    ids = [peer.model.getFrameId(name) for name in frames]
    worst = 0.0
    for k in range(SAMPLES):
        q, v = peer.state(x[k], n_q)
        model_, data = peer.model, peer.data
        pin.forwardKinematics(model_, data, q, v, np.zeros(model_.nv))
        pin.updateFramePlacements(model_, data)
        pin.computeJointJacobians(model_, data, q)
        for f, fid in enumerate(ids):
            errors = (
                np.abs(poses[k, f] - data.oMf[fid].homogeneous).max(),
                np.abs(
                    jacobians[k, f] - peer.columns(pin.getFrameJacobian(model_, data, fid, pin.LOCAL_WORLD_ALIGNED))
                ).max(),
                np.abs(
                    drifts[k, f] - pin.getFrameClassicalAcceleration(model_, data, fid, pin.LOCAL_WORLD_ALIGNED).vector
                ).max(),
                np.abs(local[k, f] - peer.columns(pin.getFrameJacobian(model_, data, fid, pin.LOCAL))).max(),
            )
            worst = max(worst, *errors)
        worst = max(worst, np.abs(com[k] - pin.centerOfMass(model_, data, q)).max())
        worst = max(worst, np.abs(com_jacobian[k] - peer.columns(pin.jacobianCenterOfMass(model_, data, q))).max())
    assert worst <= 1e-10


def test_frame_names_are_checked(tmp_path):
    with pytest.raises(sls.SlsError, match="frames: 'tool' is not a link of the robot; did you mean 'tool0'"):
        load_urdf(ROBOTS / CASES["UR5 tool0"][0], frames=["tool"])
    everything = load_urdf(ROBOTS / CASES["UR5 tool0"][0], frames="all")
    assert everything.frames[0] == "world" and "tool0" in everything.frames


@pytest.mark.skipif(COMPILER is None, reason="no C compiler")
@pytest.mark.parametrize("label", ["UR5 tool0", "Panda hand"])
def test_c_frames_equal_python(label, tmp_path):
    relative, floating, frames = CASES[label]
    model = load_urdf(ROBOTS / relative, floating_base=floating, frames=frames, name="cframes_" + label.split()[0])
    python = generated(model, tmp_path / "py")
    compiled = generated(model, tmp_path / "c", target="c")
    peer = Peer(ROBOTS / relative, floating, python.STATE[: len(python.STATE) - python.N_DOF])
    x = random_states(python, peer, 200)
    for name in FRAME_FUNCTIONS:
        expected = getattr(python, name)(x)
        assert np.abs(getattr(compiled, name)(x) - expected).max() <= 1e-12 * max(1.0, np.abs(expected).max())
        assert np.abs(getattr(compiled, name)(x[3]) - expected[3]).max() <= 1e-12 * max(1.0, np.abs(expected).max())


@needs_octave
def test_matlab_frames_equal_python(tmp_path):
    relative, floating, frames = CASES["Panda hand"]
    model = load_urdf(ROBOTS / relative, floating_base=floating, frames=frames, name="mframes_panda")
    python = generated(model, tmp_path / "py")
    sls.generate(model, tmp_path / "m", target="matlab", functions=FRAME_FUNCTIONS)
    peer = Peer(ROBOTS / relative, floating, python.STATE[: len(python.STATE) - python.N_DOF])
    x = random_states(python, peer, 1)[0]
    script = " ".join(f"disp(mat2str({name}({matlab_vector(x)})(:)', 17));" for name in FRAME_FUNCTIONS)
    rows = [np.ravel(matrix) for matrix in octave_matrices(script, tmp_path / "m")]
    for name, got in zip(FRAME_FUNCTIONS, rows):
        expected = getattr(python, name)(x)
        # MATLAB's (:) reads column-major: compare against the Fortran-order flattening
        assert np.abs(got - np.ravel(expected, order="F")).max() <= 1e-12 * max(1.0, np.abs(expected).max()), name


def test_frames_from_a_model_file_and_the_command_line(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from sls.cli.app import main

    urdf = ROBOTS / CASES["UR5 tool0"][0]
    (tmp_path / "arm.toml").write_text(f'frames = ["tool0", "wrist_1_link"]\n\n[urdf]\nfile = "{urdf}"\n')
    assert sls.load_toml(tmp_path / "arm.toml").frames == ("tool0", "wrist_1_link")
    monkeypatch.chdir(tmp_path)
    good = CliRunner().invoke(main, ["generate", str(urdf), "--frames", "tool0", "--out", "pkg", "-q"])
    assert good.exit_code == 0, good.output
    assert 'FRAMES = ("tool0",)' in (tmp_path / "pkg" / "__init__.py").read_text()
    for arguments, message in (
        ([str(urdf), "--frames", "tool1"], "frames: 'tool1' is not a link of the robot; did you mean 'tool0'?"),
        (["pendulum", "--frames", "tool0"], "--frames goes with a URDF robot"),
    ):
        result = CliRunner().invoke(main, ["generate", *arguments, "--out", "bad"])
        assert result.exit_code != 0 and message in result.output and "Traceback" not in result.output
        assert not (tmp_path / "bad").exists()
    (tmp_path / "bad.toml").write_text(f'frames = "tool0"\n\n[urdf]\nfile = "{urdf}"\n')
    with pytest.raises(sls.SlsError, match="'frames' must be a list of link names"):
        sls.load_toml(tmp_path / "bad.toml")
