"""A robot file's ``inertial_params`` option (URDF, MJCF): the links named, checked against the robot's, and the
robot with their inertial parameters as symbols (:mod:`sls.model.inertial`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from sls.errors import ModelFileError
from sls.model import did_you_mean
from sls.model.inertial import defaults, moving_links, owners, parameter_label
from sls.model.tree import Robot

#: What the option is called in the messages.
OPTION = "inertial_params"


def with_inertial_params(
    robot: Robot, chosen: Sequence[str] | str, in_file: Sequence[str], where: str
) -> tuple[Robot, dict]:
    """``(robot, {name: default})``: ``robot`` with the inertial parameters of the links ``chosen`` as symbols
    (a list, or a comma-separated string; ``"all"``: every moving link of the file) and those parameters' defaults.

    ``in_file`` are the links the file defines, in tree order (not those sls adds); ``where`` starts the messages
    (the file). A link fixed to a moving link has no parameters of its own (its inertia is lumped into that link's),
    nor has a link that never moves: naming one is an error that says which link to name instead.
    """
    names = [name.strip() for name in chosen.split(",")] if isinstance(chosen, str) else list(chosen)
    what = f"{where}: {OPTION}"
    moving = [link for link in moving_links(robot) if link in set(in_file)]
    if names == ["all"]:
        links = moving
    else:
        place = owners(robot)
        for name in names:
            if not isinstance(name, str) or not name:
                raise ModelFileError(f"{what}: a link is named by its name, got {name!r}")
            if name not in in_file:
                hint = did_you_mean(name, list(in_file)) or ""
                raise ModelFileError(f"{what}: '{name}' is not a link of the robot{hint}")
            if place.get(name) is None:
                raise ModelFileError(
                    f"{what}: link '{name}' never moves (it is fixed to the world): it has no inertial parameters"
                )
            owner = place[name][0]
            if owner != name:
                raise ModelFileError(
                    f"{what}: link '{name}' is fixed to link '{owner}', whose parameters hold its inertia "
                    f"(lumped); name '{owner}'"
                )
        if len(set(names)) != len(names):
            raise ModelFileError(f"{what}: a link is named twice in {names}")
        if not names:
            raise ModelFileError(f"{what}: name at least one link (or 'all')")
        links = [link for link in moving if link in set(names)]
    labels: dict = {}
    for link in links:
        other = labels.setdefault(parameter_label(link), link)
        if other != link:
            raise ModelFileError(
                f"{what}: links '{other}' and '{link}' both give the parameter names '{parameter_label(link)}_m' ...; "
                "rename one of them"
            )
    robot = replace(robot, inertial_params=tuple(links))
    return robot, defaults(robot)
