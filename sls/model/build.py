"""The one constructor every reader goes through: :func:`build_model` checks the structure of a model.

All the ways in — a TOML model file, inline command-line flags, a Python model file or the Python API, a URDF
robot — end here, which is where every structural check happens. So the inputs cannot drift apart: the same
model gives the same generated functions.
"""

from __future__ import annotations

import sympy

from sls.algebra.expressions import symbol
from sls.errors import ModelError
from sls.model.constraints import check_constraints
from sls.model.energies import check_kinetic_energy, check_potential_energy, order_hint
from sls.model.entries import as_list, expression, symbols_in, vector
from sls.model.kinematics import kinematic_matrix
from sls.model.loads import check_forces, load_forces
from sls.model.model import Model
from sls.model.names import check_name, check_value, safe_label
from sls.model.ranges import check_ranges
from sls.model.tree import Robot


def build_model(
    *,
    state: list,
    T: sympy.Expr,
    V: sympy.Expr,
    fric: object,
    params: dict | None = None,
    inputs: list | None = None,
    forces: object | None = None,
    name: str = "model",
    source: str = "Python API",
    constraints: object | None = None,
    velocity_constraints: object | None = None,
    loads: list | None = None,
    stabilization: float = 0.0,
    renamed: tuple = (),
    tree: Robot | None = None,
    ranges: dict | None = None,
    kinematics: object | None = None,
) -> Model:
    """Check the structure of a model and return it as a :class:`Model`.

    ``state`` is a list of 2n names (``str``); ``T``, ``V`` and the entries
    of ``fric`` and ``forces`` are sympy expressions over real symbols;
    ``params`` maps names to default values. ``inputs`` come with ``forces``,
    with ``loads`` whose forces or torques use them, or both (``forces``
    alone is refused). ``constraints`` (expressions in q),
    ``velocity_constraints`` (linear in q̇) and ``loads`` (dicts, see
    :func:`load_forces`) are optional. ``ranges`` maps state names to
    ``(low, high)``: where the model lives, the only states the checks of
    :mod:`sls.derive.validate` sample (see :func:`check_ranges`).
    ``kinematics`` (n expressions, linear in the second half of ``state``) makes that half generalized speeds:
    ``q̇ = S(q) v`` (see :func:`sls.model.kinematics.kinematic_matrix`); ``T``, forces and friction are then
    written in ``q`` and ``v``. Raises :class:`ModelError` naming the problem.
    """
    name = safe_label(name, "model")
    source = safe_label(source, "Python API")
    given_rates = None if kinematics is None else as_list(kinematics, "kinematics")
    q, dq = _split_state(state, None if given_rates is None else len(given_rates))
    n = len(dq)
    state_names = [s.name for s in q + dq]
    params = dict(params or {})
    for pname in params:
        check_name(pname, "parameter", parameter=True)
        if pname in state_names:
            raise ModelError(f"parameter '{pname}' has the same name as a state variable")
    defaults = {pname: check_value(pname, value) for pname, value in params.items()}

    fric = vector(fric, n, "fric", "friction")
    rates = _checked_kinematics(given_rates, q, dq)
    if forces is None and inputs is None:
        input_symbols = implicit_inputs(n, state_names, kinematics is not None)
        actuated = True
        force_exprs = input_symbols
    else:
        if inputs is None:
            raise ModelError("forces need inputs: declare the m input names the n generalized forces are linear in")
        if forces is None and not loads:
            raise ModelError(
                "inputs need forces or loads to act through: give forces (n generalized forces linear in the inputs) "
                "or [[loads]] whose force/torque uses them"
            )
        input_names = [check_name(iname, "input") for iname in as_list(inputs, "inputs")]
        if not input_names:
            raise ModelError("inputs: at least one input is needed when an input map is declared")
        if len(set(input_names)) != len(input_names):
            raise ModelError(f"inputs: duplicate names in {input_names}")
        for iname in input_names:
            if iname in state_names or iname in params:
                raise ModelError(f"input '{iname}' has the same name as a state variable or parameter")
        input_symbols = tuple(symbol(iname) for iname in input_names)
        force_exprs = vector(0 if forces is None else forces, n, "forces", "generalized force")
        actuated = False
    if actuated:
        for iname in (s.name for s in input_symbols):
            if iname in state_names or iname in params:
                raise ModelError(
                    f"'{iname}' names the implicit input of a fully actuated model; rename the state or parameter"
                )

    T = expression(T, "T")
    V = expression(V, "V")
    try:
        check_kinetic_energy(T, dq)
        check_potential_energy(V, dq)
    except ModelError as exc:
        raise ModelError(f"{exc}{order_hint(T, V, q, dq)}") from None
    user_fric = fric
    if loads:
        loaded = load_forces(loads, q, dq, input_symbols, actuated, kinematics=rates)
        force_exprs = tuple(f + g if g != 0 else f for f, g in zip(force_exprs, loaded))
    force_exprs, input_free = check_forces(force_exprs, input_symbols, actuated)
    if any(f != 0 for f in input_free):  # the input-free generalized forces move to the left-hand side
        fric = tuple(f - g if g != 0 else f for f, g in zip(fric, input_free))
    for i, rate in enumerate(rates or ()):
        used_inputs = sorted(s.name for s in rate.free_symbols & set(input_symbols))
        if used_inputs:
            raise ModelError(f"kinematics[{i}]: the kinematic equations cannot depend on the input {used_inputs[0]}")
    holonomic, rolling = check_constraints(constraints, velocity_constraints, q, dq, input_symbols)
    declared_ranges = check_ranges(ranges, q + dq)
    stabilization = check_value("constraint_stabilization", stabilization)
    if stabilization < 0:
        raise ModelError(f"constraint_stabilization: the Baumgarte rate must be >= 0 (0: off), got {stabilization:g}")

    used = set().union(*(symbols_in(e) for e in (T, V, *fric, *force_exprs, *holonomic, *rolling, *(rates or ()))))
    known = set(q + dq + input_symbols)
    free_names = sorted(s.name for s in used - known)
    for pname in free_names:
        check_name(pname, "parameter", parameter=True)
    ordered: dict[str, float | None] = {pname: defaults[pname] for pname in defaults}
    for pname in free_names:
        ordered.setdefault(pname, None)
    unused = tuple(p for p in defaults if p not in free_names)
    return Model(
        name=name,
        source=source,
        q=q,
        dq=dq,
        T=T,
        V=V,
        fric=fric,
        inputs=input_symbols,
        forces=force_exprs,
        params=ordered,
        actuated=actuated,
        unused_params=unused,
        constraints=holonomic,
        velocity_constraints=rolling,
        stabilization=stabilization,
        friction=user_fric,
        renamed=tuple(renamed),
        tree=tree,
        ranges=declared_ranges,
        kinematics=rates,
    )


def implicit_inputs(n: int, state_names: list, speeds: bool) -> tuple:
    """The inputs of a model without an input map: ``u1 … un``, or ``tau1 … taun`` when the model has
    generalized speeds named ``u1 … un`` (as Kane's method names them)."""
    names = [f"u{i + 1}" for i in range(n)]
    if speeds and any(name in state_names for name in names):
        names = [f"tau{i + 1}" for i in range(n)]
    return tuple(symbol(name) for name in names)


def speed_kinematics(kinematics: object | None, q: tuple, v: tuple) -> tuple | None:
    """The checked kinematic equations ``q̇ = S(q) v`` (length n), or ``None`` when there are none or they are
    ``q̇ = v`` entry by entry (the model is then the same as one without them, byte for byte)."""
    if kinematics is None:
        return None
    rates = tuple(expression(e, f"kinematics[{i}]") for i, e in enumerate(as_list(kinematics, "kinematics")))
    kinematic_matrix(rates, q, v)  # linear in the speeds, every speed used: refused in one line otherwise
    if len(rates) == len(v) and all(rate == speed for rate, speed in zip(rates, v)):
        return None
    return rates


def _checked_kinematics(kinematics: list | None, q: tuple, v: tuple) -> tuple | None:
    """:func:`speed_kinematics`; when its entries are refused and their number split an even state unevenly
    (more coordinates than speeds), the message says first how many entries the halves expect."""
    try:
        return speed_kinematics(kinematics, q, v)
    except ModelError as exc:
        names = len(q) + len(v)
        if len(q) == len(v) or names % 2:
            raise
        raise ModelError(
            f"kinematics: expected {names // 2} entries, one per coordinate, got {len(q)} (so many make the first "
            f"{len(q)} state names coordinates and leave {len(v)} speeds, as for fewer speeds than coordinates: {exc})"
        ) from None


def _split_state(state: list, n_q: int | None = None) -> tuple[tuple, tuple]:
    """``(q, dq)``: the state's symbols split in halves, or after its first ``n_q`` (one per kinematic equation)."""
    names = as_list(state, "state")
    names = [s.name if isinstance(s, sympy.Symbol) else s for s in names]
    if not names:
        raise ModelError("state: the state list is empty; give q names then q̇ names (2n names)")
    if n_q is not None and n_q != len(names) // 2:
        if not 0 < n_q < len(names) or 2 * n_q < len(names):
            raise ModelError(
                f"kinematics: expected {len(names) // 2} entries, one per coordinate (or, with fewer speeds than "
                f"coordinates, one per coordinate listed first in the state), got {n_q}"
            )
    elif len(names) % 2:
        raise ModelError(f"state: expected an even number of names (q then q̇, 2n in all), got {len(names)}")
    for sname in names:
        check_name(sname, "state")
    duplicates = sorted({s for s in names if names.count(s) > 1})
    if duplicates:
        raise ModelError(f"state: duplicate names {', '.join(duplicates)}")
    symbols = tuple(symbol(s) for s in names)
    n = len(symbols) // 2 if n_q is None else n_q
    return symbols[:n], symbols[n:]
