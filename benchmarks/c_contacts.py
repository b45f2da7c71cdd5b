"""The C target on a standing robot against Pinocchio: ``python -m benchmarks.c_contacts [--quick]``.

Solo-12 (example-robot-data, quaternion base), per call from Python, one state, in one process:

* standing on its four feet (``--contacts`` with the feet, 3-D point contacts): the constrained ``vdot_fun`` of the
  C target against ``pinocchio.constraintDynamics`` with four 3-D ``RigidConstraintModel`` in LOCAL_WORLD_ALIGNED
  (as ``tests/backends/c/test_c_contacts.py`` sets it up; the values agree to 1e-8 there);
* the feet as frames (``--frames``): ``frame_jacobian_fun`` of the C target against ``computeJointJacobians`` and
  four ``getFrameJacobian(..., LOCAL_WORLD_ALIGNED)``.

The machine may be shared: the two sides are timed in interleaved rounds and the report gives the ratio's median
and spread over the rounds (the goal: ≤ 0.5×).
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

FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]


def solo_path() -> Path:
    import pinocchio as pin

    return (
        Path(pin.__file__).resolve().parents[4] / "share/example-robot-data/robots/solo_description/robots/solo12.urdf"
    )


def build(model, folder: Path) -> tuple:
    """(package, generation seconds) of ``model`` generated with ``--target c`` into ``folder``."""
    start = time.perf_counter()
    sls.generate(model, folder / model.name, target="c")
    seconds = time.perf_counter() - start
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module(model.name), seconds
    finally:
        sys.path.remove(str(folder))


def rounds(ours, theirs, count: int, budget: float) -> dict:
    """Seconds per call of both (the best of each round), in ``count`` interleaved rounds: medians and ratios."""
    number = max(1, int(budget / max(1e-7, min(timeit.repeat(theirs, number=100, repeat=3)) / 100)))
    pairs = []
    for _ in range(count):
        a = min(timeit.repeat(ours, number=number, repeat=3)) / number
        b = min(timeit.repeat(theirs, number=number, repeat=3)) / number
        pairs.append((a, b))
    ratios = sorted(a / b for a, b in pairs)
    return {
        "sls_us": float(np.median([a for a, _ in pairs])) * 1e6,
        "pinocchio_us": float(np.median([b for _, b in pairs])) * 1e6,
        "ratio": float(np.median(ratios)),
        "ratio_min": ratios[0],
        "ratio_max": ratios[-1],
    }


def section(quick: bool, log) -> dict:
    """``python -m benchmarks``'s section: the constrained ``vdot_fun`` and ``frame_jacobian_fun`` against Pinocchio."""
    try:
        import pinocchio as pin
    except ImportError:
        return {"skipped": "pinocchio is not installed (pip install pin example-robot-data)"}
    from sls.readers.urdf import load_urdf

    path = solo_path()
    folder = Path(tempfile.mkdtemp(prefix="sls-c-contacts-"))
    peer = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    data = peer.createData()
    rng = np.random.default_rng(5)
    q = pin.randomConfiguration(peer, -np.ones(peer.nq), np.ones(peer.nq))
    v = rng.normal(size=peer.nv)
    count, budget = (3, 0.02) if quick else (9, 0.1)
    report: dict = {"robot": "Solo-12", "nq": peer.nq, "nv": peer.nv}

    standing, seconds = build(load_urdf(path, floating_base=True, contacts=FEET, name="bench_solo_contacts"), folder)
    contacts = pin.StdVec_RigidConstraintModel()
    for foot in FEET:
        frame = peer.frames[peer.getFrameId(foot)]
        contacts.append(
            pin.RigidConstraintModel(
                pin.ContactType.CONTACT_3D, peer, frame.parentJoint, frame.placement, pin.LOCAL_WORLD_ALIGNED
            )
        )
    datas = pin.StdVec_RigidConstraintData()
    for contact in contacts:
        datas.append(contact.createData())
    pin.initConstraintDynamics(peer, data, contacts, datas)
    settings = pin.ProximalSettings(1e-12, 0, 1)
    x = np.concatenate([q, v])
    u = rng.normal(size=standing.N_INPUTS)
    tau = standing.input_matrix_fun(x) @ u
    reference = pin.constraintDynamics(peer, data, q, v, tau, contacts, datas, settings)
    error = float(np.abs(standing.vdot_fun(x, u) - reference).max())
    report["constrained_vdot"] = {
        "generate_s": seconds,
        "max_difference": error,
        **rounds(
            lambda: standing.vdot_fun(x, u),
            lambda: pin.constraintDynamics(peer, data, q, v, tau, contacts, datas, settings),
            count,
            budget,
        ),
    }
    cell = report["constrained_vdot"]
    log(
        f"  Solo-12 on four feet: vdot_fun {cell['sls_us']:.2f} us, constraintDynamics {cell['pinocchio_us']:.2f} us: "
        f"{cell['ratio']:.2f}x ({cell['ratio_min']:.2f}-{cell['ratio_max']:.2f}), |difference| {error:.1e}"
    )

    frames, seconds = build(load_urdf(path, floating_base=True, frames=FEET, name="bench_solo_frames"), folder)
    ids = [peer.getFrameId(foot) for foot in FEET]

    def jacobians() -> list:
        pin.computeJointJacobians(peer, data, q)
        return [pin.getFrameJacobian(peer, data, i, pin.LOCAL_WORLD_ALIGNED) for i in ids]

    error = float(np.abs(frames.frame_jacobian_fun(x) - np.array(jacobians())).max())
    report["frame_jacobian"] = {
        "generate_s": seconds,
        "max_difference": error,
        **rounds(lambda: frames.frame_jacobian_fun(x), jacobians, count, budget),
    }
    cell = report["frame_jacobian"]
    log(
        f"  Solo-12 feet: frame_jacobian_fun {cell['sls_us']:.2f} us, computeJointJacobians + 4 getFrameJacobian "
        f"{cell['pinocchio_us']:.2f} us: {cell['ratio']:.2f}x ({cell['ratio_min']:.2f}-{cell['ratio_max']:.2f}), "
        f"|difference| {error:.1e}"
    )
    return report


def table(report: dict) -> str:
    if "skipped" in report:
        return f"C target against Pinocchio (contacts, frames): skipped ({report['skipped']})"
    lines = [
        "| Solo-12, C target | sls µs | Pinocchio µs | ratio (spread) | goal |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for key, label, peer in (
        ("constrained_vdot", "vdot_fun on four point feet", "constraintDynamics"),
        ("frame_jacobian", "frame_jacobian_fun, four feet", "computeJointJacobians + 4 getFrameJacobian"),
    ):
        cell = report[key]
        lines.append(
            f"| {label} (vs {peer}) | {cell['sls_us']:.2f} | {cell['pinocchio_us']:.2f} | "
            f"{cell['ratio']:.2f} ({cell['ratio_min']:.2f}-{cell['ratio_max']:.2f}) | ≤ 0.5 |"
        )
    return "\n".join(lines)


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer and shorter rounds")
    parser.add_argument("--out", type=Path, help="JSON file to write")
    args = parser.parse_args(argv)
    report = section(args.quick, lambda text: print(text, file=sys.stderr, flush=True))
    print(table(report))
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
