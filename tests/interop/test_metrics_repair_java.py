"""``validate --deep`` and ``repair`` of file metrics on a v2 table Iceberg Java 1.10.2 wrote. Two
manifests are committed (icectl's manifest writer, a new manifest list and metadata through the
catalog, as a buggy writer would) whose entries lie: one file's ``upper_bounds`` for ``id`` below
its real maximum, another's ``record_count`` and ``file_size_in_bytes``. Spark's filtered query
then misses the rows the bound hides; ``validate --deep`` reports each lie with its own code;
``repair --yes`` (the default set, metrics included) commits manifests with the footers' values;
Spark's filtered query returns the rows again, ``validate --deep`` is clean, and the entries of the
files Java wrote and nobody broke compare equal to their footers (Java's metrics are what
:mod:`icectl.formats.parquet_footer` derives)."""
from __future__ import annotations

import dataclasses
import pathlib
import sys

import pytest

pytestmark = [pytest.mark.interop, pytest.mark.spark]

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import lifecycle_tables as L  # noqa: E402
from break_metrics import break_metrics, reload, set_upper  # noqa: E402

from icectl.catalog import CatalogConfig, build_catalog  # noqa: E402
from icectl.spec.conversions import from_bytes, to_bytes  # noqa: E402
from icectl.table.loaded import load_table  # noqa: E402


def _max_id(df) -> int:
    return from_bytes("long", df.upper_bounds[1])


def test_lying_metrics_are_found_and_repaired(spark, oracle_warehouse):
    name, short = "hc.db.metrics_v2", "metrics_v2"
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(f"CREATE TABLE {name} (id bigint, name string) USING iceberg TBLPROPERTIES ('format-version'='2')")
    spark.sql(f"INSERT INTO {name} SELECT /*+ COALESCE(1) */ * FROM VALUES "
              + ", ".join(f"({i}, 'n{i}')" for i in range(1, 6)))
    spark.sql(f"INSERT INTO {name} SELECT /*+ COALESCE(1) */ * FROM VALUES "
              + ", ".join(f"({i}, 'n{i}')" for i in range(6, 11)))
    query = f"SELECT id FROM {name} WHERE id > 7 ORDER BY id"
    assert [r[0] for r in spark.sql(query).collect()] == [8, 9, 10]
    wh = str(oracle_warehouse)
    assert L.icectl("--warehouse", wh, "validate", f"db.{short}", "--deep").code == 0  # Java's metrics: no finding

    cat = build_catalog(CatalogConfig("default", {"type": "hadoop", "warehouse": wh}))
    t = load_table(cat, ("db", short))
    high = break_metrics(t, lambda df: _max_id(df) == 10, set_upper(1, to_bytes("long", 6)))
    low = break_metrics(reload(t), lambda df: _max_id(df) == 5,
                        lambda df: dataclasses.replace(df, record_count=4,
                                                       file_size_in_bytes=df.file_size_in_bytes + 3))
    assert high != low
    hidden = [r[0] for r in spark.sql(query).collect()]
    assert hidden == []  # Java skips the file whose upper bound says 6

    found = L.icectl("--warehouse", wh, "-o", "json", "validate", f"db.{short}", "--deep", expect=8).json
    by_code = {(f["code"], L.norm(f["file"]) if f["file"] else None) for f in found["findings"]}
    assert {("BOUND_HIDES_ROWS", L.norm(high)), ("RECORD_COUNT_MISMATCH", L.norm(low)),
            ("FILE_SIZE_MISMATCH", L.norm(low))} <= by_code
    assert {c for c, _ in by_code} <= {"BOUND_HIDES_ROWS", "RECORD_COUNT_MISMATCH", "FILE_SIZE_MISMATCH",
                                       "SUMMARY_TOTALS"}  # the lying snapshot's totals, carried from its parent

    dry = L.icectl("--warehouse", wh, "-o", "json", "repair", f"db.{short}", "--dry-run").json
    assert dry["refs"][0]["operation"] is None  # the wrong size is a metric: no file is dropped
    changes = {L.norm(c["path"]): {d["code"] for d in c["differences"]} for c in dry["metrics"]}
    assert changes == {L.norm(high): {"BOUND_HIDES_ROWS"},
                       L.norm(low): {"RECORD_COUNT_MISMATCH", "FILE_SIZE_MISMATCH"}}

    done = L.icectl("--warehouse", wh, "-o", "json", "repair", f"db.{short}", "--yes").json
    assert done["applied"] and done["metrics_snapshot_id"] is not None
    assert [r[0] for r in spark.sql(query).collect()] == [8, 9, 10]
    assert spark.sql(f"SELECT count(*) FROM {name}").collect()[0][0] == 10
    snap = spark.sql(f"SELECT operation, summary FROM {name}.snapshots ORDER BY committed_at DESC LIMIT 1").collect()[0]
    assert snap[0] == "replace" and snap[1]["total-records"] == "10"
    files = {L.norm(r[0]): (r[1], r[2]) for r in spark.sql(
        f"SELECT file_path, record_count, file_size_in_bytes FROM {name}.files").collect()}
    assert files[L.norm(low)][0] == 5 and files[L.norm(low)][1] == pathlib.Path(L.norm(low)).stat().st_size
    assert L.icectl("--warehouse", wh, "validate", f"db.{short}", "--deep").code == 0
