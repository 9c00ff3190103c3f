"""`icectl remove-orphans` against Iceberg Java 1.10.2's remove_orphan_files.

A small partitioned table (Iceberg Java: appends, a position delete, a rolled-back append whose
files only a non-ancestor snapshot reaches, table statistics) has every file's modification time
set 10 days back, so that age does not hide a reachability mistake: only what no metadata reaches
may be listed. Orphans are planted in data/, in a partition folder, in a new nested folder, in
metadata/ and at the table root; hidden names (".x", "_x/") are skipped by Java and must be by
icectl. The folder is restored byte for byte before each test.
"""
from __future__ import annotations

import os
import time

import pytest

import lifecycle_tables as L

pytestmark = [pytest.mark.interop, pytest.mark.spark]

DAY = 86400
OLD = {  # relative path -> age in seconds
    "data/orphan-1.parquet": 10 * DAY,
    "data/category=a/orphan-2.parquet": 10 * DAY,
    "data/category=z/nested/orphan-3.parquet": 10 * DAY,
    "metadata/orphan-4.avro": 10 * DAY,
    "metadata/v99.metadata.json": 10 * DAY,
    "orphan-root.txt": 10 * DAY,
}
HIDDEN = {
    "data/.hidden-orphan.parquet": 10 * DAY,
    "data/_temporary/orphan-5.parquet": 10 * DAY,
    "metadata/.orphan-6.avro.crc": 10 * DAY,
}


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)


class Orphans:
    def __init__(self, t, backup):
        self.t = t
        self.backup = backup

    def restore(self) -> None:
        self.backup.restore()

    def plant(self, files: dict[str, float]) -> set[str]:
        now = time.time()
        out = set()
        for rel, age in files.items():
            p = os.path.join(self.t.location, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(b"not an iceberg file " + rel.encode())
            os.utime(p, (now - age, now - age))
            out.add(p)
        return out

    def rel(self, paths) -> list[str]:
        return sorted(os.path.relpath(L.norm(p), self.t.location) for p in paths)

    def icectl(self, *args: str, expect: int | None = 0) -> L.Result:
        return L.icectl("--warehouse", self.t.warehouse, "remove-orphans", self.t.identifier, *args, "-o", "json",
                        expect=expect)


@pytest.fixture(scope="module")
def orphans_table(spark, tmp_path_factory) -> Orphans:
    t = L.build_small_partitioned(spark, "hc.db.orphans_t")
    spark.sql(f"INSERT INTO {t.name} SELECT id, 'gone', 'c' FROM range(100, 105) AS r(id)")
    L._record(t, spark, "s4")
    spark.sql(f"CALL hc.system.rollback_to_snapshot('{t.identifier}', {t.snap['s3']}L)").collect()
    spark.sql(f"CALL hc.system.compute_table_stats(table => '{t.identifier}')").collect()
    L.set_tree_mtime(t.location, time.time() - 10 * DAY)
    work = str(tmp_path_factory.mktemp("orphans"))
    return Orphans(t, L.FolderBackup(t.location, os.path.join(work, "pristine")))


def _orphan_paths(d: dict) -> set[str]:
    return {L.norm(p if isinstance(p, str) else p["path"]) for p in d["orphan_files"]}


def _same(o: Orphans, ice, java, what="orphans") -> None:
    i, j = set(o.rel(ice)), set(o.rel(java))
    assert i == j, f"{what}: only icectl lists {sorted(i - j)}; only Iceberg Java lists {sorted(j - i)}"


def _deleted_paths(d: dict) -> set[str]:
    return {L.norm(p if isinstance(p, str) else p["path"]) for p in d["deleted_files"]}


def test_dry_run_finds_exactly_the_planted_orphans(spark, orphans_table):
    o = orphans_table
    o.restore()
    planted = o.plant(OLD)
    o.plant(HIDDEN)
    before = L.tree(o.t.location)

    java = L.java_orphans(spark, o.t.identifier)
    assert o.rel(java) == o.rel(planted), "Iceberg Java's premise changed"
    d = o.icectl("--dry-run").json
    _same(o, _orphan_paths(d), java)
    assert d["dry_run"] is True
    assert d["deleted_files"] == []
    assert L.tree(o.t.location) == before, "a dry run changed files"
    # files only the rolled-back snapshot s4 reaches, and the statistics file, are not orphans
    s4_files = {L.norm(r[0]) for r in spark.sql(
        f"SELECT file_path FROM {o.t.name}.all_data_files WHERE file_path LIKE '%category=c%'").collect()}
    assert s4_files and not (s4_files & _orphan_paths(d))


def test_remove_orphans_deletes_only_the_orphans(spark, orphans_table):
    o = orphans_table
    o.restore()
    rows = L.java_tables.read_rows(spark, o.t.name)[1]
    planted = o.plant(OLD)
    hidden = o.plant(HIDDEN)
    before = L.tree(o.t.location)

    d = o.icectl("--yes").json
    assert d["dry_run"] is False
    assert o.rel(_orphan_paths(d)) == o.rel(planted)
    assert o.rel(_deleted_paths(d)) == o.rel(planted)
    assert d["failed_deletes"] == []
    after = L.tree(o.t.location)
    assert o.rel(set(before) - set(after)) == o.rel(planted), "icectl deleted other files than the orphans"
    assert set(after) - set(before) == set(), "icectl wrote files"
    assert hidden <= set(after)
    assert L.missing_reachable(spark, o.t.name, o.t.location) == []
    assert L.java_tables.read_rows(spark, o.t.name)[1] == rows
    assert L.java_orphans(spark, o.t.identifier) == set(), "Iceberg Java still finds orphans"


def test_young_orphans_are_kept_unless_forced(spark, orphans_table):
    o = orphans_table
    o.restore()
    old = o.plant({"data/category=a/old-orphan.parquet": 10 * DAY})
    two_days = o.plant({"data/category=b/orphan-60h.parquet": 60 * 3600})
    o.plant({"data/category=b/orphan-now.parquet": 0})
    before = L.tree(o.t.location)

    # default --older-than 3d: only the 10-day-old orphan, as Java's default
    d = o.icectl("--dry-run").json
    assert o.rel(L.java_orphans(spark, o.t.identifier)) == o.rel(old)
    _same(o, _orphan_paths(d), old)

    # under 3 days needs --force: refused, nothing deleted
    for age in ("1h", "2d"):
        res = o.icectl("--older-than", age, "--yes", expect=None)
        assert res.code != 0, f"--older-than {age} without --force was accepted: {res.stdout}"
        assert L.tree(o.t.location) == before

    # with --force: the 60-hour-old orphan too (Java: older_than two days ago), not the new one
    d = o.icectl("--older-than", "2d", "--force", "--dry-run").json
    java = L.java_orphans(spark, o.t.identifier, older_than_ms=L.now_ms() - 2 * DAY * 1000)
    assert o.rel(java) == o.rel(old | two_days)
    _same(o, _orphan_paths(d), java)
    # an absolute timestamp works as well
    d = o.icectl("--older-than", str(L.now_ms() - 2 * DAY * 1000), "--force", "--dry-run").json
    _same(o, _orphan_paths(d), java)
    assert L.tree(o.t.location) == before


@pytest.mark.parametrize("folder", ["data/category=a", "metadata", "data/category=z"])
def test_location_limits_the_listing_like_java(spark, orphans_table, folder):
    o = orphans_table
    o.restore()
    o.plant(OLD)
    loc = os.path.join(o.t.location, folder)
    java = L.java_orphans(spark, o.t.identifier, location=loc)
    assert java, "the folder should hold an orphan"
    d = o.icectl("--location", loc, "--dry-run").json
    _same(o, _orphan_paths(d), java)


def test_metadata_files_dropped_from_the_log_are_orphans_like_java(spark, orphans_table):
    """With write.metadata.previous-versions-max=2 the oldest metadata JSON files leave the
    metadata log: Iceberg Java lists them as orphans; so must icectl, and no other."""
    o = orphans_table
    o.restore()
    spark.sql(f"ALTER TABLE {o.t.name} SET TBLPROPERTIES ('write.metadata.previous-versions-max'='2')")
    spark.sql(f"ALTER TABLE {o.t.name} SET TBLPROPERTIES ('k1'='v1')")
    spark.sql(f"ALTER TABLE {o.t.name} SET TBLPROPERTIES ('k2'='v2')")
    L.set_tree_mtime(o.t.location, time.time() - 10 * DAY)
    planted = o.plant(OLD)
    java = L.java_orphans(spark, o.t.identifier)
    dropped = java - planted
    assert dropped and all(p.endswith(".metadata.json") for p in dropped), o.rel(java)
    d = o.icectl("--dry-run").json
    _same(o, _orphan_paths(d), java)
