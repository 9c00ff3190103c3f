"""``validate`` checks many manifests at once (issue 26: a neglected table's thousand manifests);
what it finds over a batch is what it finds manifest by manifest: the live-file index against a
path-by-path count, compacting many scans against compacting each, and the bounds of many
manifests (grouped by equal field types) against the bounds of each alone."""
from __future__ import annotations

import math
import random
import struct
from types import SimpleNamespace

import polars as pl
import pytest

from icectl.spec.types import PrimitiveType
from icectl.validate.bounds import check_bounds_frame
from icectl.validate.entries import same_types
from icectl.validate.manifests import ManifestScan, compact_scans
from icectl.validate.snapshots import LiveIndex


def _scan(name: str, paths: list[str]) -> ManifestScan:
    s = ManifestScan(name)
    n = len(paths)
    s.data_files = pl.DataFrame({"path": paths, "entry": list(range(n)), "records": [1] * n, "size": [1] * n,
                                 "format": ["parquet"] * n},
                                schema_overrides={"entry": pl.UInt32, "path": pl.String})
    return s


@pytest.mark.parametrize("seed", range(6))
def test_the_live_index_is_a_path_by_path_count(seed):
    """Which manifests list a path twice, and which pairs share one, from the sorted keys (some
    scans compacted, some not) as a path-by-path count says."""
    rng = random.Random(seed)
    for _ in range(60):
        pool = rng.randint(1, 25)
        lists = [[f"s3://b/t/data/{rng.randint(0, pool)}.parquet" for _ in range(rng.randint(0, 7))]
                 for _ in range(rng.randint(0, 10))]
        scans = [_scan(f"m{i}", paths) for i, paths in enumerate(lists)]
        for s in scans:
            if rng.random() < 0.5:
                s.compact(lambda: None)
        index = LiveIndex(scans)
        assert index.self_duplicates == {i for i, paths in enumerate(lists) if len(set(paths)) < len(paths)}
        pairs = {(a, b) for a in range(len(lists)) for b in range(a + 1, len(lists))
                 if set(lists[a]) & set(lists[b])}
        assert {(a, b) for a, bs in index.partners.items() for b in bs} == pairs
        members = set(rng.sample(range(len(lists)), rng.randint(0, len(lists))))
        listed = [p for i in sorted(members) for p in set(lists[i])]
        repeats = len(listed) != len(set(listed)) or bool(members & index.self_duplicates)
        assert index.may_repeat(members) == repeats


def test_compacting_many_scans_at_once_is_compacting_each():
    rng = random.Random(7)
    lists = [[f"/t/data/{rng.randint(0, 50)}.parquet" for _ in range(rng.randint(0, 9))] for _ in range(40)]
    each, batch = [_scan(f"m{i}", p) for i, p in enumerate(lists)], [_scan(f"m{i}", p) for i, p in enumerate(lists)]
    batch[3].data_files = None  # an unreadable manifest has no live files
    each[3].data_files = None
    reloads = [object() for _ in lists]
    for s, r in zip(each, reloads):
        s.compact(r)
    compact_scans(batch, reloads)
    for a, b, r in zip(each, batch, reloads):
        if a.data_files is None:
            assert b.data_files is None
            continue
        assert b.data_files.columns == ["key", "entry", "records", "size"]
        assert a.data_files.equals(b.data_files) and b.reload is r


class _Found:
    def __init__(self) -> None:
        self.items: list[tuple] = []

    def add(self, code, message, entry=None, severity=None, file=None) -> None:
        self.items.append((code, message, entry))


TYPES = {1: PrimitiveType("int"), 2: PrimitiveType("long"), 3: PrimitiveType("string"), 4: PrimitiveType("double"),
         5: PrimitiveType("binary"), 6: PrimitiveType("date"), 7: PrimitiveType("decimal(9, 2)"),
         8: PrimitiveType("float"), 9: PrimitiveType("uuid")}


def _bound(rng: random.Random, k: int) -> bytes:
    """A value of field ``k`` in Appendix D's form, or now and then one that is not."""
    odd = rng.random()
    if odd < 0.04:
        return bytes(rng.randrange(256) for _ in range(rng.choice((0, 1, 3, 5, 7, 9))))  # wrong length
    t = TYPES.get(k)
    if t is None or t.base in ("int", "date"):
        return struct.pack("<i", rng.randint(-50, 50))
    if t.base == "long":
        return struct.pack("<q", rng.randint(-50, 50)) if odd > 0.1 else struct.pack("<i", rng.randint(-50, 50))
    if t.base in ("double", "float"):
        x = math.nan if odd < 0.07 else rng.uniform(-5, 5)
        return struct.pack("<d" if t.base == "double" else "<f", x)
    if t.base == "string":
        return b"\xff\xfe" if odd < 0.07 else rng.choice(["a", "b", "zz", "é", ""]).encode()
    if t.base == "decimal":
        return rng.randint(-500, 500).to_bytes(2, "big", signed=True)
    if t.base == "uuid":
        return bytes(rng.randrange(256) for _ in range(16))
    return bytes(rng.randrange(256) for _ in range(rng.randint(0, 4)))


@pytest.mark.parametrize("seed", range(8))
def test_bounds_of_many_manifests_find_what_each_alone_finds(seed):
    """Manifests whose field types are equal have their bounds checked in one pass (their types
    dicts are distinct objects): the findings of each manifest are those of checking it alone,
    with broken values of every kind (lengths, NaN, order, UTF-8, a field in no schema)."""
    rng = random.Random(seed)
    rows = []
    for m in range(rng.randint(3, 12)):
        for n in range(rng.choice((0, 10, 30))):
            keys = sorted(rng.sample([1, 2, 3, 4, 5, 6, 7, 8, 9, 99], rng.randint(0, 5)))
            lo = [{"key": k, "value": _bound(rng, k)} for k in keys]
            hi = [{"key": k, "value": _bound(rng, k)} for k in keys if rng.random() < 0.95]
            rows.append({"m": m, "n": n, "lower_bounds": lo or None, "upper_bounds": hi or None})
    bound = pl.List(pl.Struct({"key": pl.Int64, "value": pl.Binary}))
    schema = {"m": pl.UInt32, "n": pl.UInt32, "lower_bounds": bound, "upper_bounds": bound}
    frame = pl.DataFrame(rows, schema=schema)
    ms = sorted(set(frame.get_column("m").to_list()))
    pending = [SimpleNamespace(types=dict(TYPES)) for _ in range(max(ms, default=-1) + 1)]
    assert same_types(pending) == [list(range(len(pending)))]  # equal dicts: one group
    together = [_Found() for _ in pending]
    check_bounds_frame(frame, pending[0].types, together)
    for m in ms:
        alone = [_Found() for _ in pending]
        check_bounds_frame(frame.filter(pl.col("m") == m), pending[m].types, alone)
        assert together[m].items == alone[m].items
    assert any(f.items for f in together)  # the broken values are found


def test_manifests_of_other_field_types_are_grouped_apart():
    a, b = {1: PrimitiveType("int")}, {1: PrimitiveType("long")}
    pending = [SimpleNamespace(types=t) for t in (a, b, dict(a), a, dict(b))]
    assert same_types(pending) == [[0, 2, 3], [1, 4]]
