"""The derivation (sls/derive/): derived terms against an independent Euler–Lagrange reference (tests/systems.py).

The reference builds L = T − V with the coordinates as sympy functions of time,
takes d/dt ∂L/∂q̇ − ∂L/∂q + fric, and never calls into sls; the generated
functions must reproduce it at random states, random accelerations and random
parameter values to ~1e-9 relative.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import sympy as sp
from conftest import REFERENCE, import_package
from sympy.physics.mechanics import LagrangesMethod, dynamicsymbols
from systems import SYSTEM_NAMES, reference, systems

import sls

RTOL = 1e-9
N_STATES = 4


def assert_close(got, expected, what):
    got, expected = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != {expected.shape}"
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=RTOL * scale, err_msg=what)


def cases(name, seed):
    """(x, params) pairs: the defaults (params = {}) and random parameter values."""
    system = systems()[name]
    rng = np.random.default_rng(seed)
    for i in range(N_STATES):
        params = {} if i == 0 else system.sample_params(rng)
        yield system.sample_state(rng), params


def test_the_systems_cover_what_they_should():
    """≥ 5 systems, one with n ≥ 4, nonlinear friction, a state-dependent input map, an underactuated one."""
    all_systems = systems().values()
    assert len(all_systems) >= 5
    assert any(s.n >= 4 for s in all_systems)
    assert any(any(not sp.diff(f, v, 2).is_zero for f in s.fric for v in s.dq) for s in all_systems)
    assert any(any(f.free_symbols & set(s.q) for f in s.forces) for s in all_systems)
    assert any(0 < len(s.inputs) < s.n for s in all_systems)


@pytest.mark.parametrize("name", SYSTEM_NAMES)
def test_euler_lagrange_equals_inverse_dynamics(name, system_package):
    """tau_fun and M q̈ + C q̇ + φ + fric (from the generated parts) equal d/dt ∂L/∂q̇ − ∂L/∂q + fric."""
    pkg, ref = system_package(name), reference(name)
    rng = np.random.default_rng(1)
    for x, params in cases(name, 2):
        qdd = rng.normal(size=ref.n) * 3
        expected = ref("el", x, params, qdd)
        dq = x[ref.n :]
        assert_close(pkg.tau_fun(x, qdd, **params), expected, f"{name} tau_fun params={params}")
        assembled = (
            pkg.M_fun(x, **params) @ qdd
            + pkg.C_fun(x, **params) @ dq
            + pkg.phi_fun(x, **params)
            + pkg.fric_fun(x, **params)
        )
        assert_close(assembled, expected, f"{name} M qdd + C dq + phi + fric params={params}")


@pytest.mark.parametrize("name", SYSTEM_NAMES)
def test_terms(name, system_package):
    """M (both from d/dt ∂L/∂q̇ and from ∂²T/∂q̇²), C (Christoffel), φ, fric, B_u, T, V."""
    pkg, ref = system_package(name), reference(name)
    for x, p in cases(name, 3):
        M = pkg.M_fun(x, **p)
        assert_close(M, ref("M_el", x, p), f"{name} M vs Euler-Lagrange")
        assert_close(M, ref("M", x, p), f"{name} M vs Hessian of T")
        assert_close(pkg.C_fun(x, **p), ref("C", x, p), f"{name} C")
        assert_close(pkg.phi_fun(x, **p), ref("phi", x, p), f"{name} phi")
        assert_close(pkg.fric_fun(x, **p), ref("fric", x, p), f"{name} fric")
        assert_close(pkg.input_matrix_fun(x, **p), ref("B_u", x, p), f"{name} B_u")
        assert_close(pkg.T_fun(x, **p), ref("T", x, p), f"{name} T")
        assert_close(pkg.V_fun(x, **p), ref("V", x, p), f"{name} V")
        # T = 1/2 q̇ᵀ M q̇
        dq = x[ref.n :]
        assert_close(pkg.T_fun(x, **p), 0.5 * dq @ M @ dq, f"{name} T = 1/2 dq' M dq")


@pytest.mark.parametrize("name", SYSTEM_NAMES)
def test_jacobians(name, system_package):
    pkg, ref = system_package(name), reference(name)
    for x, p in cases(name, 4):
        assert_close(pkg.M_jac_fun(x, **p), ref("M_jac", x, p), f"{name} M_jac")
        assert_close(pkg.C_jac_fun(x, **p), ref("C_jac", x, p), f"{name} C_jac")
        assert_close(pkg.phi_jac_fun(x, **p), ref("phi_jac", x, p), f"{name} phi_jac")
        assert_close(pkg.fric_jac_fun(x, **p), ref("fric_jac", x, p), f"{name} fric_jac")
        assert_close(pkg.input_matrix_jac_fun(x, **p), ref("B_u_jac", x, p), f"{name} input_matrix_jac")


@pytest.mark.parametrize("name", SYSTEM_NAMES)
def test_forward_dynamics_and_linearization(name, system_package):
    """qddot_fun against a solve of the reference equations; (A, B) against complex-step derivatives of it."""
    pkg, ref = system_package(name), reference(name)
    rng = np.random.default_rng(5)
    for x, p in cases(name, 6):
        u = rng.normal(size=ref.system.m)
        assert_close(pkg.qddot_fun(x, u, **p), ref.qddot(x, u, p), f"{name} qddot")
        A, B = pkg.linearized_model(x, u, **p)
        A_ref, B_ref = ref.linearization(x, u, p)
        assert_close(A, A_ref, f"{name} A")
        assert_close(B, B_ref, f"{name} B")


@pytest.mark.parametrize("name", SYSTEM_NAMES)
def test_single_parameter_override(name, system_package):
    """Overriding one parameter at call time (M_fun(x, m=2.0)) equals the reference with that value."""
    pkg, ref = system_package(name), reference(name)
    system = ref.system
    x = system.sample_state(np.random.default_rng(7))
    u = np.ones(system.m)
    qdd = np.linspace(-1.0, 1.0, system.n)
    for pname, default in system.params.items():
        value = 2.0 * default + 0.5
        override = {pname: value}
        assert_close(pkg.M_fun(x, **override), ref("M", x, override), f"{name} M_fun({pname}={value})")
        assert_close(pkg.tau_fun(x, qdd, **override), ref("el", x, override, qdd), f"{name} tau_fun({pname}={value})")
        assert_close(pkg.qddot_fun(x, u, **override), ref.qddot(x, u, override), f"{name} qddot_fun({pname}={value})")
        assert_close(pkg.V_fun(x, **override), ref("V", x, override), f"{name} V_fun({pname}={value})")
    # and the override actually changes something (the parameters reach the kernels); slow, so tanh does not saturate
    slow = np.concatenate([x[: system.n], 0.02 * x[system.n :]])
    changed = [
        p
        for p, d in system.params.items()
        if not np.array_equal(pkg.tau_fun(slow, qdd, **{p: 2.0 * d + 0.5}), pkg.tau_fun(slow, qdd))
    ]
    assert changed == list(system.params), (
        f"{name}: parameters without effect on tau_fun: {set(system.params) - set(changed)}"
    )


def test_pendulum_mass_override_by_hand(system_package):
    """The README's call pattern, with the expected value written out: M = m l²."""
    pkg = system_package("pendulum")
    x = [0.3, -0.4]
    assert pkg.M_fun(x, m=2.0)[0, 0] == pytest.approx(2.0 * 1.0**2, rel=1e-14)
    assert pkg.M_fun(x, m=2.0, l=0.5)[0, 0] == pytest.approx(2.0 * 0.25, rel=1e-14)
    assert pkg.phi_fun(x, m=2.0)[0] == pytest.approx(2.0 * 9.81 * np.sin(0.3), rel=1e-14)
    assert pkg.fric_fun(x, b=0.7)[0] == pytest.approx(0.7 * -0.4, rel=1e-14)


# --------------------------------------------------------------------------
# sympy.physics.mechanics.LagrangesMethod


def _lagranges_method(name):
    """Mass matrix and forcing of ``name`` from sympy.physics.mechanics, without friction."""
    system = systems()[name]
    n = system.n
    qs = dynamicsymbols(f"lq0:{n}")
    dqs = [qi.diff(dynamicsymbols._t) for qi in qs]
    sub = {**dict(zip(system.dq, dqs)), **dict(zip(system.q, qs))}
    L = (system.T - system.V).xreplace(sub)
    lm = LagrangesMethod(L, qs)
    lm.form_lagranges_equations()
    plain_q, plain_dq = sp.symbols(f"pq0:{n}"), sp.symbols(f"pdq0:{n}")
    back = {**dict(zip(dqs, plain_dq)), **dict(zip(qs, plain_q))}
    params = sorted({s for s in (system.T - system.V).free_symbols if s.name in system.params}, key=lambda s: s.name)
    args = list(plain_q) + list(plain_dq) + params
    mass = sp.lambdify(args, lm.mass_matrix.subs(back), "numpy")
    forcing = sp.lambdify(args, lm.forcing.subs(back), "numpy")
    return system, params, mass, forcing


@pytest.mark.parametrize("name", ["double_pendulum", "spherical_pendulum", "cart_pole"])
def test_lagranges_method(name, system_package):
    """M equals LagrangesMethod.mass_matrix; −(C q̇ + φ) equals its forcing (friction switched off)."""
    pkg = system_package(name)
    system, params, mass, forcing = _lagranges_method(name)
    rng = np.random.default_rng(8)
    for _ in range(3):
        x = system.sample_state(rng)
        p = {**system.sample_params(rng), **system.frictionless}
        args = [*x, *(p[s.name] for s in params)]
        assert_close(pkg.M_fun(x, **p), mass(*args), f"{name} M vs LagrangesMethod")
        dq = x[system.n :]
        bias = pkg.C_fun(x, **p) @ dq + pkg.phi_fun(x, **p) + pkg.fric_fun(x, **p)
        assert_close(-bias, np.asarray(forcing(*args), dtype=float)[:, 0], f"{name} forcing vs LagrangesMethod")


# ====================================================================================================
# ``simplify`` (``--simplify``): trigsimp on M and phi gives shorter code and the same numbers (was test_simplify.py)


FUNCTIONS = [
    "M_fun",
    "M_jac_fun",
    "C_fun",
    "C_jac_fun",
    "phi_fun",
    "phi_jac_fun",
    "fric_fun",
    "fric_jac_fun",
    "T_fun",
    "V_fun",
]


@pytest.mark.parametrize("name", ["two_link_arm", "mobile_manipulator"])
def test_simplified_code_is_shorter_and_computes_the_same(name, tmp_path):
    model = sls.load_example(name)
    sls.generate(model, tmp_path / "plain")
    sls.generate(model, tmp_path / "simple", simplify=True)
    plain, simple = import_package(tmp_path / "plain"), import_package(tmp_path / "simple")
    for module in ("M_fun", "C_jac_fun", "linearized_model"):
        assert len((tmp_path / "simple" / f"{module}.py").read_text()) < len(
            (tmp_path / "plain" / f"{module}.py").read_text()
        )
    header = (tmp_path / "simple" / "M_fun.py").read_text().splitlines()[0]
    assert header.startswith("# Generated by sls ") and "simplified" in header
    assert "simplified" not in (tmp_path / "plain" / "M_fun.py").read_text().splitlines()[0]
    rng = np.random.default_rng(7)
    n, m = model.n, model.m
    states, inputs = rng.uniform(-2, 2, (6, 2 * n)), rng.uniform(-1, 1, (6, m))
    for function in FUNCTIONS:
        np.testing.assert_allclose(
            getattr(simple, function)(states), getattr(plain, function)(states), rtol=1e-11, atol=1e-12
        )
        np.testing.assert_allclose(
            getattr(simple, function)(states[0]), getattr(plain, function)(states[0]), rtol=1e-11, atol=1e-12
        )
    np.testing.assert_allclose(
        simple.qddot_fun(states, inputs), plain.qddot_fun(states, inputs), rtol=1e-10, atol=1e-12
    )
    for a, b in zip(simple.linearized_model(states[1], inputs[1]), plain.linearized_model(states[1], inputs[1])):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_simplified_two_link_arm_matches_the_golden_values(tmp_path):
    sls.generate(sls.load_toml(REFERENCE / "two_link_arm.toml"), tmp_path / "arm", simplify=True)
    arm = import_package(tmp_path / "arm")
    for case in json.loads((REFERENCE / "two_link_arm.golden.json").read_text())["cases"]:
        x, u = np.array(case["x"]), np.array(case["u"])
        np.testing.assert_allclose(arm.M_fun(x), case["M"], rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(arm.C_jac_fun(x), case["C_jac"], rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(arm.qddot_fun(x, u), case["qddot"], rtol=1e-12, atol=1e-13)
        A, B = arm.linearized_model(x, u)
        np.testing.assert_allclose(A, case["A"], rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(B, case["B"], rtol=1e-11, atol=1e-12)


def test_simplify_changes_the_fingerprint():
    model = sls.load_example("pendulum")
    assert sls.backends.render.fingerprint(model) != sls.backends.render.fingerprint(model, simplify=True)
