# The runtime of a generated JAX package: copied after the package's header as ``_runtime.py``.
# A real module so that ruff and mypy read it; the comment block above the code is not copied.
import jax
import jax.numpy as jnp
import jax.scipy.linalg

# float64 by default: the package's functions are compared with the numpy target's to 1e-12
jax.config.update("jax_enable_x64", True)

#: The floating type of an integer or boolean state (float64, x64 being enabled above).
DEFAULT_FLOAT = jnp.float64


def floats(*items):
    """The arrays of ``items`` (``(value, size, name)`` each; last axis ``size``) in one floating type: that of
    the values (float32 states stay float32), float64 for integers."""
    arrays = []
    for value, size, name in items:
        array = jnp.asarray(value)
        if array.ndim == 0 or array.shape[-1] != size:
            raise ValueError(f"{name} must have shape ({size},) or (..., {size}), got {array.shape}")
        arrays.append(array)
    dtype = jnp.result_type(*arrays)
    if not jnp.issubdtype(dtype, jnp.inexact):
        dtype = DEFAULT_FLOAT
    return tuple(array.astype(dtype) for array in arrays)


def batched(body, arrays, params):
    """``body(*one_state_arrays, *params)`` over the leading axes of ``arrays`` (broadcast together), by
    :func:`jax.vmap` over their flattened batch; one state: ``body`` itself."""
    batch = jnp.broadcast_shapes(*(array.shape[:-1] for array in arrays))
    if not batch:
        return body(*arrays, *params)
    flat = [jnp.broadcast_to(a, batch + a.shape[-1:]).reshape((-1, a.shape[-1])) for a in arrays]
    out = jax.vmap(lambda *one: body(*one, *params))(*flat)
    return jax.tree_util.tree_map(lambda o: o.reshape(batch + o.shape[1:]), out)


def array(entries, dtype):
    """A 1-D array of ``entries`` (scalars, tracers or Python floats) of type ``dtype``."""
    return jnp.stack([jnp.asarray(entry, dtype=dtype) for entry in entries])


def scalar(entry, dtype):
    """A 0-d array of ``entry`` of type ``dtype``."""
    return jnp.asarray(entry, dtype=dtype)


def solve_spd(mass, rhs):
    """``M⁻¹ rhs`` by a Cholesky factorization of the symmetric positive definite ``M`` (NaN where it is not)."""
    return jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(mass), rhs)
