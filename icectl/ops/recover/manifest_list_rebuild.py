"""Rebuilding a snapshot's lost manifest list from what is left (``icectl repair``).

A snapshot ``S`` whose manifest list is gone still leaves its traces: the parent's manifest list
(the manifests ``S`` carried forward) and the manifests ``S`` wrote, which stay in the table's
metadata folder. Iceberg Java's ``SnapshotProducer`` names every manifest a commit writes
``{commit-uuid}-m{N}.avro`` and the manifest list ``snap-{S}-{attempt}-{commit-uuid}.avro``, and
every entry it writes as ADDED or DELETED carries ``snapshot_id`` ``S`` (``FastAppend``,
``MergingSnapshotProducer``, ``BaseRewriteManifests``). The rebuild is:

- the manifests ``S`` wrote: those in the metadata folder (listed through the table's FileIO) that
  carry the lost list's commit uuid, or hold an ADDED or DELETED entry of ``S``, or that another
  snapshot's readable manifest list names with ``added_snapshot_id`` ``S`` (a child that carried
  them forward: its entry is then taken as it is);
- plus the parent's manifests, minus those ``S`` replaced: a manifest ``S`` rewrote
  (``ManifestFilterManager``: its live files come back as EXISTING, the removed ones as DELETED)
  or merged (``ManifestMergeManager``: its live files come back as EXISTING) holds every live file
  of the parent manifest it replaces, so a parent manifest whose live files all appear in a
  manifest of ``S`` is dropped;
- ordered as Java's ``MergingSnapshotProducer.apply`` orders them: data manifests (the ones ``S``
  wrote first, new ones before rewritten ones, by their ``-m{N}`` number), then delete manifests;
- the manifest-list entries of ``S``'s manifests are counted from their entries (``sequence_number``
  and ``added_snapshot_id`` of ``S``); in v3+, the data manifests ``S`` wrote get ``first_row_id``
  ranges from ``S``'s ``first-row-id`` in that order, as Java's ``ManifestListWriter`` assigns them
  (existing plus added rows each), and the sum must be ``S``'s ``added-rows``.

Proof: the live files of the rebuilt set are counted as Java's ``SnapshotSummary`` counts them
(a deletion vector counts its blob's size) and compared with every total and change count the
snapshot summary holds. Every one equal: the rebuild is proven complete. Otherwise the result says
which totals differ and by how much, and which ``-m{N}`` manifests of the commit are absent (Java
numbers them in order; a gap may be a lost manifest, or one written and discarded by a retry or a
merge).
"""
from __future__ import annotations

import posixpath
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from icectl.errors import IcectlError, NotFoundError
from icectl.formats.manifest import (
    EntryStatus,
    FileContent,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
    read_manifest_header,
)
from icectl.io import join
from icectl.spec.metadata import Snapshot
from icectl.table.loaded import Table
from icectl.table.snapshot_producer import partition_summaries

THREADS = 8
_LIST_NAME = re.compile(r"^snap-(-?\d+)-(\d+)-(.+)\.avro$")
_MANIFEST_NAME = re.compile(r"^(.+)-m(\d+)\.avro$")


@dataclass
class TotalCheck:
    """One count of the snapshot summary against the rebuilt manifest list."""

    key: str
    recorded: int
    rebuilt: int

    @property
    def matches(self) -> bool:
        return self.recorded == self.rebuilt


@dataclass
class ManifestListRebuild:
    """What the rebuild of a lost manifest list found, and whether the summary proves it complete."""

    snapshot_id: int
    manifest_list: str  # the lost file
    parent_snapshot_id: int | None
    parent_list: str  # read | none (no parent) | expired | missing | unreadable: why
    parent_manifests_kept: int
    parent_manifests_replaced: int
    snapshot_manifests: list[str]  # the manifests the snapshot wrote, found in the metadata folder
    checks: list[TotalCheck]
    complete: bool
    unaccounted: list[str]  # each total that differs, or why nothing can be proven
    may_be_missing: list[str]  # manifests of the commit that its -m{N} numbering says are absent


def _size(e: ManifestEntry) -> int:
    f = e.data_file
    return f.content_size_in_bytes if f.is_deletion_vector and f.content_size_in_bytes else f.file_size_in_bytes


def _key(e: ManifestEntry) -> tuple[str, int | None]:
    return e.data_file.file_path, e.data_file.content_offset


def _counts(live: list[ManifestEntry], mine: list[ManifestEntry], snapshot_id: int) -> dict[str, int]:
    """Java's SnapshotSummary counts: totals of the live files, changes of ``snapshot_id``."""
    data = [e for e in live if e.data_file.content == FileContent.DATA]
    deletes = [e for e in live if e.data_file.content != FileContent.DATA]
    added = [e for e in mine if e.status == EntryStatus.ADDED and e.snapshot_id == snapshot_id]
    removed = [e for e in mine if e.status == EntryStatus.DELETED and e.snapshot_id == snapshot_id]

    def files(es: list[ManifestEntry], data_files: bool) -> list[ManifestEntry]:
        return [e for e in es if (e.data_file.content == FileContent.DATA) == data_files]

    def records(es: list[ManifestEntry], content: FileContent | None = None) -> int:
        return sum(e.data_file.record_count for e in es if content is None or e.data_file.content == content)

    return {
        "total-data-files": len(data), "total-delete-files": len(deletes), "total-records": records(data),
        "total-files-size": sum(_size(e) for e in live),
        "total-position-deletes": records(deletes, FileContent.POSITION_DELETES),
        "total-equality-deletes": records(deletes, FileContent.EQUALITY_DELETES),
        "added-data-files": len(files(added, True)), "deleted-data-files": len(files(removed, True)),
        "added-records": records(files(added, True)), "deleted-records": records(files(removed, True)),
        "added-delete-files": len(files(added, False)), "removed-delete-files": len(files(removed, False)),
        "added-files-size": sum(_size(e) for e in added), "removed-files-size": sum(_size(e) for e in removed),
    }


def _list_entry(table: Table, path: str, entries: list[ManifestEntry], *, spec_id: int,
                content: ManifestContent, length: int, snap: Snapshot) -> ManifestFile:
    """The manifest-list entry Java wrote for a manifest of ``snap``, counted from its entries."""
    added = [e for e in entries if e.status == EntryStatus.ADDED]
    existing = [e for e in entries if e.status == EntryStatus.EXISTING]
    deleted = [e for e in entries if e.status == EntryStatus.DELETED]
    live = added + existing
    seqs = [e.sequence_number for e in live if e.sequence_number is not None]
    seq = snap.sequence_number
    return ManifestFile(
        manifest_path=path, manifest_length=length, partition_spec_id=spec_id, content=content,
        sequence_number=seq, min_sequence_number=min(seqs + [seq]) if live else seq,
        added_snapshot_id=snap.snapshot_id, added_files_count=len(added), existing_files_count=len(existing),
        deleted_files_count=len(deleted), added_rows_count=sum(e.data_file.record_count for e in added),
        existing_rows_count=sum(e.data_file.record_count for e in existing),
        deleted_rows_count=sum(e.data_file.record_count for e in deleted),
        partitions=partition_summaries(table, spec_id, [e.data_file for e in live]))


def _carried(table: Table, snap: Snapshot) -> tuple[dict[str, ManifestFile], set[str]]:
    """From every other snapshot's readable manifest list: the entries that name a manifest of
    ``snap`` (carried forward by a child), and every manifest path they list."""
    others = [s for s in table.metadata.snapshots if s.snapshot_id != snap.snapshot_id]

    def read(s: Snapshot) -> list[ManifestFile]:
        try:
            return table.manifests(s)
        except IcectlError:
            return []

    mine: dict[str, ManifestFile] = {}
    listed: set[str] = set()
    with ThreadPoolExecutor(THREADS) as pool:
        for ms in pool.map(read, others):
            for m in ms:
                listed.add(m.manifest_path)
                if m.added_snapshot_id == snap.snapshot_id:
                    mine[m.manifest_path] = m
    return mine, listed


def rebuild_manifest_list(table: Table, snap: Snapshot) -> tuple[ManifestListRebuild, list[ManifestFile]]:
    """The manifest list of ``snap`` rebuilt from the parent's and the manifests ``snap`` wrote
    (see the module docstring): what was found with the proof against its summary, and the
    manifest-list entries, in order."""
    md = table.metadata
    sid = snap.snapshot_id
    lost = table.resolve(snap.manifest_list or "")
    m = _LIST_NAME.match(posixpath.basename(lost))
    commit_uuid = m.group(3) if m else None

    parent = md.snapshot_by_id(snap.parent_snapshot_id) if snap.parent_snapshot_id is not None else None
    parent_manifests: list[ManifestFile] = []
    if snap.parent_snapshot_id is None:
        parent_list = "none"
    elif parent is None:
        parent_list = "expired"
    else:
        try:
            parent_manifests = table.manifests(parent)
            parent_list = "read"
        except IcectlError as e:
            parent_list = "missing" if isinstance(e, NotFoundError) else f"unreadable: {e.message}"
    parent_paths = {p.manifest_path for p in parent_manifests}
    carried, listed = _carried(table, snap)

    # the manifests in the folder the lost list was in (the metadata folder, or write.metadata.path)
    # that no other snapshot's list names with another writer
    folder = posixpath.dirname(lost) if "/" in lost else join(md.location or "", "metadata")
    candidates = sorted(f.path for f in table.io.list_files(folder)
                        if f.path.endswith(".avro") and not posixpath.basename(f.path).startswith("snap-")
                        and f.path not in parent_paths and (f.path not in listed or f.path in carried))

    def read(path: str) -> tuple[str, ManifestFile | None, list[ManifestEntry]]:
        try:
            if path in carried:
                ref = carried[path]
                return path, ref, table.read_entries(ref)
            data = table.io.read(path)
            header = read_manifest_header(data, source=path)
            if "partition-spec-id" not in header.raw or header.partition_spec_id is None:
                return path, None, []  # not a manifest
            ref = ManifestFile(path, len(data), header.partition_spec_id, header.content, snap.sequence_number,
                               snap.sequence_number, sid)
            return path, ref, table.read_entries(ref)
        except IcectlError:
            return path, None, []

    with ThreadPoolExecutor(THREADS) as pool:
        read_all = list(pool.map(read, candidates))
    written: list[tuple[ManifestFile, list[ManifestEntry], bool]] = []  # (entry, entries, from a child's list)
    for path, ref, entries in read_all:
        if ref is None:
            continue
        name = _MANIFEST_NAME.match(posixpath.basename(path))
        by_name = commit_uuid is not None and name is not None and name.group(1) == commit_uuid
        by_entry = any(e.snapshot_id == sid and e.status != EntryStatus.EXISTING for e in entries)
        if path in carried or by_name or by_entry:
            written.append((ref, entries, path in carried))

    covered = {_key(e) for _, es, _ in written for e in es}

    def read_live(p: ManifestFile) -> tuple[ManifestFile, list[ManifestEntry] | None]:
        try:
            return p, table.read_entries(p, live_only=True)
        except IcectlError:
            return p, None  # kept as it is: repair's check of the manifests finds it

    with ThreadPoolExecutor(THREADS) as pool:
        parents = list(pool.map(read_live, parent_manifests))
    kept: list[tuple[ManifestFile, list[ManifestEntry]]] = []
    replaced = 0
    for p, live in parents:
        if live is not None and (not live or all(_key(e) in covered for e in live)):
            replaced += 1
            continue
        kept.append((p, live or []))

    def order(w: tuple[ManifestFile, list[ManifestEntry], bool]) -> tuple:
        ref, entries, _ = w
        name = _MANIFEST_NAME.match(posixpath.basename(ref.manifest_path))
        rewritten = any(e.status == EntryStatus.EXISTING for e in entries) and not any(
            e.status == EntryStatus.ADDED for e in entries)
        return (int(ref.content), -ref.partition_spec_id, rewritten, int(name.group(2)) if name else 0,
                ref.manifest_path)

    written.sort(key=order)
    mine: list[ManifestFile] = []
    for ref, entries, from_child in written:
        mine.append(ref if from_child else _list_entry(
            table, ref.manifest_path, entries, spec_id=ref.partition_spec_id, content=ref.content,
            length=ref.manifest_length, snap=snap))
    added_rows = None
    if md.format_version >= 3 and snap.first_row_id is not None:
        cursor = snap.first_row_id
        for ref in mine:
            if ref.content == ManifestContent.DATA:
                if ref.first_row_id is None:
                    ref.first_row_id = cursor
                cursor = max(cursor, ref.first_row_id + (ref.added_rows_count or 0) + (ref.existing_rows_count or 0))
        added_rows = cursor - snap.first_row_id
    data = [x for x in mine if x.content == ManifestContent.DATA] + \
        [p for p, _ in kept if p.content == ManifestContent.DATA]
    deletes = [x for x in mine if x.content != ManifestContent.DATA] + \
        [p for p, _ in kept if p.content != ManifestContent.DATA]

    live = [e for _, es, _ in written for e in es if e.is_live] + [e for _, es in kept for e in es]
    counts = _counts(live, [e for _, es, _ in written for e in es], sid)
    summary = snap.summary or {}
    checks = []
    for k, n in counts.items():
        if k in summary:
            try:
                checks.append(TotalCheck(k, int(summary[k]), n))
            except ValueError:
                continue
    if added_rows is not None and snap.added_rows is not None:
        checks.append(TotalCheck("added-rows", snap.added_rows, added_rows))
    unaccounted = [f"{c.key}: the summary says {c.recorded}, the rebuilt list holds {c.rebuilt} "
                   f"({c.rebuilt - c.recorded:+d})" for c in checks if not c.matches]
    if not any(c.key.startswith("total-") for c in checks):
        unaccounted.append("the snapshot summary has no totals: nothing proves the rebuild complete")
    missing: list[str] = []
    if unaccounted and commit_uuid is not None:
        numbers = {int(n.group(2)) for ref, _, _ in written
                   if (n := _MANIFEST_NAME.match(posixpath.basename(ref.manifest_path))) and n.group(1) == commit_uuid}
        if numbers:
            missing = [join(folder, f"{commit_uuid}-m{i}.avro") for i in range(max(numbers)) if i not in numbers]
        else:
            missing = [join(folder, f"{commit_uuid}-m*.avro")]
    if unaccounted and parent_list not in ("read", "none"):
        unaccounted.append(f"the parent's manifest list is {parent_list}: the manifests it carried are unknown")
    return ManifestListRebuild(
        sid, lost, snap.parent_snapshot_id, parent_list, len(kept), replaced, [r.manifest_path for r in mine], checks,
        not unaccounted, unaccounted, missing), data + deletes


__all__ = ["ManifestListRebuild", "TotalCheck", "rebuild_manifest_list"]
