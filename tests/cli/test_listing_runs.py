"""Small manifests read in runs (issue 26 item 4): ``listing.live_frames`` cuts a snapshot's
manifests into runs (``_runs``), stacks the frames of a run's manifests of one schema and queries
them together (``_frames_any``, ``_live_of``). Each manifest must get exactly the LiveFrame (or the
entry-by-entry tuples) it gets when read alone: inheritance (sequence numbers, snapshot ids, first
row ids restarting at each manifest), partition keys numbered per manifest, v4 paths resolved,
manifests with no live entry, two partition specs, and manifests polars turns away. A manifest
that cannot be read stops the listing where reading each in turn stops it, with the same error."""
from __future__ import annotations

import io
import os
from types import SimpleNamespace

import pytest

from helpers import append_files, commit_snapshot
from icectl.catalog import build_catalog, parse_identifier, resolve_catalog_config
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.formats.manifest import DataFile, FileContent
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
    away: set[str] = set()  # the manifests read entry by entry: every other one of a listing
    turned: list[str] = []
    if turned_away:
        decoded = listing.decoded_manifest

        def some_unavailable(table, m, **kwargs):  # noqa: ANN001, ANN003, ANN202
            if m.manifest_path in away:
                turned.append(m.manifest_path)
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
            if turned_away:
                away.clear()
                away.update(m.manifest_path for m in t.manifests(snapshot)[1::2])
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
    assert bool(turned) == turned_away
    if not turned_away:
        assert stacked_sizes and max(stacked_sizes) >= 2  # runs were stacked, not all read one by one
        assert with_row_ids  # the first row ids of two manifests' files were inherited in one query
        gone = tables[-1]
        monkeypatch.setattr(listing, "SINGLE_RUNS", 0)
        stacked_sizes.clear()
        heights = [c.frame.height for c in listing.live_frames(gone, gone.manifests(gone.metadata.current_snapshot))]
        assert stacked_sizes == [2] and heights == [1, 0, 1]  # runs [1], [2]: the empty one keeps its place


# -- errors: raised where reading each manifest in turn raises them -------------------------------------


def _cli(uri: str, warehouse: str, *args: str) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run(["--uri", uri, "--warehouse", warehouse, *args], env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def _small_table(root, appends: int, version: str = "3"):
    """``db.many``: ``appends`` manifests of two files each (all small: one run when stacked)."""
    uri, warehouse = f"sqlite:///{root}/catalog.db", str(root / "warehouse")
    assert _cli(uri, warehouse, "create", "--yes", "db.many", "--schema", "id:long!", "--format-version",
                version)[0] == 0
    catalog = build_catalog(resolve_catalog_config(None, uri=uri, warehouse=warehouse))
    t = load_table(catalog, parse_identifier("db.many"))
    for i in range(appends):
        t = append_files(t, [DataFile(f"{t.location}/data/f-{i}-{j}.parquet", "parquet", (), 10 + j, 100 + i)
                             for j in range(2)])
    return uri, warehouse, t


def test_rows_before_an_unreadable_manifest_are_written(tmp_path, monkeypatch):
    """A manifest missing late in a run: ``-o jsonl`` writes the rows of every manifest before it, and
    the same error, as when each manifest is read alone (the run's earlier frames are not lost)."""
    uri, warehouse, t = _small_table(tmp_path, 10)
    manifests = t.manifests(t.metadata.current_snapshot)
    assert [len(r) for r in listing._runs(manifests)] == [1, 1, 1, 1, 2, 4]
    os.remove(manifests[-1].manifest_path)  # the last of the run of four
    stacked = _cli(uri, warehouse, "-o", "jsonl", "files", "db.many")
    with monkeypatch.context() as m:
        m.setattr(listing, "SMALL_MANIFEST", 0)
        alone = _cli(uri, warehouse, "-o", "jsonl", "files", "db.many")
    assert stacked == alone
    assert stacked[0] != 0 and len(stacked[1].splitlines()) == 18 and "not found" in stacked[2].lower()


def test_the_first_manifest_in_error_names_the_error(tmp_path, monkeypatch):
    """In one run: a v4 manifest whose path escapes the table location, then a missing one. Read in
    turn, the first error is the escape; stacked, it still is."""
    uri, warehouse, t = _small_table(tmp_path, 1, version="4")
    t = append_files(t, [DataFile("../evil.parquet", "parquet", (), 2, 501)])
    t = append_files(t, [DataFile(f"{t.location}/data/ok.parquet", "parquet", (), 2, 502)])
    manifests = t.manifests(t.metadata.current_snapshot)
    [bad] = [i for i, m in enumerate(manifests)
             if "evil" in str(listing.decoded_manifest(t, m)[0].get_column("data_file").to_list())]
    os.remove(manifests[bad + 1].manifest_path)
    with monkeypatch.context() as m:
        m.setattr(listing, "SMALL_MANIFEST", 0)
        alone = _cli(uri, warehouse, "files", "db.many")
    with monkeypatch.context() as m:
        m.setattr(listing, "SINGLE_RUNS", 0)
        stacked = _cli(uri, warehouse, "files", "db.many")
    assert "escapes" in alone[2] and stacked == alone


def test_an_escaping_v4_path_is_named_from_the_columns(tmp_path, monkeypatch):
    """A v4 path that escapes the table location fails the listing with the columnar reader's error
    (file paths checked before referenced data files), not by a second read entry by entry."""
    uri, warehouse, t = _small_table(tmp_path, 1, version="4")
    append_files(t, [DataFile(f"{t.location}/data/pos-0.parquet", "parquet", (), 2, 500,
                              content=FileContent.POSITION_DELETES, referenced_data_file="../evil-ref.parquet"),
                     DataFile("../evil-path.parquet", "parquet", (), 2, 501, content=FileContent.POSITION_DELETES)])
    entry_reads: list = []
    rows = listing._entry_rows
    monkeypatch.setattr(listing, "_entry_rows", lambda table, m: entry_reads.append(m) or rows(table, m))
    code, out, err = _cli(uri, warehouse, "files", "db.many")
    assert code != 0 and "evil-path" in err and not entry_reads
