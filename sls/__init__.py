"""sls — the Symbolic Lagrangian Solver, in Python.

From a mechanical system's kinetic energy ``T``, potential energy ``V``,
friction ``fric`` and state ``x = [q; qdot]``, sls derives the mass matrix,
Coriolis matrix, potential and friction forces and their Jacobians, and writes
them as standalone numpy modules, with ``qddot_fun`` and ``linearized_model``
(or, with ``target="c"``, as C99 behind a compiled package with the same API).

Stages (one module each): :mod:`sls.algebra.expressions` and :mod:`sls.model`
(parse and check the model) → :mod:`sls.derive` (symbolic terms) →
:mod:`sls.derive.validate` (checks on derived terms) → :mod:`sls.lowering`
(language-neutral programs for the functions of :mod:`sls.functions`) → a
backend of :mod:`sls.backends` (Python: :mod:`sls.backends.python` and
:mod:`sls.backends.render`; C: :mod:`sls.backends.c`) → :mod:`sls.output.write` (atomic,
non-clobbering write). :mod:`sls.generate` runs them; :mod:`sls.cli.app` is the
command line.
"""

from sls.derive.symbolic import Symbolic, symbolic  # noqa: E402
from sls.errors import (  # noqa: E402
    ControlError,
    ExpressionError,
    MissingDependencyError,
    ModelError,
    ModelFileError,
    ModelTypeError,
    OutputError,
    SlsError,
    UsageError,
)
from sls.generate import generate, sym_lagrangian_solver  # noqa: E402
from sls.model import Model  # noqa: E402
from sls.readers import (  # noqa: E402
    load_example,
    load_mjcf,
    load_python,
    load_toml,
    load_urdf,
    model_from_mechanics,
    model_from_strings,
    model_from_sympy,
)
from sls.version import __version__  # noqa: E402

__all__ = [
    "__version__",
    "sym_lagrangian_solver",
    "generate",
    "Model",
    "load_example",
    "load_mjcf",
    "load_python",
    "load_toml",
    "load_urdf",
    "model_from_mechanics",
    "model_from_strings",
    "model_from_sympy",
    "symbolic",
    "Symbolic",
    "SlsError",
    "ExpressionError",
    "ModelError",
    "ModelFileError",
    "ModelTypeError",
    "OutputError",
    "UsageError",
    "ControlError",
    "MissingDependencyError",
]
