"""Dropping and renaming tables.

``drop`` removes the table from its catalog; ``drop --purge`` also deletes every file the table's
metadata reaches, as Iceberg Java's ``CatalogUtil.dropTableData`` does: the content files, manifests
and manifest lists of every snapshot, the statistics and partition-statistics files, the metadata
files of the metadata log and the current one. icectl deletes only files under the table location
(paths compared after normalisation, as expire and remove-orphans do) and only after the catalog
drop succeeded; with ``gc.enabled=false`` the content files stay (other tables may share them), as
in Java.

Over REST the purge is the server's: icectl sends ``purgeRequested=true`` and deletes nothing
itself, as Iceberg Java's ``RESTSessionCatalog.purgeTable`` does (the server may hold files the
client cannot even reach); afterwards it checks which of the planned files are still there and
says so.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable

from icectl.errors import (AlreadyExistsError, ConflictingChangeError, IcectlError, NoSuchNamespaceError,
                           NoSuchTableError, UnsupportedError, UsageError)
from icectl.io import normalize_location
from icectl.ops.maintain.expire import FileToDelete, fill_sizes, delete_files, split_by_guard
from icectl.spec.properties import GC_ENABLED
from icectl.table.identifier import Identifier, ident_str
from icectl.table.loaded import Table
from icectl.table.reachability import (
    DATA, DELETION_VECTOR, EQUALITY_DELETES, KINDS, METADATA, PARTITION_STATISTICS, POSITION_DELETES, STATISTICS,
    Reachable, reachable_files,
)

CONTENT_KINDS = (DATA, POSITION_DELETES, EQUALITY_DELETES, DELETION_VECTOR)
PURGED_BY_ICECTL, PURGED_BY_SERVER = "icectl", "server"

Deleter = Callable[[list[FileToDelete]], "tuple[list[FileToDelete], list[tuple[str, str]]]"]


@dataclass
class DropPlan:
    """What dropping a table does: the catalog entry goes; with ``purge``, ``files`` go too (by
    icectl, or by a REST server), ``kept_files`` stay (content files of a table whose
    ``gc.enabled`` is false), and ``skipped_outside_location`` stay whatever happens."""

    table: str
    identifier: Identifier = field(repr=False)
    catalog: str
    catalog_kind: str
    location: str
    metadata_location: str
    purge: bool
    purged_by: str | None  # icectl | server | None (no purge)
    files: list[FileToDelete] = field(default_factory=list)
    kept_files: list[FileToDelete] = field(default_factory=list)
    skipped_outside_location: list[str] = field(default_factory=list)
    skipped_for_safety: list[tuple[str, str]] = field(default_factory=list)  # (path, why): the path guard refused


@dataclass
class DropResult:
    plan: DropPlan
    deleted: list[FileToDelete] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    # REST: planned files the server left in place (None: not checked, or no purge).
    still_present: list[str] | None = None


def _check_catalog_can_drop(catalog, what: str) -> None:
    if getattr(catalog, "read_only", False):
        raise UnsupportedError(f"cannot {what} a table opened by path: it is in no catalog",
                               hint="name it as NAMESPACE.TABLE in a catalog")
    if catalog.kind == "file-system":
        # A file-system table is its folder: there is no catalog entry to remove apart from its files.
        raise UnsupportedError(f"a file-system catalog cannot {what} tables: a table is its folder and its "
                               "metadata names files by their full paths",
                               hint="register the table in a SQL catalog to manage it there (icectl register)")


def purge_files(table: Table) -> Reachable:
    """Every file the table's metadata reaches (CatalogUtil.dropTableData's set)."""
    md = table.metadata
    found = reachable_files(table, md, md.snapshots)
    for st in md.statistics:
        found.add(table.resolve(st.statistics_path), STATISTICS, st.file_size_in_bytes)
    for st in md.partition_statistics:
        found.add(table.resolve(st.statistics_path), PARTITION_STATISTICS, st.file_size_in_bytes)
    for entry in md.metadata_log:
        found.add(table.resolve(entry.metadata_file), METADATA)
    found.add(table.metadata_location, METADATA)
    return found


def plan_drop(table: Table, *, purge: bool) -> DropPlan:
    catalog = table.catalog
    _check_catalog_can_drop(catalog, "drop")
    md = table.metadata
    location = md.location or catalog.default_table_location(table.identifier)
    rest = catalog.kind == "rest"
    plan = DropPlan(table=table.name, identifier=table.identifier, catalog=catalog.name, catalog_kind=catalog.kind,
                    location=location, metadata_location=table.metadata_location, purge=purge,
                    purged_by=(PURGED_BY_SERVER if rest else PURGED_BY_ICECTL) if purge else None)
    if not purge:
        return plan
    found = purge_files(table)
    gc = GC_ENABLED.read(md.properties)
    root = normalize_location(location) + "/"
    order = {k: i for i, k in enumerate(KINDS)}
    for path, kind in sorted(found.files.items(), key=lambda kv: (order.get(kv[1], 99), kv[0])):
        f = FileToDelete(path, kind, found.sizes.get(path))
        if not normalize_location(path).startswith(root):
            plan.skipped_outside_location.append(path)
        elif not gc and kind in CONTENT_KINDS:
            plan.kept_files.append(f)
        else:
            plan.files.append(f)
    if not rest:  # a server's purge is the server's; icectl deletes nothing itself
        plan.files, plan.skipped_for_safety = split_by_guard(table.io, location, plan.files)
    fill_sizes(table, [f for f in plan.files if f.size is None])  # manifest lists, metadata files
    return plan


def check_within_approved(plan: DropPlan, approved: DropPlan) -> None:
    """A table that moved since the plan was shown may be dropped only when its purge deletes no
    file the user did not see (ConflictingChangeError: nothing dropped, nothing deleted)."""
    more = sorted({f.path for f in plan.files} - {f.path for f in approved.files})
    if more:
        raise ConflictingChangeError(
            f"{plan.table} changed since the plan was shown: {len(more)} more files would be deleted "
            f"({more[0]}{', ...' if len(more) > 1 else ''}); nothing was dropped or deleted",
            hint="run drop again to see the new plan")


def apply_drop(table: Table, approved: DropPlan, *, delete: Deleter | None = None) -> DropResult:
    """Drop the table from its catalog, then (purge) delete the planned files. The table is read
    again first: a table that moved since ``approved`` was shown is re-planned, and refused when
    its purge would delete more."""
    catalog = table.catalog
    current = table.refresh()
    plan = approved
    if current.metadata_location != approved.metadata_location:
        plan = plan_drop(current, purge=approved.purge)
        check_within_approved(plan, approved)
    io = current.io
    catalog.drop_table(current.identifier, purge=approved.purge)
    result = DropResult(plan)
    if not plan.purge:
        return result
    if plan.purged_by == PURGED_BY_SERVER:
        result.still_present = _still_present(io, plan.files)
        return result
    if delete is None:
        delete = lambda fs: delete_files(io, fs, location=plan.location)  # noqa: E731
    result.deleted, result.failed = delete(plan.files)
    return result


def _still_present(io, files: list[FileToDelete]) -> list[str]:
    """Which of ``files`` exist (after a server's purge); a file that cannot be checked counts as
    present."""
    from concurrent.futures import ThreadPoolExecutor

    def there(f: FileToDelete) -> bool:
        try:
            return io.exists(f.path)
        except (IcectlError, OSError):
            return True

    with ThreadPoolExecutor(max_workers=8) as pool:
        return [f.path for f, yes in zip(files, pool.map(there, files)) if yes]


# -- rename -------------------------------------------------------------------------------------------------

@dataclass
class RenamePlan:
    source: str
    destination: str
    catalog: str
    location: str
    metadata_location: str


def plan_rename(table: Table, destination: Identifier) -> RenamePlan:
    """Check what a rename needs before anything is asked: the source exists (it was loaded), the
    destination is NAMESPACE.TABLE in an existing namespace and is not taken. Files stay where
    they are; only the catalog entry moves."""
    catalog = table.catalog
    _check_catalog_can_drop(catalog, "rename")
    if len(destination) < 2 or not all(destination):
        raise UsageError(f"invalid table name {ident_str(destination)!r}: expected NAMESPACE.TABLE")
    if tuple(destination) == tuple(table.identifier):
        raise UsageError(f"{table.name} is already named {ident_str(destination)}")
    try:
        catalog.load_namespace_properties(destination[:-1])
    except NoSuchNamespaceError:
        raise NoSuchNamespaceError(f"namespace {'.'.join(destination[:-1])} does not exist in catalog "
                                   f"{catalog.name}", hint="create it first: icectl namespace create") from None
    try:
        catalog.load_metadata_location(destination)
    except NoSuchTableError:
        pass
    else:
        raise AlreadyExistsError(f"table {ident_str(destination)} already exists in catalog {catalog.name}")
    return RenamePlan(table.name, ident_str(destination), catalog.name,
                      table.metadata.location or catalog.default_table_location(table.identifier),
                      table.metadata_location)


def apply_rename(table: Table, destination: Identifier) -> RenamePlan:
    plan = plan_rename(table, destination)
    table.catalog.rename_table(table.identifier, destination)
    return dataclasses.replace(plan)


__all__ = ["DropPlan", "DropResult", "RenamePlan", "apply_drop", "apply_rename", "plan_drop", "plan_rename",
           "purge_files"]
