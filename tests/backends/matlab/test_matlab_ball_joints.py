"""The MATLAB target on several free joints and ball joints (an MJCF model): every function and the configuration
functions equal the Python target's (Octave)."""

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import import_package

import sls

OCTAVE = shutil.which("octave-cli") or shutil.which("octave")
pytest.importorskip("mujoco")


def octave_values(script: str, cwd: Path) -> list:
    """The matrices ``script`` prints with ``mat2str``, in order."""
    result = subprocess.run(
        [OCTAVE, "--no-init-file", "--no-window-system", "--quiet", "--eval", "format long; " + script],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    matrices = []
    for line in result.stdout.splitlines():
        if line.startswith("["):
            rows = line.strip().strip("[]").split(";")
            matrices.append(np.array([[float(value) for value in row.split()] for row in rows]))
    return matrices


def text(vector: np.ndarray) -> str:
    return "[" + " ".join(repr(float(v)) for v in vector) + "]"


#: Two free bodies (the second after the first one's hinge and ball joint), damped.
TWO_FREE = """
<mujoco model="two_free_m">
  <worldbody>
    <body name="torso" pos="0 0 1">
      <freejoint name="root"/>
      <geom type="box" size="0.2 0.1 0.05" mass="3" pos="0.02 0.01 0"/>
      <body name="arm" pos="0.2 0 0">
        <joint name="shoulder" type="hinge" axis="0 1 0" damping="0.3"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 -0.1" size="0.03" mass="0.5"/>
        <body name="hand" pos="0.3 0 -0.1">
          <joint name="wrist" type="ball" pos="0.01 0 0" damping="0.2"/>
          <geom type="box" size="0.03 0.05 0.07" pos="0.02 0.01 0.03" mass="0.2"/>
        </body>
      </body>
    </body>
    <body name="ball" pos="1 0 0.5" quat="0.9 0.2 0.1 0">
      <joint name="ball_root" type="free" damping="0.1"/>
      <geom type="ellipsoid" size="0.1 0.15 0.2" mass="0.8" pos="0.01 0.02 0.03"/>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.mark.skipif(OCTAVE is None, reason="GNU Octave is not installed (Debian package 'octave'; .ci/run installs it)")
def test_matlab_two_free_joints_and_a_ball_joint_agree_with_python(tmp_path):
    from sls.readers.mjcf import load_mjcf

    model = load_mjcf("two_free_m.xml", text=TWO_FREE)
    functions = ["M_fun", "qddot_fun", "qdot_fun", "qdot_jac_fun", "linearized_model"]
    sls.generate(model, tmp_path / "m", target="matlab", functions=functions)
    sls.generate(model, tmp_path / "py", target="python", functions=functions)
    package = import_package(tmp_path / "py")
    rng = np.random.default_rng(9)

    def configuration() -> np.ndarray:
        qpos = rng.normal(size=package.MUJOCO_NQ)
        for first in (3, 8, 15):  # the quaternions in MuJoCo's qpos: root's, wrist's, ball_root's
            qpos[first : first + 4] /= np.linalg.norm(qpos[first : first + 4])
        return package.from_mujoco(qpos, np.zeros(package.N_V))[: package.N_Q]

    q0, q1 = configuration(), configuration()
    dq, v, u = rng.normal(size=package.N_V), rng.normal(size=package.N_V), rng.normal(size=package.N_INPUTS)
    x = np.concatenate([q0, v])
    scaled = 2.0 * q0
    script = (
        f"x = {text(x)}; u = {text(u)}; "
        "disp(mat2str(qddot_fun(x, u), 17)); disp(mat2str(M_fun(x), 17)); "
        "[A, B] = linearized_model(x, u); disp(mat2str(A, 17)); disp(mat2str(B, 17)); "
        f"disp(mat2str(integrate({text(q0)}, {text(dq)}), 17)); disp(mat2str(difference({text(q0)}, {text(q1)}), 17)); "
        f"disp(mat2str(normalize_configuration({text(scaled)}), 17)); "
        "[qpos, qvel] = to_mujoco(x); disp(mat2str(qpos, 17)); disp(mat2str(qvel, 17)); "
        "disp(mat2str(from_mujoco(qpos, qvel), 17));"
    )
    vdot, M, A, B, moved, difference, normalized, qpos, qvel, back = octave_values(script, tmp_path / "m")
    A_ref, B_ref = package.linearized_model(x, u)
    np.testing.assert_allclose(np.ravel(vdot), package.vdot_fun(x, u), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(M, package.M_fun(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(A, A_ref, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(B, B_ref, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(np.ravel(moved), package.integrate(q0, dq), atol=1e-13)
    np.testing.assert_allclose(np.ravel(difference), package.difference(q0, q1), atol=1e-12)
    np.testing.assert_allclose(np.ravel(normalized), package.normalize(scaled), atol=1e-15)
    qpos_ref, qvel_ref = package.to_mujoco(x)
    np.testing.assert_allclose(np.ravel(qpos), qpos_ref, atol=1e-15)
    np.testing.assert_allclose(np.ravel(qvel), qvel_ref, atol=1e-14)
    np.testing.assert_allclose(np.ravel(back), x, atol=1e-14)
