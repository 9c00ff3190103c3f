"""Snapshot expiry's file cleanup end to end on small real tables on local disk (no Java, no
Spark): the tests write real Parquet files with pyarrow, commit them with ``append_files`` /
``commit_snapshot`` at chosen (future) timestamps, and compare directory listings before and
after. The retention rules themselves are in test_expire.py.
"""
from __future__ import annotations

import json
import os
import pathlib
import time

import pytest

from icectl.catalog import CatalogConfig, build_catalog
from icectl.expr.partition import partition_spec
from icectl.expr.schema import parse_schema
from icectl.ops.maintain.expire import (
    ExpireOptions,
    apply_expiry,
    bytes_by_kind,
    java_counts,
    plan_expiry,
)
from icectl.formats.manifest import DataFile
from icectl.spec.metadata import Snapshot, StatisticsFile
from helpers import create_table
from icectl.spec.partitioning import PartitionSpec
from icectl.table.snapshot_producer import SnapshotChange
from helpers import append_files, commit_snapshot
from icectl.table.loaded import Table
from icectl.spec.types import Schema
from icectl.table.builder import MetadataBuilder
from icectl.table.updates import SetStatistics
from icectl.errors import RefusedError
from icectl.io import FileIO
from icectl.table.transaction import commit

DAY = 86_400_000

SCHEMA = parse_schema("id:long!, name:string")




def catalog_on(tmp_path: pathlib.Path, kind: str = "sql"):
    props = {"type": kind, "warehouse": str(tmp_path / "wh")}
    if kind == "sql":
        props["uri"] = f"sqlite:///{tmp_path}/c.db"
    return build_catalog(CatalogConfig("default", props))


def write_parquet(path: str, ids: list[int]) -> DataFile:
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids]}), path)
    return DataFile(path, "PARQUET", (), len(ids), os.path.getsize(path))


def data_file(t: Table, name: str, ids: list[int]) -> DataFile:
    return write_parquet(f"{t.location}/data/{name}.parquet", ids)


def listing(root) -> dict[str, int]:
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            out[p] = os.path.getsize(p)
    return out


def live_entry(t: Table, path: str):
    for e in t.live_entries(t.metadata.current_snapshot):
        if e.data_file.file_path == path:
            return e
    raise AssertionError(f"{path} is not live")


def overwrite(t: Table, remove: list[str], add: list[DataFile], ts: int, branch: str = "main") -> Table:
    removed = [(e, e.data_file) for e in (live_entry(t, p) for p in remove)]
    return commit_snapshot(t, SnapshotChange("overwrite", added=add, removed=removed), branch=branch,
                                   timestamp_ms=ts)


class History:
    """s1 append a; s2 append b; s3 overwrite a -> c; s4 append d; timestamps T0 + 0..3 days (in
    the future, so the commit clock never pushes them)."""

    def __init__(self, catalog, format_version: int = 2, properties=None, name: str = "t"):
        self.T0 = (int(time.time() * 1000) // DAY + 20) * DAY
        t = create_table(catalog, ("db", name), schema_text="id:long!, name:string", format_version=format_version,
                         properties=properties or {})
        self.a, self.b = data_file(t, "a", [1, 2]), data_file(t, "b", [3])
        t = append_files(t, [self.a], timestamp_ms=self.T0)
        t = append_files(t, [self.b], timestamp_ms=self.T0 + DAY)
        self.c = data_file(t, "c", [1])
        t = overwrite(t, [self.a.file_path], [self.c], self.T0 + 2 * DAY)
        self.d = data_file(t, "d", [4])
        t = append_files(t, [self.d], timestamp_ms=self.T0 + 3 * DAY)
        self.table = t
        self.s1, self.s2, self.s3, self.s4 = [s.snapshot_id for s in t.metadata.snapshots]

    def snapshot(self, sid: int) -> Snapshot:
        return self.table.metadata.snapshot_by_id(sid)

    def manifest_list(self, sid: int) -> str:
        return self.table.resolve(self.snapshot(sid).manifest_list)

    def manifests(self, *sids: int) -> set[str]:
        return {m.manifest_path for s in sids for m in self.table.manifests(self.snapshot(s))}

    def options(self, **kw) -> ExpireOptions:
        # s1 and s2 are older than the cutoff; s3 and s4 are not.
        return ExpireOptions(older_than_ms=self.T0 + 2 * DAY, now_ms=self.T0 + 3 * DAY, **kw)


@pytest.mark.parametrize("fv", [1, 2, 3])
def test_expire_deletes_exactly_what_only_expired_snapshots_reach(tmp_path, fv):
    h = History(catalog_on(tmp_path), fv)
    t = h.table
    before = listing(t.location)
    expected = ({h.a.file_path, h.manifest_list(h.s1), h.manifest_list(h.s2)}
                | (h.manifests(h.s1, h.s2) - h.manifests(h.s3, h.s4)))
    assert len(expected) == 4  # a, two manifest lists, the manifest that listed a
    plan = plan_expiry(t, h.options())
    assert plan.expired_snapshot_ids == [h.s1, h.s2] and plan.retained_snapshot_ids == [h.s3, h.s4]
    assert {f.path for f in plan.files} == expected
    res = apply_expiry(t, h.options())
    after = listing(t.location)
    assert {f.path for f in res.deleted} == expected and res.failed == []
    assert set(before) - set(after) == expected
    new_files = set(after) - set(before)
    assert len(new_files) == 1 and next(iter(new_files)).endswith(".metadata.json")
    assert java_counts(res.deleted) == {
        "deleted_data_files_count": 1, "deleted_position_delete_files_count": 0,
        "deleted_equality_delete_files_count": 0, "deleted_manifest_files_count": 1,
        "deleted_manifest_lists_count": 2, "deleted_statistics_files_count": 0}
    assert bytes_by_kind(res.deleted) == _bytes_by_kind_on_disk(before, res.deleted)
    fresh = t.refresh()
    assert [s.snapshot_id for s in fresh.metadata.snapshots] == [h.s3, h.s4]
    assert fresh.metadata_location == res.committed_metadata_location
    # Every file the table still reaches is still there, and reading it works.
    assert sorted(e.data_file.file_path for e in fresh.live_entries(fresh.metadata.current_snapshot)) == sorted(
        [h.b.file_path, h.c.file_path, h.d.file_path])
    # A second run has nothing to do.
    again = apply_expiry(fresh, h.options())
    assert again.committed_metadata_location is None and again.deleted == []


def _bytes_by_kind_on_disk(before: dict[str, int], files) -> dict[str, int]:
    out: dict[str, int] = {}
    for f in files:
        out[f.kind] = out.get(f.kind, 0) + before[f.path]
    return out


def test_tag_keeps_the_files_of_its_snapshot(tmp_path):
    h = History(catalog_on(tmp_path))
    from icectl.ops.recover.refs import create_ref

    t = commit(h.table, create_ref(h.table.metadata, "keep", ref_type="tag", snapshot_id=h.s2))
    before = listing(t.location)
    res = apply_expiry(t, h.options())
    assert res.plan.expired_snapshot_ids == [h.s1]
    assert {f.path for f in res.deleted} == {h.manifest_list(h.s1)}  # a and its manifest: still reached by s2
    assert set(before) - set(listing(t.location)) == {h.manifest_list(h.s1)}


def test_no_delete_files_changes_metadata_only(tmp_path):
    h = History(catalog_on(tmp_path))
    before = listing(h.table.location)
    res = apply_expiry(h.table, h.options(delete_files=False))
    assert res.deleted == [] and res.plan.files == []
    after = listing(h.table.location)
    assert set(before) <= set(after) and len(set(after) - set(before)) == 1
    assert [s.snapshot_id for s in h.table.refresh().metadata.snapshots] == [h.s3, h.s4]


def test_gc_disabled_refuses_unless_no_delete_files(tmp_path):
    h = History(catalog_on(tmp_path), properties={"gc.enabled": "false"})
    before = listing(h.table.location)
    with pytest.raises(RefusedError, match="gc.enabled"):
        apply_expiry(h.table, h.options())
    assert listing(h.table.location) == before
    res = apply_expiry(h.table, h.options(delete_files=False))
    assert res.plan.expired_snapshot_ids == [h.s1, h.s2] and res.deleted == []


def test_failed_delete_is_reported_not_fatal(tmp_path, monkeypatch):
    h = History(catalog_on(tmp_path))
    real = FileIO._unlink  # the unlink under the path guard

    def flaky(self, path):
        if path == h.a.file_path:
            raise PermissionError(13, "Permission denied", path)
        return real(self, path)

    monkeypatch.setattr(FileIO, "_unlink", flaky)
    res = apply_expiry(h.table, h.options())
    assert [p for p, _ in res.failed] == [h.a.file_path]
    assert "Permission denied" in res.failed[0][1]
    assert os.path.exists(h.a.file_path)
    assert h.a.file_path not in {f.path for f in res.deleted} and len(res.deleted) == 3
    assert res.committed_metadata_location is not None


def test_file_outside_the_table_location_is_never_deleted(tmp_path):
    cat = catalog_on(tmp_path)
    h = History(cat)
    outside = write_parquet(str(tmp_path / "elsewhere" / "x.parquet"), [9])
    t = append_files(h.table, [outside], timestamp_ms=h.T0 + 4 * DAY)
    t = overwrite(t, [outside.file_path], [], h.T0 + 5 * DAY)
    opts = ExpireOptions(older_than_ms=h.T0 + 5 * DAY, now_ms=h.T0 + 6 * DAY)
    plan = plan_expiry(t, opts)
    assert plan.skipped_outside_location == [outside.file_path]
    assert outside.file_path not in {f.path for f in plan.files}
    res = apply_expiry(t, opts)
    assert res.plan.skipped_outside_location == [outside.file_path]
    assert os.path.exists(outside.file_path)
    assert h.a.file_path in {f.path for f in res.deleted}


def test_delete_after_commit_removes_old_metadata_files(tmp_path):
    props = {"write.metadata.delete-after-commit.enabled": "true", "write.metadata.previous-versions-max": "2"}
    h = History(catalog_on(tmp_path), properties=props)
    t = h.table
    mdir = os.path.join(t.location, "metadata")

    def metadata_files():
        return sorted(os.path.join(mdir, f) for f in os.listdir(mdir) if f.endswith(".metadata.json"))

    before = metadata_files()
    assert len(before) == 3  # the current file and the two the log keeps
    assert [e.metadata_file for e in t.metadata.metadata_log] == before[:2]
    res = apply_expiry(t, h.options())
    assert res.metadata_files_deleted == [before[0]]
    after = metadata_files()
    assert after == before[1:] + [res.committed_metadata_location]
    assert [e.metadata_file for e in t.refresh().metadata.metadata_log] == before[1:]


def test_concurrent_commit_is_replanned_and_its_files_kept(tmp_path):
    h = History(catalog_on(tmp_path))
    stale = h.table
    calls = []
    extra = data_file(stale, "e", [5])

    def writer_commits_first(plan):
        calls.append(plan.expired_snapshot_ids)
        if len(calls) == 1:
            append_files(stale, [extra], timestamp_ms=h.T0 + 3 * DAY + 1)

    res = apply_expiry(stale, h.options(), before_commit=writer_commits_first)
    assert len(calls) == 2  # the first commit conflicted and the expiry was planned again
    fresh = stale.refresh()
    assert len(fresh.metadata.snapshots) == 3 and fresh.metadata.current_snapshot.summary["added-data-files"] == "1"
    assert os.path.exists(extra.file_path)
    assert {f.path for f in res.deleted} >= {h.a.file_path}
    assert all(os.path.exists(p) for p in (h.b.file_path, h.c.file_path, h.d.file_path))


def test_clean_expired_metadata_keeps_specs_still_used_by_retained_manifests(tmp_path):
    """A retained snapshot can still list a manifest written under an old spec: that spec stays;
    the schema only expired snapshots used goes."""
    cat = catalog_on(tmp_path)
    T0 = (int(time.time() * 1000) // DAY + 20) * DAY
    t = create_table(cat, ("db", "t"), schema_text="id:long!, name:string", format_version=2)
    t = append_files(t, [data_file(t, "a", [1])], timestamp_ms=T0)
    md = t.metadata
    s1 = Schema(parse_schema("id:long!, name:string, x:int").fields, 1)
    spec1 = PartitionSpec(1, partition_spec("id", md.schema).fields)
    t = commit(t, MetadataBuilder(md).set_current_schema(s1).set_default_spec(spec1).changes)
    assert t.metadata.current_schema_id == 1 and t.metadata.default_spec_id == 1
    b = data_file(t, "b", [3])
    b.spec_id, b.partition = 1, (3,)
    t = append_files(t, [b], timestamp_ms=T0 + DAY)
    opts = ExpireOptions(older_than_ms=T0 + DAY, now_ms=T0 + 2 * DAY, clean_expired_metadata=True)
    plan = plan_expiry(t, opts)
    assert len(plan.expired_snapshot_ids) == 1
    assert plan.removed_schema_ids == [0]
    assert plan.removed_spec_ids == []  # the retained snapshot still lists the spec-0 manifest of a
    res = apply_expiry(t, opts)
    new = t.refresh().metadata
    assert [s.schema_id for s in new.schemas] == [1] and [p.spec_id for p in new.partition_specs] == [0, 1]
    assert {f.kind for f in res.deleted} == {"manifest-list"}


def test_statistics_files_of_expired_snapshots_are_deleted(tmp_path):
    h = History(catalog_on(tmp_path))
    t = h.table
    paths = {}
    for sid in (h.s1, h.s4):
        p = os.path.join(t.location, "metadata", f"stats-{sid}.puffin")
        with open(p, "wb") as f:
            f.write(b"PFA1" + b"\0" * 20)
        paths[sid] = p
    t = commit(t, [SetStatistics(StatisticsFile(sid, p, os.path.getsize(p))) for sid, p in paths.items()])
    res = apply_expiry(t, h.options())
    stats = [f for f in res.deleted if f.kind == "statistics"]
    assert [f.path for f in stats] == [paths[h.s1]] and stats[0].size == 24
    assert java_counts(res.deleted)["deleted_statistics_files_count"] == 1
    assert not os.path.exists(paths[h.s1]) and os.path.exists(paths[h.s4])
    assert [s.snapshot_id for s in t.refresh().metadata.statistics] == [h.s4]


def test_expired_metadata_json_roundtrips(tmp_path):
    h = History(catalog_on(tmp_path))
    res = apply_expiry(h.table, h.options())
    with open(res.committed_metadata_location) as f:
        doc = json.load(f)
    assert [s["snapshot-id"] for s in doc["snapshots"]] == [h.s3, h.s4]
    assert [e["snapshot-id"] for e in doc["snapshot-log"]] == [h.s3, h.s4]
    assert doc["refs"] == {"main": {"snapshot-id": h.s4, "type": "branch"}}
