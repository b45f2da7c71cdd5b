"""Real robot files, generated and checked against Pinocchio loading the same file.

A representative handful of the public robot packages (the whole corpus is
``python -m benchmarks.robots``): arms from example-robot-data, pybullet and rtb-data, and a
small legged robot with its base fixed. Each is generated (Python target) and compared at
random states with Pinocchio: ``M_fun`` with ``crba``, ``tau_fun`` with ``rnea``, ``qddot_fun``
with ``aba`` (≤ 1e-9, relative to ``max(1, |reference|)``) and ``linearized_model`` with
``computeABADerivatives`` (≤ 1e-6). Coordinates are matched by joint name: sls orders them
depth first with children in document order, Pinocchio's order may differ, and Pinocchio
writes a continuous joint's position as (cos, sin).

Cases that need features sls may not have yet are detected, not assumed: a floating base
(``load_urdf(..., floating_base=True)``, compared with a Pinocchio root joint made of
translations along x, y, z and rotations about z, y, x — the chart of sls's floating base, so
velocities correspond one to one), a body without joints (a drone: a 6-DOF floating body) and
``<mimic>`` joints (Pinocchio's ``mimic=True``; its ``aba`` and derivatives refuse mimic joints,
so q̈ is ``M⁻¹(B u − fric − rnea(q, v, 0))`` from ``crba`` and ``rnea`` and (A, B) its central
differences). Until then they skip with the reason.
Friction parameters the package exposes are set to 0 (Pinocchio has no joint friction); the
package's own ``fric_fun`` covers what is left.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import math
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import import_package

import sls

pin = pytest.importorskip("pinocchio", reason="Pinocchio (pip package pin) is not installed")

TOL = 1e-9
TOL_AB = 1e-6
STATES = 3
FRICTION_PARAM = re.compile(r"damping|friction|coulomb|viscous", re.IGNORECASE)

#: Where each package keeps its robots.
PREFIX = {
    "example-robot-data": "cmeel.prefix/share/example-robot-data/robots/",
    "pybullet": "pybullet_data/",
    "rtb-data": "rtbdata/",
}

#: ``(id, package, file inside it, what the case needs)``.
CASES = [
    ("ur5", "example-robot-data", "ur_description/urdf/ur5_robot.urdf", None),
    ("kuka-iiwa", "pybullet", "kuka_iiwa/model.urdf", None),
    ("kuka-kr16", "rtb-data", "xacro/kuka_description/kuka_kr16/urdf/kr16_2.urdf", None),
    ("bolt-fixed-base", "example-robot-data", "bolt_description/robots/bolt.urdf", None),
    ("panda-mimic", "example-robot-data", "panda_description/urdf/panda.urdf", "mimic"),
    ("bolt-floating-base", "example-robot-data", "bolt_description/robots/bolt.urdf", "floating-base"),
    ("quadrotor-no-joint", "example-robot-data", "hector_description/robots/quadrotor_base.urdf", "floating-body"),
]


def robot_file(package: str, relative: str) -> Path:
    try:
        dist = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError:
        pytest.skip(f"{package} is not installed (pip install {package})")
    wanted = PREFIX[package] + relative
    for file in dist.files or ():
        if str(file) == wanted:
            return Path(dist.locate_file(file))
    pytest.skip(f"{package} {dist.version} has no {relative}")


def load(path: Path, needs: str | None):
    """The sls model of the file, or a skip naming the missing feature."""
    if needs == "floating-base":
        if "floating_base" not in inspect.signature(sls.load_urdf).parameters:
            pytest.skip("needs --floating-base (sls.load_urdf(..., floating_base=True))")
        return sls.load_urdf(path, floating_base=True, base_orientation="euler")  # the chart compared below
    try:
        return sls.load_urdf(path, base_orientation="euler")
    except sls.SlsError as error:
        text = str(error)
        if needs == "mimic" and "mimic" in text:
            pytest.skip(f"needs <mimic> joints: {text}")
        if needs == "floating-body" and ("nothing to derive" in text or "no movable joint" in text):
            pytest.skip(f"needs a body without joints to float: {text}")
        raise


def pinocchio_model(path: Path, floating: bool, mimic: bool):
    arguments = [str(path)]
    if floating:
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
        arguments.append(root)
    return pin.buildModelFromUrdf(*arguments, mimic=mimic) if mimic else pin.buildModelFromUrdf(*arguments)


def slots(model, names: list, floating: bool) -> list:
    """Per sls coordinate: ``(Pinocchio idx_q, idx_v, continuous?)``, matched by joint name.

    The floating base is Pinocchio's 6-DOF root joint; it must be sls's first six coordinates.
    """
    by_name, base = {}, None
    for jid in range(1, model.njoints):
        joint = model.joints[jid]
        if joint.nv == 6:
            base = joint
        elif joint.nv == 1:
            by_name[model.names[jid]] = (joint.idx_q, joint.idx_v, joint.nq == 2)
    result = []
    for k, name in enumerate(names):
        if floating and k < 6:
            assert base is not None and name not in by_name, (
                f"sls coordinate {k} ({name}) should be the floating base's"
            )
            result.append((base.idx_q + k, base.idx_v + k, False))
            continue
        candidates = [by_name.get(name), by_name.get(name.removeprefix("q_"))]
        candidates += [v for key, v in by_name.items() if re.sub(r"\W", "_", key) == name.removeprefix("q_")]
        found = next((c for c in candidates if c is not None), None)
        assert found is not None, f"sls coordinate {name!r} matches no Pinocchio joint ({sorted(by_name)[:8]} ...)"
        result.append(found)
    return result


def pinocchio_state(x, n: int, where: list, nq: int):
    q, P = np.zeros(nq), np.zeros((n, n))
    for k, (iq, iv, continuous) in enumerate(where):
        if continuous:
            q[iq], q[iq + 1] = math.cos(x[k]), math.sin(x[k])
        else:
            q[iq] = x[k]
        P[iv, k] = 1.0
    return q, P @ x[n:], P


def full(upper):
    return np.triu(upper) + np.triu(upper, 1).T


def close(got, want, tol, what):
    got, want = np.asarray(got, float), np.asarray(want, float)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    err = float(np.abs(got - want).max(initial=0.0)) / scale
    assert err <= tol, f"{what}: differs from Pinocchio by {err:.2e} (relative to max(1, |Pinocchio|))"


@pytest.mark.parametrize(("package", "relative", "needs"), [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_robot_file_agrees_with_pinocchio(package, relative, needs, tmp_path):
    path = robot_file(package, relative)
    model = load(path, needs)
    sls.generate(model, tmp_path / "pkg")
    generated = import_package(tmp_path / "pkg")
    n, m = generated.N_DOF, generated.N_INPUTS
    floating = needs in ("floating-base", "floating-body")
    reference = pinocchio_model(path, floating, "<mimic" in path.read_text())
    data = reference.createData()
    assert reference.nv == n, f"Pinocchio has {reference.nv} velocities, sls {n} coordinates"
    params = {
        k: (0.0 if FRICTION_PARAM.search(k) and k != "friction_velocity" else v) for k, v in generated.PARAMS.items()
    }
    reference.gravity.linear = np.array([0.0, 0.0, -params.get("g", 9.81)])
    where = slots(reference, list(generated.STATE[:n]), floating)
    mimic = any(reference.joints[j].shortname() == "JointModelMimic" for j in range(1, reference.njoints))
    rng = np.random.default_rng(3)
    for _ in range(STATES):
        q = rng.uniform(-math.pi, math.pi, n)
        if floating:
            q[4] = rng.uniform(-1.0, 1.0)  # pitch, away from the chart's singularity at ±pi/2
        x = np.concatenate([q, rng.uniform(-1.0, 1.0, n)])
        u, a = rng.uniform(-1.0, 1.0, m), rng.uniform(-1.0, 1.0, n)
        qp, vp, P = pinocchio_state(x, n, where, reference.nq)
        fric = generated.fric_fun(x, **params)
        Bu = np.asarray(generated.input_matrix_fun(x, **params)).reshape(n, m)
        tau = Bu @ u - fric
        close(generated.M_fun(x, **params), P.T @ full(pin.crba(reference, data, qp)) @ P, TOL, "M")
        close(generated.tau_fun(x, a, **params), P.T @ pin.rnea(reference, data, qp, vp, P @ a) + fric, TOL, "tau")
        if mimic or floating:
            # Pinocchio's aba and its derivatives refuse mimic joints, and its derivatives of a composite root
            # joint (the floating base's chart) disagree with central differences of its own aba (Pinocchio 4.1:
            # 126 absolute on Bolt); crba and rnea take both.
            def acceleration(xs, u=u, P=P):
                qs, vs, _ = pinocchio_state(xs, n, where, reference.nq)
                force = np.asarray(generated.input_matrix_fun(xs, **params)).reshape(n, m) @ u - generated.fric_fun(
                    xs, **params
                )
                return P.T @ np.linalg.solve(
                    full(pin.crba(reference, data, qs)), P @ force - pin.rnea(reference, data, qs, vs, np.zeros(n))
                )

            close(generated.qddot_fun(x, u, **params), acceleration(x), TOL, "qddot")
            Minv = P.T @ np.linalg.inv(full(pin.crba(reference, data, qp))) @ P
            step = 1e-6
            lower = np.column_stack(
                [(acceleration(x + step * e) - acceleration(x - step * e)) / (2 * step) for e in np.eye(2 * n)]
            )
        else:
            close(generated.qddot_fun(x, u, **params), P.T @ pin.aba(reference, data, qp, vp, P @ tau), TOL, "qddot")
            pin.computeABADerivatives(reference, data, qp, vp, P @ tau)
            Minv = P.T @ full(data.Minv) @ P
            dforce = -np.asarray(generated.fric_jac_fun(x, **params)) + np.einsum(
                "ijk,j->ik", np.asarray(generated.input_matrix_jac_fun(x, **params)).reshape(n, m, 2 * n), u
            )
            lower = np.hstack(
                [P.T @ data.ddq_dq @ P + Minv @ dforce[:, :n], P.T @ data.ddq_dv @ P + Minv @ dforce[:, n:]]
            )
        A = np.vstack([np.hstack([np.zeros((n, n)), np.eye(n)]), lower])
        B = np.vstack([np.zeros((n, m)), Minv @ Bu])
        A_sls, B_sls = generated.linearized_model(x, u, **params)
        close(A_sls, A, TOL_AB, "A")
        close(B_sls, B, TOL_AB, "B")
