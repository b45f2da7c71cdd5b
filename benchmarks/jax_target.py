"""The JAX target's speed on UR5 and on Solo-12's quaternion base: the first jit of ``qddot_fun`` and the throughput
over 10⁵ states, side by side with the numpy target's batch call, the C target's (the ceiling) and adam-robotics'
JAX dynamics on the same URDF (when installed).

Run: ``python -m benchmarks.jax_target [--states N] [--linearized] [--quick]`` (needs jax: ``pip install
"sls[jax]"``), or within ``python -m benchmarks``. Each package is generated into a temporary folder. The calls of
one robot are timed in interleaved rounds (the best of ``--repeat``), so the ratios hold on a shared machine:

* ``first jit``: the first call of ``qddot_fun`` on one state (trace and XLA compilation, then the call), wall
  clock and the process's CPU time (all its threads); ``one state, later calls``: the best of 200 calls after it;
* ``package batch``: ``qddot_fun(X, U)`` on the batch (the package's own batching: chunks of 2048 states);
* ``jit(vmap)``: ``jax.jit(jax.vmap(qddot_fun))(X, U)`` (one vmap over the whole batch);
* numpy and C: the batch call of the numpy and C targets' packages;
* adam: ``jax.jit(jax.vmap(...))`` of adam-robotics' mass matrix and bias force with ``jnp.linalg.solve`` (UR5), of
  its ``aba`` (Solo-12, floating base).
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


def interleaved(calls: dict[str, Callable[[], Any]], repeat: int) -> dict[str, float]:
    """The shortest of ``repeat`` rounds of every call (seconds), the calls of a round one after the other."""
    times: dict[str, list] = {label: [] for label in calls}
    for _ in range(repeat):
        for label, call in calls.items():
            start = time.perf_counter()
            call()
            times[label].append(time.perf_counter() - start)
    return {label: min(values) for label, values in times.items()}


def robots_folder() -> Path | None:
    """example-robot-data's robots folder (installed with Pinocchio), or ``None``."""
    try:
        import pinocchio as pin
    except ImportError:
        return None
    folder = Path(pin.__file__).resolve().parents[4] / "share" / "example-robot-data" / "robots"
    return folder if folder.is_dir() else None


def adam_dynamics(urdf: Path, joints: list, gravity: float, floating: bool) -> Callable | None:
    """adam-robotics' forward dynamics in JAX of a batch ``(X, U) → V̇`` (states in sls's layout on the leading axis,
    adam's own batching), jit-compiled, or ``None`` without adam.

    Fixed base: its mass matrix and bias force (joint block) with ``jnp.linalg.solve``; floating base: its ``aba``
    (base transform from the quaternion, the base's velocity turned to world axes: adam's mixed representation)."""
    try:
        import jax
        import jax.numpy as jnp
        from adam.jax import KinDynComputations
    except ImportError:
        return None
    kin = KinDynComputations(str(urdf), joints)
    kin.g = jnp.array([0.0, 0.0, -gravity, 0.0, 0.0, 0.0])
    n = len(joints)

    def fixed(X, U):
        H = jnp.broadcast_to(jnp.eye(4), X.shape[:1] + (4, 4))
        q, qd = X[:, :n], X[:, n:]
        M = kin.mass_matrix(H, q)[:, 6:, 6:]
        h = kin.bias_force(H, q, jnp.zeros(X.shape[:1] + (6,)), qd)[:, 6:]
        return jnp.linalg.solve(M, (U - h)[..., None])[..., 0]

    def free(X, U):
        qx, qy, qz, qw = X[:, 3], X[:, 4], X[:, 5], X[:, 6]
        R = jnp.stack(
            [
                jnp.stack([1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qz * qw), 2 * (qx * qz + qy * qw)], -1),
                jnp.stack([2 * (qx * qy + qz * qw), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qx * qw)], -1),
                jnp.stack([2 * (qx * qz - qy * qw), 2 * (qy * qz + qx * qw), 1 - 2 * (qx * qx + qy * qy)], -1),
            ],
            -2,
        )
        H = jnp.broadcast_to(jnp.eye(4), X.shape[:1] + (4, 4)).at[:, :3, :3].set(R).at[:, :3, 3].set(X[:, :3])
        v = X[:, 7 + n :]
        turn = lambda w: jnp.einsum("bij,bj->bi", R, w)  # noqa: E731
        base_velocity = jnp.concatenate([turn(v[:, :3]), turn(v[:, 3:6])], axis=1)
        return kin.aba(H, X[:, 7 : 7 + n], base_velocity, v[:, 6:], U[:, 6:])

    return jax.jit(free if floating else fixed)


def one_state_call(f: Callable, x: np.ndarray, u: np.ndarray, count: int = 200) -> float:
    """The shortest of ``count`` calls of ``f`` on one state (seconds), compiled already."""
    import jax

    best = float("inf")
    for _ in range(count):
        start = time.perf_counter()
        jax.block_until_ready(f(x, u))
        best = min(best, time.perf_counter() - start)
    return best


def measure(label: str, model: sls.Model, urdf: Path | None, states: int, repeat: int, function: str, log) -> dict:
    """Times (seconds) of ``function`` of ``model``: first jit, package batch, jit(vmap), numpy, C, adam."""
    import jax

    rng = np.random.default_rng(0)
    result: dict = {"robot": label, "function": function, "states": states}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sls.generate(model, folder / "jx", target="jax")
        sls.generate(model, folder / "py")
        tag = label.replace("-", "").replace(" ", "_").lower()
        jx, py = load(folder / "jx", f"_bench_jax_{tag}"), load(folder / "py", f"_bench_py_{tag}")
        x = rng.uniform(-1.0, 1.0, size=(states, len(py.STATE)))
        if "integrate" in py.__all__:
            x[:, 3:7] /= np.linalg.norm(x[:, 3:7], axis=1, keepdims=True)
        u = rng.normal(size=(states, py.N_INPUTS))
        f = getattr(jx, function)
        start, cpu = time.perf_counter(), time.process_time()
        jax.block_until_ready(f(x[0], u[0]))
        result["first_jit_s"] = time.perf_counter() - start
        result["first_jit_cpu"] = time.process_time() - cpu  # every thread of the process (XLA compiles on several)
        result["one_state_call"] = one_state_call(f, x[1], u[1])
        xs, us = jax.device_put(x), jax.device_put(u)
        mapped = jax.jit(jax.vmap(f))
        start = time.perf_counter()
        jax.block_until_ready(f(xs, us))
        result["first_batch_s"] = time.perf_counter() - start
        jax.block_until_ready(mapped(xs, us))
        calls = {
            "jax": lambda: jax.block_until_ready(f(xs, us)),
            "jax_vmap": lambda: jax.block_until_ready(mapped(xs, us)),
            "numpy": lambda: getattr(py, function)(x, u),
        }
        if shutil.which("cc"):
            sls.generate(model, folder / "c", target="c")
            c = load(folder / "c", f"_bench_c_{tag}")
            calls["C"] = lambda: getattr(c, function)(x, u)
        joints = [s.name for s in model.q][7 if "integrate" in py.__all__ else 0 :]
        gravity = float(model.params.get("g", 9.81) or 9.81)
        adam = None if urdf is None else adam_dynamics(urdf, joints, gravity, "integrate" in py.__all__)
        if adam is not None and function == "qddot_fun":
            # adam on at most 10⁴ states (its compilation grows with the batch); the table compares per state
            count = min(states, 10_000)
            xa, ua = xs[:count], us[:count]
            start = time.perf_counter()
            jax.block_until_ready(adam(xa, ua))
            result["adam_first_jit_s"] = time.perf_counter() - start
            result["adam_states"] = count
            calls["adam"] = lambda: jax.block_until_ready(adam(xa, ua))
        result.update({f"{key}_s": value for key, value in interleaved(calls, repeat).items()})
    log(f"  {label} {function}: " + ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in result.items() if k.endswith("_s")))
    return result


def robots(quick: bool) -> list[tuple[str, sls.Model, Path | None]]:
    """The robots measured: UR5 (bundled), Solo-12 on its quaternion base (example-robot-data, when installed);
    ``quick``: the double pendulum alone (a smoke test: small compilations, no adam)."""
    if quick:
        return [("double pendulum", sls.load_example("double_pendulum"), None)]
    ur5 = Path(sls.__file__).resolve().parent / "examples" / "ur5.urdf"
    chosen: list[tuple[str, sls.Model, Path | None]] = [("UR5", sls.load_urdf(ur5), ur5)]
    folder = robots_folder()
    if folder is not None:
        solo = folder / "solo_description" / "robots" / "solo12.urdf"
        chosen.append(("Solo-12", sls.load_urdf(solo, floating_base=True, name="solo12"), solo))
    return chosen


def run(
    quick: bool = False, log=print, states: int | None = None, repeat: int | None = None, function: str = ""
) -> dict:
    """The measurements of every robot (``jax`` must be installed: ImportError otherwise)."""
    import jax  # noqa: F401 (fails here when jax is missing)

    count = states or (2_000 if quick else 100_000)
    rows = [
        measure(label, model, urdf, count, repeat or (2 if quick else 5), function or "qddot_fun", log)
        for label, model, urdf in robots(quick)
    ]
    return {"rows": rows}


def table(report: dict) -> str:
    """The measurements side by side (a Markdown table); the ratios are of time per state, the other's over the JAX
    package's batch call (above 1: JAX is faster)."""
    lines = [
        "| JAX target | first jit (CPU) | one state, later calls | package batch | jit(vmap) | numpy batch | C batch | "
        "adam JAX | JAX / adam | jit(vmap) / adam | JAX / numpy | JAX / C |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["rows"]:
        ms = {key: f"{r[key] * 1e3:.1f} ms" for key in r if key.endswith("_s")}
        per_state = {key: r[key] / r.get("adam_states" if key == "adam_s" else "states", 1) for key in ms}
        ratio = {key: f"{per_state[key] / per_state['jax_s']:.2f}×" for key in ms}
        adam = f"{ms['adam_s']} ({r['adam_states']} states)" if "adam_s" in r else "missing (pip install adam-robotics)"
        adam = adam if r["robot"] != "double pendulum" else "not run (--quick)"
        vmap_ratio = f"{per_state['adam_s'] / per_state['jax_vmap_s']:.2f}×" if "adam_s" in r else "—"
        lines.append(
            f"| {r['robot']} `{r['function']}`, {r['states']} states | {r['first_jit_s']:.2f} s "
            f"({r.get('first_jit_cpu', float('nan')):.2f} s) | {r.get('one_state_call', float('nan')) * 1e6:.0f} µs | "
            f"{ms['jax_s']} | "
            f"{ms['jax_vmap_s']} | {ms['numpy_s']} | {ms.get('C_s', 'missing')} | {adam} | "
            f"{ratio.get('adam_s', '—')} | {vmap_ratio} | {ratio['numpy_s']} | {ratio.get('C_s', '—')} |"
        )
    return "\n".join(lines)


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=None)
    parser.add_argument("--quick", action="store_true", help="the double pendulum only, 2 000 states (a smoke test)")
    parser.add_argument("--linearized", action="store_true", help="linearized_model instead of qddot_fun")
    args = parser.parse_args(argv)
    function = "linearized_model" if args.linearized else "qddot_fun"
    print(table(run(args.quick, print, args.states, args.repeat, function)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
