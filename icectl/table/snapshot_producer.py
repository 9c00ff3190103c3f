"""Writing a new snapshot: manifests, the manifest list, the snapshot with its summary, sequence
numbers and (v3+) row lineage, and the metadata changes that go with it.

Used by every command that adds or replaces files (and by tests and benchmarks to build tables).
Spec: "Snapshots", "Manifest Lists", "Sequence Numbers", "Snapshot Row IDs",
"First Row ID Assignment"; Appendix E for what each version writes.
"""
from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field

from icectl.formats import avro_schemas
from icectl.formats.manifest import (
    DataFile,
    EntryStatus,
    FieldSummary,
    FileContent,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
    partition_fields,
    write_manifest,
    write_manifest_list,
)
from icectl.spec import content_stats
from icectl.spec.conversions import to_bytes
from icectl.spec.metadata import MAIN_BRANCH, Snapshot, SnapshotRef
from icectl.table.loaded import Table
from icectl.table.transaction import Transaction
from icectl.table.updates import AddSnapshot, SetSnapshotRef, TableUpdate
from icectl.errors import UsageError
from icectl.io import join


def new_snapshot_id() -> int:
    """A random positive 63-bit id, as Iceberg Java derives one from a UUID."""
    return uuid.uuid4().int & ((1 << 63) - 1)


@dataclass
class SnapshotChange:
    """What a new snapshot adds and removes, relative to its parent."""

    operation: str
    added: list[DataFile] = field(default_factory=list)
    removed: list[tuple[ManifestEntry, DataFile]] = field(default_factory=list)
    extra_summary: dict[str, str] = field(default_factory=dict)
    # A rewrite keeps the starting snapshot's data sequence number for the files it adds, so
    # deletes committed meanwhile still apply to them (Java's useStartingSequenceNumber).
    added_data_sequence_number: int | None = None
    added_sequence_numbers: dict[str, int] = field(default_factory=dict)  # per added path, overrides the above


def partition_summaries(table: Table, spec_id: int, files: list[DataFile]) -> list[FieldSummary]:
    md = table.metadata
    spec = md.spec_by_id(spec_id)
    types = [t for _, _, t in partition_fields(spec, md.find_type)]
    out = []
    for i, t in enumerate(types):
        values = [f.partition[i] for f in files if i < len(f.partition)]
        non_null = [v for v in values if v is not None]
        nans = [v for v in non_null if isinstance(v, float) and v != v]
        ordered = [v for v in non_null if not (isinstance(v, float) and v != v)]
        lo = hi = None
        if ordered:
            try:
                lo, hi = to_bytes(t, min(ordered)), to_bytes(t, max(ordered))
            except Exception:
                lo = hi = None
        out.append(FieldSummary(contains_null=len(non_null) < len(values), contains_nan=bool(nans),
                                lower_bound=lo, upper_bound=hi))
    return out


def write_manifest_file(table: Table, entries: list[ManifestEntry], *, txn: Transaction | None, spec_id: int,
                        content: ManifestContent, snapshot_id: int, sequence_number: int) -> ManifestFile:
    """Write a manifest of ``entries`` for a new snapshot of ``table`` into its metadata folder
    (bytes by :func:`icectl.formats.manifest.write_manifest`, the one manifest writer) and return its
    manifest-list entry: counts, min sequence number, partition summaries. The file is registered
    with ``txn`` as one its attempt wrote; ``txn=None``: the caller owns it (a manifest written once
    for every attempt, removed by the caller if all fail)."""
    md = table.metadata
    v = md.format_version
    schema = md.schema
    stats_schema = None
    if v >= 4:
        stats_schema = avro_schemas.content_stats_schema(schema)
        for e in entries:
            df = e.data_file
            if df.content_stats is None and any((df.value_counts, df.lower_bounds, df.null_value_counts)):
                df.content_stats = content_stats.from_maps(
                    schema, value_counts=df.value_counts, null_value_counts=df.null_value_counts,
                    nan_value_counts=df.nan_value_counts, lower_bounds=df.lower_bounds,
                    upper_bounds=df.upper_bounds, column_sizes=df.column_sizes)
    data = write_manifest(entries, format_version=v, spec=md.spec_by_id(spec_id), schema=schema, content=content,
                          content_stats_schema=stats_schema, path_writer=table.relativize if v >= 4 else None)
    path = join(md.location or "", "metadata", f"{uuid.uuid4()}-m0.avro")
    table.io.write(path, data)
    if txn is not None:
        txn.wrote(path)
    added = [e for e in entries if e.status == EntryStatus.ADDED]
    existing = [e for e in entries if e.status == EntryStatus.EXISTING]
    deleted = [e for e in entries if e.status == EntryStatus.DELETED]
    live = added + existing
    seqs = [e.sequence_number for e in live if e.sequence_number is not None]
    return ManifestFile(
        manifest_path=path, manifest_length=len(data), partition_spec_id=spec_id, content=content,
        sequence_number=sequence_number, min_sequence_number=min(seqs + [sequence_number]) if live else sequence_number,
        added_snapshot_id=snapshot_id, added_files_count=len(added), existing_files_count=len(existing),
        deleted_files_count=len(deleted), added_rows_count=sum(e.data_file.record_count for e in added),
        existing_rows_count=sum(e.data_file.record_count for e in existing),
        deleted_rows_count=sum(e.data_file.record_count for e in deleted),
        partitions=partition_summaries(table, spec_id, [e.data_file for e in live]),
    )


def _summary(parent: Snapshot | None, change: SnapshotChange) -> dict[str, str]:
    """Iceberg Java's SnapshotSummary keys for the files added and removed, and running totals."""
    def total(key: str) -> int:
        if parent is None:
            return 0
        v = parent.summary.get(key)
        return int(v) if v is not None and v.lstrip("-").isdigit() else 0

    def size(f: DataFile) -> int:
        return f.content_size_in_bytes if f.is_deletion_vector and f.content_size_in_bytes else f.file_size_in_bytes

    added_data = [f for f in change.added if f.content == FileContent.DATA]
    added_del = [f for f in change.added if f.content != FileContent.DATA]
    removed_data = [f for _, f in change.removed if f.content == FileContent.DATA]
    removed_del = [f for _, f in change.removed if f.content != FileContent.DATA]
    s: dict[str, str] = {"operation": change.operation}
    if added_data:
        s["added-data-files"] = str(len(added_data))
        s["added-records"] = str(sum(f.record_count for f in added_data))
    if removed_data:
        s["deleted-data-files"] = str(len(removed_data))
        s["deleted-records"] = str(sum(f.record_count for f in removed_data))
    if added_del:
        s["added-delete-files"] = str(len(added_del))
    if removed_del:
        s["removed-delete-files"] = str(len(removed_del))
    pos_add = sum(f.record_count for f in added_del if f.content == FileContent.POSITION_DELETES)
    eq_add = sum(f.record_count for f in added_del if f.content == FileContent.EQUALITY_DELETES)
    pos_rem = sum(f.record_count for f in removed_del if f.content == FileContent.POSITION_DELETES)
    eq_rem = sum(f.record_count for f in removed_del if f.content == FileContent.EQUALITY_DELETES)
    if pos_add:
        s["added-position-deletes"] = str(pos_add)
    if eq_add:
        s["added-equality-deletes"] = str(eq_add)
    if pos_rem:
        s["removed-position-deletes"] = str(pos_rem)
    if eq_rem:
        s["removed-equality-deletes"] = str(eq_rem)
    added_size = sum(size(f) for f in change.added)
    removed_size = sum(size(f) for f in removed_data + removed_del)
    if added_size:
        s["added-files-size"] = str(added_size)
    if removed_size:
        s["removed-files-size"] = str(removed_size)
    s["changed-partition-count"] = str(len({(f.spec_id, f.partition) for f in change.added}
                                         | {(f.spec_id, f.partition) for _, f in change.removed}))
    s["total-records"] = str(total("total-records") + sum(f.record_count for f in added_data)
                             - sum(f.record_count for f in removed_data))
    s["total-files-size"] = str(total("total-files-size") + added_size - removed_size)
    s["total-data-files"] = str(total("total-data-files") + len(added_data) - len(removed_data))
    s["total-delete-files"] = str(total("total-delete-files") + len(added_del) - len(removed_del))
    s["total-position-deletes"] = str(total("total-position-deletes") + pos_add - pos_rem)
    s["total-equality-deletes"] = str(total("total-equality-deletes") + eq_add - eq_rem)
    s.update(change.extra_summary)
    return s


def summarize_change(parent: Snapshot | None, change: SnapshotChange) -> dict[str, str]:
    """The summary of a snapshot that makes ``change`` on ``parent`` (Java's SnapshotSummary)."""
    return _summary(parent, change)


def build_snapshot(txn: Transaction, change: SnapshotChange, *, branch: str = MAIN_BRANCH,
                   timestamp_ms: int | None = None, snapshot_id: int | None = None,
                   stage_only: bool = False) -> list[TableUpdate]:
    """Write the manifests and manifest list of a new snapshot on ``branch`` of ``txn``'s table
    (registered with ``txn`` as files its attempt wrote); return the updates that commit it:
    ``add-snapshot`` and ``set-snapshot-ref`` (the branch keeps its retention). With ``stage_only``
    the snapshot's parent is the branch head but no ref moves (Iceberg Java's ``stageOnly()``, how
    write-audit-publish stages a commit)."""
    table = txn.table
    md = table.metadata
    v = md.format_version
    ref = md.all_refs.get(branch)
    if ref is not None and not ref.is_branch:
        raise UsageError(f"{branch!r} is a tag; commits go to branches")
    parent = md.snapshot_by_id(ref.snapshot_id) if ref else None
    snapshot_id = snapshot_id or new_snapshot_id()
    sequence_number = md.last_sequence_number + 1 if v >= 2 else 0
    ts = timestamp_ms or int(time.time() * 1000)
    ts = max(ts, md.last_updated_ms)

    # Deletion vectors share Puffin files: an entry is its path and its blob offset.
    removed_paths = {(f.file_path, f.content_offset) for _, f in change.removed}
    manifests: list[ManifestFile] = []
    # New manifests first (as Iceberg Java orders them), one per spec and content.
    groups: dict[tuple[int, ManifestContent], list[ManifestEntry]] = {}
    for f in change.added:
        content = ManifestContent.DATA if f.content == FileContent.DATA else ManifestContent.DELETES
        seq = sequence_number if v >= 2 else None
        groups.setdefault((f.spec_id, content), []).append(
            ManifestEntry(EntryStatus.ADDED, snapshot_id, seq if v >= 2 else None, seq if v >= 2 else None, f))
    for (spec_id, content), entries in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        for e in entries:  # inherited on read (spec: "Sequence Number Inheritance")
            e.sequence_number = change.added_sequence_numbers.get(
                e.data_file.file_path, change.added_data_sequence_number) if v >= 2 else None
            e.file_sequence_number = None
        manifests.append(write_manifest_file(table, entries, txn=txn, spec_id=spec_id, content=content, snapshot_id=snapshot_id,
                                         sequence_number=sequence_number))
    # Existing manifests: kept as they are unless they hold a removed file, then rewritten.
    if parent is not None:
        for m in table.manifests(parent):
            if m.added_files_count == 0 and m.existing_files_count == 0:
                continue  # only DELETED entries of an earlier snapshot: dropped, as Iceberg Java does
            if not removed_paths:
                manifests.append(m)
                continue
            entries = table.read_entries(m, live_only=True)
            if not any((e.data_file.file_path, e.data_file.content_offset) in removed_paths for e in entries):
                manifests.append(m)
                continue
            rewritten = []
            for e in entries:
                if (e.data_file.file_path, e.data_file.content_offset) in removed_paths:
                    rewritten.append(ManifestEntry(EntryStatus.DELETED, snapshot_id, e.sequence_number,
                                                   e.file_sequence_number, e.data_file))
                else:
                    rewritten.append(ManifestEntry(EntryStatus.EXISTING, e.snapshot_id, e.sequence_number,
                                                   e.file_sequence_number, e.data_file))
            manifests.append(write_manifest_file(table, rewritten, txn=txn, spec_id=m.partition_spec_id, content=m.content,
                                             snapshot_id=snapshot_id, sequence_number=sequence_number))
    list_path, first_row_id, added_rows = _write_manifest_list(
        txn, manifests, snapshot_id=snapshot_id, parent_snapshot_id=parent.snapshot_id if parent else None,
        sequence_number=sequence_number)
    snap = Snapshot(
        snapshot_id=snapshot_id, timestamp_ms=ts, parent_snapshot_id=parent.snapshot_id if parent else None,
        sequence_number=sequence_number, manifest_list=table.relativize(list_path) if v >= 4 else list_path,
        summary=_summary(parent, change), schema_id=md.current_schema_id,
        first_row_id=first_row_id, added_rows=added_rows,
    )
    if stage_only:
        return [AddSnapshot(snap)]
    old = md.refs.get(branch)
    ref = SnapshotRef(snapshot_id, "branch", *(
        (old.min_snapshots_to_keep, old.max_snapshot_age_ms, old.max_ref_age_ms, old.extra) if old else ()))
    return [AddSnapshot(snap), SetSnapshotRef(branch, ref)]


def _write_manifest_list(txn: Transaction, manifests: list[ManifestFile], *, snapshot_id: int,
                         parent_snapshot_id: int | None, sequence_number: int,
                         on: Table | None = None) -> tuple[str, int | None, int | None]:
    """Write a new snapshot's manifest list; returns (its path, first-row-id, added-rows). v3+
    row lineage: a data manifest without ``first_row_id`` gets the next range from the table's
    next-row-id, as Java's ManifestListWriter assigns it."""
    table = on or txn.table
    md = table.metadata
    v = md.format_version
    first_row_id = added_rows = None
    if v >= 3:
        first_row_id = md.next_row_id or 0
        cursor = first_row_id
        for m in manifests:
            if m.content == ManifestContent.DATA and m.first_row_id is None:
                m.first_row_id = cursor
                cursor += (m.added_rows_count or 0) + (m.existing_rows_count or 0)
        added_rows = cursor - first_row_id
    list_path = join(md.location or "", "metadata", f"snap-{snapshot_id}-1-{uuid.uuid4()}.avro")
    txn.wrote(list_path)
    table.io.write(list_path, write_manifest_list(
        manifests, format_version=v, snapshot_id=snapshot_id, parent_snapshot_id=parent_snapshot_id,
        sequence_number=sequence_number, first_row_id=first_row_id,
        path_writer=table.relativize if v >= 4 else None))
    return list_path, first_row_id, added_rows


def snapshot_from_manifests(txn: Transaction, parent: Snapshot, manifests: list[ManifestFile], *, snapshot_id: int,
                             sequence_number: int, summary: dict[str, str], ref_name: str = MAIN_BRANCH,
                             timestamp_ms: int | None = None, on: Table | None = None) -> list[TableUpdate]:
    """The updates that commit a snapshot whose manifests are already written (a rewrite of the
    parent's manifests: rewrite-manifests, repair): the manifest list, v3+ row lineage (a data
    manifest without ``first_row_id`` gets the next range, as Java's ManifestListWriter does),
    ``add-snapshot``, and ``set-snapshot-ref`` moving ``ref_name`` (a branch or a tag, keeping
    its type and retention) to it. ``on``: the table state the snapshot is built on when it is
    not ``txn``'s base (one commit of several snapshots, each on the state the ones before it
    leave)."""
    table = on or txn.table
    md = table.metadata
    v = md.format_version
    list_path, first_row_id, added_rows = _write_manifest_list(
        txn, manifests, snapshot_id=snapshot_id, parent_snapshot_id=parent.snapshot_id,
        sequence_number=sequence_number, on=table)
    ts = max(timestamp_ms or int(time.time() * 1000), md.last_updated_ms)
    snap = Snapshot(snapshot_id=snapshot_id, timestamp_ms=ts, parent_snapshot_id=parent.snapshot_id,
                    sequence_number=sequence_number,
                    manifest_list=table.relativize(list_path) if v >= 4 else list_path, summary=summary,
                    schema_id=md.current_schema_id, first_row_id=first_row_id, added_rows=added_rows)
    old = md.all_refs.get(ref_name)
    ref = SnapshotRef(snapshot_id, old.ref_type if old else "branch", *(
        (old.min_snapshots_to_keep, old.max_snapshot_age_ms, old.max_ref_age_ms, old.extra) if old else ()))
    return [AddSnapshot(snap), SetSnapshotRef(ref_name, ref)]


def live_totals(entries: list[ManifestEntry]) -> dict[str, str]:
    """SnapshotSummary's ``total-*`` values counted from a snapshot's live entries (a deletion
    vector counts its blob's size), for a commit that rewrites the parent's manifests."""
    data = [e.data_file for e in entries if e.data_file.content == FileContent.DATA]
    deletes = [e.data_file for e in entries if e.data_file.content != FileContent.DATA]

    def size(f: DataFile) -> int:
        return f.content_size_in_bytes if f.is_deletion_vector and f.content_size_in_bytes else f.file_size_in_bytes

    return {"total-records": str(sum(f.record_count for f in data)),
            "total-files-size": str(sum(size(f) for f in data + deletes)),
            "total-data-files": str(len(data)), "total-delete-files": str(len(deletes)),
            "total-position-deletes": str(sum(f.record_count for f in deletes
                                              if f.content == FileContent.POSITION_DELETES)),
            "total-equality-deletes": str(sum(f.record_count for f in deletes
                                              if f.content == FileContent.EQUALITY_DELETES))}
