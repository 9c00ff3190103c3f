"""Compaction and delete rewrite on a real Spark standalone cluster (tests/spark/standalone.py: a
master and two workers as separate processes on loopback), whose executors have no Python
package of icectl's: the job ships icectl with --py-files and its runtime packages as a packed
virtualenv with --archives (the template's ``pack_environment: true``).

- The same table, compacted on the cluster and in local[*], ends with the same rows (row
  lineage included) and the same number of files, after an equality-delete rewrite
  (``rewrite-deletes --apply-equality-deletes``) and a sort compaction.
- Without the archive, executors running a bare Python fail (no pyarrow): the archive is what
  makes the job run there; nothing is committed and nothing is left behind.
- A sort compaction of a group larger than the executors' memory (512 MB) finishes: Spark sorts
  and spills; the output is sorted and has every row.
"""
from __future__ import annotations

import glob
import io
import json
import os
import random
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icectl.catalog.hadoop import HadoopCatalog
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.formats.manifest import DataFile, FileContent
from icectl.formats.puffin import deletion_vector_file
from icectl.io import FileIO
from helpers import create_table
from icectl.table.loaded import load_table
from helpers import append_files

pytestmark = [pytest.mark.spark, pytest.mark.slow]

FID = b"PARQUET:field_id"
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False, metadata={FID: b"1"}),
                    pa.field("region", pa.string(), metadata={FID: b"2"}),
                    pa.field("qty", pa.int32(), metadata={FID: b"3"})])
LINEAGE = ("id", "region", "qty", "_row_id", "_last_updated_sequence_number")


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch, icectl_cache):
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.setenv("ICECTL_CACHE_DIR", icectl_cache)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))  # spark work folders land under tmp_path
    (tmp_path / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)


def icectl(wh, *args) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run(["--warehouse", str(wh), *map(str, args)], env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def cluster_template(tmp_path, cluster, name="cluster.yaml", *, conf=None, **keys) -> str:
    """A job template for the cluster: the packed environment, executors of 1 core and 512 MB."""
    top = {"master": cluster.master_url, "pack_environment": "true", "executor_memory": "512m",
           "executor_cores": "1", **keys}
    conf = {"spark.ui.enabled": "false", "spark.driver.bindAddress": "127.0.0.1", "spark.driver.host": "127.0.0.1",
            "spark.sql.shuffle.partitions": "4", **(conf or {})}
    text = "".join(f"{k}: {v}\n" for k, v in top.items()) + "conf:\n" + "".join(f"  {k}: '{v}'\n" for k, v in conf.items())
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def build_table(wh) -> tuple:
    """db.t, v3, partitioned by region: four files of 50 rows in each of eu, us and asia (the same
    rows on every call); a deletion vector on an eu file; equality deletes in eu and us. Returns
    the table and the rows that must survive, with their row lineage."""
    cat = HadoopCatalog("hc", str(wh), FileIO())
    t = create_table(cat, ("db", "t"), schema_text="id:long!, region:string, qty:int", partition_by="region",
                     format_version=3)
    rnd = random.Random(14)
    files = []
    for r, region in enumerate(("eu", "us", "asia")):
        for i in range(4):
            ids = list(range(r * 1000 + i * 50, r * 1000 + i * 50 + 50))
            qty = [None if rnd.random() < 0.05 else rnd.randrange(-500, 500) for _ in ids]
            path = f"{t.location}/data/region={region}/f{i}.parquet"
            os.makedirs(os.path.dirname(path), exist_ok=True)
            pq.write_table(pa.Table.from_arrays([pa.array(ids, pa.int64()), pa.array([region] * len(ids)),
                                                 pa.array(qty, pa.int32())], schema=SCHEMA), path)
            files.append(DataFile(path, "parquet", (region,), len(ids), os.path.getsize(path)))
    t = append_files(t, files[:6])
    t = append_files(t, files[6:])
    lineage = {e.data_file.file_path: (e.data_file.first_row_id, e.sequence_number)
               for e in t.live_entries(t.metadata.current_snapshot)}
    dv_target = files[1].file_path
    data, blobs = deletion_vector_file({dv_target: [0, 7, 49]})
    puffin = f"{t.location}/data/region=eu/dv.puffin"
    FileIO().write(puffin, data)
    t = append_files(t, [DataFile(puffin, "puffin", ("eu",), 3, len(data), content=FileContent.POSITION_DELETES,
                                  referenced_data_file=dv_target, content_offset=blobs[0].offset,
                                  content_size_in_bytes=blobs[0].length)])
    deleted_ids = {"eu": [3, 160], "us": [1001, 1100, 1199]}
    for region, ids in deleted_ids.items():
        eq = f"{t.location}/data/region={region}/eq.parquet"
        pq.write_table(pa.table({"id": pa.array(ids, pa.int64())},
                                schema=pa.schema([pa.field("id", pa.int64(), metadata={FID: b"1"})])), eq)
        t = append_files(t, [DataFile(eq, "parquet", (region,), len(ids), os.path.getsize(eq),
                                      content=FileContent.EQUALITY_DELETES, equality_ids=[1])])
    gone = {i for ids in deleted_ids.values() for i in ids}
    expected = []
    for f in files:
        first, seq = lineage[f.file_path]
        tbl = pq.read_table(f.file_path)
        for pos, (i, q) in enumerate(zip(tbl.column("id").to_pylist(), tbl.column("qty").to_pylist())):
            if (f.file_path == dv_target and pos in (0, 7, 49)) or i in gone:
                continue
            expected.append((i, f.partition[0], q, first + pos, seq))
    return t, sorted(expected, key=_key)


def _key(row):
    return tuple((v is None, v if v is not None else 0) for v in row)


def live_files(wh):
    t = load_table(HadoopCatalog("hc", str(wh), FileIO()), ("db", "t"))
    return t, [f for _, f in t.live_files(t.metadata.current_snapshot)]


def rows_of(files) -> list[tuple]:
    out = []
    for f in files:
        tbl = pq.read_table(f.file_path)
        out += list(zip(*(tbl.column(c).to_pylist() for c in LINEAGE)))
    return sorted(out, key=_key)


def summary(res: dict) -> dict:
    """The counts of a compaction result; not the bytes written, which depend on the order of
    rows with equal sort keys (any order is sorted), and so on how Spark partitioned the reads."""
    return {k: v for k, v in res.items() if isinstance(v, int) and not isinstance(v, bool) and k != "added_bytes"}


def test_compaction_and_delete_rewrite_on_the_cluster_equal_local(tmp_path, spark_cluster):
    local_wh, cluster_wh = tmp_path / "local", tmp_path / "cluster"
    _, expected = build_table(local_wh)
    _, expected_again = build_table(cluster_wh)
    assert expected == expected_again and len(expected) == 12 * 50 - 3 - 5
    tpl = cluster_template(tmp_path, spark_cluster)
    outputs = {}
    timings = {}
    for name, wh, extra in (("local", local_wh, []), ("cluster", cluster_wh, ["--template", tpl])):
        started = time.monotonic()
        code, out, err = icectl(wh, "-o", "json", "rewrite-deletes", "db.t", "--apply-equality-deletes", "--yes",
                                *extra)
        assert code == 0, err
        deletes = json.loads(out)
        code, out, err = icectl(wh, "-o", "json", "compact", "db.t", "--strategy", "sort", "--sort-by",
                                "qty desc nulls last", "--rewrite-all", "--target-file-size", "2KB", "--yes", *extra)
        assert code == 0, err
        compact = json.loads(out)
        timings[name] = time.monotonic() - started
        t, files = live_files(wh)
        assert [f for f in files if f.content != FileContent.DATA] == []  # every delete applied
        assert rows_of(files) == expected  # every row, with its row id and sequence number
        for f in files:  # each file sorted by qty descending, nulls last
            qty = pq.read_table(f.file_path).column("qty").to_pylist()
            assert qty == sorted(qty, key=lambda q: (q is None, -(q or 0)))
        outputs[name] = ({k: v for k, v in deletes["result"].items() if k != "committed"}, summary(compact), len(files),
                         sorted((f.partition, f.record_count) for f in files))
    assert outputs["cluster"] == outputs["local"]
    assert outputs["local"][2] > 3  # 2 KB target files: several sorted files a partition
    # the executors ran from the unpacked archive, in the workers' own folders
    envs = glob.glob(os.path.join(spark_cluster.root, "worker-*", "app-*", "*", "environment", "bin", "python"))
    assert envs, spark_cluster.tail()
    print(f"\nlocal[*]: {timings['local']:.1f} s, standalone cluster: {timings['cluster']:.1f} s")


def test_bare_workers_fail_without_the_archive(tmp_path, spark_cluster, bare_python):
    """Executors running a Python without icectl's packages, and no archive: the job fails with
    the reason (exit 9), nothing is committed and no file is left behind."""
    wh = tmp_path / "wh"
    t, _ = build_table(wh)
    before = {os.path.join(d, f) for d, _, fs in os.walk(wh) for f in fs}
    tpl = cluster_template(tmp_path, spark_cluster, "bare.yaml", pack_environment="false", python=bare_python)
    code, out, err = icectl(wh, "compact", "db.t", "--rewrite-all", "--yes", "--template", tpl)
    assert code == 9, err
    # The first of icectl's packages the data plane imports (icectl.spark.rewrite imports the spec's
    # transforms, hence mmh3, at its top; pyarrow only where it writes): reported as the task's error.
    assert "ModuleNotFoundError: No module named 'mmh3'" in err, err
    assert load_table(t.catalog, ("db", "t")).metadata_location == t.metadata_location
    assert {os.path.join(d, f) for d, _, fs in os.walk(wh) for f in fs} == before


LARGE_ROWS = 5_000_000
PAYLOAD = 100  # bytes of random binary a row: ~120 bytes a row, ~600 MB in memory, incompressible


def build_large_table(wh, files: int = 10):
    """db.big: ``LARGE_ROWS`` rows (id, k: a random sort key, payload: random bytes) in
    ``files`` uncompressed Parquet files, one group of ~600 MB for a sort compaction."""
    import numpy as np

    cat = HadoopCatalog("hc", str(wh), FileIO())
    t = create_table(cat, ("db", "big"), schema_text="id:long!, k:long, payload:binary")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False, metadata={FID: b"1"}),
                        pa.field("k", pa.int64(), metadata={FID: b"2"}),
                        pa.field("payload", pa.binary(), metadata={FID: b"3"})])
    rng = np.random.default_rng(7)
    per = LARGE_ROWS // files
    data_files, arrow_bytes = [], 0
    for i in range(files):
        ids = np.arange(i * per, (i + 1) * per, dtype=np.int64)
        keys = rng.integers(-2 ** 40, 2 ** 40, per, dtype=np.int64)
        payload = pa.FixedSizeBinaryArray.from_buffers(pa.binary(PAYLOAD), per,
                                                       [None, pa.py_buffer(rng.bytes(per * PAYLOAD))]).cast(pa.binary())
        tbl = pa.Table.from_arrays([pa.array(ids), pa.array(keys), payload], schema=schema)
        arrow_bytes += tbl.nbytes
        path = f"{t.location}/data/f{i}.parquet"
        os.makedirs(os.path.dirname(path), exist_ok=True)
        pq.write_table(tbl, path, compression="none", row_group_size=128 * 1024)
        data_files.append(DataFile(path, "parquet", (), per, os.path.getsize(path)))
    return append_files(t, data_files), arrow_bytes


def spilled_bytes(event_dir: str) -> tuple[int, int]:
    """(memory, disk) bytes spilled by every task of every application logged in ``event_dir``."""
    memory = disk = 0
    for log in glob.glob(os.path.join(event_dir, "*")):
        with open(log) as f:
            for line in f:
                event = json.loads(line)
                if event.get("Event") == "SparkListenerTaskEnd":
                    m = event.get("Task Metrics") or {}
                    memory += m.get("Memory Bytes Spilled", 0)
                    disk += m.get("Disk Bytes Spilled", 0)
    return memory, disk


def test_sort_of_a_group_larger_than_executor_memory(tmp_path, spark_cluster):
    """One sort group of ~600 MB (in memory) on executors of 512 MB each: Spark range-partitions
    the rows by the sort key into as many partitions as the plan expects files (3), sorts each
    on the executors and spills to disk; every row is written once, each file sorted, the files
    holding disjoint key ranges."""
    import numpy as np

    wh = tmp_path / "wh"
    t, arrow_bytes = build_large_table(wh)
    assert arrow_bytes > 512 * 1024 ** 2  # the group does not fit in one executor's memory
    events = tmp_path / "events"
    events.mkdir()
    tpl = cluster_template(tmp_path, spark_cluster, "large.yaml",
                           conf={"spark.eventLog.enabled": "true", "spark.eventLog.dir": f"file://{events}"})
    args = ["compact", "db.big", "--strategy", "sort", "--sort-by", "k", "--target-file-size", "256MB",
            "--template", tpl]
    code, out, err = icectl(wh, "-o", "json", *args, "--dry-run")
    assert code == 0, err
    [group] = json.loads(out)["groups"]
    assert group["files"] == 10 and group["expected_output_files"] == 3  # 580 MB of Parquet at 256 MB a file
    started = time.monotonic()
    code, out, err = icectl(wh, "-o", "json", *args, "--yes")
    elapsed = time.monotonic() - started
    assert code == 0, err
    res = json.loads(out)
    assert (res["rewritten_data_files"], res["added_data_files"]) == (10, 3)
    t = load_table(t.catalog, ("db", "big"))
    files = [f for _, f in t.live_files(t.metadata.current_snapshot)]
    assert len(files) == 3 and sum(f.record_count for f in files) == LARGE_ROWS
    ids, ranges = [], []
    for f in files:
        pf = pq.ParquetFile(f.file_path)
        k = np.concatenate([pf.read_row_group(i, columns=["k"]).column("k").to_numpy()
                            for i in range(pf.num_row_groups)])
        assert (np.diff(k) >= 0).all()  # each file sorted by k
        ranges.append((k[0], k[-1]))
        ids.append(pq.read_table(f.file_path, columns=["id"]).column("id").to_numpy())
    ranges.sort()
    assert all(a[1] <= b[0] for a, b in zip(ranges, ranges[1:]))  # and the files hold disjoint ranges of k
    assert (np.sort(np.concatenate(ids)) == np.arange(LARGE_ROWS)).all()  # every row once
    memory, disk = spilled_bytes(str(events))
    assert disk > 0 and memory > 0, (memory, disk)  # Spark sorted what did not fit by spilling to disk
    print(f"\nsort of {arrow_bytes / 1024 ** 2:.0f} MB on executors of 512 MB: {elapsed:.1f} s, "
          f"spilled {memory / 1024 ** 2:.0f} MB from memory, {disk / 1024 ** 2:.0f} MB to disk")
