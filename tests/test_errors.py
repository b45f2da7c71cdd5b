"""The exception hierarchy (sls/errors.py): which built-in each error is, its exit code, one-line messages."""

from __future__ import annotations

import pytest

import sls
from sls import errors
from sls.errors import brief, one_line


def test_error_hierarchy():
    assert issubclass(sls.ModelError, ValueError)
    assert issubclass(sls.ModelFileError, sls.ModelError)
    assert issubclass(sls.ModelTypeError, TypeError)
    assert issubclass(sls.UsageError, ValueError)
    assert issubclass(sls.OutputError, ValueError)
    for cls in (sls.ModelError, sls.ModelTypeError, sls.UsageError, sls.OutputError, sls.ExpressionError):
        assert issubclass(cls, sls.SlsError)


def test_messages_are_one_line():
    assert str(sls.ModelError("a\nb\r\n  c")) == "a b c"


def test_every_error_class_is_exported_and_has_its_exit_code():
    classes = [
        errors.ExpressionError,
        errors.ModelError,
        errors.ModelFileError,
        errors.ModelTypeError,
        errors.UsageError,
        errors.OutputError,
        errors.ControlError,
        errors.MissingDependencyError,
    ]
    for cls in classes:
        assert getattr(sls, cls.__name__) is cls
        assert cls.exit_code == (2 if cls is errors.UsageError else 1), cls
    assert issubclass(errors.ControlError, ValueError) and issubclass(errors.MissingDependencyError, RuntimeError)
    assert not issubclass(errors.MissingDependencyError, ValueError)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("already one line", "already one line"),
        ("  spaces  inside stay  ", "  spaces  inside stay  "),
        ("first\nsecond", "first second"),
        ("  first  \n\n   second\r\nthird\n", "first second third"),
        ("", ""),
    ],
)
def test_one_line_folds_only_line_breaks(text, expected):
    assert one_line(text) == expected


def test_brief_is_one_line_and_at_most_the_limit():
    assert brief("a\n  b\tc") == "a b c"
    long = "x" * 500
    assert len(brief(long)) == 160 and brief(long).endswith("...")
    assert brief(long, limit=20) == "x" * 17 + "..."
    assert brief("x" * 20, limit=20) == "x" * 20
    assert brief(12345) == "12345"


def test_only_a_single_string_argument_is_folded():
    assert errors.ModelError("a", "b\nc").args == ("a", "b\nc")
    assert errors.ModelError(3).args == (3,)
