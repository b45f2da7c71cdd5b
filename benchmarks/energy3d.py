"""3-D energy models written with ``sympy.physics.mechanics``, against the peers' own derivation.

Two models as a user writes them — frames oriented by body-fixed/space-fixed
rotations, ``RigidBody``/``Particle`` kinetic energies — passed to sls with
:func:`sls.model_from_sympy`:

* **pendulum3d** — PyDy's ``examples/three_link_conical_pendulum`` (three
  links and three bobs, each link's frame oriented from the previous one by
  ``orient(..., 'Space', [alpha_i, beta_i, 0], 'ZXY')``; links are cylinders
  with inertia ``Ixx, Iyy, Izz`` about their mass centres, gravity along −y).
  The angular velocities are those of the orientations (PyDy's script
  overrides them with ``omega_i I.z + delta_i I.x``, which are not the
  orientations' kinematics; an energy model cannot do that). Peer:
  ``KanesMethod(q_ind=q, u_ind=q̇).kanes_equations`` on the same bodies.
* **rattleback** — PyDy's ``examples/rattleback/ellipsoid_no_slip.py``
  geometry (Kane & Levinson 1982): an ellipsoid with semi-axes ``a, b, c``,
  mass centre offset ``d, e, f`` and full inertia ``Ixx … Ixz``, oriented by
  yaw ``q0`` (about N.z), lean ``q1`` (about Y.x) and spin ``q2`` (about L.y),
  its contact point at ``(q3, q4)`` on the plane; gravity along +N.z (N.z
  points down, as in the script). Rolling without slip is two velocity
  constraints (the contact's horizontal velocity is zero). Peer:
  ``LagrangesMethod(L, q, nonhol_coneqs=…).form_lagranges_equations`` on the
  same energies and constraints.

``python -m benchmarks.energy3d`` prints sls's generation time (per stage)
against the peer's derivation, median of repeats, in one process.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import sympy as sp
import sympy.physics.mechanics as me

import sls

#: Parameter values: the bundled numbers of PyDy's simulate.py scripts (rounded), not physics-critical.
PENDULUM_VALUES = {"l": 1.0, "m": 0.1, "M": 0.5, "Ixx": 0.04, "Iyy": 0.01, "Izz": 0.04, "g": 9.81}
RATTLEBACK_VALUES = {
    "a": 0.2, "b": 0.03, "c": 0.02, "d": 0.0, "e": 0.0, "f": 0.01, "m": 1.0,
    "Ixx": 2e-4, "Iyy": 1.6e-3, "Izz": 1.7e-3, "Ixy": -2e-5, "Iyz": 0.0, "Ixz": 0.0, "g": 9.81,
}


def pendulum3d_system(n: int = 3) -> dict:
    """PyDy's n-link conical pendulum: ``{"T", "V", "q", "bodies", "forces", "frame", "params"}`` (mechanics objects)."""
    alpha = me.dynamicsymbols(f"alpha:{n}")
    beta = me.dynamicsymbols(f"beta:{n}")
    m_bob = sp.symbols(f"m:{n}")
    l = sp.symbols(f"l:{n}")
    m_link = sp.symbols(f"M:{n}")
    Ixx, Iyy, Izz = sp.symbols(f"Ixx:{n}"), sp.symbols(f"Iyy:{n}"), sp.symbols(f"Izz:{n}")
    g = sp.symbols("g")
    inertial = me.ReferenceFrame("I")
    origin = me.Point("O")
    origin.set_vel(inertial, 0)
    parent, joint = inertial, origin
    bodies, forces = [], []
    for i in range(n):
        frame = me.ReferenceFrame(f"L{i}")
        frame.orient(parent, "Space", [alpha[i], beta[i], 0], "ZXY")
        centre = joint.locatenew(f"G{i}", -l[i] / 2 * frame.y)
        centre.v2pt_theory(joint, inertial, frame)
        bob = joint.locatenew(f"P{i + 1}", -l[i] * frame.y)
        bob.v2pt_theory(joint, inertial, frame)
        link = me.RigidBody(f"link{i}", centre, frame, m_link[i], (me.inertia(frame, Ixx[i], Iyy[i], Izz[i]), centre))
        particle = me.Particle(f"bob{i}", bob, m_bob[i])
        link.potential_energy = m_link[i] * g * centre.pos_from(origin).dot(inertial.y)
        particle.potential_energy = m_bob[i] * g * bob.pos_from(origin).dot(inertial.y)
        bodies += [link, particle]
        forces += [(centre, -m_link[i] * g * inertial.y), (bob, -m_bob[i] * g * inertial.y)]
        parent, joint = frame, bob
    T = sum(b.kinetic_energy(inertial) for b in bodies)
    V = sum(b.potential_energy for b in bodies)
    params = {}
    for i in range(n):
        params.update({l[i]: PENDULUM_VALUES["l"], m_bob[i]: PENDULUM_VALUES["m"], m_link[i]: PENDULUM_VALUES["M"]})
        params.update({Ixx[i]: PENDULUM_VALUES["Ixx"], Iyy[i]: PENDULUM_VALUES["Iyy"], Izz[i]: PENDULUM_VALUES["Izz"]})
    params[g] = PENDULUM_VALUES["g"]
    return {"T": T, "V": V, "q": list(alpha) + list(beta), "bodies": bodies, "forces": forces, "frame": inertial, "params": params}


def rattleback_system() -> dict:
    """The ellipsoid rattleback rolling on a plane: ``{"T", "V", "q", "rolling", "frame", "params"}``."""
    a, b, c, d, e, f, m, g = sp.symbols("a b c d e f m g")
    Ixx, Iyy, Izz, Ixy, Iyz, Ixz = sp.symbols("Ixx Iyy Izz Ixy Iyz Ixz")
    q = me.dynamicsymbols("q:5")
    N = me.ReferenceFrame("N")
    Y = N.orientnew("Y", "Axis", [q[0], N.z])
    L = Y.orientnew("L", "Axis", [q[1], Y.x])
    R = L.orientnew("R", "Axis", [q[2], L.y])
    world = me.Point("W")
    world.set_vel(N, 0)
    contact = world.locatenew("P", q[3] * N.x + q[4] * N.y)
    mu = [N.z.dot(axis) for axis in (R.x, R.y, R.z)]
    eps = sp.sqrt((a * mu[0]) ** 2 + (b * mu[1]) ** 2 + (c * mu[2]) ** 2)
    centre = contact.locatenew("O", -(a**2 * mu[0] / eps) * R.x - (b**2 * mu[1] / eps) * R.y - (c**2 * mu[2] / eps) * R.z)
    mass_centre = centre.locatenew("G", d * R.x + e * R.y + f * R.z)
    mass_centre.set_vel(N, mass_centre.pos_from(world).dt(N))
    body = me.RigidBody("rattleback", mass_centre, R, m, (me.inertia(R, Ixx, Iyy, Izz, Ixy, Iyz, Ixz), mass_centre))
    T = body.kinetic_energy(N)
    V = -m * g * mass_centre.pos_from(contact).dot(N.z)
    slip = mass_centre.vel(N) + R.ang_vel_in(N).cross(contact.pos_from(mass_centre))
    rolling = [slip.dot(N.x), slip.dot(N.y)]
    names = (a, b, c, d, e, f, m, Ixx, Iyy, Izz, Ixy, Iyz, Ixz, g)
    params = {s: RATTLEBACK_VALUES[s.name] for s in names}
    forces = [(mass_centre, m * g * N.z)]
    return {"T": T, "V": V, "q": list(q), "rolling": rolling, "frame": N, "params": params, "bodies": [body], "forces": forces}


def state_of(q: list) -> list:
    return list(q) + [qi.diff() for qi in q]


def pendulum3d_model(n: int = 3) -> sls.Model:
    s = pendulum3d_system(n)
    return sls.model_from_sympy(s["T"], s["V"], 0, state_of(s["q"]), params=s["params"], name=f"pendulum3d_{n}")


def rattleback_model() -> sls.Model:
    s = rattleback_system()
    return sls.model_from_sympy(
        s["T"], s["V"], 0, state_of(s["q"]), params=s["params"], name="rattleback", velocity_constraints=s["rolling"]
    )


def kane_pendulum3d(n: int = 3) -> object:
    """The peer: ``KanesMethod(...).kanes_equations`` on the same bodies (u = q̇), then its mass matrix and forcing."""
    s = pendulum3d_system(n)
    q = s["q"]
    u = [me.dynamicsymbols(f"u{i}") for i in range(len(q))]
    kane = me.KanesMethod(s["frame"], q_ind=q, u_ind=u, kd_eqs=[ui - qi.diff() for ui, qi in zip(u, q)])
    kane.kanes_equations(s["bodies"], s["forces"])
    return kane


def kane_rattleback() -> object:
    """The peer: ``KanesMethod`` with ``u = q̇``, the contact's rates ``u3, u4`` dependent through the rolling constraints."""
    s = rattleback_system()
    q = s["q"]
    u = me.dynamicsymbols(f"u:{len(q)}")
    rolling = [r.subs({qi.diff(): ui for qi, ui in zip(q, u)}) for r in s["rolling"]]
    kane = me.KanesMethod(
        s["frame"], q_ind=q, u_ind=u[:3], u_dependent=u[3:], kd_eqs=[ui - qi.diff() for ui, qi in zip(u, q)],
        velocity_constraints=rolling,
    )
    kane.kanes_equations(s["bodies"], s["forces"])
    return kane


def lagrange_rattleback() -> object:
    """The peer: ``LagrangesMethod(T - V, q, nonhol_coneqs=rolling).form_lagranges_equations()``."""
    s = rattleback_system()
    lagrange = me.LagrangesMethod(s["T"] - s["V"], s["q"], nonhol_coneqs=s["rolling"], frame=s["frame"])
    lagrange.form_lagranges_equations()
    return lagrange


def time_generate(build, repeat: int, **options) -> tuple:
    """Median seconds of ``build()`` + ``sls.generate`` (Python target) and the last report's stages."""
    times, report = [], None
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as out:
            start = time.perf_counter()
            report = sls.generate(build(), Path(out) / "pkg", **options)
            times.append(time.perf_counter() - start)
    return statistics.median(times), report


def time_peer(derive, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        derive()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


CASES = {
    "pendulum3d": (pendulum3d_model, kane_pendulum3d, "KanesMethod.kanes_equations"),
    "rattleback": (rattleback_model, lagrange_rattleback, "LagrangesMethod.form_lagranges_equations"),
}


def run(repeat: int = 3, names=None, log=print) -> list:
    """Rows ``{"model", "sls_s", "stages", "peer", "peer_s"}``: generation (building the model included) against the peer's derivation."""
    rows = []
    for name in names or CASES:
        build, peer, peer_name = CASES[name]
        sls_s, report = time_generate(build, repeat)
        peer_s = time_peer(peer, repeat)
        stages = {k: round(v, 3) for k, v in getattr(report, "timings", {}).items()}
        rows.append({"model": name, "sls_s": sls_s, "stages": stages, "peer": peer_name, "peer_s": peer_s})
        log(f"{name}: sls.generate {sls_s:.2f} s  {peer_name} {peer_s:.2f} s  ratio {sls_s / peer_s:.2f}  stages {stages}")
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.energy3d", description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("models", nargs="*", choices=[*CASES, []], default=None)
    args = parser.parse_args(argv)
    run(args.repeat, args.models or None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
