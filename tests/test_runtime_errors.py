"""Clear runtime errors from the generated functions (tested through their public API only)."""

from __future__ import annotations

import numpy as np
import pytest

import sls

SPHERICAL = dict(
    state=["th", "ph", "dth", "dph"],
    T="1/2*m*l^2*(dth^2 + sin(th)^2*dph^2)",
    V="-m*g*l*cos(th)",
    fric="0",
    params={"m": 1.0, "l": 1.0, "g": 9.81},
    name="spherical",
)


@pytest.fixture(scope="module")
def spherical(tmp_path_factory):
    from conftest import build

    return build(sls.model_from_strings(**SPHERICAL), tmp_path_factory.mktemp("sph") / "pkg")


def test_pd_at_sampled_states_but_singular_at_theta_zero(spherical):
    x = [0.0, 0.3, 0.1, 0.2]
    with pytest.raises(np.linalg.LinAlgError, match=r"singular or not positive definite at x = \[th=0, ph=0.3"):
        spherical.qddot_fun(x, [0.0, 0.0])
    with pytest.raises(np.linalg.LinAlgError, match="th=0"):
        spherical.linearized_model(x, [0.0, 0.0])
    # batch: names the first offending state
    X = np.array([[0.5, 0.0, 0.0, 0.0], [0.0, 0.7, 0.0, 0.0]])
    with pytest.raises(np.linalg.LinAlgError, match=r"ph=0.7"):
        spherical.qddot_fun(X, [0.0, 0.0])
    # elsewhere it works
    assert spherical.qddot_fun([0.5, 0.0, 0.0, 0.0], [0.0, 0.0]).shape == (2,)


@pytest.mark.parametrize("function", ["qddot_fun", "linearized_model", "M_fun", "tau_fun"])
@pytest.mark.parametrize(
    ("x", "second", "pattern"),
    [
        ([0.5, 0.1, 0.0], [0.0, 0.0], r"x must have length 4"),
        ([[0.5, 0.1, 0.0]], [0.0, 0.0], r"x must have length 4"),
        (0.5, [0.0, 0.0], r"x must have length 4"),
        ([0.5, 0.1, 0.0, 0.0], [0.0], r"must have length 2"),
        ([0.5, 0.1, 0.0, 0.0], [[0.0, 0.0, 0.0]], r"must have length 2"),
        ([0.5, np.nan, 0.0, 0.0], [0.0, 0.0], r"x must be finite"),
        ([0.5, 0.1, np.inf, 0.0], [0.0, 0.0], r"x must be finite"),
        ([[0.5, 0.1, 0.0, 0.0], [0.5, 0.1, -np.inf, 0.0]], [0.0, 0.0], r"x must be finite"),
        ([0.5, 0.1, 0.0, 0.0], [np.nan, 0.0], r"must be finite"),
        ([0.5, 0.1, 0.0, 0.0], [[0.0, 0.0], [np.inf, 0.0]], r"must be finite"),
        ([[0.5, 0.1, 0.0, 0.0]] * 2, [[0.0, 0.0]] * 3, r"do not broadcast"),
    ],
)
def test_bad_arguments_raise_value_error(spherical, function, x, second, pattern):
    f = getattr(spherical, function)
    if function == "M_fun":
        if "x must" not in pattern:
            return
        call = lambda: f(x)  # noqa: E731
    else:
        call = lambda: f(x, second)  # noqa: E731
    with pytest.raises(ValueError, match=pattern):
        call()


def test_non_numeric_arguments(spherical):
    with pytest.raises(ValueError, match="x must be a real array of length 4"):
        spherical.M_fun("abcd")
    with pytest.raises(ValueError, match="x must be a real array of length 4.*got complex values"):
        spherical.M_fun([1j, 0, 0, 0])
    with pytest.raises(ValueError, match="x must be a real array of length 4"):
        spherical.M_fun([[0, 0, 0, 0], [0]])


# --------------------------------------------------------------------------
# parameters, complex arguments, domain errors (scalar and batch alike)

CART = dict(
    state=["s", "th", "ds", "dth"],
    T="1/2*(mc + mp)*ds^2 + mp*l*ds*dth*cos(th) + 1/2*mp*l^2*dth^2",
    V="mp*g*l*cos(th)",
    fric=["b*ds", "0"],
    inputs=["F"],
    forces=["F", "0"],
    params={"mc": 1.0, "mp": 0.1, "l": 0.5, "g": 9.81, "b": 0.2},
    name="cart",
)
#: A potential with a logarithm: defined for q > 0 only.
LOG_WELL = dict(state=["q", "dq"], T="1/2*m*dq^2", V="k*(q - log(q))", fric="0", params={"m": 1.0, "k": 2.0}, name="logwell")


@pytest.fixture(scope="module")
def cart(tmp_path_factory):
    from conftest import build

    return build(sls.model_from_strings(**CART), tmp_path_factory.mktemp("cart") / "pkg")


@pytest.fixture(scope="module")
def log_well(tmp_path_factory):
    from conftest import build

    return build(sls.model_from_strings(**LOG_WELL), tmp_path_factory.mktemp("log") / "pkg")


X0 = np.array([0.1, 0.2, 0.3, -0.1])
BATCH = np.array([X0, X0 + 0.1, X0 - 0.2])


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf, np.array([1.0, np.nan])])
@pytest.mark.parametrize("function", ["qddot_fun", "M_fun", "linearized_model", "T_fun", "xdot_fun"])
@pytest.mark.parametrize("x", [X0, BATCH])
def test_non_finite_parameter_raises_naming_it(cart, value, function, x):
    f = getattr(cart, function)
    args = (x,) if function in ("M_fun", "T_fun") else (x, [0.5])
    with pytest.raises(ValueError, match="parameter 'mp' must be finite"):
        f(*args, mp=value)


@pytest.mark.parametrize("value", [1 + 2j, np.complex128(0.1), np.array([0.1, 0.2 + 1j])])
def test_complex_parameter_raises_naming_it(cart, value):
    with pytest.raises(ValueError, match="parameter 'l' must be real"):
        cart.qddot_fun(X0, [0.0], l=value)


@pytest.mark.parametrize("value", ["0.5", None, [1.0, "a"], {"g": 1}])
def test_non_numeric_parameter_raises_naming_it(cart, value):
    with pytest.raises(ValueError, match="parameter 'g' must be a finite real number"):
        cart.M_fun(X0, g=value)


def test_integer_numpy_and_sympy_parameters_are_numbers(cart):
    import sympy

    expected = cart.qddot_fun(X0, [0.5], mp=2.0, l=1.0)
    for mp, l in ((2, 1), (np.float32(2), np.int64(1)), (sympy.Integer(2), sympy.Float(1.0)), (np.array(2.0), 1.0)):
        got = cart.qddot_fun(X0, [0.5], mp=mp, l=l)
        assert got.dtype == float and got.shape == (2,)
        np.testing.assert_allclose(got, expected, rtol=1e-15)


@pytest.mark.parametrize("function", ["qddot_fun", "M_fun", "tau_fun", "linearized_model", "xdot_fun"])
def test_complex_state_is_refused_not_cast(cart, function):
    f = getattr(cart, function)
    second = {"qddot_fun": [0.0], "tau_fun": [0.0, 0.0], "linearized_model": [0.0], "xdot_fun": [0.0]}
    args = lambda x: (x,) if function == "M_fun" else (x, second[function])  # noqa: E731
    for x in (X0 + 1e-20j, list(X0 + 1e-20j), BATCH + 0j):
        with pytest.raises(ValueError, match="got complex values: the generated code computes in real arithmetic"):
            f(*args(x))
    if function != "M_fun":
        with pytest.raises(ValueError, match="must be a real array of length .* got complex values"):
            f(X0, np.asarray(second[function]) + 1j)


def test_column_vector_is_refused_with_a_hint(cart):
    with pytest.raises(ValueError, match=r"got shape \(4, 1\): a column vector; pass a flat vector \(x.ravel\(\)\)"):
        cart.qddot_fun(X0.reshape(4, 1), [0.0])
    with pytest.raises(ValueError, match=r"x must have length 4"):
        cart.M_fun(X0.reshape(1, 4).T)


@pytest.mark.parametrize("function", ["qddot_fun", "V_fun", "linearized_model", "xdot_fun", "phi_jac_fun"])
def test_domain_error_names_function_and_state_for_one_state_and_a_batch(log_well, function):
    f = getattr(log_well, function)
    call = (lambda x: f(x)) if function.endswith(("V_fun", "jac_fun")) else (lambda x: f(x, [0.0]))  # noqa: E731
    bad = [-0.5, 0.25] if function == "V_fun" else [0.0, 0.25]  # log(-0.5); 1/q at q = 0
    name = "qddot_fun" if function == "xdot_fun" else function
    pattern = rf"{name} is not defined at x = \[q={bad[0]:g}, dq=0.25\]: "
    with pytest.raises(ValueError, match=pattern):
        call(bad)
    with pytest.raises(ValueError, match=pattern):  # the batch names the same state, no NaN rows
        call(np.array([[1.0, 0.0], bad, [2.0, 0.0]]))
    with pytest.raises(ValueError, match=pattern):
        call(np.array([[[1.0, 0.0]], [bad]]))
    result = call(np.array([[1.0, 0.0], [2.0, 0.5]]))
    assert all(np.isfinite(part).all() for part in (result if isinstance(result, tuple) else (result,)))


def test_domain_error_is_a_value_error_without_warnings(log_well):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="V_fun is not defined"):
            log_well.V_fun(np.array([[1.0, 0.0], [-1.0, 0.0]]))


# --------------------------------------------------------------------------
# array-valued parameters sweep in one call


def test_array_parameter_sweeps_against_one_state(cart):
    masses = np.array([0.05, 0.1, 0.5])
    swept = cart.qddot_fun(X0, [0.5], mp=masses)
    assert swept.shape == (3, 2)
    for k, mp in enumerate(masses):
        np.testing.assert_allclose(swept[k], cart.qddot_fun(X0, [0.5], mp=mp), rtol=1e-13)
    A, B = cart.linearized_model(X0, [0.5], mp=masses)
    assert A.shape == (3, 4, 4) and B.shape == (3, 4, 1)
    np.testing.assert_allclose(A[2], cart.linearized_model(X0, [0.5], mp=0.5)[0], rtol=1e-12)
    M = cart.M_fun(X0, mp=masses, l=np.array([[0.5], [1.0]]))  # two parameters: a (2, 3) grid
    assert M.shape == (2, 3, 2, 2)
    np.testing.assert_allclose(M[1, 0], cart.M_fun(X0, mp=0.05, l=1.0), rtol=1e-13)
    assert cart.T_fun(X0, mc=masses).shape == (3,)
    assert cart.xdot_fun(X0, [0.5], mp=masses).shape == (3, 4)


def test_array_parameter_pairs_with_a_batch_elementwise(cart):
    masses = np.array([0.05, 0.1, 0.5])
    got = cart.qddot_fun(BATCH, [0.5], mp=masses)
    assert got.shape == (3, 2)
    for k in range(3):
        np.testing.assert_allclose(got[k], cart.qddot_fun(BATCH[k], [0.5], mp=masses[k]), rtol=1e-13)
    with pytest.raises(ValueError, match=r"parameter arrays \(mp \(2,\)\) do not broadcast against the batch shape \(3,\) of x"):
        cart.qddot_fun(BATCH, [0.5], mp=np.array([0.1, 0.2]))


def test_array_parameter_with_a_chunked_batch(cart):
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (20000, 4))
    masses = rng.uniform(0.05, 1.0, 20000)
    got = cart.qddot_fun(X, [0.5], mp=masses)
    for k in (0, 8191, 8192, 19999):
        np.testing.assert_allclose(got[k], cart.qddot_fun(X[k], [0.5], mp=masses[k]), rtol=1e-12)


def test_array_parameter_at_a_singular_value_names_the_state(cart):
    with pytest.raises(np.linalg.LinAlgError, match="singular or not positive definite"):
        cart.qddot_fun(X0, [0.5], mp=np.array([0.1, 0.0]))


# --------------------------------------------------------------------------
# xdot_fun: the right-hand side solve_ivp wants


def test_xdot_fun_stacks_qdot_and_qddot(cart):
    np.testing.assert_array_equal(cart.xdot_fun(X0, [0.5]), np.concatenate([X0[2:], cart.qddot_fun(X0, [0.5])]))
    got = cart.xdot_fun(BATCH, [[0.5], [0.0], [1.0]], l=0.7)
    assert got.shape == (3, 4)
    np.testing.assert_array_equal(got[:, :2], BATCH[:, 2:])
    np.testing.assert_array_equal(got[:, 2:], cart.qddot_fun(BATCH, [[0.5], [0.0], [1.0]], l=0.7))
    assert cart.xdot_fun(X0, np.zeros((5, 1))).shape == (5, 4)  # u batch against one state


def test_xdot_fun_drives_solve_ivp(cart):
    from scipy.integrate import solve_ivp

    sol = solve_ivp(lambda t, x: cart.xdot_fun(x, [0.0], b=0.0), (0, 1), X0, rtol=1e-10, atol=1e-12)
    energy = cart.T_fun(sol.y.T) + cart.V_fun(sol.y.T)
    assert sol.success and np.ptp(energy) < 1e-7
