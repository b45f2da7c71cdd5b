"""Names (sls/model/names.py): the closest valid name to a misspelt one, as model files' messages use it."""

from __future__ import annotations

import pytest

import sls
from sls.model import closest, did_you_mean, unknown_key
from sls.readers import model_from_strings


def test_closest_prefers_a_case_difference_then_difflib():
    assert closest("t", ["T", "V", "state"]) == "T"
    assert closest("fricc", ["state", "fric", "forces"]) == "fric"
    assert closest("constraint", ["constraints", "velocity_constraints"]) == "constraints"
    assert closest("zzz", ["state", "fric"]) is None
    assert closest(3, ["state"]) is None and closest("", ["state"]) is None


def test_messages():
    assert did_you_mean("fricc", ["fric"]) == "; did you mean 'fric'?"
    assert did_you_mean("zzz", ["fric"]) == ""
    assert unknown_key("fricc", ["state", "fric"]) == "unknown key 'fricc'; did you mean 'fric'?"
    assert unknown_key("zzz", ["state", "fric"]) == "unknown key 'zzz' (allowed: state, fric)"
    assert unknown_key("urdff", ["state"], suggest=["urdf"]) == "unknown key 'urdff'; did you mean 'urdf'?"


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({"ranges": {"dthh": [0, 1]}}, "ranges: 'dthh' is not a state variable; did you mean 'dth'?"),
        ({"inputs": ["F"], "loads": [{"angle": "th", "torq": "F"}]}, "loads[0]: unknown key 'torq'; did you mean"),
    ],
)
def test_model_checks_suggest_the_closest_name(extra, expected):
    with pytest.raises(sls.ModelError) as info:
        model_from_strings(state=["th", "dth"], T="dth^2", V="0", fric="0", **extra)
    assert expected in str(info.value)
