"""The C target's goals, measured side by side in one process (``python -m benchmarks``, section "C target").

* 10-link relative-angle chain (``sls.readers.nlink.relative_chain(10)``, graph route): the C-backed
  ``qddot_fun`` per call against Pinocchio's ``aba``, and ``linearized_model`` against
  ``computeABADerivatives`` (the call alone, and with ``(A, B)`` assembled from its results as
  sls returns them), from Python;
* mobile manipulator: the C-backed ``qddot_fun`` per call against the Python target's, and a
  batch of 10⁵ states (states/s; one thread and all threads).

Each comparison runs in interleaved rounds (C, then the peer, then C, …) so both see the same
machine load; the table gives the median ratio and its spread (smallest–largest) over rounds.
Generation and compile times of the C packages are reported too.
"""

from __future__ import annotations

import shutil
import time
import timeit

import numpy as np

import sls
from sls.readers.nlink import relative_chain

from . import peers


def _per_call(f, args, budget: float) -> float:
    start = time.perf_counter()
    f(*args)
    number = max(1, int(budget / max(time.perf_counter() - start, 1e-7)))
    return min(timeit.repeat(lambda: f(*args), number=number, repeat=3)) / number


def _rounds(pairs: dict, rounds: int, budget: float) -> dict:
    """``{label: (c, peer)}`` of zero-argument callables → per label the times of each round (interleaved)."""
    times = {label: ([], []) for label in pairs}
    for _ in range(rounds):
        for label, (c, peer) in pairs.items():
            times[label][0].append(_per_call(c, (), budget))
            times[label][1].append(_per_call(peer, (), budget))
    return times


def _summary(label: str, c: list, peer: list, goal: str, inverse: bool = False) -> dict:
    ratios = [p / q for p, q in zip(peer, c)] if inverse else [q / p for q, p in zip(c, peer)]
    return {
        "what": label,
        "c": float(np.median(c)),
        "peer": float(np.median(peer)),
        "ratio": float(np.median(ratios)),
        "ratio_min": float(min(ratios)),
        "ratio_max": float(max(ratios)),
        "goal": goal,
    }


def run(args, log) -> dict:
    """The measurements (``args.quick``: small models, two rounds)."""
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        return {"skipped": "no C compiler"}
    folder = peers.temp_folder()
    rounds = 2 if args.quick else 7
    budget = 0.005 if args.quick else 0.05
    rows, builds = [], {}

    n = 3 if args.quick else 10
    chain = relative_chain(n)
    start = time.perf_counter()
    report = sls.generate(chain, folder / "chain_c", target="c")
    builds[f"chain{n}"] = {"total_s": time.perf_counter() - start, "compile_s": report.timings["compile"]}
    log(f"  C package of chain{n}: {builds[f'chain{n}']}")
    c_chain = peers.import_generated(folder / "chain_c")
    X, U = peers_states(chain, 1)
    x, u = X[0], U[0]
    try:
        import pinocchio as pin
    except ImportError:
        pin = None
    if pin is not None:
        pm, _ = peers._pinocchio_model(chain)
        data = pm.createData()
        damping = chain.params["b"]
        q, v = x[:n].copy(), x[n:].copy()
        tau = u - damping * v
        if np.abs(pin.aba(pm, data, q, v, tau) - c_chain.qddot_fun(x, u)).max() > 1e-8:
            raise RuntimeError("Pinocchio and sls disagree on the chain's qddot")
        pinocchio = peers.build_pinocchio(chain, None, folder)

        def pin_derivatives():
            pin.computeABADerivatives(pm, data, q, v, tau)

        times = _rounds(
            {
                "qddot": (lambda: c_chain.qddot_fun(x, u), lambda: pin.aba(pm, data, q, v, tau)),
                "linearize": (lambda: c_chain.linearized_model(x, u), pin_derivatives),
                "linearize (A, B)": (lambda: c_chain.linearized_model(x, u), lambda: pinocchio.linearize(x, u)),
            },
            rounds,
            budget,
        )
        rows.append(_summary(f"chain{n} qddot_fun per call vs Pinocchio aba", *times["qddot"], "<= 1.0"))
        rows.append(
            _summary(f"chain{n} linearized_model per call vs computeABADerivatives", *times["linearize"], "<= 1.0")
        )
        rows.append(
            _summary(
                f"chain{n} linearized_model vs computeABADerivatives + (A, B) assembled",
                *times["linearize (A, B)"],
                "(same, as sls returns it)",
            )
        )
    else:
        log("  pinocchio not installed: the chain rows are skipped")

    mm = sls.load_example("mobile_manipulator")
    sls.generate(mm, folder / "mm_py")
    start = time.perf_counter()
    report = sls.generate(mm, folder / "mm_c", target="c")
    builds["mobile_manipulator"] = {"total_s": time.perf_counter() - start, "compile_s": report.timings["compile"]}
    py, c = peers.import_generated(folder / "mm_py"), peers.import_generated(folder / "mm_c")
    X, U = peers_states(mm, args.batch)
    x, u = X[0], U[0]
    times = _rounds({"qddot": (lambda: c.qddot_fun(x, u), lambda: py.qddot_fun(x, u))}, rounds, budget)
    rows.append(_summary("mobile manipulator qddot_fun per call vs the Python target", *times["qddot"], "<= 0.5"))
    threads = c._dispatch.threads()
    for count, label in ((1, "one thread"), (threads, f"{threads} threads")):
        c._native._setup(np.empty, c._dispatch.call, count)
        times = _rounds({"batch": (lambda: c.qddot_fun(X, U), lambda: py.qddot_fun(X, U))}, rounds, budget)
        summary = _summary(
            f"mobile manipulator batch of {args.batch} ({label}), states/s vs the Python target",
            *times["batch"],
            ">= 5",
            inverse=True,
        )
        summary["c"], summary["peer"] = args.batch / summary["c"], args.batch / summary["peer"]
        rows.append(summary)
    c._native._setup(np.empty, c._dispatch.call, threads)
    return {"rows": rows, "builds": builds}


def peers_states(model, count: int):
    rng = np.random.default_rng(7)
    n, m = model.n, model.m
    X = np.hstack([rng.uniform(-np.pi, np.pi, (count, n)), rng.uniform(-1.0, 1.0, (count, n))])
    return X, rng.uniform(-1.0, 1.0, (count, m))


def table(result: dict) -> str:
    if "skipped" in result:
        return f"C target: skipped ({result['skipped']})"

    def value(row, key):
        v = row[key]
        return f"{v / 1e6:.1f} M/s" if "states/s" in row["what"] else f"{v * 1e6:.2f} µs"

    lines = ["| C target | C | peer | C/peer (median, min–max) | goal |", "| --- | ---: | ---: | ---: | ---: |"]
    for row in result["rows"]:
        ratio = f"{row['ratio']:.2f} ({row['ratio_min']:.2f}–{row['ratio_max']:.2f})"
        lines.append(f"| {row['what']} | {value(row, 'c')} | {value(row, 'peer')} | {ratio} | {row['goal']} |")
    for name, build in result["builds"].items():
        lines.append(
            f"\nC package of {name}: generated in {build['total_s']:.1f} s, of which compile {build['compile_s']:.1f} s"
        )
    return "\n".join(lines)
