"""The CasADi target on the UR5 (``python -m benchmarks.casadi_target [--quick]``): generation time, the size of
the ``qddot_fun`` and ``linearized_model`` graphs against the alternatives, and the time per call.

* generation: ``sls generate ur5 --target casadi`` (derive, codegen, render, write), then building the
  ``casadi.Function``\\ s on import;
* instructions (``Function.n_instructions()``): ``qddot_fun`` (the lowering's unrolled ``M = L D Lᵀ``) against
  ``casadi.solve(M_fun, u - tau_fun(x, 0))`` (CasADi's own symbolic solve of the same arrays) and against the
  operations of the C target's ``qddot_fun`` (operators and calls counted in its source); ``linearized_model``
  (the lowering's solves) against ``casadi.jacobian`` of ``xdot_fun``;
* per call: ``qddot_fun(x, u, p)`` from Python with numpy arguments (the package's call path: the arguments
  copied into ``Function.buffer()``; on Solo-12 also the same graph as a plain ``casadi.Function``, where CasADi
  converts each numpy argument, some 15-20 µs: a function returning its input costs as much) and with ``DM``
  arguments, the same evaluated 10⁴ times by one ``Function.map`` (the graph's own cost per state), and the numpy
  target's ``qddot_fun`` for scale;
* per call through ``Function.buffer()`` (arguments and results bound once to numpy arrays, then one evaluation:
  the graph's own time plus well under a microsecond), the fair comparison of the graphs;
* adam-robotics (when installed): its CasADi mass matrix and bias force with ``casadi.solve`` on the same URDF,
  measured the same ways; on Solo-12's quaternion base its ``aba_fun`` (numpy arguments, ``DM`` arguments,
  ``Function.buffer()``, a map), beside a ``Function`` returning its input (CasADi's cost of a call alone).

Every call is timed in interleaved rounds (:class:`Timings`, the best of 30), so the ratios hold on a shared machine.
"""

from __future__ import annotations

import argparse
import re
import shutil
import tempfile
import time
import timeit
from pathlib import Path

import numpy as np

import sls


def _import(folder: Path):
    import importlib.util
    import sys

    name = f"_sls_casadi_bench_{folder.name}"
    spec = importlib.util.spec_from_file_location(
        name, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    spec.loader.exec_module(package)
    return package


def buffered(function, *args):
    """A zero-argument call evaluating ``function`` on ``args`` through ``Function.buffer()``: the numpy arguments
    and results are bound once, so a call is the graph's evaluation alone (CasADi's argument conversion left out)."""
    import casadi as ca

    buffer, evaluate = function.buffer()
    arrays = [np.ascontiguousarray(np.asarray(ca.DM(a)).ravel(order="F"), dtype=float) for a in args]
    results = [np.zeros(function.nnz_out(k)) for k in range(function.n_out())]
    for k, array in enumerate(arrays):
        buffer.set_arg(k, memoryview(array))
    for k, array in enumerate(results):
        buffer.set_res(k, memoryview(array))
    kept = (function, buffer, arrays, results)  # the buffer holds none of them: CasADi crashes once they are freed

    def call() -> None:
        assert kept
        evaluate()

    return call


class Timings:
    """Calls timed together in interleaved rounds (so the ratios hold on a shared machine): :meth:`add` a call
    under a key, then :meth:`measure` gives each key's best time per call (µs), divided by its ``per`` (the states
    of a ``Function.map``)."""

    def __init__(self, rounds: int = 15, budget: float = 0.02) -> None:
        self.calls: dict[str, tuple] = {}
        self.rounds, self.budget = rounds, budget

    def add(self, key: str, call, per: int = 1) -> None:
        self.calls[key] = (call, per)

    def measure(self) -> dict[str, float]:
        numbers = {}
        for key, (call, _) in self.calls.items():
            start = time.perf_counter()
            call()
            numbers[key] = max(1, int(self.budget / max(time.perf_counter() - start, 1e-7)))
        best = dict.fromkeys(self.calls, float("inf"))
        for _ in range(self.rounds):
            for key, (call, _) in self.calls.items():
                best[key] = min(best[key], timeit.timeit(call, number=numbers[key]) / numbers[key])
        return {key: 1e6 * best[key] / per for key, (_, per) in self.calls.items()}


UR5_JOINTS = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint"]
UR5_JOINTS.append("wrist_3_joint")


def adam_qddot(urdf: Path, joints: list, gravity: float):
    """adam-robotics' forward dynamics of a fixed-base robot as one SX ``casadi.Function`` (q, qdot, tau) → qddot:
    its mass matrix and bias force with ``casadi.solve``, or ``None`` when adam is not installed."""
    try:
        import casadi as ca
        from adam.casadi import KinDynComputations
    except ImportError:
        return None
    kin = KinDynComputations(str(urdf), joints)
    kin.g = np.array([0.0, 0.0, -gravity, 0.0, 0.0, 0.0])
    n = len(joints)
    q, qd, tau = ca.SX.sym("q", n), ca.SX.sym("qd", n), ca.SX.sym("tau", n)
    M = kin.mass_matrix_fun()(ca.SX.eye(4), q)[6:, 6:]
    h = kin.bias_force_fun()(ca.SX.eye(4), q, ca.SX.zeros(6), qd)[6:]
    return ca.Function("adam_qddot", [q, qd, tau], [ca.solve(M, tau - h)])


def solo_rows(folder: Path, quick: bool, timings: Timings) -> dict:
    """Solo-12 on its quaternion base (example-robot-data, when installed): the CasADi target's ``qddot_fun``
    (= ``vdot_fun``) against adam-robotics' ``aba_fun`` on the same URDF: instructions; the calls are added to
    ``timings``."""
    import casadi as ca

    try:
        import pinocchio as pin
    except ImportError:
        return {}
    urdf = (
        Path(pin.__file__).resolve().parents[4] / "share/example-robot-data/robots/solo_description/robots/solo12.urdf"
    )
    if not urdf.is_file():
        return {}
    model = sls.load_urdf(urdf, floating_base=True, name="solo12")
    start = time.perf_counter()
    sls.generate(model, folder / "solo12_casadi", target="casadi")
    pkg = _import(folder / "solo12_casadi")
    qddot = pkg.qddot_fun
    result = {"solo_generation_s": time.perf_counter() - start, "solo_instructions": qddot.n_instructions()}
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.uniform(-1, 1, len(model.q)), rng.uniform(-1, 1, model.n)])
    x[3:7] /= np.linalg.norm(x[3:7])
    u = rng.uniform(-1, 1, model.m)
    u[:6] = 0.0  # no wrench on the base (adam's aba has no such input)
    dm = [ca.DM(x), ca.DM(u), pkg.parameters()]
    numbers = [x, u, np.asarray(dm[2]).ravel()]
    timings.add("solo_call_us", lambda: qddot(*numbers))
    own = ca.Function.deserialize(qddot.serialize())  # the same graph as a plain casadi.Function
    timings.add("solo_call_casadi_us", lambda: own(*numbers))
    timings.add("solo_call_mixed_us", lambda: qddot(x, u, dm[2]))
    timings.add("solo_call_dm_us", lambda: qddot(*dm))
    inputs = [ca.SX.sym(f"a{k}", qddot.size1_in(k)) for k in range(qddot.n_in())]
    echo = ca.Function("echo", inputs, [inputs[0][: qddot.size1_out(0)]])  # no work: CasADi's call alone
    timings.add("empty_call_us", lambda: echo(*numbers))
    timings.add("empty_call_dm_us", lambda: echo(*dm))
    timings.add("solo_call_buffer_us", buffered(qddot, *dm))
    count = 200 if quick else 2000
    batch = [ca.repmat(a, 1, count) for a in dm]
    timings.add("solo_mapped_us", buffered(qddot.map(count), *batch), count)
    try:
        from adam.casadi import KinDynComputations
    except ImportError:
        return result
    joints = [s.name for s in model.q][7:]
    kin = KinDynComputations(str(urdf), joints)
    kin.g = np.array([0.0, 0.0, -pkg.PARAMS.get("g", 9.81), 0.0, 0.0, 0.0])
    aba = kin.aba_fun()
    H = np.eye(4)
    R = np.asarray(pin.Quaternion(x[6], x[3], x[4], x[5]).toRotationMatrix())
    H[:3, :3], H[:3, 3] = R, x[:3]
    n_j, v = len(joints), x[len(model.q) :]
    args = [ca.DM(H), ca.DM(x[7 : 7 + n_j]), ca.DM(np.concatenate([R @ v[:3], R @ v[3:6]])), ca.DM(v[6:])]
    args.append(ca.DM(np.asarray(dm[1]).ravel()[6:]))
    result["adam_aba_instructions"] = aba.n_instructions()
    # the joints' accelerations are frame-free (adam's base acceleration is in its mixed representation)
    joints_sls = np.asarray(qddot(*dm)).ravel()[6:]
    result["adam_aba_agrees"] = float(np.max(np.abs(np.asarray(aba(*args)).ravel()[6:] - joints_sls)))
    plain = [np.asarray(a) for a in args]
    timings.add("adam_aba_call_us", lambda: aba(*plain))
    timings.add("adam_aba_call_dm_us", lambda: aba(*args))
    timings.add("adam_aba_call_buffer_us", buffered(aba, *args))
    mapped = buffered(aba.map(count), *(ca.repmat(a, 1, count) for a in args))
    timings.add("adam_aba_mapped_us", mapped, count)
    return result


def c_operations(source: str, function: str) -> int:
    """The arithmetic operations (binary and unary operators, calls) in the body of the C function ``function``."""
    start = source.index(f"{function}(")
    body = source[source.index("{", start) : source.index("\n}", start)]
    body = re.sub(r"\b\d+\.?\d*(e[-+]?\d+)?\b", "1", body)  # numbers (exponents hold signs) as one token
    body = re.sub(r"\[[^\]]*\]", "", body)  # indexing is no operation
    operators = len(re.findall(r"[-+*/]", body))
    calls = len(re.findall(r"\b(?:sin|cos|tan|sqrt|exp|log|pow|atan2|fabs)\s*\(", body))
    return operators + calls


def run(quick: bool = False, log=print) -> dict:
    import casadi as ca

    folder = Path(tempfile.mkdtemp(prefix="sls-casadi-bench-"))
    try:
        model = sls.load_example("ur5")
        start = time.perf_counter()
        report = sls.generate(model, folder / "ur5_casadi", target="casadi")
        generation = time.perf_counter() - start
        pkg = _import(folder / "ur5_casadi")
        start = time.perf_counter()
        qddot, linearized = pkg.qddot_fun, pkg.linearized_model
        building = time.perf_counter() - start

        n, m = model.n, model.m
        x, u, p = ca.SX.sym("x", 2 * n), ca.SX.sym("u", m), ca.SX.sym("p", len(model.params))
        generic = ca.Function("generic", [x, u, p], [ca.solve(pkg.M_fun(x, p), u - pkg.tau_fun(x, ca.DM.zeros(n), p))])
        xdot = pkg.xdot_fun(x, u, p)
        jacobian = ca.Function("jacobian", [x, u, p], [ca.jacobian(xdot, x), ca.jacobian(xdot, u)])

        c_ops = None
        if not quick and (shutil.which("cc") or shutil.which("gcc")):
            sls.generate(model, folder / "ur5_c", target="c")
            c_ops = c_operations((folder / "ur5_c" / "c" / "ur5.c").read_text(), "ur5_qddot_fun")

        rng = np.random.default_rng(0)
        xs = np.concatenate([rng.uniform(-np.pi, np.pi, n), rng.uniform(-1, 1, n)])
        us, ps = rng.uniform(-1, 1, m), pkg.parameters()
        count = 1000 if quick else 10000
        mapped = qddot.map(count)
        X, U = np.tile(xs[:, None], count), np.tile(us[:, None], count)
        sls.generate(model, folder / "ur5_numpy")
        numpy_pkg = _import(folder / "ur5_numpy")
        dm = [ca.DM(xs), ca.DM(us), ca.DM(ps)]
        Xd, Ud = ca.DM(X), ca.DM(U)
        adam = adam_qddot(Path(sls.__file__).resolve().parent / "examples" / "ur5.urdf", UR5_JOINTS, 9.81)
        peer = {}
        timings = Timings(rounds=5 if quick else 30)
        if adam is not None:
            adam_map = adam.map(count)
            peer = {
                "adam_instructions": adam.n_instructions(),
                "adam_agrees": float(np.max(np.abs((adam(xs[:n], xs[n:], us) - qddot(xs, us, ps)).full()))),
            }
            timings.add("adam_call_us", lambda: adam(xs[:n], xs[n:], us))
            timings.add("adam_call_dm_us", lambda: adam(dm[0][:n], dm[0][n:], dm[1]))
            timings.add("adam_call_buffer_us", buffered(adam, dm[0][:n], dm[0][n:], dm[1]))
            timings.add("adam_mapped_us", lambda: adam_map(Xd[:n, :], Xd[n:, :], Ud), count)
        result = {
            "generation_s": generation,
            "timings": dict(report.timings),
            "build_s": building,
            "qddot_instructions": qddot.n_instructions(),
            "casadi_solve_instructions": generic.n_instructions(),
            "c_qddot_operations": c_ops,
            "linearized_instructions": linearized.n_instructions(),
            "jacobian_instructions": jacobian.n_instructions(),
            **peer,
            **solo_rows(folder, quick, timings),
        }
        p_numbers = np.asarray(ps).ravel()
        timings.add("qddot_call_us", lambda: qddot(xs, us, p_numbers))
        timings.add("qddot_call_mixed_us", lambda: qddot(xs, us, ps))
        timings.add("qddot_call_dm_us", lambda: qddot(*dm))
        timings.add("qddot_call_buffer_us", buffered(qddot, *dm))
        timings.add("qddot_mapped_us", lambda: mapped(Xd, Ud, ps), count)
        timings.add("numpy_qddot_call_us", lambda: numpy_pkg.qddot_fun(xs, us))
        result.update(timings.measure())
        log(table(result))
        return result
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def table(r: dict) -> str:
    """The measurements as a Markdown table."""
    c_ops = "not measured (no C compiler, or --quick)" if r["c_qddot_operations"] is None else r["c_qddot_operations"]
    rows = [
        ("UR5 `sls generate --target casadi`", f"{r['generation_s']:.2f} s (goal ≤ 5 s)"),
        ("building qddot_fun and linearized_model on import", f"{r['build_s']:.2f} s"),
        ("qddot_fun instructions (unrolled L D Lᵀ)", r["qddot_instructions"]),
        ("casadi.solve(M_fun, u − tau_fun) instructions", r["casadi_solve_instructions"]),
        ("operations in the C target's qddot_fun", c_ops),
        ("linearized_model instructions (lowered solves)", r["linearized_instructions"]),
        ("casadi.jacobian of xdot_fun instructions", r["jacobian_instructions"]),
        ("qddot_fun per call from Python, numpy arguments", f"{r['qddot_call_us']:.1f} µs"),
        ("qddot_fun per call, numpy x and u, p = parameters() (a DM)", f"{r['qddot_call_mixed_us']:.1f} µs"),
        ("qddot_fun per call from Python, DM arguments", f"{r['qddot_call_dm_us']:.1f} µs"),
        ("qddot_fun per call through Function.buffer()", f"{r['qddot_call_buffer_us']:.2f} µs"),
        ("qddot_fun per state in one Function.map", f"{r['qddot_mapped_us']:.2f} µs"),
        ("numpy target's qddot_fun per call", f"{r['numpy_qddot_call_us']:.1f} µs"),
    ]
    if "adam_instructions" in r:
        rows += [
            ("adam (M, h, casadi.solve) instructions", r["adam_instructions"]),
            ("adam per call, numpy arguments", f"{r['adam_call_us']:.1f} µs"),
            ("adam per call, DM arguments", f"{r['adam_call_dm_us']:.1f} µs"),
            ("adam per call through Function.buffer()", f"{r['adam_call_buffer_us']:.2f} µs"),
            ("adam per state in one Function.map", f"{r['adam_mapped_us']:.2f} µs"),
            ("adam − sls qddot (max abs)", f"{r['adam_agrees']:.1e}"),
        ]
    if "adam_call_dm_us" in r:
        rows.append(
            ("sls / adam per call, numpy arguments (goal ≤ 0.5)", f"{r['qddot_call_us'] / r['adam_call_us']:.2f}")
        )
        rows.append(("sls / adam per call, DM arguments", f"{r['qddot_call_dm_us'] / r['adam_call_dm_us']:.2f}"))
        rows.append(
            ("sls / adam per call, Function.buffer()", f"{r['qddot_call_buffer_us'] / r['adam_call_buffer_us']:.2f}")
        )
    if "solo_instructions" in r:
        rows += [
            ("Solo-12 (quaternion base) `sls generate --target casadi`", f"{r['solo_generation_s']:.2f} s"),
            ("Solo-12 qddot_fun (vdot_fun) instructions", r["solo_instructions"]),
            ("Solo-12 qddot_fun per call, numpy arguments", f"{r['solo_call_us']:.1f} µs"),
            (
                "Solo-12 the same graph's call as a plain casadi.Function, numpy arguments",
                f"{r['solo_call_casadi_us']:.1f} µs",
            ),
            ("Solo-12 qddot_fun per call, numpy x and u, p = parameters() (a DM)", f"{r['solo_call_mixed_us']:.1f} µs"),
            ("Solo-12 qddot_fun per call, DM arguments", f"{r['solo_call_dm_us']:.1f} µs"),
            ("a Function returning its input (same arguments), numpy arguments", f"{r['empty_call_us']:.1f} µs"),
            ("a Function returning its input, DM arguments", f"{r['empty_call_dm_us']:.1f} µs"),
            ("Solo-12 qddot_fun per call through Function.buffer()", f"{r['solo_call_buffer_us']:.2f} µs"),
            ("Solo-12 qddot_fun per state in one Function.map", f"{r['solo_mapped_us']:.2f} µs"),
        ]
    if "adam_aba_instructions" in r:
        ratio = r["solo_call_dm_us"] / r["adam_aba_call_dm_us"]
        buffer_ratio = r["solo_call_buffer_us"] / r["adam_aba_call_buffer_us"]
        numpy_ratio = r["solo_call_us"] / r["adam_aba_call_us"]
        rows += [
            ("Solo-12 adam aba_fun instructions", r["adam_aba_instructions"]),
            ("Solo-12 adam aba_fun per call, numpy arguments", f"{r['adam_aba_call_us']:.1f} µs"),
            ("Solo-12 adam aba_fun per call, DM arguments", f"{r['adam_aba_call_dm_us']:.1f} µs"),
            ("Solo-12 adam − sls joint accelerations (max abs)", f"{r['adam_aba_agrees']:.1e}"),
            ("Solo-12 adam aba_fun per call through Function.buffer()", f"{r['adam_aba_call_buffer_us']:.2f} µs"),
            ("Solo-12 adam aba_fun per state in one Function.map", f"{r['adam_aba_mapped_us']:.2f} µs"),
            ("Solo-12 sls / adam per call, numpy arguments (goal ≤ 0.5)", f"{numpy_ratio:.2f}"),
            ("Solo-12 sls / adam per call, DM arguments", f"{ratio:.2f}"),
            ("Solo-12 sls / adam per call, Function.buffer()", f"{buffer_ratio:.2f}"),
        ]
    return "\n".join(["| CasADi target | |", "|---|---|", *[f"| {a} | {b} |" for a, b in rows]])


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, no C target")
    args = parser.parse_args(argv)
    run(args.quick)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
