"""The MATLAB target on quaternion floating bases: every solving function equals the Python target's (Octave)."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
from octave import matlab_vector, needs_octave, octave_matrices, run_octave

import sls
from sls.readers.urdf import load_urdf

pin = pytest.importorskip("pinocchio")
SOLO = Path(pin.__file__).resolve().parents[4] / "share/example-robot-data/robots/solo_description/robots/solo12.urdf"
DRONE = """<robot name="drone"><link name="body"><inertial><origin xyz="0.01 -0.02 0.03" rpy="0.1 0.2 0.3"/>
<mass value="1.2"/><inertia ixx="0.011" ixy="0.001" ixz="0.0005" iyy="0.013" iyz="-0.0007" izz="0.02"/>
</inertial></link></robot>"""


@needs_octave
@pytest.mark.parametrize("robot", ["drone", "solo12"])
def test_matlab_quaternion_base_agrees_with_python(robot, tmp_path):
    if robot == "drone":
        path = tmp_path / "drone.urdf"
        path.write_text(DRONE)
    else:
        path = SOLO
    model = load_urdf(path, floating_base=robot != "drone", name=f"{robot}_quaternion")
    sls.generate(model, tmp_path / "m", target="matlab")
    sls.generate(model, tmp_path / model.name, target="python")
    sys.path.insert(0, str(tmp_path))
    try:
        package = importlib.import_module(model.name)
    finally:
        sys.path.remove(str(tmp_path))
    rng = np.random.default_rng(8)
    quaternion = rng.normal(size=4)
    q = np.concatenate([rng.normal(size=3), quaternion / np.linalg.norm(quaternion), rng.normal(size=package.N_Q - 7)])
    x = np.concatenate([q, rng.normal(size=package.N_V)])
    u = rng.normal(size=package.N_INPUTS)
    script = (
        f"x = {matlab_vector(x)}; u = {matlab_vector(u)}; "
        "disp(mat2str(qddot_fun(x, u), 17)); disp(mat2str(xdot_fun(x, u), 17)); disp(mat2str(M_fun(x), 17)); "
        "[A, B] = linearized_model(x, u); disp(mat2str(A, 17)); disp(mat2str(B, 17));"
    )
    vdot, xdot, M, A, B = octave_matrices(script, tmp_path / "m")
    A_ref, B_ref = package.linearized_model(x, u)
    np.testing.assert_allclose(np.ravel(vdot), package.vdot_fun(x, u), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(np.ravel(xdot), package.xdot_fun(x, u), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(M, package.M_fun(x), rtol=1e-12, atol=1e-12)
    assert A.shape == A_ref.shape == (2 * package.N_V, 2 * package.N_V)
    np.testing.assert_allclose(A, A_ref, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(B, B_ref, rtol=1e-9, atol=1e-9)


@needs_octave
def test_matlab_configuration_functions_agree_with_python(tmp_path):
    """integrate, difference, normalize_configuration, to_mujoco and from_mujoco of the .m package = the Python
    package's integrate, difference, normalize, to_mujoco and from_mujoco (Solo-12)."""
    model = load_urdf(SOLO, floating_base=True, name="solo_configuration")
    sls.generate(model, tmp_path / "m", target="matlab", functions=["qdot_fun"])
    sls.generate(model, tmp_path / model.name, target="python", functions=["qdot_fun"])
    sys.path.insert(0, str(tmp_path))
    try:
        package = importlib.import_module(model.name)
    finally:
        sys.path.remove(str(tmp_path))
    rng = np.random.default_rng(12)

    def configuration() -> np.ndarray:
        quaternion = rng.normal(size=4)
        return np.concatenate([rng.normal(size=3), quaternion / np.linalg.norm(quaternion), rng.normal(size=12)])

    q0, q1, dq, v = configuration(), configuration(), rng.normal(size=18), rng.normal(size=18)
    scaled = q0.copy()
    scaled[3:7] *= 2.0
    x = np.concatenate([q0, v])
    script = (
        f"q0 = {matlab_vector(q0)}; q1 = {matlab_vector(q1)}; dq = {matlab_vector(dq)}; "
        "disp(mat2str(integrate(q0, dq), 17)); disp(mat2str(difference(q0, q1), 17)); "
        f"disp(mat2str(normalize_configuration({matlab_vector(scaled)}), 17)); "
        f"[qpos, qvel] = to_mujoco({matlab_vector(x)}); disp(mat2str(qpos, 17)); disp(mat2str(qvel, 17)); "
        f"disp(mat2str(from_mujoco(qpos, qvel), 17));"
    )
    moved, difference, normalized, qpos, qvel, back = (np.ravel(a) for a in octave_matrices(script, tmp_path / "m"))
    np.testing.assert_allclose(moved, package.integrate(q0, dq), atol=1e-13)
    np.testing.assert_allclose(difference, package.difference(q0, q1), atol=1e-12)
    np.testing.assert_allclose(normalized, package.normalize(scaled), atol=1e-15)
    reference_qpos, reference_qvel = package.to_mujoco(x)
    np.testing.assert_allclose(qpos, reference_qpos, atol=1e-15)
    np.testing.assert_allclose(qvel, reference_qvel, atol=1e-14)
    np.testing.assert_allclose(back, x, atol=1e-14)


@needs_octave
def test_matlab_euler_chart_refuses_the_pole_in_one_line(tmp_path):
    """A yaw-pitch-roll base's qddot_fun and linearized_model raise sls:chartSingularity within the margin of
    pitch = ±90° (as the Python package's _chart), and compute as before outside it."""
    path = tmp_path / "drone.urdf"
    path.write_text(DRONE)
    sls.generate(load_urdf(path, base_orientation="euler", name="euler_drone"), tmp_path / "m", target="matlab")
    near = np.zeros(12)
    near[4] = np.pi / 2 - 1e-6
    away = near.copy()
    away[4] = 1.0
    u = np.zeros(6)
    for function in ("qddot_fun(x, u)", "[A, B] = linearized_model(x, u)"):
        script = f"x = {matlab_vector(near)}; u = {matlab_vector(u)}; try, {function}; disp('no error'); "
        script += "catch e, disp(e.identifier); disp(e.message); end"
        output = run_octave(script, tmp_path / "m")
        lines = output.strip().splitlines()
        assert lines[0] == "sls:chartSingularity", output
        assert "base_pitch" in lines[1] and "--base-orientation quaternion" in lines[1]
    script = f"disp(mat2str(qddot_fun({matlab_vector(away)}, {matlab_vector(u)}), 17));"
    (value,) = octave_matrices(script, tmp_path / "m")
    assert np.all(np.isfinite(value))
