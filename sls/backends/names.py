"""Renaming the user's names a target reserves, once for every target.

A target's code binds states, inputs and parameters to locals named as in the
model; a name the target's language, library or generated code already uses
gets another name. Each target says which names it reserves and which names it
tries instead (:func:`renames`); the files' headers list the renames.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator


def renames(
    names: Iterable[str], reserved: Callable[[str], bool], candidates: Callable[[str], Iterator[str]]
) -> dict[str, str]:
    """``{name: new name}`` for the ``names`` that ``reserved`` refuses, in order: each gets the first of
    ``candidates(name)`` that no name (given or already chosen) takes."""
    names = list(names)
    taken = set(names)
    result = {}
    for name in names:
        if not reserved(name):
            continue
        chosen = next(candidate for candidate in candidates(name) if candidate not in taken)
        taken.add(chosen)
        result[name] = chosen
    return result
