"""``report``: a table's shape at a glance, as numbers for charts. The data file sizes of the current
snapshot against the compaction target, what each day's snapshots added, each partition's data and
delete load, and the snapshot timeline with its refs; read from metadata and manifests (no data
file is opened). The renderers (terminal bars, the HTML page) only draw what this returns.

File sizes are binned against the table's ``write.target-file-size-bytes`` with the bounds of
``compact`` (:func:`icectl.ops.maintain.compact.file_size_bounds`: Java's 0.75 and 1.8 factors):
powers of 4 below the min-file-size (a file there is one compaction rewrites), then
[min, target), [target, max) and [max, unbounded).
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Iterable

from icectl.ops.inspect.files import list_files
from icectl.ops.inspect.snapshots import refs_by_snapshot
from icectl.ops.maintain.compact import CompactOptions, file_size_bounds
from icectl.spec.metadata import MAIN_BRANCH
from icectl.spec.temporal import millis_to_iso
from icectl.table.loaded import Table

# Powers of 4 below compact's min-file-size: at most this many bins, the smallest at least 1 KiB.
MAX_SMALL_BINS = 10
SMALLEST_BIN = 1024


@dataclass
class SizeBin:
    """Data files with ``lower <= file_size_in_bytes < upper`` (``upper`` null: no upper bound).
    ``kind``: ``small`` (under compact's min-file-size: compact rewrites them), ``target`` (from
    the min-file-size to the target), ``over`` (from the target to the max-file-size) or ``large``
    (at or over the max-file-size: compact splits them)."""

    lower: int
    upper: int | None
    kind: str
    files: int = 0
    bytes: int = 0


@dataclass
class FileSizes:
    target_file_size: int  # write.target-file-size-bytes
    min_file_size: int  # compact rewrites smaller files
    max_file_size: int  # compact splits larger files
    data_files: int
    data_bytes: int
    small_files: int  # under min_file_size
    large_files: int  # at or over max_file_size
    median_file_size: int | None
    bins: list[SizeBin]


@dataclass
class DayActivity:
    """What the snapshots committed on one day (UTC) added and removed, from their summaries."""

    day: str  # YYYY-MM-DD
    snapshots: int
    operations: dict[str, int]  # operation -> snapshots
    added_data_files: int
    added_delete_files: int
    added_records: int
    removed_records: int
    added_bytes: int  # added-files-size: data and delete files


@dataclass
class PartitionLoad:
    """One partition of the current snapshot: its live data, and the live deletes against it."""

    spec_id: int
    partition: str  # name=value, ... in the transform's human form ("" when unpartitioned)
    data_files: int = 0
    data_bytes: int = 0
    records: int = 0
    delete_files: int = 0
    delete_records: int = 0  # rows the delete files delete (positions, or equality rows)
    delete_bytes: int = 0

    @property
    def delete_ratio(self) -> float:
        return round(self.delete_records / self.records, 4) if self.records else 0.0


@dataclass
class TimelineSnapshot:
    snapshot_id: int
    parent_snapshot_id: int | None
    timestamp_ms: int
    committed_at: str
    operation: str | None
    sequence_number: int
    added_records: int | None
    removed_records: int | None
    total_records: int | None  # the summary's total-records
    refs: list[str]  # the branches and tags that point here
    branches: list[str]  # the branches whose history holds this snapshot (main first)


@dataclass
class RefPoint:
    name: str
    type: str  # branch | tag
    snapshot_id: int


@dataclass
class TableProfile:
    table: str
    metadata_location: str | None
    format_version: int
    snapshot_id: int | None  # the snapshot whose files are measured (the current one)
    file_sizes: FileSizes
    days: list[DayActivity]  # oldest first, days with at least one snapshot
    partitions: list[PartitionLoad]  # largest (data bytes) first
    partition_skew: float | None  # largest / median partition data bytes (2 partitions or more)
    timeline: list[TimelineSnapshot]  # oldest first
    refs: list[RefPoint]


def partition_skew(partition_bytes: Iterable[int]) -> float | None:
    """The largest partition's bytes over the median partition's (None under two partitions, or
    when the median is 0): health's skew measure, and the report's."""
    values = list(partition_bytes)
    if len(values) < 2:
        return None
    median = statistics.median(values)
    return round(max(values) / median, 2) if median else None


def size_bins(target: int, lo: int, hi: int, smallest: int | None) -> list[SizeBin]:
    """The empty bins: powers of 4 from the smallest file's (or at most MAX_SMALL_BINS below the
    min-file-size, and not under 1 KiB) up to the min-file-size, then the compaction bounds."""
    edges: list[int] = []
    e = SMALLEST_BIN
    while e * 4 < lo:
        e *= 4
    floor = max(SMALLEST_BIN, smallest or lo)
    while e >= SMALLEST_BIN and len(edges) < MAX_SMALL_BINS:
        edges.append(e)
        if e <= floor:
            break
        e //= 4
    edges = [e for e in reversed(edges) if e < lo]
    bins = []
    if edges and smallest is not None and smallest < edges[0]:
        bins.append(SizeBin(0, edges[0], "small"))
    if not edges:
        bins.append(SizeBin(0, lo, "small"))
    for a, b in zip(edges, edges[1:] + [lo]):
        if a < b:
            bins.append(SizeBin(a, b, "small"))
    bins += [SizeBin(lo, target, "target"), SizeBin(target, hi, "over"), SizeBin(hi, None, "large")]
    return bins


def _bin_of(bins: list[SizeBin], size: int) -> SizeBin:
    for b in bins:
        if b.upper is None or size < b.upper:
            return b
    return bins[-1]


def _summary_int(summary: dict[str, str], key: str) -> int:
    v = summary.get(key, "")
    return int(v) if v.lstrip("-").isdigit() else 0


def _days(table: Table) -> list[DayActivity]:
    by_day: dict[str, DayActivity] = {}
    for s in sorted(table.metadata.snapshots, key=lambda s: s.timestamp_ms):
        day = millis_to_iso(s.timestamp_ms)[:10]
        d = by_day.get(day)
        if d is None:
            d = by_day[day] = DayActivity(day, 0, {}, 0, 0, 0, 0, 0)
        sm = s.summary
        op = s.operation or "unknown"
        d.snapshots += 1
        d.operations[op] = d.operations.get(op, 0) + 1
        d.added_data_files += _summary_int(sm, "added-data-files")
        d.added_delete_files += _summary_int(sm, "added-delete-files")
        d.added_records += _summary_int(sm, "added-records")
        d.removed_records += _summary_int(sm, "deleted-records")
        d.added_bytes += _summary_int(sm, "added-files-size")
    return list(by_day.values())


def _timeline(table: Table) -> tuple[list[TimelineSnapshot], list[RefPoint]]:
    md = table.metadata
    refs = sorted(md.all_refs.items(), key=lambda kv: (kv[0] != MAIN_BRANCH, not kv[1].is_branch, kv[0]))
    on_branch: dict[int, list[str]] = {}
    for name, ref in refs:
        if ref.is_branch:
            for s in md.ancestors_of(ref.snapshot_id):
                on_branch.setdefault(s.snapshot_id, []).append(name)
    at = refs_by_snapshot(md)
    out = []
    for s in sorted(md.snapshots, key=lambda s: (s.timestamp_ms, s.sequence_number)):
        sm = s.summary
        out.append(TimelineSnapshot(
            s.snapshot_id, s.parent_snapshot_id, s.timestamp_ms, millis_to_iso(s.timestamp_ms), s.operation,
            s.sequence_number, _summary_int(sm, "added-records") if "added-records" in sm else None,
            _summary_int(sm, "deleted-records") if "deleted-records" in sm else None,
            _summary_int(sm, "total-records") if "total-records" in sm else None,
            at.get(s.snapshot_id, []), on_branch.get(s.snapshot_id, [])))
    return out, [RefPoint(name, ref.ref_type, ref.snapshot_id) for name, ref in refs]


def profile_table(table: Table) -> TableProfile:
    """The profile of ``table``: its current snapshot's files (one pass over the live manifests,
    streamed), its snapshots' summaries and its refs."""
    md = table.metadata
    target, lo, hi = file_size_bounds(md, CompactOptions())
    sizes: list[int] = []
    partitions: dict[tuple[int, str], PartitionLoad] = {}
    for row in list_files(table):
        key = (row.spec_id, ", ".join(f"{k}={v}" for k, v in row.partition_display.items()))
        p = partitions.get(key)
        if p is None:
            p = partitions[key] = PartitionLoad(*key)
        if row.content == "data":
            sizes.append(row.file_size_in_bytes)
            p.data_files += 1
            p.data_bytes += row.file_size_in_bytes
            p.records += row.record_count
        else:
            p.delete_files += 1
            p.delete_records += row.record_count
            # A deletion vector is its blob, not the whole Puffin file (as describe's totals count it).
            p.delete_bytes += row.content_size_in_bytes if row.content_size_in_bytes else row.file_size_in_bytes
    bins = size_bins(target, lo, hi, min(sizes) if sizes else None)
    for size in sizes:
        b = _bin_of(bins, size)
        b.files += 1
        b.bytes += size
    file_sizes = FileSizes(target, lo, hi, len(sizes), sum(sizes), sum(1 for s in sizes if s < lo),
                           sum(1 for s in sizes if s >= hi), int(statistics.median(sizes)) if sizes else None, bins)
    loads = sorted(partitions.values(), key=lambda p: (-p.data_bytes, p.spec_id, p.partition))
    timeline, refs = _timeline(table)
    return TableProfile(table.name, table.metadata_location, md.format_version, md.current_snapshot_id, file_sizes,
                        _days(table), loads, partition_skew(p.data_bytes for p in loads if p.data_files), timeline,
                        refs)


__all__ = ["DayActivity", "FileSizes", "PartitionLoad", "RefPoint", "SizeBin", "TableProfile", "TimelineSnapshot",
           "partition_skew", "profile_table", "size_bins"]
