"""Branches, tags, rollback and cherry-pick (icectl.ops.recover.refs) on small real tables: Iceberg Java's
SnapshotManager / CherryPickOperation / UpdateSnapshotReferencesOperation rules, without Java.

History built by :class:`Repo` (timestamps in the future, one hour apart, so they are exact):

    s1 (append a) -- s2 (append b) -- s3 (append e)      main
                         \\
                          d1 (append c)                   dev
"""
from __future__ import annotations

import os
import pathlib
import time

import pytest

from icectl.catalog import CatalogConfig, build_catalog
from icectl.ops.recover import refs
from icectl.table.builder import apply_updates
from icectl.formats.manifest import DataFile
from helpers import create_table
from icectl.table.snapshot_producer import SnapshotChange, build_snapshot
from helpers import append_files, commit_snapshot
from icectl.table.loaded import Table
from icectl.errors import AlreadyExistsError, NotFoundError, UsageError
from icectl.table.transaction import Transaction, commit

HOUR = 3_600_000
DAY = 24 * HOUR


def applied(md, updates):
    """The metadata after a refs operation's updates (the operation itself returns updates)."""
    return apply_updates(md, updates) if updates else md


def write_parquet(path: str, ids: list[int]) -> DataFile:
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids]}), path)
    return DataFile(path, "PARQUET", (), len(ids), os.path.getsize(path))


class Repo:
    def __init__(self, tmp_path: pathlib.Path, format_version: int = 2):
        # A file-system catalog: no SQLite fsync per commit, so the fixture stays fast.
        cat = build_catalog(CatalogConfig("default", {"type": "hadoop", "warehouse": str(tmp_path / "wh")}))
        self.T0 = (int(time.time() * 1000) // DAY + 20) * DAY
        t = create_table(cat, ("db", "t"), schema_text="id:long!, name:string", format_version=format_version)
        self.files: dict[str, DataFile] = {}
        t = append_files(t, [self.file(t, "a", [1, 2])], timestamp_ms=self.T0)
        t = append_files(t, [self.file(t, "b", [3])], timestamp_ms=self.T0 + HOUR)
        self.s1, self.s2 = [s.snapshot_id for s in t.metadata.snapshots]
        t = commit(t, refs.create_ref(t.metadata, "dev", ref_type="branch"))
        t = append_files(t, [self.file(t, "c", [4, 5, 6])], branch="dev", timestamp_ms=self.T0 + 2 * HOUR)
        self.d1 = t.metadata.refs["dev"].snapshot_id
        t = append_files(t, [self.file(t, "e", [7])], timestamp_ms=self.T0 + 3 * HOUR)
        self.s3 = t.metadata.current_snapshot_id
        self.table = t

    def file(self, t: Table, name: str, ids: list[int]) -> DataFile:
        f = write_parquet(f"{t.location}/data/{name}.parquet", ids)
        self.files[name] = f
        return f

    def ts(self, sid: int) -> int:
        return self.table.metadata.snapshot_by_id(sid).timestamp_ms

    def commit(self, build) -> Table:
        self.table = Transaction(self.table).commit(build).table
        return self.table


def live_names(t: Table, sid: int | None = None) -> list[str]:
    s = t.metadata.snapshot_by_id(sid if sid is not None else t.metadata.current_snapshot_id)
    return sorted(os.path.basename(e.data_file.file_path).split(".")[0] for e in t.live_entries(s))


@pytest.fixture
def repo(tmp_path) -> Repo:
    return Repo(tmp_path)


def test_history_is_as_drawn(repo):
    md = repo.table.metadata
    assert [s.snapshot_id for s in md.ancestors_of(md.current_snapshot_id)] == [repo.s3, repo.s2, repo.s1]
    assert [s.snapshot_id for s in md.ancestors_of(repo.d1)] == [repo.d1, repo.s2, repo.s1]
    assert live_names(repo.table) == ["a", "b", "e"]


# ------------------------------------------------------------------------------------- rollback

def test_rollback_to_ancestor_moves_main_and_logs_it(repo):
    t = repo.commit(lambda t: refs.rollback_to_snapshot(t.table.metadata, repo.s1))
    md = t.metadata
    assert md.current_snapshot_id == repo.s1 and md.refs["main"].snapshot_id == repo.s1
    assert md.snapshot_log[-1].snapshot_id == repo.s1
    assert [e.snapshot_id for e in md.snapshot_log] == [repo.s1, repo.s2, repo.s3, repo.s1]
    assert md.snapshot_log[-1].timestamp_ms >= md.snapshot_log[-2].timestamp_ms
    assert live_names(t) == ["a"]
    assert len(md.snapshots) == 4  # nothing is removed: s2, s3 stay until expired


def test_rollback_to_non_ancestor_is_refused(repo):
    with pytest.raises(UsageError, match="not an ancestor") as e:
        refs.rollback_to_snapshot(repo.table.metadata, repo.d1)
    assert "--set-current" in (e.value.hint or "")
    with pytest.raises(NotFoundError):
        refs.rollback_to_snapshot(repo.table.metadata, 12345)


def test_rollback_keeps_branch_retention(repo):
    md = applied(repo.table.metadata, refs.set_retention(repo.table.metadata, "main", min_snapshots_to_keep=3, max_snapshot_age_ms=DAY))
    new = applied(md, refs.rollback_to_snapshot(md, repo.s2))
    r = new.refs["main"]
    assert (r.snapshot_id, r.min_snapshots_to_keep, r.max_snapshot_age_ms) == (repo.s2, 3, DAY)


def test_rollback_to_timestamp_picks_latest_ancestor_strictly_older(repo):
    md = repo.table.metadata
    # d1 (T0+2h) is newer than s2 but not an ancestor of main.
    assert refs.snapshot_before(md, repo.T0 + 3 * HOUR).snapshot_id == repo.s2
    assert refs.snapshot_before(md, repo.T0 + 3 * HOUR + 1).snapshot_id == repo.s3
    assert refs.snapshot_before(md, repo.ts(repo.s2)).snapshot_id == repo.s1  # strictly older
    assert refs.snapshot_before(md, repo.ts(repo.s2) + 1).snapshot_id == repo.s2
    with pytest.raises(NotFoundError):
        refs.snapshot_before(md, repo.ts(repo.s1))
    new = applied(md, refs.rollback_to_timestamp(md, repo.T0 + 2 * HOUR + 30 * 60_000))
    assert new.current_snapshot_id == repo.s2 and new.snapshot_log[-1].snapshot_id == repo.s2
    # On another branch: its own ancestry.
    assert refs.snapshot_before(md, repo.T0 + 3 * HOUR, branch="dev").snapshot_id == repo.d1


def test_set_current_accepts_any_snapshot(repo):
    t = repo.commit(lambda t: refs.set_current_snapshot(t.table.metadata, repo.d1))
    assert t.metadata.current_snapshot_id == repo.d1 and t.metadata.snapshot_log[-1].snapshot_id == repo.d1
    assert live_names(t) == ["a", "b", "c"]
    with pytest.raises(NotFoundError):
        refs.set_current_snapshot(t.metadata, 12345)


def test_set_current_on_a_tag_is_refused(repo):
    md = applied(repo.table.metadata, refs.create_ref(repo.table.metadata, "v1", ref_type="tag", snapshot_id=repo.s1))
    with pytest.raises(UsageError, match="is a tag"):
        refs.set_current_snapshot(md, repo.s2, branch="v1")


def test_moving_another_branch_does_not_touch_main_or_the_log(repo):
    md = repo.table.metadata
    new = applied(md, refs.set_current_snapshot(md, repo.s3, branch="dev"))
    assert new.refs["dev"].snapshot_id == repo.s3
    assert new.current_snapshot_id == md.current_snapshot_id and new.snapshot_log == md.snapshot_log


def test_setting_main_to_its_own_head_is_a_no_op(repo):
    """As TableMetadata.Builder.setBranchSnapshot: a ref already at the snapshot is unchanged, so
    the snapshot log gains no duplicate entry."""
    md = repo.table.metadata
    new = applied(md, refs.set_current_snapshot(md, repo.s3))
    assert new.snapshot_log == md.snapshot_log and new.refs == md.refs


def test_ref_impact_counts_what_a_move_changes(repo):
    imp = refs.ref_impact(repo.table, "main", repo.s1)
    assert imp.from_snapshot_id == repo.s3 and imp.to_snapshot_id == repo.s1
    assert imp.leaving_history == [repo.s3, repo.s2] and imp.joining_history == []
    assert (imp.data_files_added, imp.data_files_removed, imp.records_added, imp.records_removed) == (0, 2, 0, 2)
    imp = refs.ref_impact(repo.table, "main", repo.d1)
    assert imp.leaving_history == [repo.s3] and imp.joining_history == [repo.d1]
    assert (imp.data_files_added, imp.data_files_removed, imp.records_added, imp.records_removed) == (1, 1, 3, 1)


# ------------------------------------------------------------------------------ branches and tags

def test_branch_create_at_current_or_given_snapshot_with_retention(repo):
    md = applied(repo.table.metadata, refs.create_ref(repo.table.metadata, "b1", ref_type="branch"))
    assert md.refs["b1"].snapshot_id == repo.s3 and md.refs["b1"].is_branch
    md = applied(md, refs.create_ref(md, "b2", ref_type="branch", snapshot_id=repo.s1, max_ref_age_ms=7 * DAY,
                         max_snapshot_age_ms=2 * DAY, min_snapshots_to_keep=3))
    r = md.refs["b2"]
    assert (r.snapshot_id, r.max_ref_age_ms, r.max_snapshot_age_ms, r.min_snapshots_to_keep) == (
        repo.s1, 7 * DAY, 2 * DAY, 3)
    assert r.to_json() == {"snapshot-id": repo.s1, "type": "branch", "min-snapshots-to-keep": 3,
                           "max-snapshot-age-ms": 2 * DAY, "max-ref-age-ms": 7 * DAY}
    assert md.current_snapshot_id == repo.s3 and md.snapshot_log == repo.table.metadata.snapshot_log


@pytest.mark.parametrize("kwargs,error", [
    ({"name": "dev"}, AlreadyExistsError),
    ({"name": "main"}, AlreadyExistsError),
    ({"name": "x", "snapshot_id": 12345}, NotFoundError),
    ({"name": " x"}, UsageError),
    ({"name": "x", "min_snapshots_to_keep": 0}, UsageError),
    ({"name": "x", "max_ref_age_ms": -1}, UsageError),
])
def test_branch_create_refusals(repo, kwargs, error):
    with pytest.raises(error):
        refs.create_ref(repo.table.metadata, ref_type="branch", **kwargs)


def test_branch_drop_and_main_cannot_be_dropped(repo):
    t = repo.commit(lambda t: refs.drop_ref(t.table.metadata, "dev", ref_type="branch"))
    assert set(t.metadata.refs) == {"main"}
    assert repo.d1 in {s.snapshot_id for s in t.metadata.snapshots}  # expiry removes it later
    with pytest.raises(UsageError, match="main branch cannot be dropped"):
        refs.drop_ref(t.metadata, "main", ref_type="branch")
    with pytest.raises(NotFoundError):
        refs.drop_ref(t.metadata, "dev", ref_type="branch")


def test_branch_rename_keeps_head_and_retention(repo):
    md = applied(repo.table.metadata, refs.set_retention(repo.table.metadata, "dev", min_snapshots_to_keep=2))
    md = applied(md, refs.rename_branch(md, "dev", "feature"))
    assert "dev" not in md.refs
    assert md.refs["feature"].snapshot_id == repo.d1 and md.refs["feature"].min_snapshots_to_keep == 2
    with pytest.raises(UsageError, match="main branch cannot be renamed"):
        refs.rename_branch(md, "main", "trunk")
    with pytest.raises(AlreadyExistsError):
        refs.rename_branch(md, "feature", "main")
    with pytest.raises(NotFoundError):
        refs.rename_branch(md, "nope", "x")
    md = applied(md, refs.create_ref(md, "v1", ref_type="tag"))
    with pytest.raises(UsageError, match="is a tag"):
        refs.rename_branch(md, "v1", "v2")


def test_branch_fast_forward(repo):
    md = applied(repo.table.metadata, refs.create_ref(repo.table.metadata, "old", ref_type="branch", snapshot_id=repo.s1))
    new = applied(md, refs.fast_forward(md, "old", "main"))
    assert new.refs["old"].snapshot_id == repo.s3
    assert new.current_snapshot_id == repo.s3 and new.snapshot_log == md.snapshot_log
    with pytest.raises(UsageError, match="not an ancestor"):
        refs.fast_forward(md, "main", "dev")  # main's head s3 is not an ancestor of d1
    with pytest.raises(NotFoundError):
        refs.fast_forward(md, "old", "nope")
    # Fast-forwarding main itself moves the current snapshot and logs it.
    md = applied(md, refs.set_current_snapshot(md, repo.s2))
    new = applied(md, refs.fast_forward(md, "main", "dev"))
    assert new.current_snapshot_id == repo.d1 and new.snapshot_log[-1].snapshot_id == repo.d1
    # To a tag's head works too.
    md = applied(md, refs.create_ref(md, "t", ref_type="tag", snapshot_id=repo.s3))
    assert applied(md, refs.fast_forward(md, "main", "t")).current_snapshot_id == repo.s3


def test_branch_retain(repo):
    md = applied(repo.table.metadata, refs.set_retention(repo.table.metadata, "dev", max_ref_age_ms=DAY, min_snapshots_to_keep=4))
    md = applied(md, refs.set_retention(md, "dev", max_snapshot_age_ms=HOUR))  # others unchanged
    r = md.refs["dev"]
    assert (r.snapshot_id, r.max_ref_age_ms, r.max_snapshot_age_ms, r.min_snapshots_to_keep) == (repo.d1, DAY, HOUR, 4)
    with pytest.raises(UsageError, match="never expires"):
        refs.set_retention(md, "main", max_ref_age_ms=DAY)
    md = applied(md, refs.set_retention(md, "main", min_snapshots_to_keep=2))
    assert md.refs["main"].min_snapshots_to_keep == 2
    md = applied(md, refs.create_ref(md, "v1", ref_type="tag"))
    with pytest.raises(UsageError, match="tags have only"):
        refs.set_retention(md, "v1", min_snapshots_to_keep=2)
    assert applied(md, refs.set_retention(md, "v1", max_ref_age_ms=DAY)).refs["v1"].max_ref_age_ms == DAY
    with pytest.raises(NotFoundError):
        refs.set_retention(md, "nope", max_ref_age_ms=DAY)


def test_tag_create_and_drop(repo):
    t = repo.commit(lambda t: refs.create_ref(t.table.metadata, "v1", ref_type="tag", snapshot_id=repo.s2,
                                              max_ref_age_ms=30 * DAY))
    r = t.metadata.refs["v1"]
    assert (r.ref_type, r.snapshot_id, r.max_ref_age_ms) == ("tag", repo.s2, 30 * DAY)
    with pytest.raises(UsageError, match="tags have only"):
        refs.create_ref(t.metadata, "v2", ref_type="tag", min_snapshots_to_keep=1)
    with pytest.raises(NotFoundError):
        refs.drop_ref(t.metadata, "v1", ref_type="branch")  # a tag is not dropped as a branch
    with pytest.raises(UsageError, match="is a tag"):
        build_snapshot(Transaction(t), SnapshotChange("append"), branch="v1")  # commits never go to tags
    t = repo.commit(lambda t: refs.drop_ref(t.table.metadata, "v1", ref_type="tag"))
    assert "v1" not in t.metadata.refs


# ------------------------------------------------------------------------------------ cherry-pick

def test_cherry_pick_append_from_a_branch(repo):
    t = repo.commit(lambda t: refs.cherry_pick(t, repo.d1))
    md = t.metadata
    new = md.current_snapshot
    assert new.snapshot_id not in (repo.s3, repo.d1) and len(md.snapshots) == 5
    assert new.parent_snapshot_id == repo.s3
    assert new.operation == "append"
    assert new.summary[refs.SOURCE_SNAPSHOT_ID] == str(repo.d1)
    assert new.summary["added-data-files"] == "1" and new.summary["added-records"] == "3"
    assert new.summary["total-data-files"] == "4"
    added = [e.data_file.file_path for e in t.live_entries(new) if e.snapshot_id == new.snapshot_id]
    assert added == [repo.files["c"].file_path]
    assert live_names(t) == ["a", "b", "c", "e"]
    assert md.refs["dev"].snapshot_id == repo.d1  # the source branch is untouched
    assert md.snapshot_log[-1].snapshot_id == new.snapshot_id
    # Picking it again is refused: an ancestor was already picked from it.
    with pytest.raises(UsageError, match="already picked"):
        refs.cherry_pick(t, repo.d1)


def test_cherry_pick_an_ancestor_is_refused(repo):
    with pytest.raises(UsageError, match="already an ancestor"):
        refs.cherry_pick(repo.table, repo.s2)
    with pytest.raises(NotFoundError):
        refs.cherry_pick(repo.table, 12345)


def test_cherry_pick_fast_forward_moves_main_without_a_new_snapshot(repo):
    t = repo.commit(lambda t: refs.create_ref(t.table.metadata, "ff", ref_type="branch"))
    t = append_files(t, [repo.file(t, "f", [8])], branch="ff", timestamp_ms=repo.T0 + 4 * HOUR)
    f1 = t.metadata.refs["ff"].snapshot_id
    repo.table = t
    t = repo.commit(lambda t: refs.cherry_pick(t, f1))
    assert t.metadata.current_snapshot_id == f1
    assert len(t.metadata.snapshots) == 5  # s1 s2 d1 s3 f1: nothing new
    assert t.metadata.snapshot_log[-1].snapshot_id == f1
    assert refs.SOURCE_SNAPSHOT_ID not in t.metadata.current_snapshot.summary
    assert live_names(t) == ["a", "b", "e", "f"]


def _delete_on_dev(repo: Repo, op: str) -> int:
    t = repo.table
    dev_head = t.metadata.snapshot_by_id(repo.d1)
    entry = next(e for e in t.live_entries(dev_head) if e.data_file.file_path == repo.files["c"].file_path)
    t = commit_snapshot(t, SnapshotChange(op, removed=[(entry, entry.data_file)]), branch="dev",
                                timestamp_ms=repo.T0 + 5 * HOUR)
    repo.table = t
    return t.metadata.refs["dev"].snapshot_id


@pytest.mark.parametrize("op", ["delete", "overwrite"])
def test_cherry_pick_delete_or_overwrite_that_is_not_a_fast_forward_is_refused(repo, op):
    sid = _delete_on_dev(repo, op)
    before = repo.table.metadata
    with pytest.raises(UsageError, match="not append, dynamic overwrite, or fast-forward"):
        refs.cherry_pick(repo.table, sid)
    assert repo.table.refresh().metadata.current_snapshot_id == before.current_snapshot_id


def test_cherry_pick_delete_that_is_a_fast_forward_is_allowed(repo):
    # Move main to d1 first: then the delete on dev has main's head as parent.
    repo.commit(lambda t: refs.set_current_snapshot(t.table.metadata, repo.d1))
    sid = _delete_on_dev(repo, "delete")
    t = repo.commit(lambda t: refs.cherry_pick(t, sid))
    assert t.metadata.current_snapshot_id == sid and live_names(t) == ["a", "b"]


def test_cherry_pick_wap_snapshot_publishes_its_wap_id_once(repo):
    t = repo.table
    # A staged WAP snapshot: in the table, on no branch (here on branch "staging", parent none).
    t = commit_snapshot(t, SnapshotChange("append", added=[repo.file(t, "w", [9])], extra_summary={"wap.id": "job-1"}),
                        branch="staging", timestamp_ms=repo.T0 + 6 * HOUR)
    w1 = t.metadata.refs["staging"].snapshot_id
    assert t.metadata.snapshot_by_id(w1).parent_snapshot_id is None
    repo.table = t
    t = repo.commit(lambda t: refs.cherry_pick(t, w1))
    head = t.metadata.current_snapshot
    assert head.summary[refs.PUBLISHED_WAP_ID] == "job-1" and head.summary[refs.SOURCE_SNAPSHOT_ID] == str(w1)
    # Another snapshot with the same WAP id cannot be published again.
    t2 = commit_snapshot(t, SnapshotChange("append", added=[repo.file(t, "w2", [10])],
                                                   extra_summary={"wap.id": "job-1"}),
                                 branch="staging", timestamp_ms=repo.T0 + 7 * HOUR)
    w2 = t2.metadata.refs["staging"].snapshot_id
    with pytest.raises(UsageError, match="WAP id job-1 was already published"):
        refs.cherry_pick(t2, w2)


def test_cherry_pick_onto_another_branch(repo):
    t = repo.commit(lambda t: refs.cherry_pick(t, repo.s3, branch="dev"))
    dev = t.metadata.snapshot_by_id(t.metadata.refs["dev"].snapshot_id)
    assert dev.parent_snapshot_id == repo.d1 and dev.summary[refs.SOURCE_SNAPSHOT_ID] == str(repo.s3)
    assert t.metadata.current_snapshot_id == repo.s3  # main is untouched
    assert live_names(t, dev.snapshot_id) == ["a", "b", "c", "e"]


def _stage(repo: Repo, name: str, wap_id: str, parent_branch_at: int, ts: int) -> int:
    """A staged WAP append on its own branch, created at ``parent_branch_at``."""
    t = repo.commit(lambda t: refs.create_ref(t.table.metadata, name, ref_type="branch", snapshot_id=parent_branch_at))
    t = commit_snapshot(t, SnapshotChange("append", added=[repo.file(t, name, [ts % 1000])],
                                                  extra_summary={"wap.id": wap_id}), branch=name, timestamp_ms=ts)
    repo.table = t
    return t.metadata.refs[name].snapshot_id


def test_wap_id_published_by_a_fast_forward_blocks_a_second_publish(repo):
    """WapUtil.isWapIdPublished: an ancestor's own wap.id (a fast-forwarded staged snapshot)
    counts as published, not only published-wap-id."""
    w1 = _stage(repo, "stage1", "job-2", repo.s3, repo.T0 + 6 * HOUR)
    t = repo.commit(lambda t: refs.cherry_pick(t, w1))
    assert t.metadata.current_snapshot_id == w1  # fast-forward: w1 keeps wap.id, gains nothing
    assert refs.PUBLISHED_WAP_ID not in t.metadata.current_snapshot.summary
    w2 = _stage(repo, "stage2", "job-2", repo.s1, repo.T0 + 7 * HOUR)
    with pytest.raises(UsageError, match="WAP id job-2 was already published"):
        refs.cherry_pick(repo.table, w2)


def test_wap_check_runs_before_a_fast_forward(repo):
    """CherryPickOperation.cherrypick validates the WAP id of an append before it considers a
    fast-forward."""
    w1 = _stage(repo, "stage1", "job-3", repo.s1, repo.T0 + 6 * HOUR)
    t = repo.commit(lambda t: refs.cherry_pick(t, w1))
    assert t.metadata.current_snapshot.summary[refs.PUBLISHED_WAP_ID] == "job-3"
    w2 = _stage(repo, "stage2", "job-3", t.metadata.current_snapshot_id, repo.T0 + 7 * HOUR)
    with pytest.raises(UsageError, match="WAP id job-3 was already published"):
        refs.cherry_pick(repo.table, w2)
    # Without a WAP id the same shape is a plain fast-forward.
    w3 = _stage(repo, "stage3", "job-4", repo.table.metadata.current_snapshot_id, repo.T0 + 8 * HOUR)
    assert applied(repo.table.metadata, refs.cherry_pick(repo.table, w3)).current_snapshot_id == w3


def test_validate_only_writes_nothing(repo):
    mdir = os.path.join(repo.table.location, "metadata")
    before = sorted(os.listdir(mdir))
    assert refs.cherry_pick(repo.table, repo.d1, validate_only=True) is None
    assert sorted(os.listdir(mdir)) == before
    with pytest.raises(UsageError, match="already an ancestor"):
        refs.cherry_pick(repo.table, repo.s2, validate_only=True)
