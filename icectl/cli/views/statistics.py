"""What ``compute-stats`` and ``compute-partition-stats`` print."""
from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from icectl.cli.context import Env
from icectl.cli.output import fmt_bytes, print_kv, print_table, say, say_verbatim, text_renderer
from icectl.ops.stats.partition_stats import COUNTERS

if TYPE_CHECKING:
    from icectl.ops.stats.compute_stats import ComputeStatsPlan, ComputeStatsResult
    from icectl.ops.stats.partition_stats import PartitionStatsPlan, PartitionStatsResult


@dataclass
class NdvColumnView:
    name: str
    field_id: int
    type: str
    ndv: int | None  # the blob's ndv property (null in a plan)
    estimate: float | None
    lower_bound: float | None  # the sketch's bounds at 2 standard deviations (~95%)
    upper_bound: float | None


@dataclass
class ComputeStatsReport:
    """What ``compute-stats`` did or would do. ``statistics``: the table-metadata entry it
    registered (the spec's statistics-file object), null in a plan; ``replaces``: the statistics
    file registered for the snapshot before (left in place, as Iceberg Java leaves it)."""

    table: str
    snapshot_id: int
    sequence_number: int
    schema_id: int | None
    columns: list[NdvColumnView]
    data_files: int
    delete_files: int
    data_bytes: int
    statistics_path: str
    replaces: str | None
    rows: int | None
    statistics: dict[str, Any] | None
    spark_command: list[str] | None
    metadata_location: str | None
    dry_run: bool
    applied: bool
    commits: list[dict] = field(default_factory=list)


def compute_stats_report(plan: ComputeStatsPlan, result: ComputeStatsResult | None, *, dry_run: bool,
                         command: list[str] | None = None) -> ComputeStatsReport:
    ndv = {c.field_id: c for c in result.columns} if result is not None else {}
    cols = []
    for c in plan.columns:
        n = ndv.get(c.field_id)
        cols.append(NdvColumnView(c.name, c.field_id, c.type, n.ndv if n else None, n.estimate if n else None,
                                  n.lower_bound if n else None, n.upper_bound if n else None))
    return ComputeStatsReport(
        table=plan.table, snapshot_id=plan.snapshot_id, sequence_number=plan.sequence_number,
        schema_id=plan.schema_id, columns=cols, data_files=plan.data_files, delete_files=plan.delete_files,
        data_bytes=plan.data_bytes, statistics_path=plan.statistics_path, replaces=plan.replaces,
        rows=result.rows if result else None, statistics=result.statistics.to_json() if result else None,
        spark_command=command, metadata_location=result.committed.table.metadata_location if result else None,
        dry_run=dry_run, applied=result is not None,
        commits=[result.committed.sent_json()] if result else [plan.planned_commit])


@text_renderer(ComputeStatsReport)
def _stats_text(env: Env, r: ComputeStatsReport) -> None:
    if r.applied:
        say(env, f"computed NDV statistics of {len(r.columns)} columns of {r.table} at snapshot {r.snapshot_id} "
                 f"({r.rows} rows read)")
        print_table(env, ["column", "field id", "type", "ndv", "~95% bounds"],
                    [[c.name, str(c.field_id), c.type, str(c.ndv),
                      f"{c.lower_bound:.0f} .. {c.upper_bound:.0f}" if c.lower_bound is not None else ""]
                     for c in r.columns], right={"field id", "ndv"})
        say(env, f"wrote {r.statistics_path}")
        if r.replaces:
            say(env, f"replaced {r.replaces} as the snapshot's statistics file (the old file stays until "
                     "remove-orphans)")
        say(env, f"committed {r.metadata_location}")
        return
    say(env, f"{r.table}: NDV statistics (theta sketches) of snapshot {r.snapshot_id}, schema {r.schema_id}"
             + (" (dry run: nothing changed)" if r.dry_run else ""))
    print_table(env, ["column", "field id", "type"], [[c.name, str(c.field_id), c.type] for c in r.columns],
                right={"field id"})
    print_kv(env, [("data files", f"{r.data_files} ({fmt_bytes(r.data_bytes)}), {r.delete_files} delete files"),
                   ("statistics file", r.statistics_path),
                   ("replaces", r.replaces or "none")])
    if r.spark_command:
        say(env, "spark-submit command:")
        say_verbatim(env, shlex.join(r.spark_command))  # one line that pastes into a shell


@dataclass
class PartitionStatsRowView:
    partition: dict[str, Any]
    spec_id: int
    data_record_count: int
    data_file_count: int
    total_data_file_size_in_bytes: int
    position_delete_record_count: int
    position_delete_file_count: int
    equality_delete_record_count: int
    equality_delete_file_count: int
    total_record_count: int | None
    last_updated_at: int | None
    last_updated_snapshot_id: int | None
    dv_count: int


@dataclass
class PartitionStatsReport:
    """What ``compute-partition-stats`` did or would do: the rows of the file (partition values as
    the spec's JSON single values), where it goes, and ``existing`` when the snapshot has a
    partition statistics file already (then nothing is done, as Iceberg Java does)."""

    table: str
    snapshot_id: int
    partition_type: list[dict[str, Any]]
    manifests: int
    partitions: list[PartitionStatsRowView]
    statistics_path: str | None
    existing: str | None
    statistics: dict[str, Any] | None
    metadata_location: str | None
    dry_run: bool
    applied: bool
    commits: list[dict] = field(default_factory=list)


def partition_stats_report(plan: PartitionStatsPlan, result: PartitionStatsResult | None, *,
                           dry_run: bool) -> PartitionStatsReport:
    rows = [PartitionStatsRowView(r.partition, *(getattr(r, name) for _, name, _ in COUNTERS)) for r in plan.rows]
    return PartitionStatsReport(
        table=plan.table, snapshot_id=plan.snapshot_id,
        partition_type=[{"field-id": u.field_id, "name": u.name, "type": str(u.type)} for u in plan.partition_type],
        manifests=plan.manifests, partitions=rows,
        statistics_path=plan.statistics_path if plan.changes else None, existing=plan.existing,
        statistics=result.statistics.to_json() if result else None,
        metadata_location=result.committed.table.metadata_location if result else None,
        dry_run=dry_run, applied=result is not None,
        commits=[result.committed.sent_json()] if result else ([plan.planned_commit] if plan.planned_commit else []))


@text_renderer(PartitionStatsReport)
def _pstats_text(env: Env, r: PartitionStatsReport) -> None:
    if r.existing:
        say(env, f"{r.table}: snapshot {r.snapshot_id} has a partition statistics file already: {r.existing}")
        return
    if r.applied:  # the plan (with its rows) was printed before the question
        say(env, f"computed partition statistics of {r.table} at snapshot {r.snapshot_id}: "
                 f"{len(r.partitions)} partitions from {r.manifests} manifests")
        say(env, f"wrote {r.statistics['statistics-path'] if r.statistics else r.statistics_path}")
        say(env, f"committed {r.metadata_location}")
        return
    say(env, f"{r.table}: partition statistics of snapshot {r.snapshot_id}" +
             (" (dry run: nothing changed)" if r.dry_run else "") +
             f": {len(r.partitions)} partitions from {r.manifests} manifests")
    rows = [[", ".join(f"{k}={v}" for k, v in p.partition.items()), str(p.spec_id), str(p.data_record_count),
             str(p.data_file_count), fmt_bytes(p.total_data_file_size_in_bytes),
             str(p.position_delete_record_count), str(p.equality_delete_record_count), str(p.dv_count),
             str(p.last_updated_snapshot_id or "")] for p in r.partitions[:50]]
    print_table(env, ["partition", "spec", "records", "files", "bytes", "pos deletes", "eq deletes", "DVs",
                      "last updated by"], rows,
                right={"spec", "records", "files", "bytes", "pos deletes", "eq deletes", "DVs"}, empty="no partitions")
    if len(r.partitions) > 50:
        say(env, f"... and {len(r.partitions) - 50} more partitions (-o json lists all)")
    if not r.partitions:
        say(env, "the snapshot has no files: nothing to write")
    else:
        say(env, f"statistics file: {r.statistics_path}")
