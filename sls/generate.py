"""The pipeline: model → derive → validate → codegen → render → write.

:func:`generate` runs every stage for a :class:`~sls.model.Model` and
returns a :class:`Report` with per-stage timings. Nothing is written unless
every earlier stage succeeded.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import codegen, derive, render, validate, write
from .errors import ModelError, SlsError, brief
from .model import Model, model_from_sympy

try:
    from sympy.printing.codeprinter import PrintMethodNotImplementedError
except ImportError:  # sympy < 1.13
    PrintMethodNotImplementedError = NotImplementedError

#: Stage names in order (the keys of :attr:`Report.timings`).
STAGES = ("derive", "validate", "codegen", "render", "write")


def progress_steps(model: object = None) -> int:
    """How many times :func:`generate` calls ``on_step``: once per stage, codegen once per module with code."""
    if model is not None and model.constrained:  # multipliers_fun has no code of its own
        return len(STAGES) - 1 + len(render.modules(model)) - len(render.WRAPPERS) - 1
    return len(STAGES) - 1 + len(render.MODULES) - len(render.WRAPPERS)


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
) -> Report:
    """Generate the package for ``model`` into ``out_dir``.

    ``simplify`` runs ``sympy.trigsimp`` on the mass matrix and the potential
    forces (see :func:`sls.derive.derive`): shorter, more readable code, slower
    generation.

    ``on_step(label)`` is called after each stage of :data:`STAGES` and, within
    codegen, after each module (:func:`progress_steps` calls in all), for a
    progress display.
    Raises :class:`~sls.errors.SlsError` subclasses for bad models or an
    output directory that cannot be written safely (checked before deriving).
    """
    out_dir = Path(out_dir)
    write.check_target(out_dir, [f"{name}.py" for name in render.modules(model)] + ["__init__.py", "_runtime.py"])
    report = Report(out_dir=out_dir)

    def stage(name: str, action: Callable[[], object]) -> object:
        start = time.perf_counter()
        result = action()
        report.timings[name] = time.perf_counter() - start
        if on_step is not None and name != "codegen":
            on_step(name)
        return result

    try:
        dynamics = stage("derive", lambda: derive.derive(model, simplify, method))
        stage("validate", lambda: validate.check_dynamics(dynamics))
        kernels = stage("codegen", lambda: _codegen(dynamics, on_step))
        files = stage("render", lambda: render.render_package(model, kernels, simplify, dynamics.method))
    except SlsError as exc:  # a model file's errors start with its name
        if getattr(model, "file", None) and not str(exc).startswith(model.file):
            raise type(exc)(f"{model.file}: {exc}") from None
        raise
    stage("write", lambda: write.write_package(files, out_dir))
    report.files = sorted(files)
    return report


def _codegen(dynamics: object, on_step: Callable[[str], None] | None) -> dict:
    """Run :func:`codegen.kernels`, turning sympy's printing failures into a :class:`ModelError`."""
    on_module = None if on_step is None else (lambda name: on_step(f"codegen {name}"))
    try:
        return codegen.kernels(dynamics, on_module)
    except SlsError:
        raise
    except (PrintMethodNotImplementedError, NotImplementedError, ValueError, TypeError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ModelError(
            f"cannot write numeric code for this model: {brief(first, 160)}; "
            "use functions numpy and math provide (sin, cos, exp, log, sqrt, tanh, ...)"
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

    Returns
    -------
    Path
        The output folder.
    """
    model = model_from_sympy(
        T, V, fric, x, params=params, inputs=inputs, forces=forces, name=name,
        constraints=constraints, velocity_constraints=velocity_constraints, loads=loads,
    )
    return generate(model, out_dir, simplify=simplify).out_dir
