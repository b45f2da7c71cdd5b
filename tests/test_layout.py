"""The layout rules of the source tree (issue 23), checked on the files themselves so they stay true.

- no Python file under ``sls/`` over :data:`MAX_LINES` lines;
- no import circle among the ``sls`` modules (every ``import`` statement, those inside functions included; a
  package's ``__init__.py`` is the module ``sls.x``; an import under ``if TYPE_CHECKING:`` never runs and is left
  out);
- no module under ``sls/backends/`` imports ``re`` (the backends get expressions as data, not text to re-read);
- every package folder under ``sls/`` is listed in ``packages`` of ``pyproject.toml`` (else ``pip install .``
  leaves it out), and every listed package exists;
- every test file sits at a path that mirrors ``sls/``: ``tests/<stage>/.../test_*.py`` where ``sls/<stage>/...``
  exists (a folder, or a module with several test files), ``tests/test_<module>.py`` for a top-level module
  ``sls/<module>.py``; the exceptions are :data:`TEST_FOLDERS_OUTSIDE_SLS` and :data:`ACCEPTANCE_CHECKS`;
  test file names are unique across folders (pytest imports them by basename).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

from conftest import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: sls depends on tomli there
    import tomli as tomllib

SLS = REPO / "sls"
TESTS = REPO / "tests"
MAX_LINES = 500

#: Test folders that check something other than a module of sls: the documentation's code blocks and examples,
#: and the benchmark harness (``benchmarks/`` at the top of the checkout).
TEST_FOLDERS_OUTSIDE_SLS = {"docs", "benchmarks"}

#: Top-level test files that check the whole pipeline against references sharing none of its code, named for
#: what they check rather than for a module; and this file.
ACCEPTANCE_CHECKS = {
    "test_golden.py": "generated functions against the golden values in tests/reference/",
    "test_properties.py": "the generated functions' numerical properties (finite differences, energy, batches)",
    "test_layout.py": "the layout rules of the tree",
    "test_extras.py": "pyproject.toml's extras against what their features import; the install hints",
}


# --------------------------------------------------------------------------
# the modules of sls and their imports


def python_files() -> list[Path]:
    """Every ``.py`` file under ``sls/``, package data included (the runtimes copied into generated packages)."""
    return sorted(SLS.rglob("*.py"))


def is_package(folder: Path) -> bool:
    """A folder is a package of sls when it and every folder between it and ``sls/`` hold an ``__init__.py``."""
    return all((part / "__init__.py").is_file() for part in [folder, *folder.parents] if part.is_relative_to(SLS))


def module_name(path: Path) -> str:
    """``sls/a/b.py`` → ``sls.a.b``; ``sls/a/__init__.py`` → ``sls.a``."""
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    """The importable modules of sls by dotted name (files in folders without ``__init__.py`` are data)."""
    return {module_name(path): path for path in python_files() if is_package(path.parent)}


def _type_checking_only(tree: ast.Module) -> set[int]:
    """ids of the nodes under ``if TYPE_CHECKING:`` (imports for annotations only, never run)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
            if name == "TYPE_CHECKING":
                skipped.update(id(inner) for statement in node.body for inner in ast.walk(statement))
    return skipped


def import_statements(path: Path, name: str) -> Iterator[tuple[str, tuple[str, ...] | None, int]]:
    """(absolute module, names or None, line) of every import ``path`` (the module ``name``) runs: ``import a.b``
    gives ``("a.b", None, line)``, ``from a import b, c`` gives ``("a", ("b", "c"), line)``; relative imports are
    resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    skipped = _type_checking_only(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                parts = package.split(".")
                source = ".".join(parts[: len(parts) - (node.level - 1)] + ([node.module] if node.module else []))
            yield source, tuple(alias.name for alias in node.names), node.lineno


def import_graph() -> dict[str, dict[str, int]]:
    """module → {module of sls it imports: line of its first import}. ``from a import b`` is an edge to ``a.b``
    when that is a module, else to ``a``; the parent packages a dotted import runs first are no edges of their
    own (every module would otherwise close a circle through ``sls/__init__.py``)."""
    known = modules()
    graph: dict[str, dict[str, int]] = {}
    for name, path in known.items():
        edges: dict[str, int] = {}
        for source, names, line in import_statements(path, name):
            targets = (
                [source] if names is None else [f"{source}.{n}" if f"{source}.{n}" in known else source for n in names]
            )
            for target in targets:
                if target in known:
                    edges[target] = min(line, edges.get(target, line))
        graph[name] = edges
    return graph


def strongly_connected(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module, or one that imports itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph[v]:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def one_circle(graph: dict[str, dict[str, int]], component: list[str]) -> list[str]:
    """A shortest circle through the first module of ``component``, as ``module:line`` of each import."""
    members, start = set(component), component[0]
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for v in frontier:
            for w in sorted(graph[v]):
                if w not in members:
                    continue
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    path.reverse()
                    return [f"{a} ({graph[a][b]}) -> {b}" for a, b in zip(path, path[1:] + [start])]
                if w not in previous:
                    previous[w] = v
                    following.append(w)
        frontier = following
    return component


# --------------------------------------------------------------------------
# the rules


def test_no_python_file_over_500_lines():
    over = {}
    for path in python_files():
        count = len(path.read_text(encoding="utf-8").splitlines())
        if count > MAX_LINES:
            over[str(path.relative_to(REPO))] = count
    assert not over, f"over {MAX_LINES} lines: " + ", ".join(
        f"{path} ({count})" for path, count in sorted(over.items(), key=lambda item: -item[1])
    )


def test_no_import_circle():
    graph = import_graph()
    circles = strongly_connected(graph)
    assert not circles, "import circles: " + "; ".join(
        f"{{{', '.join(component)}}}, e.g. {' | '.join(one_circle(graph, component))}" for component in circles
    )


#: The stages in the order data flows through them: a module imports only modules of its own stage or of an
#: earlier one (``sls/__init__.py``, the package's face, and ``sls/__main__.py`` stand above them all).
STAGES = (
    ("sls.errors", "sls.progress", "sls.arrays", "sls.version"),
    ("sls.algebra",),
    ("sls.model",),
    ("sls.function_types", "sls.functions"),
    ("sls.readers",),
    ("sls.derive",),
    ("sls.lowering",),
    ("sls.backends",),
    ("sls.output",),
    ("sls.generate",),
    ("sls.control",),
    ("sls.cli",),
)


def stage_of(module: str) -> int | None:
    """The index in :data:`STAGES` of ``module``'s stage (``None`` for the face and ``__main__``)."""
    for rank, stage in enumerate(STAGES):
        if any(module == prefix or module.startswith(prefix + ".") for prefix in stage):
            return rank
    return None


def test_data_flows_one_way():
    later = []
    for name, edges in import_graph().items():
        rank = stage_of(name)
        for target, line in edges.items():
            target_rank = stage_of(target)
            if rank is not None and (target_rank is None or target_rank > rank):
                later.append(f"{name} imports {target} (line {line})")
    assert not later, "imports of a later stage: " + "; ".join(sorted(later))


def test_every_module_has_a_stage():
    assert sorted(name for name in modules() if stage_of(name) is None) == ["sls", "sls.__main__"]


def test_no_backend_imports_re():
    using = []
    for path in python_files():
        if not path.is_relative_to(SLS / "backends"):
            continue
        for source, _, line in import_statements(path, module_name(path)):
            if source == "re" or source.startswith("re."):
                using.append(f"{path.relative_to(REPO)}:{line}")
                break
    assert not using, "backends importing re: " + ", ".join(using)


def test_every_package_is_installed():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    setuptools = project["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    folders = {module_name(path) for path in sorted(SLS.rglob("__init__.py")) if is_package(path.parent)}
    missing = sorted(folders - listed)
    assert not missing, f"package folders missing from pyproject.toml's packages: {missing}"
    elsewhere = setuptools.get("package-dir", {})
    absent = sorted(
        name
        for name in listed
        if name not in elsewhere and not (REPO / Path(*name.split(".")) / "__init__.py").is_file()
    )
    assert not absent, f"packages listed in pyproject.toml without a folder: {absent}"


def _mirrors_sls(folder: tuple[str, ...]) -> bool:
    """``tests/a/b`` mirrors ``sls/a/b/`` (a package) or ``sls/a/b.py`` (a module tested by several files)."""
    target = SLS.joinpath(*folder)
    return target.is_dir() or target.with_suffix(".py").is_file()


def test_test_files_mirror_the_tree():
    misplaced = []
    for path in sorted(TESTS.rglob("test_*.py")):
        folder = path.parent.relative_to(TESTS).parts
        if not folder:
            module = path.stem.removeprefix("test_")
            if path.name not in ACCEPTANCE_CHECKS and not (SLS / f"{module}.py").is_file():
                misplaced.append(f"{path.relative_to(REPO)} (no sls/{module}.py)")
        elif folder[0] not in TEST_FOLDERS_OUTSIDE_SLS and not _mirrors_sls(folder):
            misplaced.append(f"{path.relative_to(REPO)} (no sls/{'/'.join(folder)}/)")
    assert not misplaced, "test files at paths that do not mirror sls/: " + ", ".join(misplaced)


def test_test_file_names_are_unique():
    seen: dict[str, list[str]] = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        seen.setdefault(path.name, []).append(str(path.relative_to(REPO)))
    twice = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert not twice, f"test file names used twice (pytest imports test files by name): {twice}"
