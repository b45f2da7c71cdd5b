"""The registry of generated functions: one list every backend renders from.

Each :class:`Function` names a generated function, its arguments, its
outputs with their shapes (in terms of ``n`` degrees of freedom and ``m``
inputs), the arrays of :func:`sls.derive.function_arrays` it evaluates and a
one-line summary. The Python target writes one module per function, the C
target one C function (plus batch entry points for the solving functions);
both take names, argument lists, shapes and docs from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a type only: no import at run time
    from sls.model import Model


from sls.function_types import (  # noqa: F401 (the registry's types, used by every stage as sls.functions.X)
    ACCELERATION,
    ACCELERATIONS,
    DIRECTION,
    INPUT,
    LINEARIZATION,
    MULTIPLIERS_ARGUMENT,
    STATE,
    Argument,
    Function,
    model_sizes,
    sizes,
)


def _array(name: str, summary: str, output: str, shape: tuple, arguments: tuple = (STATE,)) -> Function:
    return Function(name, summary, arguments, ((output, shape),), (output,))


def _jacobian(name: str, summary: str, output: str, shape: tuple) -> Function:
    return Function(name, summary, (STATE,), ((output, shape),), (output,), jacobian=True)


#: Every generated function, in the order of the generated package's ``__init__``.
FUNCTIONS = (
    _array("M_fun", "Mass matrix M(q) = d2T/dqdot2 (symmetric positive definite).", "M", ("n", "n")),
    _jacobian(
        "M_jac_fun",
        "Jacobian of the mass matrix: M_jac[:, :, i] = dM/dx_i (zero for the qdot half).",
        "M_jac",
        ("n", "n", "x"),
    ),
    _array(
        "C_fun",
        "Coriolis matrix C(q, qdot), C_kj = sum_i c_ijk qdot_i with the Christoffel symbols c_ijk.",
        "C",
        ("n", "n"),
    ),
    _jacobian("C_jac_fun", "Jacobian of the Coriolis matrix: C_jac[:, :, i] = dC/dx_i.", "C_jac", ("n", "n", "x")),
    _array("phi_fun", "Potential forces phi(q) = dV/dq.", "phi", ("n",)),
    _jacobian("phi_jac_fun", "Jacobian of the potential forces: phi_jac[:, i] = dphi/dx_i.", "phi_jac", ("n", "x")),
    _array(
        "fric_fun",
        "Friction forces fric(q, qdot) (left-hand side: M qddot + C qdot + phi = B_u u - fric).",
        "fric",
        ("n",),
    ),
    _jacobian("fric_jac_fun", "Jacobian of the friction forces: fric_jac[:, i] = dfric/dx_i.", "fric_jac", ("n", "x")),
    _array(
        "input_matrix_fun",
        "Input matrix B_u(x) = d(forces)/du (the identity for a fully actuated model).",
        "B_u",
        ("n", "m"),
    ),
    _jacobian(
        "input_matrix_jac_fun",
        "Jacobian of the input matrix: input_matrix_jac[:, :, i] = dB_u/dx_i.",
        "B_u_jac",
        ("n", "m", "x"),
    ),
    _array("T_fun", "Kinetic energy T(x) = 1/2 qdot' M(q) qdot.", "T", ()),
    _array("V_fun", "Potential energy V(q).", "V", ()),
    _array(
        "tau_fun",
        "Inverse dynamics: generalized forces M qddot + C qdot + phi + fric for a given qddot.",
        "tau",
        ("n",),
        (STATE, ACCELERATION),
    ),
    Function(
        "qddot_fun",
        "Forward dynamics: qddot = M^-1 (B_u u - C qdot - phi - fric), by a linear solve.",
        (STATE, INPUT),
        (("qddot", ("n",)),),
        ("M", "rhs"),
        solve=ACCELERATIONS,
    ),
    Function(
        "linearized_model",
        "Linearization (A, B) of xdot = f(x, u) = [qdot; qddot] at (x, u).",
        (STATE, INPUT),
        (("A", ("2n", "2n")), ("B", ("2n", "m"))),
        ("M", "rhs", "dM", "drhs", "B_u"),
        solve=LINEARIZATION,
        graph_arrays=("M", "rhs", "residual_jac", "B_u"),
    ),
    Function(
        "xdot_fun",
        "State derivative xdot = f(x, u) = [qdot; qddot], the right-hand side scipy.integrate.solve_ivp wants.",
        (STATE, INPUT),
        (("xdot", ("x",)),),
        (),
        uses="qddot_fun",
    ),
)

#: A constrained model's extra array functions of x (k constraints, holonomic rows first).
CONSTRAINT_FUNCTIONS = (
    _array("constraint_fun", "Constraint values [c(q); a(q) qdot] (zero on the constrained motion).", "c", ("k",)),
    _jacobian(
        "constraint_jac_fun",
        "Constraint Jacobian A(q) (rows dc/dq, then the rows a(q) of the velocity constraints): A qdot = 0.",
        "A",
        ("k", "n"),
    ),
    _jacobian(
        "constraint_jac_jac_fun",
        "Jacobian of the constraint Jacobian: constraint_jac_jac[:, :, i] = dA/dx_i (zero for the qdot half).",
        "A_jac",
        ("k", "n", "x"),
    ),
    _array(
        "constraint_bias_fun",
        "Constraint bias g(x) = -dA/dt qdot (minus the Baumgarte terms, if any): A qddot = g.",
        "bias",
        ("k",),
    ),
    _jacobian(
        "constraint_bias_jac_fun",
        "Jacobian of the constraint bias: constraint_bias_jac[:, i] = dg/dx_i.",
        "bias_jac",
        ("k", "x"),
    ),
    Function(
        "constrained_residual_jac_fun",
        "Jacobian of the constrained residual [r - A' lam; A qddot - g] (r = M qddot + C qdot + phi + fric - B_u u) "
        "with respect to x at fixed qddot, lam and u: the right-hand sides of the constrained linearization.",
        (STATE, INPUT, ACCELERATION, MULTIPLIERS_ARGUMENT),
        (("kkt_jac", ("nk", "x")),),
        ("kkt_jac",),
    ),
)
#: The regressor of a robot whose inertial parameters are parameters (:mod:`sls.model.inertial`): ``τ = Y π``.
REGRESSOR = _array(
    "regressor_fun",
    "Regressor Y(x, qddot) = d(tau)/d(PI): tau_fun(x, qddot) = Y @ PI, one column per name of PI_NAMES.",
    "regressor",
    ("n", "p"),
    (STATE, ACCELERATION),
)
#: A model with generalized speeds' kinematics ``q̇ = S(q) v`` and its Jacobian (the upper rows of ``A``).
SPEED_FUNCTIONS = (
    _array("qdot_fun", "Kinematics qdot = S(q) v: the coordinates' rates from the generalized speeds.", "qdot", ("q",)),
    _jacobian("qdot_jac_fun", "Jacobian of the kinematics: qdot_jac[:, i] = d(S(q) v)/dx_i.", "qdot_jac", ("q", "x")),
)
#: A robot's frame functions (``model.frames``: f links; :mod:`sls.derive.tree_frames` has the conventions).
FRAME_FUNCTIONS = (
    _array(
        "frame_pose_fun",
        "World poses [[R, p], [0, 0, 0, 1]] of the frames in FRAMES.",
        "frame_pose",
        ("f", 4, 4),
    ),
    _array(
        "frame_jacobian_fun",
        "Frame Jacobians J (linear rows first) at each frame's origin in world axes: [pdot; w] = J v.",
        "frame_jacobian",
        ("f", 6, "n"),
    ),
    _array(
        "frame_jacobian_local_fun",
        "Frame Jacobians in each frame's own axes (Pinocchio's LOCAL): [R' pdot; R' w] = J_local v.",
        "frame_jacobian_local",
        ("f", 6, "n"),
    ),
    _array(
        "frame_jdot_v_fun",
        "Classical acceleration drift Jdot v of each frame (origin, world axes): [pddot; wdot] at vdot = 0.",
        "frame_jdot_v",
        ("f", 6),
    ),
    _array("com_fun", "Centre of mass of the robot, in the world frame.", "com", (3,)),
    _array(
        "com_jacobian_fun", "Jacobian of the centre of mass: its velocity is com_jacobian v.", "com_jacobian", (3, "n")
    ),
)

#: The directional derivatives of ``M``, ``C`` and ``B_u`` (their Jacobians times a direction ``dx``): a model whose
#: Jacobians have too many entries to write one by one (``Model.jacobians == "directions"``) gets these, and its
#: ``M_jac_fun``, ``C_jac_fun`` and ``input_matrix_jac_fun`` evaluate them along every state direction at once
#: (:data:`BY_DIRECTIONS`).
DIRECTIONAL_FUNCTIONS = (
    Function(
        "M_dir_fun",
        "Directional derivative of the mass matrix: M_dir = sum_i dM/dx_i dx_i (M_jac times dx).",
        (STATE, DIRECTION),
        (("M_dir", ("n", "n")),),
        ("M_dir",),
        batch_only=True,
    ),
    Function(
        "C_dir_fun",
        "Directional derivative of the Coriolis matrix: C_dir = sum_i dC/dx_i dx_i (C_jac times dx).",
        (STATE, DIRECTION),
        (("C_dir", ("n", "n")),),
        ("C_dir",),
        batch_only=True,
    ),
    Function(
        "input_matrix_dir_fun",
        "Directional derivative of the input matrix: B_u_dir = sum_i dB_u/dx_i dx_i (input_matrix_jac times dx).",
        (STATE, DIRECTION),
        (("B_u_dir", ("n", "m")),),
        ("B_u_dir",),
        batch_only=True,
    ),
)
DIRECTIONAL_FUNCTION_NAMES = tuple(f.name for f in DIRECTIONAL_FUNCTIONS)
#: The state directions a Jacobian by directions evaluates its directional function along: ``"q"``, the first n_q
#: (``M`` depends on the coordinates alone; its columns along the speeds are zero), or ``"x"``, all of them.
DIRECTIONS_USED = {"M_dir_fun": "q", "C_dir_fun": "x", "input_matrix_dir_fun": "x"}
#: The Jacobian modules computed from a directional function, one state direction per batch entry.
BY_DIRECTIONS = {"M_jac_fun": "M_dir_fun", "C_jac_fun": "C_dir_fun", "input_matrix_jac_fun": "input_matrix_dir_fun"}
#: A model's Jacobians are written by directions from this many entries of ``C_jac`` (n·n·len(x)): TIAGo dual-arm
#: (n = 101, 2.1 million) and dm_control's dog (85, 1.2 million) are; G1 with hands (49 speeds, 0.26 million) is not.
DIRECTIONS_FROM = 1_000_000


def jacobians_by_directions(model: Model) -> bool:
    """True when ``C_jac`` of ``model`` would have at least :data:`DIRECTIONS_FROM` entries."""
    return model.n * model.n * len(model.state) >= DIRECTIONS_FROM


def directions_used(function: Function, model: Model) -> int:
    """How many state directions (the first ones) the Jacobian ``function``, a wrapper of a directional function,
    evaluates it along (:data:`DIRECTIONS_USED`)."""
    assert function.uses is not None
    return model_sizes((DIRECTIONS_USED[function.uses],), model)[0]


def _by_directions(result: tuple) -> tuple:
    """``result`` with the Jacobian modules of :data:`BY_DIRECTIONS` as wrappers of the
    :data:`DIRECTIONAL_FUNCTIONS` (each just before its wrapper)."""
    directional = {f.name: f for f in DIRECTIONAL_FUNCTIONS}
    out: list = []
    for f in result:
        if f.name in BY_DIRECTIONS:
            out.append(directional[BY_DIRECTIONS[f.name]])
            f = replace(f, arrays=(), uses=BY_DIRECTIONS[f.name])
        out.append(f)
    return tuple(out)


#: What the functions of a model with generalized speeds call besides their own kernels.
SPEED_CALLS = {
    "xdot_fun": ("qdot_fun",),
    "linearized_model": ("qdot_jac_fun",),
    "contact_forces_jac_fun": ("qdot_jac_fun",),
}

#: The constraint forces' multipliers of a constrained model (solved at run time).
MULTIPLIERS = Function(
    "multipliers_fun",
    "Constraint multipliers lambda (M qddot + ... = B_u u - fric + A' lambda).",
    (STATE, INPUT),
    (("lambda", ("k",)),),
    (),
    numeric=True,
)


#: The forces of a robot's point contacts on it (world axes), from the multipliers (solved at run time).
CONTACT_FORCES = Function(
    "contact_forces_fun",
    "Contact forces: the force each point contact exerts on the robot, world axes (CONTACTS x 3).",
    (STATE, INPUT),
    (("forces", ("c", 3)),),
    (),
    numeric=True,
)

#: The derivatives of the contact forces (:data:`CONTACT_FORCES`) along the tangent space of the state and the inputs.
CONTACT_FORCES_JAC = Function(
    "contact_forces_jac_fun",
    "Derivatives of the contact forces: (dF/dx, dF/du), dF/dx[i, j, :] the tangent-space row of force entry (i, j).",
    (STATE, INPUT),
    (("dforces_dx", ("c", 3, "2n")), ("dforces_du", ("c", 3, "m"))),
    (),
    numeric=True,
)

#: The wrenches of a robot's contacts when one of them is 6-D: force then moment at each contact's origin, world axes
#: (a point contact's moment is zero).
CONTACT_WRENCHES = replace(
    CONTACT_FORCES,
    summary="Contact wrenches: the force and moment each contact exerts on the robot at its origin, world axes "
    "(CONTACTS x 6; a point contact's moment is zero).",
    outputs=(("forces", ("c", 6)),),
)

#: The derivatives of the contact wrenches (:data:`CONTACT_WRENCHES`).
CONTACT_WRENCHES_JAC = replace(
    CONTACT_FORCES_JAC,
    summary="Derivatives of the contact wrenches: (dF/dx, dF/du), dF/dx[i, j, :] the tangent-space row of wrench "
    "entry (i, j).",
    outputs=(("dforces_dx", ("c", 6, "2n")), ("dforces_du", ("c", 6, "m"))),
)


def available(model: Model) -> tuple:
    """Every function ``model``'s package can hold, in the order of its ``__init__``.

    A constrained model adds the constraint functions and ``multipliers_fun``;
    its ``qddot_fun`` and ``linearized_model`` solve at run time with the
    constraints (:data:`Function.numeric`).
    """
    if getattr(model, "jacobians", "entries") == "directions":
        return _with_regressor(_by_directions(_available(model)), model)
    return _with_regressor(_available(model), model)


def _with_regressor(result: tuple, model: Model) -> tuple:
    """``result`` with :data:`REGRESSOR` after ``tau_fun`` when ``model`` has inertial parameters."""
    from sls.model.inertial import regressor_names

    if not regressor_names(model):
        return result
    at = next(k for k, f in enumerate(result) if f.name == "tau_fun") + 1
    return result[:at] + (REGRESSOR,) + result[at:]


def _available(model: Model) -> tuple:
    speeds = getattr(model, "kinematics", None) is not None
    frames: tuple = FRAME_FUNCTIONS if getattr(model, "frames", ()) else ()
    if getattr(model, "frame_points", ()):  # frames of a model given by its energies: no centre of mass
        frames = tuple(f for f in frames if not f.name.startswith("com"))
    if not getattr(model, "constrained", False) and not speeds and not frames:
        return FUNCTIONS
    constrained = getattr(model, "constrained", False)
    arrays = tuple(f for f in FUNCTIONS if not f.solve and not f.uses)
    solves = tuple(replace(f, numeric=constrained) for f in FUNCTIONS if f.solve)
    extra = (CONSTRAINT_FUNCTIONS if constrained else ()) + (SPEED_FUNCTIONS if speeds else ()) + frames
    kinds = {kind for _, kind in getattr(model, "contacts", ())}
    contacts = (
        ((CONTACT_WRENCHES, CONTACT_WRENCHES_JAC) if "6d" in kinds else (CONTACT_FORCES, CONTACT_FORCES_JAC))
        if kinds
        else ()
    )
    multipliers = ((MULTIPLIERS,) if constrained else ()) + contacts
    result = arrays + extra + solves + multipliers + tuple(f for f in FUNCTIONS if f.uses)
    if speeds:
        result = tuple(replace(f, calls=SPEED_CALLS.get(f.name, ())) for f in result)
    return result


def for_model(model: Model) -> tuple:
    """The functions of ``model``'s package, in the order of its ``__init__``: every one of
    :func:`available`, or those ``model.functions`` chooses with what they need (:func:`needed`)."""
    full = available(model)
    chosen = getattr(model, "functions", None)
    if not chosen:
        return full
    keep = needed(full, chosen)
    return tuple(f for f in full if f.name in keep)


#: What a constrained model's run-time solves (``_constrained.py``) call.
CONSTRAINED_NEEDS = (
    "M_fun",
    "input_matrix_fun",
    "tau_fun",
    "constraint_jac_fun",
    "constraint_bias_fun",
)
#: What a constrained model's run-time derivatives (``linearized_model``, ``contact_forces_jac_fun``) call besides.
CONSTRAINED_DERIVATIVE_NEEDS = ("constrained_residual_jac_fun",)


def differentiates(function: Function) -> bool:
    """True for a constrained model's run-time solve that differentiates the constrained dynamics (it calls
    :data:`CONSTRAINED_DERIVATIVE_NEEDS`)."""
    return function.numeric and (function.solve == LINEARIZATION or function.name == CONTACT_FORCES_JAC.name)


def needed(full: tuple, chosen: Sequence[str]) -> set:
    """The names of ``chosen`` and of every function they call (``xdot_fun`` calls ``qddot_fun``; a
    constrained model's solves call :data:`CONSTRAINED_NEEDS`, its derivatives :data:`CONSTRAINED_DERIVATIVE_NEEDS`
    too), among the functions ``full``."""
    by_name = {f.name: f for f in full}
    keep: set = set()
    todo = list(chosen)
    while todo:
        name = todo.pop()
        if name in keep:
            continue
        keep.add(name)
        function = by_name[name]
        todo += [function.uses] if function.uses else []
        todo += list(CONSTRAINED_NEEDS) if function.numeric else []
        todo += list(CONSTRAINED_DERIVATIVE_NEEDS) if differentiates(function) else []
        todo += list(function.calls)
    return keep


#: Other names of functions in the packages of models in generalized speeds (``vdot_fun``: the speeds' rates).
ALIASES = {"vdot_fun": "qddot_fun"}


def check(
    model: Model, chosen: Sequence[str] | str, where: str = "functions", error: type | None = None
) -> tuple | None:
    """``chosen`` (names of generated functions, a list or a comma-separated string; :data:`ALIASES` too) checked
    against what ``model``'s package can hold: the names as a tuple in registry order, or ``None`` for the full set.
    An unknown name raises ``error`` (default :class:`~sls.errors.ModelError`) listing the valid ones."""
    from sls.errors import ModelError

    names = [n.strip() for n in chosen.split(",")] if isinstance(chosen, str) else list(chosen)
    full = available(model)
    valid = [f.name for f in full]
    speeds = getattr(model, "kinematics", None) is not None
    for alias in (n for n in names if isinstance(n, str) and n in ALIASES and not speeds):
        raise (error or ModelError)(f"{where}: '{alias}' exists with generalized speeds only: name {ALIASES[alias]}")
    names = [ALIASES.get(name, name) if isinstance(name, str) else name for name in names]
    for name in names:
        if not isinstance(name, str) or name not in valid:
            shown = f"'{name}'" if isinstance(name, str) and name else repr(name)
            raise (error or ModelError)(
                f"{where}: unknown function {shown}; the generated functions are: {', '.join(valid)}"
            )
    if not names:
        raise (error or ModelError)(
            f"{where}: name at least one function; the generated functions are: {', '.join(valid)}"
        )
    ordered = tuple(name for name in valid if name in set(names))
    return None if needed(full, ordered) == set(valid) else ordered


def names(model: Model) -> tuple:
    """The names of :func:`for_model`."""
    return tuple(f.name for f in for_model(model))


def is_subset(model: Model) -> bool:
    """True when ``model.functions`` leaves out some function of :func:`available`."""
    return len(for_model(model)) < len(available(model))


def arrays(model: Model, method: str | None = None) -> tuple:
    """The derived arrays (:func:`sls.derive.function_arrays`) the functions of ``model`` evaluate, sorted: on the
    derivation route ``method`` (``"expanded"``: ``arrays``; ``"graph"``, ``"tree"``: ``graph_arrays`` where a
    function has them), or on either (``None``: both)."""
    if method is None:
        return tuple(sorted({a for f in for_model(model) for a in f.arrays + f.graph_arrays}))
    graph = method in ("graph", "tree")
    return tuple(
        sorted({a for f in for_model(model) for a in (f.graph_arrays if graph and f.graph_arrays else f.arrays)})
    )


#: Functions by name.
BY_NAME = {
    f.name: f
    for f in FUNCTIONS
    + CONSTRAINT_FUNCTIONS
    + SPEED_FUNCTIONS
    + FRAME_FUNCTIONS
    + DIRECTIONAL_FUNCTIONS
    + (REGRESSOR, MULTIPLIERS, CONTACT_FORCES, CONTACT_FORCES_JAC)
}


def built(model: Model) -> tuple:
    """The functions of ``model`` the codegen stage builds (every one but the wrappers), by name."""
    return tuple(f.name for f in for_model(model) if f.uses is None)


#: Every function name of an unconstrained model's package, in order.
NAMES = tuple(f.name for f in FUNCTIONS)
