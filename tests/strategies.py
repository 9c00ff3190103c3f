"""Hypothesis strategies shared by the engine tests: types, values, schemas, partition specs,
sort orders, whole table metadata of each format version, and manifest entries.

Import with ``from strategies import ...`` (tests/engine/conftest.py puts this folder on
``sys.path``). Everything generated is valid for the format version asked for, so a round
trip through JSON or Avro must give it back unchanged.

Values are in icectl's internal representation (see icectl/spec/conversions.py): dates as
days, times and timestamps as micro- or nanoseconds, decimals as ``Decimal``, uuids as
``uuid.UUID``. Dates and microsecond timestamps stay within years 1..9999 because fastavro
turns Avro ``date``/``timestamp-micros`` into ``datetime`` objects.
"""
from __future__ import annotations

import string as _string
from typing import Any

from hypothesis import strategies as st

from icectl.spec.conversions import decimal_from_unscaled, to_json
from icectl.formats.manifest import (
    DataFile,
    EntryStatus,
    FieldSummary,
    FileContent,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
)
from icectl.spec.metadata import (
    MetadataLogEntry,
    Snapshot,
    SnapshotLogEntry,
    SnapshotRef,
    StatisticsFile,
    TableMetadata,
)
from icectl.spec.partitioning import (
    PARTITION_DATA_ID_START,
    PartitionField,
    PartitionSpec,
    SortField,
    SortOrder,
)
from icectl.spec.transforms import parse_transform
from icectl.spec.types import (
    IcebergType,
    ListType,
    MapType,
    NestedField,
    PrimitiveType,
    Schema,
    StructType,
    primitive,
    walk_fields,
)

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
# datetime.date(1, 1, 1) .. date(9999, 12, 31) as days from 1970-01-01.
MIN_DAYS, MAX_DAYS = -719_162, 2_932_896
MIN_MICROS, MAX_MICROS = -62_135_596_800_000_000, 253_402_300_799_999_999
MICROS_PER_DAY = 86_400_000_000

SIMPLE_V1 = ("boolean", "int", "long", "float", "double", "date", "time", "timestamp", "timestamptz",
             "string", "uuid", "binary")
SIMPLE_V3 = ("timestamp_ns", "timestamptz_ns", "unknown", "variant", "geometry", "geometry(srid:4326)",
             "geography", "geography(OGC:CRS84, spherical)")

# Every primitive type the spec names, once, for exhaustive (non-random) tests.
ALL_PRIMITIVES = tuple(primitive(n) for n in SIMPLE_V1 + ("decimal(9, 2)", "decimal(38, 10)", "fixed[16]")
                       + SIMPLE_V3)

TRANSFORMS = ("identity", "bucket[16]", "bucket[3]", "truncate[4]", "truncate[10]", "year", "month", "day",
              "hour", "void")

names = st.text(alphabet=_string.ascii_lowercase + "_", min_size=1, max_size=8).filter(lambda s: s[0] != "_")
json_scalars = st.none() | st.booleans() | st.integers(LONG_MIN, LONG_MAX) | st.text(max_size=10) \
    | st.floats(allow_nan=False, allow_infinity=False)
json_values = st.recursive(json_scalars, lambda c: st.lists(c, max_size=3)
                           | st.dictionaries(st.text(max_size=5), c, max_size=3), max_leaves=6)
str_maps = st.dictionaries(st.text(max_size=12), st.text(max_size=20), max_size=4)


def extra_keys(known: set[str] | frozenset[str] = frozenset(), max_size: int = 2) -> st.SearchStrategy:
    """Keys a newer writer might add: ``x-...`` names that no version of the spec uses."""
    keys = st.text(alphabet=_string.ascii_lowercase + "-", min_size=1, max_size=10).map(lambda s: "x-" + s)
    return st.lists(st.tuples(keys.filter(lambda k: k not in known), json_values), max_size=max_size,
                    unique_by=lambda kv: kv[0]).map(tuple)


# -- types and values ------------------------------------------------------------------------------

def primitive_types(format_version: int = 4) -> st.SearchStrategy[PrimitiveType]:
    simple = SIMPLE_V1 + (SIMPLE_V3 if format_version >= 3 else ())
    decimals = st.integers(1, 38).flatmap(lambda p: st.integers(0, p).map(lambda s: f"decimal({p}, {s})"))
    fixed = st.integers(1, 32).map(lambda n: f"fixed[{n}]")
    return (st.sampled_from(simple) | decimals | fixed).map(primitive)


def values(t: PrimitiveType | str, *, for_avro: bool = True) -> st.SearchStrategy[Any]:
    """Non-null values of a primitive type in icectl's internal representation.

    ``for_avro`` keeps dates and microsecond timestamps within what fastavro converts.
    """
    t = primitive(t) if isinstance(t, str) else t
    b = t.base
    if b == "boolean":
        return st.booleans()
    if b == "int":
        return st.integers(INT_MIN, INT_MAX)
    if b == "long":
        return st.integers(LONG_MIN, LONG_MAX)
    if b == "float":
        return st.floats(width=32, allow_nan=False)
    if b == "double":
        return st.floats(allow_nan=False)
    if b == "date":
        return st.integers(MIN_DAYS, MAX_DAYS) if for_avro else st.integers(INT_MIN, INT_MAX)
    if b == "time":
        return st.integers(0, MICROS_PER_DAY - 1)
    if b in ("timestamp", "timestamptz"):
        return st.integers(MIN_MICROS, MAX_MICROS) if for_avro else st.integers(LONG_MIN, LONG_MAX)
    if b in ("timestamp_ns", "timestamptz_ns"):
        return st.integers(LONG_MIN, LONG_MAX)
    if b == "string":
        return st.text(max_size=20)
    if b == "uuid":
        return st.uuids()
    if b == "fixed":
        return st.binary(min_size=t.length, max_size=t.length)
    if b == "binary":
        return st.binary(max_size=20)
    if b == "decimal":
        bound = 10 ** t.precision - 1
        return st.integers(-bound, bound).map(lambda n: decimal_from_unscaled(n, t.scale))
    if b in ("geometry", "geography"):
        coord = st.floats(allow_nan=False, allow_infinity=False)
        return st.lists(coord, min_size=2, max_size=4).map(tuple)
    raise ValueError(f"no values for {t}")


def has_values(t: PrimitiveType) -> bool:
    return t.base not in ("variant", "unknown")


def json_default(t: IcebergType) -> st.SearchStrategy[Any]:
    """A JSON single value (Appendix D) usable as initial-default / write-default of a field."""
    if isinstance(t, PrimitiveType) and has_values(t) and t.base not in ("geometry", "geography"):
        return values(t, for_avro=False).map(lambda v: to_json(t, v))
    return st.none()


@st.composite
def _type_drafts(draw, format_version: int, depth: int) -> Any:
    """A type without field ids: a PrimitiveType or ('struct'|'list'|'map', ...)."""
    kinds = ["primitive"] * 4 + (["struct", "list", "map"] if depth > 0 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "primitive":
        return draw(primitive_types(format_version))
    if kind == "struct":
        return ("struct", draw(_field_drafts(format_version, depth - 1, min_size=1)))
    if kind == "list":
        return ("list", draw(_type_drafts(format_version, depth - 1)), draw(st.booleans()))
    key = draw(primitive_types(format_version).filter(lambda p: p.base not in ("unknown", "variant")))
    return ("map", key, draw(_type_drafts(format_version, depth - 1)), draw(st.booleans()))


def _field_drafts(format_version: int, depth: int, min_size: int = 1, max_size: int = 4) -> st.SearchStrategy:
    return st.lists(st.tuples(names, _type_drafts(format_version, depth), st.booleans()),
                    min_size=min_size, max_size=max_size, unique_by=lambda f: f[0])


class _Ids:
    def __init__(self, start: int = 1):
        self.next = start

    def __call__(self) -> int:
        n = self.next
        self.next += 1
        return n


@st.composite
def _build_fields(draw, drafts: list, ids: _Ids, format_version: int, with_extras: bool) -> tuple[NestedField, ...]:
    out = []
    for name, d, required in drafts:
        fid = ids()
        ftype = _build_type(draw, d, ids, format_version, with_extras)
        if isinstance(ftype, PrimitiveType) and ftype.base == "unknown":
            required = False  # "unknown" columns are always optional
        kw: dict[str, Any] = {}
        if format_version >= 3:
            if draw(st.booleans()):
                kw["has_initial_default"] = True
                kw["initial_default"] = draw(json_default(ftype))
            if draw(st.booleans()):
                kw["has_write_default"] = True
                kw["write_default"] = draw(json_default(ftype))
        doc = draw(st.none() | st.text(max_size=15))
        extra = draw(extra_keys()) if with_extras else ()
        out.append(NestedField(fid, name, ftype, required, doc, extra=extra, **kw))
    return tuple(out)


def _build_type(draw, d: Any, ids: _Ids, format_version: int, with_extras: bool) -> IcebergType:
    if isinstance(d, PrimitiveType):
        return d
    if d[0] == "struct":
        return StructType(draw(_build_fields(d[1], ids, format_version, with_extras)))
    if d[0] == "list":
        eid = ids()
        return ListType(eid, _build_type(draw, d[1], ids, format_version, with_extras), d[2])
    kid, vid = ids(), ids()
    return MapType(kid, d[1], vid, _build_type(draw, d[2], ids, format_version, with_extras), d[3])


@st.composite
def schemas(draw, format_version: int = 4, *, schema_id: int = 0, max_depth: int = 2, with_extras: bool = True,
            first_id: int = 1, min_fields: int = 1, max_fields: int = 6) -> Schema:
    drafts = draw(_field_drafts(format_version, max_depth, min_size=min_fields, max_size=max_fields))
    fields = draw(_build_fields(drafts, _Ids(first_id), format_version, with_extras))
    # Identifier fields: required top-level primitive columns (not float/double).
    candidates = [f.field_id for f in fields if f.required and isinstance(f.field_type, PrimitiveType)
                  and f.field_type.base not in ("float", "double", "unknown", "variant", "geometry", "geography")]
    ident = tuple(draw(st.lists(st.sampled_from(candidates), unique=True, max_size=2))) if candidates else ()
    extra = draw(extra_keys()) if with_extras else ()
    return Schema(fields, schema_id, ident, extra)


def primitive_columns(schema: Schema) -> list[NestedField]:
    return [f for _, f in walk_fields(schema.fields) if isinstance(f.field_type, PrimitiveType)]


# -- partition specs and sort orders ---------------------------------------------------------------

def _applicable(schema: Schema, transforms: tuple[str, ...] = TRANSFORMS) -> list[tuple[NestedField, str]]:
    out = []
    for f in primitive_columns(schema):
        for tr in transforms:
            if parse_transform(tr).can_transform(f.field_type):
                out.append((f, tr))
    return out


@st.composite
def partition_specs(draw, schema: Schema, *, spec_id: int = 0, first_field_id: int = PARTITION_DATA_ID_START,
                    format_version: int = 4, transforms: tuple[str, ...] = TRANSFORMS,
                    max_fields: int = 4, with_extras: bool = True) -> PartitionSpec:
    options = _applicable(schema, transforms)
    if not options:
        return PartitionSpec(spec_id, ())
    chosen = draw(st.lists(st.sampled_from(options), max_size=max_fields, unique_by=lambda o: (o[0].field_id, o[1])))
    fields = []
    for i, (f, tr) in enumerate(chosen):
        source_ids: tuple[int, ...] = ()
        if format_version >= 3 and draw(st.integers(0, 5)) == 0:
            # A v3 multi-argument form: "source-ids" with the first as the source id.
            others = [c.field_id for c in primitive_columns(schema) if c.field_id != f.field_id]
            if others:
                source_ids = (f.field_id, draw(st.sampled_from(others)))
        extra = draw(extra_keys(max_size=1)) if with_extras else ()
        fields.append(PartitionField(f.field_id, first_field_id + i, f"p{i}_{f.name}", tr, source_ids, extra))
    return PartitionSpec(spec_id, tuple(fields), draw(extra_keys(max_size=1)) if with_extras else ())


@st.composite
def sort_orders(draw, schema: Schema, *, order_id: int = 1, format_version: int = 4,
                with_extras: bool = True) -> SortOrder:
    if order_id == 0:
        return SortOrder(0, ())
    options = _applicable(schema, ("identity", "bucket[16]", "truncate[4]", "day", "year", "void"))
    if not options:
        return SortOrder(order_id, ())
    chosen = draw(st.lists(st.sampled_from(options), min_size=1, max_size=3))
    fields = []
    for f, tr in chosen:
        source_ids: tuple[int, ...] = ()
        if format_version >= 3 and draw(st.integers(0, 5)) == 0:
            source_ids = (f.field_id, f.field_id + 1000)
        fields.append(SortField(f.field_id, tr, draw(st.sampled_from(["asc", "desc"])),
                                draw(st.sampled_from(["nulls-first", "nulls-last"])), source_ids,
                                draw(extra_keys(max_size=1)) if with_extras else ()))
    return SortOrder(order_id, tuple(fields), draw(extra_keys(max_size=1)) if with_extras else ())


# -- table metadata --------------------------------------------------------------------------------

_SNAPSHOT_KNOWN = frozenset({"snapshot-id", "parent-snapshot-id", "sequence-number", "timestamp-ms",
                             "manifest-list", "manifests", "summary", "schema-id", "first-row-id", "added-rows",
                             "key-id"})
_TABLE_KNOWN = frozenset({
    "format-version", "table-uuid", "location", "last-sequence-number", "last-updated-ms", "last-column-id",
    "schema", "schemas", "current-schema-id", "partition-spec", "partition-specs", "default-spec-id",
    "last-partition-id", "properties", "current-snapshot-id", "snapshots", "snapshot-log", "metadata-log",
    "sort-orders", "default-sort-order-id", "refs", "statistics", "partition-statistics", "next-row-id",
    "encryption-keys"})

locations = st.sampled_from(["s3://bucket/wh/db/t", "s3a://b/x", "hdfs://nn:8020/warehouse/db.db/events",
                             "file:/tmp/wh/db/t", "/var/lib/iceberg/t", "gs://bkt/path/to/table"])
timestamps_ms = st.integers(0, 4_102_444_800_000)
snapshot_ids = st.integers(1, LONG_MAX)
operations = st.sampled_from(["append", "replace", "overwrite", "delete"])


def _stats_file(snapshot_id: int, path: str, size: int, footer: int | None, blobs: bool,
                partition: bool) -> StatisticsFile:
    raw: dict[str, Any] = {"snapshot-id": snapshot_id, "statistics-path": path, "file-size-in-bytes": size}
    if not partition:
        raw["file-footer-size-in-bytes"] = footer or 0
        raw["blob-metadata"] = [{"type": "apache-datasketches-theta-v1", "snapshot-id": snapshot_id,
                                 "sequence-number": 1, "fields": [1], "properties": {"ndv": "3"}}] if blobs else []
    return StatisticsFile(snapshot_id, path, size, raw)


@st.composite
def snapshots_for(draw, format_version: int, location: str, schema_ids: list[int], count: int,
                  with_extras: bool = True) -> tuple[Snapshot, ...]:
    ids = draw(st.lists(snapshot_ids, min_size=count, max_size=count, unique=True))
    out: list[Snapshot] = []
    seq = 0
    row_id = 0
    ts = draw(timestamps_ms)
    for i, sid in enumerate(ids):
        parent = draw(st.none() | st.sampled_from(ids[:i])) if i else None
        if format_version >= 2:
            seq += draw(st.integers(1, 3))
        ts += draw(st.integers(0, 10_000_000))
        manifest_list = f"{location}/metadata/snap-{sid}-1-{i}.avro"
        if format_version >= 4 and draw(st.booleans()):
            manifest_list = f"metadata/snap-{sid}-1-{i}.avro"  # v4 relative path
        manifests = None
        if format_version == 1 and draw(st.booleans()):
            manifest_list, manifests = None, tuple(f"{location}/metadata/m{i}-{j}.avro"
                                                   for j in range(draw(st.integers(0, 3))))
        summary: dict[str, str] = {}
        if format_version >= 2 or draw(st.booleans()):
            summary = {"operation": draw(operations), **draw(st.dictionaries(
                st.sampled_from(["added-data-files", "added-records", "total-records", "spark.app.id",
                                 "changed-partition-count", "total-files-size"]),
                st.integers(0, 10**9).map(str), max_size=4))}
        first_row_id = added_rows = key_id = None
        if format_version >= 3:
            if draw(st.booleans()):
                added_rows = draw(st.integers(0, 10**6))
                first_row_id = row_id
                row_id += added_rows
            key_id = draw(st.none() | st.text(alphabet=_string.hexdigits, min_size=1, max_size=8))
        out.append(Snapshot(
            snapshot_id=sid, timestamp_ms=ts, parent_snapshot_id=parent,
            sequence_number=seq if format_version >= 2 else 0, manifest_list=manifest_list, manifests=manifests,
            summary=summary, schema_id=draw(st.none() | st.sampled_from(schema_ids)),
            first_row_id=first_row_id, added_rows=added_rows, key_id=key_id,
            extra=draw(extra_keys(_SNAPSHOT_KNOWN)) if with_extras else (),
        ))
    return tuple(out)


@st.composite
def table_metadata(draw, format_version: int, *, with_extras: bool = True, max_snapshots: int = 4) -> TableMetadata:
    """Table metadata of one format version, with everything that version can hold."""
    v = format_version
    location: str | None = draw(locations)
    if v >= 4 and draw(st.booleans()):
        location = None  # v4: "location ... becomes optional"
    base = location or "s3://catalog-supplied/t"
    n_schemas = draw(st.integers(1, 3))
    schema_list = []
    next_id = 1
    for sid in range(n_schemas):
        s = draw(schemas(v, schema_id=sid * 2 + draw(st.integers(0, 1)), first_id=1 if sid == 0 else next_id,
                         with_extras=with_extras, max_depth=2 if sid == 0 else 1))
        next_id = s.highest_field_id + 1
        schema_list.append(s)
    current = draw(st.sampled_from(schema_list))
    specs = [draw(partition_specs(current, spec_id=0, format_version=v, with_extras=with_extras))]
    if v >= 2 and draw(st.booleans()):
        start = max(specs[0].last_field_id, PARTITION_DATA_ID_START - 1) + 1
        specs.append(draw(partition_specs(current, spec_id=1, first_field_id=start, format_version=v,
                                          with_extras=with_extras)))
    default_spec = draw(st.sampled_from(specs))
    orders = [SortOrder(0, ())] + [draw(sort_orders(current, order_id=i, format_version=v, with_extras=with_extras))
                                   for i in range(1, draw(st.integers(1, 3)))]
    snaps = draw(snapshots_for(v, base, [s.schema_id for s in schema_list], draw(st.integers(0, max_snapshots)),
                               with_extras))
    current_snapshot = draw(st.sampled_from(snaps)).snapshot_id if snaps and draw(st.integers(0, 4)) else None
    refs: dict[str, SnapshotRef] = {}
    if v == 1 and current_snapshot is not None:
        # v1 written without refs: a reader (icectl, Iceberg Java) sees main at the current snapshot.
        refs["main"] = SnapshotRef(current_snapshot, "branch")
    if snaps and (v >= 2 or draw(st.booleans())):
        if current_snapshot is not None:
            refs["main"] = SnapshotRef(current_snapshot, "branch", draw(st.none() | st.integers(1, 100)),
                                       draw(st.none() | st.integers(1, 10**10)))
        for name in draw(st.lists(names.filter(lambda n: n != "main"), max_size=3, unique=True)):
            sid = draw(st.sampled_from(snaps)).snapshot_id
            if draw(st.booleans()):
                refs[name] = SnapshotRef(sid, "branch", draw(st.none() | st.integers(1, 100)),
                                         draw(st.none() | st.integers(1, 10**10)),
                                         draw(st.none() | st.integers(1, 10**10)),
                                         draw(extra_keys(max_size=1)) if with_extras else ())
            else:
                refs[name] = SnapshotRef(sid, "tag", max_ref_age_ms=draw(st.none() | st.integers(1, 10**10)))
    stats = tuple(_stats_file(s.snapshot_id, f"{base}/metadata/{s.snapshot_id}.stats", draw(st.integers(1, 10**7)),
                              draw(st.integers(1, 1000)), draw(st.booleans()), False)
                  for s in snaps if draw(st.booleans()))
    pstats = tuple(_stats_file(s.snapshot_id, f"{base}/metadata/partition-stats-{s.snapshot_id}.parquet",
                               draw(st.integers(1, 10**7)), None, False, True)
                   for s in snaps if draw(st.booleans()))
    snapshot_log = tuple(SnapshotLogEntry(s.timestamp_ms, s.snapshot_id) for s in snaps if draw(st.booleans()))
    metadata_log = tuple(MetadataLogEntry(draw(timestamps_ms), f"{base}/metadata/{i:05d}-x.metadata.json")
                         for i in range(draw(st.integers(0, 3))))
    next_row_id = None
    encryption_keys: tuple[dict[str, Any], ...] = ()
    if v >= 3:
        next_row_id = sum(s.added_rows or 0 for s in snaps) + draw(st.integers(0, 1000))
        encryption_keys = tuple({"key-id": f"k{i}", "encrypted-key-metadata": "AAECAw==", "encrypted-by-id": "kms-1",
                                 "properties": draw(str_maps)} for i in range(draw(st.integers(0, 2))))
    return TableMetadata(
        format_version=v,
        table_uuid=draw(st.uuids().map(str)) if v >= 2 else draw(st.none() | st.uuids().map(str)),
        location=location,
        last_updated_ms=draw(timestamps_ms),
        last_column_id=max(s.highest_field_id for s in schema_list),
        schemas=tuple(schema_list),
        current_schema_id=current.schema_id,
        partition_specs=tuple(specs),
        default_spec_id=default_spec.spec_id,
        last_partition_id=max(max(s.last_field_id for s in specs), PARTITION_DATA_ID_START - 1),
        last_sequence_number=max((s.sequence_number for s in snaps), default=0) if v >= 2 else 0,
        properties=draw(str_maps),
        current_snapshot_id=current_snapshot,
        snapshots=snaps,
        snapshot_log=snapshot_log,
        metadata_log=metadata_log,
        sort_orders=tuple(orders),
        default_sort_order_id=draw(st.sampled_from(orders)).order_id,
        refs=refs,
        statistics=stats,
        partition_statistics=pstats,
        next_row_id=next_row_id,
        encryption_keys=encryption_keys,
        extra=draw(extra_keys(_TABLE_KNOWN)) if with_extras else (),
    )


# -- manifests -------------------------------------------------------------------------------------

PARTITION_SOURCE_TYPES = ("int", "long", "date", "timestamp", "timestamptz", "string", "uuid", "decimal(9, 2)",
                          "decimal(38, 6)", "binary", "fixed[5]", "boolean", "float", "double", "time")
PARTITION_TRANSFORMS = ("identity", "bucket[8]", "truncate[3]", "year", "month", "day", "hour", "void")


@st.composite
def partitioned_tables(draw, format_version: int) -> tuple[Schema, PartitionSpec]:
    """A flat schema with one column of each partition source type (and ns timestamps in v3+),
    and a spec of random transforms over them."""
    types = list(PARTITION_SOURCE_TYPES) + (["timestamp_ns", "timestamptz_ns"] if format_version >= 3 else [])
    fields = tuple(NestedField(i + 1, f"c_{t.split('(')[0].split('[')[0]}_{i}", primitive(t), i == 0)
                   for i, t in enumerate(types))
    schema = Schema(fields, 0)
    spec = draw(partition_specs(schema, spec_id=draw(st.integers(0, 3)), format_version=min(format_version, 2),
                                transforms=PARTITION_TRANSFORMS, max_fields=6, with_extras=False))
    return schema, spec


def partition_values(types: list[PrimitiveType]) -> st.SearchStrategy[tuple]:
    return st.tuples(*[st.none() | values(t) for t in types]) if types else st.just(())


_metric_keys = st.integers(1, 40)
counts = st.dictionaries(_metric_keys, st.integers(0, LONG_MAX), max_size=4)
bounds = st.dictionaries(_metric_keys, st.binary(max_size=16), max_size=4)


def _metrics(with_maps: bool) -> st.SearchStrategy[dict[str, Any]]:
    if not with_maps:
        return st.just({})
    return st.fixed_dictionaries({}, optional={
        "column_sizes": counts, "value_counts": counts, "null_value_counts": counts, "nan_value_counts": counts,
        "lower_bounds": bounds, "upper_bounds": bounds})


@st.composite
def data_files(draw, format_version: int, kind: str, partition_types: list[PrimitiveType], spec_id: int,
               location: str = "s3://bucket/wh/db/t", content_stats: st.SearchStrategy | None = None) -> DataFile:
    """A content file of ``kind`` (data, position-deletes, equality-deletes, deletion-vector)."""
    v = format_version
    n = draw(st.integers(0, 10**6))
    fmt = {"deletion-vector": "puffin"}.get(kind) or draw(st.sampled_from(["parquet", "avro", "orc"]))
    content = {"data": FileContent.DATA, "equality-deletes": FileContent.EQUALITY_DELETES}.get(
        kind, FileContent.POSITION_DELETES)
    path = f"{location}/data/{draw(st.uuids())}.{fmt}"
    df = DataFile(
        file_path=path, file_format=fmt, partition=draw(partition_values(partition_types)), record_count=n,
        file_size_in_bytes=draw(st.integers(0, 10**12)), content=content, spec_id=spec_id,
        key_metadata=draw(st.none() | st.binary(max_size=8)),
        split_offsets=draw(st.none() | st.lists(st.integers(0, 10**9), max_size=4).map(sorted)),
        sort_order_id=draw(st.none() | st.integers(0, 3)) if kind != "position-deletes" else None,
        **draw(_metrics(v < 4)),
    )
    if kind == "equality-deletes":
        df.equality_ids = draw(st.lists(st.integers(1, 40), min_size=1, max_size=3, unique=True))
    if v >= 2 and kind in ("position-deletes", "deletion-vector"):
        if kind == "deletion-vector" or draw(st.booleans()):
            df.referenced_data_file = f"{location}/data/{draw(st.uuids())}.parquet"
    if v >= 3 and kind == "deletion-vector":
        df.content_offset = draw(st.integers(4, 10**6))
        df.content_size_in_bytes = draw(st.integers(1, 10**6))
    if v >= 4 and content_stats is not None:
        df.content_stats = draw(content_stats)
    return df


def kinds_for(format_version: int, content: ManifestContent) -> list[str]:
    if content == ManifestContent.DATA:
        return ["data"]
    if format_version == 2:
        return ["position-deletes", "equality-deletes"]
    return ["position-deletes", "equality-deletes", "deletion-vector"]


@st.composite
def manifest_entries(draw, format_version: int, content: ManifestContent, partition_types: list[PrimitiveType],
                     spec_id: int, *, manifest_first_row_id: int | None = None,
                     content_stats: st.SearchStrategy | None = None) -> list[ManifestEntry]:
    """Entries as a writer stores them: ADDED entries may leave snapshot id and sequence numbers
    null (inherited on read); EXISTING and DELETED ones carry both sequence numbers (spec:
    "Sequence Number Inheritance"); ADDED data files leave first_row_id null when the manifest
    has one, others carry their assigned one or null (spec: "First Row ID Inheritance")."""
    v = format_version
    kinds = kinds_for(v, content)
    out = []
    for _ in range(draw(st.integers(0, 6))):
        status = draw(st.sampled_from(list(EntryStatus)))
        df = draw(data_files(v, draw(st.sampled_from(kinds)), partition_types, spec_id, content_stats=content_stats))
        if v == 1:
            snapshot_id, seq, fseq = draw(snapshot_ids), None, None
        else:
            snapshot_id = draw(st.none() | snapshot_ids)
            if status == EntryStatus.ADDED:
                seq = draw(st.none() | st.integers(0, 10**6))
                fseq = draw(st.none() | st.integers(0, 10**6))
            else:
                seq, fseq = draw(st.integers(0, 10**6)), draw(st.integers(0, 10**6))
        if v >= 3 and df.content == FileContent.DATA:
            if status == EntryStatus.ADDED and manifest_first_row_id is not None:
                df.first_row_id = None
            else:
                df.first_row_id = draw(st.none() | st.integers(0, 10**12))
        out.append(ManifestEntry(status, snapshot_id, seq, fseq, df))
    return out


@st.composite
def manifest_files(draw, format_version: int, *, location: str = "s3://bucket/wh/db/t") -> ManifestFile:
    """A manifest list entry as it is written for its format version."""
    v = format_version
    content = draw(st.sampled_from(list(ManifestContent))) if v >= 2 else ManifestContent.DATA
    count = st.integers(0, INT_MAX)
    rows = st.integers(0, LONG_MAX)
    opt = (lambda s: st.none() | s) if v == 1 else (lambda s: s)
    summaries = st.lists(st.builds(FieldSummary, st.booleans(), st.none() | st.booleans(),
                                   st.none() | st.binary(max_size=8), st.none() | st.binary(max_size=8)), max_size=3)
    seq = draw(st.integers(0, 10**6)) if v >= 2 else 0
    return ManifestFile(
        manifest_path=f"{location}/metadata/{draw(st.uuids())}-m{draw(st.integers(0, 9))}.avro",
        manifest_length=draw(st.integers(1, 10**9)),
        partition_spec_id=draw(st.integers(0, 10)),
        content=content,
        sequence_number=seq,
        min_sequence_number=draw(st.integers(0, seq)) if v >= 2 else 0,
        added_snapshot_id=draw(snapshot_ids),
        added_files_count=draw(opt(count)),
        existing_files_count=draw(opt(count)),
        deleted_files_count=draw(opt(count)),
        added_rows_count=draw(opt(rows)),
        existing_rows_count=draw(opt(rows)),
        deleted_rows_count=draw(opt(rows)),
        partitions=draw(st.none() | summaries),
        key_metadata=draw(st.none() | st.binary(max_size=8)),
        first_row_id=draw(st.none() | st.integers(0, 10**12)) if v >= 3 and content == ManifestContent.DATA
        else None,
    )


# -- v4 content_stats --------------------------------------------------------------------------------

@st.composite
def stats_maps(draw, schema: Schema) -> dict[str, dict[int, Any]]:
    """The v3 metric maps (plus tight_bounds) for the columns content_stats covers, with bounds
    as Appendix D bytes of values of each column's type; the shape ``content_stats.to_maps``
    returns."""
    from icectl.spec.content_stats import stats_columns
    from icectl.spec.conversions import to_bytes

    maps: dict[str, dict[int, Any]] = {k: {} for k in ("value_counts", "null_value_counts", "nan_value_counts",
                                                       "column_sizes", "lower_bounds", "upper_bounds",
                                                       "tight_bounds")}
    count = st.integers(0, LONG_MAX)
    for fid, t in stats_columns(schema):
        for key in ("value_counts", "null_value_counts", "column_sizes"):
            if draw(st.booleans()):
                maps[key][fid] = draw(count)
        if t.base in ("float", "double") and draw(st.booleans()):
            maps["nan_value_counts"][fid] = draw(count)
        if has_values(t):
            for key in ("lower_bounds", "upper_bounds"):
                if draw(st.booleans()):
                    maps[key][fid] = to_bytes(t, draw(values(t)))
        if draw(st.booleans()):
            maps["tight_bounds"][fid] = draw(st.booleans())
    return maps


def content_stats_structs(schema: Schema) -> st.SearchStrategy[dict[str, Any] | None]:
    """A ``content_stats`` record (as a writer passes it to write_manifest) for a schema."""
    from icectl.spec.content_stats import from_maps

    return stats_maps(schema).map(lambda m: from_maps(schema, **m))
