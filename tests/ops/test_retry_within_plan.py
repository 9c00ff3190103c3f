"""A retry never does more than the plan that was shown (issue 14, item 5): when the table moved
between the plan and the commit, an operation re-plans, and goes ahead only if the new plan does
what the shown one did (or less); otherwise it stops with a conflict that says what changed, and
commits and deletes nothing."""
from __future__ import annotations

import os

import pytest

from icectl.errors import ConflictingChangeError
from icectl.ops.recover import refs
from icectl.ops.maintain.expire import ExpireOptions, apply_expiry, plan_expiry
from helpers import append_files
from icectl.table.updates import SetSnapshotRef
from icectl.spec.metadata import SnapshotRef
from icectl.table.transaction import commit

from test_expire_files import DAY, History, catalog_on, data_file, listing  # noqa: E402  (tests/ops on sys.path)


@pytest.fixture
def h(tmp_path):
    return History(catalog_on(tmp_path))


def test_rollback_stops_when_an_append_landed_after_the_plan(h):
    t = h.table
    plan = refs.plan_ref_change(t, lambda cur: refs.rollback_to_snapshot(cur.metadata, h.s2))
    # Another writer appends after the plan was shown: rolling back now would discard it too.
    late = append_files(t.refresh(), [data_file(t, "late", [99])], timestamp_ms=h.T0 + 4 * DAY)
    with pytest.raises(ConflictingChangeError, match=r"1 more snapshots would leave main's history "
                                                     rf"\({late.metadata.current_snapshot_id}\)") as e:
        refs.commit_ref_change(plan)
    assert e.value.exit_code == 5
    assert t.refresh().metadata_location == late.metadata_location  # nothing committed


def test_rollback_goes_on_when_the_table_moved_elsewhere(h):
    t = h.table
    plan = refs.plan_ref_change(t, lambda cur: refs.rollback_to_snapshot(cur.metadata, h.s2))
    other = commit(t.refresh(), [SetSnapshotRef("audit", SnapshotRef(h.s1, "branch"))])  # not main's history
    done = refs.commit_ref_change(plan)
    assert done.attempts == 2 and done.table.metadata.current_snapshot_id == h.s2
    assert done.table.metadata.refs["audit"].snapshot_id == h.s1
    assert other.metadata_location in {e.metadata_file for e in done.table.metadata.metadata_log}


def test_branch_create_stops_when_its_target_moved(h):
    t = h.table
    plan = refs.plan_ref_change(t, lambda cur: refs.create_ref(cur.metadata, "b", ref_type="branch"))
    append_files(t.refresh(), [data_file(t, "late", [99])], timestamp_ms=h.T0 + 4 * DAY)
    # "create branch b at the current snapshot" now means another snapshot than the one shown.
    with pytest.raises(ConflictingChangeError, match="no longer the one shown"):
        refs.commit_ref_change(plan)
    assert "b" not in t.refresh().metadata.refs


def test_expire_stops_when_more_would_expire(h):
    t = h.table
    opts = ExpireOptions(retain_last=1, older_than_ms=h.T0 + 10 * DAY, now_ms=h.T0 + 10 * DAY)
    shown = plan_expiry(t, opts)
    assert h.s4 not in shown.expired_snapshot_ids  # the head is retained
    late = append_files(t.refresh(), [data_file(t, "late", [99])], timestamp_ms=h.T0 + 5 * DAY)
    before = listing(t.location)
    with pytest.raises(ConflictingChangeError, match=f"1 more snapshots would expire \\({h.s4}\\)"):
        apply_expiry(t, opts, approved=shown)
    assert listing(t.location) == before and t.refresh().metadata_location == late.metadata_location


def test_expire_goes_on_when_the_plan_is_the_same(h):
    t = h.table
    opts = h.options()
    shown = plan_expiry(t, opts)
    commit(t.refresh(), [SetSnapshotRef("audit", SnapshotRef(h.s4, "branch"))])  # changes nothing expire does
    result = apply_expiry(t, opts, approved=shown)
    assert result.committed.attempts == 2
    assert sorted(result.plan.expired_snapshot_ids) == sorted(shown.expired_snapshot_ids)
    assert {f.path for f in result.deleted} == {f.path for f in shown.files}
    assert not any(os.path.exists(f.path) for f in result.deleted)
