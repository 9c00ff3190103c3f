"""Spark (Iceberg Java 1.10.2) reads and writes a table after ``icectl alter`` changed it: columns
added, renamed, widened and moved; the partition spec evolved; rows written before the partition
change are still found, by filters on the old and the new partition fields; v3 column defaults
are what Spark reads for rows written before the column existed."""
from __future__ import annotations

import io
import json

import pytest

from icectl.cli.context import Env
from icectl.cli.main import run

pytestmark = [pytest.mark.interop, pytest.mark.spark]


@pytest.fixture
def icectl(oracle_warehouse, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)

    def call(*args: str) -> dict:
        env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
        code = run(["--warehouse", str(oracle_warehouse), "-o", "json", *args], env)
        assert code == 0, env.stderr.getvalue()
        return json.loads(env.stdout.getvalue())

    return call


@pytest.mark.parametrize("version", [1, 2, 3])
def test_spark_reads_and_writes_after_alter(spark, icectl, version):
    t = f"hc.db.alter_rw_v{version}"
    spark.sql(f"CREATE TABLE {t} (id bigint NOT NULL, name string, qty int, ts timestamp) USING iceberg "
              f"PARTITIONED BY (days(ts)) TBLPROPERTIES ('format-version'='{version}')")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'alpha', 10, TIMESTAMP '2026-01-01 01:00:00'), "
              f"(2, 'beta', 20, TIMESTAMP '2026-01-01 02:00:00'), (3, 'gamma', 30, TIMESTAMP '2026-01-02 03:00:00'), "
              f"(4, NULL, NULL, TIMESTAMP '2026-01-02 04:00:00')")
    doc = icectl("alter", t[3:], "--add-column", "note string after name", "--rename-column", "qty=quantity",
                 "--set-type", "quantity=long", "--drop-partition-field", "ts_day", "--add-partition-field",
                 "bucket(4, id)", "--add-partition-field", "month(ts)", "--sort-by", "id desc", "--yes")
    assert doc["applied"] is True
    spark.sql(f"INSERT INTO {t} (id, name, note, quantity, ts) VALUES "
              f"(5, 'delta', 'n5', 50000000000, TIMESTAMP '2026-02-01 00:00:00'), "
              f"(6, 'eps', NULL, 60, TIMESTAMP '2026-01-01 05:00:00')")
    assert spark.sql(f"SELECT * FROM {t}").columns == ["id", "name", "note", "quantity", "ts"]
    rows = spark.sql(f"SELECT id, name, note, quantity, CAST(ts AS STRING) FROM {t} ORDER BY id").collect()
    assert [tuple(r) for r in rows] == [  # the session time zone is UTC
        (1, "alpha", None, 10, "2026-01-01 01:00:00"), (2, "beta", None, 20, "2026-01-01 02:00:00"),
        (3, "gamma", None, 30, "2026-01-02 03:00:00"), (4, None, None, None, "2026-01-02 04:00:00"),
        (5, "delta", "n5", 50000000000, "2026-02-01 00:00:00"), (6, "eps", None, 60, "2026-01-01 05:00:00")]
    # Rows written before the partition change are found by filters on the old and the new fields.
    assert spark.sql(f"SELECT id FROM {t} WHERE ts >= TIMESTAMP '2026-01-01 00:00:00' "
                     f"AND ts < TIMESTAMP '2026-01-02 00:00:00' ORDER BY id").collect() == [(1,), (2,), (6,)]
    assert [r[0] for r in spark.sql(f"SELECT id FROM {t} WHERE id IN (3, 5) ORDER BY id").collect()] == [3, 5]
    specs = sorted({r[0] for r in spark.sql(f"SELECT spec_id FROM {t}.files").collect()})
    assert specs == [0, 1]
    v = icectl("validate", t[3:])
    assert v["ok"] is True, v["findings"]
    # Spark changes the table further on top of icectl's change; icectl reads what it made.
    spark.sql(f"ALTER TABLE {t} ADD COLUMN extra double")
    d = icectl("describe", t[3:])
    assert [f["name"] for f in d["schema"]["fields"]] == ["id", "name", "note", "quantity", "ts", "extra"]
    assert d["schema"]["fields"][2]["id"] == 5 and d["schema"]["fields"][5]["id"] == 6


def test_spark_reads_v3_initial_defaults(spark, icectl):
    t = "hc.db.alter_defaults"
    spark.sql(f"CREATE TABLE {t} (id bigint NOT NULL) USING iceberg TBLPROPERTIES ('format-version'='3')")
    spark.sql(f"INSERT INTO {t} VALUES (1), (2)")
    icectl("alter", t[3:], "--add-column", "n int default 7", "--add-column", "s string not null default 'x'",
           "--yes")
    rows = [tuple(r) for r in spark.sql(f"SELECT id, n, s FROM {t} ORDER BY id").collect()]
    assert rows == [(1, 7, "x"), (2, 7, "x")]


def test_through_the_sql_catalog_java_shares(spark, jdbc_catalog_db, jdbc_warehouse, tmp_path, monkeypatch):
    """The JdbcCatalog's rows: icectl's SQL catalog applies the updates with its builder and
    compare-and-sets; Spark reads and writes after, and Java's own change on top gives the ids
    Java would have given had it made both."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    spark.sql("SHOW NAMESPACES IN jc").collect()
    spark.sql("CREATE NAMESPACE IF NOT EXISTS jc.db")
    spark.sql("CREATE TABLE jc.db.alter_sql (id bigint NOT NULL, v string) USING iceberg "
              "TBLPROPERTIES ('format-version'='2')")
    spark.sql("INSERT INTO jc.db.alter_sql VALUES (1, 'a')")
    env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
    code = run(["-c", "jc", "--uri", f"jdbc:sqlite:{jdbc_catalog_db}", "--warehouse", str(jdbc_warehouse), "-o",
                "json", "alter", "db.alter_sql", "--add-column", "n int", "--add-partition-field", "bucket(2, id)",
                "--set-identifier-fields", "id", "--yes"], env)
    assert code == 0, env.stderr.getvalue()
    spark.sql("INSERT INTO jc.db.alter_sql VALUES (2, 'b', 20)")
    spark.sql("ALTER TABLE jc.db.alter_sql ADD COLUMN m string")
    assert [tuple(r) for r in spark.sql("SELECT * FROM jc.db.alter_sql ORDER BY id").collect()] == [
        (1, "a", None, None), (2, "b", 20, None)]
    from java_tables import java_table

    t = java_table(spark, "jc.db.alter_sql")
    assert [(f.fieldId(), f.name()) for f in t.schema().columns()] == [(1, "id"), (2, "v"), (3, "n"), (4, "m")]
    assert list(t.schema().identifierFieldIds()) == [1]
    assert str(t.spec().fields()[0]) == "1000: id_bucket_2: bucket[2](1)"
