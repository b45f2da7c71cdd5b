"""A compiled MuJoCo model's bodies and joints as the tree the URDF reader builds (:func:`read_tree`).

MuJoCo places a body at ``body_pos``, ``body_quat`` in its parent's frame, then applies its joints in order, each
in the body's current frame: a hinge turns it by ``q − ref`` about ``jnt_axis`` through the anchor ``jnt_pos``
(``F ← F · T(a) · Rot(u, q − ref) · T(−a)``), a slide moves it by ``(q − ref) jnt_axis``. The tree's joints
turn about their own origin, so each MuJoCo joint becomes one tree joint whose origin sits at the anchor (the
``ref`` rotation or shift folded into that origin), and a body with several joints becomes a chain of them
joined by massless links (like the URDF reader's floating and planar joints); the body's frame is its last
link's frame shifted by ``−a`` (no rotation), where its inertia and its children are attached. A body without
joints is fixed to its parent. Coordinates are MuJoCo's ``qpos`` of the joints, so the converters to and from
MuJoCo's ``qpos``/``qvel`` are a permutation.

A free joint (MuJoCo allows it only on a body of the world; a model may have several) becomes a quaternion
free-flyer of the tree (:data:`~sls.model.tree.FREE`, Pinocchio's layout, :mod:`sls.model.free_flyer`): MuJoCo
places such a body at its ``qpos`` directly (``body_pos`` and ``body_quat`` only give ``qpos0``), as the
free-flyer places its link. A ball joint becomes a quaternion ball joint (:data:`~sls.model.tree.BALL`): it turns
its body about the anchor by its quaternion, as a hinge by its angle (MuJoCo's ball has no ``ref``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sls.model.tree import BALL as TREE_BALL
from sls.model.tree import FREE as TREE_FREE
from sls.model.tree import Base, Inertial, Joint, MujocoLayout, Robot
from sls.readers.mjcf import frames
from sls.readers.mjcf.frames import Matrix
from sls.readers.urdf.structure import WRENCH_SUFFIXES

#: MuJoCo's joint types (``mjtJoint``).
FREE, BALL, SLIDE, HINGE = 0, 1, 2, 3
#: What a MuJoCo joint type becomes in the tree.
TREE_KIND = {HINGE: "continuous", SLIDE: "prismatic", BALL: TREE_BALL}
ZERO = (0.0, 0.0, 0.0)
#: Where a free joint's seven coordinates (``x y z qx qy qz qw``, the free-flyer's) sit in its ``qpos`` entries
#: (MuJoCo's ``x y z qw qx qy qz``).
FREE_QPOS = (0, 1, 2, 4, 5, 6, 3)
#: Where a ball joint's four coordinates (``qx qy qz qw``) sit in its ``qpos`` entries (MuJoCo's ``qw qx qy qz``).
BALL_QPOS = (1, 2, 3, 0)
#: Per MuJoCo joint type: the places of its coordinates in its ``qpos`` entries, and its number of ``qvel`` entries.
LAYOUT: dict[int, tuple[tuple[int, ...], int]] = {
    FREE: (FREE_QPOS, 6),
    BALL: (BALL_QPOS, 3),
    SLIDE: ((0,), 1),
    HINGE: ((0,), 1),
}


def element_name(m: Any, kind: str, index: int, unnamed: str) -> str:
    """The name of element ``index`` of ``kind`` (``"body"``, ``"joint"``, ``"actuator"``, ...), or
    ``<unnamed><index>`` when the file gives none."""
    return getattr(m, kind)(index).name or f"{unnamed}{index}"


@dataclass
class _Builder:
    """The tree as it is built: joints in tree order, inertials by link, names taken."""

    joints: list = field(default_factory=list)
    inertials: dict = field(default_factory=dict)
    taken: set = field(default_factory=set)
    joint_names: set = field(default_factory=set)

    def unique(self, name: str, taken: set) -> str:
        candidate, k = name, 1
        while candidate in taken:
            k += 1
            candidate = f"{name}_{k}"
        taken.add(candidate)
        return candidate

    def link(self, name: str) -> str:
        """A new link ``name`` (made unique), massless until given an inertial."""
        link = self.unique(name, self.taken)
        self.inertials[link] = None
        return link

    def add(self, name: str, kind: str, parent: str, child: str, xyz: tuple, rotation: Matrix, **extra: Any) -> None:
        """A joint from ``parent`` to ``child`` with origin ``(xyz, rotation)``; near pitch ±π/2 the origin's
        rotation goes on a fixed joint to a massless link first (see :func:`~sls.readers.mjcf.frames.rpy_chain`)."""
        chain = frames.rpy_chain(rotation)
        if len(chain) == 2:
            middle = self.link(f"{child}_frame")
            frame = self.unique(f"{name}_frame", self.joint_names)
            self.joints.append(Joint(frame, "fixed", parent, middle, xyz, chain[0], (1.0, 0.0, 0.0), 0.0))
            parent, xyz = middle, ZERO
        axis = extra.pop("axis", (1.0, 0.0, 0.0))
        damping = extra.pop("damping", 0.0)
        self.joints.append(Joint(name, kind, parent, child, tuple(xyz), chain[-1], axis, damping, **extra))


def read_tree(m: Any, filename: str, *, damping: bool = True, friction: bool = True) -> Robot:
    """The tree of the compiled model ``m`` (hinge, slide, ball and free joints; the caller refused the rest).

    ``damping``/``friction``: whether the joints keep their ``damping``/``frictionloss`` (off when the file's
    ``<option><flag>`` disables them). Gravity not along −z of the world gets a root link below the world,
    turned so that gravity is along its −z (:func:`~sls.readers.mjcf.frames.gravity_rotation`).
    """
    build = _Builder()
    bodies = [element_name(m, "body", b, "body") for b in range(m.nbody)]
    build.taken.update(bodies)
    names = [element_name(m, "joint", j, "jnt") for j in range(m.njnt)]
    build.joint_names.update(names)
    world = bodies[0]
    build.inertials[world] = None
    root = world
    gravity = tuple(float(v) for v in m.opt.gravity)
    if any(gravity[:2]) or gravity[2] > 0:
        root = build.link("gravity_frame")
        rotation = frames.gravity_rotation(gravity)
        build.add(build.unique("gravity_frame", build.joint_names), "fixed", root, world, ZERO, rotation)
    places: dict[int, tuple[str, tuple]] = {0: (world, ZERO)}  # body → (link, the body's origin in that link)
    coordinates = []  # MuJoCo's joint ids, in the order of the tree's slots
    bases: list = []
    for b in range(1, m.nbody):
        link, offset = places[int(m.body_parentid[b])]
        xyz = tuple(offset[i] + float(m.body_pos[b][i]) for i in range(3))
        rotation = frames.quat_matrix(m.body_quat[b])
        joints = range(int(m.body_jntadr[b]), int(m.body_jntadr[b]) + int(m.body_jntnum[b]))
        if joints and int(m.jnt_type[joints[0]]) == FREE:  # alone in its body (MuJoCo's rule), a body of the world
            free = joints[0]
            build.joints.append(Joint(names[free], TREE_FREE, link, bodies[b], offset, ZERO, (1.0, 0.0, 0.0), 0.0))
            bases.append(_free_base(names[free], bodies[b]))
            coordinates.append(free)
            build.inertials[bodies[b]] = _inertial(m, b, ZERO)
            places[b] = (bodies[b], ZERO)
            continue
        if not joints:
            build.add(build.unique(f"{bodies[b]}_fixed", build.joint_names), "fixed", link, bodies[b], xyz, rotation)
            link, offset = bodies[b], ZERO
        for k, j in enumerate(joints):
            child = bodies[b] if k == len(joints) - 1 else build.link(f"{bodies[b]}_{names[j]}")
            axis = tuple(float(v) for v in m.jnt_axis[j])
            ref = float(m.qpos0[m.jnt_qposadr[j]])
            dof = int(m.jnt_dofadr[j])
            anchor = tuple(float(v) for v in m.jnt_pos[j]) if m.jnt_type[j] in (HINGE, BALL) else ZERO
            if m.jnt_type[j] == BALL:  # turned about the anchor by its quaternion, no ref
                origin = tuple(x + v for x, v in zip(xyz, frames.apply(rotation, anchor)))
            elif m.jnt_type[j] == HINGE:
                origin = tuple(x + v for x, v in zip(xyz, frames.apply(rotation, anchor)))
                rotation = frames.matmul(rotation, frames.axis_rotation(axis, -ref))
            else:
                origin = tuple(x - ref * v for x, v in zip(xyz, frames.apply(rotation, axis)))
            build.add(
                names[j],
                TREE_KIND[int(m.jnt_type[j])],
                link,
                child,
                origin,
                rotation,
                axis=axis,
                damping=float(m.dof_damping[dof]) if damping and m.jnt_type[j] != BALL else 0.0,
                friction=float(m.dof_frictionloss[dof]) if friction and m.jnt_type[j] != BALL else 0.0,
            )
            coordinates.append(j)
            link, xyz, rotation = child, tuple(-v for v in anchor), frames.IDENTITY
            offset = xyz
        build.inertials[bodies[b]] = _inertial(m, b, offset)
        places[b] = (link, offset)
    # the free joints' linear speeds are in their body's frame where MuJoCo's are in the world's
    layouts = [LAYOUT[int(m.jnt_type[j])] for j in coordinates]
    qpos = tuple(int(m.jnt_qposadr[j]) + k for j, (order, _) in zip(coordinates, layouts) for k in order)
    qvel = tuple(int(m.jnt_dofadr[j]) + k for j, (_, n_v) in zip(coordinates, layouts) for k in range(n_v))
    armature = tuple(float(m.dof_armature[k]) for k in qvel)
    return Robot(
        root=root,
        joints=tuple(build.joints),
        inertials=build.inertials,
        bases=tuple(bases),
        name=m.names.split(b"\0", 1)[0].decode(errors="replace"),
        armature=armature,
        mujoco=MujocoLayout(nq=int(m.nq), nv=int(m.nv), qpos=qpos, qvel=qvel),
    )


def _free_base(joint: str, link: str) -> Base:
    """The free joint as a base of the tree: its body wrench (forces, then moments, along the body's axes) is
    what a file without actuators drives it with (``<joint>_fx`` … ``<joint>_mz``)."""
    unit = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)) * 2
    wrench = tuple(
        (suffix, direction if k < 3 else None, direction if k >= 3 else None)
        for k, (suffix, direction) in enumerate(zip(WRENCH_SUFFIXES, unit))
    )
    return Base(joint, TREE_FREE, (joint,), link, wrench)


def _inertial(m: Any, b: int, offset: tuple) -> Inertial:
    """Body ``b``'s mass, centre of mass and inertia in its link's frame (the body's frame shifted by ``offset``)."""
    R = frames.quat_matrix(m.body_iquat[b])
    principal = [float(v) for v in m.body_inertia[b]]
    inertia = tuple(tuple(sum(R[i][k] * principal[k] * R[j][k] for k in range(3)) for j in range(3)) for i in range(3))
    com = tuple(offset[i] + float(m.body_ipos[b][i]) for i in range(3))
    return Inertial(mass=float(m.body_mass[b]), com=com, inertia=inertia)
