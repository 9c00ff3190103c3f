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


def _columns(**cols):
    import polars as pl

    return pl.DataFrame(cols)


def test_live_of_columns_gives_each_live_file_its_kind():
    """The columns of live entries, as the entry reader gives them: deleted entries (status 2)
    left out, each file's kind as content_kind says (content absent or null: data; puffin
    position deletes: deletion vectors), sizes as Int64."""
    from icectl.formats.manifest import content_kind

    status = [1, 0, 2, 1, 1, 0, 2]
    content = [0, 1, 1, 2, 1, None, 0]
    fmt = ["PARQUET", "parquet", "AVRO", "ORC", "PUFFIN", "parquet", "PARQUET"]
    paths = [f"/t/f{i}" for i in range(len(status))]
    sizes = [10, 20, 30, 40, 50, 60, 70]
    cols = _columns(content=content, file_path=paths, file_format=fmt, file_size_in_bytes=sizes, status=status)
    got = reachability._live_of_columns(cols)
    want = [(p, content_kind(c or 0, f), s) for p, c, f, s, st in zip(paths, content, fmt, sizes, status) if st != 2]
    assert got.rows() == want and str(got.schema["size"]) == "Int64"
    # Data files only (content absent, or all 0), and no live entry at all.
    only_data = cols.drop("content")
    assert reachability._live_of_columns(only_data).rows() == [(p, "data", s) for p, s, st in zip(paths, sizes, status)
                                                              if st != 2]
    assert reachability._live_of_columns(cols.filter(cols["status"] == 2)).rows() == []


@pytest.mark.parametrize("change", [
    {"status": [0, 3]}, {"status": [0, None]}, {"content": [0, 3]}, {"content": [-1, 0]},
    {"file_path": ["/a", None]}, {"file_format": [None, "parquet"]}, {"file_size_in_bytes": [1, None]},
])
def test_live_of_columns_refuses_what_the_entry_reader_would_say_is_wrong(change):
    """A null where a value is required, or a status or content out of range: None (the
    manifest is then read entry by entry, with its checks and messages)."""
    base = {"content": [0, 0], "file_path": ["/a", "/b"], "file_format": ["parquet", "parquet"],
            "file_size_in_bytes": [1, 2], "status": [0, 1]}
    assert reachability._live_of_columns(_columns(**base)) is not None
    assert reachability._live_of_columns(_columns(**{**base, **change})) is None


def test_a_large_manifest_read_by_parts_gives_what_its_entries_give(tmp_path, monkeypatch):
    """A manifest of many blocks is decoded a run of blocks at a time (the other columns dropped
    from each as it is decoded: FRAME_PART_BYTES, here a block a part): its live content is what
    the entry reader gives, in order, and the same read whole."""
    from helpers import append_files, create_table
    from icectl.formats import avro
    from icectl.formats.manifest import DataFile

    t = create_table(catalog_on(tmp_path), ("db", "t"), schema_text="id:long!", format_version=2)
    t = append_files(t, [DataFile(f"{t.location}/data/f{i:05d}-{'x' * 80}.parquet", "parquet", (), 1, 100 + i)
                         for i in range(3000)])
    (m,) = t.manifests(t.metadata.current_snapshot)
    expected = _rows([reachability._entry_by_entry(t, m)])
    assert len(expected) == 3000
    whole = _rows([live_content(t, m)])
    parts = []
    part = reachability._content_part
    monkeypatch.setattr(reachability, "_content_part", lambda df: parts.append(len(df)) or part(df))
    monkeypatch.setattr(avro, "FRAME_PART_BYTES", 1)
    assert _rows([live_content(t, m)]) == whole == expected
    assert _rows(live_content_batches(t, [m, m], most=2)) == expected * 2
    assert len(parts) > 3 and sum(parts) == 3 * 3000
