"""The C target (``--target c``) on models with generalized speeds (``kinematics``: q̇ = S(q) v, n_v = n_q).

Two models: a free rigid body in a TOML file with body rates and ZYX Euler-angle kinematics, and a heavy top
written with ``sympy.physics.mechanics.KanesMethod`` and body-fixed speeds (:func:`sls.model_from_mechanics`).
References that share no code with the C backend: the Python target's package (every function, single states
and batches, to 1e-12), Euler's equations ``I ω̇ + ω × I ω = τ`` in numpy, the definition of the Euler angles
(``R ω`` = the world angular velocity), ``KanesMethod``'s own right-hand side, and central finite differences
of the C ``xdot_fun`` for its ``linearized_model``. The standalone C99 compiles with strict flags and a small C
program calling it agrees.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest
import sympy
from conftest import agree, import_package
from sympy.physics.mechanics import KanesMethod, Point, ReferenceFrame, RigidBody, dot, dynamicsymbols, inertia

import sls
from sls import functions
from sls.backends import c as cbackend

CC = os.environ.get("CC") or "cc"
STRICT = ["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror"]

pytestmark = pytest.mark.skipif(shutil.which(CC.split()[0]) is None, reason=f"no C compiler ({CC})")

INERTIA = np.array([1.0, 2.0, 3.0])
BODY_TOML = """\
state = ["yaw", "pitch", "roll", "w1", "w2", "w3"]
T = "1/2*(I1*w1^2 + I2*w2^2 + I3*w3^2)"
V = "0"
fric = "0"
# ZYX Euler angles (yaw, pitch, roll) and the body angular velocity (w1, w2, w3) about the body x, y, z axes
kinematics = [
    "(w2*sin(roll) + w3*cos(roll))/cos(pitch)",
    "w2*cos(roll) - w3*sin(roll)",
    "w1 + (w2*sin(roll) + w3*cos(roll))*tan(pitch)",
]

[params]
I1 = 1.0
I2 = 2.0
I3 = 3.0
"""


def body_model(folder: Path) -> sls.Model:
    path = folder / "body.toml"
    path.write_text(BODY_TOML)
    return sls.load_toml(path)


def heavy_top():
    """A heavy top about a fixed pivot: ZXZ Euler angles, body-fixed speeds, gravity and a torque about B.z."""
    q1, q2, q3, u1, u2, u3 = dynamicsymbols("q1:4 u1:4")
    torque = dynamicsymbols("T3")
    m, g, length, I1, I2, I3 = sympy.symbols("m g l I1 I2 I3")
    N = ReferenceFrame("N")
    B = N.orientnew("B", "Body", [q1, q2, q3], "ZXZ")
    rates = B.ang_vel_in(N)
    B.set_ang_vel(N, u1 * B.x + u2 * B.y + u3 * B.z)
    pivot = Point("pivot")
    pivot.set_vel(N, 0)
    P = pivot.locatenew("P", length * B.z)
    P.v2pt_theory(pivot, N, B)
    top = RigidBody("top", P, B, m, (inertia(B, I1, I2, I3), P))
    kd = [dot(rates, B.x) - u1, dot(rates, B.y) - u2, dot(rates, B.z) - u3]
    kane = KanesMethod(N, [q1, q2, q3], [u1, u2, u3], kd_eqs=kd)
    kane.kanes_equations([top], [(P, -m * g * N.z), (B, torque * B.z)])
    params = {m: 1.3, g: 9.81, length: 0.4, I1: 0.2, I2: 0.3, I3: 0.5}
    return kane, torque, params


def build_pair(model: sls.Model, folder: Path):
    """The Python target's package and the C target's, of ``model``."""
    sls.generate(model, folder / "py")
    sls.generate(model, folder / "c", target="c")
    return import_package(folder / "py"), import_package(folder / "c")


@pytest.fixture(scope="module")
def body(tmp_path_factory):
    folder = tmp_path_factory.mktemp("c-speeds-body")
    return build_pair(body_model(folder), folder)


@pytest.fixture(scope="module")
def top(tmp_path_factory):
    kane, torque, params = heavy_top()
    model = sls.model_from_mechanics(kane, params=params, name="top", inputs=[torque])
    return (*build_pair(model, tmp_path_factory.mktemp("c-speeds-top")), kane, torque, params)


#: The body with two sliders on springs besides (speeds = their rates): n = 5, and ``A`` with many zeros (its lower
#: rows set in one loop before the kinematics' Jacobian fills the upper rows).
SLIDERS = dict(
    state=["yaw", "pitch", "roll", "s1", "s2", "w1", "w2", "w3", "v1", "v2"],
    T="1/2*(I1*w1^2 + I2*w2^2 + I3*w3^2) + 1/2*(v1^2 + v2^2)",
    V="k*(s1^2 + s2^2)/2",
    fric=["0", "0", "0", "b*v1", "b*v2"],
    kinematics=[
        "(w2*sin(roll) + w3*cos(roll))/cos(pitch)",
        "w2*cos(roll) - w3*sin(roll)",
        "w1 + (w2*sin(roll) + w3*cos(roll))*tan(pitch)",
        "v1",
        "v2",
    ],
    params={"I1": 1.0, "I2": 2.0, "I3": 3.0, "k": 2.0, "b": 0.1},
    name="sliders",
)


@pytest.fixture(scope="module")
def sliders(tmp_path_factory):
    return build_pair(sls.model_from_strings(**SLIDERS), tmp_path_factory.mktemp("c-speeds-sliders"))


def random_states(count: int, seed: int = 1, n: int = 3) -> np.ndarray:
    """Coordinates in ±1.2 (angles away from the charts' poles), speeds normal: shape (count, 2n)."""
    rng = np.random.default_rng(seed)
    return np.hstack((rng.uniform(-1.2, 1.2, (count, n)), rng.normal(size=(count, n))))


def arguments(package, x: np.ndarray, rng: np.random.Generator) -> dict:
    """Every function of ``package`` (its ``__all__``, ``vdot_fun`` too) with arguments for state(s) ``x``."""
    n, m = package.N_DOF, package.N_INPUTS
    u = rng.normal(size=x.shape[:-1] + (m,))
    accelerations = rng.normal(size=x.shape[:-1] + (n,))
    with_input = {"qddot_fun", "vdot_fun", "linearized_model", "xdot_fun"}
    return {
        name: (x, u) if name in with_input else (x, accelerations) if name == "tau_fun" else (x,)
        for name in package.__all__
    }


def test_the_c_package_has_the_python_packages_names_and_shapes(body):
    py, c = body
    assert c.__all__ == py.__all__
    assert {"qdot_fun", "qdot_jac_fun", "vdot_fun", "xdot_fun", "linearized_model"} <= set(c.__all__)
    assert c.vdot_fun is c.qddot_fun
    x, u = random_states(1)[0], np.array([0.1, 0.2, 0.3])
    assert c.qdot_fun(x).shape == (3,) and c.qdot_jac_fun(x).shape == (3, 6)
    assert c.xdot_fun(x, u).shape == (6,) and [a.shape for a in c.linearized_model(x, u)] == [(6, 6), (6, 3)]


MODELS = ["body", "top", "sliders"]


@pytest.mark.parametrize("which", MODELS)
def test_every_function_agrees_with_the_python_target(which, request):
    py, c = request.getfixturevalue(which)[:2]
    rng = np.random.default_rng(2)
    for trial, x in enumerate(random_states(6, seed=3, n=py.N_DOF)):
        params = {name: float(rng.uniform(0.5, 2.0)) for name in py.PARAMS} if trial % 2 else {}
        for name, args in arguments(py, x, rng).items():
            agree(getattr(c, name)(*args, **params), getattr(py, name)(*args, **params), f"{which} {name}")


@pytest.mark.parametrize("which", MODELS)
@pytest.mark.parametrize("shape", [(5,), (2, 3)], ids=["5", "2x3"])
def test_batches_agree(which, shape, request):
    py, c = request.getfixturevalue(which)[:2]
    rng = np.random.default_rng(4)
    X = random_states(int(np.prod(shape)), seed=5, n=py.N_DOF).reshape(shape + (2 * py.N_DOF,))
    for name, args in arguments(py, X, rng).items():
        agree(getattr(c, name)(*args), getattr(py, name)(*args), f"{which} {name} {shape}")


def test_large_batches_through_the_threads(body):
    py, c = body
    X = random_states(9000, seed=6)
    U = np.random.default_rng(6).normal(size=(9000, 3))
    for name in ("qdot_fun", "qdot_jac_fun"):
        agree(getattr(c, name)(X), getattr(py, name)(X), name)
    for name in ("xdot_fun", "linearized_model"):
        agree(getattr(c, name)(X, U), getattr(py, name)(X, U), name)


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


def test_the_free_body_follows_eulers_equations(body):
    _, c = body
    rng = np.random.default_rng(7)
    states = random_states(20, seed=8)
    torques = rng.normal(size=(20, 3))
    for x, torque in zip(states, torques):
        xdot = c.xdot_fun(x, torque)
        np.testing.assert_allclose(xdot[3:], euler_equations(x[3:], torque), rtol=0, atol=1e-12)
        # q̇ from the definition of the angles: R ω = ψ̇ z + θ̇ Rz y + φ̇ Rz Ry x, the world angular velocity
        rz, ry = rotation(x[0], 0, 0), rotation(0, x[1], 0)
        world = xdot[0] * np.array([0, 0, 1]) + xdot[1] * rz[:, 1] + xdot[2] * (rz @ ry)[:, 0]
        np.testing.assert_allclose(world, rotation(*x[:3]) @ x[3:], atol=1e-12)
    expected = np.array([euler_equations(x[3:], t) for x, t in zip(states, torques)])
    np.testing.assert_allclose(c.vdot_fun(states, torques), expected, rtol=0, atol=1e-12)
    # the example: I = (1, 2, 3), ω = (1, 2, 0.5) gives ω̇ = [−1, 0.5, −2/3] at any orientation
    np.testing.assert_allclose(c.vdot_fun([0.3, 0.2, -0.4, 1.0, 2.0, 0.5], [0, 0, 0]), [-1, 0.5, -2 / 3], atol=1e-12)


def test_the_heavy_top_is_kanes(top):
    _, c, kane, torque, params = top
    rhs = sympy.lambdify(
        (list(kane.q) + list(kane.u), [torque], list(params)), [kane.mass_matrix_full, kane.forcing_full]
    )
    rng = np.random.default_rng(9)
    for x in random_states(20, seed=10):
        u = rng.normal(size=1)
        M, F = rhs(list(x), list(u), list(params.values()))
        expected = np.linalg.solve(np.asarray(M, dtype=float), np.asarray(F, dtype=float).ravel())
        np.testing.assert_allclose(c.xdot_fun(x, u), expected, rtol=1e-10, atol=1e-10 * max(1, np.abs(expected).max()))


@pytest.mark.parametrize("which", MODELS)
def test_the_linearization_is_the_derivative_of_xdot(which, request):
    _, c = request.getfixturevalue(which)[:2]
    rng = np.random.default_rng(11)
    n, m = c.N_DOF, c.N_INPUTS
    for x in random_states(4, seed=12, n=n):
        u = rng.normal(size=m)
        A, B = c.linearized_model(x, u)
        step = 1e-6
        A_fd = np.column_stack(
            [(c.xdot_fun(x + step * e, u) - c.xdot_fun(x - step * e, u)) / (2 * step) for e in np.eye(2 * n)]
        )
        B_fd = np.column_stack(
            [(c.xdot_fun(x, u + step * e) - c.xdot_fun(x, u - step * e)) / (2 * step) for e in np.eye(m)]
        )
        np.testing.assert_allclose(A, A_fd, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(B, B_fd, rtol=1e-6, atol=1e-7)
        assert not np.any(B[:n])  # the kinematics take no input
        assert np.any(A[:3, :3])  # S depends on q: the upper rows are not [0 I]


C_PROGRAM = textwrap.dedent(
    """
    #include <stdio.h>
    #include "body.h"

    static void show(const char *name, const double *v, int n)
    {
        int i;
        printf("%s", name);
        for (i = 0; i < n; ++i) printf(" %.17g", v[i]);
        printf("\\n");
    }

    int main(void)
    {
        const double x[12] = {0.3, -0.2, 0.5, 1.5, -0.7, 0.2, -0.4, 0.8, 1.1, 0.3, 0.9, -1.2};
        const double u[6] = {0.1, -0.4, 0.2, 0.0, 0.5, -0.3};
        double qdot[3], jac[18], xdot[6], A[72], B[36];
        if (body_qdot_fun(x, NULL, qdot) != BODY_OK) return 1;
        if (body_qdot_jac_fun(x, NULL, jac) != BODY_OK) return 1;
        if (body_xdot_fun(x, u, NULL, xdot) != BODY_OK) return 1;
        show("qdot", qdot, 3);
        show("qdot_jac", jac, 18);
        show("xdot", xdot, 6);
        if (body_linearized_model_batch(2, x, u, NULL, A, B) != BODY_OK) return 1;
        show("A", A, 72);
        show("B", B, 36);
        return 0;
    }
    """
)


def test_the_standalone_c_compiles_strictly_and_agrees(body, tmp_path):
    py, c = body
    folder = Path(c.__file__).parent / "c"
    (tmp_path / "main.c").write_text(C_PROGRAM)
    built = subprocess.run(
        [*CC.split(), *STRICT, "-I", str(folder), str(tmp_path / "main.c"), str(folder / "body.c")]
        + ["-o", str(tmp_path / "main"), "-lm"],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(tmp_path / "main")], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    values = {line.split()[0]: np.array([float(v) for v in line.split()[1:]]) for line in ran.stdout.splitlines()}
    X = np.array([[0.3, -0.2, 0.5, 1.5, -0.7, 0.2], [-0.4, 0.8, 1.1, 0.3, 0.9, -1.2]])
    U = np.array([[0.1, -0.4, 0.2], [0.0, 0.5, -0.3]])
    agree(values["qdot"], py.qdot_fun(X[0]), "qdot_fun")
    agree(values["qdot_jac"], py.qdot_jac_fun(X[0]).ravel(), "qdot_jac_fun (row-major)")
    agree(values["xdot"], py.xdot_fun(X[0], U[0]), "xdot_fun")
    A, B = py.linearized_model(X, U)
    agree(values["A"], A.ravel(), "linearized_model_batch A")
    agree(values["B"], B.ravel(), "linearized_model_batch B")


def test_the_kinematics_jacobian_is_compiled_optimized():
    """linearized_model calls qdot_jac_fun at every state: it is built with the optimized functions, not -O0."""
    assert cbackend.unit_of(functions.BY_NAME["qdot_jac_fun"]) == "c/_eval.c"
    assert cbackend.unit_of(functions.BY_NAME["M_jac_fun"]) == "c/_jac.c"


def test_fewer_speeds_than_coordinates_without_a_free_flyer_are_refused_in_one_line(tmp_path):
    """The C target writes n_v < n_q for a robot's quaternion base (test_c_quaternion.py), not for kinematics
    written by hand."""
    body = body_model(tmp_path)
    fewer = dataclasses.replace(body, dq=body.dq[:2])
    with pytest.raises(sls.ModelError, match="--target c writes fewer speeds than coordinates only for a quat") as info:
        sls.generate(fewer, tmp_path / "out", target="c")
    assert "\n" not in str(info.value) and not (tmp_path / "out").exists()


def test_many_zeros_in_a_are_set_before_the_kinematics_rows(sliders):
    """The sliders' A is mostly zeros: one loop zeroes it, then qdot_jac_fun fills the upper rows (the loop after
    the call would wipe them; the values are checked in the tests above)."""
    text = (Path(sliders[1].__file__).parent / "c" / "sliders.c").read_text()
    body = text[text.index("int sliders_linearized_model(") :]
    zeros = body.index("for (size_t k = 0; k < 100; ++k) A[k] = 0.0;")
    assert zeros < body.index("sliders_qdot_jac_fun(x, p, A)")


DRONE = """<robot name="drone"><link name="body"><inertial><origin xyz="0.01 -0.02 0.03" rpy="0.1 0.2 0.3"/>
<mass value="1.2"/><inertia ixx="0.011" ixy="0.001" ixz="0.0005" iyy="0.013" iyz="-0.0007" izz="0.02"/>
</inertial></link></robot>"""


def test_the_tree_routes_row_solves_take_the_kinematics_rows(tmp_path):
    """A robot on the tree route solves linearized_model's rows in loops (``<name>_solve_rows``): the upper rows of
    A still come from qdot_jac_fun. A joint-less body with the Euler base, its rates given as (identity) kinematics
    (set on the model directly: the readers drop identity kinematics)."""
    (tmp_path / "drone.urdf").write_text(DRONE)
    model = sls.load_urdf(tmp_path / "drone.urdf", base_orientation="euler", name="drone")
    model = dataclasses.replace(model, kinematics=tuple(model.dq))
    py, c = build_pair(model, tmp_path)
    text = (tmp_path / "c" / "c" / "drone.c").read_text()
    body = text[text.index("drone_linearized_model_part0(") :]  # its parts (R in their workspace), then itself
    assert "drone_qdot_jac_fun(x, p, A)" in body and "drone_solve_rows(" in body
    rng = np.random.default_rng(13)
    X = np.hstack((rng.uniform(-1.2, 1.2, (5, 6)), rng.normal(size=(5, 6))))
    U = rng.normal(size=(5, c.N_INPUTS))
    for x, u in zip(X, U):
        for name, args in arguments(py, x, rng).items():
            agree(getattr(c, name)(*args), getattr(py, name)(*args), f"drone {name}")
        A, _ = c.linearized_model(x, u)
        np.testing.assert_array_equal(A[:6], np.hstack((np.zeros((6, 6)), np.eye(6))))
    agree(c.linearized_model(X, U), py.linearized_model(X, U), "drone linearized_model batch")
