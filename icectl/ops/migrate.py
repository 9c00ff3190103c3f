"""``migrate``: move catalog entries from one catalog to another, files untouched.

For each entry the order is what keeps it reachable in at least one catalog at every moment (a kill
between any two steps leaves it in the source, in both, or in the target, never in none):

1. read the source's current metadata location;
2. register that location in the target (the catalog contract's ``register_table``: no file is
   written, the target points at the same metadata file);
3. load it from the target and check it is the same table: table uuid, current snapshot, refs and
   metadata location;
4. read the source's metadata location again: a commit that landed in the source since step 1
   (the target does not have it) keeps the table in the source; the target's entry made in step 2
   is removed again (when still at the registered location) and the table is reported ``changed``,
   so a later run moves it with that commit;
5. remove the source entry without purging a file (``--keep-source``: keep it).

A re-run resumes from what it finds: in the target only, the entry is ``done``; in both at the same
metadata location it was interrupted between 2 and 5 and is finished (source removed); in both at
different locations it is a ``conflict``, reported and never overwritten.

The plan and the state machine are per entry and generic in its ``kind``: :data:`KINDS` maps a kind
("table", "view") to the catalog calls that find, register, load, compare and drop such an entry.

Views differ in two ways (docs/migrate.md, "Views"):

- a target whose ``register_view`` cannot point at a file (Iceberg 1.10's REST server has no
  ``register-view``) creates the view from the file's current version: a new view uuid, a new
  metadata file and a history of one version. The check then compares what is kept (the current
  version's SQL, schema, default catalog and namespace, and the properties), the entry's ``detail``
  says the history was not carried, and a re-run finds it finished by comparing the same things;
- a source whose ``drop_view`` deletes the view's current metadata file (Iceberg Java's REST
  server) cannot hand a view to a target that would point at that very file: such a view is
  ``unsupported`` (the source keeps it); to a REST target (which writes its own file) it moves.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from icectl.catalog.base import Catalog, Identifier, ident_str
from icectl.errors import (AlreadyExistsError, CommitConflictError, ExitCode, IcectlError, NoSuchNamespaceError,
                           NoSuchViewError, NotFoundError, UnsupportedError, UsageError)
from icectl.ops.evolve.namespaces import parse_namespace
from icectl.spec.metadata import TableMetadata
from icectl.spec.view import ViewMetadata
from icectl.table.metadata_io import read_metadata_file, read_view_metadata_file

# What the plan says will happen to an entry.
MIGRATE = "migrate"  # in the source only: register in the target, check, remove from the source
FINISH = "finish"  # in both at the same metadata location: an interrupted run; check, remove from the source
DONE = "done"  # in the target only: nothing to do
CONFLICT = "conflict"  # in both at different metadata locations: refused, never overwritten
UNSUPPORTED = "unsupported"  # the target cannot hold it (format version 4 in a catalog without v4)
UNREADABLE = "unreadable"  # its metadata could not be read: skipped

# What happened (outcome), besides DONE, CONFLICT, UNSUPPORTED and UNREADABLE as planned.
MIGRATED = "migrated"  # registered in the target, checked, removed from the source
FINISHED = "finished"  # was in both at the same location: checked, removed from the source
COPIED = "copied"  # --keep-source: registered in the target and checked; the source keeps it
CHANGED = "changed"  # the source moved during the run: left in the source, not in the target
FAILED = "failed"  # an error stopped it (see ``error``); it is where the error left it, in at least one catalog

TABLE = "table"
VIEW = "view"
KIND_NAMES = (TABLE, VIEW)

# Outcomes after which a run is not complete: the exit code says so.
INCOMPLETE = (CONFLICT, CHANGED, FAILED, UNSUPPORTED, UNREADABLE)


@dataclass(frozen=True)
class Kind:
    """The catalog calls for one kind of entry."""

    name: str
    locate: Callable[[Catalog, Identifier], str]  # current metadata location; NotFoundError if absent
    # Register at a metadata location; the target's metadata location after it (AlreadyExistsError
    # when the name is taken).
    register: Callable[[Catalog, Identifier, str], str]
    load: Callable[[Catalog, Identifier], tuple[str, dict]]  # (metadata location, identity to compare)
    read: Callable[[Catalog, str], dict]  # the identity in a metadata file, read with the catalog's IO
    drop: Callable[[Catalog, Identifier], None]  # the entry only, never a file
    list_names: Callable[[Catalog, Identifier], list[Identifier]]  # entries directly in a namespace
    # The identity keys a target keeps when it does not point at the registered file (None: every key
    # and the metadata location must be equal).
    kept: Callable[[Catalog], tuple[str, ...] | None] = lambda target: None


def table_identity(md: TableMetadata) -> dict:
    """What must be equal in both catalogs: uuid, current snapshot and refs (name -> type, snapshot)."""
    return {"table_uuid": md.table_uuid, "current_snapshot_id": md.current_snapshot_id,
            "refs": {name: [ref.ref_type, ref.snapshot_id] for name, ref in sorted(md.refs.items())}}


def _load_table(catalog: Catalog, ident: Identifier) -> tuple[str, dict]:
    state = catalog.load(ident)
    return state.metadata_location, table_identity(state.metadata)


def _read_table(catalog: Catalog, location: str) -> dict:
    return table_identity(read_metadata_file(catalog.io, location))


def _register_table(catalog: Catalog, ident: Identifier, location: str) -> str:
    catalog.register_table(ident, location)
    return location


def _drop_table(catalog: Catalog, ident: Identifier) -> None:
    catalog.drop_table(ident, purge=False)


# What a target that creates a view from a file's current version keeps of it.
VIEW_KEPT = ("sql", "schema", "default_catalog", "default_namespace", "properties")


def view_identity(md: ViewMetadata) -> dict:
    """What must be equal in both catalogs: view uuid, current version id, and what every target
    keeps (:data:`VIEW_KEPT`): the current version's representations, its schema's fields, default
    catalog and namespace, and the view's properties."""
    version = md.current_version
    schema = md.schema_by_id(version.schema_id) or md.schema
    return {"view_uuid": md.view_uuid, "current_version_id": md.current_version_id,
            "sql": sorted([r.type, r.dialect or "", r.sql or ""] for r in version.representations),
            "schema": {k: v for k, v in schema.to_json().items() if k != "schema-id"},
            "default_catalog": version.default_catalog, "default_namespace": list(version.default_namespace),
            "properties": dict(sorted(md.properties.items()))}


def _locate_view(catalog: Catalog, ident: Identifier) -> str:
    if not catalog.supports_views:
        raise NoSuchViewError(f"the {catalog.kind} catalog {catalog.name} has no views")
    return catalog.load_view_metadata_location(ident)


def _load_view(catalog: Catalog, ident: Identifier) -> tuple[str, dict]:
    state = catalog.load_view(ident)
    return state.metadata_location, view_identity(state.metadata)


def _read_view(catalog: Catalog, location: str) -> dict:
    return view_identity(read_view_metadata_file(catalog.io, location))


def _register_view(catalog: Catalog, ident: Identifier, location: str) -> str:
    return catalog.register_view(ident, location).metadata_location


def _list_views(catalog: Catalog, ns: Identifier) -> list[Identifier]:
    return list(catalog.list_views(ns)) if catalog.supports_views else []


KINDS: dict[str, Kind] = {
    TABLE: Kind(TABLE, locate=lambda c, i: c.load_metadata_location(i), register=_register_table, load=_load_table,
                read=_read_table, drop=_drop_table, list_names=lambda c, ns: list(c.list_tables(ns))),
    VIEW: Kind(VIEW, locate=_locate_view, register=_register_view, load=_load_view, read=_read_view,
               drop=lambda c, i: c.drop_view(i), list_names=_list_views,
               kept=lambda target: None if target.registers_view_files else VIEW_KEPT),
}

HISTORY_NOT_CARRIED = ("the {target} catalog {name} has no register-view: it created the view from its current "
                       "version (a new view uuid and metadata file; the older versions and the version log were "
                       "not carried)")


@dataclass
class MigrationEntry:
    kind: str
    name: str
    action: str  # MIGRATE, FINISH, DONE, CONFLICT, UNSUPPORTED, UNREADABLE
    source_metadata_location: str | None
    target_metadata_location: str | None
    outcome: str | None = None  # set once applied
    detail: str | None = None  # why (a conflict's, a change's, an error's message)
    exit_code: int | None = None  # left behind (conflict, changed, failed, skipped): the documented exit code

    @property
    def ident(self) -> Identifier:
        return parse_namespace(self.name)


@dataclass
class MigrationPlan:
    source: str  # catalog names
    target: str
    keep_source: bool
    entries: list[MigrationEntry]
    namespaces_to_create: list[str] = field(default_factory=list)  # in the target, with the source's properties
    namespaces_created: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for e in self.entries:
            key = e.outcome or e.action
            out[key] = out.get(key, 0) + 1
        return dict(sorted(out.items()))

    @property
    def incomplete(self) -> list[MigrationEntry]:
        return [e for e in self.entries if (e.outcome or e.action) in INCOMPLETE]

    @property
    def pending(self) -> list[MigrationEntry]:
        return [e for e in self.entries if e.action in (MIGRATE, FINISH) and e.outcome is None]


# -- planning -------------------------------------------------------------------------------------

def _below(catalog: Catalog, kind: Kind, ns: Identifier) -> list[Identifier]:
    """Entries of ``ns`` and of the namespaces below it (none when the catalog lacks ``ns``)."""
    try:
        out = kind.list_names(catalog, ns)
        children = catalog.list_namespaces(ns)
    except NotFoundError:  # no such namespace (or no catalog database yet)
        return []
    for child in children:
        if tuple(child) != tuple(ns):
            out += _below(catalog, kind, tuple(child))
    return out


def _locate(catalog: Catalog, kind: Kind, ident: Identifier) -> str | None:
    try:
        return kind.locate(catalog, ident)
    except NotFoundError:
        return None


def _namespace_exists(catalog: Catalog, ns: Identifier) -> bool:
    try:
        catalog.load_namespace_properties(ns)
        return True
    except NotFoundError:  # no such namespace (or no catalog database yet)
        return False


def select(source: Catalog, target: Catalog, names: list[str], *, all_entries: bool,
           kinds: tuple[str, ...] = KIND_NAMES) -> list[tuple[str, Identifier]]:
    """(kind, identifier) of what ``names`` mean: each ``NAMESPACE.TABLE``, or a namespace (its entries
    and those of the namespaces below it, in the source and, for a re-run, in the target), or with
    ``all_entries`` every namespace of the source. A name found in neither catalog is an error
    (exit code 3) before anything changes."""
    if all_entries and names:
        raise UsageError("give tables or namespaces, or --all, not both")
    if not all_entries and not names:
        raise UsageError("give a namespace or NAMESPACE.TABLE (e.g. db or db.events), or --all")
    namespaces: list[Identifier] = []
    found: list[tuple[str, Identifier]] = []
    if all_entries:
        namespaces = [tuple(n) for n in source.list_namespaces(None)]
        for ns in namespaces:
            for k in kinds:
                found += [(k, tuple(i)) for i in KINDS[k].list_names(source, ns)]
                if _namespace_exists(target, ns):
                    found += [(k, tuple(i)) for i in KINDS[k].list_names(target, ns)]
    for name in names:
        parts = parse_namespace(name)
        hits = [(k, parts) for k in kinds if len(parts) > 1
                and any(_locate(c, KINDS[k], parts) is not None for c in (source, target))]
        if hits:
            found += hits
            continue
        if not (_namespace_exists(source, parts) or _namespace_exists(target, parts)):
            raise NotFoundError(f"{name} is neither a table, a view nor a namespace in catalog {source.name} "
                                f"or {target.name}")
        for k in kinds:
            for c in (source, target):
                found += [(k, tuple(i)) for i in _below(c, KINDS[k], parts)]
    seen: set[tuple[str, Identifier]] = set()
    out = []
    for item in found:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return sorted(out, key=lambda x: (x[1], x[0]))


def classify(source: Catalog, target: Catalog, kind: str, ident: Identifier) -> MigrationEntry:
    """What to do with one entry, from where it is now."""
    k = KINDS[kind]
    src = _locate(source, k, ident)
    dst = _locate(target, k, ident)
    entry = MigrationEntry(kind, ident_str(ident), MIGRATE, src, dst)
    if src is None and dst is None:
        entry.action, entry.detail = DONE, "in neither catalog any more"
    elif src is None:
        entry.action = DONE
    elif dst is None:
        entry.action = MIGRATE
        refusal = _target_refusal(source, target, k, ident)
        if refusal is not None:
            entry.action, entry.detail, entry.exit_code = refusal
    elif src == dst:
        entry.action = FINISH
    elif k.kept(target) is not None and not _differences(source, target, k, ident, src, dst):
        entry.action, entry.detail = FINISH, _not_carried(target)  # the target made its own file of it
    else:
        entry.action, entry.exit_code = CONFLICT, int(ExitCode.CONFLICT)
        entry.detail = (f"registered in both catalogs at different metadata files; neither is changed "
                        f"(remove the wrong one, e.g. icectl -c {target.name} drop {ident_str(ident)}, and run again)")
    return entry


def _target_refusal(source: Catalog, target: Catalog, kind: Kind,
                    ident: Identifier) -> tuple[str, str, int] | None:
    """(action, why, exit code) when the target cannot take this entry (its metadata unreadable, or
    a format version the target cannot hold), or None."""
    if kind.name == VIEW:
        return _view_refusal(source, target, ident)
    try:
        md = source.load(ident).metadata
    except IcectlError as e:
        return UNREADABLE, f"cannot read its metadata in {source.name}: {e.message}", int(e.exit_code)
    if md.format_version >= 4 and not target.supports_v4:
        return UNSUPPORTED, f"format version 4 tables cannot live in a {target.kind} catalog", int(ExitCode.UNSUPPORTED)
    return None


def _view_refusal(source: Catalog, target: Catalog, ident: Identifier) -> tuple[str, str, int] | None:
    try:
        source.load_view(ident)
    except IcectlError as e:
        return UNREADABLE, f"cannot read its view metadata in {source.name}: {e.message}", int(e.exit_code)
    if not target.supports_views:
        return UNSUPPORTED, f"the {target.kind} catalog {target.name} has no views", int(ExitCode.UNSUPPORTED)
    if not source.view_drop_keeps_files and target.registers_view_files:
        return UNSUPPORTED, (f"the {source.kind} catalog {source.name} deletes a view's current metadata file when "
                             f"the view is dropped, and {target.name} would point at that file; left in "
                             f"{source.name} (re-create it in {target.name} from its SQL)"), int(ExitCode.UNSUPPORTED)
    return None


def _not_carried(target: Catalog) -> str:
    return HISTORY_NOT_CARRIED.format(target=target.kind, name=target.name)


def plan_migration(source: Catalog, target: Catalog, names: list[str], *, all_entries: bool = False,
                   keep_source: bool = False) -> MigrationPlan:
    if target.read_only or target.kind == "file-system":
        raise UnsupportedError(f"a {target.kind} catalog cannot register tables: it cannot be the target",
                               hint="migrate to a SQL, REST, Hive or Glue catalog")
    if source.kind == "file-system" and not keep_source:
        raise UnsupportedError("a file-system catalog cannot drop a table without deleting its files",
                               hint="use --keep-source, then remove the source entry yourself")
    selected = select(source, target, names, all_entries=all_entries)
    entries = [classify(source, target, kind, ident) for kind, ident in selected]
    for e in entries:
        if e.action == MIGRATE and KINDS[e.kind].kept(target) is not None:
            e.detail = _not_carried(target)
    wanted = sorted({e.ident[:-1] for e in entries if e.action == MIGRATE})
    missing = [".".join(ns) for ns in wanted if not _namespace_exists(target, ns)]
    return MigrationPlan(source.name, target.name, keep_source, entries, namespaces_to_create=missing)


# -- applying -------------------------------------------------------------------------------------

# Steps reported to ``progress`` (after each took effect): the CLI shows them, a test can act at one
# (a commit in the source between the check and the re-read of its location, say).
REGISTERED, VERIFIED, SOURCE_DROPPED = "registered", "verified", "source dropped"


def apply_migration(source: Catalog, target: Catalog, plan: MigrationPlan, *,
                    progress: Callable[[MigrationEntry, str], None] | None = None) -> MigrationPlan:
    """Carry out ``plan`` entry by entry, each classified again first (a re-run, or another run, may
    have moved it since the plan). An error in one entry is recorded (FAILED, its exit code) and the
    others go on; an interrupted run leaves each entry in at least one catalog."""
    notify = progress or (lambda e, step: None)
    for ns in plan.namespaces_to_create:
        _create_namespace(source, target, parse_namespace(ns), plan)
    for entry in plan.entries:
        if entry.action not in (MIGRATE, FINISH):
            entry.outcome = entry.action
            continue
        try:
            _apply_entry(source, target, entry, keep_source=plan.keep_source, notify=notify)
        except IcectlError as e:
            entry.outcome, entry.detail, entry.exit_code = FAILED, e.message, int(e.exit_code)
    return plan


def _create_namespace(source: Catalog, target: Catalog, ns: Identifier, plan: MigrationPlan) -> None:
    try:
        props = source.load_namespace_properties(ns)
    except (NoSuchNamespaceError, UnsupportedError):
        props = {}
    props = {k: v for k, v in props.items() if k != "exists"}  # the SQL catalog's marker row
    for level in range(1, len(ns) + 1):
        part = ns[:level]
        if _namespace_exists(target, part):
            continue
        try:
            target.create_namespace(part, props if part == ns else {})
            plan.namespaces_created.append(".".join(part))
        except AlreadyExistsError:  # another run made it at the same moment
            pass


def _apply_entry(source: Catalog, target: Catalog, planned: MigrationEntry, *, keep_source: bool,
                 notify: Callable[[MigrationEntry, str], None]) -> None:
    kind = KINDS[planned.kind]
    ident = planned.ident
    now = classify(source, target, planned.kind, ident)
    planned.source_metadata_location = now.source_metadata_location
    planned.target_metadata_location = now.target_metadata_location
    if now.action not in (MIGRATE, FINISH):
        planned.outcome, planned.detail, planned.exit_code = now.action, now.detail, now.exit_code
        return
    registered = now.source_metadata_location
    assert registered is not None
    at = now.target_metadata_location  # the target's metadata location once registered
    if now.action == MIGRATE:
        try:
            at = kind.register(target, ident, registered)
        except AlreadyExistsError:  # registered by someone else since: look again, never overwrite
            again = classify(source, target, planned.kind, ident)
            if again.action != FINISH:
                planned.outcome, planned.detail, planned.exit_code = again.action, again.detail, again.exit_code
                planned.target_metadata_location = again.target_metadata_location
                return
            at = again.target_metadata_location
        planned.target_metadata_location = at
        notify(planned, REGISTERED)
    _verify(source, target, kind, ident, registered)
    if kind.kept(target) is not None:
        planned.detail = _not_carried(target)
    notify(planned, VERIFIED)
    current = kind.locate(source, ident)
    if current != registered:
        planned.source_metadata_location = current
        planned.outcome, planned.exit_code = CHANGED, int(ExitCode.CONFLICT)
        planned.detail = (f"the source committed {current} while it was migrated; left in {source.name} "
                          f"(run again to migrate it with that commit)")
        if now.action == MIGRATE and at is not None and _locate(target, kind, ident) == at:
            kind.drop(target, ident)  # our own entry, still at the file we registered: the source has it all
            planned.target_metadata_location = None
        return
    if keep_source:
        planned.outcome = COPIED
        return
    kind.drop(source, ident)
    planned.source_metadata_location = None
    planned.outcome = MIGRATED if now.action == MIGRATE else FINISHED
    notify(planned, SOURCE_DROPPED)


def _verify(source: Catalog, target: Catalog, kind: Kind, ident: Identifier, registered: str) -> None:
    """The target loads the very metadata the source pointed at: same metadata file, uuid, current
    snapshot and refs for a table; view uuid, current version id and its content for a view; only
    what is kept (:attr:`Kind.kept`) when the target wrote its own file (CommitConflictError naming
    what differs)."""
    t_loc, t_id = kind.load(target, ident)
    diffs = _compare(target, kind, registered, t_loc, t_id, kind.read(source, registered))
    if diffs:
        raise CommitConflictError(f"{ident_str(ident)} in {target.name} is not the {kind.name} of {source.name}: "
                                  + "; ".join(diffs))


def _compare(target: Catalog, kind: Kind, registered: str, t_loc: str, t_id: dict, s_id: dict) -> list[str]:
    kept = kind.kept(target)
    diffs = []
    if kept is None and t_loc != registered:
        diffs.append(f"metadata location {t_loc} (registered {registered})")
    keys = [key for key in t_id if kept is None or key in kept]
    return diffs + [f"{key} {t_id[key]!r} (source {s_id[key]!r})" for key in keys if t_id[key] != s_id[key]]


def _differences(source: Catalog, target: Catalog, kind: Kind, ident: Identifier, src: str, dst: str) -> list[str]:
    """What differs between the source's entry (at ``src``) and the target's (at ``dst``); a file
    that cannot be read differs."""
    try:
        t_loc, t_id = kind.load(target, ident)
        return _compare(target, kind, src, t_loc, t_id, kind.read(source, src))
    except IcectlError as e:
        return [e.message]
