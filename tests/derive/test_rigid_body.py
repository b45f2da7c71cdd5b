"""The tree route (recursive Newton–Euler on the graph, :mod:`sls.derive.rigid_body`) against independent references.

* today's graph route (``T`` and ``V`` differentiated) on the same model: every array ≤ 1e-12 (relative);
* Pinocchio on the same file: ``crba``, ``rnea``, ``aba`` and ``computeABADerivatives``;
* mimic joints against the Euler–Lagrange derivation of the energies with the mimic joint substituted,
  and against Pinocchio's unreduced model mapped through ``q_full = G q + offset``;
* lazy derivation: only the wanted arrays (and what they need) are built, with the same values.

Public files (pybullet, example-robot-data, rtb-data) are used when installed, skipped otherwise.
"""

from __future__ import annotations

import dataclasses
import re
import sysconfig
from pathlib import Path

import numpy as np
import pytest
import sympy

import sls
from sls import arrays
from sls import derive as D
from sls.derive import rigid_body
from sls.model import build_model
from sls.readers.urdf import GRAVITY, energies, load_urdf, parse_urdf, state_names

try:
    import pinocchio as pin
except ImportError:  # pragma: no cover - pin is in the test extra
    pin = None

DATA = Path(__file__).resolve().parents[1] / "data"
EXAMPLES = Path(sls.__file__).resolve().parent / "examples"
LOCAL = {"ur5": EXAMPLES / "ur5.urdf"} | {p.stem: p for p in sorted(DATA.glob("*.urdf"))}
RTOL = 1e-12
RNG = np.random.default_rng(20261123)
needs_pinocchio = pytest.mark.skipif(pin is None, reason="Pinocchio (pip install pin) is not installed")
#: Every array but a constrained model's.
ARRAYS = [name for name in D.ARRAY_NAMES if name not in ("c", "A", "A_jac", "bias", "bias_jac")]


def _public(name: str) -> Path | None:
    """A public URDF file of an installed package: pybullet_data, example-robot-data (cmeel prefix), rtbdata."""
    if name == "kuka_iiwa":
        try:
            import pybullet_data
        except ImportError:
            return None
        return Path(pybullet_data.getDataPath()) / "kuka_iiwa" / "model.urdf"
    if name == "kr16":
        try:
            import rtbdata
        except ImportError:
            return None
        return Path(rtbdata.__file__).parent / "xacro" / "kuka_description" / "kuka_kr16" / "urdf" / "kr16_2.urdf"
    robots = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
    return {
        "panda": robots / "panda_description" / "urdf" / "panda.urdf",
        "ur5_erd": robots / "ur_description" / "urdf" / "ur5_robot.urdf",
        "a1": robots / "a1_description" / "urdf" / "a1.urdf",
    }.get(name)


def _without_mimic(path: Path, tmp_path: Path) -> Path:
    """A copy of ``path`` without ``<mimic>`` elements and with ``friction`` set to 0 (what today's parser reads)."""
    text = re.sub(r"<mimic[^>]*/>", "", path.read_text())
    text = re.sub(r'friction="[^"]*"', 'friction="0"', text)
    out = tmp_path / path.name
    out.write_text(text)
    return out


def _public_file(name: str, tmp_path: Path) -> Path:
    path = _public(name)
    if path is None or not path.exists():
        pytest.skip(f"the package with {name} is not installed")
    return _without_mimic(path, tmp_path)


# --------------------------------------------------------------------------
# numbers of a derivation


def _evaluator(d: D.Dynamics, names: list):
    """``f(x, u, a, g) -> {name: array}`` for the arrays ``names`` of ``d`` (graph nodes evaluated as floats)."""
    model = d.model
    others = [name for name in model.params if name != "g"]  # a file's dampings and frictions, at their defaults
    symbols = (
        list(model.state) + list(model.inputs) + list(D.acceleration_symbols(model.n)) + [sympy.Symbol("g", real=True)]
    )
    symbols += [sympy.Symbol(name, real=True) for name in others]
    defaults = [model.params[name] for name in others]
    flats = {name: arrays.flatten(d.arrays[name]) for name in names}
    evaluate = d.graph.evaluator([e for flat in flats.values() for e in flat], symbols)
    shapes = {name: arrays.shape_of(d.arrays[name]) for name in names}

    def values(x, u, a, g=GRAVITY) -> dict:
        flat = iter(evaluate([*x, *u, *a, g, *defaults]))
        return {name: np.reshape([next(flat) for _ in flats[name]], shapes[name]) for name in names}

    return values


def _samples(n: int, m: int, count: int = 4):
    for _ in range(count):
        yield RNG.uniform(-2.5, 2.5, 2 * n), RNG.uniform(-4, 4, m), RNG.uniform(-3, 3, n)


def _assert_close(got: np.ndarray, expected: np.ndarray, what: str, rtol: float = RTOL) -> None:
    scale = max(float(np.abs(expected).max(initial=0.0)), 1.0)
    np.testing.assert_allclose(got, expected, rtol=0, atol=rtol * scale, err_msg=what)


def _assert_routes_agree(model, names=ARRAYS) -> None:
    wanted = None if names is ARRAYS else set(names)
    tree, graph = D.derive(model, method="tree", wanted=wanted), D.derive(model, method="graph", wanted=wanted)
    assert tree.method == "tree" and graph.method == "graph"
    ours, theirs = _evaluator(tree, names), _evaluator(graph, names)
    for x, u, a in _samples(model.n, model.m):
        A, B = ours(x, u, a), theirs(x, u, a)
        for name in names:
            _assert_close(A[name], B[name], name)


# --------------------------------------------------------------------------
# the tree route against the graph route


@pytest.mark.parametrize("name", list(LOCAL))
def test_tree_route_matches_graph_route(name):
    _assert_routes_agree(load_urdf(LOCAL[name]))


def test_auto_takes_the_tree_route_for_robots_only():
    ur5 = load_urdf(LOCAL["ur5"])
    assert D.choose_method(ur5) == "tree"
    assert D.choose_method(ur5, simplify=True) == "expanded"
    assert D.derive(ur5).method == "tree"
    pendulum = sls.readers.load_example("pendulum")
    assert D.choose_method(pendulum) == "expanded"
    with pytest.raises(ValueError, match="tree route needs a robot model"):
        D.derive(pendulum, method="tree")


@pytest.mark.parametrize("name", ["kuka_iiwa", "panda"])
def test_public_arms_match_graph_route(name, tmp_path):
    """pybullet's iiwa (rounded rpy) and example-robot-data's panda (mimic stripped), the arrays linearized_model
    needs."""
    model = load_urdf(_public_file(name, tmp_path))
    _assert_routes_agree(model, ["M", "rhs", "residual_jac", "tau", "T", "V"])


# --------------------------------------------------------------------------
# against Pinocchio


class Pinocchio:
    """Pinocchio's model of a URDF file, coordinates mapped by joint name (a continuous joint's as cos, sin)."""

    def __init__(self, path: Path, names: list) -> None:
        self.model = pin.buildModelFromUrdf(str(path))
        self.data = self.model.createData()
        joints = [self.model.joints[self.model.getJointId(name)] for name in names]
        self.iq, self.nq = [j.idx_q for j in joints], [j.nq for j in joints]
        self.iv = np.array([j.idx_v for j in joints])
        assert sorted(self.iv) == list(range(self.model.nv))

    def _q(self, q) -> np.ndarray:
        out = np.zeros(self.model.nq)
        for value, i, nq in zip(q, self.iq, self.nq):
            out[i : i + nq] = [value] if nq == 1 else [np.cos(value), np.sin(value)]
        return out

    def _v(self, v) -> np.ndarray:
        out = np.zeros(self.model.nv)
        out[self.iv] = v
        return out

    def crba(self, q):
        M = pin.crba(self.model, self.data, self._q(q))
        M = np.triu(M) + np.triu(M, 1).T
        return M[np.ix_(self.iv, self.iv)]

    def rnea(self, q, v, a):
        return pin.rnea(self.model, self.data, self._q(q), self._v(v), self._v(a))[self.iv]

    def aba(self, q, v, tau):
        return pin.aba(self.model, self.data, self._q(q), self._v(v), self._v(tau))[self.iv]

    def aba_derivatives(self, q, v, tau):
        """``[∂q̈/∂q, ∂q̈/∂q̇]`` at fixed ``τ`` (the tangent of a continuous joint is its angle)."""
        dq, dv, _ = pin.computeABADerivatives(self.model, self.data, self._q(q), self._v(v), self._v(tau))
        return np.hstack([dq[np.ix_(self.iv, self.iv)], dv[np.ix_(self.iv, self.iv)]])


def _assert_matches_pinocchio(path: Path) -> None:
    model = load_urdf(path)
    n = model.n
    names = [joint.name for joint in model.tree.movable]
    reference = Pinocchio(path, names)
    d = D.derive(model, wanted={"M", "rhs", "residual_jac", "B_u", "tau", "fric"})
    assert d.method == "tree" and d.christoffel is None and d.coriolis is None and d.coriolis_jac is None
    values = _evaluator(d, ["M", "rhs", "residual_jac", "tau", "fric"])
    for x, u, a in _samples(n, model.m):
        q, v = x[:n], x[n:]
        got = values(x, u, a)
        _assert_close(got["M"], reference.crba(q), "M vs crba", 1e-10)
        _assert_close(got["tau"] - got["fric"], reference.rnea(q, v, a), "tau vs rnea", 1e-10)
        tau = u - got["fric"]
        qddot = np.linalg.solve(got["M"], got["rhs"])
        _assert_close(qddot, reference.aba(q, v, tau), "qddot vs aba", 1e-9)
        # A's lower half = −M⁻¹ ∂r/∂x at the solved q̈; Pinocchio's derivatives at fixed τ (damping enters through fric).
        at = values(x, u, qddot)
        lower = -np.linalg.solve(got["M"], at["residual_jac"])
        fric_jac = np.hstack([np.zeros((n, n)), np.diag([float(j.damping) for j in model.tree.movable])])
        expected = reference.aba_derivatives(q, v, tau) - np.linalg.solve(got["M"], fric_jac)
        _assert_close(lower, expected, "d(qddot)/dx vs computeABADerivatives", 1e-8)


@needs_pinocchio
@pytest.mark.parametrize(
    "name", [name for name in LOCAL if name != "arm"]
)  # arm.urdf has no <limit>: urdfdom refuses it
def test_tree_route_matches_pinocchio(name):
    _assert_matches_pinocchio(LOCAL[name])


@needs_pinocchio
@pytest.mark.parametrize("name", ["kuka_iiwa", "panda", "ur5_erd", "a1", "kr16"])
def test_public_robots_match_pinocchio(name, tmp_path):
    _assert_matches_pinocchio(_public_file(name, tmp_path))


# --------------------------------------------------------------------------
# mimic joints

MIMIC_URDF = """<robot name="mimic">
  <link name="base"/>
  <link name="a"><inertial><origin xyz="0.1 0 0.3" rpy="0.2 0 0.1"/><mass value="2.0"/>
    <inertia ixx="0.05" ixy="0.001" ixz="0" iyy="0.04" iyz="0.002" izz="0.03"/></inertial></link>
  <link name="b"><inertial><origin xyz="0 0.05 0.2"/><mass value="1.2"/>
    <inertia ixx="0.02" ixy="0" ixz="0.001" iyy="0.03" iyz="0" izz="0.01"/></inertial></link>
  <link name="c"><inertial><origin xyz="0.02 0 0.1"/><mass value="0.7"/>
    <inertia ixx="0.004" ixy="0" ixz="0" iyy="0.005" iyz="0" izz="0.003"/></inertial></link>
  <link name="d"><inertial><origin xyz="0 0 0.05"/><mass value="0.3"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.002"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><origin xyz="0 0 0.1"/>
    <axis xyz="0 0 1"/><dynamics damping="0.3"/><limit effort="1" velocity="1" lower="-3" upper="3"/></joint>
  <joint name="j2" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0 0.1 0.4" rpy="1.5708 0 0.3"/>
    <axis xyz="0 1 0"/><limit effort="1" velocity="1" lower="-3" upper="3"/></joint>
  <joint name="j3" type="revolute"><parent link="b"/><child link="c"/><origin xyz="0.05 0 0.3"/>
    <axis xyz="0.6 0 0.8"/><limit effort="1" velocity="1" lower="-3" upper="3"/></joint>
  <joint name="j4" type="prismatic"><parent link="b"/><child link="d"/><origin xyz="0 -0.1 0.2" rpy="0 0.4 0"/>
    <axis xyz="1 0 0"/><limit effort="1" velocity="1" lower="-3" upper="3"/></joint>
</robot>
"""
#: j3 follows j2 (−1.5·q + 0.2), j4 follows j1 (0.05·q − 0.01).
MIMICS = {"j3": ("j2", -1.5, 0.2), "j4": ("j1", 0.05, -0.01)}


def _mimic_robot(mimics: dict = MIMICS):
    robot = parse_urdf(MIMIC_URDF, "mimic.urdf")
    joints = tuple(dataclasses.replace(j, mimic=mimics.get(j.name)) for j in robot.joints)
    return robot, dataclasses.replace(robot, joints=joints)


def _mimic_model():
    """The tree model with mimic joints, and the reference: the full robot's energies with the mimic joints
    substituted."""
    full, robot = _mimic_robot()
    names = state_names(robot, "mimic.urdf")
    full_names = state_names(full, "mimic.urdf")
    T, V, _ = energies(full, full_names)
    symbols = {name: sympy.Symbol(name, real=True) for name in full_names}
    substitution = {}
    for joint_name, (followed, multiplier, offset) in MIMICS.items():
        substitution[symbols[joint_name]] = multiplier * symbols[followed] + offset
        substitution[symbols["d_" + joint_name]] = multiplier * symbols["d_" + followed]
    T, V = T.xreplace(substitution), V.xreplace(substitution)
    fric = tuple(sympy.Float(j.damping) * sympy.Symbol("d_" + j.name, real=True) for j in robot.movable)
    params = {"g": GRAVITY}
    tree = build_model(state=names, T=T, V=V, fric=fric, params=params, name="mimic", tree=robot)
    energy = build_model(state=names, T=T, V=V, fric=fric, params=params, name="mimic")
    return tree, energy


def test_mimic_joints_match_euler_lagrange_of_the_substituted_energies():
    tree, energy = _mimic_model()
    assert [s.name for s in tree.q] == ["j1", "j2"]
    d_tree, d_graph = D.derive(tree, method="tree"), D.derive(energy, method="graph")
    ours, theirs = _evaluator(d_tree, ARRAYS), _evaluator(d_graph, ARRAYS)
    for x, u, a in _samples(tree.n, tree.m):
        A, B = ours(x, u, a), theirs(x, u, a)
        for name in ARRAYS:
            _assert_close(A[name], B[name], name)


@needs_pinocchio
def test_mimic_joints_match_pinocchio_through_the_coordinate_map(tmp_path):
    """Pinocchio's model with every joint free, reduced by ``q_full = G q + offset``: ``M = Gᵀ M_full G``,
    ``τ = Gᵀ τ_full``."""
    path = tmp_path / "mimic.urdf"
    path.write_text(MIMIC_URDF)
    tree, _ = _mimic_model()
    full_names = ["j1", "j2", "j3", "j4"]
    reference = Pinocchio(path, full_names)
    G = np.array([[1, 0], [0, 1], [0, -1.5], [0.05, 0]])
    offset = np.array([0, 0, 0.2, -0.01])
    d = D.derive(tree, wanted={"M", "tau", "fric"})
    values = _evaluator(d, ["M", "tau", "fric"])
    for x, u, a in _samples(2, 2):
        q, v = x[:2], x[2:]
        got = values(x, u, a)
        _assert_close(got["M"], G.T @ reference.crba(G @ q + offset) @ G, "M")
        tau_full = reference.rnea(G @ q + offset, G @ v, G @ a)
        _assert_close(got["tau"] - got["fric"], G.T @ tau_full, "tau")


def test_mimic_bodies_map_to_their_coordinates():
    _, robot = _mimic_robot()
    bodies = rigid_body.bodies(robot)
    assert [(b.name, b.coordinate, b.multiplier, b.shift) for b in bodies] == [
        ("j1", 0, 1.0, 0.0),
        ("j2", 1, 1.0, 0.0),
        ("j3", 1, -1.5, 0.2),
        ("j4", 0, 0.05, -0.01),
    ]
    assert [b.parent for b in bodies] == [-1, 0, 1, 1]


# --------------------------------------------------------------------------
# fixed links merged, lazy derivation


def test_links_fixed_to_a_body_are_merged_into_it():
    """iiwa14's fixed flange links add to the last body; links fixed to the root are no body at all."""
    robot = load_urdf(LOCAL["iiwa14"]).tree
    bodies = rigid_body.bodies(robot)
    assert len(bodies) == len(robot.movable) == 7
    moving_links = {j.child for j in robot.joints if j.kind != "fixed"}
    total = sum(i.mass for link, i in robot.inertials.items() if i is not None and link != robot.root)
    fixed_to_root = sum(
        robot.inertials[j.child].mass
        for j in robot.joints
        if j.kind == "fixed" and j.parent == robot.root and robot.inertials[j.child]
    )
    assert sum(b.mass for b in bodies) == pytest.approx(total - fixed_to_root)
    assert len(moving_links) == 7


#: What qddot_fun, xdot_fun, linearized_model, M_fun and tau_fun evaluate on the graph routes.
SOLVING = {"M", "rhs", "residual_jac", "B_u", "tau"}


@pytest.mark.parametrize("method", ["tree", "graph"])
def test_wanted_arrays_only_are_built(method):
    model = load_urdf(LOCAL["ur5"])
    lazy, full = D.derive(model, method=method, wanted=SOLVING), D.derive(model, method=method)
    assert set(lazy.arrays) == SOLVING
    assert lazy.christoffel is None and lazy.coriolis is None and lazy.coriolis_jac is None
    assert lazy.mass_matrix_jac is None and lazy.potential_gradient_jac is None
    assert len(lazy.graph.kind) < len(full.graph.kind) / 2
    ours, theirs = _evaluator(lazy, sorted(SOLVING)), _evaluator(full, sorted(SOLVING))
    for x, u, a in _samples(model.n, model.m, 2):
        A, B = ours(x, u, a), theirs(x, u, a)
        for name in SOLVING:
            _assert_close(A[name], B[name], name)  # sums may be grouped differently: equal to rounding


def test_wanted_on_the_expanded_route_skips_the_christoffel_jacobian():
    model = sls.readers.load_example("double_pendulum")
    lazy = D.derive(model, method="expanded", wanted={"M", "rhs"})
    assert set(lazy.arrays) == {"M", "rhs"} and lazy.coriolis_jac is None and lazy.potential_gradient_jac is None
    full = D.derive(model, method="expanded")
    assert lazy.arrays["rhs"] == full.arrays["rhs"]


def test_every_array_wanted_is_the_same_as_none(tmp_path):
    """``wanted`` = all names builds the graph in the same order as ``None``: the same nodes."""
    model = sls.readers.load_example("acrobot")
    a, b = D.derive(model, method="graph"), D.derive(model, method="graph", wanted=set(D.ARRAY_NAMES))
    assert a.arrays == b.arrays and a.graph.kind == b.graph.kind and a.graph.args == b.graph.args


def test_unknown_wanted_names_are_refused():
    with pytest.raises(ValueError, match="unknown array name"):
        D.derive(load_urdf(LOCAL["planar2"]), wanted={"M", "qddot"})


def test_generated_tree_package_is_deterministic(tmp_path):
    model = load_urdf(LOCAL["spatial3"])
    sls.generate(model, tmp_path / "a")
    sls.generate(load_urdf(LOCAL["spatial3"]), tmp_path / "b")
    for path in sorted((tmp_path / "a").glob("*.py")):
        assert path.read_bytes() == (tmp_path / "b" / path.name).read_bytes(), path.name


# --------------------------------------------------------------------------
# a floating base as the URDF-features branch expands it


def _floating_base_urdf() -> str:
    """A two-link arm on a floating base written as the parser expands one: prismatic x, y, z, then revolute z, y, x
    through massless links, the original joint's origin on the first joint."""
    axes = [
        ("px", "prismatic", "1 0 0"),
        ("py", "prismatic", "0 1 0"),
        ("pz", "prismatic", "0 0 1"),
        ("yaw", "revolute", "0 0 1"),
        ("pitch", "revolute", "0 1 0"),
        ("roll", "revolute", "1 0 0"),
    ]
    limit = '<limit effort="1" velocity="1" lower="-3" upper="3"/>'
    links = ["world"] + [f"base_{name}" for name, _, _ in axes[:-1]] + ["torso"]
    text = ['<robot name="floating">'] + [f'<link name="{link}"/>' for link in links[:-1]]
    text.append(
        '<link name="torso"><inertial><origin xyz="0.01 0.02 -0.03" rpy="0.1 0.2 0.3"/><mass value="5"/>'
        '<inertia ixx="0.3" ixy="0.01" ixz="0.02" iyy="0.4" iyz="0.03" izz="0.5"/></inertial></link>'
    )
    for k, (name, kind, axis) in enumerate(axes):
        origin = '<origin xyz="0.1 -0.2 0.9" rpy="0 0 0.5"/>' if k == 0 else ""
        text.append(
            f'<joint name="{name}" type="{kind}"><parent link="{links[k]}"/><child link="{links[k + 1]}"/>'
            f'{origin}<axis xyz="{axis}"/>{limit}</joint>'
        )
    text.append(
        '<link name="arm"><inertial><origin xyz="0 0 0.2"/><mass value="1"/>'
        '<inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.001"/></inertial></link>'
    )
    text.append(
        f'<joint name="shoulder" type="revolute"><parent link="torso"/><child link="arm"/>'
        f'<origin xyz="0 0.2 0.1" rpy="1.5708 0 0"/><axis xyz="0 1 0"/>{limit}</joint>'
    )
    return "\n".join(text + ["</robot>"])


def test_floating_base_chain_matches_graph_route(tmp_path):
    path = tmp_path / "floating.urdf"
    path.write_text(_floating_base_urdf())
    model = load_urdf(path)
    assert model.n == 7
    _assert_routes_agree(model, ["M", "rhs", "residual_jac", "tau", "phi", "T", "V"])


@needs_pinocchio
def test_floating_base_chain_matches_pinocchio(tmp_path):
    path = tmp_path / "floating.urdf"
    path.write_text(_floating_base_urdf())
    _assert_matches_pinocchio(path)
