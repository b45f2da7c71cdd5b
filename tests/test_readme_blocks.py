"""The README's code blocks, run in order in one folder as a new user would, output compared where shown.

Shell blocks run their `sls ...` commands (the installed console script; `pip`,
`venv`, `pytest` and benchmark lines are skipped), TOML blocks are saved under the
name the next shell block uses, Python blocks run in the same folder. Where a
block is followed by a `text` block, the output must match it: the same words,
numbers equal to 3 significant digits (run times masked). No output may show a
traceback.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)
NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w.])")
SKIP = ("pip ", "python3 -m venv", ". .venv", "pytest", "python -m benchmarks")


def _blocks() -> list[tuple[str, str, str | None]]:
    """(language, body, the text block right after it or None)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    found = list(BLOCK.finditer(text))
    blocks = []
    for k, match in enumerate(found):
        following = None
        if k + 1 < len(found) and found[k + 1].group(1) == "text" and not text[match.end() : found[k + 1].start()].strip():
            following = found[k + 1].group(2)
        if match.group(1) != "text":
            blocks.append((match.group(1), match.group(2), following))
    return blocks


def _sls() -> list[str]:
    """The console script installed with this interpreter, else this checkout's sls run as a module (see :func:`_env`)."""
    found = Path(sys.executable).with_name("sls")
    return [str(found)] if found.exists() else [sys.executable, "-m", "sls"]


def _env() -> dict:
    """The environment for subprocesses: without PYTHONPATH when sls is installed, else pointing at this checkout."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    if not Path(sys.executable).with_name("sls").exists():
        env["PYTHONPATH"] = str(REPO)
    return env


def _commands(body: str) -> list[list[str]]:
    commands = []
    for line in body.replace("\\\n", " ").splitlines():
        for part in line.split("&&"):
            part = part.split("  #")[0].strip()
            if part.startswith("sls ") or part == "sls":
                commands.append(shlex.split(part)[1:])
            else:
                assert not part or part.startswith(SKIP), f"README shell line not understood: {part!r}"
    return commands


def _same(got: str, expected: str) -> bool:
    mask = lambda s: re.sub(r" in \d+(\.\d+)? s$", " in (time) s", s.strip(), flags=re.M)  # noqa: E731
    got, expected = mask(got), mask(expected)
    if NUMBER.sub("#", got) != NUMBER.sub("#", expected):
        return False
    for a, b in zip(NUMBER.findall(got), NUMBER.findall(expected)):
        a, b = float(a), float(b)
        if abs(a - b) > 5e-3 * max(abs(b), 1e-2):
            return False
    return True


def test_readme_blocks_run_and_print_what_the_readme_shows(tmp_path):
    pytest.importorskip("matplotlib")  # the README's cart-pole run writes a plot
    env = {**_env(), "MPLBACKEND": "Agg"}
    blocks = _blocks()
    ran = {"bash": 0, "python": 0, "compared": 0}
    for k, (language, body, expected) in enumerate(blocks):
        if language == "toml":
            following = blocks[k + 1][1] if k + 1 < len(blocks) and blocks[k + 1][0] == "bash" else ""
            name = re.search(r"sls generate (\S+\.toml)", following)
            if name:
                (tmp_path / name.group(1)).write_text(body, encoding="utf-8")
            continue
        if language == "bash":
            output = ""
            for command in _commands(body):
                done = subprocess.run(_sls() + command, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
                assert "Traceback" not in done.stderr, done.stderr
                assert done.returncode == 0 or done.stderr.startswith("error: "), done.stderr
                progress = re.compile(r"^(generating \S+|simulating): \d+%")  # plain progress, on a slow machine
                output += done.stdout + "".join(line for line in done.stderr.splitlines(True) if not progress.match(line))
            ran["bash"] += 1
        elif language == "python":
            done = subprocess.run([sys.executable, "-"], input=body, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
            assert done.returncode == 0, f"README python block {body[:60]!r} failed:\n{done.stderr}"
            output = done.stdout
            ran["python"] += 1
        else:
            continue
        if expected is not None:
            assert _same(output, expected), f"README shows:\n{expected}\nthe program prints:\n{output}"
            ran["compared"] += 1
    assert ran["bash"] >= 6 and ran["python"] >= 6 and ran["compared"] >= 3, ran
    assert (tmp_path / "cart_pole.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_compare_is_strict_on_words_and_loose_on_digits():
    assert _same("t = 8: x = [s=5.54761e-05, th=0.1]", "t = 8: x = [s=5.5476e-05, th=0.1]")
    assert not _same("t = 8: x = [s=5.54761e-05]", "t = 9: x = [s=5.54761e-05]")
    assert not _same("error: a", "error: b")
    assert _same("wrote 18 files to x/ (x1: n = 2) in 0.51 s", "wrote 18 files to x/ (x1: n = 2) in 0.12 s")
