"""Sweeps on a Dask cluster (sls/control/sweeps.py), and generated packages on Dask workers.

The references are independent: the serial loop of :func:`sls.control.simulate` / :func:`sls.control.lqr` in this
process, and the package's functions called here. The cluster is a ``LocalCluster`` of two worker processes, so
every package the workers use is pickled, or loaded from its folder, in another process.
"""

from __future__ import annotations

import importlib
import os
import pickle
import shutil
import sys

import numpy as np
import pytest

import sls
import sls.control as control
import sls.control.sweeps as sweeps_module
from sls.control.sweeps import PackageReference
from sls.errors import ControlError, MissingDependencyError

CC = os.environ.get("CC", "cc")
HAS_CC = shutil.which(CC.split()[0]) is not None
X0 = [0.0, 0.2, 0.0, 0.0]
T_SPAN = (0.0, 0.3)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """The cart-pole as a numpy package and (with a compiler) a C package, under names no other test imports."""
    root = tmp_path_factory.mktemp("sweep")
    model = sls.load_example("cart_pole")
    sls.generate(model, root / "cart_pole_sweep_np")
    out = {"root": root, "numpy": root / "cart_pole_sweep_np"}
    if HAS_CC:
        sls.generate(model, root / "cart_pole_sweep_c", target="c")
        out["c"] = root / "cart_pole_sweep_c"
    return out


@pytest.fixture(scope="module")
def client():
    """A client of a LocalCluster with two worker processes of one thread each."""
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster,
        distributed.Client(cluster) as connected,
    ):
        yield connected


def random_sets(count: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"mp": rng.uniform(0.05, 0.3, count), "l": rng.uniform(0.3, 0.8, count)}


def serial_final_states(folder, sets: dict[str, np.ndarray]) -> np.ndarray:
    pkg = control.load_package(folder)
    pairs = zip(sets["mp"], sets["l"])
    runs = [control.simulate(pkg, X0, T_SPAN, params={"mp": mp, "l": length}) for mp, length in pairs]
    return np.array([run.y[:, -1] for run in runs])


class Counting:
    """A client that counts the tasks submitted through it."""

    def __init__(self, client):
        self.client, self.submitted = client, 0

    def submit(self, *args, **kwargs):
        self.submitted += 1
        return self.client.submit(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.client, name)


def test_a_thousand_simulations_on_two_workers_equal_the_serial_loop(folders, client):
    sets = random_sets(1000, seed=1)
    counting = Counting(client)
    swept = control.sweep(folders["numpy"], sets, x0=X0, t_span=T_SPAN, client=counting, progress=False)
    assert swept.shape == (1000, 4)
    assert np.array_equal(swept, serial_final_states(folders["numpy"], sets))  # the same floats, in input order
    assert len(np.unique(swept[:, 1])) == 1000  # the parameters reached the workers
    assert counting.submitted == 16  # chunks of 63 sets: 8 per worker thread, not 1000 round trips


def test_the_progress_bar_goes_to_stderr_and_progress_false_turns_it_off(folders, client, monkeypatch, capfd):
    class Prompt(sweeps_module.Progress):
        def __init__(self, total, label):
            super().__init__(total, label, delay=0.0, plain_delay=0.0)

    monkeypatch.setattr(sweeps_module, "Progress", Prompt)
    sets = {"mp": [0.1, 0.2, 0.3]}
    control.sweep(folders["numpy"], sets, x0=X0, t_span=T_SPAN, client=client, chunk_size=1)
    out, err = capfd.readouterr()
    assert out == "" and err.splitlines()[-1] == "sweep of 3 parameter sets: 100%"
    control.sweep(folders["numpy"], sets, x0=X0, t_span=T_SPAN, client=client, progress=False)
    assert capfd.readouterr() == ("", "")


@pytest.mark.skipif(not HAS_CC, reason=f"no C compiler ({CC})")
def test_a_c_package_runs_on_the_workers_from_its_folder(folders, client):
    sets = random_sets(60, seed=2)
    swept = control.sweep(folders["c"], sets, x0=X0, t_span=T_SPAN, client=client, chunk_size=7, progress=False)
    assert np.array_equal(swept, serial_final_states(folders["c"], sets))

    def where(pkg, params):
        return os.getpid(), os.path.dirname(pkg._native.__file__), float(pkg.T_fun([0, 0, 1, 0], **params))

    places = control.sweep(folders["c"], [{"mc": 2.0}, {"mc": 3.0}], where, client=client, chunk_size=1)
    assert {pid for pid, _, _ in places} <= set(client.run(os.getpid).values())
    assert os.getpid() not in {pid for pid, _, _ in places}
    assert {folder for _, folder, _ in places} == {str(folders["c"].resolve())}
    energies = [energy for _, _, energy in places]
    assert np.allclose(energies, [0.5 * (2.0 + 0.1), 0.5 * (3.0 + 0.1)], rtol=1e-14, atol=0)  # T = (mc + mp) ds²/2


@pytest.mark.parametrize("kind", ["numpy", "c"])
def test_packages_imported_by_name_pickle_and_run_on_the_workers(folders, client, kind, monkeypatch):
    if kind == "c" and not HAS_CC:
        pytest.skip(f"no C compiler ({CC})")
    cloudpickle = pytest.importorskip("cloudpickle")
    root = str(folders["root"])
    monkeypatch.syspath_prepend(root)
    client.run(lambda: sys.path.insert(0, root))  # the workers' PYTHONPATH
    pkg = importlib.import_module(folders[kind].name)
    x, u = np.array([0.1, 0.3, -0.2, 0.5]), [0.7]
    expected = pkg.qddot_fun(x, u, mp=0.25)
    for dumps in (pickle.dumps, cloudpickle.dumps):
        blob = dumps(pkg.qddot_fun)
        assert len(blob) < 100  # by reference: module and name
        got = client.submit(lambda blob, x, u: pickle.loads(blob)(x, u, mp=0.25), blob, x, u, pure=False).result()
        assert np.array_equal(got, expected)
    assert np.array_equal(client.submit(pkg.qddot_fun, x, u, mp=0.25, pure=False).result(), expected)
    module_there = client.submit(lambda module: module.__file__, pkg, pure=False).result()  # the module object itself
    assert module_there == pkg.__file__
    swept = control.sweep(pkg, [{"mp": 0.25}], lambda module, params: module.qddot_fun(x, u, **params), client=client)
    assert np.array_equal(swept[0], expected)


def test_lqr_gains_on_a_local_cluster_made_for_the_call(folders):
    pytest.importorskip("distributed")
    sets = {"mp": [0.1, 0.2, 0.4], "g": 9.81}
    gains = control.sweep(folders["numpy"], sets, "lqr", x_eq=[0, 0, 0, 0], Q=[1, 10, 1, 1], workers=1)
    pkg = control.load_package(folders["numpy"])
    serial = [control.lqr(pkg, [0, 0, 0, 0], Q=[1, 10, 1, 1], params={"mp": mp, "g": 9.81}).K for mp in sets["mp"]]
    assert gains.shape == (3, 1, 4)
    assert np.array_equal(gains, np.stack(serial))


def test_a_scheduler_address_and_a_module_loaded_from_a_path(folders, client):
    pkg = control.load_package(folders["numpy"])  # a private module name: the workers load its folder
    address = client.scheduler.address
    swept = control.sweep(pkg, [{"l": 0.4}, {"l": 0.6}], x0=X0, t_span=T_SPAN, scheduler=address, progress=False)
    assert np.array_equal(swept, serial_final_states(folders["numpy"], {"mp": [0.1, 0.1], "l": [0.4, 0.6]}))


def test_without_dask_one_line_names_the_extra(folders, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed raises ImportError
    with pytest.raises(MissingDependencyError, match=r'pip install "sls\[dask\]"') as caught:
        control.sweep(folders["numpy"], [{"mp": 0.2}], x0=X0, t_span=T_SPAN)
    assert "\n" not in str(caught.value)


def test_a_bad_parameter_name_is_one_line_naming_the_set_before_anything_runs(folders, monkeypatch):
    pytest.importorskip("distributed")
    sets = [{"mp": 0.1}, {"mp": 0.2}, {"mp": 0.3, "lenght": 0.5}]
    with pytest.raises(ControlError) as caught:
        control.sweep(folders["numpy"], sets, x0=X0, t_span=T_SPAN, scheduler="tcp://127.0.0.1:1")  # never reached
    assert str(caught.value) == (
        "parameter set 2 (mp=0.3, lenght=0.5): unknown parameter 'lenght' (the model has: mc, mp, l, g)"
    )
    with pytest.raises(ControlError, match=r"^the arrays in params must have one length: 'mp' has 2, 'l' has 3$"):
        control.sweep(folders["numpy"], {"mp": [0.1, 0.2], "l": [1, 2, 3]}, x0=X0, t_span=T_SPAN)
    with pytest.raises(ControlError, match=r'^task "simulate" needs the option t_span=\.\.\. '):
        control.sweep(folders["numpy"], sets[:2], x0=X0)
    with pytest.raises(ControlError, match=r'^task "lqr" takes no option q= \(it takes x_eq, u_eq, Q, R, N, tol\)$'):
        control.sweep(folders["numpy"], sets[:2], "lqr", x_eq=[0, 0, 0, 0], q=1)
    with pytest.raises(ControlError, match="^task must be one of simulate, lqr, dlqr or a callable"):
        control.sweep(folders["numpy"], sets[:2], "simulation", x0=X0, t_span=T_SPAN)
    with pytest.raises(ControlError, match="^cannot connect to the Dask scheduler at nowhere: ValueError: "):
        control.sweep(folders["numpy"], sets[:2], x0=X0, t_span=T_SPAN, scheduler="nowhere")
    with pytest.raises(ControlError, match="^workers= sets the size of the local cluster sweep starts"):
        control.sweep(folders["numpy"], sets[:2], x0=X0, t_span=T_SPAN, scheduler="tcp://127.0.0.1:1", workers=2)


def test_a_failing_task_is_one_line_naming_its_parameter_set(folders, client):
    sets = {"mp": [0.1, 0.2, -0.1, 0.3], "mc": [1.0, 1.0, -1.0, 1.0]}  # set 2: M is not positive definite
    with pytest.raises(ControlError) as caught:
        control.sweep(folders["numpy"], sets, x0=X0, t_span=T_SPAN, client=client, chunk_size=1, progress=False)
    message = str(caught.value)
    assert message.startswith("parameter set 2 (mp=-0.1, mc=-1): the simulation stopped at t = 0: qddot_fun")
    assert "\n" not in message

    def odd(pkg, params):
        if params["mp"] > 0.25:
            raise RuntimeError("too heavy")
        return params["mp"]

    with pytest.raises(ControlError, match=r"^parameter set 3 \(mp=0.3\): RuntimeError: too heavy$"):
        control.sweep(folders["numpy"], {"mp": [0.1, 0.2, 0.25, 0.3]}, odd, client=client, progress=False)
    assert control.sweep(folders["numpy"], {"mp": [0.1, 0.2]}, odd, client=client) == [0.1, 0.2]


def test_a_worker_without_the_folder_imports_the_package_by_name_or_says_what_it_needs(folders, monkeypatch):
    monkeypatch.syspath_prepend(str(folders["root"]))
    name = folders["numpy"].name
    fingerprint = control.load_package(folders["numpy"]).FINGERPRINT
    module = PackageReference(str(folders["root"] / "elsewhere"), name, fingerprint).load()
    assert module is importlib.import_module(name)
    with pytest.raises(ControlError, match=r"sees no package at .*nowhere: the workers must share the client's file"):
        PackageReference(str(folders["root"] / "nowhere"), None, fingerprint).load()
    with pytest.raises(ControlError, match="holds another build of"):
        PackageReference(str(folders["numpy"]), None, "0123456789abcdef").load()
