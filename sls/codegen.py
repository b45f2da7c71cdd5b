"""The Python target's printers and code, under their former name (now :mod:`sls.backends.python`).

Kept so that ``from sls.codegen import SCALAR, BATCH`` goes on working; new code imports
:mod:`sls.backends.python.printer` and :mod:`sls.backends.python.code`.
"""

from __future__ import annotations

from .backends.python import UNROLL_MAX, kernels
from .backends.python.code import Kernel, Output, SolverCode, build_kernel, solver_code
from .backends.python.printer import (
    BATCH,
    BATCH_PATH,
    PATHS,
    SCALAR,
    SCALAR_PATH,
    BatchPrinter,
    ScalarPrinter,
)

__all__ = [
    "BATCH",
    "BATCH_PATH",
    "PATHS",
    "SCALAR",
    "SCALAR_PATH",
    "UNROLL_MAX",
    "BatchPrinter",
    "Kernel",
    "Output",
    "ScalarPrinter",
    "SolverCode",
    "build_kernel",
    "kernels",
    "solver_code",
]
