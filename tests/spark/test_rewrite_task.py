"""The data plane of compaction without a JVM: icectl.spark.rewrite.rewrite_task called directly
on real Parquet inputs (columns by field id, position delete files with field ids 2147483546 /
2147483545, deletion vectors in Puffin files, equality deletes, v3 row lineage), its output rows
and the metrics it reports. Whole compactions (plan, job, commit) are in test_compaction_job.py.
"""
from __future__ import annotations

import datetime as dt
import decimal
import os
import pathlib
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icectl.spec.conversions import to_bytes
from icectl.ops.evolve.create import load_schema_argument
from icectl.formats.puffin import deletion_vector_file
from icectl.spec.types import primitive
from icectl.spark import protocol
from icectl.spark.protocol import PROTOCOL_VERSION, RewritePlan, RewriteTask
from icectl.spark.rewrite import LAST_UPDATED_SEQ, ROW_ID, rewrite_task

pytestmark = pytest.mark.spark  # the Spark job's data plane (no JVM needed, but it is the job's code)

UTC = dt.timezone.utc

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # tests/spark for parquet_inputs
from parquet_inputs import FID, SIMPLE, fld, position_delete_file, simple_file, write_parquet  # noqa: E402


def plan_for(schema, *, row_lineage=False, target=512 * 1024 ** 2, sort=None):
    return protocol.from_json(RewritePlan, {
        "version": PROTOCOL_VERSION, "kind": "rewrite", "table": "db.t", "location": "/unused", "format_version": 2,
        "app_name": "test", "row_group_bytes": 128 * 1024 * 1024, "schema": schema.to_json(),
        "row_lineage": row_lineage, "target_file_size": target, "io_properties": {}, "compression": "zstd",
        "sort": sort})


def inp(path, n, *, first_row_id=None, seq=1, pos=(), eq=()):
    return {"path": str(path), "format": "parquet", "record_count": n, "size": os.path.getsize(path),
            "first_row_id": first_row_id, "data_sequence_number": seq, "position_deletes": list(pos),
            "equality_deletes": list(eq)}


def task(out_dir, inputs, repartition=None):
    return protocol.from_json(RewriteTask, {"version": PROTOCOL_VERSION, "task_id": "7-0", "group_id": 7,
                                            "output_dir": str(out_dir), "inputs": inputs, "repartition": repartition})


def rows_of(files, columns=None) -> list[tuple]:
    out = []
    for f in files:
        t = pq.read_table(f.path)
        names = columns or t.column_names
        out += list(zip(*(t.column(c).to_pylist() for c in names)))
    return sorted(out, key=lambda r: tuple((x is None, x) for x in r))


# -- reading: field ids, deletes -------------------------------------------------------------------

def test_copies_rows_by_field_id_with_renamed_and_added_columns(tmp_path):
    schema = load_schema_argument("id:long!, label:string, added:int")  # `name` (2) was renamed `label`
    src = simple_file(tmp_path / "in" / "a.parquet", [1, 2, 3], ["x", None, "z"])
    out = rewrite_task(task(tmp_path / "out", [inp(src, 3)]), plan_for(schema))
    assert len(out) == 1
    f = out[0]
    t = pq.read_table(f.path)
    assert t.column_names == ["id", "label", "added"]
    assert [x.metadata[FID] for x in t.schema] == [b"1", b"2", b"3"]
    assert t.to_pylist() == [{"id": 1, "label": "x", "added": None}, {"id": 2, "label": None, "added": None},
                             {"id": 3, "label": "z", "added": None}]
    assert (f.task_id, f.group_id, f.record_count, f.partition, f.sorted) == ("7-0", 7, 3, None, False)
    assert f.size == os.path.getsize(f.path) and f.path.startswith(str(tmp_path / "out") + "/")
    assert f.path.endswith("-icectl-compact.parquet")


def test_file_without_field_ids_matched_by_name(tmp_path):
    src = write_parquet(tmp_path / "plain.parquet", pa.table({"name": ["a", "b"], "id": pa.array([5, 6], pa.int32())}))
    out = rewrite_task(task(tmp_path / "out", [inp(src, 2)]), plan_for(SIMPLE))
    assert rows_of(out) == [(5, "a"), (6, "b")]
    assert pq.read_schema(out[0].path).field("id").type == pa.int64()  # promoted to the table type


def test_initial_default_fills_missing_column(tmp_path):
    from icectl.spec.types import schema_from_json

    js = SIMPLE.to_json()
    js["fields"].append({"id": 3, "name": "level", "required": False, "type": "int", "initial-default": 42})
    schema = schema_from_json(js)
    src = simple_file(tmp_path / "a.parquet", [1, 2])
    out = rewrite_task(task(tmp_path / "out", [inp(src, 2)]), plan_for(schema))
    assert rows_of(out) == [(1, "n1", 42), (2, "n2", 42)]


def test_position_deletes_from_parquet_delete_files(tmp_path):
    a = simple_file(tmp_path / "data" / "a.parquet", list(range(10)))
    b = simple_file(tmp_path / "data" / "b.parquet", list(range(100, 110)))
    # one delete file for both data files; Spark may write local paths with a file: scheme
    pd1 = position_delete_file(tmp_path / "data" / "pd1.parquet",
                               [("file:" + a, 0), ("file:" + a, 9), (b, 3), (b, 4), (a + ".other", 5)])
    pd2 = position_delete_file(tmp_path / "data" / "pd2.parquet", [(a, 2), (a, 9), (b, 50)])  # 9 twice, 50 out of range
    dels = [{"path": pd1, "format": "parquet", "path_aliases": ["file:" + a]},
            {"path": pd2, "format": "parquet", "path_aliases": ["file:" + a]}]
    dels_b = [{"path": pd1, "format": "parquet", "path_aliases": ["file:" + b]},
              {"path": pd2, "format": "parquet", "path_aliases": ["file:" + b]}]
    out = rewrite_task(task(tmp_path / "out", [inp(a, 10, pos=dels), inp(b, 10, pos=dels_b)]), plan_for(SIMPLE))
    assert [r[0] for r in rows_of(out)] == [1, 3, 4, 5, 6, 7, 8] + [100, 101, 102, 105, 106, 107, 108, 109]
    assert sum(f.record_count for f in out) == 15


def test_deletion_vectors(tmp_path):
    a = simple_file(tmp_path / "data" / "a.parquet", list(range(20)))
    b = simple_file(tmp_path / "data" / "b.parquet", list(range(100, 120)))
    data, blobs = deletion_vector_file({a: [0, 5, 19], b: range(0, 20, 2)})
    puffin = tmp_path / "data" / "dv.puffin"
    puffin.write_bytes(data)
    dv = {blob.referenced_data_file: {"path": str(puffin), "format": "puffin", "offset": blob.offset,
                                      "length": blob.length} for blob in blobs}
    out = rewrite_task(task(tmp_path / "out", [inp(a, 20, pos=[dv[a]]), inp(b, 20, pos=[dv[b]])]), plan_for(SIMPLE))
    assert [r[0] for r in rows_of(out)] == [i for i in range(20) if i not in (0, 5, 19)] + list(range(101, 120, 2))


def test_equality_deletes(tmp_path):
    a = simple_file(tmp_path / "data" / "a.parquet", [1, 2, 3, 4, 5, 6], ["a", "b", None, "d", None, "f"])
    # on id, written as int (a delete file may use the type of an older schema)
    eq_id = write_parquet(tmp_path / "data" / "eq-id.parquet",
                          pa.table({"id": pa.array([2, 99], pa.int32())}, schema=pa.schema([fld("id", pa.int32(), 1)])))
    # on (id, name): null matches null; (4, 'x') matches nothing
    eq_pair = write_parquet(tmp_path / "data" / "eq-pair.parquet", pa.table(
        {"id": pa.array([3, 4, 6], pa.int64()), "name": pa.array([None, "x", "f"])},
        schema=pa.schema([fld("id", pa.int64(), 1), fld("name", pa.string(), 2)])))
    # on name alone, null deletes every null name
    eq_name = write_parquet(tmp_path / "data" / "eq-name.parquet", pa.table(
        {"name": pa.array([None], pa.string()), "id": pa.array([0], pa.int64())},
        schema=pa.schema([fld("name", pa.string(), 2), fld("id", pa.int64(), 1)])))
    eqs = [{"path": eq_id, "equality_ids": [1]}, {"path": eq_pair, "equality_ids": [1, 2]}]
    out = rewrite_task(task(tmp_path / "out", [inp(a, 6, eq=eqs)]), plan_for(SIMPLE))
    assert rows_of(out) == [(1, "a"), (4, "d"), (5, None)]
    out = rewrite_task(task(tmp_path / "out2", [inp(a, 6, eq=[{"path": eq_name, "equality_ids": [2]}])]), plan_for(SIMPLE))
    assert rows_of(out) == [(1, "a"), (2, "b"), (4, "d"), (6, "f")]


def test_position_and_equality_deletes_together(tmp_path):
    a = simple_file(tmp_path / "data" / "a.parquet", list(range(10)))
    pd = position_delete_file(tmp_path / "data" / "pd.parquet", [(a, 0), (a, 1)])
    eq = write_parquet(tmp_path / "data" / "eq.parquet",
                       pa.table({"id": pa.array([1, 2, 3], pa.int64())}, schema=pa.schema([fld("id", pa.int64(), 1)])))
    out = rewrite_task(task(tmp_path / "out", [inp(a, 10, pos=[{"path": pd, "format": "parquet"}],
                                                   eq=[{"path": eq, "equality_ids": [1]}])]), plan_for(SIMPLE))
    assert [r[0] for r in rows_of(out)] == [4, 5, 6, 7, 8, 9]


def test_every_row_deleted_writes_no_file(tmp_path):
    a = simple_file(tmp_path / "data" / "a.parquet", [1, 2])
    pd = position_delete_file(tmp_path / "data" / "pd.parquet", [(a, 0), (a, 1)])
    out = rewrite_task(task(tmp_path / "out", [inp(a, 2, pos=[{"path": pd, "format": "parquet"}])]), plan_for(SIMPLE))
    # an empty file would be a data file with no rows: harmless, but nothing is better
    assert sum(f.record_count for f in out) == 0
    assert all(f.record_count > 0 for f in out), "a file with no rows was written"


# -- v3 row lineage ----------------------------------------------------------------------------------

def test_row_lineage_inherited_values_are_materialised(tmp_path):
    a = simple_file(tmp_path / "data" / "a.parquet", list(range(6)))
    data, blobs = deletion_vector_file({a: [1, 4]})
    puffin = tmp_path / "data" / "dv.puffin"
    puffin.write_bytes(data)
    dv = {"path": str(puffin), "format": "puffin", "offset": blobs[0].offset, "length": blobs[0].length}
    out = rewrite_task(task(tmp_path / "out", [inp(a, 6, first_row_id=1000, seq=3, pos=[dv])]),
                       plan_for(SIMPLE, row_lineage=True))
    t = pq.read_table(out[0].path)
    assert t.column_names == ["id", "name", "_row_id", "_last_updated_sequence_number"]
    assert [int(f.metadata[FID]) for f in t.schema][2:] == [ROW_ID, LAST_UPDATED_SEQ] == [2147483540, 2147483539]
    # positions keep their row ids after deletes: row 2 of the file is _row_id 1002
    assert rows_of(out, ["id", "_row_id", "_last_updated_sequence_number"]) == [
        (0, 1000, 3), (2, 1002, 3), (3, 1003, 3), (5, 1005, 3)]
    # lineage columns are not table columns: no metrics for them
    assert set(out[0].value_counts) == {1, 2} and set(out[0].column_sizes) == {1, 2}


def test_row_lineage_materialised_values_are_kept(tmp_path):
    """A file written by an UPDATE carries _row_id / _last_updated_sequence_number; nulls in
    them inherit (first_row_id + position, the file's data sequence number)."""
    a = simple_file(tmp_path / "data" / "a.parquet", [10, 11, 12, 13], extra_fields=[
        (fld("_row_id", pa.int64(), ROW_ID), [7, None, 3, None]),
        (fld("_last_updated_sequence_number", pa.int64(), LAST_UPDATED_SEQ), [2, 2, None, None])])
    out = rewrite_task(task(tmp_path / "out", [inp(a, 4, first_row_id=500, seq=9)]), plan_for(SIMPLE, row_lineage=True))
    assert rows_of(out, ["id", "_row_id", "_last_updated_sequence_number"]) == [
        (10, 7, 2), (11, 501, 2), (12, 3, 9), (13, 503, 9)]


def test_row_lineage_of_several_inputs(tmp_path):
    a = simple_file(tmp_path / "data" / "a.parquet", [1, 2])
    b = simple_file(tmp_path / "data" / "b.parquet", [3, 4, 5])
    out = rewrite_task(task(tmp_path / "out", [inp(a, 2, first_row_id=0, seq=1), inp(b, 3, first_row_id=2, seq=2)]),
                       plan_for(SIMPLE, row_lineage=True))
    assert rows_of(out, ["id", "_row_id", "_last_updated_sequence_number"]) == [
        (1, 0, 1), (2, 1, 1), (3, 2, 2), (4, 3, 2), (5, 4, 2)]


# -- metrics -------------------------------------------------------------------------------------

TYPES = load_schema_argument("id:long!, name:string, score:double, ratio:float, d:date, ts:timestamptz, "
                             "ts_ntz:timestamp, amount:decimal(10,2), flag:boolean, blob:binary, qty:int, "
                             "tags:list<string>")


def types_file(path) -> str:
    fields = [fld("id", pa.int64(), 1, False), fld("name", pa.string(), 2), fld("score", pa.float64(), 3),
              fld("ratio", pa.float32(), 4), fld("d", pa.date32(), 5), fld("ts", pa.timestamp("us", tz="UTC"), 6),
              fld("ts_ntz", pa.timestamp("us"), 7), fld("amount", pa.decimal128(10, 2), 8), fld("flag", pa.bool_(), 9),
              fld("blob", pa.binary(), 10), fld("qty", pa.int32(), 11),
              fld("tags", pa.list_(fld("element", pa.string(), 13)), 12)]
    long_a = "a" * 20
    cols = {
        "id": [3, -7, 12],
        "name": ["kiwi", None, long_a + "z"],
        "score": [1.5, float("nan"), -2.25],
        "ratio": [float("nan"), None, float("nan")],
        "d": [dt.date(2024, 1, 2), dt.date(1969, 12, 31), None],
        "ts": [dt.datetime(2024, 3, 1, 10, 0, tzinfo=UTC), None, dt.datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC)],
        "ts_ntz": [None, dt.datetime(2020, 5, 5, 5, 5, 5), None],
        "amount": [decimal.Decimal("1.25"), decimal.Decimal("-10.00"), None],
        "flag": [True, True, None],
        "blob": [b"\x00\x01", b"\xff" * 20, b"\x05" * 17 + b"\x07"],
        "qty": [None, None, None],
        "tags": [["x"], None, []],
    }
    return write_parquet(path, pa.Table.from_arrays([pa.array(cols[f.name], f.type) for f in fields],
                                                    schema=pa.schema(fields)))


def test_metrics_are_appendix_d_bounds(tmp_path):
    src = types_file(tmp_path / "t.parquet")
    out = rewrite_task(task(tmp_path / "out", [inp(src, 3)]), plan_for(TYPES))
    assert len(out) == 1
    f = out[0]
    assert f.record_count == 3
    top = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
    assert set(f.value_counts) >= top and all(f.value_counts[k] == 3 for k in top)
    assert {k: f.null_value_counts[k] for k in top} == {1: 0, 2: 1, 3: 0, 4: 1, 5: 1, 6: 1, 7: 2, 8: 1, 9: 1,
                                                          10: 0, 11: 3}
    assert f.nan_value_counts == {3: 1, 4: 2}

    def b(type_text, v):
        return to_bytes(primitive(type_text), v).hex()

    day = lambda d: (d - dt.date(1970, 1, 1)).days  # noqa: E731
    expected_lower = {
        1: b("long", -7), 2: b("string", "aaaaaaaaaaaaaaaa"), 3: b("double", -2.25),
        5: b("date", day(dt.date(1969, 12, 31))), 6: b("timestamptz", 1),
        7: b("timestamp", int(dt.datetime(2020, 5, 5, 5, 5, 5, tzinfo=UTC).timestamp()) * 10 ** 6),
        8: b("decimal(10, 2)", decimal.Decimal("-10.00")), 9: b("boolean", True), 10: b("binary", b"\x00\x01"),
    }
    expected_upper = {
        1: b("long", 12), 2: b("string", "kiwi"), 3: b("double", 1.5), 5: b("date", day(dt.date(2024, 1, 2))),
        6: b("timestamptz", int(dt.datetime(2024, 3, 1, 10, tzinfo=UTC).timestamp()) * 10 ** 6),
        7: b("timestamp", int(dt.datetime(2020, 5, 5, 5, 5, 5, tzinfo=UTC).timestamp()) * 10 ** 6),
        8: b("decimal(10, 2)", decimal.Decimal("1.25")), 9: b("boolean", True),
        # 20 x 0xff cannot be truncated upwards: no upper bound... but 0x05*17 + 0x07 truncates to 0x05*15 + 0x06
    }
    assert {k: v for k, v in f.lower_bounds.items() if k in top} == expected_lower
    got_upper = {k: v for k, v in f.upper_bounds.items() if k in top}
    # binary: max is b"\xff" * 20 -> truncated to 16 bytes cannot be rounded up: no bound
    assert 10 not in got_upper
    assert got_upper == expected_upper
    # no bounds for a column of only NaN (ratio) or only nulls (qty)
    assert 4 not in f.lower_bounds and 11 not in f.lower_bounds
    assert set(f.column_sizes) >= top - {12} and all(v > 0 for v in f.column_sizes.values())
    assert f.split_offsets == [4]


def test_string_upper_bound_truncation(tmp_path):
    schema = load_schema_argument("id:long!, name:string")
    src = simple_file(tmp_path / "a.parquet", [1, 2], ["b" * 15 + "cd", "a"])
    f = rewrite_task(task(tmp_path / "out", [inp(src, 2)]), plan_for(schema))[0]
    assert bytes.fromhex(f.upper_bounds[2]) == ("b" * 15 + "d").encode()
    assert bytes.fromhex(f.lower_bounds[2]) == b"a"
    src = simple_file(tmp_path / "b.parquet", [1], ["é" * 17])  # 16 chars, not 16 bytes
    f = rewrite_task(task(tmp_path / "out2", [inp(src, 1)]), plan_for(schema))[0]
    assert bytes.fromhex(f.lower_bounds[2]).decode() == "é" * 16
    assert bytes.fromhex(f.upper_bounds[2]).decode() == "é" * 15 + chr(ord("é") + 1)


def test_metrics_match_what_pyarrow_reads(tmp_path):
    """Record count, size and the split offset of each row group agree with the file."""
    srcs = [simple_file(tmp_path / f"in{i}.parquet", list(range(i * 100, i * 100 + 100))) for i in range(3)]
    out = rewrite_task(task(tmp_path / "out", [inp(s, 100) for s in srcs]), plan_for(SIMPLE))
    for f in out:
        md = pq.ParquetFile(f.path).metadata
        assert md.num_rows == f.record_count
        assert len(f.split_offsets) == md.num_row_groups
        assert f.split_offsets == sorted(f.split_offsets) and f.split_offsets[0] == 4


# -- writing: rolling files, repartitioning, sorting, failures ---------------------------------------

def test_rolls_to_new_files_at_the_target_size(tmp_path):
    srcs = [simple_file(tmp_path / f"in{i}.parquet", list(range(i * 10, i * 10 + 10))) for i in range(3)]
    out = rewrite_task(task(tmp_path / "out", [inp(s, 10) for s in srcs]), plan_for(SIMPLE, target=1))
    assert len(out) == 3 and [f.record_count for f in out] == [10, 10, 10]
    assert len({f.path for f in out}) == 3
    out = rewrite_task(task(tmp_path / "out2", [inp(s, 10) for s in srcs]), plan_for(SIMPLE))
    assert len(out) == 1 and out[0].record_count == 30
    assert [r[0] for r in rows_of(out)] == list(range(30))


def test_repartitions_files_of_older_specs(tmp_path):
    schema = load_schema_argument("id:long!, region:string, ts:timestamptz")
    fields = [fld("id", pa.int64(), 1, False), fld("region", pa.string(), 2), fld("ts", pa.timestamp("us", tz="UTC"), 3)]
    t1 = dt.datetime(2024, 3, 1, 23, 59, tzinfo=UTC)
    t2 = dt.datetime(2024, 3, 2, 0, 1, tzinfo=UTC)
    src = write_parquet(tmp_path / "old.parquet", pa.table(
        [pa.array([1, 2, 3, 4]), pa.array(["eu", "us", "eu", None]), pa.array([t1, t2, t2, None], fields[2].type)],
        schema=pa.schema(fields)))
    repartition = [{"name": "region", "transform": "identity", "column": "region", "source_type": "string"},
                   {"name": "ts_day", "transform": "day", "column": "ts", "source_type": "timestamptz"}]
    out = rewrite_task(task(tmp_path / "out", [inp(src, 4)], repartition=repartition), plan_for(schema))
    got = sorted(((tuple(f.partition), tuple(r[0] for r in rows_of([f])),
                   os.path.relpath(os.path.dirname(f.path), tmp_path / "out")) for f in out),
                 key=lambda x: tuple((v is None, v or "") for v in x[0]))
    assert got == sorted([
        (("eu", "2024-03-01"), (1,), "region=eu/ts_day=2024-03-01"),
        (("eu", "2024-03-02"), (3,), "region=eu/ts_day=2024-03-02"),
        (("us", "2024-03-02"), (2,), "region=us/ts_day=2024-03-02"),
        ((None, None), (4,), "region=null/ts_day=null"),
    ], key=lambda x: tuple((v is None, v or "") for v in x[0]))


def test_sort_strategy_sorts_the_task(tmp_path):
    a = simple_file(tmp_path / "a.parquet", [5, 1, 9], ["e", None, "i"])
    b = simple_file(tmp_path / "b.parquet", [3, 7], [None, "g"])
    sort = [{"column": "name", "transform": "identity", "direction": "desc", "null_order": "nulls-first"},
            {"column": "id", "transform": "identity", "direction": "asc", "null_order": "nulls-first"}]
    out = rewrite_task(task(tmp_path / "out", [inp(a, 3), inp(b, 2)]), plan_for(SIMPLE, sort=sort))
    assert len(out) == 1 and out[0].sorted is True
    assert pq.read_table(out[0].path).column("id").to_pylist() == [1, 3, 9, 7, 5]


def test_sort_null_order_per_field(tmp_path):
    """Each sort field has its own null order (name nulls last, then qty nulls first)."""
    schema = load_schema_argument("id:long!, name:string, qty:int")
    fields = [fld("id", pa.int64(), 1, False), fld("name", pa.string(), 2), fld("qty", pa.int32(), 3)]
    src = write_parquet(tmp_path / "a.parquet", pa.table(
        [pa.array([1, 2, 3, 4, 5, 6]), pa.array(["b", None, "a", "a", None, "b"]),
         pa.array([7, 8, None, 5, None, None], pa.int32())], schema=pa.schema(fields)))
    sort = [{"column": "name", "transform": "identity", "direction": "asc", "null_order": "nulls-last"},
            {"column": "qty", "transform": "identity", "direction": "desc", "null_order": "nulls-first"}]
    out = rewrite_task(task(tmp_path / "out", [inp(src, 6)]), plan_for(schema, sort=sort))
    t = pq.read_table(out[0].path)
    assert list(zip(t.column("name").to_pylist(), t.column("qty").to_pylist())) == [
        ("a", None), ("a", 5), ("b", None), ("b", 7), (None, None), (None, 8)]


def test_failure_removes_what_the_task_wrote(tmp_path):
    a = simple_file(tmp_path / "a.parquet", list(range(10)))
    missing = str(tmp_path / "gone.parquet")
    bad = {"path": missing, "format": "parquet", "record_count": 1, "size": 1, "first_row_id": None,
           "data_sequence_number": 1, "position_deletes": [], "equality_deletes": []}
    with pytest.raises(Exception):
        rewrite_task(task(tmp_path / "out", [inp(a, 10), bad]), plan_for(SIMPLE, target=1))
    assert not list((tmp_path / "out").rglob("*.parquet")) if (tmp_path / "out").exists() else True
