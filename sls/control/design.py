"""Control designs saved as files: the JSON that ``sls lqr --save FILE`` writes and ``sls simulate --lqr-from FILE``
reads, so that a design is computed once and simulated as often as needed (also with other parameter values,
a robustness check).

The document (``"kind": "lqr"``) holds the sls version, the fingerprint of the
generated package the design was made on (its ``FINGERPRINT``), the package's
state and input names, the parameter values of the design, ``x_eq`` (2n),
``u_eq`` (m), ``K`` (m × 2n), ``Q``, ``R`` and the closed-loop poles as
``[real, imag]`` pairs. With a quaternion base ``x_eq`` is a full state
(``N_Q + N_V``), ``K``, ``Q`` are in the tangent space (``2n = 2 N_V``) and
``"tangent"`` names ``K``'s columns (:func:`sls.control.tangent.tangent_names`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from sls.control.package import Package, load_package, state_size
from sls.control.riccati import LQRResult
from sls.control.tangent import deviation, feedback, on_manifold, tangent_names, unit_state
from sls.errors import ControlError, DesignFileError, OutputError
from sls.output.write import replacing

__all__ = ["LQRDesign", "design_document", "load_design", "save_design"]

KIND = "lqr"


@dataclass(frozen=True)
class LQRDesign:
    """An LQR design read from a file: the controller ``u = u_eq − K (x − x_eq)``, callable as ``design(t, x)``
    (with a quaternion base ``x − x_eq`` is the tangent vector ``[difference(q_eq, q); v − v_eq]``)."""

    K: np.ndarray  #: (m, 2n) gain (2n: the tangent space's 2 N_V)
    x_eq: np.ndarray  #: (N_Q + N_V,) equilibrium state
    u_eq: np.ndarray  #: (m,) equilibrium input
    #: fingerprint of the package the design was made on (None: not recorded)
    fingerprint: str | None = None
    #: parameter values the design was made with
    params: dict[str, float] = field(default_factory=dict)
    #: the map x ↦ δx of a package with a quaternion base; None: δx = x − x_eq
    deviation: Callable[[np.ndarray], np.ndarray] | None = field(default=None, repr=False, compare=False)

    def __call__(self, t: float, x: object) -> np.ndarray:
        return feedback(self.K, self.x_eq, self.u_eq, self.deviation, x)

    controller = __call__


def design_document(pkg: Package, result: LQRResult, params: Mapping[str, float] | None = None) -> dict[str, Any]:
    """The JSON document of an LQR design made on ``pkg`` with the parameter values ``params``."""
    from sls.version import __version__

    module = load_package(pkg)
    tangent = {"tangent": list(tangent_names(module))} if on_manifold(module) else {}
    return {
        "sls": __version__,
        "kind": KIND,
        "fingerprint": getattr(module, "FINGERPRINT", None),
        "state": list(module.STATE),
        "inputs": list(module.INPUTS),
        **tangent,
        "params": dict(params or {}),
        "x_eq": result.x_eq.tolist(),
        "u_eq": result.u_eq.tolist(),
        "K": result.K.tolist(),
        "Q": result.Q.tolist(),
        "R": result.R.tolist(),
        "poles": [[float(p.real), float(p.imag)] for p in result.poles],
    }


def save_design(
    pkg: Package, result: LQRResult, path: str | Path, *, params: Mapping[str, float] | None = None
) -> Path:
    """Write the design ``result`` made on ``pkg`` (with ``params``) to ``path`` as JSON, atomically."""
    document = design_document(pkg, result, params)
    try:
        with replacing(path) as temporary:
            temporary.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise OutputError(f"{path}: cannot write the design: {exc.strerror or exc}") from None
    return Path(path)


def read_design(path: str | Path) -> dict[str, Any]:
    """The document of a design file, checked to be one (:class:`~sls.errors.DesignFileError` if not)."""
    hint = f"write one with `sls lqr DIR ... --save {path}`"
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DesignFileError(f"{path}: no such file ({hint})") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DesignFileError(f"{path}: not an sls lqr file: {exc}") from None
    if not isinstance(data, dict) or data.get("kind") != KIND or not all(k in data for k in ("K", "x_eq", "u_eq")):
        raise DesignFileError(f"{path}: not an sls lqr file ({hint})")
    return data


def load_design(pkg: Package, path: str | Path, *, allow_other_model: bool = False) -> LQRDesign:
    """Read the design file ``path`` for the package ``pkg``.

    The design must be for the package's state and inputs (same names, same
    order), and made on this very model: the fingerprint it saved must be the
    package's ``FINGERPRINT`` (a package regenerated from another model, or
    with other parameter defaults, has another one), else
    :class:`~sls.errors.ControlError` naming both fingerprints.
    ``allow_other_model=True`` accepts a design of another model with the
    same state and inputs (e.g. to test a gain's robustness on purpose). A
    missing file or one that is not a design raises
    :class:`~sls.errors.DesignFileError`.
    """
    module = load_package(pkg)
    data = read_design(path)
    _check_names(module, data, path)
    n2, m = 2 * module.N_DOF, module.N_INPUTS
    try:
        K = np.array(data["K"], dtype=float).reshape(m, n2)
        x_eq = np.array(data["x_eq"], dtype=float).reshape(state_size(module))
        u_eq = np.array(data["u_eq"], dtype=float).reshape(m)
    except (TypeError, ValueError):
        raise DesignFileError(f"{path}: K, x_eq or u_eq has the wrong shape for this package") from None
    fingerprint = data.get("fingerprint")
    if not allow_other_model and fingerprint != getattr(module, "FINGERPRINT", None):
        raise ControlError(
            other_model(path, fingerprint, module)
            + ": design again on this package, or pass allow_other_model=True to use it all the same"
        )
    params = dict(data.get("params") or {}) if isinstance(data.get("params"), dict) else {}
    x_eq = unit_state(module, x_eq, f"{path}: x_eq")
    known = {name: value for name, value in params.items() if name in getattr(module, "PARAMS", {})}
    tangent = deviation(module, x_eq, known) if on_manifold(module) else None
    return LQRDesign(K=K, x_eq=x_eq, u_eq=u_eq, fingerprint=fingerprint, params=params, deviation=tangent)


def other_model(path: str | Path, fingerprint: object, module: ModuleType) -> str:
    """What to say about a design whose saved ``fingerprint`` is not the package's (without the way out)."""
    current = getattr(module, "FINGERPRINT", None)
    return (
        f"{path}: the design was made for another model (fingerprint {fingerprint or 'none'}; this package: "
        f"{current or 'none'})"
    )


def _check_names(module: ModuleType, data: dict[str, Any], path: str | Path) -> None:
    state, inputs = list(data.get("state", [])), list(data.get("inputs", []))
    if state != list(module.STATE) or inputs != list(module.INPUTS):
        raise ControlError(
            f"{path}: the design is for state [{', '.join(state)}] and inputs [{', '.join(inputs)}], "
            f"but the package has [{', '.join(module.STATE)}] and [{', '.join(module.INPUTS)}]"
        )
