"""The help pages grouped by what the user has in hand, the renamed options under both names, lists separated by
commas or spaces (sls/cli/help.py and the commands' section tables)."""

from __future__ import annotations

import re

import click
import pytest
from conftest import import_package, run

from sls.cli.app import GENERATE_SECTIONS, _names_list, _place, main
from sls.cli.help import OTHER, SectionedCommand, option_name, split_list

COMMANDS = {name: command for name, command in main.commands.items() if isinstance(command, SectionedCommand)}


def _sections(text: str) -> dict[str, list[str]]:
    """A help page's sections: title -> the long option names listed under it, in order."""
    sections: dict[str, list[str]] = {}
    title = None
    for line in text.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            title = line[:-1]
            sections[title] = []
        elif title is not None and re.match(r"  -", line):
            names = re.findall(r"--[\w-]+", line.split("  ")[1] if line.startswith("  -") else line)
            sections[title].append(names[0] if names else line.split()[0])
    return sections


def test_every_command_but_examples_has_sections():
    assert set(COMMANDS) == {"generate", "lqr", "simulate", "sweep"}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_is_in_a_named_section(name):
    """A new option is one line of its command's section table: none lands in the catch-all."""
    command = COMMANDS[name]
    ctx = click.Context(command)
    options = [option_name(p) for p in command.get_params(ctx) if isinstance(p, click.Option)]
    unplaced = [o for o in options if command.sections.get(o, OTHER) == OTHER]
    assert not unplaced, f"sls {name}: add {unplaced} to its section table"
    stale = set(command.sections) - set(options)
    assert not stale, f"sls {name}: the section table names options it does not have: {stale}"


def test_generate_help_shows_the_groups_in_order(tmp_path):
    page = run("generate", "--help", cwd=tmp_path).stdout
    sections = _sections(page)
    titles = [t for t in sections if t not in ("Usage",) and sections[t]]
    assert titles == [
        "A model in energies (inline flags)",
        "Any model (file, example or inline)",
        "A robot file: URDF, xacro, MJCF",
        "Floating base and contacts",
        "Output and targets",
        "General",
        "Renamed (the old name still works, with a warning)",
    ]
    assert sections["Floating base and contacts"][:2] == ["--floating-base", "--base-orientation"]
    assert sections["A robot file: URDF, xacro, MJCF"] == [
        "--frames",
        "--xacro-arg",
        "--package-path",
        "--no-actuators",
        "--srdf",
        "--inertial-params",
    ]
    assert "--state" in sections["A model in energies (inline flags)"]
    assert sections["Output and targets"][0] == "--out"
    for title, names in sections.items():  # each option once, under the title its table gives
        for option in names:
            if option in GENERATE_SECTIONS:
                assert GENERATE_SECTIONS[option] == title, option
    assert "--x  now --state" in page  # the old name is listed with the new one


def test_generate_help_names_every_joint_mjcf_reads(tmp_path):
    page = " ".join(run("generate", "--help", cwd=tmp_path).stdout.split())
    assert "hinge, slide, ball and free joints" in page


@pytest.mark.parametrize("name", ["lqr", "simulate", "sweep"])
def test_control_commands_show_sections(name, tmp_path):
    sections = _sections(run(name, "--help", cwd=tmp_path).stdout)
    assert {"Output", "General"} <= set(sections)
    assert OTHER not in sections


#: Every renamed option: (command, old name, new name) -> the command's arguments, OPTION standing for the name.
RENAMED = {
    ("generate", "--x", "--state"): ["OPTION", "q dq"],
    ("sweep", "--params", "--param-sets"): ["DIR", "OPTION", "p.csv", "--x0", "0", "--t-end", "1"],
    ("sweep", "--out", "--csv"): ["DIR", "--param-sets", "p.csv", "--x0", "0", "--t-end", "1", "OPTION", "f.csv"],
}


def test_every_rename_is_tested():
    assert set(RENAMED) == {(name, old, new) for name, c in COMMANDS.items() for old, new in c.renamed.items()}


def _arguments(words: list[str], option: str, equals: bool) -> list[str]:
    k = words.index("OPTION")
    if equals:
        return [*words[:k], f"{option}={words[k + 1]}", *words[k + 2 :]]
    return [*words[:k], option, *words[k + 1 :]]


@pytest.mark.parametrize("equals", [False, True], ids=["separate", "equals"])
@pytest.mark.parametrize(("name", "old", "new"), sorted(RENAMED))
def test_a_renamed_option_parses_the_same_under_both_names(name, old, new, equals, capsys):
    command, words = COMMANDS[name], RENAMED[name, old, new]
    new_params = command.make_context(name, _arguments(words, new, equals)).params
    assert capsys.readouterr().err == ""
    old_params = command.make_context(name, _arguments(words, old, equals)).params
    warning = capsys.readouterr().err
    assert old_params == new_params
    assert warning == f"warning: {old} is now {new} (the old name still works, for now)\n"


def test_an_old_name_after_the_end_of_options_is_left_alone():
    command = COMMANDS["generate"]
    assert command.renaming(["--T", "x", "--", "--x"]) == ["--T", "x", "--", "--x"]
    assert command.renaming(["--x0", "--x=q dq"]) == ["--x0", "--state=q dq"]


def test_generate_under_the_old_name_writes_the_same_package(tmp_path):
    flags = ["--T", "1/2*m*dq^2", "--V", "m*g*(1 - cos(q))", "--fric", "0", "--param", "m=1", "--param", "g=9.8"]
    old = run("generate", *flags, "--x", "q dq", "--out", "old", "-q", cwd=tmp_path)
    new = run("generate", *flags, "--state", "q,dq", "--out", "new", "-q", cwd=tmp_path)
    assert old.stderr == "warning: --x is now --state (the old name still works, for now)\n"
    assert new.stderr == ""
    for path in (tmp_path / "new").iterdir():
        if path.is_file():
            assert path.read_bytes() == (tmp_path / "old" / path.name).read_bytes(), path.name
    assert import_package(tmp_path / "new").STATE == ("q", "dq")


def test_lists_take_commas_spaces_or_both():
    assert split_list("a,b c ,d  e,") == ["a", "b", "c", "d", "e"]
    assert _names_list("upper lower, hand:6d") == "upper,lower,hand:6d"
    assert _names_list(None) is None
    assert _place("foot=0.1 0 -0.2") == "foot=0.1,0,-0.2"
    assert _place("foot=0.1, 0, -0.2, 0 0 1") == "foot=0.1,0,-0.2,0,0,1"


def test_frames_and_functions_separated_by_spaces(tmp_path):
    urdf = str(pytest.importorskip("pathlib").Path(__file__).parents[1] / "data" / "planar2.urdf")
    run(
        "generate",
        urdf,
        "--frames",
        "upper lower",
        "--functions",
        "qddot_fun frame_pose_fun",
        "-q",
        "--out",
        "p",
        cwd=tmp_path,
    )
    package = import_package(tmp_path / "p")
    assert package.FRAMES == ("upper", "lower")
    assert {"qddot_fun", "frame_pose_fun"} <= set(package.__all__)
    result = run("generate", urdf, "--contacts", "upper nosuch", "-q", "--out", "q", cwd=tmp_path, check=False)
    assert result.stderr.endswith("contacts: 'nosuch' is not a link of the robot\n")
    result = run(
        "generate", urdf, "--contacts", "lower", "--contact-at", "nosuch=1 2 3", "--out", "q", cwd=tmp_path, check=False
    )
    assert result.stderr == "error: --contact-at: 'nosuch' is not a contact (the contacts are lower)\n"


def test_a_missing_parent_folder_is_refused_by_every_command(tmp_path):
    """``generate --out`` creates its folder but not the folders above it, as --save, --plot and --csv."""
    result = run("generate", "pendulum", "--out", "a/typo/pkg", cwd=tmp_path, check=False)
    assert result.returncode == 1
    assert result.stderr == "error: --out a/typo/pkg: the folder a/typo does not exist; create it first\n"
    assert not (tmp_path / "a").exists()
    run("generate", "pendulum", "--out", "pkg", "-q", cwd=tmp_path)
    result = run("lqr", "pkg", "--x-eq", "0 0", "--save", "designs/g.json", cwd=tmp_path, check=False)
    assert result.returncode == 1
    assert result.stderr == "error: --save designs/g.json: the folder designs does not exist; create it first\n"
    (tmp_path / "a").mkdir()
    run("generate", "pendulum", "--out", "a/pkg", "-q", cwd=tmp_path)  # the folder itself is created
    assert (tmp_path / "a" / "pkg" / "__init__.py").is_file()
