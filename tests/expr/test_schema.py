"""The compact schema."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from icectl.errors import UsageError
from icectl.expr.schema import parse_schema, parse_type, schema_text, type_text
from icectl.spec.types import ListType, MapType, NestedField, PrimitiveType, Schema, StructType


def test_fresh_ids_in_java_order():
    s = parse_schema("id:long!, s:struct<a:int, b:list<string>>, m:map<string, long>")
    assert s == Schema((
        NestedField(1, "id", PrimitiveType("long"), True),
        NestedField(2, "s", StructType((NestedField(4, "a", PrimitiveType("int"), False),
                                        NestedField(5, "b", ListType(6, PrimitiveType("string"), False), False))),
                    False),
        NestedField(3, "m", MapType(7, PrimitiveType("string"), 8, PrimitiveType("long"), False), False)), 0)


def test_aliases_and_type():
    assert parse_schema("a:bigint, b:array<text>, c:decimal(10, 2)").fields[1].field_type == \
        ListType(4, PrimitiveType("string"), False)
    assert parse_type("struct<a: int, b: list<string>>", "--add-column x") == StructType((
        NestedField(1, "a", PrimitiveType("int"), False),
        NestedField(2, "b", ListType(3, PrimitiveType("string"), False), False)))


@pytest.mark.parametrize("bad, why", [("", "the schema is empty"), ("id", "needs a type"), ("id:lng", "unknown type"),
                                      ("a:int, a:long", "duplicate field name"), ("1x:int", "invalid field name"),
                                      ("m:map<string>", "needs a key and a value"), ("a:list<int", "unbalanced"),
                                      ("a:int,", "empty field")])
def test_refused(bad, why):
    with pytest.raises(UsageError, match=why):
        parse_schema(bad)


def test_type_refused_with_the_option():
    with pytest.raises(UsageError, match="^--set-type x: unknown type 'lng'$"):
        parse_type("lng", "--set-type x")


PRIMITIVES = ["boolean", "int", "long", "float", "double", "decimal(10, 2)", "date", "time", "timestamp",
              "timestamptz", "timestamp_ns", "timestamptz_ns", "string", "uuid", "fixed[16]", "binary"]
names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True)


def _types(depth: int) -> st.SearchStrategy[str]:
    prim = st.sampled_from(PRIMITIVES)
    if depth == 0:
        return prim
    inner = _types(depth - 1)
    return st.one_of(prim, inner.map(lambda t: f"list<{t}>"),
                     st.tuples(prim, inner).map(lambda kv: f"map<{kv[0]}, {kv[1]}>"),
                     _fields(depth - 1).map(lambda f: f"struct<{f}>"))


def _fields(depth: int) -> st.SearchStrategy[str]:
    field = st.tuples(names, _types(depth), st.booleans()).map(lambda f: f"{f[0]}:{f[1]}{'!' if f[2] else ''}")
    return st.lists(st.tuples(names, field), min_size=1, max_size=4, unique_by=lambda f: f[0].lower()).map(
        lambda fs: ", ".join(f"{n}{f[f.index(':'):]}" for n, f in fs))


@given(_fields(2))
def test_round_trip(text):
    schema = parse_schema(text)
    assert parse_schema(schema_text(schema)) == schema
    assert schema_text(parse_schema(schema_text(schema))) == schema_text(schema)
    for f in schema.fields:
        assert parse_type(type_text(f.field_type), "x") is not None
