"""Transaction: a lost compare-and-set removes the manifests its attempt wrote, and a
conflict that re-reading cannot fix is not retried."""
from __future__ import annotations

import os

import pytest

from icectl.catalog import CatalogConfig, build_catalog
from icectl.formats.manifest import DataFile
from icectl.ops.create import create_table
from icectl.table.snapshots import SnapshotChange, append_files, build_snapshot
from icectl.table.transaction import Transaction
from icectl.errors import ConflictingChangeError


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
