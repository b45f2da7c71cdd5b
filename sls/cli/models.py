"""Which model a command means: a model file (TOML, Python, URDF, MJCF), a bundled example, the n-link example or
the inline flags (:func:`load_model`), with ``--range`` values parsed (:func:`parse_range`)."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import click

from sls.cli.values import parse_param
from sls.errors import ModelFileError, SlsError, UsageError
from sls.model import Model, with_ranges
from sls.model.names import did_you_mean
from sls.readers import (
    DEFAULT_EXAMPLE,
    example_names,
    is_urdf_example,
    load_example,
    load_python,
    load_toml,
    model_from_strings,
)
from sls.readers.common import ModelFileWarning
from sls.readers.mjcf import MJCF_SUFFIXES, load_mjcf
from sls.readers.nlink import nlink_pendulum
from sls.readers.urdf import load_urdf
from sls.readers.urdf.contacts import parse_contact_at
from sls.readers.urdf.xacro_files import is_xacro


@dataclass(frozen=True)
class RobotOptions:
    """The command line's options for a URDF (or xacro) robot: ``--floating-base``, ``--base-orientation``,
    ``--frames``, ``--contacts``, ``--xacro-arg`` (``{name: value}``), ``--package-path`` and ``--contact-at``
    (``LINK=X,Y,Z[,ROLL,PITCH,YAW]``, repeatable), ``--inertial-params``; for an MJCF file, ``--no-actuators``
    (``actuators=False``)."""

    floating_base: bool = False
    base_orientation: str | None = None
    frames: str | None = None
    contacts: str | None = None
    xacro_args: dict = field(default_factory=dict)
    package_paths: tuple = ()
    contact_at: tuple = ()
    actuators: bool = True
    srdf: str | None = None
    stance: str | None = None
    base_wrench: bool = False
    inertial_params: str | None = None

    def urdf_keywords(self) -> dict:
        """The keyword arguments of :func:`sls.load_urdf` these options give."""
        return {
            "floating_base": self.floating_base,
            "base_orientation": self.base_orientation or "quaternion",
            "frames": self.frames,
            "contacts": self.contacts,
            "contact_at": self.contact_places(),
            "xacro_args": self.xacro_args,
            "package_paths": self.package_paths,
            **({"srdf": self.srdf, "stance": self.stance} if self.srdf is not None else {}),
            **({"base_wrench": True} if self.base_wrench else {}),
            **({"inertial_params": self.inertial_params} if self.inertial_params is not None else {}),
        }

    def contact_places(self) -> dict | None:
        """``--contact-at`` as :func:`sls.load_urdf`'s ``contact_at`` (``None`` when not given)."""
        if not self.contact_at:
            return None
        try:
            return parse_contact_at(self.contact_at)
        except SlsError as exc:
            raise UsageError(str(exc)) from None


#: The example built by a generator rather than read from a file.
NLINK = "nlink"
NLINK_DEFAULT = 3


def parse_range(text: str) -> tuple[str, list]:
    """Parse ``NAME=LOW:HIGH`` (a ``--range`` value); the ends are numbers or constants such as ``-pi/2``."""
    name, sep, value = text.partition("=")
    name, value = name.strip(), value.strip()
    low, colon, high = value.partition(":")
    if not sep or not name or not colon or not low.strip() or not high.strip():
        raise UsageError(f"--range {text!r}: expected NAME=LOW:HIGH, e.g. --range theta=-0.5:0.5")
    if not (name.isascii() and name.isidentifier()):
        raise UsageError(f"--range {text!r}: {name!r} is not a state name (expected NAME=LOW:HIGH)")
    return name, [_range_number(part.strip(), text) for part in (low, high)]


def _range_number(part: str, text: str) -> float | str:
    try:
        number = float(part)
    except ValueError:
        return part  # a constant expression ("pi/2"), checked with the model's ranges
    if not math.isfinite(number):
        raise UsageError(f"--range {text!r}: the ends must be finite numbers")
    return number


def load_model(
    model: str | None,
    T: str | None,
    V: str | None,
    fric: tuple,
    x: str | None,
    params: tuple,
    inputs: tuple,
    forces: tuple,
    links: int | None = None,
    constraints: tuple = (),
    velocity_constraints: tuple = (),
    ranges: tuple = (),
    kinematics: tuple = (),
    robot_options: RobotOptions | None = None,
) -> Model:
    """Pick the model from the positional argument or the inline flags (``links``: ``--n`` of ``nlink``;
    ``robot_options``: the options of a URDF robot, :class:`RobotOptions`).

    ``ranges`` are ``--range`` values (``NAME=LOW:HIGH``): where the model lives, over a model file's ``[ranges]``.
    ``kinematics`` are ``--kinematics`` values (one ``q̇`` per coordinate: the second half of ``--state`` are then
    generalized speeds).
    """
    if links is not None and model != NLINK:
        raise UsageError(f"--n goes with the {NLINK} example: sls generate {NLINK} --n {links}")
    inline = any(v is not None for v in (T, V, x)) or bool(fric) or bool(inputs) or bool(forces)
    inline = inline or bool(constraints) or bool(velocity_constraints) or bool(kinematics)
    param_values = dict(parse_param(p) for p in params)
    range_values = dict(parse_range(r) for r in ranges)
    if model is not None and inline:
        raise UsageError(
            "give either a MODEL (file or example name) or the inline flags --T/--V/--fric/--state, not both"
        )
    if inline:
        missing = [flag for flag, value in (("--T", T), ("--V", V), ("--state", x)) if value is None]
        if not fric:
            missing.append("--fric")
        if missing:
            raise UsageError(f"inline model: missing {', '.join(missing)} (use --fric 0 for no friction)")
        assert T is not None and V is not None and x is not None  # none is missing
        return model_from_strings(
            state=x.replace(",", " ").split(),
            T=T,
            V=V,
            fric=fric[0] if len(fric) == 1 and fric[0].strip() == "0" else list(fric),
            params=param_values,
            inputs=list(inputs) if inputs else None,
            forces=list(forces) if forces else None,
            name="model",
            source="inline flags",
            constraints=list(constraints) or None,
            velocity_constraints=list(velocity_constraints) or None,
            ranges=range_values or None,
            kinematics=list(kinematics) or None,
        )
    if inputs or forces:
        raise UsageError("--input/--force go with the inline flags; put inputs/forces into the model file instead")
    options = robot_options or RobotOptions()
    robot = bool(model and (Path(model).suffix == ".urdf" or is_xacro(model) or is_urdf_example(model)))
    if not robot and options.xacro_args:
        raise UsageError("--xacro-arg goes with a xacro file (NAME.urdf.xacro)")
    if not options.actuators and not (model and Path(model).suffix in MJCF_SUFFIXES):
        raise UsageError(
            "--no-actuators goes with an MJCF file (NAME.xml); in a model file with [mjcf] write actuators = false"
        )
    floating_base, base_orientation = options.floating_base, options.base_orientation
    frames, contacts = options.frames, options.contacts
    if floating_base and not robot:
        raise UsageError(
            "--floating-base goes with a URDF robot (a file NAME.urdf or a bundled robot such as ur5): "
            "it frees the robot's root link"
        )
    if contacts is not None and not robot:
        raise UsageError(
            "--contacts goes with a URDF robot (a file NAME.urdf or a bundled robot such as ur5); "
            "in a model file with [urdf] write contacts = [...]"
        )
    if options.contact_at and contacts is None:
        raise UsageError(
            "--contact-at places contacts: name them with --contacts (or write contact_at = {...} beside "
            "contacts = [...] in a model file with [urdf])"
        )
    if options.stance is not None and options.srdf is None:
        raise UsageError("--stance NAME names a <group_state> of the robot's SRDF file: give the file with --srdf FILE")
    if (options.srdf is not None or options.base_wrench) and not (
        model and (Path(model).suffix == ".urdf" or is_xacro(model))
    ):
        flag, key = ("--srdf", 'srdf = "FILE"') if options.srdf is not None else ("--base-wrench", "base_wrench = true")
        raise UsageError(f"{flag} goes with a URDF robot file (NAME.urdf); in a model file with [urdf] write {key}")
    if options.base_wrench and contacts is None:
        raise UsageError(
            "--base-wrench keeps a floating base's body wrench as an input of a robot on --contacts "
            "(without contacts it is an input anyway)"
        )
    if options.inertial_params is not None and not (robot or (model and Path(model).suffix in MJCF_SUFFIXES)):
        raise UsageError(
            "--inertial-params goes with a robot file (NAME.urdf, NAME.urdf.xacro, NAME.xml or a bundled robot such "
            "as ur5); in a model file with [urdf] write inertial_params = [...]"
        )
    if frames is not None and not robot:
        raise UsageError(
            "--frames goes with a URDF robot (a file NAME.urdf or a bundled robot such as ur5); "
            "in a model file with [urdf] write frames = [...]"
        )
    if base_orientation is not None and not robot:
        raise UsageError(
            "--base-orientation goes with a URDF robot (a file NAME.urdf or a bundled robot such as ur5); "
            'in a model file write [urdf] base_orientation = "euler"'
        )
    if model == NLINK and not Path(model).exists():
        loaded = nlink_pendulum(NLINK_DEFAULT if links is None else links)
    else:
        loaded = _load_named(model or DEFAULT_EXAMPLE, options)
    if param_values:
        unknown = sorted(set(param_values) - set(loaded.params))
        if unknown:
            raise UsageError(
                f"--param {unknown[0]}: the model has no parameter of that name "
                f"(it has: {', '.join(loaded.params) or 'none'})"
            )
        from dataclasses import replace

        loaded = replace(loaded, params={**loaded.params, **param_values})
    if range_values:
        loaded = with_ranges(loaded, range_values)
    return loaded


def _load_named(model: str, options: RobotOptions | None = None) -> Model:
    """The model file or bundled example ``model``; MuJoCo's and xacro's warnings on a file as ``warning:`` lines."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ModelFileWarning)
        loaded = _load_file(model, options or RobotOptions())
    for warning in caught:
        if issubclass(warning.category, ModelFileWarning):
            click.echo(f"warning: {warning.message}", err=True)
        else:
            warnings.showwarning(warning.message, warning.category, warning.filename, warning.lineno)
    return loaded


def _load_file(model: str, options: RobotOptions) -> Model:
    path = Path(model)
    if path.suffix == ".toml":
        return load_toml(path)
    if path.suffix == ".py":
        return load_python(path)
    if path.suffix == ".urdf" or is_xacro(path):
        return load_urdf(path, **options.urdf_keywords())
    if path.suffix in MJCF_SUFFIXES:
        return load_mjcf(path, actuators=options.actuators, inertial_params=options.inertial_params)
    if path.exists() and not (path.is_dir() and model in example_names()):  # a folder may share an example's name
        raise UsageError(f"{model}: model files must end in .toml, .py, .urdf, .xacro or .xml (MJCF)")
    if any(sep in model for sep in ("/", "\\")) or "." in model:
        raise UsageError(f"{model}: no such model file")
    names = [*example_names(), NLINK]
    if model not in names:
        raise ModelFileError(
            f"unknown example '{model}'{did_you_mean(model, names)} (bundled examples: {', '.join(names)}; "
            "sls examples describes them)"
        )
    return load_example(
        model,
        floating_base=options.floating_base,
        base_orientation=options.base_orientation or "quaternion",
        frames=options.frames,
        contacts=options.contacts,
        contact_at=options.contact_places(),
        inertial_params=options.inertial_params,
    )
