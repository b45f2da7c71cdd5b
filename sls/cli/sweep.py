"""``sls sweep``: one simulation per parameter set of a CSV file, on a Dask cluster, and their final states.

The command reads the parameter sets (a header row of parameter names, one row
of numbers per set), runs :func:`sls.control.sweep` with the ``"simulate"``
task (open loop, or closed with ``--lqr-from FILE``) on a local cluster or the
scheduler at ``--scheduler ADDRESS``, and writes the sets with their final
states as CSV (``--csv FILE``, else standard output).
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import click

from sls.cli.control import parse_vector
from sls.cli.help import SectionedCommand
from sls.cli.options import check_simulation_options, simulation_options
from sls.cli.sections import SWEEP_SECTIONS
from sls.errors import OutputError, UsageError
from sls.output.write import check_output_file, replacing

__all__ = ["read_parameter_sets", "sweep_command"]


def read_parameter_sets(path: str, known: dict[str, object]) -> list[dict[str, float]]:
    """The parameter sets of a CSV file: a header row of the package's parameter names (``known``), one row of
    numbers per set; blank lines are skipped."""
    option = f"--param-sets {path}"
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{option}: cannot read it: {exc.strerror or exc}") from None
    rows = [(line, row) for line, row in enumerate(csv.reader(io.StringIO(text)), start=1) if any(map(str.strip, row))]
    if len(rows) < 2:
        raise UsageError(f"{option}: expected a header row of parameter names, then one row of numbers per set")
    names = [cell.strip() for cell in rows[0][1]]
    unknown = [name for name in names if name not in known]
    if unknown:
        raise UsageError(f"{option}: unknown parameter '{unknown[0]}' (the model has: {', '.join(known) or 'none'})")
    if len(set(names)) < len(names):
        raise UsageError(f"{option}: a parameter appears twice in the header: {', '.join(names)}")
    sets = []
    for line, row in rows[1:]:
        if len(row) != len(names):
            raise UsageError(f"{option}: line {line} has {len(row)} values for the {len(names)} names of the header")
        values = {}
        for name, cell in zip(names, row):
            try:
                values[name] = float(cell)
            except ValueError:
                raise UsageError(f"{option}: line {line}: {name} = {cell.strip()!r} is not a number") from None
            if not math.isfinite(values[name]):
                raise UsageError(f"{option}: line {line}: {name} = {cell.strip()!r} is not finite")
        sets.append(values)
    return sets


#: Options renamed for one vocabulary (``--param NAME=VALUE`` is one value; ``--out`` is a folder; ``--csv`` a file).
SWEEP_RENAMED = {"--params": "--param-sets", "--out": "--csv"}


@click.command("sweep", cls=SectionedCommand, sections=SWEEP_SECTIONS, renamed=SWEEP_RENAMED)
@click.argument("package_dir", metavar="DIR")
@click.option(
    "--param-sets",
    "params_file",
    required=True,
    type=click.Path(dir_okay=False),
    metavar="FILE.csv",
    help="The parameter sets: a header row of parameter names, then one row of numbers per set.",
)
@click.option("--x0", "x0", required=True, metavar="VALUES", help="Initial state, as for sls simulate.")
@simulation_options("Close every loop with the design `sls lqr ... --save FILE` wrote; without it the input is zero.")
@click.option(
    "--scheduler",
    metavar="ADDRESS",
    help="A running Dask scheduler (tcp://host:8786); default: a local cluster started for the sweep.",
)
@click.option("--workers", type=click.IntRange(1), help="Worker processes of the local cluster (default: Dask's).")
@click.option("--chunk-size", "chunk_size", type=click.IntRange(1), help="Parameter sets per Dask task.")
@click.option(
    "--csv",
    "out",
    type=click.Path(dir_okay=False),
    metavar="FILE.csv",
    help="Write the sets and their final states as CSV; default: print them.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar, and no line saying what was written.")
def sweep_command(
    package_dir: str,
    params_file: str,
    x0: str,
    t_end: float,
    t_start: float,
    lqr_from: str | None,
    method: str,
    rtol: float,
    atol: float,
    scheduler: str | None,
    workers: int | None,
    chunk_size: int | None,
    out: str | None,
    quiet: bool,
) -> None:
    """Simulate the package in DIR once per parameter set of a CSV file, on a Dask cluster.

    Prints (or writes to --csv) a CSV of the parameter sets and the state at
    --t-end of each, in the file's order. Needs dask.distributed
    (pip install "sls[dask]"). Example (one LQR design against many poles):

    \b
      sls lqr cart_pole --x-eq "0 0 0 0" --Q "10 10 1 1" --save gain.json
      sls sweep cart_pole --param-sets poles.csv --x0 "0 0.2 0 0" --t-end 4 --lqr-from gain.json --csv final.csv
    """
    click.get_current_context().meta["sls.input"] = package_dir  # named by an internal-error report
    from sls.control import load_design, load_package, sweep
    from sls.control.package import state_size
    from sls.control.sweeps import require_distributed

    require_distributed()
    if out:
        check_output_file(out, "--csv")
    check_simulation_options(t_start, t_end, rtol, atol)
    if workers is not None and scheduler is not None:
        raise UsageError("--workers sizes the local cluster; it does not go with --scheduler")
    pkg = load_package(package_dir)
    sets = read_parameter_sets(params_file, pkg.PARAMS)
    x = parse_vector(x0, state_size(pkg), "--x0", pkg.STATE)
    controller = load_design(pkg, lqr_from) if lqr_from else None
    final = sweep(
        pkg,
        sets,
        x0=x,
        t_span=(t_start, t_end),
        controller=controller,
        method=method,
        rtol=rtol,
        atol=atol,
        scheduler=scheduler,
        workers=workers,
        chunk_size=chunk_size,
        progress=not quiet,
    )
    names = list(sets[0])
    lines = [",".join([*names, *pkg.STATE])]
    lines += [",".join(repr(float(v)) for v in [*values.values(), *state]) for values, state in zip(sets, final)]
    text = "\n".join(lines) + "\n"
    if out is None:
        click.echo(text, nl=False)
        return
    try:
        with replacing(out) as temporary:
            Path(temporary).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise OutputError(f"{out}: cannot write the final states: {exc.strerror or exc}") from None
    if not quiet:
        click.echo(f"wrote {len(sets)} final states to {out}")
