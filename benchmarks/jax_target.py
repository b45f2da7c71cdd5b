"""The JAX target's speed on UR5: first jit of ``qddot_fun``, and its vmap throughput over 10⁵ states against the
numpy target's batch call (and, where a C compiler is found, the C target's batch call, the ceiling).

Run: ``python -m benchmarks.jax_target [--states N] [--linearized]`` (needs jax: ``pip install "sls[jax]"``).
Each package is generated into a temporary folder; times are the best of ``--repeat`` calls after a warm-up.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import sls


def load(folder: Path, name: str) -> Any:
    """Import the generated package in ``folder`` as ``name``."""
    locations = [str(folder)]
    spec = importlib.util.spec_from_file_location(name, folder / "__init__.py", submodule_search_locations=locations)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def best(call: Callable[[], Any], repeat: int) -> float:
    """The shortest of ``repeat`` timed calls of ``call`` (seconds)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(example: str, states: int, repeat: int, function: str) -> dict:
    """Times of ``function`` of ``example`` (seconds): first jit, vmap over ``states``, numpy batch, C batch."""
    import jax

    rng = np.random.default_rng(0)
    model = sls.load_example(example)
    result: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sls.generate(model, folder / "jx", target="jax")
        sls.generate(model, folder / "py")
        jx, py = load(folder / "jx", "_bench_jax"), load(folder / "py", "_bench_py")
        x = rng.uniform(-1.0, 1.0, size=(states, len(py.STATE)))
        u = rng.normal(size=(states, py.N_INPUTS))
        f = getattr(jx, function)
        start = time.perf_counter()
        jax.block_until_ready(jax.jit(f)(x[0], u[0]))
        result["first jit (one state)"] = time.perf_counter() - start
        mapped = jax.jit(jax.vmap(f))
        xs, us = jax.device_put(x), jax.device_put(u)
        start = time.perf_counter()
        jax.block_until_ready(mapped(xs, us))
        result[f"first jit of vmap + call ({states} states)"] = time.perf_counter() - start
        result[f"jax vmap ({states} states)"] = best(lambda: jax.block_until_ready(mapped(xs, us)), repeat)
        result[f"numpy batch ({states} states)"] = best(lambda: getattr(py, function)(x, u), repeat)
        if shutil.which("cc"):
            sls.generate(model, folder / "c", target="c")
            c = load(folder / "c", "_bench_c")
            result[f"C batch ({states} states)"] = best(lambda: getattr(c, function)(x, u), repeat)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--example", default="ur5")
    parser.add_argument("--states", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--linearized", action="store_true", help="linearized_model instead of qddot_fun")
    args = parser.parse_args()
    function = "linearized_model" if args.linearized else "qddot_fun"
    times = measure(args.example, args.states, args.repeat, function)
    print(f"{args.example} {function}")
    for label, seconds in times.items():
        print(f"  {label:<45} {seconds * 1e3:10.1f} ms")
    jax_time = times[f"jax vmap ({args.states} states)"]
    for other in ("numpy", "C"):
        key = f"{other} batch ({args.states} states)"
        if key in times:
            print(f"  jax vmap throughput / {other} batch's: {times[key] / jax_time:.2f}")


if __name__ == "__main__":
    main()
