"""diff and restore on real tables built with icectl's engine (SQL and file-system catalogs, no
Java): the file diff equals the set difference of the two states' live files (read by `files`'s
own columnar path), only the manifests that differ are read, every way of naming a state
resolves, and a restore brings back the old state as a commit that keeps what must only grow
(sequence numbers, field ids, the newer snapshots, the metadata log) so that later commits and a
second restore work."""
from __future__ import annotations

import io
import json
import os
import pathlib
import sys

import pytest

from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.errors import CommitConflictError, ExitCode, NotFoundError, UsageError
from icectl.ops.inspect.diff import diff, resolve_side
from icectl.ops.inspect.files import list_files
from icectl.ops.recover.restore import apply_restore, plan_restore
from icectl.table.loaded import load_table
from icectl.table.snapshot_producer import SnapshotChange
from helpers import append_files, commit_snapshot
from icectl.table.transaction import commit

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from validate_corpus import tables  # noqa: E402


def live_keys(table, ref: str | None = None, snapshot_id: int | None = None) -> dict[tuple, tuple]:
    return {(r.file_path, r.content_offset): (r.content, r.record_count, r.file_size_in_bytes, r.spec_id,
                                              json.dumps(r.partition, sort_keys=True))
            for r in list_files(table, ref=ref, snapshot_id=snapshot_id)}


def expected_diff(table, a: dict, b: dict) -> tuple[dict, dict]:
    return ({k: v for k, v in b.items() if k not in a}, {k: v for k, v in a.items() if k not in b})


def got(files) -> dict:
    return {(f.file_path, f.content_offset): (f.content, f.record_count, f.file_size_in_bytes, f.spec_id,
                                              json.dumps(f.partition, sort_keys=True)) for f in files}


def drop_partition(table, day: int):
    """A bad commit: an overwrite that removes every data file of one partition."""
    snap = table.metadata.current_snapshot
    removed = [(e, e.data_file) for e in table.live_entries(snap)
               if e.data_file.content == 0 and e.data_file.partition == (day,)]
    assert removed
    return commit_snapshot(table, SnapshotChange("overwrite", removed=removed))


def run_cli(root, *args) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
    code = run(["--uri", f"sqlite:///{root}/catalog.db", "--warehouse", f"{root}/warehouse", *args], env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


@pytest.fixture(params=[2, 3])
def base(tmp_path, request):
    return tables.build(str(tmp_path), request.param)


@pytest.fixture
def catalog_table(tmp_path):
    """db.t in the SQLite catalog the CLI opens with --uri/--warehouse under tmp_path."""
    from icectl.catalog.sql import SqlCatalog
    from icectl.io import FileIO

    base = tables.build(str(tmp_path), 2)
    # The CLI's catalog (--uri alone) is named "default": the table is registered there too, and the
    # tests use that entry only.
    cat = SqlCatalog("default", f"sqlite:///{tmp_path}/catalog.db", f"{tmp_path}/warehouse", FileIO())
    cat.register_table(tables.IDENT, base.metadata_location)
    base.catalog = cat
    return base


# -- diff ------------------------------------------------------------------------------------------------

def test_diff_equals_the_difference_of_the_live_files(base):
    t = base.table
    history = [s.snapshot_id for s in reversed(t.metadata.ancestors_of(t.metadata.current_snapshot_id))]
    t = drop_partition(t, tables.day_of("2026-01-02"))
    history.append(t.metadata.current_snapshot_id)
    for i, a in enumerate(history):
        for b in history[i + 1:] + history[:i]:
            d = diff(t, str(a), str(b))
            added, removed = expected_diff(t, live_keys(t, snapshot_id=a), live_keys(t, snapshot_id=b))
            assert got(d.added_files) == added, (a, b)
            assert got(d.removed_files) == removed, (a, b)
            assert d.totals.data_files_added == sum(1 for v in added.values() if v[0] == "data")
            assert d.totals.records_removed == sum(v[1] for v in removed.values() if v[0] == "data")
            assert sum(p.data_files_added for p in d.partitions) == d.totals.data_files_added
            assert sum(p.bytes_removed for p in d.partitions) == d.totals.bytes_removed


def test_diff_is_the_same_whichever_reader_decodes_the_manifests(base, monkeypatch):
    """diff keeps the entries of polars-read manifests as columns and makes tuples of those it
    reports only: the whole result equals the one from manifests read entry by entry (the lean
    decoder), for every pair of states, deletion vectors and all (v3)."""
    from icectl.cli.output import write_json
    from icectl.formats.avro import READER_ENV

    t = base.table
    t = drop_partition(t, tables.day_of("2026-01-02"))
    history = [s.snapshot_id for s in reversed(t.metadata.ancestors_of(t.metadata.current_snapshot_id))]

    def text(a, b) -> str:
        out = io.StringIO()
        write_json(out, diff(t, str(a), str(b)))
        return out.getvalue()

    columnar = {(a, b): text(a, b) for a in history for b in history if a != b}
    assert any('"content": "data"' in v for v in columnar.values())
    monkeypatch.setenv(READER_ENV, "lean")
    assert {(a, b): text(a, b) for a in history for b in history if a != b} == columnar


def test_diff_reads_only_the_manifests_that_differ(base):
    t = base.table
    first = t.metadata.snapshots[0].snapshot_id
    d = diff(t, str(first), "main")
    ma = {m.manifest_path for m in t.manifests(t.metadata.snapshot_by_id(first))}
    mb = {m.manifest_path for m in t.manifests(t.metadata.current_snapshot)}
    assert d.manifests.read == len(ma ^ mb) and d.manifests.shared == len(ma & mb) and d.manifests.shared >= 1
    # The shared manifest's files are not listed, though both states have them.
    shared_files = {e.data_file.file_path for m in t.manifests(t.metadata.current_snapshot) if m.manifest_path in ma
                    for e in t.read_entries(m, live_only=True)}
    assert shared_files and not shared_files & {f.file_path for f in d.added_files + d.removed_files}


def test_dropped_partition_shows_as_removed_files_of_that_partition(base):
    t = drop_partition(base.table, tables.day_of("2026-01-02"))
    parent = t.metadata.current_snapshot.parent_snapshot_id
    d = diff(t, str(parent), "main")
    assert [p.partition for p in d.partitions] == [{"ts_day": "2026-01-02"}]
    assert d.totals.data_files_removed == 2 and d.totals.records_removed == 5 and d.totals.data_files_added == 0
    s = diff(t, str(parent), "main", summary_only=True)
    assert s.partitions is None and s.added_files is None and s.totals == d.totals


def test_every_way_of_naming_a_state(catalog_table, tmp_path):
    from icectl.ops.recover import refs

    t = catalog_table.table
    first = t.metadata.snapshots[0]
    t = commit(t, refs.create_ref(t.metadata, "t1", ref_type="tag", snapshot_id=first.snapshot_id))
    log = t.metadata.metadata_log
    v2 = next(e for e in log if "/00002-" in e.metadata_file)
    cases = {
        str(first.snapshot_id): ("snapshot", first.snapshot_id),
        f"snapshot:{first.snapshot_id}": ("snapshot", first.snapshot_id),
        "t1": ("ref", first.snapshot_id), "ref:main": ("ref", t.metadata.current_snapshot_id),
        "v2": ("metadata", None), "metadata:2": ("metadata", None),
        v2.metadata_file: ("metadata", None), v2.metadata_file.rsplit("/", 1)[-1]: ("metadata", None),
        str(first.timestamp_ms): ("time", first.timestamp_ms),
    }
    for spec, (kind, want) in cases.items():
        side = resolve_side(t, spec)
        assert side.kind == kind, spec
        if kind == "metadata":
            assert side.metadata_location == v2.metadata_file
        elif kind == "time":
            assert side.snapshot_id is not None and side.snapshot_timestamp_ms <= want
        else:
            assert side.snapshot_id == want, spec
    import datetime as dt

    iso = dt.datetime.fromtimestamp(first.timestamp_ms / 1000, tz=dt.timezone.utc).isoformat()
    assert resolve_side(t, iso).snapshot_id == first.snapshot_id
    assert resolve_side(t, f"time:{iso}").snapshot_id == first.snapshot_id
    for bad, error in (("nope", NotFoundError), ("snapshot:123", NotFoundError), ("ref:nope", NotFoundError),
                       ("v99", NotFoundError), ("time:yesterday-ish", UsageError), ("2026-13-45", UsageError),
                       ("1000", NotFoundError), ("/no/such/00001-x.metadata.json", NotFoundError),
                       (str(first.timestamp_ms - 100000), NotFoundError)):
        with pytest.raises(error):
            resolve_side(t, bad)


def test_metadata_changes(catalog_table, tmp_path):

    code, _, err = run_cli(tmp_path, "alter", "db.t", "--add-column", "note string", "--rename-column", "name=label",
                           "--sort-by", "id desc", "--set-property", "k=v", "--add-partition-field",
                           "bucket(4, id)", "--yes")
    assert code == 0, err
    t = catalog_table.table
    before = t.metadata.metadata_log[-1].metadata_file
    d = diff(t, before, t.metadata_location)
    changes = {(c.field_id, c.change): (c.before, c.after) for c in d.schema.changes}
    assert changes[(2, "renamed")] == ("name", "label")
    assert (4, "added") in changes and changes[(4, "added")] == (None, "string")
    assert [p.key for p in d.properties] == ["k"] and d.properties[0].change == "added"
    assert d.sort_order and d.partition_spec and not d.refs
    # A snapshot or ref side reads the schema the snapshot was written with: no schema change here.
    assert diff(t, before, "main").schema is None and diff(t, before, "main").properties == d.properties
    back = diff(t, t.metadata_location, before)
    assert {(c.field_id, c.change) for c in back.schema.changes} == {(2, "renamed"), (4, "removed")}


def test_another_tables_metadata_file_is_refused(catalog_table, tmp_path):
    other = tables.build(str(tmp_path / "other"), 2)
    t = catalog_table.table
    with pytest.raises(UsageError, match="another table"):
        diff(t, other.metadata_location, "main")
    with pytest.raises(UsageError, match="another table"):
        plan_restore(t, metadata_file=other.metadata_location)


# -- restore ---------------------------------------------------------------------------------------------

def test_restore_after_a_bad_overwrite_and_undo(base):
    t = base.table
    good_location = t.metadata_location
    good_files = live_keys(t)
    bad = drop_partition(t, tables.day_of("2026-01-02"))
    bad_md = bad.metadata
    plan = plan_restore(bad, metadata_file=good_location)
    assert plan.diff.totals.data_files_added == 2 and plan.diff.totals.records_added == 5
    assert not plan.missing_files and plan.commits
    restored = apply_restore(bad, plan).committed.table
    md = restored.metadata
    assert live_keys(restored) == good_files
    # What only grows stays: sequence numbers, ids, row ids, snapshots; the log keeps the bad state's file.
    assert md.last_sequence_number == bad_md.last_sequence_number
    assert md.last_column_id == bad_md.last_column_id and md.last_partition_id == bad_md.last_partition_id
    assert md.next_row_id == bad_md.next_row_id
    assert {s.snapshot_id for s in md.snapshots} == {s.snapshot_id for s in bad_md.snapshots}
    assert md.metadata_log[-1].metadata_file == bad.metadata_location
    assert md.snapshot_log[-1].snapshot_id == md.current_snapshot_id
    # A later commit gets a sequence number above every existing one.
    f = tables.write_data_file(restored, [20], ["z"], tables.day_of("2026-01-05"))
    after = append_files(restored, [f])
    assert after.metadata.current_snapshot.sequence_number == bad_md.last_sequence_number + 1
    assert live_keys(after).keys() == good_files.keys() | {(f.file_path, None)}
    # A second restore undoes the first (to the bad state).
    undo = apply_restore(after, plan_restore(after, metadata_file=bad.metadata_location)).committed.table
    assert live_keys(undo) == live_keys(bad)


def test_restore_by_version_and_time(catalog_table):
    t = catalog_table.table
    log = t.metadata.metadata_log
    entry = log[2]
    version = int(entry.metadata_file.rsplit("/", 1)[-1].split("-", 1)[0])
    assert plan_restore(t, version=str(version)).restore_from == entry.metadata_file
    assert plan_restore(t, version=f"v{version}").restore_from == entry.metadata_file
    assert plan_restore(t, time=str(entry.timestamp_ms)).restore_from == entry.metadata_file
    with pytest.raises(UsageError):
        plan_restore(t)
    with pytest.raises(UsageError):
        plan_restore(t, version="3", time="0")
    with pytest.raises(NotFoundError):
        plan_restore(t, time=str(log[0].timestamp_ms - 1))


def test_restore_is_refused_when_files_are_gone(catalog_table, tmp_path):
    t = catalog_table.table
    old = t.metadata.metadata_log[-1].metadata_file
    old_md = t.metadata
    gone = catalog_table.delete_files[0].file_path
    # The delete file is in the old state only after the delete commit: take the state before it.
    t = drop_partition(t, tables.day_of("2026-01-01"))
    os.remove(catalog_table.data_files[0].file_path)
    target = t.metadata.metadata_log[-1].metadata_file
    plan = plan_restore(t, metadata_file=target)
    assert [m.path for m in plan.missing_files] == [catalog_table.data_files[0].file_path]
    assert plan.missing_files[0].kind == "data" and not plan.commits
    before = t.metadata_location
    code, out, err = run_cli(tmp_path, "-o", "json", "restore", "db.t", "--to-metadata", target, "--yes")
    assert code == ExitCode.NOT_FOUND, err
    doc = json.loads(out)
    assert doc["applied"] is False and [m["path"] for m in doc["missing_files"]] == [catalog_table.data_files[0].file_path]
    assert json.loads(err)["error"]["exit_code"] == ExitCode.NOT_FOUND
    assert load_table(t.catalog, t.identifier).metadata_location == before
    assert gone and old and old_md


def test_restore_fails_when_the_table_moved_after_the_plan(catalog_table):
    t = catalog_table.table
    plan = plan_restore(t, version="2")
    f = tables.write_data_file(t, [30], ["q"], tables.day_of("2026-01-06"))
    append_files(t, [f])
    with pytest.raises(CommitConflictError):
        apply_restore(t, plan)


def test_restore_cli_text_and_nothing_to_do(catalog_table, tmp_path):
    t = catalog_table.table
    code, out, err = run_cli(tmp_path, "restore", "db.t", "--to-metadata", t.metadata_location, "--yes")
    assert code == 0 and "nothing to restore" in out, (out, err)
    assert load_table(t.catalog, t.identifier).metadata_location == t.metadata_location
    code, out, err = run_cli(tmp_path, "restore", "db.t", "--to-version", "2", "--dry-run")
    assert code == 0 and "dry run" in out and "diff from today" in out
    assert load_table(t.catalog, t.identifier).metadata_location == t.metadata_location
    code, out, err = run_cli(tmp_path, "restore", "db.t", "--to-version", "2", "--yes")
    assert code == 0 and "restored db.t" in out and "undo: icectl restore db.t --to-metadata" in out


def test_restore_in_a_file_system_catalog(tmp_path):
    base = tables.build(str(tmp_path), 2, catalog="hadoop")
    t = base.table
    good = t.metadata_location
    expected = live_keys(t)
    bad = drop_partition(t, tables.day_of("2026-01-03"))
    restored = apply_restore(bad, plan_restore(bad, version="v5")).committed.table
    assert good.endswith("/v5.metadata.json")
    assert restored.metadata_location.endswith("/v7.metadata.json") and live_keys(restored) == expected


@pytest.mark.parametrize("kind", ["sql", "hadoop"])
def test_restore_adds_back_a_ref_head_that_expire_removed_from_the_metadata(tmp_path, kind):
    """A tag's snapshot removed from the metadata by a later expire, its files kept (gc.enabled=false):
    no add-snapshot update can bring it back (its sequence number is behind the table's), so the
    restore writes the metadata file and moves the pointer itself."""
    from icectl.ops.recover import refs
    from icectl.table.updates import RemoveSnapshotRef, RemoveSnapshots

    base = tables.build(str(tmp_path), 2, catalog=kind)
    t = base.table
    first = t.metadata.snapshots[0].snapshot_id
    t = commit(t, refs.create_ref(t.metadata, "t1", ref_type="tag", snapshot_id=first))
    with_tag = t.metadata_location
    tag_files = live_keys(t, ref="t1")
    t = commit(t, [RemoveSnapshotRef("t1"), RemoveSnapshots((first,))])
    assert t.metadata.snapshot_by_id(first) is None
    last_seq = t.metadata.last_sequence_number
    plan = plan_restore(t, metadata_file=with_tag)
    assert [s.snapshot_id for s in plan.readded_snapshots] == [first] and not plan.missing_files
    assert plan.commits[0]["updates"][0]["action"] == "add-snapshot"
    assert plan.changes[0].startswith(f"add snapshot {first} back")
    result = apply_restore(t, plan)
    restored = load_table(t.catalog, t.identifier)
    assert restored.metadata_location == result.metadata_location != t.metadata_location
    md = restored.metadata
    assert md.refs["t1"].snapshot_id == first and md.snapshot_by_id(first) is not None
    assert md.last_sequence_number == last_seq and md.metadata_log[-1].metadata_file == t.metadata_location
    assert live_keys(restored, ref="t1") == tag_files
    after = append_files(restored, [tables.write_data_file(restored, [40], ["w"], tables.day_of("2026-01-07"))])
    assert after.metadata.current_snapshot.sequence_number == last_seq + 1


def test_a_version_that_left_the_metadata_log_is_found_in_the_folder(catalog_table, tmp_path):
    """--to-version and vN name any metadata file of the table, not only those of the (trimmed) log."""
    code, _, err = run_cli(tmp_path, "properties", "db.t", "set", "write.metadata.previous-versions-max=1", "--yes")
    assert code == 0, err
    for i in range(3):
        assert run_cli(tmp_path, "properties", "db.t", "set", f"p{i}=x", "--yes")[0] == 0
    t = catalog_table.table
    assert len(t.metadata.metadata_log) == 1
    v1 = [p for p in os.listdir(os.path.join(t.location, "metadata")) if p.startswith("00001-")][0]
    plan = plan_restore(t, version="1")
    assert plan.restore_from.endswith(v1) and plan.refs_after["main"] != plan.refs_before["main"]
    assert resolve_side(t, "v1").metadata_location.endswith(v1)
    code, out, err = run_cli(tmp_path, "-o", "json", "restore", "db.t", "--to-version", "1", "--yes")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["applied"] and {c["key"] for c in doc["diff"]["properties"]} >= {"p0", "p1", "p2"}
    after = catalog_table.table
    assert not {"p0", "p1", "p2"} & set(after.metadata.properties)
    assert after.metadata.metadata_log[-1].metadata_file == t.metadata_location
