"""Small manifests read in runs (issue 26 item 4): ``listing.live_frames`` cuts a snapshot's
manifests into runs (``_runs``), stacks the frames of a run's manifests of one schema and queries
them together (``_frames_any``, ``_live_of``). Each manifest must get exactly the LiveFrame (or the
entry-by-entry tuples) it gets when read alone: inheritance (sequence numbers, snapshot ids, first
row ids restarting at each manifest), partition keys numbered per manifest, v4 paths resolved,
manifests with no live entry, two partition specs, and manifests polars turns away."""
from __future__ import annotations

import io
from types import SimpleNamespace

import pytest

from helpers import append_files, commit_snapshot
from icectl.catalog import build_catalog, parse_identifier, resolve_catalog_config
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.formats.manifest import DataFile
from icectl.table import listing
from icectl.table.listing import ColumnarUnavailable, LiveFrame
from icectl.table.loaded import load_table
from icectl.table.snapshot_producer import SnapshotChange

from test_files_columnar import build_tables  # noqa: E402  (tests/cli on sys.path)

KB = 1024


def _sizes(runs: list[list]) -> list[list[int]]:
    return [[m.manifest_length for m in run] for run in runs]


def _manifests(*lengths: int | None) -> list:
    return [SimpleNamespace(manifest_length=n) for n in lengths]


def test_runs_start_single_then_double_up_to_the_caps():
    small = 10 * KB
    runs = listing._runs(_manifests(*[small] * 40))
    assert [len(r) for r in runs] == [1, 1, 1, 1, 2, 4, 8, 16, 6]
    assert sum(runs, []) == sum(runs, [])  # every manifest once
    # a large manifest, or one whose length is unknown, is alone and ends the run before it
    big = listing.SMALL_MANIFEST + 1
    runs = listing._runs(_manifests(small, small, small, small, small, small, big, small, None, 0, small))
    assert _sizes(runs) == [[small]] * 4 + [[small, small], [big], [small], [None], [0], [small]]
    # a run holds RUN_BYTES at most
    near = listing.SMALL_MANIFEST
    runs = listing._runs(_manifests(*[near] * 20))
    assert all(sum(_sizes([r])[0]) <= listing.RUN_BYTES for r in runs)
    assert max(len(r) for r in runs) == listing.RUN_BYTES // near


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    uri, warehouse = f"sqlite:///{root}/catalog.db", str(root / "warehouse")
    names = build_tables(uri, warehouse)
    catalog = build_catalog(resolve_catalog_config(None, uri=uri, warehouse=warehouse))
    # a manifest with no live entry between two with some (its one file deleted), in one run
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    assert run(["--uri", uri, "--warehouse", warehouse, "create", "--yes", "db.gone", "--schema", "id:long!"], env) == 0
    t = load_table(catalog, parse_identifier("db.gone"))
    for i in range(3):
        t = append_files(t, [DataFile(f"{t.location}/data/g-{i}.parquet", "parquet", (), 1 + i, 100 + i)])
    [entry] = [e for e in t.live_entries(t.metadata.current_snapshot) if e.data_file.file_path.endswith("g-1.parquet")]
    commit_snapshot(t, SnapshotChange("delete", removed=[(entry, entry.data_file)]))
    names.append("db.gone")
    return [load_table(catalog, parse_identifier(name)) for name in names]


def _plain(chunk) -> tuple:
    if isinstance(chunk, LiveFrame):
        # repr: a NaN partition value equals itself
        return ("frame", chunk.spec_id, repr(chunk.partitions), repr(chunk.frame.schema), repr(chunk.frame.rows()))
    return ("rows", repr(chunk))


def _listed(t, snapshot, keyed: bool, columns) -> list[tuple]:
    manifests = t.manifests(snapshot)
    return [_plain(c) for c in listing.live_frames(t, manifests, columns=columns, keyed=keyed)]


@pytest.mark.parametrize("turned_away", [False, True])
def test_a_stacked_run_gives_each_manifest_what_it_gets_alone(tables, monkeypatch, turned_away):
    if turned_away:  # about half the manifests are read entry by entry, in the middle of runs
        decoded = listing.decoded_manifest

        def some_unavailable(table, m, **kwargs):  # noqa: ANN001, ANN003, ANN202
            if sum(m.manifest_path.encode()) % 2:
                raise ColumnarUnavailable("turned off by the test")
            return decoded(table, m, **kwargs)

        monkeypatch.setattr(listing, "decoded_manifest", some_unavailable)
    stacked_sizes: list[int] = []
    live_of = listing._live_of

    with_row_ids = []  # stacked runs of two or more manifests whose files inherit first row ids

    def counting(table, manifests, *args):  # noqa: ANN001, ANN002, ANN202
        if len(manifests) > 1:
            stacked_sizes.append(len(manifests))
            if sum(m.first_row_id is not None for m in manifests) >= 2:
                with_row_ids.append(len(manifests))
        return live_of(table, manifests, *args)

    monkeypatch.setattr(listing, "_live_of", counting)
    cases = 0
    for t in tables:
        for snapshot in t.metadata.snapshots:
            for keyed, columns in ((True, listing.FRAME_COLUMNS), (False, listing.FRAME_COLUMNS),
                                   (False, ("file_path", "content_offset", "sequence_number"))):
                with monkeypatch.context() as m:  # every run as long as it can be
                    m.setattr(listing, "SINGLE_RUNS", 0)
                    m.setattr(listing, "RUN_MANIFESTS", 1000)
                    together = _listed(t, snapshot, keyed, columns)
                with monkeypatch.context() as m:  # every manifest alone
                    m.setattr(listing, "SMALL_MANIFEST", 0)
                    alone = _listed(t, snapshot, keyed, columns)
                assert together == alone, (t.name, snapshot.snapshot_id, keyed, columns)
                cases += 1
    assert cases >= 60
    assert stacked_sizes and max(stacked_sizes) >= 2  # runs were stacked, not all read one by one
    if not turned_away:
        assert with_row_ids  # the first row ids of two manifests' files were inherited in one query
        gone = tables[-1]
        monkeypatch.setattr(listing, "SINGLE_RUNS", 0)
        stacked_sizes.clear()
        heights = [c.frame.height for c in listing.live_frames(gone, gone.manifests(gone.metadata.current_snapshot))]
        assert stacked_sizes == [2] and heights == [1, 0, 1]  # runs [1], [2]: the empty one keeps its place
