"""Run the benchmark: ``python -m benchmarks [--quick] [--out FILE]``.

In one process: generates sls's package for each benchmark model, builds every
installed peer, checks that all compute the same ``qddot`` and ``(A, B)`` as
sls at a few states (a peer that disagrees is reported and not timed), then
times per-call (median over repeats) and batch throughput, and generation time
against n for the n-link pendulum. Then the robot files (``benchmarks/robots.py``): UR5, Panda
and iiwa from their packages generated in a child process each (time, peak RSS) and timed side by
side with Pinocchio on the same file in one process (Python and C target, interleaved rounds),
and the G1 humanoid's generation with a floating base. Prints a table and writes JSON to
``benchmarks/results/``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import resource
import sys
import time
import timeit
from pathlib import Path

import numpy as np
import sympy

import sls
from sls.readers.nlink import nlink_pendulum, relative_chain

from . import (
    c_contacts,
    casadi_target,
    ctarget,
    energy3d,
    free_flyer,
    jax_contacts,
    jax_target,
    mjcf_corpus,
    peers,
    robots,
)

RESULTS = Path(__file__).resolve().parent / "results"


def models(quick: bool) -> list:
    if quick:
        return [nlink_pendulum(2)]
    return [
        sls.load_example("mobile_manipulator"),
        nlink_pendulum(2),
        nlink_pendulum(5),
        nlink_pendulum(10),
        relative_chain(6),
    ]


def states(model, count: int, seed: int = 7):
    rng = np.random.default_rng(seed)
    n, m = model.n, model.m
    X = np.hstack([rng.uniform(-math.pi, math.pi, (count, n)), rng.uniform(-1.0, 1.0, (count, n))])
    U = rng.uniform(-1.0, 1.0, (count, m))
    return X, U


def per_call(f, args, repeat: int, budget: float) -> float:
    """Median seconds per call, each repeat running about ``budget`` seconds."""
    start = time.perf_counter()
    f(*args)
    once = max(time.perf_counter() - start, 1e-7)
    number = max(1, int(budget / once))
    times = timeit.repeat(lambda: f(*args), number=number, repeat=repeat)
    return float(np.median(times)) / number


def agree(got, want, what: str) -> str | None:
    got = np.asarray(got, dtype=float)
    want = np.asarray(want, dtype=float)
    if got.shape != want.shape:
        return f"{what}: shape {got.shape} != {want.shape}"
    scale = max(1.0, float(np.abs(want).max()))
    err = float(np.abs(got - want).max()) / scale
    return None if err < 1e-8 else f"{what}: differs from sls by {err:.2e} (relative)"


def bench_model(model, args, log) -> dict:
    folder = peers.temp_folder()
    t = peers.terms(model)
    impls, notes = [], {}
    reference = peers.build_sls(model, t, folder)
    impls.append(reference)
    wanted = peers.QUICK_PEERS if args.quick else [name for name, _ in peers.PEERS]
    for name, build in peers.PEERS:
        if name not in wanted:
            continue
        try:
            impls.append(build(model, t, folder))
        except peers.Skip as exc:
            notes[name] = f"skipped: {exc}"
        except Exception as exc:  # a peer failing to build is a note, not a crash
            notes[name] = f"skipped: {type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''}"
    X, U = states(model, 4)
    checked = []
    for impl in impls:
        problem = None
        for x, u in zip(X, U):
            problem = problem or agree(impl.qddot(x, u), reference.qddot(x, u), "qddot")
            if impl.linearize is not None:
                A, B = impl.linearize(x, u)
                A0, B0 = reference.linearize(x, u)
                problem = problem or agree(A, A0, "A")
                if impl.name != "LagrangesMethod" or B is not None:
                    problem = problem or agree(B, B0, "B")
        if impl.batch is not None:
            problem = problem or agree(
                impl.batch(X, U), np.array([reference.qddot(x, u) for x, u in zip(X, U)]), "batch qddot"
            )
        if problem:
            notes[impl.name] = f"NOT TIMED, {problem}"
        else:
            checked.append(impl)
    rows = []
    x, u = X[0], U[0]
    Xb, Ub = states(model, args.batch)
    for impl in checked:
        log(f"  timing {impl.name} on {model.name}")
        row = {
            "model": model.name,
            "n": model.n,
            "method": impl.name,
            "build_s": impl.build_time,
            "note": notes.get(impl.name, impl.note),
        }
        row["qddot_us"] = per_call(impl.qddot, (x, u), args.repeat, args.budget) * 1e6
        row["linearize_us"] = (
            per_call(impl.linearize, (x, u), args.repeat, args.budget) * 1e6 if impl.linearize else None
        )
        if impl.batch is not None:
            impl.batch(Xb, Ub)
            times = timeit.repeat(lambda impl=impl: impl.batch(Xb, Ub), number=1, repeat=max(3, args.repeat // 2))
            row["batch_states_per_s"] = args.batch / float(np.median(times))
        else:
            row["batch_states_per_s"] = None
        rows.append(row)
    return {"rows": rows, "notes": notes}


# --------------------------------------------------------------------------
# generation time


def sympy_recipe(model) -> None:
    """The textbook sympy recipe: Hessian for M, Lagrange's equations by diff, Jacobians of qddot's parts, lambdify."""
    q, dq, n = model.q, model.dq, model.n
    L = model.T - model.V
    M = sympy.hessian(model.T, dq)
    t = sympy.Symbol("t")
    # d/dt dL/ddq = M qdd + (dM/dt) dq ... with qdd = 0: the velocity terms by the chain rule
    p = [sympy.diff(L, v) for v in dq]
    h = [sum(sympy.diff(p[k], qi) * dqi for qi, dqi in zip(q, dq)) - sympy.diff(L, q[k]) for k in range(n)]
    rhs = sympy.Matrix([u - hk - f for u, hk, f in zip(model.inputs, h, model.fric)])
    x = list(model.state)
    jac_rhs = rhs.jacobian(x)
    jac_M = [M.diff(qi) for qi in q]
    args = x + list(model.inputs) + [sympy.Symbol(k, real=True) for k in model.params]
    sympy.lambdify(args, [M, rhs], modules="numpy", cse=True)
    sympy.lambdify(args, [M, rhs, jac_rhs, jac_M], modules="numpy", cse=True)
    del t


def lagrange_recipe(model) -> None:
    t = peers.terms(model)
    peers.lagranges_method(model, t, model.n <= peers.LAGRANGE_LINEARIZE_MAX_N)


def generation(args, log) -> list:
    ns = [2] if args.quick else args.gen_n
    rows = []
    folder = peers.temp_folder()
    budgets = {"sympy recipe": args.baseline_cap, "LagrangesMethod": args.baseline_cap}
    for n in ns:
        model = nlink_pendulum(n)
        peak0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        start = time.perf_counter()
        sls.generate(model, folder / f"gen{n}")
        elapsed = time.perf_counter() - start
        rows.append(
            {
                "method": "sls",
                "n": n,
                "seconds": elapsed,
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        )
        log(f"  generation n={n}: sls {elapsed:.2f} s")
        del peak0
        for name, recipe in (("sympy recipe", sympy_recipe), ("LagrangesMethod", lagrange_recipe)):
            if args.quick and name == "LagrangesMethod":
                continue
            if budgets[name] is None or n > budgets[name]:
                continue
            start = time.perf_counter()
            recipe(model)
            elapsed = time.perf_counter() - start
            rows.append({"method": name, "n": n, "seconds": elapsed})
            log(f"  generation n={n}: {name} {elapsed:.2f} s")
            if elapsed > args.baseline_seconds:
                budgets[name] = n  # the next n would take too long
    return rows


def robot_scale(args, log) -> dict:
    """The unkind models: generation time of the relative-angle chain (and the bundled URDF arms) and
    per-call times of the chain against the absolute-angle pendulum with the same n (same physics)."""
    folder = peers.temp_folder()
    rows = []
    for n in [4] if args.quick else args.chain_n:
        start = time.perf_counter()
        model = relative_chain(n)
        loaded = time.perf_counter()
        report = sls.generate(model, folder / f"chain{n}")
        done = time.perf_counter()
        rows.append(
            {
                "method": "sls chain",
                "n": n,
                "seconds": done - start,
                "parse_seconds": loaded - start,
                "stages": report.timings,
            }
        )
        log(f"  chain n={n}: {done - start:.2f} s (parse {loaded - start:.2f} s, {report.timings})")
    root = Path(__file__).resolve().parent.parent
    arms = {"ur5": root / "sls" / "examples" / "ur5.urdf", "iiwa14": root / "tests" / "data" / "iiwa14.urdf"}
    for name, urdf in [] if args.quick else arms.items():
        start = time.perf_counter()
        model = sls.load_urdf(urdf)
        sls.generate(model, folder / name)
        rows.append({"method": f"sls {name} URDF", "n": model.n, "seconds": time.perf_counter() - start})
        log(f"  {name}: {rows[-1]['seconds']:.2f} s")
        try:
            import pinocchio as pin
        except ImportError:
            continue
        start = time.perf_counter()
        pin.buildModelFromUrdf(str(urdf))
        rows.append({"method": f"Pinocchio {name} URDF load", "n": model.n, "seconds": time.perf_counter() - start})
    if not args.quick:
        import runpy

        model_file = Path(__file__).resolve().parent / "models" / "ur5_dh.py"
        start = time.perf_counter()
        runpy.run_path(str(model_file))
        own = time.perf_counter() - start
        start = time.perf_counter()
        sls.generate(sls.load_python(model_file), folder / "ur5_dh")
        total = time.perf_counter() - start
        rows.append({"method": "sls ur5_dh.py (sls's part)", "n": 6, "seconds": total - own, "model_file_seconds": own})
        log(f"  ur5_dh.py: sls's part {total - own:.2f} s (the model file itself {own:.2f} s)")
    calls = {}
    n = 4 if args.quick else 10
    packages = {}
    for label, model in ((f"chain{n}", relative_chain(n)), (f"nlink{n}", nlink_pendulum(n))):
        out = folder / f"percall-{label}"
        sls.generate(model, out)
        X, U = states(model, 1)
        packages[label] = (peers.import_generated(out), X[0], U[0])
    (chain, xc, uc), (pendulum, xp, up) = packages.values()
    # Interleaved rounds: the shared machine's speed drifts, so each round times both models back to back.
    times = ctarget._rounds(
        {
            "qddot": (lambda: chain.qddot_fun(xc, uc), lambda: pendulum.qddot_fun(xp, up)),
            "linearize": (lambda: chain.linearized_model(xc, uc), lambda: pendulum.linearized_model(xp, up)),
        },
        3 if args.quick else 15,
        args.budget,
    )
    labels = list(packages)
    for k, label in enumerate(labels):
        calls[label] = {
            "qddot_us": 1e6 * float(np.median(times["qddot"][k])),
            "linearize_us": 1e6 * float(np.median(times["linearize"][k])),
        }
        log(f"  per call {label}: {calls[label]}")
    ratios = {what: ctarget._summary(what, *times[what], "<= 2") for what in times}
    calls["ratio"] = {what: {key: r[key] for key in ("ratio", "ratio_min", "ratio_max")} for what, r in ratios.items()}
    log(f"  chain / pendulum: {calls['ratio']}")
    return {"generation": rows, "per_call": calls}


def robot_table(robot: dict) -> str:
    lines = ["| model | n | generate s (in process) |", "| --- | ---: | ---: |"]
    for r in robot["generation"]:
        label = r["method"][4:] if r["method"].startswith("sls ") else r["method"]
        lines.append(f"| {label} | {r['n']} | {r['seconds']:.3g} |")
    exponent = growth_exponent(robot["generation"], "sls chain")
    if exponent is not None:
        lines.append(f"\nrelative-angle chain generation grows like n^{exponent:.2f} (fit over n >= 5)")
    calls = dict(robot["per_call"])
    ratio = calls.pop("ratio")
    lines.append("\n| model | qddot µs | linearize µs |\n| --- | ---: | ---: |")
    for label, r in calls.items():
        lines.append(f"| {label} | {fmt(r['qddot_us'])} | {fmt(r['linearize_us'])} |")
    q, lin = ratio["qddot"], ratio["linearize"]
    lines.append(
        f"\nchain / pendulum per call (median of interleaved rounds, spread): qddot {q['ratio']:.2f}x "
        f"({q['ratio_min']:.2f}-{q['ratio_max']:.2f}), linearize {lin['ratio']:.2f}x "
        f"({lin['ratio_min']:.2f}-{lin['ratio_max']:.2f}) (target <= 2x)"
    )
    return "\n".join(lines)


def growth_exponent(rows: list, method: str = "sls") -> float | None:
    pts = [(r["n"], r["seconds"]) for r in rows if r["method"] == method and r["n"] >= 5]
    if len(pts) < 2:
        return None
    ln = np.log([p[0] for p in pts])
    lt = np.log([p[1] for p in pts])
    return float(np.polyfit(ln, lt, 1)[0])


# --------------------------------------------------------------------------
# report


def fmt(value, unit="") -> str:
    if value is None:
        return "—"
    if unit == "/s":
        return f"{value / 1e6:.2f} M/s" if value >= 1e6 else f"{value / 1e3:.1f} k/s"
    return f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def table(results: list) -> str:
    lines = [
        "| model | method | qddot µs | sls/peer | linearize µs | sls/peer | batch qddot | sls/peer |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for block in results:
        rows = block["rows"]
        ref = rows[0]
        for r in rows:
            ratio_q = ref["qddot_us"] / r["qddot_us"]
            ratio_l = ref["linearize_us"] / r["linearize_us"] if r["linearize_us"] else None
            ratio_b = (
                r["batch_states_per_s"] / ref["batch_states_per_s"]
                if r["batch_states_per_s"] and ref["batch_states_per_s"]
                else None
            )
            lines.append(
                f"| {r['model']} | {r['method']} | {fmt(r['qddot_us'])} | {fmt(ratio_q)} | {fmt(r['linearize_us'])} | "
                f"{fmt(ratio_l)} | {fmt(r['batch_states_per_s'], '/s')} | {fmt(ratio_b)} |"
            )
        for name, note in block["notes"].items():
            lines.append(f"| {rows[0]['model']} | {name} | {note} | | | | | |")
    return "\n".join(lines)


def gen_table(rows: list) -> str:
    ns = sorted({r["n"] for r in rows})
    methods = list(dict.fromkeys(r["method"] for r in rows))
    lines = ["| n | " + " | ".join(f"{m} s" for m in methods) + " |", "| ---: |" + " ---: |" * len(methods)]
    for n in ns:
        cells = []
        for m in methods:
            hit = [r for r in rows if r["n"] == n and r["method"] == m]
            cells.append(f"{hit[0]['seconds']:.2f}" if hit else "—")
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="sls and sympy lambdify only, n = 2, few repetitions (smoke test)"
    )
    parser.add_argument("--out", type=Path, help="JSON file to write (default benchmarks/results/<date>.json)")
    parser.add_argument("--repeat", type=int, default=None, help="repeats per timing (median is reported)")
    parser.add_argument("--batch", type=int, default=None, help="states per batch call (default 100000)")
    parser.add_argument(
        "--gen-n", type=int, nargs="*", default=[2, 3, 5, 7, 10, 15, 20], help="n values for generation time"
    )
    parser.add_argument(
        "--chain-n", type=int, nargs="*", default=[4, 6, 8, 10, 15, 20], help="n values of the relative-angle chain"
    )
    parser.add_argument("--baseline-cap", type=int, default=7, help="largest n for the baseline generation recipes")
    parser.add_argument("--baseline-seconds", type=float, default=90.0, help="stop a baseline after a run this long")
    parser.add_argument(
        "--no-robots",
        action="store_true",
        help="skip the robot files (UR5, Panda, iiwa against Pinocchio; G1 generation)",
    )
    args = parser.parse_args(argv)
    args.repeat = args.repeat or (3 if args.quick else 9)
    args.batch = args.batch or (1000 if args.quick else 100_000)
    args.budget = 0.005 if args.quick else 0.05

    def log(text):
        print(text, file=sys.stderr, flush=True)

    results = []
    for model in models(args.quick):
        log(f"model {model.name} (n = {model.n})")
        results.append(bench_model(model, args, log))
    gen_rows = generation(args, log)
    exponent = growth_exponent(gen_rows)
    log("robot scale")
    robot = robot_scale(args, log)
    log("C target")
    compiled = ctarget.run(args, log)
    log("3-D energy models from sympy.physics.mechanics (python -m benchmarks.energy3d)")
    energy = energy3d.section(args.quick, log)
    log("floating bases: quaternion and Euler against Pinocchio's free-flyer (python -m benchmarks.free_flyer)")
    floating = free_flyer.section(args.quick, log)
    log("C target on Solo-12: contacts and frames against Pinocchio (python -m benchmarks.c_contacts)")
    standing = c_contacts.section(args.quick, log)
    log("CasADi target (python -m benchmarks.casadi_target)")
    try:
        casadi_report = casadi_target.run(args.quick, log)
    except ImportError as exc:  # casadi is an optional extra
        casadi_report = {"skipped": f"casadi is not installed ({exc})"}
    log("JAX target (python -m benchmarks.jax_target)")
    try:
        jax_report = jax_target.run(args.quick, log)
    except ImportError as exc:  # jax is an optional extra
        jax_report = {"skipped": f"jax is not installed ({exc})"}
    log("JAX target on Solo-12's feet (python -m benchmarks.jax_contacts)")
    if args.quick:
        jax_standing: dict = {"skipped": "--quick"}
    else:
        try:
            jax_standing = jax_contacts.run(log)
        except ImportError as exc:  # jax and example-robot-data are optional
            jax_standing = {"skipped": str(exc)}
    if args.no_robots:
        robot_files = {"skipped": "--no-robots"}
    else:
        log("robot files (the whole corpus: python -m benchmarks.robots)")
        robot_files = robots.benchmark_section(args.quick, log)
    report = {
        "date": datetime.date.today().isoformat(),
        "machine": {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count()},
        "versions": {"sls": sls.__version__, "numpy": np.__version__, "sympy": sympy.__version__},
        "quick": args.quick,
        "per_model": results,
        "generation": gen_rows,
        "generation_growth_exponent": exponent,
        "robot_scale": robot,
        "c_target": compiled,
        "robot_files": robot_files,
        "energy_3d": energy,
        "floating_bases": floating,
        "c_contacts": standing,
        "casadi_target": casadi_report,
        "jax_target": jax_report,
        "jax_contacts": jax_standing,
    }
    report["mjcf_corpus"] = mjcf_corpus.section(args.quick, log)  # MJCF files against MuJoCo (its own results file)
    print(table(results))
    print()
    print(gen_table(gen_rows))
    if exponent is not None:
        print(f"\nsls generation time grows like n^{exponent:.2f} (fit over n >= 5)")
    print()
    print(robot_table(robot))
    print()
    print(ctarget.table(compiled))
    print()
    print(free_flyer.table(floating))
    print()
    print(c_contacts.table(standing))
    print()
    print(casadi_report["skipped"] if "skipped" in casadi_report else casadi_target.table(casadi_report))
    print()
    print(jax_report["skipped"] if "skipped" in jax_report else jax_target.table(jax_report))
    print()
    print(jax_standing["skipped"] if "skipped" in jax_standing else jax_contacts.table(jax_standing))
    print()
    print(
        robot_files.get("skipped")
        and f"robot files: skipped ({robot_files['skipped']})"
        or robots.section_table(robot_files)
    )
    print()
    print(
        energy.get("skipped") and f"3-D energy models: skipped ({energy['skipped']})" or energy3d.table(energy["rows"])
    )
    out = args.out or RESULTS / f"{'quick-' if args.quick else ''}{report['date']}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(f"\nwrote {out}")
    return 0
