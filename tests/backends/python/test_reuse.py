"""The Python target's reuse of dead temporaries' names (sls.backends.python.reuse)."""

import random

from sls.backends.python import reuse
from sls.backends.python.reuse import reads_of, reuse_names
from sls.lowering import Expr, Let


def _kernel(count: int, seed: int = 3) -> list:
    """A random straight-line kernel: ``_g<k>`` from two earlier temporaries or the inputs ``a``, ``b``."""
    rng = random.Random(seed)
    names = ["a", "b"]
    lets = []
    for k in range(count):
        left, right = rng.choice(names[-40:]), rng.choice(names[-40:] if k % 10 else names)
        value = Expr.join(Expr.name(left), f"*{rng.uniform(-1, 1)!r} + ", Expr.name(right))
        lets.append(Let(f"_g{k}", value))
        names.append(f"_g{k}")
    return lets


def _run(lets: list, kept: list) -> dict:
    code = "\n".join(f"{let.name} = {let.value.text()}" for let in lets)
    scope = {"a": 0.3, "b": -0.7}
    exec(code, scope)
    return {name: scope[name] for name in kept}


def test_small_kernels_keep_their_names():
    lets = _kernel(reuse.REUSE_ABOVE)
    assert reuse_names(lets, {"_g5"}) == lets


def test_large_kernels_reuse_dead_names_and_keep_the_values_read_later():
    lets = _kernel(3 * reuse.REUSE_ABOVE)
    kept = ["_g7", "_g100", lets[-1].name, lets[-2].name]
    renamed = reuse_names(lets, set(kept))
    assert len(renamed) == len(lets)
    assert _run(renamed, kept) == _run(lets, kept)  # the same arithmetic, in the same order
    assert len({let.name for let in renamed}) < len(lets) / 4  # names in use at once, not one per temporary
    assert {let.name for let in renamed} <= {let.name for let in lets}  # names of the lowering's own


def test_reads_of_statements_and_values():
    lets = _kernel(3)
    assert reads_of(lets[1:], [2.0, Expr.name("c")]) == set(lets[1].reads) | set(lets[2].reads) | {"c"}
