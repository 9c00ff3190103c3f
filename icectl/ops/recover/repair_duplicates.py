"""``icectl repair --duplicates``: a data or delete file live more than once in main's head (in two
manifests, twice in one manifest, or a manifest listed twice, as a retried commit leaves it) keeps
one entry.

Iceberg Java's scan planning (``ManifestGroup``) makes a task of every live entry, so a file live
twice is read twice: its rows are counted twice by every engine. Deletes apply per entry
(``DeleteFileIndex.forEntry``, spec "Scan Planning"): an equality delete applies to a data file
whose data sequence number is lower than the delete's, a position delete (or deletion vector) to
one whose data sequence number is lower or equal. Which entry is kept follows from that:

- a **data file** keeps its entry with the **lowest** data sequence number: every delete that
  applied to any of its entries applies to that one, and no other delete does, so the file's rows
  are read exactly as Java read them through that entry (once instead of twice);
- a **delete file** keeps its entry with the **highest** data sequence number: it applies to every
  data file that any of its entries applied to (applying a delete twice changes nothing, so the
  rows read do not change at all);
- ties go to the first entry in manifest-list order.

On v3 the lowest is also the only entry Java can read at all: a deletion vector must not be older
than its data file's entry (``DeleteFileIndex.findDV`` refuses "DV data sequence number ... must be
greater than or equal to data file sequence number"), and a data file appended again after its DV
was written has a newer entry than the DV.

Entries of one file that disagree on the partition (or spec) cannot be reduced to one safely (which
deletes apply depends on it): such a file is reported and left as it is. Entries that disagree on
``record_count`` or ``file_size_in_bytes`` keep the chosen entry's values; ``repair --metrics``
(next in the default set) then gives the entry its footer's values. Two *different* deletion
vectors for one data file are invalid (spec "Deletion Vectors": at most one per data file; Java
refuses to plan the scan): which rows are deleted cannot be told, so it is reported, not changed.

The commit is one ``replace`` snapshot on main's head (the same set of live files, as Java's
RewriteManifests): manifests that held a dropped entry are rewritten with their other entries as
EXISTING (snapshot id, data and file sequence numbers and ``first_row_id`` kept), a manifest left
empty (or listed a second time) is dropped, and the summary's totals are counted from the entries
kept. A dropped entry is left out, not written as DELETED: the file stays live, and a DELETED entry
would let snapshot expiry delete it.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from icectl.errors import ConflictingChangeError, IcectlError
from icectl.formats.manifest import EntryStatus, FileContent, ManifestEntry, ManifestFile
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

THREADS = 8


@dataclass
class DuplicateEntry:
    """One live entry of a file that is live more than once."""

    manifest: str
    position: int  # the entry's place among the manifest's live entries
    data_sequence_number: int | None
    spec_id: int
    partition: str
    record_count: int
    file_size_in_bytes: int
    kept: bool


@dataclass
class DuplicateFile:
    path: str
    kind: str  # data | position-deletes | equality-deletes | deletion-vector
    entries: list[DuplicateEntry]
    conflicts: list[str]  # the fields its entries disagree on
    records_counted_twice: int  # rows every reader counted more than once (data files)
    unrepairable: str | None = None


@dataclass
class DuplicatesRepairPlan:
    table: str
    metadata_location: str
    snapshot_id: int | None
    entries_checked: int
    duplicates: list[DuplicateFile]
    unrepairable: list[str]
    unreadable: list[str] = field(default_factory=list)  # a lost manifest list or manifest: the files kind's
    planned_commits: list[dict] = field(default_factory=list, repr=False)
    # per manifest-list position: the manifest and its live entries; and the (position, entry index) dropped
    _slots: list[tuple[ManifestFile, list[ManifestEntry]]] = field(default_factory=list, repr=False)
    _dropped: set[tuple[int, int]] = field(default_factory=set, repr=False)

    @property
    def changes(self) -> bool:
        return bool(self._dropped)


@dataclass
class DuplicatesRepairResult:
    plan: DuplicatesRepairPlan
    committed: Committed | None
    new_snapshot_id: int | None


def keep_index(entries: list[ManifestEntry]) -> int:
    """Which of one file's live entries (in manifest-list order) to keep: a data file's lowest data
    sequence number, a delete file's highest (see the module docstring); the first on a tie."""
    def seq(e: ManifestEntry) -> int:
        return e.sequence_number or 0
    if entries[0].data_file.content == FileContent.DATA:
        return min(range(len(entries)), key=lambda i: (seq(entries[i]), i))
    return min(range(len(entries)), key=lambda i: (-seq(entries[i]), i))


def conflicts(entries: list[ManifestEntry]) -> list[str]:
    """The fields one file's live entries disagree on."""
    out = []
    for name, get in (("data sequence number", lambda e: e.sequence_number),
                      ("partition", lambda e: (e.data_file.spec_id, e.data_file.partition)),
                      ("record count", lambda e: e.data_file.record_count),
                      ("file size", lambda e: e.data_file.file_size_in_bytes)):
        if len({repr(get(e)) for e in entries}) > 1:
            out.append(name)
    return out


def _read(table: Table, m: ManifestFile) -> list[ManifestEntry]:
    return table.read_entries(m, live_only=True)


def plan_duplicates_repair(table: Table) -> DuplicatesRepairPlan:
    md = table.metadata
    ref = md.all_refs.get(MAIN_BRANCH)
    plan = DuplicatesRepairPlan(table.name, table.metadata_location, ref.snapshot_id if ref else None, 0, [], [])
    if ref is None:
        return plan
    head = md.snapshot_by_id(ref.snapshot_id)
    try:
        manifests = table.manifests(head)
        with ThreadPoolExecutor(THREADS) as pool:
            plan._slots = list(zip(manifests, pool.map(lambda m: _read(table, m), manifests)))
    except IcectlError as e:  # a lost manifest list or manifest: the files kind of repair says so
        plan.unreadable.append(e.message)
        plan._slots = []
        return plan
    by_file: dict[tuple[str, int | None], list[tuple[int, int, ManifestEntry]]] = {}
    for pos, (m, entries) in enumerate(plan._slots):
        for i, e in enumerate(entries):
            by_file.setdefault((e.data_file.file_path, e.data_file.content_offset), []).append((pos, i, e))
    plan.entries_checked = sum(len(es) for _, es in plan._slots)
    for (path, _), held in by_file.items():
        if len(held) < 2:
            continue
        entries = [e for _, _, e in held]
        differ = conflicts(entries)
        keep = keep_index(entries)
        f = entries[0].data_file
        why = None
        if "partition" in differ:
            why = (f"{path}: its {len(held)} live entries name different partitions; which deletes apply to it "
                   "depends on that, so none is dropped")
        dup = DuplicateFile(path, f.kind, [
            DuplicateEntry(plan._slots[pos][0].manifest_path, i, e.sequence_number, e.data_file.spec_id,
                           repr(e.data_file.partition), e.data_file.record_count, e.data_file.file_size_in_bytes,
                           why is None and j == keep)
            for j, (pos, i, e) in enumerate(held)], differ,
            sum(e.data_file.record_count for j, e in enumerate(entries) if j != keep)
            if f.content == FileContent.DATA else 0, why)
        plan.duplicates.append(dup)
        if why is not None:
            plan.unrepairable.append(why)
            continue
        plan._dropped |= {(pos, i) for j, (pos, i, _) in enumerate(held) if j != keep}
    # spec "Deletion Vectors": at most one per data file; the same blob twice is a duplicate above
    dvs: dict[str, set[tuple[str, int | None]]] = {}
    for _, entries in plan._slots:
        for e in entries:
            f = e.data_file
            if f.is_deletion_vector and f.referenced_data_file:
                dvs.setdefault(f.referenced_data_file, set()).add((f.file_path, f.content_offset))
    for data_path, blobs in sorted(dvs.items()):
        if len(blobs) > 1:
            where = ", ".join(f"{p} at offset {o}" for p, o in sorted(blobs, key=lambda b: (b[0], b[1] or 0)))
            plan.unrepairable.append(
                f"{data_path} has {len(blobs)} deletion vectors ({where}): the spec allows one and Iceberg Java "
                "refuses to read the table; which rows are deleted cannot be told, so they are left as they are "
                "(roll main back to the snapshot before the second one: icectl rollback)")
    plan.duplicates.sort(key=lambda d: (d.kind, d.path))
    if plan.changes:
        plan.planned_commits = [snapshot_commit_json(md, MAIN_BRANCH)]
    return plan


def apply_duplicates_repair(table: Table, plan: DuplicatesRepairPlan, *,
                            retries: int | None = None) -> DuplicatesRepairResult:
    """One ``replace`` snapshot on main's head keeping one entry per file; main must still point at
    the snapshot the plan checked."""
    if not plan.changes:
        return DuplicatesRepairResult(plan, None, None)
    sid = new_snapshot_id()
    touched = {pos for pos, _ in plan._dropped}

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
        for pos, (m, entries) in enumerate(plan._slots):
            keep = [e for i, e in enumerate(entries) if (pos, i) not in plan._dropped]
            kept += keep
            if pos not in touched:
                out.append(m)
            elif keep:
                out.append(write_manifest_file(
                    t, [ManifestEntry(EntryStatus.EXISTING, e.snapshot_id, e.sequence_number, e.file_sequence_number,
                                      e.data_file) for e in keep],
                    txn=txn, spec_id=m.partition_spec_id, content=m.content, snapshot_id=sid, sequence_number=seq))
        summary = {**summarize_change(head, SnapshotChange("replace")), **live_totals(kept)}
        return snapshot_from_manifests(txn, head, out, snapshot_id=sid, sequence_number=seq, summary=summary)

    c = Transaction(table, retries=retries).commit(build)
    return DuplicatesRepairResult(plan, c, sid)


__all__ = ["DuplicateEntry", "DuplicateFile", "DuplicatesRepairPlan", "DuplicatesRepairResult",
           "apply_duplicates_repair", "conflicts", "keep_index", "plan_duplicates_repair"]
