"""Repairing a table whose files are missing or unreadable (``icectl repair``).

What is checked: for the head snapshot of ``main`` (with ``all_refs``, of every branch and tag),
its manifest list, every manifest in it, and every live data file, delete file and deletion
vector (Puffin) they list: a file is *missing* when it does not exist, *unreadable* when its size
differs from ``file_size_in_bytes`` or its footer (Parquet, ORC, Avro; a DV's Puffin blob and CRC)
cannot be read. Statistics files that are missing or of the wrong size are checked too.

The smallest fix, a new snapshot per ref on top of the ref's head, all in one commit:

- a missing data file is removed (a DELETED entry in its manifest, rewritten), and so is every
  delete file that only removed data files needed: a deletion vector of one, a position delete
  file whose rows all point at removed or no longer live files, an equality delete that no
  remaining data file is older than in its partition;
- a missing delete file is removed too: the rows it deleted come back, and the plan says how
  many delete records that is;
- a missing or unreadable manifest is rebuilt from the entries that other manifests or older
  snapshots still hold: the files of its content and spec, added by the snapshot that wrote it
  or one of its ancestors (or by a snapshot expired since), not live in another manifest of the
  head and not deleted in its history. Its manifest-list entry says how many files and rows it held: what cannot be found
  is lost (counted from those numbers; delete files lost so bring their deleted rows back), and
  more candidates than it held is refused as ambiguous;
- a missing statistics file is removed from the metadata (``remove-statistics``).

The snapshot is labelled as Iceberg Java would label the change: ``delete`` when it only removes
data files and the deletes they alone needed (``DeleteFiles``), ``overwrite`` when it removes a
delete file that still applies (a ``RowDelta`` that only removes deletes), ``replace`` when it
only rebuilds manifests (``RewriteManifests``). Sequence numbers and v3 row lineage follow the
spec: the new snapshot takes the next sequence number; kept entries keep their data and file
sequence numbers and ``first_row_id``; new manifests get ``first_row_id`` ranges in the manifest
list. Its summary's totals are counted from the files it keeps.

A head whose manifest list is missing or unreadable gets it rebuilt from the parent's manifest list
and the manifests the head wrote (:mod:`icectl.ops.recover.manifest_list_rebuild`), checked against
the head's summary: the repair is a new ``replace`` snapshot on top of the head with the rebuilt
list (the head's own ``manifest-list`` is never changed). A rebuild the summary does not prove
complete is an ``overwrite`` and is committed only when the caller accepts the loss.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from icectl.errors import ConflictingChangeError, IcectlError, IncompleteRebuildError, NotFoundError
from icectl.formats.manifest import (
    DataFile,
    EntryStatus,
    FileContent,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
)
from icectl.ops.recover.manifest_list_rebuild import ManifestListRebuild, rebuild_manifest_list
from icectl.spec.metadata import MAIN_BRANCH, Snapshot, SnapshotRef
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
from icectl.table.updates import RemovePartitionStatistics, RemoveStatistics, TableUpdate, updates_json
from icectl.formats import puffin
from icectl.formats.avro import open_avro
from icectl.formats.parquet_footer import read_footer
from icectl.table.builder import MetadataBuilder

THREADS = 8
DELETE_FILE_PATH_ID = 2147483546


@dataclass
class Problem:
    """A file the checked snapshot references that is missing or unreadable."""

    path: str
    kind: str  # data | position-deletes | equality-deletes | deletion-vector | manifest | manifest-list | statistics
    problem: str  # "missing" or "unreadable: why"
    records: int | None = None
    bytes: int | None = None


@dataclass
class RemovedFile:
    path: str
    kind: str
    records: int
    bytes: int
    reason: str  # missing | unreadable | only-removed-data-files-need-it


@dataclass
class RebuiltManifest:
    """A lost manifest (or several of one content and spec) and what was found of it."""

    manifests: list[str]
    content: str  # data | deletes
    spec_id: int
    recorded_files: int | None  # live files its manifest-list entries say it held
    recorded_records: int | None
    recovered_files: int
    recovered_records: int
    lost_files: int | None
    lost_records: int | None
    sources: list[str]  # the manifests the entries were found in


@dataclass
class RefRepair:
    ref: str
    ref_type: str  # branch | tag
    snapshot_id: int
    operation: str | None  # delete | overwrite | replace; null: nothing to repair
    problems: list[Problem]
    removed_files: list[RemovedFile]
    rebuilt_manifests: list[RebuiltManifest]
    records_lost: int
    bytes_lost: int
    delete_records_dropped: int  # rows that removed delete files deleted: they come back
    unrepairable: str | None = None
    new_snapshot_id: int | None = None
    manifest_list: ManifestListRebuild | None = None  # the head's lost manifest list, rebuilt
    _work: Any = field(default=None, repr=False)

    @property
    def needs_accept_loss(self) -> bool:
        """The rebuilt manifest list is not proven complete: committing it may lose files."""
        return self.changes and self.manifest_list is not None and not self.manifest_list.complete

    @property
    def changes(self) -> bool:
        return self.operation is not None and self.unrepairable is None


@dataclass
class RepairPlan:
    table: str
    metadata_location: str
    format_version: int
    all_refs: bool
    refs: list[RefRepair]
    statistics: list[Problem]
    planned_commits: list[dict] = field(default_factory=list, repr=False)
    _stats_updates: list[TableUpdate] = field(default_factory=list, repr=False)

    @property
    def changes(self) -> bool:
        return any(r.changes for r in self.refs) or bool(self._stats_updates)

    @property
    def unrepairable(self) -> list[str]:
        return [f"{r.ref}: {r.unrepairable}" for r in self.refs if r.unrepairable]

    @property
    def incomplete_rebuilds(self) -> list[str]:
        """The refs whose rebuilt manifest list the summary does not prove complete, with why."""
        return [f"{r.ref}: {'; '.join(r.manifest_list.unaccounted)}" for r in self.refs
                if r.needs_accept_loss and r.manifest_list is not None]


@dataclass
class RepairResult:
    plan: RepairPlan
    committed: list[Committed]


# -- checking files ----------------------------------------------------------------------------------------

def _size(f: DataFile) -> int:
    return f.content_size_in_bytes if f.is_deletion_vector and f.content_size_in_bytes else f.file_size_in_bytes


def file_problem(table: Table, f: DataFile, *, metrics: bool = False) -> str | None:
    """None when the content file can be read, else ``missing`` or ``unreadable: why``. With
    ``metrics`` (the run repairs metrics too), a Parquet data file whose footer reads but whose
    size is not ``file_size_in_bytes`` is whole: its entry's size is what is wrong, and the
    metrics repair (:mod:`icectl.ops.recover.repair_metrics`) fixes it."""
    io = table.io
    try:
        size = io.size(f.file_path)
    except NotFoundError:
        return "missing"
    except IcectlError as e:
        return f"unreadable: {e.message}"
    if size != f.file_size_in_bytes:
        wrong = f"unreadable: the file has {size} bytes, file_size_in_bytes is {f.file_size_in_bytes}"
        if not (metrics and f.content == FileContent.DATA and f.file_format.lower() == "parquet"):
            return wrong
        try:
            read_footer(io, f.file_path)
        except Exception:  # noqa: BLE001  # pyarrow raises many kinds for a corrupt footer
            return wrong
        return None
    try:
        if f.is_deletion_vector:
            puffin.read_deletion_vector(puffin.FileIOSource(io, f.file_path), f.content_offset or 0,
                                        f.content_size_in_bytes or 0, record_count=f.record_count, source=f.file_path)
        elif f.file_format == "parquet":
            import pyarrow.parquet as pq

            with io.open(f.file_path, "rb") as fh:
                pq.ParquetFile(fh).metadata
        elif f.file_format == "orc":
            import pyarrow.orc as orc

            with io.open(f.file_path, "rb") as fh:
                orc.ORCFile(fh).nrows
        elif f.file_format == "avro":
            open_avro(io.read(f.file_path), source=f.file_path).record_count()
    except Exception as e:  # pyarrow raises many kinds for a corrupt footer
        text = str(e).splitlines()[0] if str(e) else type(e).__name__
        return f"unreadable: {text}"
    return None


def _key(f: DataFile) -> tuple[str, int | None]:
    return f.file_path, f.content_offset


def _content_name(c: ManifestContent) -> str:
    return "deletes" if c == ManifestContent.DELETES else "data"


# -- planning ----------------------------------------------------------------------------------------------

@dataclass
class _Slot:
    manifest: ManifestFile
    entries: list[ManifestEntry] | None  # None: the manifest cannot be read
    problem: str | None = None


@dataclass
class _Work:
    """What a ref's commit writes: the head's manifests, the rebuilt groups, what is removed."""

    slots: list[_Slot]
    rebuilt: list[tuple[ManifestContent, int, list[ManifestEntry]]]
    removed: set[tuple[str, int | None]]
    lost_files: int
    lost_records: int
    lost_deletes: int
    restores_rows: bool
    list_rebuilt: bool = False


def _read_slot(table: Table, m: ManifestFile) -> _Slot:
    try:
        return _Slot(m, table.read_entries(m, live_only=True))
    except NotFoundError:
        return _Slot(m, None, "missing")
    except IcectlError as e:
        return _Slot(m, None, f"unreadable: {e.message}")


class _Pool:
    """Every entry that the readable manifests of the table's snapshots hold, by file."""

    def __init__(self, table: Table, skip: set[str]):
        self.by_key: dict[tuple[str, int | None], list[tuple[ManifestEntry, ManifestFile]]] = {}
        seen: set[str] = set(skip)
        todo: list[ManifestFile] = []
        for snap in table.metadata.snapshots:
            try:
                manifests = table.manifests(snap)
            except IcectlError:
                continue
            for m in manifests:
                if m.manifest_path not in seen:
                    seen.add(m.manifest_path)
                    todo.append(m)

        def read(m: ManifestFile) -> tuple[ManifestFile, list[ManifestEntry]]:
            try:
                return m, table.read_entries(m)
            except IcectlError:
                return m, []

        with ThreadPoolExecutor(THREADS) as pool:
            for m, entries in pool.map(read, todo):
                for e in entries:
                    self.by_key.setdefault(_key(e.data_file), []).append((e, m))


def _ancestry(table: Table, snapshot_id: int | None) -> set[int]:
    return set(table.metadata.ancestor_ids(snapshot_id))


def _rebuild(table: Table, head: Snapshot, lost: list[_Slot], live_elsewhere: set, pool: _Pool
             ) -> tuple[list[tuple[ManifestContent, int, list[ManifestEntry]]], list[RebuiltManifest], str | None]:
    """The entries of the lost manifests that other manifests still hold, one group per content
    and spec; an error text when more candidates are found than the lost manifests held."""
    head_lineage = _ancestry(table, head.snapshot_id)
    groups: dict[tuple[ManifestContent, int], list[_Slot]] = {}
    for s in lost:
        groups.setdefault((s.manifest.content, s.manifest.partition_spec_id), []).append(s)
    out, views = [], []
    for (content, spec_id), slots in sorted(groups.items()):
        writers: set[int] = set()
        for s in slots:
            sid = s.manifest.added_snapshot_id
            writers |= _ancestry(table, sid) if sid is not None and table.metadata.snapshot_by_id(sid) else head_lineage
        found: list[ManifestEntry] = []
        sources: set[str] = set()
        for key, held in pool.by_key.items():
            if key in live_elsewhere:
                continue
            if any(e.status == EntryStatus.DELETED and e.snapshot_id in head_lineage for e, _ in held):
                continue  # removed in the head's history
            # A file added by an expired snapshot (gone from the metadata) predates what is retained.
            live = [(e, m) for e, m in held if e.status != EntryStatus.DELETED and m.content == content
                    and m.partition_spec_id == spec_id
                    and (e.snapshot_id in writers or table.metadata.snapshot_by_id(e.snapshot_id) is None)]
            if not live:
                continue
            e, m = max(live, key=lambda em: em[1].sequence_number)
            found.append(ManifestEntry(EntryStatus.EXISTING, e.snapshot_id, e.sequence_number, e.file_sequence_number,
                                       e.data_file))
            sources.add(m.manifest_path)
        counts = [(s.manifest.added_files_count, s.manifest.existing_files_count, s.manifest.added_rows_count,
                   s.manifest.existing_rows_count) for s in slots]
        known = all(None not in c for c in counts)
        files = sum(c[0] + c[1] for c in counts) if known else None
        records = sum(c[2] + c[3] for c in counts) if known else None
        got_records = sum(e.data_file.record_count for e in found)
        views.append(RebuiltManifest(
            [s.manifest.manifest_path for s in slots], _content_name(content), spec_id, files, records, len(found),
            got_records, None if files is None else max(0, files - len(found)),
            None if records is None else max(0, records - got_records), sorted(sources)))
        if files is not None and len(found) > files:
            return [], views, (f"cannot rebuild {slots[0].manifest.manifest_path}: {len(found)} files could be "
                               f"its entries but it held {files}")
        found.sort(key=lambda e: e.data_file.file_path)
        out.append((content, spec_id, found))
    return out, views, None


def _delete_targets(table: Table, f: DataFile) -> set[str] | None:
    """The data files a position delete file points at (None when it cannot be read)."""
    if f.referenced_data_file:
        return {f.referenced_data_file}
    lo = (f.lower_bounds or {}).get(DELETE_FILE_PATH_ID)
    hi = (f.upper_bounds or {}).get(DELETE_FILE_PATH_ID)
    if lo is not None and lo == hi:
        return {table.resolve(lo.decode())}
    try:
        import pyarrow.parquet as pq

        with table.io.open(f.file_path, "rb") as fh:
            t = pq.read_table(fh, columns=["file_path"])
        return {table.resolve(p) for p in t.column(0).unique().to_pylist()}
    except Exception:
        return None


def _only_needed_by_removed(table: Table, entries: list[ManifestEntry], removed_data: list[ManifestEntry],
                            live_data: list[ManifestEntry]) -> list[ManifestEntry]:
    """The live delete entries that applied to a removed data file and apply to no data file
    that stays (spec "Scan Planning": position deletes by path, equality deletes by partition and
    data sequence number)."""
    if not removed_data:
        return []
    md = table.metadata
    unpartitioned = {s.spec_id for s in md.partition_specs if s.is_unpartitioned}
    removed_paths = {e.data_file.file_path for e in removed_data}
    live_paths = {e.data_file.file_path for e in live_data}
    removed_parts = {(e.data_file.spec_id, e.data_file.partition) for e in removed_data}
    out = []
    for d in entries:
        f = d.data_file
        if f.content == FileContent.POSITION_DELETES:
            if f.is_deletion_vector or (f.spec_id, f.partition) in removed_parts or f.spec_id in unpartitioned:
                targets = _delete_targets(table, f)
                if targets is not None and targets & removed_paths and not targets & live_paths:
                    out.append(d)
        elif f.content == FileContent.EQUALITY_DELETES:
            def applies(e: ManifestEntry) -> bool:
                same = f.spec_id in unpartitioned or (e.data_file.spec_id, e.data_file.partition) == (f.spec_id,
                                                                                                     f.partition)
                return same and (e.sequence_number or 0) < (d.sequence_number or 0)
            if any(applies(e) for e in removed_data) and not any(applies(e) for e in live_data):
                out.append(d)
    return out


def _plan_ref(table: Table, name: str, ref: SnapshotRef, pools: dict[str, _Pool], *,
              metrics: bool = False) -> RefRepair:
    md = table.metadata
    head = md.snapshot_by_id(ref.snapshot_id)
    r = RefRepair(name, ref.ref_type, ref.snapshot_id, None, [], [], [], 0, 0, 0)
    if head is None:
        r.unrepairable = f"snapshot {ref.snapshot_id} is not in the metadata"
        return r
    try:
        manifests = table.manifests(head)
    except IcectlError as e:
        what = "missing" if isinstance(e, NotFoundError) else f"unreadable: {e.message}"
        r.problems.append(Problem(table.resolve(head.manifest_list or ""), "manifest-list", what))
        if head.manifest_list is None:  # v1 inline manifests: a manifest is what is lost
            r.unrepairable = f"the manifests of snapshot {head.snapshot_id} cannot be read: {what}"
            return r
        r.manifest_list, manifests = rebuild_manifest_list(table, head)
    with ThreadPoolExecutor(THREADS) as pool:
        slots = list(pool.map(lambda m: _read_slot(table, m), manifests))
    lost = [s for s in slots if s.entries is None]
    for s in lost:
        r.problems.append(Problem(s.manifest.manifest_path, "manifest", s.problem or "missing",
                                  bytes=s.manifest.manifest_length))
    rebuilt: list[tuple[ManifestContent, int, list[ManifestEntry]]] = []
    if lost:
        live_elsewhere = {_key(e.data_file) for s in slots if s.entries for e in s.entries}
        if "pool" not in pools:
            pools["pool"] = _Pool(table, {s.manifest.manifest_path for s in lost})
        rebuilt, r.rebuilt_manifests, err = _rebuild(table, head, lost, live_elsewhere, pools["pool"])
        if err:
            r.unrepairable = err
            return r
    live = [e for s in slots if s.entries for e in s.entries] + [e for _, _, es in rebuilt for e in es]
    unique = {_key(e.data_file): e for e in live}
    with ThreadPoolExecutor(THREADS) as pool:
        checked = list(pool.map(lambda e: (e, file_problem(table, e.data_file, metrics=metrics)),
                                  list(unique.values())))
    removed: dict[tuple, tuple[ManifestEntry, str]] = {}
    for e, problem in checked:
        if problem is not None:
            f = e.data_file
            r.problems.append(Problem(f.file_path, f.kind, problem, f.record_count, _size(f)))
            removed[_key(f)] = (e, "missing" if problem == "missing" else "unreadable")
    removed_data = [e for e, _ in removed.values() if e.data_file.content == FileContent.DATA]
    live_data = [e for e in unique.values() if e.data_file.content == FileContent.DATA and _key(e.data_file) not in removed]
    live_deletes = [e for e in unique.values() if e.data_file.content != FileContent.DATA
                    and _key(e.data_file) not in removed]
    restores = any(e.data_file.content != FileContent.DATA for e, _ in removed.values())
    for d in _only_needed_by_removed(table, live_deletes, removed_data, live_data):
        removed[_key(d.data_file)] = (d, "only-removed-data-files-need-it")
    for e, reason in removed.values():
        f = e.data_file
        r.removed_files.append(RemovedFile(f.file_path, f.kind, f.record_count, _size(f), reason))
        if f.content == FileContent.DATA:
            r.records_lost += f.record_count
            r.bytes_lost += _size(f)
        elif reason != "only-removed-data-files-need-it":
            r.delete_records_dropped += f.record_count
    lost_files = sum(v.lost_files or 0 for v in r.rebuilt_manifests if v.content == "data")
    lost_records = sum(v.lost_records or 0 for v in r.rebuilt_manifests if v.content == "data")
    lost_deletes = sum(v.lost_files or 0 for v in r.rebuilt_manifests if v.content == "deletes")
    r.records_lost += lost_records
    r.delete_records_dropped += sum(v.lost_records or 0 for v in r.rebuilt_manifests if v.content == "deletes")
    restores = restores or lost_deletes > 0  # delete files nobody holds any more: their rows come back
    r.problems.sort(key=lambda p: (p.kind, p.path))
    r.removed_files.sort(key=lambda f: (f.kind, f.path))
    rebuilt_list = r.manifest_list is not None
    if rebuilt_list and not r.manifest_list.complete:
        r.records_lost += max(0, next((c.recorded - c.rebuilt for c in r.manifest_list.checks
                                       if c.key == "total-records"), 0))
    if not lost and not removed and not rebuilt_list:
        return r
    data_removed = bool(removed_data) or lost_files > 0
    r.operation = "overwrite" if restores or (rebuilt_list and not r.manifest_list.complete) else (
        "delete" if data_removed or removed else "replace")
    r._work = _Work(slots, rebuilt, set(removed), lost_files, lost_records, lost_deletes, restores, rebuilt_list)
    return r


def _statistics_problems(table: Table) -> tuple[list[Problem], list[TableUpdate]]:
    md = table.metadata
    problems, updates = [], []
    for stats, update in ((md.statistics, RemoveStatistics), (md.partition_statistics, RemovePartitionStatistics)):
        for s in stats:
            path = table.resolve(s.statistics_path)
            try:
                size = table.io.size(path)
                what = None if size == s.file_size_in_bytes else \
                    f"unreadable: the file has {size} bytes, file-size-in-bytes is {s.file_size_in_bytes}"
            except NotFoundError:
                what = "missing"
            except IcectlError as e:
                what = f"unreadable: {e.message}"
            if what:
                problems.append(Problem(path, "statistics", what, bytes=s.file_size_in_bytes))
                updates.append(update(s.snapshot_id))
    return problems, updates


def plan_repair(table: Table, *, all_refs: bool = False, metrics: bool = False) -> RepairPlan:
    """The files kind of ``repair``; with ``metrics`` the run repairs main's metrics after it
    (a Parquet data file of main with a readable footer and a wrong size is left to that)."""
    md = table.metadata
    refs = md.all_refs
    names = [MAIN_BRANCH] if MAIN_BRANCH in refs else []
    if all_refs:
        names += sorted(n for n in refs if n != MAIN_BRANCH)
    pools: dict[str, _Pool] = {}
    repairs = [_plan_ref(table, n, refs[n], pools, metrics=metrics and n == MAIN_BRANCH) for n in names]
    stats, stats_updates = _statistics_problems(table)
    plan = RepairPlan(table.name, table.metadata_location, md.format_version, all_refs, repairs, stats,
                      _stats_updates=stats_updates)
    # one commit: each ref's snapshot and ref move (a tag stays a tag), then the statistics removals
    planned: dict[str, list] = {"requirements": [], "updates": []}
    for r in repairs:
        if r.changes:
            one = snapshot_commit_json(md, r.ref)
            one["updates"][-1]["type"] = r.ref_type
            planned["requirements"] += [q for q in one["requirements"] if q not in planned["requirements"]]
            planned["updates"] += one["updates"]
    if stats_updates:
        planned["updates"] += updates_json(stats_updates, md.format_version)
    if planned["updates"]:
        plan.planned_commits = [planned]
    return plan


# -- committing --------------------------------------------------------------------------------------------

def _ref_updates(txn: Transaction, table: Table, r: RefRepair, *, snapshot_id: int) -> list[TableUpdate]:
    """The snapshot that repairs ``r``, built on ``table`` (``txn``'s base with the refs repaired
    before it) and committed by ``txn``."""
    md = table.metadata
    ref = md.all_refs.get(r.ref)
    if ref is None or ref.snapshot_id != r.snapshot_id:
        now = "is gone" if ref is None else f"points at snapshot {ref.snapshot_id}"
        raise ConflictingChangeError(f"{table.name} changed since the plan was shown: {r.ref} {now}, not "
                                     f"{r.snapshot_id}; nothing was committed", hint="run repair again")
    head = md.snapshot_by_id(r.snapshot_id)
    w: _Work = r._work
    v = md.format_version
    seq = md.last_sequence_number + 1 if v >= 2 else 0
    manifests: list[ManifestFile] = []
    kept: list[ManifestEntry] = []
    removed: list[tuple[ManifestEntry, DataFile]] = []
    for s in w.slots:
        if s.entries is None:
            continue
        m = s.manifest
        kept_here = [e for e in s.entries if _key(e.data_file) not in w.removed]
        if len(kept_here) == len(s.entries):
            if m.added_files_count == 0 and m.existing_files_count == 0:
                continue
            manifests.append(m)
            kept += kept_here
            continue
        rewritten = []
        for e in s.entries:
            if _key(e.data_file) in w.removed:
                rewritten.append(ManifestEntry(EntryStatus.DELETED, snapshot_id, e.sequence_number,
                                               e.file_sequence_number, e.data_file))
                removed.append((e, e.data_file))
            else:
                rewritten.append(ManifestEntry(EntryStatus.EXISTING, e.snapshot_id, e.sequence_number,
                                               e.file_sequence_number, e.data_file))
        manifests.append(write_manifest_file(table, rewritten, txn=txn, spec_id=m.partition_spec_id,
                                             content=m.content, snapshot_id=snapshot_id, sequence_number=seq))
        kept += kept_here
    for content, spec_id, entries in w.rebuilt:
        keep = [e for e in entries if _key(e.data_file) not in w.removed]
        removed += [(e, e.data_file) for e in entries if _key(e.data_file) in w.removed]
        if keep:
            manifests.append(write_manifest_file(table, keep, txn=txn, spec_id=spec_id, content=content,
                                                 snapshot_id=snapshot_id, sequence_number=seq))
            kept += keep
    summary = summarize_change(head, SnapshotChange(r.operation or "delete", removed=removed))
    if w.lost_files:
        summary["deleted-data-files"] = str(int(summary.get("deleted-data-files", "0")) + w.lost_files)
        summary["deleted-records"] = str(int(summary.get("deleted-records", "0")) + w.lost_records)
    if w.lost_deletes:
        summary["removed-delete-files"] = str(int(summary.get("removed-delete-files", "0")) + w.lost_deletes)
    if r.manifest_list is not None and not r.manifest_list.complete:  # what the rebuild could not find
        short = {c.key: c.recorded - c.rebuilt for c in r.manifest_list.checks if c.recorded > c.rebuilt}
        for total, change in (("total-data-files", "deleted-data-files"), ("total-records", "deleted-records"),
                              ("total-delete-files", "removed-delete-files")):
            if short.get(total):
                summary[change] = str(int(summary.get(change, "0")) + short[total])
    summary.update(live_totals(kept))
    return snapshot_from_manifests(txn, head, manifests, snapshot_id=snapshot_id, sequence_number=seq,
                                   summary=summary, ref_name=r.ref, on=table)


def apply_repair(table: Table, plan: RepairPlan, *, retries: int | None = None,
                 accept_loss: bool = False) -> RepairResult:
    """One commit for every ref to repair (and the statistics removals): a snapshot per ref on top
    of its head, each built on the metadata the ones before it leave (sequence numbers and v3 row
    ids in order), so a crash or a conflict leaves every ref as it was or every ref repaired. The
    commit is re-checked against the table as it is then: a ref that moved since the plan stops
    the repair. A rebuilt manifest list that is not proven complete is refused unless
    ``accept_loss``."""
    from dataclasses import replace

    if plan.incomplete_rebuilds and not accept_loss:
        raise IncompleteRebuildError(f"cannot prove the rebuilt manifest list of {plan.incomplete_rebuilds[0]}; "
                                     "nothing was committed",
                                     hint="check the plan (--dry-run); --accept-loss commits what was found")
    todo = [r for r in plan.refs if r.changes]
    sids = {id(r): new_snapshot_id() for r in todo}
    stats = list(plan._stats_updates)
    if not todo and not stats:
        return RepairResult(plan, [])

    def build(txn: Transaction) -> list[TableUpdate]:
        updates: list[TableUpdate] = []
        t = txn.table
        for r in todo:
            ups = _ref_updates(txn, t, r, snapshot_id=sids[id(r)])
            updates += ups
            if r is not todo[-1]:
                t = replace(t, metadata=MetadataBuilder(t.metadata).apply(ups).build())
        return updates + stats

    c = Transaction(table, retries=retries).commit(build)
    for r in todo:
        r.new_snapshot_id = sids[id(r)]
    return RepairResult(plan, [c])


__all__ = ["Problem", "RebuiltManifest", "RefRepair", "RemovedFile", "RepairPlan", "RepairResult", "apply_repair",
           "file_problem", "plan_repair"]
