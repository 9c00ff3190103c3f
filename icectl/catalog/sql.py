"""The SQL catalog: the ``iceberg_tables`` / ``iceberg_namespace_properties`` tables that Iceberg
Java's JdbcCatalog and PyIceberg's SqlCatalog share, with a compare-and-set commit on
``metadata_location``. SQLite through the standard library; PostgreSQL through psycopg when
installed.
"""
from __future__ import annotations

import os
import sqlite3
import threading
from typing import Any

from icectl.catalog.base import Identifier, MetastoreCatalog, ident_str
from icectl.spec.metadata import TableMetadata
from icectl.errors import (AlreadyExistsError, CommitConflictError, IcectlError, NoSuchNamespaceError,
                           NoSuchTableError, NotFoundError, StorageError, UnsupportedError, UsageError)
from icectl.io import FileIO, join, local_path

TABLES_DDL = """CREATE TABLE IF NOT EXISTS iceberg_tables (
  catalog_name VARCHAR(255) NOT NULL,
  table_namespace VARCHAR(255) NOT NULL,
  table_name VARCHAR(255) NOT NULL,
  metadata_location VARCHAR(1000),
  previous_metadata_location VARCHAR(1000),
  iceberg_type VARCHAR(5),
  PRIMARY KEY (catalog_name, table_namespace, table_name))"""
NAMESPACES_DDL = """CREATE TABLE IF NOT EXISTS iceberg_namespace_properties (
  catalog_name VARCHAR(255) NOT NULL,
  namespace VARCHAR(255) NOT NULL,
  property_key VARCHAR(255),
  property_value VARCHAR(1000),
  PRIMARY KEY (catalog_name, namespace, property_key))"""


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

    def __init__(self, name: str, uri: str, warehouse: str | None, io: FileIO, *, create: bool = True,
                 local_default: bool = False):
        self.name = name
        self.local_default = local_default
        self.uri = uri
        self.warehouse = warehouse.rstrip("/") if warehouse else None
        self.io = io
        self._lock = threading.Lock()
        self._conn: Any = None
        self._param = "?"
        self._sqlite: str | None = None
        self._has_type_column = True
        if uri.startswith(("postgresql", "jdbc:postgresql", "postgres")):
            self._conn, self._param = _postgres_connect(uri), "%s"
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
        cur = self._conn.cursor()
        cur.execute(TABLES_DDL)
        cur.execute(NAMESPACES_DDL)
        self._has_type_column = "iceberg_type" in self._columns("iceberg_tables")
        if hasattr(self._conn, "commit"):
            try:
                self._conn.commit()
            except Exception:  # pragma: no cover
                pass

    def _columns(self, table: str) -> list[str]:
        cur = self._conn.cursor()
        if self._param == "?":
            cur.execute(f"PRAGMA table_info({table})")
            return [r[1] for r in cur.fetchall()]
        cur.execute("SELECT column_name FROM information_schema.columns WHERE table_name = %s", (table,))
        return [r[0] for r in cur.fetchall()]

    def _q(self, sql: str) -> str:
        return sql.replace("?", self._param)

    def _exec(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        with self._lock:
            cur = self._conn.cursor()
            cur.execute(self._q(sql), params)
            if self._param != "?":
                self._conn.commit()
            return cur

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

    def _create_pointer(self, ident: Identifier, md: TableMetadata, location: str) -> str:
        self._ready(write=True)
        if self._exists(ident):
            raise AlreadyExistsError(f"table {ident_str(ident)} already exists in catalog {self.name}")
        self.create_namespace(ident[:-1])
        self.write_metadata(location, md)
        try:
            self._insert(ident, location)
        except AlreadyExistsError:
            # Lost a race with another create: the file we wrote sits in the other table's
            # metadata folder, where a reader by location could take it for the table's metadata.
            try:
                self.io.delete(location)
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
        except Exception as e:
            if "UNIQUE" in str(e).upper() or "DUPLICATE" in str(e).upper():
                raise AlreadyExistsError(f"table {ident_str(ident)} already exists in catalog {self.name}") from None
            raise

    def register_table(self, ident: Identifier, metadata_location: str) -> None:
        self._ready(write=True)
        self.create_namespace(ident[:-1])
        self._insert(ident, metadata_location)

    def _swap_pointer(self, ident: Identifier, base_location: str, md: TableMetadata, location: str) -> str:
        self.write_metadata(location, md)
        cur = self._exec(
            "UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ? "
            "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND metadata_location = ?",
            (location, base_location, self.name, ".".join(ident[:-1]), ident[-1], base_location))
        if cur.rowcount != 1:
            try:
                self.io.delete(location)  # never referenced: safe to remove
            except IcectlError:
                pass
            raise CommitConflictError(f"table {ident_str(ident)} changed since it was read (its metadata "
                                      f"location is no longer {base_location})")
        return location

    def drop_table(self, ident: Identifier) -> None:
        if not self._ready(write=False):
            raise NoSuchTableError(f"table {ident_str(ident)} does not exist in catalog {self.name}")
        cur = self._exec("DELETE FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?",
                         (self.name, ".".join(ident[:-1]), ident[-1]))
        if cur.rowcount != 1:
            raise NoSuchTableError(f"table {ident_str(ident)} does not exist in catalog {self.name}")

    # -- namespaces ---------------------------------------------------------------------------
    def create_namespace(self, namespace: Identifier) -> None:
        self._ready(write=True)
        ns = ".".join(namespace)
        if not ns:
            raise UsageError("a table needs a namespace")
        row = self._exec("SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ?",
                         (self.name, ns)).fetchone()
        if row is None:
            try:
                self._exec("INSERT INTO iceberg_namespace_properties (catalog_name, namespace, property_key, "
                           "property_value) VALUES (?, ?, 'exists', 'true')", (self.name, ns))
            except Exception as e:
                if "UNIQUE" not in str(e).upper() and "DUPLICATE" not in str(e).upper():
                    raise

    def list_namespaces(self) -> list[Identifier]:
        if not self._ready(write=False):
            if not self.local_default:
                raise self._no_database()
            return []
        names = {r[0] for r in self._exec("SELECT DISTINCT namespace FROM iceberg_namespace_properties "
                                          "WHERE catalog_name = ?", (self.name,)).fetchall()}
        names |= {r[0] for r in self._exec("SELECT DISTINCT table_namespace FROM iceberg_tables WHERE catalog_name = ?",
                                           (self.name,)).fetchall()}
        return sorted(tuple(n.split(".")) for n in names if n)

    def list_tables(self, namespace: Identifier | None) -> list[Identifier]:
        if not self._ready(write=False):
            if not self.local_default:
                raise self._no_database()
            if namespace is not None:
                raise NoSuchNamespaceError(f"namespace {'.'.join(namespace)} does not exist in catalog {self.name}")
            return []
        if namespace is None:
            rows = self._exec("SELECT table_namespace, table_name FROM iceberg_tables WHERE catalog_name = ?"
                              + self._type_filter(), (self.name,)).fetchall()
        else:
            ns = ".".join(namespace)
            rows = self._exec("SELECT table_namespace, table_name FROM iceberg_tables WHERE catalog_name = ? "
                              "AND table_namespace = ?" + self._type_filter(), (self.name, ns)).fetchall()
            if not rows and namespace not in self.list_namespaces():
                raise NoSuchNamespaceError(f"namespace {ns} does not exist in catalog {self.name}")
        return sorted(tuple(r[0].split(".")) + (r[1],) for r in rows)


def _postgres_connect(uri: str) -> Any:
    try:
        import psycopg  # type: ignore
    except ImportError:
        raise UnsupportedError("a PostgreSQL catalog needs psycopg, which this install lacks",
                               hint="pip install 'icectl[postgresql]'") from None
    dsn = uri
    if dsn.startswith("jdbc:"):
        dsn = dsn[len("jdbc:"):]
    dsn = dsn.replace("postgresql+psycopg2://", "postgresql://").replace("postgresql+psycopg://", "postgresql://")
    return psycopg.connect(dsn)
