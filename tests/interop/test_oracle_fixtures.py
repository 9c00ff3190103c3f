"""Proves that the Iceberg Java reference tables (tests/interop/conftest.py) are what they claim.

Each JavaTable's answers come from Spark's metadata tables; these tests check them against the
table's metadata json on disk, against the files on disk, and against rows computed here in
Python from the builders' recipes (see java_tables' docstring). icectl is not imported here.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
from decimal import Decimal

import pytest

import java_tables
from java_tables import JavaTable

pytestmark = [pytest.mark.interop, pytest.mark.spark]

ALL_TABLES = ["v1_table", "v2_table", "v3_table", "v2_unpartitioned_table"]
UTC = dt.timezone.utc


def test_oracle_is_iceberg_java_1_10_2(spark):
    assert spark._jvm.org.apache.iceberg.IcebergBuild.version() == "1.10.2"
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"


@pytest.mark.parametrize("fixture", ALL_TABLES)
def test_tables_are_in_the_session_warehouse(request, fixture, oracle_warehouse):
    # fails if another test's SparkSession (other warehouse) was still active when `spark` started
    t: JavaTable = request.getfixturevalue(fixture)
    assert t.location == os.path.join(str(oracle_warehouse), *t.identifier.split("."))


# --------------------------------------------------------------------------- every table


@pytest.mark.parametrize("fixture", ALL_TABLES)
def test_answers_agree_with_metadata_json(request, fixture):
    t: JavaTable = request.getfixturevalue(fixture)
    md = t.metadata_json()
    assert md["format-version"] == t.format_version
    assert md["location"] == t.location
    assert md["current-snapshot-id"] == t.current_snapshot_id
    assert t.metadata_location.startswith(os.path.join(t.location, "metadata") + os.sep)
    # snapshots metadata table == snapshots in the json
    by_id = {s["snapshot-id"]: s for s in md["snapshots"]}
    assert set(by_id) == set(t.snapshot_ids)
    for s in t.snapshots:
        j = by_id[s.snapshot_id]
        assert j.get("parent-snapshot-id") == s.parent_id
        assert j["timestamp-ms"] == s.committed_at_ms
        assert s.committed_at == dt.datetime.fromtimestamp(s.committed_at_ms / 1000, UTC)
        assert j["summary"]["operation"] == s.operation
        assert j["manifest-list"] == s.manifest_list
        assert os.path.exists(s.manifest_list)
    # refs metadata table == refs in the json (v1 writes them too in Iceberg 1.10)
    refs = md.get("refs") or {"main": {"snapshot-id": md["current-snapshot-id"], "type": "branch"}}
    assert {r.name for r in t.refs} == set(refs)
    for r in t.refs:
        j = refs[r.name]
        assert j["snapshot-id"] == r.snapshot_id
        assert j["type"].upper() == r.type
        assert j.get("max-ref-age-ms") == r.max_reference_age_in_ms
        assert j.get("min-snapshots-to-keep") == r.min_snapshots_to_keep
        assert j.get("max-snapshot-age-ms") == r.max_snapshot_age_in_ms
    assert t.ref("main").snapshot_id == t.current_snapshot_id
    assert md["properties"] == {k: v for k, v in t.properties.items() if k in md["properties"]}


@pytest.mark.parametrize("fixture", ALL_TABLES)
def test_files_exist_with_their_sizes(request, fixture):
    t: JavaTable = request.getfixturevalue(fixture)
    assert t.data_files
    for f in t.files:
        assert f.file_path.startswith(t.location + os.sep)
        assert os.path.getsize(f.file_path) == f.file_size_in_bytes, f.file_path
        assert f.record_count > 0
    assert all(f.content == 0 for f in t.data_files)
    assert all(f.content in (1, 2) for f in t.delete_files)
    # the summary's totals agree with the live files
    summary = t.snapshot(t.current_snapshot_id).summary
    assert int(summary["total-data-files"]) == len(t.data_files)
    assert int(summary.get("total-delete-files", "0")) == len(t.delete_files)
    assert int(summary["total-records"]) == sum(f.record_count for f in t.data_files)


@pytest.mark.parametrize("fixture", ALL_TABLES)
def test_rows_and_count(request, fixture, spark):
    t: JavaTable = request.getfixturevalue(fixture)
    assert t.row_count == len(t.rows) > 0
    assert list(t.rows) == sorted(t.rows, key=lambda r: tuple((x is None, x) for x in r))
    assert len(t.columns) == len(t.rows[0])
    # the snapshot chain of main ends at the first snapshot
    chain, sid = [], t.current_snapshot_id
    while sid is not None:
        chain.append(sid)
        sid = t.snapshot(sid).parent_id
    assert t.snapshot(chain[-1]).parent_id is None


# --------------------------------------------------------------------------- v1


def _v1_expected_rows():
    rows = []
    for i in range(1, 51):
        name = None if i % 5 == 0 else (f"over-{i}" if i <= 11 else f"name-{i}")
        rows.append(
            (
                i,
                i * 1000000007,
                name,
                i / 3.0,
                i / 4.0,  # float32, exact for quarters
                Decimal(i * 125).scaleb(-2),
                dt.date(2024, 1, 1) + dt.timedelta(days=i),
                dt.datetime(2024, 3, 1, tzinfo=UTC) + dt.timedelta(hours=2 * i),
                dt.datetime(2024, 2, 1, i % 24, 30, 15, 123456),
                i % 2 == 0,
                None if i % 7 == 0 else f"bin-{i}".encode(),
            )
        )
    return rows


def test_v1_table(v1_table: JavaTable):
    t = v1_table
    md = t.metadata_json()
    assert t.name == "hc.db.v1_table" and t.identifier == "db.v1_table"
    assert t.format_version == 1 and md["format-version"] == 1
    types = {f["name"]: f["type"] for f in md["schemas"][-1]["fields"]}
    assert types == {
        "id": "int", "big": "long", "name": "string", "score": "double", "ratio": "float",
        "price": "decimal(10, 2)", "d": "date", "ts": "timestamptz", "ts_ntz": "timestamp",
        "flag": "boolean", "payload": "binary",
    }
    spec = md["partition-specs"][0]["fields"]
    assert [(f["name"], f["transform"]) for f in spec] == [("ts_day", "day"), ("id_bucket", "bucket[4]")]
    assert [s.operation for s in t.snapshots] == ["append", "append", "append", "overwrite"]
    assert t.delete_files == ()
    assert [r.name for r in t.refs] == ["main"]
    assert t.columns == ("id", "big", "name", "score", "ratio", "price", "d", "ts", "ts_ntz", "flag", "payload")
    assert list(t.rows) == _v1_expected_rows()
    # day partition values agree with the rows of each file
    days = {f.partition["ts_day"] for f in t.data_files}
    assert days == {r[7].date() for r in t.rows}
    assert all(0 <= f.partition["id_bucket"] < 4 for f in t.data_files)


# --------------------------------------------------------------------------- v2


def _v2_row(i: int, note: bool):
    return (i, f"row-{i}", "abc"[i % 3], i * 1.5) + ((f"n{i}" if note else None),)


V2_DELETED = {i for i in range(1, 61) if i % 7 == 0} | {3, 6, 9, 12}  # before ids 61..100 exist


def test_v2_table(v2_table: JavaTable, spark):
    t = v2_table
    md = t.metadata_json()
    assert t.format_version == 2
    for k in ("write.delete.mode", "write.update.mode", "write.merge.mode"):
        assert t.properties[k] == "merge-on-read"
    # deletes: Parquet position deletes (1) and one equality delete file on `id` (2)
    assert {f.content for f in t.delete_files} == {1, 2}
    eq = [f for f in t.delete_files if f.content == 2]
    assert len(eq) == 1 and eq[0].equality_ids == (1,) and eq[0].record_count == 4
    assert eq[0].partition["category"] == "a" and eq[0].file_format == "PARQUET"
    assert all(f.file_format == "PARQUET" for f in t.delete_files)
    # snapshots and refs
    ops = [s.operation for s in t.snapshots]
    assert ops == ["append", "append", "delete", "delete", "append", "append", "append", "append", "append"]
    b1, t1, main = t.ref("b1"), t.ref("t1"), t.ref("main")
    assert (b1.type, b1.max_reference_age_in_ms, b1.min_snapshots_to_keep, b1.max_snapshot_age_in_ms) == (
        "BRANCH", 7 * 86400000, 3, None)
    assert (t1.type, t1.max_reference_age_in_ms, t1.min_snapshots_to_keep) == ("TAG", 30 * 86400000, None)
    assert main.type == "BRANCH"
    assert t.snapshot(t1.snapshot_id).operation == "delete"  # the equality delete commit
    assert t.snapshot(b1.snapshot_id).parent_id == t1.snapshot_id
    assert b1.snapshot_id not in _main_chain(t)
    # schema and partition evolution
    assert t.columns == ("id", "payload", "category", "amount", "note")
    assert len(md["schemas"]) == 3
    specs = {s["spec-id"]: [(f["name"], f["transform"]) for f in s["fields"]] for s in md["partition-specs"]}
    assert specs == {
        0: [("category", "identity")],
        1: [("category", "identity"), ("id_bucket_4", "bucket[4]")],
        2: [("id_bucket_4", "bucket[4]")],
    }
    assert md["default-spec-id"] == 2
    assert {f.spec_id for f in t.data_files} == {0, 1, 2}
    # rows: main, the tag and the branch
    expected = [_v2_row(i, i > 60) for i in range(1, 101) if i not in V2_DELETED]
    assert list(t.rows) == expected and t.row_count == 88
    assert [r[0] for r in t.ref_rows["t1"]] == [i for i in range(1, 61) if i not in V2_DELETED]
    assert [r[0] for r in t.ref_rows["b1"]] == [i for i in range(1, 61) if i not in V2_DELETED] + list(range(1001, 1006))
    # the equality delete really applies: without it, Spark would see ids 3, 6, 9, 12
    before_eq = t.snapshot(t1.snapshot_id).parent_id
    ids = {r[0] for r in spark.sql(f"SELECT id FROM {t.name} VERSION AS OF {before_eq}").collect()}
    assert {3, 6, 9, 12} <= ids


def _main_chain(t: JavaTable) -> list[int]:
    chain, sid = [], t.current_snapshot_id
    while sid is not None:
        chain.append(sid)
        sid = t.snapshot(sid).parent_id
    return chain


# --------------------------------------------------------------------------- v3


def test_v3_table(v3_table: JavaTable):
    t = v3_table
    md = t.metadata_json()
    assert t.format_version == 3 and md["format-version"] == 3
    # row lineage
    assert isinstance(md["next-row-id"], int) and md["next-row-id"] >= 80
    assert all("first-row-id" in s for s in md["snapshots"])
    assert all(f.first_row_id is not None for f in t.data_files)
    # deletion vectors: Puffin delete files with blob offsets, one DV per data file
    assert t.delete_files and all(f.content == 1 and f.file_format == "PUFFIN" for f in t.delete_files)
    assert all(f.file_path.endswith(".puffin") and os.path.exists(f.file_path) for f in t.delete_files)
    assert all(f.referenced_data_file and f.content_offset is not None and f.content_size_in_bytes for f in t.delete_files)
    referenced = [f.referenced_data_file for f in t.delete_files]
    assert len(referenced) == len(set(referenced))
    assert set(referenced) <= {f.file_path for f in t.data_files}
    with open(t.delete_files[0].file_path, "rb") as fh:
        assert fh.read(4) == b"PFA1"
    assert [s.operation for s in t.snapshots] == ["append", "append", "append", "delete", "overwrite"]
    assert [(f["name"], f["transform"]) for f in md["partition-specs"][0]["fields"]] == [("region", "identity")]
    # rows
    expected = [
        (i, "eu" if i % 2 == 0 else "us", i * 10 + (100 if i % 10 == 1 else 0),
         dt.datetime(2024, 6, 1, tzinfo=UTC) + dt.timedelta(minutes=i))
        for i in range(1, 81) if i % 6 != 0
    ]
    assert list(t.rows) == expected
    # lineage: (id, _row_id, _last_updated_sequence_number); updated rows got a new sequence number
    assert [r[0] for r in t.lineage_rows] == [r[0] for r in expected]
    row_ids = [r[1] for r in t.lineage_rows]
    assert None not in row_ids and len(set(row_ids)) == len(row_ids)
    last_seq = md["last-sequence-number"]
    for i, _rid, seq in t.lineage_rows:
        assert (seq == last_seq) == (i % 10 == 1), i


# --------------------------------------------------------------------------- unpartitioned v2


def test_v2_unpartitioned_table(v2_unpartitioned_table: JavaTable):
    t = v2_unpartitioned_table
    md = t.metadata_json()
    assert t.format_version == 2
    assert md["partition-specs"] == [{"spec-id": 0, "fields": []}]
    assert all(f.partition == {} for f in t.files)
    assert {f.content for f in t.delete_files} == {1}
    assert [s.operation for s in t.snapshots] == ["append", "append", "delete", "overwrite"]
    expected = [(i, "updated" if i == 30 else f"d{i}") for i in range(1, 51) if i not in (5, 10, 15, 40)]
    assert list(t.rows) == expected


# --------------------------------------------------------------------------- factory and jc


def test_factory_builds_private_tables_in_the_jdbc_catalog(java_table_factory, jdbc_catalog_db, jdbc_warehouse, spark):
    t = java_table_factory("v2_unpartitioned", catalog="jc")
    assert t.name.startswith("jc.db.v2_unpartitioned_")
    assert t.location.startswith(str(jdbc_warehouse) + os.sep)
    assert [r[0] for r in t.rows] == [i for i in range(1, 51) if i not in (5, 10, 15, 40)]
    with sqlite3.connect(jdbc_catalog_db) as db:
        rows = db.execute(
            "SELECT catalog_name, table_namespace, table_name, metadata_location FROM iceberg_tables"
            " WHERE table_name = ?",
            (t.identifier.split(".")[1],),
        ).fetchall()
    assert len(rows) == 1
    catalog, ns, _, location = rows[0]
    assert (catalog, ns) == ("jc", "db")
    assert location.removeprefix("file:") == t.metadata_location
    assert json.load(open(t.metadata_location))["current-snapshot-id"] == t.current_snapshot_id
    # and a private table can be changed freely
    spark.sql(f"DELETE FROM {t.name} WHERE id = 1")
    after = java_tables.read_expected(spark, t.name)
    assert after.row_count == t.row_count - 1 and after.current_snapshot_id != t.current_snapshot_id
