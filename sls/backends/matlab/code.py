"""The MATLAB target's code: function bodies and what the template needs about each function (see
:mod:`sls.backends.matlab`; its names: :mod:`.names`, its printer: :mod:`.printer`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sls import arrays, functions, lowering
from sls.backends.matlab.names import KEYWORDS, local
from sls.backends.matlab.printer import number
from sls.lowering import Check, Fail, Let, Statement, Value, unknown_statement
from sls.lowering.arguments import bind_arguments
from sls.lowering.expr import reads

if TYPE_CHECKING:  # a type only: no import at run time
    from sls.model import Model

#: What the generated files never contain (Octave-only syntax), checked by the tests.
OCTAVE_ONLY = ("#", "!=", "++", "+=", "endfunction", "endif", "endfor", '"', "printf(", "!")


def _assign(name: str, text: str) -> str:
    return f"{name} = {text};"


# --------------------------------------------------------------------------
# function bodies


def _index(shape: tuple, flat: int) -> str:
    """MATLAB subscripts (1-based) of row-major entry ``flat`` of an array of ``shape``."""
    return ", ".join(str(k + 1) for k in arrays.unravel(flat, shape))


def _zeros(shape: tuple) -> str:
    dims = shape if len(shape) > 1 else shape + (1,)
    return f"zeros({', '.join(map(str, dims))})"


def fill(name: str, shape: tuple, values: Sequence[Value]) -> list[str]:
    """``name = zeros(shape);`` then its nonzero entries (expressions, or float constants) one per line."""
    if not shape:
        (value,) = values
        return [f"{name} = {number(value) if isinstance(value, float) else value.text()};"]
    lines = [f"{name} = {_zeros(shape)};"]
    for k, value in enumerate(values):
        if not isinstance(value, float):
            lines.append(f"{name}({_index(shape, k)}) = {value.text()};")
        elif value != 0.0:
            lines.append(f"{name}({_index(shape, k)}) = {number(value)};")
    return lines


@dataclass(frozen=True)
class Body:
    """A MATLAB function body after the argument binding: its ``lines``, and the names its expressions read
    (``reads``: which arguments and parameters need binding)."""

    lines: list[str]
    reads: frozenset[str]


def _reads(statements: Iterable[Statement], *arrays: Sequence[Value]) -> set[str]:
    """The names read by ``statements`` and by the values in ``arrays``."""
    values = [v for values in arrays for v in values if not isinstance(v, float)]
    return {name for statement in statements for name in statement.reads} | reads(values)


def kernel_body(lowered: lowering.Lowered) -> Body:
    """An array function: shared subexpressions, then its one output."""
    (name,) = lowered.outputs
    shape, entries, constants = lowered.output(name)
    values: list[Value] = [c if c is not None else entry for entry, c in zip(entries, constants)]
    lines = _lines(lowered.printed.lines) + fill(name, shape, values)
    return Body(lines, frozenset(_reads(lowered.printed.lines, values)))


def wrapper_body(n: int, accelerations: str, rates: str | None = None) -> Body:
    """``xdot_fun``: ``[qdot; qddot_fun(x, u, p)]`` (``accelerations``: the name of ``qddot_fun``); ``qdot`` the
    second half of ``x``, or ``rates(x, p)`` for a model with generalized speeds (``rates``: ``qdot_fun``)."""
    qdot = f"x({n + 1}:{2 * n})" if rates is None else f"{rates}(x, p)"
    return Body(["x = x(:);", f"xdot = [{qdot}; {accelerations}(x, u, p)];"], frozenset())


def with_chart_guard(body: Body, name: str, model: Model) -> Body:
    """``body`` after a check that refuses, in one line, a state within the margin of a yaw-pitch-roll base's
    singularity (|cos(pitch)| below :data:`sls.backends.render.CHART_MARGIN`), as the Python package does."""
    from sls.backends.render import CHART_MARGIN, chart_pitch

    lines = []
    for pitch in chart_pitch(model):
        k, coordinate = pitch["index"] + 1, pitch["name"]
        message = quoted(
            f"{name} is not defined at {coordinate} = %.6g: the yaw-pitch-roll base is singular at {coordinate} = "
            f"+-90 degrees and {coordinate} is within {CHART_MARGIN:g} rad of it; generate the robot with the "
            "default --base-orientation quaternion"
        )
        lines += [
            f"if abs(cos(x({k}))) < {CHART_MARGIN!r}",
            f"    error('sls:chartSingularity', {message}, x({k}));",
            "end",
        ]
    return Body(lines + body.lines, body.reads) if lines else body


def with_kinematic_rows(
    body: Body, n: int, rates_jacobian: str, n_q: int | None = None, free: bool = False, blocks: tuple = ()
) -> Body:
    """``linearized_model`` of a model with generalized speeds: the upper rows of ``A`` are ``∂(S v)/∂x``
    (``rates_jacobian``: ``qdot_jac_fun``) instead of ``[0 I]``.

    With fewer speeds than coordinates (``n_q`` of them) ``A`` and ``B`` go to the tangent space (as the Python
    target's): the dynamics rows' ``q`` columns times ``S = ∂(S v)/∂v``, the kinematic rows ``[K, I]`` with
    ``K = −ad(v_base)/2`` on a quaternion free-flyer's base block (``free``), else ``pinv(S) ∂(S v)/∂q S``; with
    several quaternion joints (``blocks``: ``(kind, first speed)`` of each free and ball joint) ``−ad(v)/2`` on each
    free joint's block and ``−[ω]×/2`` on each ball joint's."""
    if n_q is None or n_q == n:
        return Body(body.lines + [f"A(1:{n}, :) = {rates_jacobian}(x, p);"], body.reads)
    kinematic = (
        [
            "skew = @(a) [0, -a(3), a(2); a(3), 0, -a(1); -a(2), a(1), 0];",
            f"speeds = x({n_q + 1}:end);",
            "K = zeros(" + str(n) + ");",
            "K(1:6, 1:6) = -0.5 * [skew(speeds(4:6)), skew(speeds(1:3)); zeros(3), skew(speeds(4:6))];",
        ]
        if free
        else [f"K = pinv(S) * J(:, 1:{n_q}) * S;"]
    )
    if blocks:
        kinematic = [
            "skew = @(a) [0, -a(3), a(2); a(3), 0, -a(1); -a(2), a(1), 0];",
            f"speeds = x({n_q + 1}:end);",
            "K = zeros(" + str(n) + ");",
        ]
        for kind, b in blocks:
            w = f"speeds({b + 4}:{b + 6})" if kind == "free" else f"speeds({b + 1}:{b + 3})"
            if kind == "free":
                kinematic.append(
                    f"K({b + 1}:{b + 6}, {b + 1}:{b + 6}) = -0.5 * [skew({w}), skew(speeds({b + 1}:{b + 3})); "
                    f"zeros(3), skew({w})];"
                )
            else:
                kinematic.append(f"K({b + 1}:{b + 3}, {b + 1}:{b + 3}) = -0.5 * skew({w});")
    lines = [
        f"J = {rates_jacobian}(x, p);",
        f"S = J(:, {n_q + 1}:end);",
        *kinematic,
        f"A = [K, eye({n}); A({n_q + 1}:end, 1:{n_q}) * S, A({n_q + 1}:end, {n_q + 1}:end)];",
        f"B = [zeros({n}, size(B, 2)); B({n_q + 1}:end, :)];",
    ]
    return Body(body.lines + lines, body.reads)


def solve_body(kind: str, program: lowering.SolveProgram, n: int, m: int, failure: str) -> Body:
    """A solving function of ``kind`` (:attr:`sls.functions.Function.solve`: ``qddot_fun``, ``linearized_model``):
    ``M`` and the right-hand sides assembled, ``chol``, triangular solves."""
    names = _reads([*program.lines, *program.bindings, *program.late], *program.values.values())
    return Body(_solve_lines(kind, program, n, m, failure), frozenset(names))


def _solve_lines(kind: str, program: lowering.SolveProgram, n: int, m: int, failure: str) -> list[str]:
    """The lines of :func:`solve_body`."""
    lines = _lines(program.lines, failure) + _lines(program.bindings, failure)
    n_x = program.shapes["drhs"][-1] if "drhs" in program.shapes else 2 * n  # the state's length
    if program.phased:
        return _phased_body(program, n, m, failure, lines)
    for array in program.values:  # the function's arrays, M first (sls.functions.Function.arrays)
        lines += fill(array, program.shapes[array], program.values[array])
    lines += ["[R, failed] = chol(M);", "if failed", f"    {failure}", "end"]
    if kind == functions.ACCELERATIONS:
        return lines + ["qddot = R \\ (R' \\ rhs);"]
    return lines + [
        "qddot = R \\ (R' \\ rhs);",
        "% d(qddot)/dq_k = M \\ (d(rhs)/dq_k - dM/dq_k * qddot); d(qddot)/dqdot_k = M \\ d(rhs)/dqdot_k",
        f"for k = 1:{n_x - n}",
        "    drhs(:, k) = drhs(:, k) - dM(:, :, k) * qddot;",
        "end",
        "Z = R \\ (R' \\ [drhs, B_u]);",
        *_assembled(n, m, n_x),
    ]


def _assembled(n: int, m: int, n_x: int) -> list[str]:
    """``A`` and ``B`` of ``ẋ = [q̇; q̈]`` from the solved columns ``Z`` (``n_x`` state columns, then ``B_u``'s): the
    kinematic rows ``[0 I]``, or zeros when there are more coordinates than speeds (filled by the caller)."""
    n_q = n_x - n
    if n_q == n:
        return [f"A = [zeros({n}), eye({n}); Z(:, 1:{2 * n})];", f"B = [zeros({n}, {m}); Z(:, {2 * n + 1}:end)];"]
    return [f"A = [zeros({n_q}, {n_x}); Z(:, 1:{n_x})];", f"B = [zeros({n_q}, {m}); Z(:, {n_x + 1}:end)];"]


def _lines(statements: Iterable[Statement], failure: str = "") -> list[str]:
    """``statements`` as MATLAB lines (``failure``: the line raising the error of a pivot ``≤ 0``; a MATLAB
    solve never unrolls, so no statement of its programs checks one)."""
    lines = []
    for statement in statements:
        match statement:
            case Let(name=name, value=value):
                lines.append(_assign(name, value.text()))
            case Check(pivot=pivot):
                lines += [f"if ~({pivot.text()} > 0)", f"    {failure}", "end"]
            case Fail():
                lines.append(failure)
            case _:
                raise unknown_statement(statement, "the MATLAB target")
    return lines


def quoted(text: str) -> str:
    """``text`` as a MATLAB single-quoted string literal."""
    return "'" + text.replace("'", "''") + "'"


@dataclass(frozen=True)
class Param:
    """A parameter as ``templates/matlab/function.m.j2`` reads it: its ``name``, the name ``quoted``, its MATLAB
    ``local``, the struct ``field`` holding it, its ``default`` literal (``None``: required) and whether the
    function reads it (``used``)."""

    name: str
    quoted: str
    local: str
    field: str
    default: str | None
    used: bool


@dataclass(frozen=True)
class MatlabSpec:
    """What ``templates/matlab/function.m.j2`` needs about one generated function."""

    name: str
    upper: str
    summary: str
    arguments: list[str]
    nargs: int
    outputs: list[str]
    result: str
    shapes: list[str]
    checks: list[str]
    params: list[Param]
    param_list: str
    param_names: str
    example: str | None
    bindings: list[str]
    body: list[str]
    wrapper: bool


def function_spec(function: functions.Function, model: Model, names: dict, body: Body) -> MatlabSpec:
    """What ``templates/matlab/function.m.j2`` needs about one generated function."""
    n, m = model.n, model.m
    arguments = [a.name for a in function.arguments]
    used = body.reads
    entries = bind_arguments(arguments, model, used, lambda name: names.get(name) or local(name))
    bindings = [f"{e.local} = {e.argument}({e.index + 1});" for e in entries]
    params = []
    for pname, value in model.params.items():
        local_name = names.get(pname, pname)
        field = f"p.{pname}" if pname not in KEYWORDS else f"p.({quoted(pname)})"
        default = None if value is None else number(float(value))
        params.append(Param(pname, quoted(pname), local_name, field, default, local_name in used))
    outputs = [o for o, _ in function.outputs]
    described = {
        "x": (len(model.state), f"state [{', '.join(s.name for s in model.state)}]"),
        "u": (m, f"input [{', '.join(s.name for s in model.inputs)}]"),
        "qddot": (n, "accelerations, one per coordinate"),
        "lam": (model.k, "constraint multipliers, one per constraint row"),
        "dx": (len(model.state), "direction in the state space"),
    }
    checks = []
    for argument in arguments:
        size, what = described[argument]
        plural = "s" if size != 1 else ""
        message = quoted(f"{function.name}: {argument} must be {size} finite number{plural}, the {what}")
        checks.append(f"if ~isnumeric({argument}) || numel({argument}) ~= {size} || ~all(isfinite({argument}(:)))")
        checks.append(f"    error('sls:badArgument', {message});")
        checks.append("end")
    shapes = []
    for o, shape in function.outputs:
        dims = functions.model_sizes(shape, model)
        shapes.append(
            f"{o}: " + ("a scalar" if not dims else "x".join(map(str, dims if len(dims) > 1 else dims + (1,))))
        )
    example = None
    if model.params:
        first = next(iter(model.params))
        example = f"{function.name}({', '.join(arguments)}, struct({quoted(first)}, value))"
    return MatlabSpec(
        name=function.name,
        upper=function.name.upper(),
        summary=function.summary,
        arguments=arguments,
        nargs=len(arguments),
        outputs=outputs,
        result=outputs[0] if len(outputs) == 1 else "[" + ", ".join(outputs) + "]",
        shapes=shapes,
        checks=checks,
        params=params,
        param_list=", ".join(quoted(p) for p in model.params),
        param_names=", ".join(model.params) or "none",
        example=example,
        bindings=bindings,
        body=body.lines,
        wrapper=function.uses is not None,
    )


def _phased_body(program: lowering.SolveProgram, n: int, m: int, failure: str, lines: list) -> list:
    """The graph route's ``linearized_model``: ``qddot`` first, then ``∂r/∂x`` at it, ``A = −M⁻¹ ∂r/∂x``."""
    for array in ("M", "rhs", "B_u"):
        lines += fill(array, program.shapes[array], program.values[array])
    lines += ["[R, failed] = chol(M);", "if failed", f"    {failure}", "end", "qddot = R \\ (R' \\ rhs);"]
    lines += [f"{name} = qddot({k + 1});" for k, name in enumerate(program.accelerations)]
    lines += _lines(program.late, failure)
    lines += fill("residual_jac", program.shapes["residual_jac"], program.values["residual_jac"])
    return lines + [
        "% d(qddot)/dx = -M \\ dr/dx, r = M qddot + C qdot + phi + fric - B_u u at fixed qddot and u",
        "Z = R \\ (R' \\ [-residual_jac, B_u]);",
        *_assembled(n, m, program.shapes["residual_jac"][-1]),
    ]
