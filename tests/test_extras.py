"""pyproject.toml's extras install what their names say: each feature extra holds only the packages its feature
imports (in sls, or in the code sls generates for it), the test extra only what the suite uses, the tool extras
only tools their own configuration runs.

Nothing is installed: the requirements are read from pyproject.toml and the imports from the sources.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: sls depends on tomli there
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]

#: Each feature extra: its requirement (name with its own extras, lower case) -> (the import name, the files of sls or
#: of its templates of which one must import it).
FEATURES = {
    "plot": {"matplotlib": ("matplotlib", ("sls/control/plot.py",))},
    "control": {"control": ("control", ("sls/control/linear.py",))},
    "mujoco": {"mujoco": ("mujoco", ("sls/readers/mjcf/compile.py",))},
    "xacro": {"xacro": ("xacro", ("sls/readers/urdf/xacro_files.py",))},
    "casadi": {"casadi": ("casadi", ("templates/casadi/__init__.py.j2", "templates/casadi/_runtime.py.j2"))},
    "mpc": {
        "casadi": ("casadi", ("templates/casadi/_runtime.py.j2",)),
        "do-mpc": ("do_mpc", ("templates/casadi/_runtime.py.j2",)),
    },
    "jax": {"jax[cpu]": ("jax", ("templates/jax/_runtime.py.j2",))},
    "dask": {"dask[distributed]": ("distributed", ("sls/control/sweeps.py",))},
}

#: The test suite's requirements: the word under tests/ that shows the suite uses each (an import, or the data
#: folder of a package of robot files); pytest-xdist is pytest's plugin behind the documented ``-n auto``.
TEST_USES = {
    "pytest": "pytest",
    "pytest-xdist": None,
    "hypothesis": "hypothesis",
    "pin": "pinocchio",
    "example-robot-data": "example_robot_data",
    "pybullet": "pybullet_data",
    "rtb-data": "rtbdata",
    "adam-robotics[casadi]": "adam",
    "dm_control": "dm_control",
}

#: The tool extras: requirement -> (the file that runs it, the words in it that show so); mkdocstrings lays out a
#: ``separate_signature`` with ruff.
TOOLS = {
    "docs": {
        "mkdocs": ("mkdocs.yml", "nav:"),
        "mkdocs-material": ("mkdocs.yml", "name: material"),
        "mkdocstrings[python]": ("mkdocs.yml", "mkdocstrings"),
        "ruff": ("mkdocs.yml", "separate_signature: true"),
    },
    "lint": {"ruff": (".ci/run", "ruff check"), "mypy": (".ci/run", "mypy sls")},
}


def _extras() -> dict:
    data = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return data["project"]["optional-dependencies"]


def _name(requirement: str) -> str:
    """``"dask[distributed]>=2023.1"`` -> ``"dask[distributed]"`` (the name with its extras, lower case)."""
    match = re.match(r"\s*([A-Za-z0-9_.\-]+(?:\[[^\]]*\])?)", requirement)
    assert match, requirement
    return match.group(1).lower()


def _imports(text: str, module: str) -> bool:
    """True when ``text`` imports ``module`` (``import m``, ``from m import``, ``import_module("m")``)."""
    word = re.escape(module)
    return bool(re.search(rf"^\s*(?:import|from)\s+{word}\b|import_module\(\s*['\"]{word}\b", text, re.M))


def test_every_extra_is_in_a_table():
    assert set(_extras()) == set(FEATURES) | {"test"} | set(TOOLS)


@pytest.mark.parametrize("extra", sorted(FEATURES))
def test_a_feature_extra_holds_what_its_feature_imports(extra):
    table = FEATURES[extra]
    held = [_name(r) for r in _extras()[extra]]
    strangers = [name for name in held if name not in table]
    assert not strangers, f"extra {extra!r} holds {strangers}, which its feature does not import"
    assert sorted(held) == sorted(table), f"extra {extra!r} lacks {sorted(set(table) - set(held))}"
    for requirement, (module, files) in table.items():
        assert any(_imports((REPO / f).read_text(encoding="utf-8"), module) for f in files), (
            f"extra {extra!r}: {requirement} is in it but none of {', '.join(files)} imports {module}"
        )


def test_the_dask_extra_is_dask_distributed_alone():
    assert [_name(r) for r in _extras()["dask"]] == ["dask[distributed]"]


def test_the_test_extra_holds_what_the_suite_uses():
    sources = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "tests").rglob("*.py"))
    features = {name for table in FEATURES.values() for name in table}
    for name in map(_name, _extras()["test"]):
        if name in features:  # the suite tests the feature
            continue
        assert name in TEST_USES, f"the test extra holds {name}, which no feature needs and the suite does not name"
        word = TEST_USES[name]
        if word is not None:
            assert re.search(rf"\b{re.escape(word)}\b", sources), f"test extra: {name}; tests/ never use {word}"


@pytest.mark.parametrize("extra", sorted(TOOLS))
def test_a_tool_extra_holds_tools_its_configuration_runs(extra):
    table = TOOLS[extra]
    for name in map(_name, _extras()[extra]):
        assert name in table, f"extra {extra!r} holds {name}, which nothing runs"
        where, words = table[name]
        assert words in (REPO / where).read_text(encoding="utf-8"), f"extra {extra!r}: {where} does not run {name}"


#: The extras for working on sls itself, installed from the checkout (``pip install ".[test]"``).
CHECKOUT_EXTRAS = {"test", "docs", "lint"}


def _hint_sources() -> list[Path]:
    """Where install hints are written: sls's messages and docstrings, the templates of the generated code, the
    README and the pages under docs/ (the dated archive aside)."""
    paths = [*(REPO / "sls").rglob("*.py"), *(REPO / "templates").rglob("*.j2"), REPO / "README.md"]
    return paths + [p for p in (REPO / "docs").rglob("*.md") if "archive" not in p.parts]


def _installed(text: str) -> list[str]:
    """What each ``pip install`` in ``text`` installs: its first argument after the options, quotes removed."""
    found = []
    for match in re.finditer(r"pip install((?:\s+-\w+)*)\s+(\"[^\"]*\"|'[^']*'|[^\s`\"'),;]+)", text):
        found.append(match.group(2).strip("\"'"))
    return found


def test_every_install_hint_has_one_form():
    """An optional feature is installed as ``pip install "sls[NAME]"`` wherever sls says so (never its packages by
    their own names, never the checkout's ``".[NAME]"``, which only the extras for working on sls use)."""
    packages = {re.sub(r"\[.*", "", name) for table in FEATURES.values() for name in table} | {"distributed"}
    wrong = []
    for path in _hint_sources():
        for what in _installed(path.read_text(encoding="utf-8")):
            extra = re.fullmatch(r"(sls|\.)\[([\w-]+)\]", what)
            if extra and extra.group(1) == "sls" and extra.group(2) in (*FEATURES, "NAME"):
                continue
            if extra and extra.group(1) == "." and extra.group(2) in CHECKOUT_EXTRAS:
                continue
            if extra or re.sub(r"[\[<>=].*", "", what).lower() in packages:
                wrong.append(f"{path.relative_to(REPO)}: pip install {what}")
    assert not wrong, 'install hints not in the form pip install "sls[NAME]":\n' + "\n".join(wrong)


def test_the_hint_finder_sees_every_form():
    text = 'pip install "sls[jax]" or `pip install ".[plot]"`, pip install matplotlib, pip install -e ".[test]"'
    assert _installed(text) == ["sls[jax]", ".[plot]", "matplotlib", ".[test]"]
