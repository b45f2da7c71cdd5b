"""The worked example (docs/tutorial.md) is the code in examples/, and it runs; the README points to it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
TUTORIAL = REPO / "docs" / "tutorial.md"
EXAMPLES = REPO / "examples"


def test_the_tutorial_holds_the_example_files_verbatim():
    tutorial = TUTORIAL.read_text(encoding="utf-8")
    assert tutorial.startswith("# Worked example: model file → simulation → LQR")
    for name, fence in (("pendulum.toml", "toml"), ("readme_example.py", "python")):
        text = (EXAMPLES / name).read_text(encoding="utf-8")
        assert f"```{fence}\n{text}```" in tutorial, f"docs/tutorial.md and examples/{name} differ: keep them identical"
    assert "sls generate pendulum.toml --out pendulum_eom" in tutorial
    assert "(docs/tutorial.md)" in README.read_text(encoding="utf-8"), "the README links to the worked example"


def test_readme_example_runs(tmp_path):
    shutil.copy(EXAMPLES / "pendulum.toml", tmp_path)
    shutil.copy(EXAMPLES / "readme_example.py", tmp_path)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    generate = subprocess.run(
        [sys.executable, "-m", "sls", "generate", "pendulum.toml", "--out", "pendulum_eom", "--quiet"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert generate.returncode == 0, generate.stderr
    result = subprocess.run(
        [sys.executable, "readme_example.py"], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout

    energy = re.search(r"energy ([-\d.]+) J -> ([-\d.]+) J", out)
    assert energy, out
    assert 0 < float(energy.group(2)) < float(energy.group(1)), "friction must dissipate energy in the open-loop swing"

    open_loop = re.search(r"open-loop eigenvalues: \[([^\]]*)\]", out)
    assert open_loop, out
    eigenvalues = [float(v) for v in open_loop.group(1).split()]
    assert len(eigenvalues) == 2 and max(eigenvalues) > 0 > min(eigenvalues), "upright must be a saddle"

    closed = re.search(r"closed-loop eigenvalues: ([-\d.e+]+)", out)
    assert closed, out
    assert float(closed.group(1)) < 0, "every closed-loop eigenvalue must have a negative real part"

    final = re.search(r"\|q\(5\) - pi\| = ([-\d.e+]+) rad", out)
    assert final, out
    assert float(final.group(1)) < 1e-3, "the LQR controller must bring the pendulum upright"


#: Numbers as the README writes them.
WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}


def test_the_readme_counts_and_names_every_target():
    from sls.backends import TARGETS

    readme = README.read_text(encoding="utf-8")
    intro = readme[: readme.index("<!-- --8<-- [end:intro] -->")]
    counted = re.search(r"One derivation, (\w+) targets", intro)
    assert counted, "the README's intro counts the targets"
    assert counted.group(1) == WORDS[len(TARGETS)], f"README: {counted.group(1)} targets, sls: {len(TARGETS)}"
    for target in TARGETS[1:]:  # the default is "numpy modules (the default)"
        assert f"`--target {target}`" in intro, f"the README's intro does not name --target {target}"
