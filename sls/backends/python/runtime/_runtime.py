# Runtime of every generated Python package (also the C target's): argument checks, errors and the
# numpy solve. Copied as _runtime.py after the package's header by sls.backends.python, with the model's
# STATE_NAMES and INPUT_NAMES; these leading comment lines are not copied.

import math

import numpy as np

STATE_NAMES: tuple = ()  # the model's state names, set when copied
INPUT_NAMES: tuple = ()  # the model's input names, set when copied


_ndarray = np.ndarray
_FLOAT = np.dtype(float)


def as_state(x, size):
    """Check a state argument.

    Returns ``(array, values)``: ``array`` is ``x`` as float64 of shape
    ``(..., size)``; ``values`` is a list of Python floats when ``x`` is a
    single state (the fast scalar path), else ``None``.
    """
    array = x if type(x) is _ndarray and x.dtype is _FLOAT else real_array(x, "x", size)
    if array.ndim == 0 or array.shape[-1] != size:
        raise ValueError(_length_message("x", size, array))
    if array.ndim == 1:
        values = array.tolist()
        total = sum(values)
        if total - total != 0.0 and not all(map(math.isfinite, values)):
            raise ValueError(f"x must be finite, got {values}")
        return array, values
    if not np.isfinite(array).all():
        raise ValueError("x must be finite; the batch holds NaN or infinite entries")
    return array, None


def as_vector(v, size, name):
    """Check a vector argument (``u`` or ``qddot``) like :func:`as_state`."""
    array = v if type(v) is _ndarray and v.dtype is _FLOAT else real_array(v, name, size)
    if array.ndim == 0 or array.shape[-1] != size:
        raise ValueError(_length_message(name, size, array))
    if array.ndim == 1:
        values = array.tolist()
        total = sum(values)
        if total - total != 0.0 and not all(map(math.isfinite, values)):
            raise ValueError(f"{name} must be finite, got {values}")
        return array, values
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must be finite; the batch holds NaN or infinite entries")
    return array, None


def _what(name):
    if name == "x":
        return f"the state [{', '.join(STATE_NAMES)}]"
    if name == "u":
        return f"the input [{', '.join(INPUT_NAMES)}]"
    return "one entry per degree of freedom"


def real_array(value, name, size):
    """``value`` as a float64 array; complex values and non-numbers raise ``ValueError``.

    The generated code computes in real arithmetic, so a complex argument is
    refused rather than cast (a cast would drop the imaginary part silently).
    """
    try:
        array = np.asarray(value)
        kind = array.dtype.kind
        if kind != "c":
            return array.astype(float, copy=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a real array of length {size} ({_what(name)}): {exc}") from None
    raise ValueError(
        f"{name} must be a real array of length {size} ({_what(name)}), got complex values: the generated code "
        "computes in real arithmetic (for derivatives use the *_jac_fun functions or linearized_model)"
    )


def _length_message(name, size, array):
    text = f"{name} must have length {size} ({_what(name)}), got shape {array.shape}"
    if array.shape == (size, 1):
        text += f": a column vector; pass a flat vector ({name}.ravel()) or a batch of shape (..., {size})"
    return text


def parameters(names, values, x, scalar):
    """Check parameter values; return them followed by ``x`` and ``scalar``, both adjusted for array values.

    Every value must be a finite real number or an array of them. Arrays are
    broadcast against the batch axes of ``x``: ``x`` is broadcast to the
    common batch shape and ``scalar`` (the fast path's values) becomes
    ``None``, so one call sweeps a parameter.
    """
    checked = []
    shapes = []
    for name, value in zip(names, values):
        number = _parameter(name, value)
        checked.append(number)
        if type(number) is not float:
            shapes.append(f"{name} {number.shape}")
    if shapes:
        try:
            batch = np.broadcast_shapes(
                x.shape[:-1], *(number.shape for number in checked if type(number) is not float)
            )
        except ValueError:
            raise ValueError(
                f"the parameter arrays ({', '.join(shapes)}) do not broadcast against the batch shape "
                f"{x.shape[:-1]} of x"
            ) from None
        x = np.broadcast_to(x, batch + x.shape[-1:])
        scalar = None
    return (*checked, x, scalar)


def _parameter(name, value):
    """One parameter value as a float, or as a float64 array of at least one axis."""
    problem = f"parameter '{name}' must be a finite real number or an array of them, got {_brief(value)}"
    if value is None or isinstance(value, (bool, np.bool_, str, bytes)):
        raise ValueError(problem)
    try:
        array = np.asarray(value)
        real = array.dtype.kind != "c"
        if real:
            array = array.astype(float)
    except (TypeError, ValueError):
        raise ValueError(problem) from None
    if not real:
        raise ValueError(
            f"parameter '{name}' must be real, got {_brief(value)}: the generated code computes in real arithmetic"
        )
    if not np.isfinite(array).all():
        raise ValueError(f"parameter '{name}' must be finite, got {_brief(value)}")
    return float(array) if array.ndim == 0 else array


def _brief(value):
    text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."


class DomainError(ValueError):
    """A generated function is not defined at a state (a square root or logarithm of a negative number, a division
    by zero, ...)."""


def undefined(name, x, error):
    """The error raised when the scalar path of function ``name`` fails at state ``x`` (a ``LinAlgError`` stays as
    it is)."""
    if isinstance(error, (np.linalg.LinAlgError, DomainError)):
        return error
    cause = str(error) or type(error).__name__
    return DomainError(f"{name} is not defined at x = [{describe_state(x)}]: {cause}")


def undefined_batch(name, function, error, params, *arrays):
    """The error of a failed batch: the error of the first state that fails on its own (names the function and the
    state)."""
    if isinstance(error, (np.linalg.LinAlgError, DomainError)):
        return error
    batch = arrays[0].shape[:-1]
    rows = [np.broadcast_to(a, batch + a.shape[-1:]).reshape(-1, a.shape[-1]) for a in arrays]
    columns = {
        key: np.broadcast_to(value, batch).reshape(-1) for key, value in params.items() if type(value) is _ndarray
    }
    for k in range(rows[0].shape[0]):
        values = {**params, **{key: float(column[k]) for key, column in columns.items()}}
        try:
            function(*(r[k] for r in rows), **values)
        except ValueError as failure:
            return failure
    return DomainError(f"{name}: {error} in the batch (at no single state on its own)")


def broadcast_batch(x, v):
    """Broadcast the batch axes of ``x`` (..., 2n) and ``v`` (..., k) against each other."""
    try:
        batch = np.broadcast_shapes(x.shape[:-1], v.shape[:-1])
    except ValueError:
        raise ValueError(
            f"the batch shapes of x {x.shape} and of the second argument {v.shape} do not broadcast together"
        ) from None
    return np.broadcast_to(x, batch + x.shape[-1:]), np.broadcast_to(v, batch + v.shape[-1:])


def describe_state(x):
    """``x`` as ``name=value`` text for error messages."""
    values = np.asarray(x, dtype=float).reshape(-1)
    return ", ".join(f"{name}={value:.6g}" for name, value in zip(STATE_NAMES, values))


def singular(x):
    """The error raised when M is not positive definite at state ``x``."""
    return np.linalg.LinAlgError(f"the mass matrix M is singular or not positive definite at x = [{describe_state(x)}]")


def solve_spd(M, rhs, x):
    """Solve ``M z = rhs`` for symmetric positive definite ``M`` (batched).

    ``M`` has shape (..., n, n) and ``rhs`` (..., n, k). Raises
    ``numpy.linalg.LinAlgError`` naming the (first offending) state when some
    ``M`` is not positive definite, or passes the factorization but is exactly
    singular (e.g. at a parametrization's singularity).
    """
    try:
        np.linalg.cholesky(M)
        return np.linalg.solve(M, rhs)
    except np.linalg.LinAlgError:
        raise singular(_first_failing(M, x)) from None


def _first_failing(M, x):
    """The state of the first block of ``M`` that cannot be factored or solved (``x`` itself for one state)."""
    if M.ndim == 2:
        return x
    states = np.broadcast_to(x, M.shape[:-2] + x.shape[-1:]).reshape(-1, x.shape[-1])
    for k, block in enumerate(M.reshape((-1,) + M.shape[-2:])):
        try:
            np.linalg.cholesky(block)
            np.linalg.solve(block, np.zeros(block.shape[-1]))
        except np.linalg.LinAlgError:
            return states[k]
    return states[0]


#: Batches are evaluated in blocks of this many states, so the temporaries stay in cache.
CHUNK = 8192


def chunked(function, x, u, params):
    """``function`` over blocks of ``CHUNK`` states of the broadcast batch ``x``, ``u`` (and array parameters),
    reassembled."""
    batch = x.shape[:-1]
    xs = x.reshape(-1, x.shape[-1])
    us = u.reshape(-1, u.shape[-1])
    arrays = {
        key: np.broadcast_to(value, batch).reshape(-1) for key, value in params.items() if type(value) is _ndarray
    }
    outs: list = []  # called with more than one block: every block has the same parts
    for s in range(0, xs.shape[0], CHUNK):
        values = {**params, **{key: value[s : s + CHUNK] for key, value in arrays.items()}}
        part = function(xs[s : s + CHUNK], us[s : s + CHUNK], **values)
        parts = part if isinstance(part, tuple) else (part,)
        if not outs:
            outs = [np.empty(xs.shape[:1] + p.shape[1:]) for p in parts]
        for out, p in zip(outs, parts):
            out[s : s + CHUNK] = p
    outs = [out.reshape(batch + out.shape[1:]) for out in outs]
    return tuple(outs) if isinstance(part, tuple) else outs[0]


class NotPositiveDefinite(Exception):
    """A pivot of the unrolled factorization is not positive: the generated code hands over to its ``_generic``."""


def stack(entries, batch, shape):
    """Array of shape ``batch + shape`` from flat entries (arrays of shape ``batch``, or numbers)."""
    out = np.empty(batch + (len(entries),))
    for k, entry in enumerate(entries):
        out[..., k] = entry
    return out.reshape(batch + shape)
