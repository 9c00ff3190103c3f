"""rewrite-manifests on real tables (SQL and file-system catalogs, no Java): live entries are kept
exactly, v3 row lineage survives, clustering follows Java's rule, and concurrent commits are
handled as BaseRewriteManifests does (an append is kept; a rewritten manifest that left the table
stops the commit, and the new manifests are removed)."""
from __future__ import annotations

import io
import json
import os
import pathlib
import sys

import pytest

from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.errors import ConflictingChangeError, ExitCode
from icectl.formats.manifest import DataFile, EntryStatus, ManifestEntry
from icectl.ops.maintain.rewrite_manifests import apply_rewrite_manifests, cluster, plan_rewrite_manifests
from icectl.table.transaction import commit

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from validate_corpus import tables  # noqa: E402


def live(t) -> list[tuple]:
    snap = t.metadata.current_snapshot
    out = []
    for m in t.manifests(snap):
        for e in t.read_entries(m, live_only=True):
            df = e.data_file
            out.append((df.file_path, int(df.content), e.snapshot_id, e.sequence_number, e.file_sequence_number,
                        df.partition, df.first_row_id if df.content == 0 else None, df.record_count))
    return sorted(out, key=repr)


def statuses(t, content: int) -> set[int]:
    return {int(e.status) for m in t.manifests(t.metadata.current_snapshot) if m.content == content
            for e in t.read_entries(m)}


def files_under(root) -> set[str]:
    return {os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs}


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_entries_are_kept_exactly(tmp_path, version):
    base = tables.build(str(tmp_path), version)
    t = base.table
    before = live(t)
    plan = plan_rewrite_manifests(t)
    # three data manifests (one per append) are rewritten; one delete manifest alone is not
    data = [m for m in t.manifests(t.metadata.current_snapshot) if m.content == 0]
    assert plan.changes and plan.rewritten == data and len(data) == 3
    assert [g.rewrite for g in plan.groups] == ([True, False] if version > 1 else [True])
    result = apply_rewrite_manifests(t, plan)
    after = result.committed.table
    snap = after.metadata.current_snapshot
    assert live(after) == before
    assert statuses(after, 0) == {int(EntryStatus.EXISTING)}
    assert snap.summary["manifests-kept"] == ("1" if version > 1 else "0")
    assert snap.operation == "replace" and snap.summary["manifests-replaced"] == str(len(plan.rewritten))
    assert snap.summary["manifests-created"] == str(len(result.added_manifests))
    assert snap.summary["total-records"] == t.metadata.current_snapshot.summary["total-records"]
    # one manifest per content at the default target size
    contents = sorted(int(m.content) for m in after.manifests(snap))
    assert contents == sorted(set(contents))
    if version >= 3:
        old = t.metadata
        data_rows = sum(m.existing_rows_count + m.added_rows_count for m in after.manifests(snap) if m.content == 0)
        assert snap.first_row_id == old.next_row_id and snap.added_rows == data_rows
        assert after.metadata.next_row_id == old.next_row_id + data_rows
        assert all(e[6] is not None for e in live(after) if e[1] == 0)
    from icectl.validate.findings import ValidateOptions
    from icectl.validate.run import validate_table

    report = validate_table(after.catalog, after.identifier, ValidateOptions(deep=True))
    assert not [f for f in report.findings if str(f.severity).lower().endswith("error")], report.findings


def _entry(path: str, partition: tuple) -> ManifestEntry:
    return ManifestEntry(EntryStatus.EXISTING, 1, 1, 1, DataFile(path, "parquet", partition, 1, 10))


def test_cluster_never_splits_a_partition_and_keeps_at_most_n_ranges():
    entries = [_entry(f"f{i}", (i % 5,)) for i in range(50)] + [_entry("n", (None,))]
    for n in (1, 2, 3, 7, 100):
        ranges = cluster(entries, n, partitioned=True)
        assert 1 <= len(ranges) <= n
        assert sum(len(r) for r in ranges) == len(entries)
        owners = {}
        for i, r in enumerate(ranges):
            for e in r:
                assert owners.setdefault(e.data_file.partition, i) == i
        flat = [e.data_file.partition for r in ranges for e in r]
        assert flat[0] == (None,)  # nulls first, then ascending
        assert flat[1:] == sorted(flat[1:])
    assert [len(r) for r in cluster(entries[:9], 3, partitioned=False)] == [3, 3, 3]


def test_small_target_gives_several_manifests(tmp_path):
    from icectl.table.updates import SetProperties

    base = tables.build(str(tmp_path), 2)
    t = commit(base.table, [SetProperties({"commit.manifest.target-size-bytes": "2000"})])
    plan = plan_rewrite_manifests(t)
    data = next(g for g in plan.groups if g.content == "data")
    assert data.target_manifests == -(-data.bytes // 2000) > 1
    result = apply_rewrite_manifests(t, plan)
    after = result.committed.table
    ms = [m for m in after.manifests(after.metadata.current_snapshot) if m.content == 0]
    assert 1 < len(ms) <= data.target_manifests
    parts = [p for m in ms for p in {e.data_file.partition for e in after.read_entries(m)}]
    assert len(parts) == len(set(parts))
    assert live(after) == live(t)


def test_concurrent_append_is_kept(tmp_path):
    from helpers import append_files

    base = tables.build(str(tmp_path), 2)
    t = base.table
    plan = plan_rewrite_manifests(t)
    other = append_files(t, [tables.write_data_file(t, [77], ["q"], tables.day_of("2026-01-07"))])
    result = apply_rewrite_manifests(t, plan)
    assert result.committed.attempts == 2
    after = result.committed.table
    assert after.metadata.current_snapshot.parent_snapshot_id == other.metadata.current_snapshot_id
    assert live(after) == live(other)
    assert after.metadata.current_snapshot.summary["manifests-kept"] == "2"  # the append's and the deletes'


def test_rewritten_manifest_gone_stops_the_commit_and_removes_new_manifests(tmp_path):
    from icectl.table.snapshot_producer import SnapshotChange
    from helpers import commit_snapshot

    base = tables.build(str(tmp_path), 2)
    t = base.table
    plan = plan_rewrite_manifests(t)
    snap = t.metadata.current_snapshot
    victim = next((e, e.data_file) for m in t.manifests(snap) if m.content == 0
                  for e in t.read_entries(m, live_only=True))
    moved = commit_snapshot(t, SnapshotChange("delete", removed=[victim]))
    files = files_under(tmp_path)
    with pytest.raises(ConflictingChangeError, match="no longer in the latest snapshot"):
        apply_rewrite_manifests(t, plan)
    assert files_under(tmp_path) == files  # the new manifests and lists were removed
    assert moved.refresh().metadata_location == moved.metadata_location


def cli(root, *args: str) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
    code = run(["--warehouse", f"{root}/warehouse", *args], env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def test_cli_on_a_file_system_table_and_bad_input(tmp_path):
    tables.build(str(tmp_path), 2, catalog="hadoop")
    files = files_under(tmp_path)
    code, out, err = cli(tmp_path, "rewrite-manifests", "db.t", "--spec-id", "9", "--yes")
    assert code == ExitCode.USAGE and "invalid --spec-id 9" in err
    code, out, err = cli(tmp_path, "rewrite-manifests", "db.t")
    assert code == ExitCode.REFUSED and "manifests of spec 0" in out
    assert files_under(tmp_path) == files
    code, out, err = cli(tmp_path, "-o", "json", "rewrite-manifests", "db.t", "--yes")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["applied"] and doc["entries"] == 4 and len(doc["added_manifests"]) == 1
    code, out, err = cli(tmp_path, "-o", "json", "rewrite-manifests", "db.t", "--yes")
    assert code == 0 and json.loads(out)["applied"] is False  # one manifest per content now: nothing to do
    assert cli(tmp_path, "validate", "db.t", "--deep")[0] == 0


def test_no_snapshots(tmp_path):
    from helpers import create_table

    cat = tables.make_catalog(str(tmp_path), "hadoop")
    create_table(cat, ("db", "e"), schema_text="id:long", format_version=2)
    code, out, err = cli(tmp_path, "rewrite-manifests", "db.e", "--yes")
    assert code == ExitCode.NOT_FOUND and "no snapshots" in err
