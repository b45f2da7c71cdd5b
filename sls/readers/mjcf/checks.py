"""What an MJCF model may hold for sls to read it (:func:`refuse_unsupported`): each element sls cannot model
is refused in one line naming it and saying why. Contacts, joint and tendon limits, inactive equality
constraints and the controls' and forces' ranges are left out without a word (``docs/mjcf.md`` says so)."""

from __future__ import annotations

from typing import Any

from sls.errors import ModelFileError
from sls.readers.mjcf import actuators as act
from sls.readers.mjcf.structure import BALL, FREE, element_name

#: The ``<option><flag>`` bits sls reads (``mjtDisableBit``).
DISABLE_CONSTRAINT, DISABLE_FRICTIONLOSS, DISABLE_SPRING, DISABLE_DAMPER, DISABLE_GRAVITY = 1, 4, 32, 64, 128
DISABLE_ACTUATION = 2048
_EQUALITY_KINDS = ("connect", "weld", "joint", "tendon", "flex")


def _nonzero(m: Any, name: str, index: int) -> bool:
    """Whether ``m.<name>[index]`` exists (MuJoCo versions differ) and holds a non-zero entry."""
    values = getattr(m, name, None)
    if values is None or len(values) <= index:
        return False
    row = values[index]
    return bool(getattr(row, "any", lambda: row != 0)())


def refuse_unsupported(m: Any, filename: str) -> None:
    """Raise :class:`~sls.errors.ModelFileError` (one line, starting with ``filename``) for the first element
    sls does not model: free and ball joints with springs, friction, armature or actuators
    (:func:`_check_quaternion_joint`), active
    equality constraints other than joint and fixed-tendon ones (:func:`_check_equality`), fluid forces, gravity
    compensation,
    flexes, plugins, nonlinear springs and dampers, tendons with springs, dampers, friction or armature, spatial
    tendons an actuator drives, and actuators other than those :mod:`~sls.readers.mjcf.actuators` reads."""

    def fail(message: str) -> None:
        raise ModelFileError(f"{filename}: {message}")

    for j in range(m.njnt):
        kind = int(m.jnt_type[j])
        if kind in (FREE, BALL):
            _check_quaternion_joint(m, j, fail)
        for field, what in (
            ("jnt_stiffnesspoly", "a nonlinear spring (stiffnesspoly)"),
            ("jnt_springyield", "a yielding spring (springyield)"),
            ("dof_dampingpoly", "a nonlinear damper (dampingpoly)"),
        ):
            index = int(m.jnt_dofadr[j]) if field.startswith("dof") else j
            if _nonzero(m, field, index):
                name = element_name(m, "joint", j, "jnt")
                fail(f"joint '{name}' has {what}: only linear springs and dampers are read")
    if m.njnt == 0:
        fail("the model has no joints: nothing moves (sls reads hinge, slide, ball and free joints)")
    for e in range(m.neq):
        if m.eq_active0[e]:
            _check_equality(m, e, fail)
    if m.opt.density > 0 or m.opt.viscosity > 0:
        fail(
            f'<option density="{m.opt.density:g}" viscosity="{m.opt.viscosity:g}">: MuJoCo\'s fluid forces are not '
            'modelled; set density="0" and viscosity="0" to generate the model without them'
        )
    for b in range(m.nbody):
        if m.body_gravcomp[b] != 0:
            fail(f"body '{element_name(m, 'body', b, 'body')}' has gravcomp: gravity compensation is not modelled")
    for count, what in (("nflex", "flexes (deformable bodies)"), ("nplugin", "plugins")):
        if getattr(m, count, 0):
            fail(f"the model has {what}: sls models rigid bodies with hinge, slide, ball and free joints only")
    driven = {int(m.actuator_trnid[i][0]) for i in range(m.nu) if int(m.actuator_trntype[i]) == act.TRN_TENDON}
    for t in range(m.ntendon):
        name = element_name(m, "tendon", t, "tendon")
        for field in ("tendon_stiffness", "tendon_damping", "tendon_frictionloss", "tendon_armature"):
            if _nonzero(m, field, t):
                fail(
                    f"tendon '{name}' has {field.split('_')[1]}: tendon springs, dampers, friction and armature "
                    "are not read from MJCF yet"
                )
        if t in driven and act.fixed_tendon(m, t) is None:
            fail(f"actuator on tendon '{name}': a spatial tendon's length is not modelled (fixed tendons only)")
    _check_actuators(m, fail)


def _check_equality(m: Any, e: int, fail: Any) -> None:
    """An active equality constraint is read when it couples hinge or slide joints, or fixed tendons
    (:mod:`sls.readers.mjcf.equality`), also on a model with free or ball joints (their speeds are not in the
    constraints: only hinge and slide joints are)."""
    code = int(m.eq_type[e])
    shape = _EQUALITY_KINDS[code] if code < len(_EQUALITY_KINDS) else "equality"
    name = f"equality constraint '{element_name(m, 'eq', e, 'equality')}' ({shape})"
    if shape not in ("joint", "tendon"):
        fail(
            f"{name}: only joint and fixed-tendon equalities are read from MJCF; remove it or make it inactive "
            '(active="false")'
        )
    if shape == "tendon":
        for t in (int(m.eq_obj1id[e]), int(m.eq_obj2id[e])):
            if t >= 0 and act.fixed_tendon(m, t) is None:
                tendon = element_name(m, "tendon", t, "tendon")
                fail(f"{name}: tendon '{tendon}' is spatial; only fixed tendons (joint wraps) have a length sls models")


def _check_quaternion_joint(m: Any, j: int, fail: Any) -> None:
    """A free joint is read as a quaternion free-flyer, a ball joint as a quaternion ball joint
    (:mod:`sls.model.free_flyer`), without what would not act as MuJoCo's on their speeds (a spring, frictionloss,
    an actuator, dofs that differ in damping or armature). Armature is read: the same on every dof, it is the
    energy ``½ a |ν|²`` in MuJoCo's speeds and in sls's (:meth:`sls.derive.tree_route.TreeTerms._armature_turning`)."""
    name = element_name(m, "joint", j, "jnt")
    kind = "free" if int(m.jnt_type[j]) == FREE else "ball"
    dofs = range(int(m.jnt_dofadr[j]), int(m.jnt_dofadr[j]) + (6 if kind == "free" else 3))
    spring = float(m.jnt_stiffness[j]) != 0 and not int(m.opt.disableflags) & DISABLE_SPRING
    friction = any(float(m.dof_frictionloss[k]) != 0 for k in dofs)
    friction = friction and not int(m.opt.disableflags) & (DISABLE_FRICTIONLOSS | DISABLE_CONSTRAINT)
    if spring or friction:
        what = "stiffness (a spring)" if spring else "frictionloss"
        fail(f"{kind} joint '{name}' has {what}: not read on a {kind} joint; remove it")
    for field in ("damping", "armature"):
        if len({float(getattr(m, f"dof_{field}")[k]) for k in dofs}) > 1:
            fail(f"{kind} joint '{name}': its {len(dofs)} dofs differ in {field}: not read")
    for i in range(m.nu):
        if int(m.actuator_trntype[i]) in (act.TRN_JOINT, act.TRN_JOINTINPARENT) and int(m.actuator_trnid[i][0]) == j:
            fail(
                f"actuator '{element_name(m, 'actuator', i, 'act')}' drives the {kind} joint '{name}': not read "
                "(actuators on hinge and slide joints and fixed tendons only)"
            )


#: How to read a file whose actuators sls does not model.
WITHOUT_ACTUATORS = "; --no-actuators ([mjcf] actuators = false) reads it with a force on every joint instead"


def _check_actuators(m: Any, refuse: Any) -> None:
    def fail(message: str) -> None:
        refuse(message + WITHOUT_ACTUATORS)

    if m.nu and (int(m.opt.disableflags) & DISABLE_ACTUATION or int(getattr(m.opt, "disableactuator", 0))):
        fail("<option> disables actuators: sls reads every actuator of the file; remove the flag")
    for i in range(m.nu):
        what = f"actuator '{element_name(m, 'actuator', i, 'act')}'"
        if int(m.actuator_dyntype[i]) != act.DYN_NONE:
            fail(
                f"{what} has activation dynamics (dyntype): only actuators without them (motor, position, velocity, "
                'general with dyntype="none") are read'
            )
        if int(m.actuator_gaintype[i]) not in (act.GAIN_FIXED, act.GAIN_AFFINE):
            fail(f"{what}: its gaintype is not fixed or affine (muscle, user, ...): not modelled")
        if int(m.actuator_biastype[i]) not in (act.BIAS_NONE, act.BIAS_AFFINE):
            fail(f"{what}: its biastype is not none or affine (muscle, user, ...): not modelled")
        if int(m.actuator_trntype[i]) not in (act.TRN_JOINT, act.TRN_JOINTINPARENT, act.TRN_TENDON):
            fail(f"{what} acts through a site, body or slider-crank: only joints and fixed tendons are read")
        for field in ("actuator_armature", "actuator_damping", "actuator_dampingpoly", "actuator_delay"):
            if _nonzero(m, field, i):
                fail(f"{what} has {field.split('_', 1)[1]}: not read from MJCF yet")
        ctrlnum = getattr(m, "actuator_ctrlnum", None)
        if ctrlnum is not None and int(ctrlnum[i]) != 1:
            fail(f"{what} takes {int(ctrlnum[i])} controls: actuators with one control only")
