"""Data flows one way: the algebra and the model never import the stages after them, and the modules of
sls.algebra, sls.model and sls.derive import one another without a circle (imports inside functions
included, read from the source with ``ast``: nothing is imported)."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO

#: The stages that come after the model: the model and the algebra must not import them.
LATER = ("sls.derive", "sls.lowering", "sls.backends", "sls.output", "sls.cli", "sls.control", "sls.readers")


def _modules() -> dict[str, Path]:
    """Every module of sls/ by dotted name (a package by its own name)."""
    found = {}
    for path in (REPO / "sls").rglob("*.py"):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of sls ``path`` imports anywhere (a name imported from a package counts as its submodule
    when there is one, else as the package); imports under ``if TYPE_CHECKING:`` are left out."""
    found = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and isinstance(child.test, ast.Name) and child.test.id == "TYPE_CHECKING":
                continue
            if isinstance(child, ast.Import):
                found.update(a.name for a in child.names if a.name in modules)
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                for alias in child.names:
                    sub = f"{child.module}.{alias.name}"
                    name = sub if sub in modules else child.module
                    if name in modules:
                        found.add(name)
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def _graph(prefixes: tuple[str, ...]) -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(path, modules) for name, path in modules.items() if name.startswith(prefixes)}


def test_the_algebra_and_the_model_never_import_a_later_stage():
    graph = _graph(("sls.algebra", "sls.model"))
    upward = {name: sorted(t for t in targets if t.startswith(LATER)) for name, targets in graph.items()}
    assert {name: targets for name, targets in upward.items() if targets} == {}
    assert not any(t.startswith("sls.model") for name in graph if name.startswith("sls.algebra") for t in graph[name])


def test_no_import_circle_in_algebra_model_derive():
    prefixes = ("sls.algebra", "sls.model", "sls.derive")
    graph = _graph(prefixes)
    edges = {name: {t for t in targets if t in graph} for name, targets in graph.items()}
    # Kahn: repeatedly drop the modules that import nothing left; what remains lies on or behind a circle.
    left = dict(edges)
    while True:
        leaves = [name for name, targets in left.items() if not targets & left.keys()]
        if not leaves:
            break
        for name in leaves:
            del left[name]
    assert sorted(left) == []


def test_the_derive_modules_import_each_other_not_their_face():
    graph = _graph(("sls.derive.",))
    assert {name: "sls.derive" for name, targets in graph.items() if "sls.derive" in targets} == {}
