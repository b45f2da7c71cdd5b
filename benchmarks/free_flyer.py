"""Quaternion floating bases against Pinocchio's free-flyer: ``python -m benchmarks.free_flyer [--quick]``.

For a drone (one body), Solo-12, ANYmal and the G1 humanoid (example-robot-data), in one process: generation of
the dynamics functions a controller needs (``qddot_fun``, ``linearized_model``, ``M_fun``, ``tau_fun``,
``input_matrix_fun``) with the quaternion base (the default) and with the Euler chart, then per call from Python
(median, one state) ``vdot_fun`` against ``pin.aba`` and ``linearized_model`` against
``pin.computeABADerivatives`` on the same URDF, for the Python target and, where this sls writes quaternion bases in
C, the C target; the quaternion base against the Euler chart on the same robot. The values agree (checked before
timing; the tests hold them to 1e-9).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tempfile
import time
import timeit
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


def robots_folder() -> Path:
    import pinocchio as pin

    return Path(pin.__file__).resolve().parents[4] / "share" / "example-robot-data" / "robots"


def per_call(f, budget: float = 0.05, repeat: int = 7) -> float:
    """Median seconds per call of ``f()``."""
    start = time.perf_counter()
    f()
    once = max(time.perf_counter() - start, 1e-7)
    number = max(1, int(budget / once))
    return float(np.median(timeit.repeat(f, number=number, repeat=repeat))) / number


def build(path: Path, orientation: str, target: str, folder: Path, label: str) -> tuple:
    """(package, generation seconds) or (None, reason)."""
    name = f"ff_{label.replace('-', '').lower()}_{orientation}_{target}"
    try:
        model = load_urdf(path, floating_base=label != "drone", base_orientation=orientation, name=name)
        start = time.perf_counter()
        sls.generate(model, folder / name, target=target, functions=FUNCTIONS)
        seconds = time.perf_counter() - start
    except SlsError as exc:
        return None, str(exc)
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module(name), seconds
    finally:
        sys.path.remove(str(folder))


def robot_row(label: str, relative: str | None, quick: bool, log) -> dict:
    import pinocchio as pin

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
    row["pinocchio_aba_us"] = per_call(lambda: pin.aba(peer, data, q, v, tau)) * 1e6
    row["pinocchio_aba_derivatives_us"] = per_call(lambda: pin.computeABADerivatives(peer, data, q, v, tau)) * 1e6
    targets = ("python",) if quick else ("python", "c")
    for orientation in ("quaternion", "euler"):
        for target in targets:
            key = f"{orientation}_{target}"
            package, seconds = build(path, orientation, target, folder, label)
            if package is None:
                row[key] = {"status": "not generated", "reason": seconds}
                log(f"  {label} {key}: not generated ({seconds})")
                continue
            x = np.zeros(len(package.STATE))
            if orientation == "quaternion":
                x[: peer.nq] = q  # sls's joint order may differ from Pinocchio's: timing only, same kind of state
            else:
                x[:3], x[6 : package.N_DOF] = q[:3], q[7:]
            x[-package.N_DOF :] = v
            u = rng.normal(size=package.N_INPUTS)
            vdot = per_call(lambda p=package, x=x, u=u: p.qddot_fun(x, u))
            linearized = per_call(lambda p=package, x=x, u=u: p.linearized_model(x, u))
            row[key] = {
                "status": "ok",
                "generate_s": seconds,
                "vdot_us": vdot * 1e6,
                "linearized_us": linearized * 1e6,
                "vdot_over_aba": vdot * 1e6 / row["pinocchio_aba_us"],
                "linearized_over_aba_derivatives": linearized * 1e6 / row["pinocchio_aba_derivatives_us"],
            }
            log(
                f"  {label} {key}: generate {seconds:.2f} s, vdot {vdot * 1e6:.2f} us "
                f"({row[key]['vdot_over_aba']:.2f} x aba), linearized {linearized * 1e6:.2f} us "
                f"({row[key]['linearized_over_aba_derivatives']:.2f} x computeABADerivatives)"
            )
    return row


def section(quick: bool, log) -> dict:
    """``python -m benchmarks``'s floating-base section (``quick``: the drone and Solo-12, Python target only)."""
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        return {"skipped": "pinocchio is not installed (pip install pin example-robot-data)"}
    chosen = ["drone", "Solo-12"] if quick else list(ROBOTS)
    return {"rows": [robot_row(label, ROBOTS[label], quick, log) for label in chosen]}


def table(report: dict) -> str:
    if "skipped" in report:
        return f"floating bases: skipped ({report['skipped']})"
    lines = [
        "| robot | nq / nv | base | target | generate s | vdot µs (× aba) | linearized µs (× computeABADerivatives) |",
        "| --- | --- | --- | --- | ---: | ---: | ---: |",
    ]
    for row in report["rows"]:
        for key in sorted(k for k in row if isinstance(row[k], dict)):
            cell = row[key]
            orientation, target = key.split("_")
            if cell["status"] != "ok":
                lines.append(
                    f"| {row['robot']} | {row['nq']} / {row['nv']} | {orientation} | {target} | "
                    f"{cell['reason'][:80]} | | |"
                )
                continue
            lines.append(
                f"| {row['robot']} | {row['nq']} / {row['nv']} | {orientation} | {target} | {cell['generate_s']:.2f} "
                f"| {cell['vdot_us']:.2f} ({cell['vdot_over_aba']:.2f}) "
                f"| {cell['linearized_us']:.2f} ({cell['linearized_over_aba_derivatives']:.2f}) |"
            )
        lines.append(
            f"| {row['robot']} | | Pinocchio | C++ | | {row['pinocchio_aba_us']:.2f} | "
            f"{row['pinocchio_aba_derivatives_us']:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the drone and Solo-12, Python target only")
    parser.add_argument("--out", type=Path, help="JSON file to write")
    args = parser.parse_args(argv)
    report = section(args.quick, lambda text: print(text, file=sys.stderr, flush=True))
    print(table(report))
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
