"""What ``describe`` prints."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from icectl.cli.context import Env
from icectl.cli.output import SpecJson, fmt_bytes, fmt_ts, iso_ts, num, print_kv, print_table, say, text_renderer
from icectl.cli.views.common import RefView, print_refs, print_schema, print_specs_and_orders, ref_views

if TYPE_CHECKING:
    from icectl.ops.inspect import Description
    from icectl.spec.metadata import TableMetadata


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
class TableTotals:
    """Live files and rows of the current snapshot (data bytes null when the summary lacks them)."""

    data_files: int
    delete_files: int
    position_delete_files: int
    equality_delete_files: int
    deletion_vectors: int
    records: int
    position_delete_records: int
    equality_delete_records: int
    data_bytes: int | None
    delete_bytes: int


@dataclass
class TableDescription:
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
    schema: SpecJson
    schemas: list[SpecJson]
    default_spec_id: int
    partition_specs: list[SpecJson]
    default_sort_order_id: int
    sort_orders: list[SpecJson]
    properties: dict[str, str]
    refs: list[RefView]
    current_snapshot: CurrentSnapshot | None
    totals: TableTotals
    snapshots: int
    snapshot_log_size: int
    metadata_log_size: int
    statistics: list[StatisticsView]
    partition_statistics: list[PartitionStatisticsView]
    metadata: TableMetadata = field(repr=False)


@dataclass
class BlobView:
    """A statistics file's blob metadata (the spec's ``blob-metadata``)."""

    type: str
    snapshot_id: int | None
    sequence_number: int | None
    fields: list[int]
    columns: list[str | None]  # the fields' names in the current schema (null: not in it)
    properties: dict[str, str]


@dataclass
class StatisticsView:
    """A table statistics file (Puffin) as table metadata registers it."""

    snapshot_id: int
    statistics_path: str
    file_size_in_bytes: int
    file_footer_size_in_bytes: int | None
    blobs: list[BlobView]


@dataclass
class PartitionStatisticsView:
    snapshot_id: int
    statistics_path: str
    file_size_in_bytes: int


def _statistics_views(md: TableMetadata) -> tuple[list[StatisticsView], list[PartitionStatisticsView]]:
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
            blobs.append(BlobView(str(b.get("type")), as_int(b.get("snapshot-id")), as_int(b.get("sequence-number")),
                                  fields, [name(f) for f in fields], {str(k): str(v) for k, v in props.items()}))
        stats.append(StatisticsView(st.snapshot_id, st.statistics_path, st.file_size_in_bytes,
                                    as_int(st.raw.get("file-footer-size-in-bytes")), blobs))
    partition = [PartitionStatisticsView(p.snapshot_id, p.statistics_path, p.file_size_in_bytes)
                 for p in md.partition_statistics]
    return stats, partition


def table_description(d: Description) -> TableDescription:
    md = d.metadata
    v = md.format_version
    s = d.current_snapshot
    t = d.totals
    stats, partition_stats = _statistics_views(md)
    return TableDescription(
        name=d.name, table_uuid=d.table_uuid, location=d.location, metadata_location=d.metadata_location,
        format_version=v, last_updated_ms=d.last_updated_ms, last_sequence_number=d.last_sequence_number,
        last_column_id=d.last_column_id, next_row_id=d.next_row_id, current_schema_id=md.current_schema_id,
        schema=md.schema.to_json(), schemas=[x.to_json() for x in md.schemas], default_spec_id=md.default_spec_id,
        partition_specs=[x.to_json(v) for x in md.partition_specs], default_sort_order_id=md.default_sort_order_id,
        sort_orders=[o.to_json() for o in md.sort_orders], properties=dict(md.properties), refs=ref_views(md),
        current_snapshot=None if s is None else CurrentSnapshot(
            s.snapshot_id, s.parent_snapshot_id, s.sequence_number, s.timestamp_ms, iso_ts(s.timestamp_ms),
            s.operation, s.schema_id, s.manifest_list, dict(s.summary), s.first_row_id, s.added_rows),
        totals=TableTotals(t.data_files, t.delete_files, t.position_delete_files, t.equality_delete_files,
                           t.deletion_vectors, t.records, t.position_delete_records, t.equality_delete_records,
                           t.data_bytes, t.delete_bytes),
        snapshots=d.snapshot_count, snapshot_log_size=d.snapshot_log_size, metadata_log_size=d.metadata_log_size,
        statistics=stats, partition_statistics=partition_stats, metadata=md)


@text_renderer(TableDescription)
def _description_text(env: Env, d: TableDescription) -> None:
    md = d.metadata
    print_kv(env, [
        ("uuid", d.table_uuid), ("location", d.location), ("metadata", d.metadata_location),
        ("format version", d.format_version), ("last updated", fmt_ts(d.last_updated_ms)),
        ("last sequence number", d.last_sequence_number), ("last column id", d.last_column_id),
        *([("next row id", d.next_row_id)] if d.format_version >= 3 else []),
    ], title=f"Table {d.name}")
    say(env)
    print_schema(env, md.schema)
    if len(md.schemas) > 1:
        say(env, (f"{len(md.schemas)} schemas in history; current is {md.current_schema_id}", "dim"))
    say(env)
    print_specs_and_orders(env, md)
    if d.properties:
        say(env)
        print_kv(env, sorted(d.properties.items()), title="Properties")
    say(env)
    print_refs(env, d.refs)
    say(env)
    snap = d.current_snapshot
    t = d.totals
    rows: list[tuple[str, object]] = []
    if snap is None:
        rows.append(("current snapshot", "none (empty table)"))
    else:
        rows += [("current snapshot", snap.snapshot_id), ("committed at", fmt_ts(snap.timestamp_ms)),
                 ("operation", snap.operation), ("sequence number", snap.sequence_number)]
    rows += [("data files", num(t.data_files)), ("records", num(t.records)), ("data size", fmt_bytes(t.data_bytes)),
             ("delete files", f"{num(t.delete_files)} (position {t.position_delete_files}, equality "
                              f"{t.equality_delete_files}, deletion vectors {t.deletion_vectors})"),
             ("deleted rows recorded", f"position {num(t.position_delete_records)}, equality "
                                       f"{num(t.equality_delete_records)}"),
             ("snapshots", d.snapshots), ("snapshot log", d.snapshot_log_size), ("metadata log", d.metadata_log_size)]
    print_kv(env, rows, title="Current state")
    _statistics_text(env, d)


def _statistics_text(env: Env, d: TableDescription) -> None:
    if d.statistics:
        say(env)
        rows = []
        for st in d.statistics:
            for b in st.blobs or [BlobView("(no blobs)", None, None, [], [], {})]:
                cols = ", ".join(c or str(f) for f, c in zip(b.fields, b.columns))
                rows.append([str(st.snapshot_id), cols, b.type, b.properties.get("ndv", ""), st.statistics_path])
        print_table(env, ["snapshot", "columns", "blob type", "ndv", "file"], rows, right={"ndv"},
                    title=f"Statistics ({len(d.statistics)} files)")
    if d.partition_statistics:
        say(env)
        print_table(env, ["snapshot", "size", "file"],
                    [[str(p.snapshot_id), fmt_bytes(p.file_size_in_bytes), p.statistics_path]
                     for p in d.partition_statistics], right={"size"},
                    title=f"Partition statistics ({len(d.partition_statistics)} files)")
