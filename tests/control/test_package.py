"""The package and its arguments (sls/control/package.py): a parameter without a default value must be given, and
the message says how, in Python and on the command line."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

import sls
import sls.control as control
from sls.cli.app import main
from sls.errors import ControlError


@pytest.fixture(scope="module")
def pendulum(tmp_path_factory):
    """A pushed pendulum whose length ``ell`` has no default value (it is used in T but not given)."""
    folder = tmp_path_factory.mktemp("no_default") / "pendulum"
    model = sls.model_from_strings(
        state=["q", "dq"],
        T="1/2*m*ell^2*dq^2",
        V="m*g*ell*(1 - cos(q))",
        fric="0",
        params={"m": 1.0, "g": 9.81},
        inputs=["F"],
        forces=["F"],
        name="pendulum",
    )
    sls.generate(model, folder)
    return folder


def test_python_names_the_keyword_of_a_parameter_without_default(pendulum):
    pkg = control.load_package(pendulum)
    assert pkg.PARAMS["ell"] is None
    for call in (
        lambda: control.lqr(pkg, [0, 0]),
        lambda: control.simulate(pkg, [0.1, 0], (0, 1)),
        lambda: control.equilibrium_input(pkg, [0, 0]),
    ):
        with pytest.raises(ControlError) as caught:
            call()
        message = str(caught.value)
        assert message.startswith("parameter 'ell' has no default value; pass it as the keyword argument ell=...")
        assert "params={'ell': ...}" in message and "--param" not in message
    design = control.lqr(pkg, [0, 0], params={"ell": 0.5})
    # Independent reference: m ell^2 q'' = F - m g ell q near rest, so A = [[0, 1], [-g/ell, 0]], B = [0, 1/(m ell^2)].
    np.testing.assert_allclose(design.A, [[0, 1], [-9.81 / 0.5, 0]], rtol=1e-12)
    np.testing.assert_allclose(design.B, [[0], [1 / 0.25]], rtol=1e-12)


@pytest.mark.parametrize("command", [["lqr", "--x-eq", "0 0"], ["simulate", "--x0", "0.1 0", "--t-end", "1", "-q"]])
def test_the_command_line_names_the_param_option(pendulum, command):
    result = CliRunner().invoke(main, [command[0], str(pendulum), *command[1:]])
    assert result.exit_code == 2
    assert result.stderr == "error: parameter 'ell' has no default value; pass it with --param ell=VALUE\n"
    given = CliRunner().invoke(main, [command[0], str(pendulum), *command[1:], "--param", "ell=0.5"])
    assert given.exit_code == 0, given.stderr
