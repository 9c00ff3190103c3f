"""Transaction: a lost compare-and-set removes the manifests its attempt wrote, and a
conflict that re-reading cannot fix is not retried."""
from __future__ import annotations

import os

import pytest

from icectl.catalog import CatalogConfig, build_catalog
from icectl.formats.manifest import DataFile
from helpers import create_table
from icectl.table.snapshot_producer import SnapshotChange, build_snapshot
from helpers import append_files
from icectl.errors import CommitConflictError, CommitStateUnknownError, ConflictingChangeError
from icectl.spec.metadata import SnapshotRef
from icectl.table.transaction import RetryPolicy, Transaction
from icectl.table.updates import SetSnapshotRef


def _table(tmp_path):
    cat = build_catalog(CatalogConfig("t", {"type": "sql", "uri": f"sqlite:///{tmp_path}/c.db",
                                            "warehouse": str(tmp_path / "wh")}))
    return create_table(cat, ("db", "t"), schema_text="id:long!", format_version=2)


def _file(t, name):
    path = f"{t.location}/data/{name}.parquet"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(b"x")
    return DataFile(path, "parquet", (), 1, 1)


def _metadata_files(t):
    folder = f"{t.location}/metadata"
    return {os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".avro")}


def test_lost_attempt_removes_its_manifests(tmp_path):
    stale = _table(tmp_path)
    winner = append_files(stale.refresh(), [_file(stale, "w")])  # commits first
    before = _metadata_files(stale)
    attempts = []

    def build(txn):
        attempts.append(txn.table.metadata_location)
        return build_snapshot(txn, SnapshotChange("append", added=[_file(txn.table, f"a{len(attempts)}")]))

    final = Transaction(stale).commit(build).table
    assert len(attempts) == 2
    referenced = set()
    for s in final.metadata.snapshots:
        referenced.add(s.manifest_list)
        referenced |= {m.manifest_path for m in final.manifests(s)}
    # Every .avro file is either from before or referenced by the final metadata.
    assert _metadata_files(final) - before <= referenced
    assert winner.metadata.current_snapshot_id in {s.snapshot_id for s in final.metadata.snapshots}


def test_conflicting_change_is_not_retried(tmp_path):
    t = _table(tmp_path)
    calls = []

    def build(cur):
        calls.append(1)
        raise ConflictingChangeError("the change no longer applies")

    with pytest.raises(ConflictingChangeError):
        Transaction(t).commit(build).table
    assert len(calls) == 1


def test_retry_policy_is_read_from_the_commit_retry_properties():
    assert RetryPolicy.from_properties({}) == RetryPolicy(4, 100, 60_000, 1_800_000)  # Iceberg Java's defaults
    p = RetryPolicy.from_properties({"commit.retry.num-retries": "7", "commit.retry.min-wait-ms": "5",
                                     "commit.retry.max-wait-ms": "30", "commit.retry.total-timeout-ms": "1000"})
    assert p == RetryPolicy(7, 5, 30, 1000)
    assert [p.wait_ms(n) for n in range(4)] == [5, 10, 20, 30]
    assert p.may_retry(6, 999) and not p.may_retry(7, 0) and not p.may_retry(0, 1000)


def _lost_race(tmp_path):
    stale = _table(tmp_path)
    append_files(stale.refresh(), [_file(stale, "w")])
    return stale


def test_retries_stop_at_the_total_timeout(tmp_path):
    stale = _lost_race(tmp_path)
    calls = []

    def build(txn):
        calls.append(1)
        return build_snapshot(txn, SnapshotChange("append", added=[_file(txn.table, f"a{len(calls)}")]))

    with pytest.raises(CommitConflictError):
        Transaction(stale, policy=RetryPolicy(num_retries=50, min_wait_ms=1, max_wait_ms=1, total_timeout_ms=0)) \
            .commit(build)
    assert len(calls) == 1


def test_a_commit_without_a_plan_is_one_attempt_and_removes_its_files(tmp_path):
    stale = _lost_race(tmp_path)
    before = _metadata_files(stale)
    txn = Transaction(stale)
    txn.stage(build_snapshot(txn, SnapshotChange("append", added=[_file(stale, "a")])))
    assert len(txn.written) == 2  # its manifest and manifest list, registered by the snapshot writer
    with pytest.raises(CommitConflictError):
        txn.commit()
    assert _metadata_files(stale) == before


def test_an_unknown_outcome_removes_nothing(tmp_path):
    t = _table(tmp_path)
    real_commit = t.catalog.commit

    def commit_then_time_out(*args, **kwargs):
        real_commit(*args, **kwargs)
        raise CommitStateUnknownError("the answer never came")

    t.catalog.commit = commit_then_time_out
    txn = Transaction(t)
    with pytest.raises(CommitStateUnknownError):
        txn.commit(lambda tx: build_snapshot(tx, SnapshotChange("append", added=[_file(t, "a")])))
    assert len(txn.written) == 2 and all(os.path.exists(p) for p in txn.written)


def test_requirements_are_derived_once_each(tmp_path):
    t0 = _table(tmp_path)
    t = append_files(t0, [_file(t0, "a")])
    sid = t.metadata.current_snapshot_id
    txn = Transaction(t).stage([SetSnapshotRef("b", SnapshotRef(sid, "branch")),
                                SetSnapshotRef("b", SnapshotRef(sid, "branch"))])
    assert [r.to_json() for r in txn.requirements] == [
        {"type": "assert-table-uuid", "uuid": t.metadata.table_uuid},
        {"type": "assert-ref-snapshot-id", "ref": "b", "snapshot-id": None}]
    txn.require([txn.requirements[0], txn.requirements[0]])
    assert len(txn.requirements) == 1
