"""The data plane of compaction without a JVM: icectl.spark.rewrite.rewrite_task called directly
on real Parquet inputs (columns by field id, position delete files with field ids 2147483546 /
2147483545, deletion vectors in Puffin files, equality deletes, v3 row lineage), its output rows
and the metrics it reports; then whole compactions (plan, job, commit) through a stand-in for
spark-submit that runs the same tasks in one Python process.
"""
from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icectl.spec.conversions import to_bytes
from icectl.ops.create import load_schema_argument
from icectl.formats.puffin import deletion_vector_file
from icectl.spec.types import primitive
from icectl.spark.rewrite import LAST_UPDATED_SEQ, ROW_ID, rewrite_task

pytestmark = pytest.mark.spark  # the Spark job's data plane (no JVM needed, but it is the job's code)

FID = b"PARQUET:field_id"
UTC = dt.timezone.utc


def fld(name, typ, fid, nullable=True):
    return pa.field(name, typ, nullable=nullable, metadata={FID: str(fid).encode()})


def write_parquet(path, table: pa.Table) -> str:
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    pq.write_table(table, str(path))
    return str(path)


SIMPLE = load_schema_argument("id:long!, name:string")


def simple_file(path, ids, names=None, *, extra_fields=()) -> str:
    names = names if names is not None else [f"n{i}" for i in ids]
    fields = [fld("id", pa.int64(), 1, False), fld("name", pa.string(), 2)]
    cols = [pa.array(ids, pa.int64()), pa.array(names, pa.string())]
    for f, values in extra_fields:
        fields.append(f)
        cols.append(pa.array(values, f.type))
    return write_parquet(path, pa.Table.from_arrays(cols, schema=pa.schema(fields)))


def position_delete_file(path, pairs) -> str:
    """A Parquet position delete file: (file_path, pos) rows with the spec's reserved field ids."""
    schema = pa.schema([fld("file_path", pa.string(), 2147483546, False), fld("pos", pa.int64(), 2147483545, False)])
    return write_parquet(path, pa.table({"file_path": [p for p, _ in pairs], "pos": [n for _, n in pairs]},
                                        schema=schema))


def plan_for(schema, *, row_lineage=False, target=512 * 1024 ** 2, sort=None):
    return {"schema": schema.to_json(), "row_lineage": row_lineage, "target_file_size": target,
            "io_properties": {}, "compression": "zstd", "sort": sort}


def inp(path, n, *, first_row_id=None, seq=1, pos=(), eq=()):
    return {"path": str(path), "format": "parquet", "record_count": n, "size": os.path.getsize(path),
            "first_row_id": first_row_id, "data_sequence_number": seq, "position_deletes": list(pos),
            "equality_deletes": list(eq)}


def task(out_dir, inputs, repartition=None):
    return {"task_id": "7-0", "group_id": 7, "output_dir": str(out_dir), "inputs": inputs, "repartition": repartition}


def rows_of(files, columns=None) -> list[tuple]:
    out = []
    for f in files:
        t = pq.read_table(f["path"])
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
    t = pq.read_table(f["path"])
    assert t.column_names == ["id", "label", "added"]
    assert [x.metadata[FID] for x in t.schema] == [b"1", b"2", b"3"]
    assert t.to_pylist() == [{"id": 1, "label": "x", "added": None}, {"id": 2, "label": None, "added": None},
                             {"id": 3, "label": "z", "added": None}]
    assert (f["task_id"], f["group_id"], f["record_count"], f["partition"], f["sorted"]) == ("7-0", 7, 3, None, False)
    assert f["size"] == os.path.getsize(f["path"]) and f["path"].startswith(str(tmp_path / "out") + "/")
    assert f["path"].endswith("-icectl-compact.parquet")


def test_file_without_field_ids_matched_by_name(tmp_path):
    src = write_parquet(tmp_path / "plain.parquet", pa.table({"name": ["a", "b"], "id": pa.array([5, 6], pa.int32())}))
    out = rewrite_task(task(tmp_path / "out", [inp(src, 2)]), plan_for(SIMPLE))
    assert rows_of(out) == [(5, "a"), (6, "b")]
    assert pq.read_schema(out[0]["path"]).field("id").type == pa.int64()  # promoted to the table type


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
    assert sum(f["record_count"] for f in out) == 15


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
    assert sum(f["record_count"] for f in out) == 0
    assert all(f["record_count"] > 0 for f in out), "a file with no rows was written"


# -- v3 row lineage ----------------------------------------------------------------------------------

def test_row_lineage_inherited_values_are_materialised(tmp_path):
    a = simple_file(tmp_path / "data" / "a.parquet", list(range(6)))
    data, blobs = deletion_vector_file({a: [1, 4]})
    puffin = tmp_path / "data" / "dv.puffin"
    puffin.write_bytes(data)
    dv = {"path": str(puffin), "format": "puffin", "offset": blobs[0].offset, "length": blobs[0].length}
    out = rewrite_task(task(tmp_path / "out", [inp(a, 6, first_row_id=1000, seq=3, pos=[dv])]),
                       plan_for(SIMPLE, row_lineage=True))
    t = pq.read_table(out[0]["path"])
    assert t.column_names == ["id", "name", "_row_id", "_last_updated_sequence_number"]
    assert [int(f.metadata[FID]) for f in t.schema][2:] == [ROW_ID, LAST_UPDATED_SEQ] == [2147483540, 2147483539]
    # positions keep their row ids after deletes: row 2 of the file is _row_id 1002
    assert rows_of(out, ["id", "_row_id", "_last_updated_sequence_number"]) == [
        (0, 1000, 3), (2, 1002, 3), (3, 1003, 3), (5, 1005, 3)]
    # lineage columns are not table columns: no metrics for them
    assert set(out[0]["value_counts"]) == {1, 2} and set(out[0]["column_sizes"]) == {1, 2}


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
    assert f["record_count"] == 3
    top = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
    assert set(f["value_counts"]) >= top and all(f["value_counts"][k] == 3 for k in top)
    assert {k: f["null_value_counts"][k] for k in top} == {1: 0, 2: 1, 3: 0, 4: 1, 5: 1, 6: 1, 7: 2, 8: 1, 9: 1,
                                                          10: 0, 11: 3}
    assert f["nan_value_counts"] == {3: 1, 4: 2}

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
    assert {k: v for k, v in f["lower_bounds"].items() if k in top} == expected_lower
    got_upper = {k: v for k, v in f["upper_bounds"].items() if k in top}
    # binary: max is b"\xff" * 20 -> truncated to 16 bytes cannot be rounded up: no bound
    assert 10 not in got_upper
    assert got_upper == expected_upper
    # no bounds for a column of only NaN (ratio) or only nulls (qty)
    assert 4 not in f["lower_bounds"] and 11 not in f["lower_bounds"]
    assert set(f["column_sizes"]) >= top - {12} and all(v > 0 for v in f["column_sizes"].values())
    assert f["split_offsets"] == [4]


def test_string_upper_bound_truncation(tmp_path):
    schema = load_schema_argument("id:long!, name:string")
    src = simple_file(tmp_path / "a.parquet", [1, 2], ["b" * 15 + "cd", "a"])
    f = rewrite_task(task(tmp_path / "out", [inp(src, 2)]), plan_for(schema))[0]
    assert bytes.fromhex(f["upper_bounds"][2]) == ("b" * 15 + "d").encode()
    assert bytes.fromhex(f["lower_bounds"][2]) == b"a"
    src = simple_file(tmp_path / "b.parquet", [1], ["é" * 17])  # 16 chars, not 16 bytes
    f = rewrite_task(task(tmp_path / "out2", [inp(src, 1)]), plan_for(schema))[0]
    assert bytes.fromhex(f["lower_bounds"][2]).decode() == "é" * 16
    assert bytes.fromhex(f["upper_bounds"][2]).decode() == "é" * 15 + chr(ord("é") + 1)


def test_metrics_match_what_pyarrow_reads(tmp_path):
    """Record count, size and the split offset of each row group agree with the file."""
    srcs = [simple_file(tmp_path / f"in{i}.parquet", list(range(i * 100, i * 100 + 100))) for i in range(3)]
    out = rewrite_task(task(tmp_path / "out", [inp(s, 100) for s in srcs]), plan_for(SIMPLE))
    for f in out:
        md = pq.ParquetFile(f["path"]).metadata
        assert md.num_rows == f["record_count"]
        assert len(f["split_offsets"]) == md.num_row_groups
        assert f["split_offsets"] == sorted(f["split_offsets"]) and f["split_offsets"][0] == 4


# -- writing: rolling files, repartitioning, sorting, failures ---------------------------------------

def test_rolls_to_new_files_at_the_target_size(tmp_path):
    srcs = [simple_file(tmp_path / f"in{i}.parquet", list(range(i * 10, i * 10 + 10))) for i in range(3)]
    out = rewrite_task(task(tmp_path / "out", [inp(s, 10) for s in srcs]), plan_for(SIMPLE, target=1))
    assert len(out) == 3 and [f["record_count"] for f in out] == [10, 10, 10]
    assert len({f["path"] for f in out}) == 3
    out = rewrite_task(task(tmp_path / "out2", [inp(s, 10) for s in srcs]), plan_for(SIMPLE))
    assert len(out) == 1 and out[0]["record_count"] == 30
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
    got = sorted(((tuple(f["partition"]), tuple(r[0] for r in rows_of([f])),
                   os.path.relpath(os.path.dirname(f["path"]), tmp_path / "out")) for f in out),
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
    assert len(out) == 1 and out[0]["sorted"] is True
    assert pq.read_table(out[0]["path"]).column("id").to_pylist() == [1, 3, 9, 7, 5]


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
    t = pq.read_table(out[0]["path"])
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


# -- whole compactions through a stand-in for spark-submit ---------------------------------------------

FAKE_SUBMIT = """\
#!{python}
# Stands in for spark-submit: runs job.py's tasks in this process (no JVM).
import json, os, sys
args = sys.argv[1:]
plan_path, result_path = args[args.index("--plan") + 1], args[args.index("--result") + 1]
with open(os.path.join(os.path.dirname(plan_path), "argv.json"), "w") as f:
    json.dump(args, f)
from icectl.spark.rewrite import iter_tasks, rewrite_task
plan = json.load(open(plan_path))
light = {{k: v for k, v in plan.items() if k != "groups"}}
files, error = [], None
for t in iter_tasks(plan):
    try:
        files += rewrite_task(t, light)
    except Exception as e:
        error = f"{{type(e).__name__}}: {{e}}"
with open(result_path, "w") as f:
    json.dump({{"files": files, "error": error}}, f)
sys.stdout.flush()
os._exit(0 if error is None else 3)  # skip interpreter teardown (pyarrow threads may abort it)
"""


@pytest.fixture
def fake_template(tmp_path):
    script = tmp_path / "fake-spark-submit"
    script.write_text(FAKE_SUBMIT.format(python=sys.executable))
    script.chmod(0o755)
    tpl = tmp_path / "fake-template.yaml"
    tpl.write_text(f"spark_submit: {script}\n")
    return str(tpl)


def _data_file(table, path, ids, *, partition=(), spec_id=0, names=None):
    from icectl.formats.manifest import DataFile

    simple_file(path, ids, names)
    return DataFile(str(path), "parquet", partition, len(ids), os.path.getsize(path), spec_id=spec_id)


def _read_table(table) -> list[tuple]:
    """Rows of the live data files of main (for tables without live delete files)."""
    from icectl.table.scan import plan_files

    tasks, deletes = plan_files(table, table.metadata.current_snapshot)
    assert deletes == [], "live delete files remain"
    rows = []
    for t in tasks:
        tb = pq.read_table(t.file.file_path)
        assert tb.num_rows == t.file.record_count
        rows += list(zip(*(tb.column(c).to_pylist() for c in ("id", "name"))))
    return sorted(rows)


def test_compaction_end_to_end_with_deletes(tmp_path, fake_template):
    from icectl.catalog.hadoop import HadoopCatalog
    from icectl.ops.compaction import CompactOptions, plan_compaction
    from icectl.ops.compaction_job import JobSettings, run_compaction
    from icectl.formats.manifest import DataFile, FileContent
    from icectl.ops.create import create_table
    from icectl.table.snapshots import append_files
    from icectl.io import FileIO

    cat = HadoopCatalog("hc", str(tmp_path / "wh"), FileIO())
    t = create_table(cat, ("db", "t"), schema_text="id:long!, name:string", partition_by="name")
    loc = t.location
    a = _data_file(t, f"{loc}/data/name=x/a.parquet", [1, 2, 3], partition=("x",), names=["x"] * 3)
    b = _data_file(t, f"{loc}/data/name=x/b.parquet", [4, 5, 6], partition=("x",), names=["x"] * 3)
    c = _data_file(t, f"{loc}/data/name=y/c.parquet", [7, 8], partition=("y",), names=["y"] * 2)
    t = append_files(t, [a, b, c])
    pd = position_delete_file(f"{loc}/data/name=x/pd.parquet", [(a.file_path, 0), (b.file_path, 2)])
    t = append_files(t, [DataFile(pd, "parquet", ("x",), 2, os.path.getsize(pd), content=FileContent.POSITION_DELETES)])
    eq = write_parquet(f"{loc}/data/name=x/eq.parquet", pa.table(
        {"id": pa.array([5], pa.int64())}, schema=pa.schema([fld("id", pa.int64(), 1)])))
    t = append_files(t, [DataFile(eq, "parquet", ("x",), 1, os.path.getsize(eq), content=FileContent.EQUALITY_DELETES,
                                  equality_ids=[1])])
    plan = plan_compaction(t, CompactOptions(rewrite_all=True))
    assert [len(g.tasks) for g in plan.groups] == [2, 1]
    work = tmp_path / "work"
    res = run_compaction(t, plan, JobSettings(template_path=fake_template, work_dir=str(work)))
    assert (res.rewritten_data_files, res.added_data_files, res.removed_delete_files) == (3, 2, 2)
    t2 = t.refresh()
    assert _read_table(t2) == [(2, "x"), (3, "x"), (4, "x"), (7, "y"), (8, "y")]
    snap = t2.metadata.current_snapshot
    assert snap.summary["operation"] == "replace" and snap.summary["total-records"] == "5"
    # new files keep the starting snapshot's data sequence number
    from icectl.table.scan import plan_files

    tasks, _ = plan_files(t2, snap)
    assert {x.data_sequence_number for x in tasks} == {plan.starting_sequence_number}
    assert json.loads((work / "argv.json").read_text())[-4:] == ["--plan", str(work / "plan.json"),
                                                                 "--result", str(work / "result.json")]


def test_older_specs_into_an_unpartitioned_spec(tmp_path, fake_template):
    """Files of an older partitioned spec, compacted after the table became unpartitioned, come
    back as files of the current (unpartitioned) spec: not with the old spec and the partition of
    the first input file (which would be wrong for rows of the other partitions)."""
    from icectl.catalog.hadoop import HadoopCatalog
    from icectl.ops.compaction import CompactOptions, plan_compaction
    from icectl.ops.compaction_job import JobSettings, run_compaction
    from icectl.ops.create import create_table
    from icectl.spec.partitioning import PartitionSpec
    from icectl.table.snapshots import append_files
    from icectl.io import FileIO

    cat = HadoopCatalog("hc", str(tmp_path / "wh"), FileIO())
    t = create_table(cat, ("db", "t"), schema_text="id:long!, name:string", partition_by="name")
    loc = t.location
    a = _data_file(t, f"{loc}/data/name=x/a.parquet", [1, 2], partition=("x",), names=["x", "x"])
    b = _data_file(t, f"{loc}/data/name=y/b.parquet", [3], partition=("y",), names=["y"])
    t = append_files(t, [a, b])
    from icectl.table.builder import MetadataBuilder

    t = t.commit(MetadataBuilder(t.metadata).set_default_spec(PartitionSpec(1, ())).changes)
    assert t.metadata.default_spec_id == 1
    plan = plan_compaction(t, CompactOptions(rewrite_all=True))
    assert [g.partition_display for g in plan.groups] == ["(files of older specs)"]
    run_compaction(t, plan, JobSettings(template_path=fake_template, work_dir=str(tmp_path / "work")))
    t2 = t.refresh()
    files = [f for _, f in t2.live_files(t2.metadata.current_snapshot)]
    assert [(f.spec_id, f.partition, f.record_count) for f in files] == [(1, (), 3)]
    assert _read_table(t2) == [(1, "x"), (2, "x"), (3, "y")]


def test_failed_job_commits_nothing_and_removes_its_files(tmp_path, fake_template):
    """One task fails (its input is gone), another succeeded: what the job wrote is removed,
    nothing is committed, the error says why."""
    from icectl.catalog.hadoop import HadoopCatalog
    from icectl.ops.compaction import CompactOptions, plan_compaction
    from icectl.ops.compaction_job import JobSettings, run_compaction
    from icectl.ops.create import create_table
    from icectl.table.snapshots import append_files
    from icectl.errors import ExternalCommandError
    from icectl.io import FileIO

    cat = HadoopCatalog("hc", str(tmp_path / "wh"), FileIO())
    t = create_table(cat, ("db", "t"), schema_text="id:long!, name:string", partition_by="name")
    loc = t.location
    files = [_data_file(t, f"{loc}/data/name={n}/{n}{i}.parquet", [i], partition=(n,), names=[n])
             for n in ("x", "y") for i in range(2)]
    t = append_files(t, files)
    os.remove(files[2].file_path)  # a file of partition y is gone
    before = sorted(p for p in (tmp_path / "wh").rglob("*") if p.is_file())
    plan = plan_compaction(t, CompactOptions(rewrite_all=True))
    with pytest.raises(ExternalCommandError) as e:
        run_compaction(t, plan, JobSettings(template_path=fake_template, work_dir=str(tmp_path / "work")))
    assert e.value.exit_code == 9
    assert "y0.parquet" in e.value.message or "exit code 3" in e.value.message
    after = sorted(p for p in (tmp_path / "wh").rglob("*") if p.is_file())
    assert after == before  # the files of the group that succeeded are gone too
    assert t.refresh().metadata_location == t.metadata_location


def _two_partition_table(tmp_path):
    """db.t partitioned by name, three files in partition x: a and b small, k much larger."""
    from icectl.catalog.hadoop import HadoopCatalog
    from icectl.ops.create import create_table
    from icectl.table.snapshots import append_files
    from icectl.io import FileIO

    cat = HadoopCatalog("hc", str(tmp_path / "wh"), FileIO())
    t = create_table(cat, ("db", "t"), schema_text="id:long!, name:string", partition_by="name")
    loc = t.location
    files = [_data_file(t, f"{loc}/data/name=x/{n}.parquet", ids, partition=("x",), names=["x"] * len(ids))
             for n, ids in (("a", [1, 2]), ("b", [3, 4]), ("k", list(range(5, 2000))))]
    return append_files(t, files), files


def _java_style_position_deletes(table, data_file, positions):
    """A v2 position delete file as Iceberg Java writes it for one data file: no
    referenced_data_file, equal lower and upper bounds on file_path."""
    from icectl.formats.manifest import DataFile, FileContent

    path = data_file.file_path.rsplit("/", 1)[0] + f"/pd-{os.path.basename(data_file.file_path)}"
    position_delete_file(path, [(data_file.file_path, p) for p in positions])
    bound = data_file.file_path.encode()
    return DataFile(path, "parquet", data_file.partition, len(positions), os.path.getsize(path),
                    content=FileContent.POSITION_DELETES, spec_id=data_file.spec_id,
                    lower_bounds={2147483546: bound}, upper_bounds={2147483546: bound})


def test_concurrent_commits_during_the_job(tmp_path, fake_template):
    """Planned from one state; while the "job" runs other writers commit. An append and a
    position delete file scoped to a file that is not rewritten do not conflict (the commit
    retries on the new state); a delete on a rewritten file does, and nothing is left behind."""
    from icectl.ops.compaction import CompactOptions, plan_compaction
    from icectl.ops.compaction_job import JobSettings, run_compaction
    from icectl.table.snapshots import append_files
    from icectl.table.loaded import load_table
    from icectl.errors import CommitConflictError

    t, (a, b, k) = _two_partition_table(tmp_path)
    # only a and b are candidates: k is padded into the size range
    sizes = {f.file_path: f.file_size_in_bytes for f in (a, b, k)}
    target = int(sizes[k.file_path] / 0.8)
    plan = plan_compaction(t, CompactOptions(target_file_size=target, min_input_files=2))
    assert [sorted(os.path.basename(x.file.file_path) for x in g.tasks) for g in plan.groups] == [["a.parquet", "b.parquet"]]

    other = load_table(t.catalog, t.identifier)
    other = append_files(other, [_data_file(other, f"{other.location}/data/name=x/n.parquet", [9], partition=("x",),
                                            names=["x"])])
    other = append_files(other, [_java_style_position_deletes(other, k, [0])])
    res = run_compaction(t, plan, JobSettings(template_path=fake_template, work_dir=str(tmp_path / "w1")))
    assert len(res.committed) == 1
    t2 = t.refresh()
    from icectl.table.scan import plan_files

    tasks, deletes = plan_files(t2, t2.metadata.current_snapshot)
    names = sorted(os.path.basename(x.file.file_path) for x in tasks)
    assert "k.parquet" in names and "n.parquet" in names and "a.parquet" not in names
    assert [os.path.basename(d.data_file.file_path) for d in deletes] == ["pd-k.parquet"]  # still needed by k

    # now a delete on a file being rewritten: conflict, nothing committed, job files removed
    t3, (a3, b3, k3) = _two_partition_table(tmp_path / "second")
    plan = plan_compaction(t3, CompactOptions(target_file_size=target, min_input_files=2))
    other = append_files(load_table(t3.catalog, t3.identifier), [_java_style_position_deletes(t3, b3, [1])])
    with pytest.raises(CommitConflictError) as e:
        run_compaction(t3, plan, JobSettings(template_path=fake_template, work_dir=str(tmp_path / "w2")))
    assert "b.parquet" in e.value.message and e.value.exit_code == 5
    assert load_table(t3.catalog, t3.identifier).metadata_location == other.metadata_location
    assert not list((tmp_path / "second").rglob("*-icectl-compact.parquet"))


def test_partial_progress_commits_what_it_can(tmp_path, fake_template):
    """--partial-progress: one commit per batch of groups; a batch that conflicts is reported
    and its files removed, the others stay committed."""
    from icectl.catalog.hadoop import HadoopCatalog
    from icectl.ops.compaction import CompactOptions, plan_compaction
    from icectl.ops.compaction_job import JobSettings, run_compaction
    from icectl.ops.create import create_table
    from icectl.table.snapshots import append_files
    from icectl.table.loaded import load_table
    from icectl.io import FileIO

    cat = HadoopCatalog("hc", str(tmp_path / "wh"), FileIO())
    t = create_table(cat, ("db", "t"), schema_text="id:long!, name:string", partition_by="name")
    loc = t.location
    files = {(n, i): _data_file(t, f"{loc}/data/name={n}/{n}{i}.parquet", [i], partition=(n,), names=[n])
             for n in ("x", "y", "z") for i in range(2)}
    t = append_files(t, list(files.values()))
    plan = plan_compaction(t, CompactOptions(rewrite_all=True))
    assert [g.partition_display for g in plan.groups] == ["name=x", "name=y", "name=z"]
    append_files(load_table(cat, ("db", "t")), [_java_style_position_deletes(t, files[("y", 1)], [0])])
    res = run_compaction(t, plan, JobSettings(template_path=fake_template, work_dir=str(tmp_path / "w"),
                                              partial_progress=True, max_commits=3))
    assert len(res.committed) == 2 and [g for g, _ in res.failed_groups] == [2]
    assert "conflict" in res.failed_groups[0][1]
    assert (res.rewritten_data_files, res.added_data_files) == (4, 2)
    t2 = t.refresh()
    live = sorted(os.path.relpath(f.file_path, loc) for _, f in t2.live_files(t2.metadata.current_snapshot))
    assert [p for p in live if "icectl-compact" not in p] == ["data/name=y/pd-y1.parquet", "data/name=y/y0.parquet",
                                                              "data/name=y/y1.parquet"]
    assert len([p for p in live if "icectl-compact" in p]) == 2
    on_disk = {os.path.relpath(str(p), loc) for p in (tmp_path / "wh").rglob("*-icectl-compact.parquet")}
    assert on_disk == {p for p in live if "icectl-compact" in p}  # y's output was removed
