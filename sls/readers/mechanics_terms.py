"""The terms of a sympy.physics.mechanics model in sls's form: kinematics, ``T(q, v)``, ``V(q)``, generalized
forces along the speeds, a velocity correction, and the constraints (see :func:`mechanics_terms`).

The input is a :class:`Written` model (what a ``KanesMethod``, ``LagrangesMethod`` or ``System`` holds, read by
:mod:`sls.readers.mechanics_models`): coordinates ``q(t)`` and speeds ``u(t)`` (for a Lagrangian, the rates
``q(t).diff(t)``), kinematic differential equations, bodies, loads, constraints.

* **Kinematics**: the kinematic differential equations are solved for ``q̇ = S(q) u`` (block by block, by
  forward substitution over block-triangular blocks, simplified within bounds); with ``q̇ = u`` entry by entry
  the model has no kinematics, and when each rate is one speed the speeds are put in the coordinates' order
  (:func:`speeds_as_rates`). There may be fewer speeds than coordinates (a quaternion's), whose directions must
  close (their brackets in their span: refused otherwise).
* **Kinetic energy**: ``Σ body.kinetic_energy(N)`` written in ``q`` and ``u`` (``q̇`` replaced by ``S u``), or the
  part of a Lagrangian quadratic in the rates (its rate-free part is ``−V``; a part linear in the rates is refused).
* **Loads**: a force on a point maps onto the speeds through the point's partial velocities, a torque on a frame
  through the frame's partial angular velocities (Kane's generalized active forces ``F_r``). A force constant in
  the inertial frame (gravity) becomes the potential ``V = −F·r`` when the point's position ``r`` from a fixed point
  is known and its rate gives the same ``F_r``; every other load stays a generalized force (input-free ones move to
  the left-hand side, as for any sls model).
* **Velocities**: sls derives the equations from ``T(q, u)`` (Boltzmann–Hamel), which is exact when every
  velocity is the rate of a position in ``q``. A mass centre's velocity written with a rolling condition built in
  (``v = ω × r`` from a contact point at rest, PyDy's rolling disc) is not: Kane's method then differs from
  Boltzmann–Hamel by ``−Σ_b u_b m v·D_br`` with ``D_br = X_b V_r − X_r V_b − Σ_j γ^j_br V_j`` (``V_r`` the partial
  velocities, ``X_r`` the derivative along the r-th column of ``S``, ``γ`` the structure coefficients of
  :mod:`sls.model.kinematics`), a term quadratic in the speeds that does no work. It is added to ``fric`` so the
  equations are Kane's exactly; a velocity that is the rate of a known position needs no term (and no structure
  coefficients). Angular velocities must be the rates of the frames' orientations, inertias fixed in their
  bodies, masses constant (refused otherwise); a body frame with an angular velocity but no orientation (a
  wheel) is taken when its inertia torques are those of ``T`` (:func:`check_spin`).
* **Constraints**: holonomic ones stay constraints in ``q``, except those the kinematics keep by themselves
  (``(∂c/∂q) S = 0``, a quaternion's unit norm); velocity constraints are written in the speeds, those that are
  time derivatives of the holonomic ones (KanesMethod lists them) dropped.

Identities are tested numerically at random points (:class:`~sls.readers.mechanics_probe.Probe`, on the
configuration constraints); every simplification is bounded (:func:`sls.algebra.bounded.bounded`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sympy

from sls.algebra.calculus import diff
from sls.errors import ModelError
from sls.model.kinematics import directional, kinematic_matrix
from sls.model.kinematics import kinematics as speed_kinematics
from sls.readers.mechanics_probe import Plain, Probe
from sls.readers.mechanics_rates import Written, speed_rates, speeds_as_rates, tidy_in_speeds

ZERO = sympy.Integer(0)


@dataclass(frozen=True)
class Terms:
    """The model in sls's form, in plain symbols: ``state`` (q then v, 2n), ``kinematics`` (n, or ``None`` when
    ``q̇ = v``), ``T``, ``V``, ``fric`` (n: the velocity correction), ``forces`` (n generalized forces along the
    speeds, inputs and loads), ``constraints`` and ``velocity_constraints``."""

    state: tuple
    kinematics: tuple | None
    T: sympy.Expr
    V: sympy.Expr
    fric: tuple
    forces: tuple
    constraints: tuple
    velocity_constraints: tuple


class Speeds:
    """Substitution of the kinematics into vectors and expressions, and their plain form.

    ``rates`` (from :func:`speed_rates`), ``plain`` (:class:`Plain`) and the plain coordinates ``q``, speeds
    ``v`` and kinematic matrix ``S`` (n_q, n_v).
    """

    def __init__(self, written: Written, rates: dict, plain: Plain) -> None:
        self.written = written
        self.substitution = {**rates, **{a: ZERO for a in written.auxiliary}}
        self.plain = plain
        kind = written.kind
        self.q = tuple(plain(qk, f"{kind}: coordinates") for qk in written.q)
        self.v = tuple(plain(s, f"{kind}: speeds") for s in written.u)
        self.rates = tuple(plain(rates[qk.diff(written.time)], f"{kind}: kinematics of {qk}") for qk in written.q)
        self.S = kinematic_matrix(self.rates, self.q, self.v)
        self.identity = all(rate == speed for rate, speed in zip(self.rates, self.v))
        self._structure: tuple | None = None

    def on(self, value: Any) -> Any:
        """``value`` (expression, vector or dyadic) with q̇ written in the speeds and auxiliary speeds zero."""
        from sympy.physics.mechanics import msubs

        return msubs(value, self.substitution)

    def components(self, vector: Any, what: str) -> sympy.Matrix:
        """The components of ``vector`` in the inertial frame, in plain symbols (``what``, naming it in a refusal,
        is prefixed with the object's kind)."""
        kind = self.written.kind
        try:
            matrix = self.on(vector).to_matrix(self.written.frame)
        except ValueError as exc:  # no orientation between the frames it is written in and the inertial frame
            raise ModelError(f"{kind}: {what}: {exc}") from None
        return self.plain.matrix(matrix, f"{kind}: {what}")

    def along(self, expr: sympy.Expr, r: int) -> sympy.Expr:
        """``X_r expr = Σ_k S_kr ∂expr/∂q_k``: the derivative along the r-th speed's direction."""
        return directional(expr, [row[r] for row in self.S], self.q)

    @property
    def structure(self) -> tuple:
        """``γ[j][a][b] = γ^j_ab`` of :func:`sls.model.kinematics.structure_coefficients` (zero for ``q̇ = v``)."""
        if self._structure is None:
            n = len(self.v)
            if self.identity:
                self._structure = tuple(tuple(tuple(ZERO for _ in range(n)) for _ in range(n)) for _ in range(n))
            else:
                self._structure = speed_kinematics(self.rates, self.q, self.v).structure
        return self._structure


def partials(components: sympy.Matrix, v: tuple) -> list[sympy.Matrix]:
    """The partial velocities ``∂components/∂v_r`` (one 3-vector per speed)."""
    return [components.applyfunc(lambda e, s=s: diff(e, s)) for s in v]


def oriented(frame: Any, N: Any) -> bool:
    """Whether ``frame``'s orientation relative to ``N`` is known (a wheel may be given its angular velocity only)."""
    try:
        N.dcm(frame)
    except ValueError:
        return False
    return True


def check_frame(frame: Any, speeds: Speeds, probe: Probe, what: str) -> None:
    """Refuse a frame whose angular velocity in the inertial frame is not the rate of its orientation (a body frame
    without an orientation is checked by :func:`check_spin`)."""
    N = speeds.written.frame
    if frame == N or not oriented(frame, N):
        return
    R = speeds.plain.matrix(N.dcm(frame), f"{speeds.written.kind}: {what}: orientation")
    omega = speeds.components(frame.ang_vel_in(N), f"{what}: angular velocity")
    left, right = [], []
    for r, Omega in enumerate(partials(omega, speeds.v)):
        spin = R.applyfunc(lambda e, r=r: speeds.along(e, r)) * R.T
        left += list(Omega)
        right += [spin[2, 1], spin[0, 2], spin[1, 0]]
    if not probe.agree(left, right):
        raise ModelError(
            f"{speeds.written.kind}: {what}: its angular velocity in {N} is not the rate of its orientation under the "
            "kinematic differential equations; check set_ang_vel against the kinematic equations"
        )


def velocity_correction(point: Any, mass: sympy.Expr, speeds: Speeds, probe: Probe, what: str) -> list:
    """The terms ``−Σ_b u_b m v·D_br`` (n) by which Kane's inertia forces of a point mass differ from
    Boltzmann–Hamel's on ``T(q, u)`` (zero, the empty list, when the point's velocity is the rate of a position)."""
    v_speeds = speeds.v
    velocity = speeds.components(point.vel(speeds.written.frame), f"{what}: velocity")
    if not probe.vanish(list(velocity.xreplace({s: ZERO for s in v_speeds}))):
        raise ModelError(f"{speeds.written.kind}: {what}: its velocity has a part without speeds")
    V = partials(velocity, v_speeds)
    n = len(v_speeds)
    position = known_position(point, speeds, what)
    if position is not None and probe.agree(
        [e for r in range(n) for e in V[r]], [speeds.along(position[i], r) for r in range(n) for i in range(3)]
    ):
        return []  # V_r = X_r r: the velocity is the rate of a position, Kane's and Boltzmann–Hamel's terms agree
    gamma = speeds.structure
    defects: dict[tuple[int, int], tuple] = {}
    for b in range(n):
        for r in range(b + 1, n):
            left = [speeds.along(V[r][i], b) - speeds.along(V[b][i], r) for i in range(3)]
            right = [sympy.Add(*(gamma[j][b][r] * V[j][i] for j in range(n) if gamma[j][b][r] != 0)) for i in range(3)]
            defects[b, r] = (left, right)
    if probe.agree(
        [e for left, _ in defects.values() for e in left], [e for _, right in defects.values() for e in right]
    ):
        return []
    extra = []
    for r in range(n):
        total = ZERO
        for b in range(n):
            if b == r:
                continue
            left, right = defects[min(b, r), max(b, r)]
            sign = 1 if b < r else -1
            D = [sign * (left[i] - right[i]) for i in range(3)]
            total += v_speeds[b] * sympy.Add(*(velocity[i] * D[i] for i in range(3)))
        extra.append(-mass * total)
    return extra


def known_position(point: Any, speeds: Speeds, what: str) -> sympy.Matrix | None:
    """The components in the inertial frame of ``point``'s position from a point at rest (:func:`fixed_origin`), in
    plain symbols; ``None`` when no such point is known or the position depends on a speed."""
    written = speeds.written
    origin = fixed_origin(point, written)
    if origin is None:
        return None
    try:
        position = speeds.plain.matrix(point.pos_from(origin).to_matrix(written.frame), f"{written.kind}: {what}")
    except ValueError:
        return None
    return None if any(e.free_symbols & set(speeds.v) for e in position) else position


def check_spin(body: Any, speeds: Speeds, probe: Probe, what: str) -> None:
    """Refuse a rigid body whose frame has no orientation (only an angular velocity: a wheel spinning in its fork,
    its inertia symmetric about the axle) when Kane's inertia torques differ from Boltzmann–Hamel's on
    ``T = ½ ω·I ω``.

    With ``ω = Σ Ω_b u_b`` and ``I(q)`` in the inertial frame, Boltzmann–Hamel's terms less Kane's
    ``Ω_r·(I α + ω × I ω)`` are ``Σ_b u_b (X_b Ω_r − X_r Ω_b − Σ_j γ^j_br Ω_j)·I ω + Ω_r·(İ ω) − ½ ω·(X_r I) ω
    − Ω_r·(ω × I ω)``: zero when ``ω`` is the rate of an orientation in which ``I`` is fixed.
    """
    N, v = speeds.written.frame, speeds.v
    n = len(v)
    omega = speeds.components(body.frame.ang_vel_in(N), f"{what}: angular velocity")
    Omega = partials(omega, v)
    inertia = speeds.components(body.central_inertia, f"{what}: inertia")
    momentum = inertia * omega
    spin = omega.cross(momentum)
    rates = [inertia.applyfunc(lambda e, b=b: speeds.along(e, b)) for b in range(n)]
    inertia_rate = sympy.zeros(3, 3)
    for b in range(n):
        inertia_rate += rates[b] * v[b]
    gamma = speeds.structure
    defect = []
    for r in range(n):
        total = Omega[r].dot(inertia_rate * omega) - (omega.T * rates[r] * omega)[0, 0] / 2 - Omega[r].dot(spin)
        for b in range(n):
            if b == r:
                continue
            D = [speeds.along(Omega[r][i], b) - speeds.along(Omega[b][i], r) for i in range(3)]
            D = [
                D[i] - sympy.Add(*(gamma[j][b][r] * Omega[j][i] for j in range(n) if gamma[j][b][r] != 0))
                for i in range(3)
            ]
            total += v[b] * sympy.Add(*(D[i] * momentum[i] for i in range(3)))
        defect.append(total)
    if not probe.vanish(defect):
        raise ModelError(
            f"{speeds.written.kind}: {what}: the frame has no orientation in {N} and its angular velocity is not the "
            "rate of an orientation in which its inertia is fixed; orient the frame"
        )


def body_terms(speeds: Speeds, probe: Probe) -> tuple[sympy.Expr, list]:
    """``T`` from the bodies (in plain symbols) and the velocity correction (n, zeros when none is needed)."""
    from sympy.physics.mechanics import RigidBody

    written = speeds.written
    N, n, kind = written.frame, len(speeds.v), written.kind
    T = ZERO
    correction = [ZERO] * n
    checked: set = set()
    for body in written.bodies:
        what = f"body {body.name}"
        mass = speeds.plain(body.mass, f"{kind}: {what}: mass")
        if mass.free_symbols & set(speeds.q + speeds.v):
            raise ModelError(f"{kind}: {what}: its mass changes with the state, which sls cannot take")
        point = body.masscenter
        if isinstance(body, RigidBody):
            check_frame(body.frame, speeds, probe, f"{what}: frame {body.frame}")
            unoriented = not oriented(body.frame, N)
            rate = speeds.plain.matrix(
                speeds.on(body.central_inertia.dt(body.frame)).to_matrix(N if unoriented else body.frame),
                f"{kind}: {what}: inertia",
            )
            if not probe.vanish(list(rate)):
                raise ModelError(f"{kind}: {what}: its central inertia is not fixed in its frame {body.frame}")
            if unoriented:
                check_spin(body, speeds, probe, f"{what}: frame {body.frame}")
        for frame in {f for _, f in speeds.on(point.vel(N)).args} - checked:
            check_frame(frame, speeds, probe, f"{what}: frame {frame} of its velocity")
            checked.add(frame)
        extra = velocity_correction(point, mass, speeds, probe, what)
        correction = [c + e for c, e in zip(correction, extra)] if extra else correction
        T += speeds.plain(speeds.on(body.kinetic_energy(N)), f"{kind}: {what}: kinetic energy")
    return T, correction


def lagrangian_terms(written: Written, plain: Plain, probe: Probe, rates: tuple) -> tuple[sympy.Expr, sympy.Expr]:
    """``(T, V)`` from a Lagrangian: its part quadratic in the rates and minus its rate-free part.

    Raises :class:`ModelError` for a part linear in the rates (gyroscopic) or a Lagrangian not quadratic in them.
    """
    L = plain(written.lagrangian, f"{written.kind}: Lagrangian")
    scale = sympy.Dummy("scale")
    scaled = L.xreplace({s: scale * s for s in rates})
    rest = L.xreplace({s: ZERO for s in rates})
    linear = diff(scaled, scale).xreplace({scale: ZERO})
    T = (diff(diff(scaled, scale), scale) / 2).xreplace({scale: ZERO})
    if not probe.agree([L], [rest + linear + T]):
        raise ModelError(f"{written.kind}: the Lagrangian must be quadratic in the rates (T − V)")
    if linear != 0 and not probe.vanish([linear]):
        raise ModelError(
            f"{written.kind}: the Lagrangian has terms linear in the rates (gyroscopic or magnetic), which sls "
            "cannot take"
        )
    return T, -rest


def fixed_origin(point: Any, written: Written) -> Any | None:
    """A point at rest in the inertial frame to which ``point``'s position is known (``None`` if there is none)."""
    seen, queue = {point}, [point]
    while queue:
        current = queue.pop(0)
        velocity = getattr(current, "_vel_dict", {}).get(written.frame)
        if current in written.fixed_points or (velocity is not None and velocity == 0):
            return current
        for neighbour in getattr(current, "_pos_dict", {}):
            if neighbour not in seen:
                seen.add(neighbour)
                queue.append(neighbour)
    return None


def load_terms(speeds: Speeds, probe: Probe, inputs: set) -> tuple[sympy.Expr, list]:
    """``(V, forces)``: the potential of the constant forces whose position is known, and the generalized forces
    (n, along the speeds) of every other load."""
    from sympy.physics.mechanics import Point, ReferenceFrame

    written = speeds.written
    N, n, kind = written.frame, len(speeds.v), written.kind
    V, forces = ZERO, [ZERO] * n
    for i, load in enumerate(written.loads):
        what = f"loads[{i}]"
        try:
            where, vector = load
        except (TypeError, ValueError):
            raise ModelError(f"{kind}: {what}: expected a (Point, force) or (ReferenceFrame, torque) pair") from None
        if isinstance(where, Point):
            moving = where.vel(N)
        elif isinstance(where, ReferenceFrame):
            moving = where.ang_vel_in(N)
        else:
            raise ModelError(f"{kind}: {what}: expected a (Point, force) or (ReferenceFrame, torque) pair")
        amount = speeds.on(vector)
        moving = speeds.on(moving)
        generalized = [
            speeds.plain(amount.dot(moving.diff(s, N)), f"{kind}: {what}") if moving != 0 else ZERO for s in written.u
        ]
        potential = constant_force_potential(where, amount, speeds, probe, inputs, generalized, what)
        if potential is not None:
            V += potential
        else:
            forces = [f + g for f, g in zip(forces, generalized)]
    return V, forces


def constant_force_potential(
    where: Any, amount: Any, speeds: Speeds, probe: Probe, inputs: set, generalized: list, what: str
) -> sympy.Expr | None:
    """``−F·r`` for a force ``F`` constant in the inertial frame on a point whose position ``r`` from a fixed point
    is known and gives the same generalized forces; ``None`` otherwise (the load stays a generalized force)."""
    from sympy.physics.mechanics import Point

    written = speeds.written
    if not isinstance(where, Point):
        return None
    force = speeds.plain.matrix(amount.to_matrix(written.frame), f"{written.kind}: {what}")
    state = set(speeds.q + speeds.v)
    if all(e == 0 for e in force) or any(
        e.free_symbols & state or {s.name for s in e.free_symbols} & inputs for e in force
    ):
        return None
    origin = fixed_origin(where, written)
    if origin is None:
        return None
    position = speeds.plain.matrix(where.pos_from(origin).to_matrix(written.frame), f"{written.kind}: {what}")
    if any(e.free_symbols & set(speeds.v) for e in position):
        return None
    potential = -sympy.Add(*(f * r for f, r in zip(force, position)))
    rates = [-speeds.along(potential, r) for r in range(len(speeds.v))]
    return potential if probe.agree(rates, generalized) else None


def constraint_terms(speeds: Speeds, probe: Probe) -> tuple[tuple, tuple]:
    """The holonomic constraints (in q) and the velocity constraints (in the speeds), without the holonomic ones
    the kinematics keep by themselves (``(∂c/∂q) S = 0``: a quaternion's unit norm when its rates are
    ``½ quat ⊗ (0, ω)``) and without those velocity constraints that are time derivatives of the holonomic ones
    (when the model lists them)."""
    written, kind = speeds.written, speeds.written.kind
    n = len(speeds.v)
    holonomic = tuple(speeds.plain(c, f"{kind}: configuration constraint") for c in written.holonomic)
    velocity = tuple(speeds.plain(speeds.on(c), f"{kind}: velocity constraint") for c in written.velocity)
    rows = [
        [sympy.Add(*(diff(c, speeds.q[k]) * speeds.S[k][r] for k in range(len(speeds.q)))) for r in range(n)]
        for c in holonomic
    ]
    kept_holonomic = [i for i, row in enumerate(rows) if not probe.vanish(row)]
    holonomic, rows = tuple(holonomic[i] for i in kept_holonomic), [rows[i] for i in kept_holonomic]
    if not written.velocity_lists_holonomic or not holonomic:
        return holonomic, velocity
    coefficients = [[diff(c, s) for s in speeds.v] for c in velocity]
    kept: list[int] = []
    for i, row in enumerate(coefficients):
        if probe.rank(rows + [coefficients[j] for j in kept] + [row], 0) > len(rows) + len(kept):
            kept.append(i)
    for point in range(3):
        full = probe.rank(rows + coefficients, point)
        if probe.rank(coefficients, point) != full or full != len(rows) + len(kept):
            raise ModelError(
                f"{kind}: the time derivatives of the configuration constraints must be among the velocity "
                "constraints (with a dependent speed each)"
            )
    return holonomic, tuple(velocity[i] for i in kept)


def mechanics_terms(written: Written, plain: Plain, probe: Probe, inputs: set, simplify: bool = True) -> Terms:
    """The model in sls's form (:class:`Terms`), checked; see the module docstring. ``simplify`` tidies every
    coefficient of the speeds (rational functions cancelled, trigonometric identities applied)."""
    rates = speed_rates(written, simplify)
    written = speeds_as_rates(written, rates)
    speeds = Speeds(written, rates, plain)
    if len(speeds.v) < len(speeds.q):
        try:  # fewer speeds than coordinates: their directions' brackets must stay in their span (a quaternion's do)
            speeds.structure  # noqa: B018
        except ModelError as exc:
            raise ModelError(f"{written.kind}: {exc}") from None
    if written.lagrangian is not None:
        T, V = lagrangian_terms(written, plain, probe, speeds.v)
        correction = [ZERO] * len(speeds.v)
    else:
        T, correction = body_terms(speeds, probe)
        V = plain(written.potential, f"{written.kind}: potential energy")
    loaded, forces = load_terms(speeds, probe, inputs)
    holonomic, velocity = constraint_terms(speeds, probe)
    V = V + loaded

    def tidy(expr: sympy.Expr) -> sympy.Expr:
        return tidy_in_speeds(expr, speeds.v) if simplify else expr

    return Terms(
        state=speeds.q + speeds.v,
        kinematics=None if written.kdes is None else speeds.rates,
        T=tidy(T),
        V=tidy(V),
        fric=tuple(tidy(c) for c in correction),
        forces=tuple(tidy(f) for f in forces),
        constraints=tuple(tidy(c) for c in holonomic),
        velocity_constraints=tuple(tidy(c) for c in velocity),
    )
