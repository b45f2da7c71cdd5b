"""A robot's inertial parameters as model parameters (``inertial_params``), and the regressor's columns.

Each moving body of a robot tree (a moving joint's child link, with the links fixed to it lumped in) has ten
standard inertial parameters, in the order of Pinocchio's ``Inertia.toDynamicParameters``: the mass ``m``, the
first moment ``m c`` (``mcx, mcy, mcz``, ``c`` the centre of mass) and the rotational inertia about the link
frame's origin ``Ixx, Ixy, Iyy, Ixz, Iyz, Izz``, all in the moving link's frame. :attr:`Robot.inertial_params
<sls.model.tree.Robot.inertial_params>` names the moving links whose parameters are symbols (the package's
parameters ``<link>_m``, ``<link>_mcx`` … ``<link>_Izz``, :func:`parameter_names`); their defaults are the file's
values, lumped (:func:`lumped`): a link fixed to a moving link has no parameters of its own, its inertia is part of
that link's. The dynamics is linear in the parameters: ``τ = Y(q, v, v̇) π`` (the regressor, :func:`regressor_names`
lists its columns: the inertial parameters, then the joints' friction, armature and spring coefficients).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sls.algebra.expressions import symbol
from sls.model.tree import BALL, FREE, MOVABLE_TYPES, Robot, rpy_matrix

if TYPE_CHECKING:  # a type only: no import at run time
    from sls.model.model import Model

#: The ten parameters of a body, in ``Inertia.toDynamicParameters`` order (the suffixes of their names).
SUFFIXES = ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
#: Where ``Ixx … Izz`` sit in the symmetric 3 × 3 inertia (row, column).
_INERTIA_PLACES = ((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))
#: The prefixes of the joints' parameters that are columns of the regressor after the inertial ones (``τ`` is linear
#: in them): viscous and Coulomb friction, an MJCF file's armature and spring stiffness (its column
#: ``q − springref`` at the spring's rest position, a parameter held fixed).
FRICTION_COLUMNS = ("damping_", "friction_", "armature_", "stiffness_")
_NOT_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]")


def parameter_label(link: str) -> str:
    """The identifier part of a link's parameter names: characters other than letters, digits and ``_`` become
    ``_``; a name that then starts with a digit or ``_`` gets ``link_``."""
    label = _NOT_IDENTIFIER.sub("_", link)
    return label if label and label[0] not in "0123456789_" else "link_" + label.lstrip("_")


def parameter_names(link: str) -> tuple:
    """``(<link>_m, <link>_mcx, …, <link>_Izz)``: the names of a moving link's ten parameters."""
    label = parameter_label(link)
    return tuple(f"{label}_{suffix}" for suffix in SUFFIXES)


def moving_links(robot: Robot) -> tuple:
    """The child links of the moving joints (revolute, continuous, prismatic, free, ball), in tree order: the
    bodies that have parameters."""
    return tuple(j.child for j in robot.joints if j.kind in MOVABLE_TYPES or j.kind in (FREE, BALL))


def owners(robot: Robot) -> dict:
    """``link → (moving link, R, t)``: the moving link each link is fixed to (itself for a moving link) and its
    frame in that link's frame (rotation rows, origin); a link fixed to the root maps to ``None``."""
    pose: dict = {robot.root: None}
    identity = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
    for joint in robot.joints:
        if joint.kind in MOVABLE_TYPES or joint.kind in (FREE, BALL):
            pose[joint.child] = (joint.child, identity, (0.0, 0.0, 0.0))
            continue
        above = pose[joint.parent]
        if above is None:
            pose[joint.child] = None
            continue
        owner, R, t = above
        turn = rpy_matrix(joint.rpy)
        rotation = tuple(tuple(sum(R[i][k] * turn[k][j] for k in range(3)) for j in range(3)) for i in range(3))
        origin = tuple(t[i] + sum(R[i][k] * joint.xyz[k] for k in range(3)) for i in range(3))
        pose[joint.child] = (owner, rotation, origin)
    return pose


def lumped(robot: Robot) -> dict:
    """``moving link → ten floats``: each body's parameters (:data:`SUFFIXES` order) from the links' inertials, the
    links fixed to it lumped in (parallel-axis theorem, in the moving link's frame); zeros for a body without
    mass."""
    totals = {link: [0.0] * 10 for link in moving_links(robot)}
    for link, place in owners(robot).items():
        inertial = robot.inertials.get(link)
        if place is None or inertial is None:
            continue
        owner, R, t = place
        m = inertial.mass
        c = [t[i] + sum(R[i][k] * inertial.com[k] for k in range(3)) for i in range(3)]
        turned = [[sum(R[i][a] * inertial.inertia[a][b] for a in range(3)) for b in range(3)] for i in range(3)]
        about_com = [[sum(turned[i][b] * R[j][b] for b in range(3)) for j in range(3)] for i in range(3)]
        cc = sum(v * v for v in c)
        total = totals[owner]
        total[0] += m
        for i in range(3):
            total[1 + i] += m * c[i]
        for k, (i, j) in enumerate(_INERTIA_PLACES):
            total[4 + k] += about_com[i][j] + m * ((cc if i == j else 0.0) - c[i] * c[j])
    return {link: tuple(values) for link, values in totals.items()}


def body_symbols(link: str) -> tuple:
    """``(m, (mcx, mcy, mcz), I)`` of a moving link whose parameters are symbols: ``I`` the symmetric 3 × 3 of
    ``Ixx … Izz``."""
    m, hx, hy, hz, xx, xy, yy, xz, yz, zz = (symbol(name) for name in parameter_names(link))
    return m, (hx, hy, hz), ((xx, xy, xz), (xy, yy, yz), (xz, yz, zz))


def defaults(robot: Robot) -> dict:
    """``{name: default}`` of the parameters of :attr:`Robot.inertial_params`: the file's values, lumped."""
    values = lumped(robot)
    return {name: value for link in robot.inertial_params for name, value in zip(parameter_names(link), values[link])}


def inertial_parameter_names(model: Model) -> tuple:
    """The names of ``model``'s inertial parameters (ten per link of ``model.tree.inertial_params``, tree order);
    ``()`` without any."""
    tree = getattr(model, "tree", None)
    links = getattr(tree, "inertial_params", ()) if tree is not None else ()
    return tuple(name for link in links for name in parameter_names(link))


def regressor_names(model: Model) -> tuple:
    """The regressor's columns (the package's ``PI_NAMES``): the inertial parameters (:func:`inertial_parameter_names`),
    then the joints' parameters the model has whose torques are linear in them (``damping_<joint>``,
    ``friction_<joint>``, ``armature_<joint>``, ``stiffness_<joint>``, model order); ``()`` without inertial
    parameters."""
    inertial = inertial_parameter_names(model)
    if not inertial:
        return ()
    friction = tuple(name for name in model.params if name.startswith(FRICTION_COLUMNS))
    return inertial + friction
