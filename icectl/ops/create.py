"""Creating a table: the compact schema form, partition and sort expressions, and the first
metadata of each format version.

Compact schema: ``id:long!, name:string, ts:timestamptz`` (``!`` marks a required field),
nested types as ``struct<a:int, b:string>``, ``list<string>``, ``map<string, long>``.
Field ids are assigned as Iceberg Java assigns fresh ids: a struct's fields first, then their
children, depth by depth.
"""
from __future__ import annotations

import json
import os
import re
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from icectl.spec.metadata import MAX_FORMAT_VERSION, TableMetadata
from icectl.spec.partitioning import (
    PARTITION_DATA_ID_START,
    UNSORTED,
    PartitionField,
    PartitionSpec,
    SortField,
    SortOrder,
)
from icectl.spec.types import (
    IcebergType,
    ListType,
    MapType,
    NestedField,
    PrimitiveType,
    Schema,
    StructType,
    primitive,
    schema_from_json,
)
from icectl.errors import (AlreadyExistsError, IcectlError, InvalidMetadataError, NoSuchTableError, UnsupportedError,
                           UsageError)
from icectl.io import has_scheme
from icectl.table.builder import apply_updates
from icectl.table.identifier import Identifier, ident_str
from icectl.table.loaded import Table
from icectl.table.requirements import AssertCreate, TableRequirement
from icectl.table.transaction import Transaction
from icectl.table.updates import (
    LAST_ADDED,
    AddSchema,
    AddSortOrder,
    AddSpec,
    AssignUUID,
    SetCurrentSchema,
    SetDefaultSortOrder,
    SetDefaultSpec,
    SetLocation,
    SetProperties,
    TableUpdate,
    UpgradeFormatVersion,
    updates_json,
)

if TYPE_CHECKING:
    from icectl.catalog.base import Catalog


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split on ``sep`` outside of (), [] and <>."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([<":
            depth += 1
        elif ch in ")]>":
            depth -= 1
            if depth < 0:
                raise UsageError(f"unbalanced brackets in {text!r}")
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise UsageError(f"unbalanced brackets in {text!r}")
    parts.append("".join(cur))
    return [p.strip() for p in parts]


# -- compact schema ------------------------------------------------------------------------------

@dataclass
class _Draft:
    """A type before ids are assigned."""

    kind: str
    prim: PrimitiveType | None = None
    fields: list[tuple[str, "_Draft", bool]] | None = None
    element: "_Draft | None" = None
    key: "_Draft | None" = None
    value: "_Draft | None" = None


_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _parse_type(text: str) -> _Draft:
    t = text.strip()
    low = t.lower()
    if low.startswith("struct<") and t.endswith(">"):
        return _Draft("struct", fields=_parse_fields(t[7:-1]))
    if low.startswith(("list<", "array<")) and t.endswith(">"):  # array<...>: Spark's spelling
        return _Draft("list", element=_parse_type(t[t.index("<") + 1:-1]))
    if low.startswith("map<") and t.endswith(">"):
        kv = split_top_level(t[4:-1])
        if len(kv) != 2:
            raise UsageError(f"map type needs a key and a value type: {text!r}")
        return _Draft("map", key=_parse_type(kv[0]), value=_parse_type(kv[1]))
    aliases = {"bigint": "long", "integer": "int", "bool": "boolean", "text": "string", "varchar": "string",
               "real": "float", "timestamp_tz": "timestamptz", "timestamp_ltz": "timestamptz", "bytes": "binary"}
    try:
        return _Draft("primitive", prim=primitive(aliases.get(low, t)))
    except InvalidMetadataError as e:
        if not e.message.startswith("unknown type"):  # e.g. decimal(39,2): say what is wrong with it
            raise UsageError(e.message) from None
        raise UsageError(f"unknown type {t!r}", hint="types: boolean int long float double decimal(P,S) date time "
                         "timestamp timestamptz timestamp_ns timestamptz_ns string uuid fixed[L] binary "
                         "unknown variant geometry geography struct<...> list<...> map<...>") from None


def _parse_fields(text: str) -> list[tuple[str, _Draft, bool]]:
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
        out.append((name, _parse_type(type_text), required))
    return out


def parse_compact_schema(text: str) -> Schema:
    if not text or not text.strip():
        raise UsageError("the schema is empty")
    drafts = _parse_fields(text)
    counter = [0]

    def next_id() -> int:
        counter[0] += 1
        return counter[0]

    def build_struct(fields: list[tuple[str, _Draft, bool]]) -> tuple[NestedField, ...]:
        ids = [next_id() for _ in fields]
        return tuple(NestedField(fid, name, build(d), required) for fid, (name, d, required) in zip(ids, fields))

    def build(d: _Draft) -> IcebergType:
        if d.kind == "primitive":
            assert d.prim is not None
            return d.prim
        if d.kind == "struct":
            return StructType(build_struct(d.fields or []))
        if d.kind == "list":
            eid = next_id()
            return ListType(eid, build(d.element), False)  # type: ignore[arg-type]
        kid, vid = next_id(), next_id()
        return MapType(kid, build(d.key), vid, build(d.value), False)  # type: ignore[arg-type]

    return Schema(build_struct(drafts), schema_id=0)


def load_schema_argument(text: str) -> Schema:
    """A compact schema string, or the path of an Iceberg schema JSON file (``@file`` or a .json)."""
    path = text[1:] if text.startswith("@") else text
    if text.startswith("@") or path.endswith(".json"):
        try:
            with open(path) as f:
                obj = json.load(f)
        except FileNotFoundError:
            raise UsageError(f"schema file not found: {path}") from None
        except ValueError as e:
            raise UsageError(f"{path}: malformed JSON: {e}") from None
        try:
            schema = schema_from_json(obj)
        except InvalidMetadataError as e:
            raise UsageError(f"{path}: {e.message}") from None
        return Schema(schema.fields, 0, schema.identifier_field_ids, schema.extra)
    return parse_compact_schema(text)


# -- partition and sort expressions ----------------------------------------------------------------

_CALL = re.compile(r"^([A-Za-z_]+)\s*\((.*)\)$")
_TRANSFORM_ALIASES = {"years": "year", "months": "month", "days": "day", "hours": "hour", "date": "day",
                      "trunc": "truncate", "buckets": "bucket"}
_SUFFIX = {"year": "year", "month": "month", "day": "day", "hour": "hour", "bucket": "bucket",
           "truncate": "trunc", "void": "null"}


def _parse_term(term: str, schema: Schema) -> tuple[str, NestedField]:
    """``col``, ``day(col)``, ``bucket(16, col)`` or ``truncate(4, col)``: (transform, source field)."""
    term = term.strip()
    m = _CALL.match(term)
    if m:
        fn = _TRANSFORM_ALIASES.get(m.group(1).lower(), m.group(1).lower())
        args = split_top_level(m.group(2))
        if fn in ("bucket", "truncate"):
            if len(args) != 2:
                raise UsageError(f"{fn} takes a width and a column: {fn}(16, id), not {term!r}")
            width, col = args
            if col.isdigit() and not width.isdigit():
                width, col = col, width  # Spark's bucket(col, 16) order also reads
            if not width.isdigit() or int(width) <= 0:
                raise UsageError(f"{fn} width must be a positive integer in {term!r}")
            transform = f"{fn}[{int(width)}]"
        elif fn in ("identity", "year", "month", "day", "hour", "void"):
            if len(args) != 1:
                raise UsageError(f"{fn} takes one column: {fn}(col), not {term!r}")
            col, transform = args[0], fn
        else:
            raise UsageError(f"unknown transform {m.group(1)!r} in {term!r}",
                             hint="transforms: identity, bucket(N, col), truncate(W, col), year, month, day, hour, void")
    else:
        col, transform = term, "identity"
    field = schema.field_by_name(col.strip())
    if field is None:
        raise UsageError(f"column {col.strip()!r} in {term!r} is not in the schema")
    if not isinstance(field.field_type, PrimitiveType):
        raise UsageError(f"column {col.strip()!r} is {field.field_type}, not a primitive type: it cannot be "
                         f"partitioned or sorted on")
    from icectl.spec.transforms import parse_transform

    if not parse_transform(transform).can_transform(field.field_type):
        raise UsageError(f"{transform} cannot be applied to {col.strip()!r} of type {field.field_type}")
    return transform, field


def parse_partition_spec(text: str | None, schema: Schema, *, spec_id: int = 0,
                         next_field_id: int = PARTITION_DATA_ID_START) -> PartitionSpec:
    if not text or not text.strip():
        return PartitionSpec(spec_id, ())
    fields: list[PartitionField] = []
    names: set[str] = set()
    for i, term in enumerate(split_top_level(text)):
        if not term:
            raise UsageError(f"empty term in partition expression {text!r}")
        transform, source = _parse_term(term, schema)
        base = transform.split("[")[0]
        name = source.name.split(".")[-1] if base == "identity" else f"{schema.column_name(source.field_id)}_{_SUFFIX[base]}"
        name = name.replace(".", "_") if base != "identity" else schema.column_name(source.field_id) or name
        if name in names:
            raise UsageError(f"partition field {name!r} appears twice in {text!r}")
        names.add(name)
        fields.append(PartitionField(source.field_id, next_field_id + i, name, transform))
    return PartitionSpec(spec_id, tuple(fields))


def parse_sort_order(text: str | None, schema: Schema, *, order_id: int = 1) -> SortOrder:
    if not text or not text.strip():
        return UNSORTED
    fields = []
    for term in split_top_level(text):
        words = term.split()
        if not words:
            raise UsageError(f"empty term in sort expression {text!r}")
        # The column or transform call may contain spaces: take modifiers from the end.
        direction, null_order = "asc", None
        rest = term.strip()
        low = rest.lower()
        for suffix, nulls in ((" nulls first", "nulls-first"), (" nulls last", "nulls-last")):
            if low.endswith(suffix):
                null_order = nulls
                rest = rest[: -len(suffix)].strip()
                low = rest.lower()
        for suffix, d in ((" asc", "asc"), (" desc", "desc")):
            if low.endswith(suffix):
                direction = d
                rest = rest[: -len(suffix)].strip()
                low = rest.lower()
        if null_order is None:
            null_order = "nulls-first" if direction == "asc" else "nulls-last"
        transform, source = _parse_term(rest, schema)
        fields.append(SortField(source.field_id, transform, direction, null_order))
    return SortOrder(order_id, tuple(fields))


def parse_properties(pairs: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for p in pairs or []:
        if "=" not in p:
            raise UsageError(f"property {p!r} must be KEY=VALUE")
        k, _, v = p.partition("=")
        if not k.strip():
            raise UsageError(f"property {p!r} has an empty key")
        out[k.strip()] = v
    return out


# -- the first metadata ------------------------------------------------------------------------------

def create_updates(*, schema: Schema, spec: PartitionSpec, sort_order: SortOrder, location: str | None,
                   properties: dict[str, str], format_version: int) -> list[TableUpdate]:
    """The updates that create a table, in the order Iceberg Java's ``newTableMetadata`` records
    them (a REST create transaction sends these after ``assert-create``)."""
    if format_version not in range(1, MAX_FORMAT_VERSION + 1):
        raise UsageError(f"format version must be 1 to {MAX_FORMAT_VERSION}, not {format_version}")
    if location is None and format_version < 4:
        raise IcectlError("a table location is required")
    updates: list[TableUpdate] = [
        AssignUUID(str(uuid.uuid4())),
        UpgradeFormatVersion(format_version),
        AddSchema(schema, schema.highest_field_id),
        SetCurrentSchema(LAST_ADDED),
        AddSpec(spec),
        SetDefaultSpec(LAST_ADDED),
        AddSortOrder(sort_order),
        SetDefaultSortOrder(LAST_ADDED),
    ]
    if location is not None:
        updates.append(SetLocation(location.rstrip("/")))
    if properties:
        updates.append(SetProperties(dict(properties)))
    return updates


@dataclass
class CreatePlan:
    """What ``create`` would write: the updates, and the first metadata they give."""

    identifier: Identifier
    location: str | None  # the table location (None only for a v4 table without one)
    updates: list[TableUpdate]
    metadata: TableMetadata
    requirements: list[TableRequirement] = field(default_factory=lambda: [AssertCreate()])

    def commit_json(self) -> dict[str, list]:
        return {"requirements": [r.to_json() for r in self.requirements],
                "updates": updates_json(self.updates, self.metadata.format_version)}


def check_create_arguments(*, schema_text: str, partition_by: str | None = None, sort_by: str | None = None,
                           properties: list[str] | dict[str, str] | None = None, format_version: int = 2) -> None:
    """Raise what :func:`plan_create` would raise for bad arguments, without a catalog, so a
    create that fails on its arguments opens (and so creates) no catalog database or folder."""
    _plan(None, ("unchecked", "table"), schema_text=schema_text, partition_by=partition_by, sort_by=sort_by,
          properties=properties, format_version=format_version, location="unchecked://location")


def existing_metadata_location(catalog: Catalog, ident: Identifier) -> str | None:
    """The current metadata file of table ``ident`` in ``catalog``; None when there is no such
    table (before creating or registering one)."""
    try:
        return catalog.load_metadata_location(ident)
    except NoSuchTableError:
        return None


def plan_create(catalog: Catalog, ident: Identifier, *, schema_text: str, partition_by: str | None = None,
                sort_by: str | None = None, properties: list[str] | dict[str, str] | None = None,
                format_version: int = 2, location: str | None = None, created_ms: int | None = None) -> CreatePlan:
    """Check the arguments and the catalog and build the first metadata, writing nothing: neither
    the catalog database nor the table folder is created (a SQLite catalog is created by its first
    write, and a missing one holds no table). ``created_ms``: the first ``last-updated-ms``."""
    if catalog.read_only:
        raise UsageError("cannot create a table through a path: configure a catalog")
    check_create_arguments(schema_text=schema_text, partition_by=partition_by, sort_by=sort_by,
                           properties=properties, format_version=format_version)
    if location is not None and not has_scheme(location):
        location = os.path.abspath(os.path.expanduser(location))
    table_location = (location or catalog.default_table_location(ident)).rstrip("/")
    if format_version >= 4 and not catalog.supports_v4:
        raise UnsupportedError(f"a {catalog.kind} catalog cannot hold a format version 4 table (v4 requires a "
                               "metastore catalog)", hint="create it in a SQL catalog (e.g. --uri sqlite:///catalog.db); "
                               "an existing table moves to one with icectl register")
    if existing_metadata_location(catalog, ident) is not None:
        raise AlreadyExistsError(f"table {ident_str(ident)} already exists in catalog {catalog.name}")
    return _plan(catalog, ident, schema_text=schema_text, partition_by=partition_by, sort_by=sort_by,
                 properties=properties, format_version=format_version, location=table_location, created_ms=created_ms)


def _plan(catalog: Catalog | None, ident: Identifier, *, schema_text: str, partition_by: str | None,
          sort_by: str | None, properties: list[str] | dict[str, str] | None, format_version: int,
          location: str | None, created_ms: int | None = None) -> CreatePlan:
    schema = load_schema_argument(schema_text)
    spec = parse_partition_spec(partition_by, schema)
    order = parse_sort_order(sort_by, schema)
    props = properties if isinstance(properties, dict) else parse_properties(properties)
    updates = create_updates(schema=schema, spec=spec, sort_order=order, location=location, properties=props,
                             format_version=format_version)
    md = apply_updates(None, updates, now_ms=created_ms)
    return CreatePlan(ident, md.location, updates, md)


def apply_create(catalog: Catalog, plan: CreatePlan, *, now_ms: int | None = None) -> Table:
    """Commit the planned updates with ``assert-create`` (the catalog checks again that the name
    is free: a create that raced with another fails with AlreadyExistsError)."""
    txn = Transaction.create(catalog, plan.identifier, now_ms=now_ms).stage(plan.updates).require(plan.requirements)
    return txn.commit().table


def create_table(catalog: Catalog, ident: Identifier, *, schema_text: str, partition_by: str | None = None,
                 sort_by: str | None = None, properties: list[str] | dict[str, str] | None = None,
                 format_version: int = 2, location: str | None = None, created_ms: int | None = None) -> Table:
    """Create a table from the compact schema form (or a schema JSON file) and expressions;
    ``created_ms`` is its first ``last-updated-ms`` (default: now)."""
    plan = plan_create(catalog, ident, schema_text=schema_text, partition_by=partition_by, sort_by=sort_by,
                       properties=properties, format_version=format_version, location=location, created_ms=created_ms)
    return apply_create(catalog, plan, now_ms=created_ms)
