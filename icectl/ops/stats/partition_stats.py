"""Partition statistics, computed natively from manifests (no Spark), as Iceberg Java's
``compute_partition_stats`` procedure does (PartitionStatsHandler.computeAndWriteStatsFile, 1.10,
full compute):

- the partition type is the table's unified one (Java's ``Partitioning.partitionType``): every
  partition field of every spec whose source column is in the current schema, by field id, named
  as the newest spec names it, all optional;
- every manifest of the snapshot is read, entries of every status: a live (added or existing)
  entry adds its file to the row of its (spec id, partition): data files to
  ``data_record_count``, ``data_file_count`` and ``total_data_file_size_in_bytes``; position
  delete files and deletion vectors to ``position_delete_record_count`` and, DVs apart, to
  ``position_delete_file_count`` (a DV counts in ``dv_count``, v3); equality delete files to
  theirs. Any entry, deleted ones too, moves ``last_updated_at`` and ``last_updated_snapshot_id``
  to its snapshot when that snapshot is newer and still in the table. ``total_record_count`` is
  null (it would need a scan);
- the rows are sorted by partition (nulls first) and written as a Parquet file
  ``<metadata folder>/partition-stats-<snapshot-id>-<uuid>.parquet`` with the spec's schema
  (field ids 1 to 12; v3 and later: the delete counts required and ``dv_count`` 13), and
  registered with ``set-partition-statistics``.

A table whose specs are all unpartitioned has no partition statistics (refused, exit 7), and a
snapshot that already has a partition statistics file is left as it is (Java returns that file).
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from icectl.errors import CommitStateUnknownError, ConflictingChangeError, IcectlError, NoSnapshotsError, NotFoundError, UnsupportedError
from icectl.formats.manifest import FileContent, partition_fields
from icectl.io import join
from icectl.io.safety import table_guard
from icectl.spec.metadata import Snapshot, StatisticsFile
from icectl.spec.types import PrimitiveType
from icectl.table.transaction import Committed, Transaction, sent_json
from icectl.table.loaded import Table
from icectl.table.metadata_io import metadata_folder
from icectl.table.requirements import requirements_for
from icectl.table.updates import SetPartitionStatistics, TableUpdate
from icectl.formats import parquet
from icectl.formats.parquet import iceberg_field
from icectl.spark.rewrite import arrow_type
from icectl.spec.conversions import to_json
from icectl.table.listing import bounded_map

# The partition statistics file's columns (table spec: "Partition Statistics"), after `partition` (1).
COUNTERS = (
    (2, "spec_id", "int"), (3, "data_record_count", "long"), (4, "data_file_count", "int"),
    (5, "total_data_file_size_in_bytes", "long"), (6, "position_delete_record_count", "long"),
    (7, "position_delete_file_count", "int"), (8, "equality_delete_record_count", "long"),
    (9, "equality_delete_file_count", "int"), (10, "total_record_count", "long"), (11, "last_updated_at", "long"),
    (12, "last_updated_snapshot_id", "long"), (13, "dv_count", "int"),
)
_V2_REQUIRED = {2, 3, 4, 5}
_V3_REQUIRED = {2, 3, 4, 5, 6, 7, 8, 9, 13}


@dataclass
class UnifiedField:
    field_id: int
    name: str
    type: PrimitiveType


@dataclass
class PartitionStatsRow:
    partition: dict[str, Any]  # partition field name -> value as the spec's JSON single value
    spec_id: int
    data_record_count: int = 0
    data_file_count: int = 0
    total_data_file_size_in_bytes: int = 0
    position_delete_record_count: int = 0
    position_delete_file_count: int = 0
    equality_delete_record_count: int = 0
    equality_delete_file_count: int = 0
    total_record_count: int | None = None
    last_updated_at: int | None = None
    last_updated_snapshot_id: int | None = None
    dv_count: int = 0
    key: tuple = field(default=(), repr=False, compare=False)  # internal values, unified order


@dataclass
class PartitionStatsPlan:
    table: str
    base_metadata_location: str
    snapshot_id: int
    format_version: int
    partition_type: list[UnifiedField]
    manifests: int
    statistics_path: str
    existing: str | None  # a partition statistics file registered for this snapshot already
    rows: list[PartitionStatsRow] = field(default_factory=list)
    planned_commit: dict = field(default_factory=dict, repr=False)

    @property
    def changes(self) -> bool:
        return self.existing is None and bool(self.rows)


@dataclass
class PartitionStatsResult:
    plan: PartitionStatsPlan
    statistics: StatisticsFile
    committed: Committed


def unified_partition_type(table: Table) -> list[UnifiedField]:
    """Java's ``Partitioning.partitionType(table)``: the partition fields of all specs whose source
    is in the current schema, by field id; names from the newest spec that has the field; a void
    (dropped, v1) field takes the type of a non-void one with the same id."""
    md = table.metadata
    schema = md.schema
    fields: dict[int, UnifiedField] = {}
    void: dict[int, bool] = {}
    for spec in sorted(md.partition_specs, key=lambda s: s.spec_id, reverse=True):
        typed = {fid: t for fid, _, t in partition_fields(spec, md.find_type)}
        for f in spec.fields:
            if schema.find_field(f.source_id) is None:
                continue
            is_void = f.transform == "void"
            if f.field_id not in fields:
                fields[f.field_id] = UnifiedField(f.field_id, f.name, typed[f.field_id])
                void[f.field_id] = is_void
            elif void[f.field_id] and not is_void:
                fields[f.field_id].type = typed[f.field_id]
                void[f.field_id] = False
    return [fields[k] for k in sorted(fields)]


def snapshot_to_measure(table: Table, snapshot_id: int | None, *, nothing: str) -> Snapshot:
    """The snapshot statistics are computed for: ``snapshot_id``, or the current one. NotFoundError
    for an unknown id; NoSnapshotsError (``nothing`` says what there is not to compute) without
    a current snapshot."""
    md = table.metadata
    if snapshot_id is not None:
        snap = md.snapshot_by_id(snapshot_id)
        if snap is None:
            raise NotFoundError(f"snapshot {snapshot_id} does not exist in {table.name}")
        return snap
    if md.current_snapshot is None:
        raise NoSnapshotsError(f"{table.name} has no current snapshot: {nothing}")
    return md.current_snapshot


def _sort_key(values: tuple) -> tuple:
    return tuple((0, 0) if v is None else (1, v) for v in values)


def compute_rows(table: Table, snapshot: Snapshot, unified: list[UnifiedField]) -> tuple[list[PartitionStatsRow], int]:
    """One row per (spec id, partition) of the snapshot's manifests, sorted by partition; and the
    number of manifests read."""
    md = table.metadata
    position = {f.field_id: i for i, f in enumerate(unified)}
    manifests = table.manifests(snapshot)
    rows: dict[tuple[int, tuple], PartitionStatsRow] = {}
    snapshots = {s.snapshot_id: s for s in md.snapshots}
    for m, entries in zip(manifests, bounded_map(lambda m: table.read_entries(m, with_stats=False), manifests, workers=8)):
        spec = md.spec_by_id(m.partition_spec_id)
        for e in entries:
            f = e.data_file
            values: list[Any] = [None] * len(unified)
            for pf, v in zip(spec.fields, f.partition):
                if pf.field_id in position:
                    values[position[pf.field_id]] = v
            key = (m.partition_spec_id, tuple(values))
            row = rows.get(key)
            if row is None:
                row = rows[key] = PartitionStatsRow(
                    partition={u.name: to_json(u.type, v) if v is not None else None for u, v in zip(unified, values)},
                    spec_id=key[0], key=tuple(values))
            if e.is_live:
                if f.content == FileContent.DATA:
                    row.data_record_count += f.record_count
                    row.data_file_count += 1
                    row.total_data_file_size_in_bytes += f.file_size_in_bytes
                elif f.content == FileContent.POSITION_DELETES:
                    row.position_delete_record_count += f.record_count
                    if f.is_deletion_vector:
                        row.dv_count += 1
                    else:
                        row.position_delete_file_count += 1
                else:
                    row.equality_delete_record_count += f.record_count
                    row.equality_delete_file_count += 1
            snap = snapshots.get(e.snapshot_id) if e.snapshot_id is not None else None
            if snap is not None and (row.last_updated_at is None or row.last_updated_at < snap.timestamp_ms):
                row.last_updated_at = snap.timestamp_ms
                row.last_updated_snapshot_id = snap.snapshot_id
    return sorted(rows.values(), key=lambda r: _sort_key(r.key)), len(manifests)


def plan_partition_stats(table: Table, *, snapshot_id: int | None = None) -> PartitionStatsPlan:
    md = table.metadata
    if all(s.is_unpartitioned for s in md.partition_specs):
        raise UnsupportedError(f"{table.name} is not partitioned: partition statistics need a partitioned table")
    snap = snapshot_to_measure(table, snapshot_id, nothing="there are no partition statistics to compute")
    unified = unified_partition_type(table)
    existing = next((s.statistics_path for s in md.partition_statistics if s.snapshot_id == snap.snapshot_id), None)
    folder = metadata_folder(md, md.location or "")
    path = join(folder, f"partition-stats-{snap.snapshot_id}-{uuid.uuid4()}.parquet")
    rows, manifests = compute_rows(table, snap, unified) if existing is None else ([], 0)
    plan = PartitionStatsPlan(table.name, table.metadata_location, snap.snapshot_id, md.format_version, unified,
                              manifests, path, existing, rows)
    if plan.changes:
        updates: list[TableUpdate] = [SetPartitionStatistics(StatisticsFile(snap.snapshot_id, path, 0, {}))]
        plan.planned_commit = sent_json(md, requirements_for(md, updates), updates)
    return plan


def arrow_schema(unified: list[UnifiedField], format_version: int) -> Any:
    """The partition statistics file's schema (PartitionStatsHandler.schema(type, formatVersion))."""
    import pyarrow as pa

    required = _V3_REQUIRED if format_version >= 3 else _V2_REQUIRED
    partition = pa.struct([iceberg_field(u.name, _arrow_partition_type(u.type, arrow_type), u.field_id)
                           for u in unified])
    fields = [iceberg_field("partition", partition, 1, nullable=False)]
    for i, name, t in COUNTERS:
        if i == 13 and format_version < 3:
            continue
        fields.append(iceberg_field(name, pa.int32() if t == "int" else pa.int64(), i, nullable=i not in required))
    return pa.schema(fields)


def _arrow_partition_type(t: PrimitiveType, arrow_type: Any) -> Any:
    import pyarrow as pa

    at = arrow_type(t)
    if at == pa.large_string():
        return pa.string()
    if at == pa.large_binary():
        return pa.binary()
    return at


def parquet_bytes(plan: PartitionStatsPlan) -> bytes:
    import pyarrow as pa

    schema = arrow_schema(plan.partition_type, plan.format_version)
    part_type = schema.field("partition").type
    children = []
    for i, u in enumerate(plan.partition_type):
        vals = [r.key[i] for r in plan.rows]
        children.append(_arrow_values(vals, part_type.field(i).type, u.type))
    partition = pa.StructArray.from_arrays(children, fields=list(part_type)) if children else \
        pa.array([{}] * len(plan.rows), type=part_type)
    columns = [partition]
    for i, name, _ in COUNTERS:
        if i == 13 and plan.format_version < 3:
            continue
        columns.append(pa.array([getattr(r, name) for r in plan.rows], type=schema.field(name).type))
    return parquet.parquet_bytes(pa.Table.from_arrays(columns, schema=schema), compression="zstd")


def _arrow_values(values: list[Any], arrow_t: Any, t: PrimitiveType) -> Any:
    import pyarrow as pa

    base = t.base
    if base == "uuid":
        values = [v.bytes if v is not None else None for v in values]
    if base in ("date", "time", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"):
        raw = pa.array(values, type=pa.int32() if base == "date" else pa.int64())
        return raw.cast(arrow_t)
    return pa.array(values, type=arrow_t)


def apply_partition_stats(table: Table, plan: PartitionStatsPlan) -> PartitionStatsResult:
    """Write the file and register it for the plan's snapshot; the file is removed if the commit
    fails for sure."""
    data = parquet_bytes(plan)
    table.io.write(plan.statistics_path, data)
    path = table.relativize(plan.statistics_path) if plan.format_version >= 4 else plan.statistics_path
    stats = StatisticsFile(plan.snapshot_id, path, len(data),
                           {"snapshot-id": plan.snapshot_id, "statistics-path": path, "file-size-in-bytes": len(data)})

    done = commit_statistics_file(table, written=plan.statistics_path, snapshot_id=plan.snapshot_id,
                                  update=SetPartitionStatistics(stats))
    return PartitionStatsResult(plan, stats, done)


def commit_statistics_file(table: Table, *, written: str, snapshot_id: int, update: TableUpdate) -> Committed:
    """Commit ``update`` (a set-statistics or set-partition-statistics of the file ``written``,
    for ``snapshot_id``), re-checked on every attempt: a snapshot expired since planning is a
    conflict, nothing is committed. The written file is deleted when the commit failed, and
    kept when its outcome is unknown (the table may use it)."""

    def build(txn: Transaction) -> list[TableUpdate]:
        if txn.table.metadata.snapshot_by_id(snapshot_id) is None:
            raise ConflictingChangeError(f"snapshot {snapshot_id} of {table.name} was expired while its statistics "
                                         "were computed; nothing was committed")
        return [update]

    try:
        return Transaction(table).commit(build)
    except IcectlError as e:
        if not isinstance(e, CommitStateUnknownError):
            try:
                table.io.delete(written, guard=table_guard(table.io, table.metadata.location))
            except (IcectlError, OSError):
                pass
        raise


__all__ = ["COUNTERS", "PartitionStatsPlan", "PartitionStatsResult", "PartitionStatsRow", "UnifiedField",
           "apply_partition_stats", "arrow_schema", "compute_rows", "parquet_bytes", "plan_partition_stats",
           "unified_partition_type"]
