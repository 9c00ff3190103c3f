"""``rewrite-table-path`` on real tables (v1 to v4, Parquet position deletes, deletion vectors,
equality deletes; no Java): the relocated copy reads the same files and validates clean with
``--deep``, the source tree is byte for byte untouched, the copy plan is Java's ``file-list``
CSV, an incremental run (``--start-version``) adds only the newer versions, a bare metadata file
works without a catalog, and bad input changes nothing."""
from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import pathlib
import sys

import pytest

from icectl.catalog.path import PathCatalog
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.errors import ExitCode, UsageError
from icectl.io import FileIO
from icectl.ops.recover.rewrite_table_path import apply_relocation, new_path, plan_relocation, relativize
from icectl.table.loaded import load_table
from helpers import append_files
from icectl.validate.findings import ValidateOptions
from icectl.validate.run import validate_table

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from validate_corpus import tables  # noqa: E402

pytestmark = pytest.mark.usefixtures("no_user_config")


def tree_hash(root) -> str:
    h = hashlib.sha256()
    for d, _, fs in sorted(os.walk(root)):
        for f in sorted(fs):
            p = os.path.join(d, f)
            h.update(p.encode())
            h.update(open(p, "rb").read())
    return h.hexdigest()


def entries(t, src: str = "", tgt: str = "") -> list[tuple]:
    """Every entry of every snapshot (path moved from src to tgt), with what a reader needs."""
    out = []
    for snap in t.metadata.snapshots:
        for m in t.manifests(snap):
            for e in t.read_entries(m):
                f = e.data_file
                out.append((snap.snapshot_id, int(e.status), f.file_path.replace(src, tgt, 1), int(f.content),
                            e.snapshot_id, e.sequence_number, e.file_sequence_number, f.first_row_id, f.record_count,
                            f.partition, (f.referenced_data_file or "").replace(src, tgt, 1), f.content_offset,
                            f.content_size_in_bytes))
    return sorted(out, key=repr)


def open_path(location: str):
    pc = PathCatalog(location, FileIO())
    return load_table(pc, pc.identifier())


def test_new_path_follows_java():
    assert new_path("/a/b/c.parquet", "/a", "/x/y") == "/x/y/b/c.parquet"
    assert new_path("/a/b/c.parquet", "/a/", "s3://bkt/w") == "s3://bkt/w/b/c.parquet"
    assert new_path("/a", "/a/", "/z") == "/z" and relativize("/a/", "/a") == ""
    with pytest.raises(UsageError):
        relativize("/ab/c", "/a")  # a prefix of the string is not a parent folder


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_relocated_copy_reads_the_same_and_source_is_untouched(tmp_path, version):
    base = tables.build(str(tmp_path / "src"), version)
    t = base.table
    src, tgt = str(tmp_path / "src" / "warehouse"), str(tmp_path / "moved" / "wh")
    before = tree_hash(tmp_path / "src")
    plan = plan_relocation(t, source_prefix=src, target_prefix=tgt)
    assert not os.path.exists(tgt)  # planning writes nothing
    result = apply_relocation(t, plan, copy=True)
    assert tree_hash(tmp_path / "src") == before
    moved = open_path(plan.target_metadata_location)
    assert moved.metadata.location == t.metadata.location.replace(src, tgt)
    assert plan.target_metadata_location == t.metadata_location.replace(src, tgt)
    assert entries(moved) == entries(t, src, tgt)
    assert [s.snapshot_id for s in moved.metadata.snapshots] == [s.snapshot_id for s in t.metadata.snapshots]
    assert all(e.metadata_file.startswith(tgt) for e in moved.metadata.metadata_log)
    report = validate_table(moved.catalog, moved.identifier, ValidateOptions(deep=True, all_snapshots=True))
    assert [(f.code, f.message) for f in report.findings] == []
    with open(result.copy_plan) as f:
        rows = list(csv.reader(f))
    content = [x for x in base.data_files + base.delete_files if not (x.content == 1)]
    assert sorted(rows) == sorted([x.file_path, x.file_path.replace(src, tgt)] for x in content)
    assert result.copied_files == len(rows)
    if version == 2:  # the Parquet position delete file holds the moved data file's path
        import pyarrow.parquet as pq

        pos = base.delete_files[0].file_path.replace(src, tgt)
        assert pq.read_table(pos).column("file_path").to_pylist() == [base.data_files[0].file_path.replace(src, tgt)]
    if version == 3:  # the deletion vector's blob names the moved data file
        from icectl.formats import puffin

        dv = base.delete_files[0].file_path.replace(src, tgt)
        [blob] = puffin.read_puffin_footer(open(dv, "rb").read()).blobs
        assert blob.properties["referenced-data-file"] == base.data_files[0].file_path.replace(src, tgt)
    if version == 4:  # relative paths stay as they are: manifests without absolute paths are copied as they are
        assert plan.note and "relative" in plan.note
        assert plan.copied_as_is


def test_incremental_relocation_adds_only_newer_versions(tmp_path):
    base = tables.build(str(tmp_path / "src"), 2)
    t = base.table
    src, tgt = str(tmp_path / "src" / "warehouse"), str(tmp_path / "moved")
    first = apply_relocation(t, plan_relocation(t, source_prefix=src, target_prefix=tgt), copy=True)
    f5 = tables.write_data_file(t, [11], ["k"], tables.day_of("2026-01-05"))
    t = append_files(t, [f5])
    start = first.plan.target_metadata_location.rsplit("/", 1)[-1]
    plan = plan_relocation(t, source_prefix=src, target_prefix=tgt, start_version=start)
    assert len(plan.metadata_files) == 1 and len(plan.manifest_lists) == 1 and len(plan.manifests) == 1
    assert plan.copy_rows == [(f5.file_path, f5.file_path.replace(src, tgt))]
    apply_relocation(t, plan, copy=True)
    moved = open_path(plan.target_metadata_location)
    assert entries(moved) == entries(t, src, tgt)
    report = validate_table(moved.catalog, moved.identifier, ValidateOptions(deep=True))
    assert report.findings == []


def cli(tmp_path, *args: str) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
    code = run(list(args), env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def test_cli_from_a_bare_metadata_file_and_bad_input(tmp_path):
    base = tables.build(str(tmp_path / "src"), 3, catalog="hadoop")
    t = base.table
    src = str(tmp_path / "src" / "warehouse")
    tgt = str(tmp_path / "moved")
    meta = t.metadata_location  # the catalog is gone: only the file is left
    before = tree_hash(tmp_path / "src")
    bad = [
        (["--from", "/elsewhere", "--to", tgt], ExitCode.USAGE, "is not under --from /elsewhere"),
        (["--from", src, "--to", src + "/"], ExitCode.USAGE, "same prefix"),
        (["--from", src, "--to", tgt, "--end-version", "v99.metadata.json"], ExitCode.NOT_FOUND, "no such version"),
        (["--from", src, "--to", tgt], ExitCode.REFUSED, "without --yes"),  # no terminal to ask
    ]
    for args, code_wanted, text in bad:
        code, out, err = cli(tmp_path, "rewrite-table-path", meta, *args)
        lines = err.splitlines()
        assert code == code_wanted and lines[0].startswith("icectl: error: ") and text in lines[0], err
        assert "Traceback" not in err
        assert not os.path.exists(tgt) and tree_hash(tmp_path / "src") == before
    code, out, err = cli(tmp_path, "rewrite-table-path", meta, "--from", src, "--to", tgt, "--dry-run")
    assert code == 0 and "dry run" in out and not os.path.exists(tgt)
    code, out, err = cli(tmp_path, "-o", "json", "rewrite-table-path", meta, "--from", src, "--to", tgt, "--copy",
                         "--yes")
    doc = json.loads(out)
    assert code == 0, err
    assert doc["metadata_location"] == meta.replace(src, tgt) and os.path.exists(doc["metadata_location"])
    assert doc["applied"] and doc["copied_files"] == doc["copy_plan_rows"] == 4 and doc["position_delete_files"] == 1
    assert tree_hash(tmp_path / "src") == before
    # the same again: the copy is already there
    code, out, err = cli(tmp_path, "rewrite-table-path", meta, "--from", src, "--to", tgt, "--yes")
    assert code == ExitCode.CONFLICT and "already exists" in err
    code, out, err = cli(tmp_path, "describe", doc["metadata_location"])
    assert code == 0 and tgt in out


@pytest.mark.parametrize("version", [2, 3])
def test_relocated_manifests_are_written_by_the_one_manifest_writer(tmp_path, version):
    """The rewritten manifests come from formats.manifest.write_manifest (the manifest's own
    version, schema and spec; the entries read with inheritance applied, as Java's
    RewriteTablePathUtil writes them), not from a copy of the source records: every entry states
    its snapshot id and sequence numbers, and the writer schema is the one write_manifest uses."""
    import fastavro

    from icectl.formats.avro import open_avro
    from icectl.formats.manifest import read_manifest_header, write_manifest

    base = tables.build(str(tmp_path / "src"), version)
    t = base.table
    src, tgt = str(tmp_path / "src" / "warehouse"), str(tmp_path / "moved" / "wh")
    plan = plan_relocation(t, source_prefix=src, target_prefix=tgt)
    apply_relocation(t, plan)
    moved = open_path(plan.target_metadata_location)
    for _, target in plan.manifests:
        data = moved.io.read(target)
        with open(target, "rb") as fh:
            records = list(fastavro.reader(fh))
        assert records and all(r["snapshot_id"] is not None and r["sequence_number"] is not None
                               and r["file_sequence_number"] is not None for r in records)
        header = read_manifest_header(data, source=target)
        m = next(m for s in moved.metadata.snapshots for m in moved.manifests(s) if m.manifest_path == target)
        again = write_manifest(moved.read_entries(m), format_version=header.format_version,
                               spec=moved.metadata.spec_by_id(m.partition_spec_id), schema=moved.metadata.schema,
                               content=header.content)
        assert open_avro(data, source=target).schema == open_avro(again, source="again").schema
