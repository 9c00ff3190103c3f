"""bench/gen_large_table.py builds a valid table: small sizes here (20 snapshots x 10 files), read
back with icectl (and PyIceberg when installed), with manifests merged as Iceberg Java merges them.
"""
from __future__ import annotations

import importlib.util
import io
import json
import pathlib
import sys

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]


def _load_generator():
    spec = importlib.util.spec_from_file_location("bench_gen_large_table", REPO_ROOT / "bench" / "gen_large_table.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


gen = _load_generator()


def _generate(out: pathlib.Path, *extra: str) -> dict:
    return gen.main(["--out", str(out), "--snapshots", "20", "--files-per-snapshot", "10", "--quiet", *extra])


def _table(out: pathlib.Path, monkeypatch):
    from icectl.catalog import build_catalog, resolve_catalog_config
    from icectl.table.loaded import load_table

    monkeypatch.setenv("ICECTL_CONFIG", str(out / "icectl.yaml"))
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    return load_table(build_catalog(resolve_catalog_config("bench")), ("bench", "large"))


def test_java_merge_packing_semantics():
    """packEnd with lookback 1: greedy from the oldest, so the newest bin is the under-filled one;
    the bin with the new manifest merges only at min-count; other bins of 2+ always merge."""
    import argparse

    g = gen.Generator.__new__(gen.Generator)
    g.args = argparse.Namespace(target_size_bytes=100, min_count_to_merge=3)
    written = []

    def fake_write(files, snapshot_id, seq, commit_uuid, n):
        m = gen.Manifest(f"merged{n}", 1, files, snapshot_id, seq, seq, 0, len(files), 0, 0, 0, 0)
        written.append(m)
        return m

    g.write_manifest = fake_write
    g.merges = g.merged_entries = 0
    g._manifest_counter = 0
    g._commit_uuid = "u"

    def mf(name, length):
        return gen.Manifest(name, length, [name], 1, 1, 1, 1, 0, 0, 0, 0, 0)

    new, a, b, c = mf("new", 10), mf("a", 10), mf("b", 60), mf("c", 50)
    # Oldest first: c(50) + b(60) > 100 -> [c]; b + a + new = 80 -> [new, a, b], 3 >= min count: merged.
    out = g.merge([new, a, b, c], 2, 2)
    assert [m.path for m in out] == ["merged1", "c"]
    assert written[0].files == ["new", "a", "b"]
    # Below min count the new bin is kept as is.
    g.args.min_count_to_merge = 4
    written.clear()
    assert [m.path for m in g.merge([new, a, b, c], 2, 2)] == ["new", "a", "b", "c"]
    # An older bin of two is merged whatever its count: d(40) + c(50) fit, then b starts a new bin.
    d = mf("d", 40)
    g._manifest_counter = 0
    out = g.merge([new, a, b, c, d], 2, 2)
    assert [m.path for m in out] == ["new", "a", "b", "merged1"]
    assert written[0].files == ["c", "d"]


@pytest.mark.parametrize("version", [1, 2, 3])
def test_small_table_reads_back(tmp_path, monkeypatch, version):
    out = tmp_path / "bench"
    # A small target size and min count so that a 20-snapshot table goes through several merges.
    info = _generate(out, "--format-version", str(version), "--min-count-to-merge", "4",
                     "--target-size-bytes", "20000")
    assert info["snapshots"] == 20 and info["live_data_files"] == 200
    assert info["merges"] > 0
    assert json.loads((out / "gen_info.json").read_text())["live_data_files"] == 200

    t = _table(out, monkeypatch)
    md = t.metadata
    assert md.format_version == version
    assert len(md.snapshots) == 20 and len(md.snapshot_log) == 20
    snap = md.current_snapshot
    assert snap.summary["total-data-files"] == "200"
    assert snap.summary["added-data-files"] == "10"
    assert md.ancestors_of(snap.snapshot_id)[-1].parent_snapshot_id is None
    manifests = t.manifests(snap)
    assert len(manifests) == info["manifests_in_current_snapshot"]
    assert sum(m.added_files_count + m.existing_files_count for m in manifests) == 200
    entries = []
    for m in manifests:
        for e in t.read_entries(m, live_only=True):
            # ADDED by the snapshot that wrote the manifest; merged-in files are EXISTING.
            assert (e.status.name == "ADDED") == (e.snapshot_id == m.added_snapshot_id), (m, e)
            entries.append(e)
    assert len(entries) == 200
    assert len({e.data_file.file_path for e in entries}) == 200
    by_snapshot = {s.snapshot_id: s for s in md.snapshots}
    for e in entries:
        # Every file keeps the snapshot that added it and that snapshot's sequence number.
        added_by = by_snapshot[e.snapshot_id]
        if version >= 2:
            assert e.sequence_number == e.file_sequence_number == added_by.sequence_number
        df = e.data_file
        assert df.partition[0] is not None
        assert set(df.value_counts) == set(range(1, 9))
        assert set(df.lower_bounds) == set(range(1, 9)) == set(df.upper_bounds)
        assert e.status.name in ("ADDED", "EXISTING")
    # Bounds decode to the types of the schema and are ordered.
    from icectl.spec.conversions import from_bytes

    df = entries[0].data_file
    for fid, col in ((1, "long"), (2, "timestamptz"), (5, "double"), (4, "string")):
        assert from_bytes(col, df.lower_bounds[fid]) <= from_bytes(col, df.upper_bounds[fid])
    if version >= 3:
        ranges = sorted((e.data_file.first_row_id, e.data_file.record_count) for e in entries)
        assert all(a + n <= b for (a, n), (b, _) in zip(ranges, ranges[1:]))
        assert md.next_row_id >= ranges[-1][0] + ranges[-1][1]


def test_cli_reads_generated_table(tmp_path, monkeypatch):
    from icectl.cli.context import Env
    from icectl.cli.main import run

    out = tmp_path / "bench"
    _generate(out)
    monkeypatch.setenv("ICECTL_CONFIG", str(out / "icectl.yaml"))
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    buf, err = io.StringIO(), io.StringIO()
    assert run(["-c", "bench", "-o", "json", "files", "bench.large"], Env(stdout=buf, stderr=err)) == 0, err.getvalue()
    rows = json.loads(buf.getvalue())
    assert len(rows) == 200
    assert {r["content"] for r in rows} == {"data"}
    buf = io.StringIO()
    assert run(["-c", "bench", "-o", "json", "snapshots", "bench.large"], Env(stdout=buf, stderr=err)) == 0
    assert len(json.loads(buf.getvalue())) == 20
    assert run(["-c", "bench", "describe", "bench.large"], Env(stdout=io.StringIO(), stderr=err)) == 0


def test_refuses_to_overwrite_without_force(tmp_path):
    out = tmp_path / "bench"
    _generate(out)
    with pytest.raises(SystemExit):
        _generate(out)
    info = _generate(out, "--force")
    assert info["live_data_files"] == 200


def test_pyiceberg_reads_generated_table(tmp_path):
    pytest.importorskip("pyiceberg")
    pytest.importorskip("sqlalchemy")
    from pyiceberg.catalog.sql import SqlCatalog

    out = tmp_path / "bench"
    _generate(out, "--min-count-to-merge", "4", "--target-size-bytes", "20000")
    cat = SqlCatalog("bench", uri=f"sqlite:///{out / 'catalog.db'}", warehouse=f"file://{out / 'warehouse'}",
                     init_catalog_tables="false")
    t = cat.load_table("bench.large")
    assert len(t.metadata.snapshots) == 20
    files = t.inspect.files()
    assert files.num_rows == 200
    assert len(list(t.scan().plan_files())) == 200
    row = files.slice(0, 1).to_pylist()[0]
    assert row["readable_metrics"]["id"]["lower_bound"] <= row["readable_metrics"]["id"]["upper_bound"]
