"""A lock per table, so that two ``maintain`` runs (two cron hosts, a cron line and an Airflow
task, a run that outlived its schedule) never work on one table at the same time.

The lock is a small JSON file, ``metadata/_icectl-maintain.lock`` under the table location, created
with an exclusive create that makes it appear whole: a link of a written file (which refuses an
existing name) on a local or mounted disk, a conditional PUT (``If-None-Match: *``) on S3. Why there, and not in the catalog:

- it works the same for every catalog (SQL, PostgreSQL, REST, file-system) and across processes and
  hosts, since every run that can maintain the table reaches its location;
- it changes no table metadata: a lock kept in the catalog (a property or a ref, the only things a
  commit can compare-and-set on every catalog) would add two commits per run, show up to every
  reader (Spark lists refs), keep a snapshot from expiring, and make a run that has nothing to do
  write something;
- the name starts with ``_``: orphan-file removal (icectl's and Iceberg Java's) skips hidden names,
  so neither deletes a held lock.

The file holds its owner (host and process id), a random token and an expiry time (the lease: the
run's budget left plus an hour, or six hours, renewed before each step). A lock past its expiry was
left by a run that died; the next run removes it under a second lock (``..lock.break``, also
created exclusively, so two runs breaking it at once cannot both win), only while it still holds
the token read, and then creates its own, again exclusively. A run releases only a lock holding
its own token.
"""
from __future__ import annotations

import json
import os
import socket
import time
import uuid
from dataclasses import dataclass

from icectl.errors import IcectlError, NotFoundError, UsageError
from icectl.io import join
from icectl.table.loaded import Table

LOCK_NAME = "_icectl-maintain.lock"
DEFAULT_LEASE_MS = 6 * 3_600_000


@dataclass
class LockHolder:
    owner: str
    token: str
    acquired_ms: int
    expires_ms: int


def lock_path(table: Table) -> str:
    if not table.location:
        raise UsageError(f"{table.name} has no location to hold its maintenance lock")
    return join(table.location, "metadata", LOCK_NAME)


def _read(table: Table, path: str) -> LockHolder | None:
    try:
        raw = json.loads(table.io.read(path))
        return LockHolder(str(raw["owner"]), str(raw["token"]), int(raw["acquired_ms"]), int(raw["expires_ms"]))
    except NotFoundError:
        return None
    except (ValueError, KeyError, TypeError):
        # The lock appears whole (a link, a conditional PUT), so this is not a run writing it but
        # something else: held, for as long as a lease from its last change.
        modified = next((f.modified_ms for f in table.io.list_files(path) if f.modified_ms is not None), None)
        expires = (modified + DEFAULT_LEASE_MS) if modified is not None else 2 ** 62
        return LockHolder("unknown (an unreadable lock file)", "", 0, expires)


class TableLock:
    """``with TableLock(table) as lock: if lock.acquired: ...``; ``lock.holder`` names who has it."""

    def __init__(self, table: Table, *, lease_ms: int = DEFAULT_LEASE_MS, now_ms: int | None = None):
        self.table = table
        self.path = lock_path(table)
        now = now_ms if now_ms is not None else int(time.time() * 1000)
        self.mine = LockHolder(f"{socket.gethostname()}:{os.getpid()}", uuid.uuid4().hex, now, now + lease_ms)
        self.acquired = False
        self.holder: LockHolder | None = None
        self.broke: LockHolder | None = None  # an expired lock this run removed

    def acquire(self) -> bool:
        data = json.dumps(self.mine.__dict__).encode()
        io = self.table.io
        for _ in range(2):
            if io.create_exclusive(self.path, data):
                self.acquired = True
                return True
            held = _read(self.table, self.path)
            if held is None:
                continue  # released meanwhile: try again
            if held.expires_ms > int(time.time() * 1000):
                self.holder = held
                return False
            # Expired: break it under a second lock, so that of two runs breaking it at once one
            # cannot delete the lock the other has just taken.
            guard = self.path + ".break"
            if not io.create_exclusive(guard, data):
                self._clear_dead_guard(guard)
                self.holder = held
                return False
            try:
                again = _read(self.table, self.path)
                if again is not None and again.token == held.token:
                    try:
                        io.delete_own_file(self.path)
                    except NotFoundError:
                        pass
                    self.broke = held
                if io.create_exclusive(self.path, data):
                    self.acquired = True
                    return True
            finally:
                try:
                    io.delete_own_file(guard)
                except (IcectlError, OSError):
                    pass
        self.holder = _read(self.table, self.path)
        return False

    def _clear_dead_guard(self, guard: str) -> None:
        """A guard older than a minute belongs to a run that died while breaking a lock."""
        modified = next((f.modified_ms for f in self.table.io.list_files(guard) if f.modified_ms is not None), None)
        if modified is not None and modified < int(time.time() * 1000) - 60_000:
            try:
                self.table.io.delete_own_file(guard)
            except (IcectlError, OSError):
                pass

    def renew(self, lease_ms: int) -> bool:
        """Push the expiry ``lease_ms`` from now while the lock is still ours (before each step, so a
        long run is never taken for a dead one); False when it is no longer ours."""
        if not self.acquired:
            return False
        held = _read(self.table, self.path)
        if held is None or held.token != self.mine.token:
            self.acquired = False
            return False
        self.mine.expires_ms = int(time.time() * 1000) + lease_ms
        self.table.io.write(self.path, json.dumps(self.mine.__dict__).encode(), overwrite=True)
        return True

    def release(self) -> None:
        if not self.acquired:
            return
        held = _read(self.table, self.path)
        if held is not None and held.token == self.mine.token:
            try:
                self.table.io.delete_own_file(self.path)
            except (IcectlError, OSError):
                pass
        self.acquired = False

    def __enter__(self) -> "TableLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


__all__ = ["DEFAULT_LEASE_MS", "LOCK_NAME", "LockHolder", "TableLock", "lock_path"]
