"""Transform terms, and their binding to a schema."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from icectl.errors import UsageError
from icectl.expr.schema import parse_schema
from icectl.expr.term import Bound, Term, bind, parse_term, term_text

SCHEMA = parse_schema("id:long!, ts:timestamptz, name:string, info:struct<zip:string, n:int>, tags:list<string>")


@pytest.mark.parametrize("text, transform, column", [
    ("id", "identity", "id"), ("identity(id)", "identity", "id"), ("bucket(16, id)", "bucket[16]", "id"),
    ("bucket(id, 16)", "bucket[16]", "id"), ("buckets(4,id)", "bucket[4]", "id"),
    ("truncate(4, name)", "truncate[4]", "name"),
    ("trunc(4, name)", "truncate[4]", "name"), ("days(ts)", "day", "ts"), ("date(ts)", "day", "ts"),
    ("YEAR(ts)", "year", "ts"), ("hours(ts)", "hour", "ts"), ("void(id)", "void", "id"),
    ("info.zip", "identity", "info.zip"), ("`a b`", "identity", "a b"), ("bucket(8, `a.b`.c)", "bucket[8]", "a.b.c")])
def test_terms(text, transform, column):
    assert parse_term(text, "t") == Term(transform, (column,), text)


@pytest.mark.parametrize("bad, why", [("", "empty term"), ("bucket(id)", "takes a width and a column"),
                                      ("bucket(0, id)", "must be positive"), ("foo(id)", "unknown transform 'foo'"),
                                      ("day(ts, id)", "takes one column, not 2"),
                                      ("id sideways", "not one column name"),
                                      ("bucket(4, )", "empty argument")])
def test_refused(bad, why):
    with pytest.raises(UsageError, match=why):
        parse_term(bad, "--partition-by")


def test_bind():
    assert bind(parse_term("bucket(16, id)", "t"), SCHEMA, "t") == Bound(1, "bucket[16]", "id")
    assert bind(parse_term("INFO.Zip", "t"), SCHEMA, "t") == Bound(6, "identity", "info.zip")  # any case
    for text, why in (("nope", "there is no column 'nope' \\(it is not in the schema\\)"),
                      ("info", "not a primitive type"), ("tags.element", "inside a list or map"),
                      ("day(name)", "day does not apply to name of type string")):
        with pytest.raises(UsageError, match=why):
            bind(parse_term(text, "t"), SCHEMA, "t")


TRANSFORMS = ["identity", "bucket[1]", "bucket[16]", "truncate[4]", "year", "month", "day", "hour", "void"]
columns = st.lists(st.from_regex(r"[A-Za-z_][A-Za-z0-9_ .`]{0,5}", fullmatch=True).filter(
    lambda s: s.strip() == s and s and "`" not in s and "." not in s), min_size=1, max_size=3).map(".".join)


@given(st.sampled_from(TRANSFORMS), columns)
def test_round_trip(transform, column):
    t = parse_term(term_text(transform, column), "t")
    assert (t.transform, t.columns) == (transform, (column,))
    assert term_text(t.transform, t.columns[0]) == t.text
