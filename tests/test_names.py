"""User names that the generated code also uses must not change any number.

States and inputs may be named like the functions' positional arguments
(``x``, ``u``, ``qddot``: a cart position called ``x`` is common), and
parameters may use any name the templates use internally (``M``, ``rhs``,
``out``, ``k``, ``A``, ``B``, ``n``) because every template local starts with
``_``, which user names never do.
"""

from __future__ import annotations

import numpy as np
import pytest

import sls
from sls.model import model_from_strings

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
    for function in ("M_fun", "C_fun", "phi_fun", "fric_fun", "M_jac_fun", "C_jac_fun", "fric_jac_fun", "T_fun", "V_fun"):
        for x in states:
            np.testing.assert_allclose(getattr(odd, function)(x), getattr(plain, function)(x), rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(getattr(odd, function)(states), getattr(plain, function)(states), rtol=1e-13, atol=1e-14)
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
