"""`icectl compact` through the CLI with real spark-submit runs (pyspark's, local[*]).

Each spark-submit costs ~10 s here, so there are two: one compaction of a v3 table with deletion
vectors, equality deletes and row lineage (checks combined), one job that fails half-way. The
other failures (no spark-submit, a spark-submit that fails at once) need no JVM.
"""
from __future__ import annotations

import io
import json
import os
import pathlib
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icectl.catalog.hadoop import HadoopCatalog
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.formats.manifest import DataFile, FileContent
from helpers import create_table
from icectl.formats.puffin import deletion_vector_file
from helpers import append_files
from icectl.table.loaded import load_table
from icectl.io import FileIO

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "cli"))  # the documented output shapes

from output_shapes import SHAPES, check_shape  # noqa: E402

pytestmark = pytest.mark.spark

FID = b"PARQUET:field_id"
SCHEMA = pa.schema([
    pa.field("id", pa.int64(), nullable=False, metadata={FID: b"1"}),
    pa.field("region", pa.string(), metadata={FID: b"2"}),
    pa.field("qty", pa.int32(), metadata={FID: b"3"}),
])


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))  # spark work folders land under tmp_path
    (tmp_path / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)


def icectl(wh, *args) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run(["--warehouse", str(wh), *args], env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def write_data(path: str, ids: list[int], region: str) -> DataFile:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(pa.table([pa.array(ids, pa.int64()), pa.array([region] * len(ids)),
                             pa.array([i * 10 for i in ids], pa.int32())], schema=SCHEMA), path)
    return DataFile(path, "parquet", (region,), len(ids), os.path.getsize(path))


def files_under(root) -> set[str]:
    return {os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs}


def live(table):
    table = table.refresh()
    return [f for _, f in table.live_files(table.metadata.current_snapshot, with_stats=True)]


def rows_with_lineage(table) -> list[tuple]:
    """(id, region, qty, _row_id, _last_updated_sequence_number) of every live row, read from
    files that have no deletes left (after a full compaction)."""
    out = []
    for f in live(table):
        assert f.content == FileContent.DATA, "delete files remain"
        t = pq.read_table(f.file_path)
        out += list(zip(*(t.column(c).to_pylist() for c in ("id", "region", "qty", "_row_id",
                                                                "_last_updated_sequence_number"))))
    return sorted(out)


@pytest.fixture
def v3_table(tmp_path):
    """db.t, v3, partitioned by region: 3 + 2 small files in 'eu', 2 in 'us'; a DV on one eu
    file, an equality delete in 'us'. Returns (warehouse, table, expected rows with lineage)."""
    wh = tmp_path / "wh"
    cat = HadoopCatalog("hc", str(wh), FileIO())
    t = create_table(cat, ("db", "t"), schema_text="id:long!, region:string, qty:int", partition_by="region",
                     format_version=3)
    loc = t.location
    eu = [write_data(f"{loc}/data/region=eu/e{i}.parquet", list(range(i * 10, i * 10 + 5)), "eu") for i in range(5)]
    us = [write_data(f"{loc}/data/region=us/u{i}.parquet", list(range(100 + i * 10, 100 + i * 10 + 5)), "us")
          for i in range(2)]
    t = append_files(t, eu[:3] + us)     # seq 1, first row ids 0..24
    t = append_files(t, eu[3:])          # seq 2
    first_ids = {f.file_path: (f.first_row_id, e.sequence_number)
                 for e, f in ((e, e.data_file) for e in t.live_entries(t.metadata.current_snapshot))}
    data, blobs = deletion_vector_file({eu[1].file_path: [0, 4]})
    puffin = f"{loc}/data/region=eu/dv.puffin"
    FileIO().write(puffin, data)
    t = append_files(t, [DataFile(puffin, "puffin", ("eu",), 2, len(data), content=FileContent.POSITION_DELETES,
                                  referenced_data_file=eu[1].file_path, content_offset=blobs[0].offset,
                                  content_size_in_bytes=blobs[0].length)])
    eq = f"{loc}/data/region=us/eq.parquet"
    pq.write_table(pa.table({"id": pa.array([101, 110], pa.int64())},
                            schema=pa.schema([pa.field("id", pa.int64(), metadata={FID: b"1"})])), eq)
    t = append_files(t, [DataFile(eq, "parquet", ("us",), 2, os.path.getsize(eq),
                                  content=FileContent.EQUALITY_DELETES, equality_ids=[1])])
    expected = []
    for f in eu + us:
        first, seq = first_ids[f.file_path]
        ids = pq.read_table(f.file_path).column("id").to_pylist()
        for pos, i in enumerate(ids):
            if (f is eu[1] and pos in (0, 4)) or i in (101, 110):
                continue
            expected.append((i, f.partition[0], i * 10, first + pos, seq))
    return wh, t, sorted(expected)


def test_compact_v3_table(v3_table):
    wh, t, expected = v3_table
    before_snapshot = t.metadata.current_snapshot_id
    # the plan, as --dry-run shows it (no Spark)
    code, out, err = icectl(wh, "-o", "json", "compact", "db.t", "--dry-run", "--min-input-files", "2")
    assert code == 0, err
    plan = json.loads(out)
    check_shape(plan, SHAPES["compact (plan)"])
    assert (plan["live_data_files"], plan["input_files"]) == (7, 7)
    assert [(g["partition"], g["files"], g["records"], g["delete_files"], g["expected_output_files"])
            for g in plan["groups"]] == [("region=eu", 5, 25, 1, 1), ("region=us", 2, 10, 1, 1)]
    assert plan["spark_submit"][1:5] == ["--master", "local[*]", "--deploy-mode", "client"]

    code, out, err = icectl(wh, "-o", "json", "compact", "db.t", "--yes", "--min-input-files", "2")
    assert code == 0, err
    res = json.loads(out)
    check_shape(res, SHAPES["compact (result)"])  # the one shape only a Spark run produces
    assert res["dry_run"] is False and res["applied"] is True
    assert (res["rewritten_data_files"], res["added_data_files"], res["removed_delete_files"]) == (7, 2, 2)
    assert res["failed_groups"] == [] and len(res["committed"]) == 1
    t2 = load_table(t.catalog, ("db", "t"))
    assert t2.metadata_location == res["committed"][0]
    snap = t2.metadata.current_snapshot
    assert snap.parent_snapshot_id == before_snapshot and snap.summary["operation"] == "replace"
    assert snap.summary["total-records"] == str(len(expected)) and snap.summary["total-delete-files"] == "0"
    # the rows, with their row ids and last-updated sequence numbers unchanged
    assert rows_with_lineage(t2) == expected
    # what the manifests say about each new file agrees with the file
    files = live(t2)
    assert sorted(f.partition for f in files) == [("eu",), ("us",)]
    for f in files:
        md = pq.ParquetFile(f.file_path).metadata
        assert (f.record_count, f.file_size_in_bytes) == (md.num_rows, os.path.getsize(f.file_path))
        ids = pq.read_table(f.file_path).column("id").to_pylist()
        assert int.from_bytes(f.lower_bounds[1], "little", signed=True) == min(ids)
        assert int.from_bytes(f.upper_bounds[1], "little", signed=True) == max(ids)
        assert f.value_counts[1] == len(ids) and f.null_value_counts[2] == 0
    # the Spark job's work folder is not left behind in the table
    assert not [p for p in files_under(t2.location) if p.endswith((".json", ".zip")) and "/data/" in p]


def test_failing_job_commits_nothing_and_removes_its_files(tmp_path):
    """Two groups; an input of one is gone. The job fails, icectl exits 9 with the reason, the
    table is unchanged and no file the job wrote (for either group) is left."""
    wh = tmp_path / "wh"
    cat = HadoopCatalog("hc", str(wh), FileIO())
    t = create_table(cat, ("db", "t"), schema_text="id:long!, region:string, qty:int", partition_by="region")
    loc = t.location
    files = [write_data(f"{loc}/data/region={r}/{r}{i}.parquet", [i], r) for r in ("eu", "us") for i in range(2)]
    t = append_files(t, files)
    os.remove(files[3].file_path)
    before = files_under(wh)
    code, out, err = icectl(wh, "compact", "db.t", "--yes", "--rewrite-all")
    assert code == 9, err
    assert "spark-submit failed" in err or "Spark job failed" in err
    assert "us1.parquet" in err or "FileNotFoundError" in err or "No such file" in err, err
    assert load_table(cat, ("db", "t")).metadata_location == t.metadata_location
    assert files_under(wh) == before, sorted(files_under(wh) - before)


@pytest.mark.parametrize("spark_submit, message", [
    ("/bin/false", "spark-submit failed with exit code 1"),
    ("/no/such/spark-submit", "spark-submit not found: /no/such/spark-submit"),
])
def test_spark_submit_missing_or_failing(tmp_path, spark_submit, message):
    wh = tmp_path / "wh"
    cat = HadoopCatalog("hc", str(wh), FileIO())
    t = create_table(cat, ("db", "t"), schema_text="id:long!, region:string, qty:int", partition_by="region")
    t = append_files(t, [write_data(f"{t.location}/data/region=eu/e{i}.parquet", [i], "eu") for i in range(5)])
    tpl = tmp_path / "tpl.yaml"
    tpl.write_text(f"spark_submit: {spark_submit}\n")
    before = files_under(wh)
    code, out, err = icectl(wh, "compact", "db.t", "--yes", "--template", str(tpl))
    assert code == 9
    assert message in err
    assert load_table(cat, ("db", "t")).metadata_location == t.metadata_location
    assert files_under(wh) == before


def test_nothing_to_compact_runs_nothing(tmp_path):
    wh = tmp_path / "wh"
    cat = HadoopCatalog("hc", str(wh), FileIO())
    create_table(cat, ("db", "t"), schema_text="id:long!, region:string, qty:int", partition_by="region")
    tpl = tmp_path / "tpl.yaml"
    tpl.write_text("spark_submit: /bin/false\n")
    code, out, err = icectl(wh, "-o", "json", "compact", "db.t", "--yes", "--template", str(tpl))
    assert code == 0, err  # an empty table: nothing to do, spark-submit is never run
    assert json.loads(out)["groups"] == []
