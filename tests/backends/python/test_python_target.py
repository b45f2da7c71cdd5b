"""The Python target (sls/backends/python/): the numpy package it writes, tested through its public functions.

Scalar, batch and individual-function paths of the generated code agree with each other; the runtime
(``_runtime.py``) refuses bad arguments and parameters with clear errors naming the function and the state;
user names that the generated code also uses change no number. The package against references:
test_properties.py, test_golden.py; the C and MATLAB targets: test_c_target.py, test_matlab_target.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SPHERICAL

import sls
from sls.backends import python as codegen
from sls.readers import model_from_strings
from sls.readers.nlink import nlink_pendulum

TOL = dict(rtol=1e-11, atol=1e-11)


def _models():
    return {
        "mobile_manipulator": sls.load_example("mobile_manipulator"),
        "two_link_arm": sls.load_example("two_link_arm"),
        "nlink4": nlink_pendulum(4),
    }


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    from conftest import build

    root = tmp_path_factory.mktemp("codegen")
    return {name: build(model, root / name) for name, model in _models().items()}


def _samples(package, count=6, seed=3):
    rng = np.random.default_rng(seed)
    n, m = package.N_DOF, package.N_INPUTS
    X = np.hstack([rng.uniform(-np.pi, np.pi, (count, n)), rng.uniform(-2, 2, (count, n))])
    U = rng.uniform(-2, 2, (count, m))
    return X, U


@pytest.mark.parametrize("name", ["mobile_manipulator", "two_link_arm", "nlink4"])
def test_qddot_matches_solve_of_individual_functions(packages, name):
    p = packages[name]
    n = p.N_DOF
    X, U = _samples(p)
    for x, u in zip(X, U):
        M = p.M_fun(x)
        rhs = p.input_matrix_fun(x) @ u - p.C_fun(x) @ x[n:] - p.phi_fun(x) - p.fric_fun(x)
        np.testing.assert_allclose(p.qddot_fun(x, u), np.linalg.solve(M, rhs), **TOL)
        np.testing.assert_allclose(p.tau_fun(x, p.qddot_fun(x, u)), p.input_matrix_fun(x) @ u, **TOL)


@pytest.mark.parametrize("name", ["mobile_manipulator", "two_link_arm", "nlink4"])
def test_linearization_matches_individual_functions(packages, name):
    p = packages[name]
    n = p.N_DOF
    X, U = _samples(p)
    for x, u in zip(X, U):
        M = p.M_fun(x)
        qdd = p.qddot_fun(x, u)
        dq_dx = np.hstack([np.zeros((n, n)), np.eye(n)])
        drhs = (
            np.einsum("kjl,j->kl", p.input_matrix_jac_fun(x), u)
            - np.einsum("kjl,j->kl", p.C_jac_fun(x), x[n:])
            - p.C_fun(x) @ dq_dx
            - p.phi_jac_fun(x)
            - p.fric_jac_fun(x)
        )
        lower = np.linalg.solve(M, drhs - np.einsum("abl,b->al", p.M_jac_fun(x), qdd))
        A, B = p.linearized_model(x, u)
        np.testing.assert_allclose(A[n:], lower, **TOL)
        np.testing.assert_allclose(A[:n], np.hstack([np.zeros((n, n)), np.eye(n)]))
        np.testing.assert_allclose(B[n:], np.linalg.solve(M, p.input_matrix_fun(x)), **TOL)
        np.testing.assert_array_equal(B[:n], 0.0)


@pytest.mark.parametrize("name", ["mobile_manipulator", "two_link_arm", "nlink4"])
def test_batch_matches_scalar(packages, name):
    p = packages[name]
    n, m = p.N_DOF, p.N_INPUTS
    X, U = _samples(p, count=12)
    Xb, Ub = X.reshape(3, 4, 2 * n), U.reshape(3, 4, m)
    q = p.qddot_fun(Xb, Ub)
    A, B = p.linearized_model(Xb, Ub)
    assert q.shape == (3, 4, n) and A.shape == (3, 4, 2 * n, 2 * n) and B.shape == (3, 4, 2 * n, m)
    for i in range(3):
        for j in range(4):
            x, u = Xb[i, j], Ub[i, j]
            np.testing.assert_allclose(q[i, j], p.qddot_fun(x, u), **TOL)
            A1, B1 = p.linearized_model(x, u)
            np.testing.assert_allclose(A[i, j], A1, **TOL)
            np.testing.assert_allclose(B[i, j], B1, **TOL)
    for fn, shape in [(p.M_fun, (n, n)), (p.C_jac_fun, (n, n, 2 * n)), (p.phi_fun, (n,)), (p.M_jac_fun, (n, n, 2 * n))]:
        out = fn(Xb)
        assert out.shape == (3, 4) + shape
        np.testing.assert_allclose(out[2, 1], fn(Xb[2, 1]), **TOL)
    assert np.shape(p.T_fun(Xb)) == (3, 4)
    # broadcasting a single u against a batch of x, and an empty batch
    np.testing.assert_allclose(p.qddot_fun(X, U[0])[5], p.qddot_fun(X[5], U[0]), **TOL)
    assert p.qddot_fun(np.zeros((0, 2 * n)), np.zeros((0, m))).shape == (0, n)


def test_large_batch_is_chunked_and_matches(packages):
    p = packages["mobile_manipulator"]
    X, U = _samples(p, count=20000, seed=5)
    q = p.qddot_fun(X, U)
    A, B = p.linearized_model(X[:9000], U[:9000])
    for k in (0, 8191, 8192, 19999):
        np.testing.assert_allclose(q[k], p.qddot_fun(X[k], U[k]), **TOL)
    np.testing.assert_allclose(A[8500], p.linearized_model(X[8500], U[8500])[0], **TOL)
    assert q.shape == (20000, 3) and B.shape == (9000, 6, 3)


def test_scalar_outputs_are_float64_even_with_integer_parameters(packages):
    p = packages["nlink4"]
    x = np.zeros(8)
    for fn in (p.M_fun, p.phi_fun, p.C_fun, p.M_jac_fun):
        assert fn(x, m1=2, l2=3).dtype == np.float64
    assert p.qddot_fun(x, np.zeros(4), m1=2).dtype == np.float64
    np.testing.assert_allclose(p.M_fun(x, m1=2), p.M_fun(x, m1=2.0))


def _non_pd_model():
    # M = [[1, c], [c, 1]] with c = cos(q1) * k: positive definite at the sampled default k = 0.5,
    # singular where |k cos(q1)| = 1.
    return sls.model_from_strings(
        state=["q1", "q2", "dq1", "dq2"],
        T="dq1**2/2 + k*cos(q1)*dq1*dq2 + dq2**2/2",
        V="0",
        fric="0",
        params={"k": 0.5},
        name="indefinite",
    )


@pytest.mark.parametrize("method", ["expanded", "graph"])
def test_unrolled_solve_raises_linalgerror_for_non_pd_mass_matrix(generate_package, method):
    p = generate_package(_non_pd_model(), method)
    bad = np.array([0.0, 0.3, 0.1, 0.2])
    with pytest.raises(np.linalg.LinAlgError, match="q1=0"):
        p.qddot_fun(bad, [0.0, 0.0], k=2.0)
    with pytest.raises(np.linalg.LinAlgError, match="q1=0"):
        p.linearized_model(bad, [0.0, 0.0], k=1.0)  # singular: pivot exactly 0
    good = np.array([1.2, 0.3, 0.1, 0.2])
    batch = np.stack([good, good, bad, bad])
    with pytest.raises(np.linalg.LinAlgError, match="q1=0"):
        p.qddot_fun(batch, [0.0, 0.0], k=2.0)
    with pytest.raises(np.linalg.LinAlgError, match="q1=0"):
        p.linearized_model(batch, [0.0, 0.0], k=2.0)
    np.testing.assert_allclose(
        p.qddot_fun(good, [1.0, 0.0], k=2.0), p.qddot_fun(batch[:2], [1.0, 0.0], k=2.0)[0], **TOL
    )


def test_solver_is_unrolled_only_for_small_n():
    model = nlink_pendulum(2)
    kernels = codegen.kernels(sls.derive.derive(model))
    assert kernels["qddot_fun"].unrolled and kernels["linearized_model"].unrolled
    assert "np.linalg" not in "\n".join(kernels["qddot_fun"].scalar_lines)
    assert codegen.UNROLL_MAX >= 8


def test_generation_is_deterministic(tmp_path):
    import os
    import subprocess
    import sys

    code = (
        "import sys, sls; from sls.readers.nlink import nlink_pendulum; "
        "sls.generate(nlink_pendulum(3), sys.argv[1]); "
        "sls.generate(sls.load_example('mobile_manipulator'), sys.argv[2])"
    )
    outputs = []
    for seed in ("0", "12345"):
        a, b = tmp_path / f"n{seed}", tmp_path / f"m{seed}"
        env = dict(os.environ, PYTHONHASHSEED=seed)
        subprocess.run([sys.executable, "-c", code, str(a), str(b)], check=True, env=env)
        outputs.append({f"{d.name[0]}/{f.name}": f.read_text() for d in (a, b) for f in sorted(d.glob("*.py"))})
    assert outputs[0].keys() == outputs[1].keys()
    for key in outputs[0]:
        assert outputs[0][key] == outputs[1][key], key


@pytest.mark.parametrize("n", [3, 9])
def test_graph_linearization_numpy_branch_matches_the_unrolled_one(tmp_path, n):
    """The graph route's phased linearized_model: the numpy branch (taken when an unrolled pivot is <= 0,
    and always for n > 8) gives what the unrolled branch and the expanded route give."""
    from conftest import build, import_package

    model = nlink_pendulum(n)
    graph = build(model, tmp_path / "graph", "graph")
    expanded = build(model, tmp_path / "expanded", "expanded")
    source = (tmp_path / "graph" / "linearized_model.py").read_text()
    assert ("_factored = True" in source) == (n <= codegen.UNROLL_MAX)
    forced = tmp_path / "forced"
    forced.mkdir()
    for f in (tmp_path / "graph").iterdir():
        if f.is_file():
            (forced / f.name).write_text(f.read_text().replace("_factored = True", "_factored = False"))
    numpy_branch = import_package(forced)
    rng = np.random.default_rng(n)
    X = rng.uniform(-1.5, 1.5, (4, 2 * n))
    U = rng.uniform(-1, 1, (4, n))
    for package in (graph, numpy_branch):
        for x, u in zip(X, U):
            for got, want in zip(package.linearized_model(x, u), expanded.linearized_model(x, u)):
                np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
        for got, want in zip(package.linearized_model(X, U), expanded.linearized_model(X, U)):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


# ====================================================================================================
# clear runtime errors from the generated functions, through their public API only (was test_runtime_errors.py)


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
def test_bad_states_and_inputs_raise_value_error_saying_what_is_wrong(spherical, function, x, second, pattern):
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
LOG_WELL = dict(
    state=["q", "dq"], T="1/2*m*dq^2", V="k*(q - log(q))", fric="0", params={"m": 1.0, "k": 2.0}, name="logwell"
)


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
    values = ((2, 1), (np.float32(2), np.int64(1)), (sympy.Integer(2), sympy.Float(1.0)), (np.array(2.0), 1.0))
    for mp, length in values:
        got = cart.qddot_fun(X0, [0.5], mp=mp, l=length)
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
    with pytest.raises(
        ValueError, match=r"parameter arrays \(mp \(2,\)\) do not broadcast against the batch shape \(3,\) of x"
    ):
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


# ====================================================================================================
# user names that the generated code also uses must not change any number (was test_names.py)
#
# States and inputs may be named like the functions' positional arguments (``x``, ``u``, ``qddot``: a cart
# position called ``x`` is common), and parameters may use any name the templates use internally (``M``,
# ``rhs``, ``out``, ``k``, ``A``, ``B``, ``n``) because every template local starts with ``_``, which user
# names never do.


CART_POLE = dict(
    T="1/2*({M}+{m})*{dx}^2 + {m}*{l}*cos({th})*{dx}*{dth} + 1/2*{m}*{l}^2*{dth}^2",
    V="{m}*{g}*{l}*cos({th})",
    fric=["{k}*{dx}", "{n}*{dth}"],
    forces=["{u}", "0"],
)
ODD = dict(x="x", th="qddot", dx="dx", dth="dth", u="u", M="M", m="rhs", l="out", g="A", k="k", n="n")
PLAIN = dict(x="p", th="th", dx="dp", dth="dth", u="F", M="mc", m="mp", l="ell", g="grav", k="b1", n="b2")


def _model(names: dict) -> sls.Model:
    fill = lambda text: text.format(**names)  # noqa: E731
    return model_from_strings(
        state=[names["x"], names["th"], names["dx"], names["dth"]],
        T=fill(CART_POLE["T"]),
        V=fill(CART_POLE["V"]),
        fric=[fill(f) for f in CART_POLE["fric"]],
        inputs=[names["u"]],
        forces=[fill(f) for f in CART_POLE["forces"]],
        params={names["M"]: 1.5, names["m"]: 0.3, names["l"]: 0.8, names["g"]: 9.81, names["k"]: 0.2, names["n"]: 0.05},
    )


def test_names_shared_with_generated_code_give_the_same_numbers(generate_package):
    odd = generate_package(_model(ODD))
    plain = generate_package(_model(PLAIN))
    rng = np.random.default_rng(3)
    states = rng.uniform(-1, 1, (4, 4))
    inputs = rng.uniform(-1, 1, (4, 1))
    for function in (
        "M_fun",
        "C_fun",
        "phi_fun",
        "fric_fun",
        "M_jac_fun",
        "C_jac_fun",
        "fric_jac_fun",
        "T_fun",
        "V_fun",
    ):
        for x in states:
            np.testing.assert_allclose(getattr(odd, function)(x), getattr(plain, function)(x), rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(
            getattr(odd, function)(states), getattr(plain, function)(states), rtol=1e-13, atol=1e-14
        )
    for x, u in zip(states, inputs):
        np.testing.assert_allclose(odd.qddot_fun(x, u), plain.qddot_fun(x, u), rtol=1e-13)
        np.testing.assert_allclose(odd.tau_fun(x, x[2:]), plain.tau_fun(x, x[2:]), rtol=1e-13)
        for a, b in zip(odd.linearized_model(x, u), plain.linearized_model(x, u)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(odd.qddot_fun(states, inputs), plain.qddot_fun(states, inputs), rtol=1e-13)
    # parameters keep their names as keyword arguments
    np.testing.assert_allclose(odd.M_fun(states[0], M=3.0), plain.M_fun(states[0], mc=3.0), rtol=1e-14)


@pytest.mark.parametrize("name", ["x", "u", "qddot"])
def test_argument_names_cannot_be_parameters(name):
    with pytest.raises(sls.ModelError, match=f"'{name}' cannot be a parameter"):
        model_from_strings(state=["q", "dq"], T=f"1/2*{name}*dq^2", V="0", fric="0", params={name: 1.0})


@pytest.mark.parametrize("name", ["two_link_arm", "four_bar"])
def test_modules_rendered_as_their_code_is_built_are_the_package_rendered_at_once(name, tmp_path):
    """The pipeline renders each module as soon as its code is built (the backend's finisher, so a big robot's
    printed code is freed module by module); rendering every module at the end gives the same files, byte for
    byte, and the name check still reads the templates."""
    from sls import derive

    model = sls.load_example(name)
    report = sls.generate(model, tmp_path / "streamed")
    dynamics = derive.derive(model, False, "auto")
    backend = codegen.PythonBackend()
    at_once = backend.render(model, codegen.kernels(dynamics), False, dynamics.method)
    assert sorted(at_once) == report.files
    for file_name, text in at_once.items():
        assert (tmp_path / "streamed" / file_name).read_text() == text, file_name
    finish = backend.finisher(model, False, dynamics.method)
    streamed = {key: finish(key, code) for key, code in codegen.kernels(dynamics).items()}
    assert any(isinstance(code, codegen.files.Rendered) for code in streamed.values())
    assert backend.render(model, streamed, False, dynamics.method) == at_once


def test_packed_solve_matches_numpy_and_falls_back(tmp_path):
    """A large model's scalar qddot_fun hands M's packed upper triangle to LAPACK's dppsv (scipy installed): the
    same accelerations as the batch path's numpy solve and as numpy's fallback, and a mass matrix that is not
    positive definite (a negative mass) still raises LinAlgError naming the state."""
    import sys

    from conftest import build

    package = build(nlink_pendulum(12), tmp_path / "chain", "graph")
    module = sys.modules[package.__name__ + ".qddot_fun"]
    assert "_packed(_PACK_ENTRIES(" in (tmp_path / "chain" / "qddot_fun.py").read_text()
    rng = np.random.default_rng(4)
    X, U = rng.uniform(-1.5, 1.5, (3, 24)), rng.uniform(-1, 1, (3, 12))
    batch = package.qddot_fun(X, U)
    scalar = [package.qddot_fun(x, u) for x, u in zip(X, U)]
    assert module._DPPSV  # scipy is a test dependency: the LAPACK call was taken
    np.testing.assert_allclose(scalar, batch, rtol=1e-10, atol=1e-10)
    module._DPPSV = False  # as without scipy
    try:
        np.testing.assert_allclose([package.qddot_fun(x, u) for x, u in zip(X, U)], batch, rtol=1e-10, atol=1e-10)
    finally:
        module._DPPSV = None
    with pytest.raises(np.linalg.LinAlgError, match="singular or not positive definite"):
        package.qddot_fun(X[0], U[0], m12=-50.0)
