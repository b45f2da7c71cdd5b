"""Properties of the generated functions checked numerically, without any symbolic reference.

Central finite differences against every Jacobian and against (A, B);
skew-symmetry of Ṁ − 2C; energy conservation and dissipation in simulation;
batches against per-state loops; shapes; required parameters; and that the
generated package runs without sympy, jinja2, click or sls installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from systems import SYSTEM_NAMES, systems

import sls

FD_STEP = 1e-6
FD_TOL = 1e-6

#: Every function of x alone, with its shape given n and m.
X_FUNCTIONS = {
    "M_fun": lambda n, m: (n, n),
    "M_jac_fun": lambda n, m: (n, n, 2 * n),
    "C_fun": lambda n, m: (n, n),
    "C_jac_fun": lambda n, m: (n, n, 2 * n),
    "phi_fun": lambda n, m: (n,),
    "phi_jac_fun": lambda n, m: (n, 2 * n),
    "fric_fun": lambda n, m: (n,),
    "fric_jac_fun": lambda n, m: (n, 2 * n),
    "input_matrix_fun": lambda n, m: (n, m),
    "input_matrix_jac_fun": lambda n, m: (n, m, 2 * n),
    "T_fun": lambda n, m: (),
    "V_fun": lambda n, m: (),
}


def close(got, expected, tol, what):
    got, expected = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != {expected.shape}"
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol * scale, err_msg=what)


def central_difference(f, x, step=FD_STEP):
    """∂f/∂x by central differences, derivative index last: shape f(x).shape + (len(x),)."""
    x = np.asarray(x, dtype=float)
    columns = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = step
        columns.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * step))
    return np.stack(columns, axis=-1)


def states(name, count=3, seed=0):
    system = systems()[name]
    rng = np.random.default_rng(seed)
    return [system.sample_state(rng) for _ in range(count)]


# --------------------------------------------------------------------------
# finite differences


@pytest.mark.parametrize("name", SYSTEM_NAMES)
def test_jacobians_match_finite_differences(name, system_package):
    pkg = system_package(name)
    params = systems()[name].sample_params(np.random.default_rng(11))
    for x in states(name):
        for base in ("M", "C", "phi", "fric", "input_matrix"):
            f = getattr(pkg, f"{base}_fun")
            jac = getattr(pkg, f"{base}_jac_fun")
            close(
                jac(x, **params),
                central_difference(lambda y, f=f: f(y, **params), x),
                FD_TOL,
                f"{name} {base}_jac_fun vs FD",
            )


@pytest.mark.parametrize("name", SYSTEM_NAMES)
def test_linearization_matches_finite_differences(name, system_package):
    pkg = system_package(name)
    system = systems()[name]
    n, m = system.n, system.m
    rng = np.random.default_rng(12)
    for x in states(name):
        u = rng.normal(size=m)
        A, B = pkg.linearized_model(x, u)
        assert A.shape == (2 * n, 2 * n) and B.shape == (2 * n, m)

        def f(state, inp):
            return np.concatenate([state[n:], pkg.qddot_fun(state, inp)])

        close(A, central_difference(lambda y, u=u: f(y, u), x), FD_TOL, f"{name} A vs FD of qddot_fun")
        close(B, central_difference(lambda v, x=x: f(x, v), u), FD_TOL, f"{name} B vs FD of qddot_fun")


@pytest.mark.parametrize("name", SYSTEM_NAMES)
def test_mdot_minus_2c_is_skew_symmetric(name, system_package):
    pkg = system_package(name)
    n = systems()[name].n
    for x in states(name, seed=13):
        dq = x[n:]
        Mdot = pkg.M_jac_fun(x)[:, :, :n] @ dq  # Σ_i ∂M/∂q_i q̇_i
        # an independent Ṁ: the derivative of M along the motion q + t q̇
        Mdot_fd = (
            pkg.M_fun(np.concatenate([x[:n] + FD_STEP * dq, dq]))
            - pkg.M_fun(np.concatenate([x[:n] - FD_STEP * dq, dq]))
        ) / (2 * FD_STEP)
        close(Mdot, Mdot_fd, FD_TOL, f"{name} Mdot from M_jac_fun vs FD")
        N = Mdot - 2 * pkg.C_fun(x)
        scale = max(1.0, np.abs(Mdot).max(), np.abs(pkg.C_fun(x)).max())
        assert np.abs(N + N.T).max() <= 1e-12 * scale, f"{name}: Mdot - 2C is not skew-symmetric at x={x}"
        # the Christoffel form also gives Mdot = C + Cᵀ
        close(pkg.C_fun(x) + pkg.C_fun(x).T, Mdot, 1e-12, f"{name} C + C' = Mdot")


# --------------------------------------------------------------------------
# energy


@pytest.mark.parametrize("name", SYSTEM_NAMES)
def test_power_balance(name, system_package):
    """d(T + V)/dt along ẋ = [q̇; q̈(x, u)] equals q̇ᵀ(B_u u − fric)."""
    pkg = system_package(name)
    system = systems()[name]
    n = system.n
    rng = np.random.default_rng(14)
    for x in states(name, seed=15):
        u = rng.normal(size=system.m)
        xdot = np.concatenate([x[n:], pkg.qddot_fun(x, u)])

        def energy(y):
            return pkg.T_fun(y) + pkg.V_fun(y)

        dE = (energy(x + FD_STEP * xdot) - energy(x - FD_STEP * xdot)) / (2 * FD_STEP)
        power = x[n:] @ (pkg.input_matrix_fun(x) @ u - pkg.fric_fun(x))
        scale = max(1.0, np.abs(xdot).max() * max(abs(pkg.T_fun(x)), abs(pkg.V_fun(x)), 1.0))
        assert abs(dE - power) <= FD_TOL * scale, f"{name}: dE/dt = {dE} but qdot'(B_u u - fric) = {power}"


def simulate(pkg, system, x0, params, t_end=3.0):
    n, u = system.n, np.zeros(system.m)

    def f(t, x):
        return np.concatenate([x[n:], pkg.qddot_fun(x, u, **params)])

    sol = solve_ivp(f, (0.0, t_end), x0, method="DOP853", rtol=1e-10, atol=1e-10, dense_output=True)
    assert sol.success, sol.message
    X = sol.sol(np.linspace(0.0, t_end, 400)).T
    E = pkg.T_fun(X, **params) + pkg.V_fun(X, **params)  # batch call
    assert E.shape == (400,)
    return X, E


CONSERVATIVE = [name for name in SYSTEM_NAMES if systems()[name].frictionless or name == "double_pendulum"]


@pytest.mark.parametrize("name", CONSERVATIVE)
def test_energy_is_conserved_without_friction(name, system_package):
    pkg = system_package(name)
    system = systems()[name]
    x0 = states(name, count=1, seed=16)[0]
    X, E = simulate(pkg, system, x0, system.frictionless)
    assert np.abs(np.diff(X, axis=0)).max() > 1e-3, "the system should move"
    scale = max(abs(E[0]), np.abs(pkg.T_fun(X, **system.frictionless)).max())
    drift = np.abs(E - E[0]).max()
    assert drift <= 1e-7 * scale, f"{name}: energy drifts by {drift:.3g} (scale {scale:.3g})"


#: The spherical pendulum is left out: damping drives it into its coordinate singularity θ = 0 (hanging straight down).
DISSIPATIVE = [name for name in SYSTEM_NAMES if systems()[name].frictionless and name != "spherical_pendulum"]


@pytest.mark.parametrize("name", DISSIPATIVE)
def test_energy_decreases_with_friction(name, system_package):
    pkg = system_package(name)
    system = systems()[name]
    x0 = states(name, count=1, seed=17)[0]
    params = {key: 5 * value for key, value in system.params.items() if key in system.frictionless}  # strong damping
    X, E = simulate(pkg, system, x0, params)
    scale = max(abs(E[0]), 1.0)
    assert np.diff(E).max() <= 1e-9 * scale, f"{name}: energy increases by {np.diff(E).max():.3g} with friction"
    assert E[-1] < E[0] - 1e-3 * scale, f"{name}: energy did not decrease ({E[0]} -> {E[-1]})"


def test_viscous_damping_rate_of_pendulum(system_package):
    """Pendulum with b: dE/dt = −b q̇² along a simulated trajectory."""
    pkg = system_package("pendulum")
    system = systems()["pendulum"]
    X, E = simulate(pkg, system, np.array([1.0, 0.0]), {}, t_end=2.0)
    t = np.linspace(0.0, 2.0, 400)
    dE = np.gradient(E, t)
    expected = -0.1 * X[:, 1] ** 2
    np.testing.assert_allclose(dE[2:-2], expected[2:-2], atol=2e-3 * np.abs(expected).max())


# --------------------------------------------------------------------------
# batches and shapes


def batch_states(system, shape, seed):
    rng = np.random.default_rng(seed)
    return np.array([system.sample_state(rng) for _ in range(int(np.prod(shape)))]).reshape(shape + (2 * system.n,))


@pytest.mark.parametrize("name", SYSTEM_NAMES)
@pytest.mark.parametrize("batch", [(5,), (2, 3)], ids=["5", "2x3"])
def test_batch_equals_loop(name, batch, system_package):
    pkg = system_package(name)
    system = systems()[name]
    n, m = system.n, system.m
    X = batch_states(system, batch, seed=18)
    rng = np.random.default_rng(19)
    U = rng.normal(size=batch + (m,))
    Q = rng.normal(size=batch + (n,))
    params = system.sample_params(rng)
    index = list(np.ndindex(*batch))
    for fname, shape in X_FUNCTIONS.items():
        f = getattr(pkg, fname)
        got = f(X, **params)
        assert got.shape == batch + shape(n, m), f"{name} {fname} batch shape"
        for i in index:
            np.testing.assert_allclose(
                got[i], f(X[i], **params), rtol=1e-12, atol=1e-12, err_msg=f"{name} {fname} at {i}"
            )
    got = pkg.qddot_fun(X, U, **params)
    got_tau = pkg.tau_fun(X, Q, **params)
    A, B = pkg.linearized_model(X, U, **params)
    assert got.shape == batch + (n,) and got_tau.shape == batch + (n,)
    assert A.shape == batch + (2 * n, 2 * n) and B.shape == batch + (2 * n, m)
    for i in index:
        np.testing.assert_allclose(got[i], pkg.qddot_fun(X[i], U[i], **params), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(got_tau[i], pkg.tau_fun(X[i], Q[i], **params), rtol=1e-12, atol=1e-12)
        A_i, B_i = pkg.linearized_model(X[i], U[i], **params)
        np.testing.assert_allclose(A[i], A_i, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(B[i], B_i, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["double_pendulum", "cart_pole", "pendulum"])
def test_constant_entries_broadcast(name, system_package):
    """Outputs that are constant (identity B_u, zero q̇-half of M_jac, zero fric) fill the whole batch."""
    pkg = system_package(name)
    system = systems()[name]
    n = system.n
    X = batch_states(system, (2, 3), seed=20)
    B_u = pkg.input_matrix_fun(X)
    np.testing.assert_array_equal(B_u, np.broadcast_to(pkg.input_matrix_fun(X[0, 0]), B_u.shape))
    np.testing.assert_array_equal(pkg.M_jac_fun(X)[..., n:], 0.0)
    np.testing.assert_array_equal(pkg.input_matrix_jac_fun(X), 0.0)
    if name == "double_pendulum":
        np.testing.assert_array_equal(pkg.fric_fun(X), np.zeros((2, 3, n)))
        np.testing.assert_array_equal(pkg.fric_jac_fun(X), np.zeros((2, 3, n, 2 * n)))
    if name == "pendulum":
        np.testing.assert_array_equal(pkg.M_fun(X), np.full((2, 3, 1, 1), 1.0))
        np.testing.assert_array_equal(pkg.M_fun(X, m=2.0, l=3.0), np.full((2, 3, 1, 1), 18.0))


@pytest.mark.parametrize("name", ["two_link_arm", "cart_pole"])
def test_input_broadcasting(name, system_package):
    pkg = system_package(name)
    system = systems()[name]
    n, m = system.n, system.m
    rng = np.random.default_rng(21)
    X = batch_states(system, (5,), seed=22)
    U = rng.normal(size=(5, m))
    u = U[0]
    # batch of states, one input
    np.testing.assert_allclose(pkg.qddot_fun(X, u), [pkg.qddot_fun(xi, u) for xi in X], rtol=1e-10, atol=1e-12)
    # one state, batch of inputs
    np.testing.assert_allclose(pkg.qddot_fun(X[0], U), [pkg.qddot_fun(X[0], ui) for ui in U], rtol=1e-10, atol=1e-12)
    A, B = pkg.linearized_model(X[0], U)
    assert A.shape == (5, 2 * n, 2 * n) and B.shape == (5, 2 * n, m)
    np.testing.assert_allclose(A[3], pkg.linearized_model(X[0], U[3])[0], rtol=1e-10, atol=1e-12)
    # outer product through broadcasting: (2, 1, 2n) with (3, m) -> (2, 3)
    X2 = X[:2, None, :]
    U3 = U[:3]
    got = pkg.qddot_fun(X2, U3)
    assert got.shape == (2, 3, n)
    for i in range(2):
        for j in range(3):
            np.testing.assert_allclose(got[i, j], pkg.qddot_fun(X[i], U[j]), rtol=1e-10, atol=1e-12)
    tau = pkg.tau_fun(X2, rng.normal(size=(3, n)))
    assert tau.shape == (2, 3, n)
    # plain lists work too
    np.testing.assert_allclose(pkg.qddot_fun(list(X[1]), list(u)), pkg.qddot_fun(X[1], u))


@pytest.mark.parametrize("name", SYSTEM_NAMES)
def test_shapes_of_every_function(name, system_package):
    pkg = system_package(name)
    system = systems()[name]
    n, m = system.n, system.m
    x = states(name, count=1, seed=23)[0]
    for fname, shape in X_FUNCTIONS.items():
        value = getattr(pkg, fname)(x)
        if shape(n, m) == ():
            assert isinstance(value, float), f"{fname} should return a float"
        else:
            assert isinstance(value, np.ndarray) and value.shape == shape(n, m), f"{name} {fname}"
            assert value.dtype == np.float64
    assert pkg.qddot_fun(x, np.zeros(m)).shape == (n,)
    assert pkg.tau_fun(x, np.zeros(n)).shape == (n,)
    A, B = pkg.linearized_model(x, np.zeros(m))
    assert A.shape == (2 * n, 2 * n) and B.shape == (2 * n, m)
    assert pkg.N_DOF == n and pkg.N_INPUTS == m
    assert len(pkg.STATE) == 2 * n and len(pkg.INPUTS) == m
    assert set(pkg.PARAMS) == set(system.params)


def test_missing_required_parameter_raises_type_error_naming_it(tmp_path):
    from conftest import build

    model = sls.model_from_strings(
        state=["q", "dq"],
        T="1/2*m*ell^2*dq^2",
        V="m*g*ell*(1 - cos(q))",
        fric=["b*dq"],
        params={"m": 1.0, "g": 9.81, "b": 0.1},
    )
    assert model.params["ell"] is None
    pkg = build(model, tmp_path / "pkg")
    assert pkg.PARAMS["ell"] is None
    x, u = [0.1, 0.2], [0.0]
    calls = {
        "M_fun": lambda **p: pkg.M_fun(x, **p),
        "phi_fun": lambda **p: pkg.phi_fun(x, **p),
        "fric_fun": lambda **p: pkg.fric_fun(x, **p),
        "T_fun": lambda **p: pkg.T_fun(x, **p),
        "qddot_fun": lambda **p: pkg.qddot_fun(x, u, **p),
        "linearized_model": lambda **p: pkg.linearized_model(x, u, **p),
        "tau_fun": lambda **p: pkg.tau_fun(x, [1.0], **p),
    }
    for call in calls.values():
        with pytest.raises(TypeError, match="ell"):
            call()
        call(ell=0.5)  # given, it works
    assert pkg.M_fun(x, ell=0.5)[0, 0] == pytest.approx(0.25)
    assert pkg.qddot_fun(x, u, ell=2.0)[0] == pytest.approx((-9.81 * 2.0 * np.sin(0.1) - 0.1 * 0.2) / 4.0)


def test_bad_arguments_raise_value_error(system_package):
    pkg = system_package("double_pendulum")
    with pytest.raises(ValueError, match="length 4"):
        pkg.M_fun([0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="finite"):
        pkg.qddot_fun([0.0, np.nan, 0.0, 0.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="length 2"):
        pkg.qddot_fun([0.0, 0.0, 0.0, 0.0], [0.0])


# --------------------------------------------------------------------------
# the generated package stands alone


def test_generated_package_runs_without_sympy_jinja2_click_or_sls(system_package, tmp_path):
    from conftest import build

    folder = tmp_path / "standalone_arm"
    build(systems()["two_link_arm"].make_model(), folder)
    x, u = [0.3, -0.2, 0.1, 0.0], [0.5, -0.1]
    expected = build(systems()["two_link_arm"].make_model(), tmp_path / "other").qddot_fun(x, u)
    script = textwrap.dedent(
        f"""
        import json
        import sys
        for blocked in ("sympy", "jinja2", "click", "sls", "scipy"):
            sys.modules[blocked] = None
        sys.path.insert(0, {str(tmp_path)!r})
        import numpy as np
        import standalone_arm as arm
        qddot = arm.qddot_fun({x!r}, {u!r})
        A, B = arm.linearized_model({x!r}, {u!r})
        assert A.shape == (4, 4) and B.shape == (4, 2)
        assert arm.M_fun(np.zeros((3, 4))).shape == (3, 2, 2)
        assert not any(name.startswith(("sympy", "jinja2", "click", "sls")) and sys.modules[name] is not None
                       for name in sys.modules), "a blocked module was imported"
        print(json.dumps(qddot.tolist()))
        """
    )
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60
    )
    assert result.returncode == 0, result.stderr
    np.testing.assert_allclose(json.loads(result.stdout), expected, rtol=1e-15)
