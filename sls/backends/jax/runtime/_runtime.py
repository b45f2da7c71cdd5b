# The runtime of a generated JAX package: copied after the package's header as ``_runtime.py``.
# A real module so that ruff and mypy read it; the comment block above the code is not copied.
import contextvars
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import custom_batching

# float64 by default: the package's functions are compared with the numpy target's to 1e-12
jax.config.update("jax_enable_x64", True)

#: The floating type of an integer or boolean state (float64, x64 being enabled above).
DEFAULT_FLOAT = jnp.float64

#: Options of XLA's compilation of the package's functions. Their bodies are long straight-line graphs of scalar
#: operations; XLA's CPU fusion emitters spent 3 to 4 times as long compiling them (UR5 on a quaternion base:
#: 12 s against 3.6 s for qddot_fun) for no faster code (docs/jax.md). A function inlined into a caller's own
#: jax.jit is compiled with the caller's options.
COMPILER_OPTIONS = {"xla_cpu_use_fusion_emitters": False}


#: Options of XLA's compilation of a call on one state (no batch axes) on its own: LLVM's optimization level 0 and one
#: codegen module. One state takes microseconds to evaluate, so the first call's compilation is what counts: Solo-12's
#: qddot_fun compiled in about a third of the CPU time with these and keep (docs/jax.md).
ONE_STATE_OPTIONS = {**COMPILER_OPTIONS, "xla_backend_optimization_level": 0, "xla_cpu_parallel_codegen_split_count": 1}

#: The divisor of keep while a call on one state is traced: a traced 1.0 (an argument of the compiled function, which
#: XLA cannot fold; weakly typed); None otherwise.
_ONE = contextvars.ContextVar("_ONE", default=None)


def jit(function):
    """``function`` compiled by :func:`jax.jit`, with COMPILER_OPTIONS when it is called on its own: the decorator of
    every public function of the package. A call on one state (every argument of at most one axis) is compiled with
    ONE_STATE_OPTIONS and its temporaries kept (:func:`keep`). JAX takes compiler options at the outermost jit only,
    so inside a caller's transformation (tracers among the arguments, or a caller's jit around it) it is the plain
    ``jax.jit``."""
    plain = jax.jit(function)
    tuned = jax.jit(function, compiler_options=COMPILER_OPTIONS)

    def kept(one, args, kwargs):
        token = _ONE.set(one)
        try:
            return function(*args, **kwargs)
        finally:
            _ONE.reset(token)

    single = jax.jit(kept, compiler_options=ONE_STATE_OPTIONS)

    @functools.wraps(function)
    def call(*args, **kwargs):
        leaves = jax.tree_util.tree_leaves((args, kwargs))
        if any(isinstance(leaf, jax.core.Tracer) for leaf in leaves):
            return plain(*args, **kwargs)
        try:
            if all(np.ndim(leaf) <= 1 for leaf in leaves):
                return single(1.0, args, kwargs)  # a Python float: traced weakly typed, as the parameters
            return tuned(*args, **kwargs)
        except ValueError as error:  # under a caller's jit with no traced argument
            if "compiler_options" not in str(error):
                raise
            return plain(*args, **kwargs)

    return call


def keep(value):
    """``value`` (a temporary of a body, read more than once), unchanged. While a call on one state is traced
    (:func:`jit`) it is divided by a traced 1.0: XLA's CPU fusion copies a cheap operation into every kernel reading it
    (recursively: Solo-12's ``qddot_fun`` compiled 17 000 operations for its 4 000), not a division, so the value is
    computed once and the compilation has that much less to do. Exact (``v / 1.0 = v``)."""
    one = _ONE.get()
    return value if one is None else value / one  # one is weakly typed: float32 values stay float32


#: States per step when a batch is evaluated (lax.map over chunks of this many states, each chunk by jax.vmap): the
#: temporaries of one chunk stay in the cache. On UR5 over 10⁵ states, qddot_fun took 135-140 ms in chunks of 2048
#: against 340 ms by one jax.vmap over the whole batch (docs/jax.md).
CHUNK = 2048


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
    :func:`jax.vmap` over their flattened batch (in chunks of CHUNK states, :func:`jax.lax.map`, when it is
    longer); one state: ``body`` itself, :func:`chunked` when traced (a caller's ``jax.vmap`` may map it; values
    are evaluated op by op under ``jax.disable_jit``, where a ``custom_vmap`` would compile the body)."""
    batch = jnp.broadcast_shapes(*(array.shape[:-1] for array in arrays))
    if not batch:
        traced = any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves((arrays, params)))
        return chunked(body)(*arrays, *params) if traced else body(*arrays, *params)
    flat = [jnp.broadcast_to(a, batch + a.shape[-1:]).reshape((-1, a.shape[-1])) for a in arrays]
    if flat[0].shape[0] > CHUNK:
        out = jax.lax.map(lambda one: body(*one, *params), tuple(flat), batch_size=CHUNK)
    else:
        out = jax.vmap(lambda *one: body(*one, *params))(*flat)
    return jax.tree_util.tree_map(lambda o: o.reshape(batch + o.shape[1:]), out)


def chunked(body):
    """``body`` (a function of one state) as itself, but mapped in chunks of CHUNK states (:func:`jax.lax.map`)
    when a caller's :func:`jax.vmap` maps it over more: one ``vmap`` over 10⁵ states made every temporary an array
    of 10⁵ entries, out of the cache (Solo-12's ``qddot_fun``: 0.50–0.59 s against 0.20 s in chunks). Its
    derivatives are ``body``'s (:func:`jax.custom_jvp`: forward and reverse mode, and ``vmap`` of them, as
    ``body``'s own)."""

    @custom_batching.custom_vmap
    def mapped(*args):
        return body(*args)

    @mapped.def_vmap
    def rule(axis_size, in_batched, *args):
        fixed = [None if batched else arg for arg, batched in zip(args, in_batched)]
        moving = tuple(arg for arg, batched in zip(args, in_batched) if batched)

        def one(state):
            found = iter(state)
            return body(*(next(found) if arg is None else arg for arg in fixed))

        if axis_size > CHUNK:
            out = jax.lax.map(one, moving, batch_size=CHUNK)
        else:
            out = jax.vmap(one)(moving)
        return out, jax.tree_util.tree_map(lambda _: True, out)

    @jax.custom_jvp
    def function(*args):
        return mapped(*args)

    @function.defjvp
    def derivative(primals, tangents):
        return jax.jvp(body, primals, tangents)

    return function


def array(entries, dtype):
    """A 1-D array of ``entries`` (scalars, tracers or Python numbers) of type ``dtype``. The numbers (the zeros of
    a Jacobian, mostly) become one constant array and the other entries one stack, put in place by one gather with
    constant indices: a Jacobian of a robot holds thousands of zeros, which as entries of one stack were thousands of
    operations (and, under jax.vmap, broadcasts of constants to the batch)."""
    numbers = [isinstance(entry, (int, float)) for entry in entries]
    if not any(numbers):
        return jnp.stack([jnp.asarray(entry, dtype=dtype) for entry in entries])
    constants = np.array([float(entry) for entry, number in zip(entries, numbers) if number])
    if all(numbers):
        return jnp.asarray(constants, dtype=dtype)
    traced = jnp.stack([jnp.asarray(entry, dtype=dtype) for entry, number in zip(entries, numbers) if not number])
    index, place = np.empty(len(entries), dtype=np.int64), [0, len(constants)]
    for k, number in enumerate(numbers):
        index[k] = place[0] if number else place[1]
        place[0 if number else 1] += 1
    return jnp.concatenate([jnp.asarray(constants, dtype=dtype), traced])[index]


def scalar(entry, dtype):
    """A 0-d array of ``entry`` of type ``dtype``."""
    return jnp.asarray(entry, dtype=dtype)


#: Values per product of :func:`separate` (its cost grows with the square of the count).
SEPARATE = 32


def separate(*values):
    """``values`` unchanged (scalars of one state, or arrays of one shape), each computed once.

    XLA's CPU fusion copies an operation of one operand (``cos q``, ``-s``, ``0.3 * c``) into every kernel that
    reads it, recursively: in a body of shared scalar subexpressions the few sines and cosines of a robot's joints
    were evaluated some 40 times each (Solo-12's ``qddot_fun``: 464 cosines compiled for 12 in the program). A
    product with the identity is not fused into its readers, so the values it returns are computed once and read
    from memory. It is exact (``x·1 + Σ 0·y``) for finite values; an infinite or NaN value makes every value of its
    group NaN. ``docs/jax.md`` has the measurements."""
    if not values:
        return ()
    if _ONE.get() is not None:  # one state compiled on its own: a division each (keep), no product
        return tuple(keep(value) for value in values)
    out = []
    for start in range(0, len(values), SEPARATE):
        group = jnp.stack(jnp.broadcast_arrays(*values[start : start + SEPARATE]), axis=-1)
        out += list(jnp.moveaxis(group @ jnp.eye(group.shape[-1], dtype=group.dtype), -1, 0))
    return tuple(out)


def _known_zero(entry):
    """Whether ``entry`` is a number equal to zero (known when tracing: structural zeros of ``M``)."""
    return isinstance(entry, (int, float)) and entry == 0


def _fill(pattern, order):
    """The nonzero entries of the Cholesky factor of a symmetric ``pattern`` (n×n booleans) eliminated in
    ``order``."""
    n = len(pattern)
    nonzero = [[pattern[order[i]][order[j]] for j in range(n)] for i in range(n)]
    count = 0
    for j in range(n):
        below = [i for i in range(j + 1, n) if nonzero[i][j]]
        count += len(below)
        for a in below:
            for b in below:
                nonzero[a][b] = True
    return count


def elimination_order(entries, n):
    """The order the factor eliminates the coordinates in: the natural one or its reverse, whichever fills fewer
    entries of the factor (a robot tree's ``M``, root first, has no fill-in leaves first)."""
    pattern = [[not _known_zero(entries[i * n + j]) or i == j for j in range(n)] for i in range(n)]
    natural, reverse = list(range(n)), list(range(n - 1, -1, -1))
    return reverse if _fill(pattern, reverse) < _fill(pattern, natural) else natural


def cholesky(entries, n):
    """The Cholesky factor of the symmetric positive definite ``M`` (n×n) of one state from its ``entries`` (a flat
    list in C order of scalars, tracers or numbers), unrolled at trace time: ``(order, L)`` with ``M[order][:,
    order] = L Lᵀ``, ``L`` a list of rows (``None`` where the entry is known to be zero: no operation for it).
    Under ``jax.vmap`` every step is elementwise over the batch (XLA's batched Cholesky and triangular solves were
    about twice as slow on UR5); the entries known to be zero (a robot's ``M`` between its legs) cost nothing and
    the order keeps them zero where it can (:func:`elimination_order`). NaN where ``M`` is not positive
    definite."""
    order = elimination_order(entries, n)
    lower: list[list] = [[None] * n for _ in range(n)]
    for j in range(n):
        row = order[j]
        pivot = _minus_products(entries[row * n + row], lower[j], lower[j], j)
        lower[j][j] = jnp.sqrt(0.0 if pivot is None else pivot)
        for i in range(j + 1, n):
            value = _minus_products(entries[order[i] * n + row], lower[i], lower[j], j)
            lower[i][j] = None if value is None else value / lower[j][j]
    return order, lower


def _minus_products(start, row_a, row_b, count):
    """``start − Σ_{k < count} a_k b_k`` over the entries of both rows that are not known to be zero (``None``: no
    entry is)."""
    value = None if _known_zero(start) else start
    for k in range(count):
        if row_a[k] is not None and row_b[k] is not None:
            term = row_a[k] * row_b[k]
            value = -term if value is None else value - term
    return value


def solve_factored(factor, rhs):
    """``M⁻¹ rhs`` from ``factor = cholesky(...)`` of ``M`` (n×n) for ``rhs`` of shape (n,) or (n, k), or a list of
    its n rows, by forward and back substitution on the factor's entries."""
    order, lower = factor
    n = len(order)
    rows = [rhs[order[i]] for i in range(n)]
    forward: list = []
    for i in range(n):
        value = rows[i]
        for k in range(i):
            if lower[i][k] is not None:
                value = value - lower[i][k] * forward[k]
        forward.append(value / lower[i][i])
    solution: list = [None] * n
    for i in reversed(range(n)):
        value = forward[i]
        for k in range(i + 1, n):
            if lower[k][i] is not None:
                value = value - lower[k][i] * solution[k]
        solution[i] = value / lower[i][i]
    placed: list = [None] * n
    for i in range(n):
        placed[order[i]] = solution[i]
    return jnp.stack([jnp.asarray(value) for value in placed])


def solve_spd(mass, rhs):
    """``M⁻¹ rhs`` for the symmetric positive definite ``M`` (n×n array, or a flat list of its n·n entries in C
    order, numbers where known) of one state and ``rhs`` of shape (n,) or (n, k), or a list of its n rows, by
    :func:`cholesky` and :func:`solve_factored`. NaN where ``M`` is not positive definite."""
    if isinstance(mass, (list, tuple)):
        n = round(len(mass) ** 0.5)
        entries = list(mass)
    else:
        n = mass.shape[0]
        entries = [mass[i, j] for i in range(n) for j in range(n)]
    return solve_factored(cholesky(entries, n), rhs)


def linearization(solved, n, m, top=None, speeds=None):
    """``(A, B)`` at one state from ``solved`` = ``[∂v̇/∂x, ∂v̇/∂u]`` (n × (n_x + m)), the speeds' rates in the
    state x = [q; v]: the upper rows of A are ``top`` (n × 2n; default ``[0, I]``, q̇ = v), and with ``speeds`` =
    S(q) = ∂q̇/∂v (n_q × n, a quaternion base: fewer speeds than coordinates) the lower rows are taken to the tangent
    space, ``[∂v̇/∂q S, ∂v̇/∂v]`` (2n columns)."""
    n_x = solved.shape[1] - m
    n_q = n_x - n
    lower = solved[:, :n_x]
    if speeds is not None:
        lower = jnp.concatenate([lower[:, :n_q] @ speeds, lower[:, n_q:]], axis=1)
    if top is None:
        top = jnp.concatenate([jnp.zeros((n, n), solved.dtype), jnp.eye(n, dtype=solved.dtype)], axis=1)
    A = jnp.concatenate([top.astype(solved.dtype), lower], axis=0)
    B = jnp.concatenate([jnp.zeros((n, m), solved.dtype), solved[:, n_x:]], axis=0)
    return A, B


def chart_rows(rates, n):
    """``(top, S)`` of a model with fewer speeds than coordinates written by the user (no quaternion base), as the
    numpy target's: dq moves q by S(q) dq to first order (S = ∂q̇/∂v, the last n columns of ``rates`` =
    ∂(S(q) v)/∂x), so the upper rows are ``[pinv(S) ∂(S v)/∂q S, I]``."""
    n_q = rates.shape[0]
    S = rates[:, n_q:]
    rows = jnp.linalg.pinv(S) @ rates[:, :n_q] @ S
    return jnp.concatenate([rows, jnp.eye(n, dtype=rates.dtype)], axis=1), S
