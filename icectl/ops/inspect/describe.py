"""``describe``: what a table is (identity, schema, specs, sort orders, properties, refs, totals,
statistics files), as a plain dataclass the CLI renders."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from icectl.formats.manifest import FileContent, ManifestContent
from icectl.spec.metadata import MAIN_BRANCH, Snapshot, SnapshotRef, TableMetadata
from icectl.spec.temporal import millis_to_iso
from icectl.table.loaded import Table


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


def ref_list(md: TableMetadata) -> list[RefRow]:
    """The table's branches and tags, main first."""
    return [RefRow(n, r.ref_type, r.snapshot_id, r.min_snapshots_to_keep, r.max_snapshot_age_ms, r.max_ref_age_ms)
            for n, r in ref_rows(md)]


def ref_rows(md: TableMetadata) -> list[tuple[str, SnapshotRef]]:
    # The refs the metadata has (a v1 file without refs gets main when parsed): never invent main.
    return sorted(md.refs.items(), key=lambda kv: (kv[0] != MAIN_BRANCH, kv[1].ref_type, kv[0]))
