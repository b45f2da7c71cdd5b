"""The MATLAB target's names: keywords, builtins and the generated code's own names, renames of the user's
names, and the MATLAB names of generated locals.

Light (no sympy).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from sls import functions
from sls.backends import names as shared

#: MATLAB keywords (``iskeyword``), plus Octave's that MATLAB code could meet.
KEYWORDS = frozenset(
    "break case catch classdef continue else elseif end for function global if otherwise parfor persistent return "
    "spmd switch try while endfunction endif endfor endwhile unwind_protect do until".split()
)
#: Functions and constants the generated code calls or reads (a local of that name would shadow it).
BUILTINS = frozenset(
    "pi e i j eps Inf inf NaN nan NA true false sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh "
    "exp log log10 log2 sqrt abs sign max min mod rem floor ceil round fix gamma erf erfc heaviside hypot "
    "zeros eye chol error nargin numel isfield isstruct isnumeric isreal isfinite all fieldnames setdiff isempty "
    "struct reshape double sprintf disp size ans".split()
)
#: Locals and argument names of the generated functions.
LOCAL_NAMES = frozenset("x u p qddot lam rhs dM drhs residual_jac R failed Z k unknown".split())
#: Output names of every generated function (each is a local in its file) and the function names.
OUTPUT_NAMES = frozenset(o for f in functions.FUNCTIONS for o, _ in f.outputs) | frozenset(functions.NAMES)


def reserved(name: str) -> bool:
    """True when ``name`` cannot be a local of the generated MATLAB code as it is."""
    return (
        name in KEYWORDS
        or name in BUILTINS
        or name in LOCAL_NAMES
        or name in OUTPUT_NAMES
        or name.startswith("_")
        or name.endswith("_")
        or name.startswith("v_")
        or len(name) > 63
    )


def renames(names: list[str]) -> dict[str, str]:
    """``{name: MATLAB name}`` for the user's names MATLAB cannot use as they are (``v_`` put in front, then a
    number if taken)."""

    def candidates(name: str) -> Iterator[str]:
        base = "v_" + name.strip("_")[:55]
        yield base
        yield from (f"{base}{k}" for k in itertools.count(1))

    return shared.renames(names, reserved, candidates)


def local(name: str) -> str:
    """A generated local (``_t0``) as a MATLAB name (``t0_``: MATLAB names start with a letter); other names
    as they are (the user's names never start with ``_`` here: :func:`renames` gives them a ``v_``)."""
    return name[1:] + "_" if _is_generated(name) else name


def _is_generated(name: str) -> bool:
    """True for a generated local as sls's lowering names it (``_t0``, ``_g3``, ``_M1``, ``_qddot0``): ``_``,
    an ASCII letter, then letters, digits and ``_``."""
    first = name[1:2]
    return name.startswith("_") and first.isascii() and first.isalpha() and name[1:].isidentifier()
