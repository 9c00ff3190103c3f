"""icectl and Iceberg Java's HiveCatalog (and PyIceberg's) on one Hive Metastore.

icectl creates a v2 table; Java inserts and deletes; icectl describes Java's commits; icectl tags,
rolls back, expires, upgrades to v3 and compacts (the Spark job); Java and PyIceberg read the
right rows after each. A
Java commit that lands between icectl's load and its swap is detected and icectl's transaction
plans again.
"""
from __future__ import annotations

import pytest

from icectl.catalog.hive import HiveCatalog
from icectl.table.loaded import load_table

pytestmark = [pytest.mark.hive, pytest.mark.spark, pytest.mark.interop]


def java_rows(spark, name: str) -> list[tuple]:
    return sorted(tuple(r) for r in spark.sql(f"SELECT id, name FROM hive.{name}").collect())


def pyiceberg_rows(env, name: str) -> list[tuple]:
    from pyiceberg.catalog.hive import HiveCatalog as PyHive

    t = PyHive("hv", uri=env.metastore.uri, warehouse=str(env.metastore.warehouse)).load_table(name)
    arrow = t.scan().to_arrow()
    return sorted(zip(arrow["id"].to_pylist(), arrow["name"].to_pylist()))


def snapshot_ids(env, name: str) -> set[int]:
    """The snapshots icectl lists (``snapshots -o json``), checked against the catalog's metadata."""
    code, out, err = env.cli("snapshots", name, "-o", "json")
    assert code == 0, err
    ids = {s.snapshot_id for s in load_table(env.catalog(), tuple(name.split("."))).metadata.snapshots}
    assert all(str(i) in out for i in ids)
    return ids


def test_icectl_and_java_share_a_hive_table(hive_env, spark):
    env = hive_env
    name = env.table("t")
    assert env.cli("namespace", "create", env.database, "--yes")[0] == 0
    code, _, err = env.cli("create", name, "--schema", "id:long,name:string", "--format-version", "2",
                           "--property", "write.delete.mode=merge-on-read", "--yes")
    assert code == 0, err

    spark.sql(f"INSERT INTO hive.{name} VALUES (1, 'a'), (2, 'b')")
    spark.sql(f"INSERT INTO hive.{name} VALUES (3, 'c'), (4, 'd')")
    spark.sql(f"DELETE FROM hive.{name} WHERE id = 2")
    expected = [(1, "a"), (3, "c"), (4, "d")]
    assert java_rows(spark, name) == expected

    # icectl describes Java's commits.
    java_ids = [r[0] for r in spark.sql(f"SELECT snapshot_id FROM hive.{name}.snapshots ORDER BY committed_at")
                .collect()]
    assert snapshot_ids(env, name) == set(java_ids)
    code, out, err = env.cli("describe", name, "-o", "json")
    assert code == 0, err
    assert str(java_ids[-1]) in out and pyiceberg_rows(env, name) == expected

    # Tag, roll back (to before the delete), read; then back to the head.
    code, _, err = env.cli("tag", "create", name, "before-delete", "--snapshot", str(java_ids[1]), "--yes")
    assert code == 0, err
    assert sorted(tuple(r) for r in spark.sql(
        f"SELECT id, name FROM hive.{name} VERSION AS OF 'before-delete'").collect()) == [
        (1, "a"), (2, "b"), (3, "c"), (4, "d")]
    code, _, err = env.cli("rollback", name, "--to-snapshot", str(java_ids[1]), "--yes")
    assert code == 0, err
    assert java_rows(spark, name) == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]
    assert pyiceberg_rows(env, name) == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]
    code, _, err = env.cli("rollback", name, "--set-current", str(java_ids[2]), "--yes")
    assert code == 0, err
    assert java_rows(spark, name) == expected

    # Java commits between icectl's load and its swap: a conflict, and icectl plans again.
    real = HiveCatalog._swap_pointer
    swaps: list[str] = []

    def java_commits_first(self, ident, base, md, location):
        if not swaps:
            spark.sql(f"INSERT INTO hive.{name} VALUES (5, 'e')")
        swaps.append(base)
        return real(self, ident, base, md, location)

    patch = pytest.MonkeyPatch()  # the test's own keeps the configuration
    patch.setattr(HiveCatalog, "_swap_pointer", java_commits_first)
    try:
        code, _, err = env.cli("expire", name, "--retain-last", "2", "--older-than", "0s", "--yes")
    finally:
        patch.undo()
    assert code == 0, err
    assert len(swaps) == 2 and swaps[0] != swaps[1]
    expected = [(1, "a"), (3, "c"), (4, "d"), (5, "e")]
    assert java_rows(spark, name) == expected and pyiceberg_rows(env, name) == expected
    ids = snapshot_ids(env, name)
    assert java_ids[1] in ids  # the tag keeps it
    assert java_ids[0] not in ids

    # Upgrade to v3; Java writes and reads on, PyIceberg reads.
    code, _, err = env.cli("upgrade-format", name, "--to", "3", "--yes")
    assert code == 0, err
    spark.sql(f"INSERT INTO hive.{name} VALUES (6, 'f')")
    spark.sql(f"DELETE FROM hive.{name} WHERE id = 1")
    expected = [(3, "c"), (4, "d"), (5, "e"), (6, "f")]
    assert java_rows(spark, name) == expected
    assert spark.sql(f"SELECT * FROM hive.{name}.metadata_log_entries").count() > 1
    fv = spark._jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
        spark._jsparkSession, f"hive.{name}").operations().current().formatVersion()
    assert fv == 3
    code, out, err = env.cli("validate", name)
    assert code == 0, out + err
    assert pyiceberg_rows(env, name) == expected

    # Compact through the Spark job, with a Java append landing between icectl's load and its swap:
    # every data file rewritten, the deletes applied, Java's rows kept.
    swaps.clear()
    patch.setattr(HiveCatalog, "_swap_pointer", java_commits_first)
    try:
        code, out, err = env.cli("compact", name, "--rewrite-all", "--yes", "-o", "json")
    finally:
        patch.undo()
    assert code == 0, err
    assert len(swaps) == 2 and swaps[0] != swaps[1]
    expected = sorted(expected + [(5, "e")])
    assert java_rows(spark, name) == expected and pyiceberg_rows(env, name) == expected
    live = spark.sql(f"SELECT content, count(*) FROM hive.{name}.files GROUP BY content").collect()
    assert {r[0]: r[1] for r in live} == {0: 2}  # the compacted file and Java's append
    code, out, err = env.cli("validate", name)
    assert code == 0, out + err


def test_storage_descriptor_columns_as_java_writes_them(hive_env, spark):
    """Iceberg Java's HiveCatalog (Hive 2 on its class path, as in Spark) and icectl write the same
    Hive column types for the same schema: timestamptz is ``timestamp`` (Java writes ``timestamp
    with local time zone`` only with Hive 3's classes), decimals ``decimal(P,S)``, nested types
    in Hive's syntax."""
    env = hive_env
    assert env.cli("namespace", "create", env.database, "--yes")[0] == 0
    spark.sql(f"CREATE TABLE hive.{env.table('j')} (b boolean, i int, l bigint, f float, d double, "
              "dec decimal(10,2), dt date, ts timestamp_ntz, tstz timestamp, s string, bin binary, "
              "st struct<x: int, y: string>, arr array<bigint>, m map<string, double>) USING iceberg")
    code, _, err = env.cli("create", env.table("c"), "--schema",
                           "b:boolean, i:int, l:long, f:float, d:double, dec:decimal(10,2), dt:date, ts:timestamp, "
                           "tstz:timestamptz, s:string, bin:binary, st:struct<x:int, y:string>, arr:list<long>, "
                           "m:map<string, double>", "--yes")
    assert code == 0, err
    cat = env.catalog()
    java, ours = (cat.client.call(lambda c, n=n: c.get_table(env.database, n)).sd.cols for n in ("j", "c"))
    assert [(c.name, c.type) for c in ours] == [(c.name, c.type) for c in java]
    assert dict((c.name, c.type) for c in ours)["tstz"] == "timestamp"
