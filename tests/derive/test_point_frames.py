"""Frames of models given by their energies (sls.derive.point_frames): a double pendulum's elbow (with the
rotation of its first link) and tip, against a hand derivation (positions, Jacobians, J̇v written out by hand) and
against central differences of the poses (the linear rows from the positions, the angular rows from Ṙ Rᵀ, J̇v from
J along the motion), on the expanded and graph routes, with generalized speeds, and in the C and MATLAB targets."""

import importlib
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from octave import matlab_vector, needs_octave, octave_matrices

import sls

COMPILER = shutil.which("cc") or shutil.which("gcc")
FRAME_FUNCTIONS = ["frame_pose_fun", "frame_jacobian_fun", "frame_jacobian_local_fun", "frame_jdot_v_fun"]
L1, L2 = 0.5, 0.7
q1, q2, dq1, dq2, v1, v2, m1, m2, l1, l2, g = sp.symbols("q1 q2 dq1 dq2 v1 v2 m1 m2 l1 l2 g", real=True)
PARAMS = {m1: 1.0, m2: 2.0, l1: L1, l2: L2, g: 9.81}
ELBOW = sp.Matrix([l1 * sp.sin(q1), 0, -l1 * sp.cos(q1)])
TIP = ELBOW + sp.Matrix([l2 * sp.sin(q1 + q2), 0, -l2 * sp.cos(q1 + q2)])
#: the first link's orientation: a turn by q1 about −y (its z axis along the link, from the elbow to the pivot)
LINK1 = sp.Matrix([[sp.cos(q1), 0, -sp.sin(q1)], [0, 1, 0], [sp.sin(q1), 0, sp.cos(q1)]])
FRAMES = {"tip": list(TIP), "elbow": {"position": ELBOW, "rotation": LINK1}}


def double_pendulum(name: str, speeds: bool = False) -> sls.Model:
    """The double pendulum (relative angle q2) by its energies; with ``speeds`` its speeds are the links' absolute
    rates v1 = q̇1, v2 = q̇1 + q̇2 (kinematics q̇ = [v1, v2 − v1])."""
    rates = {dq1: v1, dq2: v2 - v1} if speeds else {}
    velocities = [e.subs(rates) for e in (ELBOW.diff(q1) * dq1, TIP.diff(q1) * dq1 + TIP.diff(q2) * dq2)]
    T = sum(m / 2 * (v.T * v)[0] for m, v in zip((m1, m2), velocities))
    V = g * (m1 * ELBOW[2] + m2 * TIP[2])
    x = [q1, q2, v1, v2] if speeds else [q1, q2, dq1, dq2]
    kinematics = [v1, v2 - v1] if speeds else None
    return sls.model_from_sympy(T, V, 0, x, params=PARAMS, frames=FRAMES, name=name, kinematics=kinematics)


def generated(model: sls.Model, folder: Path, **options):
    sls.generate(model, folder / model.name, **options)
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module(model.name)
    finally:
        sys.path.remove(str(folder))


def by_hand(x: np.ndarray) -> dict:
    """Poses, world Jacobians (on the rates q̇) and J̇v of [tip, elbow], written out by hand."""
    a, b, w1, w2 = x
    s1, c1, s12, c12, w12 = np.sin(a), np.cos(a), np.sin(a + b), np.cos(a + b), w1 + w2
    tip, elbow = np.eye(4), np.eye(4)
    tip[:3, 3] = [L1 * s1 + L2 * s12, 0, -L1 * c1 - L2 * c12]
    elbow[:3, :3] = [[c1, 0, -s1], [0, 1, 0], [s1, 0, c1]]
    elbow[:3, 3] = [L1 * s1, 0, -L1 * c1]
    J = np.zeros((2, 6, 2))
    J[0, 0] = [L1 * c1 + L2 * c12, L2 * c12]
    J[0, 2] = [L1 * s1 + L2 * s12, L2 * s12]
    J[1, 0, 0], J[1, 2, 0], J[1, 4, 0] = L1 * c1, L1 * s1, -1.0  # ω = −q̇1 ŷ
    drift = np.zeros((2, 6))
    drift[0, 0] = -L1 * s1 * w1**2 - L2 * s12 * w12**2
    drift[0, 2] = L1 * c1 * w1**2 + L2 * c12 * w12**2
    drift[1, 0], drift[1, 2] = -L1 * s1 * w1**2, L1 * c1 * w1**2
    return {"frame_pose_fun": np.array([tip, elbow]), "frame_jacobian_fun": J, "frame_jdot_v_fun": drift}


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    folder = tmp_path_factory.mktemp("point_frames")
    return {
        "expanded": generated(double_pendulum("frames_expanded"), folder, method="expanded"),
        "graph": generated(double_pendulum("frames_graph"), folder, method="graph"),
    }


def states(count: int, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.uniform(-np.pi, np.pi, (count, 2)), rng.normal(size=(count, 2))])


@pytest.mark.parametrize("route", ["expanded", "graph"])
def test_the_double_pendulum_frames_are_the_hand_derivation(packages, route):
    package = packages[route]
    assert package.FRAMES == ("tip", "elbow") and not hasattr(package, "com_fun")
    x = states(200)
    for k in range(len(x)):
        expected = by_hand(x[k])
        for name, value in expected.items():
            assert np.abs(getattr(package, name)(x[k]) - value).max() <= 1e-12, name
    J, pose = package.frame_jacobian_fun(x), package.frame_pose_fun(x)
    Rt = np.swapaxes(pose[:, :, :3, :3], -1, -2)
    local = np.concatenate([Rt @ J[:, :, :3], Rt @ J[:, :, 3:]], axis=2)  # the twist in the frame's axes
    assert np.abs(package.frame_jacobian_local_fun(x) - local).max() <= 1e-12


def central_differences(package, x: np.ndarray, h: float = 1e-6) -> tuple:
    """(J, J̇v) of every frame by central differences: J from the positions and Ṙ Rᵀ along each speed, J̇v from
    J v along the motion q̇ = xdot_fun's upper half (speeds held)."""
    n = package.N_DOF
    q, v = x[:n], x[n:]

    def twist_columns(q):
        columns = []
        for e in np.eye(n):  # one unit speed: the coordinates move along q̇ = S(q) e
            rate = package.xdot_fun(np.concatenate([q, e]), np.zeros(package.N_INPUTS))[:n]
            plus = package.frame_pose_fun(np.concatenate([q + h * rate, v]))
            minus = package.frame_pose_fun(np.concatenate([q - h * rate, v]))
            dpose = (plus - minus) / (2 * h)
            R = package.frame_pose_fun(np.concatenate([q, v]))[:, :3, :3]
            spin = dpose[:, :3, :3] @ np.swapaxes(R, 1, 2)
            columns.append(np.concatenate([dpose[:, :3, 3], spin[:, [2, 0, 1], [1, 2, 0]]], axis=1))
        return np.stack(columns, axis=-1)

    J = twist_columns(q)
    qdot = package.xdot_fun(x, np.zeros(package.N_INPUTS))[:n]
    drift = (package.frame_jacobian_fun(np.concatenate([q + h * qdot, v])) @ v
             - package.frame_jacobian_fun(np.concatenate([q - h * qdot, v])) @ v) / (2 * h)  # fmt: skip
    return J, drift


def test_generalized_speeds_frames_are_central_differences(tmp_path):
    """Speeds v1 = q̇1, v2 = q̇1 + q̇2: J maps the speeds (J_rates S), J̇v is the rate of J v at constant speeds."""
    package = generated(double_pendulum("frames_speeds", speeds=True), tmp_path)
    rates = generated(double_pendulum("frames_rates"), tmp_path, method="expanded")
    S = np.array([[1.0, 0.0], [-1.0, 1.0]])
    for x in states(20, seed=4):
        J, drift = central_differences(package, x)
        assert np.abs(package.frame_jacobian_fun(x) - J).max() <= 1e-7
        assert np.abs(package.frame_jdot_v_fun(x) - drift).max() <= 1e-6
        same_motion = np.concatenate([x[:2], S @ x[2:]])
        assert np.abs(package.frame_jacobian_fun(x) - rates.frame_jacobian_fun(same_motion) @ S).max() <= 1e-12
        assert np.abs(package.frame_pose_fun(x) - rates.frame_pose_fun(same_motion)).max() <= 1e-12


def test_rates_frames_are_central_differences(packages):
    package = packages["graph"]
    for x in states(20, seed=5):
        J, drift = central_differences(package, x)
        assert np.abs(package.frame_jacobian_fun(x) - J).max() <= 1e-7
        assert np.abs(package.frame_jdot_v_fun(x) - drift).max() <= 1e-6


@pytest.mark.skipif(COMPILER is None, reason="no C compiler")
def test_c_frames_equal_python(packages, tmp_path):
    compiled = generated(double_pendulum("cframes_pendulum"), tmp_path, target="c", functions=FRAME_FUNCTIONS)
    x = states(50, seed=6)
    for name in FRAME_FUNCTIONS:
        expected = getattr(packages["expanded"], name)(x)
        assert np.abs(getattr(compiled, name)(x) - expected).max() <= 1e-12, name


@needs_octave
def test_matlab_frames_equal_python(packages, tmp_path):
    sls.generate(double_pendulum("mframes_pendulum"), tmp_path / "m", target="matlab", functions=FRAME_FUNCTIONS)
    x = states(1, seed=7)[0]
    script = " ".join(f"disp(mat2str({name}({matlab_vector(x)})(:)', 17));" for name in FRAME_FUNCTIONS)
    rows = [np.ravel(matrix) for matrix in octave_matrices(script, tmp_path / "m")]
    assert len(rows) == len(FRAME_FUNCTIONS)
    for name, got in zip(FRAME_FUNCTIONS, rows):
        expected = getattr(packages["expanded"], name)(x)
        assert np.abs(got - np.ravel(expected, order="F")).max() <= 1e-12, name
