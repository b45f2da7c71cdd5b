"""Models from sympy.physics.mechanics objects as written: :func:`model_from_mechanics`.

A ``KanesMethod``, a ``LagrangesMethod`` or a ``System`` is read into a
:class:`~sls.readers.mechanics_terms.Written` model (what the object holds), turned into sls's terms by
:func:`~sls.readers.mechanics_terms.mechanics_terms` and built through :func:`~sls.readers.sympy_api.model_from_sympy`
like any Python model. The coordinates and speeds keep their names (``q1(t)`` → ``q1``; a Lagrangian's rates
``q1(t).diff(t)`` → ``dq1``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import sympy
from sympy.core.function import AppliedUndef

from sls.errors import ModelError, ModelTypeError
from sls.model import Model
from sls.model.entries import as_list
from sls.readers.mechanics_probe import Plain, Probe
from sls.readers.mechanics_terms import Written, mechanics_terms
from sls.readers.sympy_api import model_from_sympy

ZERO = sympy.Integer(0)


def model_from_mechanics(
    obj: object,
    params: dict | None = None,
    name: str = "model",
    *,
    inputs: object = None,
    stabilization: float = 0.0,
    ranges: dict | None = None,
    simplify: bool = True,
) -> Model:
    """Build a model from a sympy.physics.mechanics ``KanesMethod``, ``LagrangesMethod`` or ``System``.

    The state is the coordinates then the speeds (a Lagrangian's speeds are the rates ``dq``); kinematic
    differential equations become ``kinematics`` (none when ``q̇ = u``). There may be fewer speeds than
    coordinates (a quaternion's four rates of three angular speeds: sls's kinematics with ``n_v < n_q``) or, with
    dependent speeds, more: a speed that no kinematic equation uses (a wheel's spin whose angle was left out, a
    contact point's velocity) gets a coordinate of its own, ``q_<speed>`` (``q̇ = speed``), appended to the
    coordinates, and the dependent speeds stay in the state, held by the velocity constraints, which become sls's
    ``velocity_constraints``. When each coordinate's rate is one speed (``q̇_k = u_j``) the speeds are listed in
    the order of the coordinates (the model is then written in the rates); a ``System`` whose speeds are its
    coordinates' rates in another order is read as the rates. ``T`` comes from the bodies (or the
    Lagrangian), ``V`` from the potential energies (a ``System``'s bodies, the Lagrangian) and from forces
    constant in the inertial frame (gravity) on points whose position is known; every other load is a
    generalized force along the speeds. ``inputs`` (symbols, functions of time or names) are the symbols the
    loads are driven by; without them the model is fully actuated (one input per speed), as every sls model
    without an input map. Holonomic constraints become sls's constraints, except those the kinematics keep by
    themselves (a quaternion's unit norm). ``params`` maps symbols or names to values; ``name``, ``stabilization``
    and ``ranges`` are as for :func:`sls.model_from_sympy`; ``simplify`` tidies the coefficients of the speeds
    (``False`` for large models, whose generation it may slow); every simplification and symbolic inversion is
    bounded in size and time (:func:`sls.algebra.bounded.bounded`), past which the exact expression is kept
    unsimplified. What cannot be expressed is refused in one line (:class:`~sls.errors.ModelError`), see
    :mod:`sls.readers.mechanics_terms`.
    """
    written = read_mechanics(obj, {k.name if isinstance(k, sympy.Symbol) else str(k) for k in (params or {})})
    try:
        plain, input_names = plain_symbols(written, inputs)
        values = {(k.name if isinstance(k, sympy.Symbol) else str(k)): _number(v) for k, v in (params or {}).items()}
        q = [plain(s, f"{written.kind}: coordinates") for s in written.q]
        v = [plain(s, f"{written.kind}: speeds") for s in written.u]
        holonomic = [plain(c, f"{written.kind}: configuration constraint") for c in written.holonomic]
        known = {k: x for k, x in values.items() if x is not None}
        probe = Probe(q, v, set(input_names or ()), known, constraints=holonomic)
        terms = mechanics_terms(written, plain, probe, set(input_names or ()), simplify)
    except ModelError:
        raise
    except (ValueError, TypeError, AttributeError) as exc:  # sympy.physics.mechanics refusing something
        raise ModelError(f"{written.kind}: {exc}") from None
    forces, fric = None, list(terms.fric)
    if input_names is None:
        fric = [c - f for c, f in zip(fric, terms.forces)]
    else:
        forces = list(terms.forces)
    keyed_ranges = None if ranges is None else _ranges_in_plain(ranges, plain)
    return model_from_sympy(
        terms.T,
        terms.V,
        fric,
        list(terms.state),
        params=params,
        inputs=input_names,
        forces=forces,
        name=name,
        source=f"sympy.physics.mechanics {written.kind}",
        constraints=list(terms.constraints) or None,
        velocity_constraints=list(terms.velocity_constraints) or None,
        stabilization=stabilization,
        ranges=keyed_ranges,
        kinematics=None if terms.kinematics is None else list(terms.kinematics),
    )


def _number(value: object) -> float | None:
    """``value`` as a float for the numeric checks (``None`` when it is not a number: checked later)."""
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def read_mechanics(obj: object, reserved: set | None = None) -> Written:
    """What a ``KanesMethod``, ``LagrangesMethod`` or ``System`` holds, as a :class:`Written` model (a speed that no
    kinematic equation uses given a coordinate of its own, :func:`with_speed_coordinates`, named apart from the
    names in ``reserved``)."""
    from sympy.physics.mechanics import KanesMethod, LagrangesMethod, System

    if isinstance(obj, System):
        written = _from_system(obj)
    elif isinstance(obj, KanesMethod):
        written = _from_kane(obj)
    elif isinstance(obj, LagrangesMethod):
        written = _from_lagrange(obj)
    else:
        raise ModelTypeError(
            "model_from_mechanics: expected a KanesMethod, LagrangesMethod or System of sympy.physics.mechanics, "
            f"got {type(obj).__name__}"
        )
    if not written.q:
        raise ModelError(f"{written.kind}: the model has no coordinates")
    written = with_speed_coordinates(written, reserved or set())
    if len(written.u) > len(written.q):
        raise ModelError(
            f"{written.kind}: {len(written.q)} coordinates but {len(written.u)} speeds, each in a kinematic "
            "differential equation: the speeds are not independent (give no more speeds than coordinates, dependent "
            "speeds with velocity constraints)"
        )
    return written


def with_speed_coordinates(written: Written, reserved: set) -> Written:
    """``written`` with a coordinate of its own for every speed that no kinematic differential equation uses.

    Such a speed moves no coordinate: a wheel's spin whose angle was left out as ignorable (sympy's bicycle), or
    the velocity of a point whose position is no coordinate (a contact point's, a dependent speed of a rolling
    disc). sls's speeds move coordinates (``q̇ = S(q) v``), so the speed ``u3`` gets the coordinate ``q_u3``
    (``q̇_u3 = u3``; ``q_u3_2`` if that name is taken), appended to the coordinates; nothing depends on it, so
    the equations are unchanged.
    """
    if written.kdes is None:
        return written
    used = set().union(*(sympy.sympify(e).atoms(AppliedUndef) for e in written.kdes))
    idle = [s for s in written.u if s not in used]
    if not idle:
        return written
    from sympy.physics.mechanics import dynamicsymbols

    t = written.time
    taken = {_function_name(s) for s in (*written.q, *written.u, *written.auxiliary) if isinstance(s, AppliedUndef)}
    taken |= set(reserved) | {s.name for e in written.kdes for s in sympy.sympify(e).free_symbols}
    added = []
    for speed in idle:
        base = "q_" + _function_name(speed)
        name, count = base, 2
        while name in taken:
            name, count = f"{base}_{count}", count + 1
        taken.add(name)
        added.append((dynamicsymbols(name), speed))
    return replace(
        written,
        q=written.q + tuple(q for q, _ in added),
        kdes=written.kdes + tuple(q.diff(t) - speed for q, speed in added),
    )


def _time() -> sympy.Symbol:
    from sympy.physics.mechanics import dynamicsymbols

    return dynamicsymbols._t


def _no_kinematics(kind: str, speeds: Any) -> ModelError:
    names = ", ".join(str(s) for s in speeds)
    return ModelError(
        f"{kind}: the speeds {names} are not the coordinate rates and no kinematic differential equations are "
        "given; give them (they become sls's kinematics: q̇ = S(q) u)"
    )


def _from_kane(kane: Any) -> Written:
    kind = "KanesMethod"
    t = _time()
    q, u = tuple(kane.q), tuple(kane.u)
    if getattr(kane, "_qdot_u_map", None) is None:
        raise _no_kinematics(kind, u)
    if any(str(s) == "dummy_q(t)" for s in q):
        raise ModelError(f"{kind}: the model has no coordinates")
    if not kane.bodies:
        raise ModelError(f"{kind}: no bodies; pass bodies= or call kanes_equations(bodies, loads) first")
    if any(getattr(body, "potential_energy", 0) != 0 for body in kane.bodies):
        raise ModelError(
            f"{kind}: a body has a potential_energy, which KanesMethod ignores; give the force as a load, or use "
            "LagrangesMethod or a System"
        )
    K = getattr(kane, "_k_kqdot_implicit", kane._k_kqdot)
    K_u = getattr(kane, "_k_ku_implicit", kane._k_ku)
    f_k = getattr(kane, "_f_k_implicit", kane._f_k)
    kdes = tuple(K * sympy.Matrix([s.diff(t) for s in q]) + K_u * sympy.Matrix(u) + f_k)
    velocity = tuple(kane._k_nh * sympy.Matrix(u) + kane._f_nh) if kane._k_nh else ()
    return Written(
        kind=kind,
        frame=kane._inertial,
        q=q,
        u=u,
        kdes=kdes,
        bodies=tuple(kane.bodies),
        loads=tuple(kane.loads or ()),
        potential=ZERO,
        lagrangian=None,
        holonomic=tuple(kane._f_h),
        velocity=velocity,
        velocity_lists_holonomic=True,
        auxiliary=tuple(kane._uaux),
        fixed_points=(),
        time=t,
    )


def _from_lagrange(lagrange: Any) -> Written:
    kind = "LagrangesMethod"
    t = _time()
    q = tuple(lagrange.q)
    loads = tuple(lagrange.forcelist or ())
    if loads and lagrange.inertial is None:
        raise ModelError(f"{kind}: loads (forcelist) need the inertial frame: pass frame=")
    holonomic = tuple(lagrange._hol_coneqs)
    return Written(
        kind=kind,
        frame=lagrange.inertial,
        q=q,
        u=tuple(s.diff(t) for s in q),
        kdes=None,
        bodies=tuple(lagrange.bodies or ()),
        loads=loads,
        potential=ZERO,
        lagrangian=lagrange._L[0],
        holonomic=holonomic,
        velocity=tuple(lagrange.coneqs)[len(holonomic) :],
        velocity_lists_holonomic=False,
        auxiliary=(),
        fixed_points=(),
        time=t,
    )


def _from_system(system: Any) -> Written:
    from sympy.physics.mechanics import KanesMethod

    kind = "System"
    t = _time()
    q, u = tuple(system.q), tuple(system.u)
    rates = tuple(s.diff(t) for s in q)
    if len(u) == len(rates) and set(u) == set(rates):  # the rates as speeds, in any order: kdes q̇ − q̇ = 0
        u = ()
    if u and not system.kdes:
        raise _no_kinematics(kind, u)
    loads = tuple(system.loads) + tuple(load for actuator in system.actuators for load in actuator.to_loads())
    potential = sympy.Add(*(getattr(body, "potential_energy", ZERO) for body in system.bodies))
    if potential != 0 and isinstance(system.eom_method, KanesMethod):
        raise ModelError(
            f"{kind}: a body has a potential_energy, which the System's KanesMethod ignores; give the force as a "
            "load, or form the equations with LagrangesMethod"
        )
    return Written(
        kind=kind,
        frame=system.frame,
        q=q,
        u=u if u else rates,
        kdes=tuple(system.kdes) if u else None,
        bodies=tuple(system.bodies),
        loads=loads,
        potential=potential,
        lagrangian=None,
        holonomic=tuple(system.holonomic_constraints),
        velocity=tuple(system.velocity_constraints if u else system.nonholonomic_constraints),
        velocity_lists_holonomic=bool(u),
        auxiliary=tuple(system.u_aux),
        fixed_points=(system.fixed_point,),
        time=t,
    )


def _function_name(f: Any) -> str:
    return str(getattr(f.func, "__name__", f.func))


def plain_symbols(written: Written, inputs: object) -> tuple[Plain, list[str] | None]:
    """The :class:`Plain` map of the model's functions of time, and the input names (``None``: no inputs)."""
    t = written.time
    mapping: dict = {}
    roles: dict[str, str] = {}

    def add(f: Any, name: str, role: str) -> None:
        if name in roles:
            raise ModelError(f"{written.kind}: two {role}s are named {name}")
        roles[name] = f"{role} {f}"
        mapping[f] = sympy.Symbol(name)

    for s in written.q:
        if not _is_function_of(s, t):
            raise ModelError(f"{written.kind}: the coordinate {s} is not a function of time (dynamicsymbols)")
        add(s, _function_name(s), "coordinate")
    for s in written.u:
        if isinstance(s, sympy.Derivative):
            add(s, "d" + _function_name(s.expr), "speed")
        elif _is_function_of(s, t):
            add(s, _function_name(s), "speed")
        else:
            raise ModelError(f"{written.kind}: the speed {s} is not a function of time (dynamicsymbols)")
    if inputs is None:
        return Plain(mapping, t, roles), None
    names = []
    for entry in as_list(inputs, "inputs"):
        if isinstance(entry, str):
            names.append(entry)
        elif isinstance(entry, sympy.Symbol):
            names.append(entry.name)
        elif _is_function_of(entry, t):
            add(entry, _function_name(entry), "input")
            names.append(_function_name(entry))
        else:
            raise ModelTypeError(f"inputs: entries must be symbols, functions of time or names, got {entry!r}")
    return Plain(mapping, t, roles), names


def _is_function_of(f: object, t: sympy.Symbol) -> bool:
    return isinstance(f, AppliedUndef) and f.args == (t,)


def _ranges_in_plain(ranges: dict, plain: Plain) -> dict:
    """``ranges`` with functions of time as keys (``q1(t)``) replaced by their plain symbols."""
    if not isinstance(ranges, dict):
        return ranges
    return {
        plain.mapping.get(key, key) if isinstance(key, sympy.Basic) else key: value for key, value in ranges.items()
    }
