"""Partition specs and sort orders: one grammar each, an unbound form, a bind step, a printer."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from icectl.errors import UsageError
from icectl.expr.partition import (PartitionTerm, bind_partition_spec, parse_partition_spec, partition_spec,
                                   partition_spec_text)
from icectl.expr.schema import parse_schema
from icectl.expr.sort import SortTerm, bind_sort_order, parse_sort_order, sort_order, sort_order_text
from icectl.expr.term import Term
from icectl.spec.partitioning import UNSORTED, PartitionField, PartitionSpec, SortField, SortOrder
from icectl.spec.transforms import parse_transform

SCHEMA = parse_schema("id:long!, ts:timestamptz, name:string, info:struct<zip:string, n:int>, d:date, "
                      "price:decimal(10, 2)")


def test_partition_spec():
    assert parse_partition_spec("day(ts), bucket(16, id) AS shard") == [
        PartitionTerm(Term("day", ("ts",), "day(ts)"), None),
        PartitionTerm(Term("bucket[16]", ("id",), "bucket(16, id)"), "shard")]
    assert partition_spec("day(ts), bucket(16, id), info.zip, truncate(2, name), void(d)", SCHEMA) == PartitionSpec(
        0, (PartitionField(2, 1000, "ts_day", "day"), PartitionField(1, 1001, "id_bucket", "bucket[16]"),
            PartitionField(7, 1002, "info.zip", "identity"), PartitionField(3, 1003, "name_trunc", "truncate[2]"),
            PartitionField(5, 1004, "d_null", "void")))
    assert partition_spec(None, SCHEMA) == partition_spec("  ", SCHEMA) == PartitionSpec(0, ())
    assert partition_spec("id", SCHEMA, spec_id=3, next_field_id=1007).fields == (
        PartitionField(1, 1007, "id", "identity"),)


@pytest.mark.parametrize("bad, why", [("id,", "empty term"), ("year(ts), year(ts)", "'ts_year' appears twice"),
                                      ("day(id)", "does not apply"), ("nope", "not in the schema")])
def test_partition_spec_refused(bad, why):
    with pytest.raises(UsageError, match=why):
        partition_spec(bad, SCHEMA)


def test_sort_order():
    terms = parse_sort_order("id desc nulls last, day(ts), name DESC, truncate(2, name) asc nulls last")
    assert terms == [SortTerm(Term("identity", ("id",), "id"), "desc", "nulls-last"),
                     SortTerm(Term("day", ("ts",), "day(ts)"), "asc", "nulls-first"),
                     SortTerm(Term("identity", ("name",), "name"), "desc", "nulls-last"),
                     SortTerm(Term("truncate[2]", ("name",), "truncate(2, name)"), "asc", "nulls-last")]
    assert bind_sort_order(terms, SCHEMA) == SortOrder(1, (
        SortField(1, "identity", "desc", "nulls-last"), SortField(2, "day", "asc", "nulls-first"),
        SortField(3, "identity", "desc", "nulls-last"), SortField(3, "truncate[2]", "asc", "nulls-last")))
    assert sort_order(None, SCHEMA) == sort_order("", SCHEMA) == bind_sort_order([], SCHEMA) == UNSORTED


@pytest.mark.parametrize("bad, why", [("id sideways", "not one column name"), ("nope desc", "there is no column"),
                                      (",", "empty term"), ("id desc,", "empty term"), ("day(id)", "does not apply"),
                                      ("foo(id) asc", "unknown transform")])
def test_sort_order_refused(bad, why):
    with pytest.raises(UsageError, match=why):
        sort_order(bad, SCHEMA)


SOURCES = [(f, t) for f in SCHEMA.fields if f.name != "info" for t in
           ("identity", "bucket[16]", "truncate[4]", "year", "month", "day", "hour", "void")
           if parse_transform(t).can_transform(f.field_type)]
names = st.from_regex(r"[a-z][a-z0-9_]{0,6}|[a-z ]{1,5}", fullmatch=True)


@st.composite
def specs(draw):
    chosen = draw(st.lists(st.sampled_from(SOURCES), max_size=5, unique_by=lambda s: (s[0].field_id, s[1])))
    fields, seen = [], set()
    for i, (f, t) in enumerate(chosen):
        name = draw(st.one_of(st.none(), names))
        if name is None:
            name = next(iter(partition_spec(f"{t.split('[')[0]}({f.name})" if t != "identity" else f.name,
                                             SCHEMA).fields)).name if "[" not in t else \
                f"{f.name}_{'bucket' if t.startswith('bucket') else 'trunc'}"
        if name in seen:
            continue
        seen.add(name)
        fields.append(PartitionField(f.field_id, 1000 + len(fields), name, t))
    return PartitionSpec(0, tuple(fields))


@given(specs())
def test_partition_spec_round_trip(spec):
    assert partition_spec(partition_spec_text(spec, SCHEMA), SCHEMA) == spec


@given(st.lists(st.tuples(st.sampled_from(SOURCES), st.sampled_from(["asc", "desc"]),
                          st.sampled_from(["nulls-first", "nulls-last"])), min_size=1, max_size=4))
def test_sort_order_round_trip(fields):
    order = SortOrder(1, tuple(SortField(f.field_id, t, d, n) for (f, t), d, n in fields))
    text = sort_order_text(order, SCHEMA)
    assert sort_order(text, SCHEMA) == order
    assert sort_order_text(sort_order(text, SCHEMA), SCHEMA) == text
