"""The JAX target's code (``sls/backends/jax/code.py``): which temporaries a body keeps (``_runtime.keep``) and
separates (``_runtime.separate``)."""

from __future__ import annotations

import re

from sls.backends.jax.code import lines_of, readers
from sls.lowering import Expr, Let, mark_library, mark_name


def mark(match: re.Match) -> str:
    return (mark_library if "." in match[0] else mark_name)(match[0])


def expr(text: str) -> Expr:
    """``text`` as the printers mark it: ``jnp.*`` library names, every other identifier a name it reads."""
    return Expr.parse(re.sub(r"jnp\.\w+|[A-Za-z_]\w*", mark, text))


def let(name: str, text: str) -> Let:
    return Let(name, expr(text))


def test_a_temporary_of_several_operations_read_twice_is_kept_and_sines_are_separated():
    statements = [
        let("_t0", "jnp.sin(q)"),
        let("_t1", "a*b + c"),  # two operations, read twice: kept
        let("_t2", "-a"),  # one operation, read twice: not kept
        let("_t3", "a*b*c"),  # read once: not kept
        let("_t4", "_t0*_t1 + _t2"),
        let("_t5", "_t1*_t2 + _t3"),
    ]
    lines = lines_of(statements, readers(statements, [expr("_t4 + _t5")]))
    assert lines == [
        "_t0 = jnp.sin(q)",
        "_t1 = a*b + c",
        "_t1 = _runtime.keep(_t1)",
        "_t2 = -a",
        "_t3 = a*b*c",
        "_t0, = _runtime.separate(_t0)",
        "_t4 = _t0*_t1 + _t2",
        "_t5 = _t1*_t2 + _t3",
    ]
