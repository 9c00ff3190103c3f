"""Table statistics (NDV), as Iceberg Java's ``compute_table_stats`` procedure computes them
(ComputeTableStatsSparkAction, NDVSketchUtil, 1.10):

- a snapshot (the current one, or ``--snapshot``) and its schema; the columns given (each a
  primitive column, top level or inside structs) or else every top-level primitive column;
- a Spark job reads the snapshot's live data files with their deletes applied and builds one theta
  sketch per column (:mod:`icectl.spark.ndv`); the driver unites the tasks' sketches;
- icectl writes a Puffin file ``<metadata folder>/<snapshot-id>-<uuid>.stats`` with one
  ``apache-datasketches-theta-v1`` blob per column: ``fields`` [field id], the snapshot's id and
  sequence number, the sketch zstd-compressed (``compression-codec: zstd``) and the property
  ``ndv``, the sketch's estimate truncated to a long (``String.valueOf((long) sketch.getEstimate())``);
- and commits ``set-statistics``: a statistics file registered for the same snapshot is replaced
  (the table keeps one per snapshot, as Java's ``UpdateStatistics.setStatistics``). The replaced
  file is left in place, as Java leaves it; ``remove-orphans`` finds it once nothing refers to it.

Bad input is refused before anything runs or is written: no snapshot, an unknown snapshot or
column, a column that is not primitive or lies in a list or map, a type the sketch cannot take.
"""
from __future__ import annotations

import base64
import os
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

from icectl.errors import ExternalCommandError, IcectlError, UnsupportedError, UsageError
from icectl.formats.puffin import PuffinBlob, read_puffin_footer, write_puffin
from icectl.ops.maintain.compact import input_file, pack_consecutive
from icectl.ops.stats.partition_stats import commit_statistics_file, snapshot_to_measure
from icectl.spark.protocol import NdvColumn, NdvPlan, NdvResult, NdvTask
from icectl.io import join
from icectl.spec.metadata import StatisticsFile
from icectl.spec.properties import SPLIT_SIZE
from icectl.spec.types import ListType, MapType, NestedField, Schema, StructType, walk_fields
from icectl.table.transaction import Committed, sent_json
from icectl.table.loaded import Table
from icectl.table.metadata_io import metadata_folder
from icectl.table.requirements import requirements_for
from icectl.table.updates import SetStatistics, TableUpdate
from icectl.formats.manifest import FileContent
from icectl.ops.spark_job import cleanup_work, prepare, read_result, write_job_files
from icectl.spark import submit
from icectl.spark.ndv import supported, SEED
from icectl.table.scan import plan_files

THETA_BLOB = "apache-datasketches-theta-v1"  # Puffin spec: "apache-datasketches-theta-v1 blob type"
NDV_PROPERTY = "ndv"


@dataclass
class StatsColumn:
    name: str
    field_id: int
    type: str


@dataclass
class ComputeStatsPlan:
    table: str
    base_metadata_location: str
    snapshot_id: int
    sequence_number: int
    schema_id: int | None
    columns: list[StatsColumn]
    data_files: int
    delete_files: int
    data_bytes: int
    statistics_path: str
    replaces: str | None  # the statistics file registered for this snapshot now
    planned_commit: dict = field(default_factory=dict, repr=False)
    tasks: list = field(default_factory=list, repr=False)  # FileScanTasks
    read_schema: Schema | None = field(default=None, repr=False)


@dataclass
class ColumnNdv:
    name: str
    field_id: int
    ndv: int
    estimate: float
    lower_bound: float
    upper_bound: float
    retained_entries: int
    blob_bytes: int


@dataclass
class ComputeStatsResult:
    plan: ComputeStatsPlan
    statistics: StatisticsFile
    columns: list[ColumnNdv]
    rows: int
    committed: Committed
    log_file: str | None = None


# -- planning ------------------------------------------------------------------------------------------------

def _containers(schema: Schema) -> dict[int, str]:
    """Field ids inside a list or a map, with the kind of container (Spark cannot select them)."""
    out: dict[int, str] = {}

    def walk(t: Any, inside: str | None) -> None:
        if isinstance(t, StructType):
            for f in t.fields:
                if inside:
                    out[f.field_id] = inside
                walk(f.field_type, inside)
        elif isinstance(t, ListType):
            out[t.element_id] = inside or "list"
            walk(t.element_type, inside or "list")
        elif isinstance(t, MapType):
            out[t.key_id] = inside or "map"
            out[t.value_id] = inside or "map"
            walk(t.key_type, inside or "map")
            walk(t.value_type, inside or "map")

    walk(schema.as_struct, None)
    return out


def select_columns(schema: Schema, names: list[str] | None) -> list[StatsColumn]:
    """The columns to sketch: ``names`` (deduplicated, in order; case-sensitive as Java's
    ``Schema.findField``) or every top-level primitive column of a type a sketch can take."""
    if not names:
        cols = [StatsColumn(f.name, f.field_id, str(f.field_type)) for f in schema.fields
                if f.field_type.is_primitive and supported(str(f.field_type))]
        if not cols:
            raise UsageError("no columns to compute statistics on: the schema has no primitive column a theta sketch "
                             "can take")
        return cols
    inside = _containers(schema)
    out: list[StatsColumn] = []
    for name in dict.fromkeys(n.strip() for n in names):
        if not name:
            raise UsageError("--columns has an empty column name")
        f = schema.field_by_name(name, case_sensitive=True)
        if f is None:
            known = ", ".join(n for n, _ in _names(schema))
            raise UsageError(f"cannot compute statistics: there is no column {name!r} in schema {schema.schema_id}",
                             hint=f"columns: {known[:300]}")
        if f.field_id in inside:
            raise UsageError(f"cannot compute statistics on {name!r}: it lies inside a {inside[f.field_id]}; "
                             "only top-level columns and fields of structs have NDV statistics")
        if not f.field_type.is_primitive:
            raise UsageError(f"cannot compute statistics on {name!r}: it is a {_kind(f)} column; only primitive "
                             "columns have NDV statistics")
        if not supported(str(f.field_type)):
            raise UnsupportedError(f"cannot compute statistics on {name!r}: a theta sketch cannot take {f.field_type} "
                                   "values")
        out.append(StatsColumn(name, f.field_id, str(f.field_type)))
    return out


def _names(schema: Schema) -> list[tuple[str, NestedField]]:
    return list(walk_fields(schema.fields))


def _kind(f: NestedField) -> str:
    t = f.field_type
    return "struct" if isinstance(t, StructType) else "list" if isinstance(t, ListType) else "map"


def plan_compute_stats(table: Table, *, columns: list[str] | None = None,
                       snapshot_id: int | None = None) -> ComputeStatsPlan:
    md = table.metadata
    if snapshot_id is None and md.current_snapshot is None:
        select_columns(md.schema, columns)  # a bad column is the first thing to say
    snap = snapshot_to_measure(table, snapshot_id, nothing="there is nothing to compute statistics of")
    schema = md.schema_by_id(snap.schema_id)
    cols = select_columns(schema, columns)
    tasks, _ = plan_files(table, snap)
    for t in tasks:
        fmt = (t.file.file_format or "").lower()
        if fmt != "parquet":
            raise UnsupportedError(f"cannot compute statistics: data file {t.file.file_path} is {fmt or 'of no format'}; "
                                   "the job reads Parquet")
    eq_ids = {i for t in tasks for d in t.deletes if d.file.content == FileContent.EQUALITY_DELETES
              for i in (d.file.equality_ids or [])}
    replaces = next((s.statistics_path for s in md.statistics if s.snapshot_id == snap.snapshot_id), None)
    folder = metadata_folder(md, md.location or "")
    path = join(folder, f"{snap.snapshot_id}-{uuid.uuid4()}.stats")
    plan = ComputeStatsPlan(
        table=table.name, base_metadata_location=table.metadata_location, snapshot_id=snap.snapshot_id,
        sequence_number=snap.sequence_number or 0, schema_id=snap.schema_id, columns=cols,
        data_files=len(tasks), delete_files=len({d.file.file_path for t in tasks for d in t.deletes}),
        data_bytes=sum(t.length for t in tasks), statistics_path=path, replaces=replaces, tasks=tasks,
        read_schema=_read_schema(schema, cols, eq_ids))
    placeholder = StatisticsFile(snap.snapshot_id, path, 0, {})
    updates: list[TableUpdate] = [SetStatistics(placeholder)]
    plan.planned_commit = sent_json(md, requirements_for(md, updates), updates)
    return plan


def _read_schema(schema: Schema, cols: list[StatsColumn], eq_ids: set[int]) -> Schema:
    """The snapshot schema's top-level fields that hold the columns or an equality delete's fields."""
    wanted = {c.field_id for c in cols} | eq_ids
    keep = []
    for f in schema.fields:
        ids = {f.field_id} | {g.field_id for _, g in _names(Schema((f,)))}
        if ids & wanted:
            keep.append(f)
    return Schema(tuple(keep), schema_id=schema.schema_id)


def _column_path(schema: Schema, field_id: int) -> list[str]:
    """Field names from the top level down to a field (for struct-nested columns)."""
    def find(fields: tuple[NestedField, ...], trail: list[str]) -> list[str] | None:
        for f in fields:
            if f.field_id == field_id:
                return trail + [f.name]
            if isinstance(f.field_type, StructType):
                found = find(f.field_type.fields, trail + [f.name])
                if found:
                    return found
        return None

    return find(schema.fields, []) or []


def job_plan(table: Table, plan: ComputeStatsPlan, *, io_properties: dict[str, str],
             split_size: int = 128 * 1024 * 1024) -> NdvPlan:
    """The plan file of the Spark job (:mod:`icectl.spark.protocol`): the columns, and the data
    files as tasks of about ``read.split.target-size`` bytes (128 MB by default), each with its deletes."""
    inputs = [input_file(t) for t in plan.tasks]
    size = SPLIT_SIZE.read_if_set(table.metadata.properties) or split_size
    packed = pack_consecutive(inputs, [t.length for t in plan.tasks], size) if inputs else []
    assert plan.read_schema is not None
    return NdvPlan(
        table=table.name, location=table.metadata.location or "", schema=plan.read_schema.to_json(),
        io_properties=dict(io_properties),
        columns=[NdvColumn(field_id=c.field_id, path=_column_path(plan.read_schema, c.field_id), type=c.type)
                 for c in plan.columns],
        tasks=[NdvTask(task_id=str(i), inputs=ts) for i, ts in enumerate(packed)],
        app_name=f"icectl-compute-stats-{table.name}",
    )


# -- running -------------------------------------------------------------------------------------------------

def statistics_file(plan: ComputeStatsPlan, sketches: dict[int, bytes], *,
                    created_by: str | None = None) -> tuple[bytes, StatisticsFile, list[ColumnNdv]]:
    """The Puffin file of the sketches, its table-metadata entry, and each column's NDV."""
    import datasketches
    import zstandard

    blobs = []
    ndvs = []
    compressor = zstandard.ZstdCompressor()
    for c in plan.columns:
        raw = sketches[c.field_id]
        sketch = datasketches.compact_theta_sketch.deserialize(raw, seed=SEED)
        est = sketch.get_estimate()
        ndv = int(est)  # Java: (long) sketch.getEstimate()
        data = compressor.compress(raw)
        blobs.append((PuffinBlob(THETA_BLOB, (c.field_id,), plan.snapshot_id, plan.sequence_number,
                                 compression_codec="zstd", properties={NDV_PROPERTY: str(ndv)}), data))
        ndvs.append(ColumnNdv(c.name, c.field_id, ndv, est, sketch.get_lower_bound(2), sketch.get_upper_bound(2),
                              sketch.num_retained, len(data)))
    content, written = write_puffin(blobs, created_by=created_by)
    footer = read_puffin_footer(content, source=plan.statistics_path)
    raw_json = {
        "snapshot-id": plan.snapshot_id, "statistics-path": plan.statistics_path, "file-size-in-bytes": len(content),
        "file-footer-size-in-bytes": footer.footer_size,
        "blob-metadata": [{"type": b.type, "snapshot-id": b.snapshot_id, "sequence-number": b.sequence_number,
                           "fields": list(b.fields), "properties": dict(b.properties)} for b in written],
    }
    return content, StatisticsFile(plan.snapshot_id, plan.statistics_path, len(content), raw_json), ndvs


def run_compute_stats(table: Table, plan: ComputeStatsPlan, settings: Any, *,
                      progress: Callable[[str], None] | None = None) -> ComputeStatsResult:
    """Run the Spark job, write the Puffin file, commit ``set-statistics``; on any failure before the
    commit succeeded, remove the file (unless the commit's outcome is unknown)."""
    job = prepare(table, settings, command="compute-stats")
    holder = _LogHolder(os.path.join(job.work, "spark-submit.log"))
    try:
        write_job_files(table, job, lambda props: job_plan(table, plan, io_properties=props))
        if progress:
            progress(f"running spark-submit ({plan.data_files} data files, {len(plan.columns)} columns)")
        try:
            submit.run_command(job.argv, job.template, log_file=holder.log_file)
        except ExternalCommandError:
            report = read_result(table, job, NdvResult)
            if report is not None and report.error:
                raise ExternalCommandError(f"the Spark job failed: {report.error} (log: {holder.log_file})") from None
            raise
        report = read_result(table, job, NdvResult)
        if report is None or report.error:
            raise ExternalCommandError(f"the Spark job failed: {report.error if report else 'it wrote no result'} "
                                       f"(log: {holder.log_file})")
        sketches = {k: base64.b64decode(v) for k, v in report.sketches.items()}
    except BaseException as e:
        if not (isinstance(e, IcectlError) and os.path.join(job.work, "") in e.message):
            cleanup_work(table, job, settings, holder)
        raise
    cleanup_work(table, job, settings, holder)
    result = write_and_commit(table, plan, sketches, rows=report.rows)
    result.log_file = holder.log_file
    return result


@dataclass
class _LogHolder:
    log_file: str | None


def write_and_commit(table: Table, plan: ComputeStatsPlan, sketches: dict[int, bytes], *,
                     rows: int) -> ComputeStatsResult:
    """Write the statistics file and register it for the plan's snapshot (re-checked on a retry)."""
    missing = [c.name for c in plan.columns if c.field_id not in sketches]
    if missing:
        raise ExternalCommandError(f"the Spark job returned no sketch for {', '.join(missing)}")
    content, stats, ndvs = statistics_file(plan, sketches)
    table.io.write(plan.statistics_path, content)
    if table.metadata.format_version >= 4:
        rel = table.relativize(plan.statistics_path)
        stats = StatisticsFile(stats.snapshot_id, rel, stats.file_size_in_bytes, {**stats.raw, "statistics-path": rel})

    done = commit_statistics_file(table, written=plan.statistics_path, snapshot_id=plan.snapshot_id,
                                  update=SetStatistics(stats))
    return ComputeStatsResult(plan, stats, ndvs, rows, done)


__all__ = ["ColumnNdv", "ComputeStatsPlan", "ComputeStatsResult", "NDV_PROPERTY", "THETA_BLOB", "StatsColumn",
           "job_plan", "plan_compute_stats", "run_compute_stats", "select_columns", "statistics_file",
           "write_and_commit"]
