"""docs/robots.md as a new user reads it: its commands run after the page's own install line (test_doc_blocks.py
runs them all; here the folder of the robots is found without Pinocchio, which example-robot-data does not
install), and its generation times are the committed benchmark results, included, not numbers written by hand."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import sls_env

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "robots.md"
SNIPPET = re.compile(r'^--8<-- "([^":]+)(?::(\d+):(\d+))?"$', re.M)


def _prose(text: str) -> str:
    """The page without its code blocks and snippet lines."""
    return SNIPPET.sub("", re.sub(r"```.*?```", "", text, flags=re.S))


def test_the_robots_folder_is_found_without_pinocchio(tmp_path):
    pytest.importorskip("importlib.metadata")
    text = PAGE.read_text(encoding="utf-8")
    install = re.search(r"```bash\n(pip install [^\n]+)\n(ROBOTS=\$\((.*)\))\n```", text)
    assert install, "the page installs the robots and sets ROBOTS in one block"
    assert install.group(1) == "pip install example-robot-data"
    try:
        from importlib.metadata import distribution

        distribution("example-robot-data")
    except Exception:
        pytest.skip("example-robot-data is not installed")
    blocked = tmp_path / "blocked"
    (blocked / "pinocchio").mkdir(parents=True)
    (blocked / "pinocchio" / "__init__.py").write_text("raise ImportError('pinocchio is not installed')\n")
    env = sls_env()
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(blocked), env.get("PYTHONPATH")]))
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    done = subprocess.run(["bash", "-c", install.group(3)], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    robots = Path(done.stdout.strip())
    used = set(re.findall(r"\$ROBOTS/(\S+\.urdf)", text))
    assert len(used) >= 2
    for path in used:
        assert (robots / path).is_file(), f"$ROBOTS/{path} of the page is not in {robots}"


def test_the_generation_times_are_the_committed_benchmark_results():
    text = PAGE.read_text(encoding="utf-8")
    prose = _prose(text)
    seconds = re.findall(r"\d[\d ,.–-]*\s?s\b(?! ?=)", prose)
    assert not seconds, f"times written by hand on the page: {seconds}"
    included = SNIPPET.findall(text)
    assert len(included) >= 2
    for name, first, last in included:
        path = REPO / name
        assert path.is_file() and path.parent == REPO / "benchmarks" / "results", name
        lines = path.read_text(encoding="utf-8").splitlines()
        assert first and 1 <= int(first) <= int(last) <= len(lines), f"{name}:{first}:{last} is not in the file"
        assert re.search(r"\d s\b| s \(wall\)", "\n".join(lines[int(first) - 1 : int(last)])), "it shows no time"
    corpus = [(n, int(a), int(b)) for n, a, b in included if re.fullmatch(r"benchmarks/results/robots-[\d-]+\.md", n)]
    assert corpus, "the table by number of coordinates comes from the robot-corpus results"
    name, first, last = corpus[0]
    rows = (REPO / name).read_text(encoding="utf-8").splitlines()
    assert rows[first - 1].startswith("| DOF | files | generate median s") and rows[last - 1].startswith("| 31+ |")
