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
from sympy.core.cache import clear_cache

import sls

#: Parameter values: the bundled numbers of PyDy's simulate.py scripts (rounded), not physics-critical.
PENDULUM_VALUES = {"l": 1.0, "m": 0.1, "M": 0.5, "Ixx": 0.04, "Iyy": 0.01, "Izz": 0.04, "g": 9.81}
RATTLEBACK_VALUES = {
    "a": 0.2,
    "b": 0.03,
    "c": 0.02,
    "d": 0.0,
    "e": 0.0,
    "f": 0.01,
    "m": 1.0,
    "Ixx": 2e-4,
    "Iyy": 1.6e-3,
    "Izz": 1.7e-3,
    "Ixy": -2e-5,
    "Iyz": 0.0,
    "Ixz": 0.0,
    "g": 9.81,
}


def pendulum3d_system(n: int = 3) -> dict:
    """PyDy's n-link conical pendulum: ``{"T", "V", "q", "bodies", "forces", "frame", "params"}``
    (mechanics objects)."""
    alpha = me.dynamicsymbols(f"alpha:{n}")
    beta = me.dynamicsymbols(f"beta:{n}")
    m_bob = sp.symbols(f"m:{n}")
    lengths = sp.symbols(f"l:{n}")
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
        centre = joint.locatenew(f"G{i}", -lengths[i] / 2 * frame.y)
        centre.v2pt_theory(joint, inertial, frame)
        bob = joint.locatenew(f"P{i + 1}", -lengths[i] * frame.y)
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
        params.update(
            {lengths[i]: PENDULUM_VALUES["l"], m_bob[i]: PENDULUM_VALUES["m"], m_link[i]: PENDULUM_VALUES["M"]}
        )
        params.update({Ixx[i]: PENDULUM_VALUES["Ixx"], Iyy[i]: PENDULUM_VALUES["Iyy"], Izz[i]: PENDULUM_VALUES["Izz"]})
    params[g] = PENDULUM_VALUES["g"]
    return {
        "T": T,
        "V": V,
        "q": list(alpha) + list(beta),
        "bodies": bodies,
        "forces": forces,
        "frame": inertial,
        "params": params,
    }


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
    centre = contact.locatenew(
        "O", -(a**2 * mu[0] / eps) * R.x - (b**2 * mu[1] / eps) * R.y - (c**2 * mu[2] / eps) * R.z
    )
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
    return {
        "T": T,
        "V": V,
        "q": list(q),
        "rolling": rolling,
        "frame": N,
        "params": params,
        "bodies": [body],
        "forces": forces,
    }


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
    """The peer: ``KanesMethod`` with ``u = q̇``, the contact's rates ``u3, u4`` dependent through the rolling
    constraints."""
    s = rattleback_system()
    q = s["q"]
    u = me.dynamicsymbols(f"u:{len(q)}")
    rolling = [r.subs({qi.diff(): ui for qi, ui in zip(q, u)}) for r in s["rolling"]]
    kane = me.KanesMethod(
        s["frame"],
        q_ind=q,
        u_ind=u[:3],
        u_dependent=u[3:],
        kd_eqs=[ui - qi.diff() for ui, qi in zip(u, q)],
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
    """Median seconds of ``build()`` + ``sls.generate`` (Python target) and the last report's stages.

    sympy's cache is cleared before every run (as in a fresh process), so
    repeats do not reuse the expressions of the run before.
    """
    times, report = [], None
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as out:
            clear_cache()
            start = time.perf_counter()
            report = sls.generate(build(), Path(out) / "pkg", **options)
            times.append(time.perf_counter() - start)
    return statistics.median(times), report


def time_peer(derive, repeat: int) -> float:
    """Median seconds of ``derive()`` (building the mechanics system included), sympy's cache cleared before each
    run."""
    times = []
    for _ in range(repeat):
        clear_cache()
        start = time.perf_counter()
        derive()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


#: Arrays the generated functions evaluate: ``qddot_fun``, ``linearized_model`` and every function.
GROUPS = {"qddot_fun": ("M", "rhs"), "linearized_model": ("M", "rhs", "residual_jac", "B_u"), "all": None}


def graph_sizes(model: sls.Model, regroup: bool = True) -> dict:
    """Graph operations (:meth:`sls.algebra.graph.Graph.operation_count`) of ``T`` as differentiated and of each group
    of arrays.

    ``regroup=False`` skips :meth:`~sls.algebra.graph.Graph.collect_products` (the graph route before it).
    """
    from sls.algebra.graph import Graph
    from sls.derive import derive

    original = Graph.collect_products
    if not regroup:
        Graph.collect_products = lambda self, roots, rates: list(roots)
    try:
        d = derive(model, method="graph")
    finally:
        Graph.collect_products = original
    g = d.graph
    sizes = {"T": g.operation_count(d.energies[:1])}
    for label, names in GROUPS.items():
        names = names or tuple(d.arrays)
        sizes[label] = g.operation_count([e for k in names for e in _flat(d.arrays[k])])
    return sizes


def _flat(array) -> list:
    return [e for item in array for e in _flat(item)] if isinstance(array, (tuple, list)) else [array]


#: model → (builder, [(peer name, peer derivation, runs at most)]): LagrangesMethod on the rattleback takes a minute,
#: so it runs once.
CASES = {
    "pendulum3d": (pendulum3d_model, [("KanesMethod.kanes_equations", kane_pendulum3d, None)]),
    "rattleback": (
        rattleback_model,
        [
            ("KanesMethod.kanes_equations", kane_rattleback, None),
            ("LagrangesMethod.form_lagranges_equations", lagrange_rattleback, 1),
        ],
    ),
}


def run(repeat: int = 3, names=None, log=print) -> list:
    """Rows ``{"model", "sls_s", "stages", "peers", "graph_operations"}``: generation against each peer's derivation.

    Both sides include building the model from ``sympy.physics.mechanics``
    objects; ``peers`` maps a peer's name to its median seconds.
    """
    rows = []
    for name in names or CASES:
        build, peers = CASES[name]
        sls_s, report = time_generate(build, repeat)
        stages = {k: round(v, 3) for k, v in report.timings.items()}
        timed = {peer: time_peer(derive, min(repeat, cap or repeat)) for peer, derive, cap in peers}
        model = build()
        sizes = {"before": graph_sizes(model, regroup=False), "after": graph_sizes(model)}
        rows.append({"model": name, "sls_s": sls_s, "stages": stages, "peers": timed, "graph_operations": sizes})
        against = ", ".join(f"{peer} {seconds:.2f} s" for peer, seconds in timed.items())
        log(f"{name}: sls.generate {sls_s:.2f} s (stages {stages}); {against}")
        log(f"  graph operations without collect_products {sizes['before']}, with it {sizes['after']}")
    return rows


def section(quick: bool, log=print) -> dict:
    """The part of ``python -m benchmarks``: skipped with ``--quick`` (LagrangesMethod alone takes a minute)."""
    if quick:
        return {"skipped": "--quick"}
    return {"rows": run(3, log=log)}


def table(rows: list) -> str:
    """Markdown table of :func:`run`'s rows (one line per peer)."""
    lines = [
        "| model | sls.generate s | peer | peer s | sls / peer | T ops before → after "
        "| linearized_model ops before → after | all functions ops before → after |",
        "| --- | ---: | --- | ---: | ---: | --- | --- | --- |",
    ]
    for r in rows:
        b, a = r["graph_operations"]["before"], r["graph_operations"]["after"]
        for peer, seconds in r["peers"].items():
            lines.append(
                f"| {r['model']} | {r['sls_s']:.2f} | {peer} | {seconds:.2f} | {r['sls_s'] / seconds:.2f} "
                f"| {b['T']} → {a['T']} | {b['linearized_model']} → {a['linearized_model']} | {b['all']} → {a['all']} |"
            )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.energy3d", description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("models", nargs="*", help=f"models to run (default all: {', '.join(CASES)})")
    args = parser.parse_args(argv)
    print(table(run(args.repeat, args.models or None)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
