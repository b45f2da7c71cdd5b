"""Simulation (sls/control/simulation.py): the integrator by name in Python and on the command line, the stiff
solvers fed the closed loop's analytic Jacobian, and one line when an explicit method meets a stiff model."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from click.testing import CliRunner

import sls
import sls.control as control
from sls.cli.app import main
from sls.cli.values import METHODS as CLI_METHODS
from sls.control.simulation import StiffnessWarning
from sls.errors import ControlError


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("simulation")
    sls.generate(sls.load_example("cart_pole"), root / "cart_pole")
    # Coulomb friction smoothed over 1e-5 rad/s: at rest, d(fric)/d(dq) = c/1e-5 makes the model stiff.
    sticky = sls.model_from_strings(
        state=["q", "dq"],
        T="1/2*m*l^2*dq^2",
        V="m*g*l*(1 - cos(q))",
        fric=["c*tanh(dq/1e-5)"],
        params={"m": 1.0, "l": 1.0, "g": 9.81, "c": 1.0},
        inputs=["F"],
        forces=["F"],
        name="sticky",
    )
    sls.generate(sticky, root / "sticky")
    return {"cart_pole": root / "cart_pole", "sticky": root / "sticky"}


def _rhs(pkg, controller):
    def f(x):
        u = np.zeros(pkg.N_INPUTS) if controller is None else np.atleast_1d(controller(0.0, x))
        return np.concatenate([x[pkg.N_DOF :], pkg.qddot_fun(x, u)])

    return f


def _central_differences(f, x, h=1e-6):
    columns = []
    for j in range(len(x)):
        step = np.zeros(len(x))
        step[j] = h
        columns.append((f(x + step) - f(x - step)) / (2 * h))
    return np.array(columns).T


def test_closed_loop_jacobian_is_the_derivative_of_the_loop(folders):
    pkg = control.load_package(folders["cart_pole"])
    design = control.lqr(pkg, np.zeros(4), Q=[10, 10, 1, 1], R=1)

    def saturated(t, x):  # a callable without a gain: its derivative by differences
        return [np.tanh(-(design.K @ x)[0] / 5.0) * 5.0]

    x = np.array([0.2, 0.3, -0.4, 0.5])
    for controller in (None, design, saturated):
        J = control.closed_loop_jacobian(pkg, controller)(0.0, x)
        np.testing.assert_allclose(J, _central_differences(_rhs(pkg, controller), x), rtol=1e-5, atol=1e-6)
    A, B = pkg.linearized_model(x, design(0.0, x))
    np.testing.assert_allclose(control.closed_loop_jacobian(pkg, design)(0.0, x), A - B @ design.K, rtol=1e-14)


@pytest.mark.parametrize("method", ["Radau", "BDF", "LSODA"])
def test_stiff_methods_get_the_analytic_jacobian(folders, method, monkeypatch):
    pkg = control.load_package(folders["cart_pole"])
    design = control.lqr(pkg, np.zeros(4), Q=[10, 10, 1, 1], R=1)
    x0 = [0, np.deg2rad(10), 0, 0]
    reference = control.simulate(pkg, x0, (0, 3), design, method="DOP853", rtol=1e-11, atol=1e-12, t_eval=[0, 1, 3])
    run = control.simulate(pkg, x0, (0, 3), design, method=method, t_eval=reference.t)
    assert run.success
    np.testing.assert_allclose(run.y, reference.y, atol=1e-5)
    # Where the model is stiff (LSODA switches to its stiff mode only there), the Jacobian comes from
    # linearized_model, not from differences of qddot_fun.
    sticky = control.load_package(folders["sticky"])
    calls = []
    linearized = sticky.linearized_model
    monkeypatch.setattr(sticky, "linearized_model", lambda *a, **k: calls.append(1) or linearized(*a, **k))
    run = control.simulate(sticky, [0.05, 0.0], (0, 1), method=method, t_eval=[0, 1])
    assert run.success and run.njev >= 1 and len(calls) >= run.njev


def test_an_unknown_method_is_refused(folders):
    with pytest.raises(ControlError, match="method must be one of RK45, RK23, DOP853, Radau, BDF, LSODA, got 'Euler'"):
        control.simulate(folders["cart_pole"], np.zeros(4), (0, 1), method="Euler")
    assert CLI_METHODS == control.METHODS
    result = CliRunner().invoke(main, ["simulate", str(folders["cart_pole"]), "--x0", "0 0 0 0", "--t-end", "1",
                                       "--method", "Euler"])  # fmt: skip
    assert result.exit_code == 2 and "'Euler' is not one of" in result.stderr


def test_a_stiff_model_is_named_in_one_line(folders):
    sticky = control.load_package(folders["sticky"])
    x0 = [0.05, 0.0]  # m g l sin(0.05) < c: friction holds the pendulum, dq stays within the steep band
    with pytest.warns(StiffnessWarning, match='the model is stiff: RK45 took .* method="Radau"'):
        explicit = control.simulate(sticky, x0, (0, 1), t_eval=[0, 1])
    assert explicit.hint.startswith("the model is stiff") and "\n" not in explicit.hint
    with warnings.catch_warnings():
        warnings.simplefilter("error", StiffnessWarning)
        stiff = control.simulate(sticky, x0, (0, 1), method="Radau", t_eval=[0, 1])
        assert stiff.hint is None and stiff.nfev < explicit.nfev / 20
        np.testing.assert_allclose(stiff.y[:, -1], explicit.y[:, -1], atol=1e-6)
        cart = control.simulate(folders["cart_pole"], [0, 0.1, 0, 0], (0, 5), t_eval=[0, 5])
        assert cart.hint is None

    args = ["simulate", str(folders["sticky"]), "--x0", "0.05 0", "--t-end", "1"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.stderr
    warning = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1 and "--method Radau" in warning[0] and "Traceback" not in result.stderr
    result = CliRunner().invoke(main, [*args, "--method", "Radau"])
    assert result.exit_code == 0 and "warning" not in result.stderr, result.stderr
    assert "t = 1: x = [q=0.04999" in result.output  # held by friction (a slow creep of the smooth law)
