"""icectl and Iceberg Java's JdbcCatalog on one PostgreSQL database.

Java runs in its own process (tests/catalog/java_sql.py: the oracle's `session(..., jdbc_uri=
"jdbc:postgresql://...")`), a separate JVM and database client. Both can create the catalog
tables first; and both commit to one table at once, a few dozen commits each, with icectl also
expiring snapshots: no commit of either side is lost, the metadata history is one unbroken chain,
the table validates clean and Spark reads every row.
"""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
import time

import pytest

from icectl.catalog.sql import SqlCatalog
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.io import FileIO
from icectl.table.loaded import load_table
from icectl.table.metadata_io import read_metadata_file
from icectl.table.snapshot_producer import SnapshotChange, build_snapshot
from helpers import commit_snapshot
from icectl.table.transaction import Transaction

from test_sql_catalog import write_parquet

pytestmark = [pytest.mark.postgres, pytest.mark.interop, pytest.mark.spark]

JAVA_COMMITS = 30
ICECTL_COMMITS = 30


@pytest.fixture(scope="module")
def pg(postgres_server):
    names = {"jc": "java_conc", "jc2": "java_first", "jc3": "icectl_first"}
    for db in names.values():
        postgres_server.drop_database(db)
        postgres_server.create_database(db)
    yield postgres_server, names
    for db in names.values():
        postgres_server.drop_database(db)


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    return tmp_path_factory.mktemp("pg-java") / "warehouse"


@pytest.fixture(scope="module")
def java(pg, warehouse, tmp_path_factory):
    import java_sql

    server, names = pg
    warehouse.mkdir(parents=True, exist_ok=True)
    log = str(tmp_path_factory.mktemp("pg-java-log") / "java.log")
    with java_sql.JavaSql(str(warehouse), {c: server.jdbc_uri(db) for c, db in names.items()}, log=log) as j:
        yield j


@pytest.fixture
def no_config(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)


def args(pg, warehouse, catalog: str) -> list[str]:
    server, names = pg
    return ["-c", catalog, "--uri", server.uri(names[catalog]), "--warehouse", str(warehouse)]


def icectl(cli_args: list[str], *more: str):
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run([*cli_args, "-o", "json", *more], env)
    assert code == 0, env.stderr.getvalue()
    out = env.stdout.getvalue()
    return json.loads(out) if out.strip() else None


def columns(server, db: str, table: str) -> list[str]:
    with server.connect(db) as con:
        return [r[0] for r in con.execute("SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(%s) "
                                          "AND attnum > 0 AND NOT attisdropped ORDER BY attnum", (table,))]


def catalog_rows(server, db: str) -> list[tuple]:
    with server.connect(db) as con:
        return [tuple(r) for r in con.execute("SELECT * FROM iceberg_tables ORDER BY table_name")]


def test_java_creates_the_tables_first(pg, warehouse, java, no_config):
    """JdbcCatalog creates its V0 layout (no iceberg_type); icectl works on it as it is."""
    server, names = pg
    java.sql("CREATE NAMESPACE jc2.jfirst")
    assert columns(server, names["jc2"], "iceberg_tables") == [
        "catalog_name", "table_namespace", "table_name", "metadata_location", "previous_metadata_location"]
    a = args(pg, warehouse, "jc2")
    icectl(a, "create", "--yes", "jfirst.ice", "--schema", "id:long!, name:string")
    java.sql("INSERT INTO jc2.jfirst.ice VALUES (1, 'java')")
    java.sql("CREATE TABLE jc2.jfirst.java (id bigint, name string) USING iceberg")
    java.sql("INSERT INTO jc2.jfirst.java VALUES (2, 'java')")
    cat = SqlCatalog("jc2", server.uri(names["jc2"]), str(warehouse), FileIO())
    for name, i in (("ice", 10), ("java", 20)):
        t = load_table(cat, ("jfirst", name))
        commit_snapshot(t, SnapshotChange("append", added=[
            write_parquet(warehouse / "jfirst" / name / "data" / f"icectl-{i}.parquet", [i], ["icectl"])]))
    assert java.sql("SELECT id, name FROM jc2.jfirst.ice ORDER BY id") == [[1, "java"], [10, "icectl"]]
    assert java.sql("SELECT id, name FROM jc2.jfirst.java ORDER BY id") == [[2, "java"], [20, "icectl"]]
    assert icectl(a, "list", "jfirst")["tables"] == ["jfirst.ice", "jfirst.java"]
    assert icectl(a, "describe", "jfirst.java")["totals"]["records"] == 2
    rows = catalog_rows(server, names["jc2"])
    assert [(r[0], r[1], r[2]) for r in rows] == [("jc2", "jfirst", "ice"), ("jc2", "jfirst", "java")]
    assert len(rows[0]) == 5  # still V0: icectl added no column


def test_icectl_creates_the_tables_first(pg, warehouse, java, no_config):
    """icectl creates the layout with iceberg_type; JdbcCatalog detects it (schema V1) and marks
    its own tables TABLE; icectl lists and describes Java's view as a view, and a table command refuses it."""
    server, names = pg
    a = args(pg, warehouse, "jc3")
    icectl(a, "create", "--yes", "ifirst.ice", "--schema", "id:long!, name:string")
    assert columns(server, names["jc3"], "iceberg_tables")[-1] == "iceberg_type"
    java.sql("INSERT INTO jc3.ifirst.ice VALUES (1, 'java')")
    java.sql("CREATE TABLE jc3.ifirst.java (id bigint) USING iceberg")
    java.sql("INSERT INTO jc3.ifirst.java VALUES (2)")
    java.sql("CREATE VIEW jc3.ifirst.v AS SELECT id FROM jc3.ifirst.java")
    rows = {r[2]: r for r in catalog_rows(server, names["jc3"])}
    assert rows["java"][5] == "TABLE" and rows["ice"][5] == "TABLE" and rows["v"][5] == "VIEW"
    assert icectl(a, "list", "ifirst")["tables"] == ["ifirst.ice", "ifirst.java"]
    assert icectl(a, "describe", "ifirst.ice")["totals"]["records"] == 1
    assert icectl(a, "describe", "ifirst.java")["totals"]["records"] == 1
    assert icectl(a, "list", "ifirst")["views"] == ["ifirst.v"]
    view = icectl(a, "describe", "ifirst.v")  # Java's view, described as a view
    assert view["kind"] == "view" and "jc3.ifirst.java" in view["sql"][0]["sql"].replace("`", "")
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    assert run([*a, "snapshots", "ifirst.v"], env) == 3  # a view is not a table
    assert "is a view" in env.stderr.getvalue()


def _metadata_chain(io_: FileIO, location: str) -> list:
    """Every metadata file of the table's history, oldest first (metadata-log, then current)."""
    md = read_metadata_file(io_, location)
    files = [e.metadata_file for e in md.metadata_log] + [location]
    return [(f, read_metadata_file(io_, f)) for f in files]


def test_java_and_icectl_commit_concurrently_and_lose_nothing(pg, warehouse, java, no_config, tmp_path):
    server, names = pg
    a = args(pg, warehouse, "jc")
    java.sql("CREATE NAMESPACE jc.conc")
    java.sql("CREATE TABLE jc.conc.t (id bigint, name string) USING iceberg TBLPROPERTIES ("
             "'format-version'='2', 'commit.retry.num-retries'='200', 'commit.retry.min-wait-ms'='5', "
             "'commit.retry.max-wait-ms'='200', 'write.metadata.previous-versions-max'='1000')")
    java.sql("INSERT INTO jc.conc.t VALUES (0, 'seed')")
    uri = server.uri(names["jc"])
    errors: list[str] = []
    icectl_snapshots: list[int] = []
    icectl_files: list[str] = []
    icectl_retries: list[int] = []
    expire_runs: list[tuple[int, list[int]]] = []
    writers_done = threading.Event()

    def java_writer():
        for i in range(JAVA_COMMITS):
            answer = java.request(f"INSERT INTO jc.conc.t VALUES ({100000 + i}, 'java')")
            if "error" in answer:
                errors.append(f"java {i}: {answer['error'][:300]}")

    def icectl_writer():
        cat = SqlCatalog("jc", uri, str(warehouse), FileIO())
        write = cat.write_metadata

        def slow_write(location, md):  # storage as slow as an object store's: a wider race window
            time.sleep(0.15)
            write(location, md)

        cat.write_metadata = slow_write
        for j in range(ICECTL_COMMITS):
            f = write_parquet(warehouse / "conc" / "t" / "data" / f"icectl-{j}.parquet", [200000 + j], ["icectl"])
            try:
                done = Transaction(load_table(cat, ("conc", "t")), retries=200).commit(
                    lambda txn: build_snapshot(txn, SnapshotChange("append", added=[f])))
            except Exception as e:  # reported below
                errors.append(f"icectl {j}: {type(e).__name__}: {e}")
                continue
            icectl_snapshots.append(done.table.metadata.current_snapshot_id)
            icectl_files.append(done.table.metadata_location)
            icectl_retries.append(done.attempts - 1)

    def icectl_expirer():
        env = {**os.environ, "HOME": str(tmp_path)}
        while not writers_done.is_set():
            p = subprocess.run([sys.executable, "-m", "icectl", *a, "expire", "conc.t", "--older-than",
                                str(int(time.time() * 1000)), "--retain-last", "3", "--yes", "-o", "json"],
                               env=env, capture_output=True, text=True, timeout=300)
            if p.returncode == 0:
                expire_runs.append((0, json.loads(p.stdout)["expired_snapshot_ids"]))
            elif p.returncode == 5:  # a clean conflict after its retries: nothing committed
                expire_runs.append((5, []))
            else:
                errors.append(f"expire exit {p.returncode}: {p.stderr.strip()[-300:]}")

    writers = [threading.Thread(target=java_writer), threading.Thread(target=icectl_writer)]
    expirer = threading.Thread(target=icectl_expirer)
    for th in writers + [expirer]:
        th.start()
    for th in writers:
        th.join(timeout=900)
    writers_done.set()
    expirer.join(timeout=300)
    assert errors == []
    assert len(icectl_snapshots) == ICECTL_COMMITS
    # At least one lost race, or the test proved nothing about the compare-and-set (usually several).
    assert sum(icectl_retries) >= 1, f"icectl's commits never lost a race to Java's: {icectl_retries}"
    # At least one expiry committed while the writers ran; the others either committed too or
    # stopped with a clean conflict (exit 5: the table moved in a way that changes the plan).
    assert sum(1 for code, ids in expire_runs if code == 0 and ids) >= 1 and len(expire_runs) >= 2, \
        f"the expiries did not overlap the writers: {expire_runs}"

    # Every commit of both sides is in the history: the metadata files form one chain (each built
    # on the one before it), and it holds every snapshot either side added.
    current = SqlCatalog("jc", uri, str(warehouse), FileIO()).load_metadata_location(("conc", "t"))
    chain = _metadata_chain(FileIO(), current)
    for (prev_file, _), (_, md) in zip(chain, chain[1:]):
        assert md.metadata_log[-1].metadata_file == prev_file, "a commit was not built on the one before it"
    assert set(icectl_files) <= {f for f, _ in chain}
    added: dict[int, dict] = {}
    for _, md in chain:
        for s in md.snapshots:
            added.setdefault(s.snapshot_id, s.summary)
    assert set(icectl_snapshots) <= set(added)
    java_appends = [sid for sid, summary in added.items() if "spark.app.id" in summary]
    assert len(java_appends) == 1 + JAVA_COMMITS  # the seed row and every INSERT
    # One metadata file per commit: create, seed, the writers' commits and the expiries that committed.
    expire_commits = sum(1 for code, ids in expire_runs if code == 0 and ids)
    assert len(chain) == 2 + JAVA_COMMITS + ICECTL_COMMITS + expire_commits

    print(f"chain {len(chain)} files, icectl retries {sum(icectl_retries)}, expiries {len(expire_runs)} "
          f"({expire_commits} committed), java appends {len(java_appends)}")
    expected = [0] + [100000 + i for i in range(JAVA_COMMITS)] + [200000 + j for j in range(ICECTL_COMMITS)]
    assert [r[0] for r in java.sql("SELECT id FROM jc.conc.t ORDER BY id")] == expected
    assert icectl(a, "describe", "conc.t")["totals"]["records"] == len(expected)
    p = subprocess.run([sys.executable, "-m", "icectl", *a, "validate", "conc.t", "--deep"],
                       env={**os.environ, "HOME": str(tmp_path)}, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
