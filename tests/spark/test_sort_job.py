"""The sort path of the Spark job (icectl/spark/sort.py) against the in-memory sort of the data
plane (icectl.spark.rewrite.sort_in_memory), on inputs of every kind of type: time,
nanosecond timestamps, uuid, fixed, decimal, unknown, lists, maps and structs cross Spark in
carrier types and come back unchanged; rows are read with their deletes and row lineage; the
order (direction, null order, NaN above every number) is the same.

One real spark-submit (pyspark's, local[*]) runs job.py on a plan of two groups of the same
inputs: one written as one file, one range-partitioned into three.
"""
from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import os
import random
import uuid

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icectl.spark import submit
from icectl.spark.protocol import InputFile, SortField, from_json
from icectl.spark.rewrite import output_schema, read_input, sort_in_memory
from icectl.spec.types import schema_from_json

pytestmark = pytest.mark.spark

UTC = dt.timezone.utc
SCHEMA_JSON = {"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "required": True, "type": "long"},
    {"id": 2, "name": "name", "required": False, "type": "string"},
    {"id": 3, "name": "score", "required": False, "type": "double"},
    {"id": 4, "name": "d", "required": False, "type": "date"},
    {"id": 5, "name": "t", "required": False, "type": "time"},
    {"id": 6, "name": "ts", "required": False, "type": "timestamptz"},
    {"id": 7, "name": "tsn", "required": False, "type": "timestamp_ns"},
    {"id": 8, "name": "u", "required": False, "type": "uuid"},
    {"id": 9, "name": "fx", "required": False, "type": "fixed[4]"},
    {"id": 10, "name": "amt", "required": False, "type": "decimal(10, 2)"},
    {"id": 11, "name": "flag", "required": False, "type": "boolean"},
    {"id": 12, "name": "blob", "required": False, "type": "binary"},
    {"id": 13, "name": "tags", "required": False,
     "type": {"type": "list", "element-id": 14, "element": "string", "element-required": False}},
    {"id": 15, "name": "attrs", "required": False,
     "type": {"type": "map", "key-id": 16, "key": "string", "value-id": 17, "value": "int", "value-required": False}},
    {"id": 18, "name": "loc", "required": False, "type": {"type": "struct", "fields": [
        {"id": 19, "name": "lat", "required": True, "type": "double"},
        {"id": 20, "name": "lon", "required": False, "type": "float"}]}},
    {"id": 21, "name": "nothing", "required": False, "type": "unknown"},
]}
SCHEMA = schema_from_json(SCHEMA_JSON)
SORT = [{"column": "name", "transform": "identity", "direction": "desc", "null_order": "nulls-first"},
        {"column": "score", "transform": "identity", "direction": "asc", "null_order": "nulls-last"},
        {"column": "tsn", "transform": "identity", "direction": "desc", "null_order": "nulls-last"}]
KEYS = [s["column"] for s in SORT]
SORT_FIELDS = [from_json(SortField, s) for s in SORT]


def rich_rows(rnd: random.Random, ids: range) -> pa.Table:
    """Rows of SCHEMA in its Arrow form, with nulls, NaN and ties in the sort keys."""
    def maybe(v, p=0.15):
        return None if rnd.random() < p else v

    cols = {
        "id": list(ids),
        "name": [maybe(rnd.choice(["kiwi", "apple", "Äpfel", "zebra", "a" * 20])) for _ in ids],
        "score": [maybe(rnd.choice([1.5, -2.25, float("nan"), 0.0, 1e300, -math.inf])) for _ in ids],
        "d": [maybe(dt.date(1969, 12, 31) + dt.timedelta(days=rnd.randrange(-400, 400))) for _ in ids],
        "t": [maybe(dt.time(rnd.randrange(24), rnd.randrange(60), 0, rnd.randrange(10 ** 6))) for _ in ids],
        "ts": [maybe(dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=rnd.randrange(-10 ** 15, 10 ** 15)))
               for _ in ids],
        "tsn": [maybe(rnd.randrange(-10 ** 18, 10 ** 18) // 7 * 7) for _ in ids],
        "u": [maybe(uuid.UUID(int=rnd.getrandbits(128)).bytes) for _ in ids],
        "fx": [maybe(bytes(rnd.getrandbits(8) for _ in range(4))) for _ in ids],
        "amt": [maybe(decimal.Decimal(rnd.randrange(-10 ** 9, 10 ** 9)) / 100) for _ in ids],
        "flag": [maybe(rnd.random() < 0.5) for _ in ids],
        "blob": [maybe(bytes(rnd.getrandbits(8) for _ in range(rnd.randrange(0, 30)))) for _ in ids],
        "tags": [maybe([maybe(rnd.choice("xyz"), 0.2) for _ in range(rnd.randrange(0, 3))]) for _ in ids],
        "attrs": [maybe([(k, maybe(rnd.randrange(100), 0.2)) for k in rnd.sample("abc", rnd.randrange(0, 3))])
                  for _ in ids],
        "loc": [maybe({"lat": rnd.uniform(-90, 90), "lon": maybe(rnd.uniform(-180, 180))}) for _ in ids],
        "nothing": [None for _ in ids],
    }
    target = output_schema(SCHEMA, False)
    arrays = []
    for f in target:
        values = cols[f.name]
        if f.name == "tsn":
            arrays.append(pa.array(values, pa.int64()).cast(f.type))
        else:
            arrays.append(pa.array(values, f.type))
    return pa.Table.from_arrays(arrays, schema=target)


def normalized(rows: list) -> list:
    """Rows comparable with ==: NaN as a string (NaN != NaN), map entries in key order."""
    def norm(v):
        if isinstance(v, float) and math.isnan(v):
            return "NaN"
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        if isinstance(v, list):
            return [norm(x) for x in v]
        if isinstance(v, tuple):
            return tuple(norm(x) for x in v)
        return v

    return [norm(r) for r in rows]


def keys_of(table: pa.Table) -> list:
    return normalized(list(zip(*(table.column(k).to_pylist() for k in KEYS))))


def test_carrier_types_round_trip():
    """Every type goes to its Spark carrier and back unchanged (no JVM: Arrow casts only)."""
    from icectl.spark.sort import carrier_schema, from_carrier, spark_schema, to_carrier

    data = rich_rows(random.Random(3), range(300))
    sschema = spark_schema(SCHEMA, False)
    carrier = carrier_schema(sschema)
    assert [f.type for f in carrier][:10] == [pa.int64(), pa.string(), pa.float64(), pa.int32(), pa.int64(),
                                              pa.int64(), pa.int64(), pa.binary(), pa.binary(), pa.decimal128(10, 2)]
    batches = to_carrier(data, carrier)
    assert all(b.schema == carrier for b in batches)
    back = pa.concat_tables([from_carrier(b, data.schema) for b in batches])
    assert back.schema.equals(data.schema, check_metadata=True)
    assert normalized(back.to_pylist()) == normalized(data.to_pylist())


@pytest.fixture(autouse=True)
def _tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))


def test_spark_sort_equals_the_in_memory_sort(tmp_path):
    rnd = random.Random(11)
    inputs = []
    for i in range(3):
        path = tmp_path / "in" / f"f{i}.parquet"
        path.parent.mkdir(exist_ok=True)
        pq.write_table(rich_rows(rnd, range(i * 200, i * 200 + 200)), str(path), row_group_size=64)
        inputs.append({"path": str(path), "format": "parquet", "record_count": 200, "size": os.path.getsize(path),
                       "first_row_id": 1000 * i, "data_sequence_number": i + 1, "position_deletes": [],
                       "equality_deletes": []})
    # a position delete file on f0 (rows 0, 63, 64, 199) and an equality delete on name = 'zebra'
    pos = tmp_path / "in" / "pos.parquet"
    pq.write_table(pa.table([pa.array([inputs[0]["path"]] * 4), pa.array([0, 63, 64, 199], pa.int64())],
                            schema=pa.schema([pa.field("file_path", pa.string(), False, {b"PARQUET:field_id": b"2147483546"}),
                                              pa.field("pos", pa.int64(), False, {b"PARQUET:field_id": b"2147483545"})])),
                   str(pos))
    inputs[0]["position_deletes"] = [{"path": str(pos), "format": "parquet", "path_aliases": []}]
    eq = tmp_path / "in" / "eq.parquet"
    pq.write_table(pa.table([pa.array(["zebra"])], schema=pa.schema([pa.field("name", pa.string(), True,
                                                                              {b"PARQUET:field_id": b"2"})])), str(eq))
    inputs[1]["equality_deletes"] = [{"path": str(eq), "equality_ids": [2]}]

    def group(gid, n_out):
        return {"group_id": gid, "partition": "(unpartitioned)", "expected_outputs": n_out, "tasks": [
            {"task_id": f"{gid}-0", "group_id": gid, "output_dir": str(tmp_path / f"out{gid}"), "inputs": inputs,
             "repartition": None, "version": 1}]}

    plan = {"version": 1, "kind": "rewrite", "table": "db.t", "location": str(tmp_path), "format_version": 3, "schema": SCHEMA_JSON,
            "target_file_size": 1 << 30, "row_lineage": True, "sort": SORT, "io_properties": {},
            "groups": [group(1, 1), group(2, 3)], "compression": "zstd", "row_group_bytes": 1 << 20,
            "app_name": "icectl-sort-test"}
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    t = submit.load_template()
    argv = submit.render_command(t, job_file=os.path.join(os.path.dirname(submit.__file__), "job.py"),
                                 plan_file=str(tmp_path / "plan.json"), result_file=str(tmp_path / "result.json"),
                                 py_files=[], command="compact", table="db.t",
                                 spark_submit=submit.default_spark_submit())
    submit.run_command(argv, t, log_file=str(tmp_path / "log"))
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["error"] is None

    # what the in-memory path makes of the same inputs
    from icectl.io import FileIO

    target = output_schema(SCHEMA, True)
    data = pa.concat_tables([read_input(FileIO(), from_json(InputFile, inp), schema=SCHEMA, target=target,
                                        row_lineage=True) for inp in inputs])
    zebras = pq.read_table(inputs[1]["path"]).column("name").to_pylist().count("zebra")
    assert zebras and data.num_rows == 600 - 4 - zebras  # the deletes applied
    expected = sort_in_memory(data, SORT_FIELDS)
    by_id = sorted(normalized(expected.to_pylist()), key=lambda r: r["id"])

    files = {1: [], 2: []}
    for f in result["files"]:
        files[f["group_id"]].append(f)
        assert f["sorted"] is True and f["record_count"] == pq.ParquetFile(f["path"]).metadata.num_rows
    [one] = files[1]
    got = pq.read_table(one["path"])
    assert got.schema.equals(target, check_metadata=False)
    assert [f.metadata for f in got.schema] == [f.metadata for f in target]  # field ids kept
    assert keys_of(got) == keys_of(expected)  # the same order
    assert sorted(normalized(got.to_pylist()), key=lambda r: r["id"]) == by_id  # the same rows, lineage included

    assert len(files[2]) == 3
    parts = [pq.read_table(f["path"]) for f in files[2]]
    for p in parts:
        assert keys_of(p) == keys_of(sort_in_memory(p, SORT_FIELDS))  # each file sorted
    # the three files hold consecutive ranges: in the order of their first rows, they are the sort
    firsts = pa.concat_tables([p.slice(0, 1) for p in parts]).append_column("part", pa.array([0, 1, 2]))
    order = sort_in_memory(firsts, SORT_FIELDS).column("part").to_pylist()
    together = pa.concat_tables([parts[i] for i in order])
    assert keys_of(together) == keys_of(expected)
    assert sorted(normalized(together.to_pylist()), key=lambda r: r["id"]) == by_id


def test_sort_job_reports_a_missing_input_and_keeps_the_other_groups_files(tmp_path):
    """A group whose input is gone fails with the reason (the Python error, not Spark's wrapper);
    it wrote nothing; the other group's files are reported, so that icectl can remove them."""
    good = tmp_path / "in" / "good.parquet"
    good.parent.mkdir()
    pq.write_table(rich_rows(random.Random(5), range(50)), str(good))
    missing = str(tmp_path / "in" / "gone.parquet")

    def inp(path):
        return {"path": str(path), "format": "parquet", "record_count": 50, "size": 1000, "first_row_id": None,
                "data_sequence_number": 1, "position_deletes": [], "equality_deletes": []}

    def group(gid, inputs):
        return {"group_id": gid, "partition": "(unpartitioned)", "expected_outputs": 1, "tasks": [
            {"task_id": f"{gid}-0", "group_id": gid, "output_dir": str(tmp_path / f"out{gid}"), "inputs": inputs,
             "repartition": None, "version": 1}]}

    plan = {"version": 1, "kind": "rewrite", "table": "db.t", "location": str(tmp_path), "format_version": 2, "schema": SCHEMA_JSON,
            "target_file_size": 1 << 30, "row_lineage": False, "sort": SORT, "io_properties": {},
            "groups": [group(1, [inp(good)]), group(2, [inp(good), inp(missing)])], "compression": "zstd",
            "row_group_bytes": 128 * 1024 * 1024,
            "app_name": "icectl-sort-failure"}
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    t = submit.load_template()
    argv = submit.render_command(t, job_file=os.path.join(os.path.dirname(submit.__file__), "job.py"),
                                 plan_file=str(tmp_path / "plan.json"), result_file=str(tmp_path / "result.json"),
                                 py_files=[], command="compact", table="db.t",
                                 spark_submit=submit.default_spark_submit())
    with pytest.raises(Exception, match="exit code 3"):
        submit.run_command(argv, t, log_file=str(tmp_path / "log"))
    result = json.loads((tmp_path / "result.json").read_text())
    error = result["error"]
    assert error == f"group 2: icectl.errors.NotFoundError: file not found: {missing}", error
    [f] = result["files"]
    assert f["group_id"] == 1 and os.path.exists(f["path"]) and f["record_count"] == 50
    assert not (tmp_path / "out2").exists() or not list((tmp_path / "out2").iterdir())
