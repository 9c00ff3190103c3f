"""``icectl repair --metrics``: manifests whose Parquet data files' metrics are not what the files'
footers say are rewritten with the footers' values (as Iceberg Java's ``RepairTable`` does).

The head of ``main`` is checked: every live Parquet data file of its data manifests is compared
with its footer (:func:`icectl.validate.file_metrics.compare`, the checks of ``validate --deep``;
record count and file size too, the size being the object's real size). A manifest with a file
that differs in anything but a missing optional metric is rewritten, every live entry kept as
EXISTING with its snapshot id, data and file sequence numbers and ``first_row_id``; a differing
file's entry carries the footer's record count, size, column sizes, value and null counts and
bounds (under the table's metrics modes), and keeps its NaN counts unless they exceed the footer's
non-null values (then they are dropped: the footer cannot tell them). The manifests are committed
as a new ``replace`` snapshot (Java's RewriteManifests: the same files, other manifests), whose
summary totals are counted from the entries it keeps.
"""
from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from icectl.errors import ConflictingChangeError, IcectlError
from icectl.formats.manifest import DataFile, EntryStatus, FileContent, ManifestContent, ManifestEntry, ManifestFile
from icectl.formats.parquet_footer import FooterMetrics, MetricsTarget, footer_metrics, metrics_target, read_footer
from icectl.spec.metadata import MAIN_BRANCH
from icectl.table.loaded import Table
from icectl.table.snapshot_producer import (
    SnapshotChange,
    live_totals,
    new_snapshot_id,
    snapshot_from_manifests,
    summarize_change,
    write_manifest_file,
)
from icectl.table.transaction import Committed, Transaction, snapshot_commit_json
from icectl.validate.file_metrics import compare

THREADS = 8


@dataclass
class MetricsDifference:
    code: str  # a validate code (RECORD_COUNT_MISMATCH, BOUND_HIDES_ROWS, ...)
    message: str


@dataclass
class MetricsChange:
    """One data file whose entry gets the footer's metrics: what differs (codes and messages)."""

    path: str
    manifest: str
    differences: list[MetricsDifference]


@dataclass
class MetricsRepairPlan:
    table: str
    metadata_location: str
    snapshot_id: int | None
    files_checked: int
    changes: list[MetricsChange]
    unreadable: list[str]  # files whose footer cannot be read: left as they are
    planned_commits: list[dict] = field(default_factory=list, repr=False)
    _manifests: dict[str, tuple[ManifestFile, list[ManifestEntry]]] = field(default_factory=dict, repr=False)
    _fixed: dict[tuple[str, str], DataFile] = field(default_factory=dict, repr=False)

    @property
    def manifests_rewritten(self) -> int:
        return len({c.manifest for c in self.changes})


@dataclass
class MetricsRepairResult:
    plan: MetricsRepairPlan
    committed: Committed | None
    new_snapshot_id: int | None


def _fixed(df: DataFile, fm: FooterMetrics, size: int) -> DataFile:
    nan = {k: v for k, v in (df.nan_value_counts or {}).items()
           if k not in fm.value_counts or v <= fm.value_counts[k] - fm.null_value_counts.get(k, 0)}
    return dataclasses.replace(df, record_count=fm.record_count, file_size_in_bytes=size,
                               column_sizes=dict(fm.column_sizes), value_counts=dict(fm.value_counts),
                               null_value_counts=dict(fm.null_value_counts), nan_value_counts=nan or None,
                               lower_bounds=dict(fm.lower_bounds), upper_bounds=dict(fm.upper_bounds))


def _check(table: Table, target: MetricsTarget, df: DataFile) -> tuple[list[tuple[str, str]], DataFile | None, str | None]:
    try:
        size = table.io.size(df.file_path)
        fm = footer_metrics(read_footer(table.io, df.file_path), target.types, target.modes)
    except Exception as e:  # noqa: BLE001  # missing or corrupt: repair's file kinds handle it
        text = e.message if isinstance(e, IcectlError) else f"{type(e).__name__}: {e}"
        return [], None, f"{df.file_path}: {text.splitlines()[0] if text else ''}"
    diffs = compare(df, fm, target.names)
    if fm.record_count != df.record_count:
        diffs.insert(0, ("RECORD_COUNT_MISMATCH", f"record_count is {df.record_count:,}, the file holds "
                         f"{fm.record_count:,} rows"))
    if size != df.file_size_in_bytes:
        diffs.insert(0, ("FILE_SIZE_MISMATCH", f"file_size_in_bytes is {df.file_size_in_bytes:,}, the file has "
                         f"{size:,} bytes"))
    if all(code == "METRIC_MISSING" for code, _ in diffs):
        return diffs, None, None  # nothing wrong: optional metrics are not added on their own
    return diffs, _fixed(df, fm, size), None


def plan_metrics_repair(table: Table) -> MetricsRepairPlan:
    md = table.metadata
    ref = md.all_refs.get(MAIN_BRANCH)
    plan = MetricsRepairPlan(table.name, table.metadata_location, ref.snapshot_id if ref else None, 0, [], [])
    if ref is None:
        return plan
    head = md.snapshot_by_id(ref.snapshot_id)
    target = metrics_target(md)
    try:
        manifests = table.manifests(head)
        for m in manifests:
            plan._manifests[m.manifest_path] = (m, table.read_entries(m, live_only=True))
    except IcectlError as e:  # a lost manifest list or manifest: the files kind of repair says so
        plan.unreadable.append(e.message)
        plan._manifests.clear()
        return plan
    work = [(m.manifest_path, e.data_file) for m, entries in plan._manifests.values()
            if m.content == ManifestContent.DATA for e in entries
            if e.data_file.content == FileContent.DATA and e.data_file.file_format.lower() == "parquet"]
    plan.files_checked = len(work)
    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(lambda w: _check(table, target, w[1]), work))
    for (mpath, df), (diffs, fixed, bad) in zip(work, results):
        if bad:
            plan.unreadable.append(bad)
        elif fixed is not None:
            plan.changes.append(MetricsChange(df.file_path, mpath, [MetricsDifference(c, m) for c, m in diffs]))
            plan._fixed[(mpath, df.file_path)] = fixed
    if plan.changes:
        plan.planned_commits = [snapshot_commit_json(md, MAIN_BRANCH)]
    return plan


def apply_metrics_repair(table: Table, plan: MetricsRepairPlan, *, retries: int | None = None) -> MetricsRepairResult:
    """One ``replace`` snapshot on main's head with the planned manifests rewritten; main must
    still point at the snapshot the plan checked."""
    if not plan.changes:
        return MetricsRepairResult(plan, None, None)
    sid = new_snapshot_id()
    touched = {c.manifest for c in plan.changes}

    def build(txn: Transaction) -> list:
        t = txn.table
        md = t.metadata
        ref = md.all_refs.get(MAIN_BRANCH)
        if ref is None or ref.snapshot_id != plan.snapshot_id:
            now = "is gone" if ref is None else f"points at snapshot {ref.snapshot_id}"
            raise ConflictingChangeError(f"{t.name} changed since the plan was shown: main {now}, not "
                                         f"{plan.snapshot_id}; nothing was committed", hint="run repair again")
        head = md.snapshot_by_id(plan.snapshot_id)
        seq = md.last_sequence_number + 1 if md.format_version >= 2 else 0
        out: list[ManifestFile] = []
        kept: list[ManifestEntry] = []
        for path, (m, entries) in plan._manifests.items():
            kept += entries
            if path not in touched:
                out.append(m)
                continue
            rewritten = [ManifestEntry(EntryStatus.EXISTING, e.snapshot_id, e.sequence_number, e.file_sequence_number,
                                       plan._fixed.get((path, e.data_file.file_path), e.data_file)) for e in entries]
            kept[len(kept) - len(entries):] = rewritten
            out.append(write_manifest_file(t, rewritten, txn=txn, spec_id=m.partition_spec_id, content=m.content,
                                           snapshot_id=sid, sequence_number=seq))
        summary = {**summarize_change(head, SnapshotChange("replace")), **live_totals(kept)}
        return snapshot_from_manifests(txn, head, out, snapshot_id=sid, sequence_number=seq, summary=summary)

    c = Transaction(table, retries=retries).commit(build)
    return MetricsRepairResult(plan, c, sid)


__all__ = ["MetricsChange", "MetricsDifference", "MetricsRepairPlan", "MetricsRepairResult", "apply_metrics_repair",
           "plan_metrics_repair"]
