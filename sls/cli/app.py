"""The ``sls`` command line.

Every user mistake ends in one line on stderr (``error: ...``) and a
non-zero exit code: 2 for usage errors, 1 for model and output errors. No
traceback is shown for them. A failure sls did not foresee (a bug in sls) is
one line too, but says so: ``error: internal error in sls VERSION ...``
naming the input, where to report it, exit code :data:`INTERNAL_ERROR`; the
traceback with ``--verbose`` or ``SLS_TRACEBACK=1``.
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from sls.backends import TARGETS
from sls.cli.help import SectionedCommand, split_list
from sls.cli.models import NLINK, NLINK_DEFAULT, RobotOptions, load_model
from sls.cli.options import check_output_folder
from sls.cli.sections import GENERATE_SECTIONS
from sls.errors import ExpressionError, ModelError, SlsError, UsageError, brief, one_line
from sls.generate import choose, generate, progress_steps
from sls.model import Model, with_name
from sls.progress import Progress
from sls.readers import (
    DEFAULT_EXAMPLE,
    example_description,
    example_names,
)
from sls.readers.mjcf import MJCF_SUFFIXES
from sls.readers.nlink import MAX_LINKS
from sls.readers.urdf.xacro_files import is_xacro, parse_xacro_args
from sls.version import __version__

#: Exit code of an internal error (a bug in sls): sysexits' EX_SOFTWARE.
INTERNAL_ERROR = 70
#: Where internal errors are to be reported.
REPORT_TO = "the sls issue tracker"


def _internal(ctx: click.Context, error: BaseException) -> NoReturn:
    """A bug in sls as one line naming the input and the version (the traceback first with --verbose)."""
    if ctx.meta.get("sls.verbose"):
        import traceback

        traceback.print_exception(type(error), error, error.__traceback__, file=sys.stderr)
    where = ctx.meta.get("sls.input")
    running = f"sls {ctx.invoked_subcommand}" + (f" on {where}" if where else "")
    detail = brief(one_line(f"{type(error).__name__}: {error}".rstrip(": ")), 300)
    click.echo(
        f"error: internal error in sls {__version__} running {running} (a bug in sls, not a mistake in your input): "
        f"{detail}; please report it to {REPORT_TO} with {where or 'the command line'} and this line"
        + ("" if ctx.meta.get("sls.verbose") else " (--verbose or SLS_TRACEBACK=1 shows the traceback)"),
        err=True,
    )
    sys.exit(INTERNAL_ERROR)


def _fail(error: SlsError) -> NoReturn:
    click.echo(f"error: {error}", err=True)
    sys.exit(error.exit_code)


def _usage(error: click.UsageError) -> NoReturn:
    """Click's own usage errors, as one ``error:`` line (exit code 2)."""
    if type(error).__name__ == "NoArgsIsHelpError":  # bare `sls`: click shows the help
        raise error
    hint = f" (see '{error.ctx.command_path} --help')" if error.ctx is not None else ""
    click.echo(f"error: {one_line(error.format_message())}{hint}", err=True)
    sys.exit(error.exit_code)


class _Group(click.Group):
    """Click group that turns :class:`SlsError` into one line and an exit code."""

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:
            return super().make_context(*args, **kwargs)
        except click.UsageError as error:
            _usage(error)

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except SlsError as error:
            _fail(error)
        except click.UsageError as error:
            _usage(error)
        except KeyboardInterrupt:
            if ctx.invoked_subcommand == "generate":
                click.echo(
                    "error: interrupted (the output folder holds the old package, the new one, or one that "
                    "refuses to import until you run sls generate again; never a mix)",
                    err=True,
                )
            else:
                click.echo("error: interrupted", err=True)
            sys.exit(130)
        except OSError as error:
            if error.errno == errno.EPIPE:
                raise  # click silences a closed stdout (sls examples | head)
            where = f"{error.filename}: " if error.filename else ""
            click.echo(f"error: {where}{error.strerror or error}", err=True)
            sys.exit(1)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except Exception as error:  # a failure sls did not foresee: a bug in sls, one line, the traceback on request
            if os.environ.get("SLS_TRACEBACK"):
                raise
            _internal(ctx, error)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="sls")
def main() -> None:
    """sls — the Symbolic Lagrangian Solver.

    Derives a mechanical system's equations of motion M(q) qddot + C(q, qdot) qdot
    + phi(q) = u - fric from its kinetic energy T, potential energy V, friction
    and state x = [q; qdot], and writes them as standalone numpy modules
    (M_fun, C_fun, phi_fun, fric_fun, their Jacobians, qddot_fun,
    linearized_model, ...).

    Start with `sls generate` (the bundled two-link arm) or `sls examples`.
    """


@main.command("examples")
def examples_command() -> None:
    """List the bundled example models (usable as `sls generate NAME`)."""
    for name in example_names():
        marker = " (default)" if name == DEFAULT_EXAMPLE else ""
        click.echo(f"{name:<22} {example_description(name)}{marker}")
    click.echo(
        f"{NLINK:<22} Planar n-link pendulum, point masses, symbolic masses and lengths: "
        f"sls generate {NLINK} --n N (default {NLINK_DEFAULT})"
    )


def _place(text: str) -> str:
    """A ``--contact-at`` value ``LINK=X,Y,Z`` with its numbers separated by commas, spaces or both, as sls reads it."""
    name, sep, values = text.partition("=")
    return f"{name}{sep}{','.join(split_list(values))}" if sep else text


def _names_list(text: str | None) -> str | None:
    """A list option's names (commas, spaces or both between them) as the comma-separated form sls reads."""
    return None if text is None else ",".join(split_list(text))


@main.command("generate", cls=SectionedCommand, sections=GENERATE_SECTIONS, renamed={"--x": "--state"})
@click.argument("model", required=False)
@click.option("--T", "T", metavar="EXPR", help="Kinetic energy T(q, qdot), quadratic in qdot (inline model).")
@click.option("--V", "V", metavar="EXPR", help="Potential energy V(q) (inline model).")
@click.option(
    "--fric", multiple=True, metavar="EXPR", help="Friction force, once per degree of freedom; --fric 0 for none."
)
@click.option(
    "--state", "x", metavar="NAMES", help='State names, q first then qdot: --state "q1 q2 dq1 dq2" (or q1,q2,dq1,dq2).'
)
@click.option(
    "--param",
    "params",
    multiple=True,
    metavar="NAME=VALUE",
    help="Parameter default, repeatable (also overrides a model file's [params]).",
)
@click.option(
    "--input", "inputs", multiple=True, metavar="NAME", help="Input name, repeatable (inline model with an input map)."
)
@click.option(
    "--force",
    "forces",
    multiple=True,
    metavar="EXPR",
    help="Generalized force linear in the inputs, once per degree of freedom.",
)
@click.option(
    "--constraint",
    "constraints",
    multiple=True,
    metavar="EXPR",
    help="Holonomic constraint c(q) = 0, repeatable (inline model).",
)
@click.option(
    "--velocity-constraint",
    "velocity_constraints",
    multiple=True,
    metavar="EXPR",
    help="Velocity (rolling) constraint a(q) qdot = 0, linear in qdot, repeatable (inline model).",
)
@click.option(
    "--kinematics",
    "kinematics",
    multiple=True,
    metavar="EXPR",
    help="Kinematic equation qdot_i = S(q) v, one per coordinate in order, repeatable (inline model): the second "
    "half of --state are then generalized speeds.",
)
@click.option(
    "--range",
    "ranges",
    multiple=True,
    metavar="NAME=LOW:HIGH",
    help="Where the model lives: the checks of M and the constraints sample state variable NAME only in "
    "[LOW, HIGH] (default [-pi, pi] for coordinates), repeatable; e.g. --range theta=-0.5:0.5.",
)
@click.option(
    "--out",
    "-o",
    "out",
    default="generated",
    show_default=True,
    metavar="DIR",
    type=click.Path(file_okay=True, dir_okay=True),
    help="Output folder; it becomes a Python package.",
)
@click.option("--n", "links", type=int, metavar="N", help=f"Number of links of the {NLINK} example (1 to {MAX_LINKS}).")
@click.option(
    "--floating-base",
    "floating_base",
    is_flag=True,
    help="URDF robots: free the root link as Pinocchio's free-flyer root joint (coordinates base_x, base_y, base_z "
    "and a unit quaternion base_qx ... base_qw, speeds base_vx ... base_wz in the base's frame; inputs: a body "
    "wrench base_fx ... base_mz).",
)
@click.option(
    "--frames",
    "frames",
    metavar="LINKS",
    default=None,
    help="URDF robots: generate the world poses, Jacobians (LOCAL_WORLD_ALIGNED) and Jdot v of these links "
    "(separated by commas or spaces; 'all' for every link) and the centre of mass.",
)
@click.option(
    "--contacts",
    "contacts",
    metavar="LINKS",
    default=None,
    help="URDF robots: hold these links in place, LINK or LINK:point or LINK:6d, separated by commas or spaces "
    "(point contacts: the origin, three constraints each, at the "
    "parameters contact_<link>_x/_y/_z; LINK:6d also holds the orientation, contact_<link>_roll/_pitch/_yaw: six), "
    "by default where they are at the neutral configuration.",
)
@click.option(
    "--contact-at",
    "contact_at",
    multiple=True,
    metavar="LINK=X,Y,Z",
    help="URDF robots with --contacts: where a contact is held (world; LINK=X,Y,Z,ROLL,PITCH,YAW for a 6-D one), "
    "instead of where it is at the neutral configuration (repeatable).",
)
@click.option(
    "--srdf",
    "srdf",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    help="URDF robots: the robot's SRDF file; its <group_state> stances are kept in the package (STANCES, "
    "sls lqr --stance NAME).",
)
@click.option(
    "--stance",
    "stance",
    metavar="NAME",
    help="URDF robots with --srdf and --contacts: hold the contacts where the links are at this stance.",
)
@click.option(
    "--base-wrench",
    "base_wrench",
    is_flag=True,
    help="URDF robots with --floating-base and --contacts: keep the base's body wrench base_fx ... base_mz as "
    "inputs (default: the joint motors alone).",
)
@click.option(
    "--inertial-params",
    "inertial_params",
    metavar="LINKS",
    default=None,
    help="Robot files: these links' ten inertial parameters (LINK_m, LINK_mcx ... LINK_Izz; 'all' for every moving "
    "link) become parameters, the file's values their defaults; adds regressor_fun, PI and PI_NAMES.",
)
@click.option(
    "--xacro-arg",
    "xacro_args",
    multiple=True,
    metavar="NAME:=VALUE",
    help="xacro robots (NAME.urdf.xacro): an argument of the file (repeatable).",
)
@click.option(
    "--package-path",
    "package_paths",
    multiple=True,
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="xacro robots: a folder holding the ROS packages $(find PKG) and package://PKG name (repeatable).",
)
@click.option(
    "--no-actuators",
    "no_actuators",
    is_flag=True,
    help="MJCF models: read the file without its <actuator> elements (a force on every joint as the inputs), "
    "e.g. for actuators with activation dynamics, which sls does not model.",
)
@click.option(
    "--base-orientation",
    "base_orientation",
    type=click.Choice(("quaternion", "euler")),
    default=None,
    help="URDF robots: how a floating base turns: a unit quaternion with body-frame speeds (the default), or "
    "yaw, pitch, roll angles and their rates (singular at pitch +-90 degrees).",
)
@click.option(
    "--simplify",
    is_flag=True,
    help="Run sympy's trigsimp on the mass matrix and potential forces: shorter code, slower generation.",
)
@click.option(
    "--target",
    type=click.Choice(TARGETS),
    default=TARGETS[0],
    show_default=True,
    help="python: numpy modules. c: C99 sources in OUT/c for controllers, and a package with the same Python API "
    "compiled from them ($CC, else cc). matlab: .m function files for MATLAB and GNU Octave. "
    "casadi: a package of casadi.Functions, the parameters their last input p. jax: pure jax.numpy "
    'modules for jit, vmap and grad (the package needs pip install "sls[jax]").',
)
@click.option(
    "--functions",
    "chosen",
    metavar="NAMES",
    help="Generate only these functions (separated by commas or spaces, e.g. qddot_fun,linearized_model) and those "
    "they call; default: all.",
)
@click.option(
    "--name",
    "model_name",
    metavar="NAME",
    help="The model's name: the prefix of the C functions and header, the name in every header (default: a URDF "
    "robot's <robot name>, else the model file's or example's name).",
)
@click.option("--verbose", "-v", is_flag=True, help="Print per-stage timings.")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing on success.")
def generate_command(
    model: str | None,
    T: str | None,
    V: str | None,
    fric: tuple[str, ...],
    x: str | None,
    params: tuple[str, ...],
    inputs: tuple[str, ...],
    forces: tuple[str, ...],
    constraints: tuple[str, ...],
    velocity_constraints: tuple[str, ...],
    ranges: tuple[str, ...],
    kinematics: tuple[str, ...],
    out: str,
    links: int | None,
    floating_base: bool,
    base_orientation: str | None,
    frames: str | None,
    contacts: str | None,
    contact_at: tuple[str, ...],
    srdf: str | None,
    stance: str | None,
    base_wrench: bool,
    inertial_params: str | None,
    xacro_args: tuple[str, ...],
    package_paths: tuple[str, ...],
    no_actuators: bool,
    simplify: bool,
    target: str,
    chosen: str | None,
    model_name: str | None,
    verbose: bool,
    quiet: bool,
) -> None:
    """Generate the equations of motion of MODEL into the folder --out.

    MODEL is a TOML model file (NAME.toml), a Python model file (NAME.py,
    executed as your own code), a robot description (NAME.urdf or
    NAME.urdf.xacro: revolute, continuous, prismatic, fixed, floating and
    planar joints, mimic joints, joint friction, gravity g along -z;
    --floating-base frees the root link), a MuJoCo model (NAME.xml, compiled by
    the mujoco package: hinge, slide, ball and free joints, actuators as the
    inputs) or a bundled example's name (see `sls examples`); without MODEL and
    without inline flags the bundled two-link arm is generated. The inline
    flags mirror sym_lagrangian_solver(T, V, fric, x):

    \b
      sls generate --T "1/2*m*l^2*dq^2" --V "m*g*l*(1-cos(q))" --fric "b*dq" \\
        --state "q dq" --param m=1 --param l=1 --param g=9.81 --param b=0.1

    Lists (of names or of numbers) take commas, spaces or both between entries.
    """
    meta = click.get_current_context().meta
    inline = any(v is not None for v in (T, V, x))
    meta["sls.input"] = model if model is not None else ("the inline model" if inline else DEFAULT_EXAMPLE)
    meta["sls.verbose"] = verbose
    check_output_folder(out, "--out")
    loaded = load_model(
        model,
        T,
        V,
        fric,
        x,
        params,
        inputs,
        forces,
        links,
        constraints,
        velocity_constraints,
        ranges,
        kinematics,
        RobotOptions(
            floating_base,
            base_orientation,
            _names_list(frames),
            _names_list(contacts),
            parse_xacro_args(xacro_args),
            tuple(package_paths),
            tuple(_place(text) for text in contact_at),
            actuators=not no_actuators,
            srdf=srdf,
            stance=stance,
            base_wrench=base_wrench,
            inertial_params=_names_list(inertial_params),
        ),
    )
    if model_name is not None:
        loaded = with_name(loaded, model_name, "--name", UsageError)
    loaded = choose(loaded, _names_list(chosen), "--functions", UsageError)
    for warning in loaded.warnings():
        click.echo(f"warning: {warning}", err=True)
    try:
        if quiet:
            report = generate(loaded, out, simplify=simplify, target=target)
        else:
            with Progress(progress_steps(loaded, target), f"generating {loaded.name}") as progress:
                report = generate(loaded, out, on_step=progress.step, simplify=simplify, target=target)
    except (ModelError, ExpressionError) as error:  # a model file's errors start with its name
        is_file = model is not None and (
            Path(model).suffix in (".toml", ".py", ".urdf", *MJCF_SUFFIXES) or is_xacro(model)
        )
        if model is not None and is_file and not str(error).startswith(model):
            raise type(error)(f"{model}: {error}") from None
        raise
    if verbose:
        for stage, seconds in report.timings.items():
            click.echo(f"  {stage:<9} {seconds:8.3f} s", err=True)
    if not quiet:
        click.echo(
            f"wrote {len(report.files)} files to {out}/ ({loaded.name}: n = {loaded.n}, m = {loaded.m}) "
            f"in {report.total:.2f} s"
        )
        if loaded.contacts and not loaded.actuated:
            click.echo(f"inputs: {', '.join(s.name for s in loaded.inputs)} ({inputs_note(loaded)})")


def inputs_note(model: Model) -> str:
    """What the inputs of a robot on contacts are: the joint motors alone, or with the base's body wrench."""
    if model.tree is None or not model.tree.bases:
        return "the model's inputs"
    wrench = [s.name for s in model.inputs if not s.name.startswith("tau_")]
    if wrench:
        return "the joint motors and the base's body wrench, which no motor produces"
    return "the joint motors alone; --base-wrench adds the base's body wrench"


# Control commands (sls lqr, sls simulate) live in sls/cli/control.py, sls sweep in sls/cli/sweep.py.
from sls.cli.control import register as _register_control  # noqa: E402

_register_control(main)

from sls.cli.sweep import sweep_command  # noqa: E402  (sls sweep: simulations on a Dask cluster)

main.add_command(sweep_command)


if __name__ == "__main__":  # pragma: no cover
    main()
