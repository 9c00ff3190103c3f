"""Tables icectl creates are read and written by Iceberg Java through the same SQLite catalog
(Iceberg's JdbcCatalog `jc`), and icectl describes Java's commits; both commit to one table
through the compare-and-set on `metadata_location` without losing each other's commits."""
from __future__ import annotations

import io
import json
import os

import pytest

from icectl.cli.context import Env
from icectl.cli.main import run

pytestmark = [pytest.mark.interop, pytest.mark.spark]


@pytest.fixture
def jc_args(jdbc_catalog_db, jdbc_warehouse, tmp_path, monkeypatch, spark):
    monkeypatch.setenv("HOME", str(tmp_path))  # no user configuration leaks in
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    spark.sql("SHOW NAMESPACES IN jc").collect()  # let JdbcCatalog create its tables first
    return ["-c", "jc", "--uri", f"jdbc:sqlite:{jdbc_catalog_db}", "--warehouse", str(jdbc_warehouse)]


def icectl(args, *more):
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run([*args, "-o", "json", *more], env)
    assert code == 0, env.stderr.getvalue()
    out = env.stdout.getvalue()
    return json.loads(out) if out.strip() else None


@pytest.mark.parametrize("version", [1, 2, 3])
def test_spark_writes_and_reads_icectl_table(jc_args, spark, version):
    name = f"ice_v{version}"
    icectl(jc_args, "create", "--yes", f"db.{name}", "--schema", "id:long!, name:string, ts:timestamp, amount:decimal(10,2)",
           "--partition-by", "day(ts), bucket(4, id)", "--sort-by", "id desc nulls last",
           "--format-version", str(version), "--property", "icectl.created-by=test")
    spark.sql(f"INSERT INTO jc.db.{name} VALUES (1, 'a', TIMESTAMP '2026-01-01 10:00:00', 1.50), "
              f"(2, 'b', TIMESTAMP '2026-01-02 11:00:00', 2.25), (3, NULL, NULL, NULL)")
    spark.sql(f"INSERT INTO jc.db.{name} VALUES (4, 'd', TIMESTAMP '2026-01-02 12:00:00', 4.00)")
    rows = sorted(tuple(r) for r in spark.sql(f"SELECT id, name FROM jc.db.{name}").collect())
    assert rows == [(1, "a"), (2, "b"), (3, None), (4, "d")]
    props = {r[0]: r[1] for r in spark.sql(f"SHOW TBLPROPERTIES jc.db.{name}").collect()}
    assert props["icectl.created-by"] == "test"
    assert props.get("format-version", str(version)) == str(version)

    snaps = icectl(jc_args, "snapshots", f"db.{name}")
    spark_snaps = spark.sql(f"SELECT snapshot_id, parent_id, operation FROM jc.db.{name}.snapshots").collect()
    assert sorted(s["snapshot_id"] for s in snaps) == sorted(r[0] for r in spark_snaps)
    assert all(s["operation"] == "append" for s in snaps)
    files = icectl(jc_args, "files", f"db.{name}")
    spark_files = spark.sql(f"SELECT file_path, record_count FROM jc.db.{name}.files").collect()
    assert sorted((f["file_path"], f["record_count"]) for f in files) == sorted((r[0], r[1]) for r in spark_files)
    d = icectl(jc_args, "describe", f"db.{name}")
    assert d["totals"]["records"] == 4
    assert d["format_version"] == version
    assert [f["name"] for f in d["partition_specs"][0]["fields"]] == ["ts_day", "id_bucket"]
    assert d["sort_orders"][-1]["fields"][0]["direction"] == "desc"
    if version >= 3:
        lineage = spark.sql(f"SELECT id, _row_id FROM jc.db.{name} ORDER BY id").collect()
        assert sorted(r[1] for r in lineage) == list(range(4))
        assert d["next_row_id"] == 4


def _parquet_with_ids(path, ids):
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([pa.field("id", pa.int64(), nullable=False, metadata={"PARQUET:field_id": "1"}),
                        pa.field("name", pa.string(), metadata={"PARQUET:field_id": "2"})])
    pq.write_table(pa.table({"id": ids, "name": [f"n{i}" for i in ids]}, schema=schema), path)
    return os.path.getsize(path)


def test_concurrent_commits_through_shared_sqlite(jc_args, spark, jdbc_warehouse):
    """icectl reads the table, Spark commits, then icectl commits: the compare-and-set fails,
    icectl re-reads and retries, and both appends are in the table."""
    from icectl.catalog import build_catalog, resolve_catalog_config
    from icectl.formats.manifest import DataFile
    from icectl.table.snapshot_producer import build_snapshot, SnapshotChange
    from icectl.table.transaction import Transaction
    from icectl.table.loaded import load_table

    icectl(jc_args, "create", "--yes", "db.shared", "--schema", "id:long!, name:string", "--format-version", "2")
    catalog = build_catalog(resolve_catalog_config("jc", uri=jc_args[3], warehouse=jc_args[5]))
    stale = load_table(catalog, ("db", "shared"))
    spark.sql("INSERT INTO jc.db.shared VALUES (1, 'spark')")
    path = os.path.join(stale.location, "data", "icectl-1.parquet")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    size = _parquet_with_ids(path, [10, 11])
    attempts = []

    def build(txn):
        attempts.append(txn.table.metadata_location)
        return build_snapshot(txn, SnapshotChange("append", added=[DataFile(path, "parquet", (), 2, size)]))

    committed = Transaction(stale).commit(build).table
    assert len(attempts) == 2  # the first attempt lost the race to Spark's commit
    spark.sql("INSERT INTO jc.db.shared VALUES (2, 'spark')")
    rows = sorted(r[0] for r in spark.sql("SELECT id FROM jc.db.shared").collect())
    assert rows == [1, 2, 10, 11]
    final = load_table(catalog, ("db", "shared"))
    assert len(final.metadata.snapshots) == 3
    assert committed.metadata.snapshots[-1].snapshot_id in {s.snapshot_id for s in final.metadata.snapshots}


def test_pyiceberg_reads_icectl_tables(jc_args, tmp_path):
    pytest.importorskip("pyiceberg")
    from pyiceberg.catalog.sql import SqlCatalog

    for version in (1, 2):
        icectl(jc_args, "create", "--yes", f"db.py_v{version}", "--schema", "id:long!, name:string",
               "--partition-by", "bucket(2, id)", "--format-version", str(version))
    cat = SqlCatalog("jc", uri=f"sqlite:///{jc_args[3][len('jdbc:sqlite:'):]}", warehouse=jc_args[5])
    for version in (1, 2):
        t = cat.load_table(f"db.py_v{version}")
        assert t.metadata.format_version == version
        assert [f.name for f in t.schema().fields] == ["id", "name"]
        assert t.spec().fields[0].name == "id_bucket"
