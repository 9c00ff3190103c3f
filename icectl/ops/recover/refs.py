"""Branches, tags, rollback and cherry-pick, with Iceberg Java's rules (SnapshotManager,
CherryPickOperation; spec: "Snapshot References").

Each operation is a function from the current table's metadata to the updates that make the
change (``set-snapshot-ref``, ``remove-snapshot-ref``; a cherry-pick that re-applies a snapshot
adds one), so the caller can commit it with a :class:`icectl.table.transaction.Transaction`, which
reads the table again and re-validates on a conflict. No change: no updates.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from icectl.errors import AlreadyExistsError, ConflictingChangeError, NoSnapshotsError, NotFoundError, UsageError
from icectl.formats.manifest import EntryStatus, FileContent, ManifestContent
from icectl.spec.metadata import MAIN_BRANCH, Snapshot, SnapshotRef, TableMetadata
from icectl.table.builder import apply_updates
from icectl.table.transaction import Committed, Plan, Transaction, sent_json, snapshot_commit_json
from icectl.table.loaded import Table
from icectl.table.requirements import TableRequirement, requirements_for
from icectl.table.snapshot_producer import SnapshotChange, build_snapshot
from icectl.table.updates import RemoveSnapshotRef, SetSnapshotRef, TableUpdate


def _branch(md: TableMetadata, name: str) -> SnapshotRef:
    ref = md.all_refs.get(name)
    if ref is None:
        if not md.snapshots:
            raise NoSnapshotsError()
        raise NotFoundError(f"branch {name!r} does not exist")
    if not ref.is_branch:
        raise UsageError(f"{name!r} is a tag, not a branch")
    return ref


def _snapshot(md: TableMetadata, snapshot_id: int) -> Snapshot:
    s = md.snapshot_by_id(snapshot_id)
    if s is None:
        if not md.snapshots:
            raise NoSnapshotsError()
        raise NotFoundError(f"snapshot {snapshot_id} does not exist")
    return s


def set_branch_snapshot(md: TableMetadata, branch: str, snapshot_id: int) -> list[TableUpdate]:
    """Point a branch at a snapshot, keeping its retention (``set-snapshot-ref``; on ``main`` the
    builder also moves ``current-snapshot-id`` and appends to the snapshot log). A branch already
    at the snapshot needs no update (no duplicate snapshot-log entry), as in Java."""
    current = md.all_refs.get(branch)
    if current is not None and current.is_branch and current.snapshot_id == snapshot_id and (
            branch != MAIN_BRANCH or md.current_snapshot_id == snapshot_id):
        return []
    old = md.refs.get(branch)
    return [SetSnapshotRef(branch, SnapshotRef(snapshot_id, "branch", *(
        (old.min_snapshots_to_keep, old.max_snapshot_age_ms, old.max_ref_age_ms, old.extra) if old else ())))]


def is_ancestor(md: TableMetadata, head: int, candidate: int) -> bool:
    return any(s.snapshot_id == candidate for s in md.ancestors_of(head))


# -- rollback ---------------------------------------------------------------------------------------

def rollback_to_snapshot(md: TableMetadata, snapshot_id: int, *, branch: str = MAIN_BRANCH) -> list[TableUpdate]:
    """rollback_to_snapshot: the target must be an ancestor of the branch head."""
    head = _branch(md, branch).snapshot_id
    _snapshot(md, snapshot_id)
    if not is_ancestor(md, head, snapshot_id):
        raise UsageError(f"cannot roll back to snapshot {snapshot_id}: not an ancestor of {branch} ({head})",
                         hint="use --set-current to move the branch to any snapshot")
    return set_branch_snapshot(md, branch, snapshot_id)


def snapshot_before(md: TableMetadata, timestamp_ms: int, *, branch: str = MAIN_BRANCH) -> Snapshot:
    """The latest ancestor of the branch head committed strictly before ``timestamp_ms``."""
    head = _branch(md, branch).snapshot_id
    best: Snapshot | None = None
    for s in md.ancestors_of(head):
        if s.timestamp_ms < timestamp_ms and (best is None or s.timestamp_ms > best.timestamp_ms):
            best = s
    if best is None:
        raise NotFoundError(f"cannot roll back: no ancestor of {branch} is older than {timestamp_ms}")
    return best


def rollback_to_timestamp(md: TableMetadata, timestamp_ms: int, *, branch: str = MAIN_BRANCH) -> list[TableUpdate]:
    return set_branch_snapshot(md, branch, snapshot_before(md, timestamp_ms, branch=branch).snapshot_id)


def set_current_snapshot(md: TableMetadata, snapshot_id: int, *, branch: str = MAIN_BRANCH) -> list[TableUpdate]:
    """set_current_snapshot: any existing snapshot."""
    _snapshot(md, snapshot_id)
    if branch in md.all_refs:
        _branch(md, branch)
    return set_branch_snapshot(md, branch, snapshot_id)


@dataclass
class RefImpact:
    """What moving a branch from its head to a target changes."""

    branch: str
    from_snapshot_id: int | None
    to_snapshot_id: int
    leaving_history: list[int] = field(default_factory=list)
    joining_history: list[int] = field(default_factory=list)
    data_files_added: int = 0  # live at the target, not at the head
    data_files_removed: int = 0  # live at the head, not at the target
    records_added: int = 0
    records_removed: int = 0


def ref_impact(table: Table, branch: str, target: int) -> RefImpact:
    md = table.metadata
    ref = md.all_refs.get(branch)
    head = ref.snapshot_id if ref else None
    imp = RefImpact(branch, head, target)
    head_line = md.ancestor_ids(head)
    target_line = md.ancestor_ids(target)
    imp.leaving_history = [s for s in head_line if s not in set(target_line)]
    imp.joining_history = [s for s in target_line if s not in set(head_line)]
    # Read only the manifests the two snapshots do not share.
    head_snap, target_snap = md.snapshot_by_id(head), md.snapshot_by_id(target)
    hm = {m.manifest_path: m for m in table.manifests(head_snap)} if head_snap else {}
    tm = {m.manifest_path: m for m in table.manifests(target_snap)} if target_snap else {}

    def live(manifests) -> dict[str, int]:
        out: dict[str, int] = {}
        for m in manifests:
            if m.content != ManifestContent.DATA:
                continue
            for e in table.read_entries(m, live_only=True, with_stats=False):
                out[e.data_file.file_path] = e.data_file.record_count
        return out

    at_head = live(m for p, m in hm.items() if p not in tm)
    at_target = live(m for p, m in tm.items() if p not in hm)
    added = {p: n for p, n in at_target.items() if p not in at_head}
    removed = {p: n for p, n in at_head.items() if p not in at_target}
    imp.data_files_added, imp.records_added = len(added), sum(added.values())
    imp.data_files_removed, imp.records_removed = len(removed), sum(removed.values())
    return imp


# -- cherry-pick -------------------------------------------------------------------------------------

SOURCE_SNAPSHOT_ID = "source-snapshot-id"
PUBLISHED_WAP_ID = "published-wap-id"
WAP_ID = "wap.id"


def cherry_pick(at: Table | Transaction, snapshot_id: int, *, branch: str = MAIN_BRANCH,
                validate_only: bool = False) -> list[TableUpdate] | None:
    """Apply a snapshot's changes to a branch as Iceberg Java's CherryPickOperation does: a
    snapshot whose parent is the branch head is fast-forwarded; an append is re-applied as a new
    append; a dynamic overwrite (``replace-partitions=true``) replaces the partitions it wrote.
    The new snapshot's summary names ``source-snapshot-id``; a snapshot already picked (or already
    in the branch's history, or whose WAP id was already published) is refused.

    With ``validate_only``, every check runs but nothing is written: a fast-forward still returns
    its updates, a pick that needs a new snapshot returns None. ``at`` is the table to pick onto, or
    the transaction that commits the pick (needed for a pick that writes a new snapshot: the
    transaction owns the files it writes)."""
    txn = at if isinstance(at, Transaction) else None
    table = txn.table if txn is not None else at
    md = table.metadata
    snap = _snapshot(md, snapshot_id)
    head = md.all_refs.get(branch)
    head_id = head.snapshot_id if head else None
    op = snap.operation
    # Boolean.parseBoolean, as PropertyUtil.propertyAsBoolean: case-insensitive "true".
    dynamic = op == "overwrite" and snap.summary.get("replace-partitions", "").lower() == "true"
    ancestors = md.ancestors_of(head_id) if head_id is not None else []
    wap_id = snap.summary.get(WAP_ID)
    if wap_id and (op == "append" or dynamic):
        # WapUtil.validateWapPublish runs for appends and dynamic overwrites before Java decides
        # on a fast-forward; an ancestor publishes a WAP id by carrying it as wap.id (a
        # fast-forwarded staged snapshot) or as published-wap-id (a re-applied one).
        for a in ancestors:
            if wap_id in (a.summary.get(WAP_ID), a.summary.get(PUBLISHED_WAP_ID)):
                raise UsageError(f"cannot cherry-pick snapshot {snapshot_id}: WAP id {wap_id} was already published "
                                 f"by snapshot {a.snapshot_id}")
    if snap.parent_snapshot_id == head_id:
        return set_branch_snapshot(md, branch, snapshot_id)  # a fast-forward, whatever the operation
    if op != "append" and not dynamic:
        raise UsageError(f"cannot cherry-pick snapshot {snapshot_id}: not append, dynamic overwrite, or "
                         f"fast-forward (its operation is {op})")
    if any(a.snapshot_id == snapshot_id for a in ancestors):
        raise UsageError(f"cannot cherry-pick snapshot {snapshot_id}: already an ancestor of {branch}")
    for a in ancestors:
        if a.summary.get(SOURCE_SNAPSHOT_ID) == str(snapshot_id):
            raise UsageError(f"cannot cherry-pick snapshot {snapshot_id}: already picked to create ancestor {a.snapshot_id}")
    if dynamic and snap.parent_snapshot_id is not None and (
            head_id is None or not is_ancestor(md, head_id, snap.parent_snapshot_id)):
        raise ConflictingChangeError(f"cannot cherry-pick overwrite snapshot {snapshot_id}: it is not based on an "
                                  f"ancestor of {branch}")
    entries = [e for m in table.manifests(snap) if m.content == ManifestContent.DATA
               for e in table.read_entries(m) if e.snapshot_id == snapshot_id]
    added = [e.data_file for e in entries if e.status == EntryStatus.ADDED]
    removed = []
    if dynamic:
        gone = {e.data_file.file_path for e in entries if e.status == EntryStatus.DELETED}
        partitions = {(f.spec_id, f.partition) for f in added}
        live = {e.data_file.file_path: e for e in table.live_entries(md.snapshot_by_id(head_id))
                if e.data_file.content == FileContent.DATA}
        missing = sorted(gone - set(live))
        if missing:
            raise ConflictingChangeError(f"cannot cherry-pick snapshot {snapshot_id}: {missing[0]} it replaces is no "
                                      f"longer in {branch}")
        # Nothing may have been added to the replaced partitions since the picked snapshot's parent.
        since = [s.snapshot_id for s in ancestors]
        if snap.parent_snapshot_id in since:
            newer = set(since[:since.index(snap.parent_snapshot_id)])
            for e in live.values():
                if e.snapshot_id in newer and (e.data_file.spec_id, e.data_file.partition) in partitions:
                    raise ConflictingChangeError(f"cannot cherry-pick snapshot {snapshot_id}: {e.data_file.file_path} "
                                              f"was added to a partition it replaces")
        removed = [(live[p], live[p].data_file) for p in sorted(gone)]
    if validate_only:
        return None
    extra = {SOURCE_SNAPSHOT_ID: str(snapshot_id)}
    if wap_id:
        extra[PUBLISHED_WAP_ID] = wap_id
    if dynamic:
        extra["replace-partitions"] = "true"
    change = SnapshotChange("overwrite" if dynamic else "append", added=added, removed=removed, extra_summary=extra)
    if txn is None:
        raise TypeError("a cherry-pick that writes a snapshot needs the transaction that commits it")
    return build_snapshot(txn, change, branch=branch)


# -- branches and tags ------------------------------------------------------------------------------

def create_ref(md: TableMetadata, name: str, *, ref_type: str, snapshot_id: int | None = None,
               max_ref_age_ms: int | None = None, max_snapshot_age_ms: int | None = None,
               min_snapshots_to_keep: int | None = None) -> list[TableUpdate]:
    # Iceberg Java allows refs in v1 metadata; icectl does too (the refs map is optional in v1).
    if name in md.all_refs:
        raise AlreadyExistsError(f"ref {name!r} already exists")
    if not name or name.strip() != name:
        raise UsageError(f"invalid ref name {name!r}")
    sid = snapshot_id if snapshot_id is not None else md.current_snapshot_id
    if sid is None:
        if not md.snapshots:
            raise NoSnapshotsError()
        raise UsageError("the table has no current snapshot to point the ref at; give --snapshot")
    _snapshot(md, sid)
    if ref_type == "tag" and (max_snapshot_age_ms is not None or min_snapshots_to_keep is not None):
        raise UsageError("tags have only --max-ref-age; snapshot retention applies to branches")
    for v, what in ((max_ref_age_ms, "--max-ref-age"), (max_snapshot_age_ms, "--max-snapshot-age")):
        if v is not None and v <= 0:
            raise UsageError(f"{what} must be positive")
    if min_snapshots_to_keep is not None and min_snapshots_to_keep <= 0:
        raise UsageError("--min-snapshots-to-keep must be positive")
    return [SetSnapshotRef(name, SnapshotRef(sid, ref_type, min_snapshots_to_keep, max_snapshot_age_ms,
                                             max_ref_age_ms))]


def drop_ref(md: TableMetadata, name: str, *, ref_type: str) -> list[TableUpdate]:
    if name == MAIN_BRANCH:
        raise UsageError("the main branch cannot be dropped")
    ref = md.refs.get(name)
    if ref is None or ref.ref_type != ref_type:
        raise NotFoundError(f"{ref_type} {name!r} does not exist")
    return [RemoveSnapshotRef(name)]


def rename_branch(md: TableMetadata, old: str, new: str) -> list[TableUpdate]:
    """As Java's ManageSnapshots.renameBranch: the ref under its new name, then the old name removed."""
    if old == MAIN_BRANCH:
        raise UsageError("the main branch cannot be renamed")
    ref = _branch(md, old)
    if new in md.all_refs:
        raise AlreadyExistsError(f"ref {new!r} already exists")
    return [SetSnapshotRef(new, ref), RemoveSnapshotRef(old)]


def fast_forward(md: TableMetadata, name: str, to: str) -> list[TableUpdate]:
    """Move branch ``name`` to the head of ``to``; its head must be an ancestor of that head."""
    ref = _branch(md, name)
    target = md.all_refs.get(to)
    if target is None:
        raise NotFoundError(f"ref {to!r} does not exist")
    if not is_ancestor(md, target.snapshot_id, ref.snapshot_id):
        raise UsageError(f"cannot fast-forward {name}: its head {ref.snapshot_id} is not an ancestor of {to} "
                         f"({target.snapshot_id})")
    return set_branch_snapshot(md, name, target.snapshot_id)


def set_retention(md: TableMetadata, name: str, *, max_ref_age_ms: int | None = None,
                  max_snapshot_age_ms: int | None = None, min_snapshots_to_keep: int | None = None) -> list[TableUpdate]:
    ref = md.refs.get(name)
    if ref is None:
        raise NotFoundError(f"ref {name!r} does not exist")
    if not ref.is_branch and (max_snapshot_age_ms is not None or min_snapshots_to_keep is not None):
        raise UsageError("tags have only --max-ref-age")
    if name == MAIN_BRANCH and max_ref_age_ms is not None:
        raise UsageError("the main branch never expires; it has no max ref age")
    new = SnapshotRef(ref.snapshot_id, ref.ref_type,
                      min_snapshots_to_keep if min_snapshots_to_keep is not None else ref.min_snapshots_to_keep,
                      max_snapshot_age_ms if max_snapshot_age_ms is not None else ref.max_snapshot_age_ms,
                      max_ref_age_ms if max_ref_age_ms is not None else ref.max_ref_age_ms, ref.extra)
    return [SetSnapshotRef(name, new)]


Builder = Callable[[Table], list[TableUpdate]]


@dataclass
class RefCommit:
    """A planned change of refs: the updates planned against ``table`` (None when the commit
    writes a new snapshot: its updates exist only when it is written), the metadata they give
    (None likewise), and ``build``, which plans it again against a fresh table on a conflict."""

    table: Table
    build: Plan
    updates: list[TableUpdate] | None
    after: TableMetadata | None
    branch: str = MAIN_BRANCH  # the branch a snapshot that only the commit writes goes to

    @property
    def changes_nothing(self) -> bool:
        return self.updates == []

    def requirements(self) -> list[TableRequirement]:
        return requirements_for(self.table.metadata, self.updates or [])

    @property
    def refs_before(self) -> dict[str, int]:
        return {n: r.snapshot_id for n, r in self.table.metadata.all_refs.items()}

    @property
    def refs_after(self) -> dict[str, int | None]:
        """Each ref's snapshot after the change; the branch of a snapshot that only the commit
        writes maps to None."""
        if self.after is not None:
            return {n: r.snapshot_id for n, r in self.after.all_refs.items()}
        return {**self.refs_before, self.branch: None}

    @property
    def current_snapshot_id(self) -> int | None:
        if self.after is not None:
            return self.after.current_snapshot_id
        return None if self.branch == MAIN_BRANCH else self.table.metadata.current_snapshot_id

    @property
    def planned_commit(self) -> dict[str, list]:
        """The commit to send, as the REST spec writes it (a snapshot that only the commit writes
        is null in it until then)."""
        if self.updates is not None:
            return sent_json(self.table.metadata, self.requirements(), self.updates)
        return snapshot_commit_json(self.table.metadata, self.branch)

    def impact(self, branch: str) -> RefImpact:
        """What ``branch`` gains and loses by the change (it must exist after it)."""
        assert self.after is not None
        return ref_impact(self.table, branch, self.after.all_refs[branch].snapshot_id)


def plan_ref_change(table: Table, build: Builder) -> RefCommit:
    """Plan a change whose updates write nothing (refs only)."""
    updates = build(table)
    return RefCommit(table, lambda txn: build(txn.table), updates, apply_updates(table.metadata, updates) if updates else table.metadata)


def plan_cherry_pick(table: Table, snapshot_id: int, *, branch: str = MAIN_BRANCH) -> RefCommit:
    """Every check of a cherry-pick, without writing: a fast-forward has its updates; one that
    re-applies the snapshot writes its manifests only when committed (so a dry run or a refusal
    leaves no file behind)."""
    preview = cherry_pick(table, snapshot_id, branch=branch, validate_only=True)
    return RefCommit(table, lambda txn: cherry_pick(txn, snapshot_id, branch=branch) or [], preview,
                     apply_updates(table.metadata, preview) if preview else None, branch)


def leaving_history(md: TableMetadata, updates: list[TableUpdate]) -> dict[str, set[int]]:
    """For each branch the updates move or remove: the snapshots that leave its history."""
    out: dict[str, set[int]] = {}
    for u in updates:
        name = getattr(u, "ref_name", None)
        old = md.refs.get(name) if name else None
        if old is None or not old.is_branch:
            continue
        before = set(md.ancestor_ids(old.snapshot_id))
        after = set(md.ancestor_ids(u.ref.snapshot_id)) if isinstance(u, SetSnapshotRef) else set()
        if before - after:
            out[name] = before - after
    return out


def commit_ref_change(plan: RefCommit) -> Committed:
    """Commit with retry: on a conflict the change is planned again against the fresh table, and
    goes ahead only if it does what the plan shown did: the same refs to the same snapshots, and
    no branch losing snapshots the plan did not drop (a rollback retried after an append would
    discard it: ConflictingChangeError, nothing committed)."""
    approved = None if plan.updates is None else (
        [u.to_json() for u in plan.updates], leaving_history(plan.table.metadata, plan.updates))

    def build(txn: Transaction) -> list[TableUpdate]:
        t = txn.table
        updates = list(plan.build(txn) or [])
        if approved is not None and t.metadata_location != plan.table.metadata_location:
            now = ([u.to_json() for u in updates], leaving_history(t.metadata, updates))
            if now != approved:
                lost = {b: sorted(ids - approved[1].get(b, set())) for b, ids in now[1].items()}
                lost = {b: ids for b, ids in lost.items() if ids}
                why = "; ".join(f"{len(ids)} more snapshots would leave {b}'s history ({', '.join(map(str, ids[:5]))})"
                                for b, ids in lost.items()) or "the change it would make is no longer the one shown"
                raise ConflictingChangeError(f"{plan.table.name} changed since the plan was shown: {why}; nothing was "
                                             "committed", hint="run the command again to see the new plan")
        return updates

    return Transaction(plan.table).commit(build)
