"""Listing the live files of a snapshot column by column: each manifest decoded by polars'
Avro reader into columns, inheritance applied as column expressions (the same rules as
:func:`icectl.formats.manifest.read_manifest`), and only the columns a listing shows turned into
Python values. This is what keeps ``icectl files`` fast on tables of hundreds of thousands of
files; when polars is missing or cannot read a manifest, the caller falls back to the entry-by-
entry reader.
"""
from __future__ import annotations

from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterator

from icectl.errors import IcectlError
from icectl.formats.avro import failures, field_index, internal_struct, open_avro, read_frame, record_type
from icectl.formats.manifest import ManifestContent, ManifestFile, check_entry_schema
from icectl.spec.metadata import Snapshot
from icectl.table.loaded import Table


class ColumnarUnavailable(Exception):
    """polars is missing, not wanted, or cannot read this manifest: read it entry by entry."""

COLUMNS = ("content", "file_path", "file_format", "spec_id", "partition", "record_count", "file_size_in_bytes",
           "data_sequence_number", "file_sequence_number", "snapshot_id", "status", "first_row_id",
           "referenced_data_file", "content_offset", "content_size_in_bytes", "equality_ids")


def manifest_frame(table: Table, m: ManifestFile) -> Any:
    """A manifest decoded by polars into a DataFrame (columns ``status``, ``data_file``, ...).
    Raises ColumnarUnavailable when polars is missing or not wanted, or the file is truncated,
    corrupt or not a manifest polars can read: the entry-by-entry reader then reads it, with its
    checks and messages. A manifest whose writer schema no Iceberg reader reads is an
    InvalidMetadataError (:func:`icectl.formats.manifest.check_entry_schema`)."""
    data = table.io.read(m.manifest_path)
    if m.manifest_length and len(data) < m.manifest_length:
        raise ColumnarUnavailable("truncated")
    try:
        avro = open_avro(data, source=m.manifest_path)
        check_entry_schema(avro.schema, source=m.manifest_path, text=avro.schema_text)
        if _required_may_be_null(avro.schema):
            raise ColumnarUnavailable("a required data_file field may be null")  # the entry reader names it
        df = read_frame(avro)
    except IcectlError:
        raise ColumnarUnavailable("not a manifest polars can read") from None
    if df is None or "data_file" not in df.columns or "status" not in df.columns:
        raise ColumnarUnavailable("not a manifest polars can read")
    return df


REQUIRED = ("content", "file_path", "file_format", "record_count", "file_size_in_bytes")


def _required_may_be_null(schema: Any) -> bool:
    """Whether the writer schema lets a required field (``status``, or one of data_file's) be null
    (a union with null): the columns would then need a null check each; Iceberg's writers never
    do this."""
    top = schema if isinstance(schema, dict) else {}
    i = field_index(top, "data_file")
    df = record_type(top["fields"][i]["type"]) if i is not None else None
    fields = [f for f in top.get("fields", []) if f.get("name") == "status"]
    fields += [f for f in (df or {}).get("fields", []) if f.get("name") in REQUIRED]
    return any(isinstance(f.get("type"), list) for f in fields)


def _manifest_rows(table: Table, m: ManifestFile) -> list[tuple]:
    df = manifest_frame(table, m)
    try:
        rows = _live_rows(df, m)
    except failures():  # a manifest whose columns are not what they should be: read it entry by entry
        raise ColumnarUnavailable("unexpected columns") from None
    spec_id = m.partition_spec_id
    v4 = table.metadata.format_version >= 4
    result = []
    for (content_, path, fmt, part, rc, size, seq, fseq, sid, st, frid, ref, off, clen, eq) in rows:
        if v4:
            path = table.resolve(path)
            ref = table.resolve(ref) if ref else ref
        result.append((content_, path, str(fmt).lower(), spec_id,
                       tuple(part.values()) if isinstance(part, dict) else (), rc, size, seq, fseq, sid, st, frid,
                       ref, off, clen, eq))
    return result


def _live_rows(df: Any, m: ManifestFile) -> list[tuple]:
    """The live entries of a manifest's frame, inheritance applied, as tuples."""
    import polars as pl

    dtype = df.schema["data_file"]
    names = {f.name: f.dtype for f in dtype.fields}

    def field(name: str, default: Any = None) -> Any:
        if name in names:
            return pl.col("data_file").struct.field(name)
        return pl.lit(default)

    def top(name: str) -> Any:
        return pl.col(name) if name in df.columns else pl.lit(None, dtype=pl.Int64)

    if not df.get_column("status").is_in([0, 1, 2]).all():
        raise ColumnarUnavailable("an entry status that is not 0, 1 or 2")  # the entry reader says which
    v1 = "sequence_number" not in df.columns
    status = pl.col("status")
    added = status == 1
    seq_default = m.sequence_number
    legacy = v1 or m.sequence_number == 0

    def inherit(col: Any) -> Any:
        expr = pl.when(col.is_null() & added).then(pl.lit(seq_default)).otherwise(col)
        if legacy:
            expr = pl.when(expr.is_null()).then(pl.lit(0)).otherwise(expr)
        return expr

    content = field("content", 0).cast(pl.Int32)
    record_count = field("record_count").cast(pl.Int64)
    first_row_id = field("first_row_id").cast(pl.Int64) if "first_row_id" in names else pl.lit(None, dtype=pl.Int64)
    if m.first_row_id is not None:
        inherits = (content == 0) & first_row_id.is_null() & added
        counts = pl.when(inherits).then(record_count).otherwise(0)
        assigned = pl.lit(m.first_row_id) + counts.cum_sum() - counts
        first_row_id = pl.when(inherits).then(assigned).otherwise(first_row_id)
    partition = internal_struct(pl, field("partition"), names["partition"]) if "partition" in names else pl.lit(None)
    out = df.select(
        content.alias("content"),
        field("file_path").alias("file_path"),
        field("file_format").alias("file_format"),
        partition.alias("partition"),
        record_count.alias("record_count"),
        field("file_size_in_bytes").cast(pl.Int64).alias("file_size_in_bytes"),
        inherit(top("sequence_number")).alias("seq"),
        inherit(top("file_sequence_number")).alias("fseq"),
        pl.when(top("snapshot_id").is_null()).then(pl.lit(m.added_snapshot_id)).otherwise(top("snapshot_id")).alias("sid"),
        status.alias("status"),
        first_row_id.alias("first_row_id"),
        field("referenced_data_file").alias("referenced_data_file"),
        field("content_offset").alias("content_offset"),
        field("content_size_in_bytes").alias("content_size_in_bytes"),
        field("equality_ids").alias("equality_ids"),
    ).filter(pl.col("status") != 2)
    return out.rows()


def live_file_rows(table: Table, snapshot: Snapshot | None, *, workers: int = 2) -> Iterator[tuple]:
    """Tuples in the order of :data:`COLUMNS` for every live entry of a snapshot, in manifest
    order, streamed: a few manifests are decoded ahead (polars releases the GIL, so two threads
    use two cores) and only those are held, however many files the snapshot has. A manifest
    polars cannot read is read entry by entry (its checks and error messages)."""
    if snapshot is None:
        return
    manifests = table.manifests(snapshot)
    manifests = [m for m in manifests if m.content in (ManifestContent.DATA, ManifestContent.DELETES)]
    for chunk in bounded_map(lambda m: _rows_any(table, m), manifests, workers=workers):
        yield from chunk


def _rows_any(table: Table, m: ManifestFile) -> list[tuple]:
    try:
        return _manifest_rows(table, m)
    except ColumnarUnavailable:
        pass
    out = []
    for e in table.read_entries(m, live_only=True, with_stats=False):
        df = e.data_file
        out.append((int(df.content), df.file_path, df.file_format, df.spec_id, df.partition, df.record_count,
                    df.file_size_in_bytes, e.sequence_number, e.file_sequence_number, e.snapshot_id, int(e.status),
                    df.first_row_id, df.referenced_data_file, df.content_offset, df.content_size_in_bytes,
                    df.equality_ids))
    return out


def bounded_map(fn: Callable[[Any], Any], items: list, *, workers: int = 2, ahead: int | None = None) -> Iterator[Any]:
    """``fn`` of each item, in order, computed by ``workers`` threads at most ``ahead`` (default
    twice the workers) items ahead of the consumer: unlike ``Executor.map``, results do not pile
    up in memory when the consumer is slower than the workers."""
    if len(items) <= 1 or workers <= 1:
        for i in items:
            yield fn(i)
        return
    ahead = max(ahead or 2 * workers, 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        window: deque = deque()
        it = iter(items)
        for item in it:
            window.append(pool.submit(fn, item))
            if len(window) >= ahead:
                break
        try:
            while window:
                result = window.popleft().result()
                nxt = next(it, _END)
                if nxt is not _END:
                    window.append(pool.submit(fn, nxt))
                yield result
        finally:
            for f in window:
                f.cancel()


_END = object()
