"""Actuators of a robot file: the robot's own inputs written in new ones.

A robot read from a file has its own inputs (:func:`sls.readers.urdf.kinematics.input_map`): ``tau_<joint>`` per
joint coordinate, a floating base's body wrench ``base_fx … base_mz``. How the robot is driven is often
something else: a quadrotor by four rotor thrusts (``base_fz = f1 + f2 + f3 + f4``, ``base_mx = l*(f2 - f4)``,
...), an acrobot by its elbow motor alone (``tau_elbow = tau``), an arm through a gearbox
(``tau_shoulder = ratio*u_motor``). :func:`actuate` takes the new inputs and a table giving some of the own
inputs as expressions linear in them (parameters allowed); an own input the table does not name is unactuated
(zero). The generalized forces become the robot's with each own input replaced by its expression.

Expression strings are parsed by :func:`sls.algebra.expressions.parse_expression` (data, never executed); the
Python API may give sympy expressions or numbers as well. Every mistake is a :class:`~sls.errors.ModelError`
whose one line names the table entry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import sympy

from sls.algebra.calculus import diff
from sls.algebra.expressions import parse_expression, symbol
from sls.errors import ModelError, brief
from sls.model import check_name, did_you_mean
from sls.model.entries import expression

#: Names the table of a TOML model file and the keyword of :func:`sls.load_urdf` use in messages.
TOML_NAMES = ("inputs", "[actuation]")
API_NAMES = ("inputs", "actuation")


def actuate(
    own: Sequence[str],
    forces: Sequence[sympy.Expr],
    inputs: object,
    actuation: object,
    *,
    state: Sequence[str],
    params: Sequence[str],
    names: tuple[str, str] = API_NAMES,
) -> tuple[list[str], tuple[sympy.Expr, ...]]:
    """``(new input names, generalized forces)`` of a robot driven through ``actuation``.

    ``own`` are the robot's input names and ``forces`` its n generalized forces (linear in the own inputs);
    ``inputs`` the new input names (a list of strings), ``actuation`` a mapping from own input names to
    expressions linear in the new inputs (strings, sympy expressions or numbers). ``state`` and ``params``
    are the robot's state and parameter names (a new input may not be named like them). ``names`` are how
    messages call the two (``inputs``, ``[actuation]`` in a model file). Returns the forces with each own
    input replaced by its expression (zero when not named).
    """
    inputs_name, table = names
    new = _new_inputs(inputs, actuation, own=own, state=state, params=params, names=names)
    if not isinstance(actuation, Mapping):
        raise ModelError(f'{table} must be a table of ROBOT_INPUT = "expression", e.g. tau_elbow = "tau"')
    new_symbols = tuple(symbol(u) for u in new)
    replacement = {symbol(u): sympy.Integer(0) for u in own}
    for key, value in actuation.items():
        name = _name(key)
        if not isinstance(name, str) or name not in own:
            raise ModelError(
                f"{table} {name}: the robot has no input of that name{did_you_mean(name, own)} "
                f"(its inputs: {', '.join(own)})"
            )
        what = f"{table} {name}"
        replacement[symbol(name)] = _linear(_parse(value, what), new_symbols, what, own=own, state=state)
    driving = set().union(*(e.free_symbols for e in replacement.values()))
    for u in new_symbols:
        if u not in driving:
            raise ModelError(
                f"{inputs_name}: '{u.name}' appears in no {table} expression; every input must drive the robot"
            )
    return new, tuple(f.xreplace(replacement) for f in forces)


def _new_inputs(
    inputs: object,
    actuation: object,
    *,
    own: Sequence[str],
    state: Sequence[str],
    params: Sequence[str],
    names: tuple[str, str],
) -> list[str]:
    """The new input names, checked: a list of distinct plain names, none a state, parameter or own input."""
    inputs_name, table = names
    if actuation is None:
        raise ModelError(
            f"{inputs_name} needs {table}: the robot's inputs ({', '.join(own)}) it drives, written as expressions "
            "linear in the new inputs"
        )
    if inputs is None:
        raise ModelError(
            f"{table} needs {inputs_name}: the list of the new inputs its expressions are written in, "
            'e.g. inputs = ["f1", "f2"]'
        )
    if isinstance(inputs, (str, bytes)) or not isinstance(inputs, Sequence):
        raise ModelError(f'{inputs_name} must be a list of input names, e.g. ["f1", "f2"]')
    if not inputs:
        raise ModelError(f"{inputs_name}: at least one input is needed to drive the robot")
    new = [check_name(_name(u), inputs_name) for u in inputs]
    for u in new:
        if new.count(u) > 1:
            raise ModelError(f"{inputs_name}: '{u}' is listed twice")
        if u in own:
            raise ModelError(
                f"{inputs_name}: '{u}' is one of the robot's own inputs ({', '.join(own)}); give the new input "
                "another name"
            )
        if u in state:
            raise ModelError(f"{inputs_name}: '{u}' is the name of a state; give the new input another name")
        if u in params:
            raise ModelError(
                f"{inputs_name}: '{u}' is the name of a parameter of the robot; give the new input another name"
            )
    return new


def _name(name: object) -> object:
    """A name given as a sympy symbol (the Python API) as its string; anything else as it is."""
    return name.name if isinstance(name, sympy.Symbol) else name


def _parse(value: object, what: str) -> sympy.Expr:
    """An entry of the table as a sympy expression over sls's symbols: a string parsed safely, a sympy expression
    (its symbols taken by name) or a number."""
    if isinstance(value, str):
        return parse_expression(value, what)
    expr = expression(value, what)
    return expr.xreplace({s: symbol(s.name) for s in expr.free_symbols})  # sls's real symbols, by name


def _linear(
    expr: sympy.Expr, inputs: tuple[sympy.Symbol, ...], what: str, *, own: Sequence[str], state: Sequence[str]
) -> sympy.Expr:
    """``expr`` checked: in the inputs and parameters only, and linear in the inputs (no part without them)."""
    shown = brief(expr, 80)
    for s in sorted(expr.free_symbols, key=lambda s: s.name):
        if s.name in state:
            raise ModelError(
                f"{what}: '{shown}' uses the state '{s.name}'; an actuator is written in inputs and parameters only"
            )
        if s.name in own:
            raise ModelError(
                f"{what}: '{shown}' uses the robot's input '{s.name}'; write the robot's inputs in the new inputs "
                f"({', '.join(u.name for u in inputs)})"
            )
        if s not in inputs:
            check_name(s.name, what, parameter=True)
    listed = ", ".join(u.name for u in inputs)
    for u in inputs:
        if sympy.expand(diff(expr, u)).free_symbols & set(inputs):
            raise ModelError(f"{what}: '{shown}' is not linear in the input {u.name} (the inputs: {listed})")
    rest = sympy.simplify(expr.xreplace({u: sympy.Integer(0) for u in inputs}))
    if rest != 0:
        raise ModelError(
            f"{what}: '{shown}' is not linear in the inputs ({listed}): it has a part without them, {brief(rest, 60)}"
        )
    return expr
