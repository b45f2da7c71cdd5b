"""MJCF joint and fixed-tendon equality constraints (sls/readers/mjcf/equality.py) as holonomic constraints.

Reference: the same arm reduced by hand to its one free coordinate (the constraints solved for q2 and q3), its
accelerations from the package's own ``M_fun`` and ``tau_fun`` (checked against MuJoCo in
test_mjcf_against_mujoco.py) projected on the constraints' tangent; the constraint values against MuJoCo's
``qpos0``/``tendon_length0`` conventions; refusals of the kinds sls does not read, one line each."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import import_package

import sls
from sls.readers.mjcf import load_mjcf

mujoco = pytest.importorskip("mujoco")

from mujoco_peers import full_mass_matrix, speed_map, speed_rates  # noqa: E402

#: Three hinges about y, refs 0.1 and 0.2 on the last two; the tendon t = q1 + q2 is held at its reference length
#: plus A0, and q3 − 0.2 = B0 + B1 (q2 − 0.1) + B2 (q2 − 0.1)².
A0, B0, B1, B2 = 0.3, 0.05, 2.0, 0.5
ARM = f"""
<mujoco model="coupled_arm">
  <compiler angle="radian"/>
  <worldbody>
    <body name="upper" pos="0 0 1">
      <joint name="j1" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.04" mass="1"/>
      <body name="middle" pos="0.5 0 0">
        <joint name="j2" axis="0 1 0" ref="0.1"/>
        <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.03" mass="0.7"/>
        <body name="lower" pos="0.4 0 0">
          <joint name="j3" axis="0 1 0" ref="0.2"/>
          <geom type="capsule" fromto="0 0 0 0.3 0 0.1" size="0.03" mass="0.4"/>
        </body>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="t"><joint joint="j1" coef="1"/><joint joint="j2" coef="1"/></fixed>
  </tendon>
  <equality>
    <tendon tendon1="t" polycoef="{A0} 0 0 0 0"/>
    <joint joint1="j3" joint2="j2" polycoef="{B0} {B1} {B2} 0 0"/>
  </equality>
</mujoco>
"""


@pytest.fixture(scope="module")
def arm(tmp_path_factory):
    folder = tmp_path_factory.mktemp("coupled")
    (folder / "arm.xml").write_text(ARM)
    model = load_mjcf(folder / "arm.xml")
    sls.generate(model, folder / "pkg")
    return model, import_package(folder / "pkg"), mujoco.MjModel.from_xml_string(ARM)


def consistent_state(peer, theta: float, rate: float) -> tuple:
    """The state at q1 = θ, q̇1 = θ̇ on both constraints, the Jacobian J = ∂q/∂θ and the drift d = q̈ − J θ̈."""
    q1 = theta
    q2 = peer.tendon_length0[0] + A0 - q1
    s = q2 - 0.1
    q3 = 0.2 + B0 + B1 * s + B2 * s**2
    J = np.array([1.0, -1.0, -(B1 + 2 * B2 * s)])
    dq = J * rate
    drift = np.array([0.0, 0.0, 2 * B2 * dq[1] ** 2])
    return np.array([q1, q2, q3, *dq]), J, drift


def test_the_constraints_follow_mujocos_references(arm):
    model, package, peer = arm
    assert model.constrained and len(model.constraints) == 2
    assert peer.tendon_length0[0] == pytest.approx(0.1)  # q1 + q2 at qpos0 = (0, 0.1, 0.2)
    x, _, _ = consistent_state(peer, 0.4, -1.3)
    np.testing.assert_allclose(package.constraint_fun(x), 0.0, atol=1e-14)
    off = x.copy()
    off[2] += 0.01
    assert abs(package.constraint_fun(off)).max() == pytest.approx(0.01)
    # MuJoCo's own residual of its equality rows (efc_pos) is sls's constraint_fun, on and off the constraints
    data = mujoco.MjData(peer)
    for state in (x, off):
        data.qpos[:] = state[:3]
        mujoco.mj_forward(peer, data)
        rows = data.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY
        np.testing.assert_allclose(data.efc_pos[rows], package.constraint_fun(state)[:2], atol=1e-14)


def test_accelerations_are_the_reduced_dynamics(arm):
    """q̈ = J θ̈ + d with (Jᵀ M J) θ̈ = Jᵀ (u − h − M d), h = tau_fun(x, 0) (gravity and Coriolis), on the
    constraints; the multipliers make the joints' equations hold: M q̈ + h = u + Aᵀ λ."""
    _, package, peer = arm
    rng = np.random.default_rng(4)
    for _ in range(5):
        x, J, drift = consistent_state(peer, rng.uniform(-1, 1), rng.normal())
        u = rng.normal(size=3)
        M, h = package.M_fun(x), package.tau_fun(x, np.zeros(3))
        theta_ddot = J @ (u - h - M @ drift) / (J @ M @ J)
        want = J * theta_ddot + drift
        got = package.qddot_fun(x, u)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
        A, lam = package.constraint_jac_fun(x), package.multipliers_fun(x, u)
        np.testing.assert_allclose(M @ got + h, u + A.T @ lam, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize(
    "equality, message",
    [
        ('<connect body1="lower" body2="upper" anchor="0 0 0"/>', "(connect): only joint and fixed-tendon equalities"),
        ('<weld body1="lower"/>', "(weld): only joint and fixed-tendon equalities"),
    ],
)
def test_other_equalities_are_refused_in_one_line(equality, message, tmp_path):
    path = tmp_path / "bad.xml"
    path.write_text(ARM.replace("</equality>", f"{equality}</equality>"))
    with pytest.raises(sls.ModelFileError) as error:
        load_mjcf(path)
    assert str(error.value).startswith(str(path)) and message in str(error.value)
    assert "\n" not in str(error.value)


def test_an_inactive_equality_is_left_out(tmp_path):
    path = tmp_path / "loose.xml"
    path.write_text(ARM.replace('<tendon tendon1="t"', '<tendon active="false" tendon1="t"'))
    assert len(load_mjcf(path).constraints) == 1


def test_the_c_target_solves_the_coupled_arm_as_python_does(arm, tmp_path):
    import shutil

    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    model, package, peer = arm
    sls.generate(model, tmp_path / "c", target="c")
    compiled = import_package(tmp_path / "c")
    x, _, _ = consistent_state(peer, 0.2, 0.7)
    u = np.array([0.3, -0.2, 0.1])
    for name in ("qddot_fun", "multipliers_fun"):
        np.testing.assert_allclose(getattr(compiled, name)(x, u), getattr(package, name)(x, u), rtol=1e-12, atol=1e-12)


def test_fewer_functions_of_a_constrained_robot_generate(arm, tmp_path):
    """--functions M_fun,tau_fun derives no constraint Jacobian: the mass-matrix check runs on M alone."""
    model, package, peer = arm
    sls.generate(model, tmp_path / "few", functions=["M_fun", "tau_fun"])
    few = import_package(tmp_path / "few")
    x, _, _ = consistent_state(peer, 0.1, 0.2)
    np.testing.assert_allclose(few.M_fun(x), package.M_fun(x), rtol=1e-14)


#: The arm mounted by its first hinge on a floating hull (a free joint): the same two equalities.
FLOATING_ARM = ARM.replace(
    '<body name="upper" pos="0 0 1">',
    '<body name="hull" pos="0 0 1" quat="0.9 0.1 0.2 0.3"><freejoint name="root"/>'
    '<geom type="box" size="0.2 0.1 0.1" mass="2"/><body name="upper" pos="0.2 0 0">',
).replace("</worldbody>", "</body></worldbody>")


def test_equalities_on_a_floating_arm_are_mujocos_dynamics_held_to_them(tmp_path):
    """A free joint and the equalities together: ``ν̇ = ν̇₀ + M⁻¹Aᵀλ`` with ``A ν̇ = g`` from MuJoCo's ``M`` and
    constraint-free ``qacc`` (``ν̇₀``, in sls's body-frame speeds), ``A`` and ``g`` written by hand from the
    polynomials (the tendon row ``e_j1 + e_j2``, the joint row ``e_j3 − (B1 + 2 B2 s) e_j2``, ``g = 2 B2 q̇2²``);
    the C target as the Python target."""
    import shutil

    path = tmp_path / "floating.xml"
    path.write_text(FLOATING_ARM)
    model = load_mjcf(path)
    assert model.constrained and len(model.constraints) == 2 and len(model.q) == 10 and model.n == 9
    sls.generate(model, tmp_path / "pkg")
    package = import_package(tmp_path / "pkg")
    peer = mujoco.MjModel.from_xml_string(FLOATING_ARM)
    peer.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    data = mujoco.MjData(peer)
    rng = np.random.default_rng(7)
    for _ in range(4):
        x, _, _ = consistent_state(peer, rng.uniform(-1, 1), rng.normal())
        quat = rng.normal(size=4)
        base = np.r_[rng.normal(size=3), quat / np.linalg.norm(quat)]
        state = np.r_[base, x[:3], rng.normal(size=6), x[3:]]
        u = rng.normal(size=len(package.INPUTS))
        data.qpos[:], data.qvel[:] = package.to_mujoco(state)
        data.qfrc_applied[:] = 0.0
        data.qfrc_applied[:] = _generalized_force(package, state, u, data, peer)
        mujoco.mj_forward(peer, data)
        J = speed_map(peer, data)
        M = J.T @ full_mass_matrix(peer, data) @ J
        v = state[10:]
        free_rates = speed_rates(peer, data, v)
        s = state[8] - 0.1
        A = np.zeros((2, 9))
        A[0, 6:8] = 1.0
        A[1, 8], A[1, 7] = 1.0, -(B1 + 2 * B2 * s)
        g = np.array([0.0, 2 * B2 * v[7] ** 2])
        lam = np.linalg.solve(A @ np.linalg.solve(M, A.T), g - A @ free_rates)
        want = free_rates + np.linalg.solve(M, A.T @ lam)
        np.testing.assert_allclose(package.constraint_jac_fun(state), A, rtol=0, atol=1e-13)
        np.testing.assert_allclose(package.vdot_fun(state, u), want, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(package.multipliers_fun(state, u), lam, rtol=1e-9, atol=1e-9)
    # the dynamics rows of linearized_model: central differences of vdot_fun along integrate (q) and v
    A_lin, B_lin = package.linearized_model(state, u)
    q, v, step = state[:10], state[10:], 1e-6
    for r in range(9):
        dq = np.zeros(9)
        dq[r] = step
        plus = package.vdot_fun(np.r_[package.integrate(q, dq), v], u)
        minus = package.vdot_fun(np.r_[package.integrate(q, -dq), v], u)
        np.testing.assert_allclose(A_lin[9:, r], (plus - minus) / (2 * step), rtol=1e-5, atol=1e-5)
        plus = package.vdot_fun(np.r_[q, v + dq], u)
        minus = package.vdot_fun(np.r_[q, v - dq], u)
        np.testing.assert_allclose(A_lin[9:, 9 + r], (plus - minus) / (2 * step), rtol=1e-5, atol=1e-5)
    if shutil.which("cc") is None:
        return
    sls.generate(model, tmp_path / "c", target="c", functions=["qddot_fun", "multipliers_fun", "linearized_model"])
    compiled = import_package(tmp_path / "c")
    for name in ("vdot_fun", "multipliers_fun"):
        np.testing.assert_allclose(getattr(compiled, name)(state, u), getattr(package, name)(state, u), rtol=1e-12)
    for got, want in zip(compiled.linearized_model(state, u), package.linearized_model(state, u)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def _generalized_force(package, state, u, data, peer) -> np.ndarray:
    """MuJoCo's ``qfrc_applied`` for sls's inputs ``u``: ``B_u u`` in sls's speeds, its free-joint linear part turned
    into the world's frame (power is the same in both)."""
    mujoco.mj_kinematics(peer, data)
    return np.linalg.solve(speed_map(peer, data).T, package.input_matrix_fun(state) @ u)
