"""The MJCF corpus against MuJoCo: ``python -m benchmarks.mjcf_corpus [--quick] [--max-nv N] [--timeout S]``.

Walks every MJCF file of the installed collections (Gymnasium's ``envs/mujoco/assets``, dm_control's ``suite``,
robosuite's ``models/assets``, pybullet_data's ``mjcf``; a collection that is not installed is reported as such)
and, for each file MuJoCo compiles and that has joints, in a child process with a time limit: ``sls.load_mjcf``
(generated, or refused in one line naming the element), the Python target's ``M_fun`` and ``vdot_fun`` against
``mj_fullM`` and ``mj_forward``'s ``qacc`` (contacts, constraints and so frictionloss disabled, no clamping) on
random states through the package's ``from_mujoco`` (a free joint's speeds turned as ``qvel = J ν``,
``J = blockdiag(R, I)``); for a few models (:data:`TIMED`) the C target's ``linearized_model``, its dynamics rows
against central differences of ``mj_forward`` and its time per call against ``mjd_transitionFD`` on the same model
(interleaved rounds, medians). Models with more than ``--max-nv`` speeds are skipped with a note.

Writes ``benchmarks/results/mjcf-<date>.json`` and ``.md`` (the table of ``docs/mjcf.md``).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
import timeit
import warnings
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
#: Relative error allowed in M and qacc (the tests hold 1e-9).
RELATIVE = 1e-9
#: Files whose C ``linearized_model`` is timed against ``mjd_transitionFD`` (collection, path in it).
TIMED = (
    ("gymnasium", "hopper.xml"),
    ("gymnasium", "half_cheetah.xml"),
    ("gymnasium", "ant.xml"),
    ("gymnasium", "humanoid.xml"),
    ("gymnasium", "walker2d.xml"),
    ("dm_control", "cartpole.xml"),
    ("dm_control", "cheetah.xml"),
    ("robosuite", "robots/panda/robot.xml"),
    ("robosuite", "robots/spot/robot.xml"),
)
#: ``--quick``: the first of these that is installed, without the C target (a smoke test of the harness).
QUICK = (("pybullet", "inverted_pendulum.xml"), ("gymnasium", "inverted_pendulum.xml"))
_counter = itertools.count()


def collections() -> dict:
    """``{collection: (root folder, [MJCF files]) or the reason it is missing}``."""
    found: dict = {}
    for name, module, folder, pattern in (
        ("gymnasium", "gymnasium", "envs/mujoco/assets", "*.xml"),
        ("dm_control", "dm_control", "suite", "*.xml"),
        ("robosuite", "robosuite", "models/assets", "**/*.xml"),
        ("pybullet", "pybullet_data", "mjcf", "*.xml"),
    ):
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.submodule_search_locations:
            found[name] = f"not installed (pip install {module if module != 'pybullet_data' else 'pybullet'})"
            continue
        root = Path(next(iter(spec.submodule_search_locations))) / folder
        files = sorted(root.glob(pattern)) if root.is_dir() else []
        found[name] = (root, files) if files else f"installed, but {root} holds no MJCF files"
    return found


# ---------------------------------------------------------------------------------------------------------- child


def _quiet_compile(mujoco, path: Path):
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(lambda message: None)
    try:
        return mujoco.MjModel.from_xml_path(str(path))
    finally:
        mujoco.set_mju_user_warning(previous)


def _smooth(mujoco, m):
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    m.actuator_ctrllimited[:] = 0
    m.actuator_forcelimited[:] = 0
    m.jnt_actfrclimited[:] = 0
    return m


def _import(folder: Path):
    name = f"_mjcf_corpus_{os.getpid()}_{next(_counter)}"
    locations = [str(folder)]
    spec = importlib.util.spec_from_file_location(name, folder / "__init__.py", submodule_search_locations=locations)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _free_joints(m) -> list:
    """``(qpos address, dof address, body)`` of each free joint."""
    return [
        (int(m.jnt_qposadr[j]), int(m.jnt_dofadr[j]), int(m.jnt_bodyid[j])) for j in range(m.njnt) if m.jnt_type[j] == 0
    ]


def _speed_map(m, d) -> np.ndarray:
    """``J`` with ``qvel = J ν``: each free body's orientation on its linear block, ``I`` elsewhere."""
    J = np.eye(m.nv)
    for _, dof, body in _free_joints(m):
        J[dof : dof + 3, dof : dof + 3] = d.xmat[body].reshape(3, 3)
    return J


def _speed_rates(m, d, x, n_q: int) -> np.ndarray:
    """``ν̇`` from ``qacc``: ``v̇ = Rᵀ a − ω × v`` on each free joint's linear speeds, else ``qacc``."""
    rates = d.qacc.copy()
    v = x[n_q:]
    for _, dof, body in _free_joints(m):
        R = d.xmat[body].reshape(3, 3)
        rates[dof : dof + 3] = R.T @ d.qacc[dof : dof + 3] - np.cross(v[dof + 3 : dof + 6], v[dof : dof + 3])
    return rates


def _random_state(m, d, rng) -> None:
    d.qpos[:] = m.qpos0 + rng.uniform(-0.5, 0.5, m.nq)
    for j in range(m.njnt):  # unit quaternions: a free joint's after its position, a ball joint's alone
        if m.jnt_type[j] in (0, 1):
            start = int(m.jnt_qposadr[j]) + (3 if m.jnt_type[j] == 0 else 0)
            d.qpos[start : start + 4] /= np.linalg.norm(d.qpos[start : start + 4])
    d.qvel[:] = rng.uniform(-1, 1, m.nv)
    d.ctrl[:] = rng.uniform(-1, 1, m.nu)


def _relative(a, b) -> float:
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / max(float(np.abs(b).max()), 1.0))


def _full_mass_matrix(mujoco, m, d) -> np.ndarray:
    M = np.zeros((m.nv, m.nv))
    try:
        mujoco.mj_fullM(m, d, M)
    except TypeError:  # MuJoCo 3
        mujoco.mj_fullM(m, M, d.qM)
    return M


def check_file(path: Path, *, timed: bool, max_nv: int) -> dict:
    """One file's row (run in a child process)."""
    import mujoco

    import sls
    from sls.errors import SlsError
    from sls.readers.mjcf import load_mjcf

    try:
        m = _quiet_compile(mujoco, path)
    except Exception as exc:  # MuJoCo's compiler: ValueError with its message
        return {"status": "not compiled", "reason": str(exc).splitlines()[0] if str(exc) else type(exc).__name__}
    row: dict = {"nq": int(m.nq), "nv": int(m.nv), "nu": int(m.nu)}
    if m.njnt == 0:
        return {**row, "status": "no joints"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = load_mjcf(path)
        except SlsError as exc:
            message = str(exc)
            return {**row, "status": "refused", "reason": message.split(": ", 1)[-1], "one_line": "\n" not in message}
    if m.nv > max_nv:
        return {**row, "status": "skipped", "reason": f"nv = {m.nv} > {max_nv} (the size cap of this run)"}
    folder = Path(tempfile.mkdtemp(prefix="sls-mjcf-corpus-"))
    start = time.perf_counter()
    # a model with equality constraints (held exactly by sls, softly by MuJoCo): its unconstrained dynamics are
    # compared, tau_fun(x, qacc) = B_u u at MuJoCo's constraint-free qacc
    constrained = bool(model.constraints)
    wanted = ["M_fun", "tau_fun", "input_matrix_fun"] if constrained else ["M_fun", "qddot_fun"]
    sls.generate(model, folder / "py", functions=wanted)
    row["generate_s"] = time.perf_counter() - start
    package = _import(folder / "py")
    m = _smooth(mujoco, m)
    d = mujoco.MjData(m)
    free = getattr(package, "N_Q", package.N_DOF) != package.N_DOF
    row["free_joint"] = free
    params = {p: 0.0 for p in package.PARAMS if p.startswith("friction_") and p != "friction_velocity"}
    rng = np.random.default_rng(27)
    errors_M, errors_qacc = [], []
    for _ in range(3):
        _random_state(m, d, rng)
        mujoco.mj_forward(m, d)
        x = package.from_mujoco(d.qpos, d.qvel)
        u = d.ctrl.copy() if m.nu else np.zeros(package.N_INPUTS)
        J = _speed_map(m, d)
        errors_M.append(_relative(package.M_fun(x, **params), J.T @ _full_mass_matrix(mujoco, m, d) @ J))
        if constrained:
            forces = package.input_matrix_fun(x, **params) @ u
            errors_qacc.append(_relative(package.tau_fun(x, d.qacc, **params), forces))
            continue
        vdot = package.qddot_fun(x, u, **params)
        errors_qacc.append(_relative(vdot, _speed_rates(m, d, x, getattr(package, "N_Q", package.N_DOF))))
    row["M_error"], row["qacc_error"] = max(errors_M), max(errors_qacc)
    row["status"] = "generated" if max(row["M_error"], row["qacc_error"]) <= RELATIVE else "disagrees"
    row["constraints"] = len(model.constraints)
    if timed and not constrained:
        try:
            row["timing"] = _time_c_target(model, m, folder / "c", params)
        except Exception as exc:  # reported in the row, the agreement above still counts
            row["timing"] = {"status": "error", "reason": f"{type(exc).__name__}: {exc}"[:300]}
    return row


def _time_c_target(model, m, folder: Path, params: dict) -> dict:
    """The C target's ``linearized_model``: dynamics rows against central differences of ``mj_forward``, then
    per call (from Python, one state) against ``mjd_transitionFD`` (forward differences, MuJoCo's default, with
    the semi-implicit Euler integrator: one ``mj_step`` per column)."""
    import mujoco

    import sls
    from sls.backends import backend
    from sls.errors import SlsError

    try:
        backend("c").check_environment()
    except SlsError as exc:
        return {"status": "skipped", "reason": str(exc)}
    start = time.perf_counter()
    sls.generate(model, folder, target="c", functions=["qddot_fun", "linearized_model"])
    package = _import(folder)
    result: dict = {"generate_s": time.perf_counter() - start}
    d = mujoco.MjData(m)
    free = getattr(package, "N_Q", package.N_DOF) != package.N_DOF
    rng = np.random.default_rng(4)
    _random_state(m, d, rng)
    mujoco.mj_forward(m, d)
    x = package.from_mujoco(d.qpos, d.qvel)
    u = d.ctrl.copy() if m.nu else rng.uniform(-1, 1, package.N_INPUTS)
    A, B = package.linearized_model(x, u, **params)
    n, n_q = m.nv, getattr(package, "N_Q", package.N_DOF)

    def rates(delta: np.ndarray, control: np.ndarray) -> np.ndarray:
        q = package.integrate(x[:n_q], delta[:n]) if free else x[:n_q] + delta[:n]
        state = np.r_[q, x[n_q:] + delta[n:]]
        d.qpos[:], d.qvel[:] = package.to_mujoco(state)
        if m.nu:
            d.ctrl[:] = control
        else:  # the inputs are the joints' torques (and a free body's wrench): generalized forces in the speeds
            mujoco.mj_forward(m, d)
            d.qfrc_applied[:] = np.linalg.solve(_speed_map(m, d).T, control)
        mujoco.mj_forward(m, d)
        return _speed_rates(m, d, state, n_q)

    h = 1e-6
    A_fd = np.column_stack([(rates(h * e, u) - rates(-h * e, u)) / (2 * h) for e in np.eye(2 * n)])
    B_fd = np.column_stack(
        [(rates(np.zeros(2 * n), u + h * e) - rates(np.zeros(2 * n), u - h * e)) / (2 * h) for e in np.eye(len(u))]
    )
    result["linearized_error"] = max(_relative(A[n:], A_fd), _relative(B[n:], B_fd))
    d.qfrc_applied[:] = 0
    d.qpos[:], d.qvel[:] = package.to_mujoco(x)
    if m.nu:
        d.ctrl[:] = u
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER  # mjd_transitionFD refuses RK4; Euler: one step per column
    size = 2 * m.nv + m.na
    A_mj, B_mj = np.zeros((size, size)), np.zeros((size, m.nu))

    def ours() -> None:
        package.linearized_model(x, u, **params)

    def theirs() -> None:
        mujoco.mjd_transitionFD(m, d, 1e-6, 0, A_mj, B_mj, None, None)

    times: dict = {"sls": [], "mujoco": []}
    for _ in range(7):  # interleaved rounds
        for key, f in (("sls", ours), ("mujoco", theirs)):
            start = time.perf_counter()
            f()
            number = max(1, int(0.02 / max(time.perf_counter() - start, 1e-7)))
            times[key].append(min(timeit.repeat(f, number=number, repeat=3)) / number)
    result["linearized_us"] = float(np.median(times["sls"])) * 1e6
    result["transitionFD_us"] = float(np.median(times["mujoco"])) * 1e6
    result["speedup"] = result["transitionFD_us"] / result["linearized_us"]
    result["status"] = "ok" if result["linearized_error"] <= 1e-5 else "disagrees"
    return result


# ---------------------------------------------------------------------------------------------------------- parent


def run_file(path: Path, *, timed: bool, max_nv: int, timeout: float) -> dict:
    """:func:`check_file` in a child process, at most ``timeout`` seconds."""
    command = [sys.executable, "-m", "benchmarks.mjcf_corpus", "--one", str(path), "--max-nv", str(max_nv)]
    if timed:
        command.append("--timed")
    start = time.perf_counter()
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, cwd=Path(__file__).resolve().parents[1]
        )
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "reason": f"over {timeout:g} s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"status": "error", "reason": tail[:300]}
    row = json.loads(lines[-1])
    row["seconds"] = time.perf_counter() - start
    return row


def section(quick: bool, log, *, max_nv: int = 100, timeout: float = 400.0) -> dict:
    """``python -m benchmarks``'s MJCF section (``quick``: one small file, Python target only, nothing written);
    writes ``results/mjcf-<date>.json, .md``."""
    found = collections()
    rows, missing = [], {}
    for name, entry in found.items():
        if isinstance(entry, str):
            missing[name] = entry
            log(f"  {name}: {entry}")
            continue
        root, files = entry
        for path in files:
            relative = path.relative_to(root).as_posix()
            if quick and ((name, relative) not in QUICK or rows):
                continue
            timed = (name, relative) in TIMED and not quick
            row = {"collection": name, "file": relative, **run_file(path, timed=timed, max_nv=max_nv, timeout=timeout)}
            rows.append(row)
            log(f"  {name}/{relative}: {_summary(row)}")
    report = {
        "date": datetime.date.today().isoformat(),
        "mujoco": _version("mujoco"),
        "collections": {name: entry if isinstance(entry, str) else _version(name) for name, entry in found.items()},
        "max_nv": max_nv,
        "timeout_s": timeout,
        "counts": counts(rows),
        "rows": rows,
    }
    if not quick:
        RESULTS.mkdir(parents=True, exist_ok=True)
        stem = RESULTS / f"mjcf-{report['date']}"
        stem.with_suffix(".json").write_text(json.dumps(report, indent=2))
        stem.with_suffix(".md").write_text(markdown(report))
        log(f"  wrote {stem}.json and .md")
    return report


def _version(name: str) -> str:
    module = {"pybullet": "pybullet"}.get(name, name)
    try:
        from importlib.metadata import version

        return version(module)
    except Exception:
        return "?"


def counts(rows: list) -> dict:
    """How many files ended in each status."""
    found: dict = {}
    for row in rows:
        found[row["status"]] = found.get(row["status"], 0) + 1
    return found


def _summary(row: dict) -> str:
    status = row["status"]
    if status in ("generated", "disagrees"):
        text = f"{status} (nv {row['nv']}, {row['generate_s']:.1f} s; M {row['M_error']:.1e}, "
        text += f"qacc {row['qacc_error']:.1e})"
        timing = row.get("timing")
        if timing and timing.get("status") in ("ok", "disagrees"):
            text += (
                f"; C linearized_model {timing['linearized_us']:.1f} us vs mjd_transitionFD "
                f"{timing['transitionFD_us']:.1f} us ({timing['speedup']:.1f}x), "
                f"FD error {timing['linearized_error']:.1e}"
            )
        return text
    return f"{status}" + (f": {row['reason']}" if row.get("reason") else "")


def markdown(report: dict) -> str:
    """The tables of ``docs/mjcf.md``: counts per collection, the refusals, the timed models."""
    rows = report["rows"]
    statuses = ["generated", "disagrees", "refused", "skipped", "timeout", "error", "not compiled", "no joints"]
    lines = [
        f"MuJoCo {report['mujoco']}; "
        + ", ".join(f"{name} {value}" for name, value in report["collections"].items())
        + f"; size cap nv ≤ {report['max_nv']}, {report['timeout_s']:g} s per file.",
        "",
        "| collection | files | " + " | ".join(statuses) + " |",
        "| --- | ---: | " + " | ".join("---:" for _ in statuses) + " |",
    ]
    for name in report["collections"]:
        mine = [r for r in rows if r["collection"] == name]
        if not mine and isinstance(report["collections"][name], str) and "not installed" in report["collections"][name]:
            lines.append(f"| {name} | not installed | " + " | ".join("" for _ in statuses) + " |")
            continue
        cells = [str(sum(r["status"] == s for r in mine)) for s in statuses]
        lines.append(f"| {name} | {len(mine)} | " + " | ".join(cells) + " |")
    generated = [r for r in rows if r["status"] in ("generated", "disagrees")]
    if generated:
        worst_M = max(generated, key=lambda r: r["M_error"])
        worst_a = max(generated, key=lambda r: r["qacc_error"])
        lines += [
            "",
            f"Largest relative error against MuJoCo over the generated files: `M_fun` {worst_M['M_error']:.1e} "
            f"({worst_M['collection']}/{worst_M['file']}), `vdot_fun` {worst_a['qacc_error']:.1e} "
            f"({worst_a['collection']}/{worst_a['file']}).",
        ]
    other = [r for r in rows if r["status"] not in ("generated", "no joints")]
    if other:
        lines += ["", "| file | nv | status | why |", "| --- | ---: | --- | --- |"]
        for r in other:
            reason = str(r.get("reason", "")).replace("|", "\\|")
            lines.append(f"| {r['collection']}/{r['file']} | {r.get('nv', '')} | {r['status']} | {reason} |")
    timed = [r for r in rows if r.get("timing", {}).get("status") in ("ok", "disagrees")]
    if timed:
        lines += [
            "",
            "| file | nv | nu | C `linearized_model` µs | `mjd_transitionFD` µs | speed-up "
            "| error vs central differences |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for r in timed:
            t = r["timing"]
            lines.append(
                f"| {r['collection']}/{r['file']} | {r['nv']} | {r['nu']} | {t['linearized_us']:.1f} | "
                f"{t['transitionFD_us']:.1f} | {t['speedup']:.1f}× | {t['linearized_error']:.1e} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mjcf_corpus", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one small file, Python target, nothing written")
    parser.add_argument("--max-nv", type=int, default=100, help="skip models with more speeds (default 100)")
    parser.add_argument("--timeout", type=float, default=400.0, help="seconds per file (default 400)")
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)  # the child: one file, its row as JSON
    parser.add_argument("--timed", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one is not None:
        print(json.dumps(check_file(args.one, timed=args.timed, max_nv=args.max_nv)))
        return 0

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    report = section(args.quick, log, max_nv=args.max_nv, timeout=args.timeout)
    print(markdown(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
