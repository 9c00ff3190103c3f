"""compute-stats and compute-partition-stats without Java (tests/interop/test_statistics_vs_java.py
compares both with Iceberg Java): the sketches hash each type's Appendix D bytes (checked against
icectl's own single-value serializer and, where the binding hashes by itself, byte for byte against
DataSketches' serialization), the job's data plane sketches a real table with its deletes applied,
the Puffin file and its registration, the partition statistics file on every format version, bad
input refused with nothing written, and expire's handling of statistics files."""
from __future__ import annotations

import base64
import datetime as dt
import decimal
import io
import os
import pathlib
import struct
import sys
import uuid

import pytest

from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.errors import ExitCode
from icectl.spark import ndv
from icectl.table.transaction import commit

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from validate_corpus import tables  # noqa: E402

ds = pytest.importorskip("datasketches")


def hashes_of(sketch: bytes) -> set[int]:
    """The retained hashes of an exact-mode serialized compact sketch (layout checked below)."""
    pre = sketch[0]
    if pre == 1:
        return set() if sketch[5] & 0x04 else {struct.unpack_from("<Q", sketch, 8)[0]}
    n = struct.unpack_from("<I", sketch, 8)[0]
    return set(struct.unpack_from(f"<{n}Q", sketch, 8 * pre))


# -- the sketch ----------------------------------------------------------------------------------------------

def test_exact_compact_sketch_is_the_bindings_layout_byte_for_byte():
    sh = ndv.seed_hash()
    for values in ([], [7], list(range(-50, 3000, 7))):
        s = ds.update_theta_sketch(lg_k=12, seed=9001)
        for v in values:
            s.update(v)
        mine = ndv.exact_compact_sketch(ndv.value_hashes(struct.pack("<q", v) for v in values), seed_hash_value=sh)
        assert mine == s.compact(ordered=True).serialize()
    s = ds.update_theta_sketch()
    for w in ("a", "név", "x" * 40):
        s.update(w)
    assert ndv.exact_compact_sketch(ndv.value_hashes(w.encode() for w in ("a", "név", "x" * 40)),
                                    seed_hash_value=sh) == s.compact().serialize()


CASES = [
    ("int", "int32", [0, 1, -1, 255, 2**31 - 1, -2**31, None, 1]),
    ("date", "date32", [dt.date(2020, 1, 1), dt.date(1969, 12, 31), None]),
    ("long", "int64", [0, -1, 2**62, None]),
    ("timestamptz", ("timestamp", "us", "UTC"), [0, 1_700_000_000_000_000, -5]),
    ("float", "float32", [0.0, -0.0, 1.5, float("inf"), None]),
    ("double", "float64", [0.0, -0.0, 1 / 3, -2.5e300]),
    ("decimal(9,2)", ("decimal", 9, 2), [decimal.Decimal("0.00"), decimal.Decimal("-1.28"),
                                         decimal.Decimal("1.27"), decimal.Decimal("-0.01"), None]),
    ("string", "string", ["", "a", "név", None, "a"]),
    ("boolean", "bool_", [True, False, None, True]),
    ("binary", "binary", [b"", b"\x00\xff", b"abc"]),
    ("fixed[2]", ("fixed", 2), [b"\x00\x01", b"\xff\xff"]),
    ("uuid", ("fixed", 16), [uuid.UUID(int=5).bytes, uuid.UUID(int=2**127).bytes]),
]


def _arrow(kind, values):
    import pyarrow as pa

    if isinstance(kind, tuple):
        t = {"timestamp": lambda: pa.timestamp(kind[1], tz=kind[2]), "decimal": lambda: pa.decimal128(kind[1], kind[2]),
             "fixed": lambda: pa.binary(kind[1])}[kind[0]]()
    else:
        t = getattr(pa, kind)()
    return pa.chunked_array([pa.array(values[: len(values) // 2], t), pa.array(values[len(values) // 2:], t)])


@pytest.mark.parametrize("type_name,kind,values", CASES, ids=[c[0] for c in CASES])
def test_each_type_hashes_its_single_value_bytes(type_name, kind, values):
    """What Java's ThetaSketchAgg hashes: Conversions.toByteBuffer of each non-null value (a uuid is
    a Spark string: its text), empty values not counted."""
    from icectl.spec.conversions import to_bytes

    sketch = ndv.ColumnSketch(type_name)
    sketch.update(_arrow(kind, values))
    got = sketch.to_bytes()
    expected_bytes = []
    for v in values:
        if v is None:
            continue
        if type_name == "uuid":
            expected_bytes.append(str(uuid.UUID(bytes=v)).encode())
        elif type_name == "date":
            expected_bytes.append(to_bytes("date", (v - dt.date(1970, 1, 1)).days))
        else:
            expected_bytes.append(to_bytes(type_name, v))
    assert hashes_of(got) == set(ndv.value_hashes(expected_bytes))
    distinct = {b for b in expected_bytes if b}
    assert ndv.estimate(got) == len(distinct)


def test_sketches_merge_past_the_nominal_entries():
    import pyarrow as pa

    a, b = ndv.ColumnSketch("int"), ndv.ColumnSketch("long")
    a.update(pa.array(range(0, 30000), pa.int32()))
    b.update(pa.array(range(0, 30000), pa.int64()))
    c = ndv.ColumnSketch("int")
    c.update(pa.array(range(20000, 50000), pa.int32()))
    merged = ndv.union_sketches([a.to_bytes(), c.to_bytes()])
    s = ds.compact_theta_sketch.deserialize(merged)
    assert s.is_estimation_mode() and s.num_retained <= 2 * 4096
    assert s.get_lower_bound(3) <= 50000 <= s.get_upper_bound(3)
    assert ds.compact_theta_sketch.deserialize(b.to_bytes()).get_lower_bound(3) <= 30000


def test_unsupported_types_are_refused():
    for t in ("variant", "geometry", "unknown"):
        assert not ndv.supported(t)
    with pytest.raises(ValueError):
        ndv.ColumnSketch("variant")


# -- compute-stats without spark-submit: the job's data plane, then the write and the commit ----------------

def _sketch_locally(t, plan):
    from icectl.ops.stats.compute_stats import job_plan

    jp = job_plan(t, plan, io_properties={})
    results = [ndv.sketch_task(task, jp.settings()) for task in jp.tasks]
    merged = ndv.merge_task_results(results, [c.field_id for c in jp.columns])
    return {int(k): base64.b64decode(v) for k, v in merged.sketches.items()}, merged.rows


@pytest.mark.parametrize("version", [2, 3, 4])
def test_statistics_file_of_a_table_with_deletes(tmp_path, version):
    import zstandard

    from icectl.formats.puffin import read_blob, read_puffin_footer
    from icectl.ops.stats.compute_stats import plan_compute_stats, write_and_commit

    t = tables.build(str(tmp_path), version).table
    plan = plan_compute_stats(t)
    assert [c.name for c in plan.columns] == ["id", "name", "ts"]
    sketches, rows = _sketch_locally(t, plan)
    assert rows == 8  # 10 rows, two deleted (a position delete and an equality delete, or a DV)
    result = write_and_commit(t, plan, sketches, rows=rows)
    after = result.committed.table
    snap = after.metadata.current_snapshot
    (st,) = after.metadata.statistics
    assert st.snapshot_id == snap.snapshot_id
    path = after.resolve(st.statistics_path)
    assert path.startswith(after.location + "/metadata/") and path.endswith(".stats")
    assert (st.statistics_path == os.path.relpath(path, after.location)) if version >= 4 else st.statistics_path == path
    data = open(path, "rb").read()
    footer = read_puffin_footer(data)
    assert st.file_size_in_bytes == len(data) and st.raw["file-footer-size-in-bytes"] == footer.footer_size
    ndvs = {}
    for b, meta in zip(footer.blobs, st.raw["blob-metadata"]):
        assert b.type == meta["type"] == "apache-datasketches-theta-v1"
        assert (b.snapshot_id, b.sequence_number) == (meta["snapshot-id"], meta["sequence-number"]) == \
            (snap.snapshot_id, snap.sequence_number)
        assert b.compression_codec == "zstd" and list(b.fields) == meta["fields"]
        sketch = zstandard.ZstdDecompressor().decompress(read_blob(data, b.offset, b.length))
        assert b.properties == meta["properties"] == {"ndv": str(int(ndv.estimate(sketch)))}
        ndvs[b.fields[0]] = int(b.properties["ndv"])
    assert ndvs == {1: 8, 2: 7, 3: 7 if version == 2 else 6}  # ids, names (one null), timestamps of the live rows
    assert [c.ndv for c in result.columns] == [ndvs[1], ndvs[2], ndvs[3]]

    # computing again replaces the snapshot's statistics file (one per snapshot)
    again = plan_compute_stats(after, columns=["name"])
    assert again.replaces == st.statistics_path
    sketches, rows = _sketch_locally(after, again)
    newer = write_and_commit(after, again, sketches, rows=rows).committed.table
    (st2,) = newer.metadata.statistics
    assert st2.statistics_path != st.statistics_path and [b["fields"] for b in st2.raw["blob-metadata"]] == [[2]]
    assert os.path.exists(path)  # the replaced file stays, as Java leaves it

    from icectl.validate.findings import ValidateOptions
    from icectl.validate.run import validate_table

    report = validate_table(newer.catalog, newer.identifier, ValidateOptions(deep=True))
    assert not [f for f in report.findings if str(f.severity).lower().endswith("error")], report.findings


def _state(root) -> dict[str, int]:
    return {os.path.join(d, f): os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs}


def _cli(root, *args):
    env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
    code = run(["--warehouse", f"{root}/warehouse", *args], env)  # the file-system catalog of the tables
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def _nested_table(root):
    from helpers import create_table

    cat = tables.make_catalog(str(root), "hadoop")
    return create_table(cat, ("db", "n"), schema_text="id:long!, s:struct<a:int, b:string>, l:list<int>, "
                        "m:map<string, int>", format_version=2)


BAD = [
    (["db.t", "--columns", "id,nope"], ExitCode.USAGE, "there is no column 'nope'"),
    (["db.t", "--columns", "ID"], ExitCode.USAGE, "there is no column 'ID'"),
    (["db.t", "--snapshot", "12345"], ExitCode.NOT_FOUND, "snapshot 12345 does not exist"),
    (["db.empty"], ExitCode.NOT_FOUND, "has no current snapshot"),
]


@pytest.mark.parametrize("args,code,message", BAD, ids=["unknown column", "wrong case", "unknown snapshot",
                                                        "no snapshot"])
def test_bad_input_is_refused_and_nothing_is_written(tmp_path, args, code, message):
    from helpers import create_table

    base = tables.build(str(tmp_path), 2, catalog="hadoop")
    create_table(base.catalog, ("db", "empty"), schema_text="id:long", format_version=2)
    before = _state(tmp_path)
    for command in (["compute-stats"], ["compute-partition-stats"]):
        if command == ["compute-partition-stats"] and "--columns" in args:
            continue
        got, out, err = _cli(tmp_path, *command, *args, "--yes")
        if command == ["compute-partition-stats"] and args == ["db.empty"]:
            assert got == ExitCode.UNSUPPORTED and "not partitioned" in err  # checked first
        else:
            assert got == code, err
            assert message in err
        assert len(err.strip().splitlines()) <= 2 and "Traceback" not in err  # the error and maybe a hint
        assert _state(tmp_path) == before


def test_nested_and_container_columns_are_refused(tmp_path):
    from icectl.ops.stats.compute_stats import select_columns

    t = _nested_table(tmp_path)
    schema = t.metadata.schema
    assert [c.name for c in select_columns(schema, ["s.a", "s.b"])] == ["s.a", "s.b"]  # a struct's fields: as Java
    assert [c.name for c in select_columns(schema, None)] == ["id"]  # top-level primitive columns only
    before = _state(tmp_path)
    for col, code, what in (("s", ExitCode.USAGE, "it is a struct column"), ("l", ExitCode.USAGE, "a list column"),
                            ("l.element", ExitCode.USAGE, "inside a list"), ("m.value", ExitCode.USAGE, "inside a map")):
        got, out, err = _cli(tmp_path, "compute-stats", "db.n", "--columns", col, "--yes")
        assert got == code and what in err, err
    assert _state(tmp_path) == before


def test_compute_stats_dry_run_shows_the_job_and_writes_nothing(tmp_path):
    import json

    tables.build(str(tmp_path), 2, catalog="hadoop")
    before = _state(tmp_path)
    code, out, err = _cli(tmp_path, "-o", "json", "compute-stats", "db.t", "--columns", "name", "--dry-run")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["dry_run"] and not doc["applied"] and doc["columns"][0]["ndv"] is None
    assert doc["data_files"] == 4 and doc["delete_files"] == 2
    assert "--plan" in doc["spark_command"] and doc["spark_command"][0].endswith("spark-submit")
    assert _state(tmp_path) == before
    code, out, err = _cli(tmp_path, "compute-stats", "db.t", "--columns", "name")
    assert code == ExitCode.REFUSED and "name" in out and _state(tmp_path) == before


# -- partition statistics ------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_partition_statistics_file(tmp_path, version):
    import pyarrow.parquet as pq

    from icectl.ops.stats.partition_stats import apply_partition_stats, plan_partition_stats

    base = tables.build(str(tmp_path), version)
    t = base.table
    plan = plan_partition_stats(t)
    result = apply_partition_stats(t, plan)
    after = result.committed.table
    (ps,) = after.metadata.partition_statistics
    path = after.resolve(ps.statistics_path)
    assert os.path.getsize(path) == ps.file_size_in_bytes and os.path.basename(path).startswith("partition-stats-")
    f = pq.read_table(path)
    ids = {fl.name: int(fl.metadata[b"PARQUET:field_id"]) for fl in f.schema}
    want = {"partition": 1, "spec_id": 2, "data_record_count": 3, "data_file_count": 4,
            "total_data_file_size_in_bytes": 5, "position_delete_record_count": 6, "position_delete_file_count": 7,
            "equality_delete_record_count": 8, "equality_delete_file_count": 9, "total_record_count": 10,
            "last_updated_at": 11, "last_updated_snapshot_id": 12}
    if version >= 3:
        want["dv_count"] = 13
    assert ids == want
    assert f.schema.field("partition").type.field(0).metadata[b"PARQUET:field_id"] == b"1000"
    assert not f.schema.field("position_delete_record_count").nullable is (version >= 3)
    rows = {r["partition"]["ts_day"]: r for r in f.to_pylist()}
    d1, d2, d3 = (dt.date(2026, 1, d) for d in (1, 2, 3))
    assert sorted(rows) == [d1, d2, d3]
    assert [rows[d]["data_record_count"] for d in (d1, d2, d3)] == [3, 5, 2]
    assert [rows[d]["data_file_count"] for d in (d1, d2, d3)] == [1, 2, 1]
    assert rows[d2]["total_data_file_size_in_bytes"] == sum(x.file_size_in_bytes for x in base.data_files[1:3])
    snaps = [s.snapshot_id for s in reversed(t.metadata.ancestors_of(t.metadata.current_snapshot_id))]
    if version == 2:
        assert (rows[d1]["position_delete_record_count"], rows[d1]["position_delete_file_count"]) == (1, 1)
        assert (rows[d2]["equality_delete_record_count"], rows[d2]["equality_delete_file_count"]) == (1, 1)
    if version >= 3:
        assert (rows[d1]["position_delete_record_count"], rows[d1]["dv_count"],
                rows[d1]["position_delete_file_count"]) == (2, 1, 0)
    last = snaps[-1] if version >= 2 else snaps[0]
    assert rows[d1]["last_updated_snapshot_id"] == last and rows[d3]["last_updated_snapshot_id"] == snaps[2]
    assert all(r["total_record_count"] is None for r in rows.values())
    # a second run for the same snapshot does nothing (Java returns the existing file)
    again = plan_partition_stats(after)
    assert again.existing == ps.statistics_path and not again.changes


def test_unpartitioned_table_is_refused(tmp_path):
    from helpers import create_table

    cat = tables.make_catalog(str(tmp_path), "hadoop")
    create_table(cat, ("db", "u"), schema_text="id:long", format_version=2)
    before = _state(tmp_path)
    code, out, err = _cli(tmp_path, "compute-partition-stats", "db.u", "--yes")
    assert code == ExitCode.UNSUPPORTED and "is not partitioned" in err
    assert _state(tmp_path) == before


# -- expire and statistics files -----------------------------------------------------------------------------

def test_expire_deletes_statistics_of_expired_snapshots_only(tmp_path):
    """Statistics and partition statistics files of expired snapshots go; those of retained
    snapshots stay, and so does a file an expired and a retained snapshot both register."""
    from icectl.ops.maintain.expire import ExpireOptions, apply_expiry, plan_expiry
    from icectl.ops.stats.partition_stats import apply_partition_stats, plan_partition_stats
    from icectl.spec.metadata import StatisticsFile
    from icectl.table.updates import SetPartitionStatistics

    base = tables.build(str(tmp_path), 2)
    t = base.table
    s1, s2, s3, s4 = [s.snapshot_id for s in reversed(t.metadata.ancestors_of(t.metadata.current_snapshot_id))]
    for sid in (s1, s2, s4):
        t = apply_partition_stats(t, plan_partition_stats(t, snapshot_id=sid)).committed.table
    paths = {p.snapshot_id: p.statistics_path for p in t.metadata.partition_statistics}
    # s3 registers s2's file too (a file two snapshots share)
    shared = t.metadata.partition_statistics[[p.snapshot_id for p in t.metadata.partition_statistics].index(s2)]
    t = commit(t, [SetPartitionStatistics(StatisticsFile(s3, shared.statistics_path, shared.file_size_in_bytes,
                                                        dict(shared.raw, **{"snapshot-id": s3})))])
    from icectl.ops.stats.compute_stats import plan_compute_stats, write_and_commit

    for sid in (s1, s4):
        plan = plan_compute_stats(t, snapshot_id=sid, columns=["id"])
        sketches, rows = _sketch_locally(t, plan)
        t = write_and_commit(t, plan, sketches, rows=rows).committed.table
    stats = {s.snapshot_id: s.statistics_path for s in t.metadata.statistics}

    opts = ExpireOptions(snapshot_ids=(s1, s2))
    plan = plan_expiry(t, opts)
    kinds = {f.path: f.kind for f in plan.files}
    assert kinds[paths[s1]] == "partition-statistics" and kinds[stats[s1]] == "statistics"
    assert paths[s2] not in kinds  # s3 still registers it
    assert paths[s4] not in kinds and stats[s4] not in kinds
    apply_expiry(t, opts, approved=plan)
    after = t.refresh()
    assert not os.path.exists(paths[s1]) and not os.path.exists(stats[s1])
    assert os.path.exists(paths[s2]) and os.path.exists(paths[s4]) and os.path.exists(stats[s4])
    assert {p.snapshot_id for p in after.metadata.partition_statistics} == {s3, s4}
    assert {s.snapshot_id for s in after.metadata.statistics} == {s4}


def test_statistics_of_a_snapshot_expired_meanwhile_are_not_committed(tmp_path):
    """The snapshot went while the job ran: nothing is committed and the written file is removed."""
    from icectl.errors import ConflictingChangeError
    from icectl.ops.stats.compute_stats import plan_compute_stats, write_and_commit
    from icectl.ops.maintain.expire import ExpireOptions, apply_expiry

    t = tables.build(str(tmp_path), 2).table
    first = t.metadata.ancestors_of(t.metadata.current_snapshot_id)[-1].snapshot_id
    plan = plan_compute_stats(t, snapshot_id=first, columns=["id"])
    sketches, rows = _sketch_locally(t, plan)
    apply_expiry(t.refresh(), ExpireOptions(snapshot_ids=(first,)))
    before = t.refresh().metadata_location
    with pytest.raises(ConflictingChangeError, match="was expired"):
        write_and_commit(t, plan, sketches, rows=rows)
    assert not os.path.exists(plan.statistics_path)
    assert t.refresh().metadata_location == before


def test_the_job_reads_only_the_columns_it_sketches(tmp_path, monkeypatch):
    """Column pruning by field id: a sketch of `name` reads `name` (and `id`, the equality delete's
    column) and gets the same answer."""
    import pyarrow.parquet as pq

    from icectl.ops.stats.compute_stats import plan_compute_stats

    t = tables.build(str(tmp_path), 2).table
    read: list = []
    real = pq.ParquetFile.iter_batches

    def spy(self, *a, **kw):
        read.append(kw.get("columns"))
        return real(self, *a, **kw)

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", spy)
    plan = plan_compute_stats(t, columns=["name"])
    sketches, rows = _sketch_locally(t, plan)
    assert rows == 8 and ndv.estimate(sketches[2]) == 7
    assert read and all(c == ["id", "name"] for c in read)  # `id`: the equality delete needs it


def test_fields_of_a_struct_are_sketched(tmp_path):
    """`s.a` (as Java's Schema.findField names it): a null struct's fields are null, not counted."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from icectl.formats.manifest import DataFile
    from icectl.ops.stats.compute_stats import plan_compute_stats
    from helpers import append_files

    t = _nested_table(tmp_path)
    s_type = t.metadata.schema.field_by_name("s").field_type
    ids = {f.name: f.field_id for f in s_type.fields}

    def fid(i):
        return {b"PARQUET:field_id": str(i).encode()}

    schema = pa.schema([pa.field("id", pa.int64(), nullable=False, metadata=fid(1)),
                        pa.field("s", pa.struct([pa.field("a", pa.int32(), metadata=fid(ids["a"])),
                                                 pa.field("b", pa.string(), metadata=fid(ids["b"]))]),
                                 metadata=fid(t.metadata.schema.field_by_name("s").field_id))])
    rows = {"id": [1, 2, 3, 4], "s": [{"a": 1, "b": "x"}, {"a": 2, "b": "x"}, None, {"a": 1, "b": None}]}
    path = os.path.join(t.location, "data", "nested.parquet")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(pa.table(rows, schema=schema), path)
    t = append_files(t, [DataFile(path, "parquet", (), 4, os.path.getsize(path))])
    plan = plan_compute_stats(t, columns=["s.a", "s.b", "id"])
    assert [(c.name, c.field_id) for c in plan.columns] == [("s.a", ids["a"]), ("s.b", ids["b"]), ("id", 1)]
    sketches, n = _sketch_locally(t, plan)
    assert n == 4
    assert [ndv.estimate(sketches[c.field_id]) for c in plan.columns] == [2, 1, 4]
