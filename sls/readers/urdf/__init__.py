"""Stage 1 for robots: a URDF file → a :class:`~sls.model.Model` (the face of the URDF reader).

A URDF file describes a robot as a tree of links joined by joints. sls reads:

* ``<joint>`` of type ``revolute``, ``continuous``, ``prismatic``, ``fixed``,
  ``floating`` or ``planar``, with ``<parent link>``, ``<child link>``,
  ``<origin xyz rpy>`` (default 0), ``<axis xyz>`` (default ``1 0 0``,
  normalised), ``<dynamics damping friction>`` and ``<mimic joint multiplier
  offset>``;
* ``<link>`` with ``<inertial>``: ``<origin xyz rpy>`` (the centre of mass and
  the orientation of the inertia's frame), ``<mass value>`` and ``<inertia
  ixx ixy ixz iyy iyz izz>`` (about the centre of mass).

Everything else (``<visual>``, ``<collision>``, ``<limit>``,
``<transmission>``, ``<gazebo>``, materials, ...) is ignored. What sls cannot
model is refused with one line naming the element (:class:`ModelFileError`):
unknown joint types, closed loops, DTDs and entities, moving links without mass.

The file is data: it is parsed by the standard library's XML parser, after
refusing any ``<!DOCTYPE``/``<!ENTITY`` in the text (so no entity is ever
expanded), and nothing in it is evaluated.

Modules: :mod:`~sls.readers.urdf.document` (the XML), :mod:`~sls.readers.urdf.inertia` (the links' numbers and
the mass checks), :mod:`~sls.readers.urdf.structure` (the tree, :func:`parse_urdf`),
:mod:`~sls.readers.urdf.naming` (states, parameters and inputs), :mod:`~sls.readers.urdf.kinematics` (``T``,
``V``, friction, the inputs' forces), :mod:`~sls.readers.urdf.actuation` (the robot's inputs written in new ones:
``inputs`` and ``[actuation]``), :mod:`~sls.readers.urdf.contacts` (contacts and their places),
:mod:`~sls.readers.urdf.srdf` (stances from the robot's SRDF file), :mod:`~sls.readers.urdf.load` (:func:`load_urdf`,
:func:`load_urdf_table`).
The tree types (:class:`~sls.model.tree.Robot`, ...) are the model stage's.

Conventions of the model (``docs/robots.md`` is the user's page)
----------------------------------------------------------------
* The root link is fixed to the world unless ``floating_base=True`` (then a
  free-flyer joint named ``base`` joins it to the world, as Pinocchio's
  ``JointModelFreeFlyer`` root does) or the file has one link and no joint (a
  drone: floating automatically). Gravity is ``g`` along −z of the world
  (the root link's frame), ``g`` a parameter (default 9.81).
* The root's free-flyer (``floating_base``, a drone, or a ``floating`` joint
  of the root link) is by default (``base_orientation="quaternion"``) one
  joint with Pinocchio's free-flyer layout (:mod:`sls.model.free_flyer`):
  coordinates ``<joint>_x, _y, _z`` (position) and ``_qx, _qy, _qz, _qw`` (a
  unit quaternion), speeds ``<joint>_vx … _wz`` (linear and angular velocity
  of its link in the link's frame) before the joints' rates.
* With ``base_orientation="euler"``, and for ``floating`` joints deeper in
  the tree, ``floating`` and ``planar`` joints are expanded into
  chains of ordinary joints joined by massless links
  (``Robot.inertials[link] is None``): floating = prismatic along x, y, z of
  the parent frame, then revolute about z (yaw), y (pitch), x (roll), so the
  child's orientation is ``R = Rz(yaw) Ry(pitch) Rx(roll)`` (URDF's own rpy
  convention; singular at pitch = ±π/2); planar = prismatic along two
  orthonormal in-plane axes ``e1``, ``e2`` then revolute about the normal
  ``n`` (``e1 × e2 = n``). The joint's origin goes on the first joint of the
  chain. Coordinates ``<joint>_x … <joint>_roll`` (planar: ``<joint>_x``,
  ``<joint>_y``, ``<joint>_theta``).
* A ``<mimic>`` joint is not a coordinate: its position is ``multiplier·q_f +
  offset``, its rate ``multiplier·q̇_f`` (``q_f`` the joint it follows, chains
  of mimic joints resolved). ``<mimic>`` on a fixed joint does nothing.
* The coordinates are the movable, non-mimic joints in tree order (depth first
  from the root, children in document order), named after the joints (see
  :func:`state_names`), then their rates ``d_<name>``.
* Inputs: ``tau_<joint>`` (torque or force) for every coordinate of an
  ordinary joint; a floating or planar joint instead takes a body wrench on
  its child link, at the link's origin and in its frame: ``<joint>_fx,
  <joint>_fy, <joint>_fz, <joint>_mx, <joint>_my, <joint>_mz`` (planar:
  ``_fx, _fy`` along ``e1, e2``, ``_mz`` about ``n``); its generalized forces are
  ``Jᵀ·wrench``, ``J`` the link's body Jacobian. Without floating or planar
  joints the model is fully actuated (``B_u = I``).
* Friction: a joint whose ``damping`` is non-zero gets the parameter
  ``damping_<joint>``, one whose ``friction`` is non-zero ``friction_<joint>``
  (defaults: the file's values) and the model the parameter
  ``friction_velocity`` (:data:`FRICTION_VELOCITY`); the joint's friction
  force is ``damping·q̇ + friction·tanh(q̇/friction_velocity)``. A mimic joint's
  friction acts on its own rate and maps back through its multiplier.
  Damping and friction of floating and planar joints are ignored.
* The numbers of the file (lengths, masses, inertias) are baked into ``T`` and
  ``V`` as floats (an integral value such as ``0.0`` or ``1.0`` as an exact
  integer, so zero terms vanish); with ``inertial_params`` the chosen moving
  links' masses, first moments and inertias (the links fixed to them lumped in)
  are parameters instead (:mod:`sls.model.inertial`, :mod:`sls.readers.inertial`).
* A link fixed to its parent (``fixed`` joint) moves with it: it is a body of
  its own with the composed constant transform, which is the same as merging
  its inertia into the parent's. Links fixed to the world never move: their
  ``<inertial>`` values are not checked.
* Inertia tensors are accepted when positive semi-definite up to rounding:
  smallest eigenvalue ≥ −(:data:`INERTIA_RELATIVE_TOLERANCE`·trace +
  :data:`INERTIA_ABSOLUTE_TOLERANCE`).

Kinematics
----------
Velocities are propagated from the root in each link's own frame (the forward
pass of recursive Newton–Euler), which keeps the expressions short: for the
joint from parent ``P`` to child ``C`` with origin ``(R_o, t)``, axis ``a``
and joint rotation ``R_q`` (``I`` for prismatic and fixed joints),

* ``ω_C = R_qᵀ R_oᵀ ω_P (+ a q̇ for a revolute joint)``,
* ``v_C = R_qᵀ R_oᵀ (v_P + ω_P × p) (+ a q̇ for a prismatic joint)``, with
  ``p = t (+ R_o a q for a prismatic joint)`` the child's origin in ``P``,
* ``z_C = R_qᵀ R_oᵀ z_P`` (the world's vertical in the link's frame) and the
  height ``h_C = h_P + z_P·p``.

Each link with an inertial (mass ``m``, centre of mass ``c``, inertia ``I``
about it in the link's frame) adds ``½ m |v_C + ω_C × c|² + ½ ω_Cᵀ I ω_C`` to
``T`` and ``m g (h_C + z_C·c)`` to ``V``. Nothing is expanded or simplified:
``T`` is the natural sum of per-body terms.
"""

from __future__ import annotations

from sls.readers.urdf.document import BASE_TYPES, JOINT_TYPES
from sls.readers.urdf.inertia import INERTIA_ABSOLUTE_TOLERANCE, INERTIA_RELATIVE_TOLERANCE, numeric_mass_matrix
from sls.readers.urdf.kinematics import energies, input_map
from sls.readers.urdf.load import GRAVITY, URDF_FILE_KEYS, URDF_TABLE_KEYS, load_urdf, load_urdf_table
from sls.readers.urdf.naming import (
    DAMPING_PREFIX,
    FRICTION_PREFIX,
    FRICTION_VELOCITY,
    FRICTION_VELOCITY_NAME,
    INPUT_PREFIX,
    RATE_PREFIX,
    friction_parameters,
    joint_label,
    state_names,
)
from sls.readers.urdf.structure import FLOATING_BASE, parse_urdf

__all__ = [
    "BASE_TYPES",
    "DAMPING_PREFIX",
    "FLOATING_BASE",
    "FRICTION_PREFIX",
    "FRICTION_VELOCITY",
    "FRICTION_VELOCITY_NAME",
    "GRAVITY",
    "INERTIA_ABSOLUTE_TOLERANCE",
    "INERTIA_RELATIVE_TOLERANCE",
    "INPUT_PREFIX",
    "JOINT_TYPES",
    "RATE_PREFIX",
    "URDF_FILE_KEYS",
    "URDF_TABLE_KEYS",
    "energies",
    "friction_parameters",
    "input_map",
    "joint_label",
    "load_urdf",
    "load_urdf_table",
    "numeric_mass_matrix",
    "parse_urdf",
    "state_names",
]
