"""The pipeline: model → derive → validate → codegen → render → write.

:func:`generate` runs every stage for a :class:`~sls.model.Model` and
returns a :class:`Report` with per-stage timings. Nothing is written unless
every earlier stage succeeded.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from sls import derive
from sls import functions as registry
from sls.backends import Backend, backend
from sls.derive import validate
from sls.errors import ModelError, SlsError, brief
from sls.model import Model, with_ranges
from sls.output import write
from sls.readers import model_from_sympy

T = TypeVar("T")

try:
    from sympy.printing.codeprinter import PrintMethodNotImplementedError
except ImportError:  # sympy < 1.13
    PrintMethodNotImplementedError = NotImplementedError

#: Stage names in order (the keys of :attr:`Report.timings`); targets that compile (C) add
#: ``compile`` before ``write`` (:func:`stages`).
STAGES = ("derive", "validate", "codegen", "render", "write")


def stages(target: str = "python") -> tuple:
    """The stages of a generation for ``target``."""
    return STAGES[:-1] + ("compile",) + STAGES[-1:] if backend(target).compiles else STAGES


def progress_steps(model: Model | None = None, target: str = "python") -> int:
    """How many times :func:`generate` calls ``on_step``: once per stage, codegen once per function it builds."""
    if model is None:  # every function of an unconstrained model
        return len(stages(target)) - 1 + sum(f.uses is None for f in registry.FUNCTIONS)
    model, _ = _jacobians(model, backend(target), False, "auto")
    wrappers = [f for f in registry.for_model(model) if f.uses]
    built_wrappers = sum(backend(target).wrapper(f, model) is not None for f in wrappers)  # C, MATLAB: xdot_fun
    return len(stages(target)) - 1 + len(registry.built(model)) + built_wrappers


def choose(
    model: Model, functions: Sequence[str] | str | None, where: str = "functions", error: type | None = None
) -> Model:
    """``model`` generating only ``functions`` (names of generated functions, a list or a comma-separated
    string) and what they need (:func:`sls.functions.for_model`); ``None`` keeps the model's own choice.
    An unknown name raises ``error`` (default :class:`~sls.errors.ModelError`) listing the valid ones."""
    if functions is None:
        return model
    return replace(model, functions=registry.check(model, functions, where, error))


@dataclass
class Report:
    """What a generation did: the output folder, its files and stage timings (s)."""

    out_dir: Path
    files: list = field(default_factory=list)
    timings: dict = field(default_factory=dict)

    @property
    def total(self) -> float:
        """Total time of all stages, in seconds."""
        return sum(self.timings.values())


def generate(
    model: Model,
    out_dir: str | Path = "generated",
    on_step: Callable[[str], None] | None = None,
    *,
    simplify: bool = False,
    method: str = "auto",
    target: str = "python",
    functions: Sequence[str] | str | None = None,
    ranges: dict | None = None,
) -> Report:
    """Generate the package for ``model`` into ``out_dir``.

    ``target`` is ``"python"`` (numpy modules, the default) or ``"c"``
    (standalone C99 in ``out_dir/c`` and a package with the same Python API
    backed by it, compiled here with ``$CC``, else ``cc``) or ``"matlab"``
    (one ``.m`` function file per function, for MATLAB and GNU Octave); see
    :data:`sls.backends.TARGETS`.

    ``functions`` names the generated functions wanted (e.g. ``["qddot_fun",
    "linearized_model"]``); the functions they call are added (``xdot_fun``
    needs ``qddot_fun``) and only the arrays they evaluate are derived. The
    default is every function (or the model file's ``functions`` key).

    ``simplify`` runs ``sympy.trigsimp`` on the mass matrix and the potential
    forces (see :func:`sls.derive.derive`): shorter, more readable code, slower
    generation.

    ``ranges`` (state name → ``(low, high)``) declares where the model lives,
    over the model's own ranges: the checks sample only there (see
    :attr:`sls.model.Model.ranges`).

    ``on_step(label)`` is called after each stage of :data:`STAGES` and, within
    codegen, after each module (:func:`progress_steps` calls in all), for a
    progress display.
    Raises :class:`~sls.errors.SlsError` subclasses for bad models or an
    output directory that cannot be written safely (checked before deriving).
    """
    out_dir = Path(out_dir)
    model = choose(model, functions)
    if ranges is not None:
        model = with_ranges(model, ranges)
    chosen = backend(target)
    chosen.check_environment()
    chosen.check_model(model)
    model, route = _jacobians(model, chosen, simplify, method)
    write.check_target(out_dir, chosen.file_names(model))
    report = Report(out_dir=out_dir)

    def stage(name: str, action: Callable[[], T]) -> T:
        start = time.perf_counter()
        result = action()
        report.timings[name] = time.perf_counter() - start
        if on_step is not None and name != "codegen":
            on_step(name)
        return result

    try:
        subset = registry.is_subset(model) or model.jacobians != "entries"
        wanted = registry.arrays(model, route) if subset else None
        dynamics = stage("derive", lambda: derive.derive(model, simplify, method, wanted=wanted))
        stage("validate", lambda: validate.check_dynamics(dynamics))
        finish = chosen.finisher(model, simplify, dynamics.method)
        kernels = stage("codegen", lambda: _codegen(chosen, dynamics, on_step, finish))
        files = stage("render", lambda: chosen.render(model, kernels, simplify, dynamics.method))
    except SlsError as exc:  # a model file's errors start with its name
        if model.file and not str(exc).startswith(model.file):
            raise type(exc)(f"{model.file}: {exc}") from None
        raise
    if chosen.compiles:
        files.update(stage("compile", lambda: chosen.compile(files)))
    stage("write", lambda: write.write_package(files, out_dir))
    report.files = sorted(files)
    return report


def _jacobians(model: Model, chosen: Backend, simplify: bool, method: str) -> tuple[Model, str | None]:
    """``model`` with its Jacobians written by directions where the target can and they are large
    (:func:`sls.functions.jacobians_by_directions`, graph routes only), and its derivation route where that was
    needed to decide (else ``None``)."""
    if not chosen.jacobians_by_directions or not registry.jacobians_by_directions(model):
        return model, None
    route = derive.choose_method(model, simplify) if method == "auto" else method
    if route not in ("graph", "tree"):
        return model, route
    return replace(model, jacobians="directions"), route


def _codegen(
    chosen: Backend,
    dynamics: object,
    on_step: Callable[[str], None] | None,
    finish: Callable[[str, object], object] = lambda name, code: code,
) -> dict:
    """Build every function's code with the backend, each handed to ``finish`` as soon as it is built (see
    :meth:`~sls.backends.Backend.finisher`), turning printing failures into a :class:`ModelError`."""
    try:
        code = {}
        for name, build in chosen.builders(dynamics).items():
            code[name] = finish(name, build()) if build is not None else None
            if on_step is not None:
                on_step(f"codegen {name}")
        return code
    except SlsError:
        raise
    except (PrintMethodNotImplementedError, NotImplementedError, ValueError, TypeError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ModelError(
            f"cannot write numeric code for this model: {brief(first, 160)}; "
            f"use functions {chosen.provides} (sin, cos, exp, log, sqrt, tanh, ...)"
        ) from None


def sym_lagrangian_solver(
    T: object,
    V: object,
    fric: object,
    x: object,
    out_dir: str | Path = "generated",
    params: dict | None = None,
    *,
    inputs: object = None,
    forces: object = None,
    name: str = "model",
    simplify: bool = False,
    constraints: object = None,
    velocity_constraints: object = None,
    loads: object = None,
    target: str = "python",
    functions: Sequence[str] | str | None = None,
    ranges: dict | None = None,
) -> Path:
    """Derive the equations of motion and write the generated package (the SLS entry point).

    Parameters
    ----------
    T, V : sympy.Expr
        Kinetic energy (quadratic in the velocities) and potential energy.
    fric : list or Matrix of n sympy expressions, or 0
        Friction forces.
    x : list or Matrix of 2n sympy symbols
        State ``[q; qdot]``: the coordinates first, then their rates.
    out_dir : str or Path
        Output folder; it becomes a Python package.
    params : dict, optional
        Default values of parameters: symbol or name → number.
    inputs, forces : optional
        Input symbols (m) and the generalized forces (n) they produce,
        affine in the inputs. Without them ``u`` has length n and ``B_u = I``.
    constraints, velocity_constraints, loads : optional
        Holonomic constraints c(q) = 0, velocity constraints a(q) qdot = 0
        (linear in qdot) and point loads/body torques (dicts; see the README).
    name : str
        Model name used in the generated headers.
    simplify : bool
        Run ``sympy.trigsimp`` on the mass matrix and potential forces first.
    target : str
        ``"python"`` (numpy modules), ``"c"`` (C99 sources and a C-backed
        package with the same API; needs a C compiler) or ``"matlab"`` (``.m``
        files for MATLAB and GNU Octave).
    functions : list of str, optional
        The generated functions wanted (with what they call); default: all.
    ranges : dict, optional
        Where the model lives: state symbol or name → ``(low, high)``; the
        checks of the mass matrix and constraints sample only there.

    Returns
    -------
    Path
        The output folder.
    """
    model = model_from_sympy(
        T,
        V,
        fric,
        x,
        params=params,
        inputs=inputs,
        forces=forces,
        name=name,
        constraints=constraints,
        velocity_constraints=velocity_constraints,
        loads=loads,
        ranges=ranges,
    )
    return generate(model, out_dir, simplify=simplify, target=target, functions=functions).out_dir
