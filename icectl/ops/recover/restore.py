"""Restore a table to the state of an earlier metadata file, as a commit.

Iceberg Java and PyIceberg offer only ``registerTable(overwrite)``: the catalog's pointer moves
back to the old file. That file's ``last-sequence-number``, ``last-column-id``,
``last-partition-id`` and (v3) ``next-row-id`` are behind the table's, so the next commit would
reuse sequence numbers, field ids and row ids that newer files already carry (the spec requires
them to only grow: "Sequence numbers ... are assigned ... greater than the table's last sequence
number", row lineage's "next-row-id ... must be greater than" every assigned id), its metadata log
loses today's file (the restore cannot be undone by name), and the newer snapshots vanish from
the metadata (their files become orphans that ``remove-orphans`` deletes).

icectl instead commits the old state on top of today's metadata, through the catalog like any
commit (SQL and PostgreSQL: a compare-and-set of the pointer; REST: the server applies the
updates; file-system: the next ``vN``), as the REST spec's updates:

- ``set-snapshot-ref`` / ``remove-snapshot-ref``: every branch and tag as the old file had them
  (``main`` gives ``current-snapshot-id``; the snapshot log gets an entry, as after a rollback);
- ``set-current-schema``, ``set-default-spec``, ``set-default-sort-order`` to the old ids
  (``add-schema``/``add-spec``/``add-sort-order`` first when a later commit removed them);
- ``set-properties``/``remove-properties`` to the old properties, ``set-location`` if it moved.

Everything else stays as today: the newer snapshots stay in the metadata (unreferenced, as after
Java's ``rollback_to_snapshot``, so ``expire`` removes them by age and ``remove-orphans`` keeps
their files), ``last-sequence-number``, ``last-column-id``, ``last-partition-id``,
``next-row-id``, the format version (never lowered), statistics, and the metadata log, which gains
today's file: another restore undoes this one.

The commit requires every ref, the current schema, default spec and sort order to be as the plan
read them: a commit in between fails it (exit 5) rather than being undone unseen.

A branch or tag head of the old file that a later ``expire`` removed from the metadata while its
files stayed (``gc.enabled=false``, or files another snapshot still reaches) cannot come back as
an ``add-snapshot`` update: its sequence number is behind the table's ``last-sequence-number``
and Iceberg Java's builder refuses that. Such a restore builds the metadata itself: today's
metadata with those snapshots added back, then the updates above applied by icectl's builder
(the metadata log keeps today's file as always), and makes it current with the catalog's one
operation for that, ``Catalog.replace_metadata`` (register with overwrite, guarded by today's
file: SQL and PostgreSQL move the pointer with a compare-and-set from today's file; file-system
writes the next ``vN``; a REST catalog, which applies updates itself, registers the file with
``overwrite``, the REST spec's ``RegisterTableRequest.overwrite``). A server without it (Iceberg
Java 1.10's handlers answer 409) refuses, the file written is removed, and the restore exits with
code 7 and the reason.

Refused: an old file of another table (exit 2); a state whose files are gone (exit 3, listing
them: manifest lists, manifests, data and delete files of every branch and tag head of the old
state; ``expire`` removed them).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from icectl.errors import (
    ConflictingChangeError,
    NotFoundError,
    UnsupportedError,
    UsageError,
)
from icectl.expr.timestamp import parse_timestamp_ms
from icectl.formats.manifest import ManifestFile
from icectl.ops.inspect.diff import (
    DiffSide,
    TableDiff,
    check_same_table,
    diff_sides,
    find_metadata_file,
    metadata_candidates,
)
from icectl.spec.metadata import MAIN_BRANCH, TableMetadata
from icectl.table.loaded import Table
from icectl.table.metadata_io import metadata_file_version, read_metadata_file
from icectl.table.requirements import (
    AssertCurrentSchemaId,
    AssertDefaultSortOrderId,
    AssertDefaultSpecId,
    AssertRefSnapshotId,
    TableRequirement,
    requirements_for,
)
from icectl.table.transaction import Committed, Transaction
from icectl.table.updates import (
    AddSchema,
    AddSnapshot,
    AddSortOrder,
    AddSpec,
    RemoveProperties,
    RemoveSnapshotRef,
    SetCurrentSchema,
    SetDefaultSortOrder,
    SetDefaultSpec,
    SetLocation,
    SetProperties,
    SetSnapshotRef,
    TableUpdate,
    updates_json,
)

LAST_ADDED = -1


@dataclass
class MissingFile:
    path: str
    kind: str  # manifest-list | manifest | data | position-deletes | equality-deletes | deletion-vector
    snapshot_id: int  # the ref head of the old state that needs it


@dataclass
class RestorePlan:
    table: str
    metadata_location: str  # today's metadata file
    restore_from: str  # the old metadata file
    restore_from_version: int  # its version number (-1 when its name has none)
    restore_from_timestamp_ms: int  # its last-updated-ms
    current_snapshot_id_before: int | None
    current_snapshot_id_after: int | None
    refs_before: dict[str, int]
    refs_after: dict[str, int]
    checked_files: int  # the files of the old state's ref heads that were looked for
    missing_files: list[MissingFile]
    not_restored_snapshots: list[int]  # snapshots of the old file that a later expire removed (not ref heads)
    changes: list[str]  # the updates in words
    diff: TableDiff | None  # from today to the old state; None when files of the old state are gone
    commits: list[dict] = field(default_factory=list)
    updates: list[TableUpdate] = field(default_factory=list, repr=False)
    requirements: list[TableRequirement] = field(default_factory=list, repr=False)
    # Ref heads of the old file that a later expire removed from the metadata (their files are all
    # there): committed by writing the metadata file (see the module docstring).
    readded_snapshots: list = field(default_factory=list, repr=False)

    @property
    def changes_nothing(self) -> bool:
        return not self.updates


@dataclass
class RestoreResult:
    plan: RestorePlan
    committed: Committed | None
    metadata_location: str | None


# -- choosing the old metadata file --------------------------------------------------------------------------

def choose_metadata(table: Table, *, metadata_file: str | None = None, version: str | None = None,
                    time: str | None = None) -> str:
    """The old metadata file named by exactly one of ``--to-metadata``, ``--to-version`` and
    ``--to-time`` (the newest file of the metadata log, or of the table's metadata folder, that
    was current at that time)."""
    given = [x for x in (metadata_file, version, time) if x is not None]
    if len(given) != 1:
        raise UsageError("give exactly one of --to-metadata, --to-version and --to-time")
    if metadata_file is not None:
        return find_metadata_file(table, metadata_file)
    if version is not None:
        text = version.strip()
        digits = text[1:] if text.startswith("v") else text
        if not digits.isdigit():
            raise UsageError(f"invalid --to-version {version!r}: a metadata file version such as 3 or v3")
        return find_metadata_file(table, digits)
    ts = parse_timestamp_ms(time or "", what="--to-time")
    md = table.metadata
    if md.last_updated_ms <= ts:
        return table.metadata_location
    best = None
    for e in md.metadata_log:
        if e.timestamp_ms <= ts and (best is None or e.timestamp_ms >= best[0]):
            best = (e.timestamp_ms, table.resolve(e.metadata_file))
    if best is None:
        raise NotFoundError(f"no metadata file of {table.name} in its metadata log is as old as {time} ({ts} ms)",
                            hint="--to-metadata takes any metadata file of the table")
    return best[1]


# -- planning ------------------------------------------------------------------------------------------------

def plan_restore(table: Table, *, metadata_file: str | None = None, version: str | None = None,
                 time: str | None = None) -> RestorePlan:
    location = choose_metadata(table, metadata_file=metadata_file, version=version, time=time)
    if location == table.metadata_location:
        old = table.metadata
    else:
        old = read_metadata_file(table.io, location)
    check_same_table(table, old, location)
    cur = table.metadata
    old_view = Table(table.identifier, old, location, table.catalog, io=table.io)
    missing, checked = check_files(old_view)
    gone_heads = sorted({r.snapshot_id for r in old.all_refs.values() if cur.snapshot_by_id(r.snapshot_id) is None})
    readded = [old.snapshot_by_id(sid) for sid in gone_heads]
    updates = [] if missing else restore_updates(with_snapshots(cur, readded), old)
    reqs = restore_requirements(cur, updates)
    a = DiffSide("today", "metadata", cur.current_snapshot_id,
                 cur.current_snapshot.timestamp_ms if cur.current_snapshot else None, table.metadata_location, cur,
                 table)
    old_snap = old.current_snapshot
    b = DiffSide(location.rsplit("/", 1)[-1], "metadata", old.current_snapshot_id,
                 old_snap.timestamp_ms if old_snap else None, location, old, old_view)
    plan = RestorePlan(
        table=table.name, metadata_location=table.metadata_location, restore_from=location,
        restore_from_version=metadata_file_version(location), restore_from_timestamp_ms=old.last_updated_ms,
        current_snapshot_id_before=cur.current_snapshot_id, current_snapshot_id_after=old.current_snapshot_id,
        refs_before={n: r.snapshot_id for n, r in cur.all_refs.items()},
        refs_after={n: r.snapshot_id for n, r in old.all_refs.items()},
        checked_files=checked, missing_files=missing,
        not_restored_snapshots=sorted(s.snapshot_id for s in old.snapshots
                                      if cur.snapshot_by_id(s.snapshot_id) is None
                                      and s.snapshot_id not in gone_heads),
        changes=[describe_update(u) for u in updates], diff=None if missing else diff_sides(table, a, b),
        updates=updates, requirements=reqs, readded_snapshots=[] if missing else readded)
    if updates:
        shown = [AddSnapshot(s) for s in plan.readded_snapshots] + updates
        plan.commits = [{"requirements": [r.to_json() for r in reqs],
                         "updates": updates_json(shown, cur.format_version)}]
        plan.changes = [f"add snapshot {s.snapshot_id} back (a later expire removed it from the metadata; its files "
                        "are all there): the metadata file is written by icectl" for s in plan.readded_snapshots] \
            + plan.changes
    return plan


def with_snapshots(md: TableMetadata, snapshots: list) -> TableMetadata:
    """``md`` with ``snapshots`` (of an older metadata file of the table) added back."""
    if not snapshots:
        return md
    return md.replace(snapshots=tuple(md.snapshots) + tuple(snapshots))


def check_files(old: Table) -> tuple[list[MissingFile], int]:
    """Look for every file the branch and tag heads of ``old`` read: manifest lists, manifests,
    and their live data and delete files. Return what is missing and how many were looked for."""
    md = old.metadata
    heads = sorted({r.snapshot_id for r in md.all_refs.values()})
    missing: dict[str, MissingFile] = {}
    manifests: dict[str, tuple[ManifestFile, int]] = {}
    checked = 0
    for sid in heads:
        snap = md.snapshot_by_id(sid)
        if snap is None:
            continue
        checked += 1
        try:
            listed = old.manifests(snap)
        except NotFoundError:
            path = old.resolve(snap.manifest_list) if snap.manifest_list else f"(manifests of snapshot {sid})"
            missing.setdefault(path, MissingFile(path, "manifest-list", sid))
            continue
        for m in listed:
            manifests.setdefault(m.manifest_path, (m, sid))
    content: dict[str, tuple[str, int]] = {}

    def read(item: tuple[ManifestFile, int]):
        m, sid = item
        try:
            return m, sid, old.read_entries(m, live_only=True, with_stats=False)
        except NotFoundError:
            return m, sid, None

    with ThreadPoolExecutor(max_workers=8) as pool:
        for m, sid, entries in pool.map(read, list(manifests.values())):
            checked += 1
            if entries is None:
                missing.setdefault(m.manifest_path, MissingFile(m.manifest_path, "manifest", sid))
                continue
            for e in entries:
                content.setdefault(e.data_file.file_path, (e.data_file.kind, sid))
    paths = list(content)
    checked += len(paths)
    with ThreadPoolExecutor(max_workers=16) as pool:
        for path, exists in zip(paths, pool.map(old.io.exists, paths)):
            if not exists:
                kind, sid = content[path]
                missing.setdefault(path, MissingFile(path, kind, sid))
    return sorted(missing.values(), key=lambda f: (f.kind, f.path)), checked


def _same(ja: dict, jb: dict) -> bool:
    """The same schema, spec or sort order apart from its id."""
    ja, jb = dict(ja), dict(jb)
    for k in ("schema-id", "spec-id", "order-id"):
        ja.pop(k, None)
        jb.pop(k, None)
    return ja == jb


def restore_updates(cur: TableMetadata, old: TableMetadata) -> list[TableUpdate]:
    """The updates that give today's metadata ``old``'s refs, schema, spec, sort order,
    properties and location (see the module docstring)."""
    out: list[TableUpdate] = []
    schema = old.schema
    have = next((s for s in cur.schemas if s.schema_id == schema.schema_id), None)
    if have is not None and not _same(have.to_json(), schema.to_json()):
        raise ConflictingChangeError(f"schema {schema.schema_id} of the old metadata differs from the table's "
                                     f"schema {schema.schema_id}: the ids were reused, it cannot be restored")
    if have is None:
        out += [AddSchema(schema, max(cur.last_column_id, old.last_column_id)), SetCurrentSchema(LAST_ADDED)]
    elif cur.current_schema_id != schema.schema_id:
        out.append(SetCurrentSchema(schema.schema_id))
    spec = old.spec
    have_spec = cur.specs_by_id.get(spec.spec_id)
    if have_spec is not None and not _same(have_spec.to_json(cur.format_version), spec.to_json(cur.format_version)):
        raise ConflictingChangeError(f"partition spec {spec.spec_id} of the old metadata differs from the table's: "
                                     "the ids were reused, it cannot be restored")
    if have_spec is None:
        out += [AddSpec(spec), SetDefaultSpec(LAST_ADDED)]
    elif cur.default_spec_id != spec.spec_id:
        out.append(SetDefaultSpec(spec.spec_id))
    order = old.sort_order
    have_order = next((o for o in cur.sort_orders if o.order_id == order.order_id), None)
    if have_order is not None and not _same(have_order.to_json(), order.to_json()):
        raise ConflictingChangeError(f"sort order {order.order_id} of the old metadata differs from the table's: "
                                     "the ids were reused, it cannot be restored")
    if have_order is None:
        out += [AddSortOrder(order), SetDefaultSortOrder(LAST_ADDED)]
    elif cur.default_sort_order_id != order.order_id:
        out.append(SetDefaultSortOrder(order.order_id))
    set_props = {k: v for k, v in old.properties.items() if cur.properties.get(k) != v}
    removed = sorted(k for k in cur.properties if k not in old.properties)
    if set_props:
        out.append(SetProperties(set_props))
    if removed:
        out.append(RemoveProperties(tuple(removed)))
    if old.location and old.location != cur.location:
        out.append(SetLocation(old.location))
    old_refs, cur_refs = old.all_refs, cur.all_refs
    for name in sorted(n for n in cur_refs if n not in old_refs and n != MAIN_BRANCH):
        out.append(RemoveSnapshotRef(name))
    for name in sorted((n for n in old_refs if n != MAIN_BRANCH)):
        r = old_refs[name]
        if cur_refs.get(name) != r:
            out.append(SetSnapshotRef(name, r))
    main = old_refs.get(MAIN_BRANCH)
    if main is None and MAIN_BRANCH in cur_refs:
        out.append(RemoveSnapshotRef(MAIN_BRANCH))
    elif main is not None and (cur_refs.get(MAIN_BRANCH) != main or cur.current_snapshot_id != main.snapshot_id):
        out.append(SetSnapshotRef(MAIN_BRANCH, main))
    return out


def restore_requirements(cur: TableMetadata, updates: list[TableUpdate]) -> list[TableRequirement]:
    """Java's requirements for the updates, plus every ref, the current schema, default spec and
    sort order as read: the restore was planned (and its diff shown) against exactly this state."""
    reqs = requirements_for(cur, updates)
    asserted = {r.ref for r in reqs if isinstance(r, AssertRefSnapshotId)}
    for name, ref in sorted(cur.refs.items()):
        if name not in asserted:
            reqs.append(AssertRefSnapshotId(name, ref.snapshot_id))
            asserted.add(name)
    if MAIN_BRANCH not in asserted:
        reqs.append(AssertRefSnapshotId(MAIN_BRANCH, cur.current_snapshot_id))
    kinds = {type(r) for r in reqs}
    if AssertCurrentSchemaId not in kinds:
        reqs.append(AssertCurrentSchemaId(cur.current_schema_id))
    if AssertDefaultSpecId not in kinds:
        reqs.append(AssertDefaultSpecId(cur.default_spec_id))
    if AssertDefaultSortOrderId not in kinds:
        reqs.append(AssertDefaultSortOrderId(cur.default_sort_order_id))
    return reqs


def describe_update(u: TableUpdate) -> str:
    if isinstance(u, SetSnapshotRef):
        return f"set {u.ref.ref_type} {u.ref_name} to snapshot {u.ref.snapshot_id}"
    if isinstance(u, RemoveSnapshotRef):
        return f"remove ref {u.ref_name}"
    if isinstance(u, SetCurrentSchema):
        return "set the current schema to the one added" if u.schema_id == LAST_ADDED else \
            f"set the current schema to {u.schema_id}"
    if isinstance(u, AddSchema):
        return "add the old schema back (a later commit removed it)"
    if isinstance(u, SetDefaultSpec):
        return "set the default partition spec to the one added" if u.spec_id == LAST_ADDED else \
            f"set the default partition spec to {u.spec_id}"
    if isinstance(u, AddSpec):
        return "add the old partition spec back (a later commit removed it)"
    if isinstance(u, SetDefaultSortOrder):
        return "set the default sort order to the one added" if u.sort_order_id == LAST_ADDED else \
            f"set the default sort order to {u.sort_order_id}"
    if isinstance(u, AddSortOrder):
        return "add the old sort order back"
    if isinstance(u, SetProperties):
        return "set properties " + ", ".join(f"{k}={v}" for k, v in sorted(u.updates.items()))
    if isinstance(u, RemoveProperties):
        return "remove properties " + ", ".join(u.removals)
    if isinstance(u, SetLocation):
        return f"set the location to {u.location}"
    return type(u).__name__


# -- committing ----------------------------------------------------------------------------------------------

def check_restorable(plan: RestorePlan) -> None:
    """Refuse a plan that cannot be committed: files of the old state are gone, or a ref head of it
    is no longer in the table's metadata."""
    if plan.missing_files:
        first = plan.missing_files[0]
        raise NotFoundError(
            f"cannot restore {plan.table} to {plan.restore_from}: {len(plan.missing_files)} file(s) it needs are gone "
            f"(first: {first.kind} {first.path})",
            hint="expire or remove-orphans deleted them; choose a newer metadata file (icectl describe lists the log)")


def apply_restore(table: Table, plan: RestorePlan) -> RestoreResult:
    """Commit the plan once, against exactly the metadata it was planned on (a commit in between
    fails the requirements: exit 5)."""
    check_restorable(plan)
    if not plan.updates:
        return RestoreResult(plan, None, None)
    if table.metadata_location != plan.metadata_location:
        raise ConflictingChangeError(f"{plan.table} changed since the restore was planned; nothing was committed",
                                     hint="run restore again to see the new plan")
    txn = Transaction(table).stage(plan.updates).require(plan.requirements)
    if plan.readded_snapshots:
        return RestoreResult(plan, None, write_restored_metadata(txn, plan))
    done = txn.commit()
    return RestoreResult(plan, done, done.table.metadata_location)


def write_restored_metadata(txn: Transaction, plan: RestorePlan) -> str:
    """Today's metadata with the re-added snapshots, the plan's updates applied by the builder,
    made current by the catalog's :meth:`~icectl.catalog.base.Catalog.replace_metadata` (no
    update can add them back: see the module docstring)."""
    try:
        return txn.replace_metadata(with_snapshots(txn.table.metadata, plan.readded_snapshots))
    except UnsupportedError as e:
        raise UnsupportedError(
            f"cannot restore {plan.table} over this catalog: snapshot {plan.readded_snapshots[0].snapshot_id} must be "
            f"added back, which only a replacement of the metadata file can do, and {e.message}",
            hint="restore to a newer metadata file whose branch and tag heads are still in the table") from None


__all__ = ["MissingFile", "RestorePlan", "RestoreResult", "apply_restore", "check_files", "check_restorable",
           "choose_metadata", "metadata_candidates", "plan_restore", "restore_updates"]
