"""``snapshots``: a table's snapshots as rows (newest first, or the ancestry of a ref) and as a tree
by parent."""
from __future__ import annotations

from dataclasses import dataclass

from icectl.expr.timestamp import parse_timestamp_ms
from icectl.spec.metadata import MAIN_BRANCH, TableMetadata
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


def _int(summary: dict[str, str], *keys: str) -> int | None:
    vals = [summary.get(k) for k in keys]
    nums = [int(v) for v in vals if v is not None and v.lstrip("-").isdigit()]
    return sum(nums) if nums else None


def refs_by_snapshot(md: TableMetadata) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for name, ref in sorted(md.all_refs.items(), key=lambda kv: (kv[0] != MAIN_BRANCH, kv[0])):
        out.setdefault(ref.snapshot_id, []).append(name)
    return out


def list_snapshots(table: Table, *, ref: str | None = None, limit: int | None = None,
                   since: str | None = None) -> list[SnapshotRow]:
    md = table.metadata
    if ref is not None:
        r = md.all_refs.get(ref)
        if r is None:
            raise NotFoundError(f"ref {ref!r} does not exist in {table.name}",
                                hint="refs: " + ", ".join(sorted(md.all_refs)) if md.all_refs else None)
        snaps = md.ancestors_of(r.snapshot_id)
    else:
        snaps = sorted(md.snapshots, key=lambda s: (s.sequence_number, s.timestamp_ms), reverse=True)
    if since is not None:
        cutoff = parse_timestamp_ms(since, what="--since")
        snaps = [s for s in snaps if s.timestamp_ms >= cutoff]
    if limit is not None:
        if limit < 0:
            raise UsageError("--limit must be 0 or more")
        snaps = snaps[:limit]
    main = md.all_refs.get(MAIN_BRANCH)
    main_ids = {s.snapshot_id for s in md.ancestors_of(main.snapshot_id)} if main else set()
    by_snap = refs_by_snapshot(md)
    rows = []
    for s in snaps:
        sm = s.summary
        rows.append(SnapshotRow(
            snapshot_id=s.snapshot_id, parent_snapshot_id=s.parent_snapshot_id, timestamp_ms=s.timestamp_ms,
            committed_at=iso_utc(s.timestamp_ms), operation=s.operation, sequence_number=s.sequence_number, schema_id=s.schema_id,
            added_data_files=_int(sm, "added-data-files"), removed_data_files=_int(sm, "deleted-data-files"),
            added_delete_files=_int(sm, "added-delete-files"), removed_delete_files=_int(sm, "removed-delete-files"),
            added_records=_int(sm, "added-records"), removed_records=_int(sm, "deleted-records"),
            refs=by_snap.get(s.snapshot_id, []), is_current=s.snapshot_id == md.current_snapshot_id,
            in_main=s.snapshot_id in main_ids, manifest_list=s.manifest_list, summary=sm,
            first_row_id=s.first_row_id, added_rows=s.added_rows,
        ))
    return rows


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
