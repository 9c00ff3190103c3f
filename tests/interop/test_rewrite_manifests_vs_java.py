"""``icectl rewrite-manifests`` against Iceberg Java's ``rewrite_manifests`` procedure on identical
copies of tables Java wrote: the same live entries (path, status, snapshot id, sequence numbers,
partition, v3 first_row_id), the same snapshot summary counts and row-id bookkeeping, manifest
counts within Java's rule (at most ceil(bytes / target) per content, no partition split across
manifests), and Spark reads icectl's result: the same rows (and v3 row lineage) as before."""
from __future__ import annotations

import os
import pathlib
import sys

import pytest

pytestmark = [pytest.mark.interop, pytest.mark.spark]

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import lifecycle_tables as L  # noqa: E402


def _build(spark, name: str, *, version: int, partitioned: bool = True, props: str = "") -> None:
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    part = "PARTITIONED BY (cat)" if partitioned else ""
    spark.sql(f"CREATE TABLE {name} (id bigint, cat string, qty int) USING iceberg {part} TBLPROPERTIES "
              f"('format-version'='{version}', 'write.delete.mode'='merge-on-read', "
              f"'write.update.mode'='merge-on-read'{props})")
    for i in range(6):  # one manifest per append; several partitions per file group
        rows = ", ".join(f"({i * 10 + k}, '{'abcd'[(i + k) % 4]}', {k})" for k in range(5))
        spark.sql(f"INSERT INTO {name} VALUES {rows}")
    spark.sql(f"DELETE FROM {name} WHERE id % 7 = 3")  # position deletes / deletion vectors
    spark.sql(f"DELETE FROM {name} WHERE id % 11 = 5")  # a second delete manifest
    if version >= 3:
        spark.sql(f"UPDATE {name} SET qty = qty + 100 WHERE id % 5 = 1")


def _state(location: str) -> dict:
    """The current snapshot as icectl reads it from the files: entries, manifests, summary."""
    from icectl.catalog.path import PathCatalog
    from icectl.io import FileIO
    from icectl.table.loaded import load_table

    pc = PathCatalog(location, FileIO({}))
    t = load_table(pc, pc.identifier())
    md = t.metadata
    snap = md.current_snapshot
    manifests = t.manifests(snap)
    entries = []
    partitions_per_manifest = []
    for m in manifests:
        es = t.read_entries(m, live_only=True)
        partitions_per_manifest.append((int(m.content), {e.data_file.partition for e in es}))
        for e in es:
            df = e.data_file
            entries.append((df.file_path, int(df.content), int(e.status), e.snapshot_id, e.sequence_number,
                            e.file_sequence_number, df.partition, df.first_row_id, df.record_count,
                            df.referenced_data_file, df.content_offset))
    return {"md": md, "snap": snap, "entries": sorted(entries, key=repr), "manifests": manifests,
            "partitions": partitions_per_manifest}


def _rows(spark, name: str, lineage: bool) -> list:
    cols = "id, cat, qty" + (", _row_id, _last_updated_sequence_number" if lineage else "")
    return [tuple(r) for r in spark.sql(f"SELECT {cols} FROM {name} ORDER BY id").collect()]


CASES = {
    "v2_partitioned": dict(version=2),
    "v3_partitioned": dict(version=3),
    "v2_unpartitioned": dict(version=2, partitioned=False),
    "v2_small_target": dict(version=2, props=", 'commit.manifest.target-size-bytes'='9000'"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_rewrite_manifests_matches_java(spark, oracle_warehouse, tmp_path, case):
    kw = CASES[case]
    name = f"hc.db.rm_{case}"
    _build(spark, name, **kw)
    location = os.path.join(str(oracle_warehouse), "db", f"rm_{case}")
    lineage = kw["version"] >= 3
    rows_before = _rows(spark, name, lineage)
    before = _state(location)
    backup = L.FolderBackup(location, str(tmp_path / "pristine"))

    java = spark.sql(f"CALL hc.system.rewrite_manifests('db.rm_{case}')").collect()[0]
    j = _state(location)
    backup.restore()

    r = L.icectl("--warehouse", str(oracle_warehouse), "-o", "json", "rewrite-manifests", f"db.rm_{case}", "--yes")
    doc = r.json
    i = _state(location)

    # the same manifests replaced, the same live entries, nothing else changed
    assert len(doc["rewritten_manifests"]) == java["rewritten_manifests_count"]
    assert doc["applied"] is True
    # Java 1.10.2 writes the rewritten entries without first_row_id (SparkDataFile does not carry
    # it; fixed after 1.10.2 by apache/iceberg#16699, "Fix first row ID carry over for manifest
    # rewrite"), so its readers give those rows new row ids. icectl keeps it, as the spec says
    # ("The inherited value must be written into the data file metadata for existing ... entries").
    without_row_ids = lambda s: sorted((e[:7] + e[8:] for e in s["entries"]), key=repr)  # noqa: E731
    assert without_row_ids(i) == without_row_ids(j)
    if not lineage:
        assert i["entries"] == j["entries"]
    live = lambda s: sorted((e[0], e[1], e[3], e[4], e[5], e[6], e[7]) for e in s["entries"])  # noqa: E731
    assert live(i) == live(before)  # the same files, sequence numbers and first_row_id as before
    rewritten_contents = {0 if g["content"] == "data" else 1 for g in doc["groups"] if g["rewrite"]}
    assert 0 in rewritten_contents
    # every rewritten entry is EXISTING (a delete file's content is 1 or 2)
    assert all(e[2] == 0 for e in i["entries"] if min(e[1], 1) in rewritten_contents)
    # the same snapshot bookkeeping
    for key in ("operation", "manifests-created", "manifests-kept", "manifests-replaced", "entries-processed",
                "total-records", "total-data-files", "total-delete-files", "total-position-deletes",
                "total-files-size", "changed-partition-count"):
        assert i["snap"].summary.get(key) == j["snap"].summary.get(key), key
    assert i["snap"].sequence_number == j["snap"].sequence_number
    assert (i["snap"].first_row_id, i["snap"].added_rows, i["md"].next_row_id) == \
        (j["snap"].first_row_id, j["snap"].added_rows, j["md"].next_row_id)
    # manifest counts within Java's rule: at most ceil(bytes / target) per content, one spec each,
    # and no partition in two manifests of one content (range clustering)
    for content in (0, 1):
        rewritten = [m for m in before["manifests"] if int(m.content) == content]
        if not rewritten:
            continue
        target = int(before["md"].properties.get("commit.manifest.target-size-bytes", 8 * 1024 * 1024))
        limit = -(-sum(m.manifest_length for m in rewritten) // target)
        for state in (i, j):
            ms = [m for m in state["manifests"] if int(m.content) == content]
            assert 1 <= len(ms) <= limit
            assert {m.partition_spec_id for m in ms} == {before["md"].default_spec_id}
            if kw.get("partitioned", True):
                seen = [p for c, parts in state["partitions"] if c == content for p in parts]
                assert len(seen) == len(set(seen)), "a partition spans two manifests"
        if case == "v2_small_target" and content == 0:
            assert len([m for m in i["manifests"] if int(m.content) == 0]) > 1
    # Spark reads icectl's table: the same rows, the same row lineage
    assert _rows(spark, name, lineage) == rows_before
    assert L.icectl("--warehouse", str(oracle_warehouse), "validate", f"db.rm_{case}", "--deep").code == 0


def test_nothing_to_do_when_one_manifest_fits(spark, oracle_warehouse):
    """One manifest of a content below the target: Java's action does nothing; so does icectl."""
    name = "hc.db.rm_single"
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(f"CREATE TABLE {name} (id bigint, cat string) USING iceberg PARTITIONED BY (cat) "
              "TBLPROPERTIES ('format-version'='2')")
    spark.sql(f"INSERT INTO {name} VALUES (1, 'a'), (2, 'b')")
    location = os.path.join(str(oracle_warehouse), "db", "rm_single")
    before = L.current_metadata_path(location)
    r = L.icectl("--warehouse", str(oracle_warehouse), "-o", "json", "rewrite-manifests", "db.rm_single", "--yes")
    assert r.json["applied"] is False and r.json["rewritten_manifests"] == []
    assert L.current_metadata_path(location) == before
    java = spark.sql("CALL hc.system.rewrite_manifests('db.rm_single')").collect()[0]
    assert java["rewritten_manifests_count"] == 0


def test_spec_id_rewrites_only_that_spec(spark, oracle_warehouse, tmp_path):
    name = "hc.db.rm_specs"
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(f"CREATE TABLE {name} (id bigint, cat string) USING iceberg PARTITIONED BY (cat) "
              "TBLPROPERTIES ('format-version'='2', 'commit.manifest-merge.enabled'='false')")
    for i in range(3):
        spark.sql(f"INSERT INTO {name} VALUES ({i}, 'a'), ({i + 10}, 'b')")
    spark.sql(f"ALTER TABLE {name} ADD PARTITION FIELD bucket(2, id)")
    for i in range(3):
        spark.sql(f"INSERT INTO {name} VALUES ({i + 20}, 'a')")
    location = os.path.join(str(oracle_warehouse), "db", "rm_specs")
    backup = L.FolderBackup(location, str(tmp_path / "pristine"))
    java = spark.sql("CALL hc.system.rewrite_manifests(table => 'db.rm_specs', spec_id => 0)").collect()[0]
    j = _state(location)
    backup.restore()
    r = L.icectl("--warehouse", str(oracle_warehouse), "-o", "json", "rewrite-manifests", "db.rm_specs",
                 "--spec-id", "0", "--yes")
    i = _state(location)
    assert len(r.json["rewritten_manifests"]) == java["rewritten_manifests_count"] == 3
    assert i["entries"] == j["entries"]
    assert sorted((m.partition_spec_id, m.existing_files_count) for m in i["manifests"]) == \
        sorted((m.partition_spec_id, m.existing_files_count) for m in j["manifests"])
    assert i["snap"].summary["manifests-kept"] == j["snap"].summary["manifests-kept"] == "3"
