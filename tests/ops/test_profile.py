"""``report``'s numbers (:mod:`icectl.ops.inspect.profile`) on the demo table, v2 (position delete
files) and v3 (deletion vectors): the histogram counts every live data file once, in the bin its size
falls in, against compact's bounds; the days add up to the snapshots' summaries; the partitions to
the live files ``files`` lists; the timeline holds every snapshot with its refs and branches. The
bins and the skew measure on their own at the edges."""
from __future__ import annotations

import pathlib
import time
from collections import Counter

import pytest

from icectl.catalog import CatalogConfig, build_catalog
from icectl.ops import demo
from icectl.ops.inspect.files import list_files
from icectl.ops.inspect.profile import SizeBin, partition_skew, profile_table, size_bins
from icectl.ops.maintain.compact import CompactOptions, file_size_bounds
from icectl.spec.temporal import millis_to_iso
from icectl.table.loaded import load_table


@pytest.fixture(scope="module", params=[2, 3], ids=["v2", "v3"])
def table(request, tmp_path_factory):
    root: pathlib.Path = tmp_path_factory.mktemp(f"profile-v{request.param}")
    catalog = build_catalog(CatalogConfig("default", {"type": "sql", "uri": f"sqlite:///{root}/catalog.db",
                                                      "warehouse": str(root / "wh")}))
    demo.build_demo(catalog, format_version=request.param, now_ms=int(time.time() * 1000))
    return load_table(catalog, ("demo", "events"))


def _in(b: SizeBin, size: int) -> bool:
    return b.lower <= size and (b.upper is None or size < b.upper)


def test_file_sizes_against_the_target(table):
    p = profile_table(table)
    fs = p.file_sizes
    target, lo, hi = file_size_bounds(table.metadata, CompactOptions())
    assert (fs.target_file_size, fs.min_file_size, fs.max_file_size) == (target, lo, hi)
    sizes = [r.file_size_in_bytes for r in list_files(table, content="data")]
    assert fs.data_files == len(sizes) == 14 and fs.data_bytes == sum(sizes)
    assert fs.small_files == sum(1 for s in sizes if s < lo) == 14  # the demo's files are tiny
    for b in fs.bins:
        assert b.files == sum(1 for s in sizes if _in(b, s)), b
        assert b.bytes == sum(s for s in sizes if _in(b, s)), b
    # contiguous, from the smallest file's power of 4 up to unbounded, compact's bounds as edges
    assert all(a.upper == b.lower for a, b in zip(fs.bins, fs.bins[1:]))
    assert fs.bins[0].lower <= min(sizes) and fs.bins[-1].upper is None
    assert [(b.lower, b.upper, b.kind) for b in fs.bins[-3:]] == [(lo, target, "target"), (target, hi, "over"),
                                                                   (hi, None, "large")]
    assert sorted(sizes)[len(sizes) // 2 - 1] <= fs.median_file_size <= sorted(sizes)[len(sizes) // 2]


def test_days_add_up_to_the_snapshot_summaries(table):
    p = profile_table(table)
    snaps = table.metadata.snapshots
    assert sum(d.snapshots for d in p.days) == len(snaps) == 11
    assert [d.day for d in p.days] == sorted({millis_to_iso(s.timestamp_ms)[:10] for s in snaps})
    assert sum(d.added_records for d in p.days) == sum(int(s.summary.get("added-records", 0)) for s in snaps)
    assert sum(d.added_bytes for d in p.days) == sum(int(s.summary.get("added-files-size", 0)) for s in snaps)
    assert sum((Counter(d.operations) for d in p.days), Counter()) == Counter(s.operation for s in snaps)


def test_partitions_hold_the_live_files(table):
    p = profile_table(table)
    rows = list(list_files(table))
    data = [r for r in rows if r.content == "data"]
    deletes = [r for r in rows if r.content != "data"]
    assert sum(x.data_files for x in p.partitions) == len(data)
    assert sum(x.records for x in p.partitions) == sum(r.record_count for r in data)
    assert sum(x.delete_files for x in p.partitions) == len(deletes) > 0
    assert sum(x.delete_records for x in p.partitions) == sum(r.record_count for r in deletes)
    assert [x.data_bytes for x in p.partitions] == sorted((x.data_bytes for x in p.partitions), reverse=True)
    assert all(x.partition.startswith("ts_day=") for x in p.partitions)
    assert p.partition_skew == partition_skew(x.data_bytes for x in p.partitions if x.data_files)


def test_timeline_has_every_snapshot_and_ref(table):
    p = profile_table(table)
    md = table.metadata
    assert [s.snapshot_id for s in p.timeline] == [s.snapshot_id for s in sorted(md.snapshots,
                                                                                  key=lambda s: s.timestamp_ms)]
    assert {(r.name, r.type, r.snapshot_id) for r in p.refs} == {
        (n, r.ref_type, r.snapshot_id) for n, r in md.all_refs.items()}
    by_id = {s.snapshot_id: s for s in p.timeline}
    for r in p.refs:
        assert r.name in by_id[r.snapshot_id].refs
    main = {s.snapshot_id for s in md.ancestors_of(md.all_refs["main"].snapshot_id)}
    assert {s.snapshot_id for s in p.timeline if "main" in s.branches} == main
    assert [s for s in p.timeline if not s.branches]  # the staged WAP snapshot: on no branch


def test_size_bins_at_the_edges():
    # a target under the smallest power of 4: one bin below the min-file-size
    assert [(b.lower, b.upper) for b in size_bins(1000, 750, 1800, 10)] == [(0, 750), (750, 1000), (1000, 1800),
                                                                           (1800, None)]
    # tiny files under a large target: at most MAX_SMALL_BINS powers of 4, then one bin from 0
    bins = size_bins(512 << 20, 384 << 20, 900 << 20, 1)
    small = [b for b in bins if b.kind == "small"]
    assert small[0].lower == 0 and len(small) == 11 and small[-1].upper == 384 << 20
    # the smallest file's power of 4 starts the scale
    assert size_bins(512 << 20, 384 << 20, 900 << 20, 5 << 20)[0].lower == 4 << 20


def test_partition_skew():
    assert partition_skew([]) is None and partition_skew([10]) is None
    assert partition_skew([10, 10, 40]) == 4.0
    assert partition_skew([0, 0, 5]) is None  # median 0
