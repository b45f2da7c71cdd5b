"""The new-user walk from the issue: the installed `sls` command, every mistake one line, never a traceback.

The cart-pole path from generate to plot and the commonest mistakes run as the
README's blocks (tests/test_readme_blocks.py); here the other mistakes a new
user made (singular parameters, singular or undefined states, output folders,
model-file slips) go through the real console script, run concurrently.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from test_readme_blocks import _env, _sls

SPHERICAL = 'state = ["th", "ph", "dth", "dph"]\nT = "1/2*m*l^2*(dth^2 + sin(th)^2*dph^2)"\nV = "m*g*l*cos(th)"\nfric = 0\n[params]\nm = 1.0\nl = 1.0\ng = 9.81\n'
ROOT_WELL = 'state = ["q", "dq"]\nT = "1/2*dq^2"\nV = "q - 2*sqrt(q)"\nfric = 0\ninputs = ["F"]\nforces = ["F"]\n'
INTERLEAVED = 'state = ["x", "v", "th", "w"]\nT = "1/2*(mc + mp)*v^2 + mp*l*v*w*cos(th) + 1/2*mp*l^2*w^2"\nV = "mp*g*l*cos(th)"\nfric = 0\n[params]\nmc = 1.0\nmp = 0.1\nl = 0.5\ng = 9.81\n'
MISSPELT = INTERLEAVED.replace('"x", "v", "th", "w"', '"x", "th", "v", "w"').replace("mp*g*l", "mpp*g*l")
SINGULAR = 'state = ["a", "b", "da", "db"]\nT = "1/2*(da + db)^2"\nV = "0"\nfric = [0, 0]\n'

PROGRESS = re.compile(r"^(generating \S+|simulating): \d+%")
#: label → (arguments, expected exit code, a piece of the single stderr line or None for a clean run)
MISTAKES = {
    "mass negative": (["lqr", "cp", "--x-eq", "0 0 0 0", "--u-eq", "0", "--param", "mc=-1"], 1, "error: qddot_fun with mc=-1"),
    "singular x_eq": (["lqr", "sph", "--x-eq", "0 0 0 0", "--u-eq", "0 0"], 1, "at x = [th=0, ph=0, dth=0, dph=0]"),
    "singular x0": (["simulate", "sph", "--x0", "0 0 0 0", "--t-end", "1"], 1, "error: the simulation stopped at t = 0: qddot_fun: the mass matrix"),
    "domain error lqr": (["lqr", "root", "--x-eq", "-1 0"], 1, "error: tau_fun is not defined at x = [q=-1, dq=0]: math domain error"),
    "domain error simulate": (["simulate", "root", "--x0", "0.5 -5", "--t-end", "5"], 1, "is not defined at x = [q="),
    "csv into a missing folder": (["simulate", "cp", "--x0", "0 0.1 0 0", "--t-end", "1", "--csv", "designs/run.csv"], 1, "error: --csv designs/run.csv: the folder designs does not exist"),
    "plot into a missing folder": (["simulate", "cp", "--x0", "0 0.1 0 0", "--t-end", "1", "--plot", "figs/run.png"], 1, "error: --plot figs/run.png: the folder figs does not exist"),
    "nan parameter": (["lqr", "cp", "--x-eq", "0 0 0 0", "--param", "mp=nan"], 2, "must be a finite number"),
    "interleaved state": (["generate", "interleaved.toml", "--out", "il"], 1, "error: interleaved.toml: kinetic energy T must be quadratic"),
    "singular model file": (["generate", "singular.toml", "--out", "sg"], 1, "error: singular.toml: the mass matrix M = d2T/ddq2 is singular"),
    "out is the current folder": (["generate", "pendulum", "--out", "."], 0, None),
    "misspelt parameter": (["generate", "misspelt.toml", "--out", "ms"], 0, "warning: 'mpp' has no value among the model's parameters"),
}


@pytest.fixture(scope="module")
def walk(tmp_path_factory):
    folder = tmp_path_factory.mktemp("newuser")
    for name, text in (("sph.toml", SPHERICAL), ("root.toml", ROOT_WELL), ("interleaved.toml", INTERLEAVED),
                       ("misspelt.toml", MISSPELT), ("singular.toml", SINGULAR)):
        (folder / name).write_text(text)
    setup = [["generate", "cart_pole", "--out", "cp"], ["generate", "sph.toml", "--out", "sph"], ["generate", "root.toml", "--out", "root"]]
    env = _env()
    starting = [subprocess.Popen(_sls() + args, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for args in setup]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in starting]
    processes = {
        label: subprocess.Popen(_sls() + args, cwd=folder / "here" if label == "out is the current folder" else folder,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for label, (args, _, _) in MISTAKES.items()
        if label != "out is the current folder" or (folder / "here").mkdir() is None
    }
    done = {label: (p.wait(timeout=300), p.stdout.read(), p.stderr.read()) for label, p in processes.items()}
    return folder, results, done


def test_the_packages_generate(walk):
    _, results, _ = walk
    assert all(code == 0 and "Traceback" not in stderr for code, stderr in results), results


@pytest.mark.parametrize("label", MISTAKES)
def test_every_mistake_is_one_line_never_a_traceback(walk, label):
    folder, _, done = walk
    if label == "plot into a missing folder":
        pytest.importorskip("matplotlib")  # without it the one line says so first
    code, stdout, stderr = done[label]
    stderr = "".join(line for line in stderr.splitlines(True) if not PROGRESS.match(line))  # a slow machine: plain progress
    _, expected_code, piece = MISTAKES[label]
    assert "Traceback" not in stderr + stdout
    assert code == expected_code, stderr
    if piece is None:
        assert stderr == ""
    else:
        lines = stderr.strip().splitlines()
        assert len(lines) == 1 and piece in lines[0], stderr
    assert not list(Path(folder).glob("designs")) and not list(Path(folder).glob("figs"))
    if label == "out is the current folder":
        assert (folder / "here" / "qddot_fun.py").is_file()
