"""Linear-system tools: controllability, zero-order-hold discretization, python-control's ``StateSpace``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.linalg

from sls.control.equilibrium import equilibrium_input
from sls.control.package import Package, call, checked_params, input_vector, load_package, state_vector
from sls.control.tangent import tangent_names, unit_state
from sls.errors import ControlError, MissingDependencyError

__all__ = ["controllability_rank", "ctrb", "discretize", "state_space"]

CONTROL_HINT = 'this needs python-control, which is not installed; install it with: pip install "sls[control]"'


def ctrb(A: object, B: object) -> np.ndarray:
    """The controllability matrix ``[B, AB, A²B, …, A^(s−1)B]`` (``s`` = number of states), as MATLAB's ``ctrb``."""
    A_m, B_m = system_matrices(A, B)
    blocks = [B_m]
    for _ in range(A_m.shape[0] - 1):
        blocks.append(A_m @ blocks[-1])
    return np.hstack(blocks)


def controllability_rank(A: object, B: object, tol: float | None = None) -> int:
    """Rank of the controllability matrix (``== len(A)``: controllable).

    ``A`` is scaled to unit norm first (the rank is the same, the powers of
    ``A`` stay of order one), so the numerical rank is meaningful for larger
    systems too; ``tol`` as :func:`numpy.linalg.matrix_rank`.
    """
    A_m, B_m = system_matrices(A, B)
    scale = max(1.0, float(np.linalg.norm(A_m, 2)))
    C = ctrb(A_m / scale, B_m / max(1e-300, float(np.linalg.norm(B_m, 2))))
    return int(np.linalg.matrix_rank(C, tol))


def system_matrices(A: object, B: object) -> tuple[np.ndarray, np.ndarray]:
    """``A`` (s × s) and ``B`` (s × m; a vector is one column) as checked float arrays."""
    try:
        A_array = np.asarray(A, dtype=float)
        B_array = np.asarray(B, dtype=float)
    except (TypeError, ValueError):
        raise ControlError("A and B must be real matrices") from None
    if A_array.ndim != 2 or A_array.shape[0] != A_array.shape[1]:
        raise ControlError(f"A must be a square matrix, got shape {A_array.shape}")
    if B_array.ndim == 1:
        B_array = B_array.reshape(-1, 1)
    if B_array.ndim != 2 or B_array.shape[0] != A_array.shape[0]:
        raise ControlError(f"B must have {A_array.shape[0]} rows (one per state), got shape {B_array.shape}")
    return A_array, B_array


def state_space(pkg: Package, x: object, u: object = None, *, params: Mapping[str, float] | None = None) -> Any:
    """The linearization at ``(x, u)`` as a python-control ``StateSpace``.

    ``A``, ``B`` from ``linearized_model``, ``C = I`` (every state is an
    output), ``D = 0``; states, inputs and outputs carry the package's names
    (with a quaternion base the tangent space's, :func:`sls.control.tangent.tangent_names`).
    ``u=None`` takes the input that holds ``x`` (:func:`equilibrium_input`).
    For a sampled controller use ``sys.sample(dt)`` (or :func:`dlqr`).
    Raises :class:`~sls.errors.MissingDependencyError` without python-control.
    """
    try:
        import control
    except ImportError:
        raise MissingDependencyError(f"state_space: {CONTROL_HINT}") from None
    module = load_package(pkg)
    values = checked_params(module, params)
    state = unit_state(module, state_vector(module, x, "x"), "x")
    held = equilibrium_input(module, state, params=values)[0] if u is None else input_vector(module, u, "u")
    A, B = call(module, "linearized_model", state, held, params=values)
    size, m = A.shape[0], B.shape[1]
    states = list(tangent_names(module))
    inputs = list(getattr(module, "INPUTS", ())) or [f"u{j + 1}" for j in range(m)]
    return control.ss(A, B, np.eye(size), np.zeros((size, m)), states=states, inputs=inputs, outputs=states)


def discretize(A: object, B: object, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact zero-order-hold discretization of ``ẋ = A x + B u`` with step ``dt``.

    ``expm([[A, B], [0, 0]] dt) = [[Ad, Bd], [0, I]]``, so
    ``x[k+1] = Ad x[k] + Bd u[k]`` when ``u`` is held constant over each step.
    """
    A_m, B_m = system_matrices(A, B)
    try:
        dt = float(dt)
    except (TypeError, ValueError):
        raise ControlError(f"dt must be a positive number, got {dt!r}") from None
    if not (np.isfinite(dt) and dt > 0):
        raise ControlError(f"dt must be a positive finite number, got {dt!r}")
    size, m = B_m.shape
    block = np.zeros((size + m, size + m))
    block[:size, :size] = A_m
    block[:size, size:] = B_m
    exp = scipy.linalg.expm(block * dt)
    return exp[:size, :size], exp[:size, size:]
