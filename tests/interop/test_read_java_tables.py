"""icectl reads tables that Iceberg Java wrote: describe / snapshots / files agree with Spark's
metadata tables (.snapshots, .refs, .files, .delete_files) on the same tables."""
from __future__ import annotations

import io
import json

import pytest

from icectl.cli.context import Env
from icectl.cli.main import run

pytestmark = [pytest.mark.interop, pytest.mark.spark]

TABLES = ["v1_table", "v2_table", "v3_table", "v2_unpartitioned_table"]


def icectl_json(warehouse, *args):
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run(["--warehouse", str(warehouse), "-o", "json", *args], env)
    assert code == 0, env.stderr.getvalue()
    return json.loads(env.stdout.getvalue())


@pytest.fixture(params=TABLES)
def java_table(request):
    return request.getfixturevalue(request.param)


def test_snapshots_match_spark(java_table, oracle_warehouse):
    rows = icectl_json(oracle_warehouse, "snapshots", java_table.identifier)
    got = {r["snapshot_id"]: r for r in rows}
    assert set(got) == set(java_table.snapshot_ids)
    for s in java_table.snapshots:
        r = got[s.snapshot_id]
        assert r["parent_snapshot_id"] == s.parent_id
        assert r["operation"] == s.operation
        assert r["timestamp_ms"] == s.committed_at_ms
        assert r["manifest_list"] == s.manifest_list
        assert {k: v for k, v in r["summary"].items() if k != "operation"} == s.summary
    # ancestry of main and ref markers
    main = java_table.ref("main").snapshot_id
    assert got[main]["is_current"] is True
    assert "main" in got[main]["refs"]
    assert java_table.current_snapshot_id == main


def test_refs_match_spark(java_table, oracle_warehouse):
    d = icectl_json(oracle_warehouse, "describe", java_table.identifier)
    got = {r["name"]: r for r in d["refs"]}
    assert set(got) == {r.name for r in java_table.refs}
    for r in java_table.refs:
        g = got[r.name]
        assert g["type"] == r.type.lower()
        assert g["snapshot_id"] == r.snapshot_id
        assert g["max_ref_age_ms"] == r.max_reference_age_in_ms
        assert g["min_snapshots_to_keep"] == r.min_snapshots_to_keep
        assert g["max_snapshot_age_ms"] == r.max_snapshot_age_in_ms


def test_files_match_spark(java_table, oracle_warehouse):
    rows = icectl_json(oracle_warehouse, "files", java_table.identifier)
    data = sorted((r for r in rows if r["content"] == "data"), key=lambda r: r["file_path"])
    deletes = sorted((r for r in rows if r["content"] != "data"), key=lambda r: (r["file_path"], r["content_offset"] or 0))
    assert [r["file_path"] for r in data] == [f.file_path for f in java_table.data_files]
    for r, f in zip(data, java_table.data_files):
        assert r["record_count"] == f.record_count
        assert r["file_size_in_bytes"] == f.file_size_in_bytes
        assert r["spec_id"] == f.spec_id
        assert r["file_format"].upper() == f.file_format
        if java_table.format_version >= 3:
            assert r["first_row_id"] == f.first_row_id
    expected_deletes = sorted(java_table.delete_files, key=lambda f: (f.file_path, f.content_offset or 0))
    assert [r["file_path"] for r in deletes] == [f.file_path for f in expected_deletes]
    kinds = {0: "data", 2: "equality-deletes"}
    for r, f in zip(deletes, expected_deletes):
        expected_kind = kinds.get(f.content) or ("deletion-vector" if f.file_format == "PUFFIN" else "position-deletes")
        assert r["content"] == expected_kind
        assert r["record_count"] == f.record_count
        assert r["file_size_in_bytes"] == f.file_size_in_bytes
        assert r["referenced_data_file"] == f.referenced_data_file
        assert r["content_offset"] == f.content_offset
        assert r["content_size_in_bytes"] == f.content_size_in_bytes
        if f.equality_ids:
            assert tuple(r["equality_ids"]) == tuple(f.equality_ids)


def test_files_partitions_match_spark(java_table, oracle_warehouse):
    rows = icectl_json(oracle_warehouse, "files", java_table.identifier, "--content", "data")
    by_path = {r["file_path"]: r for r in rows}
    for f in java_table.data_files:
        got = by_path[f.file_path]["partition"]
        for name, value in f.partition.items():
            if value is None:
                assert got.get(name) is None
            elif isinstance(value, (int, float, str, bool)):
                # Spark shows dates and timestamps of day/hour transforms as values; icectl's JSON
                # single-value form of the same value must name the same thing.
                assert str(got[name]) == str(value) or _same_temporal(got[name], value), (name, got, f.partition)
            else:
                assert str(got[name]).startswith(str(value)[:10]), (name, got, f.partition)


def _same_temporal(icectl_value, spark_value) -> bool:
    return str(spark_value) in str(icectl_value) or str(icectl_value) in str(spark_value)


def test_describe_totals_match_spark(java_table, oracle_warehouse):
    d = icectl_json(oracle_warehouse, "describe", java_table.identifier)
    assert d["format_version"] == java_table.format_version
    assert d["current_snapshot"]["snapshot_id"] == java_table.current_snapshot_id
    t = d["totals"]
    assert t["data_files"] == len(java_table.data_files)
    assert t["records"] == sum(f.record_count for f in java_table.data_files)
    assert t["delete_files"] == len(java_table.delete_files)
    assert t["equality_delete_files"] == sum(1 for f in java_table.delete_files if f.content == 2)
    assert t["deletion_vectors"] == sum(1 for f in java_table.delete_files if f.file_format == "PUFFIN")
    assert [c["name"] for c in d["schema"]["fields"]] == list(java_table.columns)
    assert d["properties"] == java_table.properties or set(java_table.properties) <= set(d["properties"])


def test_ref_files_match_spark(v2_table, oracle_warehouse, spark):
    """files --ref for a branch and a tag lists the data files Iceberg Java plans for that ref.

    (Spark's `.files VERSION AS OF` fails on this table after partition evolution dropped a
    source column, so the Java scan API is the oracle here.)"""
    import java_tables

    jt = java_tables.java_table(spark, v2_table.name)
    for ref in v2_table.refs:
        it = jt.newScan().useRef(ref.name).planFiles().iterator()
        expected = []
        while it.hasNext():
            f = it.next().file()
            expected.append((str(f.location()), int(f.recordCount())))
        rows = icectl_json(oracle_warehouse, "files", v2_table.identifier, "--ref", ref.name, "--content", "data")
        assert sorted((r["file_path"], r["record_count"]) for r in rows) == sorted(expected), ref.name


def test_path_catalog_reads_java_table(v3_table, oracle_warehouse):
    """A bare table location and a bare metadata file read the same table (no catalog)."""
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    assert run(["-o", "json", "describe", v3_table.location], env) == 0, env.stderr.getvalue()
    by_location = json.loads(env.stdout.getvalue())
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    assert run(["-o", "json", "describe", v3_table.metadata_location], env) == 0, env.stderr.getvalue()
    by_file = json.loads(env.stdout.getvalue())
    assert by_location["current_snapshot"]["snapshot_id"] == v3_table.current_snapshot_id
    assert by_file["metadata_location"] == by_location["metadata_location"]
    assert by_location["next_row_id"] == v3_table.metadata_json()["next-row-id"]


def test_columnar_and_entry_readers_agree(java_table, oracle_warehouse, monkeypatch):
    """`files` reads manifests column by column with polars; the fastavro entry reader (its
    fallback) must list exactly the same thing."""
    fast = icectl_json(oracle_warehouse, "files", java_table.identifier)
    monkeypatch.setenv("ICECTL_AVRO_READER", "lean")
    slow = icectl_json(oracle_warehouse, "files", java_table.identifier)
    assert fast == slow
