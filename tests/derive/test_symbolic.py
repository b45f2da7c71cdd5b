"""sls.derive.symbolic: M, C, phi, fric and B_u as sympy matrices (for LaTeX, textbooks, further sympy work)."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import sls
from sls import derive as derive_module


def test_cart_pole_matrices_are_the_textbook_ones():
    eom = sls.symbolic(sls.load_example("cart_pole"))
    s, th, ds, dth, F, mc, mp, ell, g = (
        eom.symbols[name] for name in ("s", "th", "ds", "dth", "F", "mc", "mp", "l", "g")
    )
    assert isinstance(eom.M, sp.MutableDenseMatrix) or isinstance(eom.M, sp.MatrixBase)
    assert sp.simplify(
        eom.M - sp.Matrix([[mc + mp, mp * ell * sp.cos(th)], [mp * ell * sp.cos(th), mp * ell**2]])
    ) == sp.zeros(2)
    assert sp.simplify(eom.C - sp.Matrix([[0, -mp * ell * dth * sp.sin(th)], [0, 0]])) == sp.zeros(2)
    assert sp.simplify(eom.phi - sp.Matrix([0, -mp * g * ell * sp.sin(th)])) == sp.zeros(2, 1)
    assert eom.fric == sp.zeros(2, 1) and eom.B_u == sp.Matrix([1, 0])
    assert eom.x == sp.Matrix([s, th, ds, dth]) and eom.u == sp.Matrix([F])
    assert eom.params == {"mc": 1.0, "mp": 0.1, "l": 0.5, "g": 9.81}
    assert r"\cos{\left(th \right)}" in sp.latex(eom.M)


def test_equations_are_lagranges_equations():
    """M q̈ + C q̇ + φ + fric − B_u u equals d/dt ∂L/∂q̇ − ∂L/∂q + fric − B_u u, computed by sympy directly."""
    from sympy.physics.mechanics import dynamicsymbols

    model = sls.load_example("double_pendulum")
    eom = sls.symbolic(model)
    t = sp.Symbol("t")
    functions = [dynamicsymbols(s.name) for s in model.q]
    to_time = {**dict(zip(model.q, functions)), **{d: f.diff(t) for d, f in zip(model.dq, functions)}}
    L = (model.T - model.V).xreplace(to_time)
    lagrange = sp.Matrix([L.diff(f.diff(t)).diff(t) - L.diff(f) for f in functions])
    ddq = sp.Matrix([sp.Symbol(f"dd{s.name}", real=True) for s in model.q])
    back = {f.diff(t, 2): a for f, a in zip(functions, ddq)}
    back.update({f.diff(t): d for f, d in zip(functions, model.dq)})
    back.update(dict(zip(functions, model.q)))
    expected = lagrange.subs(back) + eom.fric - eom.B_u * eom.u
    assert sp.simplify(eom.equations() - expected) == sp.zeros(model.n, 1)


def test_matches_the_generated_functions(tmp_path):
    from conftest import import_package

    model = sls.load_example("acrobot")
    sls.generate(model, tmp_path / "pkg")
    pkg = import_package(tmp_path / "pkg")
    eom = sls.symbolic(model)
    args = list(eom.x) + [eom.symbols[p] for p in model.params]
    x = np.array([0.3, -0.4, 0.5, 0.2])
    values = list(x) + list(model.params.values())
    for name, matrix in (
        ("M_fun", eom.M),
        ("C_fun", eom.C),
        ("phi_fun", eom.phi),
        ("fric_fun", eom.fric),
        ("input_matrix_fun", eom.B_u),
    ):
        got = np.array(sp.lambdify(args, matrix)(*values), dtype=float).reshape(getattr(pkg, name)(x).shape)
        np.testing.assert_allclose(got, getattr(pkg, name)(x), rtol=1e-12, atol=1e-12, err_msg=name)


def test_graph_route_results_are_plain_sympy():
    """A model large enough for the graph route still gives self-contained sympy matrices, equal to the expanded
    route's."""
    from sls.readers.nlink import relative_chain

    model = relative_chain(6)
    assert derive_module.choose_method(model) == "graph"
    eom = sls.symbolic(model)
    assert all(not s.name.startswith("_") for s in eom.M.free_symbols | eom.C.free_symbols)
    expanded = derive_module.derive(model, method="expanded")
    point = {s: 0.3 + 0.1 * k for k, s in enumerate(sorted(eom.M.free_symbols | eom.C.free_symbols, key=str))}
    for got, want in ((eom.M, expanded.mass_matrix), (eom.C, expanded.coriolis)):
        difference = (got - sp.Matrix(want)).xreplace(point).evalf()
        assert max(abs(v) for v in difference) < 1e-12


def test_simplify_and_dynamicsymbols():
    from sympy.physics.mechanics import dynamicsymbols

    q = dynamicsymbols("q")
    m, ell = sp.symbols("m l")
    T = m * ell**2 * q.diff() ** 2 * (sp.sin(q) ** 2 + sp.cos(q) ** 2) / 2
    model = sls.model_from_sympy(T, 0, 0, [q, q.diff()], params={m: 1, ell: 1})
    assert sls.symbolic(model, simplify=True).M == sp.Matrix([[ell**2 * m]]).xreplace(
        {ell: sp.Symbol("l", real=True), m: sp.Symbol("m", real=True)}
    )


def test_not_a_model():
    with pytest.raises(sls.ModelTypeError, match="symbolic: expected a model"):
        sls.symbolic("cart_pole")
