"""A generated function's arguments: the model's names their entries bind, and those a body reads.

Every target binds the entries of a function's arguments to locals named as
in the model (renamed where the target reserves the name): this module says
which names each argument binds (:func:`argument_names`) and which entries a
body needs (:func:`bind_arguments`), once for every target.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sls import functions
from sls.derive import acceleration_symbols, direction_symbols, multiplier_symbols

if TYPE_CHECKING:  # a type only: no import at run time
    from sls.model import Model

#: The parameters' argument: after a function's positional arguments in every target (a C pointer, a MATLAB
#: struct; keyword arguments in Python).
PARAMETERS = "p"


def argument_names(model: Model) -> dict[str, list[str]]:
    """Every argument's entries as the model's names they bind: ``x`` the state's, ``u`` the inputs', ``qddot``
    the acceleration placeholders (:func:`sls.derive.acceleration_symbols`), ``dx`` the direction's
    (:func:`sls.derive.direction_symbols`), ``lam`` the multipliers' (:func:`sls.derive.multiplier_symbols`), ``p``
    the parameters'."""
    return {
        functions.STATE.name: [s.name for s in model.state],
        functions.INPUT.name: [s.name for s in model.inputs],
        functions.ACCELERATION.name: [s.name for s in acceleration_symbols(model.n)],
        functions.DIRECTION.name: [s.name for s in direction_symbols(len(model.state))],
        functions.MULTIPLIERS_ARGUMENT.name: [s.name for s in multiplier_symbols(model.k)],
        PARAMETERS: list(model.params),
    }


@dataclass(frozen=True)
class Binding:
    """An argument's entry a body reads: the ``argument``'s name, the entry's ``index`` and ``local``, the name
    the body reads it by."""

    argument: str
    index: int
    local: str


def bind_arguments(
    arguments: Sequence[str], model: Model, reads: Collection[str], local: Callable[[str], str]
) -> list[Binding]:
    """The entries of ``arguments`` (names, :data:`PARAMETERS` among them if wanted) a body reading the names
    ``reads`` needs, in argument order; ``local(name)`` is the target's name for the model's ``name``."""
    names = argument_names(model)
    result = []
    for argument in arguments:
        for index, name in enumerate(names[argument]):
            target = local(name)
            if target in reads:
                result.append(Binding(argument, index, target))
    return result
