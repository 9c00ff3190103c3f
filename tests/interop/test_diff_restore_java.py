"""``icectl diff`` and ``icectl restore`` against Iceberg Java 1.10.2.

diff: on the tables Java wrote (v1, v2 with position and equality deletes, branches, tags, spec
evolution; v3 with deletion vectors; unpartitioned), for every pair of snapshots, the files added
and removed are exactly the difference of Spark's ``files`` metadata tables read at the two
snapshots (path, content, records, size, spec, partition values).

restore: a Java table in the shared JDBC catalog ``jc`` gets a bad commit (an overwrite that drops
a partition); icectl restores the earlier metadata file: Spark counts exactly the earlier rows, a
second restore undoes it, a third brings it back, and Java appends to the restored table (with a
sequence number above every earlier one). A restore to a state whose files Java's
``expire_snapshots`` deleted is refused (exit 3, the files listed) and changes nothing.
"""
from __future__ import annotations

import itertools
import json
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import lifecycle_tables as L  # noqa: E402

pytestmark = [pytest.mark.interop, pytest.mark.spark]

_n = itertools.count(1)


def _spark_files(spark, name: str, snapshot_id: int) -> dict[tuple, tuple]:
    df = spark.read.format("iceberg").option("snapshot-id", str(snapshot_id)).load(f"{name}.files")
    cols = set(df.columns)
    out = {}
    for r in df.collect():
        d = r.asDict(recursive=True)
        key = (L.norm(d["file_path"]), d.get("content_offset") if "content_offset" in cols else None)
        part = {k: (None if v is None else str(v)) for k, v in (d.get("partition") or {}).items()}
        out[key] = (int(d["content"]), d["record_count"], d["file_size_in_bytes"], d["spec_id"], part)
    return out


_CONTENT = {"data": 0, "position-deletes": 1, "deletion-vector": 1, "equality-deletes": 2}


def _icectl_files(files: list[dict]) -> dict[tuple, tuple]:
    return {(L.norm(f["file_path"]), f["content_offset"]): (_CONTENT[f["content"]], f["record_count"],
                                                            f["file_size_in_bytes"], f["spec_id"], f["partition"])
            for f in files}


def _same_partition(spark_part: dict, icectl_part: dict) -> bool:
    """Spark's struct is the union of every spec's fields: the file's own fields must match."""
    return all(spark_part.get(k) == (None if v is None else str(v)) for k, v in icectl_part.items())


@pytest.mark.parametrize("kind", ["v1", "v2", "v3", "v2_unpartitioned"])
def test_diff_equals_sparks_files_tables(request, spark, kind):
    jt = request.getfixturevalue(f"{kind}_table")
    ids = jt.snapshot_ids
    files = {sid: _spark_files(spark, jt.name, sid) for sid in ids}
    pairs = [(a, b) for a in ids for b in ids if a != b]
    assert len(pairs) >= 12
    for a, b in pairs:
        doc = L.icectl("-o", "json", "diff", jt.metadata_location, str(a), str(b)).json
        added, removed = _icectl_files(doc["added_files"]), _icectl_files(doc["removed_files"])
        want_added = {k: v for k, v in files[b].items() if k not in files[a]}
        want_removed = {k: v for k, v in files[a].items() if k not in files[b]}
        assert set(added) == set(want_added), (kind, a, b)
        assert set(removed) == set(want_removed), (kind, a, b)
        for got, want in ((added, want_added), (removed, want_removed)):
            for k, (content, records, size, spec, part) in got.items():
                w = want[k]
                assert (content, records, size, spec) == w[:4], (kind, a, b, k)
                assert _same_partition(w[4], part), (kind, k, w[4], part)
        t = doc["totals"]
        assert t["data_files_added"] == sum(1 for v in want_added.values() if v[0] == 0)
        assert t["delete_files_removed"] == sum(1 for v in want_removed.values() if v[0] != 0)
        assert t["records_added"] == sum(v[1] for v in want_added.values() if v[0] == 0)


def test_diff_of_refs_and_times_matches_spark_time_travel(spark, v2_table):
    jt = v2_table
    b1, t1 = jt.ref("b1").snapshot_id, jt.ref("t1").snapshot_id
    doc = L.icectl("-o", "json", "diff", jt.metadata_location, "t1", "b1").json
    want = {k for k in _spark_files(spark, jt.name, b1) if k not in _spark_files(spark, jt.name, t1)}
    assert set(_icectl_files(doc["added_files"])) == want and len(want) >= 1
    assert doc["a"]["kind"] == "ref" and doc["b"]["snapshot_id"] == b1
    # A time resolves to the snapshot Spark's TIMESTAMP AS OF reads.
    snap = jt.snapshots[2]
    side = L.icectl("-o", "json", "diff", jt.metadata_location, L.ms_to_iso(snap.committed_at_ms), "main").json["a"]
    as_of = spark.sql(f"SELECT count(*) FROM {jt.name} TIMESTAMP AS OF {L.ms_to_sql(snap.committed_at_ms)}").collect()
    assert side["snapshot_id"] == snap.snapshot_id and as_of[0][0] > 0
    # Schema and spec changes between the first and the last snapshot's metadata (Java evolved both).
    doc = L.icectl("-o", "json", "diff", jt.metadata_location, f"snapshot:{jt.snapshots[0].snapshot_id}",
                   "main", "--summary").json
    changes = {(c["name"], c["change"]) for c in doc["schema"]["changes"]}
    assert ("note", "added") in changes and ("payload", "renamed") in changes


# -- restore ---------------------------------------------------------------------------------------------

@pytest.fixture
def jc(spark, jdbc_catalog_db, jdbc_warehouse, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    spark.sql("CREATE NAMESPACE IF NOT EXISTS jc.db")
    return ["-c", "jc", "--uri", f"jdbc:sqlite:{jdbc_catalog_db}", "--warehouse", str(jdbc_warehouse)]


def _rows(spark, name: str) -> list[tuple]:
    return sorted(tuple(r) for r in spark.sql(f"SELECT id, cat FROM {name}").collect())


def _metadata_location(spark, name: str) -> str:
    return L.norm(L._jt(spark, name).operations().current().metadataFileLocation())


def _make(spark, version: int) -> str:
    name = f"jc.db.restore_{version}_{next(_n)}"
    spark.sql(f"CREATE TABLE {name} (id bigint, cat string) USING iceberg PARTITIONED BY (cat) "
              f"TBLPROPERTIES ('format-version'='{version}', {L.MOR})")
    spark.sql(f"INSERT INTO {name} SELECT id, element_at(array('a', 'b', 'c'), CAST(id % 3 + 1 AS INT)) "
              "FROM range(1, 31) AS r(id)")
    spark.sql(f"INSERT INTO {name} SELECT id, element_at(array('a', 'b', 'c'), CAST(id % 3 + 1 AS INT)) "
              "FROM range(31, 46) AS r(id)")
    spark.sql(f"DELETE FROM {name} WHERE id % 7 = 0")
    return name


@pytest.mark.parametrize("version", [2, 3])
def test_restore_after_a_bad_overwrite_spark_counts(spark, jc, version):
    name = _make(spark, version)
    ident = name.split(".", 1)[1]
    good_rows = _rows(spark, name)
    good = _metadata_location(spark, name)
    good_seq = spark.sql(f"SELECT max(sequence_number) FROM {name}.entries").collect()[0][0]
    # The bad commit: a static overwrite of the whole table without partition b.
    spark.sql(f"INSERT OVERWRITE {name} SELECT id, cat FROM {name} WHERE cat <> 'b'")
    bad_rows = _rows(spark, name)
    bad = _metadata_location(spark, name)
    assert {c for _, c in bad_rows} == {"a", "c"} and len(bad_rows) < len(good_rows)

    plan = L.icectl(*jc, "-o", "json", "restore", ident, "--to-metadata", good, "--dry-run").json
    b_rows = [r for r in good_rows if r[1] == "b"]
    assert plan["diff"]["totals"]["records_added"] >= len(b_rows) > 0  # b's files come back (rows: below)
    assert {p["partition"]["cat"] for p in plan["diff"]["partitions"]} >= {"b"}
    assert not plan["missing_files"] and plan["applied"] is False and _metadata_location(spark, name) == bad

    r = L.icectl(*jc, "-o", "json", "restore", ident, "--to-metadata", good, "--yes").json
    assert r["applied"] and L.norm(r["metadata_location"]) == bad
    assert _rows(spark, name) == good_rows
    # The second restore undoes the first; the third brings the good state back.
    L.icectl(*jc, "restore", ident, "--to-metadata", bad, "--yes")
    assert _rows(spark, name) == bad_rows
    L.icectl(*jc, "restore", ident, "--to-metadata", good, "--yes")
    assert _rows(spark, name) == good_rows
    # Java reads the restored table and appends to it: the new snapshot's sequence number is above
    # every earlier one (the bad overwrite's included), and the rows are the good ones plus the new.
    spark.sql(f"INSERT INTO {name} VALUES (1000, 'b'), (1001, 'd')")
    assert _rows(spark, name) == sorted(good_rows + [(1000, "b"), (1001, "d")])
    seqs = spark.sql(f"SELECT sequence_number FROM {name}.entries WHERE status = 1").collect()
    top = max(s[0] for s in seqs)
    assert top > good_seq + 1  # the overwrite used good_seq + 1
    md = json.loads(pathlib.Path(_metadata_location(spark, name)).read_text())
    assert bad in [L.norm(e["metadata-file"]) for e in md["metadata-log"]]
    if version >= 3:
        lineage = spark.sql(f"SELECT count(DISTINCT _row_id), count(*) FROM {name}").collect()[0]
        assert lineage[0] == lineage[1]  # row ids stay unique after the restore and the append


def test_restore_refused_when_java_expired_the_files(spark, jc):
    name = _make(spark, 2)
    ident = name.split(".", 1)[1]
    spark.sql(f"INSERT OVERWRITE {name} SELECT id, cat FROM {name} WHERE cat <> 'b'")
    old = [L.norm(r[0]) for r in spark.sql(f"SELECT file FROM {name}.metadata_log_entries ORDER BY timestamp")
           .collect()]
    target = old[-2]  # the state before the overwrite
    L.java_expire(spark, ident, catalog="jc", older_than_ms=L.now_ms() + 1000, retain_last=1)
    before = _metadata_location(spark, name)
    tree = L.tree(str(pathlib.Path(before).parent.parent))
    res = L.icectl(*jc, "-o", "json", "restore", ident, "--to-metadata", target, "--yes", expect=3)
    doc = res.json
    kinds = {m["kind"] for m in doc["missing_files"]}
    assert "manifest-list" in kinds or "data" in kinds, doc["missing_files"]
    assert doc["applied"] is False and doc["commits"] == []
    assert json.loads(res.stderr)["error"]["exit_code"] == 3
    assert _metadata_location(spark, name) == before
    assert L.tree(str(pathlib.Path(before).parent.parent)) == tree


def test_restore_adds_back_a_tag_head_java_expired_without_deleting_files(spark, jc):
    """Java's ExpireSnapshots with cleanExpiredFiles(false) removes a tagged snapshot from the
    metadata and keeps its files; restoring the metadata file that had the tag writes the metadata
    with that snapshot added back (its sequence number below last-sequence-number) and swaps the
    JDBC catalog's pointer: Spark reads the tag's rows again, and Java appends afterwards."""
    name = _make(spark, 2)
    ident = name.split(".", 1)[1]
    first = spark.sql(f"SELECT snapshot_id FROM {name}.snapshots ORDER BY committed_at LIMIT 1").collect()[0][0]
    spark.sql(f"ALTER TABLE {name} CREATE TAG t1 AS OF VERSION {first}")
    tag_rows = sorted(tuple(r) for r in spark.sql(f"SELECT id, cat FROM {name} VERSION AS OF 't1'").collect())
    with_tag = _metadata_location(spark, name)
    spark.sql(f"ALTER TABLE {name} DROP TAG t1")
    jt = L._jt(spark, name)
    jt.expireSnapshots().expireSnapshotId(first).cleanExpiredFiles(False).commit()
    assert first not in {r[0] for r in spark.sql(f"SELECT snapshot_id FROM {name}.snapshots").collect()}
    rows = _rows(spark, name)
    r = L.icectl(*jc, "-o", "json", "restore", ident, "--to-metadata", with_tag, "--yes").json
    assert r["applied"] and r["commits"][0]["updates"][0]["action"] == "add-snapshot"
    assert sorted(tuple(x) for x in spark.sql(f"SELECT id, cat FROM {name} VERSION AS OF 't1'").collect()) == tag_rows
    assert _rows(spark, name) == rows
    spark.sql(f"INSERT INTO {name} VALUES (2000, 'e')")
    assert _rows(spark, name) == sorted(rows + [(2000, "e")])
    refs = {row[0]: row[1] for row in spark.sql(f"SELECT name, snapshot_id FROM {name}.refs").collect()}
    assert refs["t1"] == first


# -- restore from a broken current metadata file (issue 25) ----------------------------------------------

def _damage(path: str, how: str, other: str) -> None:
    p = pathlib.Path(path)
    if how == "truncated":
        p.write_bytes(p.read_bytes()[:200])
    elif how == "emptied":
        p.write_bytes(b"")
    elif how == "other-table":
        p.write_bytes(pathlib.Path(other).read_bytes())
    elif how == "deleted":
        p.unlink()


@pytest.mark.parametrize("version", [2, 3])
def test_restore_from_a_broken_current_metadata_file_java_reads_the_rows(spark, jc, version):
    """Tables Java wrote (v2 merge-on-read: position deletes; v3: deletion vectors) in the JDBC
    catalog; a later append, then the current metadata file truncated, emptied, replaced by another
    table's file, deleted: restore --dry-run finds the file before the append and changes nothing;
    --yes moves the JDBC pointer (compare-and-set against the broken file); Spark reads exactly
    the rows of that version; validate is clean; Java appends afterwards."""
    other = _metadata_location(spark, _make(spark, version))
    for how in ("truncated", "emptied", "other-table", "deleted"):
        name = _make(spark, version)
        ident = name.split(".", 1)[1]
        if version == 2:
            assert spark.sql(f"SELECT count(*) FROM {name}.delete_files").collect()[0][0] > 0
        good_rows = _rows(spark, name)
        good = _metadata_location(spark, name)
        spark.sql(f"INSERT INTO {name} VALUES (500, 'a'), (501, 'z')")
        broken = _metadata_location(spark, name)
        _damage(broken, how, other)
        if how != "other-table":
            res = L.icectl(*jc, "describe", ident, expect=None)
            assert res.code in (3, 4) and f"icectl restore {ident} --dry-run" in res.stderr, (how, res.stderr)
        folder = pathlib.Path(broken).parent
        before = sorted((f.name, f.stat().st_size) for f in folder.iterdir())
        plan = L.icectl(*jc, "-o", "json", "restore", ident, "--dry-run").json
        assert plan["broken"], (how, plan)
        assert L.norm(plan["restore_from"]) == good, (how, plan["restore_from"], good)
        assert sorted((f.name, f.stat().st_size) for f in folder.iterdir()) == before  # nothing written
        done = L.icectl(*jc, "-o", "json", "restore", ident, "--yes").json
        assert done["applied"], (how, done)
        assert L.norm(_metadata_location(spark, name)) == L.norm(done["new_metadata_location"])
        spark.sql(f"REFRESH TABLE {name}")
        assert _rows(spark, name) == good_rows, how
        L.icectl(*jc, "validate", ident, "--deep")
        if how != "deleted":
            assert pathlib.Path(broken).exists()  # the broken file is kept
        spark.sql(f"INSERT INTO {name} VALUES (1000, 'b')")
        assert _rows(spark, name) == sorted(good_rows + [(1000, "b")]), how
