"""Inertial parameters as parameters (``inertial_params``, :mod:`sls.model.inertial`) and the regressor
``regressor_fun`` against Pinocchio: ``Y = computeJointTorqueRegressor`` column by column (Pinocchio's joints mapped
to sls's moving links by name: both express a body's parameters in its joint's child link frame, fixed links lumped
in), ``Y @ PI = tau_fun = rnea``, a mass changed by keyword against a Pinocchio model changed the same way, and a
payload sweep as one batched call. UR5, Panda (the second finger a mimic joint in sls) and iiwa (fixed bases),
Solo-12 with a quaternion free-flyer."""

from pathlib import Path

import numpy as np
import pytest
from conftest import import_package

import sls
from sls.model.inertial import SUFFIXES

pin = pytest.importorskip("pinocchio")
from pinocchio_peers import ROBOTS, SOLO  # noqa: E402

STATES = 30
TOL = 1e-10
UR5 = ROBOTS / "ur_description/urdf/ur5_robot.urdf"
PANDA = ROBOTS / "panda_description/urdf/panda.urdf"
IIWA = Path(__file__).resolve().parents[1] / "data" / "iiwa14.urdf"


class Peer:
    """A generated package with every link's parameters and Pinocchio's model of the same file (no mimic joints
    there: a mimic joint's speed is mapped by ``P``, Pinocchio's ``v = P v_sls``), and which sls link carries the
    parameters of each Pinocchio joint."""

    def __init__(self, path, folder, floating=False):
        self.path = path
        self.model = sls.load_urdf(path, inertial_params="all", floating_base=floating)
        sls.generate(self.model, folder)
        self.package = import_package(folder)
        args = (str(path), pin.JointModelFreeFlyer()) if floating else (str(path),)
        self.pin = pin.buildModelFromUrdf(*args)
        self.data = self.pin.createData()
        tree, n, n_q = self.model.tree, self.package.N_V, self.package.N_Q
        joints, state = {j.name: j for j in tree.joints}, list(self.package.STATE)
        self.P = np.zeros((self.pin.nv, n))
        self.coordinates = []  # (Pinocchio idx_q, sls coordinate, multiplier, offset)
        first, self.base = (2, 7) if floating else (1, 0)
        if floating:
            self.P[:6, :6] = np.eye(6)
        for j in range(first, self.pin.njoints):
            joint = joints[self.pin.names[j]]
            followed, multiplier, offset = joint.mimic or (joint.name, 1.0, 0.0)
            k = state.index(followed)
            self.P[self.pin.joints[j].idx_v, k - (n_q - n)] = multiplier
            self.coordinates.append((self.pin.joints[j].idx_q, k, multiplier, offset))
        links = list(tree.inertial_params)
        child = {j.name: j.child for j in tree.joints}
        joint_names = ["base" if floating and j == 1 else self.pin.names[j] for j in range(1, self.pin.njoints)]
        self.columns = [links.index(child[name]) for name in joint_names]

    def states(self, seed):
        """``(x, v, a, q_pin)``: random states in sls's layout and the configuration in Pinocchio's."""
        rng = np.random.default_rng(seed)
        n, n_q = self.package.N_V, self.package.N_Q
        for _ in range(STATES):
            x = np.zeros(n_q + n)
            q = pin.randomConfiguration(self.pin, -np.ones(self.pin.nq), np.ones(self.pin.nq))
            x[: self.base] = q[: self.base]  # the free-flyer's seven (Pinocchio's layout)
            for iq, k, multiplier, offset in self.coordinates:
                if multiplier == 1.0 and offset == 0.0:
                    x[k] = q[iq]
            for iq, k, multiplier, offset in self.coordinates:
                q[iq] = multiplier * x[k] + offset
            x[n_q:] = rng.normal(size=n)
            yield x, x[n_q:], rng.normal(size=n), q

    def regressor(self, Y):
        """``Y`` (sls's columns) in Pinocchio's column order (its inertial columns only)."""
        out = np.zeros((Y.shape[0], 10 * len(self.columns)))
        for j, c in enumerate(self.columns):
            out[:, 10 * j : 10 * j + 10] = Y[:, 10 * c : 10 * c + 10]
        return out


def relative(got, want):
    return float(np.abs(got - want).max()) / max(1.0, float(np.abs(want).max()))


@pytest.fixture(scope="module", params=["ur5", "panda", "iiwa", "solo12"])
def peer(request, tmp_path_factory):
    path, floating = {"ur5": (UR5, False), "panda": (PANDA, False), "iiwa": (IIWA, False), "solo12": (SOLO, True)}[
        request.param
    ]
    return Peer(path, tmp_path_factory.mktemp("regressor") / request.param, floating)


def test_every_link_has_its_ten_parameters(peer):
    package = peer.package
    first = peer.model.tree.inertial_params[0]
    assert len(package.PI) == len(package.PI_NAMES) and package.PI_NAMES[:10] == tuple(f"{first}_{s}" for s in SUFFIXES)
    assert all(package.PARAMS[name] == value for name, value in zip(package.PI_NAMES, package.PI))
    assert len(peer.columns) == peer.pin.njoints - 1  # one sls body per Pinocchio joint
    # the defaults: the file's values, lumped as Pinocchio lumps them
    for j, c in enumerate(peer.columns, 1):
        np.testing.assert_allclose(
            package.PI[10 * c : 10 * c + 10], peer.pin.inertias[j].toDynamicParameters(), rtol=1e-12, atol=1e-12
        )


def test_regressor_is_pinocchios(peer):
    package, worst = peer.package, [0.0, 0.0, 0.0]
    no_friction = {name: 0.0 for name in package.PI_NAMES if name.startswith(("damping_", "friction_"))}
    for x, v, a, q in peer.states(7):
        Y = package.regressor_fun(x, a)
        assert Y.shape == (package.N_V, len(package.PI_NAMES))
        Y_pin = peer.P.T @ pin.computeJointTorqueRegressor(peer.pin, peer.data, q, peer.P @ v, peer.P @ a)
        rnea = peer.P.T @ pin.rnea(peer.pin, peer.data, q, peer.P @ v, peer.P @ a)
        worst[0] = max(worst[0], relative(peer.regressor(Y), Y_pin))
        worst[1] = max(worst[1], relative(Y @ package.PI, package.tau_fun(x, a)))
        worst[2] = max(worst[2], relative(package.tau_fun(x, a, **no_friction), rnea))
    assert max(worst) <= TOL, f"Y vs Pinocchio, Y PI vs tau_fun, tau_fun vs rnea: {worst}"


def test_a_mass_changed_by_keyword(peer):
    """The last link's mass alone doubled (``<link>_m``: its first moment and inertia about its origin kept), in sls by
    keyword and in Pinocchio through ``Inertia.FromDynamicParameters``."""
    package, link = peer.package, peer.columns.index(max(peer.columns)) + 1
    name = peer.model.tree.inertial_params[peer.columns[link - 1]]
    changed = peer.pin.copy()
    values = changed.inertias[link].toDynamicParameters()
    values[0] *= 2.0
    changed.inertias[link] = pin.Inertia.FromDynamicParameters(values)
    data = changed.createData()
    params = {f"{name}_m": 2.0 * package.PARAMS[f"{name}_m"]}
    params.update({n: 0.0 for n in package.PI_NAMES if n.startswith(("damping_", "friction_"))})
    for x, v, a, q in peer.states(11):
        rnea = peer.P.T @ pin.rnea(changed, data, q, peer.P @ v, peer.P @ a)
        assert relative(package.tau_fun(x, a, **params), rnea) <= TOL


def test_payload_sweep_is_one_batched_call(tmp_path):
    """1 000 masses of UR5's last link through one call of qddot_fun equal 1 000 single calls."""
    model = sls.load_urdf(UR5, inertial_params="wrist_3_link")
    sls.generate(model, tmp_path / "ur5")
    package = import_package(tmp_path / "ur5")
    masses = np.linspace(0.1, 5.0, 1000)
    rng = np.random.default_rng(3)
    x, u = rng.normal(size=12), rng.normal(size=6)
    swept = package.qddot_fun(x, u, wrist_3_link_m=masses)
    assert swept.shape == (1000, 6)
    one_by_one = np.array([package.qddot_fun(x, u, wrist_3_link_m=m) for m in masses])
    np.testing.assert_allclose(swept, one_by_one, rtol=1e-12, atol=1e-12)
    assert package.PI_NAMES == tuple(f"wrist_3_link_{s}" for s in SUFFIXES)


def test_the_same_dynamics_as_the_numbers_at_the_defaults(peer, tmp_path):
    """qddot_fun and linearized_model (on a free-flyer by the analytical Newton–Euler derivatives, linear in the
    parameters) equal those of the package whose inertias are numbers."""
    args = {"floating_base": True} if peer.base else {}
    sls.generate(sls.load_urdf(peer.path, **args), tmp_path / "numbers")
    numbers = import_package(tmp_path / "numbers")
    rng = np.random.default_rng(4)
    for x, _, _, _ in list(peer.states(5))[:5]:
        u = rng.normal(size=numbers.N_INPUTS)
        assert relative(peer.package.qddot_fun(x, u), numbers.qddot_fun(x, u)) <= TOL
        for got, want in zip(peer.package.linearized_model(x, u), numbers.linearized_model(x, u)):
            assert relative(got, want) <= TOL
