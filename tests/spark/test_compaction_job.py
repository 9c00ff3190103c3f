"""Whole compactions without a JVM (plan, job, commit) through a stand-in for spark-submit that
runs the Spark job's tasks (icectl.spark.rewrite.rewrite_task) in one Python process, on real
Parquet inputs; the tasks themselves are tested in test_rewrite_task.py.
"""
from __future__ import annotations

import json
import os
import pathlib
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytestmark = pytest.mark.spark  # the Spark job's code (no JVM needed)

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # tests/spark for parquet_inputs
from parquet_inputs import fld, position_delete_file, simple_file, write_parquet  # noqa: E402


FAKE_SUBMIT = """\
#!{python}
# Stands in for spark-submit: runs job.py's tasks in this process (no JVM).
import json, os, sys
args = sys.argv[1:]
plan_path, result_path = args[args.index("--plan") + 1], args[args.index("--result") + 1]
with open(os.path.join(os.path.dirname(plan_path), "argv.json"), "w") as f:
    json.dump(args, f)
from icectl.spark import protocol
from icectl.spark.rewrite import rewrite_task
plan = protocol.load_plan(open(plan_path).read())
light = plan.settings()
files, error = [], None
for t in plan.all_tasks():
    try:
        files += rewrite_task(t, light)
    except Exception as e:
        error = f"{{type(e).__name__}}: {{e}}"
with open(result_path, "w") as f:
    f.write(protocol.dumps(protocol.RewriteResult(files=files, error=error)))
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
    from icectl.ops.maintain.compact import CompactOptions, plan_compaction
    from icectl.ops.maintain.compact import run_compaction
    from icectl.ops.spark_job import JobSettings
    from icectl.formats.manifest import DataFile, FileContent
    from helpers import create_table
    from helpers import append_files
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
    from icectl.ops.maintain.compact import CompactOptions, plan_compaction
    from icectl.ops.maintain.compact import run_compaction
    from icectl.ops.spark_job import JobSettings
    from helpers import create_table
    from icectl.spec.partitioning import PartitionSpec
    from helpers import append_files
    from icectl.io import FileIO

    cat = HadoopCatalog("hc", str(tmp_path / "wh"), FileIO())
    t = create_table(cat, ("db", "t"), schema_text="id:long!, name:string", partition_by="name")
    loc = t.location
    a = _data_file(t, f"{loc}/data/name=x/a.parquet", [1, 2], partition=("x",), names=["x", "x"])
    b = _data_file(t, f"{loc}/data/name=y/b.parquet", [3], partition=("y",), names=["y"])
    t = append_files(t, [a, b])
    from icectl.table.builder import MetadataBuilder
    from icectl.table.transaction import commit

    t = commit(t, MetadataBuilder(t.metadata).set_default_spec(PartitionSpec(1, ())).changes)
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
    from icectl.ops.maintain.compact import CompactOptions, plan_compaction
    from icectl.ops.maintain.compact import run_compaction
    from icectl.ops.spark_job import JobSettings
    from helpers import create_table
    from helpers import append_files
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
    from helpers import create_table
    from helpers import append_files
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
    from icectl.ops.maintain.compact import CompactOptions, plan_compaction
    from icectl.ops.maintain.compact import run_compaction
    from icectl.ops.spark_job import JobSettings
    from helpers import append_files
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
    from icectl.ops.maintain.compact import CompactOptions, plan_compaction
    from icectl.ops.maintain.compact import run_compaction
    from icectl.ops.spark_job import JobSettings
    from helpers import create_table
    from helpers import append_files
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
