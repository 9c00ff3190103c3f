"""``icectl.ops.demo``: the demo table's exact history (snapshot ids from the fixed seed,
operations, counts per ref), rows read back from its files equal to the rows the generator
made, Iceberg metrics and field ids in its Parquet files, timestamps in the past and in order,
and refusals that write nothing (table exists, location not empty, bad arguments)."""
from __future__ import annotations

import datetime as dt
import os
import pathlib
import sys
import time

import pyarrow.parquet as pq
import pytest

from icectl.catalog import CatalogConfig, build_catalog
from icectl.ops import demo
from icectl.spec.conversions import from_bytes
from icectl.formats.manifest import FileContent
from icectl.table.loaded import load_table
from icectl.spec.types import PrimitiveType
from icectl.errors import AlreadyExistsError, NoSuchTableError, UsageError

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/ for demo_rows
from demo_rows import AGES_DAYS, OPERATIONS, RECORDS, S, SNAPSHOT_IDS, snapshot_rows  # noqa: E402

DAY = 86_400_000


def sql_catalog(root: pathlib.Path):
    root.mkdir(parents=True, exist_ok=True)
    return build_catalog(CatalogConfig("default", {"type": "sql", "uri": f"sqlite:///{root}/catalog.db",
                                                   "warehouse": str(root)}))


def listing(root) -> dict[str, tuple[int, int]]:
    return {os.path.join(d, f): (os.path.getsize(os.path.join(d, f)), os.stat(os.path.join(d, f)).st_mtime_ns)
            for d, _, fs in os.walk(root) for f in fs}


@pytest.fixture(scope="module", params=[2, 3], ids=["v2", "v3"])
def built(request, tmp_path_factory):
    catalog = sql_catalog(tmp_path_factory.mktemp(f"demo-v{request.param}") / "wh")
    now = int(time.time() * 1000)
    result = demo.build_demo(catalog, format_version=request.param, now_ms=now)
    return catalog, result, load_table(catalog, ("demo", "events")), now


def test_history_is_exact(built):
    _, r, t, now = built
    md = t.metadata
    assert r.table == "demo.events" and md.format_version == r.format_version
    assert [s.snapshot_id for s in r.snapshots] == SNAPSHOT_IDS
    assert sorted(s.snapshot_id for s in md.snapshots) == sorted(SNAPSHOT_IDS)
    assert [s.operation for s in r.snapshots] == OPERATIONS
    assert [md.snapshot_by_id(sid).operation for sid in SNAPSHOT_IDS] == OPERATIONS
    assert [s.records for s in r.snapshots] == RECORDS
    assert [s.timestamp_ms for s in r.snapshots] == [now - int(a * DAY) for a in AGES_DAYS]
    main_line = [s.snapshot_id for s in reversed(md.ancestors_of(md.current_snapshot_id))]
    assert main_line == SNAPSHOT_IDS[:9]
    assert md.snapshot_by_id(S["s10"]).parent_snapshot_id == S["s9"]
    assert md.snapshot_by_id(S["s11"]).parent_snapshot_id == S["s9"]
    assert [(x.name, x.type, x.snapshot_id, x.records) for x in r.refs] == [
        ("main", "branch", S["s9"], 664), ("audit", "branch", S["s10"], 684),
        ("before-overwrite", "tag", S["s8"], 668)]
    assert {n: (ref.ref_type, ref.snapshot_id) for n, ref in md.refs.items()} == {
        "main": ("branch", S["s9"]), "audit": ("branch", S["s10"]), "before-overwrite": ("tag", S["s8"])}
    assert [s.branch for s in r.snapshots] == ["main"] * 9 + ["audit", None]
    staged = md.snapshot_by_id(S["s11"])
    assert r.staged_snapshot_id == S["s11"] and staged.summary["wap.id"] == r.wap_id == demo.WAP_ID
    assert all(e.snapshot_id != S["s11"] for e in md.snapshot_log)
    assert r.records == 664 and r.data_files == 14
    assert r.delete_files == (3 if r.format_version == 2 else 4)
    assert r.schema_ids == [0, 1] and md.current_schema_id == 1
    assert [f.name for f in md.schema.fields] == list(demo.COLUMNS)
    # The new column came after s6 and before s7.
    assert [md.snapshot_by_id(sid).schema_id for sid in SNAPSHOT_IDS] == [0] * 6 + [1] * 5


def test_live_files_of_each_ref(built):
    _, r, t, _ = built
    md = t.metadata
    kinds = {}
    for name in ("main", "before-overwrite", "audit"):
        files = [f for _, f in t.live_files(md.snapshot_for_ref(name))]
        kinds[name] = sorted(f.kind for f in files)
    dv = "deletion-vector" if r.format_version == 3 else "position-deletes"
    deletes = 4 if r.format_version == 3 else 3
    assert kinds["main"] == ["data"] * 14 + [dv] * deletes
    assert kinds["before-overwrite"] == ["data"] * 17 + [dv] * deletes
    assert kinds["audit"] == ["data"] * 15 + [dv] * deletes
    main = [f for _, f in t.live_files(md.current_snapshot)]
    per_day: dict[str, int] = {}
    for f in main:
        if f.content == FileContent.DATA:
            day = str(dt.date(1970, 1, 1) + dt.timedelta(days=f.partition[0]))
            per_day[day] = per_day.get(day, 0) + 1
    assert per_day == {"2026-03-01": 6, "2026-03-02": 4, "2026-03-03": 1, "2026-03-04": 3}
    if r.format_version == 3:
        # The second delete of the first file's rows replaced its vector with a merged one.
        cards = sorted(f.record_count for f in main if f.is_deletion_vector)
        assert cards == [1, 2, 4, 5]


def test_rows_read_back_equal_the_generated_rows(built):
    _, r, t, _ = built
    assert sorted(r.rows_by_snapshot) == sorted(SNAPSHOT_IDS)
    for sid in SNAPSHOT_IDS:
        assert snapshot_rows(t, sid) == r.rows_by_snapshot[sid], f"snapshot {sid}"
    main = r.rows_by_snapshot[S["s9"]]
    assert len(main) == 664 and len({row[0] for row in main}) == 664
    assert not any(row[1] in (demo.BOT_USER, demo.QA_USER) for row in main)
    assert sum(1 for row in r.rows_by_snapshot[S["s8"]] if row[1] == demo.QA_USER) == 4
    # Files written before the new column read it as null; the restated day has it filled.
    by_day = {}
    for row in main:
        by_day.setdefault(row[4].date().isoformat(), set()).add(row[5] is None)
    assert by_day == {"2026-03-01": {True}, "2026-03-02": {True}, "2026-03-03": {False}, "2026-03-04": {False}}


def test_parquet_files_have_field_ids_and_iceberg_metrics(built):
    _, r, t, _ = built
    md = t.metadata
    string, long_ = PrimitiveType("string"), PrimitiveType("long")
    for f in (f for _, f in t.live_files(md.current_snapshot, with_stats=True) if f.content == FileContent.DATA):
        data = pq.read_table(f.file_path)
        assert [int(x.metadata[b"PARQUET:field_id"]) for x in data.schema] == list(range(1, data.num_columns + 1))
        assert f.record_count == data.num_rows and f.file_size_in_bytes == os.path.getsize(f.file_path)
        ids = data.column("id").to_pylist()
        assert from_bytes(long_, f.lower_bounds[1]) == min(ids) and from_bytes(long_, f.upper_bounds[1]) == max(ids)
        users = data.column("user_id").to_pylist()
        assert from_bytes(string, f.lower_bounds[2]) == min(users)
        assert f.value_counts[1] == data.num_rows and f.null_value_counts[1] == 0
        assert set(f.column_sizes) == set(range(1, data.num_columns + 1)) and all(f.column_sizes.values())
        assert f.split_offsets == [4]
        has_country = "country" in data.column_names
        assert (6 in f.value_counts) == has_country
        assert set(f.lower_bounds) == set(range(1, data.num_columns + 1))


def test_timestamps_are_in_the_past_and_in_order(built):
    _, r, t, now = built
    md = t.metadata
    assert md.last_updated_ms == now - DAY // 4 <= now
    log = [e.timestamp_ms for e in md.snapshot_log]
    assert log == sorted(log) and len(log) == 9 and log[-1] <= md.last_updated_ms
    meta = [e.timestamp_ms for e in md.metadata_log]
    assert meta == sorted(meta) and meta[0] == now - 15 * DAY and meta[-1] <= md.last_updated_ms
    assert len(md.metadata_log) == 14  # create, 9 main commits, new column, tag, branch, branch commit
    for s in md.snapshots:
        parent = md.snapshot_by_id(s.parent_snapshot_id)
        assert parent is None or parent.timestamp_ms < s.timestamp_ms
    old = [s for s in md.snapshots if s.timestamp_ms < now - 5 * DAY]
    assert sorted(s.snapshot_id for s in old) == sorted(SNAPSHOT_IDS[:6])


def test_orphan_is_old_and_referenced_by_nothing(built):
    _, r, t, now = built
    [orphan] = r.orphan_files
    assert r.orphan_age_days == 8 and orphan.startswith(r.location + "/data/")
    assert abs(os.stat(orphan).st_mtime * 1000 - (now - 8 * DAY)) < 1000
    referenced = {f.file_path for s in t.metadata.snapshots for _, f in t.live_files(s)}
    assert orphan not in referenced and pq.read_table(orphan).num_rows == 5


def test_same_seed_same_snapshots_and_rows(built, tmp_path):
    catalog, r, _, _ = built
    again = demo.build_demo(catalog, "demo_again", format_version=r.format_version)
    assert [s.snapshot_id for s in again.snapshots] == SNAPSHOT_IDS
    assert again.rows_by_snapshot == r.rows_by_snapshot
    assert again.location != r.location and again.table == "demo_again.events"


def test_second_build_refuses_and_changes_nothing(built):
    catalog, r, t, _ = built
    before = listing(os.path.dirname(r.location))
    with pytest.raises(AlreadyExistsError, match="demo.events already exists"):
        demo.build_demo(catalog, format_version=r.format_version)
    assert listing(os.path.dirname(r.location)) == before
    assert load_table(catalog, ("demo", "events")).metadata_location == t.metadata_location


def test_location_with_files_refuses_and_writes_nothing(tmp_path):
    catalog = sql_catalog(tmp_path / "wh")
    stale = tmp_path / "wh" / "demo" / "events" / "data" / "left-over.parquet"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"x")
    before = listing(tmp_path / "wh" / "demo")
    with pytest.raises(AlreadyExistsError, match="already holds files"):
        demo.build_demo(catalog)
    assert listing(tmp_path / "wh" / "demo") == before
    with pytest.raises(NoSuchTableError):
        catalog.load_metadata_location(("demo", "events"))


@pytest.mark.parametrize("namespace,version,message", [
    ("demo", 1, "format version 2 or 3"), ("demo", 4, "format version 2 or 3"),
    ("a..b", 2, "invalid namespace"), ("", 2, "invalid namespace")])
def test_bad_arguments_write_nothing(tmp_path, namespace, version, message):
    catalog = sql_catalog(tmp_path / "wh")
    with pytest.raises(UsageError, match=message):
        demo.build_demo(catalog, namespace, format_version=version)
    assert [p for p in listing(tmp_path / "wh") if not p.endswith("catalog.db")] == []


def test_file_system_catalog(tmp_path):
    catalog = build_catalog(CatalogConfig("lake", {"type": "hadoop", "warehouse": str(tmp_path / "lake")}))
    r = demo.build_demo(catalog, "db", format_version=3)
    t = load_table(catalog, ("db", "events"))
    assert t.metadata_location == r.metadata_location and r.metadata_location.endswith("v15.metadata.json")
    assert snapshot_rows(t, S["s11"]) == r.rows_by_snapshot[S["s11"]]
