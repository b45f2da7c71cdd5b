"""The control commands of the ``sls`` command line: ``sls lqr`` and ``sls simulate``.

They work on a generated package folder (what ``sls generate --out DIR``
wrote) through :mod:`sls.control`. :func:`register` adds them to the ``sls``
group; errors are :class:`sls.errors.SlsError` subclasses, which the group
prints as one ``error: ...`` line.

``--lqr-from FILE`` of ``sls simulate`` reads the JSON that ``sls lqr --save
FILE`` writes; the file format is :mod:`sls.control.design`'s.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import click
import numpy as np

from sls.cli.help import SectionedCommand
from sls.cli.options import check_simulation_options, simulation_options
from sls.cli.printing import WIDE, equilibrium_lines, format_poles, gain_summary, gain_table, labelled, wrapped
from sls.cli.sections import LQR_SECTIONS, SIMULATE_SECTIONS
from sls.cli.values import parse_param
from sls.errors import ControlError, ExpressionError, OutputError, UsageError
from sls.output.write import check_output_file, replacing
from sls.progress import Progress

if TYPE_CHECKING:  # sls.control imports scipy: the commands import it when they run
    from sls.control import LQRDesign

__all__ = ["parse_vector", "parse_weight", "register"]


def _number(text: str, option: str) -> float:
    from sls.algebra.expressions import parse_expression

    try:
        value = float(text)
    except ValueError:
        try:
            expr = parse_expression(text, option)
        except ExpressionError as exc:  # its message starts with the option (parse_expression's ``where``)
            message = str(exc)
            raise UsageError(message if message.startswith(f"{option}:") else f"{option}: {message}") from None
        if expr.free_symbols:
            names = ", ".join(sorted(s.name for s in expr.free_symbols))
            raise UsageError(
                f"{option}: entry {text!r} is not a number or a constant expression like pi/18 (it uses {names})"
            ) from None
        value = float(expr)
    if not math.isfinite(value):
        raise UsageError(f"{option}: entry {text!r} is not finite")
    return value


def _entries(text: str) -> list[str]:
    return text.replace(",", " ").split()


def parse_vector(text: str, size: int, option: str, names: Sequence[str] = ()) -> np.ndarray:
    """Parse ``"0 pi/18 0 0"`` (or comma-separated) into ``size`` numbers."""
    entries = _entries(text)
    if len(entries) != size:
        listing = f" [{', '.join(names)}]" if names else ""
        raise UsageError(
            f"{option} {text!r}: expected {size} number{'s' if size != 1 else ''}{listing}, got {len(entries)}"
        )
    return np.array([_number(e, option) for e in entries])


def parse_weight(text: str, size: int, option: str) -> np.ndarray:
    """Parse a weight: one number (times I), ``size`` numbers (the diagonal) or rows separated by ``;``."""
    rows = [row for row in text.split(";")]
    if len(rows) > 1:
        matrix = [[_number(e, option) for e in _entries(row)] for row in rows]
        if len(matrix) != size or any(len(row) != size for row in matrix):
            shape = f"{len(matrix)} rows of {', '.join(str(len(r)) for r in matrix)} entries"
            raise UsageError(
                f"{option}: a matrix must have {size} rows of {size} entries separated by ';', got {shape}"
            )
        return np.array(matrix)
    entries = _entries(text)
    if len(entries) == 1:
        return np.array(_number(entries[0], option))
    if len(entries) != size:
        raise UsageError(
            f"{option} {text!r}: expected one number (times the identity), {size} diagonal entries "
            f"or a {size}x{size} matrix with rows separated by ';', got {len(entries)} numbers"
        )
    return np.array([_number(e, option) for e in entries])


def _params(pkg: ModuleType, texts: Sequence[str]) -> dict[str, float]:
    """The ``--param`` values; a parameter of the package without a default must be among them."""
    from sls.control.package import missing_params

    values = dict(parse_param(p) for p in texts)
    missing = missing_params(pkg, values)
    if missing:
        raise UsageError(f"parameter '{missing[0]}' has no default value; pass it with --param {missing[0]}=VALUE")
    return values


def _design(pkg: ModuleType, path: str, allow_other_model: bool) -> LQRDesign:
    """The design in the file of ``--lqr-from``, made on this package's model unless ``--allow-other-model``;
    its errors name the option."""
    from sls.control.design import load_design, other_model

    try:
        design = load_design(pkg, path, allow_other_model=True)
    except ControlError as exc:
        raise type(exc)(f"--lqr-from {exc}") from None
    if design.fingerprint != getattr(pkg, "FINGERPRINT", None):
        text = f"--lqr-from {other_model(path, design.fingerprint, pkg)}"
        if not allow_other_model:
            raise ControlError(
                f"{text}: run sls lqr on this package again, or pass --allow-other-model to use it all the same"
            )
        click.echo(f"warning: {text}; using it as --allow-other-model asks", err=True)
    return design


def register(group: click.Group) -> None:
    """Add ``lqr`` and ``simulate`` to the ``sls`` command group."""
    group.add_command(lqr_command)
    group.add_command(simulate_command)


#: ``--param NAME=VALUE`` of both control commands.
_PARAM_OPTION = click.option(
    "--param",
    "params",
    multiple=True,
    metavar="NAME=VALUE",
    help="Parameter value passed to the generated functions, repeatable.",
)


@click.command("lqr", cls=SectionedCommand, sections=LQR_SECTIONS)
@click.argument("package_dir", metavar="DIR")
@click.option(
    "--x-eq",
    "x_eq",
    metavar="VALUES",
    help='Equilibrium state, 2n numbers (N_Q + N_V with a quaternion base): --x-eq "0 0 0 0" (entries may be '
    "constant expressions like pi).",
)
@click.option(
    "--stance",
    "stance",
    metavar="NAME",
    help="Equilibrium at a stance of the package (STANCES: the robot's SRDF reference configurations, "
    "sls generate --srdf FILE), at rest; instead of --x-eq.",
)
@click.option(
    "--u-eq",
    "u_eq",
    metavar="VALUES",
    help="Equilibrium input, m numbers; default: computed (the input that holds x-eq at rest).",
)
@click.option(
    "--Q",
    "Q",
    default="1",
    show_default=True,
    metavar="WEIGHT",
    help='State weight: a number (times I), 2n diagonal entries "10 10 1 1" (2 N_V, the tangent space, with a '
    'quaternion base), or rows separated by ";".',
)
@click.option(
    "--R",
    "R",
    default="1",
    show_default=True,
    metavar="WEIGHT",
    help="Input weight: a number, m diagonal entries, or rows separated by ';'.",
)
@_PARAM_OPTION
@click.option(
    "--save",
    "save",
    type=click.Path(dir_okay=False),
    metavar="FILE.json",
    help="Write the design as JSON (for sls simulate --lqr-from FILE.json).",
)
def lqr_command(
    package_dir: str,
    x_eq: str | None,
    stance: str | None,
    u_eq: str | None,
    Q: str,
    R: str,
    params: tuple[str, ...],
    save: str | None,
) -> None:
    """LQR gain K and closed-loop poles at an equilibrium of the package in DIR.

    DIR is a folder written by `sls generate --out DIR`. The control law is
    u = u_eq - K (x - x_eq); K minimizes the integral of dx'Q dx + du'R du on
    the linearization at (x_eq, u_eq). Example (cart-pole, pole upright):

      sls lqr cart_pole --x-eq "0 0 0 0" --Q "10 10 1 1" --R 1 --save gain.json
    """
    click.get_current_context().meta["sls.input"] = package_dir  # named by an internal-error report
    from sls.control import equilibrium_input, load_package, lqr, save_design
    from sls.control.tangent import tangent_names

    if save:
        check_output_file(save, "--save")
    pkg = load_package(package_dir)
    values = _params(pkg, params)
    x = _equilibrium_state(pkg, x_eq, stance)
    if u_eq is None:
        u, _ = equilibrium_input(pkg, x, params=values)
    else:
        u = parse_vector(u_eq, pkg.N_INPUTS, "--u-eq", pkg.INPUTS)
    result = lqr(
        pkg,
        x,
        u,
        parse_weight(Q, 2 * pkg.N_DOF, "--Q"),
        parse_weight(R, pkg.N_INPUTS, "--R"),
        params=values,
    )
    for line in equilibrium_lines(pkg.STATE, result.x_eq, pkg.INPUTS, u):
        click.echo(line)
    columns = tangent_names(pkg)
    if len(columns) != len(pkg.STATE):
        click.echo(
            f"x - x_eq below: the tangent vector [difference(q_eq, q); v - v_eq] ({len(columns)} entries: "
            f"{columns[3]}..{columns[5]} the base's rotation vector in its own frame)"
        )
    table = gain_table(columns, pkg.INPUTS, result.K)
    if max(len(line) for line in table) <= WIDE:
        click.echo("K (u = u_eq - K (x - x_eq)):")
        for line in table:
            click.echo(line)
        click.echo("closed-loop poles:")
        for line in format_poles(result.poles):
            click.echo(f"  {line}")
    else:
        for line in gain_summary(columns, pkg.INPUTS, result.K, save):
            click.echo(line)
        click.echo(f"closed-loop poles ({len(result.poles)}):")
        for line in wrapped(format_poles(result.poles)):
            click.echo(f"  {line}")
    if save:
        save_design(pkg, result, save, params=values)
        click.echo(f"wrote the design to {save}")


def _equilibrium_state(pkg: ModuleType, x_eq: str | None, stance: str | None) -> np.ndarray:
    """The equilibrium of ``--x-eq`` or ``--stance`` (one of them)."""
    from sls.control.package import state_size

    if (x_eq is None) == (stance is None):
        raise UsageError("give the equilibrium with --x-eq VALUES or --stance NAME (one of them)")
    if x_eq is not None:
        return parse_vector(x_eq, state_size(pkg), "--x-eq", pkg.STATE)
    stances = getattr(pkg, "STANCES", None) or {}
    if stance not in stances:
        from sls.model import did_you_mean

        if not stances:
            raise UsageError(
                f"--stance {stance}: the package has no stances; generate it with --srdf FILE (the robot's SRDF "
                "file), or give --x-eq"
            )
        hint = did_you_mean(str(stance), list(stances)) or f" (its stances: {', '.join(stances)})"
        raise UsageError(f"--stance: the package has no stance '{stance}'{hint}")
    return np.array(stances[stance], dtype=float)


@click.command("simulate", cls=SectionedCommand, sections=SIMULATE_SECTIONS)
@click.argument("package_dir", metavar="DIR")
@click.option(
    "--x0",
    "x0",
    required=True,
    metavar="VALUES",
    help='Initial state, 2n numbers (N_Q + N_V with a quaternion base): --x0 "0 pi/18 0 0".',
)
@simulation_options("Close the loop with the design `sls lqr ... --save FILE` wrote; without it the input is zero.")
@click.option(
    "--allow-other-model",
    "allow_other_model",
    is_flag=True,
    help="Use an --lqr-from design made for another model (another fingerprint) with the same state and inputs.",
)
@_PARAM_OPTION
@click.option(
    "--project-x0",
    "project_x0",
    is_flag=True,
    help="Constrained packages (a robot on contacts): move --x0 to the nearest state that keeps the constraints "
    "(positions by Gauss-Newton, velocities as an inelastic impulse leaves them: the feet still) instead of "
    "refusing it.",
)
@click.option(
    "--plot",
    "plot",
    type=click.Path(dir_okay=False),
    metavar="FILE.png",
    help='Write a plot of q(t), qdot(t), u(t) and T + V (needs matplotlib: pip install "sls[plot]").',
)
@click.option(
    "--csv",
    "csv",
    type=click.Path(dir_okay=False),
    metavar="FILE.csv",
    help="Write t, the state, the input and the energy as CSV.",
)
@click.option("--points", default=501, show_default=True, type=click.IntRange(2, 10**6), help="Number of output times.")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing on success (no progress bar).")
def simulate_command(
    package_dir: str,
    x0: str,
    t_end: float,
    t_start: float,
    lqr_from: str | None,
    allow_other_model: bool,
    params: tuple[str, ...],
    project_x0: bool,
    plot: str | None,
    csv: str | None,
    points: int,
    method: str,
    rtol: float,
    atol: float,
    quiet: bool,
) -> None:
    """Simulate the nonlinear model in DIR from --x0, open loop or with an LQR design.

    DIR is a folder written by `sls generate --out DIR`. Prints the final
    state and the energy T + V at the start and the end; --plot writes a
    figure, --csv the samples. A constrained package (a robot on contacts)
    refuses a start that breaks its constraints (--project-x0 projects it),
    keeps them with Baumgarte stabilization (rate: --param
    constraint_stabilization=RATE, default the loop's fastest mode) and
    prints the largest residual. Example (cart-pole from a 10 degree tilt):

    \b
      sls lqr cart_pole --x-eq "0 0 0 0" --Q "10 10 1 1" --save gain.json
      sls simulate cart_pole --x0 "0 10*pi/180 0 0" --t-end 8 --lqr-from gain.json --plot cart_pole.png
    """
    click.get_current_context().meta["sls.input"] = package_dir  # named by an internal-error report
    from sls.control import StiffnessWarning, load_package, settling_time, simulate
    from sls.control.package import state_size

    if plot:
        from sls.control.plot import require_matplotlib

        require_matplotlib()
        check_output_file(plot, "--plot")
    if csv:
        check_output_file(csv, "--csv")
    check_simulation_options(t_start, t_end, rtol, atol)
    pkg = load_package(package_dir)
    values = _params(pkg, params)
    x = parse_vector(x0, state_size(pkg), "--x0", pkg.STATE)
    controller, x_eq = None, None
    if lqr_from:
        controller = _design(pkg, lqr_from, allow_other_model)
        x_eq = controller.x_eq
    t_eval = np.linspace(t_start, t_end, points)
    bar = None if quiet else Progress(1000, "simulating")

    def progress(t: float) -> None:
        if bar is not None:
            bar.update(int(1000 * (t - t_start) / (t_end - t_start)), f"t = {t:.4g} s")

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", StiffnessWarning)  # said below as one warning line
            result = simulate(
                pkg,
                x,
                (t_start, t_end),
                controller,
                method=method,
                params=values,
                progress=progress,
                project=project_x0,
                t_eval=t_eval,
                rtol=rtol,
                atol=atol,
            )
    finally:
        if bar is not None:
            bar.close()
    if result.hint:
        click.echo(f"warning: {result.hint}", err=True)
    if not result.success:
        raise ControlError(f"the integration stopped at t = {result.t[-1]:.6g}: {result.message}")
    if plot:
        from sls.control.plot import plot_simulation

        mode = "LQR closed loop" if controller else "open loop"
        plot_simulation(result, pkg.STATE, plot, input_names=pkg.INPUTS, title=f"{Path(package_dir).name}: {mode}")
    if csv:
        header = ["t", *pkg.STATE, *pkg.INPUTS, "T", "V", "energy"]
        table = np.column_stack([result.t, result.y.T, result.u.T, result.T, result.V, result.energy])
        try:
            with replacing(csv) as temporary:
                np.savetxt(temporary, table, delimiter=",", header=",".join(header), comments="", fmt="%.10g")
        except OSError as exc:
            raise OutputError(f"{csv}: cannot write the samples: {exc.strerror or exc}") from None
    if quiet:
        return
    if result.projection:
        click.echo(result.projection)
    click.echo(f"t = {result.t[-1]:.6g}: x = [{labelled(pkg.STATE, result.y[:, -1])}]")
    if result.constraint_residual is not None:
        rate = "" if result.stabilization is None else f"; Baumgarte rate {result.stabilization:.3g}/s"
        click.echo(
            f"constraints: largest residual {result.constraint_residual:.3g} in position, "
            f"{result.velocity_residual:.3g} in velocity{rate}"
        )
    drift = float(np.max(np.abs(result.energy - result.energy[0])))
    click.echo(
        f"energy T + V: {result.energy[0]:.6g} at start, {result.energy[-1]:.6g} at the end "
        f"(largest change {drift:.3g})"
    )
    if controller is not None:
        u = result.u
        click.echo(
            "input range: "
            + ", ".join(f"{name} in [{u[i].min():.4g}, {u[i].max():.4g}]" for i, name in enumerate(pkg.INPUTS))
        )
        settle = settling_time(result.t, result.y, x_eq)
        text = f"{settle:.3g} s" if math.isfinite(settle) else "not within the run"
        click.echo(f"settling time (state within 2% of its initial distance to x_eq): {text}")
    if plot:
        click.echo(f"wrote the plot to {plot}")
    if csv:
        click.echo(f"wrote the samples to {csv}")
