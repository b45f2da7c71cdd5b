"""The symbolic kinematics of a robot: velocities propagated from the root in each link's own frame (the
forward pass of recursive Newton–Euler), the energies ``T`` and ``V``, the joints' friction, and the inputs'
generalized forces (a base's body wrench mapped by ``Jᵀ``)."""

from __future__ import annotations

import sympy

from sls.algebra.expressions import symbol
from sls.model.free_flyer import rotation_matrix
from sls.model.inertial import body_symbols, owners
from sls.model.tree import BALL, FREE, Inertial, Robot, rpy_matrix
from sls.readers.urdf.naming import (
    DAMPING_PREFIX,
    FRICTION_PREFIX,
    FRICTION_VELOCITY_NAME,
    INPUT_PREFIX,
    NOT_IDENTIFIER,
    joint_label,
)


def _number(value: float) -> sympy.Expr:
    """A float as a sympy number: integral values exact, values within 1e-14 of an integer snapped."""
    nearest = round(value)
    if abs(value - nearest) <= 1e-14 and abs(nearest) < 2**53:
        return sympy.Integer(nearest)
    return sympy.Float(value)


def _axis_rotation(axis: tuple, q: sympy.Symbol) -> list:
    """Rotation by ``q`` about the unit ``axis`` (Rodrigues), exact for the coordinate axes."""
    c, s = sympy.cos(q), sympy.sin(q)
    a = [_number(v) for v in axis]
    if sum(v != 0 for v in a) == 1:
        return _principal_rotation(a, c, s)
    x, y, z = a
    return [
        [c + x * x * (1 - c), x * y * (1 - c) - z * s, x * z * (1 - c) + y * s],
        [y * x * (1 - c) + z * s, c + y * y * (1 - c), y * z * (1 - c) - x * s],
        [z * x * (1 - c) - y * s, z * y * (1 - c) + x * s, c + z * z * (1 - c)],
    ]


def _principal_rotation(a: list, c: sympy.Expr, s: sympy.Expr) -> list:
    """Rotation about ``±e_k`` (``a`` has one non-zero entry, ±1): only cos and sin, no (1 − cos) terms."""
    k = next(i for i, v in enumerate(a) if v != 0)
    s = s * a[k]
    i, j = (k + 1) % 3, (k + 2) % 3
    R = [[sympy.Integer(0)] * 3 for _ in range(3)]
    R[k][k] = sympy.Integer(1)
    R[i][i], R[j][j] = c, c
    R[i][j], R[j][i] = -s, s
    return R


def _transpose_times(R: list, v: list) -> list:
    """``Rᵀ v``."""
    return [sympy.Add(*(R[a][b] * v[a] for a in range(3))) for b in range(3)]


def _cross(a: list, b: list) -> list:
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _dot(a: list, b: list) -> sympy.Expr:
    return sympy.Add(*(x * y for x, y in zip(a, b)))


def split_names(robot: Robot, names: list) -> tuple:
    """``(free, joints)``: the symbols ``(q, v)`` of the first quaternion free-flyer (7 and 6; empty without one)
    and of the joints (coordinates and rates, one per ``robot.movable``), from the state names."""
    symbols = slot_symbols(robot, names)
    free = robot.free
    joints = [symbols[j.name] for j in robot.movable]
    return symbols[free.name] if free is not None else ([], []), ([q[0] for q, _ in joints], [v[0] for _, v in joints])


def slot_symbols(robot: Robot, names: list) -> dict:
    """Per joint that is a coordinate (:attr:`~sls.model.tree.Robot.slots`): ``(q, v)``, the lists of the symbols
    of its coordinates and speeds, from the state names (coordinates, then speeds)."""
    slots = robot.slots
    n_q = sum(slot.n_q for slot in slots)
    q, v = [symbol(s) for s in names[:n_q]], [symbol(s) for s in names[n_q:]]
    return {s.joint.name: (q[s.q : s.q + s.n_q], v[s.v : s.v + s.n_v]) for s in slots}


def _joint_motions(robot: Robot, names: list) -> dict:
    """Per moving joint: ``(position, rate, speed index, multiplier)``; a mimic joint's position is
    ``multiplier·q_f + offset`` and its rate ``multiplier·q̇_f``, ``q_f`` the coordinate it follows.
    The speed index is the place of its speed among every joint's (:attr:`~sls.model.tree.Robot.slots`)."""
    symbols = slot_symbols(robot, names)
    index = {slot.joint.name: slot.v for slot in robot.slots}
    motions = {}
    for joint in robot.moving:
        followed, multiplier, offset = joint.mimic or (joint.name, 1.0, 0.0)
        (q,), (dq,) = symbols[followed]
        if joint.mimic is not None:
            m, o = _number(multiplier), _number(offset)
            q, dq = m * q + o, m * dq
        motions[joint.name] = (q, dq, index[followed], multiplier)
    return motions


def forward(robot: Robot, names: list) -> dict:
    """Per link: ``(ω, v, z, h, moves)``: angular velocity, velocity of its origin and the world's vertical,
    all in the link's frame, its origin's height, and whether it moves (the forward pass of RNEA)."""
    motions = _joint_motions(robot, names)
    zero = [sympy.Integer(0)] * 3
    frames = {robot.root: (zero, zero, [sympy.Integer(0), sympy.Integer(0), sympy.Integer(1)], sympy.Integer(0), False)}
    for joint in robot.joints:
        omega, velocity, vertical, height, moves = frames[joint.parent]
        origin = [[_number(v) for v in row] for row in rpy_matrix(joint.rpy)]
        offset = [_number(v) for v in joint.xyz]
        if joint.kind in (FREE, BALL):
            frames[joint.child] = _quaternion_frame(robot, names, joint, (origin, offset), frames[joint.parent])
            continue
        axis = [_number(v) for v in joint.axis]
        q, dq = motions.get(joint.name, (None, None, None, None))[:2]
        moves = moves or dq is not None
        if joint.kind == "prismatic":
            offset = [offset[i] + _dot(origin[i], axis) * q for i in range(3)]  # t + R_o a q
        rotation = _axis_rotation(joint.axis, q) if joint.kind in ("revolute", "continuous") else None
        child_omega = _to_child(origin, rotation, omega)
        child_velocity = _to_child(origin, rotation, [velocity[i] + w for i, w in enumerate(_cross(omega, offset))])
        if rotation is not None:
            child_omega = [child_omega[i] + axis[i] * dq for i in range(3)]
        if joint.kind == "prismatic":
            child_velocity = [child_velocity[i] + axis[i] * dq for i in range(3)]
        child_height = height + _dot(vertical, offset)
        frames[joint.child] = (child_omega, child_velocity, _to_child(origin, rotation, vertical), child_height, moves)
    return frames


def _quaternion_frame(robot: Robot, names: list, joint: object, place: tuple, parent: tuple) -> tuple:
    """The frame of a quaternion joint's child link: a free-flyer's (a body of the world) has its speeds as its
    ``ω`` and ``v`` and sits at ``t + R_o p``; a ball joint's turns its parent's ``ω`` and adds its speeds, sits at
    ``t``; both turned by ``R_o R(quat)`` (``t``, ``R_o`` the joint's origin ``place``)."""
    origin, offset = place
    omega, velocity, vertical, height, _ = parent
    q, v = slot_symbols(robot, names)[joint.name]  # type: ignore[attr-defined]
    R = rotation_matrix(q[-4:])
    up = _transpose_times(R, _transpose_times(origin, vertical))
    if joint.kind == FREE:  # type: ignore[attr-defined]
        position = [sympy.Add(*(origin[i][k] * q[k] for k in range(3))) for i in range(3)]
        child_height = height + _dot(vertical, [offset[i] + position[i] for i in range(3)])
        return list(v[3:6]), list(v[0:3]), up, child_height, True
    child_omega = [w + dw for w, dw in zip(_transpose_times(R, _transpose_times(origin, omega)), v)]
    moved = [velocity[i] + w for i, w in enumerate(_cross(omega, offset))]
    child_velocity = _transpose_times(R, _transpose_times(origin, moved))
    return child_omega, child_velocity, up, height + _dot(vertical, offset), True


def _to_child(origin: list, rotation: list | None, vector: list) -> list:
    """A parent-frame vector in the child's frame: ``R_qᵀ R_oᵀ v`` (``R_q = I`` when ``rotation`` is None)."""
    vector = _transpose_times(origin, vector)
    return vector if rotation is None else _transpose_times(rotation, vector)


def energies(robot: Robot, names: list, frames: dict | None = None) -> tuple:
    """``(T, V, fric)`` of ``robot`` with the coordinates named ``names`` (q then q̇); ``frames``: its
    forward pass (:func:`forward`), when already computed.

    ``fric[k]`` is the friction on coordinate ``k``: ``damping_<j>·r + friction_<j>·tanh(r/friction_velocity)``
    of each joint ``j`` that moves with it (itself and its mimic joints, ``r`` the joint's own rate),
    times the joint's multiplier; a joint with zero damping (friction) has no such term.
    """
    n = sum(slot.n_v for slot in robot.slots)
    g = symbol("g")
    frames = frames or forward(robot, names)
    kinetic, potential = [], []
    symbolic = set(robot.inertial_params)
    lumped = (
        {link for link, place in owners(robot).items() if place is not None and place[0] in symbolic}
        if symbolic
        else set()
    )
    for joint in robot.joints:
        inertial = robot.inertials[joint.child]
        omega, velocity, vertical, height, moves = frames[joint.child]
        if joint.child in symbolic:  # its parameters (the links fixed to it included), sls.model.inertial
            T, V = _parameter_energies(joint.child, omega, velocity, vertical, height, g)
            kinetic.append(T)
            potential.append(V)
        elif joint.child in lumped:
            continue
        elif moves and inertial is not None:
            T, V = _body_energies(inertial, omega, velocity, vertical, height, g)
            kinetic.append(T)
            potential.append(V)
    fric: list[list[sympy.Expr]] = [[] for _ in range(n)]
    for joint in robot.moving:
        _, rate, k, multiplier = _joint_motions(robot, names)[joint.name]
        terms = []
        if joint.damping != 0:
            terms.append(symbol(DAMPING_PREFIX + joint_label(joint)) * rate)
        if joint.friction != 0:
            coulomb = symbol(FRICTION_PREFIX + joint_label(joint))
            terms.append(coulomb * sympy.tanh(rate / symbol(FRICTION_VELOCITY_NAME)))
        if terms:
            fric[k].append(sympy.Add(*terms) * (_number(multiplier) if joint.mimic is not None else 1))
    return sympy.Add(*kinetic), sympy.Add(*potential), tuple(sympy.Add(*f) for f in fric)


def _body_energies(
    inertial: Inertial, omega: list, velocity: list, vertical: list, height: sympy.Expr, g: sympy.Symbol
) -> tuple:
    """``½ m |v + ω × c|² + ½ ωᵀ I ω`` and ``m g (h + z·c)`` of one link."""
    com = [_number(v) for v in inertial.com]
    mass = _number(inertial.mass)
    half = sympy.Rational(1, 2)
    terms = []
    if mass != 0:
        v = [velocity[i] + w for i, w in enumerate(_cross(omega, com))]
        terms.append(half * mass * sympy.Add(*(component**2 for component in v)))
    inertia = [[_number(value) for value in row] for row in inertial.inertia]
    for a in range(3):
        if inertia[a][a] != 0:
            terms.append(half * inertia[a][a] * omega[a] ** 2)
        for b in range(a + 1, 3):
            if inertia[a][b] != 0:
                terms.append(inertia[a][b] * omega[a] * omega[b])
    potential = mass * g * (height + _dot(vertical, com)) if mass != 0 else sympy.Integer(0)
    return sympy.Add(*terms), potential


def _parameter_energies(
    link: str, omega: list, velocity: list, vertical: list, height: sympy.Expr, g: sympy.Symbol
) -> tuple:
    """``½ m |v|² + v·(ω × h) + ½ ωᵀ I ω`` and ``g (m h₀ + z·h)`` of a moving link whose inertial parameters are
    symbols (``m``, ``h = m c`` and ``I`` about its origin, :func:`~sls.model.inertial.body_symbols`)."""
    m, h, inertia = body_symbols(link)
    half = sympy.Rational(1, 2)
    spin = sympy.Add(*(omega[a] * inertia[a][b] * omega[b] for a in range(3) for b in range(3)))
    T = half * m * _dot(velocity, velocity) + _dot(velocity, _cross(omega, list(h))) + half * spin
    return T, g * (m * height + _dot(vertical, list(h)))


def input_map(robot: Robot, names: list, frames: dict | None = None) -> tuple:
    """``(input names, generalized forces)``: ``tau_<joint>`` on each coordinate outside a base, and each
    base's body wrench mapped by ``Jᵀ`` (the virtual power ``F·v + M·ω`` of the wrench on its link,
    differentiated by the rates). Inputs in tree order (a base's wrench where its chain starts).
    ``frames``: the robot's forward pass (:func:`forward`), when already computed."""
    symbols = slot_symbols(robot, names)
    dq = [v for slot in robot.slots for v in symbols[slot.joint.name][1]]
    n = len(dq)
    in_base = {j: base for base in robot.bases for j in base.joints}
    inputs, forces = [], [sympy.Integer(0)] * n
    if robot.bases:
        twists = {link: frame[:2] for link, frame in (frames or forward(robot, names)).items()}
    else:
        twists = {}
    started = set()
    for slot in robot.slots:
        joint = slot.joint
        base = in_base.get(joint.name)
        if base is None:
            label = INPUT_PREFIX + joint_label(joint)
            axes = ("_x", "_y", "_z") if slot.kind == BALL else ("",)  # a ball joint: a torque about each axis
            for k, axis in enumerate(axes):
                inputs.append(label + axis)
                forces[slot.v + k] = forces[slot.v + k] + symbol(label + axis)
            continue
        if base.name in started:
            continue
        started.add(base.name)
        omega, velocity = twists[base.link]
        for suffix, force, moment in base.axes:
            u = symbol(f"{NOT_IDENTIFIER.sub('_', base.name)}_{suffix}")
            inputs.append(u.name)
            direction = [_number(a) for a in (force if force is not None else moment)]
            if base.kind != FREE:
                direction = list(force if force is not None else moment)
            power = _dot(velocity if force is not None else omega, direction)
            for i in range(n):
                slope = sympy.diff(power, dq[i])
                if slope != 0:
                    forces[i] = forces[i] + slope * u
    return inputs, forces
