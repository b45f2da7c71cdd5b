"""The robot corpus: every URDF file of the installed robot packages through ``sls generate``, checked
against Pinocchio loading the same file.

``python -m benchmarks.robots [--quick] [--only PATTERN] [--timeout S] [--out FILE]``

Sources (found through the installed packages, never a fixed path): ``example-robot-data``
(its ``robots`` folder), ``pybullet`` (``pybullet_data``; its 1000 procedurally generated
``random_urdfs`` objects only with ``--random-objects``) and ``rtb-data`` (``rtbdata``).
Every ``.urdf`` file and every ``.xacro`` file (xacro sources are not URDF: they are run
through sls too, to see the refusal, and counted as "not URDF") is listed; files with
identical bytes are run once (the others are listed as duplicates).

For each file, in a subprocess (its own memory, a time limit):

1. ``python -m sls generate FILE --out TMP`` (with ``--floating-base`` for the robots of
   :data:`FLOATING` when sls has that option): wall time, peak RSS of the child (``wait4``),
   exit code and the last ``error:`` line. A refusal is classified (:func:`classify`): not URDF,
   invalid XML, no mass, unsupported feature, other refusal (a model check), sls bug (a
   traceback, or an internal exception shown as the user's error), timeout, killed.
2. For an accepted file, a second subprocess (``--check``) imports the package and compares it
   with ``pinocchio.buildModelFromUrdf`` on the same file (``mimic=True`` when the file has
   ``<mimic>``; for a floating base a composite root joint of translations x, y, z and rotations
   about z, y, x — the chart sls's floating base uses, so velocities agree one to one) at a few
   random states: ``M_fun`` vs ``crba``, ``tau_fun`` vs ``rnea`` (+ ``fric_fun``), ``qddot_fun``
   vs ``aba`` (with ``B u - fric`` as torque) and ``linearized_model`` vs
   ``computeABADerivatives`` (with the friction and input-map Jacobians added by the chain rule).
   Coordinates are matched by joint name (sls orders them depth first, children in document
   order; Pinocchio's order may differ). Friction parameters the package exposes (names with
   damping/friction/coulomb/viscous) are set to 0; whatever friction is left is taken from the
   package's own ``fric_fun`` (Pinocchio has none). Errors are reported absolute and relative to
   ``max(1, |reference|)``. Then ``qddot_fun`` per call against ``pin.aba`` (medians of
   interleaved rounds), and for :data:`C_ROBOTS` the C target: generation and compile time,
   ``qddot_fun`` vs ``aba`` and ``linearized_model`` vs ``computeABADerivatives`` per call.

Writes JSON to ``benchmarks/results/robots-<date>.json`` (rewritten after every file, so a long
run can be read while it goes) and prints the summary tables.
"""

from __future__ import annotations

import argparse
import datetime
import fnmatch
import hashlib
import importlib.metadata
import json
import math
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import timeit
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"

#: Where each package keeps its robots, as ``(distribution, folder prefix inside it, label)``.
SOURCES = (
    ("example-robot-data", "cmeel.prefix/share/example-robot-data/robots/", "example-robot-data"),
    ("pybullet", "pybullet_data/", "pybullet"),
    ("rtb-data", "rtbdata/", "rtb-data"),
)

#: Robots whose base floats (legged robots, humanoids, drones): ``label pattern -> kind``. They are
#: generated with ``--floating-base`` once sls has it, and compared with a free root in Pinocchio.
FLOATING = {
    "example-robot-data:a1_description/*": "legged",
    "example-robot-data:anymal_*": "legged",
    "example-robot-data:b1_description/*": "legged",
    "example-robot-data:bolt_description/*": "legged",
    "example-robot-data:go1_description/*": "legged",
    "example-robot-data:go2_description/*": "legged",
    "example-robot-data:hyq_description/*": "legged",
    "example-robot-data:laikago_description/*": "legged",
    "example-robot-data:quadruped_description/*": "legged",
    "example-robot-data:solo_description/*": "legged",
    "example-robot-data:centauro_description/*": "legged",
    "example-robot-data:alexander_description/*": "humanoid",
    "example-robot-data:g1_description/*": "humanoid",
    "example-robot-data:human_description/*": "humanoid",
    "example-robot-data:icub_description/*": "humanoid",
    "example-robot-data:romeo_description/*": "humanoid",
    "example-robot-data:simple_humanoid_description/*": "humanoid",
    "example-robot-data:talos_data/robots/talos_full*": "humanoid",
    "example-robot-data:talos_data/robots/talos_reduced*": "humanoid",
    "example-robot-data:hector_description/*": "drone",
    "example-robot-data:iris_description/*": "drone",
    "example-robot-data:borinot_description/*": "drone",
    "example-robot-data:hextilt_description/*": "drone",
    "pybullet:a1/*": "legged",
    "pybullet:aliengo/*": "legged",
    "pybullet:laikago/*": "legged",
    "pybullet:mini_cheetah/*": "legged",
    "pybullet:quadruped/*": "legged",
    "pybullet:humanoid/*": "humanoid",
    "pybullet:kuka_iiwa/model_free_base.urdf": "free base",
}

#: Robots also generated for the C target (compile time, per call against Pinocchio).
C_ROBOTS = (
    "example-robot-data:ur_description/urdf/ur5_robot.urdf",
    "example-robot-data:panda_description/urdf/panda.urdf",
    "pybullet:franka_panda/panda.urdf",
    "pybullet:kuka_iiwa/model.urdf",
)

#: ``--quick``: a handful of small files, one per source and refusal kind.
QUICK = (
    "example-robot-data:ur_description/urdf/ur5_robot.urdf",
    "example-robot-data:double_pendulum_description/urdf/double_pendulum.urdf",
    "pybullet:kuka_iiwa/model.urdf",
    "pybullet:cartpole.urdf",
    "pybullet:plane.urdf",
    "rtb-data:xacro/unimation_puma560_description/urdf/puma560_robot.urdf",
    "rtb-data:xacro/trossen_descriptions/urdf/px100.urdf.xacro",
)

#: Refusal categories, in the order of the summary.
CATEGORIES = (
    "accepted",
    "not URDF",
    "invalid XML",
    "no mass",
    "unsupported feature",
    "other refusal",
    "sls bug",
    "timeout",
    "killed",
)

#: Degree-of-freedom bands of the generation-time table.
DOF_BANDS = ((1, 6), (7, 12), (13, 20), (21, 30), (31, 10_000))


# --------------------------------------------------------------------------
# the corpus


@dataclass
class Entry:
    """One distinct robot file: ``label`` is ``source:path inside the package``."""

    label: str
    path: str
    sha256: str
    duplicates: list = field(default_factory=list)


def package_files(distribution: str, prefix: str, include_random: bool) -> list:
    """``(relative name, absolute Path)`` of the ``.urdf`` and ``.xacro`` files of an installed distribution."""
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return []
    found = []
    for file in dist.files or ():
        name = str(file)
        if not name.startswith(prefix) or not name.endswith((".urdf", ".xacro")):
            continue
        relative = name[len(prefix) :]
        if not include_random and relative.startswith("random_urdfs/"):
            continue
        path = Path(dist.locate_file(file))
        if path.is_file():
            found.append((relative, path))
    return sorted(found)


def corpus(include_random: bool = False) -> tuple:
    """The distinct files of every installed source (first of identical files kept) and the missing sources."""
    entries, by_hash, missing = [], {}, []
    for distribution, prefix, label in SOURCES:
        files = package_files(distribution, prefix, include_random)
        if not files:
            missing.append(distribution)
        for relative, path in files:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            name = f"{label}:{relative}"
            if digest in by_hash:
                by_hash[digest].duplicates.append(name)
                continue
            entry = Entry(name, str(path), digest)
            by_hash[digest] = entry
            entries.append(entry)
    return entries, missing


def floating_kind(label: str) -> str | None:
    for pattern, kind in FLOATING.items():
        if fnmatch.fnmatch(label, pattern):
            return kind
    return None


def file_features(path: str) -> dict:
    """What the file carries that sls may not model yet (a text scan, not a parse)."""
    text = Path(path).read_text(errors="replace")
    frictions = re.findall(r"friction\s*=\s*\"\s*([^\"\s]+)", text)
    nonzero = []
    for value in frictions:
        try:
            nonzero.append(float(value) != 0)
        except ValueError:
            nonzero.append(True)
    return {
        "mimic": "<mimic" in text,
        "friction": any(nonzero),
        "floating_joint": bool(re.search(r"type\s*=\s*\"floating\"", text)),
        "planar_joint": bool(re.search(r"type\s*=\s*\"planar\"", text)),
    }


# --------------------------------------------------------------------------
# what this sls offers


def sls_features() -> dict:
    """Options of ``sls generate`` this checkout has (``--floating-base``, ``--functions``)."""
    env = child_env()
    result = subprocess.run(
        [sys.executable, "-m", "sls", "generate", "--help"],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    text = result.stdout
    version = subprocess.run(
        [sys.executable, "-m", "sls", "--version"], check=False, capture_output=True, text=True, env=env, timeout=120
    )
    return {
        "floating_base": "--floating-base" in text,
        "base_orientation": "--base-orientation" in text,
        "functions": "--functions" in text,
        "version": version.stdout.strip(),
    }


def child_env() -> dict:
    """The environment of a child: this checkout's ``sls`` first on the path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.pop("SLS_TRACEBACK", None)
    return env


# --------------------------------------------------------------------------
# running a child


def run_child(command: list, timeout: float, cwd: str | None = None) -> dict:
    """Run ``command`` with a time limit: exit code, wall and CPU seconds, peak RSS (MB) of the child, its output.

    The child runs in its own session (a timeout kills its whole group). Its peak RSS is the
    high-water mark of its own memory (``VmHWM`` of ``/proc/<pid>/status``, read every 20 ms while
    it runs); ``ru_maxrss`` of ``os.wait4`` is not used where ``/proc`` exists, because Linux carries
    the RSS of the process that forked the child over the ``exec`` (a child of a 300 MB benchmark
    process reads 300 MB whatever it used).
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            command, stdout=out, stderr=err, env=child_env(), cwd=cwd or str(ROOT), start_new_session=True
        )
        timed_out, status, usage = False, 0, None
        high_water = 0.0
        while True:
            high_water = max(high_water, _high_water_mb(proc.pid))
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - start > timeout:
                timed_out = True
                os.killpg(proc.pid, signal.SIGKILL)
                _, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return {
            "returncode": proc.returncode,
            "timed_out": timed_out,
            "wall_s": wall,
            "peak_rss_mb": high_water if high_water else (usage.ru_maxrss / 1024 if usage else None),
            "cpu_s": usage.ru_utime + usage.ru_stime if usage else None,
            "stdout": out.read().decode(errors="replace"),
            "stderr": err.read().decode(errors="replace"),
        }


def _high_water_mb(pid: int) -> float:
    """``VmHWM`` (MB) of process ``pid`` (0.0 when ``/proc`` does not tell)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


def error_line(stderr: str) -> str:
    """The last ``error:`` line of the output (else its last line)."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    return (errors or lines or [""])[-1][:500]


_INTERNAL = re.compile(r"^error: (?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Iteration|Warning|Exit)\b:")

#: ``(category, feature, words)``: the first whose word occurs in the lower-cased error line wins.
_RULES = (
    ("not URDF", "xacro leftover", ("$(", "${")),
    (
        "invalid XML",
        None,
        ("not valid xml", "not well-formed", "xml", "mismatched tag", "syntax error", "unclosed token"),
    ),
    (
        "not URDF",
        None,
        (
            "unknown type",
            "not a urdf",
            "<robot>",
            "root element",
            "no <link",
            "is not a number",
            "not a finite number",
            "missing attribute",
            "numbers, got",
            "number, got",
        ),
    ),
    ("unsupported feature", "friction", ("friction",)),
    ("unsupported feature", "mimic", ("mimic",)),
    ("unsupported feature", "floating/planar", ("'floating'", "'planar'", "floating", "planar")),
    ("unsupported feature", "closed loop", ("closed loop",)),
    ("no mass", None, ("moves no mass", "nothing to derive", "no movable joint", "no mass")),
    ("unsupported feature", None, ("cannot be modelled", "not supported", "unsupported")),
)


def classify(run: dict, label: str, path: str = "") -> tuple:
    """``(category, feature)`` of a ``sls generate`` run on ``path`` (see :data:`CATEGORIES`).

    The error line is matched without the file's name (a folder called ``xacro`` says nothing).
    """
    if run["timed_out"]:
        return "timeout", None
    if run["returncode"] == 0:
        return ("not URDF", "xacro accepted") if label.endswith(".xacro") else ("accepted", None)
    if run["returncode"] < 0:
        return "killed", f"signal {-run['returncode']}"
    line = error_line(run["stderr"])
    lowered = line.replace(path, "FILE").lower() if path else line.lower()
    if (
        "Traceback (most recent call last)" in run["stderr"]
        or _INTERNAL.match(line)
        or "internal error" in lowered
        or "bug" in lowered
    ):
        return "sls bug", None
    if label.endswith(".xacro"):
        return "not URDF", "xacro"
    for category, feature, words in _RULES:
        if any(word in lowered for word in words):
            return category, feature
    return "other refusal", None


def reclassify(row: dict) -> dict:
    """The row with its category recomputed from what it stored (after a change of :data:`_RULES`)."""
    if row["category"] == "accepted":
        return row
    stored = {
        "timed_out": row["category"] == "timeout",
        "returncode": row["returncode"],
        "stderr": (row.get("traceback") or "") + "\n" + (row.get("error") or ""),
    }
    category, feature = classify(stored, row["label"], row["path"])
    return {**row, "category": category, "feature": feature}


# --------------------------------------------------------------------------
# one file


def run_entry(entry: Entry, args, features: dict, log) -> dict:
    """Generate, classify, and for an accepted file compare with Pinocchio (each in a child process)."""
    kind = floating_kind(entry.label)
    scanned = file_features(entry.path)
    row = {
        "label": entry.label,
        "path": entry.path,
        "sha256": entry.sha256,
        "duplicates": entry.duplicates,
        "file": scanned,
        "floats": kind,
    }
    options = []
    floating = bool(kind and features["floating_base"])
    if features.get("base_orientation") and entry.path.endswith(".urdf"):
        # the corpus compares the yaw-pitch-roll chart with Pinocchio's composite root (floating_root); the
        # quaternion base is compared with Pinocchio's free-flyer in benchmarks.free_flyer
        options += ["--base-orientation", "euler"]
    if floating:
        options.append("--floating-base")
        row["floating_base"] = "generated with --floating-base"
    elif kind:
        row["floating_base"] = "unsupported (this sls has no --floating-base: base fixed)"
    folder = Path(tempfile.mkdtemp(prefix="sls-corpus-"))
    try:
        out = folder / "pkg"
        command = [sys.executable, "-m", "sls", "generate", entry.path, "--out", str(out), *options]
        run = run_child(command, args.timeout)
        category, feature = classify(run, entry.label, entry.path)
        row.update(
            category=category,
            feature=feature,
            returncode=run["returncode"],
            generate_s=run["wall_s"],
            generate_cpu_s=run["cpu_s"],
            peak_rss_mb=run["peak_rss_mb"],
            error=None
            if category == "accepted"
            else (f"timed out after {args.timeout:g} s" if run["timed_out"] else error_line(run["stderr"])),
        )
        if category == "sls bug" and "Traceback" in run["stderr"]:
            row["traceback"] = run["stderr"][-3000:]
        summary = re.search(r"\(\S+: n = (\d+), m = (\d+)\)", run["stdout"])
        if summary:
            row["n"], row["m"] = int(summary.group(1)), int(summary.group(2))
        elif category == "accepted" and (out / "__init__.py").is_file():
            header = (out / "__init__.py").read_text()
            found = [re.search(rf"^{key} = (\d+)$", header, re.MULTILINE) for key in ("N_DOF", "N_INPUTS")]
            if all(found):
                row["n"], row["m"] = int(found[0].group(1)), int(found[1].group(1))
        if category == "accepted" and not args.no_check:
            row["size_mb"] = sum(f.stat().st_size for f in out.rglob("*") if f.is_file()) / 2**20
            check = [
                sys.executable,
                "-m",
                "benchmarks.robots",
                "--check",
                entry.path,
                "--package",
                str(out),
                "--rounds",
                str(args.rounds),
            ]
            if floating or _floats_by_itself(out):
                check.append("--floating")
            if args.c and any(fnmatch.fnmatch(entry.label.removesuffix(STRIPPED), p) for p in C_ROBOTS):
                check.append("--with-c")
            result = run_child(check, args.check_timeout)
            row["check"] = parse_check(result)
        log(line_of(row))
        return row
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _floats_by_itself(package: Path) -> bool:
    """True when the generated package's robot floats without ``--floating-base`` (a body without joints)."""
    init = package / "__init__.py"
    return init.is_file() and re.search(r'^STATE = \("base_x", ', init.read_text(), re.MULTILINE) is not None


def parse_check(result: dict) -> dict:
    if result["timed_out"]:
        return {"status": "timeout", "seconds": result["wall_s"]}
    for line in reversed(result["stdout"].splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return {"status": "crashed", "returncode": result["returncode"], "stderr": result["stderr"][-2000:]}


def line_of(row: dict) -> str:
    text = (
        f"{row['category']:<20} {row['generate_s']:7.1f} s {row['peak_rss_mb'] or 0:7.0f} MB  "
        f"n={row.get('n', '-')!s:<3} {row['label']}"
    )
    check = row.get("check")
    if check and check.get("status") == "ok":
        e = check["errors"]
        text += f"  M {e['M']:.1e} tau {e['tau']:.1e} qdd {e['qddot']:.1e} A {e['A']:.1e} B {e['B']:.1e}"
        ratio = check.get("python_per_call", {}).get("ratio")
        text += f" py/aba {ratio:.1f}x" if ratio is not None else ""
    elif check:
        text += f"  check: {check.get('status')} {check.get('reason', '')}"
    if row.get("error"):
        text += f"\n{'':21}{row['error'][:200]}"
    return text


# --------------------------------------------------------------------------
# the check against Pinocchio (runs in its own process: ``--check FILE --package DIR``)

#: Parameters set to 0 for the comparison (Pinocchio's algorithms have no joint friction).
FRICTION_PARAM = re.compile(r"damping|friction|coulomb|viscous", re.IGNORECASE)


def zeroed_parameter(name: str) -> bool:
    """Whether parameter ``name`` is a friction coefficient to set to 0 (not the smooth law's velocity scale,
    which divides: ``friction_velocity`` keeps its default)."""
    return bool(FRICTION_PARAM.search(name)) and name != "friction_velocity"


def import_package(folder: Path):
    import importlib.util

    name = "_sls_corpus_package"
    spec = importlib.util.spec_from_file_location(
        name, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    spec.loader.exec_module(package)
    return package


def floating_root():
    """Pinocchio joint with sls's floating-base chart: translations along x, y, z, then rotations about z, y, x."""
    import pinocchio as pin

    root = pin.JointModelComposite()
    for joint in (
        pin.JointModelPX(),
        pin.JointModelPY(),
        pin.JointModelPZ(),
        pin.JointModelRZ(),
        pin.JointModelRY(),
        pin.JointModelRX(),
    ):
        root.addJoint(joint)
    return root


def pinocchio_model(path: str, floating: bool, mimic: bool):
    """Pinocchio's model of the file, and a note on how it was built."""
    import pinocchio as pin

    arguments = [path] + ([floating_root()] if floating else [])
    if mimic:
        try:
            return pin.buildModelFromUrdf(*arguments, mimic=True), "mimic=True"
        except Exception as exc:  # an older Pinocchio or a mimic it refuses: without mimic
            note = f"mimic=True failed ({type(exc).__name__}); loaded without mimic"
            return pin.buildModelFromUrdf(*arguments), note
    return pin.buildModelFromUrdf(*arguments), ""


def sanitized(name: str) -> set:
    """Names sls may give joint ``name`` (as is; non-word characters as ``_``; with the prefix ``q_``)."""
    clean = re.sub(r"\W", "_", name)
    return {name, clean, "q_" + clean}


def coordinate_map(model, names: list) -> tuple:
    """Match sls's coordinates (``names``, in sls's order) to Pinocchio's joints.

    Returns ``(slots, unmatched)``: per sls coordinate ``(idx_q, idx_v, kind)`` with kind ``"plain"``
    (q is the angle or offset) or ``"unit"`` (Pinocchio's continuous joint: q = [cos, sin]). A
    composite root joint (the floating base) takes the first coordinates sls did not match by name.
    """
    by_name, composite = {}, None
    for jid in range(1, model.njoints):
        joint = model.joints[jid]
        if joint.nv == 0:
            continue
        if joint.nv == 6 and joint.nq == 6:
            composite = jid
            continue
        kind = "unit" if (joint.nq, joint.nv) == (2, 1) else "plain"
        if joint.nv != 1:
            raise ValueError(f"Pinocchio joint {model.names[jid]} has nq={joint.nq}, nv={joint.nv}")
        for alias in sanitized(model.names[jid]):
            by_name.setdefault(alias, (joint.idx_q, joint.idx_v, kind))
    slots, unmatched = [], []
    for k, name in enumerate(names):
        slots.append(by_name.get(name))
        if slots[-1] is None:
            unmatched.append(k)
    if composite is not None and len(unmatched) >= 6:
        joint = model.joints[composite]
        for offset, k in enumerate(unmatched[:6]):
            slots[k] = (joint.idx_q + offset, joint.idx_v + offset, "plain")
        unmatched = unmatched[6:]
    return slots, [names[k] for k in unmatched]


def to_pinocchio(x, n: int, slots: list, nq: int):
    """sls state ``x = [q; qdot]`` → Pinocchio's ``(q, v)`` and the permutation ``v_pin = P @ qdot``."""
    import numpy as np

    q = np.zeros(nq)
    P = np.zeros((n, n))
    for k, (iq, iv, kind) in enumerate(slots):
        if kind == "unit":
            q[iq], q[iq + 1] = math.cos(x[k]), math.sin(x[k])
        else:
            q[iq] = x[k]
        P[iv, k] = 1.0
    return q, P @ x[n:], P


def symmetric(upper):
    import numpy as np

    return np.triu(upper) + np.triu(upper, 1).T


def compare(package, path: str, floating: bool, count: int, seed: int = 11) -> dict:
    """Errors of the package against Pinocchio at ``count`` random states (see the module docstring)."""
    import numpy as np
    import pinocchio as pin

    n, m = package.N_DOF, package.N_INPUTS
    names = list(package.STATE[:n])
    features = file_features(path)
    model, note = pinocchio_model(path, floating, features["mimic"])
    if not floating and model.nv == n - 6:
        # sls floated the root by itself (a body without joints): Pinocchio gets the same free root
        floating = True
        model, note = pinocchio_model(path, floating, features["mimic"])
        note = (note + "; " if note else "") + "root floated by sls itself"
    data = model.createData()
    params = {k: (0.0 if zeroed_parameter(k) and v is not None else v) for k, v in package.PARAMS.items()}
    zeroed = sorted(k for k in params if zeroed_parameter(k))
    if "g" in params and params["g"] is not None:
        model.gravity.linear = np.array([0.0, 0.0, -params["g"]])
    if model.nv != n:
        return {"status": "not compared", "reason": f"Pinocchio has nv = {model.nv}, sls n = {n}", "pinocchio": note}
    slots, unmatched = coordinate_map(model, names)
    if unmatched:
        return {
            "status": "not compared",
            "reason": f"sls coordinates without a Pinocchio joint: {unmatched[:5]}",
            "pinocchio": note,
        }
    mimic = has_mimic(model)
    rng = np.random.default_rng(seed)
    worst = {key: 0.0 for key in ("M", "tau", "qddot", "A", "B")}
    absolute = dict(worst)
    has_input_jac = hasattr(package, "input_matrix_jac_fun")

    def record(key, got, want):
        got, want = np.asarray(got, float), np.asarray(want, float)
        err = float(np.abs(got - want).max()) if got.size else 0.0
        absolute[key] = max(absolute[key], err)
        worst[key] = max(worst[key], err / max(1.0, float(np.abs(want).max()) if want.size else 1.0))

    states = []
    for _ in range(count):
        q = rng.uniform(-math.pi, math.pi, n)
        if floating:
            base = [k for k, s in enumerate(slots) if s[0] < 6 and s[2] == "plain"]
            pitch = [k for k in base if slots[k][1] == 4]
            for k in pitch:
                q[k] = rng.uniform(-1.0, 1.0)  # away from the chart's singularity at ±pi/2
        x = np.concatenate([q, rng.uniform(-1.0, 1.0, n)])
        u = rng.uniform(-1.0, 1.0, m)
        states.append((x, u))
        qp, vp, P = to_pinocchio(x, n, slots, model.nq)
        a = rng.uniform(-1.0, 1.0, n)
        fric = np.asarray(package.fric_fun(x, **params), float)
        fric_jac = np.asarray(package.fric_jac_fun(x, **params), float)
        Bu = np.asarray(package.input_matrix_fun(x, **params), float).reshape(n, m)
        tau = Bu @ u - fric
        record("M", package.M_fun(x, **params), P.T @ symmetric(pin.crba(model, data, qp)) @ P)
        record("tau", package.tau_fun(x, a, **params), P.T @ pin.rnea(model, data, qp, vp, P @ a) + fric)
        A = np.zeros((2 * n, 2 * n))
        A[:n, n:] = np.eye(n)
        if mimic or floating:
            # Pinocchio's aba and its derivatives refuse mimic joints, and its derivatives of the composite
            # root joint (the floating base's chart) disagree with central differences of its own aba
            # (measured: 0.2 relative on A1, ANYmal, Bolt); crba and rnea take both:
            # qddot = M^-1 (B u - fric - rnea(q, v, 0)), its Jacobian by central differences.
            def acceleration(xs, u=u, P=P):
                qs, vs, _ = to_pinocchio(xs, n, slots, model.nq)
                force = np.asarray(package.input_matrix_fun(xs, **params), float).reshape(n, m) @ u - np.asarray(
                    package.fric_fun(xs, **params), float
                )
                inertia = symmetric(pin.crba(model, data, qs))
                return P.T @ np.linalg.solve(inertia, P @ force - pin.rnea(model, data, qs, vs, np.zeros(n)))

            record("qddot", package.qddot_fun(x, u, **params), acceleration(x))
            Minv = P.T @ np.linalg.inv(symmetric(pin.crba(model, data, qp))) @ P
            step = 1e-6
            for k in range(2 * n):
                dx = np.zeros(2 * n)
                dx[k] = step
                A[n:, k] = (acceleration(x + dx) - acceleration(x - dx)) / (2 * step)
        else:
            record("qddot", package.qddot_fun(x, u, **params), P.T @ pin.aba(model, data, qp, vp, P @ tau))
            pin.computeABADerivatives(model, data, qp, vp, P @ tau)
            Minv = P.T @ symmetric(data.Minv) @ P
            force_jac = -fric_jac
            if has_input_jac:
                force_jac = force_jac + np.einsum(
                    "ijk,j->ik", np.asarray(package.input_matrix_jac_fun(x, **params), float).reshape(n, m, 2 * n), u
                )
            A[n:, :n] = P.T @ data.ddq_dq @ P + Minv @ force_jac[:, :n]
            A[n:, n:] = P.T @ data.ddq_dv @ P + Minv @ force_jac[:, n:]
        B = np.vstack([np.zeros((n, m)), Minv @ Bu])
        A_sls, B_sls = package.linearized_model(x, u, **params)
        record("A", A_sls, A)
        record("B", B_sls, B)
    return {
        "status": "ok",
        "mimic": mimic,
        "derivatives": (
            "central differences of crba/rnea (aba refuses mimic joints; composite root joints' derivatives are off)"
            if mimic or floating
            else "computeABADerivatives"
        ),
        "errors": worst,
        "errors_absolute": absolute,
        "states": count,
        "pinocchio": note or "buildModelFromUrdf" + (" + composite floating root" if floating else ""),
        "friction_params_zeroed": zeroed,
        "_model": model,
        "_slots": slots,
        "_states": states,
        "_params": params,
    }


#: Per-call timer: the process's CPU time, so the other jobs of a shared machine (preemption) do not count;
#: the calls timed are single-threaded.
TIMER = time.process_time
#: How the sls functions are called in the per-call timings (see :func:`check_main`).
TIMED_CALL = "f(x, u): the model's default parameters"


def has_mimic(model) -> bool:
    """Pinocchio's model has mimic joints (its aba and derivatives refuse them)."""
    return any(model.joints[j].shortname() == "JointModelMimic" for j in range(1, model.njoints))


def per_call_rounds(pairs: dict, rounds: int, budget: float) -> dict:
    """Interleaved rounds (sls, then the peer, then sls, …): per label the median times and their ratio's spread.

    Each round times each callable for about ``budget`` seconds (best of three repeats, :data:`TIMER`)."""
    import numpy as np

    def once(f):
        start = time.perf_counter()
        f()
        number = max(1, int(budget / max(time.perf_counter() - start, 1e-7)))
        return min(timeit.repeat(f, number=number, repeat=3, timer=TIMER)) / number

    times = {label: ([], []) for label in pairs}
    for _ in range(rounds):
        for label, (ours, peer) in pairs.items():
            times[label][0].append(once(ours))
            times[label][1].append(once(peer))
    result = {}
    for label, (ours, peer) in times.items():
        ratios = [a / b for a, b in zip(ours, peer)]
        result[label] = {
            "sls_us": 1e6 * float(np.median(ours)),
            "pin_us": 1e6 * float(np.median(peer)),
            "ratio": float(np.median(ratios)),
            "ratio_min": float(min(ratios)),
            "ratio_max": float(max(ratios)),
            "timer": TIMER.__name__,
        }
    return result


def check_main(args) -> int:
    """``--check``: compare the package with Pinocchio, time it, print one JSON line."""
    import numpy as np
    import pinocchio as pin

    package = import_package(Path(args.package))
    try:
        result = compare(package, args.check, args.floating, 2 if args.quick else 3)
    except Exception as exc:
        print(json.dumps({"status": "error", "reason": f"{type(exc).__name__}: {exc}"[:500]}))
        return 0
    if result["status"] != "ok":
        print(json.dumps(result))
        return 0
    model, slots, params = result.pop("_model"), result.pop("_slots"), result.pop("_params")
    x, u = result.pop("_states")[0]
    n = package.N_DOF
    data = model.createData()
    qp, vp, P = to_pinocchio(x, n, slots, model.nq)
    tau = P @ (np.asarray(package.input_matrix_fun(x, **params)).reshape(n, -1) @ u - package.fric_fun(x, **params))
    if result["mimic"]:
        result["python_per_call"] = {"status": "not timed: Pinocchio's aba refuses mimic joints"}
        print(json.dumps(result))
        return 0
    budget = 0.01 if args.quick else 0.02
    # Timed as users call them: sls with the model's default parameters (a file's friction included; passing
    # the zeroed friction parameters as keywords, as the comparison does, costs about 0.4 µs per call more).
    timed = per_call_rounds(
        {"qddot": (lambda: package.qddot_fun(x, u), lambda: pin.aba(model, data, qp, vp, tau))}, args.rounds, budget
    )
    timed["qddot"]["sls_call"] = TIMED_CALL
    result["python_per_call"] = timed["qddot"]
    if args.with_c:
        result["c_target"] = c_target(args, x, u, params, model, qp, vp, tau, package)
    print(json.dumps(result))
    return 0


def c_target(args, x, u, params, model, qp, vp, tau, package) -> dict:
    """Generate the C target in this process: times, agreement with the Python package, per call vs Pinocchio."""
    import inspect

    import numpy as np
    import pinocchio as pin

    import sls

    if shutil.which("cc") is None and shutil.which("gcc") is None and not os.environ.get("CC"):
        return {"status": "skipped", "reason": "no C compiler"}
    load = {}
    if args.floating:
        if "floating_base" not in inspect.signature(sls.load_urdf).parameters:
            return {"status": "skipped", "reason": "sls.load_urdf has no floating_base"}
        load["floating_base"] = True
    folder = Path(tempfile.mkdtemp(prefix="sls-corpus-c-"))
    try:
        start = time.perf_counter()
        report = sls.generate(sls.load_urdf(args.check, **load), folder / "pkg", target="c")
        total = time.perf_counter() - start
        c = import_package_named(folder / "pkg", "_sls_corpus_c")
        diff = float(np.abs(c.qddot_fun(x, u, **params) - package.qddot_fun(x, u, **params)).max())
        A0, B0 = package.linearized_model(x, u, **params)
        A1, B1 = c.linearized_model(x, u, **params)
        diff_ab = float(max(np.abs(A1 - A0).max(), np.abs(B1 - B0).max()))
        data = model.createData()
        timed = per_call_rounds(
            {
                "qddot": (lambda: c.qddot_fun(x, u), lambda: pin.aba(model, data, qp, vp, tau)),
                "linearized_model": (
                    lambda: c.linearized_model(x, u),
                    lambda: pin.computeABADerivatives(model, data, qp, vp, tau),
                ),
            },
            3 if args.quick else 7,
            0.01 if args.quick else 0.05,
        )
        return {
            "status": "ok",
            "generate_s": total,
            "compile_s": report.timings.get("compile"),
            "qddot_vs_python": diff,
            "linearized_vs_python": diff_ab,
            "per_call": timed,
            "sls_call": TIMED_CALL,
        }
    except Exception as exc:
        return {"status": "error", "reason": f"{type(exc).__name__}: {exc}"[:500]}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def import_package_named(folder: Path, name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        name, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    spec.loader.exec_module(package)
    return package


# --------------------------------------------------------------------------
# summary


def band_of(n: int) -> str:
    for low, high in DOF_BANDS:
        if low <= n <= high:
            return f"{low}-{high}" if high < 10_000 else f"{low}+"
    return "?"


def percentile(values: list, p: float) -> float:
    import numpy as np

    return float(np.percentile(values, p)) if values else float("nan")


#: Robots from this many coordinates on get a row of their own in the per-call table.
LARGE = 30


def summarize(rows: list) -> dict:
    """Counts by category, error maxima, generation time per DOF band, per-call ratio distribution."""
    import numpy as np

    counts = {c: 0 for c in CATEGORIES}
    features = {}
    for row in rows:
        counts[row["category"]] = counts.get(row["category"], 0) + 1
        if row["category"] == "unsupported feature":
            features[row.get("feature") or "other"] = features.get(row.get("feature") or "other", 0) + 1
    checked = [r for r in rows if r.get("check", {}).get("status") == "ok"]
    maxima = {}
    for key in ("M", "tau", "qddot", "A", "B"):
        if checked:
            worst = max(checked, key=lambda r: r["check"]["errors"][key])
            maxima[key] = {"relative": worst["check"]["errors"][key], "file": worst["label"]}
    not_compared = [
        {"label": r["label"], "check": r["check"]} for r in rows if r.get("check") and r["check"].get("status") != "ok"
    ]
    bands = {}
    for row in rows:
        if row["category"] == "accepted" and "n" in row:
            bands.setdefault(band_of(row["n"]), []).append(row)
    generation = {}
    for band, members in bands.items():
        seconds = [r["generate_s"] for r in members]
        cpu = [r["generate_cpu_s"] for r in members if r.get("generate_cpu_s") is not None]
        rss = [r["peak_rss_mb"] for r in members if r.get("peak_rss_mb")]
        slowest = max(members, key=lambda r: r["generate_s"])
        generation[band] = {
            "files": len(members),
            "median_s": float(np.median(seconds)),
            "median_cpu_s": float(np.median(cpu)) if cpu else None,
            "max_s": max(seconds),
            "slowest": slowest["label"],
            "max_rss_mb": max(rss) if rss else None,
        }
    ratios = [
        (r["check"]["python_per_call"]["ratio"], r["label"], r.get("n"))
        for r in checked
        if "ratio" in r["check"].get("python_per_call", {})
    ]
    values = [v for v, _, _ in ratios]
    small = [v for v, _, n in ratios if n is not None and n <= 12]
    per_call = {
        "files": len(values),
        "min": min(values) if values else None,
        "median": float(np.median(values)) if values else None,
        "p90": percentile(values, 90) if values else None,
        "max": max(values) if values else None,
        "worst": max(ratios)[1] if ratios else None,
        "up_to_12_dof_over_20x": sum(1 for v in small if v > 20),
        "up_to_12_dof": len(small),
        "over_20x": [[label, n, v] for v, label, n in sorted(ratios, reverse=True) if v > 20],
        "large": [
            {"label": r["label"], "n": r.get("n"), **r["check"]["python_per_call"]}
            for r in sorted(checked, key=lambda r: (-(r.get("n") or 0), r["label"]))
            if (r.get("n") or 0) >= LARGE and "ratio" in r["check"].get("python_per_call", {})
        ],
    }
    c_rows = [
        {"label": r["label"], "n": r.get("n"), **r["check"]["c_target"]} for r in checked if "c_target" in r["check"]
    ]
    failing = {}
    for row in rows:
        if row["category"] != "accepted":
            error = (row.get("error") or "").replace(row["path"] + ": ", "")
            failing.setdefault(row["category"], []).append(
                {"label": row["label"], "feature": row.get("feature"), "error": error}
            )
    return {
        "files": len(rows),
        "counts": counts,
        "unsupported_features": features,
        "error_maxima": maxima,
        "not_compared": not_compared,
        "generation_by_dof": dict(sorted(generation.items(), key=lambda item: int(item[0].split("-")[0].rstrip("+")))),
        "python_per_call_ratio": per_call,
        "c_target": c_rows,
        "failing": failing,
    }


def table(summary: dict) -> str:
    lines = [f"{summary['files']} distinct files", "", "| category | files |", "| --- | ---: |"]
    for category, count in summary["counts"].items():
        if count:
            lines.append(f"| {category} | {count} |")
    if summary["unsupported_features"]:
        lines.append(
            "\nunsupported features: " + ", ".join(f"{k} {v}" for k, v in summary["unsupported_features"].items())
        )
    if summary["error_maxima"]:
        lines += [
            "",
            "| against Pinocchio | max error (relative to max(1, \\|ref\\|)) | file |",
            "| --- | ---: | --- |",
        ]
        for key, value in summary["error_maxima"].items():
            lines.append(f"| {key} | {value['relative']:.1e} | {value['file']} |")
    for item in summary["not_compared"]:
        check = item["check"]
        lines.append(f"not compared: {item['label']}: {check.get('status')} {check.get('reason', '')}")
    if summary["generation_by_dof"]:
        lines += [
            "",
            "| DOF | files | generate median s (wall) | median CPU s | max s | peak RSS max MB | slowest |",
            "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
        ]
        for band, g in summary["generation_by_dof"].items():
            rss = f"{g['max_rss_mb']:.0f}" if g["max_rss_mb"] else "—"
            cpu = f"{g['median_cpu_s']:.1f}" if g.get("median_cpu_s") is not None else "—"
            lines.append(
                f"| {band} | {g['files']} | {g['median_s']:.1f} | {cpu} | {g['max_s']:.1f} | {rss} | {g['slowest']} |"
            )
    p = summary["python_per_call_ratio"]
    if p["files"]:
        lines.append(
            f"\nPython qddot_fun / pin.aba per call over {p['files']} files: min {p['min']:.1f}x, "
            f"median {p['median']:.1f}x, "
            f"90th percentile {p['p90']:.1f}x, max {p['max']:.1f}x ({p['worst']}); up to 12 DOF: "
            f"{p['up_to_12_dof_over_20x']} of {p['up_to_12_dof']} over 20x"
        )
        over = p.get("over_20x") or []
        lines.append(
            f"over 20x: {len(over)} files"
            + (": " + ", ".join(f"{label} ({n} DOF) {ratio:.1f}x" for label, n, ratio in over) if over else "")
        )
    if p.get("large"):
        lines += [
            "",
            f"| n ≥ {LARGE} | n | qddot_fun µs | pin.aba µs | ratio (spread) |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        for r in p["large"]:
            lines.append(
                f"| {r['label']} | {r['n']} | {r['sls_us']:.0f} | {r['pin_us']:.1f} | "
                f"{r['ratio']:.1f} ({r['ratio_min']:.1f}–{r['ratio_max']:.1f}) |"
            )
    if summary["c_target"]:
        lines += [
            "",
            "| C target | n | generate s | compile s | qddot / aba (spread) "
            "| linearized_model / computeABADerivatives (spread) |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        for c in summary["c_target"]:
            if c.get("status") != "ok":
                lines.append(f"| {c['label']} | {c['n']} | {c.get('status')}: {c.get('reason', '')} | | | |")
                continue
            q, lin = c["per_call"]["qddot"], c["per_call"]["linearized_model"]
            lines.append(
                f"| {c['label']} | {c['n']} | {c['generate_s']:.1f} | {c['compile_s'] or 0:.1f} | "
                f"{q['ratio']:.2f} ({q['ratio_min']:.2f}–{q['ratio_max']:.2f}) | "
                f"{lin['ratio']:.2f} ({lin['ratio_min']:.2f}–{lin['ratio_max']:.2f}) |"
            )
    for category, items in summary["failing"].items():
        lines.append(f"\n{category}:")
        for item in items:
            lines.append(f"  {item['label']}: {item['error']}")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# the section of ``python -m benchmarks``

#: The humanoid of issue 17's goals, and the functions a humanoid user needs.
HUMANOID = "example-robot-data:g1_description/urdf/g1_29dof_rev_1_0.urdf"
HUMANOID_FUNCTIONS = ("qddot_fun", "xdot_fun", "linearized_model", "M_fun", "tau_fun")


def humanoid_generation(entries: list, features: dict, timeout: float, log) -> dict:
    """G1 (29 DOF) with a floating base: ``sls generate`` of the functions a humanoid user needs, and of the
    full set (wall time and peak RSS); "unsupported" while sls lacks ``--floating-base`` or ``--functions``."""
    entry = next((e for e in entries if e.label == HUMANOID), None)
    if entry is None:
        return {"status": "skipped", "reason": "example-robot-data has no G1 file"}
    missing = [
        option
        for option, key in (("--floating-base", "floating_base"), ("--functions", "functions"))
        if not features[key]
    ]
    if missing:
        return {"status": "unsupported", "reason": f"this sls has no {' and no '.join(missing)}"}
    rows = {}
    for label, extra in (("functions", ["--functions", ",".join(HUMANOID_FUNCTIONS)]), ("full set", [])):
        folder = Path(tempfile.mkdtemp(prefix="sls-g1-"))
        try:
            command = [
                sys.executable,
                "-m",
                "sls",
                "generate",
                entry.path,
                "--out",
                str(folder / "pkg"),
                "--floating-base",
                *extra,
            ]
            run = run_child(command, timeout)
            rows[label] = {
                "seconds": run["wall_s"],
                "peak_rss_mb": run["peak_rss_mb"],
                "returncode": run["returncode"],
                "timed_out": run["timed_out"],
                "error": None if run["returncode"] == 0 else error_line(run["stderr"]),
            }
            log(f"  G1 floating base, {label}: {rows[label]}")
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return {"status": "ok", "file": entry.label, "functions": list(HUMANOID_FUNCTIONS), "rows": rows}


#: Files measured also with their ``<mimic>`` elements removed (each mimic joint then a coordinate of
#: its own, in sls and in Pinocchio alike): Pinocchio's ``aba`` refuses mimic joints, so this is the
#: variant the C target can be timed against.
MIMIC_STRIPPED = ("example-robot-data:panda_description/urdf/panda.urdf",)
STRIPPED = " (mimic stripped)"


def mimic_stripped(entry: Entry, folder: Path) -> Entry:
    """A copy of the file without its ``<mimic>`` elements, written into ``folder``."""
    text = Path(entry.path).read_text()
    text = re.sub(r"<mimic\b[^>]*/>|<mimic\b[^>]*>.*?</mimic>", "", text, flags=re.DOTALL)
    path = folder / Path(entry.path).name
    path.write_text(text)
    return Entry(entry.label + STRIPPED, str(path), hashlib.sha256(text.encode()).hexdigest())


def benchmark_section(quick: bool, log) -> dict:
    """``python -m benchmarks``'s robot section: the arms of :data:`C_ROBOTS` and the mimic-stripped
    variants of :data:`MIMIC_STRIPPED` (Python and C target against Pinocchio), and the humanoid's
    generation; ``quick`` runs the UR5 alone, without C."""
    argv = (
        ["--only", C_ROBOTS[0], "--no-c", "--rounds", "2"]
        if quick
        else [a for label in C_ROBOTS for a in ("--only", label)]
    )
    args = parser().parse_args(argv + ["--timeout", "600"])
    args.out = None
    report = run(args, log)
    if not quick:
        entries, _ = corpus()
        folder = Path(tempfile.mkdtemp(prefix="sls-stripped-"))
        try:
            for entry in entries:
                if entry.label in MIMIC_STRIPPED:
                    report["rows"].append(run_entry(mimic_stripped(entry, folder), args, report["sls"], log))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        report["summary"] = summarize(report["rows"])
        report["humanoid"] = humanoid_generation(entries, report["sls"], 900.0, log)
    return report


def section_table(report: dict) -> str:
    lines = [
        "| robot | n | generate s | peak RSS MB | Python qddot / aba | C qddot / aba "
        "| C linearized_model / computeABADerivatives | C compile s |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in report["rows"]:
        check = row.get("check", {})
        if row["category"] != "accepted" or check.get("status") != "ok":
            why = (row.get("error") or check.get("reason") or "").replace(row["path"] + ": ", "")
            lines.append(f"| {row['label']} | {row.get('n', '—')} | {row['category']}: {why[:160]} | | | | | |")
            continue
        py = check.get("python_per_call", {})
        c = check.get("c_target", {})
        if c.get("status") == "ok":
            q, lin = c["per_call"]["qddot"], c["per_call"]["linearized_model"]
            c_cells = (
                f"{q['ratio']:.2f} ({q['ratio_min']:.2f}–{q['ratio_max']:.2f}) | "
                f"{lin['ratio']:.2f} ({lin['ratio_min']:.2f}–{lin['ratio_max']:.2f}) | {c['compile_s'] or 0:.1f}"
            )
        else:
            c_cells = f"{c.get('status', '—')} | | "
        py_cell = (
            f"{py['ratio']:.1f} ({py['ratio_min']:.1f}–{py['ratio_max']:.1f})"
            if "ratio" in py
            else py.get("status", "—")
        )
        lines.append(
            f"| {row['label']} | {row['n']} | {row['generate_s']:.1f} | {row['peak_rss_mb']:.0f} | "
            f"{py_cell} | {c_cells} |"
        )
    humanoid = report.get("humanoid")
    if humanoid:
        if humanoid["status"] != "ok":
            lines.append(f"\nG1 with floating base: {humanoid['status']} ({humanoid.get('reason', '')})")
        else:
            for label, r in humanoid["rows"].items():
                outcome = (
                    f"{r['seconds']:.1f} s, peak RSS {r['peak_rss_mb']:.0f} MB"
                    if r["returncode"] == 0
                    else (r["error"] or "failed")
                )
                lines.append(f"\nG1 with floating base, {label}: {outcome}")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# entry points


def select(entries: list, args) -> list:
    if args.only:
        patterns = args.only
        return [e for e in entries if any(fnmatch.fnmatch(e.label, p) or p in e.label for p in patterns)]
    if args.quick:
        return [e for e in entries if e.label in QUICK]
    return entries


def run(args, log) -> dict:
    """Run the corpus (or its selection) and return the report; writes ``args.out`` after every file."""
    features = sls_features()
    entries, missing = corpus(args.random_objects)
    chosen = select(entries, args)
    report = {
        "date": datetime.date.today().isoformat(),
        "machine": {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count()},
        "sls": features,
        "versions": versions(),
        "timeout_s": args.timeout,
        "missing_sources": missing,
        "corpus_files": len(entries),
        "duplicates": sum(len(e.duplicates) for e in entries),
        "selection": args.only or ("quick" if args.quick else "all"),
        "rows": [],
    }
    log(f"{len(chosen)} of {len(entries)} distinct files; sls {features}; missing: {missing or 'none'}")
    for entry in chosen:
        report["rows"].append(run_entry(entry, args, features, log))
        report["summary"] = summarize(report["rows"])
        if args.out:
            write(report, args.out)
    report["summary"] = summarize(report["rows"])
    return report


def update(args) -> int:
    """``--update FILE``: run the selection again and replace its rows in FILE (the others reclassified)."""
    report = json.loads(args.update.read_text())
    out, args.out = args.update, None

    def log(text):
        print(text, file=sys.stderr, flush=True)

    fresh = {row["label"]: row for row in run(args, log)["rows"]}
    labels = sorted(fresh)
    report["rows"] = [fresh.pop(row["label"], None) or reclassify(row) for row in report["rows"]] + list(fresh.values())
    report.setdefault("updated", []).append({"date": datetime.date.today().isoformat(), "labels": labels})
    report["summary"] = summarize(report["rows"])
    write(report, out)
    print(table(report["summary"]))
    return 0


def versions() -> dict:
    found = {}
    for name in ("pin", "example-robot-data", "pybullet", "rtb-data", "sympy", "numpy"):
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = None
    return found


def write(report: dict, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = out.with_suffix(out.suffix + ".part")
    temporary.write_text(json.dumps(report, indent=1))
    temporary.replace(out)


# --------------------------------------------------------------------------
# the large robots: qddot_fun before and after a change, in one process


#: Coordinates from which a corpus robot counts as large (``--large``).
LARGE_N = 30


def large_entries(results: Path) -> list:
    """``[(label, path, floating), …]``: the timed robots of a corpus results file with ``n >= LARGE_N``, in the
    order of their ratio to ``aba`` (worst first); paths found anew in this environment's corpus."""
    report = json.loads(results.read_text())
    paths = {entry.label: entry.path for entry in corpus()[0]}
    rows = [r for r in report["rows"] if (r.get("n") or 0) >= LARGE_N and r.get("category") == "accepted"]
    rows.sort(key=lambda r: -(r.get("check") or {}).get("python_per_call", {}).get("ratio", 0.0))
    return [(r["label"], paths[r["label"]], r.get("floating_base") == "generated with --floating-base") for r in rows]


def large_generate(path: str, floating: bool, out: Path, source: Path | None, timeout: float) -> dict:
    """``sls generate PATH --functions qddot_fun`` (the corpus's options) with the sls of ``source`` (a checkout;
    ``None``: this one) first on the path."""
    options = ["--base-orientation", "euler"] + (["--floating-base"] if floating else [])
    command = [sys.executable, "-m", "sls", "generate", path, "--out", str(out), "--functions", "qddot_fun", *options]
    if source is not None:
        command = [
            sys.executable,
            "-c",
            f"import sys; sys.path.insert(0, {str(source)!r}); import runpy; "
            "sys.argv[0] = 'sls'; runpy.run_module('sls', run_name='__main__')",
            *command[3:],
        ]
    return run_child(command, timeout)


def large_time_main(args) -> int:
    """``--large-time FILE --package BEFORE --package AFTER``: both packages' ``qddot_fun`` against ``pin.aba`` in
    interleaved rounds (before, aba, after, aba), one JSON line."""
    import numpy as np
    import pinocchio as pin

    before, after = (import_package_named(Path(folder), f"_sls_large_{k}") for k, folder in enumerate(args.package))
    n = before.N_DOF
    model, note = pinocchio_model(args.large_time, args.floating, False)
    g = before.PARAMS.get("g")
    if g is not None:
        model.gravity.linear = np.array([0.0, 0.0, -g])
    data = model.createData()
    slots, unmatched = coordinate_map(model, list(before.STATE[:n]))
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.uniform(-math.pi, math.pi, n), rng.uniform(-1, 1, n)])
    u = rng.uniform(-1, 1, before.N_INPUTS)
    if unmatched or model.nv != n:  # mimic joints Pinocchio's aba refuses: its model of every joint, at its own state
        note += f"; aba of Pinocchio's model without mimic (nv = {model.nv}, sls n = {n})"
        qp = pin.integrate(model, pin.neutral(model), rng.uniform(-1, 1, model.nv))
        vp = rng.uniform(-1, 1, model.nv)
        tau = rng.uniform(-1, 1, model.nv)
    else:
        qp, vp, P = to_pinocchio(x, n, slots, model.nq)
        tau = P @ rng.uniform(-1, 1, n)  # aba's time does not depend on the torque's values
    a, b = before.qddot_fun(x, u), after.qddot_fun(x, u)
    pairs = {
        "before": (lambda: before.qddot_fun(x, u), lambda: pin.aba(model, data, qp, vp, tau)),
        "after": (lambda: after.qddot_fun(x, u), lambda: pin.aba(model, data, qp, vp, tau)),
    }
    timed = per_call_rounds(pairs, args.rounds, 0.02)
    diff = float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(a)))))
    print(json.dumps({"status": "ok", "n": n, "pinocchio": note, "before_after_rel_diff": diff, **timed}))
    return 0


def large_main(args) -> int:
    """``--large RESULTS``: the robots of RESULTS with ``n >= LARGE_N``, each ``qddot_fun`` generated by the sls
    of ``--before DIR`` and by this checkout, timed against ``pin.aba`` in one process (:func:`large_time_main`);
    writes ``args.out``."""
    chosen = [e for e in large_entries(args.large) if not args.only or any(p in e[0] for p in args.only)]
    report = {
        "date": datetime.date.today().isoformat(),
        "what": (
            "Python qddot_fun per call against pin.aba, before (the sls of --before) and after (this checkout) in one "
            f"process, interleaved rounds (before, aba, after, aba; {args.rounds} rounds, process time): packages "
            "generated with --functions qddot_fun (and --floating-base --base-orientation euler for the floating "
            "robots, as the corpus); Pinocchio's model as the corpus builds it (composite root for a floating "
            "base); random states"
        ),
        "before": str(args.before),
        "machine": {"platform": platform.platform(), "python": platform.python_version()},
        "rows": {},
    }
    for label, path, floating in chosen:
        folder = Path(tempfile.mkdtemp(prefix="sls-large-"))
        try:
            made = [
                large_generate(path, floating, folder / name, source, args.timeout)
                for name, source in (("before", args.before), ("after", None))
            ]
            if any(m["returncode"] != 0 for m in made):
                report["rows"][label] = {"status": "not generated", "error": [error_line(m["stderr"]) for m in made]}
                continue
            command = [
                sys.executable,
                "-m",
                "benchmarks.robots",
                "--large-time",
                path,
                "--rounds",
                str(args.rounds),
                "--package",
                str(folder / "before"),
                "--package",
                str(folder / "after"),
            ]
            result = parse_check(run_child(command + (["--floating"] if floating else []), args.check_timeout))
            result["generate_s"] = {"before": made[0]["wall_s"], "after": made[1]["wall_s"]}
            report["rows"][label] = result
            print(
                f"{label}: {result.get('before', {}).get('ratio', '-')} -> {result.get('after', {}).get('ratio', '-')}",
                file=sys.stderr,
                flush=True,
            )
            write(report, args.out)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    write(report, args.out)
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.robots", description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a handful of small files, no C target (smoke test)")
    p.add_argument(
        "--only", action="append", metavar="PATTERN", help="labels matching PATTERN (glob or substring), repeatable"
    )
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per sls generate (default 300)")
    p.add_argument(
        "--check-timeout", type=float, default=600.0, help="seconds per comparison with Pinocchio (default 600)"
    )
    p.add_argument("--rounds", type=int, default=5, help="interleaved timing rounds per file (default 5)")
    p.add_argument("--out", type=Path, help="JSON file (default benchmarks/results/robots-<date>.json)")
    p.add_argument("--no-check", action="store_true", help="generate only, no comparison with Pinocchio")
    p.add_argument("--no-c", dest="c", action="store_false", help="skip the C target of the chosen arms")
    p.add_argument("--random-objects", action="store_true", help="include pybullet's 1000 random_urdfs objects")
    p.add_argument(
        "--update", type=Path, metavar="FILE", help="rerun the selection (--only) and replace its rows in results FILE"
    )
    p.add_argument(
        "--summary",
        type=Path,
        metavar="FILE",
        help="print the tables of a results file (refusals classified anew) and exit",
    )
    p.add_argument(
        "--large",
        type=Path,
        metavar="RESULTS",
        help="the robots of a results file with n >= 30: qddot_fun of --before and of this checkout against aba",
    )
    p.add_argument("--before", type=Path, metavar="DIR", help="with --large: the sls checkout to compare with")
    # internal: the comparison child
    p.add_argument("--check", metavar="FILE", help=argparse.SUPPRESS)
    p.add_argument("--large-time", metavar="FILE", help=argparse.SUPPRESS)
    p.add_argument("--package", action="append", help=argparse.SUPPRESS)
    p.add_argument("--floating", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--with-c", action="store_true", help=argparse.SUPPRESS)
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    if args.package and not args.large_time:
        args.package = args.package[-1]
    if args.check:
        return check_main(args)
    if args.large_time:
        return large_time_main(args)
    if args.large:
        args.out = args.out or RESULTS / f"robots-large-{datetime.date.today().isoformat()}.json"
        return large_main(args)
    if args.summary:
        report = json.loads(args.summary.read_text())
        print(table(summarize([reclassify(row) for row in report["rows"]])))
        return 0
    if args.quick:
        args.c = False
    if args.update:
        return update(args)
    if args.out is None:
        args.out = RESULTS / f"robots-{'quick-' if args.quick else ''}{datetime.date.today().isoformat()}.json"

    def log(text):
        print(text, file=sys.stderr, flush=True)

    report = run(args, log)
    write(report, args.out)
    print(table(report["summary"]))
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
