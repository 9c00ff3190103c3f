"""bench/gen_neglected_table.py at a tiny scale (200 snapshots, 20 logged versions): the shape of
the neglected table (snapshots, refs, metadata log of real files, schema and spec change, Java's
summary keys), read back by icectl through both catalogs, validate clean, and merged manifests
that copy Avro blocks decode entry for entry."""
from __future__ import annotations

import io
import json
import pathlib

import fastavro

from bench_modules import load_bench_module

gen = load_bench_module("gen_neglected_table")

JAVA_APPEND_KEYS = {
    "operation", "spark.app.id", "added-data-files", "added-records", "added-files-size", "changed-partition-count",
    "partition-summaries-included", "manifests-created", "manifests-kept", "manifests-replaced", "total-records",
    "total-files-size", "total-data-files", "total-delete-files", "total-position-deletes", "total-equality-deletes",
    "engine-name", "engine-version", "iceberg-version",
}


def _generate(out: pathlib.Path) -> dict:
    return gen.main(["--out", str(out), "--snapshots", "200", "--metadata-log", "20", "--quiet"])


def _run(*argv: str) -> tuple[int, str, str]:
    from icectl.cli.context import Env
    from icectl.cli.main import run

    buf, err = io.StringIO(), io.StringIO()
    rc = run(list(argv), Env(stdout=buf, stderr=err))
    return rc, buf.getvalue(), err.getvalue()


def test_neglected_shape(tmp_path, monkeypatch):
    from icectl.catalog import build_catalog, resolve_catalog_config
    from icectl.catalog.hadoop import HadoopCatalog
    from icectl.io import FileIO
    from icectl.table.loaded import load_table
    from icectl.table.metadata_io import read_metadata_file

    out = tmp_path / "n"
    info = _generate(out)
    assert info["snapshots"] == 200 and info["live_data_files"] == 400
    assert info["merges"] >= 2  # at 100 commits, and the old spec's bin after the spec change

    warehouse = out / "warehouse"
    t = load_table(HadoopCatalog("hc", str(warehouse), FileIO()), ("bench", "neglected"))
    md = t.metadata
    # The SQL catalog registers the same metadata file.
    monkeypatch.setenv("ICECTL_CONFIG", str(out / "icectl.yaml"))
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    sql = load_table(build_catalog(resolve_catalog_config("bench")), ("bench", "neglected"))
    assert sql.metadata_location == t.metadata_location == info["metadata_location"]

    assert len(md.snapshots) == 200 and len(md.snapshot_log) == 200
    branches = sorted(n for n, r in md.refs.items() if r.is_branch)
    tags = [n for n, r in md.refs.items() if not r.is_branch]
    assert branches == ["audit", "backfill", "main", "staging"] and len(tags) == 20
    assert md.refs["main"].snapshot_id == md.current_snapshot_id
    assert md.refs["staging"].max_ref_age_ms and md.refs["audit"].min_snapshots_to_keep == 10
    # Schema change at 40%, spec change at 60% of the commits.
    assert [s.schema_id for s in md.schemas] == [0, 1] and md.current_schema_id == 1
    assert [len(s.fields) for s in md.partition_specs] == [1, 2] and md.default_spec_id == 1
    by_seq = sorted(md.snapshots, key=lambda s: s.sequence_number)
    assert by_seq[79].schema_id == 0 and by_seq[80].schema_id == 1
    specs_current = {m.partition_spec_id for m in t.manifests(md.current_snapshot)}
    assert specs_current == {0, 1}
    # Java's summary keys, and totals that add up.
    last = md.current_snapshot.summary
    assert JAVA_APPEND_KEYS <= set(last) and any(k.startswith("partitions.") for k in last)
    assert last["total-data-files"] == "400"
    # The metadata log: 20 real files, the newest versions before the current one, each readable.
    assert len(md.metadata_log) == 20
    assert md.properties["write.metadata.previous-versions-max"] == "20"
    version = info["metadata_version"]
    assert [e.metadata_file.rsplit("/", 1)[1] for e in md.metadata_log] == [
        f"v{k}.metadata.json" for k in range(version - 20, version)]
    for e in md.metadata_log:
        old = read_metadata_file(FileIO(), e.metadata_file)
        assert old.table_uuid == md.table_uuid
        assert {r.snapshot_id for r in old.refs.values()} <= {s.snapshot_id for s in old.snapshots}
    assert (warehouse / "bench/neglected/metadata/version-hint.text").read_text() == str(version)

    # Every manifest of the current snapshot decodes (fastavro: merged manifests copy compressed
    # blocks of the one they replace), with one entry per live file.
    paths = []
    for m in t.manifests(md.current_snapshot):
        with open(m.manifest_path, "rb") as fh:
            recs = list(fastavro.reader(fh))
        assert len(recs) == m.added_files_count + m.existing_files_count
        assert all((r["status"] == 1) == (r["snapshot_id"] == m.added_snapshot_id) for r in recs if r["snapshot_id"])
        paths += [r["data_file"]["file_path"] for r in recs]
    assert len(paths) == len(set(paths)) == 400

    rc, text, err = _run("--warehouse", str(warehouse), "-o", "json", "validate", "bench.neglected")
    assert rc == 0, err
    report = json.loads(text)
    assert report["ok"] and report["errors"] == 0 and report["warnings"] == 0
    rc, text, err = _run("-c", "bench", "-o", "json", "files", "bench.neglected")
    assert rc == 0, err
    assert len(json.loads(text)) == 400
