"""The JAX target (``--target jax``): every function equals the numpy target's (Python target) to 1e-12.

Checked on every bundled example (the constrained four-bar among them; UR5 with its frame functions), a flying
pendulum on an Euler and on a quaternion base, Panda and Solo-12 (standing on its feet: point contacts on a
quaternion base) from example-robot-data, models with generalized speeds (constrained or not), a rolling disc
(velocity constraints) and the reference systems on both derivation routes: one state, a batch with two leading
axes (Panda at one state; on its feet, Solo-12's functions the contacts leave as they are at one state), and
parameters other than the defaults; plus the float32 switch and the package without jax.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import METHODS, import_package
from systems import ARM_SPEEDS, ROLLING_DISC, SYSTEM_NAMES, systems

import sls
from sls import functions
from sls.readers.examples import example_names, load_example

jax = pytest.importorskip("jax")

TOL = 1e-12


def agree(got, want, what: str) -> None:
    """``got`` (JAX) equals ``want`` (numpy) to 1e-12 relative to the largest entry, same shape, float64."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), what
        for g, w in zip(got, want):
            agree(g, w, what)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == np.float64, f"{what}: {got.shape} {got.dtype} != {want.shape}"
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL * scale, err_msg=what)


def pair(model: sls.Model, folder, method: str = "auto"):
    """The numpy and JAX packages of ``model``."""
    sls.generate(model, folder / "py", method=method)
    sls.generate(model, folder / "jx", method=method, target="jax")
    return import_package(folder / "py"), import_package(folder / "jx")


#: The functions of a state and an input (the rest take the state alone, or are listed below).
WITH_INPUT = (
    "qddot_fun",
    "vdot_fun",
    "xdot_fun",
    "linearized_model",
    "multipliers_fun",
    "contact_forces_fun",
    "contact_forces_jac_fun",
)


#: The functions of a quaternion base's configuration space (no parameters).
CONFIGURATION = ("integrate", "difference", "normalize", "to_mujoco", "from_mujoco")


def arguments(name: str, package, x: np.ndarray, rng: np.random.Generator) -> tuple:
    """The positional arguments of function ``name`` at the state(s) ``x``."""
    batch, n_q = x.shape[:-1], len(package.STATE) - package.N_DOF
    if name in WITH_INPUT:
        return (x, rng.normal(size=batch + (package.N_INPUTS,)))
    if name == "tau_fun":
        return (x, rng.normal(size=batch + (package.N_DOF,)))
    if name == "constrained_residual_jac_fun":  # (x, u, qddot, lam)
        sizes = (package.N_INPUTS, package.N_DOF, package.N_CONSTRAINTS)
        return (x, *(rng.normal(size=batch + (size,)) for size in sizes))
    if name in ("integrate", "from_mujoco"):  # (q, dq) / (qpos, qvel)
        return (x[..., :n_q], rng.normal(size=batch + (package.N_DOF,)))
    if name == "difference":
        return (x[..., :n_q], states(package, rng, batch)[..., :n_q])
    if name == "normalize":
        return (2.0 * x[..., :n_q],)
    return (x,)


def states(package, rng: np.random.Generator, batch: tuple) -> np.ndarray:
    """States near the origin (positions in ±1, speeds in ±1; a unit quaternion [qx, qy, qz, qw] at 3:7 for a
    quaternion base), of shape ``batch + (n_x,)``."""
    x = rng.uniform(-1.0, 1.0, size=batch + (len(package.STATE),))
    if "integrate" in package.__all__:
        x[..., 3:7] /= np.linalg.norm(x[..., 3:7], axis=-1, keepdims=True)
    return x


def check_every_function(py, jx, rng: np.random.Generator, one_state_only: tuple = ()) -> None:
    """Every function of ``jx`` = that of ``py``: one state, a (2, 3) batch (except ``one_state_only``), with
    parameters off their defaults.

    Without compiling (``jax.disable_jit``: the same operations, op by op, minutes of XLA compiles saved);
    the compiled functions are checked in test_jax_transforms.py."""
    assert jx.__all__ == py.__all__
    assert set(one_state_only) <= set(py.__all__), set(one_state_only) - set(py.__all__)
    params = {k: v * (1.0 + 0.2 * rng.uniform()) for k, v in py.PARAMS.items() if v}
    with jax.disable_jit():
        compare(py, jx, rng, params, one_state_only)


def compare(py, jx, rng: np.random.Generator, params: dict, one_state_only: tuple = ()) -> None:
    """Every function of ``jx`` = that of ``py`` with ``params``: one state and a (2, 3) batch (the functions of
    ``one_state_only`` at one state)."""
    for batch in ((), (2, 3)):
        x = states(py, rng, batch)
        for name in py.__all__:
            if batch and name in one_state_only:
                continue
            args = arguments(name, py, x, rng)
            kwargs = {} if name in CONFIGURATION else params
            agree(getattr(jx, name)(*args, **kwargs), getattr(py, name)(*args, **kwargs), f"{name} batch {batch}")


#: The bundled examples checked as they are: UR5 is checked with its frames (every function it has without them,
#: and the frames' functions) in test_ur5_with_its_frames_agrees_with_the_numpy_target.
EXAMPLES = [name for name in example_names() if name != "ur5"]


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_example_agrees_with_the_numpy_target(name, tmp_path):
    py, jx = pair(load_example(name), tmp_path)
    check_every_function(py, jx, np.random.default_rng(len(name)))


def test_ur5_with_its_frames_agrees_with_the_numpy_target(tmp_path):
    """The bundled example UR5 with its frames: every function of the example (on its own it would repeat these
    checks), and the frames' functions."""
    model = load_example("ur5", frames="all")
    py, jx = pair(model, tmp_path)
    assert set(functions.names(load_example("ur5"))) < set(py.__all__)
    assert "frame_pose_fun" in jx.__all__ and "com_jacobian_fun" in jx.__all__
    check_every_function(py, jx, np.random.default_rng(5))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", SYSTEM_NAMES)
def test_every_reference_system_agrees_with_the_numpy_target(name, method, tmp_path):
    py, jx = pair(systems()[name].make_model(), tmp_path, method)
    check_every_function(py, jx, np.random.default_rng(7))


#: A free-flying body with a pendulum hinged off its centre: a floating base with a joint, small enough to trace
#: every function quickly (UR5 and Panda from their files are below; Solo-12 on its feet too).
FLYING_PENDULUM = """<robot name="flying_pendulum">
<link name="body"><inertial><origin xyz="0.01 -0.02 0.03" rpy="0.1 0.2 0.3"/><mass value="1.2"/>
<inertia ixx="0.011" ixy="0.001" ixz="0.0005" iyy="0.013" iyz="-0.0007" izz="0.02"/></inertial></link>
<link name="bob"><inertial><origin xyz="0 0 -0.3"/><mass value="0.4"/>
<inertia ixx="0.002" ixy="0" ixz="0" iyy="0.003" iyz="0" izz="0.001"/></inertial></link>
<joint name="swing" type="revolute"><parent link="body"/><child link="bob"/><origin xyz="0.05 0 -0.04" rpy="0 0.1 0"/>
<axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="10" velocity="5"/><dynamics damping="0.05"/></joint>
</robot>"""


def flying_pendulum(folder: Path, orientation: str) -> sls.Model:
    path = folder / "flying_pendulum.urdf"
    path.write_text(FLYING_PENDULUM)
    return sls.load_urdf(path, floating_base=True, base_orientation=orientation, name=f"flying_{orientation}")


def test_an_euler_base_agrees(tmp_path):
    py, jx = pair(flying_pendulum(tmp_path, "euler"), tmp_path)
    check_every_function(py, jx, np.random.default_rng(8))


@pytest.mark.parametrize("constrained", [False, True], ids=["free", "constrained"])
def test_generalized_speeds_agree_with_the_numpy_target(constrained, tmp_path):
    extra = {"constraints": ["sin(q1) + sin(q2) - 0.5"]} if constrained else {}
    py, jx = pair(sls.model_from_strings(**ARM_SPEEDS, **extra), tmp_path, "expanded")
    assert "vdot_fun" in jx.__all__ and ("multipliers_fun" in jx.__all__) == constrained
    check_every_function(py, jx, np.random.default_rng(9))


def test_a_rolling_disc_agrees_with_the_numpy_target(tmp_path):
    """Two velocity constraints (nonholonomic), with Baumgarte-free biases."""
    model = sls.model_from_strings(**ROLLING_DISC)
    py, jx = pair(model, tmp_path)
    check_every_function(py, jx, np.random.default_rng(10))


def test_a_quaternion_base_agrees_with_the_numpy_target(tmp_path):
    py, jx = pair(flying_pendulum(tmp_path, "quaternion"), tmp_path)
    assert {"integrate", "difference", "normalize", "vdot_fun"} <= set(jx.__all__)
    check_every_function(py, jx, np.random.default_rng(11))


def robot_file(relative: str):
    """A URDF of example-robot-data (installed with Pinocchio), or skip."""
    pin = pytest.importorskip("pinocchio")
    path = Path(pin.__file__).resolve().parents[4] / "share/example-robot-data/robots" / relative
    if not path.is_file():
        pytest.skip("example-robot-data is not installed")
    return path


def test_panda_agrees_with_the_numpy_target(tmp_path):
    """Every function of Panda (seven arm joints and a prismatic finger, the other its mimic) at one state: on a
    batch they are ``_runtime.batched`` over the same bodies, as every function of UR5 and of the flying pendulum's
    bases above (Panda's batch took two thirds of its time, op by op)."""
    py, jx = pair(sls.load_urdf(robot_file("panda_description/urdf/panda.urdf")), tmp_path)
    check_every_function(py, jx, np.random.default_rng(12), one_state_only=tuple(py.__all__))


def test_solo12_on_its_free_base_solves_as_the_numpy_target(tmp_path):
    """Solo-12's quaternion base (no contacts): qddot_fun and linearized_model by the runtime's Cholesky on the
    entries of M, leaves first (no fill-in between the legs)."""
    urdf = robot_file("solo_description/robots/solo12.urdf")
    py, jx = pair(sls.load_urdf(urdf, floating_base=True, name="solo12"), tmp_path)
    rng = np.random.default_rng(14)
    x = rng.uniform(-1.0, 1.0, size=(3, len(py.STATE)))
    x[:, 3:7] /= np.linalg.norm(x[:, 3:7], axis=1, keepdims=True)
    u = rng.normal(size=(3, py.N_INPUTS))
    agree(jx.qddot_fun(x[0], u[0]), py.qddot_fun(x[0], u[0]), "qddot_fun, one state")
    agree(jx.qddot_fun(x, u), py.qddot_fun(x, u), "qddot_fun, a batch")
    agree(jx.linearized_model(x, u), py.linearized_model(x, u), "linearized_model, a batch")


#: The functions of a robot that its contacts leave as they are (the free base's dynamics and configuration space):
#: their bodies are the free base's, their batch the same ``_runtime.batched`` as every function's.
WITHOUT_CONTACTS = (
    "M_fun",
    "M_jac_fun",
    "C_fun",
    "C_jac_fun",
    "phi_fun",
    "phi_jac_fun",
    "fric_fun",
    "fric_jac_fun",
    "input_matrix_fun",
    "input_matrix_jac_fun",
    "T_fun",
    "V_fun",
    "tau_fun",
    "qdot_fun",
    "qdot_jac_fun",
    *CONFIGURATION,
)


@pytest.mark.parametrize("flat", [True], ids=["one flat foot"])
def test_solo12_standing_on_its_feet_agrees_with_the_numpy_target(flat, tmp_path):
    """Point contacts on a quaternion base with Baumgarte stabilization, one foot held flat (6-D) beside three
    points (the CasADi target's tests also take four point feet; the rows are the same code): the constrained
    vdot_fun, multipliers_fun, contact_forces_fun (one row per foot) and the tangent-space linearization of the
    constrained dynamics, at one state and on a batch. The functions the contacts leave as they are
    (:data:`WITHOUT_CONTACTS`) at one state: on a batch they are ``_runtime.batched`` over the same bodies, as
    every function of UR5 and of the flying pendulum's quaternion base above (C_jac_fun's batch alone took 30 s op
    by op)."""
    feet = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
    urdf = robot_file("solo_description/robots/solo12.urdf")
    contacts = ["FL_FOOT:6d", *feet[1:]] if flat else feet
    model = sls.load_urdf(urdf, floating_base=True, contacts=contacts, constraint_stabilization=5.0, name="solo_feet")
    py, jx = pair(model, tmp_path)
    assert jx.CONTACTS == tuple(feet) and jx.N_CONSTRAINTS == (15 if flat else 12)
    check_every_function(py, jx, np.random.default_rng(13), one_state_only=WITHOUT_CONTACTS)


#: A rigid body turning under gravity: its unit quaternion [qx, qy, qz, qw] and body rates (tests/derive).
QUATERNION_BODY = {
    "state": ["qx", "qy", "qz", "qw", "w1", "w2", "w3"],
    "kinematics": [
        "(qw*w1 + qy*w3 - qz*w2)/2",
        "(qw*w2 + qz*w1 - qx*w3)/2",
        "(qw*w3 + qx*w2 - qy*w1)/2",
        "-(qx*w1 + qy*w2 + qz*w3)/2",
    ],
    "T": "(I1*w1^2 + I2*w2^2 + I3*w3^2)/2",
    "V": "m*g*(2*(qx*qz - qy*qw)*c1 + 2*(qy*qz + qx*qw)*c2 + (1 - 2*(qx^2 + qy^2))*c3)",
    "fric": ["0", "0", "0"],
    "params": {"I1": 1.0, "I2": 2.0, "I3": 3.0, "m": 1.5, "g": 9.81, "c1": 0.1, "c2": -0.2, "c3": 0.3},
    "name": "quaternion_body",
}


def test_fewer_speeds_written_by_the_user_agree_with_the_numpy_target(tmp_path):
    """A rigid body's unit quaternion and body rates in strings (no free-flyer): the kinematic rows of
    linearized_model by the pseudo-inverse of S, as the numpy target's."""
    py, jx = pair(sls.model_from_strings(**QUATERNION_BODY), tmp_path, "expanded")
    check_every_function(py, jx, np.random.default_rng(14))


def test_float32_states_give_float32_results(tmp_path):
    py, jx = pair(load_example("double_pendulum"), tmp_path)
    x, u = np.array([0.3, -0.2, 0.1, 0.4]), np.array([0.5, -1.0])
    got = jx.qddot_fun(x.astype(np.float32), u.astype(np.float32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, py.qddot_fun(x, u), rtol=1e-5)
    assert jx.qddot_fun([0, 0, 0, 0], [0, 0]).dtype == np.float64  # integers: float64


def test_a_wrong_shape_is_one_clear_error(tmp_path):
    _, jx = pair(load_example("pendulum"), tmp_path)
    with pytest.raises(ValueError, match=r"x must have shape \(2,\) or \(\.\.\., 2\), got \(3,\)"):
        jx.M_fun(np.zeros(3))


def test_generating_needs_no_jax_and_the_package_says_it_needs_it(tmp_path):
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["jax"] = None  # import jax raises ImportError
        import sls
        sls.generate(sls.load_example("pendulum"), {str(tmp_path / "jx")!r}, target="jax")
        sys.path.insert(0, {str(tmp_path)!r})
        try:
            import jx
        except ImportError as error:
            print(error)
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout == 'this package needs jax: pip install "sls[jax]"\n'
