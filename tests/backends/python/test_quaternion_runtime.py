"""The quaternion runtimes' helpers are written once (``runtime/_quaternion_math.py``) and spliced into both
runtimes when they are copied: the runtime sources define none of them, each copied runtime defines each of them
once and needs numpy alone.

The copied runtimes' numbers (integrate, difference, the MuJoCo layout) are checked against Pinocchio and MuJoCo in
tests/derive/test_free_flyer_tree.py, tests/readers/mjcf/test_mjcf_free_joint.py and test_mjcf_ball_joints.py; here
the spliced helpers are checked against Rodrigues' formula and the two runtimes against each other.
"""

from __future__ import annotations

import ast

import numpy as np
import pytest

from sls import backends
from sls.backends.python.files import HELPERS, SPLICE_MARK, helper_functions, runtime_text, spliced

RUNTIME = backends.backend("python").runtime_files()
QUATERNION_RUNTIMES = ("_free_flyer.py", "_quaternions.py")

#: The sizes and tables each runtime is copied with: one free-flyer base with two joints; for ``_quaternions.py``
#: the same robot as a table (a free joint first), so both copies must give the same numbers.
VALUES = {
    "_free_flyer.py": {"N_Q": 9, "N_V": 8},
    "_quaternions.py": {
        "N_Q": 9,
        "N_V": 8,
        "FREE": "((0, 0),)",
        "BALL": "()",
        "MUJOCO_NQ": 9,
        "MUJOCO_NV": 8,
        "QPOS": "(0, 1, 2, 4, 5, 6, 3, 7, 8)",
        "QVEL": "(0, 1, 2, 3, 4, 5, 6, 7)",
    },
}


def defined_functions(text: str) -> list[str]:
    """The names of the module-level functions ``text`` defines, in order (repeated when defined twice)."""
    return [node.name for node in ast.parse(text).body if isinstance(node, ast.FunctionDef)]


def copied(name: str) -> dict:
    """The namespace of the runtime ``name`` as copied into a package, run with numpy alone at hand."""
    namespace: dict = {"__name__": f"copied{name.removesuffix('.py')}"}
    exec(compile(runtime_text(RUNTIME[name], VALUES[name]), name, "exec"), namespace)
    return namespace


def test_the_helpers_are_written_once_in_the_source_tree():
    helpers = defined_functions(RUNTIME[HELPERS].read_text())
    assert {"_skew", "_rotation", "_multiply", "_exp_quaternion", "_configuration", "_tangent"} <= set(helpers)
    for name in QUATERNION_RUNTIMES:
        assert not set(helpers) & set(defined_functions(RUNTIME[name].read_text())), name


@pytest.mark.parametrize("name", QUATERNION_RUNTIMES)
def test_each_copied_runtime_defines_every_helper_once_and_imports_numpy_alone(name):
    text = runtime_text(RUNTIME[name], VALUES[name])
    defined = defined_functions(text)
    assert len(defined) == len(set(defined))
    assert set(helper_functions(RUNTIME[HELPERS])) <= set(defined)
    imports = [node for node in ast.parse(text).body if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert [ast.unparse(node) for node in imports] == ["import numpy as np"]
    assert SPLICE_MARK.strip() not in text and "stands for" not in text  # no marker, none of the stand-in sizes


def test_splicing_drops_the_import_and_puts_each_named_function_in_place():
    code = (
        "import numpy as np\n\nfrom ._quaternion_math import (\n    _a,\n    _c,\n)\n\nN = 2\n\n\n"
        f"{SPLICE_MARK}_b, _a\n\n\ndef f():\n    return _a()\n\n\n{SPLICE_MARK}_c\n"
    )
    helpers = {"_a": "def _a():\n    return 1\n", "_b": "def _b():\n    pass\n", "_c": "def _c():\n    return 3\n"}
    expected = (
        "import numpy as np\n\nN = 2\n\n\ndef _b():\n    pass\n\n\ndef _a():\n    return 1\n\n\n"
        "def f():\n    return _a()\n\n\ndef _c():\n    return 3\n"
    )
    assert spliced(code, helpers) == expected


@pytest.mark.parametrize("name", QUATERNION_RUNTIMES)
def test_spliced_helpers_give_rodrigues_rotations(name):
    runtime = copied(name)
    rng = np.random.default_rng(3)
    w = rng.normal(size=(5, 3))
    theta = np.linalg.norm(w, axis=-1)[:, None, None]
    K = runtime["_skew"](w)
    rodrigues = np.eye(3) + np.sin(theta) / theta * K + (1 - np.cos(theta)) / theta**2 * (K @ K)
    assert np.allclose(runtime["_rotation"](runtime["_exp_quaternion"](w)), rodrigues, rtol=0, atol=1e-12)
    assert np.allclose(K @ np.array([1.0, 2.0, 3.0]), np.cross(w, [1.0, 2.0, 3.0]), rtol=0, atol=1e-12)


def test_both_copied_runtimes_move_a_free_flyer_alike():
    free_flyer, quaternions = copied("_free_flyer.py"), copied("_quaternions.py")
    rng = np.random.default_rng(4)
    q = np.concatenate([rng.normal(size=(4, 3)), rng.normal(size=(4, 4)), rng.normal(size=(4, 2))], axis=-1)
    q = free_flyer["normalize"](q)
    dq = 0.5 * rng.normal(size=(4, 8))  # rotations under pi: difference gives the shorter one back
    moved = free_flyer["integrate"](q, dq)
    assert np.allclose(quaternions["integrate"](q, dq), moved, rtol=0, atol=1e-12)
    assert np.allclose(free_flyer["difference"](q, moved), dq, rtol=0, atol=1e-9)
    assert np.allclose(quaternions["difference"](q, moved), dq, rtol=0, atol=1e-9)
    x = np.concatenate([q, dq], axis=-1)
    for ours, theirs in zip(free_flyer["to_mujoco"](x), quaternions["to_mujoco"](x)):
        assert np.allclose(ours, theirs, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="q must have length 9"):
        quaternions["integrate"](q[..., :8], dq)
