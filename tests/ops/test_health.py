"""The health checks agree with the planners of the commands that fix them: a finding appears
exactly when the command would change something (and passes the policy's threshold), and after the
command ran, it is gone. Engine level, real Parquet files in a SQLite catalog."""
from __future__ import annotations

import os
import pathlib
import sys
import time

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/ for validate_corpus
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from validate_corpus import tables  # noqa: E402

from icectl.errors import UsageError  # noqa: E402
from icectl.ops.maintain.health import check_table  # noqa: E402
from icectl.ops.maintain.policy import Policy, PolicyFile, load_policy_file  # noqa: E402
from icectl.table.transaction import commit

DAY = tables.day_of("2026-01-01")


@pytest.fixture
def catalog(tmp_path):
    return tables.make_catalog(str(tmp_path))


def _table(catalog, name="t", **kw):
    from helpers import create_table

    return create_table(catalog, ("db", name), schema_text="id:long!, name:string, ts:timestamptz",
                        partition_by="day(ts)", **kw)


def _append(t, n_files: int, *, day: int = 0, timestamp_ms=None):
    from helpers import append_files

    for i in range(n_files):
        t = append_files(t, [tables.write_data_file(t, [i], [f"n{i}"], DAY + day + (0 if day >= 0 else i))],
                         timestamp_ms=timestamp_ms)
    return t


def _steps(t, policy=Policy(), **kw):
    return check_table(t, policy, **kw).steps


def test_small_files_follow_compactions_min_input_files(catalog):
    from icectl.ops.maintain.compact import CompactOptions, plan_compaction

    t = _append(_table(catalog), 4)  # four small files in one partition: compact would not rewrite them
    assert not plan_compaction(t, CompactOptions()).groups
    assert _steps(t) == []
    t = _append(t, 1)  # the fifth: now it would
    assert plan_compaction(t, CompactOptions()).groups
    h = check_table(t, Policy())
    assert h.steps == ["compact"] and h.metrics.small_files == 5
    assert h.findings[0].command == ["compact", "db.t", "--yes"]
    assert _steps(t, Policy(compact_min_input_files=6)) == []  # the policy is the planner's option
    f = check_table(t, Policy(compact_min_input_files=6, small_files_critical=1)).findings
    assert f == []


def test_manifests_follow_rewrite_manifests_and_the_threshold(catalog):
    from icectl.ops.maintain.rewrite_manifests import apply_rewrite_manifests, plan_rewrite_manifests

    t = _append(_table(catalog), 9, day=-1)  # nine appends, a partition each: nine small manifests
    assert plan_rewrite_manifests(t).changes  # rewrite-manifests would merge them ...
    assert _steps(t) == []  # ... but nine is under min-small-manifests (10)
    t = _append(t, 1, day=20)
    h = check_table(t, Policy())
    assert h.steps == ["rewrite-manifests"] and h.metrics.small_manifests == 10
    apply_rewrite_manifests(t, plan_rewrite_manifests(t))
    t = t.refresh()
    assert _steps(t) == [] and check_table(t, Policy()).metrics.manifests == 1


def test_snapshots_follow_expire_and_gc_enabled(catalog):
    from icectl.ops.maintain.expire import ExpireOptions, apply_expiry

    now = int(time.time() * 1000)
    old = now - 10 * 86_400_000
    t = _append(_table(catalog, created_ms=old - 1000), 3, day=-1, timestamp_ms=old)
    h = check_table(t, Policy(), now_ms=now)
    assert h.steps == ["expire"] and h.metrics.expirable_snapshots == 2
    assert check_table(t, Policy(snapshots_critical=2), now_ms=now).status == "critical"
    from icectl.table.updates import SetProperties

    t = commit(t, [SetProperties({"gc.enabled": "false"})])
    h = check_table(t, Policy())
    assert h.findings[0].command == ["expire", "db.t", "--no-delete-files", "--yes"]
    apply_expiry(t, ExpireOptions(delete_files=False))
    assert _steps(t.refresh()) == []


def test_orphans_only_when_listed_and_old(catalog):
    t = _append(_table(catalog), 1)
    path = os.path.join(t.location, "data", "stray.parquet")
    with open(path, "wb") as f:
        f.write(b"x")
    assert _steps(t, orphans=True) == []  # too new: a writer may still commit it
    old = time.time() - 4 * 86400
    os.utime(path, (old, old))
    assert _steps(t) == []  # metadata only
    h = check_table(t, Policy(), orphans=True)
    assert h.steps == ["remove-orphans"] and h.metrics.orphan_files == 1
    assert _steps(t, Policy(orphans_older_than="5d"), orphans=True) == []
    h = check_table(t, Policy(orphans_older_than="1d"), orphans=True)
    assert h.findings[0].command == ["remove-orphans", "db.t", "--older-than", "1d", "--force", "--yes"]


def test_a_step_outside_the_policy_is_info(catalog):
    t = _append(_table(catalog), 5)
    h = check_table(t, Policy(steps=("expire",)))
    assert h.status == "healthy" and h.steps == [] and h.findings[0].severity == "info"
    h = check_table(t, Policy(enabled=False))
    assert h.status == "healthy" and "maintenance is disabled" in h.findings[0].message


def test_policy_sources_in_order(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("defaults: {min-small-manifests: 20, steps: 'expire,compact'}\n"
                    "tables:\n  'db.*': {min-small-manifests: 30}\n  db.t: {enabled: false}\n")
    pf = load_policy_file(str(path))
    props = {"icectl.maintain.min-small-manifests": "25", "icectl.maintain.delete-record-ratio": "0.2"}
    assert pf.policy_for("other.t", props).min_small_manifests == 25
    assert pf.policy_for("other.t", props).delete_record_ratio == 0.2
    assert pf.policy_for("other.t", props).steps == ("expire", "compact")
    assert pf.policy_for("db.u", props).min_small_manifests == 30
    assert pf.policy_for("db.t", {}).enabled is False and pf.policy_for("db.u", {}).enabled is True
    with pytest.raises(UsageError, match="icectl.maintain"):
        PolicyFile().policy_for("x.y", {"icectl.maintain.enabled": "maybe"})
    with pytest.raises(UsageError, match="unknown policy key 'nope'"):
        PolicyFile().policy_for("x.y", {"icectl.maintain.nope": "1"})


def test_statistics_behind_is_info_and_names_compute_stats(catalog):
    import datasketches

    from icectl.formats.puffin import PuffinBlob, read_puffin_footer, write_puffin
    from icectl.spec.metadata import StatisticsFile
    from icectl.table.updates import SetStatistics

    t = _append(_table(catalog), 1, day=-1)
    snap = t.metadata.current_snapshot
    sketch = datasketches.update_theta_sketch(seed=9001)
    sketch.update(0)
    blob = PuffinBlob("apache-datasketches-theta-v1", (1,), snap.snapshot_id, snap.sequence_number,
                      properties={"ndv": "1"})
    content, written = write_puffin([(blob, sketch.compact().serialize())])
    path = os.path.join(t.location, "metadata", f"{snap.snapshot_id}-stats.stats")
    with open(path, "wb") as f:
        f.write(content)
    raw = {"snapshot-id": snap.snapshot_id, "statistics-path": path, "file-size-in-bytes": len(content),
           "file-footer-size-in-bytes": read_puffin_footer(content).footer_size,
           "blob-metadata": [{"type": b.type, "snapshot-id": b.snapshot_id, "sequence-number": b.sequence_number,
                              "fields": list(b.fields), "properties": dict(b.properties)} for b in written]}
    t = commit(t, [SetStatistics(StatisticsFile(snap.snapshot_id, path, len(content), raw))])
    policy = Policy(min_small_manifests=100)
    h = check_table(t, policy)
    assert h.metrics.statistics_files == 1 and h.metrics.statistics_snapshots_behind == 0 and h.findings == []
    t = _append(t, 10, day=-1)  # ten snapshots later, a partition each
    h = check_table(t, policy)
    assert h.metrics.statistics_snapshots_behind == 10 and h.status == "healthy" and h.steps == []
    (f,) = [f for f in h.findings if f.check == "statistics"]
    assert f.severity == "info" and f.step is None and f.command == ["compute-stats", "db.t", "--yes"]


@pytest.mark.parametrize("deletes", [False, True], ids=["data-only", "with-deletes"])
def test_health_reads_the_heads_manifest_list_once(tmp_path, file_reads, deletes):
    """Every check asks for the head's manifest list (files by column, the compaction and manifest
    checks, rewrite-manifests' plan): on an object store each read is a request, so it is read once
    a run (Table.manifests keeps the last few lists it read, by path; those files never change)."""
    t = tables.build(str(tmp_path), 2, deletes=deletes).table
    t = _append(t, 5)
    listing = t.resolve(t.metadata.current_snapshot.manifest_list)
    h = check_table(t.refresh(), Policy())
    assert file_reads.count(listing) == 1, file_reads
    assert h.steps == ["compact"] and (h.metrics.data_files, h.metrics.delete_files) == (9, 2 if deletes else 0)
