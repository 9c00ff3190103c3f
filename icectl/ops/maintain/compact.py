"""Compaction planning and commit (Iceberg Java's BinPackRewriteFilePlanner defaults and
RewriteDataFiles commit rules). The rewrite itself runs in the Spark job (icectl/spark).

Planning: the live data files of the branch head, each with the deletes that apply; files
from older specs grouped together, the rest by partition; a file is a candidate when it is
smaller than ``min-file-size`` (0.75 x target) or larger than ``max-file-size`` (1.8 x target),
has at least ``delete-file-threshold`` deletes, or file-scoped deletes remove at least 30 % of
it; candidates are bin-packed into groups up to ``max-file-group-size`` (100 GB); a group is
rewritten when it has at least ``min-input-files`` (5) files, or more than one file and more
than the target size, or more than ``max-file-size`` bytes, or a file with too many deletes.

Commit: a ``replace`` snapshot whose new files keep the starting snapshot's data sequence
number (so equality deletes committed meanwhile still apply to them), validated against
commits that happened while the job ran: every replaced file must still be live and no new
position delete or deletion vector may apply to one. Delete files that no live data file can
use any more are removed in the same commit.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from icectl.expr.sort import sort_order
from icectl.formats.manifest import DataFile, EntryStatus, FileContent, ManifestEntry, partition_fields
from icectl.spec.metadata import MAIN_BRANCH, TableMetadata
from icectl.spec.properties import COMMIT_NUM_RETRIES, PARQUET_COMPRESSION, PARQUET_ROW_GROUP_SIZE_BYTES, TARGET_FILE_SIZE_BYTES
from icectl.table.scan import FileScanTask, branch_head, delete_applies, plan_files, referenced_data_file
from icectl.table.listing import DataFileSizes
from icectl.table.loaded import Table
from icectl.table.transaction import Transaction, snapshot_commit_json
from icectl.table.snapshot_producer import SnapshotChange, build_snapshot
from icectl.table.updates import TableUpdate
from icectl.errors import (CommitStateUnknownError, ConflictingChangeError, ExternalCommandError, IcectlError,
                           UsageError)
from icectl.io import join
from icectl.ops.spark_job import (JobSettings, PreparedJob, cleanup_work, prepare, read_result, remove_files,
                                  write_job_files)
from icectl.spark import environment, submit
from icectl.spark.protocol import (EqualityDelete, InputFile, PartitionField, PositionDelete, RewriteGroup,
                                   RewritePlan, RewriteTask, SortField, WrittenFile)
from icectl.spec.conversions import from_json
from icectl.spec.transforms import parse_transform

SPLIT_OVERHEAD = 5 * 1024


@dataclass(frozen=True)
class CompactOptions:
    target_file_size: int | None = None
    min_file_size: int | None = None
    max_file_size: int | None = None
    min_input_files: int = 5
    rewrite_all: bool = False
    max_file_group_size: int = 100 * 1024 ** 3
    delete_file_threshold: int = 2 ** 31 - 1
    delete_ratio_threshold: float = 0.3
    where: str | None = None
    strategy: str = "binpack"
    sort_by: str | None = None
    branch: str = MAIN_BRANCH
    only_equality_deleted: bool = False  # rewrite-deletes --apply-equality-deletes


@dataclass
class FileGroup:
    group_id: int
    partition_key: tuple
    partition_display: str
    tasks: list[FileScanTask]
    expected_outputs: int
    split_size: int

    @property
    def input_bytes(self) -> int:
        return sum(t.length for t in self.tasks)

    @property
    def input_records(self) -> int:
        return sum(t.file.record_count for t in self.tasks)

    @property
    def delete_files(self) -> int:
        return len({d.file.file_path for t in self.tasks for d in t.deletes})


@dataclass
class CompactionPlan:
    table: str
    branch: str
    starting_snapshot_id: int | None
    starting_sequence_number: int
    target_file_size: int
    min_file_size: int
    max_file_size: int
    groups: list[FileGroup] = field(default_factory=list)
    total_files: int = 0
    sort: list[SortField] | None = None
    # A commit it will send (its snapshot is null until the job wrote the files).
    planned_commit: dict = field(default_factory=dict, repr=False)

    @property
    def input_files(self) -> int:
        return sum(len(g.tasks) for g in self.groups)

    @property
    def input_bytes(self) -> int:
        return sum(g.input_bytes for g in self.groups)


def file_size_bounds(md: TableMetadata, opts: CompactOptions) -> tuple[int, int, int]:
    """(target, min-file-size, max-file-size) of a compaction: the options, else the table's
    ``write.target-file-size-bytes`` with Java's 0.75 and 1.8 factors."""
    target = opts.target_file_size or TARGET_FILE_SIZE_BYTES.read(md.properties)
    lo = opts.min_file_size if opts.min_file_size is not None else int(target * 0.75)
    hi = opts.max_file_size if opts.max_file_size is not None else int(target * 1.8)
    if target <= 0:
        raise UsageError("the target file size must be positive")
    if not lo < target < hi:
        raise UsageError(f"need min-file-size ({lo}) < target ({target}) < max-file-size ({hi})")
    return target, lo, hi


def expected_output_files(input_size: int, *, target: int, min_size: int, write_max: int) -> int:
    if input_size < target:
        return 1
    with_rem = math.ceil(input_size / target)
    without = input_size // target
    avg_without = input_size // without
    if input_size % target > min_size:
        return with_rem
    if avg_without < min(1.1 * target, write_max):
        return without
    return with_rem


def _too_many_deletes(t: FileScanTask, opts: CompactOptions) -> bool:
    return len(t.deletes) >= opts.delete_file_threshold


def _too_high_delete_ratio(t: FileScanTask, opts: CompactOptions) -> bool:
    if not t.deletes or not t.file.record_count:
        return False
    scoped = sum(d.file.record_count for d in t.deletes if referenced_data_file(d.file) is not None)
    return min(scoped, t.file.record_count) / t.file.record_count >= opts.delete_ratio_threshold


def pack_consecutive(items: list[Any], lengths: list[int], limit: int) -> list[list[Any]]:
    """Items in order, in consecutive bins: a bin is closed when the next item would take it past
    ``limit`` (an item larger than the limit gets a bin of its own)."""
    bins: list[list[Any]] = []
    current: list[Any] = []
    size = 0
    for item, length in zip(items, lengths):
        if current and size + length > limit:
            bins.append(current)
            current, size = [], 0
        current.append(item)
        size += length
    if current:
        bins.append(current)
    return bins


def plan_compaction(table: Table, opts: CompactOptions, *,
                    planned: list[FileScanTask] | None = None) -> CompactionPlan:
    """The groups ``compact`` would rewrite. ``planned``: the scan tasks of the branch head,
    when the caller has planned them already (``health`` plans them once for its metrics and
    both of its compaction checks); read from the table otherwise."""
    md = table.metadata
    if opts.strategy not in ("binpack", "sort"):
        raise UsageError("--strategy must be binpack or sort")
    snap = branch_head(table, opts.branch, operation="compaction")
    target, lo, hi = file_size_bounds(md, opts)
    write_max = int(target + (hi - target) * 0.5)
    plan = CompactionPlan(table.name, opts.branch, snap.snapshot_id if snap else None,
                          snap.sequence_number if snap else 0, target, lo, hi,
                          planned_commit=snapshot_commit_json(md, opts.branch))
    plan.sort = sort_columns(table, opts) if opts.strategy == "sort" else None
    tasks = plan_files(table, snap)[0] if planned is None else planned
    plan.total_files = len(tasks)
    predicate = compile_where(table, opts.where) if opts.where else None
    if predicate is not None:
        tasks = [t for t in tasks if predicate(t.file)]
    if opts.only_equality_deleted:
        tasks = [t for t in tasks if any(d.file.content == FileContent.EQUALITY_DELETES for d in t.deletes)]
        opts = CompactOptions(**{**opts.__dict__, "rewrite_all": True})
    by_partition: dict[tuple, list[FileScanTask]] = {}
    for t in tasks:
        # Files of older specs are grouped together (as Java's groupByPartition does).
        key = (t.file.spec_id, t.file.partition) if t.file.spec_id == md.default_spec_id else ("older-specs",)
        by_partition.setdefault(key, []).append(t)
    gid = 0
    for key, part_tasks in by_partition.items():
        candidates = part_tasks if opts.rewrite_all else [
            t for t in part_tasks
            if t.length < lo or t.length > hi or _too_many_deletes(t, opts) or _too_high_delete_ratio(t, opts)]
        # BinPacking.ListPacker with lookback 1
        for b in pack_consecutive(candidates, [t.length for t in candidates], opts.max_file_group_size):
            total = sum(t.length for t in b)
            keep = _group_kept(len(b), total, opts, target=target, hi=hi) or \
                any(_too_many_deletes(t, opts) or _too_high_delete_ratio(t, opts) for t in b)
            if not keep:
                continue
            gid += 1
            n_out = expected_output_files(total, target=target, min_size=lo, write_max=write_max)
            split = max(target, min(total // n_out + SPLIT_OVERHEAD, write_max))
            plan.groups.append(FileGroup(gid, key, _display_partition(table, key), b, n_out, split))
    return plan


def _group_kept(files: int, total: int, opts: CompactOptions, *, target: int, hi: int) -> bool:
    """Whether a bin of candidates is rewritten for its size alone (a file with too many deletes
    keeps it too): at least min-input-files files, or more than one file and more than the target
    size, or more than max-file-size bytes."""
    return opts.rewrite_all or (files > 1 and files >= opts.min_input_files) or (files > 1 and total > target) or \
        total > hi


@dataclass(frozen=True)
class CompactionCounts:
    """How many groups :func:`plan_compaction` plans, and their input files."""

    groups: int
    input_files: int


def compaction_counts(table: Table, opts: CompactOptions, sizes: DataFileSizes) -> CompactionCounts:
    """The groups and input files of :func:`plan_compaction` for a branch head without delete
    files, whose live data files ``sizes`` holds (:func:`icectl.table.listing.live_data_sizes`):
    the same rules on columns, with no scan task a file (``health``). Neither ``--where``,
    ``--strategy sort`` nor only_equality_deleted."""
    import polars as pl

    if opts.where or opts.only_equality_deleted or opts.strategy != "binpack":
        raise ValueError("compaction_counts plans binpack over every file")
    md = table.metadata
    target, lo, hi = file_size_bounds(md, opts)
    # Without deletes a file has too many of them only under a threshold of 0: then every file is
    # a candidate and every bin is kept, as with rewrite_all.
    every = opts.rewrite_all or opts.delete_file_threshold <= 0
    # plan_compaction's key: the partition, files of older specs together
    keys: dict[tuple, int] = {}
    group_of = [keys.setdefault((spec_id, part) if spec_id == md.default_spec_id else ("older-specs",), len(keys))
                for spec_id, part in sizes.partitions]
    size = pl.col("file_size_in_bytes")
    group = pl.Series("g", group_of, dtype=pl.UInt32).gather(sizes.frame.get_column("partition_key"))
    files = sizes.frame.select(group, size)
    if not every:  # the candidates: under min-file-size or over max-file-size
        files = files.filter((size < lo) | (size > hi))
    groups = files.group_by("g", maintain_order=True).agg(pl.len().alias("n"), size.sum().alias("total"))
    bins: list[tuple[int, int]] = []
    limit = opts.max_file_group_size
    split = []  # groups over max-file-group-size: bin-packed file by file, in file order
    for g, n, total in groups.iter_rows():
        if total > limit and n > 1:
            split.append(g)
        else:
            bins.append((n, total))
    if split:
        parts = files.filter(pl.col("g").is_in(split)).group_by("g", maintain_order=True).agg(size)
        for lengths in parts.get_column("file_size_in_bytes").to_list():
            bins += [(len(b), sum(b)) for b in pack_consecutive(lengths, lengths, limit)]
    kept = [n for n, total in bins if every or _group_kept(n, total, opts, target=target, hi=hi)]
    return CompactionCounts(len(kept), sum(kept))


def _display_partition(table: Table, key: tuple) -> str:
    if key == ("older-specs",):
        return "(files of older specs)"
    spec_id, values = key
    spec = table.metadata.spec_by_id(spec_id)
    if not spec.fields:
        return "(unpartitioned)"

    parts = []
    for f, v in zip(spec.fields, values):
        try:
            shown = parse_transform(f.transform).human(v, table.metadata.find_type(f.source_id)) if v is not None else "null"
        except Exception:
            shown = str(v)
        parts.append(f"{f.name}={shown}")
    return "/".join(parts)


def sort_columns(table: Table, opts: CompactOptions) -> list[SortField]:
    md = table.metadata
    order = sort_order(opts.sort_by, md.schema) if opts.sort_by else md.sort_order
    if order.is_unsorted:
        raise UsageError("--strategy sort needs a sort order: the table has none, give --sort-by")
    out = []
    for f in order.fields:
        base = f.transform.split("[")[0]
        if base not in ("identity", "year", "month", "day", "hour", "truncate"):
            # Order-preserving transforms sort like their source column; bucket and void do not.
            raise UsageError(f"cannot sort by {f.transform}: only identity and order-preserving transforms "
                             f"(year, month, day, hour, truncate) are supported")
        name = md.schema.column_name(f.source_id)
        if name is None or "." in name:
            raise UsageError(f"sort field {f.source_id} is not a top-level column of the current schema")
        out.append(SortField(column=name, transform=f.transform, direction=f.direction, null_order=f.null_order))
    return out


# -- --where on partition source columns ----------------------------------------------------------

_CMP = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*(>=|<=|!=|==|=|<|>)\s*(.+?)\s*$")


def compile_where(table: Table, text: str):
    """A predicate over data files from ``col op literal [and ...]`` on partition source columns,
    projected inclusively through each partition transform (a file is selected when its
    partition may hold matching rows)."""
    md = table.metadata
    clauses = [c for c in re.split(r"\s+and\s+", text.strip(), flags=re.IGNORECASE) if c]
    checks = []
    for clause in clauses:
        m = _CMP.match(clause)
        if not m:
            raise UsageError(f"cannot parse --where clause {clause!r}: use COLUMN OP VALUE joined by AND "
                             f"(OP one of = != < <= > >=)")
        col, op, lit = m.group(1), m.group(2).replace("==", "="), m.group(3)
        field = md.schema.field_by_name(col)
        if field is None:
            raise UsageError(f"--where: column {col!r} is not in the schema")
        if lit.startswith("'") and lit.endswith("'"):
            lit = lit[1:-1]
        try:
            value = from_json(field.field_type, _json_literal(field.field_type, lit))
        except Exception as e:
            raise UsageError(f"--where: {lit!r} is not a {field.field_type} value: {e}") from None
        per_spec: dict[int, list[tuple[int, Any]]] = {}
        for spec in md.partition_specs:
            for i, pf in enumerate(spec.fields):
                if pf.source_id == field.field_id:
                    per_spec.setdefault(spec.spec_id, []).append((i, parse_transform(pf.transform)))
        if not per_spec:
            raise UsageError(f"--where filters on partition source columns; {col!r} is not one")
        checks.append((field, op, value, per_spec))

    def matches(f: DataFile) -> bool:
        for field, op, value, per_spec in checks:
            for idx, tr in per_spec.get(f.spec_id, []):
                pv = f.partition[idx] if idx < len(f.partition) else None
                if pv is None:
                    if op != "!=":
                        return False
                    continue
                if not _may_match(tr, field.field_type, op=op, value=value, pv=pv):
                    return False
        return True

    return matches


def _json_literal(t: Any, lit: str) -> Any:
    base = getattr(t, "base", "")
    if base in ("int", "long"):
        return int(lit)
    if base in ("float", "double"):
        return float(lit)
    if base == "boolean":
        return lit.lower() == "true"
    if base in ("timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns") and len(lit) == 10:
        lit = lit + "T00:00:00"
    if base in ("timestamptz", "timestamptz_ns") and not re.search(r"(Z|[+-]\d\d:\d\d)$", lit):
        lit = lit + "+00:00"
    return lit


def _may_match(tr: Any, source_type: Any, *, op: str, value: Any, pv: Any) -> bool:
    name = str(tr).split("[")[0]
    if name == "void":
        return True
    if name == "bucket":
        return op != "=" or tr.apply(source_type, value) == pv
    projected = tr.apply(source_type, value)
    if name == "identity":
        return {"=": pv == projected, "!=": pv != projected, "<": pv < projected, "<=": pv <= projected,
                ">": pv > projected, ">=": pv >= projected}[op]
    # Order-preserving transforms (year, month, day, hour, truncate): inclusive projection.
    return {"=": pv == projected, "!=": True, "<": pv <= projected, "<=": pv <= projected,
            ">": pv >= projected, ">=": pv >= projected}[op]


# -- the plan file for the Spark job ----------------------------------------------------------------

def job_plan(table: Table, plan: CompactionPlan, *, io_properties: dict[str, str]) -> RewritePlan:
    """The plan file of the Spark job (:mod:`icectl.spark.protocol`), every setting resolved here."""
    md = table.metadata
    row_lineage = md.format_version >= 3
    groups = []
    for g in plan.groups:
        out_dir = join(md.location or "", "data", _partition_path(table, g))
        inputs = [input_file(t) for t in g.tasks]
        # A group is split into tasks of about the split size, as Java splits input by
        # inputSplitSize; a sort rewrites a group in one task so its files are sorted.
        tasks = pack_consecutive(inputs, [t.length for t in g.tasks], g.split_size) if plan.sort is None \
            else [inputs] if inputs else []
        repartition = repartition_spec(table) if g.partition_key == ("older-specs",) else None
        groups.append(RewriteGroup(
            group_id=g.group_id, partition=g.partition_display, expected_outputs=g.expected_outputs,
            tasks=[RewriteTask(task_id=f"{g.group_id}-{i}", group_id=g.group_id, output_dir=out_dir,
                               inputs=ts, repartition=repartition) for i, ts in enumerate(tasks)]))
    return RewritePlan(
        table=table.name, location=md.location or "", format_version=md.format_version,
        schema=md.schema.to_json(), target_file_size=plan.target_file_size, row_lineage=row_lineage,
        sort=plan.sort, io_properties=dict(io_properties), groups=groups,
        # Resolved here, once: the job writes with these and reads no table property.
        compression=PARQUET_COMPRESSION.read(md.properties),
        row_group_bytes=PARQUET_ROW_GROUP_SIZE_BYTES.read(md.properties),
        app_name=f"icectl-compact-{table.name}",
    )


def repartition_spec(table: Table) -> list[PartitionField]:
    """How the job computes the current spec's partition of each row of an older-spec file."""
    md = table.metadata
    out = []
    for f in md.spec.fields:
        src = md.schema.find_field(f.source_id)
        if src is None or md.schema.column_name(f.source_id) != src.name:
            raise UsageError(f"partition source {f.source_id} is not a top-level column; cannot repartition")
        out.append(PartitionField(name=f.name, transform=f.transform, column=src.name,
                                  source_type=str(src.field_type)))
    return out


def _partition_path(table: Table, g: FileGroup) -> str:
    if g.partition_key == ("older-specs",) or g.partition_display.startswith("("):
        return ""
    from urllib.parse import quote

    return "/".join(quote(p, safe="=") for p in g.partition_display.split("/"))


def input_file(t: FileScanTask) -> InputFile:
    """A scan task as the job reads it: the data file and the deletes that apply to it."""
    pos, eq = [], []
    for d in t.deletes:
        f = d.file
        if f.content == FileContent.EQUALITY_DELETES:
            eq.append(EqualityDelete(path=f.file_path, equality_ids=list(f.equality_ids or [])))
        elif f.is_deletion_vector:
            pos.append(PositionDelete(path=f.file_path, format="puffin", offset=f.content_offset,
                                      length=f.content_size_in_bytes))
        else:
            aliases = [a for a in {t.file.file_path, _alias(t.file.file_path)} if a != t.file.file_path]
            pos.append(PositionDelete(path=f.file_path, format="parquet", path_aliases=aliases))
    return InputFile(path=t.file.file_path, format=t.file.file_format, record_count=t.file.record_count,
                     size=t.file.file_size_in_bytes, first_row_id=t.file.first_row_id,
                     data_sequence_number=t.data_sequence_number, position_deletes=pos, equality_deletes=eq)


def _alias(path: str) -> str:
    """Position delete files may name a local data file as ``file:/x`` or ``/x``."""
    if path.startswith("file:"):
        return path[len("file:"):]
    if path.startswith("/"):
        return "file:" + path
    return path


# -- the commit --------------------------------------------------------------------------------------

def output_data_files(table: Table, group: FileGroup, files: list[WrittenFile]) -> list[DataFile]:
    """DataFiles for what the job wrote for a group; files of older specs come back partitioned
    by the current spec, with their partition values from the job."""
    md = table.metadata
    first = group.tasks[0].file
    spec_id, partition = (first.spec_id, first.partition)
    if group.partition_key == ("older-specs",):
        # rewritten into the current spec; an unpartitioned one has no partition values to report
        spec_id, partition = md.default_spec_id, ()
    out = []
    for f in files:
        if f.partition is not None:
            spec_id = md.default_spec_id
            types = [t for _, _, t in partition_fields(md.spec, md.find_type)]
            partition = tuple(None if v is None else from_json(t, v) for t, v in zip(types, f.partition))
        out.append(data_file_from_output(
            f, spec_id=spec_id, partition=partition,
            sort_order_id=table.metadata.default_sort_order_id if f.sorted else None))
    return out


def data_file_from_output(f: WrittenFile, *, spec_id: int, partition: tuple,
                          sort_order_id: int | None = None) -> DataFile:
    """The DataFile of a Parquet file the job wrote (``icectl.spark.rewrite.describe_parquet_file``)."""
    return DataFile(
        file_path=f.path, file_format="parquet", partition=partition, record_count=f.record_count,
        file_size_in_bytes=f.size, content=FileContent.DATA, spec_id=spec_id,
        column_sizes=dict(f.column_sizes), value_counts=dict(f.value_counts),
        null_value_counts=dict(f.null_value_counts), nan_value_counts=dict(f.nan_value_counts) or None,
        lower_bounds={k: bytes.fromhex(v) for k, v in f.lower_bounds.items()},
        upper_bounds={k: bytes.fromhex(v) for k, v in f.upper_bounds.items()},
        split_offsets=list(f.split_offsets) or None,
        sort_order_id=sort_order_id,
    )


def build_replace(txn: Transaction, plan: CompactionPlan, *, groups: list[FileGroup],
                  outputs: dict[int, list[DataFile]]) -> list[TableUpdate]:
    """The updates of a ``replace`` snapshot swapping the groups' files for their outputs,
    validated against the current state of the branch of ``txn``'s table (re-run on every commit
    attempt)."""
    table = txn.table
    md = table.metadata
    head = md.snapshot_for_ref(plan.branch)
    tasks, deletes = plan_files(table, head)
    live = {t.file.file_path: t.entry for t in tasks}
    replaced: list[ManifestEntry] = []
    for g in groups:
        for t in g.tasks:
            e = live.get(t.file.file_path)
            if e is None:
                raise ConflictingChangeError(f"compaction conflict: {t.file.file_path} was removed by a commit while "
                                          f"the rewrite ran")
            replaced.append(e)
    replaced_paths = {e.data_file.file_path for e in replaced}
    unpartitioned = {s.spec_id for s in md.partition_specs if s.is_unpartitioned}
    for d in deletes:
        if (d.sequence_number or 0) <= plan.starting_sequence_number or d.data_file.content == FileContent.EQUALITY_DELETES:
            continue  # equality deletes keep applying: the new files keep the starting sequence number
        for e in replaced:
            if delete_applies(d, e, unpartitioned_specs=unpartitioned):
                raise ConflictingChangeError(
                    f"compaction conflict: a delete file committed while the rewrite ran ({d.data_file.file_path}) "
                    f"applies to {e.data_file.file_path}; nothing was committed",
                    hint="run compact again: it plans from the new state")
    # Delete files that no remaining live data file can use are removed in the same commit.
    remaining = [t.entry for t in tasks if t.file.file_path not in replaced_paths]
    removable = []
    for d in deletes:
        if d.data_file.content == FileContent.EQUALITY_DELETES and (d.sequence_number or 0) > plan.starting_sequence_number:
            continue  # still applies to the new files
        if not any(delete_applies(d, e, unpartitioned_specs=unpartitioned) for e in remaining):
            if any(delete_applies(d, e, unpartitioned_specs=unpartitioned) for e in replaced) or \
                    d.data_file.is_deletion_vector:
                removable.append(d)
    added = [f for g in groups for f in outputs.get(g.group_id, [])]
    change = SnapshotChange("replace", added=added,
                            removed=[(e, e.data_file) for e in replaced] + [(d, d.data_file) for d in removable],
                            added_data_sequence_number=plan.starting_sequence_number)
    return build_snapshot(txn, change, branch=plan.branch)


__all__ = ["CompactOptions", "CompactionCounts", "CompactionPlan", "FileGroup", "build_replace", "compaction_counts",
           "input_file", "job_plan", "pack_consecutive", "plan_compaction",
           "EntryStatus"]


# Running a compaction: write the plan file, run the Spark job through spark-submit, read back the
# files it wrote, commit (re-validating on conflict), and remove the job's files when anything fails,
# so a failed run leaves nothing behind and commits nothing.

@dataclass
class CompactionResult:
    plan: CompactionPlan
    command: list[str]
    committed: list[str] = field(default_factory=list)  # metadata locations
    rewritten_data_files: int = 0
    added_data_files: int = 0
    removed_delete_files: int = 0
    rewritten_bytes: int = 0
    added_bytes: int = 0
    failed_groups: list[tuple[int, str]] = field(default_factory=list)
    log_file: str | None = None
    sent: list[dict[str, list]] = field(default_factory=list)  # each commit's requirements and updates


def write_compaction_job_files(table: Table, plan: CompactionPlan, *, job: PreparedJob) -> None:
    write_job_files(table, job, lambda io_properties: job_plan(table, plan, io_properties=io_properties))


def run_compaction(table: Table, plan: CompactionPlan, settings: JobSettings, *,
                   progress: Callable[[str], None] | None = None) -> CompactionResult:
    COMMIT_NUM_RETRIES.read(table.metadata.properties)  # a bad value fails before the job, not after it
    job = prepare(table, settings)
    result = CompactionResult(plan, job.argv, log_file=os.path.join(job.work, "spark-submit.log"))
    if not plan.groups:
        result.log_file = None
        return result
    written: list[str] = []
    try:
        try:
            write_compaction_job_files(table, plan, job=job)
            if job.environment is not None and not job.environment.exists:
                if progress:
                    progress(f"packing the executors' Python environment once "
                             f"({', '.join(job.environment.requirements)}) into {job.environment.archive}")
                environment.build(job.environment, log_file=os.path.join(job.work, "environment.log"))
            if progress:
                progress(f"running spark-submit ({len(plan.groups)} groups, {plan.input_files} files)")
            submit.run_command(job.argv, job.template, log_file=result.log_file)
        except ExternalCommandError:
            report = read_result(table, job)
            written = [f.path for f in report.files] if report else []
            if report and report.error:  # the job's own reason says more than spark-submit's exit code
                raise ExternalCommandError(f"the Spark job failed: {report.error} (log: {result.log_file})") from None
            raise
        report = read_result(table, job)
        if report is None:
            raise ExternalCommandError(f"the Spark job wrote no result (log: {result.log_file})")
        written = [f.path for f in report.files]
        if report.error:
            raise ExternalCommandError(f"the Spark job failed: {report.error} (log: {result.log_file})")
        by_group: dict[int, list[WrittenFile]] = {}
        for f in report.files:
            by_group.setdefault(f.group_id, []).append(f)
        outputs = {g.group_id: output_data_files(table, g, by_group.get(g.group_id, [])) for g in plan.groups}
        check_counts(plan.groups, outputs)
        batches = commit_batches(plan.groups, settings) if settings.partial_progress else [plan.groups]
        current = table
        for batch in batches:
            try:
                done = Transaction(current).commit(
                    lambda txn, b=batch: build_replace(txn, plan, groups=b, outputs=outputs))
                current = done.table
                result.sent.append(done.sent_json())
            except IcectlError as e:
                if not settings.partial_progress or isinstance(e, CommitStateUnknownError):
                    raise  # unknown: the batch may have been committed, so its files stay
                result.failed_groups += [(g.group_id, e.message) for g in batch]
                remove_files(table, [f.file_path for g in batch for f in outputs[g.group_id]])
                continue
            result.committed.append(current.metadata_location)
            new_snap = current.metadata.snapshot_by_id(current.metadata.all_refs[plan.branch].snapshot_id)
            s = new_snap.summary if new_snap else {}
            result.rewritten_data_files += int(s.get("deleted-data-files", 0))
            result.added_data_files += int(s.get("added-data-files", 0))
            result.removed_delete_files += int(s.get("removed-delete-files", 0))
            result.rewritten_bytes += sum(t.length for g in batch for t in g.tasks)
            result.added_bytes += sum(f.file_size_in_bytes for g in batch for f in outputs[g.group_id])
        cleanup_work(table, job, settings, result)
        return result
    except BaseException as e:
        # A commit whose outcome is unknown may have landed: the files it added stay.
        if not result.committed and not isinstance(e, CommitStateUnknownError):
            remove_files(table, written)
        # Keep the work folder only when the error names a log in it (spark-submit, or the build
        # of the packed environment, ran).
        if not (isinstance(e, IcectlError) and os.path.join(job.work, "") in e.message):
            cleanup_work(table, job, settings, result)
        raise


def check_counts(groups: list[FileGroup], outputs: dict[int, list[DataFile]]) -> None:
    """The job must account for every row: inputs minus deleted rows equals outputs; at least
    the outputs can never hold more rows than the inputs."""
    for g in groups:
        written = sum(f.record_count for f in outputs[g.group_id])
        if written > g.input_records:
            raise ExternalCommandError(f"group {g.group_id}: the job wrote {written} rows from {g.input_records}; "
                                       f"refusing to commit")


def commit_batches(groups: list[FileGroup], settings: JobSettings) -> list[list[FileGroup]]:
    n = max(1, min(settings.max_commits, len(groups)))
    size = -(-len(groups) // n)
    return [groups[i:i + size] for i in range(0, len(groups), size)]
