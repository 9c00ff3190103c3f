"""An injected fault at the k-th I/O step of a command.

The steps are every change a command makes to storage or to the catalog: a FileIO ``write``,
``open(..., "wb")``, ``delete``, ``rename_no_replace``, ``makedirs``, ``rmdir``, ``move`` and
``copy`` (quarantine; a local move's unlink is its own ``delete`` step), and every
statement of the SQL catalog that is not a read (the pointer's compare-and-set, a table's insert,
drop and rename, namespace rows). A run with :data:`COUNT` counts them; then, for each k:

- ``crash``: the process dies at step k, before the step takes effect. In-process this is a
  :class:`Crash` (a ``BaseException``, as ``os._exit`` would not run ``except Exception``
  handlers either), and every later step fails without effect, so clean-up code that still runs
  on the way out changes nothing, as after a kill. In a subprocess (:func:`install_from_env`,
  ``ICECTL_TEST_FAULT=crash:K``) step k calls ``os._exit(137)``.
- ``error``: step k fails once with the error its layer raises (a StorageError from FileIO, a
  ``sqlite3.OperationalError`` from the catalog database) and the command goes on handling it.
- ``unknown``: the k-th *pointer move* (a compare-and-set that succeeded) takes effect and then
  reports CommitStateUnknownError, as a REST server's 5xx or a broken PostgreSQL connection does
  after the commit landed.

The metastore catalogs' calls are steps too, each one (reads included: a commit's ``get_table``
under the lock is one): every method of the Hive Metastore's Thrift client (``thrift lock``,
``thrift check_lock``, ``thrift get_table``, ``thrift alter_table_with_environment_context``,
``thrift unlock`` ...) and every request of botocore's Glue client (``glue GetTable``, ``glue
UpdateTable`` ...). Their faults are their layer's: ``error`` is a broken connection before the
call was sent (thrift's ``TTransportException``, botocore's ``EndpointConnectionError``); their
pointer moves are ``alter_table*`` and ``UpdateTable``, and at one of them

- ``unknown``: the call takes effect, its answer is lost (``TTransportException``, botocore's
  ``ReadTimeoutError``) and the service stays unreachable for the rest of the run (storage does
  not): the catalog cannot tell, the command exits 12 and keeps the new metadata file;

and at any metastore call, ``lost``: the call takes effect and only its answer is lost (the
connection breaks after it was sent); the catalog must find out what happened (its lock by its
agent info, its commit by reading the table again) and the command succeeds or reports a
documented error.
"""
from __future__ import annotations

import os
import sqlite3
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

import botocore.client
import botocore.exceptions

from icectl.catalog.sql import SqlCatalog
from icectl.errors import CommitStateUnknownError, StorageError
from icectl.io import FileIO

try:  # the hive extra
    from hive_metastore.ThriftHiveMetastore import Client as ThriftClient
    from thrift.transport.TTransport import TTransportException
except ImportError:  # pragma: no cover - the Hive fault points need it
    ThriftClient = None

COUNT, CRASH, ERROR, UNKNOWN, LOST = "count", "crash", "error", "unknown", "lost"
ENV = "ICECTL_TEST_FAULT"


class Crash(BaseException):
    """The process died here (in-process stand-in for a kill)."""


@dataclass
class Injector:
    mode: str = COUNT
    at: int = 0  # 1-based step (or pointer move, for UNKNOWN) that fails
    exit_process: bool = False  # CRASH in a subprocess: os._exit at step ``at``
    steps: list[str] = field(default_factory=list)
    moves: int = 0
    fired: str | None = None
    dead: bool = False
    unreachable: bool = False  # UNKNOWN at a metastore call: the service answers nothing after it
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def before(self, what: str) -> bool:
        """Called before a step; fails it as the mode says. True: the step is a metastore call
        whose answer is lost (LOST): the caller makes it, then raises :func:`answer_lost`."""
        with self._lock:
            if self.dead:
                raise Crash(f"after the crash: {what}")
            if self.unreachable and what.startswith(REMOTE):
                raise _connection_error(what, sent=False)
            self.steps.append(what)
            k = len(self.steps)
            if k == self.at and self.mode == LOST and what.startswith(REMOTE):
                self.fired = what
                return True
            if k != self.at or self.mode not in (CRASH, ERROR):
                return False
            self.fired = what
            if self.mode == CRASH:
                if self.exit_process:
                    os._exit(137)
                self.dead = True
                raise Crash(what)
        if what.startswith("sql "):
            raise sqlite3.OperationalError("disk I/O error (injected)")
        if what.startswith(REMOTE):
            raise _connection_error(what, sent=False)
        raise StorageError(f"injected I/O error: {what}")

    def moved(self, what: str) -> None:
        """Called after a pointer move took effect."""
        with self._lock:
            self.moves += 1
            if self.mode != UNKNOWN or self.moves != self.at:
                return
            self.fired = what
            if what.startswith(REMOTE):
                self.unreachable = True
                raise _connection_error(what, sent=True)
        raise CommitStateUnknownError(f"injected: the commit's outcome is unknown ({what})")


REMOTE = ("thrift ", "glue ")
THRIFT_MOVES = ("alter_table", "alter_table_with_environment_context")
GLUE_MOVES = ("UpdateTable",)


def _connection_error(what: str, *, sent: bool) -> Exception:
    """The error a metastore client raises when the connection breaks before the call was sent
    or after (its answer lost)."""
    if what.startswith("thrift "):
        return TTransportException(TTransportException.END_OF_FILE if sent else TTransportException.NOT_OPEN,
                                   f"injected: connection lost ({what})")
    if sent:
        return botocore.exceptions.ReadTimeoutError(endpoint_url=f"injected ({what})")
    return botocore.exceptions.EndpointConnectionError(endpoint_url=f"injected ({what})")


_ACTIVE: Injector | None = None


def _step(what: str) -> bool:
    return _ACTIVE is not None and _ACTIVE.before(what)


def _wrap_io(name: str):
    original = getattr(FileIO, name)

    def wrapper(self, path, *args, **kwargs):
        if name != "open" or (args[:1] or [kwargs.get("mode", "rb")])[0] == "wb":
            _step(f"{name} {path}")
        return original(self, path, *args, **kwargs)

    return original, wrapper


class _Cursor:
    """A sqlite3 cursor whose writing statements are steps (the fault comes from inside
    ``execute``, where the database's own errors come from)."""

    def __init__(self, cur: Any) -> None:
        self._cur = cur

    def execute(self, sql: str, params: Any = ()) -> Any:
        head = sql.lstrip().upper()
        if _ACTIVE is not None and not head.startswith(("SELECT", "PRAGMA", "CREATE TABLE IF NOT EXISTS")):
            _step(f"sql {sql.split()[0].lower()} {tuple(params)[:4]}")
        self._cur.execute(sql, params)
        if _ACTIVE is not None and head.startswith("UPDATE ICEBERG_TABLES SET METADATA_LOCATION") \
                and self._cur.rowcount == 1:
            _ACTIVE.moved(f"pointer of {tuple(params)[2:5]} -> {params[0]}")
        return self

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cur, name)


class _Connection:
    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def cursor(self) -> _Cursor:
        return _Cursor(self._conn.cursor())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def _wrap_exec():
    original = SqlCatalog._exec

    def wrapper(self, sql, params=()):
        if self._server is None and self._conn is not None and not isinstance(self._conn, _Connection):
            self._conn = _Connection(self._conn)
        return original(self, sql, params)

    return original, wrapper


def _wrap_thrift(name: str, original: Any):
    def wrapper(self, *args, **kwargs):
        lose = _step(f"thrift {name}")
        result = original(self, *args, **kwargs)
        if lose:
            raise _connection_error(f"thrift {name}", sent=True)
        if _ACTIVE is not None and name in THRIFT_MOVES:
            _ACTIVE.moved(f"thrift {name} {args[:2]}")
        return result

    return wrapper


def _thrift_methods() -> list[str]:
    if ThriftClient is None:
        return []
    return [n for n, v in vars(ThriftClient).items()
            if callable(v) and not n.startswith(("_", "send_", "recv_"))]


def _wrap_glue():
    original = botocore.client.BaseClient._make_api_call

    def wrapper(self, operation_name, api_params):
        glue = _ACTIVE is not None and self.meta.service_model.service_name == "glue"
        what = f"glue {operation_name} {api_params.get('Name') or api_params.get('TableInput', {}).get('Name')}"
        lose = glue and _step(what)
        result = original(self, operation_name, api_params)
        if lose:
            raise _connection_error(what, sent=True)
        if glue and operation_name in GLUE_MOVES:
            _ACTIVE.moved(f"glue {operation_name} {api_params.get('TableInput', {}).get('Name')}")
        return result

    return original, wrapper


IO_STEPS = ("write", "open", "delete", "rename_no_replace", "makedirs", "rmdir", "move", "copy")


def install() -> dict[str, Any]:
    """Wrap FileIO and SqlCatalog (idempotent); return the originals."""
    if getattr(FileIO, "_crash_originals", None):
        return FileIO._crash_originals
    originals: dict[str, Any] = {}
    for name in IO_STEPS:
        originals[name], w = _wrap_io(name)
        setattr(FileIO, name, w)
    originals["_exec"], w = _wrap_exec()
    SqlCatalog._exec = w
    for name in _thrift_methods():
        originals["thrift " + name] = getattr(ThriftClient, name)
        setattr(ThriftClient, name, _wrap_thrift(name, originals["thrift " + name]))
    originals["glue"], w = _wrap_glue()
    botocore.client.BaseClient._make_api_call = w
    FileIO._crash_originals = originals
    return originals


def uninstall() -> None:
    originals = getattr(FileIO, "_crash_originals", None)
    if not originals:
        return
    for name in IO_STEPS:
        setattr(FileIO, name, originals[name])
    SqlCatalog._exec = originals["_exec"]
    for name in _thrift_methods():
        setattr(ThriftClient, name, originals["thrift " + name])
    botocore.client.BaseClient._make_api_call = originals["glue"]
    FileIO._crash_originals = None


@contextmanager
def injecting(injector: Injector) -> Iterator[Injector]:
    global _ACTIVE
    install()
    _ACTIVE = injector
    try:
        yield injector
    finally:
        _ACTIVE = None


def install_from_env() -> None:
    """In a subprocess: ``ICECTL_TEST_FAULT=crash:K`` (or ``count:0``, with the steps written to
    ``ICECTL_TEST_FAULT_LOG`` at exit)."""
    global _ACTIVE
    spec = os.environ.get(ENV)
    if not spec:
        return
    mode, _, k = spec.partition(":")
    install()
    _ACTIVE = Injector(mode, int(k or 0), exit_process=True)
    log = os.environ.get(ENV + "_LOG")
    if log:
        import atexit

        def write_log(inj: Injector = _ACTIVE) -> None:
            with open(log, "w") as f:
                f.write("\n".join(inj.steps))

        atexit.register(write_log)
