"""Snapshot expiry: the retention rules of Iceberg Java's RemoveSnapshots (spec: "Snapshot
Retention Policy") on hand-built metadata and a Hypothesis property over random snapshot DAGs
(no Java, no Spark; file cleanup on real tables is in test_expire_files.py).

The tests build ``TableMetadata`` directly and call :func:`compute_retention` /
:func:`plan_expiry` with ``ExpireOptions(now_ms=NOW)``.
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icectl.expr.partition import partition_spec
from icectl.expr.schema import parse_schema
from icectl.ops.maintain.expire import ExpireOptions, compute_retention, plan_expiry
from icectl.spec.metadata import (
    Snapshot,
    SnapshotLogEntry,
    SnapshotRef,
    StatisticsFile,
    TableMetadata,
)
from icectl.spec.partitioning import UNPARTITIONED, PartitionSpec
from icectl.table.loaded import Table
from icectl.spec.types import Schema
from icectl.errors import InvalidMetadataError, NotFoundError, UsageError
from icectl.io import FileIO

DAY = 86_400_000
NOW = 1_700_000_000_000
SCHEMA = parse_schema("id:long!, name:string")


# =============================================================================== pure retention

def snap(sid: int, ts: int, parent: int | None = None, *, schema_id: int | None = None) -> Snapshot:
    return Snapshot(sid, ts, parent, summary={"operation": "append"}, schema_id=schema_id)


def branch(sid: int, **kw) -> SnapshotRef:
    return SnapshotRef(sid, "branch", **kw)


def tag(sid: int, **kw) -> SnapshotRef:
    return SnapshotRef(sid, "tag", **kw)


def make_md(snapshots, refs=None, props=None, *, current: int | None = None, snapshot_log=None,
            schemas=None, current_schema_id: int = 0, specs=None, default_spec_id: int = 0,
            statistics=(), partition_statistics=()) -> TableMetadata:
    snapshots = tuple(snapshots)
    if current is None and snapshots:
        current = snapshots[-1].snapshot_id
    if refs is None:
        refs = {"main": branch(current)} if current is not None else {}
    if snapshot_log is None:
        snapshot_log = tuple(SnapshotLogEntry(s.timestamp_ms, s.snapshot_id) for s in snapshots)
    return TableMetadata(
        format_version=2, table_uuid="00000000-0000-0000-0000-000000000001", location="/nonexistent/t",
        last_updated_ms=max([s.timestamp_ms for s in snapshots] + [NOW - 100 * DAY]), last_column_id=2,
        schemas=tuple(schemas or (SCHEMA,)), current_schema_id=current_schema_id,
        partition_specs=tuple(specs or (UNPARTITIONED,)), default_spec_id=default_spec_id, last_partition_id=999,
        last_sequence_number=len(snapshots), properties=dict(props or {}), current_snapshot_id=current,
        snapshots=snapshots, snapshot_log=tuple(snapshot_log), refs=dict(refs),
        statistics=tuple(statistics), partition_statistics=tuple(partition_statistics),
    )


def retained_ids(md: TableMetadata, **opts) -> set[int]:
    return compute_retention(md, ExpireOptions(now_ms=NOW, **opts))[0]


def memory_table(md: TableMetadata) -> Table:
    """A Table over metadata whose snapshots have no manifest lists (nothing is ever read)."""
    return Table(("db", "t"), md, "/nonexistent/t/metadata/v1.metadata.json", None, FileIO())  # type: ignore[arg-type]


# A main branch of five snapshots, 10, 8, 6, 4 and 1 days old.
CHAIN = [snap(1, NOW - 10 * DAY), snap(2, NOW - 8 * DAY, 1), snap(3, NOW - 6 * DAY, 2), snap(4, NOW - 4 * DAY, 3),
         snap(5, NOW - 1 * DAY, 4)]


def test_defaults_keep_five_days_and_the_head():
    assert retained_ids(make_md(CHAIN)) == {4, 5}


def test_main_never_expires_even_when_older_than_max_ref_age():
    md = make_md([snap(1, NOW - 300 * DAY)], props={"history.expire.max-ref-age-ms": "1"})
    ids, refs, reasons = compute_retention(md, ExpireOptions(now_ms=NOW))
    assert ids == {1} and set(refs) == {"main"}
    assert reasons[1] == ["head of branch main", "within the first 1 of branch main"]


def test_main_is_implied_by_current_snapshot_when_refs_are_missing():
    md = make_md(CHAIN, refs={})  # as a v1 table without a refs map
    assert retained_ids(md) == {4, 5}
    assert "main" in compute_retention(md, ExpireOptions(now_ms=NOW))[1]


def test_table_properties_set_the_defaults():
    assert retained_ids(make_md(CHAIN, props={"history.expire.max-snapshot-age-ms": str(7 * DAY)})) == {3, 4, 5}
    assert retained_ids(make_md(CHAIN, props={"history.expire.min-snapshots-to-keep": "4"})) == {2, 3, 4, 5}


def test_bad_table_property_is_invalid_metadata():
    # issue 20: a bad table property is table metadata at fault (exit 4), no longer a usage error (2)
    with pytest.raises(InvalidMetadataError, match="history.expire.min-snapshots-to-keep='many'"):
        retained_ids(make_md(CHAIN, props={"history.expire.min-snapshots-to-keep": "many"}))


def test_per_ref_retention_overrides_table_properties():
    props = {"history.expire.max-snapshot-age-ms": str(30 * DAY), "history.expire.min-snapshots-to-keep": "5"}
    md = make_md(CHAIN, refs={"main": branch(5, max_snapshot_age_ms=2 * DAY, min_snapshots_to_keep=1)}, props=props)
    assert retained_ids(md) == {5}
    md = make_md(CHAIN, refs={"main": branch(5, min_snapshots_to_keep=3)},
                 props={"history.expire.max-snapshot-age-ms": str(DAY)})
    assert retained_ids(md) == {3, 4, 5}


def test_per_ref_retention_overrides_older_than_and_retain_last():
    """As RemoveSnapshots: a ref's own max-snapshot-age / min-snapshots-to-keep beat
    expireOlderThan / retainLast, which only replace the table-level defaults."""
    md = make_md(CHAIN, refs={"main": branch(5, max_snapshot_age_ms=7 * DAY)})
    assert retained_ids(md, older_than_ms=NOW) == {3, 4, 5}
    md = make_md(CHAIN, refs={"main": branch(5, min_snapshots_to_keep=1)})
    assert retained_ids(md, retain_last=4, older_than_ms=NOW) == {5}


def test_retain_last_and_older_than():
    md = make_md(CHAIN)
    assert retained_ids(md, retain_last=3, older_than_ms=NOW) == {3, 4, 5}
    assert retained_ids(md, retain_last=1, older_than_ms=NOW - 7 * DAY) == {3, 4, 5}
    assert retained_ids(md, older_than_ms=NOW - 6 * DAY) == {3, 4, 5}  # exactly at the cutoff is kept
    assert retained_ids(md, retain_last=10, older_than_ms=NOW) == {1, 2, 3, 4, 5}


def test_retain_last_below_one_is_refused():
    with pytest.raises(UsageError):
        plan_expiry(memory_table(make_md(CHAIN)), ExpireOptions(now_ms=NOW, retain_last=0, delete_files=False))


def test_min_keep_counts_young_snapshots_too():
    """``min-snapshots-to-keep`` counts every snapshot kept so far, young or not: with three young
    snapshots, min 2 adds nothing older."""
    md = make_md([snap(1, NOW - 9 * DAY), snap(2, NOW - 3 * DAY, 1), snap(3, NOW - 2 * DAY, 2), snap(4, NOW - DAY, 3)])
    assert retained_ids(md, retain_last=2) == {2, 3, 4}


def test_history_stops_at_the_first_old_snapshot_beyond_min_keep():
    """Ancestors are kept only while contiguous: a young snapshot behind an old one goes (timestamps
    need not be monotonic)."""
    md = make_md([snap(1, NOW - DAY), snap(2, NOW - 9 * DAY, 1), snap(3, NOW - DAY, 2)])
    assert retained_ids(md) == {3}
    assert 1 not in retained_ids(md)


def test_refs_older_than_max_ref_age_are_removed():
    refs = {"main": branch(5),
            "t_old": tag(1, max_ref_age_ms=5 * DAY),  # 10 days old: removed
            "t_young": tag(4, max_ref_age_ms=5 * DAY),  # 4 days: kept
            "t_edge": tag(3, max_ref_age_ms=6 * DAY),  # exactly 6 days: kept (age <= max)
            "b_table": branch(2),  # 8 days, table default 7 days: removed
            "b_own": branch(2, max_ref_age_ms=9 * DAY)}  # its own max beats the table's
    md = make_md(CHAIN, refs=refs, props={"history.expire.max-ref-age-ms": str(7 * DAY)})
    ids, kept_refs, _ = compute_retention(md, ExpireOptions(now_ms=NOW))
    assert set(kept_refs) == {"main", "t_young", "t_edge", "b_own"}
    assert 1 not in ids and {2, 3, 4, 5} <= ids
    plan = plan_expiry(memory_table(md), ExpireOptions(now_ms=NOW, delete_files=False))
    assert plan.removed_refs == ["b_table", "t_old"]
    assert set(plan.new_metadata.refs) == {"main", "t_young", "t_edge", "b_own"}


def test_ref_to_a_missing_snapshot_is_removed():
    md = make_md(CHAIN, refs={"main": branch(5), "ghost": branch(999), "ghost_tag": tag(998)})
    plan = plan_expiry(memory_table(md), ExpireOptions(now_ms=NOW, delete_files=False))
    assert plan.removed_refs == ["ghost", "ghost_tag"]
    assert set(plan.new_metadata.refs) == {"main"}


def test_tag_head_kept_but_not_its_history():
    md = make_md(CHAIN, refs={"main": branch(5), "v1": tag(2)})
    ids, _, reasons = compute_retention(md, ExpireOptions(now_ms=NOW))
    assert ids == {2, 4, 5}
    assert reasons[2] == ["head of tag v1"]


def test_branch_keeps_its_own_history():
    snaps = CHAIN + [snap(11, NOW - 7 * DAY, 2), snap(12, NOW - 6 * DAY, 11), snap(13, NOW - 5 * DAY, 12)]
    md = make_md(snaps, refs={"main": branch(5), "dev": branch(13, min_snapshots_to_keep=2)}, current=5)
    assert retained_ids(md) == {4, 5, 12, 13}
    md = make_md(snaps, refs={"main": branch(5), "dev": branch(13, max_snapshot_age_ms=20 * DAY)}, current=5)
    assert retained_ids(md) == {1, 2, 11, 12, 13, 4, 5}


def test_non_ancestor_snapshots_kept_only_while_younger_than_cutoff():
    # 6 and 7 hang off main's history (e.g. after a rollback) but no ref reaches them.
    snaps = CHAIN + [snap(6, NOW - 2 * DAY, 4), snap(7, NOW - 6 * DAY, 2), snap(8, NOW - 3 * DAY, 7)]
    md = make_md(snaps, current=5, refs={"main": branch(5)})
    ids, _, reasons = compute_retention(md, ExpireOptions(now_ms=NOW))
    assert ids == {4, 5, 6, 8}  # 8 is young though its parent 7 is not
    assert reasons[6][0].startswith("not in any branch's history, but younger than the cutoff")
    # Exactly at the cutoff is kept, as for ancestors (timestamp >= cutoff).
    md = make_md(CHAIN + [snap(6, NOW - 5 * DAY, 4)], current=5, refs={"main": branch(5)})
    assert retained_ids(md) == {4, 5, 6}
    assert retained_ids(md, older_than_ms=NOW - 5 * DAY + 1) == {4, 5}
    # A snapshot in some retained branch's history that is not kept by that branch is not "unreferenced".
    md = make_md(CHAIN + [snap(9, NOW - DAY, 2)], refs={"main": branch(5), "b": branch(9, min_snapshots_to_keep=1)})
    assert 3 not in retained_ids(md)


def test_explicit_snapshot_id_expires_even_a_young_snapshot():
    md = make_md(CHAIN)
    ids, _, reasons = compute_retention(md, ExpireOptions(now_ms=NOW, snapshot_ids=(4,)))
    assert ids == {5} and 4 not in reasons
    plan = plan_expiry(memory_table(md), ExpireOptions(now_ms=NOW, snapshot_ids=(4,), delete_files=False))
    assert plan.expired_snapshot_ids == [1, 2, 3, 4]


def test_explicit_snapshot_id_refused_while_a_ref_points_at_it():
    md = make_md(CHAIN, refs={"main": branch(5), "keep": tag(3)})
    with pytest.raises(UsageError, match="still referenced by refs \\['keep'\\]"):
        compute_retention(md, ExpireOptions(now_ms=NOW, snapshot_ids=(3,)))
    with pytest.raises(UsageError, match="main"):
        compute_retention(md, ExpireOptions(now_ms=NOW, snapshot_ids=(5,)))
    # A ref that is itself expiring does not protect its snapshot.
    md = make_md(CHAIN, refs={"main": branch(5), "old": tag(3, max_ref_age_ms=DAY)})
    assert 3 not in retained_ids(md, snapshot_ids=(3,))


def test_explicit_unknown_snapshot_id_is_not_found():
    with pytest.raises(NotFoundError, match="snapshot 42"):
        plan_expiry(memory_table(make_md(CHAIN)), ExpireOptions(now_ms=NOW, snapshot_ids=(42,), delete_files=False))


def test_clean_expired_metadata_drops_unused_schemas_and_specs_but_never_current():
    s0 = SCHEMA
    s1 = Schema(parse_schema("id:long!, name:string, x:int").fields, 1)
    s2 = Schema(parse_schema("id:long!, name:string, x:int, y:int").fields, 2)
    p0 = UNPARTITIONED
    p1 = PartitionSpec(1, partition_spec("id", s0).fields)
    p2 = PartitionSpec(2, partition_spec("bucket(4, id)", s0).fields)
    snaps = [snap(1, NOW - 10 * DAY, schema_id=0), snap(2, NOW - 2 * DAY, 1, schema_id=1),
             snap(3, NOW - DAY, 2, schema_id=1)]
    # Current schema 2 and default spec 1: used by no snapshot, yet never removed.
    md = make_md(snaps, schemas=(s0, s1, s2), current_schema_id=2, specs=(p0, p1, p2), default_spec_id=1)
    t = memory_table(md)
    plain = plan_expiry(t, ExpireOptions(now_ms=NOW, delete_files=False))
    assert plain.removed_schema_ids == [] and plain.removed_spec_ids == []
    assert [s.schema_id for s in plain.new_metadata.schemas] == [0, 1, 2]
    clean = plan_expiry(t, ExpireOptions(now_ms=NOW, delete_files=False, clean_expired_metadata=True))
    assert clean.expired_snapshot_ids == [1]
    assert clean.removed_schema_ids == [0]
    assert clean.removed_spec_ids == [0, 2]  # no retained snapshot has manifests: only the default stays
    assert [s.schema_id for s in clean.new_metadata.schemas] == [1, 2]
    assert [p.spec_id for p in clean.new_metadata.partition_specs] == [1]
    assert clean.new_metadata.current_schema_id == 2 and clean.new_metadata.default_spec_id == 1


def test_snapshot_log_removed_entry_drops_everything_before_it():
    log = [SnapshotLogEntry(NOW - 10 * DAY, 1), SnapshotLogEntry(NOW - 9 * DAY, 4), SnapshotLogEntry(NOW - 8 * DAY, 2),
           SnapshotLogEntry(NOW - 4 * DAY, 4), SnapshotLogEntry(NOW - DAY, 5)]
    md = make_md(CHAIN, snapshot_log=log)
    new = plan_expiry(memory_table(md), ExpireOptions(now_ms=NOW, delete_files=False)).new_metadata
    # 4 is kept, but its first entry precedes the removed 2, so it goes with everything before 2.
    assert [(e.timestamp_ms, e.snapshot_id) for e in new.snapshot_log] == [(NOW - 4 * DAY, 4), (NOW - DAY, 5)]
    md = make_md(CHAIN)
    new = plan_expiry(memory_table(md), ExpireOptions(now_ms=NOW, delete_files=False)).new_metadata
    assert [e.snapshot_id for e in new.snapshot_log] == [4, 5]


def test_statistics_of_removed_snapshots_are_dropped():
    stats = [StatisticsFile(1, "/nonexistent/t/metadata/s1.stats", 10), StatisticsFile(5, "/nonexistent/t/metadata/s5.stats", 11)]
    pstats = [StatisticsFile(2, "/nonexistent/t/metadata/p2.parquet", 12), StatisticsFile(4, "/nonexistent/t/metadata/p4.parquet", 13)]
    md = make_md(CHAIN, statistics=stats, partition_statistics=pstats)
    new = plan_expiry(memory_table(md), ExpireOptions(now_ms=NOW, delete_files=False)).new_metadata
    assert [s.snapshot_id for s in new.statistics] == [5]
    assert [s.snapshot_id for s in new.partition_statistics] == [4]
    assert [s.snapshot_id for s in new.snapshots] == [4, 5]
    assert new.current_snapshot_id == 5 and new.refs["main"].snapshot_id == 5


def test_explain_reasons():
    snaps = CHAIN + [snap(6, NOW - 2 * DAY, 3)]
    md = make_md(snaps, current=5, refs={"main": branch(5), "t": tag(1), "b": branch(3, min_snapshots_to_keep=2)})
    plan = plan_expiry(memory_table(md), ExpireOptions(now_ms=NOW, delete_files=False, retain_last=1))
    r = plan.reasons
    assert set(plan.retained_snapshot_ids) == set(r) == {1, 2, 3, 4, 5, 6}
    assert r[5] == ["head of branch main", "within the first 1 of branch main"]
    assert r[4] == [f"younger than the cutoff of branch main ({_iso(NOW - 5 * DAY)})"]
    assert r[1] == ["head of tag t"]
    assert r[3] == ["head of branch b", "within the first 2 of branch b"]
    assert r[2] == ["within the first 2 of branch b"]
    assert r[6] == [f"not in any branch's history, but younger than the cutoff ({_iso(NOW - 5 * DAY)})"]
    assert plan.expired_snapshot_ids == []


def _iso(ms: int) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc).isoformat(timespec="seconds")


def test_nothing_to_expire_changes_nothing():
    md = make_md(CHAIN[-2:])
    plan = plan_expiry(memory_table(md), ExpireOptions(now_ms=NOW, delete_files=False))
    assert not plan.changes_metadata and plan.expired_snapshot_ids == []


# =============================================================================== property test

@st.composite
def histories(draw):
    n = draw(st.integers(1, 12))
    ts = NOW - draw(st.integers(0, 25 * DAY))
    snaps: list[Snapshot] = []
    for i in range(n):
        sid = 100 + i
        if i == 0 or draw(st.integers(0, 9)) == 0:
            parent = draw(st.sampled_from([None, 99]))  # a root, or a parent that was expired before
        else:
            parent = 100 + draw(st.integers(0, i - 1))
        snaps.append(snap(sid, ts, parent))
        ts += draw(st.integers(0, 3 * DAY))
    ids = [s.snapshot_id for s in snaps]
    existing_or_missing = st.sampled_from(ids) | st.just(4242)
    maybe_ms = st.none() | st.integers(1, 20 * DAY)
    maybe_keep = st.none() | st.integers(1, 6)
    refs = {"main": branch(draw(st.sampled_from(ids)), max_snapshot_age_ms=draw(maybe_ms),
                           min_snapshots_to_keep=draw(maybe_keep))}
    for k in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            refs[f"b{k}"] = branch(draw(existing_or_missing), max_snapshot_age_ms=draw(maybe_ms),
                                   min_snapshots_to_keep=draw(maybe_keep), max_ref_age_ms=draw(maybe_ms))
        else:
            refs[f"t{k}"] = tag(draw(existing_or_missing), max_ref_age_ms=draw(maybe_ms))
    props = {}
    for key in ("history.expire.max-snapshot-age-ms", "history.expire.max-ref-age-ms"):
        v = draw(maybe_ms)
        if v is not None:
            props[key] = str(v)
    keep = draw(maybe_keep)
    if keep is not None:
        props["history.expire.min-snapshots-to-keep"] = str(keep)
    opts = ExpireOptions(now_ms=NOW, older_than_ms=draw(st.none() | st.integers(NOW - 25 * DAY, NOW)),
                         retain_last=draw(maybe_keep))
    return make_md(snaps, refs=refs, props=props, current=refs["main"].snapshot_id), opts


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_retention_properties(case):
    md, opts = case
    p = md.properties
    ids, kept_refs, reasons = compute_retention(md, opts)
    by_id = {s.snapshot_id: s for s in md.snapshots}
    default_cutoff = opts.older_than_ms if opts.older_than_ms is not None else \
        NOW - int(p.get("history.expire.max-snapshot-age-ms", 5 * DAY))
    default_min = opts.retain_last if opts.retain_last is not None else \
        int(p.get("history.expire.min-snapshots-to-keep", 1))
    default_ref_age = int(p.get("history.expire.max-ref-age-ms", 2**63 - 1))

    # Refs: main always kept; others kept exactly while their snapshot exists and is young enough.
    assert "main" in kept_refs
    for name, ref in md.refs.items():
        if name == "main":
            continue
        s = by_id.get(ref.snapshot_id)
        max_age = ref.max_ref_age_ms if ref.max_ref_age_ms is not None else default_ref_age
        assert (name in kept_refs) == (s is not None and NOW - s.timestamp_ms <= max_age), name

    # Every retained ref's head and main's head are retained; nothing unknown is.
    assert md.refs["main"].snapshot_id in ids
    for ref in kept_refs.values():
        assert ref.snapshot_id in ids
    assert ids <= set(by_id)
    assert set(reasons) == ids

    def ancestry(sid):
        return [s.snapshot_id for s in md.ancestors_of(sid)]

    # Every retained branch keeps at least min(min_keep, ancestry length) ancestors.
    branch_rules = []
    for name, ref in kept_refs.items():
        if not ref.is_branch:
            continue
        min_keep = ref.min_snapshots_to_keep if ref.min_snapshots_to_keep is not None else default_min
        cutoff = NOW - ref.max_snapshot_age_ms if ref.max_snapshot_age_ms is not None else default_cutoff
        line = ancestry(ref.snapshot_id)
        assert set(line[:min(min_keep, len(line))]) <= ids, name
        branch_rules.append((line, min_keep, cutoff))

    # Nothing retained is older than the cutoff unless a rule justifies it, and everything a rule
    # justifies is retained.
    heads = {r.snapshot_id for r in kept_refs.values()}
    in_branches = {sid for line, _, _ in branch_rules for sid in line}
    tag_heads = {r.snapshot_id for r in kept_refs.values() if not r.is_branch}

    def justified(sid: int) -> bool:
        if sid in heads:
            return True
        for line, min_keep, cutoff in branch_rules:
            if sid in line:
                i = line.index(sid)
                if all(j < min_keep or by_id[line[j]].timestamp_ms >= cutoff for j in range(i + 1)):
                    return True
        return (sid not in in_branches and sid not in tag_heads
                and by_id[sid].timestamp_ms >= default_cutoff)

    for sid in by_id:
        assert (sid in ids) == justified(sid), (sid, reasons.get(sid))
    for sid in ids:
        if by_id[sid].timestamp_ms < default_cutoff and sid not in heads:
            assert any(("within the first" in r) or ("younger than the cutoff of branch" in r) for r in reasons[sid])

    # The new metadata holds exactly the retained snapshots and refs, and a consistent log.
    new = plan_expiry(memory_table(md), ExpireOptions(**{**opts.__dict__, "delete_files": False})).new_metadata
    assert {s.snapshot_id for s in new.snapshots} == ids
    assert set(new.refs) == set(kept_refs)
    assert all(e.snapshot_id in ids for e in new.snapshot_log)
    assert new.current_snapshot_id == md.current_snapshot_id
