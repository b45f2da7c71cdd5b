"""Where a model lives: declared ranges steer the checks of M and the constraints (sls.derive.validate).

The reference facts are by hand: M = 1 - (th/a)^2 is positive definite only for
|th| < a; M = cos(th) only for |th| < pi/2, and singular at pi/2.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from click.testing import CliRunner
from conftest import METHODS, build

import sls
from sls.cli.app import main
from sls.model import build_model

LEAN = """\
# A body whose model holds for small leans only: M = 1 - (th/a)^2
state = ["th", "ph", "dth", "dph"]
T = "1/2*(1 - (th/a)^2)*dth^2 + 1/2*m*dph^2"
V = "m*g*cos(th)"
fric = 0
[params]
a = 1.0
m = 2.0
g = 9.81
"""

#: M = cos(th): singular at th = pi/2, indefinite beyond.
TILT = dict(state=["th", "dth"], T="1/2*cos(th)*dth^2", V="0", fric="0")


def _refusal(model) -> str:
    """The one-line message with which ``sls.generate`` refuses ``model`` (nothing is written)."""
    out = Path(tempfile.mkdtemp(prefix="sls-refused-")) / "out"
    try:
        with pytest.raises(sls.ModelError) as info:
            sls.generate(model, out)
        assert not out.exists()
    finally:
        shutil.rmtree(out.parent, ignore_errors=True)
    return str(info.value)


def test_undeclared_range_refuses_and_says_where_and_how():
    message = _refusal(sls.load_toml("lean.toml", text=LEAN))
    assert "the mass matrix M = d2T/ddq2 is indefinite, not positive definite, at th=" in message
    assert "(states sampled with th in [-3.142, 3.142], ph in [-3.142, 3.142])" in message
    assert "[ranges] th = [LOW, HIGH] in the model file, --range th=LOW:HIGH on the command line" in message
    assert "ranges={'th': (LOW, HIGH)} in the Python API" in message
    th = float(message.split("at th=")[1].split(",")[0])
    assert abs(th) > 1.0  # the state it names is one where M is indeed indefinite


@pytest.mark.parametrize("method", METHODS)
def test_a_declared_range_lets_the_model_in(tmp_path, method):
    text = LEAN + "\n[ranges]\nth = [-0.5, 0.5]\n"
    model = sls.load_toml("lean.toml", text=text)
    assert model.ranges == {"th": (-0.5, 0.5)}
    pkg = build(model, tmp_path / method, method)
    x = [0.3, 0.0, 0.0, 0.0]
    np.testing.assert_allclose(pkg.M_fun(x), [[1 - 0.3**2, 0.0], [0.0, 2.0]], rtol=1e-14)


def test_ranges_through_every_way_in_give_the_same_package(tmp_path):
    (tmp_path / "declared").mkdir()
    (tmp_path / "declared" / "lean.toml").write_text(LEAN + '\n[ranges]\nth = ["-pi/6", 0.5]\n')
    (tmp_path / "lean.toml").write_text(LEAN)
    runner = CliRunner()
    for out, args in (
        ("toml", [str(tmp_path / "declared" / "lean.toml")]),
        ("flag", [str(tmp_path / "lean.toml"), "--range", "th=-pi/6:0.5"]),
        (
            "inline",
            [
                "--T",
                "1/2*(1 - (th/a)^2)*dth^2 + 1/2*m*dph^2",
                "--V",
                "m*g*cos(th)",
                "--fric",
                "0",
                "--state",
                "th ph dth dph",
                "--param",
                "a=1",
                "--param",
                "m=2",
                "--param",
                "g=9.81",
                "--range",
                "th=-0.5:0.5",
            ],
        ),
    ):
        result = runner.invoke(main, ["generate", *args, "--out", str(tmp_path / out), "-q"])
        assert result.exit_code == 0, result.stderr
    for name in ("M_fun.py", "qddot_fun.py", "__init__.py"):  # ranges steer the checks, not the code
        assert (tmp_path / "toml" / name).read_text() == (tmp_path / "flag" / name).read_text()
    refused = runner.invoke(main, ["generate", str(tmp_path / "lean.toml"), "--out", str(tmp_path / "no"), "-q"])
    assert refused.exit_code == 1 and refused.stderr.count("\n") == 1 and "--range th=LOW:HIGH" in refused.stderr
    assert not (tmp_path / "no").exists()


def test_ranges_in_the_python_api(tmp_path):
    th, dth = sp.symbols("th dth")
    strings = sls.model_from_strings(**TILT, ranges={"th": [-1.2, 1.2]})
    assert strings.ranges == {"th": (-1.2, 1.2)}
    api = sls.model_from_sympy(sp.cos(th) * dth**2 / 2, 0, 0, [th, dth], ranges={th: (-1.2, 1.2)})
    assert api.ranges == {"th": (-1.2, 1.2)}
    built = build_model(
        state=["th", "dth"],
        T=sp.cos(sp.Symbol("th", real=True)) * sp.Symbol("dth", real=True) ** 2 / 2,
        V=0,
        fric=0,
        ranges={"th": (-1, 1)},
    )
    assert built.ranges == {"th": (-1.0, 1.0)}
    plain = sls.model_from_sympy(sp.cos(th) * dth**2 / 2, 0, 0, [th, dth])
    assert "M = d2T/ddq2 is" in _refusal(plain)
    report = sls.generate(plain, tmp_path / "pkg", ranges={"th": (-1.5, 1.5)})
    assert (report.out_dir / "M_fun.py").is_file()
    sls.sym_lagrangian_solver(sp.cos(th) * dth**2 / 2, 0, 0, [th, dth], tmp_path / "sym", ranges={th: (-1.5, 1.5)})
    # functions of time work as keys too
    from sympy.physics.mechanics import dynamicsymbols

    q = dynamicsymbols("q")
    timed = sls.model_from_sympy(
        sp.cos(q) * q.diff() ** 2 / 2, 0, 0, [q, q.diff()], ranges={q: (-1, 1), q.diff(): (-2, 2)}
    )
    assert timed.ranges == {"q": (-1.0, 1.0), "dq": (-2.0, 2.0)}


def test_a_range_reaching_the_singularity_is_refused_naming_a_state_in_it():
    message = _refusal(sls.model_from_strings(**TILT, ranges={"th": [1.0, 3.0]}))
    th = float(message.split("at th=")[1].split(" ")[0])
    assert 1.0 <= th <= 3.0 and np.cos(th) <= 1e-12
    assert "th in [1, 3]" in message and "--range th=LOW:HIGH" in message


def test_a_point_range_holds_a_coordinate_at_one_value():
    model = sls.model_from_strings(**TILT, ranges={"th": [0.2, 0.2]})
    assert model.sample_box() == ([0.2, -1.0], [0.2, 1.0])


@pytest.mark.parametrize(
    "ranges, message",
    [
        ({"zz": [0, 1]}, r"ranges: 'zz' is not a state variable \(ranges are given for: th, dth\)"),
        ({"th": [1, 0]}, r"ranges.th: the low end 1 is above the high end 0"),
        ({"th": [0]}, r"ranges.th: expected \[LOW, HIGH\], two numbers, got \[0\]"),
        ({"th": [0, float("nan")]}, r"ranges.th: value must be a finite number, got nan"),
        ({"th": [0, "inf"]}, r"ranges.th: 'inf' is not a number"),
        ({"th": [0, "1/0"]}, r"ranges.th: "),
        ({"th": [0, "k"]}, r"ranges.th: 'k' is not a number"),
        ({"th": [0, True]}, r"ranges.th: value must be a finite number, got True"),
        ({"th": "0:1"}, r"ranges.th: expected \[LOW, HIGH\]"),
    ],
)
def test_bad_ranges_are_one_line_errors(ranges, message):
    with pytest.raises(sls.SlsError, match=message):
        sls.model_from_strings(**TILT, ranges=ranges)


def test_bad_ranges_in_files_and_flags(tmp_path):
    (tmp_path / "m.toml").write_text(LEAN.replace("[params]", "ranges = 3\n[params]"))
    runner = CliRunner()
    result = runner.invoke(main, ["generate", str(tmp_path / "m.toml"), "-q", "--out", str(tmp_path / "o")])
    assert result.exit_code == 1 and "key 'ranges' must be a table of NAME = [LOW, HIGH]" in result.stderr
    (tmp_path / "m.toml").write_text(LEAN)
    for flag, code, text in (
        ("th=1", 2, "--range 'th=1': expected NAME=LOW:HIGH"),
        ("th=1:inf", 2, "the ends must be finite numbers"),
        ("3th=0:1", 2, "is not a state name"),
        ("psi=0:1", 1, "ranges: 'psi' is not a state variable"),
    ):
        result = runner.invoke(
            main, ["generate", str(tmp_path / "m.toml"), "--range", flag, "-q", "--out", str(tmp_path / "o")]
        )
        assert result.exit_code == code, result.stderr
        assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1 and text in result.stderr
    assert not (tmp_path / "o").exists()


def test_constraint_checks_sample_the_declared_range(tmp_path):
    """Rows [th, -1, 0] and [th, -1, th] are dependent at th = 0 only: accepted over the default range,
    refused when the declared range is that point."""
    base = dict(state=["th", "y", "z", "dth", "dy", "dz"], T="1/2*(dth^2 + dy^2 + dz^2)", V="0", fric="0")
    velocity = ["th*dth - dy", "th*dth - dy + th*dz"]
    sls.generate(sls.model_from_strings(**base, velocity_constraints=velocity), tmp_path / "pkg")
    with pytest.raises(
        sls.ModelError, match=r"velocity_constraints\[1\] adds nothing .* e.g. th=0, y=.*th in \[0, 0\].*--range "
    ):
        sls.generate(
            sls.model_from_strings(**base, velocity_constraints=velocity, ranges={"th": [0, 0]}), tmp_path / "no"
        )
    assert not (tmp_path / "no").exists()


def test_a_mass_matrix_with_no_finite_sample_is_refused(tmp_path):
    """A model that cannot be evaluated anywhere the checks look is not silently passed."""
    root_mass = dict(state=["q", "dq"], T="1/2*sqrt(q - 4)*dq^2", V="0", fric="0")  # real for q >= 4 only
    message = _refusal(sls.model_from_strings(**root_mass))
    assert (
        "has no finite value at any of the 8 sampled states (e.g. at q=" in message and "--range q=LOW:HIGH" in message
    )
    sls.generate(sls.model_from_strings(**root_mass, ranges={"q": [5, 9]}), tmp_path / "pkg")
    huge = dict(state=["q", "dq"], T="5*m^21*(2 + cos(q))*dq^2", V="0", fric="0", params={"m": 1e15})  # M overflows
    assert "no finite value at any of the 8 sampled states (e.g. at q=" in _refusal(sls.model_from_strings(**huge))


def test_a_negative_base_to_a_parameter_power_is_a_domain_error_of_the_sample(tmp_path):
    """Found by tests/readers/test_fuzz_model_files.py: sin(q)**k with a required parameter k is complex where
    sin(q) < 0 (sampled k in [0.5, 1.5]); the sample says nothing, like a division by zero, instead of an internal
    error."""
    model = sls.model_from_strings(
        state=["q", "p", "dq", "dp"], T="1/2*dq^2 + 1/2*(2 + sin(q)^k)*dp^2", V="0", fric="0"
    )
    pkg = build(model, tmp_path / "pkg")
    np.testing.assert_allclose(pkg.M_fun([0.5, 0, 0, 0], k=1.0), [[1, 0], [0, 2 + np.sin(0.5)]])
    runner = CliRunner()
    result = runner.invoke(
        main,
        [
            "generate",
            "--T",
            "1/2*(2 + sin(q)^k)*dq^2",
            "--V",
            "0",
            "--fric",
            "0",
            "--state",
            "q dq",
            "--range",
            "q=-3:-0.2",
            "--out",
            str(tmp_path / "never"),
            "-q",
        ],
    )
    assert result.exit_code == 1 and "no finite value at any of the 8 sampled states" in result.stderr


def test_a_singular_mass_matrix_names_the_motion_without_kinetic_energy():
    """M = [[1, 1], [1, 1]] (T = 1/2 (dq1 + dq2)^2): the velocity (1, -1) moves q1 and q2 with no kinetic energy;
    M is constant, so no range can help and none is suggested."""
    message = _refusal(sls.model_from_strings(state=["q1", "q2", "dq1", "dq2"], T="1/2*(dq1 + dq2)^2", V="0", fric="0"))
    assert "is singular, not positive definite" in message
    assert "a velocity of q1 and q2 carries no kinetic energy" in message
    assert "ranges" not in message


def test_a_massless_urdf_joint_is_named_with_the_file(tmp_path):
    """The lower link keeps inertia about x and z but none about the elbow's axis y, and no mass."""
    text = (Path(__file__).resolve().parents[1] / "data" / "planar2.urdf").read_text()
    text = text.replace('<mass value="0.7"/>', '<mass value="0"/>')
    text = text.replace(
        'ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.0005"',
        'ixx="0.01" ixy="0" ixz="0" iyy="0" iyz="0" izz="0.01"',
    )
    (tmp_path / "massless.urdf").write_text(text)
    result = CliRunner().invoke(
        main, ["generate", str(tmp_path / "massless.urdf"), "--out", str(tmp_path / "out"), "-q"]
    )
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: {tmp_path / 'massless.urdf'}: joint 'elbow' moves no mass")
    assert "the mass matrix is singular, e.g. at shoulder=" in result.stderr
    assert result.stderr.count("\n") == 1 and not (tmp_path / "out").exists()


def test_ranges_in_a_python_model_file(tmp_path):
    (tmp_path / "tilt.py").write_text(
        "import sympy as sp\n"
        "th, dth = sp.symbols('th dth')\n"
        "T = sp.cos(th) * dth**2 / 2\nV = 0\nfric = 0\nx = [th, dth]\n"
        "ranges = {th: (-1, 1)}\n"
    )
    model = sls.load_python(tmp_path / "tilt.py")
    assert model.ranges == {"th": (-1.0, 1.0)}
    sls.generate(model, tmp_path / "pkg")


def test_a_robot_file_is_told_to_use_the_flag_or_the_api(tmp_path):
    """A URDF model has no [ranges] table: the hint names --range and the API only."""
    text = (Path(__file__).resolve().parents[1] / "data" / "planar2.urdf").read_text()
    from sls.derive.validate import _range_hint

    model = sls.load_urdf("planar2.urdf", text=text)
    hint = _range_hint(model, [1])
    assert (
        "--range elbow=LOW:HIGH on the command line, or ranges={'elbow': (LOW, HIGH)}" in hint
        and "[ranges]" not in hint
    )


def test_a_contact_row_that_adds_nothing_is_named(tmp_path):
    """A point contact on a planar arm: its out-of-plane row never moves, refused in one line naming that row."""
    from sls.readers.urdf import load_urdf

    model = load_urdf(Path(__file__).resolve().parents[1] / "data" / "planar2.urdf", contacts=["lower"])
    with pytest.raises(sls.ModelError, match=r"the contact lower's row y adds nothing to the rows before it"):
        sls.generate(model, tmp_path / "out")
    assert not (tmp_path / "out").exists()
