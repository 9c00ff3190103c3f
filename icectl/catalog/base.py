"""The catalog contract: where a table's current metadata lives, and how a change is committed.

Every change is ``commit(identifier, requirements, updates)``, the REST catalog spec's shape: a
REST catalog sends them to its server, which applies them. The SQL and file-system catalogs are
:class:`MetastoreCatalog`s: they check the requirements against the table's current metadata,
apply the updates with :mod:`icectl.table.builder`, write the next metadata file and move the
pointer with a compare-and-set; when another commit moved it first they report a conflict, which
the caller's :class:`~icectl.table.transaction.Transaction` answers by planning again (spec:
"Commit Conflict Resolution and Retry"; the one retry loop is the transaction's).

A table state that no update can express (a restore that adds back snapshots an expire removed) is
made current with :meth:`Catalog.replace_metadata`, which every writable catalog implements.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Iterator

from icectl.errors import CommitConflictError, IcectlError, NotFoundError, UnsupportedError, UsageError
from icectl.io import FileIO, normalize_location, resolve_path
from icectl.io.safety import table_guard
from icectl.spec.metadata import TableMetadata
from icectl.spec.properties import METADATA_DELETE_AFTER_COMMIT_ENABLED
from icectl.table.catalog_contract import TableState, ViewState
from icectl.table.identifier import Identifier, ident_str, parse_identifier
from icectl.table.metadata_io import (metadata_bytes, metadata_file_version, new_metadata_location, read_metadata_file,
                                     read_view_metadata_file)

if TYPE_CHECKING:
    from icectl.table.requirements import TableRequirement
    from icectl.table.updates import TableUpdate

__all__ = ["Catalog", "Identifier", "ListedTable", "MetastoreCatalog", "NamespacePropertiesChange", "ViewState",
           "ident_str", "metadata_file_version", "parse_identifier", "read_view_metadata_file"]

class Catalog(ABC):
    """A named catalog with a warehouse and a file IO."""

    name: str
    io: FileIO
    supports_v4: bool = True
    read_only: bool = False
    kind: str = "catalog"

    @abstractmethod
    def load(self, ident: Identifier) -> TableState:
        """The table's current metadata; NoSuchTableError if there is none."""

    @abstractmethod
    def commit(self, ident: Identifier, requirements: list[TableRequirement], updates: list[TableUpdate], *,
               now_ms: int | None = None, base_location: str | None = None) -> TableState:
        """Apply ``updates`` if ``requirements`` hold (``assert-create``: create the table).

        Raises CommitConflictError (a requirement failed, or the table moved too often) and the
        errors of the builder for updates the table does not allow. ``now_ms`` is the commit
        time where the catalog applies the updates itself (a server uses its own clock).
        ``base_location`` is the metadata file the caller planned against: a catalog that moves
        the pointer itself compares-and-sets from exactly that file (any commit in between is a
        conflict the caller re-plans for); a server ignores it and relies on the requirements."""

    @abstractmethod
    def default_table_location(self, ident: Identifier) -> str: ...

    def load_metadata_location(self, ident: Identifier) -> str:
        return self.load(ident).metadata_location

    def pointer_location(self, ident: Identifier) -> str:
        """The metadata file the catalog names as current, whether or not it exists (the
        file-system catalog's ``vN`` of its version hint even when that file is gone);
        NoSuchTableError if the catalog has no such table."""
        return self.load_metadata_location(ident)

    def previous_metadata_location(self, ident: Identifier) -> str | None:
        """The metadata file that was current before the current one, where the catalog keeps it
        (SQL/JDBC, Hive and Glue: ``previous_metadata_location``); None elsewhere. Reads only the
        catalog's record, never a metadata file (a restore from a broken current file uses it)."""
        return None

    def io_for(self, ident: Identifier) -> FileIO:
        """The FileIO for a table's files: the catalog's, with the storage properties the catalog
        handed out when it last loaded the table (REST: vended credentials) merged over it."""
        return self.io

    # -- namespaces ---------------------------------------------------------------------------
    # A namespace is a tuple of one or more levels; ("a", "b") is "a.b" on the command line.
    def list_namespaces(self, parent: Identifier | None = None) -> list[Identifier]:
        """Namespaces, sorted. ``parent=None``: every namespace of the catalog, at any depth;
        ``parent=()``: the top-level ones; ``parent=("a",)``: those directly below ``a``
        (NoSuchNamespaceError when ``a`` does not exist)."""
        raise UnsupportedError(f"the {self.kind} catalog cannot list namespaces")

    def create_namespace(self, namespace: Identifier, properties: dict[str, str] | None = None) -> None:
        """Create a namespace with ``properties``; AlreadyExistsError when it exists."""
        raise UnsupportedError(f"the {self.kind} catalog cannot create namespaces")

    def drop_namespace(self, namespace: Identifier) -> None:
        """Drop an empty namespace; NoSuchNamespaceError when it does not exist,
        NamespaceNotEmptyError when it holds tables."""
        raise UnsupportedError(f"the {self.kind} catalog cannot drop namespaces")

    def load_namespace_properties(self, namespace: Identifier) -> dict[str, str]:
        """A namespace's properties; NoSuchNamespaceError when it does not exist."""
        raise UnsupportedError(f"the {self.kind} catalog has no namespace properties")

    def update_namespace_properties(self, namespace: Identifier, *, updates: dict[str, str] | None = None,
                                    removals: Iterable[str] = ()) -> NamespacePropertiesChange:
        """Set ``updates`` and remove ``removals`` (a key may not be in both); report which keys
        were updated, removed, and asked to be removed but missing."""
        raise UnsupportedError(f"the {self.kind} catalog cannot change namespace properties")

    # -- tables -------------------------------------------------------------------------------
    def list_tables(self, namespace: Identifier | None = None) -> list[Identifier]:
        """Tables, sorted: of one namespace (NoSuchNamespaceError when it does not exist), or of
        every namespace when ``namespace`` is None."""
        raise UnsupportedError(f"the {self.kind} catalog cannot list tables")

    def walk_tables(self) -> Iterator[ListedTable]:
        """Every table of the catalog, in every namespace at any depth, as a stream: namespace by
        namespace (a catalog whose listing comes in pages reads it a page at a time), so that a
        catalog of any size is walked without holding its tables. The order is the catalog's own (a
        namespace's tables before the namespaces below it); a table dropped or added during the
        walk may or may not appear."""
        for ns in self.list_namespaces(None):
            for ident in self.list_tables(ns):
                yield ListedTable(ident)

    def walk_views(self) -> Iterator[Identifier]:
        """Every view of the catalog, namespace by namespace (depth first, each namespace once),
        as a stream; none for a catalog without views. A namespace dropped during the walk is
        passed over."""
        if not self.supports_views:
            return
        seen: set[Identifier] = set()
        todo = [tuple(n) for n in reversed(self.list_namespaces(None))]
        while todo:
            ns = todo.pop()
            if ns in seen:
                continue
            seen.add(ns)
            try:
                views = self.list_views(ns)
                children = self.list_namespaces(ns)
            except NotFoundError:
                continue
            yield from views
            todo += [tuple(c) for c in reversed(children) if tuple(c) not in seen]

    def load_listed(self, table: ListedTable) -> TableState:
        """The current state of a table :meth:`walk_tables` found (from the metadata location the
        listing already holds, when it holds one, without asking the catalog again)."""
        return self.load(table.identifier)

    def drop_table(self, ident: Identifier, *, purge: bool = False) -> None:
        """Remove the table from the catalog; NoSuchTableError when it does not exist. ``purge``
        asks for the table's files to go too: a REST catalog sends ``purgeRequested=true`` and its
        server deletes them; a SQL catalog drops only its entry (deleting the files is the job of
        the operation that asks for a purge, after the drop); a file-system table is its folder,
        so that catalog cannot drop one without deleting it and refuses."""
        raise UnsupportedError(f"the {self.kind} catalog cannot drop tables")

    def rename_table(self, source: Identifier, destination: Identifier) -> None:
        """Rename (or move to another namespace) a table; NoSuchTableError for a missing source,
        NoSuchNamespaceError for a missing destination namespace, AlreadyExistsError for a taken
        destination. Files stay where they are."""
        raise UnsupportedError(f"the {self.kind} catalog cannot rename tables")

    def replace_metadata(self, ident: Identifier, base_location: str, metadata: TableMetadata) -> TableState:
        """Make ``metadata`` the table's current metadata, written as its next metadata file, if the
        table is still at ``base_location`` (CommitConflictError when it moved): register with
        overwrite, guarded by the base. For a table state that no update can express (a restore
        that adds back snapshots an expire removed: their sequence numbers are behind the table's,
        which the builder of every catalog refuses in ``add-snapshot``); every other change is a
        :meth:`commit`."""
        raise UnsupportedError(f"the {self.kind} catalog cannot replace a table's metadata")

    def register_table(self, ident: Identifier, metadata_location: str, *, overwrite: bool = False) -> TableState:
        """Add an existing metadata file to the catalog as table ``ident``; AlreadyExistsError
        when the name is taken, unless ``overwrite`` (then the table points at the file)."""
        raise UnsupportedError(f"the {self.kind} catalog cannot register tables")

    # -- views (the view spec; REST /views, JDBC iceberg_type 'VIEW', Hive VIRTUAL_VIEW) -----------
    # Catalogs that hold views set ``supports_views``; the others refuse every view method with
    # one line (UnsupportedError), and ``list`` shows no views for them.
    supports_views: bool = False
    # Whether ``register_view`` points the catalog at the given file, history and all (False: a
    # REST server without ``register-view`` creates the view from the file's current version).
    registers_view_files: bool = True
    # Whether ``drop_view`` leaves the view's metadata files in place (False: Iceberg Java's REST
    # server deletes the current one, so no other catalog may point at it).
    view_drop_keeps_files: bool = True

    def _no_views(self) -> UnsupportedError:
        return UnsupportedError(f"the {self.kind} catalog {self.name} has no views",
                                hint="views live in REST, SQL (JDBC) and Hive catalogs")

    def list_views(self, namespace: Identifier | None = None) -> list[Identifier]:
        """Views, sorted: of one namespace (NoSuchNamespaceError when it does not exist), or of
        every namespace when ``namespace`` is None."""
        raise self._no_views()

    def load_view(self, ident: Identifier) -> ViewState:
        """The view's current metadata file and its content; NoSuchViewError if there is none
        (also when ``ident`` is a table)."""
        raise self._no_views()

    def view_exists(self, ident: Identifier) -> bool:
        """Whether ``ident`` is a view of this catalog (False for a catalog without views)."""
        if not self.supports_views:
            return False
        try:
            self.load_view_metadata_location(ident)
        except NotFoundError:  # no such view, or no such namespace
            return False
        return True

    def load_view_metadata_location(self, ident: Identifier) -> str:
        """The view's current metadata file (without reading it); NoSuchViewError."""
        return self.load_view(ident).metadata_location

    def drop_view(self, ident: Identifier) -> None:
        """Remove the view from the catalog; NoSuchViewError. SQL and Hive keep its metadata files
        (Iceberg Java's dropView deletes the current one); a REST server does as it does
        (Iceberg Java's server deletes the current one)."""
        raise self._no_views()

    def register_view(self, ident: Identifier, metadata_location: str) -> ViewState:
        """Add an existing view metadata file to the catalog as view ``ident``: the catalog then
        points at that file, history and all (SQL, Hive; a REST server with ``register-view``).
        AlreadyExistsError when the name is taken by a table or a view, NoSuchNamespaceError when
        its namespace does not exist (Hive) and InvalidMetadataError when the file is not view
        metadata. A REST server without ``register-view`` (Iceberg Java 1.10's) gets the view
        created from the file's current version instead: see :meth:`RestCatalog.register_view`."""
        raise self._no_views()


@dataclass(frozen=True)
class ListedTable:
    """A table as a catalog's listing names it (:meth:`Catalog.walk_tables`)."""

    identifier: Identifier
    # The current metadata file when the listing holds it (a SQL catalog's row); None when only
    # loading the table tells it (REST, Hive, Glue, file-system).
    metadata_location: str | None = None


@dataclass(frozen=True)
class NamespacePropertiesChange:
    """What :meth:`Catalog.update_namespace_properties` did (the REST spec's
    UpdateNamespacePropertiesResponse)."""

    updated: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()


def check_property_changes(updates: dict[str, str] | None, removals: Iterable[str]) -> tuple[dict[str, str], list[str]]:
    updates = dict(updates or {})
    removals = list(dict.fromkeys(removals))
    both = sorted(set(updates) & set(removals))
    if both:
        raise UsageError(f"a namespace property cannot be both set and removed: {', '.join(both)}")
    return updates, removals


class MetastoreCatalog(Catalog):
    """A catalog whose pointer icectl moves itself: it applies the updates with the builder.

    Subclasses give the pointer's primitives: :meth:`load_metadata_location`,
    :meth:`_create_pointer` (write the first file and register the table) and :meth:`_swap_pointer`
    (write the next file and compare-and-set)."""

    @abstractmethod
    def load_metadata_location(self, ident: Identifier) -> str:
        """The current metadata file of a table; NoSuchTableError if there is none."""

    @abstractmethod
    def _create_pointer(self, ident: Identifier, md: TableMetadata, location: str) -> str:
        """Write ``md`` (at ``location``, or where the catalog names its files) and register the
        table; AlreadyExistsError if it exists. Return the file written."""

    @abstractmethod
    def _swap_pointer(self, ident: Identifier, base_location: str, md: TableMetadata, location: str) -> str:
        """Write ``md`` (at ``location``, or where the catalog names its files) and move the
        pointer from ``base_location``; CommitConflictError when it moved. Return the new file."""

    def _check_format_version(self, location: str, md: TableMetadata) -> None:
        if md.format_version >= 4 and not self.supports_v4:
            raise UnsupportedError(f"{location}: format version 4 tables cannot live in a {self.kind} catalog (v4 "
                                   "needs a metastore catalog)",
                                   hint="register the metadata file in a SQL catalog: icectl register")

    def load(self, ident: Identifier) -> TableState:
        return self._load_from(ident, self.load_metadata_location(ident))

    def load_listed(self, table: ListedTable) -> TableState:
        if table.metadata_location is None:
            return self.load(table.identifier)
        return self._load_from(table.identifier, table.metadata_location)

    def _load_from(self, ident: Identifier, location: str) -> TableState:
        md = read_metadata_file(self.io, location)
        self._check_format_version(location, md)
        if md.location is None and md.format_version >= 4:
            # v4: "location ... becomes optional - the catalog can supply it".
            md = md.replace(location=self.default_table_location(ident))
        return TableState(location, md)

    def commit(self, ident: Identifier, requirements: list[TableRequirement], updates: list[TableUpdate], *,
               now_ms: int | None = None, base_location: str | None = None) -> TableState:
        self._check_writable()
        # The commit machinery is imported here, not at the top: read-only commands (describe,
        # snapshots, files) do not pay for loading it (bench/bench_startup.py: describe 6 % slower).
        from icectl.table.builder import MetadataBuilder
        from icectl.table.requirements import AssertCreate, validate_requirements

        if any(isinstance(r, AssertCreate) for r in requirements):
            return self._create(ident, requirements, updates, now_ms=now_ms)
        base = self.load(ident)
        if base_location is not None and base.metadata_location != base_location:
            raise CommitConflictError(f"table {ident_str(ident)} changed since it was read (its metadata "
                                      f"location is no longer {base_location})")
        validate_requirements(requirements, base.metadata)
        builder = MetadataBuilder(base.metadata, now_ms=now_ms).apply(updates)
        if not builder.has_changes:
            return base
        md = builder.build(previous_location=base.metadata_location)
        # Read before the swap: a bad value must fail the commit, not follow its success.
        delete_old = METADATA_DELETE_AFTER_COMMIT_ENABLED.read(md.properties)
        # Another commit may move the pointer between the load and the swap: a conflict the
        # caller's transaction answers (spec: "Commit Conflict Resolution and Retry").
        location = self._swap(ident, base.metadata_location, md)
        table_location = md.location or self.default_table_location(ident)
        deleted = _delete_removed_metadata_files(self.io, base.metadata, md, table_location) if delete_old else []
        return TableState(location, md, deleted_metadata_files=tuple(deleted))

    def replace_metadata(self, ident: Identifier, base_location: str, metadata: TableMetadata) -> TableState:
        self._check_writable()
        return TableState(self._swap(ident, base_location, metadata), metadata)

    def _check_writable(self) -> None:
        if self.read_only:
            raise UnsupportedError("a table opened by path is read-only: use a catalog to change it",
                                   hint="register the metadata file in a catalog first")

    def _swap(self, ident: Identifier, base_location: str, md: TableMetadata) -> str:
        """Write ``md`` as the table's next metadata file and move the pointer from ``base_location``."""
        table_location = md.location or self.default_table_location(ident)
        self._check_format_version(base_location, md)
        location = new_metadata_location(md, table_location, base_location)
        return self._swap_pointer(ident, base_location, md, location)

    def _create(self, ident: Identifier, requirements: list[TableRequirement], updates: list[TableUpdate], *,
                now_ms: int | None) -> TableState:
        from icectl.table.builder import MetadataBuilder  # as in commit: loaded when a commit is applied
        from icectl.table.requirements import validate_requirements
        from icectl.table.updates import UpgradeFormatVersion

        validate_requirements(requirements, None)
        fv = next((u.format_version for u in updates if isinstance(u, UpgradeFormatVersion)), None)
        md = MetadataBuilder(None, format_version=fv, now_ms=now_ms).apply(updates).build()
        table_location = md.location or self.default_table_location(ident)
        self._check_format_version(table_location, md)
        location = new_metadata_location(md, table_location, None)
        location = self._create_pointer(ident, md, location)
        return TableState(location, md)

    def write_metadata(self, location: str, md: TableMetadata) -> None:
        self.io.write(location, metadata_bytes(md, location))


def _delete_removed_metadata_files(io: FileIO, base: TableMetadata, new: TableMetadata,
                                   table_location: str) -> list[str]:
    """Delete the metadata files that fell off the metadata log (when the table sets
    ``write.metadata.delete-after-commit.enabled``), after the commit succeeded (as Iceberg Java's TableOperations), and
    never one outside the table location."""
    kept = {e.metadata_file for e in new.metadata_log}
    root = normalize_location(table_location) + "/"
    paths = []
    for e in base.metadata_log:
        path = resolve_path(table_location, e.metadata_file, base.format_version)
        if e.metadata_file in kept or not normalize_location(path).startswith(root):
            continue
        paths.append(path)
    try:
        failed = io.delete_many(paths, guard=table_guard(io, table_location))  # one not deleted becomes an orphan
    except (IcectlError, OSError):
        return []
    return [p for p in paths if p not in failed]

