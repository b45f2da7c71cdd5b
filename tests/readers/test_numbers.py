"""The one checked conversion of a model file's numbers (sls.readers.numbers) and the messages that name what is
wrong (issue 39): a number written as model files write one, finite, at most 1e15 in magnitude; huge integers,
keywords, a byte-order mark and a wrong count of kinematic equations each said in one line."""

from __future__ import annotations

import math

import pytest

import sls
from sls.model import check_value
from sls.model.names import MAX_MAGNITUDE
from sls.readers import load_toml, model_from_strings
from sls.readers.numbers import NumberProblem, checked_number, file_number

PENDULUM = 'state = ["q", "dq"]\nT = "1/2*m*l**2*dq**2"\nV = "m*g*l*(1 - cos(q))"\nfric = ["b*dq"]\n'
PARAMS = "[params]\nm = 1.0\nl = 1.0\ng = 9.81\nb = 0.1\n"


@pytest.mark.parametrize(
    ("word", "value"),
    [("1", 1.0), ("-0.5", -0.5), (".25", 0.25), ("3.", 3.0), ("+2e-3", 0.002), ("1E+3", 1000.0), ("1e15", 1e15)],
)
def test_a_decimal_number_is_read(word, value):
    assert file_number(word) == value


@pytest.mark.parametrize(
    ("word", "problem"),
    [
        ("nan", "'nan' is not a finite number"),
        ("-Infinity", "'-Infinity' is not a finite number"),
        ("1e999", "'1e999' is too large"),
        ("1.0000001e15", "'1.0000001e15' is too large (the limit is 1e+15 in magnitude"),
        ("-3e20", "'-3e20' is too large"),
        ("1_000", "'1_000' is not a number"),  # Python's float() takes these three; strtod, MuJoCo and URDF do not
        ("0x1F", "'0x1F' is not a number"),
        ("\u0661\u0662", "is not a number"),
        ("1,5", "'1,5' is not a number"),
        ("", "'' is not a number"),
    ],
)
def test_a_number_that_is_not_one_is_named(word, problem):
    with pytest.raises(NumberProblem) as caught:
        file_number(word)
    assert problem in str(caught.value)


def test_a_long_number_is_shown_short_and_without_python_advice():
    with pytest.raises(NumberProblem) as caught:
        file_number("1" * 5000)
    message = str(caught.value)
    assert len(message) < 150 and "..." in message and "too large" in message and "set_int_max" not in message


def test_checked_values_and_parameters_share_the_bound():
    assert checked_number(-MAX_MAGNITUDE) == -1e15 and check_value("k", MAX_MAGNITUDE) == 1e15
    for value in (math.inf, math.nan, 2e15):
        with pytest.raises(NumberProblem):
            checked_number(value)
        with pytest.raises(sls.ModelError, match="parameter 'k'"):
            check_value("k", value)
    with pytest.raises(sls.ModelError, match=r"parameter 'k': 9{20,}\.\.\. is too large"):  # an int beyond floats
        check_value("k", int("9" * 400))


def test_a_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "pendulum.toml"
    path.write_text("\ufeff" + PENDULUM + PARAMS, encoding="utf-8")
    plain = load_toml(tmp_path / "pendulum.toml", text=PENDULUM + PARAMS)
    model = load_toml(path)
    assert (model.T, model.V, model.params) == (plain.T, plain.V, plain.params)


@pytest.mark.parametrize("digits", ["1" * 5000, "1" * 5000 + ".0"])
def test_a_huge_integer_in_toml_is_one_line_with_its_line(tmp_path, digits):
    path = tmp_path / "pendulum.toml"
    path.write_text(PENDULUM + PARAMS.replace("m = 1.0", f"m = {digits}"), encoding="utf-8")
    with pytest.raises(sls.ModelFileError) as caught:
        load_toml(path)
    message = str(caught.value)
    assert "line 6: the number '1111" in message and "too large" in message and "set_int_max" not in message


def test_a_huge_integer_in_an_expression_is_too_large_not_python_advice():
    with pytest.raises(sls.ExpressionError) as caught:
        model_from_strings(state=["q", "dq"], T="1/2*dq**2", V="1" * 5000 + "*q", fric="0")
    message = str(caught.value)
    assert message.startswith("V: number is too large: '1111") and "set_int_max" not in message


@pytest.mark.parametrize("word", ["lambda", "class", "if", "def", "yield"])
def test_a_keyword_is_a_reserved_name_in_expressions_and_names(word):
    with pytest.raises(sls.ExpressionError, match=rf"V: '{word}' \(column 5 of .*\) is a reserved name \(a Python "):
        model_from_strings(state=["q", "dq"], T="1/2*dq**2", V=f"q + {word}*q", fric="0")
    with pytest.raises(sls.ModelError, match=rf"state: '{word}' is a reserved name \(a Python keyword\)"):
        model_from_strings(state=[word, "dq"], T="1/2*dq**2", V="0", fric="0")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("q and dq", "is not allowed in an expression"),  # an operator keyword: the construct is named as before
        ("q +", r"cannot parse 'q \+' at the end: invalid syntax"),
        ("True*q", "literal is not allowed"),
    ],
)
def test_other_syntax_keeps_its_message(text, message):
    with pytest.raises(sls.ExpressionError, match=message):
        model_from_strings(state=["q", "dq"], T="1/2*dq**2", V=text, fric="0")


def test_kinematics_for_more_coordinates_than_the_state_has_says_the_count():
    with pytest.raises(sls.ModelError) as caught:
        model_from_strings(
            state=["x", "y", "th", "vx", "vy", "w"],
            T="1/2*(vx**2 + vy**2 + w**2)",
            V="0",
            fric="0",
            kinematics=["vx*cos(th)", "vx*sin(th)", "w", "vy"],
        )
    assert str(caught.value).startswith("kinematics: expected 3 entries, one per coordinate, got 4")


def test_fewer_speeds_than_coordinates_are_still_read():
    """Seven coordinates and six speeds (a quaternion's kinematics): the count decides the split, as before."""
    q = ["px", "py", "pz", "qx", "qy", "qz", "qw"]
    v = ["vx", "vy", "vz", "wx", "wy", "wz"]
    rates = [
        "vx",
        "vy",
        "vz",
        "(qw*wx - qz*wy + qy*wz)/2",
        "(qz*wx + qw*wy - qx*wz)/2",
        "(-qy*wx + qx*wy + qw*wz)/2",
        "-(qx*wx + qy*wy + qz*wz)/2",
    ]
    model = model_from_strings(
        state=q + v, T="1/2*(vx**2 + vy**2 + vz**2 + wx**2 + wy**2 + wz**2)", V="0", fric="0", kinematics=rates
    )
    assert [s.name for s in model.state] == q + v


MJCF = """<mujoco>
  <worldbody>
    <body name="{name}">
      <joint name="j" type="hinge" axis="0 1 0"{extra}/>
      <geom type="sphere" size="0.1" pos="0 0 -1" mass="1"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_mjcf_names_are_not_numbers_and_included_numbers_are_checked(tmp_path):
    pytest.importorskip("mujoco")
    (tmp_path / "named.xml").write_text(MJCF.format(name="nan", extra=""))
    assert sls.load_mjcf(tmp_path / "named.xml").n == 1  # a body named "nan" is a name
    (tmp_path / "body.xml").write_text(MJCF.format(name="b", extra=' armature="inf"'))
    (tmp_path / "main.xml").write_text('<mujoco><include file="body.xml"/></mujoco>')
    with pytest.raises(sls.ModelFileError, match=r"main\.xml: joint 'j': armature: 'inf' is not a finite number"):
        sls.load_mjcf(tmp_path / "main.xml")  # the included file's value, found in the compiled model


def test_mjcf_values_mujoco_computes_are_checked(tmp_path):
    pytest.importorskip("mujoco")
    text = MJCF.format(name="b", extra="").replace('mass="1"', 'density="1e20"')
    (tmp_path / "dense.xml").write_text(text)
    with pytest.raises(sls.ModelFileError, match=r"body 'b': mass: '[0-9.e+]+' is too large"):
        sls.load_mjcf(tmp_path / "dense.xml")


def test_an_mjcf_dtd_is_never_expanded_by_python_and_its_numbers_are_still_checked(tmp_path):
    """Python's XML parser would expand the entities of a DTD (a billion laughs): the scan leaves such a file to
    MuJoCo (which does not expand them) and the compiled values are checked."""
    pytest.importorskip("mujoco")
    levels = "".join(f'<!ENTITY l{k} "{f"&l{k - 1};" * 10}">' for k in range(1, 10))
    dtd = f'<?xml version="1.0"?>\n<!DOCTYPE m [<!ENTITY l0 "lol">{levels}]>\n'
    (tmp_path / "laughs.xml").write_text(dtd + MJCF.format(name="b", extra=' armature="nan"'))
    with pytest.raises(sls.ModelFileError, match=r"joint 'j': armature: 'nan' is not a finite number"):
        sls.load_mjcf(tmp_path / "laughs.xml")
