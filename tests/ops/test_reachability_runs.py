"""live_content_batches (expire's and remove-orphans' reading of many manifests): the live content
of runs of manifests read with one query a run is, row for row and in order, what live_content
gives a manifest at a time; a manifest polars cannot read as columns, or a run whose columns do
not concatenate, is read on its own in its place.
"""
from __future__ import annotations

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from test_expire_files import History, catalog_on  # noqa: E402  (tests/ops on sys.path)

import icectl.table.reachability as reachability  # noqa: E402
from icectl.table.reachability import live_content, live_content_batches, metadata_reach  # noqa: E402


def _manifests(t):
    return list(metadata_reach(t, list(t.metadata.snapshots))[1].values())


def _rows(frames) -> list[tuple]:
    return [row for f in frames for row in f.iter_rows()]


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("most", [1, 2, 64])
def test_runs_give_what_each_manifest_gives(tmp_path, version, most):
    t = History(catalog_on(tmp_path), format_version=version).table
    ms = _manifests(t)
    assert len(ms) >= 4
    one_by_one = _rows(live_content(t, m) for m in ms)
    done = []
    runs = list(live_content_batches(t, ms, most=most, done=lambda: done.append(1)))
    assert _rows(runs) == one_by_one and len(done) == len(ms)
    assert len(runs) == -(-len(ms) // most)  # one frame a run
    assert any(kind == "data" for _, kind, _ in one_by_one)


def test_a_manifest_read_otherwise_keeps_its_place(tmp_path, monkeypatch):
    t = History(catalog_on(tmp_path)).table
    ms = _manifests(t)
    expected = _rows(live_content(t, m) for m in ms)
    columns = reachability._content_columns
    odd = {ms[1].manifest_path}
    monkeypatch.setattr(reachability, "_content_columns",
                        lambda view, m: None if m.manifest_path in odd else columns(view, m))
    assert _rows(live_content_batches(t, ms, most=64)) == expected


def test_a_run_whose_columns_differ_is_read_a_manifest_at_a_time(tmp_path, monkeypatch):
    import polars as pl

    t = History(catalog_on(tmp_path)).table
    ms = _manifests(t)
    expected = _rows(live_content(t, m) for m in ms)
    columns = reachability._content_columns
    first = ms[0].manifest_path

    def differing(view, m):  # one manifest's sizes as text: no run concatenates it with the others
        cols = columns(view, m)
        return cols.with_columns(pl.col("file_size_in_bytes").cast(pl.String)) if m.manifest_path == first else cols

    monkeypatch.setattr(reachability, "_content_columns", differing)
    assert _rows(live_content_batches(t, ms, most=64)) == expected
