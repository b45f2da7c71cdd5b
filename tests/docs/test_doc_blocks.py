"""The code blocks of the README and of every page under docs/, run page by page as a reader would.

Each page runs in a fresh folder, its blocks in the order the page shows them.
Shell blocks (`bash`, `shell`) run their `sls ...` commands (the installed console
script), C compiler lines (`cc ...`, with `$CC` if set) and the programs they build
(`./step`); `pip`, `venv`, `pytest`, `mkdocs`, `ruff`, `mypy` and benchmark lines are skipped
(CI runs the static checks itself). TOML blocks are saved under the name the next shell block generates from; any
other TOML block must parse, and load as a model if it has a `state`; `xml` blocks likewise (a URDF
or MJCF file the next shell block generates from, else it must parse as XML). C blocks are saved
under the name the next shell block compiles. Python blocks run in the same folder; `matlab`
blocks run in GNU Octave where it is installed. Where a block is followed by a `text`
block, the output must match it: the same words, numbers equal to 3 significant digits
(run times masked). No output may show a traceback, and a block in any other language
fails: pages added under docs/ are picked up by the glob, with the same rules.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
from conftest import sls_command, sls_env

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: sls depends on tomli there
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("**/*.md"))]
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)
NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w.])")
SKIP = ("pip ", "python3 -m venv", ". .venv", "pytest", "python -m benchmarks", "mkdocs ", "ruff ", "mypy ")
SHELL = ("bash", "shell")
CC = os.environ.get("CC", "cc")
OCTAVE = shutil.which("octave-cli") or shutil.which("octave")


def _blocks(text: str) -> list[tuple[str, str, str | None]]:
    """(language, body, the text block right after it or None) of every block but the text blocks."""
    found = list(BLOCK.finditer(text))
    blocks = []
    for k, match in enumerate(found):
        following = None
        after = found[k + 1] if k + 1 < len(found) else None
        if after is not None and after.group(1) == "text" and not text[match.end() : after.start()].strip():
            following = after.group(2)
        if match.group(1) != "text":
            blocks.append((match.group(1), match.group(2), following))
    return blocks


ASSIGNMENT = re.compile(r"([A-Z_][A-Z0-9_]*)=\$\((.*)\)")
ENVIRONMENT_PREFIX = re.compile(r"^(?:[A-Z_][A-Z0-9_]*=\S*\s+)+")


def _commands(body: str) -> list[list[str]]:
    """The commands of a shell block to run, as argument lists (``sls`` stays the first word)."""
    commands = []
    for line in body.replace("\\\n", " ").splitlines():
        for part in line.split("&&"):
            part = part.split("  #")[0].strip()
            assignment = ASSIGNMENT.fullmatch(part)
            if assignment:  # NAME=$(command): run by bash, $NAME expanded in the page's later commands
                commands.append(["=", assignment.group(1), assignment.group(2)])
                continue
            part = ENVIRONMENT_PREFIX.sub("", part)  # VAR=value before a skipped command
            words = shlex.split(part) if part else []
            if words and (words[0] in ("sls", "cc") or words[0].startswith("./")):
                commands.append(words)
            else:
                assert not part or part.startswith(SKIP), f"shell line not understood: {part!r}"
    return commands


def _mask(text: str) -> str:
    return re.sub(r" in \d+(\.\d+)? s$", " in (time) s", text.strip(), flags=re.M)


def _close(a: str, b: str) -> bool:
    return abs(float(a) - float(b)) <= 5e-3 * max(abs(float(b)), 1e-2)


def _shown_line(line: str, shown: str) -> bool:
    """One printed line against a shown line in which ``...`` stands for text left out."""
    if "..." not in shown:
        return _same(line, shown)
    pieces = shown.split("...")
    pattern = ".*".join(re.escape(NUMBER.sub("#", piece)) for piece in pieces)
    if not re.fullmatch(pattern, NUMBER.sub("#", line)):
        return False
    return all(_close(a, b) for a, b in zip(NUMBER.findall(line), NUMBER.findall(pieces[0])))


def _same(got: str, expected: str) -> bool:
    got, expected = _mask(got), _mask(expected)
    if "..." in expected:  # an abbreviated output: the shown lines in order, "..." where some are left out
        printed = got.splitlines()
        position = 0
        for shown in expected.splitlines():
            if shown.strip() == "...":
                continue
            while position < len(printed) and not _shown_line(printed[position], shown):
                position += 1
            if position == len(printed):
                return False
            position += 1
        return True
    if NUMBER.sub("#", got) != NUMBER.sub("#", expected):
        return False
    return all(_close(a, b) for a, b in zip(NUMBER.findall(got), NUMBER.findall(expected)))


def _file_for(blocks: list, k: int, pattern: str) -> str | None:
    """The file name the shell block after block ``k`` uses, by ``pattern`` (one group), or None."""
    if k + 1 < len(blocks) and blocks[k + 1][0] in SHELL:
        found = re.search(pattern, blocks[k + 1][1])
        return found.group(1) if found else None
    return None


def _run_shell(body: str, folder: Path, env: dict) -> str:
    output = ""
    progress = re.compile(r"^(generating \S+|simulating): \d+%")  # plain progress, on a slow machine
    for words in _commands(body):
        if words[0] == "=":
            done = subprocess.run(
                ["bash", "-c", words[2]], cwd=folder, capture_output=True, text=True, env=env, timeout=60
            )
            assert done.returncode == 0, f"{words[1]}=$({words[2]}) failed:\n{done.stderr}"
            env[words[1]] = done.stdout.strip()
            continue
        words = [re.sub(r"\$(\w+)", lambda found: env.get(found.group(1), found.group(0)), word) for word in words]
        if words[0] == "sls":
            done = subprocess.run(
                sls_command() + words[1:], cwd=folder, capture_output=True, text=True, env=env, timeout=300
            )
            assert "Traceback" not in done.stderr, done.stderr
            assert done.returncode == 0 or done.stderr.startswith("error: "), done.stderr
        else:
            command = [*CC.split(), *words[1:]] if words[0] == "cc" else [str(folder / words[0])]
            done = subprocess.run(command, cwd=folder, capture_output=True, text=True, env=env, timeout=300)
            assert done.returncode == 0, f"{' '.join(words)} failed:\n{done.stdout}{done.stderr}"
        output += done.stdout + "".join(line for line in done.stderr.splitlines(True) if not progress.match(line))
    return output


def run_page(text: str, folder: Path, env: dict) -> dict:
    """Run the blocks of one page in ``folder``; how many of each kind ran, were compared or could not run here."""
    blocks = _blocks(text)
    ran = {"shell": 0, "python": 0, "c": 0, "toml": 0, "xml": 0, "matlab": 0, "compared": 0, "no octave": 0}
    for k, (language, body, expected) in enumerate(blocks):
        output = None
        if language == "toml":
            data = tomllib.loads(body)  # every TOML block is valid TOML
            name = _file_for(blocks, k, r"sls generate (\S+\.toml)")
            if name:
                (folder / name).write_text(body, encoding="utf-8")
            elif "state" in data:
                import sls

                shown = folder / "shown_model.toml"
                shown.write_text(body, encoding="utf-8")
                sls.load_toml(shown)  # a whole model shown, not generated here: it must load
        elif language == "xml":
            name = _file_for(blocks, k, r"sls generate (\S+\.(?:urdf|xml))")
            if name:
                (folder / name).write_text(body, encoding="utf-8")
            else:
                ElementTree.fromstring(body)  # an excerpt shown, not generated here: it must be XML
        elif language == "c":
            name = _file_for(blocks, k, r"(\S+\.c)\b")
            assert name, f"C block {body[:60]!r}: the next shell block compiles no .c file"
            (folder / name).write_text(body, encoding="utf-8")
        elif language in SHELL:
            output = _run_shell(body, folder, env)
            language = "shell"
        elif language == "python":
            done = subprocess.run(
                [sys.executable, "-"], input=body, cwd=folder, capture_output=True, text=True, env=env, timeout=300
            )
            assert done.returncode == 0, f"python block {body[:60]!r} failed:\n{done.stderr}"
            output = done.stdout
        elif language == "matlab":
            if OCTAVE is None:
                ran["no octave"] += 1
                continue
            done = subprocess.run(
                [OCTAVE, "--no-init-file", "--no-window-system", "--quiet", "--eval", body],
                cwd=folder,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert done.returncode == 0, f"matlab block {body[:60]!r} failed in Octave:\n{done.stdout}{done.stderr}"
            output = done.stdout
        else:
            raise AssertionError(
                f"a ```{language} block cannot be run: use bash, shell, python, toml, xml, c, matlab or text"
            )
        ran[language] += 1
        if expected is not None:
            assert output is not None, f"a text block follows a {language} block, which prints nothing"
            assert _same(output, expected), f"the page shows:\n{expected}\nthe program prints:\n{output}"
            ran["compared"] += 1
    return ran


@pytest.mark.parametrize("page", PAGES, ids=[str(page.relative_to(REPO)) for page in PAGES])
def test_page_blocks_run_and_print_what_the_page_shows(page, tmp_path):
    text = page.read_text(encoding="utf-8")
    if "--plot" in text or "sls.control.plot" in text:
        pytest.importorskip("matplotlib")  # the page writes a plot
    if "```c\n" in text and shutil.which(CC.split()[0]) is None:
        pytest.skip(f"the page compiles C and there is no C compiler ({CC})")
    ran = run_page(text, tmp_path, {**sls_env(), "MPLBACKEND": "Agg"})
    runnable = sum(1 for language, _, _ in _blocks(text))
    assert sum(ran[kind] for kind in ("shell", "python", "c", "toml", "xml", "matlab", "no octave")) == runnable, ran
    if "--plot cart_pole.png" in text:
        assert (tmp_path / "cart_pole.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_readme_and_the_guides_hold_runnable_blocks():
    counts = {page.relative_to(REPO).as_posix(): _blocks(page.read_text(encoding="utf-8")) for page in PAGES}
    assert len(counts["README.md"]) >= 4
    guides = ("docs/tutorial.md", "docs/control.md", "docs/troubleshooting.md", "docs/c-target.md", "docs/matlab.md")
    for page in guides:
        assert counts[page], f"{page} shows no code"
    outputs = sum(1 for blocks in counts.values() for _, _, expected in blocks if expected is not None)
    assert outputs >= 6, "pages show program output in text blocks, and the test compares it"


def test_the_readme_links_to_files_that_exist():
    """The README is read outside the site (mkdocs checks the pages' links, not the README's)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    links = [link.split("#")[0] for link in re.findall(r"\]\(([^)\s]+)\)", readme) if "://" not in link]
    assert len(links) >= 10
    for link in links:
        assert (REPO / link).is_file(), f"README.md links to {link}, which does not exist"
    listed = set(re.findall(r"\]\(docs/([^)#]+\.md)\)", readme))
    pages = {page.relative_to(REPO / "docs").as_posix() for page in PAGES[1:]} - {"index.md"}
    assert pages <= listed, f"the README's table of pages misses {sorted(pages - listed)}"


def test_a_page_whose_output_differs_or_whose_block_cannot_run_fails(tmp_path):
    env = sls_env()
    run_page("```python\nprint(1 + 1)\n```\n\n```text\n2\n```\n", tmp_path, env)
    with pytest.raises(AssertionError, match="the page shows"):
        run_page("```python\nprint(1 + 1)\n```\n\n```text\n3\n```\n", tmp_path, env)
    with pytest.raises(AssertionError, match="cannot be run"):
        run_page("```console\n$ sls generate\n```\n", tmp_path, env)
    with pytest.raises(AssertionError, match="not understood"):
        run_page("```bash\nls -l\n```\n", tmp_path, env)
    with pytest.raises(tomllib.TOMLDecodeError):
        run_page("```toml\nstate = [\n```\n", tmp_path, env)
    with pytest.raises(ElementTree.ParseError):
        run_page("```xml\n<robot><link></robot>\n```\n", tmp_path, env)


def test_a_urdf_block_is_the_file_the_next_command_generates(tmp_path):
    urdf = (
        '<robot name="r"><link name="base"/><link name="arm"><inertial><mass value="1"/>'
        '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/><origin xyz="0.5 0 0"/></inertial></link>'
        '<joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/></joint></robot>'
    )
    page = (
        f"```xml\n{urdf}\n```\n\n```bash\nsls generate r.urdf --out r_eom\n```\n\n"
        "```text\nwrote 18 files to r_eom/ (r: n = 1, m = 1) in 0.1 s\n```\n"
    )
    ran = run_page(page, tmp_path, sls_env())
    assert ran["xml"] == 1 and ran["compared"] == 1
    assert (tmp_path / "r_eom" / "qddot_fun.py").is_file()


def test_compare_is_strict_on_words_and_loose_on_digits():
    assert _same("t = 8: x = [s=5.54761e-05, th=0.1]", "t = 8: x = [s=5.5476e-05, th=0.1]")
    assert not _same("t = 8: x = [s=5.54761e-05]", "t = 9: x = [s=5.54761e-05]")
    assert not _same("error: a", "error: b")
    assert _same("wrote 18 files to x/ (x1: n = 2) in 0.51 s", "wrote 18 files to x/ (x1: n = 2) in 0.12 s")
