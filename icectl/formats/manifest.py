"""Manifest lists and manifests: the model, reading (with inheritance, through
:mod:`icectl.formats.avro`) and writing (through fastavro) (spec: "Manifests", "Manifest Lists",
"Sequence Number Inheritance", "First Row ID Inheritance", Appendix E).

Partition values and bounds are held in Iceberg's internal representation (dates as days,
timestamps as micro- or nanoseconds, decimals as ``Decimal``), whatever form the Avro decoder
returned them in.
"""
from __future__ import annotations

import decimal
import io
import json
import uuid
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from icectl.errors import InvalidMetadataError
from icectl.formats import avro_schemas
from icectl.formats.avro import field_index, internal_struct, open_avro, read_records, record_type
from icectl.formats.entries import inherit_values
from icectl.spec.conversions import to_internal
from icectl.spec.partitioning import PartitionSpec
from icectl.spec.transforms import parse_transform
from icectl.spec.types import PrimitiveType, Schema


class ManifestContent(IntEnum):
    DATA = 0
    DELETES = 1


class FileContent(IntEnum):
    DATA = 0
    POSITION_DELETES = 1
    EQUALITY_DELETES = 2


# A content file's kind, as icectl reports it (and Iceberg Java's expire_snapshots counts it).
DATA, POSITION_DELETES, EQUALITY_DELETES, DELETION_VECTOR = (
    "data", "position-deletes", "equality-deletes", "deletion-vector")


def content_kind(content: int, file_format: str) -> str:
    """data, position-deletes, equality-deletes or deletion-vector (a position delete file in
    Puffin) for a data_file's ``content`` and ``file_format``."""
    c = int(content)  # plain ints: this runs once per file in listings
    if c == 0:
        return DATA
    if c == 2:
        return EQUALITY_DELETES
    return DELETION_VECTOR if file_format.lower() == "puffin" else POSITION_DELETES


class EntryStatus(IntEnum):
    EXISTING = 0
    ADDED = 1
    DELETED = 2


@dataclass
class DataFile:
    """A content file: data, position deletes, equality deletes or a deletion vector."""

    file_path: str
    file_format: str
    partition: tuple[Any, ...]
    record_count: int
    file_size_in_bytes: int
    content: FileContent = FileContent.DATA
    spec_id: int = 0
    column_sizes: dict[int, int] | None = None
    value_counts: dict[int, int] | None = None
    null_value_counts: dict[int, int] | None = None
    nan_value_counts: dict[int, int] | None = None
    lower_bounds: dict[int, bytes] | None = None
    upper_bounds: dict[int, bytes] | None = None
    key_metadata: bytes | None = None
    split_offsets: list[int] | None = None
    equality_ids: list[int] | None = None
    sort_order_id: int | None = None
    first_row_id: int | None = None
    referenced_data_file: str | None = None
    content_offset: int | None = None
    content_size_in_bytes: int | None = None
    content_stats: dict[str, Any] | None = None  # v4, raw record; see content_stats.py

    @property
    def is_deletion_vector(self) -> bool:
        return self.content == FileContent.POSITION_DELETES and self.file_format.lower() == "puffin"

    @property
    def kind(self) -> str:
        """data, position-deletes, equality-deletes or deletion-vector."""
        return content_kind(self.content, self.file_format)


@dataclass
class ManifestEntry:
    status: EntryStatus
    snapshot_id: int | None
    sequence_number: int | None  # the data sequence number
    file_sequence_number: int | None
    data_file: DataFile

    @property
    def is_live(self) -> bool:
        return self.status != EntryStatus.DELETED


@dataclass(frozen=True)
class FieldSummary:
    contains_null: bool
    contains_nan: bool | None = None
    lower_bound: bytes | None = None
    upper_bound: bytes | None = None


@dataclass
class ManifestFile:
    """An entry of a manifest list."""

    manifest_path: str
    manifest_length: int
    partition_spec_id: int
    content: ManifestContent = ManifestContent.DATA
    sequence_number: int = 0
    min_sequence_number: int = 0
    added_snapshot_id: int | None = None
    added_files_count: int | None = None
    existing_files_count: int | None = None
    deleted_files_count: int | None = None
    added_rows_count: int | None = None
    existing_rows_count: int | None = None
    deleted_rows_count: int | None = None
    partitions: list[FieldSummary] | None = None
    key_metadata: bytes | None = None
    first_row_id: int | None = None


# ---------------------------------------------------------------------------------------------
# Reading (through the one Avro entry point, :mod:`icectl.formats.avro`: polars, else the lean decoder)

STATS_FIELDS = frozenset({"column_sizes", "value_counts", "null_value_counts", "nan_value_counts",
                          "distinct_counts", "lower_bounds", "upper_bounds", "content_stats", "key_metadata",
                          "split_offsets"})
# data_file's maps with int keys, which Avro cannot key: written as arrays of key/value records
# (spec: Avro "Maps with non-string keys").
MAP_FIELDS = ("column_sizes", "value_counts", "null_value_counts", "nan_value_counts", "distinct_counts",
              "lower_bounds", "upper_bounds")


_TYPE_PROBLEMS: dict[tuple[bytes, str], str | None] = {}


def check_field_types(schema: Any, *, source: str, what: str, text: bytes = b"") -> None:
    """Refuse a manifest list (``what`` = "manifest list") or manifest ("manifest") whose writer
    schema has a field of a type the spec's schema cannot read it as (Avro "Schema Resolution": a
    ``manifest_path`` that is a long, a ``record_count`` that is a string): InvalidMetadataError
    naming the file and the field. ``text``, the header's schema as written, keys a cache: a
    table's manifests share a few schemas."""
    key = (text, what)
    if text and key in _TYPE_PROBLEMS:
        problem = _TYPE_PROBLEMS[key]
    else:
        readers = avro_schemas.MANIFEST_LIST_READERS if what == "manifest list" else avro_schemas.MANIFEST_ENTRY_READERS
        problem = avro_schemas.record_mismatch(schema, list(readers))
        if text:
            if len(_TYPE_PROBLEMS) > 512:
                _TYPE_PROBLEMS.clear()
            _TYPE_PROBLEMS[key] = problem
    if problem:
        raise InvalidMetadataError(f"{source}: wrong Avro schema for a {what}: {problem}")


_ENTRY_SCHEMAS_OK: set[bytes] = set()  # the schema texts check_entry_schema found right


def check_entry_schema(schema: Any, *, source: str, text: bytes = b"") -> None:
    """Refuse a manifest whose writer schema holds one of data_file's int-keyed maps as something
    other than an array of key/value records (an Avro ``map`` has string keys: no Iceberg reader
    reads it as ``map<int, ...>``), or a field of a type the spec's cannot be read as
    (:func:`check_field_types`). InvalidMetadataError naming the file and the field."""
    check_field_types(schema, source=source, what="manifest", text=text)
    if text and text in _ENTRY_SCHEMAS_OK:
        return
    top = schema if isinstance(schema, dict) else {}
    i = field_index(top, "data_file")
    data_file = record_type(top["fields"][i]["type"]) if i is not None else None
    for f in data_file.get("fields", []) if data_file is not None else []:
        if f.get("name") in MAP_FIELDS and not _is_key_value_array(f.get("type")):
            t = f.get("type")
            other = [x for x in t if x != "null"] if isinstance(t, list) else [t]
            kind = other[0].get("type") if len(other) == 1 and isinstance(other[0], dict) else other[0] if other else t
            raise InvalidMetadataError(f"{source}: wrong Avro schema: data_file field {f['name']!r} is an Avro "
                                       f"{kind if isinstance(kind, str) else 'union'}, not the array of key/value "
                                       "records Iceberg writes a map<int, ...> as")
    if text:
        if len(_ENTRY_SCHEMAS_OK) > 512:
            _ENTRY_SCHEMAS_OK.clear()
        _ENTRY_SCHEMAS_OK.add(text)


def _is_key_value_array(t: Any) -> bool:
    if isinstance(t, list):
        other = [x for x in t if x != "null"]
        return len(other) == 1 and _is_key_value_array(other[0])
    if not isinstance(t, dict) or t.get("type") != "array":
        return False
    items = t.get("items")
    return isinstance(items, str) or (isinstance(items, dict) and items.get("type") == "record"
                                      and len(items.get("fields", [])) == 2)


def read_manifest_list(data: bytes, *, source: str = "manifest list") -> list[ManifestFile]:
    """Read a manifest list; v1 lists read with content 0 and sequence numbers 0 (Appendix E)."""
    out = []
    avro = open_avro(data, source=source)
    check_field_types(avro.schema, source=source, what="manifest list", text=avro.schema_text)
    for r in read_records(avro):
        try:
            out.append(manifest_file(r))
        except (KeyError, TypeError, ValueError) as e:
            raise InvalidMetadataError(f"{source}: invalid manifest list entry: {e}") from None
    return out


def manifest_file(r: dict[str, Any], *, strict: bool = True) -> ManifestFile:
    """A manifest-list record as a :class:`ManifestFile`. ``strict``: KeyError, TypeError or
    ValueError for a value a reader cannot use (content not 0 or 1, a missing contains_null);
    ``validate`` reads leniently, keeping such values to report them."""
    parts = r.get("partitions")
    content = r.get("content") or 0
    return ManifestFile(
        manifest_path=_text(r, "manifest_path") if strict else r["manifest_path"],
        manifest_length=int(r["manifest_length"]) if strict else r.get("manifest_length"),
        partition_spec_id=int(r["partition_spec_id"]) if strict else r["partition_spec_id"],
        content=ManifestContent(content) if strict else content,
        sequence_number=int(r.get("sequence_number") or 0),
        min_sequence_number=int(r.get("min_sequence_number") or 0),
        added_snapshot_id=r.get("added_snapshot_id"),
        added_files_count=_first(r, "added_files_count", "added_data_files_count"),
        existing_files_count=_first(r, "existing_files_count", "existing_data_files_count"),
        deleted_files_count=_first(r, "deleted_files_count", "deleted_data_files_count"),
        added_rows_count=r.get("added_rows_count"),
        existing_rows_count=r.get("existing_rows_count"),
        deleted_rows_count=r.get("deleted_rows_count"),
        partitions=None if parts is None else [
            FieldSummary(p["contains_null"] if strict else bool(p.get("contains_null")), p.get("contains_nan"),
                         p.get("lower_bound"), p.get("upper_bound"))
            for p in parts],
        key_metadata=r.get("key_metadata"),
        first_row_id=r.get("first_row_id"),
    )


def _text(r: dict[str, Any], name: str) -> str:
    """A required string field's value; ValueError naming the field when it is null or not text."""
    v = r[name]
    if not isinstance(v, str):
        raise ValueError(f"{name} is {'null' if v is None else type(v).__name__}, not a string")
    return v


def _long(r: dict[str, Any], name: str) -> int:
    """A required long field's value; ValueError naming the field when it is null or not a number."""
    v = r[name]
    if not isinstance(v, int) or isinstance(v, bool):
        raise ValueError(f"{name} is {'null' if v is None else type(v).__name__}, not a long")
    return v


def _first(r: dict[str, Any], *names: str) -> Any:
    for n in names:
        if n in r:
            return r[n]
    return None


@dataclass
class ManifestHeader:
    """The key-value metadata of a manifest (spec: "Manifests")."""

    format_version: int
    content: ManifestContent
    partition_spec_id: int | None
    schema_json: str | None
    partition_spec_json: str | None
    raw: dict[str, str] = field(default_factory=dict)


def _header(meta: dict[str, str], source: str) -> ManifestHeader:
    try:
        return ManifestHeader(
            format_version=int(meta.get("format-version", 1)),
            content=ManifestContent.DELETES if meta.get("content") == "deletes" else ManifestContent.DATA,
            partition_spec_id=int(meta["partition-spec-id"]) if meta.get("partition-spec-id") is not None else None,
            schema_json=meta.get("schema"),
            partition_spec_json=meta.get("partition-spec"),
            raw=meta,
        )
    except ValueError as e:
        raise InvalidMetadataError(f"{source}: invalid manifest key-value metadata: {e}") from None


def read_manifest_header(data: bytes, *, source: str = "manifest") -> ManifestHeader:
    return _header(open_avro(data, source=source).metadata, source)


_STATUS = {s.value: s for s in EntryStatus}
_CONTENT = {c.value: c for c in FileContent}


def read_manifest(data: bytes, manifest: ManifestFile, *, partition_types: list[PrimitiveType] | None = None,
                  source: str | None = None, live_only: bool = False,
                  with_stats: bool = True) -> list[ManifestEntry]:
    """Read a manifest's entries with inheritance applied from its manifest-list entry, by the
    manifest-entry frame's one implementation of the rules
    (:func:`icectl.formats.entries.inherited`):

    - ``snapshot_id`` null: the manifest's ``added_snapshot_id``.
    - ``sequence_number`` / ``file_sequence_number`` null and status ADDED: the manifest's
      sequence number (v1 manifests: 0) ("Sequence Number Inheritance").
    - ``first_row_id`` null on an ADDED data file in a manifest with a ``first_row_id``: the
      manifest's ``first_row_id`` plus the record counts of the preceding added data files with a
      null ``first_row_id`` ("First Row ID Inheritance").
    """
    source = source or manifest.manifest_path
    if manifest.manifest_length and len(data) < manifest.manifest_length:
        # Cut at a block boundary, a truncated manifest would otherwise read as valid and short.
        raise InvalidMetadataError(f"{source}: truncated: {len(data)} bytes, but the manifest list records "
                                   f"manifest_length {manifest.manifest_length}")
    avro = open_avro(data, source=source)
    check_entry_schema(avro.schema, source=source, text=avro.schema_text)
    header = _header(avro.metadata, source)
    spec_id = manifest.partition_spec_id
    out: list[ManifestEntry] = []
    records = read_records(avro, skip=frozenset() if with_stats else STATS_FIELDS,
                           prepare=lambda df: _entry_columns(df, with_stats))
    for r in records:
        try:
            status = _STATUS[r["status"]]
            if live_only and status is EntryStatus.DELETED:
                continue  # inheritance of the others does not depend on it
            df = _data_file(r["data_file"], spec_id, partition_types=partition_types, with_stats=with_stats)
            out.append(ManifestEntry(status, r.get("snapshot_id"), r.get("sequence_number"),
                                     r.get("file_sequence_number"), df))
        except InvalidMetadataError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise InvalidMetadataError(f"{source}: invalid manifest entry: {e}") from None
    _inherit(out, manifest, header.format_version, source)
    return out


def _inherit(entries: list[ManifestEntry], manifest: ManifestFile, format_version: int, source: str) -> None:
    """Apply inheritance to the entries read as they were written, through the frame's one
    implementation of the rules (:func:`icectl.formats.entries.inherited`): a manifest with
    nothing to inherit is left as it is."""
    needs = manifest.first_row_id is not None or any(
        e.snapshot_id is None or e.sequence_number is None or e.file_sequence_number is None for e in entries)
    if not needs or not entries:
        return
    columns = {"status": [int(e.status) for e in entries], "snapshot_id": [e.snapshot_id for e in entries],
               "sequence_number": [e.sequence_number for e in entries],
               "file_sequence_number": [e.file_sequence_number for e in entries],
               "content": [int(e.data_file.content) for e in entries],
               "record_count": [e.data_file.record_count for e in entries],
               "first_row_id": [e.data_file.first_row_id for e in entries]}
    try:
        values = inherit_values(columns, manifest_sequence_number=manifest.sequence_number,
                                added_snapshot_id=manifest.added_snapshot_id, first_row_id=manifest.first_row_id,
                                format_version=format_version)
    except (TypeError, ValueError) as e:
        raise InvalidMetadataError(f"{source}: invalid manifest entry: {e}") from None
    frids = values.get("first_row_id")
    for i, e in enumerate(entries):
        e.snapshot_id = values["snapshot_id"][i]
        e.sequence_number = values["sequence_number"][i]
        e.file_sequence_number = values["file_sequence_number"][i]
        if frids is not None:
            e.data_file.first_row_id = frids[i]


def _entry_columns(df: Any, with_stats: bool) -> Any:
    """polars' frame of a manifest with data_file's partition in Iceberg's internal form (days,
    micros) and, without ``with_stats``, without the metrics: the Python work per entry is then
    only building the record."""
    import polars as pl

    dtype = df.schema["data_file"]
    exprs = []
    for f in dtype.fields:
        if not with_stats and f.name in STATS_FIELDS:
            continue
        e = pl.col("data_file").struct.field(f.name)
        exprs.append(internal_struct(pl, e, f.dtype) if f.name == "partition" else e)
    return df.with_columns(pl.struct(exprs).alias("data_file"))


def _int_map(v: list[dict[str, Any]] | dict[int, Any] | None) -> dict[int, Any] | None:
    if v is None:
        return None
    if isinstance(v, dict):
        return {int(k): val for k, val in v.items()}
    return {int(kv["key"]): kv["value"] for kv in v}


def _data_file(d: dict[str, Any], spec_id: int, *, partition_types: list[PrimitiveType] | None,
               with_stats: bool) -> DataFile:
    part = d.get("partition") or {}
    values = tuple(part.values())
    if partition_types is not None:
        values = tuple(to_internal(t, v) for t, v in zip(partition_types, values))
    else:
        values = tuple(to_internal(None, v) for v in values)
    df = DataFile(
        file_path=_text(d, "file_path"),
        file_format=_text(d, "file_format").lower(),
        partition=values,
        record_count=_long(d, "record_count"),
        file_size_in_bytes=_long(d, "file_size_in_bytes"),
        content=_CONTENT[d.get("content") or 0],
        spec_id=spec_id,
        key_metadata=d.get("key_metadata"),
        split_offsets=d.get("split_offsets"),
        equality_ids=d.get("equality_ids"),
        sort_order_id=d.get("sort_order_id"),
        first_row_id=d.get("first_row_id"),
        referenced_data_file=d.get("referenced_data_file"),
        content_offset=d.get("content_offset"),
        content_size_in_bytes=d.get("content_size_in_bytes"),
    )
    if with_stats:
        df.column_sizes = _int_map(d.get("column_sizes"))
        df.value_counts = _int_map(d.get("value_counts"))
        df.null_value_counts = _int_map(d.get("null_value_counts"))
        df.nan_value_counts = _int_map(d.get("nan_value_counts"))
        df.lower_bounds = _int_map(d.get("lower_bounds"))
        df.upper_bounds = _int_map(d.get("upper_bounds"))
        df.content_stats = d.get("content_stats")
    return df


# ---------------------------------------------------------------------------------------------
# Writing

def partition_fields(spec: PartitionSpec, schema: Schema | Any) -> list[tuple[int, str, PrimitiveType]]:
    """(field id, name, result type) of each partition field, as the manifest's partition struct.

    ``schema`` is a Schema or a function from a field id to its type (to find source columns
    that only older schemas still have).
    """
    find = schema.find_type if isinstance(schema, Schema) else schema
    out = []
    for f in spec.fields:
        source = find(f.source_id)
        try:
            result = parse_transform(f.transform).result_type(source) if source is not None else PrimitiveType("int")
        except Exception:
            result = PrimitiveType("string")
        out.append((f.field_id, f.name, result))
    return out


def _map_out(m: dict[int, Any] | None) -> list[dict[str, Any]] | None:
    if m is None:
        return None
    return [{"key": k, "value": v} for k, v in sorted(m.items())]


def _partition_out(t: PrimitiveType, v: Any) -> Any:
    if v is None:
        return None
    if t.base == "decimal":
        # fastavro writes Decimal for a fixed decimal itself; an int is an unscaled value.
        if isinstance(v, int):
            v = decimal.Decimal(v).scaleb(-t.scale)
        return v
    if t.base == "uuid":
        # A uuid is an Avro fixed[16] (logicalType uuid): fastavro writes it from bytes only.
        if isinstance(v, (bytes, bytearray)):
            return bytes(v)
        return (v if isinstance(v, uuid.UUID) else uuid.UUID(str(v))).bytes
    return v


def write_manifest(entries: list[ManifestEntry], *, format_version: int, spec: PartitionSpec, schema: Schema,
                   content: ManifestContent, content_stats_schema: dict[str, Any] | None = None,
                   path_writer: Any = None) -> bytes:
    """Serialize a manifest with the writer schema and key-value metadata of its version."""
    import fastavro

    pfields = partition_fields(spec, schema)
    partition = avro_schemas.partition_record(pfields)
    avro_schema = avro_schemas.manifest_entry_schema(format_version, partition, content_stats_schema)
    meta = {
        "schema": json.dumps(schema.to_json()),
        "schema-id": str(schema.schema_id),
        "partition-spec": json.dumps(spec.fields_json(format_version)),
        "partition-spec-id": str(spec.spec_id),
        "format-version": str(format_version),
    }
    if format_version >= 2:
        meta["content"] = "deletes" if content == ManifestContent.DELETES else "data"
    records = []
    for e in entries:
        df = e.data_file
        path = path_writer(df.file_path) if path_writer else df.file_path
        d: dict[str, Any] = {
            "content": int(df.content), "file_path": path, "file_format": df.file_format.upper(),
            "partition": {avro_schemas.make_compatible_name(name): _partition_out(t, v)
                          for (fid, name, t), v in zip(pfields, df.partition)},
            "record_count": df.record_count, "file_size_in_bytes": df.file_size_in_bytes,
            "block_size_in_bytes": 67108864,
            "column_sizes": _map_out(df.column_sizes), "value_counts": _map_out(df.value_counts),
            "null_value_counts": _map_out(df.null_value_counts), "nan_value_counts": _map_out(df.nan_value_counts),
            "lower_bounds": _map_out(df.lower_bounds), "upper_bounds": _map_out(df.upper_bounds),
            "key_metadata": df.key_metadata, "split_offsets": df.split_offsets, "equality_ids": df.equality_ids,
            "sort_order_id": df.sort_order_id, "first_row_id": df.first_row_id,
            "referenced_data_file": (path_writer(df.referenced_data_file) if path_writer and df.referenced_data_file
                                     else df.referenced_data_file),
            "content_offset": df.content_offset, "content_size_in_bytes": df.content_size_in_bytes,
            "content_stats": df.content_stats,
        }
        records.append({"status": int(e.status), "snapshot_id": e.snapshot_id, "sequence_number": e.sequence_number,
                        "file_sequence_number": e.file_sequence_number, "data_file": d})
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(avro_schema), records, metadata=meta, codec="deflate")
    return buf.getvalue()


def write_manifest_list(manifests: list[ManifestFile], *, format_version: int, snapshot_id: int,
                        parent_snapshot_id: int | None, sequence_number: int,
                        first_row_id: int | None = None, path_writer: Any = None) -> bytes:
    import fastavro

    meta = {"snapshot-id": str(snapshot_id), "parent-snapshot-id": str(parent_snapshot_id) if parent_snapshot_id is not None else "null",
            "format-version": str(format_version)}
    if format_version >= 2:
        meta["sequence-number"] = str(sequence_number)
    if format_version >= 3 and first_row_id is not None:
        meta["first-row-id"] = str(first_row_id)
    records = []
    for m in manifests:
        records.append({
            "manifest_path": path_writer(m.manifest_path) if path_writer else m.manifest_path,
            "manifest_length": m.manifest_length, "partition_spec_id": m.partition_spec_id,
            "content": int(m.content), "sequence_number": m.sequence_number,
            "min_sequence_number": m.min_sequence_number, "added_snapshot_id": m.added_snapshot_id,
            "added_files_count": m.added_files_count, "existing_files_count": m.existing_files_count,
            "deleted_files_count": m.deleted_files_count, "added_rows_count": m.added_rows_count,
            "existing_rows_count": m.existing_rows_count, "deleted_rows_count": m.deleted_rows_count,
            "partitions": None if m.partitions is None else [
                {"contains_null": p.contains_null, "contains_nan": p.contains_nan,
                 "lower_bound": p.lower_bound, "upper_bound": p.upper_bound} for p in m.partitions],
            "key_metadata": m.key_metadata, "first_row_id": m.first_row_id,
        })
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(avro_schemas.manifest_file_schema(format_version)), records,
                    metadata=meta, codec="deflate")
    return buf.getvalue()
