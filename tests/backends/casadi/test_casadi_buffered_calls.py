"""The CasADi target's call path: a numeric call with numpy arguments runs through ``Function.buffer()``
(templates/casadi/_runtime.py.j2, ``Function``) and must return exactly what CasADi's own call returns.

Reference: the same graph as a plain ``casadi.Function`` (``Function.deserialize`` of the generated one), called
with the same arguments; results compared entry for entry, with their type, shape and sparsity.
"""

from __future__ import annotations

import copy
import pickle
import re
import threading

import numpy as np
import pytest
from conftest import import_package

import sls

ca = pytest.importorskip("casadi")


@pytest.fixture(scope="module")
def cart_pole(tmp_path_factory):
    folder = tmp_path_factory.mktemp("buffered") / "pkg"
    sls.generate(sls.load_example("cart_pole"), folder, target="casadi")
    return import_package(folder)


def plain(function):
    """The generated function's graph as a plain ``casadi.Function`` (CasADi's own call path)."""
    made = ca.Function.deserialize(function.serialize())
    assert type(made) is ca.Function
    return made


def same(got, want) -> None:
    """``got`` is what CasADi returned: the same type, shape, sparsity and entries (bit for bit)."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
        return
    assert type(got) is type(want) is ca.DM
    assert got.sparsity() == want.sparsity()
    np.testing.assert_array_equal(np.asarray(got.nonzeros()), np.asarray(want.nonzeros()))


STATE = np.array([0.3, -2.1, 0.7, 1.9])


@pytest.mark.parametrize(
    "x, u, p",
    [
        (STATE, np.array([0.4]), np.array([1.0, 0.2, 0.5, 9.81])),  # numpy vectors
        (STATE.reshape(4, 1), 0.4, np.array([[1.0, 0.2, 0.5, 9.81]])),  # a column, a number, a row
        (STATE[::-1][::-1], np.array([2]), None),  # a strided view, an integer array, the parameters' DM
        (np.asarray(STATE, dtype=np.float32), np.float64(0.4), None),  # float32, a numpy scalar
        (ca.DM(STATE), np.array([0.4]), None),  # DM and numpy mixed
    ],
)
def test_numeric_calls_return_what_casadi_returns(cart_pole, x, u, p):
    p = cart_pole.parameters(mp=0.3) if p is None else p
    for name in ("qddot_fun", "xdot_fun", "tau_fun", "M_fun", "linearized_model", "C_jac_fun"):
        function = getattr(cart_pole, name)
        second = {"u": u, "qddot": np.array([0.1, -0.2])}.get(function.name_in()[1]) if function.n_in() == 3 else None
        args = (x, p) if second is None else (x, second, p)
        same(function(*args), plain(function)(*args))


def test_calls_casadi_keeps(cart_pole):
    """Symbolic, keyword, all-DM and malformed calls go to CasADi: the same results, the same errors."""
    function, reference = cart_pole.qddot_fun, plain(cart_pole.qddot_fun)
    p = cart_pole.parameters()
    x = ca.SX.sym("x", 4)
    assert isinstance(function(x, 0.1, p), ca.SX)
    assert isinstance(function(ca.MX.sym("x", 4), 0.1, p), ca.MX)
    got = function(x=STATE, u=0.4, p=p)
    assert set(got) == {"qddot"}
    same(got["qddot"], reference(x=STATE, u=0.4, p=p)["qddot"])
    same(function(ca.DM(STATE), ca.DM(0.4), p), reference(ca.DM(STATE), ca.DM(0.4), p))
    same(function(list(STATE), 0.4, p), reference(list(STATE), 0.4, p))
    same(function(ca.DM(4, 1), 0.4, p), reference(ca.DM(4, 1), 0.4, p))  # a sparse DM: structural zeros
    same(function(STATE, 0.4, 9.81), reference(STATE, 0.4, 9.81))  # a number broadcast to a vector input
    malformed = [
        (np.ones(3), 0.4, p),
        (np.ones((2, 2)), 0.4, p),
        (np.ones(4) + 1j, 0.4, p),
        ("x", 0.4, p),
        (ca.DM.ones(2, 2), 0.4, p),
        (STATE,),
    ]
    for bad in malformed:
        with pytest.raises(Exception) as casadi_error:
            reference(*bad)
        with pytest.raises(type(casadi_error.value), match="^" + re.escape(str(casadi_error.value)) + "$"):
            function(*bad)


def test_results_and_arguments_are_not_shared(cart_pole):
    """A result is a new DM: later calls do not change it; a caller's array changed after a call changes nothing."""
    function = cart_pole.qddot_fun
    p = cart_pole.parameters()
    x = STATE.copy()
    first = function(x, np.array([0.4]), p)
    kept = np.asarray(first.nonzeros())
    x[:] = 0.0
    function(x, np.array([-3.0]), p)
    np.testing.assert_array_equal(np.asarray(first.nonzeros()), kept)
    same(first, plain(function)(STATE, np.array([0.4]), p))


def test_pickles_as_a_plain_casadi_function_and_copies_with_their_own_buffers(cart_pole):
    """Pickled, a function needs no generated package to load (a plain ``casadi.Function``); a copy is the
    package's class with its own bound arrays."""
    function = cart_pole.xdot_fun
    p = cart_pole.parameters()
    reference = plain(function)
    loaded = pickle.loads(pickle.dumps(function))
    assert type(loaded) is ca.Function
    same(loaded(STATE, 0.4, p), reference(STATE, 0.4, p))
    for made in (copy.deepcopy(function), copy.copy(function)):
        assert type(made) is type(function)
        first = made(STATE, 0.4, p)
        function(-STATE, -0.4, p)
        same(first, reference(STATE, 0.4, p))
        same(made(-STATE, 0.4, p), reference(-STATE, 0.4, p))


def test_threads_calling_at_once_get_their_own_results(cart_pole):
    function, reference = cart_pole.qddot_fun, plain(cart_pole.qddot_fun)
    p = np.asarray(cart_pole.parameters().nonzeros())
    rng = np.random.default_rng(7)
    work = [(rng.uniform(-2, 2, 4), rng.uniform(-1, 1, 1)) for _ in range(64)]
    wrong: list = []

    def run(jobs):
        for _ in range(50):
            for x, u in jobs:
                got = np.asarray(function(x, u, p).nonzeros())
                if not np.array_equal(got, np.asarray(reference(x, u, p).nonzeros())):
                    wrong.append((x, u))

    threads = [threading.Thread(target=run, args=(work[k::4],)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not wrong
