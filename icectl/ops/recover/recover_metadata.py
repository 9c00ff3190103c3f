"""Restore a table whose current metadata file is broken: truncated, emptied, not valid table
metadata, a file of another table, or gone.

No command can load such a table (exit 4, or 3 for a missing file), so :mod:`restore`'s commit on
top of today's metadata is impossible. This module reads only the catalog's record and files:

- candidates: every ``*.metadata.json`` (``.gz``) of the folder the catalog's pointer names, by
  version number and then modification time; the catalog's ``previous_metadata_location`` where it
  keeps one (SQL/JDBC, Hive, Glue); the metadata log of every readable candidate;
- a candidate is *good* when it parses and ``validate``'s metadata checks find no error in it, it
  belongs to the table (its ``table-uuid`` is the one of the files that live in the table's
  metadata folder: a file copied from another table is refused), and the manifest lists,
  manifests and live files of its branch and tag heads all exist;
- the newest good candidate (or the one ``--to-metadata``/``--to-version`` names) becomes current
  through the catalog's own compare-and-set against the broken location
  (:meth:`~icectl.catalog.base.Catalog.replace_metadata`: SQL and PostgreSQL compare-and-set the
  pointer, Hive under its lock, Glue with its version id, the file-system catalog writes the next
  ``vN``; a REST catalog registers with ``overwrite`` where the server offers it). The file made
  current is a copy of the good file written as the table's next metadata file, whose metadata log
  gains the good file: a later commit numbers its files after the broken one, never reusing a name.

Nothing is written on a plan (``--dry-run``), and the broken file is never deleted.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from icectl.catalog.base import Catalog
from icectl.errors import (
    CommitConflictError,
    IcectlError,
    InvalidMetadataError,
    NoSuchTableError,
    NotFoundError,
    UnsupportedError,
    UsageError,
)
from icectl.io import FileIO
from icectl.ops.recover.restore import MissingFile, check_files
from icectl.spec.metadata import MetadataLogEntry, TableMetadata
from icectl.table.identifier import Identifier, ident_str
from icectl.table.loaded import Table
from icectl.table.metadata_io import metadata_file_version, metadata_folder, read_metadata_bytes
from icectl.validate.codes import Severity
from icectl.validate.findings import Collector
from icectl.validate.metadata import check_metadata

METADATA_SUFFIXES = (".metadata.json", ".metadata.json.gz")


@dataclass
class Candidate:
    """A metadata file that could be the table's, and what was found when it was read."""

    location: str
    version: int  # from its name; -1 when it has none
    found_in: str  # metadata folder | catalog previous_metadata_location | metadata log of <file> | catalog pointer
    modified_ms: int | None
    problem: str | None = None  # why it cannot be restored; None for a good one
    table_uuid: str | None = None
    metadata: TableMetadata | None = field(default=None, repr=False)


@dataclass
class RecoveryPlan:
    table: str
    metadata_location: str  # the catalog's current (broken) file
    broken: str | None  # what is wrong with it; None when it is readable, valid and the table's
    table_uuid: str | None
    restore_from: str | None  # the good file chosen; None when none was found (or none is needed)
    restore_from_version: int
    restore_from_timestamp_ms: int | None
    current_snapshot_id_after: int | None
    refs_after: dict[str, int]
    schema_id_after: int | None
    checked_files: int
    missing_files: list[MissingFile]
    candidates: list[Candidate]  # newest first, each with its problem (None: good)
    metadata: TableMetadata | None = field(default=None, repr=False)  # the chosen file's content

    @property
    def needed(self) -> bool:
        return self.broken is not None


def _plain(path: str) -> str:
    for prefix in ("file://", "file:"):
        if path.startswith(prefix):
            path = path[len(prefix):]
            break
    return path.rstrip("/")


def _folder(path: str) -> str:
    return _plain(path).rsplit("/", 1)[0]


def _is_metadata_name(path: str) -> bool:
    return path.endswith(METADATA_SUFFIXES)


def table_io(catalog: Catalog, ident: Identifier) -> FileIO:
    """The FileIO for the table's files (the catalog's, when it hands out none without loading)."""
    try:
        return catalog.io_for(ident)
    except IcectlError:
        return catalog.io


def read_candidate(io: FileIO, c: Candidate, catalog: Catalog) -> None:
    """Read and check ``c``: its problem, table-uuid and metadata (validate's metadata checks)."""
    try:
        raw = read_metadata_bytes(io, c.location)
    except NotFoundError:
        c.problem = "the file does not exist"
        return
    except IcectlError as e:
        c.problem = e.message
        return
    if not raw.strip():
        c.problem = "the file is empty"
        return
    out = Collector()
    try:
        md = check_metadata(raw, c.location, out, catalog_kind=catalog.kind, supports_v4=catalog.supports_v4)
    except IcectlError as e:
        c.problem = e.message
        return
    errors = [f for f in out.findings if f.severity == Severity.ERROR]
    if md is not None:
        c.metadata, c.table_uuid = md, md.table_uuid
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        c.problem = f"not valid table metadata: {errors[0].code}: {errors[0].message}{more}"
    elif md is None:
        c.problem = "not valid table metadata"


def at_home(c: Candidate, folder: str) -> bool:
    """The file's own metadata says it lives in ``folder`` (its location's metadata folder)."""
    md = c.metadata
    if md is None or not md.location:
        return False
    return _plain(metadata_folder(md, md.location)) == folder


def gather(catalog: Catalog, ident: Identifier, io: FileIO, pointer: str) -> tuple[Candidate, list[Candidate]]:
    """The current file and every other candidate, read and checked, newest first."""
    folder = _folder(pointer)
    current = Candidate(pointer, metadata_file_version(pointer), "catalog pointer", None)
    read_candidate(io, current, catalog)
    found: dict[str, Candidate] = {_plain(pointer): current}
    todo: list[Candidate] = []

    def add(location: str, found_in: str, modified_ms: int | None = None) -> None:
        key = _plain(location)
        if key in found:
            return
        c = Candidate(location, metadata_file_version(location), found_in, modified_ms)
        found[key] = c
        todo.append(c)

    try:
        previous = catalog.previous_metadata_location(ident)
    except IcectlError:
        previous = None
    if previous:
        add(previous, "catalog previous_metadata_location")
    modified: dict[str, int | None] = {}
    try:
        for info in io.list_files(folder):
            if _is_metadata_name(info.path) and _folder(info.path) == folder:
                modified[_plain(info.path)] = info.modified_ms
                add(info.path, "metadata folder", info.modified_ms)
    except NotFoundError:
        pass
    for c in todo:
        if c.modified_ms is None:
            c.modified_ms = modified.get(_plain(c.location))
    if current.metadata is not None:
        for e in current.metadata.metadata_log:
            add(e.metadata_file, f"metadata log of {pointer.rsplit('/', 1)[-1]}")
    done: list[Candidate] = []
    while todo:
        c = todo.pop()
        read_candidate(io, c, catalog)
        done.append(c)
        if c.metadata is not None:
            for e in c.metadata.metadata_log:
                add(e.metadata_file, f"metadata log of {c.location.rsplit('/', 1)[-1]}")
    done.sort(key=lambda c: (c.version, c.modified_ms or (c.metadata.last_updated_ms if c.metadata else 0)),
              reverse=True)
    return current, done


def table_uuid_of(current: Candidate, others: list[Candidate], folder: str) -> str | None:
    """The table's uuid: the current file's when it lives in the table's folder, else the newest
    readable file's that does (a file copied in from another table names another folder)."""
    for c in [current] + others:
        if c.table_uuid and at_home(c, folder):
            return c.table_uuid
    return None


def judge(c: Candidate, uuid: str | None, folder: str) -> None:
    """Refuse a readable candidate of another table."""
    if c.problem is not None or c.metadata is None:
        return
    if uuid and c.table_uuid and c.table_uuid != uuid:
        c.problem = f"a metadata file of another table (table-uuid {c.table_uuid}, not {uuid})"
    elif not uuid and not at_home(c, folder):
        c.problem = f"a metadata file of another table (its location is {c.metadata.location})"


def matches(c: Candidate, metadata_file: str | None, version: str | None) -> bool:
    if version is not None:
        text = version.strip()
        digits = text[1:] if text.startswith("v") else text
        if not digits.isdigit():
            raise UsageError(f"invalid --to-version {version!r}: a metadata file version such as 3 or v3")
        return c.version == int(digits)
    assert metadata_file is not None
    if "/" in metadata_file:
        return _plain(c.location) == _plain(metadata_file)
    return c.location.rsplit("/", 1)[-1] == metadata_file.strip()


def plan_recovery(catalog: Catalog, ident: Identifier, *, metadata_file: str | None = None,
                  version: str | None = None) -> RecoveryPlan:
    """Find the metadata file to make current (see the module docstring); change nothing."""
    if metadata_file is not None and version is not None:
        raise UsageError("give at most one of --to-metadata and --to-version")
    name = ident_str(ident)
    try:
        pointer = catalog.pointer_location(ident)
    except NoSuchTableError:
        raise
    except IcectlError as e:
        # A catalog that reads the metadata file itself to say where the table points (REST: the
        # server loads the table) cannot name a broken file: only its operator can move the pointer.
        raise UnsupportedError(
            f"the {catalog.kind} catalog cannot say which metadata file {name} points at without reading it: "
            f"{e.message}",
            hint=f"ask the catalog's operator to point {name} at an earlier metadata file of its metadata folder "
                 "(a register with overwrite); icectl restore --dry-run on a catalog that names the file "
                 "(SQL, Hive, Glue, file-system) lists the candidates") from None
    io = table_io(catalog, ident)
    folder = _folder(pointer)
    current, others = gather(catalog, ident, io, pointer)
    if metadata_file is not None and "/" in metadata_file and not any(matches(c, metadata_file, None)
                                                                       for c in others + [current]):
        extra = Candidate(metadata_file, metadata_file_version(metadata_file), "--to-metadata", None)
        read_candidate(io, extra, catalog)
        others.insert(0, extra)
    uuid = table_uuid_of(current, others, folder)
    for c in [current] + others:
        judge(c, uuid, folder)
    broken = current.problem
    plan = RecoveryPlan(table=name, metadata_location=pointer, broken=broken, table_uuid=uuid, restore_from=None,
                        restore_from_version=-1, restore_from_timestamp_ms=None, current_snapshot_id_after=None,
                        refs_after={}, schema_id_after=None, checked_files=0, missing_files=[], candidates=others)
    explicit = metadata_file is not None or version is not None
    if broken is None and not explicit:
        return plan
    chosen = [c for c in others if matches(c, metadata_file, version)] if explicit else others
    if explicit and not chosen:
        what = f"version {version}" if version is not None else metadata_file
        raise NotFoundError(f"no metadata file {what} of {name} was found (looked in {folder}, the catalog's "
                            "previous metadata location and the metadata logs)",
                            hint=f"icectl restore {name} --dry-run lists the candidates")
    for c in chosen:
        if c.problem is not None:
            continue
        assert c.metadata is not None
        missing, checked = check_files(Table(ident, c.metadata, c.location, catalog, io=io))
        plan.checked_files += checked
        if missing:
            c.problem = (f"{len(missing)} file(s) its branch and tag heads read are gone "
                         f"(first: {missing[0].kind} {missing[0].path})")
            if explicit:
                plan.missing_files = missing
            continue
        md = c.metadata
        plan.restore_from, plan.restore_from_version, plan.metadata = c.location, c.version, md
        plan.restore_from_timestamp_ms = md.last_updated_ms
        plan.current_snapshot_id_after = md.current_snapshot_id
        plan.refs_after = {n: r.snapshot_id for n, r in md.all_refs.items()}
        plan.schema_id_after = md.current_schema_id
        break
    return plan


def check_recoverable(plan: RecoveryPlan) -> None:
    """Refuse a plan with no good file to restore."""
    if plan.restore_from is not None or not plan.needed:
        return
    if plan.missing_files:
        first = plan.missing_files[0]
        raise NotFoundError(f"cannot restore {plan.table}: {len(plan.missing_files)} file(s) the chosen metadata file "
                            f"needs are gone (first: {first.kind} {first.path})",
                            hint=f"icectl restore {plan.table} --dry-run finds the newest file whose files are all there")
    raise NotFoundError(f"no readable, valid metadata file of {plan.table} whose files are all there was found "
                        f"({len(plan.candidates)} candidate(s) looked at)",
                        hint="restore a backup of the metadata folder, or register a metadata file of the table "
                             "you have elsewhere: icectl register --overwrite")


def recovered_metadata(plan: RecoveryPlan) -> TableMetadata:
    """The chosen file's metadata, with the chosen file added to its metadata log (what becomes
    current)."""
    md = plan.metadata
    assert md is not None and plan.restore_from is not None
    if any(e.metadata_file == plan.restore_from for e in md.metadata_log):
        return md
    return md.replace(metadata_log=tuple(md.metadata_log) + (MetadataLogEntry(md.last_updated_ms, plan.restore_from),))


def apply_recovery(catalog: Catalog, ident: Identifier, plan: RecoveryPlan) -> str:
    """Make the chosen file's state current with the catalog's compare-and-set against the broken
    location; return the metadata file written. The broken file stays."""
    check_recoverable(plan)
    if not plan.needed and plan.restore_from is None:
        raise UsageError(f"the current metadata file of {plan.table} is readable and valid: nothing to recover",
                         hint="restore --to-version N or --to-metadata FILE restores an earlier state as a commit")
    try:
        state = catalog.replace_metadata(ident, plan.metadata_location, recovered_metadata(plan))
    except CommitConflictError as e:
        raise CommitConflictError(f"{e.message}; nothing was changed", hint="run restore --dry-run again") from None
    except UnsupportedError as e:
        raise UnsupportedError(
            f"cannot move the pointer of {plan.table} over the {catalog.kind} catalog: {e.message}",
            hint=f"ask the catalog's operator to point {plan.table} at {plan.restore_from} (a register with "
                 "overwrite, or the catalog's own restore)") from None
    return state.metadata_location


def is_broken_table_error(e: IcectlError) -> bool:
    """An error loading a table that says its current metadata file is broken or gone (not that
    the catalog has no such table)."""
    return isinstance(e, InvalidMetadataError) or (isinstance(e, NotFoundError)
                                                   and not isinstance(e, NoSuchTableError))


__all__ = ["Candidate", "RecoveryPlan", "apply_recovery", "check_recoverable", "is_broken_table_error",
           "plan_recovery", "recovered_metadata"]
