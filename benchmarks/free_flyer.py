"""Quaternion floating bases against Pinocchio's free-flyer: ``python -m benchmarks.free_flyer [--quick]``.

For a drone (one body), Solo-12, ANYmal and the G1 humanoid (example-robot-data), in one process: generation of
the dynamics functions a controller needs (``qddot_fun``, ``linearized_model``, ``M_fun``, ``tau_fun``,
``input_matrix_fun``) with the quaternion base (the default) and with the Euler chart, for the Python target and
the C target (generation and compile: wall time, this process's CPU time and its children's, the compilers),
then per call from Python on one state ``vdot_fun`` against ``pin.aba`` and ``linearized_model`` against
``pin.computeABADerivatives`` on the same URDF, in interleaved rounds on process CPU time (sls, Pinocchio, sls,
…; :func:`benchmarks.robots.per_call_rounds`), and each package against the Euler chart's on the same robot.

:func:`goals` picks issue 24's figures out of a report: the C target's four ratios (Solo-12 and G1, quaternion
base: ``vdot_fun`` / ``aba`` ≤ 0.5, ``linearized_model`` / ``computeABADerivatives`` ≤ 0.5), the quaternion
base against the Euler chart (≤ 1: no slower) and G1's generation time (≤ 20 s).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import sls
from sls.errors import SlsError
from sls.readers.urdf import load_urdf

#: The robots: label → path under example-robot-data's robots folder (None: the drone written below).
ROBOTS = {
    "drone": None,
    "Solo-12": "solo_description/robots/solo12.urdf",
    "ANYmal": "anymal_b_simple_description/robots/anymal.urdf",
    "G1": "g1_description/urdf/g1_29dof_rev_1_0.urdf",
}
FUNCTIONS = ["qddot_fun", "linearized_model", "M_fun", "tau_fun", "input_matrix_fun"]
DRONE = """<robot name="drone"><link name="body"><inertial><origin xyz="0.01 -0.02 0.03" rpy="0.1 0.2 0.3"/>
<mass value="1.2"/><inertia ixx="0.011" ixy="0.001" ixz="0.0005" iyy="0.013" iyz="-0.0007" izz="0.02"/>
</inertial></link></robot>"""
#: Issue 24's goals on the C target: the robots whose per-call ratios count, and the robot whose generation does.
GOAL_ROBOTS = ("Solo-12", "G1")
GOAL_RATIO = 0.5
GOAL_GENERATION_S = 20.0
#: The machine issue 24's generation goal is counted on: this many idle cores (the compiles run in parallel).
IDLE_CORES = 2


def robots_folder() -> Path:
    import pinocchio as pin

    return Path(pin.__file__).resolve().parents[4] / "share" / "example-robot-data" / "robots"


def children_cpu() -> float:
    """CPU seconds of this process's finished children (the C compilers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_compiler(batches: list) -> object:
    """A stand-in for :func:`sls.backends.c.build._run_compiler` that runs the same commands in parallel and appends
    to ``batches`` the CPU seconds of each (one list per call: the units, then the link); a failure is left to
    the real one (run again, for its error)."""
    from sls.backends.c import build

    run = build._run_compiler

    def timed(commands: list, folder: str) -> None:
        quiet = subprocess.DEVNULL
        running = [subprocess.Popen(c, cwd=folder, stdout=quiet, stderr=quiet) for c in commands]
        seconds, failed = [], False
        for process in running:
            _, status, usage = os.wait4(process.pid, 0)
            process.returncode = os.waitstatus_to_exitcode(status)
            failed = failed or process.returncode != 0
            seconds.append(usage.ru_utime + usage.ru_stime)
        batches.append(seconds)
        if failed:
            run(commands, folder)

    return timed


def critical_path(batches: list, cores: int = IDLE_CORES) -> float:
    """Seconds the compile batches take on ``cores`` idle cores: each batch's jobs scheduled longest first on the
    least loaded core (the batches one after the other)."""
    total = 0.0
    for seconds in batches:
        loads = [0.0] * cores
        for job in sorted(seconds, reverse=True):
            loads[loads.index(min(loads))] += job
        total += max(loads)
    return total


def build(path: Path, orientation: str, target: str, folder: Path, label: str) -> tuple:
    """(package, generation timings) or (None, reason). Timings: ``generate_s`` (wall), ``cpu_s`` (this
    process), ``children_cpu_s`` (the compilers), the machine's load average when it ended, and for the C target
    ``compile_jobs_s`` (CPU seconds of each compile, per batch) and ``idle_s``: ``cpu_s`` plus the compiles'
    :func:`critical_path` on :data:`IDLE_CORES` idle cores (the wall time without other load)."""
    from unittest import mock

    name = f"ff_{label.replace('-', '').lower()}_{orientation}_{target}"
    batches: list = []
    try:
        model = load_urdf(path, floating_base=label != "drone", base_orientation=orientation, name=name)
        start, cpu, children = time.perf_counter(), time.process_time(), children_cpu()
        with mock.patch("sls.backends.c.build._run_compiler", timed_compiler(batches)):
            sls.generate(model, folder / name, target=target, functions=FUNCTIONS)
        timings = {
            "generate_s": time.perf_counter() - start,
            "cpu_s": time.process_time() - cpu,
            "children_cpu_s": children_cpu() - children,
            "load_average": os.getloadavg()[0],
        }
        if batches:
            timings["compile_jobs_s"] = batches
            timings["idle_s"] = timings["cpu_s"] + critical_path(batches)
    except SlsError as exc:
        return None, str(exc)
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module(name), timings
    finally:
        sys.path.remove(str(folder))


def robot_row(label: str, relative: str | None, quick: bool, log) -> dict:
    import pinocchio as pin

    from benchmarks.robots import per_call_rounds

    folder = Path(tempfile.mkdtemp(prefix="sls-free-flyer-"))
    path = folder / "drone.urdf" if relative is None else robots_folder() / relative
    if relative is None:
        path.write_text(DRONE)
    peer = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    data = peer.createData()
    rng = np.random.default_rng(3)
    q = pin.randomConfiguration(peer, -np.ones(peer.nq), np.ones(peer.nq))
    v, tau = rng.normal(size=peer.nv), rng.normal(size=peer.nv)
    row: dict = {"robot": label, "nq": peer.nq, "nv": peer.nv}

    def aba():
        return pin.aba(peer, data, q, v, tau)

    def aba_derivatives():
        return pin.computeABADerivatives(peer, data, q, v, tau)

    pairs: dict = {}
    targets = ("python",) if quick else ("python", "c")
    for orientation in ("quaternion", "euler"):
        for target in targets:
            key = f"{orientation}_{target}"
            package, timings = build(path, orientation, target, folder, label)
            if package is None:
                row[key] = {"status": "not generated", "reason": timings}
                log(f"  {label} {key}: not generated ({timings})")
                continue
            x = np.zeros(len(package.STATE))
            if orientation == "quaternion":
                x[: peer.nq] = q  # sls's joint order may differ from Pinocchio's: timing only, same kind of state
            else:
                x[:3], x[6 : package.N_DOF] = q[:3], q[7:]
            x[-package.N_DOF :] = v
            u = rng.normal(size=package.N_INPUTS)
            row[key] = {"status": "ok", **timings}
            log(
                f"  {label} {key}: generate {timings['generate_s']:.1f} s wall, CPU {timings['cpu_s']:.1f} s "
                f"+ compilers {timings['children_cpu_s']:.1f} s (load {timings['load_average']:.1f})"
            )
            pairs[f"{key}/vdot"] = (lambda p=package, x=x, u=u: p.qddot_fun(x, u), aba)
            pairs[f"{key}/linearized"] = (lambda p=package, x=x, u=u: p.linearized_model(x, u), aba_derivatives)
    timed = per_call_rounds(pairs, 3 if quick else 9, 0.005 if quick else 0.02)
    for label_key, result in timed.items():
        key, what = label_key.split("/")
        cell = row[key]
        cell[f"{what}_us"] = result["sls_us"]
        cell[f"{what}_ratio"] = result["ratio"]
        cell[f"{what}_spread"] = [result["ratio_min"], result["ratio_max"]]
        row["pinocchio_aba_us" if what == "vdot" else "pinocchio_aba_derivatives_us"] = result["pin_us"]
    for key in [k for k in row if k.startswith("quaternion_")]:
        euler = row.get(key.replace("quaternion", "euler"), {})
        if row[key]["status"] == "ok" and euler.get("status") == "ok":
            for what in ("vdot", "linearized"):
                row[key][f"{what}_over_euler"] = row[key][f"{what}_us"] / euler[f"{what}_us"]
    for key in sorted(k for k in row if isinstance(row[k], dict) and row[k]["status"] == "ok"):
        cell = row[key]
        log(
            f"  {label} {key}: vdot {cell['vdot_us']:.2f} us ({cell['vdot_ratio']:.2f} x aba), linearized "
            f"{cell['linearized_us']:.2f} us ({cell['linearized_ratio']:.2f} x computeABADerivatives)"
        )
    return row


def section(quick: bool, log, only: list | None = None) -> dict:
    """``python -m benchmarks``'s floating-base section (``quick``: the drone and Solo-12, Python target only;
    ``only``: these robots)."""
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        return {"skipped": "pinocchio is not installed (pip install pin example-robot-data)"}
    chosen = only or (["drone", "Solo-12"] if quick else list(ROBOTS))
    return {"rows": [robot_row(label, ROBOTS[label], quick, log) for label in chosen]}


def table(report: dict) -> str:
    if "skipped" in report:
        return f"floating bases: skipped ({report['skipped']})"
    lines = [
        "| robot | nq / nv | base | target | generate s (CPU + compilers) | on 2 idle cores s | vdot µs (× aba) "
        "| linearized µs (× computeABADerivatives) |",
        "| --- | --- | --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for row in report["rows"]:
        for key in sorted(k for k in row if isinstance(row[k], dict)):
            cell = row[key]
            orientation, target = key.split("_")
            if cell["status"] != "ok":
                lines.append(
                    f"| {row['robot']} | {row['nq']} / {row['nv']} | {orientation} | {target} | "
                    f"{cell['reason'][:80]} | | | |"
                )
                continue
            idle = f"{cell['idle_s']:.1f}" if "idle_s" in cell else ""
            lines.append(
                f"| {row['robot']} | {row['nq']} / {row['nv']} | {orientation} | {target} "
                f"| {cell['generate_s']:.1f} ({cell['cpu_s']:.1f} + {cell['children_cpu_s']:.1f}) | {idle} "
                f"| {cell['vdot_us']:.2f} ({cell['vdot_ratio']:.2f}) "
                f"| {cell['linearized_us']:.2f} ({cell['linearized_ratio']:.2f}) |"
            )
        lines.append(
            f"| {row['robot']} | | Pinocchio | C++ | | | {row['pinocchio_aba_us']:.2f} | "
            f"{row['pinocchio_aba_derivatives_us']:.2f} |"
        )
    found = goals(report)
    if found:
        lines += ["", "| issue 24 goal | target | measured | met |", "| --- | --- | ---: | --- |"]
        lines += [f"| {g['what']} | {g['goal']} | {g['measured']:.2f} | {'yes' if g['met'] else 'no'} |" for g in found]
    return "\n".join(lines)


def goals(report: dict) -> list[dict]:
    """Issue 24's figures in a report (those it measured): per robot of :data:`GOAL_ROBOTS` with the C target's
    quaternion base, ``vdot_fun`` / ``aba`` and ``linearized_model`` / ``computeABADerivatives`` (≤ 0.5) and both
    against the Euler chart (≤ 1); G1's generation of the dynamics functions, wall seconds (≤ 20 s) per target."""
    found = []
    for row in report.get("rows", []):
        cell = row.get("quaternion_c", {})
        if row["robot"] in GOAL_ROBOTS and cell.get("status") == "ok":
            for what, peer in (("vdot", "aba"), ("linearized", "computeABADerivatives")):
                ratio = cell[f"{what}_ratio"]
                name = "vdot_fun" if what == "vdot" else "linearized_model"
                found.append(
                    {
                        "what": f"{row['robot']} C {name} / {peer}",
                        "goal": f"≤ {GOAL_RATIO}",
                        "measured": ratio,
                        "met": ratio <= GOAL_RATIO,
                    }
                )
            for what in ("vdot", "linearized"):
                if f"{what}_over_euler" in cell:
                    ratio = cell[f"{what}_over_euler"]
                    found.append(
                        {
                            "what": f"{row['robot']} C {what}: quaternion / Euler base",
                            "goal": "≤ 1",
                            "measured": ratio,
                            "met": ratio <= 1.0,
                        }
                    )
        if row["robot"] == "G1":
            for target in ("python", "c"):
                cell = row.get(f"quaternion_{target}", {})
                if cell.get("status") == "ok":
                    seconds = cell["generate_s"]
                    found.append(
                        {
                            "what": f"G1 generation, {target} target (wall s; CPU {cell['cpu_s']:.1f} s + compilers "
                            f"{cell['children_cpu_s']:.1f} s; load {cell['load_average']:.1f})",
                            "goal": f"≤ {GOAL_GENERATION_S:.0f} s",
                            "measured": seconds,
                            "met": seconds <= GOAL_GENERATION_S,
                        }
                    )
                    if "idle_s" in cell:
                        jobs = cell["compile_jobs_s"][0]
                        found.append(
                            {
                                "what": f"G1 generation, {target} target on {IDLE_CORES} idle cores (s; CPU "
                                f"{cell['cpu_s']:.1f} s + compile critical path; {len(jobs)} compiles, longest "
                                f"{max(jobs):.1f} s)",
                                "goal": f"≤ {GOAL_GENERATION_S:.0f} s",
                                "measured": cell["idle_s"],
                                "met": cell["idle_s"] <= GOAL_GENERATION_S,
                            }
                        )
    return found


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the drone and Solo-12, Python target only")
    parser.add_argument("--only", nargs="+", choices=list(ROBOTS), help="only these robots")
    parser.add_argument("--out", type=Path, help="JSON file to write")
    args = parser.parse_args(argv)
    report = section(args.quick, lambda text: print(text, file=sys.stderr, flush=True), args.only)
    print(table(report))
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
