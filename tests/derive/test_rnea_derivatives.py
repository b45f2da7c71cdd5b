"""The analytical derivatives of recursive Newton–Euler (:mod:`sls.derive.rnea_derivatives`) on UR5, Solo-12 and
G1 (quaternion bases): against ``pinocchio.computeRNEADerivatives``, against central differences of
``pinocchio.rnea`` along ``pinocchio.integrate`` (no sls code and no analytical derivative in the reference), and
against central differences of the tree's own Newton–Euler recursion; the tree route's ``residual_jac`` built
on them equals the reverse-mode one (friction, MJCF armature and springs included).
"""

from pathlib import Path

import numpy as np
import pytest
import sympy

from sls.derive import rnea_derivatives as rnea_derivatives_module
from sls.derive.graph_route import GraphTerms
from sls.derive.named_arrays import acceleration_symbols
from sls.derive.rnea_derivatives import handles, operation_estimate, rnea_derivatives, worth_it
from sls.derive.tree_route import TreeTerms
from sls.readers.urdf import load_urdf

pin = pytest.importorskip("pinocchio")
ROBOTS = Path(pin.__file__).resolve().parents[4] / "share" / "example-robot-data" / "robots"
CASES = {
    "UR5": ("ur_description/urdf/ur5_robot.urdf", False),
    "Solo-12": ("solo_description/robots/solo12.urdf", True),
    "G1": ("g1_description/urdf/g1_29dof_rev_1_0.urdf", True),
}
GRAVITY = 9.81


class Derivatives:
    """sls's ``τ``, ``∂τ/∂q``, ``∂τ/∂v`` of one robot, evaluated from the graph, and the Pinocchio model in sls's
    joint order."""

    def __init__(self, label: str) -> None:
        relative, floating = CASES[label]
        path = ROBOTS / relative
        self.model = load_urdf(path, floating_base=floating, name="robot")
        self.floating = floating
        terms = TreeTerms(self.model)
        terms._start()
        assert handles(terms.tree)
        graph = terms.graph
        d_q, d_v = rnea_derivatives(terms.tree, terms.dq, terms.accelerations, terms.gravity)
        tau = terms.tree.inverse_dynamics(terms.dq, terms.accelerations, terms.gravity)
        names = {str(graph.payload[k]): graph.payload[k] for k in range(len(graph.kind)) if graph.kind[k] == "sym"}
        order = [str(s) for s in (*self.model.q, *self.model.dq, *acceleration_symbols(self.model.n))] + ["g"]
        symbols = [names.get(name, sympy.Symbol(name)) for name in order]
        self.n = self.model.n
        self._derivatives = graph.evaluator([e for row in d_q + d_v for e in row], symbols)
        self._tau = graph.evaluator(tau, symbols)
        joints = [str(s) for s in self.model.q[7 if floating else 0 :]]
        self.peer = (
            pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
            if floating
            else (pin.buildModelFromUrdf(str(path)))
        )
        self.data = self.peer.createData()
        base_q, base_v = (list(range(7)), list(range(6))) if floating else ([], [])
        self.q_order = base_q + [self.peer.idx_qs[self.peer.getJointId(name)] for name in joints]
        self.v_order = base_v + [self.peer.idx_vs[self.peer.getJointId(name)] for name in joints]

    def __call__(self, q, v, a) -> tuple:
        """``(∂τ/∂q, ∂τ/∂v)`` at sls-ordered ``q`` (n_q), ``v``, ``a`` (n)."""
        values = np.array(self._derivatives([*q, *v, *a, GRAVITY]), dtype=float).reshape(2, self.n, self.n)
        return values[0], values[1]

    def tau(self, q, v, a) -> np.ndarray:
        return np.array(self._tau([*q, *v, *a, GRAVITY]), dtype=float)

    def state(self, rng) -> tuple:
        """A random ``(q, v, a)`` in Pinocchio's order and in sls's."""
        q = pin.randomConfiguration(self.peer, -np.ones(self.peer.nq), np.ones(self.peer.nq))
        v, a = rng.normal(size=self.peer.nv), rng.normal(size=self.peer.nv)
        return (q, v, a), (q[self.q_order], v[self.v_order], a[self.v_order])

    def permuted(self, matrix) -> np.ndarray:
        """A Pinocchio n × n matrix over the speeds in sls's order."""
        return np.asarray(matrix)[np.ix_(self.v_order, self.v_order)]


@pytest.fixture(scope="module", params=list(CASES))
def robot(request) -> Derivatives:
    return Derivatives(request.param)


def relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


def test_equal_pinocchios_rnea_derivatives(robot):
    rng = np.random.default_rng(1)
    for _ in range(20):
        (q, v, a), ours = robot.state(rng)
        d_q, d_v = robot(*ours)
        expected_q, expected_v, _ = pin.computeRNEADerivatives(robot.peer, robot.data, q, v, a)
        assert relative(d_q, robot.permuted(expected_q)) < 1e-9
        assert relative(d_v, robot.permuted(expected_v)) < 1e-9


def test_equal_central_differences_of_pinocchios_rnea(robot):
    """The reference is Pinocchio's inverse dynamics alone, differentiated numerically along ``integrate``
    (the tangent perturbation of the base in its own frame)."""
    rng = np.random.default_rng(2)
    h = 1e-6
    (q, v, a), ours = robot.state(rng)
    d_q, d_v = robot(*ours)
    nv = robot.peer.nv
    columns_q, columns_v = [], []
    for k in range(nv):
        step = np.zeros(nv)
        step[k] = h
        plus = pin.rnea(robot.peer, robot.data, pin.integrate(robot.peer, q, step), v, a).copy()
        minus = pin.rnea(robot.peer, robot.data, pin.integrate(robot.peer, q, -step), v, a).copy()
        columns_q.append((plus - minus) / (2 * h))
        plus = pin.rnea(robot.peer, robot.data, q, v + step, a).copy()
        minus = pin.rnea(robot.peer, robot.data, q, v - step, a).copy()
        columns_v.append((plus - minus) / (2 * h))
    assert relative(d_q, robot.permuted(np.array(columns_q).T)) < 1e-6
    assert relative(d_v, robot.permuted(np.array(columns_v).T)) < 1e-6


def test_equal_central_differences_of_the_trees_recursion(robot):
    """Against sls's own Newton–Euler recursion (body frames, :mod:`sls.derive.rigid_body`), differentiated
    numerically; a quaternion base perturbed in its own frame (``p + R δv``, ``quat ⊗ exp(δω/2)``)."""
    rng = np.random.default_rng(3)
    h = 1e-6
    _, (q, v, a) = robot.state(rng)
    d_q, d_v = robot(q, v, a)
    n = robot.n
    for k in range(n):
        step = np.zeros(n)
        step[k] = h
        column_q = (robot.tau(_moved(robot, q, step), v, a) - robot.tau(_moved(robot, q, -step), v, a)) / (2 * h)
        column_v = (robot.tau(q, v + step, a) - robot.tau(q, v - step, a)) / (2 * h)
        assert relative(d_q[:, k], column_q) < 1e-6
        assert relative(d_v[:, k], column_v) < 1e-6


def _moved(robot: Derivatives, q, step) -> np.ndarray:
    """``q`` moved by the tangent ``step`` (the base's in its own frame, to second order exact)."""
    if not robot.floating:
        return q + step
    x, y, z, w = q[3:7]
    rotation = pin.Quaternion(w, x, y, z).toRotationMatrix()
    moved = np.array(q, dtype=float)
    moved[:3] = q[:3] + rotation @ step[:3]
    turned = pin.Quaternion(w, x, y, z) * pin.Quaternion(pin.exp3(step[3:6]))
    moved[3:7] = turned.coeffs()  # x, y, z, w
    moved[7:] = q[7:] + step[6:]
    return moved


def _residual_jacobians(model, monkeypatch) -> tuple:
    """The tree route's ``residual_jac`` (analytical, even where reverse mode is cheaper) and the reverse-mode one,
    as functions of all symbols."""
    found = []
    for analytical in (True, False):
        terms = TreeTerms(model)
        monkeypatch.setattr(rnea_derivatives_module, "worth_it", lambda tree, operations, taken=analytical: taken)
        if not analytical:
            terms._residual_jac = lambda terms=terms: GraphTerms._residual_jac(terms)  # type: ignore[method-assign]
        terms.dynamics(("residual_jac",))
        graph = terms.graph
        names = {str(graph.payload[k]): graph.payload[k] for k in range(len(graph.kind)) if graph.kind[k] == "sym"}
        order = [str(s) for s in (*model.q, *model.dq, *acceleration_symbols(model.n), *model.inputs)]
        order += list(model.params)
        symbols = [names.get(name, sympy.Symbol(name)) for name in order]
        found.append(graph.evaluator([e for row in terms.get("residual_jac") for e in row], symbols))
    return tuple(found)


@pytest.mark.parametrize("label", ["UR5", "Solo-12", "Solo-12 (Euler chart: prismatic joints)"])
def test_residual_jac_equals_reverse_mode(label, monkeypatch):
    """Along the speeds (``∂r/∂q S(q)``, as every target uses it) the rows equal the reverse-mode ones."""
    relative_path, floating = CASES[label.split(" (")[0]]
    orientation = "euler" if "Euler" in label else "quaternion"
    model = load_urdf(ROBOTS / relative_path, floating_base=floating, base_orientation=orientation, name="robot")
    _check_residual_jacobians(model, monkeypatch)


def test_residual_jac_equals_reverse_mode_with_armature_springs_friction(monkeypatch):
    pytest.importorskip("mujoco")
    import warnings

    from sls.readers.mjcf import load_mjcf

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = load_mjcf(Path(__file__).resolve().parents[1] / "data" / "mjcf" / "half_cheetah.xml")
    assert model.tree is not None and model.tree.springs != 0 and any(model.tree.armature)
    _check_residual_jacobians(model, monkeypatch)


def _check_residual_jacobians(model, monkeypatch) -> None:
    analytical, reverse = _residual_jacobians(model, monkeypatch)
    n, n_q, m = model.n, len(model.q), model.m
    rng = np.random.default_rng(4)
    S = _speed_map(model)
    for _ in range(5):
        q = rng.normal(size=n_q)
        if n_q > n:
            q[3:7] /= np.linalg.norm(q[3:7])
        values = [*q, *rng.normal(size=2 * n), *rng.normal(size=m), *(float(p) for p in model.params.values())]
        got = np.array(analytical(values), dtype=float).reshape(n, n_q + n)
        expected = np.array(reverse(values), dtype=float).reshape(n, n_q + n)
        along = S(q)
        assert relative(got[:, :n_q] @ along, expected[:, :n_q] @ along) < 1e-10
        assert relative(got[:, n_q:], expected[:, n_q:]) < 1e-10


def _speed_map(model):
    """``q ↦ S(q) = ∂q̇/∂v`` (n_q × n): the identity unless the model has generalized speeds."""
    n, n_q = model.n, len(model.q)
    if model.kinematics is None:
        return lambda q: np.eye(n)
    S = sympy.Matrix(model.kinematics).jacobian(sympy.Matrix(model.dq))
    f = sympy.lambdify(list(model.q), S, "numpy")
    return lambda q: np.array(f(*q), dtype=float).reshape(n_q, n)


def test_taken_for_floating_bases_not_for_arms():
    """Reverse mode stays on a 6-joint arm (fewer operations there); the analytical derivatives are taken for
    the floating bases, where they are far fewer."""
    taken = {}
    for label in CASES:
        relative_path, floating = CASES[label]
        terms = TreeTerms(load_urdf(ROBOTS / relative_path, floating_base=floating, name="robot"))
        terms._start()
        rows = terms.residual()
        taken[label] = worth_it(terms.tree, sum(terms.graph.operation_count([r]) for r in rows))
        assert operation_estimate(terms.tree) > 0
    assert taken == {"UR5": False, "Solo-12": True, "G1": True}
