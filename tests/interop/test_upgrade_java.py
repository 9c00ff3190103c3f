"""`upgrade-format` on tables Iceberg Java wrote: after icectl takes a v1 table to v2 and v3 in the
shared JDBC catalog, Iceberg Java reads it (position deletes written at v2 still apply), commits to
it, and its metadata shows format-version 3 with row ids assigned; icectl validates it clean. A
Java v3 table in the file-system catalog cannot go to v4 there; registered in a SQL catalog and
upgraded, icectl reads, validates, appends to it (with relative paths) and compacts it."""
from __future__ import annotations

import io
import json
import os

import pytest

from icectl.cli.context import Env
from icectl.cli.main import run

pytestmark = [pytest.mark.interop, pytest.mark.spark]


def icectl(args, *more, expect=0):
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run([*args, "-o", "json", *more], env)
    assert expect is None or code == expect, env.stdout.getvalue() + env.stderr.getvalue()
    out = env.stdout.getvalue()
    return json.loads(out) if out.strip() else None


def findings(args, name):
    report = icectl(args, "validate", name, "--deep", "--all-snapshots", expect=None)
    return [f"{f['severity']} {f['code']}: {f['message']}" for f in report["findings"]]


@pytest.fixture
def jc_args(jdbc_catalog_db, jdbc_warehouse, tmp_path, monkeypatch, spark):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    spark.sql("SHOW NAMESPACES IN jc").collect()
    return ["-c", "jc", "--uri", f"jdbc:sqlite:{jdbc_catalog_db}", "--warehouse", str(jdbc_warehouse)]


def _rows(spark, name):
    return sorted(tuple(r) for r in spark.sql(f"SELECT id, data FROM {name}").collect())


def test_upgrade_v1_to_v3_then_java_reads_and_commits(jc_args, spark):
    name = "jc.db.upgraded"
    spark.sql("CREATE NAMESPACE IF NOT EXISTS jc.db")
    spark.sql(f"CREATE TABLE {name} (id bigint, data string, cat string) USING iceberg PARTITIONED BY (cat) "
              "TBLPROPERTIES ('format-version'='1')")
    spark.sql(f"INSERT INTO {name} VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, 'c', 'x')")
    spark.sql(f"INSERT INTO {name} VALUES (4, 'd', 'y')")
    assert findings(jc_args, "db.upgraded") == []

    plan = icectl(jc_args, "upgrade-format", "db.upgraded", "--to", "2", "--dry-run")
    assert plan["dry_run"] is True and plan["plan"]["blockers"] == []
    icectl(jc_args, "upgrade-format", "db.upgraded", "--to", "2", "--yes")
    assert findings(jc_args, "db.upgraded") == []
    # Java commits at v2: merge-on-read deletes write a position delete file.
    spark.sql(f"ALTER TABLE {name} SET TBLPROPERTIES ('write.delete.mode'='merge-on-read')")
    spark.sql(f"DELETE FROM {name} WHERE id = 2")
    assert findings(jc_args, "db.upgraded") == []
    d = icectl(jc_args, "describe", "db.upgraded")
    assert d["format_version"] == 2 and d["totals"]["position_delete_files"] == 1

    plan = icectl(jc_args, "upgrade-format", "db.upgraded", "--to", "3", "--dry-run")
    assert any("position delete files stay valid" in f for f in plan["plan"]["found"])
    icectl(jc_args, "upgrade-format", "db.upgraded", "--to", "3", "--yes")
    assert findings(jc_args, "db.upgraded") == []
    assert _rows(spark, name) == [(1, "a"), (3, "c"), (4, "d")]  # the v2 position delete still applies

    spark.sql(f"INSERT INTO {name} VALUES (5, 'e', 'x')")
    spark.sql(f"DELETE FROM {name} WHERE id = 3")  # v3: a deletion vector
    assert _rows(spark, name) == [(1, "a"), (4, "d"), (5, "e")]
    d = icectl(jc_args, "describe", "db.upgraded")
    md = json.load(open(d["metadata_location"]))
    assert md["format-version"] == 3
    assert md["next-row-id"] >= 4
    assert any(s.get("first-row-id") is not None for s in md["snapshots"])
    lineage = spark.sql(f"SELECT id, _row_id FROM {name}").collect()
    ids = [r[1] for r in lineage]
    assert None not in ids and len(set(ids)) == len(ids)
    assert findings(jc_args, "db.upgraded") == []


def test_java_v3_table_to_v4_through_a_sql_catalog(java_table_factory, oracle_warehouse, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    jt = java_table_factory("v3")
    hc = ["--warehouse", str(oracle_warehouse)]
    report = icectl(hc, "upgrade-format", jt.identifier, "--to", "4", "--dry-run")
    assert [b["code"] for b in report["plan"]["blockers"]] == ["V4_FILESYSTEM_CATALOG"]
    icectl(hc, "upgrade-format", jt.identifier, "--to", "4", "--yes", expect=7)

    sql = ["-c", "ice", "--uri", f"sqlite:///{tmp_path}/ice.db", "--warehouse", str(tmp_path / "wh")]
    reg = icectl(sql, "register", jt.identifier, jt.metadata_location, "--yes")
    assert reg["registered"] is True
    icectl(sql, "upgrade-format", jt.identifier, "--to", "4", "--yes")
    assert findings(sql, jt.identifier) == []
    files = icectl(sql, "files", jt.identifier)
    assert sorted(f["file_path"] for f in files if f["content"] == "data") == sorted(f.file_path for f in jt.data_files)

    from icectl.catalog import build_catalog, parse_identifier, resolve_catalog_config
    from icectl.formats.manifest import DataFile
    from helpers import append_files
    from icectl.table.loaded import load_table

    catalog = build_catalog(resolve_catalog_config("ice", uri=sql[3], warehouse=sql[5]))
    t = load_table(catalog, parse_identifier(jt.identifier))
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = os.path.join(t.location, "data", "region=eu", "icectl-v4.parquet")
    schema = pa.schema([pa.field("id", pa.int64(), metadata={"PARQUET:field_id": "1"}),
                        pa.field("region", pa.string(), metadata={"PARQUET:field_id": "2"}),
                        pa.field("qty", pa.int32(), metadata={"PARQUET:field_id": "3"}),
                        pa.field("ts", pa.timestamp("us", tz="UTC"), metadata={"PARQUET:field_id": "4"})])
    pq.write_table(pa.table({"id": [1000], "region": ["eu"], "qty": [1], "ts": pa.array([0], pa.timestamp("us", tz="UTC"))},
                            schema=schema), path)
    t = append_files(t, [DataFile(path, "parquet", ("eu",), 1, os.path.getsize(path))])
    import fastavro

    manifest = t.manifests(t.metadata.current_snapshot)[0]
    stored = [r["data_file"]["file_path"] for r in fastavro.reader(open(manifest.manifest_path, "rb"))]
    assert stored == ["data/region=eu/icectl-v4.parquet"]
    assert findings(sql, jt.identifier) == []
    d = icectl(sql, "describe", jt.identifier)
    assert d["format_version"] == 4
    assert d["totals"]["records"] == sum(f.record_count for f in jt.data_files) + 1

    # Compaction of the v4 table (spark-submit, local): every row once, deletion vectors applied,
    # new manifests with relative paths and content_stats, and the table validates clean.
    import datetime as dt

    from icectl.table.scan import plan_files

    result = icectl(sql, "compact", jt.identifier, "--yes", "--rewrite-all")
    assert result["committed"] and not result["failed_groups"], result
    assert result["rewritten_data_files"] == len(jt.data_files) + 1
    assert findings(sql, jt.identifier) == []
    t = load_table(catalog, parse_identifier(jt.identifier))
    tasks, deletes = plan_files(t, t.metadata.current_snapshot)
    assert deletes == []
    rows = [tuple(r.values()) for task in tasks
            for r in pq.read_table(task.file.file_path, columns=["id", "region", "qty", "ts"]).to_pylist()]
    expected = list(jt.rows) + [(1000, "eu", 1, dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc))]
    assert sorted(rows, key=repr) == sorted(expected, key=repr)
    snap = t.metadata.current_snapshot
    assert snap.summary["operation"] == "replace"
    for m in t.manifests(snap):
        with open(m.manifest_path, "rb") as fh:
            for r in fastavro.reader(fh):
                if r["status"] == 1:  # written by the compaction
                    assert not r["data_file"]["file_path"].startswith(("/", "file:")), r["data_file"]["file_path"]
                    assert r["data_file"]["content_stats"] is not None
