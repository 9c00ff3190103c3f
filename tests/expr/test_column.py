"""The new-column and move grammars of alter (moved from tests/ops/test_alter.py with the parser)."""
from __future__ import annotations

import pytest

from icectl.errors import UsageError
from icectl.expr.column import Literal, NewColumn, parse_move, parse_new_column
from icectl.expr.partition import parse_partition_field
from icectl.expr.sort import parse_sort_order


def test_expressions_read_as_spark_ddl():
    c = parse_new_column("info.`zip code` decimal(10, 2) NOT NULL DEFAULT '1.50' COMMENT 'it''s' AFTER city")
    assert c == NewColumn("info", "zip code", "decimal(10, 2)", True, Literal("1.50", True), "it's",
                         ("after", "city"))
    assert parse_new_column("`a.b`:map<string, struct<x: int>>!").parent is None
    assert parse_new_column("`a.b`:map<string, struct<x: int>>!").name == "a.b"
    assert parse_new_column("n int default null").default is None
    term, name = parse_partition_field("bucket(id, 16) as `my shard`")
    assert (term.transform, term.columns, name) == ("bucket[16]", ("id",), "my shard")
    assert parse_partition_field("days(ts)")[0].transform == "day"
    sort = parse_sort_order("a, b DESC, truncate(2, c) asc nulls last, d desc nulls first")
    assert [(s.term.transform, s.direction, s.null_order) for s in sort] == [
        ("identity", "asc", "nulls-first"), ("identity", "desc", "nulls-last"), ("truncate[2]", "asc", "nulls-last"),
        ("identity", "desc", "nulls-first")]
    assert parse_move("`x y` before z") == ("x y", "before", "z")
    for bad, why in (("x int comment", "COMMENT needs a value"), ("x int default 'a", "unterminated")):
        with pytest.raises(UsageError, match=why):
            parse_new_column(bad)


