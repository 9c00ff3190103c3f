"""The SQL catalog: the ``iceberg_tables`` / ``iceberg_namespace_properties`` tables that Iceberg
Java's JdbcCatalog and PyIceberg's SqlCatalog share, with a compare-and-set commit on
``metadata_location``. SQLite through the standard library; PostgreSQL through psycopg (the
``postgresql`` extra, see :mod:`icectl.catalog.postgres`).

Either side may create the two tables first: icectl creates them as PyIceberg does (with Iceberg
Java's V1 ``iceberg_type`` column, which JdbcCatalog then detects and uses), and works on Java's
V0 layout (no ``iceberg_type``) as it finds it. A commit is one ``UPDATE ... WHERE
metadata_location = <the base>`` in its own transaction, committed only when it changed exactly
one row, as JdbcTableOperations does.
"""
from __future__ import annotations

import os
import sqlite3
import threading
from typing import Any, Iterable, Iterator

from icectl.catalog.base import (Identifier, ListedTable, MetastoreCatalog, NamespacePropertiesChange,
                                 check_property_changes, ident_str)
from icectl.catalog.postgres import Server, connect, is_postgres_uri, query_error, redact_uri
from icectl.spec.metadata import TableMetadata
from icectl.table.catalog_contract import TableState, ViewState
from icectl.table.metadata_io import read_view_metadata_file
from icectl.errors import (AlreadyExistsError, CommitConflictError, CommitStateUnknownError, IcectlError,
                           NamespaceNotEmptyError, NoSuchNamespaceError, NoSuchTableError, NoSuchViewError,
                           NotFoundError, StorageError, UnsupportedError, UsageError)
from icectl.io import FileIO, join, local_path
from icectl.io.safety import table_guard

TABLES_DDL = """CREATE TABLE {if_not_exists}iceberg_tables (
  catalog_name VARCHAR(255) NOT NULL,
  table_namespace VARCHAR(255) NOT NULL,
  table_name VARCHAR(255) NOT NULL,
  metadata_location VARCHAR(1000),
  previous_metadata_location VARCHAR(1000),
  iceberg_type VARCHAR(5),
  PRIMARY KEY (catalog_name, table_namespace, table_name))"""
NAMESPACES_DDL = """CREATE TABLE {if_not_exists}iceberg_namespace_properties (
  catalog_name VARCHAR(255) NOT NULL,
  namespace VARCHAR(255) NOT NULL,
  property_key VARCHAR(255),
  property_value VARCHAR(1000),
  PRIMARY KEY (catalog_name, namespace, property_key))"""


WALK_PAGE = 200  # rows of iceberg_tables read at once by SqlCatalog.walk_tables


def sqlite_path(uri: str) -> str:
    """The file of ``sqlite:///path``, ``sqlite:////abs/path``, ``jdbc:sqlite:/path`` or a bare path."""
    if uri.startswith("jdbc:sqlite:"):
        return local_path(uri[len("jdbc:sqlite:"):])
    if uri.startswith("sqlite:///"):
        return uri[len("sqlite:///"):] if not uri.startswith("sqlite:////") else uri[len("sqlite:///"):]
    if uri.startswith("sqlite:"):
        return uri[len("sqlite:"):]
    return uri


class SqlCatalog(MetastoreCatalog):
    kind = "sql"
    supports_views = True  # rows with iceberg_type 'VIEW' (Java's V1 layout; none in a V0 one)

    def __init__(self, name: str, uri: str, warehouse: str | None, io: FileIO, *, create: bool = True,
                 local_default: bool = False):
        self.name = name
        self.local_default = local_default
        self.uri = redact_uri(uri)  # for display: the connection keeps the password, nothing else does
        self.warehouse = warehouse.rstrip("/") if warehouse else None
        self.io = io
        self._lock = threading.Lock()
        self._conn: Any = None
        self._param = "?"
        self._sqlite: str | None = None
        self._has_type_column = True
        self._server: Server | None = None
        if is_postgres_uri(uri):
            self._conn, self._server = connect(uri)
            self._param = "%s"
            self._init_schema()
        else:
            self._sqlite = sqlite_path(uri)
            if not create and self._sqlite != ":memory:" and not os.path.exists(self._sqlite):
                raise NoSuchTableError(f"SQL catalog database {self._sqlite} does not exist")
            if self._sqlite == ":memory:" or os.path.exists(self._sqlite):
                self._ready(write=True)

    def _ready(self, *, write: bool) -> bool:
        """Connect on first use. A SQLite file that does not exist yet is created only by a write,
        so reading a missing table in an empty folder leaves nothing behind."""
        if self._conn is not None:
            return True
        path = self._sqlite or ":memory:"
        try:
            if path != ":memory:" and not os.path.exists(path):
                if not write:
                    return False
                os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            # isolation_level=None: we issue our own statements; each runs in its own transaction.
            self._conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
            self._init_schema()
        except (OSError, sqlite3.Error) as e:
            self._conn = None
            what = "a parent is not a directory" if isinstance(e, (NotADirectoryError, FileExistsError)) \
                else (getattr(e, "strerror", None) or str(e))
            raise StorageError(f"cannot open SQL catalog database {path}: {what}") from None
        return True

    def _no_database(self) -> NotFoundError:
        return NotFoundError(f"SQL catalog database {self._sqlite} does not exist",
                             hint="check --uri or the catalog's uri in the configuration")

    def _init_schema(self) -> None:
        if self._server is not None:
            self._init_postgres_schema()
            return
        cur = self._conn.cursor()
        cur.execute(TABLES_DDL.format(if_not_exists="IF NOT EXISTS "))
        cur.execute(NAMESPACES_DDL.format(if_not_exists="IF NOT EXISTS "))
        self._has_type_column = "iceberg_type" in self._columns("iceberg_tables")

    def _init_postgres_schema(self) -> None:
        """Create the tables that do not exist yet (a role without CREATE on the schema can use
        tables that do), in a transaction; another process that creates them at the same moment
        wins and we use its tables."""
        import psycopg  # type: ignore

        for attempt in range(3):
            try:
                with self._lock, self._conn.transaction():
                    for table, ddl in (("iceberg_tables", TABLES_DDL),
                                       ("iceberg_namespace_properties", NAMESPACES_DDL)):
                        if self._conn.execute("SELECT to_regclass(%s)", (table,)).fetchone()[0] is None:
                            self._conn.execute(ddl.format(if_not_exists=""))
                break
            except (psycopg.errors.DuplicateTable, psycopg.errors.DuplicateObject, psycopg.errors.UniqueViolation):
                if attempt == 2:
                    raise StorageError(f"PostgreSQL server {self._server}: could not create the catalog tables "
                                       "while another client was creating them") from None
            except psycopg.Error as e:
                raise query_error(e, self._server) from None
        self._has_type_column = "iceberg_type" in self._columns("iceberg_tables")

    def _columns(self, table: str) -> list[str]:
        if self._server is None:
            cur = self._conn.cursor()
            cur.execute(f"PRAGMA table_info({table})")
            return [r[1] for r in cur.fetchall()]
        # The table the unqualified name resolves to (search_path), as the catalog's statements do.
        rows = self._exec("SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(?) AND attnum > 0 "
                          "AND NOT attisdropped ORDER BY attnum", (table,)).fetchall()
        return [r[0] for r in rows]

    def _q(self, sql: str) -> str:
        return sql.replace("?", self._param)

    def _exec(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        with self._lock:
            cur = self._conn.cursor()
            if self._server is None:
                try:
                    cur.execute(sql, params)
                except sqlite3.IntegrityError:
                    raise  # a duplicate key: the caller says which table exists
                except sqlite3.Error as e:
                    # A statement runs in its own transaction: one that failed (disk I/O error,
                    # disk full, locked past the timeout) changed nothing.
                    raise StorageError(f"SQL catalog database {self._sqlite}: {e}") from None
                return cur
            import psycopg  # type: ignore

            try:
                cur.execute(self._q(sql), params)  # autocommit: its own transaction
            except psycopg.errors.UniqueViolation as e:
                raise _Duplicate(str(e)) from None
            except psycopg.Error as e:
                raise query_error(e, self._server) from None
            return cur

    def _compare_and_set(self, ident: Identifier, base_location: str, location: str) -> bool:
        """Move the pointer from ``base_location`` to ``location``; False when it had moved.
        CommitStateUnknownError when the connection broke before the outcome was known."""
        sql = ("UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ? "
               "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND metadata_location = ?"
               + self._type_filter())
        params = (location, base_location, self.name, ".".join(ident[:-1]), ident[-1], base_location)
        if self._server is None:
            return self._exec(sql, params).rowcount == 1
        import psycopg  # type: ignore

        with self._lock:
            try:
                with self._conn.transaction() as tx:
                    cur = self._conn.execute(self._q(sql), params)
                    if cur.rowcount != 1:  # 0: another commit won; more would break the primary key
                        raise psycopg.Rollback(tx)
                    return True
            except psycopg.OperationalError as e:
                raise CommitStateUnknownError(
                    f"the commit to table {ident_str(ident)} may or may not have happened: lost the connection to "
                    f"PostgreSQL server {self._server} ({' '.join(str(e).split())})",
                    hint=f"check the table's metadata location; {location} is kept") from None
            except psycopg.Error as e:
                raise query_error(e, self._server) from None
        return False

    def _type_filter(self) -> str:
        return " AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)" if self._has_type_column else ""

    # -- tables -------------------------------------------------------------------------------
    def default_table_location(self, ident: Identifier) -> str:
        if not self.warehouse:
            raise UsageError(f"catalog {self.name} has no warehouse: pass --warehouse or --location")
        return join(self.warehouse, *ident)

    def load_metadata_location(self, ident: Identifier) -> str:
        if not self._ready(write=False):
            if not self.local_default:
                raise NoSuchTableError(f"table {ident_str(ident)} does not exist: the database {self._sqlite} of "
                                       f"catalog {self.name} does not exist",
                                       hint="check --uri or the catalog's uri in the configuration")
            raise NoSuchTableError(f"table {ident_str(ident)} does not exist in catalog {self.name}",
                                   hint="create one with icectl create, or try icectl demo")
        row = self._exec(
            "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? "
            "AND table_name = ?" + self._type_filter(),
            (self.name, ".".join(ident[:-1]), ident[-1])).fetchone()
        if row is None or not row[0]:
            raise NoSuchTableError(f"table {ident_str(ident)} does not exist in catalog {self.name}")
        return row[0]

    def previous_metadata_location(self, ident: Identifier) -> str | None:
        self.load_metadata_location(ident)  # NoSuchTableError
        row = self._exec(
            "SELECT previous_metadata_location FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? "
            "AND table_name = ?" + self._type_filter(),
            (self.name, ".".join(ident[:-1]), ident[-1])).fetchone()
        return row[0] if row and row[0] else None

    def _create_pointer(self, ident: Identifier, md: TableMetadata, location: str) -> str:
        self._ready(write=True)
        if self._exists(ident):
            raise AlreadyExistsError(f"table {ident_str(ident)} already exists in catalog {self.name}")
        self._ensure_namespace(ident[:-1])
        self.write_metadata(location, md)
        try:
            self._insert(ident, location)
        except AlreadyExistsError:
            # Lost a race with another create: the file we wrote sits in the other table's
            # metadata folder, where a reader by location could take it for the table's metadata.
            try:
                self.io.delete(location, guard=table_guard(self.io, md.location))
            except IcectlError:
                pass
            raise
        return location

    def _exists(self, ident: Identifier) -> bool:
        row = self._exec("SELECT 1 FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? "
                         "AND table_name = ?", (self.name, ".".join(ident[:-1]), ident[-1])).fetchone()
        return row is not None

    def _insert(self, ident: Identifier, location: str) -> None:
        cols = "catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location"
        vals = "?, ?, ?, ?, NULL"
        params: tuple[Any, ...] = (self.name, ".".join(ident[:-1]), ident[-1], location)
        if self._has_type_column:
            cols += ", iceberg_type"
            vals += ", 'TABLE'"
        try:
            self._exec(f"INSERT INTO iceberg_tables ({cols}) VALUES ({vals})", params)
        except (sqlite3.IntegrityError, _Duplicate) as e:
            if not _is_duplicate(e):
                raise
            raise AlreadyExistsError(f"table {ident_str(ident)} already exists in catalog {self.name}") from None

    def _swap_pointer(self, ident: Identifier, base_location: str, md: TableMetadata, location: str) -> str:
        self.write_metadata(location, md)
        if not self._compare_and_set(ident, base_location, location):
            try:
                self.io.delete(location, guard=table_guard(self.io, md.location))  # never referenced: safe to remove
            except IcectlError:
                pass
            raise CommitConflictError(f"table {ident_str(ident)} changed since it was read (its metadata "
                                      f"location is no longer {base_location})")
        return location

    # -- namespaces ---------------------------------------------------------------------------
    def _ensure_namespace(self, namespace: Identifier) -> None:
        """Record the namespace if it is not yet (a table created or registered in it)."""
        self._ready(write=True)
        ns = ".".join(namespace)
        if not ns:
            raise UsageError("a table needs a namespace")
        if not self._namespace_rows(ns):
            try:
                self._exec("INSERT INTO iceberg_namespace_properties (catalog_name, namespace, property_key, "
                           "property_value) VALUES (?, ?, 'exists', 'true')", (self.name, ns))
            except (sqlite3.IntegrityError, _Duplicate) as e:
                if not _is_duplicate(e):  # a duplicate: another client created it at the same moment
                    raise

    def _namespace_rows(self, ns: str) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self._exec(
            "SELECT property_key, property_value FROM iceberg_namespace_properties WHERE catalog_name = ? "
            "AND namespace = ?", (self.name, ns)).fetchall()]

    def _all_namespaces(self) -> set[Identifier]:
        names = {r[0] for r in self._exec("SELECT DISTINCT namespace FROM iceberg_namespace_properties "
                                          "WHERE catalog_name = ?", (self.name,)).fetchall()}
        names |= {r[0] for r in self._exec("SELECT DISTINCT table_namespace FROM iceberg_tables WHERE catalog_name = ?",
                                           (self.name,)).fetchall()}
        return {tuple(n.split(".")) for n in names if n}

    def _namespace_exists(self, namespace: Identifier) -> bool:
        """Recorded, holding a table, or the parent of one that is (as JdbcCatalog's namespaceExists)."""
        if not namespace or not self._ready(write=False):
            return False
        return any(n[:len(namespace)] == namespace for n in self._all_namespaces())

    def _missing_namespace(self, namespace: Identifier) -> NoSuchNamespaceError:
        return NoSuchNamespaceError(f"namespace {'.'.join(namespace)} does not exist in catalog {self.name}")

    def create_namespace(self, namespace: Identifier, properties: dict[str, str] | None = None) -> None:
        if not namespace or not all(namespace):
            raise UsageError(f"invalid namespace {'.'.join(namespace)!r}")
        self._ready(write=True)
        ns = ".".join(namespace)
        if self._namespace_rows(ns) or namespace in self._all_namespaces():
            raise AlreadyExistsError(f"namespace {ns} already exists in catalog {self.name}")
        rows = {"exists": "true", **(properties or {})}
        for k, v in rows.items():
            try:
                self._exec("INSERT INTO iceberg_namespace_properties (catalog_name, namespace, property_key, "
                           "property_value) VALUES (?, ?, ?, ?)", (self.name, ns, k, v))
            except (sqlite3.IntegrityError, _Duplicate) as e:
                if not _is_duplicate(e):
                    raise
                raise AlreadyExistsError(f"namespace {ns} already exists in catalog {self.name}") from None

    def drop_namespace(self, namespace: Identifier) -> None:
        if not self._namespace_exists(namespace):
            raise self._missing_namespace(namespace)
        ns = ".".join(namespace)
        tables = self.list_tables(namespace) if namespace in self._all_namespaces() else []
        views = self.list_views(namespace) if namespace in self._all_namespaces() else []
        children = [n for n in self._all_namespaces() if len(n) > len(namespace) and n[:len(namespace)] == namespace]
        if tables or views or children:
            raise NamespaceNotEmptyError(f"namespace {ns} is not empty: {len(tables)} tables, "
                                         + (f"{len(views)} views, " if views else "")
                                         + f"{len(children)} namespaces below it")
        self._exec("DELETE FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ?", (self.name, ns))

    def load_namespace_properties(self, namespace: Identifier) -> dict[str, str]:
        """As JdbcCatalog: the stored properties without its ``exists`` marker, and a
        ``location`` under the warehouse when none is set."""
        if not self._namespace_exists(namespace):
            raise self._missing_namespace(namespace)
        props = {k: v for k, v in self._namespace_rows(".".join(namespace)) if k != "exists"}
        if "location" not in props and self.warehouse:
            props["location"] = join(self.warehouse, *namespace)
        return props

    def update_namespace_properties(self, namespace: Identifier, *, updates: dict[str, str] | None = None,
                                    removals: Iterable[str] = ()) -> NamespacePropertiesChange:
        updates, removal_list = check_property_changes(updates, removals)
        if not self._namespace_exists(namespace):
            raise self._missing_namespace(namespace)
        ns = ".".join(namespace)
        current = dict(self._namespace_rows(ns))
        if not current:
            self._ensure_namespace(namespace)
        for k, v in updates.items():
            if k in current:
                self._exec("UPDATE iceberg_namespace_properties SET property_value = ? WHERE catalog_name = ? "
                           "AND namespace = ? AND property_key = ?", (v, self.name, ns, k))
            else:
                self._exec("INSERT INTO iceberg_namespace_properties (catalog_name, namespace, property_key, "
                           "property_value) VALUES (?, ?, ?, ?)", (self.name, ns, k, v))
        removed, missing = [], []
        for k in removal_list:
            if k in current and k != "exists":
                self._exec("DELETE FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ? "
                           "AND property_key = ?", (self.name, ns, k))
                removed.append(k)
            else:
                missing.append(k)
        return NamespacePropertiesChange(tuple(sorted(updates)), tuple(sorted(removed)), tuple(sorted(missing)))

    def list_namespaces(self, parent: Identifier | None = None) -> list[Identifier]:
        if not self._ready(write=False):
            if not self.local_default:
                raise self._no_database()
            if parent:
                raise self._missing_namespace(parent)
            return []
        every = self._all_namespaces()
        if parent is None:
            return sorted(every)
        if parent and not self._namespace_exists(parent):
            raise self._missing_namespace(parent)
        depth = len(parent) + 1
        return sorted({n[:depth] for n in every if len(n) >= depth and n[:len(parent)] == parent})

    # -- tables in the catalog ----------------------------------------------------------------
    def list_tables(self, namespace: Identifier | None = None) -> list[Identifier]:
        if not self._ready(write=False):
            if not self.local_default:
                raise self._no_database()
            if namespace is not None:
                raise self._missing_namespace(namespace)
            return []
        if namespace is None:
            rows = self._exec("SELECT table_namespace, table_name FROM iceberg_tables WHERE catalog_name = ?"
                              + self._type_filter(), (self.name,)).fetchall()
        else:
            ns = ".".join(namespace)
            rows = self._exec("SELECT table_namespace, table_name FROM iceberg_tables WHERE catalog_name = ? "
                              "AND table_namespace = ?" + self._type_filter(), (self.name, ns)).fetchall()
            if not rows and not self._namespace_exists(namespace):
                raise self._missing_namespace(namespace)
        return sorted(tuple(r[0].split(".")) + (r[1],) for r in rows)

    def walk_tables(self) -> Iterator[ListedTable]:
        """Every table's row, with its metadata location, by namespace and name: pages of
        ``WALK_PAGE`` rows, each page a short statement that starts after the last row of the one
        before (a keyset), so the walk holds one page and never a cursor open across the loads."""
        if not self._ready(write=False):
            if not self.local_default:
                raise self._no_database()
            return
        sql = ("SELECT table_namespace, table_name, metadata_location FROM iceberg_tables WHERE catalog_name = ?"
               + self._type_filter())
        after: tuple[str, str] | None = None
        while True:
            if after is None:
                rows = self._exec(sql + f" ORDER BY table_namespace, table_name LIMIT {WALK_PAGE}",
                                  (self.name,)).fetchall()
            else:
                rows = self._exec(sql + " AND (table_namespace > ? OR (table_namespace = ? AND table_name > ?)) "
                                  f"ORDER BY table_namespace, table_name LIMIT {WALK_PAGE}",
                                  (self.name, after[0], after[0], after[1])).fetchall()
            for ns, name, location in rows:
                yield ListedTable(tuple(ns.split(".")) + (name,), location or None)
            if len(rows) < WALK_PAGE:
                return
            after = (rows[-1][0], rows[-1][1])

    def drop_table(self, ident: Identifier, *, purge: bool = False) -> None:
        """Remove the catalog entry. The table's files stay, with ``purge`` too: deleting them is
        the job of the operation that asks for a purge, not of the catalog."""
        if not self._ready(write=False):
            raise NoSuchTableError(f"table {ident_str(ident)} does not exist in catalog {self.name}")
        cur = self._exec("DELETE FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?"
                         + self._type_filter(), (self.name, ".".join(ident[:-1]), ident[-1]))
        if cur.rowcount != 1:
            raise NoSuchTableError(f"table {ident_str(ident)} does not exist in catalog {self.name}")

    def rename_table(self, source: Identifier, destination: Identifier) -> None:
        if len(destination) < 2:
            raise UsageError(f"invalid table name {ident_str(destination)!r}: expected NAMESPACE.TABLE")
        self.load_metadata_location(source)  # NoSuchTableError
        if not self._namespace_exists(destination[:-1]):
            raise self._missing_namespace(destination[:-1])
        if self._exists(destination):
            raise AlreadyExistsError(f"table {ident_str(destination)} already exists in catalog {self.name}")
        try:
            cur = self._exec("UPDATE iceberg_tables SET table_namespace = ?, table_name = ? WHERE catalog_name = ? "
                             "AND table_namespace = ? AND table_name = ?",
                             (".".join(destination[:-1]), destination[-1], self.name, ".".join(source[:-1]), source[-1]))
        except (sqlite3.IntegrityError, _Duplicate) as e:
            if not _is_duplicate(e):
                raise
            raise AlreadyExistsError(f"table {ident_str(destination)} already exists in catalog {self.name}") from None
        if cur.rowcount != 1:
            raise NoSuchTableError(f"table {ident_str(source)} does not exist in catalog {self.name}")

    def register_table(self, ident: Identifier, metadata_location: str, *, overwrite: bool = False) -> TableState:
        self._ready(write=True)
        self._ensure_namespace(ident[:-1])
        if overwrite and self._exists(ident):
            current = self.load_metadata_location(ident)
            self._exec("UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ? "
                       "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?",
                       (metadata_location, current, self.name, ".".join(ident[:-1]), ident[-1]))
        else:
            self._insert(ident, metadata_location)
        return self.load(ident)

    # -- views: rows with iceberg_type = 'VIEW' (Iceberg Java's JdbcUtil, schema version V1) ----------
    def list_views(self, namespace: Identifier | None = None) -> list[Identifier]:
        if not self._ready(write=False):
            if not self.local_default:
                raise self._no_database()
            if namespace is not None:
                raise self._missing_namespace(namespace)
            return []
        if namespace is not None and not self._namespace_exists(namespace):
            raise self._missing_namespace(namespace)
        if not self._has_type_column:
            return []  # Java's V0 layout cannot hold views
        sql = "SELECT table_namespace, table_name FROM iceberg_tables WHERE catalog_name = ? AND iceberg_type = 'VIEW'"
        params: tuple[Any, ...] = (self.name,)
        if namespace is not None:
            sql += " AND table_namespace = ?"
            params += (".".join(namespace),)
        return sorted(tuple(r[0].split(".")) + (r[1],) for r in self._exec(sql, params).fetchall())

    def load_view_metadata_location(self, ident: Identifier) -> str:
        row = None
        if self._has_type_column and self._ready(write=False):
            row = self._exec("SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? AND "
                             "table_namespace = ? AND table_name = ? AND iceberg_type = 'VIEW'",
                             (self.name, ".".join(ident[:-1]), ident[-1])).fetchone()
        if row is None or not row[0]:
            raise NoSuchViewError(f"view {ident_str(ident)} does not exist in catalog {self.name}")
        return row[0]

    def load_view(self, ident: Identifier) -> ViewState:
        location = self.load_view_metadata_location(ident)
        return ViewState(location, read_view_metadata_file(self.io, location))

    def drop_view(self, ident: Identifier) -> None:
        """Delete the view's row (JdbcUtil's DROP_VIEW_SQL); its metadata files stay."""
        cur = None
        if self._has_type_column and self._ready(write=False):
            cur = self._exec("DELETE FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND "
                             "table_name = ? AND iceberg_type = 'VIEW'", (self.name, ".".join(ident[:-1]), ident[-1]))
        if cur is None or cur.rowcount != 1:
            raise NoSuchViewError(f"view {ident_str(ident)} does not exist in catalog {self.name}")

    def register_view(self, ident: Identifier, metadata_location: str) -> ViewState:
        """Insert a row with ``iceberg_type = 'VIEW'`` pointing at the file (as JdbcViewOperations'
        create does), after reading it as view metadata. The name may not be taken by a table or
        a view (one primary key for both)."""
        if len(ident) < 2:
            raise UsageError(f"invalid view name {ident_str(ident)!r}: expected NAMESPACE.VIEW")
        md = read_view_metadata_file(self.io, metadata_location)
        self._ready(write=True)
        if not self._has_type_column:
            raise UnsupportedError(f"catalog {self.name}'s iceberg_tables has no iceberg_type column (Iceberg Java's "
                                   "V0 layout), so it cannot hold views",
                                   hint="let Iceberg Java's JdbcCatalog upgrade it (jdbc.schema-version=V1)")
        self._ensure_namespace(ident[:-1])
        try:
            self._exec("INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, "
                       "previous_metadata_location, iceberg_type) VALUES (?, ?, ?, ?, NULL, 'VIEW')",
                       (self.name, ".".join(ident[:-1]), ident[-1], metadata_location))
        except (sqlite3.IntegrityError, _Duplicate) as e:
            if not _is_duplicate(e):
                raise
            raise AlreadyExistsError(f"{ident_str(ident)} already exists in catalog {self.name} (a table or a "
                                     "view)") from None
        return ViewState(metadata_location, md)


class _Duplicate(Exception):
    """A PostgreSQL unique violation (a row that another client inserted first)."""


def _is_duplicate(e: Exception) -> bool:
    """A primary-key violation (not another integrity error, such as a NULL where none may be)."""
    return isinstance(e, _Duplicate) or "UNIQUE" in str(e).upper()
