"""Listing the live files of a snapshot column by column: each manifest decoded by polars'
Avro reader into the manifest-entry frame (:mod:`icectl.formats.entries`), inheritance applied
by its one implementation of the rules, and only the columns a listing shows turned into
Python values. This is what keeps ``icectl files`` fast on tables of hundreds of thousands of
files; when polars is missing or cannot read a manifest, the caller falls back to the entry-by-
entry reader.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterator

from icectl.errors import IcectlError
from icectl.formats.avro import failures, field_index, open_avro, read_frame, record_type
from icectl.formats.entries import PARTITION_COLUMN, entry_frame, inherited, positions
from icectl.formats.manifest import (DataFile, EntryStatus, FileContent, ManifestContent, ManifestEntry, ManifestFile,
                                    check_entry_schema)
from icectl.spec.conversions import to_internal
from icectl.spec.metadata import Snapshot
from icectl.table.loaded import Table


class ColumnarUnavailable(Exception):
    """polars is missing, not wanted, or cannot read this manifest: read it entry by entry."""

COLUMNS = ("content", "file_path", "file_format", "spec_id", "partition", "record_count", "file_size_in_bytes",
           "data_sequence_number", "file_sequence_number", "snapshot_id", "status", "first_row_id",
           "referenced_data_file", "content_offset", "content_size_in_bytes", "equality_ids")


def decoded_manifest(table: Table, m: ManifestFile, *,
                     each: Callable[[Any], Any] | None = None) -> tuple[Any, int]:
    """A manifest as polars decodes it (columns ``status``, ``data_file``, ...; nothing
    converted, nothing inherited) and its header's format version: for a reader that needs a few
    raw columns only (reachability). Raises ColumnarUnavailable when polars is missing or not
    wanted, or the file is truncated, corrupt or not a manifest polars can read: the
    entry-by-entry reader then reads it, with its checks and messages. A manifest whose writer
    schema no Iceberg reader reads is an InvalidMetadataError
    (:func:`icectl.formats.manifest.check_entry_schema`). With ``each``, the frame is given by
    parts to ``each`` as :func:`icectl.formats.avro.read_frame` does, and the answer is theirs."""
    data = table.io.read(m.manifest_path)
    if m.manifest_length and len(data) < m.manifest_length:
        raise ColumnarUnavailable("truncated")
    try:
        avro = open_avro(data, source=m.manifest_path)
        check_entry_schema(avro.schema, source=m.manifest_path, text=avro.schema_text)
        if _required_may_be_null(avro.schema):
            raise ColumnarUnavailable("a required data_file field may be null")  # the entry reader names it
        raw = read_frame(avro, each=None if each is None else lambda df: each(_entries_checked(df)))
        format_version = int(avro.metadata.get("format-version", 1))
    except (IcectlError, ValueError):
        raise ColumnarUnavailable("not a manifest polars can read") from None
    if raw is None:
        raise ColumnarUnavailable("not a manifest polars can read")
    return (raw if each is not None else _entries_checked(raw)), format_version


def _entries_checked(raw: Any) -> Any:
    """``raw`` when it is a manifest's entries as polars decodes them (``status``, ``data_file``)."""
    if "data_file" not in raw.columns or "status" not in raw.columns:
        raise ColumnarUnavailable("not a manifest polars can read")
    return raw


def manifest_frame(table: Table, m: ManifestFile) -> Any:
    """A manifest decoded by polars (:func:`decoded_manifest`) into the normalized entry frame
    (:func:`icectl.formats.entries.entry_frame`) with inheritance applied
    (:func:`icectl.formats.entries.inherited`), as a LazyFrame: a reader converts only the
    columns it selects, and a value polars cannot convert fails when it collects.
    ColumnarUnavailable as :func:`decoded_manifest`."""
    raw, format_version = decoded_manifest(table, m)
    return _inherited_frame(raw, [m], [format_version])


def _inherited_frame(raw: Any, manifests: list[ManifestFile], versions: list[int],
                     sizes: list[int] | None = None) -> Any:
    """:func:`manifest_frame` of the entries of ``manifests`` as decoded (``raw``: their frames
    stacked, ``sizes`` rows each, when there are several; ``versions``: their headers' format
    versions). Stacked, the frame has ``_m`` (the manifest's position) and each manifest's values
    are inherited on its own rows."""
    import polars as pl

    try:
        # the smallest and largest status, not a test per entry (a null status is not checked here)
        status = raw.get_column("status")
        low, high = status.min(), status.max()
        if not status.dtype.is_integer() or (low is not None and (low < 0 or high > 2)):
            raise ColumnarUnavailable("an entry status that is not 0, 1 or 2")  # the entry reader says which
        frame = entry_frame(raw, with_bounds=False, lazy=True)
    except (ValueError, *failures()):  # columns that are not what they should be: read it entry by entry
        raise ColumnarUnavailable("unexpected columns") from None
    if len(manifests) == 1:
        m = manifests[0]
        return frame.with_columns(**inherited(manifest_sequence_number=m.sequence_number,
                                              added_snapshot_id=m.added_snapshot_id, first_row_id=m.first_row_id,
                                              format_version=versions[0]))
    at = pl.col("_m")

    def each(values: list[Any]) -> Any:  # a manifest's value on each of its rows
        return pl.lit(pl.Series(values, dtype=pl.Int64)).gather(at)

    frids = [m.first_row_id for m in manifests]
    frame = frame.with_columns(pl.lit(positions(list(range(len(manifests))), sizes or [])).alias("_m"))
    return frame.with_columns(**inherited(
        manifest_sequence_number=each([m.sequence_number for m in manifests]),
        added_snapshot_id=each([m.added_snapshot_id for m in manifests]),
        first_row_id=each(frids) if any(f is not None for f in frids) else None,
        format_version=each(versions), by="_m"))


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
    frame = manifest_frame(table, m)
    try:
        rows = _live_rows(frame)
    except failures():  # a manifest whose columns are not what they should be: read it entry by entry
        raise ColumnarUnavailable("unexpected columns") from None
    spec_id = m.partition_spec_id
    v4 = table.metadata.format_version >= 4
    result = []
    for (content_, path, fmt, rc, size, seq, fseq, sid, st, frid, ref, off, clen, eq, *part) in rows:
        if v4:
            path = table.resolve(path)
            ref = table.resolve(ref) if ref else ref
        result.append((content_, path, str(fmt).lower(), spec_id, tuple(part), rc, size, seq, fseq, sid, st, frid,
                       ref, off, clen, eq))
    return result


def _live_rows(frame: Any) -> list[tuple]:
    """The live entries of a manifest's frame (inheritance applied) as tuples: the columns of
    :data:`COLUMNS` but ``spec_id`` and ``partition``, then the partition values."""
    return _live_frame(frame).rows()


# the entry frame's columns of a live row (``sequence_number``: the data sequence number), in the
# order of COLUMNS but ``spec_id`` and ``partition``
FRAME_COLUMNS = ("content", "file_path", "file_format", "record_count", "file_size_in_bytes", "sequence_number",
                 "file_sequence_number", "snapshot_id", "status", "first_row_id", "referenced_data_file",
                 "content_offset", "content_size_in_bytes", "equality_ids")


def _live_frame(frame: Any, columns: tuple[str, ...] = FRAME_COLUMNS) -> Any:
    """:func:`_live_rows` as a collected DataFrame (columns named as the entry frame's): the
    ``columns`` of :data:`FRAME_COLUMNS` asked for, then the partition values."""
    parts = [c for c in frame.collect_schema().names() if PARTITION_COLUMN.fullmatch(c)]
    return _live_query(frame, columns, parts).collect()


def _live_query(frame: Any, columns: tuple[str, ...], parts: list[str], extra: tuple[str, ...] = ()) -> Any:
    """:func:`_live_frame`'s query, not collected (``parts``: the frame's partition columns;
    ``extra``: columns kept after them)."""
    import polars as pl

    return frame.filter(pl.col("status") != 2).select(
        *(pl.col("content").fill_null(0).cast(pl.Int32) if c == "content" else c for c in columns), *parts, *extra)


@dataclass
class LiveFrame:
    """The live entries of one manifest as columns (:func:`live_file_frames`): ``frame`` holds the
    columns of :data:`COLUMNS` but ``spec_id`` and ``partition`` (named as the entry frame names
    them: :data:`FRAME_COLUMNS`, or those asked for), v4 paths resolved, and ``partition_key``:
    the index in ``partitions`` of the entry's partition tuple (its values as :func:`live_rows`
    gives them), each distinct tuple once, in the order of first appearance. Unkeyed (``keyed=False``
    to :func:`live_frames`: a reader that needs the partitions of a few rows only), ``partitions``
    is None and the frame ends with the partition values (``p0``, ``p1``, ...) instead of
    ``partition_key``."""

    spec_id: int
    frame: Any
    partitions: list[tuple] | None


def _manifest_frame_live(table: Table, m: ManifestFile, columns: tuple[str, ...] = FRAME_COLUMNS,
                         keyed: bool = True) -> LiveFrame:
    raw, format_version = decoded_manifest(table, m)
    return _live_of(table, [m], [raw], [format_version], columns, keyed)[0]


def _live_of(table: Table, manifests: list[ManifestFile], raws: list[Any], versions: list[int],
             columns: tuple[str, ...], keyed: bool) -> list[LiveFrame]:
    """The LiveFrame of each manifest, from their frames as decoded, in one query (stacked when
    there are several: frames of one schema). ColumnarUnavailable when a column is not what
    it should be."""
    import polars as pl

    sizes = [r.height for r in raws]
    stacked = len(raws) > 1
    try:
        raw = pl.concat(raws, rechunk=False) if stacked else raws[0]
    except failures():
        raise ColumnarUnavailable("frames of other schemas") from None
    frame = _inherited_frame(raw, manifests, versions, sizes)
    try:
        parts = [c for c in frame.collect_schema().names() if PARTITION_COLUMN.fullmatch(c)]
        query = _live_query(frame, columns, parts, ("_m",) if stacked else ())
        if keyed and parts:
            # a dense rank numbers the distinct tuples (in the same query: one collect); each
            # manifest's are renumbered by first appearance below
            query = query.with_columns((pl.struct(parts).rank("dense").cast(pl.UInt32) - 1).alias("_rank"))
        live = query.collect()
        if stacked:
            by = live.partition_by("_m", maintain_order=True, include_key=False, as_dict=True)
            pieces = [by.get((i,)) for i in range(len(manifests))]
            pieces = [live.clear().drop("_m") if p is None else p for p in pieces]  # no live row
        else:
            pieces = [live]
        frames = [_keyed(m, piece, parts, keyed) for m, piece in zip(manifests, pieces)]
    except failures():  # a manifest whose columns are not what they should be: read it entry by entry
        raise ColumnarUnavailable("unexpected columns") from None
    if table.metadata.format_version >= 4:  # a path that escapes the table location is an error, raised here
        for f in frames:
            f.frame = _resolved(table, f.frame, columns)
    return frames


def _keyed(m: ManifestFile, live: Any, parts: list[str], keyed: bool) -> LiveFrame:
    """A manifest's LiveFrame from its live rows (with ``_rank`` when keyed and partitioned)."""
    import polars as pl

    partitions: list[tuple] | None = None
    if keyed and parts:
        # in Python, not by polars calls: a call costs more than this loop on a manifest's rows
        rank = live.drop_in_place("_rank").to_list()
        firsts: dict[int, int] = {}  # rank -> the row of its first appearance, in order
        for i, r in enumerate(rank):
            if r not in firsts:
                firsts[r] = i
        values = pl.DataFrame([live.drop_in_place(c) for c in parts])
        partitions = values[list(firsts.values())].rows()
        renumber = {r: i for i, r in enumerate(firsts)}
        live.hstack([pl.Series("partition_key", [renumber[r] for r in rank], dtype=pl.UInt32)], in_place=True)
    elif keyed:
        live.hstack([pl.repeat(0, live.height, dtype=pl.UInt32, eager=True).alias("partition_key")], in_place=True)
        partitions = [()]
    return LiveFrame(m.partition_spec_id, live, partitions)


def _resolved(table: Table, live: Any, columns: tuple[str, ...]) -> Any:
    """A v4 manifest's live rows with their paths resolved against the table location."""
    import polars as pl

    resolve = table.resolve
    if "file_path" in columns:
        live = live.with_columns(
            pl.Series("file_path", [resolve(p) for p in live.get_column("file_path").to_list()], dtype=pl.String))
    if "referenced_data_file" in columns:
        live = live.with_columns(pl.Series("referenced_data_file", [resolve(p) if p else p for p in
                                           live.get_column("referenced_data_file").to_list()], dtype=pl.String))
    return live


def live_file_frames(table: Table, snapshot: Snapshot | None, *, workers: int = 2,
                     content: tuple[ManifestContent, ...] = (ManifestContent.DATA, ManifestContent.DELETES),
                     columns: tuple[str, ...] = FRAME_COLUMNS) -> Iterator[LiveFrame | list[tuple]]:
    """The live entries (data and delete files) of a snapshot, a manifest at a time in manifest
    order, as columns: a :class:`LiveFrame` for each manifest polars reads, the tuples of
    :func:`live_rows` (in the order of :data:`COLUMNS`) for one it cannot, read entry by entry
    (its checks and error messages). Streamed: a few manifests are decoded ahead (polars releases
    the GIL, so two threads use two cores) and only those are held, however many files the
    snapshot has. ``content``: the manifests read (data, deletes); ``columns``: the frames'
    columns of :data:`FRAME_COLUMNS` (a reader that needs a few converts only those; v4 paths are
    resolved when ``file_path`` is one)."""
    if snapshot is None:
        return
    manifests = [m for m in table.manifests(snapshot) if m.content in content]
    yield from live_frames(table, manifests, workers=workers, columns=columns)


def live_frames(table: Table, manifests: list[ManifestFile], *, workers: int = 2,
                columns: tuple[str, ...] = FRAME_COLUMNS, keyed: bool = True) -> Iterator[LiveFrame | list[tuple]]:
    """:func:`live_file_frames` of the given manifests (``diff``: those only one side lists);
    ``keyed=False``: the frames hold the partition values, not keys (see :class:`LiveFrame`)."""
    for frames in bounded_map(lambda run: _frames_any(table, run, columns, keyed), _runs(manifests), workers=workers):
        for frame in frames:
            if isinstance(frame, Exception):
                raise frame
            yield frame


# Small manifests (a streaming writer's, a few files each) are read in runs, their frames stacked
# and queried together: a query on a manifest of ten rows costs as much as on one of ten
# thousand. The first runs are of one manifest each (as many as a reader holds ahead) and the
# next ones grow (2, 4, ... manifests), so that the first rows still come early.
SMALL_MANIFEST = 256 * 1024  # bytes
RUN_MANIFESTS = 32
RUN_BYTES = 2 * 1024 * 1024
SINGLE_RUNS = 4  # bounded_map's window with two workers


def _runs(manifests: list[ManifestFile]) -> list[list[ManifestFile]]:
    """The manifests in order, cut into runs: a large manifest (or one of unknown length) alone,
    consecutive small ones together, the first :data:`SINGLE_RUNS` runs of one manifest and each
    later one at most twice as long as the one before."""
    runs: list[list[ManifestFile]] = []
    run: list[ManifestFile] = []
    size, room = 0, 1
    for m in manifests:
        n = m.manifest_length or 0
        small = 0 < n <= SMALL_MANIFEST
        if run and (not small or len(run) >= room or size + n > RUN_BYTES):
            runs.append(run)
            if len(runs) >= SINGLE_RUNS:
                room = min(2 * room, RUN_MANIFESTS)
            run, size = [], 0
        if small:
            run.append(m)
            size += n
        else:
            runs.append([m])
    if run:
        runs.append(run)
    return runs


def _frames_any(table: Table, run: list[ManifestFile], columns: tuple[str, ...],
                keyed: bool) -> list[LiveFrame | list[tuple] | Exception]:
    """:func:`_frame_any` of each manifest of a run, in order: the frames polars reads with one
    schema in one query, any other manifest (or each of a group whose query fails) on its own.
    A manifest whose reading raises holds the exception in its place, raised by
    :func:`live_frames` after the manifests before it, as when each is read in turn; one that
    cannot be decoded ends the run (the manifests after it are not read)."""
    if len(run) == 1:
        return [_frame_any(table, run[0], columns, keyed)]
    out: list[LiveFrame | list[tuple] | Exception | None] = []
    groups: list[tuple[Any, list[int]]] = []  # (schema, positions in the run)
    decoded: list[tuple[Any, int] | None] = []
    for i, m in enumerate(run):
        try:
            try:
                d = decoded_manifest(table, m)
            except ColumnarUnavailable:
                d = None
            out.append(None if d is not None else _alone(table, m, None, columns, keyed))
        except Exception as e:  # noqa: BLE001  (raised in turn by live_frames)
            out.append(e)
            break
        decoded.append(d)
        if d is not None:
            group = next((ms for schema, ms in groups if schema == d[0].schema), None)
            if group is None:
                groups.append((d[0].schema, [i]))
            else:
                group.append(i)
    for _, members in groups:
        if len(members) > 1:
            try:
                frames = _live_of(table, [run[i] for i in members], [decoded[i][0] for i in members],
                                  [decoded[i][1] for i in members], columns, keyed)
                for i, f in zip(members, frames):
                    out[i] = f
                continue
            except Exception:  # noqa: BLE001  (one by one: each as it would be alone, its own error too)
                pass
        for i in members:
            try:
                out[i] = _alone(table, run[i], decoded[i], columns, keyed)
            except Exception as e:  # noqa: BLE001
                out[i] = e
    return out  # type: ignore[return-value]


def _alone(table: Table, m: ManifestFile, decoded: tuple[Any, int] | None, columns: tuple[str, ...],
           keyed: bool) -> LiveFrame | list[tuple]:
    """:func:`_frame_any` of a manifest already decoded (``decoded``: :func:`decoded_manifest`'s
    answer, None when it turned the manifest away)."""
    if decoded is not None:
        try:
            return _live_of(table, [m], [decoded[0]], [decoded[1]], columns, keyed)[0]
        except ColumnarUnavailable:
            pass
    return _entry_rows(table, m)


def _frame_any(table: Table, m: ManifestFile, columns: tuple[str, ...] = FRAME_COLUMNS,
               keyed: bool = True) -> LiveFrame | list[tuple]:
    try:
        return _manifest_frame_live(table, m, columns, keyed)
    except ColumnarUnavailable:
        return _entry_rows(table, m)


def live_rows(table: Table, manifests: list[ManifestFile], *, workers: int = 2) -> Iterator[tuple]:
    """Tuples in the order of :data:`COLUMNS` for every live entry of the given manifests
    (``diff``: those only one side has), streamed as :func:`live_file_frames`."""
    for chunk in bounded_map(lambda m: _rows_any(table, m), manifests, workers=workers):
        yield from chunk


def _partition_values(table: Table) -> Callable[[int, tuple], tuple]:
    """A partition tuple of a spec as the entry reader gives it: a uuid value comes from polars as
    its 16 bytes, made a UUID."""
    uuids: dict[int, dict[int, Any]] = {}

    def convert(spec_id: int, part: tuple) -> tuple:
        at = uuids.get(spec_id)
        if at is None:
            at = uuids[spec_id] = {i: t for i, t in enumerate(table.partition_types(spec_id)) if t.base == "uuid"}
        return tuple(to_internal(at[i], v) if i in at else v for i, v in enumerate(part)) if at else part

    return convert


def live_data_entries(table: Table, snapshot: Snapshot) -> list[ManifestEntry]:
    """The live entries of ``snapshot``'s data manifests, in manifest order, built from
    :func:`live_rows` (polars' columns; a manifest polars cannot read entry by entry): each file's
    path, format, partition, counts, size, sequence numbers, row lineage and delete fields, no
    column statistics. What ``Table.live_entries(with_stats=False)`` gives a reader that needs
    no more (``health`` on a table with delete files), for about a third of its cost."""
    manifests = [m for m in table.manifests(snapshot) if m.content == ManifestContent.DATA]
    status = {int(s): s for s in EntryStatus}  # no enum call a row (manifest_frame checked the statuses)
    kind = {int(c): c for c in FileContent}
    partition = _partition_values(table)
    out = []
    for (content, path, fmt, spec_id, part, rc, size, seq, fseq, sid, st, frid, ref, off, clen, eq) in live_rows(table,
                                                                                                               manifests):
        part = partition(spec_id, part)
        out.append(ManifestEntry(status[st], sid, seq, fseq,
                                 DataFile(path, fmt, part, rc, size,
                                          kind[content] if content in kind else FileContent(content), spec_id,
                                          equality_ids=eq, first_row_id=frid, referenced_data_file=ref,
                                          content_offset=off, content_size_in_bytes=clen)))
    return out


@dataclass
class DataFileSizes:
    """The live data files of a snapshot as columns, for a reader that counts and adds up
    (``health``): ``frame`` has a row a file, in manifest order, with ``partition_key``,
    ``file_size_in_bytes`` and ``record_count``; ``partitions[partition_key]`` is the file's
    (spec id, partition tuple), each distinct one once in the order of first appearance, the
    tuple's values as :func:`live_data_entries` gives them."""

    frame: Any
    partitions: list[tuple[int, tuple]]


SIZE_COLUMNS = ("content", "record_count", "file_size_in_bytes")


def live_data_sizes(table: Table, snapshot: Snapshot) -> DataFileSizes | None:
    """The live files of ``snapshot``'s data manifests as :class:`DataFileSizes`: three columns a
    file and a Python tuple a partition, not an object a file. None when a reader must look at
    each file (:func:`live_data_entries`): a data manifest holds a delete file, a size or count is
    null, or a partition value is NaN (which equals no other value, not even another NaN: a
    partition of its own for each file)."""
    import polars as pl

    # v4 paths are resolved (and one that escapes the table location is an error) as by the entry reader
    columns = SIZE_COLUMNS + (("file_path", "referenced_data_file") if table.metadata.format_version >= 4 else ())
    partition = _partition_values(table)
    keys: dict[tuple[int, tuple], int] = {}
    frames = []
    schema = {"partition_key": pl.UInt32, "file_size_in_bytes": pl.Int64, "record_count": pl.Int64}
    for chunk in live_file_frames(table, snapshot, content=(ManifestContent.DATA,), columns=columns):
        if not (chunk.frame.height if isinstance(chunk, LiveFrame) else chunk):
            continue  # no live file (an unpartitioned frame still names the one partition)
        if isinstance(chunk, LiveFrame):
            rows, spec_id, parts = chunk.frame, chunk.spec_id, chunk.partitions
            if (rows.get_column("content") != 0).any():
                return None
            local = rows.get_column("partition_key")
        else:  # read entry by entry: the tuples of COLUMNS
            if any(r[0] != 0 for r in chunk):
                return None
            spec_ids = {r[3] for r in chunk}
            if len(spec_ids) > 1:
                return None
            spec_id = spec_ids.pop() if spec_ids else 0
            numbered: dict[tuple, int] = {}
            local = pl.Series([numbered.setdefault(r[4], len(numbered)) for r in chunk], dtype=pl.UInt32)
            parts = list(numbered)
            rows = pl.DataFrame({"record_count": [r[5] for r in chunk], "file_size_in_bytes": [r[6] for r in chunk]},
                                schema={"record_count": pl.Int64, "file_size_in_bytes": pl.Int64})
        if any(isinstance(v, float) and v != v for part in parts for v in part):
            return None
        to_global = [keys.setdefault((spec_id, partition(spec_id, part)), len(keys)) for part in parts]
        frame = rows.select(pl.Series(to_global, dtype=pl.UInt32).gather(local).alias("partition_key"),
                            pl.col("file_size_in_bytes").cast(pl.Int64), pl.col("record_count").cast(pl.Int64))
        if frame.null_count().sum_horizontal().item():
            return None
        frames.append(frame)
    frame = pl.concat(frames) if frames else pl.DataFrame(schema=schema)
    return DataFileSizes(frame, list(keys))


def _rows_any(table: Table, m: ManifestFile) -> list[tuple]:
    try:
        return _manifest_rows(table, m)
    except ColumnarUnavailable:
        return _entry_rows(table, m)


def _entry_rows(table: Table, m: ManifestFile) -> list[tuple]:
    out = []
    for e in table.read_entries(m, live_only=True, with_stats=False):
        df = e.data_file
        out.append((int(df.content), df.file_path, df.file_format, df.spec_id, df.partition, df.record_count,
                    df.file_size_in_bytes, e.sequence_number, e.file_sequence_number, e.snapshot_id, int(e.status),
                    df.first_row_id, df.referenced_data_file, df.content_offset, df.content_size_in_bytes,
                    df.equality_ids))
    return out


def bounded_map(fn: Callable[[Any], Any], items: list, *, workers: int = 2, ahead: int | None = None,
                weight: Callable[[Any], int] | None = None, budget: int | None = None) -> Iterator[Any]:
    """``fn`` of each item, in order, computed by ``workers`` threads at most ``ahead`` (default
    twice the workers) items ahead of the consumer: unlike ``Executor.map``, results do not pile
    up in memory when the consumer is slower than the workers. With ``weight`` and ``budget``,
    the items started and not yet consumed weigh at most ``budget`` together (an item heavier
    than that is computed alone): a few large manifests are not decoded at once, whose decoding
    holds several times their size; and the items heavier than the budget are computed by one
    thread of their own, always the same (an allocator keeps what a thread freed for that thread's
    next allocations: two threads decoding large manifests in turn would each keep a decoding's
    worth)."""
    if len(items) <= 1 or workers <= 1:
        for i in items:
            yield fn(i)
        return
    ahead = max(ahead or 2 * workers, 1)
    with ThreadPoolExecutor(max_workers=workers) as pool, ThreadPoolExecutor(max_workers=1) as solo:
        window: deque = deque()  # (future, weight)
        it = iter(items)
        held = 0
        nxt: Any = _NONE  # an item taken but not started (over the budget)

        def start() -> None:
            nonlocal held, nxt
            while len(window) < ahead:
                if nxt is _NONE:
                    nxt = next(it, _END)
                if nxt is _END:
                    return
                w = weight(nxt) if weight is not None else 0
                if window and budget is not None and held + w > budget:
                    return
                heavy = budget is not None and w > budget
                window.append(((solo if heavy else pool).submit(fn, nxt), w))
                held += w
                nxt = _NONE

        try:
            start()
            while window:
                future, w = window.popleft()
                result = future.result()
                held -= w
                start()
                yield result
        finally:
            for f, _ in window:
                f.cancel()


_END = object()
_NONE = object()
