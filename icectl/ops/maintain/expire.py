"""Snapshot expiry (spec: "Snapshot Retention Policy"), exactly as Iceberg Java's RemoveSnapshots
decides what to keep and ExpireSnapshotsSparkAction decides what to delete:

- ``main`` is always kept; another ref is removed when its head is older than its
  ``max-ref-age-ms`` (else the table's ``history.expire.max-ref-age-ms``, default: never) or
  points at a snapshot that does not exist;
- every retained ref's head is kept;
- each retained branch keeps its ancestors while they are among its first
  ``min-snapshots-to-keep`` or younger than ``now - max-snapshot-age-ms`` (per ref, else the
  table's ``history.expire.*`` properties or ``--retain-last`` / ``--older-than``);
- snapshots outside every retained branch's ancestry (and not a tag head) are kept only while
  younger than the cutoff;
- the files to delete are those the expired snapshots reach that no retained snapshot reaches.

Planning is pure: :func:`plan_expiry` returns an :class:`ExpiryPlan` that can be printed (dry
run, ``--explain``) or applied; :func:`apply_expiry` commits with a compare-and-set, re-planning
on conflict, and deletes only after the commit succeeded.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from icectl.expr.duration import duration_text
from icectl.expr.timestamp import Cutoff
from icectl.spec.metadata import MAIN_BRANCH, SnapshotRef, TableMetadata
from icectl.spec.properties import GC_ENABLED, MAX_REF_AGE_MS, MAX_SNAPSHOT_AGE_MS, MIN_SNAPSHOTS_TO_KEEP
from icectl.formats.manifest import ManifestFile
from icectl.table.reachability import (
    DATA, DELETION_VECTOR, EQUALITY_DELETES, KINDS, MANIFEST, MANIFEST_LIST, METADATA, PARTITION_STATISTICS,
    POSITION_DELETES, STATISTICS, PathKeys, live_content_batches, metadata_reach, reachable_files,
)
from icectl.table.builder import apply_updates
from icectl.table.transaction import Committed, Transaction, sent_json
from icectl.table.requirements import requirements_for
from icectl.table.loaded import Table
from icectl.table.updates import RemovePartitionSpecs, RemoveSchemas, RemoveSnapshotRef, RemoveSnapshots, TableUpdate
from icectl.errors import CommitStateUnknownError, ConflictingChangeError, IcectlError, NotFoundError, RefusedError, UsageError
from icectl.io import normalize_location
from icectl.io.safety import table_guard
from icectl.spec.temporal import millis_to_iso
from icectl.ops.maintain.expire_pending import FileToDelete, Progress, clear_pending, write_pending


@dataclass(frozen=True)
class ExpireOptions:
    older_than_ms: int | None = None  # absolute cutoff; None: now - history.expire.max-snapshot-age-ms
    retain_last: int | None = None
    snapshot_ids: tuple[int, ...] = ()
    clean_expired_metadata: bool = False
    delete_files: bool = True
    now_ms: int | None = None
    older_than: Cutoff | None = None  # the cutoff as the user gave it (its timestamp is older_than_ms), for the plan


def default_cutoff(md: TableMetadata, opts: ExpireOptions) -> str:
    """The cutoff of snapshots outside any ref's own retention, in words and in milliseconds:
    ``older than 7d (604800000 ms): before 2025-11-19 22:00:00 UTC (1763589600000)``."""
    if opts.older_than_ms is not None:
        given = opts.older_than
        if given is not None and given.timestamp_ms == opts.older_than_ms:
            return given.describe()
        return Cutoff(str(opts.older_than_ms), opts.older_than_ms).describe()
    now = opts.now_ms if opts.now_ms is not None else int(time.time() * 1000)
    age = MAX_SNAPSHOT_AGE_MS.read(md.properties)
    return Cutoff(duration_text(age), now - age, age).describe() + f" ({MAX_SNAPSHOT_AGE_MS.name})"


@dataclass
class ExpiryPlan:
    table: str
    base_metadata_location: str
    expired_snapshot_ids: list[int]
    retained_snapshot_ids: list[int]
    removed_refs: list[str]
    reasons: dict[int, list[str]]
    new_metadata: TableMetadata = field(repr=False)
    updates: list[TableUpdate] = field(default_factory=list, repr=False)
    planned_commit: dict = field(default_factory=dict, repr=False)  # its requirements and updates, as JSON
    files: list[FileToDelete] = field(default_factory=list)
    removed_schema_ids: list[int] = field(default_factory=list)
    removed_spec_ids: list[int] = field(default_factory=list)
    skipped_outside_location: list[str] = field(default_factory=list)
    older_than_ms: int | None = None  # the cutoff of snapshots outside any ref's own retention
    older_than: str = ""  # the same in words (:func:`default_cutoff`)
    skipped_for_safety: list[tuple[str, str]] = field(default_factory=list)  # (path, why): the path guard refused

    @property
    def changes_metadata(self) -> bool:
        return bool(self.expired_snapshot_ids or self.removed_refs or self.removed_schema_ids or self.removed_spec_ids)


@dataclass
class ExpiryResult:
    plan: ExpiryPlan
    committed_metadata_location: str | None
    deleted: list[FileToDelete]
    failed: list[tuple[str, str]]  # (path, error)
    metadata_files_deleted: list[str] = field(default_factory=list)
    committed: Committed | None = field(default=None, repr=False)  # what was sent, and the table after it


def _default_older_than(md: TableMetadata, opts: ExpireOptions) -> int:
    if opts.older_than_ms is not None:
        return opts.older_than_ms
    now = opts.now_ms if opts.now_ms is not None else int(time.time() * 1000)
    return now - MAX_SNAPSHOT_AGE_MS.read(md.properties)


def compute_retention(md: TableMetadata, opts: ExpireOptions) -> tuple[set[int], dict[str, SnapshotRef], dict[int, list[str]]]:
    """(snapshot ids to retain, refs to retain, reasons per retained id) as RemoveSnapshots does."""
    now = opts.now_ms if opts.now_ms is not None else int(time.time() * 1000)
    default_older_than = _default_older_than(md, opts)
    default_min = opts.retain_last if opts.retain_last is not None else \
        MIN_SNAPSHOTS_TO_KEEP.read(md.properties)
    default_max_ref_age = MAX_REF_AGE_MS.read(md.properties)
    reasons: dict[int, list[str]] = {}

    def keep(sid: int, why: str) -> None:
        reasons.setdefault(sid, []).append(why)

    retained_refs: dict[str, SnapshotRef] = {}
    for name, ref in md.refs.items():
        if name == MAIN_BRANCH:
            retained_refs[name] = ref
            continue
        snap = md.snapshot_by_id(ref.snapshot_id)
        max_age = ref.max_ref_age_ms if ref.max_ref_age_ms is not None else default_max_ref_age
        if snap is not None and now - snap.timestamp_ms <= max_age:
            retained_refs[name] = ref
    if MAIN_BRANCH not in md.refs and md.current_snapshot_id is not None:
        retained_refs[MAIN_BRANCH] = SnapshotRef(md.current_snapshot_id, "branch")

    for name, ref in sorted(retained_refs.items()):
        keep(ref.snapshot_id, f"head of {'branch' if ref.is_branch else 'tag'} {name}")
    for sid in opts.snapshot_ids:
        holders = [n for n, r in retained_refs.items() if r.snapshot_id == sid]
        if holders:
            raise UsageError(f"cannot expire snapshot {sid}: still referenced by refs {sorted(holders)}")

    referenced: set[int] = set()
    for name, ref in sorted(retained_refs.items()):
        if not ref.is_branch:
            referenced.add(ref.snapshot_id)
            continue
        older_than = now - ref.max_snapshot_age_ms if ref.max_snapshot_age_ms is not None else default_older_than
        min_keep = ref.min_snapshots_to_keep if ref.min_snapshots_to_keep is not None else default_min
        kept_here = 0
        stopped = False
        for anc in md.ancestors_of(ref.snapshot_id):
            referenced.add(anc.snapshot_id)
            if stopped:
                continue
            if kept_here < min_keep:
                kept_here += 1
                keep(anc.snapshot_id, f"within the first {min_keep} of branch {name}")
            elif anc.timestamp_ms >= older_than:
                kept_here += 1
                keep(anc.snapshot_id, f"younger than the cutoff of branch {name} ({_fmt(older_than)})")
            else:
                stopped = True
    for s in md.snapshots:
        if s.snapshot_id not in referenced and s.timestamp_ms >= default_older_than:
            keep(s.snapshot_id, f"not in any branch's history, but younger than the cutoff ({_fmt(default_older_than)})")
    retained = set(reasons) - set(opts.snapshot_ids)
    # An explicitly expired id that a rule would keep still goes (as in Java), unless a ref holds it.
    return retained, retained_refs, {k: v for k, v in reasons.items() if k in retained}


def _fmt(ms: int) -> str:
    return millis_to_iso(ms, timespec="seconds", zone="+00:00")


def expiry_updates(table: Table, opts: ExpireOptions) -> tuple[list[TableUpdate], set[int], dict[str, SnapshotRef], dict[int, list[str]], list[int], list[int]]:
    """The updates of an expiry, in the order Iceberg Java's RemoveSnapshots makes them: the refs
    that aged out, the expired snapshots (the builder drops their statistics and rebuilds the
    snapshot log), and with ``clean_expired_metadata`` the specs and schemas no kept snapshot uses."""
    md = table.metadata
    unknown = [sid for sid in opts.snapshot_ids if md.snapshot_by_id(sid) is None]
    if unknown:
        raise NotFoundError(f"snapshot {unknown[0]} does not exist in {table.name}")
    retained, refs, reasons = compute_retention(md, opts)
    removed_schemas: list[int] = []
    removed_specs: list[int] = []
    if opts.clean_expired_metadata:
        # As Iceberg Java (RemoveSnapshots): the schemas and specs of the snapshots the retention
        # rules keep, found before the explicitly expired ids are taken out, so an explicit id a
        # rule would keep still holds its schema and specs.
        import dataclasses

        kept_by_rules = compute_retention(md, dataclasses.replace(opts, snapshot_ids=()))[0] if opts.snapshot_ids \
            else retained
        reachable_specs = {md.default_spec_id}
        reachable_schemas = {md.current_schema_id}
        for s in (x for x in md.snapshots if x.snapshot_id in kept_by_rules):
            reachable_schemas.add(s.schema_id if s.schema_id is not None else md.current_schema_id)
            for m in table.manifests(s):
                reachable_specs.add(m.partition_spec_id)
        removed_specs = [p.spec_id for p in md.partition_specs if p.spec_id not in reachable_specs]
        removed_schemas = [s.schema_id for s in md.schemas if s.schema_id not in reachable_schemas]
    updates: list[TableUpdate] = [RemoveSnapshotRef(n) for n in md.refs if n not in refs]
    expired = tuple(s.snapshot_id for s in md.snapshots if s.snapshot_id not in retained)
    if expired:
        updates.append(RemoveSnapshots(expired))
    if removed_specs:
        updates.append(RemovePartitionSpecs(tuple(removed_specs)))
    if removed_schemas:
        updates.append(RemoveSchemas(tuple(removed_schemas)))
    return updates, retained, refs, reasons, removed_schemas, removed_specs


def _refuse_if_gc_disabled(table: Table, opts: ExpireOptions) -> None:
    """Deleting the files of a table whose ``gc.enabled`` is false may corrupt other tables that
    share them: only a metadata-only expiry is allowed."""
    if opts.delete_files and not GC_ENABLED.read(table.metadata.properties):
        raise RefusedError(f"cannot expire snapshots: {GC_ENABLED.name} is false for this table (deleting files may "
                           "corrupt other tables)", hint="use --no-delete-files to expire metadata only")


def plan_expiry(table: Table, opts: ExpireOptions, *, progress: Progress | None = None) -> ExpiryPlan:
    """What expiring with ``opts`` would change and delete; refuses as :func:`apply_expiry` does."""
    _refuse_if_gc_disabled(table, opts)
    md = table.metadata
    if opts.retain_last is not None and opts.retain_last < 1:
        raise UsageError("--retain-last must be at least 1")
    updates, retained, refs, reasons, removed_schemas, removed_specs = expiry_updates(table, opts)
    new = apply_updates(md, updates) if updates else md
    expired = [s for s in md.snapshots if s.snapshot_id not in retained]
    plan = ExpiryPlan(
        table=table.name, base_metadata_location=table.metadata_location,
        expired_snapshot_ids=[s.snapshot_id for s in expired],
        retained_snapshot_ids=[s.snapshot_id for s in md.snapshots if s.snapshot_id in retained],
        removed_refs=sorted(n for n in md.refs if n not in refs), reasons=reasons, new_metadata=new,
        updates=updates, removed_schema_ids=removed_schemas, removed_spec_ids=removed_specs,
        planned_commit=sent_json(md, requirements_for(md, updates), updates) if updates else {},
        older_than_ms=_default_older_than(md, opts), older_than=default_cutoff(md, opts),
    )
    if opts.delete_files and expired:
        files, plan.skipped_outside_location = files_to_delete(table, md, new, progress=progress)
        plan.files, plan.skipped_for_safety = split_by_guard(table.io, md.location, files)
    return plan


def files_to_delete(table: Table, before: TableMetadata, after: TableMetadata, *,
                    progress: Progress | None = None) -> tuple[list[FileToDelete], list[str]]:
    """Files the snapshots removed between ``before`` and ``after`` reach, minus those any snapshot
    of ``after`` reaches (ExpireSnapshotsSparkAction's candidate set minus valid set)."""
    # The CLI plans (to show what goes) and then applies on the same Table: when nothing changed
    # in between (same table state, same snapshots and statistics kept), reuse the first answer
    # rather than read every manifest again (the files are immutable; a conflict refreshes the
    # table, which starts without this cache).
    key = None
    if before is table.metadata:
        key = (tuple(s.snapshot_id for s in after.snapshots), after.location, after.statistics,
               after.partition_statistics)
        cached = table.__dict__.get("_files_to_delete")
        if cached is not None and cached[0] is before and cached[1] == key:
            return list(cached[2]), list(cached[3])
    kept_ids = {s.snapshot_id for s in after.snapshots}
    expired = [s for s in before.snapshots if s.snapshot_id not in kept_ids]
    candidates = _candidates(table, before, after, expired, progress or (lambda phase, done, total: None))
    out: list[FileToDelete] = []
    outside: list[str] = []
    root = normalize_location(before.location or "") + "/"
    for path, (kind, size) in candidates.items():
        if not normalize_location(path).startswith(root):
            outside.append(path)  # never delete outside the table location, whatever the metadata says
            continue
        out.append(FileToDelete(path, kind, size))
    fill_sizes(table, [f for f in out if f.size is None])
    order = {k: i for i, k in enumerate(KINDS)}
    out.sort(key=lambda f: (order.get(f.kind, 99), f.path))
    if key is not None:
        table.__dict__["_files_to_delete"] = (before, key, list(out), sorted(outside))
    return out, sorted(outside)


def _candidates(table: Table, before: TableMetadata, after: TableMetadata,
                expired: list, progress: Progress) -> dict[str, tuple[str, int | None]]:
    """path -> (kind, size) of what the expired snapshots reach and no snapshot of ``after``
    reaches. The valid content files are held as 64-bit keys (:class:`PathKeys`: a few tens of
    MB for millions of files), and the expired snapshots' manifests are read a few at a time, each
    keeping only its entries whose key is not valid; manifests a kept snapshot lists are not
    read at all. A key shared by an expired path and a valid one (about 1 in 10**13 a path) keeps
    the expired file: never the other way round."""
    def view(md: TableMetadata) -> Table:
        return Table(table.identifier, md, table.metadata_location, table.catalog, table.io)

    def ticks(phase: str, total: int) -> Callable[[], None]:
        done = [0]

        def tick() -> None:
            done[0] += 1
            progress(phase, done[0], total)
        return tick

    after_view, before_view = view(after), view(before)
    valid_lists, valid_manifests = metadata_reach(
        after_view, list(after.snapshots), progress=lambda d, n: progress("reading the kept manifest lists", d, n))
    kept = list(valid_manifests.values())
    valid_content = PathKeys.of(frame.get_column("path") for frame in live_content_batches(
        after_view, kept, done=ticks("reading the kept manifests", len(kept))))
    valid_meta = set(valid_lists) | set(valid_manifests)
    valid_meta |= {after_view.resolve(st.statistics_path) for st in after.statistics + after.partition_statistics
                   if after.snapshot_by_id(st.snapshot_id) is not None}

    def add_unless_valid(found: list[tuple[str, str, int | None]]) -> None:
        in_content = valid_content.contains([p for p, _, _ in found])  # one batch: a key costs ~1 ms alone
        for (path, kind, size), reached in zip(found, in_content):
            if not reached and path not in valid_meta:
                out.setdefault(path, (kind, size))

    out: dict[str, tuple[str, int | None]] = {}
    lists, manifests = metadata_reach(
        before_view, expired, progress=lambda d, n: progress("reading the expired manifest lists", d, n))
    add_unless_valid([(p, MANIFEST_LIST, None) for p in lists] +
                     [(p, MANIFEST, m.manifest_length) for p, m in manifests.items()])

    to_read = [m for p, m in manifests.items() if p not in valid_manifests]
    for frame in live_content_batches(before_view, to_read, done=ticks("reading the expired manifests", len(to_read))):
        unreached = frame.filter(~valid_content.contains(frame.get_column("path")))
        for path, kind, size in unreached.iter_rows():
            if path not in valid_meta:
                out.setdefault(path, (kind, size))
    ids = {s.snapshot_id for s in expired}
    add_unless_valid([(before_view.resolve(st.statistics_path), kind, st.file_size_in_bytes)
                      for sts, kind in ((before.statistics, STATISTICS), (before.partition_statistics, PARTITION_STATISTICS))
                      for st in sts if st.snapshot_id in ids])
    return out


def fill_sizes(table: Table, files: list[FileToDelete]) -> None:
    """Manifest lists carry no recorded size: ask the storage, so bytes reclaimed add up."""
    from concurrent.futures import ThreadPoolExecutor

    def size(f: FileToDelete) -> None:
        try:
            f.size = table.io.size(f.path)
        except Exception:
            f.size = None

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(size, files))


def java_counts(files: list[FileToDelete]) -> dict[str, int]:
    """The columns Iceberg Java's expire_snapshots procedure returns (DVs count as position deletes)."""
    def n(*kinds: str) -> int:
        return sum(1 for f in files if f.kind in kinds)

    return {
        "deleted_data_files_count": n(DATA),
        "deleted_position_delete_files_count": n(POSITION_DELETES, DELETION_VECTOR),
        "deleted_equality_delete_files_count": n(EQUALITY_DELETES),
        "deleted_manifest_files_count": n(MANIFEST),
        "deleted_manifest_lists_count": n(MANIFEST_LIST),
        "deleted_statistics_files_count": n(STATISTICS, PARTITION_STATISTICS),
    }


def bytes_by_kind(files: list[FileToDelete]) -> dict[str, int]:
    out: dict[str, int] = {}
    for f in files:
        out[f.kind] = out.get(f.kind, 0) + (f.size or 0)
    return out


def check_within_approved(plan: ExpiryPlan, approved: ExpiryPlan) -> None:
    """A plan made again after the table moved may do what was approved, or less, never more:
    no other snapshot or ref expired, no other file deleted (ConflictingChangeError, nothing
    committed or deleted)."""
    more = sorted(set(plan.expired_snapshot_ids) - set(approved.expired_snapshot_ids))
    refs = sorted(set(plan.removed_refs) - set(approved.removed_refs))
    files = sorted({f.path for f in plan.files} - {f.path for f in approved.files})
    what = [f"{len(more)} more snapshots would expire ({', '.join(map(str, more[:5]))})" if more else "",
            f"refs {', '.join(refs)} would be removed" if refs else "",
            f"{len(files)} more files would be deleted ({files[0]}{', ...' if len(files) > 1 else ''})" if files else ""]
    what = [w for w in what if w]
    if what:
        raise ConflictingChangeError(f"{plan.table} changed since the plan was shown: " + "; ".join(what)
                                     + "; nothing was committed or deleted", hint="run expire again to see the new plan")


def apply_expiry(table: Table, opts: ExpireOptions, *, delete: Callable[[list[FileToDelete]], tuple[list[FileToDelete], list[tuple[str, str]]]] | None = None,
                 before_commit: Callable[[ExpiryPlan], None] | None = None,
                 approved: ExpiryPlan | None = None, progress: Progress | None = None) -> ExpiryResult:
    """Commit the expiry (re-planning on conflict), then delete what the committed change
    unreferenced and what the table's latest metadata does not reach. With ``approved`` (the
    plan a user saw), a plan made against a table that moved since may only do less.

    The files to delete are recorded at the table location before the commit
    (:mod:`icectl.ops.maintain.expire_pending`) and the record goes when they are all deleted: a run
    killed after its commit leaves a valid table whose next expiry finishes the deletes."""
    _refuse_if_gc_disabled(table, opts)
    first = plan_expiry(table, ExpireOptions(**{**opts.__dict__, "delete_files": False}))
    if not first.changes_metadata:
        return ExpiryResult(first, None, [], [], [])
    state: dict[str, ExpiryPlan] = {}

    def build(txn: Transaction) -> list[TableUpdate]:
        current = txn.table
        moved = approved is not None and current.metadata_location != approved.base_metadata_location
        plan = plan_expiry(current, ExpireOptions(**{**opts.__dict__, "delete_files": opts.delete_files and moved}),
                           progress=progress)
        if moved:
            check_within_approved(plan, approved)  # type: ignore[arg-type]
        state["plan"] = plan
        if opts.delete_files and plan.expired_snapshot_ids:
            owed, _ = files_to_delete(current, current.metadata, plan.new_metadata, progress=progress)
            write_pending(current, current.metadata_location, split_by_guard(current.io, current.location, owed)[0])
            state["pending"] = plan
        if before_commit is not None:
            before_commit(plan)
        return plan.updates

    try:
        done = Transaction(table).commit(build)
    except CommitStateUnknownError:
        raise  # the record stays: the next run deletes what the metadata it finds no longer reaches
    except Exception:
        if "pending" in state:
            _forget_pending(table)
        raise
    committed, base = done.table, done.base
    plan = state["plan"]
    deleted: list[FileToDelete] = []
    failed: list[tuple[str, str]] = []
    if opts.delete_files:
        files, outside = files_to_delete(base, base.metadata, committed.metadata)
        files, unsafe = split_by_guard(table.io, committed.metadata.location, files)
        plan.files, plan.skipped_outside_location, plan.skipped_for_safety = files, outside, unsafe
        # A writer may have committed after us: never delete what the newest metadata reaches.
        latest = committed.refresh()
        if latest.metadata_location != committed.metadata_location:
            new_ids = {s.snapshot_id for s in committed.metadata.snapshots}
            newer = [s for s in latest.metadata.snapshots if s.snapshot_id not in new_ids]
            still = reachable_files(latest, latest.metadata, newer)
            files = [f for f in files if f.path not in still]
        if delete is None:
            delete = lambda fs: delete_files(table.io, fs, location=committed.metadata.location)  # noqa: E731
        deleted, failed = delete(files)
        if "pending" in state:
            left = {p for p, why in failed if why != "already gone"}
            owed = [f for f in files if f.path in left]
            if owed:
                write_pending(committed, base.metadata_location, owed)
            else:
                clear_pending(committed)
    return ExpiryResult(plan, committed.metadata_location, deleted, failed, done.deleted_metadata_files,
                        committed=done)


def _forget_pending(table: Table) -> None:
    """Nothing was committed: the record is not needed (it would be harmless: a re-run deletes only
    what the metadata it finds does not reach)."""
    try:
        clear_pending(table)
    except IcectlError:
        pass


def split_by_guard(io, location: str | None,
                   files: list[FileToDelete]) -> tuple[list[FileToDelete], list[tuple[str, str]]]:
    """The planned ``files`` the table's :class:`icectl.io.safety.PathGuard` allows, and
    ``(path, why)`` for those it refuses (a link, a real location outside the table location, a
    mount point in between): shown in the plan, never deleted. :func:`delete_files` asks the guard
    again when it deletes."""
    guard = table_guard(io, location)
    ok: list[FileToDelete] = []
    refused: list[tuple[str, str]] = []
    for f in files:
        why = guard.refusal(f.path)
        if why is None:
            ok.append(f)
        else:
            refused.append((f.path, why))
    return ok, refused


def delete_files(io, files: list[FileToDelete], *, location: str | None, allow_symlinks: bool = False,
                 progress: Callable[[int], None] | None = None) -> tuple[list[FileToDelete], list[tuple[str, str]]]:
    """Delete ``files`` of the table at ``location`` in bulk (:meth:`icectl.io.FileIO.delete_many`:
    S3 ``DeleteObjects`` batches, several in flight), each one first allowed by the table's
    :class:`icectl.io.safety.PathGuard` (``allow_symlinks``: a symbolic link goes, as a link); a
    file that fails to delete, or that the guard refuses, is reported with why, never fatal. A
    table without a location deletes nothing."""
    failed = io.delete_many([f.path for f in files], guard=table_guard(io, location, allow_symlinks=allow_symlinks),
                            progress=progress)
    deleted = [f for f in files if f.path not in failed]
    return deleted, [(f.path, failed[f.path]) for f in files if f.path in failed]


__all__ = ["ExpireOptions", "ExpiryPlan", "ExpiryResult", "FileToDelete", "apply_expiry", "bytes_by_kind", "delete_files",
           "java_counts", "split_by_guard",
           "plan_expiry", "METADATA", "MANIFEST", "MANIFEST_LIST", "STATISTICS"]
