"""The JAX target: pure ``jax.numpy`` modules, one per generated function (``sls generate --target jax``).

* :mod:`.printer` — sympy's JAX printer writing ``jnp.*`` on the scalars of one state (:data:`~.printer.PATHS`);
* :mod:`.code` — the lowered programs as the lines of the templates (:class:`~.code.JaxKernel`,
  :class:`~.code.JaxSolver`);
* :mod:`.files` — the package's files from ``templates/jax`` and the runtime sources ``runtime/`` (``_runtime.py``;
  ``_constrained.py``, the numpy target's structured solve of a constrained model in ``jax.numpy``;
  ``_free_flyer.py``, a quaternion base's ``integrate``, ``difference``, ``normalize``).

Every function body evaluates one state; the public functions batch it over leading axes by :func:`jax.vmap`
and are :func:`jax.jit`-compiled, so ``jax.jit``, ``jax.vmap``, ``jax.grad`` and ``jax.jacfwd`` of them work.
``qddot_fun`` and ``linearized_model`` assemble ``M`` and their right-hand sides (as the numpy target's
generic path) and solve by the runtime's Cholesky, unrolled on the entries at trace time with the entries known to be
zero skipped and the order of least fill-in (``docs/jax.md`` has the measurements behind these choices: XLA's
batched Cholesky and ``jax.jacfwd`` of ``xdot_fun`` were slower). The kernels' sines and cosines pass through the
runtime's ``separate`` (XLA's fusion copied them into every kernel reading them), and a caller's ``jax.vmap`` maps
a body in chunks of states as the package's own batching does (``_runtime.chunked``). The temporaries read more than
once pass through ``_runtime.keep``: unchanged, except when one state is compiled on its own, where a division by a
traced 1.0 keeps XLA from copying them (a short first compilation; ``_runtime.jit``).
Generating needs no jax; the generated package does.
Files are marked by the Python target's header (:data:`sls.backends.python.HEADER_MARK`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sls import functions
from sls.backends.base import Backend
from sls.backends.python import HEADER_MARK

if TYPE_CHECKING:  # a type only: no import at run time
    from sls.model import Model


class JaxBackend(Backend):
    """Pure ``jax.numpy`` modules: one path (one state), batched by ``jax.vmap``."""

    name = "jax"
    header_mark = HEADER_MARK
    suffixes = (".py",)
    provides = "jax.numpy provides"
    constrained = True
    speeds = True
    quaternions = True
    #: Never unroll in the generated code: the solving functions assemble M and call the runtime's Cholesky. Measured
    #: (``docs/jax.md``): the lowering's unrolled L D Lᵀ took about 4 times as long on UR5 (10⁵ states, vmap); its
    #: leaves-first factor on Solo-12 took 3 to 4 times as long to compile (XLA copies its cheap operations).
    unroll_max = 0

    def file_names(self, model: Model) -> list:
        extra = ["_constrained.py", "_terms.py"] if any(f.numeric for f in functions.for_model(model)) else []
        extra += ["_free_flyer.py"] if model.tree is not None and model.tree.free is not None else []
        return [f"{name}.py" for name in functions.names(model)] + ["__init__.py", "_runtime.py", *extra]

    def paths(self, model: Model) -> list:
        from sls.backends.jax.printer import PATHS

        return PATHS

    def kernel(self, function: functions.Function, lowered: list, model: Model) -> Any:
        from sls.backends.jax.code import build_kernel

        return build_kernel(*lowered)

    def solver(self, function: functions.Function, programs: list, model: Model) -> Any:
        from sls.backends.jax.code import solver_code

        return solver_code(*programs)

    def builders(self, dynamics: Any) -> dict:
        """The base's builders; a constrained model's first solved function (:attr:`~sls.functions.Function.numeric`)
        builds the fused terms its solves share (``_terms.py``: :func:`sls.lowering.terms.lower_terms`)."""
        result = super().builders(dynamics)
        numeric = [f.name for f in functions.for_model(dynamics.model) if f.numeric]
        if numeric:
            from sls.backends.jax.code import build_kernel
            from sls.lowering.terms import lower_terms

            paths = self.paths(dynamics.model)
            result[numeric[0]] = lambda: build_kernel(*lower_terms(dynamics, paths))
        return result

    def render(self, model: Model, code: dict, simplify: bool, method: str) -> dict:
        from sls.backends.jax.files import render_package

        return render_package(self.environment(), model, code, simplify, method, self.runtime_files())
