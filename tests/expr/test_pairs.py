"""KEY=VALUE pairs."""
from __future__ import annotations

import pytest

from icectl.errors import UsageError
from icectl.expr.pairs import parse_pair, parse_properties


def test_pairs():
    assert parse_properties(["a=1", " b = x=y ", "c=", "a=2"], "--property") == {"a": "2", "b": " x=y ", "c": ""}
    assert parse_properties(None) == {}
    assert parse_pair("old=new", "--rename-column", "OLD=NEW") == ("old", "new")


def test_refused():
    with pytest.raises(UsageError) as e:
        parse_properties(["novalue"], "--property")
    assert e.value.message == "--property 'novalue': expected KEY=VALUE; each --property must be KEY=VALUE"
    with pytest.raises(UsageError, match="nothing before '='"):
        parse_properties(["=v"], "--set")
    with pytest.raises(UsageError, match="each --set-type must be COLUMN=TYPE$"):
        parse_pair("qty", "--set-type", "COLUMN=TYPE, e.g. qty=long")
