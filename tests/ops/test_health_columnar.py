"""``health`` adds up its data files by column (issue 26 item 4): listing.live_data_sizes and
compact.compaction_counts give what the per-file path (a scan task a file, plan_compaction) gives,
on tables of every format version, partition transforms of every kind (nulls, uuid, decimal,
binary, void), two partition specs (the older spec's files grouped together), sizes on each side of
the compaction bounds, partitions over max-file-group-size, manifests read entry by entry among
those polars reads, and the tables the columns leave to the per-file path (a NaN partition value,
delete files). And the snapshots check: expire's retention rules without the metadata build."""
from __future__ import annotations

import dataclasses
import uuid
from decimal import Decimal

import pytest

from helpers import append_files, create_table
from icectl.catalog import build_catalog, resolve_catalog_config
from icectl.formats.manifest import DataFile, FileContent, ManifestContent
from icectl.ops.evolve.alter import AlterRequest, commit_alter, plan_alter
from icectl.ops.maintain import health
from icectl.ops.maintain.compact import CompactionCounts, CompactOptions, compaction_counts, plan_compaction
from icectl.ops.maintain.health import check_table
from icectl.ops.maintain.policy import Policy
from icectl.table import listing
from icectl.table.listing import ColumnarUnavailable, live_data_sizes

NOW = 1_790_000_000_000
GIB = 1024 ** 3
TARGET = 1000  # write.target-file-size-bytes: min-file-size 750, max-file-size 1800
# each side of the bounds, and files so large that a partition of them is over max-file-group-size (100 GiB)
SIZES = (100, 749, 750, 999, 1000, 1800, 1801, 5000, 40 * GIB, 60 * GIB)
SCHEMA = "id:long!, s:string, ts:timestamp, d:date, u:uuid, dec:decimal(9,2), b:binary, fl:double"
DAY = 19723  # 2024-01-01


def _plain(i: int) -> tuple:
    """A value of ``s, bucket(4, id), day(ts)``; a few partitions that recur across manifests."""
    return (None if i % 7 == 3 else f"s{i % 3}", i % 4 if i % 5 else None, DAY + i % 2)


def _kinds(i: int) -> tuple:
    """A value of ``u, dec, b, month(d), year(ts), hour(ts), truncate(2, s), void(s)``."""
    if i % 6 == 5:
        return (None,) * 8
    return (uuid.UUID(int=i % 3 * 7919), Decimal(f"{i % 2}.{i % 100:02d}"), bytes([i % 3, 1]), 648 + i % 2, 54,
            473352 + i % 3, "ab"[: i % 3], None)


def _files(t, part, n: int, *, start: int, tag: str) -> list[DataFile]:
    return [DataFile(f"{t.location}/data/{tag}-{start + i}.parquet", "parquet", part(start + i), 10 + i,
                     SIZES[(start + i * 3) % len(SIZES)]) for i in range(n)]


def _fill(t, part, *, appends: int, per: int, tag: str = "f"):
    for a in range(appends):
        t = append_files(t, _files(t, part, per, start=a * per, tag=tag))
    return t


def _alter(t, **kw):
    return commit_alter(plan_alter(t, AlterRequest(**kw))).table


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    root = tmp_path_factory.mktemp("columnar")
    catalog = build_catalog(resolve_catalog_config(None, uri=f"sqlite:///{root}/catalog.db",
                                                   warehouse=str(root / "warehouse")))
    props = {"write.target-file-size-bytes": str(TARGET)}

    def make(name, partition_by, version=2):
        return create_table(catalog, ("db", name), schema_text=SCHEMA, partition_by=partition_by,
                            format_version=version, properties=props)

    out = {}
    for version in (1, 2, 3, 4):
        out[f"plain_v{version}"] = _fill(make(f"plain_v{version}", "s, bucket(4, id), day(ts)", version),
                                         _plain, appends=5, per=13)
    out["kinds"] = _fill(make("kinds", "u, dec, b, month(d), year(ts), hour(ts), truncate(2, s), void(s)"),
                         _kinds, appends=4, per=11)
    out["unpartitioned"] = _fill(make("unpartitioned", None), lambda i: (), appends=3, per=9)
    # a spec change: the first spec's files are grouped together, the new spec's by partition
    t = _fill(make("evolved", "s, bucket(4, id), day(ts)"), _plain, appends=3, per=13)
    t = _alter(t, add_partition_fields=["bucket(8, id)"])
    out["evolved"] = _fill(t, lambda i: (*_plain(i), i % 8), appends=3, per=13, tag="g")
    out["empty"] = make("empty", "day(ts)")
    t = make("nan", "fl")
    out["nan"] = _fill(t, lambda i: (float("nan") if i % 4 == 0 else float(i % 3),), appends=2, per=9)
    t = _fill(make("deletes", "s, bucket(4, id), day(ts)"), _plain, appends=2, per=13)
    out["deletes"] = append_files(t, [DataFile(f"{t.location}/data/eq-{i}.parquet", "parquet", _plain(i), 3, 700 + i,
                                               content=FileContent.EQUALITY_DELETES, equality_ids=[1])
                                      for i in range(4)])
    return out


def _per_file(t) -> list[tuple]:
    """(spec id, partition, size, records) of each live data file, read entry by entry."""
    return [(e.data_file.spec_id, e.data_file.partition, e.data_file.file_size_in_bytes, e.data_file.record_count)
            for e in t.live_entries(t.metadata.current_snapshot, with_stats=False, content=ManifestContent.DATA)]


def _by_column(sizes) -> list[tuple]:
    return [(*sizes.partitions[k], size, records) for k, size, records in
            sizes.frame.select("partition_key", "file_size_in_bytes", "record_count").iter_rows()]


@pytest.fixture(params=["polars", "mixed"])
def reader(request, monkeypatch):
    """polars reads every manifest, or about half of them are read entry by entry (by both paths):
    the manifests turned away."""
    turned_away: list[str] = []
    if request.param == "mixed":
        decoded = listing.decoded_manifest

        def some_unavailable(table, m):  # noqa: ANN001, ANN202
            if sum(m.manifest_path.encode()) % 2:
                turned_away.append(m.manifest_path)
                raise ColumnarUnavailable("turned off by the test")
            return decoded(table, m)

        monkeypatch.setattr(listing, "decoded_manifest", some_unavailable)
    return request.param, turned_away


COLUMNAR = ["plain_v1", "plain_v2", "plain_v3", "plain_v4", "kinds", "unpartitioned", "evolved"]


def test_live_data_sizes_are_the_files_read_entry_by_entry(tables, reader):
    for name in COLUMNAR:
        t = tables[name]
        sizes = live_data_sizes(t, t.metadata.current_snapshot)
        assert sizes is not None, name
        assert _by_column(sizes) == _per_file(t), name
        assert len(sizes.partitions) == len(set(sizes.partitions)), name  # each partition once
    mode, turned_away = reader
    assert bool(turned_away) == (mode == "mixed")
    t = tables["nan"]  # a NaN partition value: a partition of its own for each file, as the per-file path has it
    assert live_data_sizes(t, t.metadata.current_snapshot) is None


OPTIONS = [CompactOptions(), CompactOptions(min_input_files=1), CompactOptions(min_input_files=2),
           CompactOptions(min_input_files=3, max_file_group_size=2500), CompactOptions(max_file_group_size=1),
           CompactOptions(rewrite_all=True), CompactOptions(delete_file_threshold=0),
           CompactOptions(target_file_size=2000), CompactOptions(min_file_size=0, max_file_size=10 ** 12)]


def test_compaction_counts_are_plan_compactions(tables, reader):
    checked = 0
    for name in COLUMNAR:
        t = tables[name]
        sizes = live_data_sizes(t, t.metadata.current_snapshot)
        for opts in OPTIONS:
            plan = plan_compaction(t, opts)
            assert compaction_counts(t, opts, sizes) == CompactionCounts(len(plan.groups), plan.input_files), \
                (name, opts)
            checked += len(plan.groups)
    assert checked > 100


def _health(t, policy) -> dict:
    out = dataclasses.asdict(check_table(t, policy, now_ms=NOW))
    out["seconds"] = 0.0
    return out


@pytest.mark.parametrize("policy", [Policy(), Policy(compact_min_input_files=1), Policy(compact_min_input_files=3),
                                    Policy(compact_min_input_files=50, small_files_critical=5)])
def test_health_by_column_is_health_file_by_file(tables, reader, policy, monkeypatch):
    used = []

    def spy(table, snap):  # noqa: ANN001, ANN202
        used.append(live_data_sizes(table, snap))
        return used[-1]

    monkeypatch.setattr(health, "live_data_sizes", spy)
    by_column = {name: _health(t, policy) for name, t in tables.items()}
    assert sum(u is not None for u in used) == len(COLUMNAR)  # every table but empty, nan and deletes by column
    monkeypatch.setattr(health, "live_data_sizes", lambda table, snap: None)
    for name, t in tables.items():
        assert repr(by_column[name]) == repr(_health(t, policy)), name
    assert any(f["check"] == "data-files" for h in by_column.values() for f in h["findings"])
    assert by_column["evolved"]["metrics"]["partitions"] > 20


def test_the_snapshots_check_is_expires_plan(tmp_path):
    """health counts what expire's planner would expire (its retention rules, without building the
    metadata it would commit): the snapshots past the retention and the refs past their
    max-ref-age, on a table with branches and tags of every retention."""
    from icectl.ops.maintain.expire import ExpireOptions, plan_expiry
    from icectl.spec.metadata import SnapshotRef
    from icectl.table.transaction import commit
    from icectl.table.updates import SetProperties, SetSnapshotRef

    catalog = build_catalog(resolve_catalog_config(None, uri=f"sqlite:///{tmp_path}/catalog.db",
                                                   warehouse=str(tmp_path / "warehouse")))
    day = 86_400_000
    t = create_table(catalog, ("db", "refs"), schema_text=SCHEMA, partition_by="day(ts)", created_ms=NOW - 40 * day)
    for i in range(12):
        t = append_files(t, _files(t, lambda j: (DAY,), 1, start=i, tag="r"), timestamp_ms=NOW - (30 - 2 * i) * day)
    ids = t.metadata.snapshot_values("snapshot_id")
    refs = {"old-tag": SnapshotRef(ids[1], "tag", max_ref_age_ms=5 * day),
            "kept-tag": SnapshotRef(ids[2], "tag"),
            "young-tag": SnapshotRef(ids[10], "tag", max_ref_age_ms=20 * day),
            "old-branch": SnapshotRef(ids[3], "branch", max_ref_age_ms=day),
            "long-branch": SnapshotRef(ids[6], "branch", min_snapshots_to_keep=4, max_snapshot_age_ms=100 * day)}
    t = commit(t, [SetSnapshotRef(name, ref) for name, ref in refs.items()])
    # then no snapshot is past the retention, but refs are past their max-ref-age
    kept = commit(t, [SetProperties({"history.expire.max-snapshot-age-ms": str(1000 * day)})])
    seen = set()
    for t, now in [(t, NOW - 25 * day), (t, NOW - 5 * day), (t, NOW), (t, NOW + 30 * day), (kept, NOW)]:
        plan = plan_expiry(t, ExpireOptions(now_ms=now, delete_files=False))
        h = check_table(t, Policy(snapshots_critical=5), now_ms=now)
        assert h.metrics.expirable_snapshots == len(plan.expired_snapshot_ids)
        found = [f for f in h.findings if f.check == "snapshots"]
        assert bool(found) == plan.changes_metadata
        named = f"refs past their max-ref-age: {', '.join(plan.removed_refs)}"
        assert bool(found and named in found[0].message) == bool(plan.removed_refs)
        seen.add((len(plan.expired_snapshot_ids), tuple(plan.removed_refs)))
    assert len(seen) >= 4 and (0, ("old-branch", "old-tag")) in seen
