"""What the readers share: reading a model file's text, converting a loads table component by component,
and the one-line answer to an unknown key."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import sympy

from sls.errors import ModelError, ModelFileError, ModelTypeError
from sls.model.entries import as_list


def read_model_text(path: Path) -> str:
    if not path.exists():
        raise ModelFileError(f"{path}: no such model file")
    if path.is_dir():
        raise ModelFileError(f"{path}: is a directory, not a model file")
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelFileError(f"{path}: cannot read the model file: {exc}") from None


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
