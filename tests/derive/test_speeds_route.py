"""Models with generalized speeds (``kinematics``: q̇ = S(q) v) from every front end to the generated package.

References that do not share sls's code path: Euler's equations of a rigid body written in numpy, central
finite differences of ``xdot_fun`` for ``linearized_model``, the skew-symmetry of Ṁ − 2C with
Ṁ = Σ ∂M/∂q_i q̇_i and q̇ from the kinematics, and the conservation of energy and of the world angular
momentum in a simulation.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from conftest import build, import_package, run
from octave import matlab_vector, needs_octave, octave_matrices

import sls
from sls.derive import derive

INERTIA = np.array([1.0, 2.0, 3.0])
#: ZYX Euler angles (yaw ψ, pitch θ, roll φ) and body angular velocity ω = (w1, w2, w3) about the body x, y, z.
EULER_KINEMATICS = [
    "(w2*sin(roll) + w3*cos(roll))/cos(pitch)",
    "w2*cos(roll) - w3*sin(roll)",
    "w1 + (w2*sin(roll) + w3*cos(roll))*tan(pitch)",
]
BODY = dict(
    state=["yaw", "pitch", "roll", "w1", "w2", "w3"],
    T="1/2*(I1*w1^2 + I2*w2^2 + I3*w3^2)",
    V="0",
    fric="0",
    kinematics=EULER_KINEMATICS,
    params={"I1": 1.0, "I2": 2.0, "I3": 3.0},
    name="body",
)


def euler_equations(w: np.ndarray, torque: np.ndarray) -> np.ndarray:
    """ω̇ of a rigid body with principal inertias INERTIA: I ω̇ + ω × I ω = torque."""
    return (torque - np.cross(w, INERTIA * w)) / INERTIA


def rotation(yaw: float, pitch: float, roll: float) -> np.ndarray:
    """Body-to-world rotation R = Rz(yaw) Ry(pitch) Rx(roll)."""
    cz, sz, cy, sy, cx, sx = np.cos(yaw), np.sin(yaw), np.cos(pitch), np.sin(pitch), np.cos(roll), np.sin(roll)
    rz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    rx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    return rz @ ry @ rx


@pytest.fixture(scope="module")
def body(tmp_path_factory):
    return build(sls.model_from_strings(**BODY), tmp_path_factory.mktemp("body"))


def random_states(count: int, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    angles = rng.uniform(-1.2, 1.2, (count, 3))  # pitch away from the chart's pole at ±90°
    return np.hstack((angles, rng.normal(size=(count, 3))))


def test_body_rates_give_eulers_equations(body):
    rng = np.random.default_rng(7)
    for x in random_states(20):
        torque = rng.normal(size=3)
        np.testing.assert_allclose(body.qddot_fun(x, torque), euler_equations(x[3:], torque), rtol=0, atol=1e-12)
    # the example: I = (1, 2, 3), ω = (1, 2, 0.5) gives ω̇ = [−1, 0.5, −2/3] at any orientation
    np.testing.assert_allclose(
        body.qddot_fun([0.3, 0.2, -0.4, 1.0, 2.0, 0.5], [0, 0, 0]), [-1, 0.5, -2 / 3], atol=1e-12
    )


def test_the_state_derivative_starts_with_the_kinematics(body):
    for x in random_states(5):
        yaw, pitch, roll, w = *x[:3], x[3:]
        # q̇ from the definition of the angles: R ω = world angular velocity = ψ̇ z + θ̇ R_z y + φ̇ R_z R_y x
        qdot = body.xdot_fun(x, [0, 0, 0])[:3]
        rz = rotation(yaw, 0, 0)
        ry = rotation(0, pitch, 0)
        world = qdot[0] * np.array([0, 0, 1]) + qdot[1] * rz[:, 1] + qdot[2] * (rz @ ry)[:, 0]
        np.testing.assert_allclose(world, rotation(yaw, pitch, roll) @ w, atol=1e-12)


def test_the_linearization_is_the_derivative_of_xdot(body):
    rng = np.random.default_rng(3)
    for x in random_states(4):
        u = rng.normal(size=3)
        A, B = body.linearized_model(x, u)
        step = 1e-6
        A_fd = np.column_stack(
            [(body.xdot_fun(x + step * e, u) - body.xdot_fun(x - step * e, u)) / (2 * step) for e in np.eye(6)]
        )
        B_fd = np.column_stack(
            [(body.xdot_fun(x, u + step * e) - body.xdot_fun(x, u - step * e)) / (2 * step) for e in np.eye(3)]
        )
        np.testing.assert_allclose(A, A_fd, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(B, B_fd, rtol=1e-6, atol=1e-7)


KINEMATIC_CHAIN = dict(
    # a planar two-link arm in absolute angles driven through speeds v1 = q̇1, v2 = q̇2 − q̇1 (relative rate)
    state=["q1", "q2", "v1", "v2"],
    T="1/2*m1*(l1/2)^2*v1^2 + 1/2*m2*(l1^2*v1^2 + (l2/2)^2*(v1+v2)^2 + l1*l2*cos(q2-q1)*v1*(v1+v2))"
    " + 1/2*i1*v1^2 + 1/2*i2*(v1+v2)^2",
    V="g*(m1*l1/2*sin(q1) + m2*(l1*sin(q1) + l2/2*sin(q2)))",
    fric=["b*v1", "b*v2"],
    kinematics=["v1", "v1 + v2"],
    params={"m1": 1.0, "m2": 0.7, "l1": 0.8, "l2": 0.6, "i1": 0.05, "i2": 0.03, "g": 9.81, "b": 0.1},
    name="arm_speeds",
)


def test_mdot_minus_2c_is_skew_symmetric(body, tmp_path):
    arm = build(sls.model_from_strings(**KINEMATIC_CHAIN), tmp_path / "arm")
    for package, n in ((body, 3), (arm, 2)):
        for x in random_states(5)[:, : 2 * n] if n == 3 else np.random.default_rng(2).normal(size=(5, 4)):
            qdot = package.xdot_fun(x, np.zeros(n))[:n]
            mdot = np.einsum("abi,i->ab", package.M_jac_fun(x)[:, :, :n], qdot)
            skew = mdot - 2 * package.C_fun(x)
            np.testing.assert_allclose(skew, -skew.T, atol=1e-12)


def test_speeds_agree_with_the_same_model_in_rates(tmp_path):
    """The arm in speeds against the same arm written in rates (q̇1, q̇2): v̇ = W q̈ + Ẇ q̇ with W = [[1, 0], [-1, 1]]."""
    arm = build(sls.model_from_strings(**KINEMATIC_CHAIN), tmp_path / "speeds")
    rates = dict(KINEMATIC_CHAIN, state=["q1", "q2", "dq1", "dq2"], kinematics=None, name="arm_rates")
    rates["T"] = KINEMATIC_CHAIN["T"].replace("v1+v2", "dq2").replace("v1", "dq1")
    rates["fric"] = ["b*dq1 - b*(dq2 - dq1)", "b*(dq2 - dq1)"]  # Sᵀ-dual: the same dissipation
    plain = build(sls.model_from_strings(**rates), tmp_path / "rates")
    rng = np.random.default_rng(5)
    for _ in range(10):
        q, v, u = rng.normal(size=2), rng.normal(size=2), rng.normal(size=2)
        qdot = np.array([v[0], v[0] + v[1]])
        tau = np.array([u[0] - u[1], u[1]])  # the same input power: uᵀ v = τᵀ q̇
        qddot = plain.qddot_fun(np.concatenate((q, qdot)), tau)
        np.testing.assert_allclose(
            arm.qddot_fun(np.concatenate((q, v)), u), [qddot[0], qddot[1] - qddot[0]], atol=1e-11
        )


def test_a_tumbling_body_keeps_energy_and_angular_momentum(body):
    from sls.control import simulate

    x0 = np.array([0.1, 0.2, 0.3, 0.4, 2.0, 0.3])  # near the intermediate axis: it tumbles
    result = simulate(body, x0, (0.0, 3.0), method="DOP853", rtol=1e-12, atol=1e-12)
    assert result.success
    states = result.y.T
    energy = [0.5 * np.sum(INERTIA * s[3:] ** 2) for s in states]
    momentum = [rotation(*s[:3]) @ (INERTIA * s[3:]) for s in states]
    assert np.ptp(energy) <= 1e-8 * energy[0]
    assert np.max(np.abs(np.array(momentum) - momentum[0])) <= 1e-8 * np.linalg.norm(momentum[0])


def test_the_same_model_from_toml_flags_python_and_the_api(tmp_path):
    toml = tmp_path / "body.toml"
    toml.write_text(
        textwrap.dedent(
            f"""
            state = {BODY["state"]!r}
            T = "{BODY["T"]}"
            V = "0"
            fric = "0"
            kinematics = {EULER_KINEMATICS!r}
            [params]
            I1 = 1.0
            I2 = 2.0
            I3 = 3.0
            """
        ).replace("'", '"')
    )
    python = tmp_path / "body_model.py"
    python.write_text(
        textwrap.dedent(
            """
            from sympy import symbols, sin, cos, tan, Rational
            yaw, pitch, roll, w1, w2, w3, I1, I2, I3 = symbols("yaw pitch roll w1 w2 w3 I1 I2 I3")
            x = [yaw, pitch, roll, w1, w2, w3]
            T = Rational(1, 2) * (I1 * w1**2 + I2 * w2**2 + I3 * w3**2)
            V = 0
            fric = 0
            kinematics = [(w2*sin(roll) + w3*cos(roll))/cos(pitch), w2*cos(roll) - w3*sin(roll),
                          w1 + (w2*sin(roll) + w3*cos(roll))*tan(pitch)]
            params = {I1: 1.0, I2: 2.0, I3: 3.0}
            """
        )
    )
    flags = ["--state", " ".join(BODY["state"]), "--T", BODY["T"], "--V", "0", "--fric", "0"]
    flags += [arg for k in EULER_KINEMATICS for arg in ("--kinematics", k)]
    flags += ["--param", "I1=1", "--param", "I2=2", "--param", "I3=3"]
    run("generate", str(toml), "--out", "from_toml", "--quiet", cwd=tmp_path)
    run("generate", str(python), "--out", "from_python", "--quiet", cwd=tmp_path)
    run("generate", *flags, "--out", "from_flags", "--quiet", cwd=tmp_path)
    x = np.array([0.2, -0.5, 0.9, 0.3, -1.1, 0.7])
    expected = euler_equations(x[3:], np.array([0.1, 0.2, 0.3]))
    for folder in ("from_toml", "from_python", "from_flags"):
        package = import_package(tmp_path / folder)
        np.testing.assert_allclose(package.qddot_fun(x, [0.1, 0.2, 0.3]), expected, atol=1e-12)


def test_identity_kinematics_are_the_model_without_them(tmp_path):
    plain = sls.load_example("double_pendulum")
    spec = dict(
        state=[s.name for s in plain.state], T=str(plain.T), V=str(plain.V), fric="0", params=dict(plain.params)
    )
    with_identity = sls.model_from_strings(**spec, kinematics=[s.name for s in plain.dq])
    assert with_identity.kinematics is None
    sls.generate(with_identity, tmp_path / "a")
    sls.generate(sls.model_from_strings(**spec), tmp_path / "b")
    for path in sorted((tmp_path / "a").rglob("*.py")):
        assert path.read_bytes() == (tmp_path / "b" / path.relative_to(tmp_path / "a")).read_bytes()


def test_speeds_named_like_kanes_take_the_implicit_inputs_tau():
    model = sls.model_from_strings(
        state=["q1", "u1"], T="1/2*m*u1^2", V="0", fric="0", kinematics=["u1"], params={"m": 1.0}
    )
    assert model.kinematics is None  # q̇1 = u1 is the identity
    model = sls.model_from_strings(
        state=["q1", "q2", "u1", "u2"], T="1/2*(u1^2 + u2^2)", V="0", fric="0", kinematics=["u1", "u1 + u2"]
    )
    assert [s.name for s in model.inputs] == ["tau1", "tau2"]


@pytest.mark.parametrize(
    ("kinematics", "message"),
    [
        (["w1", "w2"], "expected 3 entries"),
        (["w1*w2", "w2", "w3"], "must be linear in the speeds"),
        (["w1 + 1", "w2", "w3"], "part without speeds"),
        (["w1", "w1", "w2"], "the speed w3 appears in no kinematic equation"),
        (["w1", "w2", "w3*u1"], "cannot depend on the input u1"),
    ],
)
def test_bad_kinematics_are_one_line(kinematics, message):
    with pytest.raises(sls.ModelError, match=message) as info:
        sls.model_from_strings(**dict(BODY, kinematics=kinematics))
    assert "\n" not in str(info.value)


def test_the_command_line_says_it_in_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('state = ["q", "v"]\nT = "v^2/2"\nV = "0"\nfric = "0"\nkinematicss = ["v"]\n')
    result = run("generate", str(bad), "--out", "out", cwd=tmp_path, check=False)
    assert result.returncode != 0 and "did you mean 'kinematics'" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "out").exists()


def test_other_routes_are_refused_for_speeds():
    model = sls.model_from_strings(**BODY)
    with pytest.raises(sls.ModelError, match="expanded route"):
        derive(model, method="graph")


def test_the_package_names_its_speed_functions(body):
    assert body.vdot_fun is body.qddot_fun
    assert {"qdot_fun", "qdot_jac_fun", "vdot_fun"} <= set(body.__all__)
    x = random_states(1)[0]
    step = 1e-6
    jac = np.column_stack([(body.qdot_fun(x + step * e) - body.qdot_fun(x - step * e)) / (2 * step) for e in np.eye(6)])
    np.testing.assert_allclose(body.qdot_jac_fun(x), jac, rtol=1e-7, atol=1e-8)
    batch = random_states(4)
    np.testing.assert_allclose(body.qdot_fun(batch)[2], body.qdot_fun(batch[2]), rtol=1e-15)


@needs_octave
def test_the_matlab_target_agrees_with_the_python_target(body, tmp_path):
    sls.generate(sls.model_from_strings(**BODY), tmp_path, target="matlab")
    x = np.array([0.2, -0.5, 0.9, 0.3, -1.1, 0.7])
    u = np.array([0.1, 0.2, 0.3])
    vector, inputs = matlab_vector(x), matlab_vector(u)
    script = (
        f"disp(mat2str(qddot_fun({vector}, {inputs}), 17)); "
        f"disp(mat2str(xdot_fun({vector}, {inputs}), 17)); "
        f"[A, B] = linearized_model({vector}, {inputs}); disp(mat2str(A, 17)); disp(mat2str(B, 17));"
    )
    lines = octave_matrices(script, tmp_path)
    A, B = body.linearized_model(x, u)
    np.testing.assert_allclose(np.ravel(lines[0]), body.qddot_fun(x, u), atol=1e-12)
    np.testing.assert_allclose(np.ravel(lines[1]), body.xdot_fun(x, u), atol=1e-12)
    np.testing.assert_allclose(np.reshape(lines[2], A.shape), A, atol=1e-11)
    np.testing.assert_allclose(np.reshape(lines[3], B.shape), B, atol=1e-12)


def test_constraints_in_speeds_agree_with_the_same_constraint_in_rates(tmp_path):
    """A holonomic constraint on the arm (the tip's height fixed): its rows (∂c/∂q) S and bias follow the speeds."""
    tip = "l1*sin(q1) + l2*sin(q2) - 0.3"
    arm = build(sls.model_from_strings(**KINEMATIC_CHAIN, constraints=[tip]), tmp_path / "speeds")
    rates = dict(KINEMATIC_CHAIN, state=["q1", "q2", "dq1", "dq2"], kinematics=None, name="arm_rates")
    rates["T"] = KINEMATIC_CHAIN["T"].replace("v1+v2", "dq2").replace("v1", "dq1")
    rates["fric"] = ["b*dq1 - b*(dq2 - dq1)", "b*(dq2 - dq1)"]
    plain = build(sls.model_from_strings(**rates, constraints=[tip]), tmp_path / "rates")
    rng = np.random.default_rng(11)
    for _ in range(5):
        q = rng.normal(size=2)
        v = rng.normal(size=2)
        u = rng.normal(size=2)
        qdot = np.array([v[0], v[0] + v[1]])
        tau = np.array([u[0] - u[1], u[1]])
        qddot = plain.qddot_fun(np.concatenate((q, qdot)), tau)
        expected = [qddot[0], qddot[1] - qddot[0]]
        np.testing.assert_allclose(arm.qddot_fun(np.concatenate((q, v)), u), expected, atol=1e-10)
