"""Iceberg Java 1.10.2 (the oracle) reads the table ``icectl demo`` builds, v2 and v3, through the
SQLite catalog they share (Iceberg's JdbcCatalog `jc`): the rows of every ref and of every
snapshot (time travel; the staged WAP snapshot too) are the rows the demo generated, its metadata
tables show the same snapshots, refs and files, and its own maintenance procedures find the work
the demo promises: expire_snapshots with the table's defaults deletes what `icectl expire
--dry-run` lists, remove_orphan_files finds the planted orphan."""
from __future__ import annotations

import io
import json
import os
import pathlib
import sys

import pytest

from icectl.catalog import CatalogConfig, build_catalog
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.ops import demo

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/ for demo_rows
from demo_rows import S, SNAPSHOT_IDS  # noqa: E402
from java_tables import read_rows  # noqa: E402
from lifecycle_tables import java_expire, java_orphans  # noqa: E402

pytestmark = [pytest.mark.interop, pytest.mark.spark]

SELECT = "SELECT id, user_id, category, amount, ts{country} FROM jc.{ns}.events"


@pytest.fixture(scope="module")
def jc(spark, jdbc_catalog_db, jdbc_warehouse):
    spark.sql("SHOW NAMESPACES IN jc").collect()  # let JdbcCatalog create its tables first
    cfg = CatalogConfig("jc", {"type": "sql", "uri": f"jdbc:sqlite:{jdbc_catalog_db}",
                               "warehouse": str(jdbc_warehouse)})
    return build_catalog(cfg)


@pytest.fixture(scope="module")
def demos(jc):
    return {v: demo.build_demo(jc, f"demo_v{v}", format_version=v) for v in (2, 3)}


def icectl_json(jc_catalog, *args):
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    uri, wh = jc_catalog.uri, jc_catalog.warehouse
    code = run(["-c", "jc", "--uri", uri, "--warehouse", wh, "-o", "json", *map(str, args)], env)
    assert code == 0, env.stderr.getvalue()
    return json.loads(env.stdout.getvalue())


def _rows(spark, ns: str, version_as_of: str, *, country: bool) -> list[tuple]:
    sql = SELECT.format(country=", country" if country else "", ns=ns) + f" VERSION AS OF {version_as_of}"
    return sorted(read_rows(spark, sql)[1])


@pytest.mark.parametrize("version", [2, 3])
def test_java_reads_every_ref_and_snapshot(spark, demos, version):
    r = demos[version]
    ns = f"demo_v{version}"
    main = sorted(read_rows(spark, SELECT.format(country=", country", ns=ns))[1])
    assert main == r.rows_by_snapshot[S["s9"]] and len(main) == 664
    for ref in r.refs:
        assert _rows(spark, ns, f"'{ref.name}'", country=True) == r.rows_by_snapshot[ref.snapshot_id], ref.name
    assert [len(r.rows_by_snapshot[x.snapshot_id]) for x in r.refs] == [664, 684, 668]
    # Every snapshot by id, each read with its own schema (the first six predate `country`).
    for i, sid in enumerate(SNAPSHOT_IDS):
        expected = r.rows_by_snapshot[sid] if i >= 6 else sorted(row[:5] for row in r.rows_by_snapshot[sid])
        assert _rows(spark, ns, f"{sid}", country=i >= 6) == expected, f"snapshot {sid}"


@pytest.mark.parametrize("version", [2, 3])
def test_java_metadata_tables_agree(spark, demos, version):
    r = demos[version]
    name = f"jc.demo_v{version}.events"
    snaps = {row[0]: (row[1], row[2]) for row in
             spark.sql(f"SELECT snapshot_id, parent_id, operation FROM {name}.snapshots").collect()}
    assert snaps == {s.snapshot_id: (s.parent_snapshot_id, s.operation) for s in r.snapshots}
    refs = sorted(tuple(row) for row in spark.sql(f"SELECT name, type, snapshot_id FROM {name}.refs").collect())
    assert refs == sorted((x.name, x.type.upper(), x.snapshot_id) for x in r.refs)
    files = spark.sql(f"SELECT content, file_format, record_count FROM {name}.files").collect()
    data = [f for f in files if f[0] == 0]
    deletes = [f for f in files if f[0] == 1]
    assert len(data) == r.data_files == 14 and sum(f[2] for f in data) == 676
    assert len(deletes) == r.delete_files and sum(f[2] for f in deletes) == 12
    assert {f[1] for f in deletes} == ({"PUFFIN"} if version == 3 else {"PARQUET"})
    history = spark.sql(f"SELECT snapshot_id FROM {name}.history WHERE is_current_ancestor").collect()
    assert sorted(row[0] for row in history) == sorted(SNAPSHOT_IDS[:9])


@pytest.mark.parametrize("version", [2, 3])
def test_java_expire_and_orphans_find_what_icectl_plans(spark, jc, version):
    """On a demo table of its own: icectl's dry run, then Java's procedures with their defaults."""
    ns = f"demo_maint_v{version}"
    r = demo.build_demo(jc, ns, format_version=version)
    orphans = java_orphans(spark, f"{ns}.events", catalog="jc")
    assert orphans == set(r.orphan_files)
    plan = icectl_json(jc, "expire", f"{ns}.events", "--dry-run")
    assert sorted(plan["expired_snapshot_ids"]) == sorted(SNAPSHOT_IDS[:6])
    gone = [f["path"] for f in plan["deleted_files"]]
    assert all(os.path.exists(p) for p in gone)
    counts = java_expire(spark, f"{ns}.events", catalog="jc")
    assert counts == plan["counts"]
    assert counts["deleted_data_files_count"] == 1 and counts["deleted_manifest_lists_count"] == 6
    left = {row[0] for row in spark.sql(f"SELECT snapshot_id FROM jc.{ns}.events.snapshots").collect()}
    assert left == set(SNAPSHOT_IDS[6:])
    assert not any(os.path.exists(p) for p in gone)
