"""The Hive Metastore catalog (``type: hive``), stored exactly as Iceberg Java's ``HiveCatalog``
and ``HiveTableOperations`` store a table, so that Java, PyIceberg, Trino and icectl share it.

A table is a Hive ``EXTERNAL_TABLE`` (parameter ``EXTERNAL=TRUE``) whose parameters hold
``table_type=ICEBERG``, ``metadata_location`` and ``previous_metadata_location``, the table's
properties, and the basic statistics of the current snapshot (``numFiles``, ``numRows``,
``totalSize``); its storage descriptor has the location, the columns of the current schema in
Hive's types, and Java's input/output formats and SerDe (``FileInputFormat``/``FileOutputFormat``
and ``LazySimpleSerDe``; Hive's ``HiveIceberg*`` classes and ``storage_handler`` when the table
sets ``engine.hive.enabled=true``). A namespace is a Hive database (one level). A view is a Hive
``VIRTUAL_VIEW`` whose parameters hold ``table_type=ICEBERG-VIEW`` and ``metadata_location`` (Java's
``HiveViewOperations``), with the SQL of its current version as Hive's view text.

A commit takes Hive's table lock (``lock``/``check_lock``/``unlock``, an exclusive table lock as
Java's ``MetastoreLock``: its creation retried and its state checked with exponential back-off
until ``iceberg.hive.lock-creation-timeout-ms`` / ``iceberg.hive.lock-timeout-ms``), reads the
table, compares its ``metadata_location`` with the file the commit was planned against (a
conflict when it moved: the caller's transaction plans again) and alters the table. When the
connection breaks after ``alter_table`` was sent, the outcome is checked as Java checks it: the
table is read again (``commit.status-check.num-retries`` times); the new file current or in the
metadata log means success, another file means failure, and no answer at all is a
:class:`~icectl.errors.CommitStateUnknownError` (exit 12; the new file is kept, nothing deleted).

Configuration keys: ``uri`` (``thrift://host:9083``; several, comma-separated, are tried in
order, as Hive's ``hive.metastore.uris``), ``warehouse`` (where new databases go when their
location is not given), ``ugi`` (``user:group,...`` sent with ``set_ugi``), and Java's lock keys
``iceberg.hive.lock-timeout-ms`` (180000), ``iceberg.hive.lock-check-min-wait-ms`` (50),
``iceberg.hive.lock-check-max-wait-ms`` (5000), ``iceberg.hive.lock-creation-timeout-ms``
(180000), ``iceberg.hive.lock-creation-min-wait-ms`` (50), ``iceberg.hive.lock-creation-max-wait-ms``
(5000), ``iceberg.hive.lock-heartbeat-interval-ms`` (60000: while waiting, a lock on the table
whose last heartbeat is older is released, as Java does on Hive 2 and 3 metastores; icectl holds
its lock for one ``alter_table`` and sends no heartbeats), and
``hive.metastore.client.socket.timeout`` (seconds, 600). Kerberos (SASL) is not supported: the
metastore must accept plain, unauthenticated Thrift connections (``hive.metastore.sasl.enabled=false``,
Hive's default).

The client: the ``thrift`` package with the metastore client that PyIceberg generates from Hive's
``hive_metastore.thrift`` and ships in its wheel (the ``hive_metastore`` package), through the
``hive`` extra (``pyiceberg[hive]``). Chosen because both are kept current by Apache projects
(PyIceberg regenerates the client with each Hive release and tests it against real metastores),
the client speaks to Hive 2.3 to 4 metastores, and icectl then ships no 8 MB of generated code
of its own; the cost is PyIceberg's pure-Python dependencies in the extra. The unmaintained
``hive-metastore-client`` (2021) was not an option.
"""
from __future__ import annotations

import getpass
import socket
import time
import uuid
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, TypeVar

from icectl.catalog.base import (Identifier, MetastoreCatalog, NamespacePropertiesChange, check_property_changes,
                                 ident_str)
from icectl.catalog.hive_tables import (COMMENT, DO_NOT_UPDATE_STATS, EXTERNAL_TABLE, LOCATION, METADATA_LOCATION,
                                        PREVIOUS_METADATA_LOCATION, TABLE_TYPE, is_iceberg, is_iceberg_view,
                                        set_table_parameters, storage_descriptor, view_table)
from icectl.catalog.hive_client import MetastoreClient, MetastoreUnreachable, backoff, thrift_reason
from icectl.errors import (AlreadyExistsError, CommitConflictError, CommitStateUnknownError, IcectlError,
                           InvalidMetadataError, NamespaceNotEmptyError, NoSuchNamespaceError, NoSuchTableError,
                           NotFoundError, NoSuchViewError, StorageError, UnsupportedError, UsageError, install_hint)
from icectl.io import FileIO, join
from icectl.io.safety import table_guard
from icectl.spec.metadata import TableMetadata
from icectl.spec.properties import COMMIT_STATUS_CHECKS_NUM_RETRIES
from icectl.table.catalog_contract import TableState, ViewState
from icectl.table.metadata_io import read_metadata_file, read_view_metadata_file

try:  # the hive extra
    from hive_metastore.ttypes import (AlreadyExistsException, CheckLockRequest, Database, EnvironmentContext,
                                       InvalidOperationException, LockComponent, LockLevel,
                                       LockRequest, LockState, LockType, MetaException, NoSuchObjectException,
                                       NoSuchLockException, ShowLocksRequest, Table,
                                       UnlockRequest)
    from thrift.Thrift import TApplicationException, TException
    HAVE_THRIFT = True
except ImportError:  # pragma: no cover - exercised by the missing-extra test in a subprocess
    HAVE_THRIFT = False

T = TypeVar("T")

INSTALL_HINT = install_hint("hive")

# MetastoreLock's configuration keys and defaults (milliseconds).
LOCK_KEYS = {
    "iceberg.hive.lock-timeout-ms": 180_000,
    "iceberg.hive.lock-check-min-wait-ms": 50,
    "iceberg.hive.lock-check-max-wait-ms": 5_000,
    "iceberg.hive.lock-creation-timeout-ms": 180_000,
    "iceberg.hive.lock-creation-min-wait-ms": 50,
    "iceberg.hive.lock-creation-max-wait-ms": 5_000,
    "iceberg.hive.lock-heartbeat-interval-ms": 60_000,
}
SOCKET_TIMEOUT_KEY = "hive.metastore.client.socket.timeout"
STATUS_CHECK_WAIT_S = 1.0  # Java's commit.status-check.min-wait-ms

class HiveCatalog(MetastoreCatalog):
    kind = "hive"
    supports_views = True

    def __init__(self, name: str, properties: dict[str, str], io: FileIO):
        if not HAVE_THRIFT:
            raise UnsupportedError("a Hive catalog needs thrift and the Hive Metastore client, which this install "
                                   "lacks", hint=INSTALL_HINT)
        self.name = name
        self.io = io
        self.properties = properties
        uri = properties.get("uri") or ""
        uris = [u.strip() for u in uri.split(",") if u.strip()]
        if not uris:
            raise UsageError(f"Hive catalog {name} needs a uri (e.g. thrift://metastore:9083)")
        for u in uris:
            if not u.lower().startswith("thrift://"):
                raise UsageError(f"Hive catalog {name}: uri {u} is not a thrift:// URI")
        self.uri = ",".join(uris)
        wh = properties.get("warehouse")
        self.warehouse = wh.rstrip("/") if wh else None
        self.lock_ms = {k: self._int(k, d) for k, d in LOCK_KEYS.items()}
        timeout = float(self._int(SOCKET_TIMEOUT_KEY, 600))
        self.client = MetastoreClient(uris, ugi=properties.get("ugi"), timeout_s=timeout)
        self._agent = f"icectl-{uuid.uuid4()}"
        self._loaded: dict[str, dict[str, str]] = {}  # metadata location -> its table properties

    def _int(self, key: str, default: int) -> int:
        value = self.properties.get(key)
        if value is None:
            return default
        try:
            return int(value)
        except ValueError:
            raise UsageError(f"Hive catalog {self.name}: {key} must be an integer, not {value!r}") from None

    # -- calls ------------------------------------------------------------------------------------
    def _call(self, fn: Callable[[Any], T], what: str, *, reconnect: bool = True) -> T:
        try:
            return self.client.call(fn, reconnect=reconnect)
        except MetastoreUnreachable as e:
            raise StorageError(f"cannot reach the Hive Metastore {e.where} of catalog {self.name} ({what}): "
                               f"{e.reason}", hint="check that the metastore runs and the catalog's uri") from None
        except (MetaException, TApplicationException) as e:
            raise StorageError(f"the Hive Metastore of catalog {self.name} failed ({what}): "
                               f"{thrift_reason(e)}") from None

    @staticmethod
    def _names(ident: Identifier) -> tuple[str, str]:
        if len(ident) != 2:
            raise UsageError(f"invalid table name {ident_str(ident)!r}: a Hive table is DATABASE.TABLE")
        return ident[0], ident[1]

    @staticmethod
    def _database(namespace: Identifier) -> str:
        if len(namespace) != 1:
            raise UsageError(f"invalid namespace {'.'.join(namespace)!r}: a Hive database has one level")
        return namespace[0]

    def _hive_table(self, ident: Identifier) -> Any:
        db, name = self._names(ident)
        try:
            tbl = self._call(lambda c: c.get_table(db, name), f"read table {ident_str(ident)}")
        except NoSuchObjectException:
            raise NoSuchTableError(f"table {ident_str(ident)} does not exist in catalog {self.name}") from None
        if not is_iceberg(tbl):
            raise NoSuchTableError(f"table {ident_str(ident)} of catalog {self.name} is not an Iceberg table "
                                   f"(table_type={(tbl.parameters or {}).get(TABLE_TYPE)})")
        return tbl

    # -- tables ---------------------------------------------------------------------------------
    def default_table_location(self, ident: Identifier) -> str:
        """Java's HiveCatalog.defaultWarehouseLocation: the database's location and the table's
        name, else ``<warehouse>/<database>.db/<table>``."""
        db, name = self._names(ident)
        database = self._get_database(db)
        if database.locationUri:
            return join(database.locationUri.rstrip("/"), name)
        if not self.warehouse:
            raise UsageError(f"catalog {self.name} has no warehouse and database {db} no location: pass "
                             "--location")
        return join(self.warehouse, f"{db}.db", name)

    def load_metadata_location(self, ident: Identifier) -> str:
        location = (self._hive_table(ident).parameters or {}).get(METADATA_LOCATION)
        if not location:
            raise NoSuchTableError(f"table {ident_str(ident)} of catalog {self.name} has no metadata_location")
        return location

    def previous_metadata_location(self, ident: Identifier) -> str | None:
        return (self._hive_table(ident).parameters or {}).get(PREVIOUS_METADATA_LOCATION) or None

    def load(self, ident: Identifier) -> TableState:
        state = super().load(ident)
        self._loaded = {state.metadata_location: dict(state.metadata.properties)}
        return state

    def _create_pointer(self, ident: Identifier, md: TableMetadata, location: str) -> str:
        db, name = self._names(ident)
        self._get_database(db)  # NoSuchNamespaceError: Hive creates no database for a table
        self.write_metadata(location, md)
        now = int(time.time())
        tbl = Table(tableName=name, dbName=db, owner=getpass.getuser(), createTime=now, lastAccessTime=now,
                    retention=2**31 - 1, sd=storage_descriptor(md, md.location or self.default_table_location(ident)),
                    partitionKeys=[], parameters=set_table_parameters({"EXTERNAL": "TRUE"}, md, location, None, ()),
                    tableType=EXTERNAL_TABLE)
        try:
            with self._table_lock(db, name):
                self._call(lambda c: c.create_table(tbl), f"create table {ident_str(ident)}")
        except AlreadyExistsException:
            self._discard(location, md)
            raise AlreadyExistsError(f"table {ident_str(ident)} already exists in catalog {self.name}") from None
        except (CommitConflictError, StorageError):
            self._discard(location, md)
            raise
        return location

    def _swap_pointer(self, ident: Identifier, base_location: str, md: TableMetadata, location: str) -> str:
        db, name = self._names(ident)
        self.write_metadata(location, md)
        base_props = self._loaded.get(base_location)
        if base_props is None:
            try:
                base_props = dict(read_metadata_file(self.io, base_location).properties)
            except (InvalidMetadataError, NotFoundError):
                base_props = {}  # a broken current file (a restore from it): no properties to remove
        removed = [k for k in base_props if k not in md.properties]
        outcome = "failed"
        try:
            with self._table_lock(db, name):
                tbl = self._hive_table(ident)
                current = (tbl.parameters or {}).get(METADATA_LOCATION)
                if current != base_location:
                    raise CommitConflictError(f"table {ident_str(ident)} changed since it was read (its metadata "
                                              f"location is {current}, not {base_location})")
                tbl.sd = storage_descriptor(md, md.location or self.default_table_location(ident))
                tbl.parameters = set_table_parameters(tbl.parameters or {}, md, location, current, removed)
                context = EnvironmentContext(properties={DO_NOT_UPDATE_STATS: "true"})
                try:
                    # Never resent: the first attempt may have been applied.
                    self.client.call(lambda c: c.alter_table_with_environment_context(db, name, tbl, context),
                                     reconnect=False)
                except MetastoreUnreachable as e:
                    outcome = self._check_commit_status(ident, location, md)
                    if outcome == "unknown":
                        raise CommitStateUnknownError(
                            f"the commit to table {ident_str(ident)} may or may not have happened: lost the "
                            f"connection to the Hive Metastore {e.where} ({e.reason}) and could not read the "
                            f"table again", hint=f"check the table's metadata_location; {location} is kept") from None
                    if outcome == "failed":
                        raise StorageError(f"the commit to table {ident_str(ident)} failed: lost the connection to "
                                           f"the Hive Metastore {e.where} ({e.reason})") from None
                except (MetaException, InvalidOperationException, TApplicationException) as e:
                    raise StorageError(f"the Hive Metastore refused the commit to table {ident_str(ident)}: "
                                       f"{thrift_reason(e)}") from None
                outcome = "committed"
        finally:
            if outcome == "failed":
                self._discard(location, md)
        self._loaded = {location: dict(md.properties)}
        return location

    def _check_commit_status(self, ident: Identifier, location: str, md: TableMetadata) -> str:
        """Java's checkCommitStatus: read the table again; ``committed`` when ``location`` is its
        metadata file or in its metadata log, ``failed`` when it is not, ``unknown`` when the table
        cannot be read ``commit.status-check.num-retries`` times."""
        attempts = COMMIT_STATUS_CHECKS_NUM_RETRIES.read(md.properties)
        for _ in range(max(attempts, 1)):
            time.sleep(STATUS_CHECK_WAIT_S)
            try:
                current = self.load_metadata_location(ident)
                if current == location:
                    return "committed"
                log = read_metadata_file(self.io, current).metadata_log
            except (IcectlError, OSError):
                continue
            return "committed" if any(e.metadata_file == location for e in log) else "failed"
        return "unknown"

    def _discard(self, location: str, md: TableMetadata) -> None:
        """Delete a metadata file no table references (the commit surely failed)."""
        try:
            self.io.delete(location, guard=table_guard(self.io, md.location))
        except IcectlError:
            pass

    # -- the table lock ---------------------------------------------------------------------------
    @contextmanager
    def _table_lock(self, db: str, name: str) -> Iterator[int]:
        lock_id = self._acquire_lock(db, name)
        try:
            yield lock_id
        finally:
            try:
                self.client.call(lambda c: c.unlock(UnlockRequest(lockid=lock_id)))
            except (MetastoreUnreachable, NoSuchLockException, TException):
                pass  # Java logs and goes on: the metastore times the lock out

    def _acquire_lock(self, db: str, name: str) -> int:
        """Java's MetastoreLock.acquireLock: create the lock (retried, finding it by its agent
        info after a broken connection), then check it until it is acquired or the timeout ends."""
        ms = self.lock_ms
        component = LockComponent(type=LockType.EXCLUSIVE, level=LockLevel.TABLE, dbname=db, tablename=name)
        request = LockRequest(component=[component], user=getpass.getuser(), hostname=socket.gethostname(),
                              agentInfo=self._agent)
        response: Any = None
        reason = ""
        for _ in backoff(ms["iceberg.hive.lock-creation-min-wait-ms"], ms["iceberg.hive.lock-creation-max-wait-ms"],
                         ms["iceberg.hive.lock-creation-timeout-ms"], 2.0):
            try:
                # Never resent on a new connection: a request whose answer was lost may have
                # created the lock, which a second one would wait behind until the timeout; it
                # is found by its agent info instead (Java's createLock and findLock).
                response = self._call(lambda c: c.lock(request), f"lock table {db}.{name}", reconnect=False)
                break
            except StorageError as e:
                reason = e.message
                response = self._find_lock(db, name)
                if response is not None:
                    break
        if response is None:
            raise StorageError(f"could not create the Hive lock on table {db}.{name}: {reason}",
                               hint="check that the metastore runs and the catalog's uri")
        lock_id, state = response.lockid, response.state
        start = time.monotonic()
        try:
            if state == LockState.WAITING:
                for _ in backoff(ms["iceberg.hive.lock-check-min-wait-ms"], ms["iceberg.hive.lock-check-max-wait-ms"],
                                 ms["iceberg.hive.lock-timeout-ms"], 1.5):
                    state = self._call(lambda c: c.check_lock(CheckLockRequest(lockid=lock_id)),
                                       f"check the lock on table {db}.{name}").state
                    if state != LockState.WAITING:
                        break
                    self._release_expired_locks(db, name)
        finally:
            if state != LockState.ACQUIRED:
                try:
                    self.client.call(lambda c: c.unlock(UnlockRequest(lockid=lock_id)))
                except (MetastoreUnreachable, TException):
                    pass
        if state == LockState.WAITING:
            raise CommitConflictError(f"timed out after {int((time.monotonic() - start) * 1000)} ms waiting for the "
                                      f"Hive lock on table {db}.{name}",
                                      hint="another writer holds it; iceberg.hive.lock-timeout-ms sets the wait")
        if state != LockState.ACQUIRED:
            raise CommitConflictError(f"could not acquire the Hive lock on table {db}.{name}: the lock request "
                                      f"ended in state {LockState._VALUES_TO_NAMES.get(state, state)}")
        return lock_id

    def _release_expired_locks(self, db: str, name: str) -> None:
        """Java's MetastoreLock.releaseExpiredHiveLock (Hive 2 and 3 metastores): unlock the table's
        locks whose last heartbeat is older than ``iceberg.hive.lock-heartbeat-interval-ms``, the
        locks of writers that died holding them."""
        interval = self.lock_ms["iceberg.hive.lock-heartbeat-interval-ms"]
        try:
            locks = self._call(lambda c: c.show_locks(ShowLocksRequest(dbname=db, tablename=name)),
                               f"list the locks on table {db}.{name}").locks or []
        except StorageError:
            return
        now = int(time.time() * 1000)
        for lk in locks:
            if lk.agentInfo != self._agent and lk.lastheartbeat and now - lk.lastheartbeat > interval:
                try:
                    self.client.call(lambda c: c.unlock(UnlockRequest(lockid=lk.lockid)))
                except (MetastoreUnreachable, TException):
                    pass  # cleared by someone else, or not ours to clear: wait on

    def _find_lock(self, db: str, name: str) -> Any:
        try:
            locks = self._call(lambda c: c.show_locks(ShowLocksRequest(dbname=db, tablename=name)),
                               f"find the lock on table {db}.{name}").locks or []
        except StorageError:
            return None
        return next((lk for lk in locks if lk.agentInfo == self._agent), None)

    # -- namespaces -------------------------------------------------------------------------------
    def _get_database(self, db: str) -> Any:
        try:
            return self._call(lambda c: c.get_database(db), f"read database {db}")
        except NoSuchObjectException:
            raise NoSuchNamespaceError(f"namespace {db} does not exist in catalog {self.name}") from None

    def list_namespaces(self, parent: Identifier | None = None) -> list[Identifier]:
        if parent:
            self._get_database(self._database(parent))
            return []
        return sorted((d,) for d in self._call(lambda c: c.get_all_databases(), "list databases"))

    def create_namespace(self, namespace: Identifier, properties: dict[str, str] | None = None) -> None:
        db = self._database(namespace)
        props = dict(properties or {})
        location = props.pop(LOCATION, None) or (join(self.warehouse, f"{db}.db") if self.warehouse else None)
        database = Database(name=db, description=props.pop(COMMENT, None), locationUri=location, parameters=props)
        try:
            self._call(lambda c: c.create_database(database), f"create database {db}")
        except AlreadyExistsException:
            raise AlreadyExistsError(f"namespace {db} already exists in catalog {self.name}") from None

    def drop_namespace(self, namespace: Identifier) -> None:
        db = self._database(namespace)
        try:
            self._call(lambda c: c.drop_database(db, False, False), f"drop database {db}")
        except NoSuchObjectException:
            raise NoSuchNamespaceError(f"namespace {db} does not exist in catalog {self.name}") from None
        except InvalidOperationException:
            raise NamespaceNotEmptyError(f"namespace {db} of catalog {self.name} is not empty") from None

    def load_namespace_properties(self, namespace: Identifier) -> dict[str, str]:
        """Java's HiveCatalog.loadNamespaceMetadata: the parameters, ``location`` and ``comment``."""
        database = self._get_database(self._database(namespace))
        props = dict(database.parameters or {})
        if database.locationUri:
            props[LOCATION] = database.locationUri
        if database.description:
            props[COMMENT] = database.description
        return props

    def update_namespace_properties(self, namespace: Identifier, *, updates: dict[str, str] | None = None,
                                    removals: Iterable[str] = ()) -> NamespacePropertiesChange:
        updates, removal_list = check_property_changes(updates, removals)
        db = self._database(namespace)
        database = self._get_database(db)
        props = self.load_namespace_properties(namespace)
        removed = tuple(k for k in removal_list if k in props)
        missing = tuple(k for k in removal_list if k not in props)
        for k in removed:
            props.pop(k)
        props.update(updates)
        database.locationUri = props.pop(LOCATION, database.locationUri)
        database.description = props.pop(COMMENT, None)
        database.parameters = props
        self._call(lambda c: c.alter_database(db, database), f"alter database {db}")
        return NamespacePropertiesChange(updated=tuple(updates), removed=removed, missing=missing)

    def list_tables(self, namespace: Identifier | None = None) -> list[Identifier]:
        dbs = [self._database(namespace)] if namespace is not None else [n[0] for n in self.list_namespaces()]
        found: list[Identifier] = []
        for db in dbs:
            if namespace is not None:
                self._get_database(db)
            names = self._call(lambda c: c.get_all_tables(db), f"list tables of {db}")
            if not names:
                continue
            tables = self._call(lambda c: c.get_table_objects_by_name(db, names), f"read tables of {db}")
            found += [(db, t.tableName) for t in tables if is_iceberg(t)]
        return sorted(found)

    def drop_table(self, ident: Identifier, *, purge: bool = False) -> None:
        """Remove the Hive table and never its files (Java's dropTable with deleteData=false; a purge
        deletes the files in the operation that asked for it, after this)."""
        db, name = self._names(ident)
        self._hive_table(ident)  # NoSuchTableError, also for a table that is not Iceberg's
        try:
            self._call(lambda c: c.drop_table(db, name, False), f"drop table {ident_str(ident)}")
        except NoSuchObjectException:
            raise NoSuchTableError(f"table {ident_str(ident)} does not exist in catalog {self.name}") from None

    def rename_table(self, source: Identifier, destination: Identifier) -> None:
        src_db, src_name = self._names(source)
        dst_db, dst_name = self._names(destination)
        self._get_database(dst_db)
        tbl = self._hive_table(source)
        try:
            self._call(lambda c: c.get_table(dst_db, dst_name), f"read table {ident_str(destination)}")
            raise AlreadyExistsError(f"table {ident_str(destination)} already exists in catalog {self.name}")
        except NoSuchObjectException:
            pass
        tbl.dbName, tbl.tableName = dst_db, dst_name
        try:
            self._call(lambda c: c.alter_table(src_db, src_name, tbl), f"rename table {ident_str(source)}")
        except InvalidOperationException as e:
            raise AlreadyExistsError(f"cannot rename table {ident_str(source)} to {ident_str(destination)}: "
                                     f"{thrift_reason(e)}") from None

    def register_table(self, ident: Identifier, metadata_location: str, *, overwrite: bool = False) -> TableState:
        """Java's registerTable: a Hive table pointing at ``metadata_location`` itself (no new file
        is written); with ``overwrite``, an existing table is moved to it under the lock."""
        db, name = self._names(ident)
        md = read_metadata_file(self.io, metadata_location)
        self._get_database(db)
        try:
            tbl = self._hive_table(ident)
        except NoSuchTableError:
            tbl = None
        if tbl is not None and not overwrite:
            raise AlreadyExistsError(f"table {ident_str(ident)} already exists in catalog {self.name}")
        location = md.location or self.default_table_location(ident)
        if tbl is None:
            now = int(time.time())
            new = Table(tableName=name, dbName=db, owner=getpass.getuser(), createTime=now, lastAccessTime=now,
                        retention=2**31 - 1, sd=storage_descriptor(md, location), partitionKeys=[],
                        parameters=set_table_parameters({"EXTERNAL": "TRUE"}, md, metadata_location, None, ()),
                        tableType=EXTERNAL_TABLE)
            try:
                self._call(lambda c: c.create_table(new), f"register table {ident_str(ident)}")
            except AlreadyExistsException:
                raise AlreadyExistsError(f"table {ident_str(ident)} already exists in catalog {self.name}") from None
        else:
            with self._table_lock(db, name):
                tbl = self._hive_table(ident)
                current = (tbl.parameters or {}).get(METADATA_LOCATION)
                tbl.sd = storage_descriptor(md, location)
                tbl.parameters = set_table_parameters(tbl.parameters or {}, md, metadata_location, current, ())
                context = EnvironmentContext(properties={DO_NOT_UPDATE_STATS: "true"})
                self._call(lambda c: c.alter_table_with_environment_context(db, name, tbl, context),
                           f"register table {ident_str(ident)}", reconnect=False)
        return self.load(ident)

    # -- views: VIRTUAL_VIEW tables with table_type=ICEBERG-VIEW (HiveCatalog.listViews, HiveViewOperations)
    def list_views(self, namespace: Identifier | None = None) -> list[Identifier]:
        dbs = [self._database(namespace)] if namespace is not None else [n[0] for n in self.list_namespaces()]
        found: list[Identifier] = []
        for db in dbs:
            if namespace is not None:
                self._get_database(db)
            names = self._call(lambda c: c.get_all_tables(db), f"list tables of {db}")
            if names:
                tables = self._call(lambda c: c.get_table_objects_by_name(db, names), f"read tables of {db}")
                found += [(db, t.tableName) for t in tables if is_iceberg_view(t)]
        return sorted(found)

    def _hive_view(self, ident: Identifier) -> Any:
        db, name = self._names(ident)
        try:
            tbl = self._call(lambda c: c.get_table(db, name), f"read view {ident_str(ident)}")
        except NoSuchObjectException:
            tbl = None
        if tbl is None or not is_iceberg_view(tbl):
            raise NoSuchViewError(f"view {ident_str(ident)} does not exist in catalog {self.name}")
        return tbl

    def load_view_metadata_location(self, ident: Identifier) -> str:
        location = (self._hive_view(ident).parameters or {}).get(METADATA_LOCATION)
        if not location:
            raise NoSuchViewError(f"view {ident_str(ident)} of catalog {self.name} has no metadata_location")
        return location

    def load_view(self, ident: Identifier) -> ViewState:
        location = self.load_view_metadata_location(ident)
        return ViewState(location, read_view_metadata_file(self.io, location))

    def drop_view(self, ident: Identifier) -> None:
        """Drop the Hive view (never its files), as HiveCatalog.dropView."""
        db, name = self._names(ident)
        self._hive_view(ident)
        try:
            self._call(lambda c: c.drop_table(db, name, False), f"drop view {ident_str(ident)}")
        except NoSuchObjectException:
            raise NoSuchViewError(f"view {ident_str(ident)} does not exist in catalog {self.name}") from None

    def register_view(self, ident: Identifier, metadata_location: str) -> ViewState:
        """A Hive view pointing at ``metadata_location`` itself (no new file is written), as
        HiveViewOperations creates one."""
        db, name = self._names(ident)
        md = read_view_metadata_file(self.io, metadata_location)
        self._get_database(db)
        tbl = view_table(db, name, md, metadata_location)
        taken = False
        with self._table_lock(db, name):
            try:  # caught inside the lock: a Thrift exception is immutable, and contextmanager sets its traceback
                self._call(lambda c: c.create_table(tbl), f"register view {ident_str(ident)}")
            except AlreadyExistsException:
                taken = True
        if taken:
            raise AlreadyExistsError(f"{ident_str(ident)} already exists in catalog {self.name} (a table or a view)")
        return ViewState(metadata_location, md)


__all__ = ["HiveCatalog", "INSTALL_HINT"]
