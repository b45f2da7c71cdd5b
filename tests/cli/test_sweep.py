"""``sls sweep`` (sls/cli/sweep.py): simulations per parameter set of a CSV file on a Dask cluster.

The reference is the serial loop of :func:`sls.control.simulate` here; the API underneath: tests/control/test_sweeps.py.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from click.testing import CliRunner

import sls
import sls.control as control
from sls.cli.app import main

X0 = [0.0, 0.2, 0.0, 0.0]


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli_sweep") / "cart_pole"
    sls.generate(sls.load_example("cart_pole"), folder)
    return folder


@pytest.fixture(scope="module")
def scheduler():
    """The address of a LocalCluster with two worker processes."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0") as cluster:
        yield cluster.scheduler_address


def run_cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_final_states_of_every_set_in_the_files_order(package, scheduler, tmp_path):
    sets = tmp_path / "sets.csv"
    sets.write_text("mp,l\n0.1,0.5\n0.25,0.4\n\n0.05,0.7\n", encoding="utf-8")
    design = tmp_path / "gain.json"
    assert run_cli("lqr", package, "--x-eq", "0 0 0 0", "--Q", "10 10 1 1", "--save", design).exit_code == 0
    common = ["--param-sets", sets, "--x0", "0 0.2 0 0", "--t-end", 2, "--lqr-from", design, "--scheduler", scheduler]
    printed = run_cli("sweep", package, *common, "--quiet")
    assert printed.exit_code == 0, printed.output
    lines = printed.output.splitlines()
    assert lines[0] == "mp,l,s,th,ds,dth"
    table = np.array([[float(cell) for cell in line.split(",")] for line in lines[1:]])
    pkg = control.load_package(package)
    controller = control.load_design(pkg, design)
    pairs = [(0.1, 0.5), (0.25, 0.4), (0.05, 0.7)]
    serial = [control.simulate(pkg, X0, (0, 2), controller, params={"mp": a, "l": b}).y[:, -1] for a, b in pairs]
    assert np.array_equal(table, np.column_stack([pairs, serial]))  # the printed numbers round-trip exactly
    written = run_cli("sweep", package, *common, "--csv", tmp_path / "final.csv")
    assert written.exit_code == 0, written.output
    assert written.output.endswith("wrote 3 final states to " + str(tmp_path / "final.csv") + "\n")
    assert (tmp_path / "final.csv").read_text(encoding="utf-8") == printed.output


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("mp,L\n0.1,0.5\n", "unknown parameter 'L' (the model has: mc, mp, l, g)"),
        ("mp,l\n0.1,x\n", "line 2: l = 'x' is not a number"),
        ("mp,l\n0.1\n", "line 2 has 1 values for the 2 names of the header"),
        ("mp,mp\n0.1,0.2\n", "a parameter appears twice in the header: mp, mp"),
        ("mp\n", "expected a header row of parameter names, then one row of numbers per set"),
        ("mp\ninf\n", "line 2: mp = 'inf' is not finite"),
    ],
)
def test_a_wrong_parameter_file_is_one_line_before_any_cluster(package, tmp_path, text, message):
    pytest.importorskip("distributed")
    sets = tmp_path / "sets.csv"
    sets.write_text(text, encoding="utf-8")
    result = run_cli(
        "sweep", package, "--param-sets", sets, "--x0", "0 0 0 0", "--t-end", 1, "--scheduler", "tcp://0:1"
    )
    assert result.exit_code == 2
    assert result.output == f"error: --param-sets {sets}: {message}\n"


def test_without_dask_the_command_names_the_extra(package, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    result = run_cli("sweep", package, "--param-sets", tmp_path / "none.csv", "--x0", "0 0 0 0", "--t-end", 1)
    assert result.exit_code == 1
    assert result.output.startswith("error: sweeps on a Dask cluster need dask.distributed")
    assert result.output.endswith('pip install "sls[dask]"\n')
