"""icectl's Hive catalog on a real Hive Metastore: what it stores (as Iceberg Java's
HiveTableOperations), the lock around the compare-and-set, the commit status check, and the
namespace and table operations; PyIceberg's Hive catalog as the second client.

The last test stops the metastore mid-command and starts it again.
"""
from __future__ import annotations

import json
import os
import re
import threading
import time

import pytest

from icectl.catalog import hive as hive_module
from icectl.catalog.hive import HiveCatalog
from icectl.catalog.hive_client import MetastoreClient, MetastoreUnreachable
from icectl.catalog.hive_tables import FILE_FORMATS
from icectl.errors import (CommitConflictError, CommitStateUnknownError, NoSuchTableError, StorageError)
from icectl.table.loaded import load_table
from icectl.table.metadata_io import read_metadata_file
from icectl.table.transaction import commit
from icectl.table.updates import SetProperties

pytestmark = [pytest.mark.hive, pytest.mark.spark]


def hive_table(env, name="events"):
    cat = env.catalog()
    return cat.client.call(lambda c: c.get_table(env.database, name))


def create(env, name="events", *more: str):
    assert env.cli("namespace", "create", env.database, "--yes")[0] in (0, 5)
    code, out, err = env.cli("create", env.table(name), "--schema", "id:long,name:string,ts:timestamptz,"
                             "amount:decimal(10,2)", *more, "--yes")
    assert code == 0, err


def pyiceberg_catalog(env):
    from pyiceberg.catalog.hive import HiveCatalog as PyHive

    # hive2-compatible: a Hive 2 metastore refuses the column type "timestamp with local time zone"
    return PyHive("hv", uri=env.metastore.uri, warehouse=str(env.metastore.warehouse),
                  **{"hive.hive2-compatible": "true"})


def test_namespaces_are_hive_databases(hive_env):
    env = hive_env
    db = env.database
    code, _, err = env.cli("namespace", "create", db, "--property", "owner-team=data", "--property", "comment=hi",
                           "--yes")
    assert code == 0, err
    cat = env.catalog()
    database = cat.client.call(lambda c: c.get_database(db))
    assert database.description == "hi" and database.parameters == {"owner-team": "data"}
    assert database.locationUri.rstrip("/").endswith(f"{env.metastore.warehouse}/{db}.db")  # Java: <warehouse>/<db>.db
    assert (db,) in cat.list_namespaces() and cat.list_namespaces((db,)) == []
    props = cat.load_namespace_properties((db,))
    assert props["comment"] == "hi" and props["owner-team"] == "data" and props["location"] == database.locationUri
    change = cat.update_namespace_properties((db,), updates={"x": "1"}, removals=["owner-team", "nope"])
    assert change.updated == ("x",) and change.removed == ("owner-team",) and change.missing == ("nope",)
    assert cat.client.call(lambda c: c.get_database(db)).parameters == {"x": "1"}
    assert env.cli("namespace", "create", db, "--yes")[0] == 5
    create(env)
    code, _, err = env.cli("namespace", "drop", db, "--yes")
    assert code == 5 and "not empty" in err
    assert env.cli("drop", env.table(), "--yes")[0] == 0
    assert env.cli("namespace", "drop", db, "--yes")[0] == 0
    assert (db,) not in cat.list_namespaces()
    code, _, err = env.cli("namespace", "drop", db, "--yes")
    assert code == 3, err


def test_table_is_stored_as_iceberg_java_stores_it(hive_env):
    env = hive_env
    create(env)
    tbl = hive_table(env)
    first = tbl.parameters["metadata_location"]
    assert tbl.tableType == "EXTERNAL_TABLE"
    assert tbl.parameters["EXTERNAL"] == "TRUE" and tbl.parameters["table_type"] == "ICEBERG"
    assert "previous_metadata_location" not in tbl.parameters
    assert (tbl.sd.inputFormat, tbl.sd.outputFormat, tbl.sd.serdeInfo.serializationLib) == FILE_FORMATS
    assert [(c.name, c.type) for c in tbl.sd.cols] == [("id", "bigint"), ("name", "string"), ("ts", "timestamp"),
                                                       ("amount", "decimal(10,2)")]
    md = read_metadata_file(env.catalog().io, first)
    assert tbl.sd.location == md.location
    assert env.cli("properties", env.table(), "set", "owner=ops", "engine.hive.enabled=true", "--yes")[0] == 0
    tbl = hive_table(env)
    assert tbl.parameters["previous_metadata_location"] == first
    assert tbl.parameters["owner"] == "ops"
    assert tbl.parameters["storage_handler"] == "org.apache.iceberg.mr.hive.HiveIcebergStorageHandler"
    assert tbl.sd.inputFormat == "org.apache.iceberg.mr.hive.HiveIcebergInputFormat"
    second = tbl.parameters["metadata_location"]
    assert env.cli("properties", env.table(), "unset", "owner", "engine.hive.enabled", "--yes")[0] == 0
    tbl = hive_table(env)
    assert "owner" not in tbl.parameters and "storage_handler" not in tbl.parameters
    assert tbl.parameters["previous_metadata_location"] == second
    assert (tbl.sd.inputFormat, tbl.sd.outputFormat, tbl.sd.serdeInfo.serializationLib) == FILE_FORMATS
    # A Hive table that is not Iceberg's is neither listed nor loaded.
    plain = hive_table(env)
    plain.tableName, plain.parameters = "plain", {"EXTERNAL": "TRUE"}
    env.catalog().client.call(lambda c: c.create_table(plain))
    assert env.catalog().list_tables((env.database,)) == [(env.database, "events")]
    code, _, err = env.cli("describe", env.table("plain"))
    assert code == 3 and "not an Iceberg table" in err


def test_pyiceberg_reads_and_writes_icectl_tables(hive_env):
    import pyarrow as pa

    env = hive_env
    assert env.cli("namespace", "create", env.database, "--yes")[0] == 0
    assert env.cli("create", env.table(), "--schema", "id:long,name:string", "--yes")[0] == 0
    py = pyiceberg_catalog(env)
    t = py.load_table(env.table())
    t.append(pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"]}, schema=t.schema().as_arrow()))
    code, out, err = env.cli("describe", env.table())
    assert code == 0, err
    assert re.search(r"^records\s+3$", out, re.M), out
    assert load_table(env.catalog(), (env.database, "events")).metadata.current_snapshot.summary["total-records"] == "3"
    assert env.cli("properties", env.table(), "set", "a=b", "--yes")[0] == 0
    t = py.load_table(env.table())
    assert t.properties["a"] == "b"
    assert sorted(t.scan().to_arrow()["id"].to_pylist()) == [1, 2, 3]
    assert hive_table(env).parameters["numRows"] == "3"


def test_a_commit_between_load_and_swap_is_a_conflict_the_transaction_retries(hive_env, monkeypatch):
    env = hive_env
    create(env)
    ident = (env.database, "events")
    cat = env.catalog()
    table = load_table(cat, ident)
    other = env.catalog()
    commit(load_table(other, ident), [SetProperties({"other": "1"})])
    # The compare-and-set itself, under the lock: a stale base is refused and its file removed.
    before = set(os.listdir(str(env.metastore.warehouse / f"{env.database}.db" / "events" / "metadata")))
    with pytest.raises(CommitConflictError):
        cat.replace_metadata(ident, table.metadata_location, table.metadata)
    assert set(os.listdir(str(env.metastore.warehouse / f"{env.database}.db" / "events" / "metadata"))) == before
    # Through the transaction: another writer commits between icectl's load and its swap.
    real = HiveCatalog._swap_pointer
    calls: list[str] = []
    other_committed = []

    def swap_after_another_commit(self, ident_, base, md, location):
        if not other_committed:
            other_committed.append(True)
            commit(load_table(env.catalog(), ident_), [SetProperties({"java": "2"})])  # swaps through here too
        calls.append(base)
        return real(self, ident_, base, md, location)

    monkeypatch.setattr(HiveCatalog, "_swap_pointer", swap_after_another_commit)
    code, out, err = env.cli("properties", env.table(), "set", "mine=3", "--yes")
    assert code == 0, err
    assert len(calls) == 3 and calls[1] == calls[0] != calls[2]  # the other's swap, icectl's twice
    props = load_table(env.catalog(), ident).metadata.properties
    assert props["other"] == "1" and props["java"] == "2" and props["mine"] == "3"


def test_the_lock_is_waited_for_and_times_out(hive_env):
    from hive_metastore.ttypes import (LockComponent, LockLevel, LockRequest, LockType, UnlockRequest)

    env = hive_env
    create(env)
    ident = (env.database, "events")
    holder = MetastoreClient([env.metastore.uri])
    req = LockRequest(component=[LockComponent(type=LockType.EXCLUSIVE, level=LockLevel.TABLE, dbname=env.database,
                                               tablename="events")], user="other", hostname="other-host")
    held = holder.call(lambda c: c.lock(req))
    env.write(**{"iceberg.hive.lock-timeout-ms": "1500", "iceberg.hive.lock-check-max-wait-ms": "200"})
    cat = env.catalog()
    table = load_table(cat, ident)
    start = time.monotonic()
    with pytest.raises(CommitConflictError, match="timed out after .* waiting for the Hive lock"):
        commit(table, [SetProperties({"x": "1"})])
    assert 1.0 < time.monotonic() - start < 10
    assert load_table(cat, ident).metadata_location == table.metadata_location
    # Released while the commit waits: it goes on.
    env.write(**{"iceberg.hive.lock-timeout-ms": "20000"})
    timer = threading.Timer(1.0, lambda: holder.call(lambda c: c.unlock(UnlockRequest(lockid=held.lockid))))
    timer.start()
    try:
        after = commit(load_table(env.catalog(), ident), [SetProperties({"x": "1"})])
    finally:
        timer.join()
    assert hive_table(env).parameters["metadata_location"] == after.metadata_location


def test_a_lock_without_heartbeats_is_released_as_java_releases_it(hive_env):
    from hive_metastore.ttypes import LockComponent, LockLevel, LockRequest, LockType

    env = hive_env
    create(env)
    ident = (env.database, "events")
    holder = MetastoreClient([env.metastore.uri])
    req = LockRequest(component=[LockComponent(type=LockType.EXCLUSIVE, level=LockLevel.TABLE, dbname=env.database,
                                               tablename="events")], user="crashed", hostname="gone")
    holder.call(lambda c: c.lock(req))  # never unlocked, never heartbeated: a writer that died
    time.sleep(1.0)
    env.write(**{"iceberg.hive.lock-timeout-ms": "20000", "iceberg.hive.lock-heartbeat-interval-ms": "500"})
    after = commit(load_table(env.catalog(), ident), [SetProperties({"x": "1"})])
    assert hive_table(env).parameters["metadata_location"] == after.metadata_location


class _Probe(Exception):
    pass


def method_of(fn) -> str:
    """The metastore method that ``fn(client)`` calls (found without calling it)."""
    class Recorder:
        def __getattr__(self, name):
            def record(*args, **kwargs):
                raise _Probe(name)
            return record

    try:
        fn(Recorder())
    except _Probe as e:
        return str(e)
    raise AssertionError("no metastore call")


@pytest.mark.parametrize("case", ["applied", "not-applied", "unreadable"])
def test_a_broken_connection_after_alter_table_is_checked_as_java_checks_it(hive_env, monkeypatch, case):
    env = hive_env
    create(env)
    ident = (env.database, "events")
    monkeypatch.setattr(hive_module, "STATUS_CHECK_WAIT_S", 0.01)
    real_call = MetastoreClient.call
    broken = []

    def call(self, fn, *, reconnect=True):
        if broken:  # "unreadable": the metastore went away with the alter_table
            raise MetastoreUnreachable("thrift://metastore", "connection refused")
        if method_of(fn).startswith("alter_table"):  # alter_table of a commit (never resent)
            assert not reconnect
            if case == "applied":
                real_call(self, fn, reconnect=reconnect)
            if case == "unreadable":
                broken.append(True)
            raise MetastoreUnreachable("thrift://metastore", "connection reset")
        return real_call(self, fn, reconnect=reconnect)

    patch = pytest.MonkeyPatch()  # undone before the checks (the test's own keeps the configuration)
    patch.setattr(MetastoreClient, "call", call)
    cat = env.catalog()
    table = load_table(cat, ident)
    meta_dir = env.metastore.warehouse / f"{env.database}.db" / "events" / "metadata"
    before = set(os.listdir(meta_dir))
    if case == "applied":
        after = commit(table, [SetProperties({"x": "1"})])
        patch.undo()
        assert hive_table(env).parameters["metadata_location"] == after.metadata_location
        return
    error = CommitStateUnknownError if case == "unreadable" else StorageError
    with pytest.raises(error) as e:
        commit(table, [SetProperties({"x": "1"})])
    patch.undo()
    assert hive_table(env).parameters["metadata_location"] == table.metadata_location
    added = set(os.listdir(meta_dir)) - before
    if case == "unreadable":
        assert e.value.exit_code == 12 and len(added) == 1  # outcome unknown: the new file is kept
    else:
        assert added == set()  # surely failed: the new file is removed


def test_register_rename_and_drop(hive_env, tmp_path):
    env = hive_env
    create(env)
    location = hive_table(env).parameters["metadata_location"]
    code, _, err = env.cli("register", env.table("copy"), location, "--yes")
    assert code == 0, err
    assert hive_table(env, "copy").parameters["metadata_location"] == location  # no new file: Java's registerTable
    code, _, err = env.cli("register", env.table("copy"), location, "--yes")
    assert code == 5, err
    code, _, err = env.cli("rename", env.table("copy"), "nodb.copy", "--yes")
    assert code == 3 and "nodb" in err
    code, _, err = env.cli("rename", env.table("copy"), env.table(), "--yes")
    assert code == 5, err
    assert env.cli("rename", env.table("copy"), env.table("moved"), "--yes")[0] == 0
    assert env.catalog().list_tables((env.database,)) == [(env.database, "events"), (env.database, "moved")]
    assert env.cli("drop", env.table("moved"), "--yes")[0] == 0
    assert os.path.exists(location.removeprefix("file:"))  # without purge the files stay
    code, _, err = env.cli("drop", env.table(), "--purge", "--yes")
    assert code == 0, err
    assert not os.path.exists(location.removeprefix("file:"))
    with pytest.raises(NoSuchTableError):
        env.catalog().load((env.database, "events"))


def test_uri_opens_a_hive_catalog_with_failover(hms, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    from icectl.cli.context import Env
    from icectl.cli.main import run
    import io

    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    # The first metastore does not answer: the second is used.
    code = run(["--uri", f"thrift://127.0.0.1:1,{hms.uri}", "namespace", "list", "-o", "json"], env)
    assert code == 0, env.stderr.getvalue()
    assert "default" in json.loads(env.stdout.getvalue())["namespaces"]
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run(["--uri", "thrift://127.0.0.1:1", "list"], env)
    err = env.stderr.getvalue()
    assert code == 10 and len(err.splitlines()) <= 2 and "cannot reach the Hive Metastore" in err


def test_metastore_stopped_mid_command_is_a_clear_error_and_nothing_is_deleted(hive_env):
    """Runs last: it stops the session's metastore (during an expire, before its swap) and starts
    it again."""
    import pyarrow as pa

    env = hive_env
    create(env)
    py = pyiceberg_catalog(env)
    for i in range(3):
        t = py.load_table(env.table())
        t.overwrite(pa.Table.from_pylist([{"id": i, "name": "x", "ts": None, "amount": None}],
                                         schema=t.schema().as_arrow()))
    env.write(**{"iceberg.hive.lock-creation-timeout-ms": "500"})
    ident = (env.database, "events")
    location = hive_table(env).parameters["metadata_location"]
    root = env.metastore.warehouse / f"{env.database}.db"
    files = {os.path.join(p, f) for p, _, fs in os.walk(root) for f in fs}
    snapshots = len(load_table(env.catalog(), ident).metadata.snapshots)
    assert snapshots > 1
    real = HiveCatalog._swap_pointer

    def stop_then_swap(self, ident_, base, md, loc):
        env.metastore.stop()
        return real(self, ident_, base, md, loc)

    patch = pytest.MonkeyPatch()
    patch.setattr(HiveCatalog, "_swap_pointer", stop_then_swap)
    try:
        code, out, err = env.cli("expire", env.table(), "--retain-last", "1", "--older-than", "0s", "--yes")
        assert code == 10, err
        assert err.startswith("icectl: error: could not create the Hive lock on table") and "Traceback" not in err
        assert len(err.strip().splitlines()) <= 2
    finally:
        patch.undo()
        env.metastore.restart()
    assert hive_table(env).parameters["metadata_location"] == location
    after = {os.path.join(p, f) for p, _, fs in os.walk(root) for f in fs}
    assert files <= after  # nothing deleted (the expired snapshots' files too)
    assert len(load_table(env.catalog(), ident).metadata.snapshots) == snapshots
    assert sorted(py.load_table(env.table()).scan().to_arrow()["id"].to_pylist()) == [2]
