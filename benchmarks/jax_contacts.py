"""The JAX target on a robot standing on its feet: Solo-12 with four point contacts (example-robot-data), side by side
with the same robot without contacts.

Run: ``python -m benchmarks.jax_contacts`` (needs jax and Pinocchio's example-robot-data: ``pip install "sls[jax]"
pin example-robot-data``), or within ``python -m benchmarks``. Each measurement runs in a fresh Python process (a
first compilation, and the process's peak memory), after JAX's own start-up (one tiny jit):

* ``first call``: the first call of ``vdot_fun`` on one state (the package's own compilation: trace, XLA, call),
  wall clock and the process's CPU time;
* ``grad of a rollout``: ``jax.jit(jax.grad(loss), compiler_options=...)`` with ``loss`` 100 explicit steps of
  ``x + dt * xdot_fun(x, u_k)`` under ``jax.lax.scan`` (the inputs' gradient), compiled with the package's
  ``COMPILER_OPTIONS`` and LLVM's optimization level 0 (as ``docs/jax.md`` recommends for a gradient), then called;
  wall clock, and the process's peak resident memory (``ru_maxrss``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import sls

from .jax_target import robots_folder

#: Solo-12's feet (its links' names).
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
#: Explicit steps of the rollout whose gradient is measured, and their length (s).
STEPS, DT = 100, 0.001
#: XLA's options of the gradient's compilation, over the package's COMPILER_OPTIONS.
GRADIENT_OPTIONS = {"xla_backend_optimization_level": 0}

CHILD = """
import importlib.util, json, resource, sys, time
import jax, jax.numpy as jnp
import numpy as np
folder, mode = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("pkg", folder + "/__init__.py", submodule_search_locations=[folder])
pkg = importlib.util.module_from_spec(spec); sys.modules["pkg"] = pkg; spec.loader.exec_module(pkg)
x0 = jnp.asarray(pkg.STANCES["standing"]) if pkg.STANCES else jnp.zeros(pkg.N_Q + pkg.N_V)
u0 = jnp.zeros(pkg.N_INPUTS)
jax.jit(lambda a: a + 1)(jnp.ones(2)).block_until_ready()  # JAX's own start-up, not the package's
start, cpu = time.perf_counter(), time.process_time()
if mode == "first":
    value = pkg.vdot_fun(x0, u0)
else:
    steps, dt, options = int(sys.argv[3]), float(sys.argv[4]), json.loads(sys.argv[5])

    def loss(inputs):
        def step(x, u):
            x = x + dt * pkg.xdot_fun(x, u)
            return x, jnp.sum(x[:3] ** 2)

        return jnp.sum(jax.lax.scan(step, x0, inputs)[1])

    gradient = jax.jit(jax.grad(loss), compiler_options={**pkg.COMPILER_OPTIONS, **options})
    value = gradient(jnp.zeros((steps, pkg.N_INPUTS)))
jax.block_until_ready(value)
print(json.dumps({"wall_s": time.perf_counter() - start, "cpu_s": time.process_time() - cpu,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "finite": bool(np.isfinite(np.asarray(value)).all())}))
"""


def child(folder: Path, mode: str) -> dict:
    """One measurement in a fresh process (``mode``: ``first`` or ``grad``)."""
    args = [sys.executable, "-c", CHILD, str(folder), mode, str(STEPS), str(DT), json.dumps(GRADIENT_OPTIONS)]
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(log=print) -> dict:
    """Solo-12 with and without its four feet held: the first call and the rollout's gradient (``jax`` and
    example-robot-data must be installed: ImportError otherwise)."""
    import jax  # noqa: F401 (fails here when jax is missing)

    robots = robots_folder()
    if robots is None:
        raise ImportError("example-robot-data is not installed (pip install pin example-robot-data)")
    urdf = robots / "solo_description" / "robots" / "solo12.urdf"
    srdf = robots / "solo_description" / "srdf" / "solo.srdf"
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, contacts in (("four feet", FEET), ("no contacts", ())):
            held = {"contacts": list(contacts)} if contacts else {}
            model = sls.load_urdf(urdf, floating_base=True, srdf=srdf, stance="standing", name="solo12", **held)
            folder = Path(tmp) / label.replace(" ", "_")
            sls.generate(model, folder, target="jax")
            row = {"robot": f"Solo-12, {label}", "first": child(folder, "first"), "grad": child(folder, "grad")}
            log(f"  {row['robot']}: first call {row['first']['wall_s']:.2f} s, grad {row['grad']['wall_s']:.2f} s")
            rows.append(row)
    return {"rows": rows, "steps": STEPS}


def table(report: dict) -> str:
    """The measurements side by side (a Markdown table)."""
    lines = [
        "| JAX target | first call of `vdot_fun` (CPU) | peak "
        f"| grad of a {report['steps']}-step rollout (CPU) | peak |",
        "|---|---|---|---|---|",
    ]
    for r in report["rows"]:
        first, grad = r["first"], r["grad"]
        lines.append(
            f"| {r['robot']} | {first['wall_s']:.2f} s ({first['cpu_s']:.2f} s) | {first['peak_mb']:.0f} MB | "
            f"{grad['wall_s']:.2f} s ({grad['cpu_s']:.2f} s) | {grad['peak_mb']:.0f} MB |"
        )
    return "\n".join(lines)


def main(argv: list | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    print(table(run()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
