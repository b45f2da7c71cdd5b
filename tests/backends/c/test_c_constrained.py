"""The C target (``--target c``) on constrained models: the structured solve in C (``c/<name>_constrained.c``).

References that share no code with the C solve: the Python target's package (numpy's solves on its own kernels;
every function, single states and batches, to 1e-12) for the four-bar (holonomic constraints), a rolling disc
(velocity constraints), an arm written with generalized speeds and a holonomic constraint, and a unit-quaternion
attitude (M only semi-definite); Pinocchio's ``constraintDynamics`` with four 3-D rigid contacts for Solo-12 standing
on its feet (``vdot_fun`` and ``contact_forces_fun``, 1e-8), and ``sls lqr`` / ``sls simulate`` holding it after a
push. The errors are the Python target's; the standalone C99 compiles with strict flags.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import agree, import_package
from systems import ARM_SPEEDS, ROLLING_DISC

import sls

CC = os.environ.get("CC") or "cc"
STRICT = ["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror"]
TOL = 1e-12

pytestmark = pytest.mark.skipif(shutil.which(CC.split()[0]) is None, reason=f"no C compiler ({CC})")

#: The arm in speeds with its tip's height held.
ARM_SPEEDS_HELD = {**ARM_SPEEDS, "constraints": ["l1*sin(q1) + l2*sin(q2) - 0.3"], "stabilization": 5.0}
#: A unit quaternion's attitude, driven by body torques: M = 4 E'IE is singular along q (the augmented solve).
QUATERNION_TOML = """\
state = ["q0", "q1", "q2", "q3", "dq0", "dq1", "dq2", "dq3"]
T = '''2*(I1*(-q1*dq0 + q0*dq1 + q3*dq2 - q2*dq3)^2 + I2*(-q2*dq0 - q3*dq1 + q0*dq2 + q1*dq3)^2
  + I3*(-q3*dq0 + q2*dq1 - q1*dq2 + q0*dq3)^2)'''
V = "0"
fric = "0"
constraints = ["q0^2 + q1^2 + q2^2 + q3^2 - 1"]

[params]
I1 = 1.0
I2 = 2.0
I3 = 3.0
"""

#: The free-flyer's helpers (the Python target's code in both packages).
HELPERS = {"integrate", "difference", "normalize", "to_mujoco", "from_mujoco"}
#: The C kernel of (x, u, qddot, lam) the constrained derivatives call: in the C header, not a Python function of the C
#: package (its values reach Python through linearized_model, checked here, and contact_forces_jac_fun).
C_ONLY = {"constrained_residual_jac_fun"}
#: The functions of (x, u).
OF_INPUTS = {
    "qddot_fun",
    "vdot_fun",
    "linearized_model",
    "xdot_fun",
    "multipliers_fun",
    "contact_forces_fun",
    "contact_forces_jac_fun",
}


def models() -> dict:
    return {
        "four_bar": lambda: sls.load_example("four_bar"),
        "rolling_disc": lambda: sls.model_from_strings(**ROLLING_DISC),
        "arm_speeds": lambda: sls.model_from_strings(**ARM_SPEEDS_HELD),
        "quaternion": lambda: sls.load_toml("quaternion.toml", text=QUATERNION_TOML),
    }


def pair(model: sls.Model, folder: Path, method: str = "auto") -> tuple:
    sls.generate(model, folder / "py", method=method)
    sls.generate(model, folder / "c", method=method, target="c")
    return import_package(folder / "py"), import_package(folder / "c")


def arguments(name: str, package, x: np.ndarray, rng) -> tuple:
    if name in OF_INPUTS:
        return x, rng.normal(size=x.shape[:-1] + (package.N_INPUTS,))
    if name == "tau_fun":
        return x, rng.normal(size=x.shape[:-1] + (package.N_DOF,))
    return (x,)


def every_function_agrees(py, c, states: np.ndarray, seed: int = 5, tol: float = TOL) -> None:
    names = [name for name in py.__all__ if name not in HELPERS | C_ONLY]
    assert names == [name for name in c.__all__ if name not in HELPERS]
    rng = np.random.default_rng(seed)
    for name in names:
        for x in states:
            args = arguments(name, py, x, rng)
            agree(getattr(c, name)(*args), getattr(py, name)(*args), f"{name} at {x}", tol)
        args = arguments(name, py, states, rng)  # a batch
        agree(getattr(c, name)(*args), getattr(py, name)(*args), f"{name}, a batch", tol)


@pytest.mark.parametrize("method", ["expanded", "graph"])
@pytest.mark.parametrize("name", list(models()))
def test_every_function_equals_the_python_target(name, method, tmp_path):
    if name == "arm_speeds" and method == "graph":
        pytest.skip("generalized speeds are derived on the expanded route")
    model = models()[name]()
    py, c = pair(model, tmp_path, method)
    rng = np.random.default_rng(3)
    states = rng.uniform(-1.5, 1.5, (12, len(py.STATE)))
    if name == "quaternion":
        states[:, :4] /= np.linalg.norm(states[:, :4], axis=1, keepdims=True)
    every_function_agrees(py, c, states)
    assert (tmp_path / "c" / "c" / f"{model.name}_constrained.c").is_file()


def test_standalone_sources_compile_strictly(tmp_path):
    sls.generate(sls.load_example("four_bar"), tmp_path / "c", target="c")
    for source in ("four_bar.c", "four_bar_constrained.c"):
        result = subprocess.run(
            [*CC.split(), *STRICT, "-c", str(tmp_path / "c" / "c" / source), "-o", str(tmp_path / (source + ".o"))],
            capture_output=True,
            text=True,
        )
        assert result.returncode == 0, result.stderr


def test_errors_are_the_python_targets(tmp_path):
    """Dependent constraints (two velocity constraints alike at th = 0) and an M not positive definite on the
    allowed velocities (the quaternion at q = 0): the same exception and message in both targets."""
    base = dict(state=["th", "y", "z", "dth", "dy", "dz"], T="1/2*(dth^2 + dy^2 + dz^2)", V="0", fric="0")
    model = sls.model_from_strings(**base, velocity_constraints=["th*dth - dy", "th*dth - dy + th*dz"])
    py, c = pair(model, tmp_path / "dependent")
    x = np.array([0.0, 0.1, 0.2, 0.3, 0.4, 0.5])
    quaternion = pair(sls.load_toml("quaternion.toml", text=QUATERNION_TOML), tmp_path / "quaternion")
    for packages, state in (((py, c), x), (quaternion, np.zeros(8))):
        for name in ("qddot_fun", "multipliers_fun", "linearized_model", "xdot_fun"):
            messages = []
            for package in packages:
                with pytest.raises(np.linalg.LinAlgError) as error:
                    getattr(package, name)(state, np.zeros(package.N_INPUTS))
                messages.append(str(error.value))
                with pytest.raises(np.linalg.LinAlgError):
                    getattr(package, name)(np.stack([state, state]), np.zeros(package.N_INPUTS))
            assert messages[0] == messages[1], name


def test_constrained_models_are_generated_from_the_command_line(tmp_path):
    from click.testing import CliRunner

    from sls.cli.app import main

    result = CliRunner().invoke(main, ["generate", "four_bar", "--target", "c", "--out", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 0, result.output
    package = import_package(tmp_path / "out")
    assert package.N_CONSTRAINTS == 2 and "multipliers_fun" in package.__all__
