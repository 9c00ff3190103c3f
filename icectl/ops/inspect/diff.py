"""What changed between two states of a table: data and delete files added and removed (by
partition, with records and bytes), and the schema, partition spec, sort order, properties and
refs of the metadata each state was read from.

A state is named as the user would: a snapshot id, a ref (branch or tag), a time (ISO 8601,
epoch milliseconds or an age, read by :mod:`icectl.expr.timestamp`: the snapshot that was current then, as Spark's ``TIMESTAMP AS OF`` reads the
snapshot log, and the metadata file that was current then, from the metadata log), or a metadata
file (a path, its file name, or ``vN`` for version N of the metadata log). ``snapshot:``,
``ref:``, ``time:`` and ``metadata:`` prefixes say which when a name is ambiguous.

Manifests are immutable, so a manifest both snapshots list holds the same live files on both
sides: only the manifests that differ are read (spec: "Manifests" are never rewritten in place).
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from icectl.errors import NotFoundError, UsageError
from icectl.expr.timestamp import MIN_EPOCH_MS, parse_timestamp_ms
from icectl.formats.manifest import ManifestFile, content_kind
from icectl.spec.metadata import MAIN_BRANCH, Snapshot, TableMetadata
from icectl.spec.types import type_label
from icectl.table.listing import LiveFrame, live_frames
from icectl.table.loaded import Table
from icectl.table.metadata_io import metadata_file_version, metadata_folder, read_metadata_file
from icectl.io import join
from icectl.ops.inspect.files import json_partition
from icectl.spec.conversions import to_internal
from icectl.spec.transforms import parse_transform

PREFIXES = ("snapshot", "ref", "time", "metadata")
# A bare integer below this is not taken for epoch milliseconds (1973-03-03): it is a snapshot id or nothing.


@dataclass
class DiffSide:
    """One side of a diff: what the user named and what it resolved to."""

    spec: str  # as given on the command line
    kind: str  # snapshot | ref | time | metadata
    snapshot_id: int | None  # null: the state has no snapshot (an empty table)
    snapshot_timestamp_ms: int | None
    metadata_location: str  # the metadata file the side's schema, spec, properties and refs come from
    metadata: TableMetadata = field(repr=False)
    table: Table = field(repr=False)

    @property
    def snapshot(self) -> Snapshot | None:
        return self.metadata.snapshot_by_id(self.snapshot_id) if self.snapshot_id is not None else None


@dataclass
class FileChange:
    content: str  # data | position-deletes | equality-deletes | deletion-vector
    file_path: str
    file_format: str
    spec_id: int
    partition: dict[str, Any]  # partition field name -> JSON single value
    record_count: int
    file_size_in_bytes: int
    data_sequence_number: int | None
    snapshot_id: int | None  # the snapshot that added the file
    referenced_data_file: str | None = None
    content_offset: int | None = None
    content_size_in_bytes: int | None = None

    @property
    def is_data(self) -> bool:
        return self.content == "data"


@dataclass
class ChangeCounts:
    data_files_added: int = 0
    data_files_removed: int = 0
    delete_files_added: int = 0
    delete_files_removed: int = 0
    records_added: int = 0  # data records
    records_removed: int = 0
    delete_records_added: int = 0
    delete_records_removed: int = 0
    bytes_added: int = 0  # data and delete files
    bytes_removed: int = 0

    def count(self, f: FileChange, *, added: bool) -> None:
        if f.is_data:
            if added:
                self.data_files_added += 1
                self.records_added += f.record_count
            else:
                self.data_files_removed += 1
                self.records_removed += f.record_count
        elif added:
            self.delete_files_added += 1
            self.delete_records_added += f.record_count
        else:
            self.delete_files_removed += 1
            self.delete_records_removed += f.record_count
        size = f.content_size_in_bytes if f.content == "deletion-vector" and f.content_size_in_bytes else \
            f.file_size_in_bytes
        if added:
            self.bytes_added += size
        else:
            self.bytes_removed += size


@dataclass
class PartitionChange(ChangeCounts):
    spec_id: int = 0
    partition: dict[str, Any] = field(default_factory=dict)


@dataclass
class FieldChange:
    field_id: int
    name: str  # dotted name on side B (on side A for a removed field)
    change: str  # added | removed | renamed | type | required | doc | default
    before: Any = None
    after: Any = None


@dataclass
class SchemaDiff:
    from_schema_id: int | None
    to_schema_id: int | None
    changes: list[FieldChange]


@dataclass
class ValueChange:
    """A partition spec or sort order (the spec's JSON form) or a format version, before and after."""

    before: Any
    after: Any


@dataclass
class PropertyChange:
    key: str
    change: str  # added | removed | changed
    before: str | None
    after: str | None


@dataclass
class RefChange:
    name: str
    type: str  # branch | tag
    change: str  # added | removed | moved | retention
    from_snapshot_id: int | None
    to_snapshot_id: int | None


@dataclass
class ManifestCounts:
    a: int
    b: int
    shared: int
    read: int  # the manifests read: those only one side lists


@dataclass
class TableDiff:
    table: str
    a: DiffSide
    b: DiffSide
    summary_only: bool
    totals: ChangeCounts
    partitions: list[PartitionChange] | None  # null with --summary
    added_files: list[FileChange] | None  # null with --summary
    removed_files: list[FileChange] | None
    format_version: ValueChange | None
    schema: SchemaDiff | None  # null: the same schema
    partition_spec: ValueChange | None
    sort_order: ValueChange | None
    properties: list[PropertyChange]
    location: ValueChange | None
    refs: list[RefChange]
    manifests: ManifestCounts
    # B's table location: the text output shows file paths relative to it (not part of the JSON)
    table_location: str | None = field(default=None, repr=False)

    @property
    def changes_nothing(self) -> bool:
        t = self.totals
        return not (t.data_files_added or t.data_files_removed or t.delete_files_added or t.delete_files_removed
                    or self.format_version or self.schema or self.partition_spec or self.sort_order
                    or self.properties or self.location or self.refs)


# -- resolving a side ----------------------------------------------------------------------------------------

def resolve_side(table: Table, spec: str) -> DiffSide:
    """A snapshot id, ref, time or metadata file of ``table`` (see the module docstring)."""
    text = spec.strip()
    if not text:
        raise UsageError("an empty snapshot, ref, time or metadata file was given")
    prefix, _, rest = text.partition(":")
    if prefix in PREFIXES and rest:
        return _resolve(table, spec, prefix, rest)
    md = table.metadata
    if text.lstrip("-").isdigit() and md.snapshot_by_id(int(text)) is not None:
        return _resolve(table, spec, "snapshot", text)
    if text in md.all_refs:
        return _resolve(table, spec, "ref", text)
    if _looks_like_metadata(text):
        return _resolve(table, spec, "metadata", text)
    if text.isdigit():
        if int(text) >= MIN_EPOCH_MS:
            return _resolve(table, spec, "time", text)
        raise NotFoundError(f"{text} is not a snapshot id of {table.name}",
                            hint=f"a metadata version is written v{text}; epoch milliseconds have 13 digits")
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}([T ].*)?", text):
        return _resolve(table, spec, "time", text)
    refs = ", ".join(sorted(md.all_refs)) or "none"
    raise NotFoundError(f"{text!r} is not a snapshot id, ref, time or metadata file of {table.name}",
                        hint=f"refs: {refs}")


def _looks_like_metadata(text: str) -> bool:
    return "/" in text or text.endswith(".metadata.json") or text.endswith(".metadata.json.gz") or \
        bool(re.fullmatch(r"v\d+", text))


def _resolve(table: Table, spec: str, kind: str, value: str) -> DiffSide:
    md = table.metadata
    if kind == "snapshot":
        try:
            sid = int(value)
        except ValueError:
            raise UsageError(f"invalid snapshot id {value!r}") from None
        snap = md.snapshot_by_id(sid)
        if snap is None:
            raise NotFoundError(f"snapshot {sid} does not exist in {table.name}")
        return _side(table, spec, kind, snap)
    if kind == "ref":
        ref = md.all_refs.get(value)
        if ref is None:
            refs = ", ".join(sorted(md.all_refs)) or "none"
            raise NotFoundError(f"ref {value!r} does not exist in {table.name}", hint=f"refs: {refs}")
        snap = md.snapshot_by_id(ref.snapshot_id)
        if snap is None:
            raise NotFoundError(f"ref {value!r} points at snapshot {ref.snapshot_id}, which does not exist")
        return _side(table, spec, kind, snap)
    if kind == "time":
        return _time_side(table, spec, parse_timestamp_ms(value, what="time"))
    location = find_metadata_file(table, value)
    old = read_metadata_file(table.io, location)
    check_same_table(table, old, location)
    view = dataclasses.replace(table, metadata=old, metadata_location=location)
    snap = old.current_snapshot
    return DiffSide(spec, "metadata", snap.snapshot_id if snap else None, snap.timestamp_ms if snap else None,
                    location, old, view)


def _side(table: Table, spec: str, kind: str, snap: Snapshot) -> DiffSide:
    return DiffSide(spec, kind, snap.snapshot_id, snap.timestamp_ms, table.metadata_location, table.metadata, table)


def _time_side(table: Table, spec: str, ts: int) -> DiffSide:
    """The snapshot that was current at ``ts`` (the snapshot log, as Iceberg Java's
    ``SnapshotUtil.snapshotIdAsOfTime``), read with the metadata file that was current then."""
    md = table.metadata
    sid = None
    for e in md.snapshot_log:
        if e.timestamp_ms <= ts:
            sid = e.snapshot_id
    if sid is None or md.snapshot_by_id(sid) is None:
        raise NotFoundError(f"no snapshot of {table.name} was current at {spec} ({ts} ms)",
                            hint="icectl snapshots lists the snapshots and their times")
    location, meta = metadata_as_of(table, ts)
    view = table if location == table.metadata_location else dataclasses.replace(
        table, metadata=meta, metadata_location=location)
    snap = md.snapshot_by_id(sid)
    return DiffSide(spec, "time", sid, snap.timestamp_ms, location, meta, view)


def metadata_as_of(table: Table, ts: int) -> tuple[str, TableMetadata]:
    """The metadata file that was current at ``ts``: the table's own when it is not older, else the
    newest metadata-log entry not after ``ts`` (the table's own when the log has none)."""
    md = table.metadata
    if md.last_updated_ms <= ts:
        return table.metadata_location, md
    best = None
    for e in md.metadata_log:
        if e.timestamp_ms <= ts and (best is None or e.timestamp_ms >= best.timestamp_ms):
            best = e
    if best is None:
        return table.metadata_location, md
    location = table.resolve(best.metadata_file)
    old = read_metadata_file(table.io, location)
    return location, old


def metadata_candidates(table: Table) -> list[str]:
    """Every metadata file the table knows of: its metadata log, its current file, and the
    ``*.metadata.json`` files in its metadata folder (newest version last)."""
    md = table.metadata
    found = [table.resolve(e.metadata_file) for e in md.metadata_log] + [table.metadata_location]
    if md.location:
        folder = metadata_folder(md, md.location)
        try:
            listed = [f.path for f in table.io.list_files(folder)
                      if f.path.endswith(".metadata.json") or f.path.endswith(".metadata.json.gz")]
        except Exception:  # a folder that cannot be listed: the log is what there is
            listed = []
        known = set(found)
        found += sorted((p for p in listed if p not in known), key=metadata_file_version)
    return list(dict.fromkeys(found))


def find_metadata_file(table: Table, value: str) -> str:
    """A metadata file given as a path, a file name in the table's metadata folder or log, or
    ``vN`` / ``N`` (version N: ``NNNNN-<uuid>.metadata.json`` or ``vN.metadata.json``)."""
    text = value.strip()
    m = re.fullmatch(r"v?(\d+)", text)
    if m:
        version = int(m.group(1))
        matches = [p for p in metadata_candidates(table) if metadata_file_version(p) == version]
        if not matches:
            raise NotFoundError(f"no metadata file of {table.name} has version {version}",
                                hint="icectl describe shows the metadata log size; versions are in the file names")
        return matches[-1]
    if "/" not in text:
        for p in metadata_candidates(table):
            if p.rsplit("/", 1)[-1] == text:
                return p
        if table.metadata.location:
            return join(metadata_folder(table.metadata, table.metadata.location), text)
    return text


def check_same_table(table: Table, other: TableMetadata, location: str) -> None:
    if table.metadata.table_uuid and other.table_uuid and other.table_uuid != table.metadata.table_uuid:
        raise UsageError(f"{location} belongs to another table (table-uuid {other.table_uuid}, not "
                         f"{table.metadata.table_uuid})")


# -- the file-level diff -------------------------------------------------------------------------------------

def _manifests(side: DiffSide) -> dict[str, ManifestFile]:
    snap = side.snapshot
    return {m.manifest_path: m for m in side.table.manifests(snap)} if snap is not None else {}


class _Live:
    """The live entries of one side's manifests (those the other side does not list), as
    :func:`icectl.table.listing.live_frames` gives them (a manifest's columns, or its tuples when
    read entry by entry), and where each (file_path, content_offset) is (:attr:`at`: a frame of
    the keys as listed, each with its chunk and row). Only the entries a diff reports are made
    Python tuples."""

    def __init__(self, side: DiffSide, manifests: list[ManifestFile]) -> None:
        import polars as pl  # live_frames has loaded it

        self.md = side.metadata
        # the columns a FileChange shows, and each entry's partition values (formatted for the
        # entries a diff reports only)
        self.chunks = list(live_frames(side.table, manifests, columns=FRAME_COLUMNS, keyed=False))
        schema = {"file_path": pl.String, "content_offset": pl.Int64, "chunk": pl.UInt32, "row": pl.UInt32}
        keys = []
        for c, chunk in enumerate(self.chunks):
            if isinstance(chunk, LiveFrame):
                frame = chunk.frame.select("file_path", "content_offset")
            else:
                frame = pl.DataFrame({"file_path": [row[1] for row in chunk],
                                      "content_offset": [row[13] for row in chunk]},
                                     schema={"file_path": pl.String, "content_offset": pl.Int64})
            keys.append(frame.select(pl.col("file_path").cast(pl.String), pl.col("content_offset").cast(pl.Int64),
                                     pl.lit(c, dtype=pl.UInt32).alias("chunk"),
                                     pl.int_range(pl.len(), dtype=pl.UInt32).alias("row")))
        # the chunks' own columns, not copied (a key listed twice is resolved in only())
        self.at = pl.concat(keys, rechunk=False) if keys else pl.DataFrame(schema=schema)

    def only(self, other: "_Live") -> list[tuple[int, int]]:
        """(chunk, row) of the keys the other side does not list, in the order of their first
        listing; a key listed twice is where it is listed last (as a dict's update)."""
        rows = self.at.join(other.at, on=["file_path", "content_offset"], how="anti", nulls_equal=True,
                            maintain_order="left").iter_rows()
        where: dict[tuple, tuple[int, int]] = {}
        for path, offset, c, i in rows:
            where[(path, offset)] = (c, i)
        return list(where.values())

    def rows(self, where: list[tuple[int, int]]) -> list[tuple]:
        """The entries at ``where`` (chunk, row), as tuples in the order of
        :data:`icectl.table.listing.COLUMNS` (from a frame, the fields not in
        :data:`FRAME_COLUMNS` are None)."""
        wanted: dict[int, list[int]] = {}
        for c, i in where:
            wanted.setdefault(c, []).append(i)
        made: dict[tuple[int, int], tuple] = {}
        for c, idx in wanted.items():
            chunk = self.chunks[c]
            if not isinstance(chunk, LiveFrame):
                made.update(((c, i), chunk[i]) for i in idx)
                continue
            spec_id = chunk.spec_id
            # the frame's columns: FRAME_COLUMNS, then the partition values
            picked = chunk.frame[idx].rows()
            for i, (content_, path, fmt, rc, size, seq, sid, ref, off, clen, *part) in zip(idx, picked):
                made[(c, i)] = (content_, path, str(fmt).lower(), spec_id, tuple(part), rc, size, seq, None, sid,
                                None, None, ref, off, clen, None)
        return [made[w] for w in where]


# The columns of a LiveFrame a FileChange shows, in the order of a live_rows tuple (the file
# sequence number, status, first row id and equality ids are not shown: None in the tuples)
FRAME_COLUMNS = ("content", "file_path", "file_format", "record_count", "file_size_in_bytes", "sequence_number",
                 "snapshot_id", "referenced_data_file", "content_offset", "content_size_in_bytes")


class _Partitions:
    """Partition tuples in the JSON single-value form, formatted once per (spec, tuple)."""

    def __init__(self) -> None:
        self._done: dict[tuple, dict[str, Any]] = {}

    def json(self, md: TableMetadata, spec_id: int, values: tuple) -> dict[str, Any]:
        key = (id(md), spec_id, values)
        done = self._done.get(key)
        if done is None:
            done = _partition_json(md, spec_id, values)
            self._done[key] = done
        return done


def _partition_json(md: TableMetadata, spec_id: int, values: tuple) -> dict[str, Any]:
    spec = md.specs_by_id.get(spec_id)
    if spec is None:
        return {f"_{i}": v if isinstance(v, (int, float, str, bool)) or v is None else str(v)
                for i, v in enumerate(values)}
    out: dict[str, Any] = {}
    for f, v in zip(spec.fields, values):
        src = md.find_type(f.source_id)
        try:
            rt = parse_transform(f.transform).result_type(src) if src is not None else None
        except Exception:
            rt = None
        try:
            v = to_internal(rt, v) if rt is not None else v
        except Exception:
            pass
        out[f.name] = json_partition(rt, v)
    return out


def _change(row: tuple, md: TableMetadata, parts: _Partitions) -> FileChange:
    (content, path, fmt, spec_id, values, rc, size, seq, _fseq, sid, _st, _frid, ref, off, clen, _eq) = row
    return FileChange(content=content_kind(content, fmt), file_path=path, file_format=fmt, spec_id=spec_id,
                      partition=parts.json(md, spec_id, tuple(values)), record_count=rc, file_size_in_bytes=size,
                      data_sequence_number=seq, snapshot_id=sid, referenced_data_file=ref, content_offset=off,
                      content_size_in_bytes=clen)


def diff_sides(table: Table, a: DiffSide, b: DiffSide, *, summary_only: bool = False) -> TableDiff:
    ma, mb = _manifests(a), _manifests(b)
    only_a = [m for p, m in ma.items() if p not in mb]
    only_b = [m for p, m in mb.items() if p not in ma]
    live_a, live_b = _Live(a, only_a), _Live(b, only_b)
    parts = _Partitions()
    added = [_change(e, live_b.md, parts) for e in live_b.rows(live_b.only(live_a))]
    removed = [_change(e, live_a.md, parts) for e in live_a.rows(live_a.only(live_b))]
    # a partition's sort key and grouping key, once per partition dict (_Partitions gives the
    # files of one partition the same dict)
    sort_keys: dict[int, tuple] = {}
    group_keys: dict[int, tuple] = {}

    def order(f: FileChange) -> tuple:
        p = f.partition
        key = sort_keys.get(id(p))
        if key is None:
            key = sort_keys[id(p)] = _partition_sort_key(p)
        return (f.spec_id, key, f.content != "data", f.file_path, f.content_offset or 0)

    added.sort(key=order)
    removed.sort(key=order)
    totals = ChangeCounts()
    by_partition: dict[tuple, PartitionChange] = {}
    for files, is_added in ((added, True), (removed, False)):
        for f in files:
            totals.count(f, added=is_added)
            values = group_keys.get(id(f.partition))
            if values is None:
                values = group_keys[id(f.partition)] = tuple(sorted((k, repr(v)) for k, v in f.partition.items()))
            key = (f.spec_id, values)
            pc = by_partition.get(key)
            if pc is None:
                pc = by_partition[key] = PartitionChange(spec_id=f.spec_id, partition=f.partition)
            pc.count(f, added=is_added)
    partitions = sorted(by_partition.values(), key=lambda p: (p.spec_id, _partition_sort_key(p.partition)))
    return TableDiff(
        table=table.name, a=a, b=b, summary_only=summary_only, totals=totals,
        partitions=None if summary_only else partitions,
        added_files=None if summary_only else added, removed_files=None if summary_only else removed,
        format_version=_value_change(a.metadata.format_version, b.metadata.format_version),
        schema=schema_diff(_schema(a), _schema(b)),
        partition_spec=_value_change(_spec_json(a.metadata), _spec_json(b.metadata)),
        sort_order=_value_change(_order_json(a.metadata), _order_json(b.metadata)),
        properties=property_changes(a.metadata.properties, b.metadata.properties),
        location=_value_change(a.metadata.location, b.metadata.location),
        refs=ref_changes(a.metadata, b.metadata),
        manifests=ManifestCounts(len(ma), len(mb), len(ma) - len(only_a), len(only_a) + len(only_b)),
        table_location=b.metadata.location)


def diff(table: Table, a: str, b: str, *, summary_only: bool = False) -> TableDiff:
    """``icectl diff TABLE A B``: what changed from A to B."""
    return diff_sides(table, resolve_side(table, a), resolve_side(table, b), summary_only=summary_only)


def _partition_sort_key(p: dict[str, Any]) -> tuple:
    return tuple((k, v is not None, str(v)) for k, v in p.items())


# -- the metadata diff ---------------------------------------------------------------------------------------

def _value_change(before: Any, after: Any) -> ValueChange | None:
    return None if before == after else ValueChange(before, after)


def _schema(side: DiffSide):
    md = side.metadata
    snap = side.snapshot
    if side.kind != "metadata" and snap is not None and snap.schema_id is not None:
        try:
            return md.schema_by_id(snap.schema_id)
        except Exception:
            pass
    return md.current_schema_or_none


def _spec_json(md: TableMetadata) -> Any:
    spec = md.specs_by_id.get(md.default_spec_id)
    return spec.to_json(md.format_version) if spec is not None else None


def _order_json(md: TableMetadata) -> Any:
    order = next((o for o in md.sort_orders if o.order_id == md.default_sort_order_id), None)
    return order.to_json() if order is not None else None


def schema_diff(a: Any, b: Any) -> SchemaDiff | None:
    """Fields by id: added, removed, renamed, type changed (promoted), required changed, doc and
    defaults changed. None when both schemas have the same fields (whatever their ids)."""
    if a is None and b is None:
        return None
    fa = {fid: (a.column_name(fid), a.find_field(fid)) for fid in a.all_field_ids()} if a is not None else {}
    fb = {fid: (b.column_name(fid), b.find_field(fid)) for fid in b.all_field_ids()} if b is not None else {}
    changes: list[FieldChange] = []
    for fid in sorted(set(fa) | set(fb)):
        if fid not in fa:
            name, f = fb[fid]
            changes.append(FieldChange(fid, name, "added", None, type_label(f.field_type)))
            continue
        if fid not in fb:
            name, f = fa[fid]
            changes.append(FieldChange(fid, name, "removed", type_label(f.field_type), None))
            continue
        (na, x), (nb, y) = fa[fid], fb[fid]
        if na != nb:
            changes.append(FieldChange(fid, nb, "renamed", na, nb))
        if type_label(x.field_type) != type_label(y.field_type):
            changes.append(FieldChange(fid, nb, "type", type_label(x.field_type), type_label(y.field_type)))
        if x.required != y.required:
            changes.append(FieldChange(fid, nb, "required", x.required, y.required))
        if x.doc != y.doc:
            changes.append(FieldChange(fid, nb, "doc", x.doc, y.doc))
        if (x.initial_default, x.write_default) != (y.initial_default, y.write_default):
            changes.append(FieldChange(fid, nb, "default", x.write_default, y.write_default))
    ids_a = tuple(a.identifier_field_ids) if a is not None else ()
    ids_b = tuple(b.identifier_field_ids) if b is not None else ()
    if ids_a != ids_b:
        changes.append(FieldChange(0, "identifier-field-ids", "identifier", list(ids_a), list(ids_b)))
    if not changes:
        return None
    return SchemaDiff(a.schema_id if a is not None else None, b.schema_id if b is not None else None, changes)


def property_changes(a: dict[str, str], b: dict[str, str]) -> list[PropertyChange]:
    out = []
    for k in sorted(set(a) | set(b)):
        if k not in a:
            out.append(PropertyChange(k, "added", None, b[k]))
        elif k not in b:
            out.append(PropertyChange(k, "removed", a[k], None))
        elif a[k] != b[k]:
            out.append(PropertyChange(k, "changed", a[k], b[k]))
    return out


def ref_changes(a: TableMetadata, b: TableMetadata) -> list[RefChange]:
    ra, rb = a.all_refs, b.all_refs
    out = []
    for name in sorted(set(ra) | set(rb), key=lambda n: (n != MAIN_BRANCH, n)):
        x, y = ra.get(name), rb.get(name)
        if x is None:
            out.append(RefChange(name, y.ref_type, "added", None, y.snapshot_id))
        elif y is None:
            out.append(RefChange(name, x.ref_type, "removed", x.snapshot_id, None))
        elif x.snapshot_id != y.snapshot_id or x.ref_type != y.ref_type:
            out.append(RefChange(name, y.ref_type, "moved", x.snapshot_id, y.snapshot_id))
        elif (x.min_snapshots_to_keep, x.max_snapshot_age_ms, x.max_ref_age_ms) != \
                (y.min_snapshots_to_keep, y.max_snapshot_age_ms, y.max_ref_age_ms):
            out.append(RefChange(name, y.ref_type, "retention", x.snapshot_id, y.snapshot_id))
    return out


__all__ = ["ChangeCounts", "DiffSide", "FieldChange", "FileChange", "ManifestCounts", "PartitionChange",
           "PropertyChange", "RefChange", "SchemaDiff", "TableDiff", "ValueChange", "diff", "diff_sides",
           "find_metadata_file", "metadata_as_of", "metadata_candidates", "resolve_side"]
