"""The per-table maintenance lock: exclusive, renewed only while ours, released only when ours,
hidden from orphan removal."""
from __future__ import annotations

import json
import os
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from validate_corpus import tables  # noqa: E402

from icectl.ops.maintain.table_lock import TableLock, lock_path  # noqa: E402


def _table(tmp_path):
    return tables.build(str(tmp_path), 2).table


def test_exclusive_renew_release(tmp_path):
    t = _table(tmp_path)
    a, b = TableLock(t, lease_ms=60_000), TableLock(t)
    assert a.acquire() and not b.acquire()
    assert b.holder.token == a.mine.token and b.holder.owner == a.mine.owner
    before = json.loads(pathlib.Path(a.path).read_text())["expires_ms"]
    time.sleep(0.01)
    assert a.renew(3_600_000)
    assert json.loads(pathlib.Path(a.path).read_text())["expires_ms"] > before + 3_000_000
    a.release()
    assert not os.path.exists(a.path) and b.acquire()
    b.release()


def test_a_lock_taken_over_is_neither_renewed_nor_released(tmp_path):
    t = _table(tmp_path)
    a = TableLock(t)
    assert a.acquire()
    other = {"owner": "h:2", "token": "theirs", "acquired_ms": 1, "expires_ms": int(time.time() * 1000) + 60_000}
    pathlib.Path(a.path).write_text(json.dumps(other))  # as after our lease expired and another run broke it
    assert a.renew(60_000) is False
    a.release()
    assert json.loads(pathlib.Path(a.path).read_text())["token"] == "theirs"


def test_an_expired_lock_is_broken_and_the_lock_is_not_an_orphan(tmp_path):
    from icectl.ops.maintain.remove_orphans import plan_orphans

    t = _table(tmp_path)
    path = lock_path(t)
    pathlib.Path(path).write_text(json.dumps({"owner": "dead:1", "token": "old", "acquired_ms": 0, "expires_ms": 1}))
    old = time.time() - 30 * 86400
    os.utime(path, (old, old))
    assert plan_orphans(t).orphans == []  # hidden (leading "_"): never an orphan
    lock = TableLock(t)
    assert lock.acquire() and lock.broke.owner == "dead:1"
    assert json.loads(pathlib.Path(path).read_text())["token"] == lock.mine.token
    lock.release()
