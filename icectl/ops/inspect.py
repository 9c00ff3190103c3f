"""Read-only views of a table for describe, snapshots and files: plain dataclasses the CLI renders.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from icectl.expr.timestamp import parse_timestamp_ms
from icectl.formats.manifest import FileContent, ManifestContent
from icectl.spec.metadata import MAIN_BRANCH, Snapshot, SnapshotRef, TableMetadata
from icectl.spec.temporal import millis_to_iso
from icectl.table.loaded import Table
from icectl.errors import NotFoundError, UsageError


# -- describe ------------------------------------------------------------------------------------

@dataclass
class Totals:
    """Live files and rows of the current snapshot (data bytes null when the summary lacks them)."""

    data_files: int = 0
    delete_files: int = 0  # position + equality delete files + deletion vectors
    position_delete_files: int = 0
    equality_delete_files: int = 0
    deletion_vectors: int = 0
    records: int = 0
    position_delete_records: int = 0
    equality_delete_records: int = 0
    data_bytes: int | None = 0
    delete_bytes: int = 0


@dataclass
class RefRow:
    """A branch or tag (the spec's "Snapshot References")."""

    name: str
    type: str  # branch | tag
    snapshot_id: int
    min_snapshots_to_keep: int | None
    max_snapshot_age_ms: int | None
    max_ref_age_ms: int | None


@dataclass
class CurrentSnapshot:
    snapshot_id: int
    parent_snapshot_id: int | None
    sequence_number: int
    timestamp_ms: int
    committed_at: str | None
    operation: str | None
    schema_id: int | None
    manifest_list: str | None
    summary: dict[str, str]
    first_row_id: int | None
    added_rows: int | None


@dataclass
class StatisticsBlob:
    """A statistics file's blob metadata (the spec's ``blob-metadata``)."""

    type: str
    snapshot_id: int | None
    sequence_number: int | None
    fields: list[int]
    columns: list[str | None]  # the fields' names in the current schema (null: not in it)
    properties: dict[str, str]


@dataclass
class StatisticsFile:
    """A table statistics file (Puffin) as table metadata registers it."""

    snapshot_id: int
    statistics_path: str
    file_size_in_bytes: int
    file_footer_size_in_bytes: int | None
    blobs: list[StatisticsBlob]


@dataclass
class PartitionStatisticsFile:
    snapshot_id: int
    statistics_path: str
    file_size_in_bytes: int


@dataclass
class Description:
    """What ``describe`` shows of a table: identity, schemas, specs and sort orders (the spec's
    JSON), properties, refs, the current snapshot, totals and statistics files."""

    name: str
    table_uuid: str | None
    location: str | None
    metadata_location: str
    format_version: int
    last_updated_ms: int
    last_sequence_number: int
    last_column_id: int
    next_row_id: int | None
    current_schema_id: int
    schema: dict[str, Any]
    schemas: list[dict[str, Any]]
    default_spec_id: int
    partition_specs: list[dict[str, Any]]
    default_sort_order_id: int
    sort_orders: list[dict[str, Any]]
    properties: dict[str, str]
    refs: list[RefRow]
    current_snapshot: CurrentSnapshot | None
    totals: Totals
    snapshots: int
    snapshot_log_size: int
    metadata_log_size: int
    statistics: list[StatisticsFile]
    partition_statistics: list[PartitionStatisticsFile]
    metadata: TableMetadata = field(repr=False)


def table_totals(table: Table, snapshot: Snapshot | None) -> Totals:
    """Data counts from the manifest list (added + existing per manifest), delete files by kind
    from the delete manifests, data bytes from the snapshot summary when it has them."""
    t = Totals()
    if snapshot is None:
        return t
    manifests = table.manifests(snapshot)
    delete_manifests = []
    exact = True
    for m in manifests:
        if m.content == ManifestContent.DATA:
            if m.added_files_count is None or m.existing_files_count is None:
                exact = False
                break
            t.data_files += m.added_files_count + m.existing_files_count
            t.records += (m.added_rows_count or 0) + (m.existing_rows_count or 0)
        else:
            delete_manifests.append(m)
    if not exact:  # v1 lists may omit counts: read the manifests
        t = Totals()
        delete_manifests = [m for m in manifests if m.content == ManifestContent.DELETES]
        for m in manifests:
            if m.content == ManifestContent.DATA:
                for e in table.read_entries(m, live_only=True, with_stats=False):
                    t.data_files += 1
                    t.records += e.data_file.record_count
                    t.data_bytes = (t.data_bytes or 0) + e.data_file.file_size_in_bytes
    for m in delete_manifests:
        for e in table.read_entries(m, live_only=True, with_stats=False):
            df = e.data_file
            # Sizes as Iceberg Java's SnapshotSummary counts them: a DV by its blob's size.
            t.delete_bytes += df.content_size_in_bytes if df.is_deletion_vector and df.content_size_in_bytes \
                else df.file_size_in_bytes
            if df.content == FileContent.EQUALITY_DELETES:
                t.equality_delete_files += 1
                t.equality_delete_records += df.record_count
            elif df.is_deletion_vector:
                t.deletion_vectors += 1
                t.position_delete_records += df.record_count
            else:
                t.position_delete_files += 1
                t.position_delete_records += df.record_count
    if exact:
        # The summary's total-files-size counts data and delete files together.
        size = snapshot.summary.get("total-files-size")
        t.data_bytes = max(int(size) - t.delete_bytes, 0) if size and size.lstrip("-").isdigit() else None
    t.delete_files = t.position_delete_files + t.equality_delete_files + t.deletion_vectors
    return t


def describe(table: Table) -> Description:
    md = table.metadata
    v = md.format_version
    s = md.current_snapshot
    stats, partition_stats = statistics_files(md)
    return Description(
        name=table.name, table_uuid=md.table_uuid, location=md.location, metadata_location=table.metadata_location,
        format_version=v, last_updated_ms=md.last_updated_ms, last_sequence_number=md.last_sequence_number,
        last_column_id=md.last_column_id, next_row_id=md.next_row_id, current_schema_id=md.current_schema_id,
        schema=md.schema.to_json(), schemas=[x.to_json() for x in md.schemas], default_spec_id=md.default_spec_id,
        partition_specs=[x.to_json(v) for x in md.partition_specs], default_sort_order_id=md.default_sort_order_id,
        sort_orders=[o.to_json() for o in md.sort_orders], properties=dict(md.properties), refs=ref_list(md),
        current_snapshot=None if s is None else CurrentSnapshot(
            s.snapshot_id, s.parent_snapshot_id, s.sequence_number, s.timestamp_ms, millis_to_iso(s.timestamp_ms),
            s.operation, s.schema_id, s.manifest_list, dict(s.summary), s.first_row_id, s.added_rows),
        totals=table_totals(table, s), snapshots=len(md.snapshots), snapshot_log_size=len(md.snapshot_log),
        metadata_log_size=len(md.metadata_log), statistics=stats, partition_statistics=partition_stats, metadata=md)


def statistics_files(md: TableMetadata) -> tuple[list[StatisticsFile], list[PartitionStatisticsFile]]:
    """The statistics and partition statistics files the metadata registers (blob fields named in
    the current schema; a malformed blob entry is skipped)."""
    schema = md.current_schema_or_none

    def name(fid: object) -> str | None:
        return schema.column_name(fid) if schema is not None and isinstance(fid, int) else None

    def as_int(v: object) -> int | None:
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    stats = []
    for st in md.statistics:
        blobs = []
        for b in st.raw.get("blob-metadata") or []:
            if not isinstance(b, dict):
                continue
            fields = [f for f in (b.get("fields") or []) if isinstance(f, int)]
            props = b.get("properties") if isinstance(b.get("properties"), dict) else {}
            blobs.append(StatisticsBlob(str(b.get("type")), as_int(b.get("snapshot-id")),
                                        as_int(b.get("sequence-number")), fields, [name(f) for f in fields],
                                        {str(k): str(v) for k, v in props.items()}))
        stats.append(StatisticsFile(st.snapshot_id, st.statistics_path, st.file_size_in_bytes,
                                    as_int(st.raw.get("file-footer-size-in-bytes")), blobs))
    partition = [PartitionStatisticsFile(p.snapshot_id, p.statistics_path, p.file_size_in_bytes)
                 for p in md.partition_statistics]
    return stats, partition


# -- snapshots -----------------------------------------------------------------------------------

@dataclass
class SnapshotRow:
    snapshot_id: int
    parent_snapshot_id: int | None
    timestamp_ms: int
    committed_at: str  # timestamp_ms as ISO 8601 UTC, e.g. 2026-01-31T12:00:00.000Z
    operation: str | None
    sequence_number: int
    schema_id: int | None
    added_data_files: int | None
    removed_data_files: int | None
    added_delete_files: int | None
    removed_delete_files: int | None
    added_records: int | None
    removed_records: int | None
    refs: list[str]
    is_current: bool
    in_main: bool
    manifest_list: str | None
    summary: dict[str, str]
    first_row_id: int | None = None
    added_rows: int | None = None


def iso_utc(ms: int) -> str:
    return millis_to_iso(ms)


def _int(summary: dict[str, str], *keys: str) -> int | None:
    vals = [summary.get(k) for k in keys]
    nums = [int(v) for v in vals if v is not None and v.lstrip("-").isdigit()]
    return sum(nums) if nums else None


def refs_by_snapshot(md: TableMetadata) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for name, ref in sorted(md.all_refs.items(), key=lambda kv: (kv[0] != MAIN_BRANCH, kv[0])):
        out.setdefault(ref.snapshot_id, []).append(name)
    return out


def list_snapshots(table: Table, *, ref: str | None = None, limit: int | None = None,
                   since: str | None = None) -> list[SnapshotRow]:
    md = table.metadata
    if ref is not None:
        r = md.all_refs.get(ref)
        if r is None:
            raise NotFoundError(f"ref {ref!r} does not exist in {table.name}",
                                hint="refs: " + ", ".join(sorted(md.all_refs)) if md.all_refs else None)
        snaps = md.ancestors_of(r.snapshot_id)
    else:
        snaps = sorted(md.snapshots, key=lambda s: (s.sequence_number, s.timestamp_ms), reverse=True)
    if since is not None:
        cutoff = parse_timestamp_ms(since, what="--since")
        snaps = [s for s in snaps if s.timestamp_ms >= cutoff]
    if limit is not None:
        if limit < 0:
            raise UsageError("--limit must be 0 or more")
        snaps = snaps[:limit]
    main = md.all_refs.get(MAIN_BRANCH)
    main_ids = {s.snapshot_id for s in md.ancestors_of(main.snapshot_id)} if main else set()
    by_snap = refs_by_snapshot(md)
    rows = []
    for s in snaps:
        sm = s.summary
        rows.append(SnapshotRow(
            snapshot_id=s.snapshot_id, parent_snapshot_id=s.parent_snapshot_id, timestamp_ms=s.timestamp_ms,
            committed_at=iso_utc(s.timestamp_ms), operation=s.operation, sequence_number=s.sequence_number, schema_id=s.schema_id,
            added_data_files=_int(sm, "added-data-files"), removed_data_files=_int(sm, "deleted-data-files"),
            added_delete_files=_int(sm, "added-delete-files"), removed_delete_files=_int(sm, "removed-delete-files"),
            added_records=_int(sm, "added-records"), removed_records=_int(sm, "deleted-records"),
            refs=by_snap.get(s.snapshot_id, []), is_current=s.snapshot_id == md.current_snapshot_id,
            in_main=s.snapshot_id in main_ids, manifest_list=s.manifest_list, summary=dict(sm),
            first_row_id=s.first_row_id, added_rows=s.added_rows,
        ))
    return rows


@dataclass
class SnapshotTree:
    """Snapshots as a forest by parent, with the refs at each node (for ``snapshots --tree``)."""

    roots: list[int]
    children: dict[int, list[int]]
    rows: dict[int, SnapshotRow]


def snapshot_tree(table: Table) -> SnapshotTree:
    rows = {r.snapshot_id: r for r in list_snapshots(table)}
    children: dict[int, list[int]] = {}
    roots = []
    for r in sorted(rows.values(), key=lambda r: (r.sequence_number, r.timestamp_ms)):
        if r.parent_snapshot_id is not None and r.parent_snapshot_id in rows:
            children.setdefault(r.parent_snapshot_id, []).append(r.snapshot_id)
        else:
            roots.append(r.snapshot_id)
    return SnapshotTree(roots, children, rows)


# -- files -----------------------------------------------------------------------------------------

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
               content: str | None = None) -> Iterator[FileRow]:
    """The live files of a snapshot (current, ``snapshot_id`` or ``ref``), streamed in manifest
    order: a bad snapshot or ref raises here; the manifests are read as the rows are consumed,
    a few at a time, so a table of millions of files is listed in bounded memory."""
    snap = resolve_snapshot(table, snapshot_id=snapshot_id, ref=ref)
    return _file_rows(table, snap, content)


def _file_rows(table: Table, snap: Snapshot | None, content: str | None) -> Iterator[FileRow]:
    from icectl.formats.manifest import content_kind
    from icectl.spec.conversions import to_internal
    from icectl.spec.transforms import parse_transform
    from icectl.table.listing import live_file_rows

    md = table.metadata
    spec_info: dict[int, list[tuple[str, Any, Any]]] = {}
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
        spec_info[spec.spec_id] = info
    # Tables have far fewer partitions than files: format each partition once.
    formatted: dict[tuple, tuple[dict[str, Any], dict[str, Any]]] = {}

    def partition_of(spec_id: int, values: tuple) -> tuple[dict[str, Any], dict[str, Any]]:
        key = (spec_id, values)
        done = formatted.get(key)
        if done is None:
            info = spec_info.get(spec_id, [])
            values = tuple(to_internal(rt, v) for (_, _, rt, _), v in zip(info, values))
            done = ({name: _human_partition(tr, src, v) for (name, tr, rt, src), v in zip(info, values)},
                    {name: _json_partition(rt, v) for (name, tr, rt, src), v in zip(info, values)})
            formatted[key] = done
        return done

    for (c, path, fmt, spec_id, values, rc, size, seq, fseq, sid, st, frid, ref, off, clen, eq) in \
            live_file_rows(table, snap):
        kind = content_kind(c, fmt)
        if content is not None and kind != content:
            continue
        part, part_json = partition_of(spec_id, values)
        yield FileRow(
            content=kind, file_path=path, file_format=fmt, spec_id=spec_id, partition=part_json,
            partition_display=part, record_count=rc, file_size_in_bytes=size, data_sequence_number=seq,
            file_sequence_number=fseq, snapshot_id=sid, status=_STATUS[st], first_row_id=frid,
            referenced_data_file=ref, content_offset=off, content_size_in_bytes=clen,
            equality_ids=list(eq) if eq is not None else None)


_STATUS = {0: "existing", 1: "added", 2: "deleted"}


def _human_partition(tr: Any, source: Any, v: Any) -> Any:
    if v is None:
        return None
    try:
        return tr.human(v, source) if tr is not None else str(v)
    except Exception:
        return str(v)


def _json_partition(rt: Any, v: Any) -> Any:
    if v is None or rt is None:
        return v if isinstance(v, (int, float, str, bool)) or v is None else str(v)
    from icectl.spec.conversions import to_json

    try:
        return to_json(rt, v)
    except Exception:
        return str(v)


def ref_list(md: TableMetadata) -> list[RefRow]:
    """The table's branches and tags, main first."""
    return [RefRow(n, r.ref_type, r.snapshot_id, r.min_snapshots_to_keep, r.max_snapshot_age_ms, r.max_ref_age_ms)
            for n, r in ref_rows(md)]


def ref_rows(md: TableMetadata) -> list[tuple[str, SnapshotRef]]:
    # The refs the metadata has (a v1 file without refs gets main when parsed): never invent main.
    return sorted(md.refs.items(), key=lambda kv: (kv[0] != MAIN_BRANCH, kv[1].ref_type, kv[0]))
