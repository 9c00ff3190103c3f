"""Manifest lists and manifests: the model, reading (with inheritance) and writing, through
fastavro (spec: "Manifests", "Manifest Lists", "Sequence Number Inheritance",
"First Row ID Inheritance", Appendix E).

Partition values and bounds are held in Iceberg's internal representation (dates as days,
timestamps as micro- or nanoseconds, decimals as ``Decimal``), whatever fastavro's logical-type
conversion returned.
"""
from __future__ import annotations

import datetime as _dt
import io
import json
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Iterator

from icectl.formats import avro_schemas
from icectl.spec.partitioning import PartitionSpec
from icectl.spec.types import PrimitiveType, Schema
from icectl.errors import InvalidMetadataError


class ManifestContent(IntEnum):
    DATA = 0
    DELETES = 1


class FileContent(IntEnum):
    DATA = 0
    POSITION_DELETES = 1
    EQUALITY_DELETES = 2


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
        c = int(self.content)  # plain ints: this runs once per file in listings
        if c == 0:
            return "data"
        if c == 2:
            return "equality-deletes"
        return "deletion-vector" if self.file_format.lower() == "puffin" else "position-deletes"


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

    def has_added_or_existing(self) -> bool:
        return (self.added_files_count or 0) + (self.existing_files_count or 0) > 0 or self.added_files_count is None


# ---------------------------------------------------------------------------------------------
# Reading

def _avro_reader(data: bytes, source: str, *, prune: frozenset[str] = frozenset()):
    """An Avro reader; with ``prune``, a reader schema that skips those data_file fields, so
    fastavro decodes less (the metric maps are most of a manifest's bytes)."""
    import fastavro

    try:
        reader = fastavro.reader(io.BytesIO(data))
        if prune:
            pruned = _pruned_schema(reader.writer_schema, prune)
            if pruned is not None:
                reader = fastavro.reader(io.BytesIO(data), reader_schema=pruned)
        return reader
    except Exception as e:  # fastavro raises ValueError, EOFError, SchemaParseException...
        raise InvalidMetadataError(f"{source}: not a valid Avro file ({e.__class__.__name__}: {e})") from None


STATS_FIELDS = frozenset({"column_sizes", "value_counts", "null_value_counts", "nan_value_counts",
                          "distinct_counts", "lower_bounds", "upper_bounds", "content_stats", "key_metadata",
                          "split_offsets"})


def _pruned_schema(writer_schema: Any, prune: frozenset[str]) -> Any:
    import copy

    schema = copy.deepcopy(writer_schema)
    if not isinstance(schema, dict):
        return None
    for f in schema.get("fields", []):
        if f.get("name") == "data_file" and isinstance(f.get("type"), dict):
            df = f["type"]
            df["fields"] = [x for x in df["fields"] if x.get("name") not in prune]
            return schema
    return None


def _records(reader, source: str) -> Iterator[dict[str, Any]]:
    try:
        yield from reader
    except Exception as e:
        raise InvalidMetadataError(f"{source}: truncated or corrupt Avro data ({e.__class__.__name__}: {e})") from None


def read_manifest_list(data: bytes, *, source: str = "manifest list") -> list[ManifestFile]:
    """Read a manifest list; v1 lists read with content 0 and sequence numbers 0 (Appendix E)."""
    reader = _avro_reader(data, source)
    out = []
    for r in _records(reader, source):
        try:
            parts = r.get("partitions")
            out.append(ManifestFile(
                manifest_path=r["manifest_path"],
                manifest_length=int(r["manifest_length"]),
                partition_spec_id=int(r["partition_spec_id"]),
                content=ManifestContent(r.get("content") or 0),
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
                    FieldSummary(p["contains_null"], p.get("contains_nan"), p.get("lower_bound"), p.get("upper_bound"))
                    for p in parts],
                key_metadata=r.get("key_metadata"),
                first_row_id=r.get("first_row_id"),
            ))
        except (KeyError, TypeError, ValueError) as e:
            raise InvalidMetadataError(f"{source}: invalid manifest list entry: {e}") from None
    return out


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


def _header(reader) -> ManifestHeader:
    meta = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in reader.metadata.items()
            if not k.startswith("avro.")}
    return ManifestHeader(
        format_version=int(meta.get("format-version", 1)),
        content=ManifestContent.DELETES if meta.get("content") == "deletes" else ManifestContent.DATA,
        partition_spec_id=int(meta["partition-spec-id"]) if meta.get("partition-spec-id") is not None else None,
        schema_json=meta.get("schema"),
        partition_spec_json=meta.get("partition-spec"),
        raw=meta,
    )


_STATUS = {s.value: s for s in EntryStatus}
_CONTENT = {c.value: c for c in FileContent}


def read_manifest(data: bytes, manifest: ManifestFile, *, partition_types: list[PrimitiveType] | None = None,
                  source: str | None = None, live_only: bool = False,
                  with_stats: bool = True) -> list[ManifestEntry]:
    """Read a manifest's entries with inheritance applied from its manifest-list entry.

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
    reader = _avro_reader(data, source, prune=frozenset() if with_stats else STATS_FIELDS)
    header = _header(reader)
    spec_id = manifest.partition_spec_id
    next_row_id = manifest.first_row_id
    out: list[ManifestEntry] = []
    records = _fast_records(data, with_stats)
    for r in (records if records is not None else _records(reader, source)):
        try:
            status = _STATUS[r["status"]]
            if live_only and status is EntryStatus.DELETED:
                continue
            df = _data_file(r["data_file"], spec_id, partition_types, with_stats)
            snapshot_id = r.get("snapshot_id")
            if snapshot_id is None:
                snapshot_id = manifest.added_snapshot_id
            seq = r.get("sequence_number")
            fseq = r.get("file_sequence_number")
            if status is EntryStatus.ADDED:
                if seq is None:
                    seq = manifest.sequence_number
                if fseq is None:
                    fseq = manifest.sequence_number
            elif header.format_version == 1 or manifest.sequence_number == 0:
                seq = 0 if seq is None else seq
                fseq = 0 if fseq is None else fseq
            if df.content is FileContent.DATA and df.first_row_id is None and next_row_id is not None \
                    and status is EntryStatus.ADDED:
                df.first_row_id = next_row_id
                next_row_id += df.record_count
            out.append(ManifestEntry(status, snapshot_id, seq, fseq, df))
        except InvalidMetadataError:
            raise
        except (KeyError, TypeError, ValueError) as e:
            raise InvalidMetadataError(f"{source}: invalid manifest entry: {e}") from None
    return out


def _fast_records(data: bytes, with_stats: bool) -> list[dict[str, Any]] | None:
    """Manifest records decoded by polars' Avro reader (Rust), in fastavro's shape; None when
    polars is missing or cannot read this file, and fastavro reads it instead.

    fastavro spends ~30 µs per manifest entry, most of it on the metric maps; polars decodes the
    same entries several times faster, which is what makes listing 200,000 files quick.
    """
    import os

    if os.environ.get("ICECTL_AVRO_READER") == "fastavro":
        return None
    try:
        import polars as pl
    except ImportError:
        return None
    try:
        df = pl.read_avro(io.BytesIO(data))
        if "data_file" not in df.columns or "status" not in df.columns:
            return None
        dtype = df.schema["data_file"]
        fields = [f.name for f in dtype.fields if with_stats or f.name not in STATS_FIELDS]
        exprs = []
        for n in fields:
            e = pl.col("data_file").struct.field(n)
            if n == "partition":
                e = _internal_partition(pl, e, next(f.dtype for f in dtype.fields if f.name == n))
            exprs.append(e)
        df = df.with_columns(pl.struct(exprs).alias("data_file"))
        return df.to_dicts()
    except Exception:
        return None


def _internal_partition(pl: Any, expr: Any, dtype: Any) -> Any:
    """Partition values converted in polars to Iceberg's internal form (days, micros), so the
    per-row Python work is only building the tuple."""
    parts = []
    for f in getattr(dtype, "fields", []):
        e = expr.struct.field(f.name)
        if f.dtype == pl.Date:
            e = e.cast(pl.Int32)
        elif isinstance(f.dtype, pl.Datetime):
            e = e.dt.epoch(f.dtype.time_unit if f.dtype.time_unit in ("us", "ns") else "us")
        elif f.dtype == pl.Time:
            e = e.cast(pl.Int64) // 1000
        parts.append(e.alias(f.name))
    if not parts:
        return expr
    return pl.struct(parts).alias("partition")


def read_manifest_header(data: bytes, *, source: str = "manifest") -> ManifestHeader:
    return _header(_avro_reader(data, source))


def _int_map(v: list[dict[str, Any]] | dict[int, Any] | None) -> dict[int, Any] | None:
    if v is None:
        return None
    if isinstance(v, dict):
        return {int(k): val for k, val in v.items()}
    return {int(kv["key"]): kv["value"] for kv in v}


def _data_file(d: dict[str, Any], spec_id: int, partition_types: list[PrimitiveType] | None,
               with_stats: bool) -> DataFile:
    part = d.get("partition") or {}
    values = tuple(part.values())
    if partition_types is not None:
        values = tuple(to_internal(t, v) for t, v in zip(partition_types, values))
    else:
        values = tuple(to_internal(None, v) for v in values)
    df = DataFile(
        file_path=d["file_path"],
        file_format=str(d["file_format"]).lower(),
        partition=values,
        record_count=int(d["record_count"]),
        file_size_in_bytes=int(d["file_size_in_bytes"]),
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


_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_TZ = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_EPOCH_DATE = _dt.date(1970, 1, 1)


def to_internal(t: PrimitiveType | None, v: Any) -> Any:
    """Undo fastavro's logical-type conversion: dates to days, times and timestamps to micros."""
    if v is None:
        return None
    if t is not None and t.base == "uuid" and isinstance(v, (bytes, bytearray)) and len(v) == 16:
        import uuid as _uuid

        return _uuid.UUID(bytes=bytes(v))  # fastavro gives a fixed[16] uuid as bytes
    if isinstance(v, _dt.datetime):
        delta = v - (_EPOCH_TZ if v.tzinfo else _EPOCH)
        micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
        if t is not None and t.base in ("timestamp_ns", "timestamptz_ns"):
            return micros * 1000
        return micros
    if isinstance(v, _dt.date):
        return (v - _EPOCH_DATE).days
    if isinstance(v, _dt.time):
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
    return v


# ---------------------------------------------------------------------------------------------
# Writing

def partition_fields(spec: PartitionSpec, schema: Schema | Any) -> list[tuple[int, str, PrimitiveType]]:
    """(field id, name, result type) of each partition field, as the manifest's partition struct.

    ``schema`` is a Schema or a function from a field id to its type (to find source columns
    that only older schemas still have).
    """
    from icectl.spec.transforms import parse_transform

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
        import decimal

        # fastavro writes Decimal for a fixed decimal itself; an int is an unscaled value.
        if isinstance(v, int):
            v = decimal.Decimal(v).scaleb(-t.scale)
        return v
    if t.base == "uuid":
        import uuid as _uuid

        # A uuid is an Avro fixed[16] (logicalType uuid): fastavro writes it from bytes only.
        if isinstance(v, (bytes, bytearray)):
            return bytes(v)
        return (v if isinstance(v, _uuid.UUID) else _uuid.UUID(str(v))).bytes
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
