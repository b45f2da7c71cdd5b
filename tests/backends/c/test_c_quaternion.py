"""The C target (``--target c``) on robots with a quaternion free-flyer base (n_q = n + 1, Pinocchio's layout).

Two robots: a drone (one body, floating by itself) and Solo-12 (example-robot-data, ``floating_base``). References
that share no code with the C backend: the Python target's package (every function, single states and batches, to
1e-12), and Pinocchio on the same URDF with its ``JointModelFreeFlyer`` root (``aba``, ``crba``, ``rnea`` and
``computeABADerivatives``, whose ``ddq_dq`` is in the same tangent space as ``linearized_model``'s ``A``); a tenth
of the random states pitched to ±90° (the Euler chart's pole). The drone also on the expanded route (its
``linearized_model`` maps the solved rows instead of the right-hand sides), and its standalone C99 compiled with
strict flags.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import agree, import_package

import sls

pin = pytest.importorskip("pinocchio")

CC = os.environ.get("CC") or "cc"
STRICT = ["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror"]
pytestmark = pytest.mark.skipif(shutil.which(CC.split()[0]) is None, reason=f"no C compiler ({CC})")

ROBOTS = Path(pin.__file__).resolve().parents[4] / "share" / "example-robot-data" / "robots"
SOLO = ROBOTS / "solo_description" / "robots" / "solo12.urdf"
DRONE = """<robot name="drone"><link name="body"><inertial><origin xyz="0.01 -0.02 0.03" rpy="0.1 0.2 0.3"/>
<mass value="1.2"/><inertia ixx="0.011" ixy="0.001" ixz="0.0005" iyy="0.013" iyz="-0.0007" izz="0.02"/>
</inertial></link></robot>"""
#: Solo-12's functions here (the drone has them all): the ones a controller calls, compiled in a third of the time.
SOLO_FUNCTIONS = ["qddot_fun", "linearized_model", "xdot_fun", "M_fun", "tau_fun", "input_matrix_fun"]
WITH_INPUT = {"qddot_fun", "vdot_fun", "linearized_model", "xdot_fun"}
#: The copied runtime (_free_flyer.py), checked against Pinocchio in tests/derive/test_free_flyer_tree.py.
RUNTIME = {"integrate", "difference", "normalize", "to_mujoco", "from_mujoco"}


class Peer:
    """A Pinocchio model seen in sls's joint order (Pinocchio may order sibling joints otherwise)."""

    def __init__(self, path: Path, joints: tuple) -> None:
        self.model = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
        self.data = self.model.createData()
        self.nq, self.nv = self.model.nq, self.model.nv
        model = self.model
        self.q_order = list(range(7)) + [model.idx_qs[model.getJointId(name)] for name in joints]
        self.v_order = list(range(6)) + [model.idx_vs[model.getJointId(name)] for name in joints]
        self.q_back, self.v_back = np.argsort(self.q_order), np.argsort(self.v_order)

    def vector(self, values):
        return np.asarray(values)[self.v_order]

    def matrix(self, values):
        return np.asarray(values)[np.ix_(self.v_order, self.v_order)]

    def states(self, count: int, seed: int) -> np.ndarray:
        """``count`` random states ``[q; v]`` in sls's order, unit quaternions, every tenth pitched to ±90°."""
        rng = np.random.default_rng(seed)
        q = np.array([pin.randomConfiguration(self.model, -np.ones(self.nq), np.ones(self.nq)) for _ in range(count)])
        q[:, :3] = rng.normal(size=(count, 3))
        for k in range(0, count, 10):
            pitch = np.pi / 2 * (1 if k % 20 else -1)
            q[k, 3:7] = pin.Quaternion(pin.rpy.rpyToMatrix(rng.normal(), pitch, rng.normal())).coeffs()
        return np.hstack([q[:, self.q_order], rng.normal(size=(count, self.nv))])


def build(folder: Path, path: Path, name: str, floating: bool, **options) -> tuple:
    """(Python package, C package, Pinocchio peer) of the URDF at ``path``, quaternion base (the default)."""
    model = sls.load_urdf(path, floating_base=floating, name=name)
    sls.generate(model, folder / "py", **options)
    sls.generate(model, folder / "c", target="c", **options)
    py, c = import_package(folder / "py"), import_package(folder / "c")
    return py, c, Peer(path, py.STATE[7 : py.N_Q])


@pytest.fixture(scope="module")
def drone(tmp_path_factory):
    folder = tmp_path_factory.mktemp("drone")
    (folder / "drone.urdf").write_text(DRONE)
    return build(folder, folder / "drone.urdf", "drone", floating=False)


@pytest.fixture(scope="module")
def solo(tmp_path_factory):
    if not SOLO.is_file():
        pytest.skip(f"example-robot-data's Solo-12 is not installed ({SOLO})")
    return build(tmp_path_factory.mktemp("solo"), SOLO, "solo", floating=True, functions=SOLO_FUNCTIONS)


@pytest.fixture(scope="module")
def drone_expanded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("drone-expanded")
    (folder / "drone.urdf").write_text(DRONE)
    return build(folder, folder / "drone.urdf", "drone", floating=False, method="expanded")


ROBOT_FIXTURES = ["drone", "solo", "drone_expanded"]


def calls(package, x: np.ndarray, rng: np.random.Generator) -> dict:
    """Every generated function of ``package`` (``vdot_fun`` too) with its arguments for state(s) ``x``."""
    u = rng.normal(size=x.shape[:-1] + (package.N_INPUTS,))
    accelerations = rng.normal(size=x.shape[:-1] + (package.N_V,))
    return {
        name: (x, u) if name in WITH_INPUT else (x, accelerations) if name == "tau_fun" else (x,)
        for name in package.__all__
        if name not in RUNTIME
    }


def relative(a, b) -> float:
    return float(np.abs(np.asarray(a) - b).max() / max(1.0, np.abs(b).max()))


def test_the_c_package_has_the_python_packages_api(drone):
    py, c, _ = drone
    assert c.__all__ == py.__all__
    assert (c.N_Q, c.N_V, c.N_DOF, c.STATE) == (7, 6, 6, py.STATE)
    assert {"vdot_fun", "qdot_fun", *RUNTIME} <= set(c.__all__)
    assert c.vdot_fun is c.qddot_fun
    x, u = np.r_[0.1, 0.2, 0.3, 0, 0, 0, 1, np.ones(6)], np.zeros(6)
    assert c.xdot_fun(x, u).shape == (13,) and c.qdot_fun(x).shape == (7,)
    assert [a.shape for a in c.linearized_model(x, u)] == [(12, 12), (12, 6)]
    header = (Path(c.__file__).parent / "c" / "drone.h").read_text()
    assert "#define DRONE_N_STATE 13" in header and "#define DRONE_N_Q 7" in header and "#define DRONE_N_V 6" in header


@pytest.mark.parametrize("which", ROBOT_FIXTURES)
def test_every_function_agrees_with_the_python_target(which, request):
    py, c, peer = request.getfixturevalue(which)
    rng = np.random.default_rng(2)
    for trial, x in enumerate(peer.states(6, seed=3)):
        params = {name: float(rng.uniform(0.5, 2.0)) for name in py.PARAMS} if trial % 2 else {}
        for name, args in calls(py, x, rng).items():
            agree(getattr(c, name)(*args, **params), getattr(py, name)(*args, **params), f"{which} {name}")
            if trial == 0:  # the fast path's other argument types: lists
                listed = [list(a) for a in args]
                agree(getattr(c, name)(*listed), getattr(py, name)(*args), f"{which} {name} (lists)")


@pytest.mark.parametrize("which", ROBOT_FIXTURES)
@pytest.mark.parametrize("shape", [(5,), (2, 3), (40,)], ids=["5", "2x3", "40"])
def test_batches_agree(which, shape, request):
    """Batches through the C batch loop (40 states: blocks of the lane kernels too)."""
    py, c, peer = request.getfixturevalue(which)
    rng = np.random.default_rng(4)
    X = peer.states(int(np.prod(shape)), seed=5).reshape(shape + (py.N_Q + py.N_V,))
    for name, args in calls(py, X, rng).items():
        agree(getattr(c, name)(*args), getattr(py, name)(*args), f"{which} {name} {shape}")


def test_the_runtime_is_the_python_packages(drone):
    py, c, peer = drone
    rng = np.random.default_rng(6)
    X = peer.states(4, seed=7)
    q, dq = X[:, :7], rng.normal(size=(4, 6))
    agree(c.integrate(q, dq), py.integrate(q, dq), "integrate")
    agree(c.difference(q, py.integrate(q, dq)), py.difference(q, py.integrate(q, dq)), "difference")
    scaled = q.copy()
    scaled[:, 3:7] *= 3.0
    agree(c.normalize(scaled), q, "normalize")
    agree(c.to_mujoco(X), py.to_mujoco(X), "to_mujoco")
    agree(c.from_mujoco(*c.to_mujoco(X)), X, "from_mujoco")


@pytest.mark.parametrize("which", ["drone", "solo"])
def test_the_dynamics_are_pinocchios(which, request):
    """vdot_fun = aba, M_fun = crba, tau_fun = rnea (1e-9), on 200 states, one by one and as a batch."""
    _, c, peer = request.getfixturevalue(which)
    model, data = peer.model, peer.data
    X = peer.states(200, seed=8)
    rng = np.random.default_rng(9)
    U, a = rng.normal(size=(200, c.N_INPUTS)), rng.normal(size=(200, c.N_V))
    vdot, M, tau, B_u = c.vdot_fun(X, U), c.M_fun(X), c.tau_fun(X, a), c.input_matrix_fun(X)
    for k, x in enumerate(X):
        q, v = x[: c.N_Q][peer.q_back], x[c.N_Q :][peer.v_back]
        force = (B_u[k] @ U[k])[peer.v_back]
        assert relative(vdot[k], peer.vector(pin.aba(model, data, q, v, force))) < 1e-9
        assert relative(c.vdot_fun(x, U[k]), vdot[k]) < 1e-15
        reference = pin.crba(model, data, q)
        assert relative(M[k], peer.matrix(np.triu(reference) + np.triu(reference, 1).T)) < 1e-9
        assert relative(tau[k], peer.vector(pin.rnea(model, data, q, v, a[k][peer.v_back]))) < 1e-9


@pytest.mark.parametrize("which", ["drone", "solo", "drone_expanded"])
def test_the_linearization_is_pinocchios_in_the_tangent_space(which, request):
    """The dynamics rows of A, B = computeABADerivatives' ddq_dq, ddq_dv, Minv B_u; at v = 0 the kinematic rows
    are [0 I]."""
    _, c, peer = request.getfixturevalue(which)
    model, data, n = peer.model, peer.data, peer.nv
    X = peer.states(100, seed=10)
    U = np.random.default_rng(11).normal(size=(100, c.N_INPUTS))
    A_all, B_all = c.linearized_model(X, U)
    B_u = c.input_matrix_fun(X)
    assert A_all.shape == (100, 2 * n, 2 * n) and B_all.shape == (100, 2 * n, c.N_INPUTS)
    for k, x in enumerate(X):
        A, B = c.linearized_model(x, U[k])
        assert relative(A, A_all[k]) < 1e-15 and relative(B, B_all[k]) < 1e-15
        force = (B_u[k] @ U[k])[peer.v_back]
        pin.computeABADerivatives(model, data, x[: c.N_Q][peer.q_back], x[c.N_Q :][peer.v_back], force)
        Minv = peer.matrix(np.triu(data.Minv) + np.triu(data.Minv, 1).T)
        assert relative(A[n:, :n], peer.matrix(data.ddq_dq)) < 1e-8
        assert relative(A[n:, n:], peer.matrix(data.ddq_dv)) < 1e-8
        assert relative(B[n:], Minv @ B_u[k]) < 1e-8
        assert not np.any(B[:n])
    at_rest = c.linearized_model(np.concatenate([X[0, : c.N_Q], np.zeros(n)]), U[0])[0]
    assert np.array_equal(at_rest[:n], np.hstack([np.zeros((n, n)), np.eye(n)]))


def test_the_tree_route_maps_the_right_hand_sides_before_its_row_solves(drone, drone_expanded):
    """On the tree route the right-hand sides −∂r/∂x are mapped to the tangent columns before the row solves (2n + m
    columns, no call of qdot_jac_fun); on the expanded route the solved rows are."""
    for (_, c, _), rows in ((drone, True), (drone_expanded, False)):
        text = (Path(c.__file__).parent / "c" / "drone.c").read_text()
        main = text.index("int drone_linearized_model(")
        start = text.find("drone_linearized_model_part0(")  # its parts, before it
        body = text[start if 0 <= start < main else main :]
        body = body[: body.index("\n}\n", main - (start if 0 <= start < main else main))]
        assert "drone_qdot_jac_fun" not in body and "_ff_hw" in body
        assert ("double (*_R)[20]" in body) == rows  # 6 rows of 2n + m = 18 columns (padded), in the workspace


PROGRAM = textwrap.dedent(
    """
    #include <stdio.h>
    #include "drone.h"

    static void show(const char *name, const double *v, int n)
    {
        int i;
        printf("%s", name);
        for (i = 0; i < n; ++i) printf(" %.17g", v[i]);
        printf("\\n");
    }

    int main(void)
    {
        const double x[2 * DRONE_N_STATE] = {
            0.1, -0.2, 0.3, 0.5, -0.5, 0.5, 0.5, 0.4, -0.3, 0.2, 1.1, -0.7, 0.9,
            -0.3, 0.2, 0.1, 0.0, 0.6, 0.0, 0.8, -0.5, 0.25, 0.3, -1.2, 0.4, 0.6};
        const double u[12] = {0.1, -0.4, 0.2, 0.0, 0.5, -0.3, 0.3, 0.2, -0.1, 0.05, 0.0, 0.7};
        double xdot[DRONE_N_STATE], A[2 * 144], B[2 * 72];
        if (DRONE_N_STATE != DRONE_N_Q + DRONE_N_V) return 2;
        if (drone_xdot_fun(x, u, NULL, xdot) != DRONE_OK) return 1;
        show("xdot", xdot, DRONE_N_STATE);
        if (drone_linearized_model_batch(2, x, u, NULL, A, B) != DRONE_OK) return 1;
        show("A", A, 2 * 144);
        show("B", B, 2 * 72);
        return 0;
    }
    """
)


def test_the_standalone_c_compiles_strictly_and_agrees(drone, tmp_path):
    py, c, _ = drone
    folder = Path(c.__file__).parent / "c"
    (tmp_path / "main.c").write_text(PROGRAM)
    built = subprocess.run(
        [*CC.split(), *STRICT, "-I", str(folder), str(tmp_path / "main.c"), str(folder / "drone.c")]
        + ["-o", str(tmp_path / "main"), "-lm"],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(tmp_path / "main")], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    values = {line.split()[0]: np.array([float(v) for v in line.split()[1:]]) for line in ran.stdout.splitlines()}
    X = np.array(
        [
            [0.1, -0.2, 0.3, 0.5, -0.5, 0.5, 0.5, 0.4, -0.3, 0.2, 1.1, -0.7, 0.9],
            [-0.3, 0.2, 0.1, 0.0, 0.6, 0.0, 0.8, -0.5, 0.25, 0.3, -1.2, 0.4, 0.6],
        ]
    )
    U = np.array([[0.1, -0.4, 0.2, 0.0, 0.5, -0.3], [0.3, 0.2, -0.1, 0.05, 0.0, 0.7]])
    agree(values["xdot"], py.xdot_fun(X[0], U[0]), "xdot_fun")
    A, B = py.linearized_model(X, U)
    agree(values["A"], A.ravel(), "linearized_model_batch A")
    agree(values["B"], B.ravel(), "linearized_model_batch B")
