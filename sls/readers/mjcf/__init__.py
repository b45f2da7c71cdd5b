"""Stage 1 for MuJoCo models: an MJCF file → a :class:`~sls.model.Model` (the face of the MJCF reader).

The file is compiled by MuJoCo itself (the optional ``mujoco`` package, ``pip install "sls[mujoco]"``), which
resolves includes, defaults, ``fromto``, ``inertiafromgeom`` and meshes; sls reads the compiled ``mjModel``:

* bodies (``body_parentid``, ``body_pos``, ``body_quat``, ``body_mass``, ``body_ipos``, ``body_iquat``,
  ``body_inertia``) and hinge and slide joints (``jnt_type``, ``jnt_axis``, ``jnt_pos``, ``qpos0``), built into
  the tree the URDF reader builds (:class:`~sls.model.tree.Robot`; :mod:`~sls.readers.mjcf.structure`), so the
  tree route derives the dynamics; a free joint as the model's first joint is the quaternion free-flyer base
  (:mod:`sls.model.free_flyer`, Pinocchio's layout; ball joints are refused);
* joint ``armature`` (on ``M``'s diagonal), ``damping`` and ``frictionloss`` (the URDF reader's
  ``damping_<joint>``, ``friction_<joint>`` parameters: ``damping·q̇ + friction·tanh(q̇/friction_velocity)``),
  ``stiffness`` and ``springref`` (``½ stiffness_<joint> (q − springref_<joint>)²`` in ``V``);
* gravity from ``<option gravity>`` (the parameter ``g``, its size; any direction);
* actuators as the inputs, in MuJoCo's order and names (:mod:`~sls.readers.mjcf.actuators`).

What sls does not model is refused in one line naming the element (:mod:`~sls.readers.mjcf.checks`); contacts
and limits are left out. Modules: :mod:`~sls.readers.mjcf.compile` (MuJoCo's compiler),
:mod:`~sls.readers.mjcf.frames` (rotations), :mod:`~sls.readers.mjcf.structure`,
:mod:`~sls.readers.mjcf.actuators`, :mod:`~sls.readers.mjcf.checks`, :mod:`~sls.readers.mjcf.load`
(:func:`load_mjcf`, :func:`load_mjcf_table`). ``docs/mjcf.md`` is the user's page.
"""

from __future__ import annotations

from sls.readers.mjcf.compile import INSTALL_HINT, MujocoWarning, compile_mjcf
from sls.readers.mjcf.load import (
    MJCF_FILE_KEYS,
    MJCF_SUFFIXES,
    MJCF_TABLE_KEYS,
    SPRINGREF_PREFIX,
    STIFFNESS_PREFIX,
    load_mjcf,
    load_mjcf_table,
)

__all__ = [
    "INSTALL_HINT",
    "MJCF_FILE_KEYS",
    "MJCF_SUFFIXES",
    "MJCF_TABLE_KEYS",
    "SPRINGREF_PREFIX",
    "STIFFNESS_PREFIX",
    "MujocoWarning",
    "compile_mjcf",
    "load_mjcf",
    "load_mjcf_table",
]
