"""The URDF front end: robots against Pinocchio and against geometric Jacobians; bad files refused in one line."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import sympy
from click.testing import CliRunner
from conftest import import_package

import sls
from sls.backends import backend
from sls.cli.app import main
from sls.readers.urdf import load_urdf

DATA = Path(__file__).resolve().parents[2] / "data"
EXAMPLES = Path(sls.__file__).resolve().parent / "examples"
SMALL = ["planar2", "spatial3"]
BIG = {"ur5": EXAMPLES / "ur5.urdf", "iiwa14": DATA / "iiwa14.urdf"}
ALL = {name: DATA / f"{name}.urdf" for name in SMALL} | BIG
RNG = np.random.default_rng(20261122)
G = 9.81

try:
    import pinocchio as pin
except ImportError:  # pragma: no cover - pin is in the test extra
    pin = None

needs_pinocchio = pytest.mark.skipif(pin is None, reason="Pinocchio (pip install pin) is not installed")


# --------------------------------------------------------------------------
# an independent reference: forward kinematics with 4x4 transforms, geometric Jacobians


def _rpy(roll: float, pitch: float, yaw: float) -> np.ndarray:
    cr, sr, cp, sp, cy, sy = np.cos(roll), np.sin(roll), np.cos(pitch), np.sin(pitch), np.cos(yaw), np.sin(yaw)
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def _transform(R: np.ndarray, p) -> np.ndarray:
    X = np.eye(4)
    X[:3, :3], X[:3, 3] = R, p
    return X


def _rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def _floats(element, attribute, default):
    if element is None or element.get(attribute) is None:
        return np.array(default, dtype=float)
    return np.array([float(v) for v in element.get(attribute).split()])


class Reference:
    """A URDF read with ElementTree directly: M(q) and the gravity torques from geometric Jacobians."""

    def __init__(self, path: Path):
        robot = ET.parse(path).getroot()
        self.joints = robot.findall("joint")
        children = {j.find("child").get("link") for j in self.joints}
        self.root = next(link.get("name") for link in robot.findall("link") if link.get("name") not in children)
        self.bodies = {}
        for link in robot.findall("link"):
            inertial = link.find("inertial")
            if inertial is None:
                continue
            origin = inertial.find("origin")
            tensor = inertial.find("inertia")
            inertia = np.array(
                [[float(tensor.get(f"i{a}{b}") or tensor.get(f"i{b}{a}")) for b in "xyz"] for a in "xyz"]
            )
            self.bodies[link.get("name")] = (
                float(inertial.find("mass").get("value")),
                _transform(_rpy(*_floats(origin, "rpy", [0, 0, 0])), _floats(origin, "xyz", [0, 0, 0])),
                inertia,
            )
        self.movable = [j.get("name") for j in self.joints if j.get("type") != "fixed"]

    def kinematics(self, q: np.ndarray) -> tuple:
        """World transforms of the links and, per link, the movable joints above it with their world axes and
        origins."""
        value = dict(zip(self.movable, q))
        frames = {self.root: np.eye(4)}
        above = {self.root: []}
        pending = list(self.joints)
        while pending:
            joint = next(j for j in pending if j.find("parent").get("link") in frames)
            pending.remove(joint)
            parent, child = joint.find("parent").get("link"), joint.find("child").get("link")
            origin = joint.find("origin")
            X = frames[parent] @ _transform(_rpy(*_floats(origin, "rpy", [0, 0, 0])), _floats(origin, "xyz", [0, 0, 0]))
            axis = _floats(joint.find("axis"), "xyz", [1, 0, 0])
            axis = axis / np.linalg.norm(axis)
            kind, name = joint.get("type"), joint.get("name")
            chain = list(above[parent])
            if kind != "fixed":
                chain.append((name, kind, X[:3, :3] @ axis, X[:3, 3].copy()))
            if kind in ("revolute", "continuous"):
                X = X @ _transform(_rotation(axis, value[name]), np.zeros(3))
            elif kind == "prismatic":
                X = X @ _transform(np.eye(3), axis * value[name])
            frames[child], above[child] = X, chain
        return frames, above

    def dynamics(self, q: np.ndarray) -> tuple:
        """``M(q)`` and ``φ(q) = −Σ m J_vᵀ g`` with ``g = (0, 0, −9.81)``."""
        n = len(self.movable)
        frames, above = self.kinematics(q)
        M, phi = np.zeros((n, n)), np.zeros(n)
        for link, (mass, inertial_frame, inertia) in self.bodies.items():
            X = frames[link] @ inertial_frame
            com, R = X[:3, 3], X[:3, :3]
            Jv, Jw = np.zeros((3, n)), np.zeros((3, n))
            for name, kind, axis, origin in above[link]:
                k = self.movable.index(name)
                if kind == "prismatic":
                    Jv[:, k] = axis
                else:
                    Jv[:, k] = np.cross(axis, com - origin)
                    Jw[:, k] = axis
            M += mass * Jv.T @ Jv + Jw.T @ R @ inertia @ R.T @ Jw
            phi += mass * Jv.T @ np.array([0.0, 0.0, G])
        return M, phi


# --------------------------------------------------------------------------
# helpers: numbers from a Model without generating code, and from Pinocchio


def numeric(model: sls.Model):
    """``M(q)`` (from ``T`` evaluated at unit velocities) and ``φ(q)`` of a model, with ``g = 9.81``."""
    n = model.n
    g = sympy.Symbol("g", real=True)
    args = list(model.q) + list(model.dq) + [g]
    T = sympy.lambdify(args, model.T, "math")
    phi = sympy.lambdify(args, [sympy.diff(model.V, s) for s in model.q], "math")
    E = np.eye(n)

    def mass_matrix(q):
        M = np.diag([2 * T(*q, *E[i], G) for i in range(n)])
        for i in range(n):
            for j in range(i + 1, n):
                M[i, j] = M[j, i] = T(*q, *(E[i] + E[j]), G) - (M[i, i] + M[j, j]) / 2
        return M

    return mass_matrix, lambda q: np.array(phi(*q, *np.zeros(n), G), dtype=float)


class Pinocchio:
    """Pinocchio's model of the same file, with configurations mapped by joint name (continuous: cos, sin)."""

    def __init__(self, path: Path, joint_names: list):
        self.model = pin.buildModelFromUrdf(str(path))
        self.data = self.model.createData()
        ids = [self.model.getJointId(name) for name in joint_names]
        self.iq = [self.model.joints[i].idx_q for i in ids]
        self.nq = [self.model.joints[i].nq for i in ids]
        self.iv = [self.model.joints[i].idx_v for i in ids]

    def configuration(self, q):
        out = np.zeros(self.model.nq)
        for value, i, nq in zip(q, self.iq, self.nq):
            out[i : i + nq] = [value] if nq == 1 else [math.cos(value), math.sin(value)]
        return out

    def velocity(self, v):
        out = np.zeros(self.model.nv)
        out[self.iv] = v
        return out

    def mass_matrix(self, q):
        M = pin.crba(self.model, self.data, self.configuration(q))
        M = np.triu(M) + np.triu(M, 1).T
        return M[np.ix_(self.iv, self.iv)]

    def gravity(self, q):
        return pin.computeGeneralizedGravity(self.model, self.data, self.configuration(q))[self.iv]

    def nonlinear(self, q, v):
        return pin.nonLinearEffects(self.model, self.data, self.configuration(q), self.velocity(v))[self.iv]

    def acceleration(self, q, v, tau):
        full = np.zeros(self.model.nv)
        full[self.iv] = tau
        return pin.aba(self.model, self.data, self.configuration(q), self.velocity(v), full)[self.iv]


def damping(path: Path, joint_names: list) -> np.ndarray:
    joints = {j.get("name"): j for j in ET.parse(path).getroot().findall("joint")}
    values = []
    for name in joint_names:
        dynamics = joints[name].find("dynamics")
        values.append(float(dynamics.get("damping", 0)) if dynamics is not None else 0.0)
    return np.array(values)


def joint_names(path: Path) -> list:
    return [j.get("name") for j in ET.parse(path).getroot().findall("joint") if j.get("type") != "fixed"]


@pytest.fixture(scope="module")
def models():
    return {name: load_urdf(path) for name, path in ALL.items()}


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    root = tmp_path_factory.mktemp("urdf")
    out = {}
    for name in SMALL:
        sls.generate(load_urdf(ALL[name]), root / name)
        out[name] = import_package(root / name)
    return out


# --------------------------------------------------------------------------
# the kinematics and dynamics


@pytest.mark.parametrize("name", list(ALL))
def test_mass_matrix_and_gravity_match_geometric_jacobians(name, models):
    mass_matrix, phi = numeric(models[name])
    reference = Reference(ALL[name])
    assert [s.name for s in models[name].q] == reference.movable  # these files name joints as identifiers
    for _ in range(5):
        q = RNG.uniform(-2.5, 2.5, models[name].n)
        M_ref, phi_ref = reference.dynamics(q)
        np.testing.assert_allclose(mass_matrix(q), M_ref, rtol=0, atol=1e-10 * np.abs(M_ref).max())
        np.testing.assert_allclose(phi(q), phi_ref, rtol=0, atol=1e-10 * max(np.abs(phi_ref).max(), 1.0))


@needs_pinocchio
@pytest.mark.parametrize("name", list(ALL))
def test_mass_matrix_and_gravity_match_pinocchio(name, models):
    mass_matrix, phi = numeric(models[name])
    robot = Pinocchio(ALL[name], joint_names(ALL[name]))
    for _ in range(5):
        q = RNG.uniform(-2.5, 2.5, models[name].n)
        M_pin = robot.mass_matrix(q)
        np.testing.assert_allclose(mass_matrix(q), M_pin, rtol=0, atol=1e-10 * np.abs(M_pin).max())
        np.testing.assert_allclose(
            phi(q), robot.gravity(q), rtol=0, atol=1e-10 * max(np.abs(robot.gravity(q)).max(), 1.0)
        )


def _compare_generated(package, path: Path, n: int) -> None:
    names = joint_names(path)
    robot = Pinocchio(path, names)
    D = damping(path, names)
    for _ in range(6):
        q, v, u = RNG.uniform(-2.5, 2.5, n), RNG.uniform(-2, 2, n), RNG.uniform(-5, 5, n)
        x = np.concatenate([q, v])
        M = robot.mass_matrix(q)
        scale = np.abs(M).max()
        np.testing.assert_allclose(package.M_fun(x), M, rtol=0, atol=1e-10 * scale)
        bias = package.C_fun(x) @ v + package.phi_fun(x)
        np.testing.assert_allclose(bias, robot.nonlinear(q, v), rtol=0, atol=1e-10 * max(np.abs(bias).max(), 1.0))
        np.testing.assert_allclose(package.fric_fun(x), D * v, rtol=0, atol=1e-14)
        expected = robot.acceleration(q, v, u - D * v)
        np.testing.assert_allclose(
            package.qddot_fun(x, u), expected, rtol=0, atol=1e-10 * max(np.abs(expected).max(), 1.0)
        )


@needs_pinocchio
@pytest.mark.parametrize("name", SMALL)
def test_generated_package_matches_pinocchio(name, packages):
    """M (crba), C q̇ + φ (nonLinearEffects), friction = damping q̇, q̈ (aba with u − damping q̇)."""
    package = packages[name]
    assert list(package.STATE) == joint_names(ALL[name]) + [f"d_{s}" for s in joint_names(ALL[name])]
    _compare_generated(package, ALL[name], package.N_DOF)


@needs_pinocchio
@pytest.mark.parametrize("name", list(BIG))
def test_big_arms_generate_and_match_pinocchio(name, tmp_path):
    model = load_urdf(BIG[name])
    sls.generate(model, tmp_path / name)
    _compare_generated(import_package(tmp_path / name), BIG[name], model.n)


def test_generated_package_is_consistent_with_energies(packages, models):
    """T_fun and V_fun are the model's T and V; the planar arm hangs at rest with q = 0."""
    package = packages["planar2"]
    x = np.zeros(4)
    assert package.phi_fun(x) == pytest.approx([0.0, 0.0], abs=1e-14)
    assert package.T_fun(np.array([0.0, 0.0, 1.0, 0.0])) == pytest.approx(
        0.5 * numeric(models["planar2"])[0](np.zeros(2))[0, 0]
    )
    assert package.PARAMS == {"g": 9.81, "damping_shoulder": 0.1, "damping_elbow": 0.05}
    assert package.INPUTS == ("tau_shoulder", "tau_elbow") and package.FULLY_ACTUATED
    assert package.qddot_fun(x, [0.0, 0.0], g=0.0) == pytest.approx([0.0, 0.0])


def test_fixed_child_is_the_same_as_merging_its_inertia(tmp_path):
    """A link fixed to a moving link counts like its inertia merged into that link (parallel-axis theorem)."""
    m1, c1, I1 = 1.5, np.array([0.1, 0.0, -0.2]), np.diag([0.02, 0.03, 0.01])
    m2, R2, p2, c2 = 0.6, _rpy(0.3, -0.4, 0.2), np.array([0.0, 0.1, -0.4]), np.array([0.02, 0.0, 0.01])
    I2 = np.array([[0.004, 0.001, 0.0], [0.001, 0.005, 0.0005], [0.0, 0.0005, 0.006]])
    com2 = p2 + R2 @ c2
    I2_link = R2 @ I2 @ R2.T
    mass = m1 + m2
    com = (m1 * c1 + m2 * com2) / mass

    def shifted(inertia, m, d):
        return inertia + m * (d @ d * np.eye(3) - np.outer(d, d))

    merged = shifted(I1, m1, c1 - com) + shifted(I2_link, m2, com2 - com)

    def text(values):
        return " ".join(repr(float(v)) for v in values)

    def inertial(m, c, inertia):
        entries = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))
        ixx, ixy, ixz, iyy, iyz, izz = (float(inertia[i, j]) for i, j in entries)
        return (
            f'<inertial><origin xyz="{text(c)}"/><mass value="{float(m)!r}"/><inertia ixx="{ixx!r}" '
            f'ixy="{ixy!r}" ixz="{ixz!r}" iyy="{iyy!r}" iyz="{iyz!r}" izz="{izz!r}"/></inertial>'
        )

    head = (
        '<robot name="r"><link name="base"/><joint name="a" type="revolute"><parent link="base"/><child link="one"/>'
        '<axis xyz="0 0 1"/></joint><joint name="b" type="revolute"><parent link="one"/><child link="two"/>'
        '<origin xyz="0.3 0 0" rpy="1.2 0 0"/><axis xyz="0 1 0"/></joint>'
        + f'<link name="two">{inertial(0.8, np.array([0.1, 0.0, 0.0]), np.diag([0.001, 0.002, 0.002]))}</link>'
    )
    split = head + f'<link name="one">{inertial(m1, c1, I1)}</link><link name="tool">{inertial(m2, c2, I2)}</link>'
    split += (
        '<joint name="fix" type="fixed"><parent link="one"/><child link="tool"/>'
        f'<origin xyz="{text(p2)}" rpy="0.3 -0.4 0.2"/></joint></robot>'
    )
    whole = head + f'<link name="one">{inertial(mass, com, merged)}</link></robot>'
    a, b = tmp_path / "split.urdf", tmp_path / "merged.urdf"
    a.write_text(split)
    b.write_text(whole)
    (Ma, phia), (Mb, phib) = numeric(load_urdf(a)), numeric(load_urdf(b))
    for _ in range(5):
        q = RNG.uniform(-3, 3, 2)
        np.testing.assert_allclose(Ma(q), Mb(q), atol=1e-12)
        np.testing.assert_allclose(phia(q), phib(q), atol=1e-12)


def test_energies_are_natural_sums_with_exact_zeros_and_ones(models):
    """No expand/simplify: one term per moving body; rpy = 0 gives exact 0 and 1, not 1.0 or 6e-17."""
    model = models["planar2"]
    assert len(sympy.Add.make_args(model.T)) <= 2 * 2 + 2 * 3  # ½ m |v|² and ½ ω·Iω per moving link
    floats = {abs(float(f)) for f in model.T.atoms(sympy.Float) | model.V.atoms(sympy.Float)}
    assert floats and min(floats) > 1e-12
    assert all(f != round(f) for f in floats)
    assert model.params == {"g": 9.81, "damping_shoulder": 0.1, "damping_elbow": 0.05}
    damping = [sympy.Symbol(f"damping_{s.name}", real=True) for s in model.q]
    assert model.fric == (damping[0] * model.dq[0], damping[1] * model.dq[1])


def test_building_the_ur5_energies():
    from sls.readers.urdf import energies, parse_urdf, state_names

    text = (EXAMPLES / "ur5.urdf").read_text()
    robot = parse_urdf(text, "ur5.urdf")
    T, V, fric = energies(robot, state_names(robot, "ur5.urdf"))
    assert len(robot.movable) == 6 and T.free_symbols and V.has(sympy.Symbol("g", real=True))


# --------------------------------------------------------------------------
# names, examples and the command line


def _chain(names: list, kinds: list | None = None) -> str:
    kinds = kinds or ["revolute"] * len(names)
    links = ['<link name="l0"/>'] + [
        f'<link name="l{k + 1}"><inertial><origin xyz="0.1 0 0"/><mass value="1"/>'
        '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>'
        for k in range(len(names))
    ]
    joints = [
        f'<joint name="{name}" type="{kind}"><parent link="l{k}"/><child link="l{k + 1}"/><origin xyz="0 0 0.2"/>'
        '<axis xyz="0 1 0"/></joint>'
        for k, (name, kind) in enumerate(zip(names, kinds))
    ]
    return '<robot name="chain">' + "".join(links + joints) + "</robot>"


def test_state_names_come_from_joint_names(tmp_path):
    path = tmp_path / "names.urdf"
    path.write_text(_chain(["shoulder-pan", "2nd", "lambda", "g", "u1", "_hidden", "sin", "x"], ["prismatic"] * 8))
    model = load_urdf(path)
    q = ["shoulder_pan", "q_2nd", "q_lambda", "q_g", "q_u1", "q_hidden", "q_sin", "x"]
    assert [s.name for s in model.state] == q + [f"d_{s}" for s in q]
    assert list(model.params) == ["g"]


@pytest.mark.parametrize(
    ("names", "clash"),
    [
        (["a-b", "a_b"], "joints 'a-b' and 'a_b' both give the state name 'a_b'"),
        (["x", "d_x"], "'x' and 'd_x' both give the state name 'd_x'"),
    ],
)
def test_joint_names_that_clash_are_refused(names, clash, tmp_path):
    path = tmp_path / "clash.urdf"
    path.write_text(_chain(names))
    with pytest.raises(sls.ModelFileError, match=clash):
        load_urdf(path)


def test_ur5_is_a_bundled_example():
    assert "ur5" in sls.readers.example_names()
    assert sls.readers.example_description("ur5").startswith("UR5 6-DOF arm (URDF)")
    listing = CliRunner().invoke(main, ["examples"]).output
    assert any(line.startswith("ur5 ") for line in listing.splitlines())
    model = sls.load_example("ur5")
    assert model.name == "ur5" and model.source == "bundled example ur5" and model.n == 6
    assert [s.name for s in model.q][:2] == ["shoulder_pan_joint", "shoulder_lift_joint"]


def test_cli_generates_a_urdf_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["generate", str(DATA / "planar2.urdf"), "--out", "arm"])
    assert result.exit_code == 0, result.output
    assert "planar2: n = 2, m = 2" in result.output
    package = import_package(tmp_path / "arm")
    assert package.STATE == ("shoulder", "elbow", "d_shoulder", "d_elbow")


# --------------------------------------------------------------------------
# bad files: one line each, naming the element

GOOD = (DATA / "arm.urdf").read_text(encoding="utf-8")
LOWER_INERTIAL = next(line for line in GOOD.splitlines(keepends=True) if '<mass value="0.7"/>' in line)
BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE robot [
  <!ENTITY lol "lol">
  <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
  <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
  <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
  <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
  <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
  <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
  <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<robot name="&lol9;"><link name="base"/></robot>
"""
EXTERNAL_ENTITY = GOOD.replace(
    '<?xml version="1.0"?>', '<?xml version="1.0"?>\n<!DOCTYPE robot [<!ENTITY secret SYSTEM "file:///etc/passwd">]>'
).replace('name="arm"', 'name="&secret;"')

BAD = {
    "missing inertial": (
        GOOD.replace(LOWER_INERTIAL, ""),
        ["joint 'elbow' moves no mass", "link 'lower'", "no <inertial>"],
    ),
    "zero mass": (
        GOOD.replace('<mass value="0.7"/>', '<mass value="0"/>').replace(
            'ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.0005"',
            'ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"',
        ),
        ["joint 'elbow' moves no mass", "zero mass and inertia"],
    ),
    "negative mass": (
        GOOD.replace('<mass value="0.7"/>', '<mass value="-0.7"/>'),
        ["link 'lower'", '<mass value="-0.7">', "must not be negative"],
    ),
    "unknown type": (
        GOOD.replace('name="elbow" type="revolute"', 'name="elbow" type="spherical"'),
        ["joint 'elbow': unknown type 'spherical'", "revolute, continuous, prismatic, fixed, floating and planar"],
    ),
    "missing type": (
        GOOD.replace('name="elbow" type="revolute"', 'name="elbow"'),
        ["joint 'elbow': missing attribute type"],
    ),
    "two parents": (
        GOOD.replace('<child link="tool"/>', '<child link="upper"/>'),
        ["link 'upper' is the child of two joints ('shoulder' and 'tool_mount')", "closed loops"],
    ),
    "cycle": (
        GOOD.replace(
            '<link name="tool"/>',
            '<link name="tool"/><joint name="back" type="fixed"><parent link="tool"/><child link="base"/></joint>',
        ),
        ["joints 'shoulder', 'elbow', 'tool_mount', 'back' form a closed loop; a URDF is a tree"],
    ),
    "detached cycle": (
        GOOD.replace(
            '<link name="tool"/>',
            '<link name="tool"/><link name="p"/><link name="r"/><joint name="j1" type="fixed"><parent link="p"/>'
            '<child link="r"/></joint><joint name="j2" type="revolute"><parent link="r"/><child link="p"/></joint>',
        ),
        ["joints 'j2', 'j1' form a closed loop, out of reach of the root link 'base'"],
    ),
    "missing link": (
        GOOD.replace('<parent link="upper"/>', '<parent link="forearm"/>'),
        ["joint 'elbow': parent link 'forearm' is not defined"],
    ),
    "missing child element": (GOOD.replace('<child link="lower"/>', ""), ["joint 'elbow': missing <child link="]),
    "two roots": (
        GOOD.replace('<link name="tool"/>', '<link name="tool"/><link name="stray"/>'),
        ["both roots", "'stray'"],
    ),
    "xyz with two numbers": (
        GOOD.replace('<origin xyz="0 0 0.5" rpy="0 0 0"/>', '<origin xyz="1 2" rpy="0 0 0"/>'),
        ["joint 'shoulder'", '<origin xyz="1 2">', "expected 3 numbers, got 2"],
    ),
    "mass not a number": (
        GOOD.replace('<mass value="1.2"/>', '<mass value="abc"/>'),
        ["link 'upper'", '<mass value="abc">', "'abc' is not a number"],
    ),
    "NaN inertia": (
        GOOD.replace('izz="0.001"', 'izz="nan"'),
        ["link 'upper'", '<inertia izz="nan">', "not a finite number"],
    ),
    "infinite axis": (
        GOOD.replace('<axis xyz="0 1 0"/>\n    <dynamics', '<axis xyz="0 inf 0"/>\n    <dynamics'),
        ["joint 'shoulder'", "not a finite number"],
    ),
    "zero axis": (
        GOOD.replace('<axis xyz="0 1 0"/>\n    <dynamics', '<axis xyz="0 0 0"/>\n    <dynamics'),
        ["joint 'shoulder'", '<axis xyz="0 0 0">', "zero length"],
    ),
    "missing inertia": (
        GOOD.replace('<inertia ixx="0.03" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.001"/>', ""),
        ["link 'upper': <inertial> without <inertia"],
    ),
    "missing ixy": (
        GOOD.replace('ixx="0.03" ixy="0" ixz', 'ixx="0.03" ixz'),
        ["link 'upper'", "missing attribute ixy"],
    ),
    "inertia not positive": (
        GOOD.replace('ixx="0.03" ixy="0"', 'ixx="0.03" ixy="0.5"'),
        ["link 'upper'", "not positive semi-definite"],
    ),
    "negative friction": (
        GOOD.replace('<dynamics damping="0.1"/>', '<dynamics damping="0.1" friction="-0.3"/>'),
        ["joint 'shoulder'", '<dynamics friction="-0.3">', "must not be negative"],
    ),
    "negative damping": (
        GOOD.replace('<dynamics damping="0.1"/>', '<dynamics damping="-1"/>'),
        ["joint 'shoulder'", "must not be negative"],
    ),
    "duplicate link": (
        GOOD.replace('<link name="tool"/>', '<link name="tool"/><link name="upper"/>'),
        ["link 'upper' is defined twice"],
    ),
    "duplicate joint": (
        GOOD.replace('joint name="tool_mount"', 'joint name="elbow"'),
        ["joint 'elbow' is defined twice"],
    ),
    "massless free body": (
        '<robot name="r"><link name="body"/></robot>',
        ["the floating joint 'base' (coordinate 'base_x') moves no mass", "link 'body' has no <inertial>"],
    ),
    "no link": ('<robot name="r"></robot>', ["the <robot> has no <link>"]),
    "mimic of a missing joint": (
        GOOD.replace('<axis xyz="0 1 0"/>\n  </joint>', '<axis xyz="0 1 0"/>\n    <mimic joint="wrist"/>\n  </joint>'),
        ["joint 'elbow': <mimic joint=\"wrist\">: there is no joint named 'wrist'"],
    ),
    "mimic of a fixed joint": (
        GOOD.replace(
            '<axis xyz="0 1 0"/>\n  </joint>', '<axis xyz="0 1 0"/>\n    <mimic joint="tool_mount"/>\n  </joint>'
        ),
        ["joint 'elbow': <mimic joint=\"tool_mount\">: joint 'tool_mount' is fixed"],
    ),
    "mimic loop": (
        GOOD.replace(
            '<axis xyz="0 1 0"/>\n  </joint>', '<axis xyz="0 1 0"/>\n    <mimic joint="shoulder"/>\n  </joint>'
        ).replace('<dynamics damping="0.1"/>', '<dynamics damping="0.1"/><mimic joint="elbow"/>'),
        ["follow each other in a loop"],
    ),
    "mimic on a floating joint": (
        GOOD.replace('name="shoulder" type="revolute"', 'name="shoulder" type="floating"').replace(
            '<dynamics damping="0.1"/>', '<mimic joint="elbow"/>'
        ),
        ["joint 'shoulder': <mimic> on a floating joint"],
    ),
    "point masses on the axis": (
        GOOD.replace(
            'ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.0005"',
            'ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"',
        ).replace('<origin xyz="0 0 -0.2"/><mass value="0.7"/>', '<origin xyz="0 0 0"/><mass value="0.7"/>'),
        ["joint 'elbow' moves no mass: the links it carries have their mass on its axis"],
    ),
    "not XML": (GOOD.replace("</robot>", ""), ["not valid XML", "line"]),
    "not a robot": (
        '<?xml version="1.0"?><sdf version="1.6"><model name="m"/></sdf>',
        ["root element is <sdf>, expected <robot>"],
    ),
    "DTD with entities": (BILLION_LAUGHS, ["<!DOCTYPE ...> at line 2", "DTDs and entities are not allowed"]),
    "external entity": (EXTERNAL_ENTITY, ["DTDs and entities are not allowed"]),
    "bare entity": (GOOD.replace("<robot", '<!ENTITY x "y">\n<robot'), ["<!ENTITY ...> at line 3"]),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_urdf_gets_one_clear_line(case, tmp_path):
    text, pieces = BAD[case]
    path = tmp_path / "arm.urdf"
    path.write_text(text)
    with pytest.raises(sls.ModelFileError) as info:
        load_urdf(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and "\n" not in message, message
    for piece in pieces:
        assert piece in message, message


def test_the_good_file_of_the_bad_cases_loads(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_text(GOOD)
    model = load_urdf(path)
    assert [s.name for s in model.state] == ["shoulder", "elbow", "d_shoulder", "d_elbow"]


def test_entities_are_never_expanded(monkeypatch, tmp_path):
    """The DTD is refused before the XML parser sees the text."""

    def no_parsing(*args, **kwargs):
        raise AssertionError("the XML parser must not run on a file with a DTD")

    monkeypatch.setattr(ET, "fromstring", no_parsing)
    monkeypatch.setattr(ET, "XMLParser", no_parsing)
    path = tmp_path / "lol.urdf"
    path.write_text(BILLION_LAUGHS)
    with pytest.raises(sls.ModelFileError, match="DTDs and entities are not allowed"):
        load_urdf(path)


@pytest.mark.parametrize("case", ["missing inertial", "DTD with entities", "unknown type"])
def test_cli_bad_urdf_is_one_error_line_and_writes_nothing(case, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.urdf").write_text(BAD[case][0])
    result = CliRunner().invoke(main, ["generate", "bad.urdf", "--out", "out"])
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: bad.urdf: "), result.stderr
    assert not (tmp_path / "out").exists()


def test_cli_missing_urdf_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["generate", "nowhere.urdf"])
    assert result.exit_code == 1 and result.stderr.strip() == "error: nowhere.urdf: no such model file"


@pytest.mark.parametrize(
    ("robot", "expected"),
    [
        ('name="arm"', "arm"),
        ('name="my-arm (v2)"', "my_arm_v2"),
        ('name="2dof"', "robot_2dof"),
        ('name="  _iiwa_14_ "', "iiwa_14"),
        ('name="機械"', "model"),  # nothing of it is an identifier: the file's name
        ("", "model"),  # no name at all
    ],
)
def test_the_model_is_named_after_the_robot_not_the_file(tmp_path, robot, expected):
    """Finding 2 of issue 23: the package and its C functions are named after ``<robot name>`` (made an identifier)."""
    text = (DATA / "arm.urdf").read_text(encoding="utf-8").replace('name="arm"', robot, 1)
    assert f"<robot {robot}>" in text
    path = tmp_path / "model.urdf"
    path.write_text(text, encoding="utf-8")
    model = load_urdf(path)
    assert model.name == expected and model.source == "URDF file model.urdf"
    header, source = backend("c").file_names(model)[:2]
    assert (header, source) == (f"c/{expected}.h", f"c/{expected}.c")


def test_a_bundled_robot_keeps_its_example_name(tmp_path):
    """The user names a bundled example (``sls generate ur5``): that name stays, whatever ``<robot name>`` says."""
    text = (Path(sls.__file__).parent / "examples" / "ur5.urdf").read_text(encoding="utf-8")
    assert '<robot name="ur5"' in text
    renamed = load_urdf("ur5.urdf", text=text.replace('<robot name="ur5"', '<robot name="universal_robot"'))
    assert renamed.name == "universal_robot"
    assert sls.load_example("ur5").name == "ur5"


def test_a_toml_urdf_table_is_named_after_the_toml_file(tmp_path):
    """A TOML model file is named after itself, a [urdf] table's too (``--name`` names it otherwise)."""
    (tmp_path / "arm.urdf").write_text((DATA / "arm.urdf").read_text().replace('name="arm"', 'name="robot_arm"', 1))
    (tmp_path / "mine.toml").write_text('[urdf]\nfile = "arm.urdf"\n')
    assert sls.load_toml(tmp_path / "mine.toml").name == "mine"
    assert load_urdf(tmp_path / "arm.urdf").name == "robot_arm"
