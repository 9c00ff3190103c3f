"""icectl rewrite-deletes on tables Iceberg Java wrote: Java reads the same rows afterwards, and
the delete files change as planned (merged in v2, deletion vectors in v3, equality deletes
applied through the Spark job)."""
from __future__ import annotations

import io
import json

import pytest

from icectl.cli.context import Env
from icectl.cli.main import run

pytestmark = [pytest.mark.interop, pytest.mark.spark]


def icectl(warehouse, *args):
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run(["--warehouse", str(warehouse), "-o", "json", *args], env)
    assert code == 0, env.stderr.getvalue()
    return json.loads(env.stdout.getvalue())


def rows(spark, name):
    return sorted(tuple(r) for r in spark.sql(f"SELECT * FROM {name}").collect())


def delete_files(spark, name):
    return spark.sql(f"SELECT file_path, content, file_format, record_count FROM {name}.delete_files").collect()


def _add_position_deletes(spark, name):
    """Two more merge-on-read DELETEs, so a partition has several position-delete files."""
    ids = [r[0] for r in spark.sql(f"SELECT id FROM {name} ORDER BY id").collect()]
    spark.sql(f"DELETE FROM {name} WHERE id = {ids[1]}")
    spark.sql(f"DELETE FROM {name} WHERE id = {ids[2]}")


def test_v2_merge_position_deletes_and_apply_equality_deletes(spark, java_table_factory, oracle_warehouse):
    t = java_table_factory("v2_unpartitioned")
    _add_position_deletes(spark, t.name)
    before_rows = rows(spark, t.name)
    before = delete_files(spark, t.name)
    pos_before = [d for d in before if d.content == 1]
    assert len(pos_before) >= 2

    plan = icectl(oracle_warehouse, "rewrite-deletes", t.identifier, "--dry-run")
    assert plan["position_delete_files_to_merge"] == len(pos_before)
    out = icectl(oracle_warehouse, "rewrite-deletes", t.identifier, "--yes")
    assert out["result"]["merged_inputs"] == len(pos_before)
    spark.sql(f"REFRESH TABLE {t.name}")
    assert rows(spark, t.name) == before_rows
    after = delete_files(spark, t.name)
    assert len([d for d in after if d.content == 1]) == 1
    assert sum(d.record_count for d in after if d.content == 1) <= sum(d.record_count for d in pos_before)

    if any(d.content == 2 for d in after):
        out = icectl(oracle_warehouse, "rewrite-deletes", t.identifier, "--apply-equality-deletes", "--yes")
        assert out["result"]["equality_rewrite"]["rewritten_data_files"] >= 1
        spark.sql(f"REFRESH TABLE {t.name}")
        assert rows(spark, t.name) == before_rows
        assert not [d for d in delete_files(spark, t.name) if d.content == 2]


def test_v3_converts_position_deletes_to_deletion_vectors(spark, java_table_factory, oracle_warehouse):
    t = java_table_factory("v2")
    _add_position_deletes(spark, t.name)
    spark.sql(f"ALTER TABLE {t.name} SET TBLPROPERTIES ('format-version'='3')")
    before_rows = rows(spark, t.name)
    pos = [d for d in delete_files(spark, t.name) if d.content == 1 and d.file_format != "PUFFIN"]
    assert pos
    out = icectl(oracle_warehouse, "rewrite-deletes", t.identifier, "--yes")
    assert out["result"]["converted_to_dvs"] == len(pos)
    spark.sql(f"REFRESH TABLE {t.name}")
    assert rows(spark, t.name) == before_rows
    after = delete_files(spark, t.name)
    assert all(d.file_format == "PUFFIN" for d in after if d.content == 1)
    # one deletion vector per data file
    refs = spark.sql(f"SELECT referenced_data_file FROM {t.name}.delete_files WHERE content = 1").collect()
    assert len(refs) == len({r[0] for r in refs})


def test_apply_equality_deletes_on_evolved_table(spark, java_table_factory, oracle_warehouse):
    """The v2 table has an equality delete and partition evolution: the data files the equality
    delete touches are rewritten (older-spec files into the current spec) and it is removed."""
    t = java_table_factory("v2")
    before_rows = rows(spark, t.name)
    assert any(d.content == 2 for d in delete_files(spark, t.name))
    out = icectl(oracle_warehouse, "rewrite-deletes", t.identifier, "--apply-equality-deletes", "--yes")
    assert out["result"]["equality_rewrite"]["rewritten_data_files"] >= 1
    spark.sql(f"REFRESH TABLE {t.name}")
    assert rows(spark, t.name) == before_rows
    assert not [d for d in delete_files(spark, t.name) if d.content == 2]
    files = icectl(oracle_warehouse, "files", t.identifier, "--content", "data")
    spark_files = spark.sql(f"SELECT file_path, record_count FROM {t.name}.files WHERE content = 0").collect()
    assert sorted((f["file_path"], f["record_count"]) for f in files) == sorted((r[0], r[1]) for r in spark_files)
