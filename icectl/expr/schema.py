"""The compact schema: ``id:long!, name:string, ts:timestamptz`` (``!`` marks a required field),
nested types as ``struct<a:int, b:string>``, ``list<string>`` (or Spark's ``array<string>``),
``map<string, long>``; list elements and map values are optional.

Field ids are assigned as Iceberg Java assigns fresh ids: a struct's fields first, then their
children, depth by depth.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from icectl.errors import InvalidMetadataError, UsageError
from icectl.expr.lexer import split_top_level
from icectl.spec.types import IcebergType, ListType, MapType, NestedField, PrimitiveType, Schema, StructType, primitive

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ALIASES = {"bigint": "long", "integer": "int", "bool": "boolean", "text": "string", "varchar": "string",
            "real": "float", "timestamp_tz": "timestamptz", "timestamp_ltz": "timestamptz", "bytes": "binary"}
TYPES_HINT = ("types: boolean int long float double decimal(P,S) date time timestamp timestamptz timestamp_ns "
              "timestamptz_ns string uuid fixed[L] binary unknown variant geometry geography struct<...> list<...> "
              "map<...>")


@dataclass
class _Draft:
    """A type before ids are assigned."""

    kind: str
    prim: PrimitiveType | None = None
    fields: list[tuple[str, "_Draft", bool]] | None = None
    element: "_Draft | None" = None
    key: "_Draft | None" = None
    value: "_Draft | None" = None


def _draft_type(text: str) -> _Draft:
    t = text.strip()
    low = t.lower()
    if low.startswith("struct<") and t.endswith(">"):
        return _Draft("struct", fields=_draft_fields(t[7:-1]))
    if low.startswith(("list<", "array<")) and t.endswith(">"):  # array<...>: Spark's spelling
        return _Draft("list", element=_draft_type(t[t.index("<") + 1:-1]))
    if low.startswith("map<") and t.endswith(">"):
        kv = split_top_level(t[4:-1])
        if len(kv) != 2:
            raise UsageError(f"map type needs a key and a value type: {text!r}")
        return _Draft("map", key=_draft_type(kv[0]), value=_draft_type(kv[1]))
    try:
        return _Draft("primitive", prim=primitive(_ALIASES.get(low, t)))
    except InvalidMetadataError as e:
        if not e.message.startswith("unknown type"):  # e.g. decimal(39,2): say what is wrong with it
            raise UsageError(e.message) from None
        raise UsageError(f"unknown type {t!r}", hint=TYPES_HINT) from None


def _draft_fields(text: str) -> list[tuple[str, _Draft, bool]]:
    out = []
    seen = set()
    for part in split_top_level(text):
        if not part:
            raise UsageError(f"empty field in schema {text!r}")
        if ":" not in part:
            raise UsageError(f"field {part!r} needs a type: NAME:TYPE, e.g. id:long")
        name, _, type_text = part.partition(":")
        name = name.strip()
        if not _NAME.match(name):
            raise UsageError(f"invalid field name {name!r}")
        if name.lower() in seen:
            raise UsageError(f"duplicate field name {name!r}")
        seen.add(name.lower())
        type_text = type_text.strip()
        required = type_text.endswith("!")
        if required:
            type_text = type_text[:-1]
        if not type_text:
            raise UsageError(f"field {name!r} needs a type")
        out.append((name, _draft_type(type_text), required))
    return out


class _FreshIds:
    """Java's fresh-id order: a struct's fields take ids before their children."""

    def __init__(self, last: int = 0):
        self.last = last

    def next(self) -> int:
        self.last += 1
        return self.last

    def struct(self, fields: list[tuple[str, _Draft, bool]]) -> tuple[NestedField, ...]:
        ids = [self.next() for _ in fields]
        return tuple(NestedField(fid, name, self.build(d), required) for fid, (name, d, required) in zip(ids, fields))

    def build(self, d: _Draft) -> IcebergType:
        if d.kind == "primitive":
            assert d.prim is not None
            return d.prim
        if d.kind == "struct":
            return StructType(self.struct(d.fields or []))
        if d.kind == "list":
            assert d.element is not None
            return ListType(self.next(), self.build(d.element), False)
        assert d.key is not None and d.value is not None
        kid, vid = self.next(), self.next()
        return MapType(kid, self.build(d.key), vid, self.build(d.value), False)


def parse_schema(text: str) -> Schema:
    """A compact schema (schema id 0, field ids from 1)."""
    if not text or not text.strip():
        raise UsageError("the schema is empty")
    return Schema(_FreshIds().struct(_draft_fields(text)), schema_id=0)


def parse_type(text: str, what: str) -> IcebergType:
    """One type of the compact form, its nested ids from 1 in Java's fresh-id order (the column
    itself would be 0): ``struct<a: int, b: list<string>>`` -> a=1, b=2, b.element=3."""
    try:
        if not text or not text.strip():
            raise UsageError("the type is empty")
        return _FreshIds().build(_draft_type(text))
    except UsageError as e:
        hint = e.hint
        if " " in text.split("<")[0].split("(")[0].strip():
            hint = "after the type come NOT NULL, DEFAULT v, COMMENT 'doc', FIRST, AFTER col or BEFORE col"
        raise UsageError(f"{what}: {e.message}", hint=hint) from None


def type_text(t: IcebergType) -> str:
    """``t`` in the compact form (list elements and map values are optional there)."""
    if isinstance(t, StructType):
        return f"struct<{fields_text(t.fields)}>"
    if isinstance(t, ListType):
        return f"list<{type_text(t.element_type)}>"
    if isinstance(t, MapType):
        return f"map<{type_text(t.key_type)}, {type_text(t.value_type)}>"
    return str(t)


def fields_text(fields: tuple[NestedField, ...]) -> str:
    return ", ".join(f"{f.name}:{type_text(f.field_type)}{'!' if f.required else ''}" for f in fields)


def schema_text(schema: Schema) -> str:
    """``schema`` in the compact form: :func:`parse_schema` reads it back to the same fields when
    the ids are in fresh-id order and every list element and map value is optional."""
    return fields_text(schema.fields)
