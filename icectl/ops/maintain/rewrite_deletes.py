"""Rewriting delete files (Iceberg Java's rewrite_position_delete_files and
remove-dangling-deletes, and the v3 move to deletion vectors):

- v2: position-delete files of a partition are merged into one file (rows for data files that
  are no longer live, or that a delete no longer applies to by the sequence-number rules, are
  dropped); dangling deletes are dropped: a position delete or deletion vector whose data files
  are gone, an equality delete older than every live data file of its partition;
- v3 and later: position-delete files become deletion vectors (one per data file, in Puffin
  files, merged with the file's existing vector), since v3 writers may not add position-delete
  files; deletion vectors of data files that are gone are dropped.

Delete files hold no table data beyond positions, so they are read and written here, in the
driver; ``--apply-equality-deletes`` rewrites the affected data files through the Spark job.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from icectl.formats.manifest import DataFile, FileContent, ManifestEntry
from icectl.spec.metadata import MAIN_BRANCH
from icectl.table.scan import branch_head, plan_files
from icectl.table.loaded import Table
from icectl.table.transaction import Transaction, snapshot_commit_json
from icectl.table.snapshot_producer import SnapshotChange, build_snapshot
from icectl.table.updates import TableUpdate
from icectl.errors import UsageError
from icectl.io import join
from icectl.formats.parquet import field_id, iceberg_field, write_parquet
from icectl.formats.puffin import read_deletion_vector, deletion_vector_file, FileIOSource
from icectl.ops.maintain.compact import run_compaction
from icectl.ops.spark_job import JobSettings
from icectl.spec.conversions import to_bytes
from icectl.spec.types import PrimitiveType

DELETE_FILE_PATH_ID = 2147483546
DELETE_POS_ID = 2147483545


@dataclass
class DeleteRewritePlan:
    table: str
    branch: str
    format_version: int
    starting_snapshot_id: int | None
    to_merge: dict[tuple, list[ManifestEntry]] = field(default_factory=dict)  # partition -> position delete files
    dangling: list[ManifestEntry] = field(default_factory=list)
    to_dv: list[ManifestEntry] = field(default_factory=list)  # v3: position delete files to convert
    dvs_to_merge: list[ManifestEntry] = field(default_factory=list)  # v3: existing DVs merged with converted ones
    equality_targets: int = 0
    # The commit it will send (its snapshot is null until written): requirements and updates.
    planned_commit: dict = field(default_factory=dict, repr=False)

    @property
    def changes(self) -> bool:
        return bool(self.to_merge or self.dangling or self.to_dv)


def plan_delete_rewrite(table: Table, *, branch: str = MAIN_BRANCH, min_files_to_merge: int = 2) -> DeleteRewritePlan:
    md = table.metadata
    snap = branch_head(table, branch, operation="a delete rewrite")
    tasks, deletes = plan_files(table, snap)
    plan = DeleteRewritePlan(table.name, branch, md.format_version, snap.snapshot_id if snap else None,
                             planned_commit=snapshot_commit_json(md, branch))
    live = {t.file.file_path: t for t in tasks}
    unpartitioned = {s.spec_id for s in md.partition_specs if s.is_unpartitioned}
    min_seq_by_part: dict[tuple, int] = {}
    min_seq_all = min((t.data_sequence_number for t in tasks), default=None)
    for t in tasks:
        k = (t.file.spec_id, t.file.partition)
        min_seq_by_part[k] = min(min_seq_by_part.get(k, t.data_sequence_number), t.data_sequence_number)
    used = {d.file.file_path + f"@{d.file.content_offset}" for t in tasks for d in t.deletes}
    positional: list[ManifestEntry] = []
    for d in deletes:
        f = d.data_file
        key = f.file_path + f"@{f.content_offset}"
        if key not in used:
            plan.dangling.append(d)  # applies to no live data file
            continue
        if f.is_deletion_vector:
            continue
        if f.content == FileContent.POSITION_DELETES:
            positional.append(d)
        elif f.content == FileContent.EQUALITY_DELETES:
            plan.equality_targets += 1
    if md.format_version >= 3:
        plan.to_dv = positional
        targets = {p for d in positional for p in _referenced(d, live)}
        plan.dvs_to_merge = [d for d in deletes if d.data_file.is_deletion_vector and
                             d.data_file.referenced_data_file in targets and d not in plan.dangling]
    else:
        by_part: dict[tuple, list[ManifestEntry]] = {}
        for d in positional:
            by_part.setdefault((d.data_file.spec_id, d.data_file.partition), []).append(d)
        plan.to_merge = {k: v for k, v in by_part.items() if len(v) >= min_files_to_merge}
    del unpartitioned, min_seq_all, min_seq_by_part
    return plan


def _key(d: ManifestEntry) -> tuple[str, int | None]:
    return d.data_file.file_path, d.data_file.content_offset


def _referenced(d: ManifestEntry, live: dict[str, Any]) -> list[str]:
    if d.data_file.referenced_data_file:
        return [d.data_file.referenced_data_file]
    return [p for p, t in live.items() if any(_key(x.entry) == _key(d) for x in t.deletes)]


def _read_positions(table: Table, d: ManifestEntry) -> dict[str, list[int]]:
    import pyarrow.parquet as pq

    f = d.data_file
    with table.io.open(f.file_path, "rb") as fh:
        t = pq.read_table(fh)
    cols = {}
    for i, fld in enumerate(t.schema):
        fid = field_id(fld)
        if fid == DELETE_FILE_PATH_ID or (fid is None and fld.name == "file_path"):
            cols["path"] = t.column(i).to_pylist()
        if fid == DELETE_POS_ID or (fid is None and fld.name == "pos"):
            cols["pos"] = t.column(i).to_pylist()
    out: dict[str, list[int]] = {}
    for p, pos in zip(cols.get("path", []), cols.get("pos", [])):
        out.setdefault(p, []).append(pos)
    return out


def _live_targets(tasks_by_path: dict[str, Any], d: ManifestEntry, *, positions: dict[str, list[int]]) -> dict[str, list[int]]:
    """Only rows for live data files this delete applies to (by path and sequence number)."""
    out = {}
    for path, pos in positions.items():
        for candidate in {path, path[5:] if path.startswith("file:") else "file:" + path}:
            t = tasks_by_path.get(candidate)
            if t is not None and any(_key(x.entry) == _key(d) for x in t.deletes):
                out[candidate] = pos
                break
    return out


def write_position_delete_file(table: Table, rows: dict[str, list[int]], *, spec_id: int, partition: tuple) -> DataFile:
    """A Parquet position delete file (``file_path``, ``pos``; spec "Position Delete Files") in
    the data folder, rows sorted by path and position, with its metrics."""
    import pyarrow as pa

    paths, positions = [], []
    for p in sorted(rows):
        for pos in sorted(set(rows[p])):
            paths.append(p)
            positions.append(pos)
    schema = pa.schema([iceberg_field("file_path", pa.string(), DELETE_FILE_PATH_ID, nullable=False),
                        iceberg_field("pos", pa.int64(), DELETE_POS_ID, nullable=False)])
    md = table.metadata
    path = join(md.location or "", "data", f"{uuid.uuid4().hex}-icectl-deletes.parquet")
    size = write_parquet(table.io, path, pa.table({"file_path": paths, "pos": positions}, schema=schema))
    s, l = PrimitiveType("string"), PrimitiveType("long")
    return DataFile(
        file_path=path, file_format="parquet", partition=partition, record_count=len(paths), file_size_in_bytes=size,
        content=FileContent.POSITION_DELETES, spec_id=spec_id,
        value_counts={DELETE_FILE_PATH_ID: len(paths), DELETE_POS_ID: len(paths)},
        null_value_counts={DELETE_FILE_PATH_ID: 0, DELETE_POS_ID: 0},
        lower_bounds={DELETE_FILE_PATH_ID: to_bytes(s, paths[0]), DELETE_POS_ID: to_bytes(l, min(positions))},
        upper_bounds={DELETE_FILE_PATH_ID: to_bytes(s, paths[-1]), DELETE_POS_ID: to_bytes(l, max(positions))},
        referenced_data_file=paths[0] if len(set(paths)) == 1 else None,
    )


def build_delete_rewrite(txn: Transaction, plan: DeleteRewritePlan) -> tuple[list[TableUpdate], dict[str, int]]:
    """The updates of the rewrite (re-planned against ``txn``'s table on each attempt), and
    counts for the report."""
    table = txn.table
    fresh = plan_delete_rewrite(table, branch=plan.branch)
    md = table.metadata
    snap = md.snapshot_by_id(md.all_refs[plan.branch].snapshot_id)
    tasks, _ = plan_files(table, snap)
    by_path = {t.file.file_path: t for t in tasks}
    added: list[DataFile] = []
    removed: list[ManifestEntry] = list(fresh.dangling)
    seqs: dict[str, int] = {}
    counts = {"dangling_removed": len(fresh.dangling), "merged_inputs": 0, "merged_outputs": 0,
              "converted_to_dvs": 0, "deletion_vectors_written": 0}
    for (spec_id, partition), entries in fresh.to_merge.items():
        rows: dict[str, list[int]] = {}
        for d in entries:
            for p, pos in _live_targets(by_path, d, positions=_read_positions(table, d)).items():
                rows.setdefault(p, []).extend(pos)
        removed += entries
        counts["merged_inputs"] += len(entries)
        if rows:
            f = write_position_delete_file(table, rows, spec_id=spec_id, partition=partition)
            seqs[f.file_path] = max(d.sequence_number or 0 for d in entries)
            added.append(f)
            counts["merged_outputs"] += 1
    if fresh.to_dv:
        positions: dict[str, set[int]] = {}
        for d in fresh.to_dv:
            for p, pos in _live_targets(by_path, d, positions=_read_positions(table, d)).items():
                positions.setdefault(p, set()).update(pos)
        for d in fresh.dvs_to_merge:
            f = d.data_file
            bm = read_deletion_vector(_range_reader(table, f.file_path), f.content_offset, f.content_size_in_bytes,
                                      record_count=f.record_count, source=f.file_path)
            positions.setdefault(f.referenced_data_file, set()).update(bm)
        removed += fresh.to_dv + fresh.dvs_to_merge
        counts["converted_to_dvs"] = len(fresh.to_dv)
        dvs = write_deletion_vectors(table, {p: pos for p, pos in positions.items() if pos and p in by_path},
                                     {p: t.file for p, t in by_path.items()})
        added += dvs
        counts["deletion_vectors_written"] += len(dvs)
    change = SnapshotChange("replace", added=added,
                            removed=[(e, e.data_file) for e in removed], added_sequence_numbers=seqs)
    return build_snapshot(txn, change, branch=plan.branch), counts


def write_deletion_vectors(table: Table, positions: dict[str, Any], data_files: dict[str, DataFile]) -> list[DataFile]:
    """Deletion vectors (v3) for the deleted ``positions`` of each data file, in one Puffin file
    per partition in the data folder; a DV's DataFile carries its data file's spec and partition
    (spec "Deletion Vectors"). ``data_files`` maps each path in ``positions`` to its DataFile."""
    md = table.metadata
    by_part: dict[tuple, dict[str, Any]] = {}
    for p, pos in positions.items():
        f = data_files[p]
        by_part.setdefault((f.spec_id, f.partition), {})[p] = pos
    out = []
    for (spec_id, partition), entries in by_part.items():
        data, blobs = deletion_vector_file({p: sorted(v) for p, v in entries.items()})
        path = join(md.location or "", "data", f"{uuid.uuid4().hex}-icectl-dv.puffin")
        table.io.write(path, data)
        for b in blobs:
            out.append(DataFile(
                file_path=path, file_format="puffin", partition=partition, record_count=b.cardinality,
                file_size_in_bytes=len(data), content=FileContent.POSITION_DELETES, spec_id=spec_id,
                referenced_data_file=b.referenced_data_file, content_offset=b.offset,
                content_size_in_bytes=b.length))
    return out


@dataclass
class DeleteRewriteRun:
    """What a delete rewrite committed: the metadata files, its counts, the equality-delete
    rewrite's counts (a Spark job, with ``--apply-equality-deletes``), and each commit sent."""

    committed: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    equality_rewritten_data_files: int | None = None
    equality_removed_delete_files: int | None = None
    commits: list[dict] = field(default_factory=list)


def run_delete_rewrite(table: Table, plan: DeleteRewritePlan, *, equality_plan: Any = None, job_settings: Any = None,
                       progress: Any = None) -> DeleteRewriteRun:
    """Rewrite the data files equality deletes touch (when planned: a Spark job), then commit the
    delete rewrite, planned again against the table as it then is (and on every retry)."""
    run = DeleteRewriteRun()
    if equality_plan is not None and equality_plan.groups:
        r = run_compaction(table, equality_plan, job_settings or JobSettings(), progress=progress)
        run.committed += r.committed
        run.commits += r.sent
        run.equality_rewritten_data_files, run.equality_removed_delete_files = r.rewritten_data_files, \
            r.removed_delete_files
        table = table.refresh()
        plan = plan_delete_rewrite(table, branch=plan.branch)
    if plan.changes:
        def build(txn: Transaction) -> list[TableUpdate]:
            updates, counts = build_delete_rewrite(txn, plan)
            run.counts = counts
            return updates

        done = Transaction(table).commit(build)
        run.committed.append(done.table.metadata_location)
        run.commits.append(done.sent_json())
    return run


def _range_reader(table: Table, path: str) -> Any:
    return FileIOSource(table.io, path)


__all__ = ["DeleteRewritePlan", "build_delete_rewrite", "plan_delete_rewrite", "write_deletion_vectors",
           "write_position_delete_file", "UsageError"]
