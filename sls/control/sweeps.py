"""Parameter sweeps and Monte-Carlo runs of a generated package on a Dask cluster (``dask.distributed``).

:func:`sweep` runs one task per parameter set — a simulation to its final state,
an LQR gain, or any function of the package and the parameters — on the workers
of a ``dask.distributed`` cluster and returns the results in the order of the
parameter sets. Without ``client`` or ``scheduler`` it starts a local cluster of
worker processes for the call and closes it afterwards.

The workers load the package themselves, from its folder: they must see the
client's file system at the same path (one machine, or a shared file system),
or be able to import the package by its module name (a package imported with
``import cart_pole`` whose folder is on their ``PYTHONPATH``, or installed). A C
package's compiled extension (``_native*.so``) is then loaded by each worker
from that folder, so the workers need the same platform and CPython as the
machine that generated it. The package's functions and a package imported by
name pickle by reference (``module.function``): they can also be passed to
``client.submit`` as they are, under the same condition. A package loaded from
a path with :func:`~sls.control.load_package` has a private module name that
exists only in the process that loaded it: give :func:`sweep` the package or
its path, not its functions.

Needs ``dask.distributed`` (``pip install "sls[dask]"``); without it
:func:`sweep` raises :class:`~sls.errors.MissingDependencyError` with that hint.
"""

from __future__ import annotations

import importlib
import inspect
import math
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, TypeAlias

import numpy as np

from sls.control.package import Package, checked_params, load_package
from sls.control.riccati import dlqr, lqr
from sls.control.simulation import simulate
from sls.errors import ControlError, MissingDependencyError, SlsError, brief
from sls.progress import Progress

__all__ = ["DASK_HINT", "TASKS", "parameter_sets", "sweep"]

#: The line :func:`sweep` raises without dask.distributed.
DASK_HINT = (
    'sweeps on a Dask cluster need dask.distributed, which is not installed; install it with: pip install "sls[dask]"'
)

#: A task of :func:`sweep`: the name of a built-in one or ``task(pkg, params, **options)``.
Task: TypeAlias = "str | Callable[..., Any]"

#: The parameter sets of a sweep: a list of dicts, or a dict of equally long arrays (scalars are shared).
ParameterSets: TypeAlias = "Sequence[Mapping[str, object]] | Mapping[str, object]"

#: Parameter sets per worker thread when ``chunk_size`` is not given (a few, so that a slow set does not stall).
CHUNKS_PER_THREAD = 8


def _final_state(module: ModuleType, params: dict[str, float], **options: Any) -> np.ndarray:
    """``simulate(pkg, x0, t_span, ...)``'s last state; a run that stops early is an error of its set."""
    result = simulate(module, params=params, **options)
    if not result.success:
        raise ControlError(f"the simulation stopped at t = {result.t[-1]:.6g}: {result.message}")
    state: np.ndarray = result.y[:, -1].copy()
    return state


def _lqr_gain(module: ModuleType, params: dict[str, float], **options: Any) -> np.ndarray:
    return lqr(module, params=params, **options).K


def _dlqr_gain(module: ModuleType, params: dict[str, float], **options: Any) -> np.ndarray:
    return dlqr(module, params=params, **options).K


#: The built-in tasks: the function that runs one parameter set, the :mod:`sls.control` function whose keyword
#: arguments the options are, and the options it needs.
TASKS: dict[str, tuple[Callable[..., np.ndarray], Callable[..., Any], tuple[str, ...]]] = {
    "simulate": (_final_state, simulate, ("x0", "t_span")),
    "lqr": (_lqr_gain, lqr, ("x_eq",)),
    "dlqr": (_dlqr_gain, dlqr, ("x_eq", "dt")),
}


def sweep(
    pkg: Package,
    params: ParameterSets,
    task: Task = "simulate",
    *,
    client: Any = None,
    scheduler: str | None = None,
    workers: int | None = None,
    chunk_size: int | None = None,
    progress: bool = True,
    **options: Any,
) -> Any:
    """Run ``task`` once per parameter set on a Dask cluster; the results in the order of the sets.

    Parameters
    ----------
    pkg : module or path
        A generated package (numpy or C target) or its folder; the workers load
        it from that folder (see the module notes for what they must see).
    params : list of dicts, or dict of arrays
        The parameter sets: ``[{"mp": 0.1}, {"mp": 0.2}, ...]``, or
        ``{"mp": array, "l": array}`` with arrays of one length ``N`` (a
        scalar is shared by every set). Parameters left out keep the
        package's defaults. Every set is checked before anything runs.
    task : "simulate", "lqr", "dlqr" or callable
        * ``"simulate"`` — :func:`~sls.control.simulate` with the options
          (``x0=``, ``t_span=`` required; ``controller=``, ``method=``,
          solve_ivp's ``rtol=``, ...): the final state. Returns an array
          ``(N, N_Q + N_V)``.
        * ``"lqr"`` / ``"dlqr"`` — :func:`~sls.control.lqr` /
          :func:`~sls.control.dlqr` with the options (``x_eq=`` required,
          ``u_eq=``, ``Q=``, ``R=``, ``N=``, ``dt=`` for ``dlqr``): the gain
          ``K``. Returns an array ``(N, m, 2n)``.
        * ``task(pkg, params, **options)`` — any picklable function (a lambda
          or a closure is sent by value with cloudpickle) of the loaded
          package and one parameter dict. Returns a list of its results.
    client : dask.distributed.Client, optional
        Run on this client's cluster (it stays open).
    scheduler : str, optional
        The address of a running scheduler (``"tcp://host:8786"``): a client
        is connected for the call and closed afterwards.
    workers : int, optional
        Worker processes of the local cluster started when neither ``client``
        nor ``scheduler`` is given (one thread each; default: Dask's choice
        for this machine). Put the call under ``if __name__ == "__main__":``
        in a script, as for any cluster of processes.
    chunk_size : int, optional
        Parameter sets per Dask task (default: enough for
        :data:`CHUNKS_PER_THREAD` tasks per worker thread), so that many small
        runs do not each cost a round trip to the scheduler.
    progress : bool
        A progress bar on stderr for sweeps longer than a second (plain lines
        when stderr is not a terminal); ``False`` turns it off.
    **options
        Passed to the task for every parameter set (the same for all).

    Raises
    ------
    MissingDependencyError
        dask.distributed is not installed.
    ControlError
        A parameter set that is wrong (unknown name, not a number, ...), a
        missing or unknown option, or a task that fails: one line naming the
        parameter set by its index and values and the cause.
    """
    distributed = require_distributed()
    module = load_package(pkg)
    sets = parameter_sets(module, params)
    function = _task_function(task, options)
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ControlError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    reference = PackageReference.of(module, pkg)
    with _connected(distributed, client, scheduler, workers) as active:
        size = chunk_size or _default_chunk_size(active, len(sets))
        numbered = list(enumerate(sets))
        chunks = [numbered[start : start + size] for start in range(0, len(sets), size)]
        results = _gather(distributed, active, reference, function, chunks, options, sets, progress)
    if isinstance(task, str):
        return np.stack(results)
    return results


def require_distributed() -> ModuleType:
    """Import and return ``dask.distributed``, or raise :class:`MissingDependencyError` with the install hint."""
    try:
        import distributed
    except ImportError:
        raise MissingDependencyError(DASK_HINT) from None
    return distributed


def parameter_sets(pkg: Package, params: ParameterSets) -> list[dict[str, float]]:
    """``params`` as a list of checked parameter dicts of the package (values as floats).

    A list holds one dict per set; a dict maps names to arrays of one length
    (one value per set) or to scalars (the same for every set).
    """
    module = load_package(pkg)
    if isinstance(params, Mapping):
        sets = _from_columns(params)
    elif isinstance(params, Sequence) and not isinstance(params, str):
        sets = list(params)
    else:
        raise ControlError(f"params must be a list of dicts or a dict of arrays, got {type(params).__name__}")
    if not sets:
        raise ControlError("params holds no parameter set")
    checked = []
    for index, values in enumerate(sets):
        if not isinstance(values, Mapping):
            raise ControlError(f"parameter set {index} must be a dict of name: value, got {brief(repr(values), 60)}")
        try:
            checked.append({name: float(value) for name, value in checked_params(module, values).items()})
        except ControlError as exc:
            raise ControlError(f"parameter set {index} ({describe(values)}): {exc}") from None
    return checked


def _from_columns(columns: Mapping[str, object]) -> list[Mapping[str, object]]:
    """``{"mp": [a, b], "l": 0.5}`` → ``[{"mp": a, "l": 0.5}, {"mp": b, "l": 0.5}]``."""
    arrays = {name: np.asarray(value) for name, value in columns.items()}
    lengths = {name: array.shape[0] for name, array in arrays.items() if array.ndim == 1}
    wrong = [name for name, array in arrays.items() if array.ndim > 1]
    if wrong:
        raise ControlError(f"params['{wrong[0]}'] must be a number or a 1-D array, got shape {arrays[wrong[0]].shape}")
    if len(set(lengths.values())) > 1:
        listing = ", ".join(f"'{name}' has {count}" for name, count in lengths.items())
        raise ControlError(f"the arrays in params must have one length: {listing}")
    count = next(iter(lengths.values()), 1)
    return [
        {name: (array[k] if array.ndim == 1 else array).item() for name, array in arrays.items()} for k in range(count)
    ]


def describe(values: Mapping[str, object]) -> str:
    """``mp=0.2, l=0.5``: a parameter set for a message (numbers with 6 significant digits)."""
    parts = []
    for name, value in values.items():
        try:
            parts.append(f"{name}={float(value):.6g}")  # type: ignore[arg-type]
        except (TypeError, ValueError):
            parts.append(f"{name}={value!r}")
    return brief(", ".join(parts) or "defaults", 120)


def _task_function(task: Task, options: Mapping[str, Any]) -> Task:
    """The built-in task's name (checked with its required options) or the caller's callable."""
    if callable(task):
        return task
    if not isinstance(task, str) or task not in TASKS:
        raise ControlError(
            f"task must be one of {', '.join(TASKS)} or a callable task(pkg, params, **options), got {task!r}"
        )
    _, function, required = TASKS[task]
    missing = [name for name in required if name not in options]
    if missing:
        raise ControlError(f'task "{task}" needs the option {missing[0]}=... (given: {", ".join(options) or "none"})')
    parameters = inspect.signature(function).parameters
    if not any(parameter.kind is parameter.VAR_KEYWORD for parameter in parameters.values()):
        accepted = [name for name in parameters if name not in ("pkg", "params")]
        unknown = [name for name in options if name not in accepted]
        if unknown:
            raise ControlError(f'task "{task}" takes no option {unknown[0]}= (it takes {", ".join(accepted)})')
    return task


@dataclass(frozen=True)
class PackageReference:
    """How a worker finds the package: its folder, else its module name; the model fingerprint to check."""

    folder: str
    name: str | None
    fingerprint: str | None

    @classmethod
    def of(cls, module: ModuleType, pkg: Package) -> PackageReference:
        """The reference of a loaded package (``pkg`` as the caller gave it: a module or a folder)."""
        source = pkg if isinstance(pkg, (str, Path)) else Path(str(module.__file__)).parent
        name = module.__name__ if isinstance(pkg, ModuleType) and not module.__name__.startswith("_sls_") else None
        return cls(str(Path(source).resolve()), name, getattr(module, "FINGERPRINT", None))

    def load(self) -> ModuleType:
        """The package in this (worker) process: loaded once per process and folder, reloaded if regenerated."""
        with _LOCK:
            module = _LOADED.get(self.folder)
            if module is None or getattr(module, "FINGERPRINT", None) != self.fingerprint:
                module = _LOADED[self.folder] = self._import()
        if getattr(module, "FINGERPRINT", None) != self.fingerprint:
            raise ControlError(
                f"the worker holds another build of {self.folder} (model fingerprint "
                f"{getattr(module, 'FINGERPRINT', None)}, the client's {self.fingerprint}); restart the workers "
                "(client.restart()) after regenerating a C package"
            )
        return module

    def _import(self) -> ModuleType:
        if (Path(self.folder) / "__init__.py").is_file():
            return load_package(self.folder)
        if self.name is not None:
            try:
                return load_package(importlib.import_module(self.name))
            except ImportError:
                pass
        import socket

        raise ControlError(
            f"the worker on {socket.gethostname()} sees no package at {self.folder}"
            f"{' and cannot import ' + self.name if self.name else ''}: the workers must share the client's file "
            "system, or have the package importable (on their PYTHONPATH)"
        )


_LOADED: dict[str, ModuleType] = {}
_LOCK = threading.Lock()


def run_chunk(
    reference: PackageReference, task: Task, chunk: list[tuple[int, dict[str, float]]], options: dict[str, Any]
) -> list[tuple[int, bool, Any]]:
    """Run ``task`` on each ``(index, params)`` of ``chunk`` (on a worker): ``(index, True, result)``, or
    ``(index, False, reason)`` for the first set that fails (the rest of the chunk is not run)."""
    try:
        module = reference.load()
    except ControlError as exc:
        return [(chunk[0][0], False, str(exc))]
    function = TASKS[task][0] if isinstance(task, str) else task
    done: list[tuple[int, bool, Any]] = []
    for index, values in chunk:
        try:
            done.append((index, True, function(module, dict(values), **options)))
        except Exception as exc:  # the user's task may raise anything: one line, reported by the client
            done.append((index, False, _reason(exc)))
            break
    return done


def _reason(exc: BaseException) -> str:
    """One line for a failure: an sls error's message, else the exception's class and message."""
    text = " ".join(str(exc).split())
    if isinstance(exc, SlsError) and text:
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@contextmanager
def _connected(distributed: ModuleType, client: Any, scheduler: str | None, workers: int | None) -> Iterator[Any]:
    """The client to run on: the caller's, one connected to ``scheduler``, or one of a local cluster for the call."""
    if client is not None and scheduler is not None:
        raise ControlError("give either client= or scheduler=, not both")
    if workers is not None and (client is not None or scheduler is not None):
        raise ControlError("workers= sets the size of the local cluster sweep starts; not with client= or scheduler=")
    if client is not None:
        yield client
        return
    if scheduler is not None:
        try:
            connected = distributed.Client(scheduler, timeout="10s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise ControlError(f"cannot connect to the Dask scheduler at {scheduler}: {_reason(exc)}") from None
        with connected:
            yield connected
        return
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise ControlError(f"workers must be a positive integer, got {workers!r}")
    cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0")
    with cluster, distributed.Client(cluster) as local:
        yield local


def _default_chunk_size(client: Any, count: int) -> int:
    threads = sum(client.nthreads().values()) or 1
    return max(1, math.ceil(count / (CHUNKS_PER_THREAD * threads)))


def _gather(
    distributed: ModuleType,
    client: Any,
    reference: PackageReference,
    task: Task,
    chunks: list[list[tuple[int, dict[str, float]]]],
    options: dict[str, Any],
    sets: list[dict[str, float]],
    progress: bool,
) -> list[Any]:
    """Submit the chunks, collect their results in input order, stop at the first failing parameter set."""
    futures = [client.submit(run_chunk, reference, task, chunk, options, pure=False) for chunk in chunks]
    results: list[Any] = [None] * len(sets)
    done = 0
    bar = Progress(len(sets), f"sweep of {len(sets)} parameter sets") if progress else None
    try:
        with bar or nullcontext():
            for future in distributed.as_completed(futures):
                try:
                    rows = future.result()
                except Exception as exc:  # a worker lost, a result that does not pickle, ...
                    first, last = _future_range(futures, future, chunks)
                    raise ControlError(f"parameter sets {first}-{last}: {_reason(exc)}") from None
                for index, ok, value in rows:
                    if not ok:
                        raise ControlError(f"parameter set {index} ({describe(sets[index])}): {value}")
                    results[index] = value
                done += len(rows)
                if bar is not None:
                    bar.update(done)
    finally:
        pending = [future for future in futures if not future.done()]
        if pending:
            client.cancel(pending)
    return results


def _future_range(futures: list[Any], future: Any, chunks: list[list[tuple[int, dict[str, float]]]]) -> tuple[int, int]:
    """The first and last index of the parameter sets of ``future``'s chunk."""
    chunk = chunks[futures.index(future)]
    return chunk[0][0], chunk[-1][0]
