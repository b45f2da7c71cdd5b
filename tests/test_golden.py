"""Generated functions against the independently computed golden values in tests/reference/."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import METHODS, REFERENCE

import sls

MODELS = ["pendulum", "double_pendulum", "two_link_arm"]
KEYS = ["M", "C", "phi", "fric", "M_jac", "C_jac", "phi_jac", "fric_jac", "qddot", "A", "B"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", MODELS)
def test_golden_values(name, method, generate_package):
    package = generate_package(sls.load_toml(REFERENCE / f"{name}.toml"), method)
    golden = json.loads((REFERENCE / f"{name}.golden.json").read_text())
    for case in golden["cases"]:
        x, u = np.array(case["x"]), np.array(case["u"])
        A, B = package.linearized_model(x, u)
        got = {
            "M": package.M_fun(x),
            "C": package.C_fun(x),
            "phi": package.phi_fun(x),
            "fric": package.fric_fun(x),
            "M_jac": package.M_jac_fun(x),
            "C_jac": package.C_jac_fun(x),
            "phi_jac": package.phi_jac_fun(x),
            "fric_jac": package.fric_jac_fun(x),
            "qddot": package.qddot_fun(x, u),
            "A": A,
            "B": B,
        }
        for key in KEYS:
            expected = np.array(case[key])
            assert got[key].shape == expected.shape, key
            np.testing.assert_allclose(got[key], expected, rtol=1e-12, atol=1e-12, err_msg=f"{name} {key} at x={x}")
