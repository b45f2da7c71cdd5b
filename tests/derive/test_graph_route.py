"""3-D energy models from sympy.physics.mechanics on the graph route: regrouping T keeps every number.

References that do not share sls's code path: sympy's ``KanesMethod`` on the same bodies (its mass
matrix and forcing evaluated numerically) and the graph route without the regrouping.
"""

from __future__ import annotations

import random
import sys

import numpy as np
import pytest
import sympy as sp
from conftest import REPO, build

if str(REPO) not in sys.path:  # the benchmarks package lives in the checkout, beside tests/ (not installed)
    sys.path.insert(0, str(REPO))
from benchmarks import energy3d  # noqa: E402
from sls import arrays, derive
from sls.algebra.graph import Graph
from sls.readers import load_example
from sls.readers.nlink import nlink_pendulum, relative_chain


def _rel_err(have, want) -> float:
    have, want = np.asarray(have, dtype=float), np.asarray(want, dtype=float)
    return float(np.abs(have - want).max() / max(1.0, np.abs(want).max()))


def test_every_named_array_says_what_the_graph_routes_build_for_it():
    """The graph routes' table of steps covers exactly the arrays function_arrays names, in their order."""
    from sls.derive.graph_route import NEEDS_BY_ARRAY, GraphTerms
    from sls.derive.named_arrays import ARRAY_NAMES, DIRECTION_ARRAYS, FRAME_ARRAYS, REGRESSOR_ARRAYS, SPEED_ARRAYS

    assert tuple(NEEDS_BY_ARRAY) == ARRAY_NAMES + SPEED_ARRAYS + FRAME_ARRAYS + REGRESSOR_ARRAYS + DIRECTION_ARRAYS
    assert {step for steps in NEEDS_BY_ARRAY.values() for step in steps} <= set(GraphTerms.ORDER)


def test_collect_products_writes_rotational_energy_as_squares_and_keeps_T():
    model = energy3d.pendulum3d_model(3)
    graph = Graph()
    dq = [graph.symbol(s) for s in model.dq]
    T = graph.from_sympy(model.T)
    (collected,) = graph.collect_products([T], dq)
    assert graph.operation_count([collected]) < 0.8 * graph.operation_count([T])
    # the first link's ½ Izz0 ω_z² comes out as one square of the rate sum
    assert any(
        str(graph.as_sympy(t)) == "Izz1*(dalpha0*cos(beta1) + dalpha1 + dbeta0*sin(alpha0)*sin(beta1))**2/2"
        for t in graph.args[collected]
    )
    symbols = sorted(model.T.free_symbols, key=lambda s: s.name)
    evaluate = graph.evaluator([T, collected], symbols)
    rng = random.Random(1)
    for _ in range(5):
        before, after = evaluate([rng.uniform(-2.0, 2.0) for _ in symbols])
        assert abs(before - after) <= 1e-12 * max(1.0, abs(before))


def test_collect_products_leaves_sums_without_rotation_products_alone():
    g = Graph()
    a, b, c = (g.symbol(s) for s in sp.symbols("a b c", real=True))
    r1, r2 = (g.symbol(s) for s in sp.symbols("r1 r2", real=True))
    plain = g.add((g.mul((r1, a)), g.mul((r2, b)), c))  # linear in the rates: collect_rates' business
    squares = g.add((g.pow(r1, g.number(sp.Integer(2))), g.mul((r1, r2, a))))
    assert g.collect_products([plain, squares], [r1, r2]) == [plain, squares]


def _arrays(model, regroup: bool, monkeypatch) -> tuple:
    if not regroup:
        monkeypatch.setattr(Graph, "collect_products", lambda self, roots, rates: list(roots))
    d = derive.derive(model, method="graph", wanted={"M", "rhs", "residual_jac", "phi"})
    monkeypatch.undo()
    names = ("M", "rhs", "residual_jac", "phi")
    flat = [arrays.flatten(d.arrays[k]) for k in names]
    outputs = [e for group in flat for e in group]
    g = d.graph
    by_name = {g.payload[n].name: g.payload[n] for n in g.reachable(outputs) if g.kind[n] == "sym"}
    names_used = [s.name for s in model.state] + sorted(set(by_name) - {s.name for s in model.state})
    symbols = [by_name.get(name, sp.Symbol(name, real=True)) for name in names_used]
    evaluate = g.evaluator(outputs, symbols)
    sizes = [len(group) for group in flat]
    return evaluate, sizes, len(symbols)


@pytest.mark.parametrize(
    "build_model", [lambda: energy3d.pendulum3d_model(3), energy3d.rattleback_model], ids=["pendulum3d", "rattleback"]
)
def test_regrouped_route_matches_the_graph_route_without_it(build_model, monkeypatch):
    model = build_model()
    before, _, count = _arrays(model, False, monkeypatch)
    after, _, _ = _arrays(model, True, monkeypatch)
    rng = random.Random(2)
    for _ in range(4):
        values = [rng.uniform(-1.0, 1.0) for _ in range(count)]
        assert _rel_err(after(values), before(values)) <= 1e-12


def _kane_qddot(kane, q, u, params, x) -> np.ndarray:
    values = {**dict(zip(q, x[: len(q)])), **dict(zip(u, x[len(q) :]))}
    M = np.array(kane.mass_matrix.xreplace(params).xreplace(values).evalf(), dtype=float)
    F = np.array(kane.forcing.xreplace(params).xreplace(values).evalf(), dtype=float).reshape(-1)
    return np.linalg.solve(M, F)


def test_pendulum3d_matches_kanes_method(tmp_path):
    system = energy3d.pendulum3d_system(3)
    kane = energy3d.kane_pendulum3d(3)
    q, u = system["q"], list(kane.u)
    pkg = build(energy3d.pendulum3d_model(3), tmp_path / "pkg")
    rng = np.random.default_rng(5)
    for _ in range(3):
        x = np.concatenate([rng.uniform(-1.0, 1.0, 6), rng.uniform(-1.0, 1.0, 6)])
        assert _rel_err(pkg.qddot_fun(x, np.zeros(len(q))), _kane_qddot(kane, q, u, system["params"], x)) <= 1e-10


def test_rattleback_matches_kanes_method(tmp_path):
    system = energy3d.rattleback_system()
    kane = energy3d.kane_rattleback()
    q, u = system["q"], list(kane.u)
    model = energy3d.rattleback_model()
    pkg = build(model, tmp_path / "pkg")
    params = system["params"]
    rolling = sp.Matrix(system["rolling"]).xreplace(params)
    dq = [qi.diff() for qi in q]
    A = rolling.jacobian(dq)
    rng = np.random.default_rng(6)
    for _ in range(3):
        qs = np.concatenate([rng.uniform(-0.4, 0.4, 3), rng.uniform(-1.0, 1.0, 2)])
        free = rng.uniform(-1.0, 1.0, 3)
        A_num = np.array(A.xreplace(dict(zip(q, qs))).evalf(), dtype=float)
        dependent = np.linalg.solve(A_num[:, 3:], -A_num[:, :3] @ free)  # rates of the contact point
        x = np.concatenate([qs, free, dependent])
        assert _rel_err(pkg.qddot_fun(x, np.zeros(len(q))), _kane_qddot(kane, q, u, params, x)) <= 1e-9


@pytest.mark.parametrize(
    "build_model",
    [lambda: relative_chain(6), lambda: nlink_pendulum(5), lambda: load_example("mobile_manipulator")],
    ids=["chain6", "nlink5", "mobile_manipulator"],
)
def test_collect_products_leaves_planar_models_untouched(build_model):
    """Their graph (and so their generated code) stays what it was: no sum of rate × rotation products to regroup."""
    model = build_model()
    graph = Graph()
    energies = [graph.from_sympy(model.T), graph.from_sympy(model.V)]
    assert graph.collect_products(energies, [graph.symbol(s) for s in model.dq]) == energies
