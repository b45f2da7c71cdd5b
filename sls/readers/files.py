"""Model files: TOML (:func:`load_toml`; a ``[urdf]`` or ``[mjcf]`` table points at a robot file instead, see
:func:`sls.readers.urdf.load_urdf_table` and :func:`sls.readers.mjcf.load_mjcf_table`) and Python
(:func:`load_python`, run as the user's own code)."""

from __future__ import annotations

import math
import re
import sys
from dataclasses import replace
from pathlib import Path

from sls import functions
from sls.errors import ModelFileError, SlsError
from sls.model import Model, closest, unknown_key
from sls.model.names import magnitude_problem
from sls.readers.common import read_model_text
from sls.readers.mjcf import load_mjcf_table
from sls.readers.numbers import shown
from sls.readers.strings import model_from_strings
from sls.readers.sympy_api import model_from_sympy
from sls.readers.urdf import load_urdf_table

#: The byte-order mark some editors put first in a UTF-8 file.
BOM = "\ufeff"
#: An integer of more digits than Python converts to int (its limit is 4300): far beyond MAX_MAGNITUDE anyway.
LONG_INTEGER = re.compile(r"(?<![0-9A-Za-z_.])[0-9][0-9_]{1000,}")

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10 (tomli is a dependency there; type-checked only where it is installed)
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]


def load_toml(
    path: str | Path, *, name: str | None = None, source: str | None = None, text: str | None = None
) -> Model:
    """Read a TOML model file (see the README for the format)."""
    path = Path(path)
    real_file = text is None
    if text is None:
        text = read_model_text(path)
    text = text.removeprefix(BOM)  # editors on Windows write one; TOML's grammar has none
    digits = LONG_INTEGER.search(text)
    if digits:  # tomllib would end in Python's limit on int() (and its advice about sys.set_int_max_str_digits)
        line = text.count("\n", 0, digits.start()) + 1
        raise ModelFileError(f"{path}: line {line}: the number '{shown(digits.group())}' {magnitude_problem(math.inf)}")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ModelFileError(f"{path}: not valid TOML: {exc}") from None
    except ValueError as exc:  # a value tomllib parses but Python cannot hold
        raise ModelFileError(f"{path}: not valid TOML: {' '.join(str(exc).split())}") from None
    if "urdf" in data:  # a robot file with options: [urdf] file = "robot.urdf", floating_base = true
        return load_urdf_table(data, path, name=name or path.stem, source=source or f"model file {path.name}")
    if "mjcf" in data:  # a MuJoCo model: [mjcf] file = "robot.xml"
        return load_mjcf_table(data, path, name=name or path.stem, source=source or f"model file {path.name}")
    model = model_from_mapping(
        data, name=name or path.stem, source=source or f"model file {path.name}", filename=str(path)
    )
    return replace(model, file=str(path)) if real_file else model


def load_python(path: str | Path) -> Model:
    """Run a Python model file (the user's own code) and read its model.

    The file defines ``T``, ``V``, ``fric``, ``x`` and optionally ``params``,
    ``inputs``, ``forces``, ``constraints``, ``velocity_constraints``,
    ``loads``, ``constraint_stabilization``, ``ranges``, ``kinematics`` and
    ``frames`` at module level.
    """
    import runpy

    path = Path(path)
    read_model_text(path)
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)  # like `python model.py`: modules next to the file can be imported
    try:
        namespace = runpy.run_path(str(path), run_name="__sls_model__")
    except SystemExit as exc:
        raise ModelFileError(f"{path}: the model file called exit({exc.code})") from None
    except Exception as exc:  # the user's own code failed: say so in one line
        raise ModelFileError(f"{path}: running the model file failed: {type(exc).__name__}: {exc}") from None
    finally:
        if folder in sys.path:
            sys.path.remove(folder)
    for key in ("T", "V", "fric", "x"):
        if key not in namespace:
            defined = closest(key, [name for name in namespace if not name.startswith("_")])
            hint = f"; it defines '{defined}': rename it '{key}'" if defined is not None else ""
            raise ModelFileError(
                f"{path}: the model file does not define '{key}' (it must define T, V, fric and x){hint}"
            )
    try:
        model = model_from_sympy(
            namespace["T"],
            namespace["V"],
            namespace["fric"],
            namespace["x"],
            params=namespace.get("params"),
            inputs=namespace.get("inputs"),
            forces=namespace.get("forces"),
            name=path.stem,
            source=f"model file {path.name}",
            constraints=namespace.get("constraints"),
            velocity_constraints=namespace.get("velocity_constraints"),
            loads=namespace.get("loads"),
            stabilization=namespace.get("constraint_stabilization", 0.0),
            ranges=namespace.get("ranges"),
            kinematics=namespace.get("kinematics"),
            frames=namespace.get("frames"),
        )
    except SlsError as exc:
        raise type(exc)(f"{path}: {exc}") from None
    return replace(model, file=str(path))


#: Keys a TOML model may have.
MODEL_KEYS = (
    "state", "T", "V", "fric", "params", "inputs", "forces",
    "constraints", "velocity_constraints", "loads", "constraint_stabilization", "functions", "ranges",
    "kinematics", "frames",
)  # fmt: skip


def model_from_mapping(data: dict, *, name: str, source: str, filename: str) -> Model:
    """Build a model from the parsed TOML table ``data``."""
    unknown = sorted(set(data) - set(MODEL_KEYS))
    if unknown:
        raise ModelFileError(f"{filename}: {unknown_key(unknown[0], MODEL_KEYS, suggest=('urdf', 'mjcf'))}")
    for key in ("state", "T", "V", "fric"):
        if key not in data:
            raise ModelFileError(f"{filename}: missing key '{key}'")
    params = data.get("params", {})
    if not isinstance(params, dict):
        raise ModelFileError(f"{filename}: key 'params' must be a table of NAME = NUMBER")
    for key in ("state", "inputs", "forces", "constraints", "velocity_constraints", "kinematics"):
        if key in data and not isinstance(data[key], list):
            raise ModelFileError(f"{filename}: key '{key}' must be a list of strings")
    if "loads" in data and not (isinstance(data["loads"], list) and all(isinstance(t, dict) for t in data["loads"])):
        raise ModelFileError(
            f"{filename}: 'loads' must be an array of tables: [[loads]] with point = [...] and force = [...]"
        )
    if "ranges" in data and not isinstance(data["ranges"], dict):
        raise ModelFileError(f"{filename}: key 'ranges' must be a table of NAME = [LOW, HIGH] (where the model lives)")
    stabilization = data.get("constraint_stabilization", 0.0)
    if isinstance(stabilization, bool) or not isinstance(stabilization, (int, float)):
        raise ModelFileError(
            f"{filename}: key 'constraint_stabilization' must be a number (the Baumgarte rate, 0: off)"
        )
    if isinstance(data["fric"], (int, float)) and not isinstance(data["fric"], bool) and data["fric"] == 0:
        data = {**data, "fric": "0"}  # fric = 0 means no friction, like fric = "0"
    if not isinstance(data["fric"], (list, str)):
        raise ModelFileError(f"{filename}: key 'fric' must be a list of n strings (or 0 for none)")
    for key in ("T", "V"):
        if not isinstance(data[key], str):
            raise ModelFileError(f"{filename}: key '{key}' must be an expression string")
    chosen = data.get("functions")
    if chosen is not None and not (isinstance(chosen, list) and all(isinstance(f, str) for f in chosen)):
        raise ModelFileError(
            f"{filename}: key 'functions' must be a list of generated function names, e.g. [\"qddot_fun\"]"
        )
    try:
        model = model_from_strings(
            state=data["state"],
            T=data["T"],
            V=data["V"],
            fric=data["fric"],
            params=params,
            inputs=data.get("inputs"),
            forces=data.get("forces"),
            name=name,
            source=source,
            constraints=data.get("constraints"),
            velocity_constraints=data.get("velocity_constraints"),
            loads=data.get("loads"),
            stabilization=stabilization,
            ranges=data.get("ranges"),
            kinematics=data.get("kinematics"),
            frames=data.get("frames"),
        )
    except SlsError as exc:  # ModelError, ModelTypeError, ExpressionError: name the file
        if str(exc).startswith(filename):
            raise
        raise type(exc)(f"{filename}: {exc}") from None
    if chosen is None:
        return model
    return replace(model, functions=functions.check(model, chosen, f"{filename}: key 'functions'", ModelFileError))
