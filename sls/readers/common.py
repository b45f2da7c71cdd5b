"""What the readers share: reading a model file's text, converting a loads table component by component,
the one-line answer to an unknown key, and a robot file's model built and named (:func:`robot_model`,
:func:`joint_torques`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import sympy

from sls.algebra.expressions import symbol
from sls.errors import ModelError, ModelFileError, ModelTypeError, SlsError
from sls.model import Model, build_model, check_value, closest, did_you_mean, unknown_key
from sls.model.entries import as_list


class ModelFileWarning(UserWarning):
    """A warning about a model file that was still read (MuJoCo's compiler, xacro): the command line prints it as
    one ``warning:`` line."""


def robot_model(filename: str, **fields: object) -> Model:
    """``build_model(**fields)`` for a robot file (URDF, MJCF); a refusal is one line naming the file."""
    try:
        return build_model(**fields)  # type: ignore[arg-type]
    except SlsError as exc:
        raise ModelFileError(f"{filename}: {exc}") from None


def joint_torques(model: Model, inputs: Sequence[str]) -> Model:
    """``model`` with one torque per speed (``B_u = I``) named after its joint (``inputs``), not ``u1 … un``."""
    torques = tuple(symbol(name) for name in inputs)
    return replace(model, inputs=torques, forces=torques)


def read_model_text(path: Path) -> str:
    if not path.exists():
        raise ModelFileError(f"{path}: no such model file")
    if path.is_dir():
        raise ModelFileError(f"{path}: is a directory, not a model file")
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelFileError(f"{path}: cannot read the model file: {exc}") from None


def check_table_keys(data: dict, path: Path, table: str, file_keys: tuple, table_keys: tuple, example: str) -> dict:
    """The ``[<table>]`` of a TOML model file that points at a robot file (``[urdf]``, ``[mjcf]``), its keys and
    the file's other keys checked (``file_keys``: the tables allowed, ``table_keys``: the keys in ``[<table>]``;
    ``example``: a key of it, for the message)."""
    unknown = sorted(set(data) - set(file_keys))
    if unknown:
        if closest(unknown[0], file_keys) is not None:
            raise ModelFileError(f"{path}: {unknown_key(unknown[0], file_keys)}")
        raise ModelFileError(
            f"{path}: key '{unknown[0]}' cannot go with a [{table}] table (allowed: {', '.join(file_keys)})"
        )
    what = f"{path}: [{table}]"
    if not isinstance(data[table], dict):
        raise ModelFileError(f"{what} must be a table: [{table}] {example}")
    unknown = sorted(set(data[table]) - set(table_keys))
    if unknown:
        raise ModelFileError(f"{what}: {unknown_key(unknown[0], table_keys)}")
    return data[table]


def with_param_table(model: Model, params: object, path: Path) -> Model:
    """``model`` with the parameter defaults of a robot file's ``[params]`` table, each one it has, and ``file``
    set to the TOML file."""
    if not isinstance(params, dict):
        raise ModelFileError(f"{path}: key 'params' must be a table of NAME = NUMBER")
    return replace(with_params(model, params, f"{path}: [params]"), file=str(path))


def with_params(model: Model, params: Mapping[str, object], what: str) -> Model:
    """``model`` with other default values for some of its parameters; ``what`` starts the messages."""
    unknown = sorted(set(params) - set(model.params))
    if unknown:
        raise ModelFileError(
            f"{what} {unknown[0]}: the robot has no parameter of that name"
            + (did_you_mean(unknown[0], model.params) or f" (it has: {', '.join(model.params)})")
        )
    try:
        values = {key: check_value(key, value) for key, value in params.items()}
    except ModelError as exc:
        raise ModelFileError(f"{what} {exc}") from None
    return replace(model, params={**model.params, **values})


def map_loads(loads: object, convert: Callable[[object, str], object]) -> list:
    """``loads`` (a list of tables) with every component passed through ``convert(value, what)``."""
    result = []
    for i, load in enumerate(as_list(loads, "loads")):
        if not isinstance(load, dict):
            raise ModelTypeError(
                f"loads[{i}]: expected a table (dict) with point and force, angle and torque, "
                "or angular_velocity and torque"
            )
        entry: dict[str, object] = {}
        for key, value in load.items():
            what = f"loads[{i}].{key}"
            if isinstance(value, (list, tuple, sympy.MatrixBase)):
                entry[key] = [convert(v, f"{what}[{j}]") for j, v in enumerate(as_list(value, what))]
            else:
                entry[key] = convert(value, what)
        result.append(entry)
    return result


def as_text(value: object, what: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ModelError(f"{what}: expected a string, got {value!r}")
    return str(value)
