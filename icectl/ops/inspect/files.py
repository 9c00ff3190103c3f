"""``files``: the live content files (data and deletes) of a snapshot or ref, streamed as rows with
their partition in human and JSON form."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from icectl.formats.manifest import content_kind
from icectl.spec.conversions import to_internal, to_json
from icectl.spec.metadata import Snapshot
from icectl.spec.transforms import parse_transform
from icectl.table.listing import live_file_frames
from icectl.table.loaded import Table
from icectl.errors import NotFoundError, UsageError


@dataclass
class FileRow:
    content: str  # data | position-deletes | equality-deletes | deletion-vector
    file_path: str
    file_format: str
    spec_id: int
    partition: dict[str, Any]  # partition field name -> JSON single value (Appendix D's JSON form)
    partition_display: dict[str, Any] = field(repr=False)  # name -> human value (the transform's)
    record_count: int
    file_size_in_bytes: int
    data_sequence_number: int | None
    file_sequence_number: int | None
    snapshot_id: int | None
    status: str
    first_row_id: int | None = None
    referenced_data_file: str | None = None
    content_offset: int | None = None
    content_size_in_bytes: int | None = None
    equality_ids: list[int] | None = None


def resolve_snapshot(table: Table, *, snapshot_id: int | None = None, ref: str | None = None) -> Snapshot | None:
    md = table.metadata
    if snapshot_id is not None and ref is not None:
        raise UsageError("give --snapshot or --ref, not both")
    if snapshot_id is not None:
        s = md.snapshot_by_id(snapshot_id)
        if s is None:
            raise NotFoundError(f"snapshot {snapshot_id} does not exist in {table.name}")
        return s
    if ref is not None:
        r = md.all_refs.get(ref)
        if r is None:
            raise NotFoundError(f"ref {ref!r} does not exist in {table.name}")
        s = md.snapshot_by_id(r.snapshot_id)
        if s is None:
            raise NotFoundError(f"ref {ref!r} points at snapshot {r.snapshot_id}, which does not exist")
        return s
    return md.current_snapshot


def list_files(table: Table, *, snapshot_id: int | None = None, ref: str | None = None,
               content: str | None = None) -> FileListing:
    """The live files of a snapshot (current, ``snapshot_id`` or ``ref``), streamed in manifest
    order: a bad snapshot or ref raises here; the manifests are read as the rows are consumed,
    a few at a time, so a table of millions of files is listed in bounded memory."""
    snap = resolve_snapshot(table, snapshot_id=snapshot_id, ref=ref)
    return FileListing(table, snap, content)


# FileRow's fields as columns of a FileFrame, in order (all but partition_display)
FRAME_COLUMNS = ("content", "file_path", "file_format", "spec_id", "partition", "record_count", "file_size_in_bytes",
                 "data_sequence_number", "file_sequence_number", "snapshot_id", "status", "first_row_id",
                 "referenced_data_file", "content_offset", "content_size_in_bytes", "equality_ids")


@dataclass
class FileFrame:
    """A run of rows as columns: :data:`FRAME_COLUMNS`, each holding what the FileRow field of its
    name holds, except ``partition``: an index into the listing's ``partitions``."""

    frame: Any  # a polars DataFrame


class FileListing:
    """The rows of ``files``, consumed once: row by row as FileRow (``for row in listing``), or a
    manifest at a time as columns (:meth:`chunks`), so that a renderer turns 200,000 rows into text
    without a Python object per row."""

    def __init__(self, table: Table, snapshot: Snapshot | None, content: str | None):
        self.table = table
        self.snapshot = snapshot
        self.content = content
        # partition index -> (name -> JSON single value, name -> human value); each distinct
        # partition is formatted once (tables have far fewer partitions than files)
        self.partitions: list[tuple[dict[str, Any], dict[str, Any]]] = []
        self._index: dict[tuple, int] = {}
        md = table.metadata
        self._spec_info: dict[int, list[tuple[str, Any, Any, Any]]] = {}
        for spec in md.partition_specs:
            info = []
            for f in spec.fields:
                src = md.find_type(f.source_id)
                try:
                    tr = parse_transform(f.transform)
                    rt = tr.result_type(src) if src is not None else None
                except Exception:
                    tr, rt = None, None
                info.append((f.name, tr, rt, src))
            self._spec_info[spec.spec_id] = info

    def partition_index(self, spec_id: int, values: tuple) -> int:
        """The index in ``partitions`` of a partition tuple (values as the listing reads them)."""
        key = (spec_id, values)
        i = self._index.get(key)
        if i is None:
            info = self._spec_info.get(spec_id, [])
            values = tuple(to_internal(rt, v) for (_, _, rt, _), v in zip(info, values))
            i = self._index[key] = len(self.partitions)
            self.partitions.append(({name: json_partition(rt, v) for (name, tr, rt, src), v in zip(info, values)},
                                    {name: _human_partition(tr, src, v) for (name, tr, rt, src), v in zip(info, values)}))
        return i

    def chunks(self) -> Iterator[FileFrame | list[FileRow]]:
        """The rows a manifest at a time: a FileFrame for a manifest polars reads, FileRows for
        one read entry by entry (a row of either never both); manifests with no row selected
        give nothing."""
        import polars as pl

        kinds: dict[tuple[int, str], str] = {}  # (content, format) -> kind: content_kind once per pair
        lower: dict[str, str] = {}
        for chunk in live_file_frames(self.table, self.snapshot):
            if isinstance(chunk, list):
                rows = list(self._rows(chunk, kinds))
                if rows:
                    yield rows
                continue
            frame = chunk.frame
            if frame.height == 0:
                continue
            # the few distinct formats and (content, format) pairs, mapped in Python: the rules
            # stay in content_kind and str.lower
            formats = frame.get_column("file_format").unique().to_list()
            for f in formats:
                if f not in lower:
                    lower[f] = str(f).lower()
            fmt = pl.col("file_format").replace_strict({f: lower[f] for f in formats}, return_dtype=pl.String)
            pairs = frame.select(pl.col("content"), fmt).unique().rows()
            kind = pl.lit(None, dtype=pl.String)
            for c, f in pairs:
                k = kinds.get((c, f))
                if k is None:
                    k = kinds[(c, f)] = content_kind(c, f)
                kind = pl.when((pl.col("content") == c) & (fmt == f)).then(pl.lit(k)).otherwise(kind)
            index = pl.Series([self.partition_index(chunk.spec_id, p) for p in chunk.partitions], dtype=pl.UInt32)
            out = frame.select(
                kind.alias("content"), "file_path", fmt.alias("file_format"),
                pl.lit(chunk.spec_id, dtype=pl.Int64).alias("spec_id"),
                pl.lit(index).gather(pl.col("partition_key")).alias("partition"),
                "record_count", "file_size_in_bytes", pl.col("sequence_number").alias("data_sequence_number"),
                "file_sequence_number", "snapshot_id",
                pl.col("status").replace_strict(_STATUS, return_dtype=pl.String),
                "first_row_id", "referenced_data_file", "content_offset", "content_size_in_bytes", "equality_ids")
            if self.content is not None:
                out = out.filter(pl.col("content") == self.content)
                if out.height == 0:
                    continue
            yield FileFrame(out)

    def _rows(self, tuples: list[tuple], kinds: dict[tuple[int, str], str]) -> Iterator[FileRow]:
        partitions = self.partitions
        for (c, path, fmt, spec_id, values, rc, size, seq, fseq, sid, st, frid, ref, off, clen, eq) in tuples:
            kind = kinds.get((c, fmt))
            if kind is None:
                kind = kinds[(c, fmt)] = content_kind(c, fmt)
            if self.content is not None and kind != self.content:
                continue
            part_json, part = partitions[self.partition_index(spec_id, values)]
            # positional, in FileRow's field order
            yield FileRow(kind, path, fmt, spec_id, part_json, part, rc, size, seq, fseq, sid, _STATUS[st], frid, ref,
                          off, clen, list(eq) if eq is not None else None)

    def rows_of(self, chunk: FileFrame | list[FileRow]) -> Iterator[FileRow]:
        """A chunk's rows as FileRow."""
        if isinstance(chunk, list):
            yield from chunk
            return
        partitions = self.partitions
        for (kind, path, fmt, spec_id, p, rc, size, seq, fseq, sid, st, frid, ref, off, clen, eq) in \
                chunk.frame.iter_rows():
            part_json, part = partitions[p]
            yield FileRow(kind, path, fmt, spec_id, part_json, part, rc, size, seq, fseq, sid, st, frid, ref,
                          off, clen, eq)

    def __iter__(self) -> Iterator[FileRow]:
        for chunk in self.chunks():
            yield from self.rows_of(chunk)


_STATUS = {0: "existing", 1: "added", 2: "deleted"}


def _human_partition(tr: Any, source: Any, v: Any) -> Any:
    if v is None:
        return None
    try:
        return tr.human(v, source) if tr is not None else str(v)
    except Exception:
        return str(v)


def json_partition(rt: Any, v: Any) -> Any:
    """A partition value in Appendix D's JSON form for its result type ``rt`` (``str`` when it has none
    or it does not convert)."""
    if v is None or rt is None:
        return v if isinstance(v, (int, float, str, bool)) or v is None else str(v)
    try:
        return to_json(rt, v)
    except Exception:
        return str(v)
