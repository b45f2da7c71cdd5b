"""The generated package the control workflow works on, and the checked arguments of its functions.

:func:`load_package` imports a package folder (or passes a module through);
the helpers below check the values every :mod:`sls.control` function takes
(parameters, states, inputs) and call the generated functions so that a
failure becomes one :class:`~sls.errors.ControlError` line naming the
function, the state and the cause.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, TypeAlias

import numpy as np

from sls.errors import ControlError

__all__ = ["REQUIRED", "Package", "load_package"]

#: What every ``pkg`` argument of :mod:`sls.control` accepts: an imported generated package or its folder.
Package: TypeAlias = "ModuleType | str | Path"

#: Functions a generated package must export for the control workflow.
REQUIRED = ("qddot_fun", "linearized_model", "input_matrix_fun", "tau_fun", "T_fun", "V_fun")

_counter = itertools.count()


def load_package(pkg: Package) -> ModuleType:
    """Return ``pkg`` if it is a generated package, else import it from its folder.

    A path is imported under a fresh private module name (like
    ``importlib.util.spec_from_file_location``), so two packages of the same
    folder name do not clash.
    """
    if isinstance(pkg, ModuleType):
        module = pkg
    elif isinstance(pkg, (str, Path)):
        module = _import_folder(Path(pkg))
    else:
        raise ControlError(f"pkg must be a generated package (module) or the path of one, got {type(pkg).__name__}")
    missing = [f for f in REQUIRED + ("N_DOF", "N_INPUTS") if not hasattr(module, f)]
    if missing:
        raise ControlError(
            f"{getattr(module, '__name__', pkg)}: not a generated sls package with an input map "
            f"(missing {', '.join(missing)}); regenerate it with this sls version"
        )
    return module


def _import_folder(path: Path) -> ModuleType:
    init = path / "__init__.py"
    if not init.is_file():
        raise ControlError(f"{path}: not a generated package (no __init__.py); run `sls generate --out {path}` first")
    name = f"_sls_control_pkg_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(path)])
    if spec is None or spec.loader is None:  # not for an existing .py file; for the type checker
        raise ControlError(f"{path}: cannot import the generated package")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # a broken or foreign package: one line
        del sys.modules[name]
        raise ControlError(f"{path}: cannot import the generated package: {type(exc).__name__}: {exc}") from None
    return module


def missing_params(module: ModuleType, given: Mapping[str, object]) -> list[str]:
    """The parameters of ``module`` that have no default value and are not in ``given``, in the package's order."""
    known: Mapping[str, float | None] = getattr(module, "PARAMS", {})
    return [name for name, default in known.items() if default is None and name not in given]


def checked_params(module: ModuleType, params: Mapping[str, object] | None) -> dict[str, float]:
    """``params`` checked against the package's ``PARAMS``: known names, finite numbers, every parameter
    without a default given. Returns a new dict (the caller's values, unconverted)."""
    values: dict[str, Any] = dict(params or {})
    known = getattr(module, "PARAMS", {})
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ControlError(f"unknown parameter '{unknown[0]}' (the model has: {', '.join(known) or 'none'})")
    for name, value in values.items():
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ControlError(f"parameter '{name}': value must be a number, got {value!r}") from None
        if not np.isfinite(number):
            raise ControlError(f"parameter '{name}': value must be finite, got {value!r}")
    required = missing_params(module, values)
    if required:
        name = required[0]
        raise ControlError(
            f"parameter '{name}' has no default value; pass it as the keyword argument {name}=... "
            f"(here: params={{'{name}': ...}})"
        )
    return values


def vector(value: object, size: int, what: str, names: Sequence[str] = ()) -> np.ndarray:
    """A flat vector of ``size`` finite numbers; a column ``(size, 1)`` or row ``(1, size)`` is flattened."""
    try:
        array = np.asarray(value)
        if np.iscomplexobj(array):
            raise TypeError("complex")
        array = array.astype(float)
    except (TypeError, ValueError):
        raise ControlError(f"{what} must be a vector of {size} real numbers, got {value!r}") from None
    if array.ndim == 0 and size == 1:
        array = array.reshape(1)
    if array.shape in ((size, 1), (1, size)):
        array = array.reshape(size)
    if array.shape != (size,):
        listing = f" [{', '.join(names)}]" if names else ""
        raise ControlError(f"{what} must have length {size}{listing}, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ControlError(f"{what} must be finite, got {array.tolist()}")
    return array


def coordinate_count(module: ModuleType) -> int:
    """The number of coordinates ``q``: ``N_Q`` of a package that has it (a quaternion base: ``N_Q > N_DOF``), else
    ``N_DOF``."""
    return int(getattr(module, "N_Q", module.N_DOF))


def state_size(module: ModuleType) -> int:
    """The length of a state ``x = [q; v]``: ``N_Q + N_DOF`` (``2 N_DOF + 1`` with a quaternion base), the
    tangent space's ``2 N_DOF`` plus one per quaternion."""
    return coordinate_count(module) + module.N_DOF


def state_vector(module: ModuleType, x: object, what: str) -> np.ndarray:
    """``x`` as a checked state of the package, shape (N_Q + N_V,) (``(2n,)`` without a quaternion base)."""
    return vector(x, state_size(module), what, tuple(getattr(module, "STATE", ())))


def input_vector(module: ModuleType, u: object, what: str) -> np.ndarray:
    """``u`` as a checked input of the package, shape (m,)."""
    return vector(u, module.N_INPUTS, what, tuple(getattr(module, "INPUTS", ())))


def coordinate_rates(module: ModuleType, x: np.ndarray, params: Mapping[str, float]) -> np.ndarray:
    """``q̇`` at the state ``x``: the package's kinematics ``S(q) v`` (``qdot_fun``) for a model with generalized
    speeds, else the second half of ``x``."""
    if hasattr(module, "qdot_fun"):
        return np.asarray(call(module, "qdot_fun", x, params=params), dtype=float)
    return x[..., module.N_DOF :]


def call(module: ModuleType, name: str, x: np.ndarray, *args: object, params: Mapping[str, float]) -> Any:
    """``module.name(x, *args, **params)``; a failure becomes a :class:`ControlError` naming the state and the cause."""
    try:
        return getattr(module, name)(x, *args, **params)
    except (ValueError, ArithmeticError, TypeError) as exc:  # LinAlgError and the domain errors are ValueErrors
        cause = str(exc) or type(exc).__name__
        if "x = [" not in cause:
            cause += f" at x = [{labelled(module, x)}]"
        given = ", ".join(f"{key}={value:g}" for key, value in params.items())
        if cause.startswith(f"{name} "):  # the generated code named itself (a domain error)
            text = cause + (f" (with {given})" if given else "")
        else:
            text = f"{name}{' with ' + given if given else ''}: {cause}"
        if isinstance(exc, np.linalg.LinAlgError) and params:
            text += "; a mass, inertia or length of zero or below makes M singular: check the parameters"
        raise ControlError(text) from None


def labelled(module: ModuleType, x: np.ndarray) -> str:
    """``s=0, th=0.1, ...``: the entries of a state with the package's names."""
    names = tuple(getattr(module, "STATE", ())) or tuple(f"x{i + 1}" for i in range(len(x)))
    return ", ".join(f"{name}={value + 0.0:.6g}" for name, value in zip(names, np.asarray(x, dtype=float).reshape(-1)))


def fmt(array: np.ndarray) -> str:
    """A short ``[a, b, ...]`` of an array's entries (4 significant digits, complex ones as ``a+bj``)."""
    values = np.asarray(array).reshape(-1)
    if np.iscomplexobj(values):
        return "[" + ", ".join(f"{v.real:.4g}{v.imag:+.4g}j" if v.imag else f"{v.real:.4g}" for v in values) + "]"
    return "[" + ", ".join(f"{v + 0.0:.4g}" for v in values) + "]"


def constrained(module: ModuleType) -> bool:
    """Whether the package has constraints (its state must keep them)."""
    return getattr(module, "N_CONSTRAINTS", 0) > 0
