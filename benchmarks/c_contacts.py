"""The C target on a standing robot against Pinocchio: ``python -m benchmarks.c_contacts [--quick]``.

Solo-12 (example-robot-data, quaternion base), per call from Python, one state, in one process:

* standing on its four feet (``--contacts`` with the feet, 3-D point contacts): the constrained ``vdot_fun`` of the
  C target against ``pinocchio.constraintDynamics`` with four 3-D ``RigidConstraintModel`` in LOCAL_WORLD_ALIGNED
  (as ``tests/backends/c/test_c_contacts.py`` sets it up; the values agree to 1e-8 there), and the constrained
  ``linearized_model`` and ``contact_forces_jac_fun`` against ``constraintDynamics`` followed by
  ``computeConstraintDynamicsDerivatives`` (what a linearization costs there; the derivatives agree to 1e-8 in
  ``tests/derive/test_tree_contacts.py``);
* without ``--quick``, the G1 humanoid on its two feet held flat (6-D contacts): the same three rows, and the
  generation of its contact functions (``vdot_fun``, ``linearized_model``, ``contact_forces_jac_fun``);
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


#: The functions the Solo-12 rows time (and what they need: ``vdot_fun``, ``input_matrix_fun``).
CONTACT_FUNCTIONS = ["qddot_fun", "linearized_model", "contact_forces_jac_fun"]


def build(model, folder: Path, functions: list) -> tuple:
    """(package, generation seconds) of ``model``'s ``functions`` generated with ``--target c`` into ``folder``."""
    start = time.perf_counter()
    sls.generate(model, folder / model.name, target="c", functions=functions)
    seconds = time.perf_counter() - start
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module(model.name), seconds
    finally:
        sys.path.remove(str(folder))


def rigid_contacts(peer, frames: list, kind) -> tuple:
    """Pinocchio's rigid contacts of ``kind`` (``pin.ContactType``) at ``frames`` in LOCAL_WORLD_ALIGNED, as sls's
    contacts: (contact models, their datas)."""
    import pinocchio as pin

    contacts = pin.StdVec_RigidConstraintModel()
    for name in frames:
        frame = peer.frames[peer.getFrameId(name)]
        contacts.append(
            pin.RigidConstraintModel(kind, peer, frame.parentJoint, frame.placement, pin.LOCAL_WORLD_ALIGNED)
        )
    datas = pin.StdVec_RigidConstraintData()
    for contact in contacts:
        datas.append(contact.createData())
    return contacts, datas


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

    model = load_urdf(path, floating_base=True, contacts=FEET, name="bench_solo_contacts")
    standing, seconds = build(model, folder, CONTACT_FUNCTIONS)
    contacts, datas = rigid_contacts(peer, FEET, pin.ContactType.CONTACT_3D)
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
    report.update(linearization_rows("Solo-12", standing, peer, contacts, datas, x, u, count, budget, log))
    if not quick:
        report["g1"] = g1_section(folder, count, budget, log)

    model = load_urdf(path, floating_base=True, frames=FEET, name="bench_solo_frames")
    frames, seconds = build(model, folder, ["frame_jacobian_fun"])
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


def linearization_rows(label: str, package, peer, contacts, datas, x, u, count: int, budget: float, log) -> dict:
    """``linearized_model`` and ``contact_forces_jac_fun`` of ``package`` against Pinocchio's ``constraintDynamics``
    + ``computeConstraintDynamicsDerivatives`` (the same contacts) at ``(x, u)`` in Pinocchio's joint order."""
    import pinocchio as pin

    data = peer.createData()
    pin.initConstraintDynamics(peer, data, contacts, datas)
    settings = pin.ProximalSettings(1e-12, 0, 1)
    q, v = x[: peer.nq], x[peer.nq :]
    tau = package.input_matrix_fun(x) @ u

    def derivatives() -> None:
        pin.constraintDynamics(peer, data, q, v, tau, contacts, datas, settings)
        pin.computeConstraintDynamicsDerivatives(peer, data, contacts, datas, settings)

    derivatives()
    n = peer.nv
    A, _ = package.linearized_model(x, u)
    expected = np.hstack([data.ddq_dq, data.ddq_dv])
    error = float(np.abs(A[n:] - expected).max() / max(1.0, np.abs(expected).max()))
    result = {}
    for key, function in (
        ("linearized_model", package.linearized_model),
        ("contact_jac", package.contact_forces_jac_fun),
    ):
        cell = {"max_relative_difference": error, **rounds(lambda f=function: f(x, u), derivatives, count, budget)}
        result[key] = cell
        log(
            f"  {label}: {function.__name__} {cell['sls_us']:.2f} us, constraintDynamics + "
            f"computeConstraintDynamicsDerivatives {cell['pinocchio_us']:.2f} us: {cell['ratio']:.2f}x "
            f"({cell['ratio_min']:.2f}-{cell['ratio_max']:.2f})"
        )
    return result


def g1_section(folder: Path, count: int, budget: float, log) -> dict:
    """G1 on two 6-D feet (its joints in the URDF's order: Pinocchio's too), the C target."""
    import pinocchio as pin

    from sls.readers.urdf import load_urdf

    path = solo_path().parents[2] / "g1_description/urdf/g1_29dof_rev_1_0.urdf"
    feet = ["left_ankle_roll_link", "right_ankle_roll_link"]
    model = load_urdf(path, floating_base=True, contacts=[f"{foot}:6d" for foot in feet], name="bench_g1_flat")
    start = time.perf_counter()
    sls.generate(model, folder / model.name, target="c", functions=CONTACT_FUNCTIONS)
    seconds = time.perf_counter() - start
    sys.path.insert(0, str(folder))
    try:
        package = importlib.import_module(model.name)
    finally:
        sys.path.remove(str(folder))
    log(f"  G1 on two flat feet: the C contact functions generated in {seconds:.1f} s")
    peer = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    if [peer.names[i] for i in range(2, peer.njoints)] != list(package.STATE[7 : package.N_DOF + 1]):
        return {"skipped": "G1's joints are not in Pinocchio's order"}
    contacts, datas = rigid_contacts(peer, feet, pin.ContactType.CONTACT_6D)
    rng = np.random.default_rng(6)
    x = np.concatenate([pin.randomConfiguration(peer, -np.ones(peer.nq), np.ones(peer.nq)), rng.normal(size=peer.nv)])
    u = rng.normal(size=package.N_INPUTS)
    data = peer.createData()
    pin.initConstraintDynamics(peer, data, contacts, datas)
    settings = pin.ProximalSettings(1e-12, 0, 1)
    q, v = x[: peer.nq], x[peer.nq :]
    tau = package.input_matrix_fun(x) @ u
    report = {"generate_s": seconds}
    report["constrained_vdot"] = rounds(
        lambda: package.vdot_fun(x, u),
        lambda: pin.constraintDynamics(peer, data, q, v, tau, contacts, datas, settings),
        count,
        budget,
    )
    cell = report["constrained_vdot"]
    log(f"  G1 on two flat feet: vdot_fun {cell['ratio']:.2f}x constraintDynamics")
    report.update(linearization_rows("G1", package, peer, contacts, datas, x, u, count, budget, log))
    return report


def table(report: dict) -> str:
    if "skipped" in report:
        return f"C target against Pinocchio (contacts, frames): skipped ({report['skipped']})"
    lines = [
        "| Solo-12, C target | sls µs | Pinocchio µs | ratio (spread) | goal |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    derivatives = "constraintDynamics + computeConstraintDynamicsDerivatives"
    rows = [
        ("", "constrained_vdot", "vdot_fun on four point feet", "constraintDynamics"),
        ("", "linearized_model", "linearized_model on four point feet", derivatives),
        ("", "contact_jac", "contact_forces_jac_fun on four point feet", derivatives),
        ("", "frame_jacobian", "frame_jacobian_fun, four feet", "computeJointJacobians + 4 getFrameJacobian"),
    ]
    g1 = report.get("g1", {})
    if g1 and "skipped" not in g1:
        rows += [
            ("g1", "constrained_vdot", "G1: vdot_fun on two flat feet", "constraintDynamics"),
            ("g1", "linearized_model", "G1: linearized_model on two flat feet", derivatives),
            ("g1", "contact_jac", "G1: contact_forces_jac_fun", derivatives),
        ]
    for where, key, label, peer in rows:
        cell = (report[where] if where else report)[key]
        lines.append(
            f"| {label} (vs {peer}) | {cell['sls_us']:.2f} | {cell['pinocchio_us']:.2f} | "
            f"{cell['ratio']:.2f} ({cell['ratio_min']:.2f}-{cell['ratio_max']:.2f}) | ≤ 0.5 |"
        )
    if g1 and "skipped" not in g1:
        lines.append(
            f"\nG1's C contact functions (vdot_fun, linearized_model, contact_forces_jac_fun) generated in "
            f"{g1['generate_s']:.1f} s (goal ≤ 30 s)."
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
