"""The moving bodies of a robot tree (:func:`bodies`), as the recursions of :mod:`sls.derive.rigid_body` walk them.

Fixed joints are folded into the bodies they join (inertia summed by the parallel-axis theorem, transforms
composed); every body is one joint's child with the links fixed to it. Numbers are floats (:func:`constant`
makes graph constants of them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import sympy

from sls.model.inertial import body_symbols
from sls.model.tree import BALL, FREE, rpy_matrix

if TYPE_CHECKING:
    from sls.model.tree import Robot

#: Joint kinds that rotate about their axis; the other moving kinds are ``prismatic`` and the quaternion joints
#: (the free-flyer, :data:`~sls.model.tree.FREE`, with six speeds; the ball joint, :data:`~sls.model.tree.BALL`,
#: with three).
REVOLUTE = ("revolute", "continuous")
_MOVING = REVOLUTE + ("prismatic", FREE, BALL)


@dataclass(frozen=True)
class Body:
    """One moving body: a moving joint's child link with the links fixed to it.

    ``parent`` is the index of the parent body (``-1``: the root, which does
    not move). ``rotation`` (3×3) and ``offset`` (3) are the joint's constant
    transform in the parent body's frame (fixed joints above it composed in);
    ``axis`` the unit axis in the body's frame; ``kind`` the joint type.
    ``coordinate`` is the index of the coordinate moving it (the first of a free-flyer's seven or a ball joint's
    four), ``speed`` the index of its speed (the first of a free-flyer's six or a ball joint's three; the layout
    of :attr:`~sls.model.tree.Robot.slots`), ``multiplier`` and ``shift`` map that coordinate to the joint
    (``1, 0`` unless mimic).
    ``mass``, ``moment`` (``m c``, 3) and ``inertia`` (3×3 about the body's
    origin) are the merged inertia in the body's frame, as floats.
    """

    name: str
    parent: int
    rotation: tuple
    offset: tuple
    axis: tuple
    kind: str
    coordinate: int
    multiplier: float
    shift: float
    mass: float
    moment: tuple
    inertia: tuple
    speed: int = -1
    #: A constant added to a revolute joint's angle: its body's frame turned about the axis
    #: (:mod:`sls.derive.body_frames`), so that ``rotation`` is sparse.
    angle: float = 0.0

    def __post_init__(self) -> None:
        if self.speed < 0:
            object.__setattr__(self, "speed", self.coordinate)


def bodies(robot: Robot) -> tuple:
    """The moving bodies of ``robot`` (a :class:`~sls.model.tree.Robot`) in tree order (parents first), each in
    the frame of its joint's child link (:func:`sls.derive.body_frames.bodies` turns them where that is cheaper).

    Fixed joints are folded: a link fixed to a body adds its inertia to the
    body's (parallel-axis theorem, in the body's frame), and a joint below it
    gets the composed constant transform. Links fixed to the root are not
    bodies (they never move).
    """
    return _bodies_and_placements(robot)[0]


def placements(robot: Robot) -> dict:
    """Every link's place on its body: ``link → (body index, R, t)``, its frame's rotation and origin in the
    frame of the body that carries it (``-1``: fixed to the root, in the root's frame, the world)."""
    return _bodies_and_placements(robot)[1]


def _bodies_and_placements(robot: Robot) -> tuple:
    """``(bodies, placements)``: see :func:`bodies` and :func:`placements`."""
    index = {slot.joint.name: (slot.q, slot.v) for slot in robot.slots}  # first coordinate and speed of each
    # link → (body, R, t): its frame in the body's frame
    pose: dict[str, tuple[int, tuple, tuple]] = {robot.root: (-1, _IDENTITY, (0.0, 0.0, 0.0))}
    found: list = []
    links: list = []  # the child link of each body's joint
    for joint in robot.joints:
        body, R, t = pose[joint.parent]
        R_o = _matmul(R, rpy_matrix(joint.rpy))
        t_o = tuple(t[i] + sum(R[i][k] * joint.xyz[k] for k in range(3)) for i in range(3))
        if joint.kind not in _MOVING:
            pose[joint.child] = (body, R_o, t_o)
            continue
        if joint.mimic is None:
            (coordinate, speed), multiplier, shift = index[joint.name], 1.0, 0.0
        else:
            followed, multiplier, shift = joint.mimic
            coordinate, speed = index[followed]
        found.append(
            {
                "name": joint.name,
                "parent": body,
                "rotation": R_o,
                "offset": t_o,
                "axis": tuple(joint.axis),
                "kind": joint.kind,
                "coordinate": coordinate,
                "speed": speed,
                "multiplier": float(multiplier),
                "shift": float(shift),
            }
        )
        pose[joint.child] = (len(found) - 1, _IDENTITY, (0.0, 0.0, 0.0))
        links.append(joint.child)
    masses = [0.0 for _ in found]
    moments = [[0.0] * 3 for _ in found]
    inertias = [[[0.0] * 3 for _ in range(3)] for _ in found]
    for link, inertial in robot.inertials.items():
        if inertial is None or link not in pose:
            continue
        body, R, t = pose[link]
        if body < 0:
            continue
        m = inertial.mass
        c = [t[i] + sum(R[i][k] * inertial.com[k] for k in range(3)) for i in range(3)]
        I_c = _matmul(_matmul(R, inertial.inertia), transpose(R))
        masses[body] += m
        cc = sum(v * v for v in c)
        for i in range(3):
            moments[body][i] += m * c[i]
            for j in range(3):
                inertias[body][i][j] += I_c[i][j] + m * ((cc if i == j else 0.0) - c[i] * c[j])
    found_bodies = tuple(
        Body(**spec, mass=m, moment=tuple(h), inertia=tuple(tuple(row) for row in inertia))
        for spec, m, h, inertia in zip(found, masses, moments, inertias)
    )
    if robot.inertial_params:  # those bodies' parameters are symbols (their defaults: the numbers above)
        symbolic = set(robot.inertial_params)
        found_bodies = tuple(
            _with_symbols(body, link) if link in symbolic else body for body, link in zip(found_bodies, links)
        )
    return found_bodies, pose


def _with_symbols(body: Body, link: str) -> Body:
    """``body`` with its mass, first moment and inertia the symbols of ``link``'s parameters
    (:func:`sls.model.inertial.body_symbols`)."""
    m, h, inertia = body_symbols(link)
    return replace(body, mass=m, moment=h, inertia=inertia)


_IDENTITY = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))


def _matmul(A: Sequence, B: Sequence) -> tuple:
    if A is _IDENTITY:
        return tuple(tuple(row) for row in B)
    return tuple(tuple(sum(A[i][k] * B[k][j] for k in range(3)) for j in range(3)) for i in range(3))


def transpose(A: Sequence) -> tuple:
    return tuple(tuple(A[j][i] for j in range(3)) for i in range(3))


def constant(value: float) -> sympy.Expr:
    """A float as a graph constant.

    Integral values (within 1e-14) exact, so zeros and ones fold (as :mod:`sls.readers.urdf`). A sympy expression
    in symbols (an inertial parameter, :mod:`sls.model.inertial`, turned with its body's frame) comes back with its
    numbers snapped the same way.
    """
    if isinstance(value, sympy.Basic) and value.free_symbols:
        return value.xreplace({f: constant(float(f)) for f in value.atoms(sympy.Float)})
    nearest = round(value)
    if abs(value - nearest) <= 1e-14 and abs(nearest) < 2**53:
        return sympy.Integer(nearest)
    return sympy.Float(value)
