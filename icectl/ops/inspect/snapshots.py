"""``snapshots``: a table's snapshots as rows (newest first, or the ancestry of a ref) and as a tree
by parent."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice
from operator import lt

from icectl.expr.timestamp import parse_timestamp_ms
from icectl.spec.metadata import MAIN_BRANCH, Snapshot, TableMetadata
from icectl.spec.temporal import millis_to_iso
from icectl.table.loaded import Table
from icectl.errors import NotFoundError, UsageError


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


def summary_count(value: str | None) -> int | None:
    """A count of a snapshot's summary (``added-data-files``...) as a number; None when the
    summary has none or it is not an integer."""
    return int(value) if value is not None and value.lstrip("-").isdigit() else None


# The summary's counts a row shows, in SnapshotRow's order: added and removed data files, delete
# files and records.
COUNT_KEYS = ("added-data-files", "deleted-data-files", "added-delete-files", "removed-delete-files",
              "added-records", "deleted-records")


def newest_first(seqs: Sequence[int], times: Sequence[int]) -> list[int]:
    """The positions of snapshots by (sequence number, time), newest first; of equal ones, the
    first in the file first (a stable sort). A file in commit order (sequence numbers rising) is
    read backwards without sorting."""
    n = len(seqs)
    if n < 2 or all(map(lt, islice(seqs, 0, n - 1), islice(seqs, 1, None))):
        return list(range(n - 1, -1, -1))
    return sorted(range(n), key=lambda i: (seqs[i], times[i]), reverse=True)


def refs_by_snapshot(md: TableMetadata) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for name, ref in sorted(md.all_refs.items(), key=lambda kv: (kv[0] != MAIN_BRANCH, kv[0])):
        out.setdefault(ref.snapshot_id, []).append(name)
    return out


def list_snapshots(table: Table, *, ref: str | None = None, limit: int | None = None,
                   since: str | None = None) -> list[SnapshotRow]:
    md = table.metadata
    refs = md.all_refs
    if ref is not None:
        r = refs.get(ref)
        if r is None:
            raise NotFoundError(f"ref {ref!r} does not exist in {table.name}",
                                hint="refs: " + ", ".join(sorted(refs)) if refs else None)
        snaps: list[Snapshot] | None = md.ancestors_of(r.snapshot_id)
        times = [s.timestamp_ms for s in snaps]
        order = list(range(len(snaps)))
    else:
        # newest first by (sequence number, time), ordered from the columns the load read: a
        # snapshot is built only when its row is made (--limit 5 builds five)
        snaps = None
        seqs, times = md.snapshot_values("sequence_number"), md.snapshot_values("timestamp_ms")
        order = newest_first(seqs, times)
    if since is not None:
        cutoff = parse_timestamp_ms(since, what="--since")
        order = [i for i in order if times[i] >= cutoff]
    if limit is not None:
        if limit < 0:
            raise UsageError("--limit must be 0 or more")
        order = order[:limit]
    main = refs.get(MAIN_BRANCH)
    main_ids = set(md.ancestor_ids(main.snapshot_id)) if main else set()
    by_snap = refs_by_snapshot(md)
    current = md.current_snapshot_id

    def row(s: Snapshot) -> SnapshotRow:
        get = s.summary.get
        sid = s.snapshot_id
        counts = []
        for k in COUNT_KEYS:  # summary_count of each: a string of digits (most) read at once
            v = get(k)
            counts.append(None if v is None else int(v) if v.isdigit() else summary_count(v))
        return SnapshotRow(
            sid, s.parent_snapshot_id, s.timestamp_ms, millis_to_iso(s.timestamp_ms), get("operation"),
            s.sequence_number, s.schema_id, *counts, by_snap.get(sid, []), sid == current, sid in main_ids,
            s.manifest_list, s.summary, s.first_row_id, s.added_rows)

    if snaps is not None:
        return [row(snaps[i]) for i in order]
    if len(order) == len(times):
        # every snapshot, built in file order (a built snapshot is kept and its bytes let go: less
        # memory than the bytes of 100,000 snapshots kept beside their rows)
        made = [row(s) for s in md.snapshots]
        return [made[i] for i in order]
    return [row(md.snapshots[i]) for i in order]


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
