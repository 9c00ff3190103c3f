"""`icectl compact` on tables Iceberg Java 1.10.2 wrote, checked by Iceberg Java.

- Plans: icectl's groups (files, expected output files, split size) equal those of Java's own
  BinPackRewriteFilePlanner for the same options, on every reference table (no Spark job).
- Rewrites (one spark-submit per table kind): after `icectl compact`, Iceberg Java reads exactly
  the same rows (full sorted row sets), v3 rows keep `_row_id` and
  `_last_updated_sequence_number`, delete files that no longer apply are gone, the live data
  files are as planned, icectl's record counts equal Spark's `.files`; Iceberg Java's own
  `rewrite_data_files` with the same options on an identical copy gives the same rows and
  rewrites the same files.
- Concurrency: an append committed while the job runs survives (the commit retries); a delete
  committed against a file being rewritten fails the compaction with a conflict, nothing is
  committed, the job's files are removed and the delete is kept.
"""
from __future__ import annotations

import io
import json
import os
from collections import Counter

import pytest

import java_tables as J

pytestmark = [pytest.mark.interop, pytest.mark.spark]


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))  # the Spark job's work folders (plan, log)
    monkeypatch.setattr(tempfile, "tempdir", None)


def icectl(wh, *args) -> tuple[int, str, str]:
    from icectl.cli.context import Env
    from icectl.cli.main import run

    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run(["--warehouse", str(wh), *args], env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def icectl_json(wh, *args):
    code, out, err = icectl(wh, "-o", "json", *args)
    assert code == 0, err
    return json.loads(out)


def load(wh, identifier: str):
    from icectl.catalog.hadoop import HadoopCatalog
    from icectl.table.loaded import load_table
    from icectl.io import FileIO

    return load_table(HadoopCatalog("hc", str(wh), FileIO()), tuple(identifier.split(".")))


def norm(path: str) -> str:
    return path[len("file:"):] if path.startswith("file:") else path


def compacted_files(root: str) -> set[str]:
    return {os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith("-icectl-compact.parquet")}


# -- plans -----------------------------------------------------------------------------------------

def java_plan(spark, name: str, options: dict[str, str], where=None) -> list[tuple]:
    """(sorted paths, expected output files, input split size) of each group of Iceberg Java's
    BinPackRewriteFilePlanner."""
    jvm = spark._jvm
    table = J.java_table(spark, name)
    table.refresh()
    planner = (jvm.org.apache.iceberg.actions.BinPackRewriteFilePlanner(table, where(jvm)) if where
               else jvm.org.apache.iceberg.actions.BinPackRewriteFilePlanner(table))
    opts = jvm.java.util.HashMap()
    for k, v in options.items():
        opts.put(k, v)
    planner.init(opts)
    groups = []
    it = planner.plan().groups().iterator()
    while it.hasNext():
        g = it.next()
        paths = tuple(sorted(norm(t.file().location()) for t in g.fileScanTasks()))
        groups.append((paths, g.expectedOutputFiles(), g.inputSplitSize()))
    return sorted(groups)


def icectl_plan(wh, identifier: str, **opts) -> list[tuple]:
    from icectl.ops.maintain.compact import CompactOptions, plan_compaction

    p = plan_compaction(load(wh, identifier), CompactOptions(**opts))
    return sorted((tuple(sorted(norm(t.file.file_path) for t in g.tasks)), g.expected_outputs, g.split_size)
                  for g in p.groups)


# (icectl options, Iceberg Java options)
PLAN_CASES = [
    ({}, {}),
    (dict(target_file_size=2000), {"target-file-size-bytes": "2000"}),
    (dict(target_file_size=4000), {"target-file-size-bytes": "4000"}),
    (dict(target_file_size=1400, min_input_files=2), {"target-file-size-bytes": "1400", "min-input-files": "2"}),
    (dict(rewrite_all=True), {"rewrite-all": "true"}),
    (dict(target_file_size=10 ** 6, delete_file_threshold=1), {"target-file-size-bytes": "1000000",
                                                               "delete-file-threshold": "1"}),
    (dict(target_file_size=1000, min_file_size=100, delete_ratio_threshold=0.1),
     {"target-file-size-bytes": "1000", "min-file-size-bytes": "100", "delete-ratio-threshold": "0.1"}),
    (dict(target_file_size=1000, min_file_size=100, delete_ratio_threshold=0.2),
     {"target-file-size-bytes": "1000", "min-file-size-bytes": "100", "delete-ratio-threshold": "0.2"}),
]


@pytest.mark.parametrize("kind", ["v1", "v2", "v3", "v2_unpartitioned"])
def test_plans_match_java_planner(kind, request, spark, oracle_warehouse):
    jt: J.JavaTable = request.getfixturevalue(f"{kind}_table" if kind != "v2_unpartitioned" else
                                              "v2_unpartitioned_table")
    nonempty = 0
    for mine, theirs in PLAN_CASES:
        expected = java_plan(spark, jt.name, theirs)
        assert icectl_plan(oracle_warehouse, jt.identifier, **mine) == expected, (mine, theirs)
        nonempty += bool(expected)
    assert nonempty >= 3  # the cases are not all empty plans


@pytest.mark.parametrize("kind", ["v2", "v3"])
def test_max_file_group_size_like_java(kind, request, spark, oracle_warehouse):
    """Groups of at most max-file-group-size bytes. Java bin-packs the files in the order its
    parallel manifest reading yields them (it varies from run to run); icectl in manifest order:
    the same files are rewritten, in groups under the limit, per partition."""
    jt: J.JavaTable = request.getfixturevalue(f"{kind}_table")
    limit = 3000
    java = java_plan(spark, jt.name, {"rewrite-all": "true", "max-file-group-size-bytes": str(limit)})
    mine = icectl_plan(oracle_warehouse, jt.identifier, rewrite_all=True, max_file_group_size=limit)
    assert sorted(p for g in mine for p in g[0]) == sorted(p for g in java for p in g[0])
    sizes = {f.file_path: f.file_size_in_bytes for f in jt.data_files}
    for paths, _, _ in mine:
        assert len(paths) == 1 or sum(sizes[p] for p in paths) <= limit
    assert max(len(g[0]) for g in mine) > 1
    assert abs(len(mine) - len(java)) <= 2


def test_where_plan_matches_java_planner(spark, oracle_warehouse, v1_table):
    """--where through day(ts) and bucket(4, id), as Java's scan filter selects files (its
    column metrics agree with the partitions on these columns)."""
    def ts_ge(jvm):
        return jvm.org.apache.iceberg.expressions.Expressions.greaterThanOrEqual("ts", "2024-03-03T00:00:00+00:00")

    def id_eq(jvm):
        return jvm.org.apache.iceberg.expressions.Expressions.equal("id", 30)

    expected = java_plan(spark, v1_table.name, {"rewrite-all": "true"}, where=ts_ge)
    got = icectl_plan(oracle_warehouse, v1_table.identifier, rewrite_all=True, where="ts >= '2024-03-03'")
    assert got == expected and got
    # id = 30: icectl selects the files of partitions bucket(4, 30); Java also drops those whose
    # id bounds exclude 30 (column metrics): icectl's selection contains Java's
    expected = java_plan(spark, v1_table.name, {"rewrite-all": "true"}, where=id_eq)
    got = icectl_plan(oracle_warehouse, v1_table.identifier, rewrite_all=True, where="id = 30")
    java_files = {p for g in expected for p in g[0]}
    my_files = {p for g in got for p in g[0]}
    assert java_files and java_files <= my_files
    from icectl.spec.transforms import parse_transform
    from icectl.spec.types import primitive

    b30 = parse_transform("bucket[4]").apply(primitive("int"), 30)
    assert {f.partition["id_bucket"] for f in v1_table.data_files if f.file_path in my_files} == {b30}
    assert my_files == {f.file_path for f in v1_table.data_files if f.partition["id_bucket"] == b30}


# -- rewrites ----------------------------------------------------------------------------------------

# icectl arguments and the Java options that mean the same
CASES = {
    "v1": (["--target-file-size", "4000B"], {"target-file-size-bytes": "4000"}),
    "v2": (["--rewrite-all"], {"rewrite-all": "true", "remove-dangling-deletes": "true"}),
    "v3": (["--rewrite-all"], {"rewrite-all": "true"}),
    "v2_unpartitioned": (["--target-file-size", "2000B"], {"target-file-size-bytes": "2000",
                                                          "remove-dangling-deletes": "true"}),
}


def _java_rewrite(spark, jt: J.JavaTable, options: dict[str, str]) -> dict:
    opts = ", ".join(f"'{k}', '{v}'" for k, v in options.items())
    r = spark.sql(f"CALL hc.system.rewrite_data_files(table => '{jt.identifier}', options => map({opts}))").collect()
    return r[0].asDict()


def _surviving(before: J.JavaTable, after: J.JavaTable) -> Counter:
    """The original data files still live, as (spec, partition, records, size) (paths differ
    between two copies of a table, contents do not)."""
    kept = {f.file_path for f in after.data_files}
    return Counter((f.spec_id, tuple(sorted(f.partition.items())), f.record_count, f.file_size_in_bytes)
                   for f in before.data_files if f.file_path in kept)


@pytest.mark.parametrize("kind", ["v1", "v2", "v3", "v2_unpartitioned"])
def test_compact_matches_java(kind, spark, java_table_factory, oracle_warehouse):
    args, java_options = CASES[kind]
    mine = java_table_factory(kind)
    theirs = java_table_factory(kind)
    assert mine.rows == theirs.rows and mine.lineage_rows == theirs.lineage_rows  # identical copies
    wh = oracle_warehouse

    plan = icectl_json(wh, "compact", mine.identifier, "--dry-run", *args)
    assert plan["groups"], "nothing planned"
    res = icectl_json(wh, "compact", mine.identifier, "--yes", *args)
    assert len(res["committed"]) == 1 and res["failed_groups"] == []
    assert res["rewritten_data_files"] == plan["input_files"]

    after = J.read_expected(spark, mine.name)
    # Iceberg Java reads the same rows, row lineage included
    assert after.rows == mine.rows
    assert after.ref_rows == mine.ref_rows  # other branches and tags are untouched
    if kind == "v3":
        assert after.lineage_rows == mine.lineage_rows
        assert len({r[1] for r in after.lineage_rows}) == len(after.lineage_rows)
    new = [f for f in after.data_files if f.file_path not in {x.file_path for x in mine.data_files}]
    assert len(new) == res["added_data_files"]
    assert len(after.data_files) == len(mine.data_files) - plan["input_files"] + len(new)
    if kind != "v2":  # (v2: the older-spec group is written per partition of the current spec)
        assert len(new) == sum(g["expected_output_files"] for g in plan["groups"])
    # deletes that no live file can use any more are gone
    if kind in ("v2", "v3", "v2_unpartitioned"):
        assert mine.delete_files and after.delete_files == ()
    assert after.snapshots[-1].operation == "replace"
    # icectl's record counts are Spark's
    files = icectl_json(wh, "files", mine.identifier)
    assert sorted((norm(f["file_path"]), f["record_count"]) for f in files if f["content"] == "data") == \
        sorted((f.file_path, f.record_count) for f in after.data_files)
    # no deletes left: the data files' record counts add up to the rows Spark reads
    assert sum(f.record_count for f in after.data_files) == after.row_count

    # Iceberg Java's own rewrite of the identical copy: same rows, same files rewritten
    result = _java_rewrite(spark, theirs, java_options)
    java_after = J.read_expected(spark, theirs.name)
    assert java_after.rows == after.rows
    if kind == "v3":
        assert java_after.lineage_rows == after.lineage_rows
    assert result["rewritten_data_files_count"] == res["rewritten_data_files"]
    if kind != "v2_unpartitioned":
        assert result["added_data_files_count"] == res["added_data_files"]
    else:
        # Java's read splits weigh a task as its data file plus its delete files (sizeBytes):
        # with a 2000-byte target, files with ~1.5 KB position delete files each fill a split
        # and become a file of their own; icectl splits by data bytes, as planned (2 files)
        assert res["added_data_files"] == 2 and result["added_data_files_count"] >= res["added_data_files"]
    assert _surviving(theirs, java_after) == _surviving(mine, after)
    # Java's remove-dangling-deletes drops the delete files older than every data file of the
    # partition; icectl also those whose one data file (DV, file-scoped position deletes) is gone
    assert len(after.delete_files) <= len(java_after.delete_files)


# -- concurrency -----------------------------------------------------------------------------------

def test_append_while_compaction_runs_survives(spark, java_table_factory, oracle_warehouse):
    from icectl.ops.maintain.compact import CompactOptions, plan_compaction
    from icectl.ops.maintain.compact import run_compaction
    from icectl.ops.spark_job import JobSettings

    jt = java_table_factory("v3")
    table = load(oracle_warehouse, jt.identifier)
    plan = plan_compaction(table, CompactOptions(rewrite_all=True))
    spark.sql(f"INSERT INTO {jt.name} VALUES (500, 'eu', 5000, TIMESTAMP '2024-07-01 00:00:00'), "
              f"(501, 'us', 5010, TIMESTAMP '2024-07-01 00:01:00')")
    inserted = J.read_expected(spark, jt.name)
    res = run_compaction(table, plan, JobSettings())  # the table object predates the insert
    assert len(res.committed) == 1
    after = J.read_expected(spark, jt.name)
    assert after.rows == inserted.rows and {500, 501} <= {r[0] for r in after.rows}
    assert after.lineage_rows == inserted.lineage_rows  # the appended rows' lineage too
    assert len({r[1] for r in after.lineage_rows}) == len(after.lineage_rows)
    ops = [s.operation for s in after.snapshots]
    assert ops[-2:] == ["append", "replace"]
    # the appended files are live and were not rewritten
    appended = {f.file_path for f in inserted.data_files} - {f.file_path for f in jt.data_files}
    assert appended and appended <= {f.file_path for f in after.data_files}


@pytest.mark.parametrize("kind", ["v2_unpartitioned", "v3"])
def test_delete_while_compaction_runs_conflicts(kind, spark, java_table_factory, oracle_warehouse):
    from icectl.ops.maintain.compact import CompactOptions, plan_compaction
    from icectl.ops.maintain.compact import run_compaction
    from icectl.ops.spark_job import JobSettings
    from icectl.errors import CommitConflictError

    jt = java_table_factory(kind)
    table = load(oracle_warehouse, jt.identifier)
    plan = plan_compaction(table, CompactOptions(rewrite_all=True))
    victim = 2  # in a file being rewritten (every file is)
    spark.sql(f"DELETE FROM {jt.name} WHERE id = {victim}")  # merge-on-read: a position delete / DV
    deleted = J.read_expected(spark, jt.name)
    assert {f.file_path for f in deleted.delete_files} - {f.file_path for f in jt.delete_files}  # a new one
    with pytest.raises(CommitConflictError) as e:
        run_compaction(table, plan, JobSettings())
    assert e.value.exit_code == 5 and "conflict" in e.value.message
    after = J.read_expected(spark, jt.name)
    assert after.metadata_location == deleted.metadata_location  # nothing committed
    assert after.rows == deleted.rows and victim not in {r[0] for r in after.rows}
    assert compacted_files(jt.location) == set()  # the job's files are gone
