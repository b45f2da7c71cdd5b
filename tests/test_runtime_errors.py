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
    with pytest.raises(TypeError, match="x must be a real array of length 4"):
        spherical.M_fun([1j, 0, 0, 0])
    with pytest.raises(ValueError, match="x must be a real array of length 4"):
        spherical.M_fun([[0, 0, 0, 0], [0]])
