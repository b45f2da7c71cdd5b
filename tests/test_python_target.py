"""Scalar, batch and individual-function paths of the generated code agree with each other."""

from __future__ import annotations

import numpy as np
import pytest

import sls
from sls.backends import python as codegen
from sls.nlink import nlink_pendulum

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
    np.testing.assert_allclose(p.qddot_fun(good, [1.0, 0.0], k=2.0), p.qddot_fun(batch[:2], [1.0, 0.0], k=2.0)[0], **TOL)


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
        "import sys, sls; from sls.nlink import nlink_pendulum; "
        "sls.generate(nlink_pendulum(3), sys.argv[1]); sls.generate(sls.load_example('mobile_manipulator'), sys.argv[2])"
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
