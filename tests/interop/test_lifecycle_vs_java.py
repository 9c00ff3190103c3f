"""`icectl expire / rollback / cherry-pick / branch / tag` against Iceberg Java 1.10.2.

Each case starts from one table state, saved byte for byte (lifecycle_tables.FolderBackup): icectl
runs on it, its result is recorded, the folder is restored exactly, Iceberg Java runs the matching
procedure (expire_snapshots, rollback_to_snapshot, ...) and the two results must agree: retained
snapshots, refs, snapshot log, statistics, schemas and specs, and the set of files deleted from
disk (Hadoop's .crc checksum files aside). After icectl's run Spark must still read the same rows
on every surviving ref, and every file the table reaches must exist.

The tables (see lifecycle_tables' docstring) are built once per module by Iceberg Java, with real
commit times; cut-offs fall between commits (or exactly on one, to pin the boundary rules).
"""
from __future__ import annotations

import os

import pytest

import lifecycle_tables as L

pytestmark = [pytest.mark.interop, pytest.mark.spark]

# summary keys the engine adds that say nothing about the change
VOLATILE_SUMMARY = {"engine-version", "app-id", "engine-name", "iceberg-version", "spark.app.id", "icectl-version"}


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)


class Built:
    def __init__(self, table: L.LifecycleTable, backup: L.FolderBackup, work: str):
        self.t = table
        self.pristine = backup
        self.work = work


def _build(spark, tmp_path_factory, builder, name) -> Built:
    t = builder(spark, name)
    work = str(tmp_path_factory.mktemp(name.split(".")[-1]))
    return Built(t, L.FolderBackup(t.location, os.path.join(work, "pristine")), work)


@pytest.fixture(scope="module")
def lc_v2(spark, tmp_path_factory) -> Built:
    return _build(spark, tmp_path_factory, L.build_lifecycle_v2, "hc.db.lifecycle_v2")


@pytest.fixture(scope="module")
def lc_v3(spark, tmp_path_factory) -> Built:
    return _build(spark, tmp_path_factory, L.build_lifecycle_v3, "hc.db.lifecycle_v3")


@pytest.fixture(scope="module")
def lc_v1(spark, tmp_path_factory) -> Built:
    return _build(spark, tmp_path_factory, L.build_lifecycle_v1, "hc.db.lifecycle_v1")


def _rel(t: L.LifecycleTable, paths) -> list[str]:
    return sorted(os.path.relpath(L.norm(p), t.location) for p in paths)


def _changed_in_place(before: dict, after: dict) -> list[str]:
    """Files present before and after whose bytes changed (version-hint.text is rewritten by design)."""
    return sorted(p for p in set(before) & set(after)
                  if before[p] != after[p] and os.path.basename(p) != "version-hint.text")


def _labelled_state(t: L.LifecycleTable, st: dict, new_id: int | None = None) -> dict:
    """state() with snapshot ids shown as the builder's labels (and `new_id` as "NEW"), for
    readable diffs."""
    def lab(i):
        return "NEW" if new_id is not None and i == new_id else t.label(i)

    out = dict(st)
    out["current_snapshot_id"] = lab(st["current_snapshot_id"]) if st["current_snapshot_id"] else None
    out["snapshot_ids"] = sorted(lab(i) for i in st["snapshot_ids"])
    out["snapshot_log"] = [lab(i) for i in st["snapshot_log"]]
    out["statistics"] = sorted(lab(i) for i in st["statistics"])
    out["partition_statistics"] = sorted(lab(i) for i in st["partition_statistics"])
    out["refs"] = {k: {**v, "snapshot-id": lab(v["snapshot-id"])} for k, v in st["refs"].items()}
    return out


# --------------------------------------------------------------------------- expire


def _drop_refs_and_add_unused_spec(spark, t):
    """For clean_expired_metadata: no ref keeps an old snapshot (so schema 0 and s2's statistics
    files can go), and spec 2 exists but no snapshot uses it."""
    spark.sql(f"ALTER TABLE {t.name} DROP TAG t_keep")
    spark.sql(f"ALTER TABLE {t.name} DROP BRANCH b")
    spark.sql(f"ALTER TABLE {t.name} ADD PARTITION FIELD truncate(2, data)")
    spark.sql(f"ALTER TABLE {t.name} DROP PARTITION FIELD truncate(2, data)")


def _ref_retention(spark, t):
    """Branch b's max-ref-age becomes 1 ms (the ref is dropped, then its own commits expire);
    new branch b_long at s3 keeps every ancestor younger than 7 days (max-snapshot-age)."""
    jt = L._jt(spark, t.name)
    jt.manageSnapshots().setMaxRefAgeMs("b", 1).commit()
    jt = L._jt(spark, t.name)
    (jt.manageSnapshots().createBranch("b_long", t.snap["s3"])
       .setMaxSnapshotAgeMs("b_long", 7 * L.DAY_MS).setMinSnapshotsToKeep("b_long", 1).commit())


def _remove_delete_files(spark, t):
    """No ref keeps old snapshots, and a RowDelta (Java API) removes every position and equality
    delete file from main: once the old snapshots expire, the delete files are unreachable."""
    spark.sql(f"ALTER TABLE {t.name} DROP TAG t_keep")
    spark.sql(f"ALTER TABLE {t.name} DROP BRANCH b")
    jt = L._jt(spark, t.name)
    rd = jt.newRowDelta()
    for label in ("s3", "s4"):
        for f in jt.snapshot(t.snap[label]).addedDeleteFiles(jt.io()):
            rd = rd.removeDeletes(f)
    rd.commit()


def _table_defaults(spark, t):
    """Retention from table properties only: every snapshot is past max-snapshot-age, branches
    keep 3, refs without their own max-ref-age expire (tag t_plain)."""
    spark.sql(f"ALTER TABLE {t.name} SET TBLPROPERTIES ('history.expire.max-snapshot-age-ms'='1', "
              f"'history.expire.min-snapshots-to-keep'='3', 'history.expire.max-ref-age-ms'='1')")
    spark.sql(f"ALTER TABLE {t.name} CREATE TAG t_plain AS OF VERSION {t.snap['s7']}")


def expired(t, before, after) -> list[str]:
    return t.labels(set(before["snapshot_ids"]) - set(after["snapshot_ids"]))


def expect_expired(*labels, refs_removed=("t_old",), deleted_contains=(), not_deleted=()):
    def check(t, before, after, deleted):
        assert expired(t, before, after) == sorted(labels), "the case's premise about Java changed"
        assert sorted(set(before["refs"]) - set(after["refs"])) == sorted(refs_removed)
        for pat in deleted_contains:
            assert any(pat in p for p in deleted), f"Java should delete a {pat} file: {sorted(deleted)}"
        for pat in not_deleted:
            assert not any(pat in p for p in deleted), f"Java should delete no {pat} file"
    return check


class Case:
    def __init__(self, id, ice=None, java=None, prepare=None, java_fails=False, expect=None):
        self.id = id
        self.ice = ice or (lambda t: [])  # callable(t) -> list of icectl expire options
        self.java = java or (lambda t: {})  # callable(t) -> java_expire kwargs
        self.prepare = prepare
        self.java_fails = java_fails
        self.expect = expect  # callable(t, before_state, java_state, java_deleted_rel_paths): asserts


V2_CASES = [
    # no option: the table's defaults (5 days): nothing is old enough; tag t_old (max-ref-age 1 ms) goes
    Case("v2-no-options",
         expect=expect_expired()),
    # a relative age: 7 days ago, nothing expires
    Case("v2-older-than-7d", ice=lambda t: ["--older-than", "7d"],
         java=lambda t: {"older_than_ms": L.now_ms() - 7 * L.DAY_MS},
         expect=expect_expired()),
    # cut-off between s8 and s9 (epoch ms): s6 (rolled back) and w1 (cherry-picked, files shared) expire
    Case("v2-older-than-mid", ice=lambda t: ["--older-than", str(L.midpoint(t.ts["s8"], t.ts["s9"]))],
         java=lambda t: {"older_than_ms": L.midpoint(t.ts["s8"], t.ts["s9"])},
         expect=expect_expired("b1", "s1", "s3", "s4", "s5", "s6", "s7", "s8", "w1", deleted_contains=(".parquet", "snap-"))),
    # the same kind of cut-off as an ISO timestamp
    Case("v2-older-than-iso", ice=lambda t: ["--older-than", L.ms_to_iso(L.midpoint(t.ts["s4"], t.ts["b1"]))],
         java=lambda t: {"older_than_ms": L.midpoint(t.ts["s4"], t.ts["b1"])},
         expect=expect_expired("s1", "s3", "s4")),
    # exactly s5's commit time: s5 is not older than the cut-off, so main keeps it
    Case("v2-older-than-exact", ice=lambda t: ["--older-than", str(t.ts["s5"])],
         java=lambda t: {"older_than_ms": t.ts["s5"]},
         expect=expect_expired("b1", "s1", "s3", "s4")),
    # everything is old: main keeps 4 ancestors, b its 2 (its own min-snapshots-to-keep), t_keep s2
    Case("v2-retain-last-4", ice=lambda t: ["--older-than", str(t.ts["w3"] + 1), "--retain-last", "4"],
         java=lambda t: {"older_than_ms": t.ts["w3"] + 1, "retain_last": 4},
         expect=expect_expired("b1", "s1", "s3", "s4", "s5", "s6", "w1", "w2", "w3", deleted_contains=(".parquet",))),
    # explicit ids, no age: only they expire (w1's data files stay: s9 reaches them)
    Case("v2-snapshot-ids", ice=lambda t: ["--snapshot-id", str(t.snap["s6"]), "--snapshot-id", str(t.snap["w1"])],
         java=lambda t: {"snapshot_ids_": [t.snap["s6"], t.snap["w1"]]},
         expect=expect_expired("s6", "w1", deleted_contains=(".parquet",))),
    # a snapshot a ref (tag t_keep) points at cannot be expired: both refuse, nothing changes
    Case("v2-snapshot-id-referenced", ice=lambda t: ["--snapshot-id", str(t.snap["s2"])],
         java=lambda t: {"snapshot_ids_": [t.snap["s2"]]}, java_fails=True),
    # ref retention overrides: b dropped by its max-ref-age, b_long's max-snapshot-age keeps s1..s3
    Case("v2-ref-retention", prepare=_ref_retention, ice=lambda t: ["--older-than", str(t.ts["w3"] + 1)],
         java=lambda t: {"older_than_ms": t.ts["w3"] + 1},
         expect=expect_expired("b1", "b2", "b3", "s4", "s5", "s6", "s7", "s8", "s9", "w1", "w2", "w3", refs_removed=("b", "t_old"))),
    # retention from table properties
    Case("v2-table-properties", prepare=_table_defaults,
         expect=expect_expired("b1", "s1", "s3", "s4", "s5", "s6", "s7", "w1", "w2", "w3", refs_removed=("t_old", "t_plain"))),
    # clean_expired_metadata: schema 0 and the unused spec 2 go; s2's statistics files are deleted
    Case("v2-clean-expired-metadata", prepare=_drop_refs_and_add_unused_spec,
         ice=lambda t: ["--older-than", str(t.ts["w3"] + 1), "--clean-expired-metadata"],
         java=lambda t: {"older_than_ms": t.ts["w3"] + 1, "clean_expired_metadata": True},
         expect=expect_expired("b1", "b2", "b3", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "w1", "w2", "w3", deleted_contains=(".stats", "metadata/partition-stats"))),
    # position and equality delete files that no retained snapshot reaches are deleted
    Case("v2-delete-files-removed", prepare=_remove_delete_files,
         ice=lambda t: ["--older-than", str(t.ts["w3"] + 1)], java=lambda t: {"older_than_ms": t.ts["w3"] + 1},
         expect=expect_expired("b1", "b2", "b3", "s1", "s10", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "w1",
                               "w2", "w3", deleted_contains=("-deletes.parquet", "eq-deletes-"))),
    # clean_expired_metadata with explicit ids and no cut-off: the ids expire, but Java finds the
    # reachable schemas and specs before it takes them out, so schema 0 (which only they use) stays
    Case("v2-clean-expired-metadata-snapshot-ids", prepare=_drop_refs_and_add_unused_spec,
         ice=lambda t: [a for label in ("s1", "s2", "s3", "s4", "b1", "b2", "b3")
                        for a in ("--snapshot-id", str(t.snap[label]))] + ["--clean-expired-metadata"],
         java=lambda t: {"snapshot_ids_": [t.snap[x] for x in ("s1", "s2", "s3", "s4", "b1", "b2", "b3")],
                         "clean_expired_metadata": True},
         expect=expect_expired("b1", "b2", "b3", "s1", "s2", "s3", "s4", deleted_contains=(".stats",))),
    # the same without clean_expired_metadata: the schemas and specs stay
    Case("v2-keep-expired-metadata", prepare=_drop_refs_and_add_unused_spec,
         ice=lambda t: ["--older-than", str(t.ts["w3"] + 1)],
         java=lambda t: {"older_than_ms": t.ts["w3"] + 1},
         expect=expect_expired("b1", "b2", "b3", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "w1", "w2", "w3")),
]

V3_CASES = [
    # deletion vectors: s3's Puffin files are replaced by s4's merged DVs; tag t3 keeps s3
    Case("v3-older-than-mid", ice=lambda t: ["--older-than", str(L.midpoint(t.ts["s4"], t.ts["s5"]))],
         java=lambda t: {"older_than_ms": L.midpoint(t.ts["s4"], t.ts["s5"])},
         expect=expect_expired("s1", "s2", "s4", refs_removed=(), not_deleted=(".puffin",))),
    # everything old, tag t3 dropped first: the replaced DVs and data files are deleted
    Case("v3-all-old-no-tag", prepare=lambda spark, t: spark.sql(f"ALTER TABLE {t.name} DROP TAG t3"),
         ice=lambda t: ["--older-than", str(t.ts["s6"] + 1)], java=lambda t: {"older_than_ms": t.ts["s6"] + 1},
         expect=expect_expired("s1", "s2", "s3", "s4", "s5", refs_removed=(), deleted_contains=(".puffin",))),
]

V1_CASES = [
    Case("v1-older-than-mid", ice=lambda t: ["--older-than", str(L.midpoint(t.ts["s5"], t.ts["s6"]))],
         java=lambda t: {"older_than_ms": L.midpoint(t.ts["s5"], t.ts["s6"])},
         expect=expect_expired("s1", "s3", "s4", "s5", refs_removed=(), deleted_contains=(".parquet",))),
    Case("v1-retain-last-2", ice=lambda t: ["--older-than", str(t.ts["s6"] + 1), "--retain-last", "2"],
         java=lambda t: {"older_than_ms": t.ts["s6"] + 1, "retain_last": 2},
         expect=expect_expired("s1", "s3", "s5", refs_removed=(), deleted_contains=(".parquet",))),
]


def run_expire_case(spark, built: Built, case: Case, *extra: str) -> dict:
    """Runs icectl then Iceberg Java on the same starting state; returns what each did."""
    t = built.t
    built.pristine.restore()
    if case.prepare is not None:
        case.prepare(spark, t)
    start = L.FolderBackup(t.location, os.path.join(built.work, "start"))
    before_tree = start.original_tree()
    before = L.state(t.location)
    live_refs = sorted(before["refs"])
    rows_before = L.rows_by_ref(spark, t.name, live_refs)

    ice_args = list(case.ice(t))
    res = L.icectl("--warehouse", t.warehouse, "expire", t.identifier, *ice_args, *extra, "--yes", "-o", "json",
                   expect=None)
    ice = {"res": res, "state": L.state(t.location), "tree": L.tree(t.location)}
    ice["deleted"] = L.visible(set(before_tree) - set(ice["tree"]))
    ice["changed"] = _changed_in_place(before_tree, ice["tree"])
    if res.code == 0:
        ice["missing"] = L.missing_reachable(spark, t.name, t.location)
        try:
            ice["rows"] = L.rows_by_ref(spark, t.name, sorted(ice["state"]["refs"]))
        except Exception as e:  # e.g. a data file is gone
            ice["rows"] = {"<error>": str(e).splitlines()[0][:500]}

    start.restore()
    java = {"error": None}
    try:
        java["counts"] = L.java_expire(spark, t.identifier, **case.java(t))
    except Exception as e:  # py4j / Spark exception: the procedure refused
        java["error"] = str(e)
    java["state"] = L.state(t.location)
    java["tree"] = L.tree(t.location)
    java["deleted"] = L.visible(set(before_tree) - set(java["tree"]))
    return {"t": t, "case": case, "before": before, "before_tree": before_tree, "rows_before": rows_before,
            "ice": ice, "java": java}


def check_same_as_java(out: dict) -> None:
    t, before, ice, java = out["t"], out["before"], out["ice"], out["java"]
    res = ice["res"]
    assert (java["error"] is not None) == out["case"].java_fails, f"Iceberg Java's premise changed: {java['error']}"
    if java["error"] is not None:
        assert res.code != 0, f"Iceberg Java refused ({java['error'].splitlines()[0][:200]}), icectl did not:\n{res.stdout}"
        assert ice["tree"] == out["before_tree"], "icectl failed but changed files: " + str(
            _rel(t, set(ice["tree"]) ^ set(out["before_tree"])))
        return
    assert res.code == 0, f"icectl expire exited {res.code}: {res.stderr}"

    # metadata: snapshots, refs, snapshot log, statistics, schemas, specs
    assert _labelled_state(t, ice["state"]) == _labelled_state(t, java["state"])
    # files deleted from disk
    ice_del, java_del = set(_rel(t, ice["deleted"])), set(_rel(t, java["deleted"]))
    assert ice_del == java_del, (f"only icectl deleted: {sorted(ice_del - java_del)}\n"
                                 f"only Java deleted: {sorted(java_del - ice_del)}")
    assert ice["changed"] == [], f"icectl rewrote files in place: {_rel(t, ice['changed'])}"

    # the JSON report
    d = res.json
    expired = set(before["snapshot_ids"]) - set(java["state"]["snapshot_ids"])
    assert d["dry_run"] is False
    assert t.labels(d["expired_snapshot_ids"]) == t.labels(expired)
    assert t.labels(d["retained_snapshot_ids"]) == t.labels(java["state"]["snapshot_ids"])
    assert sorted(d["removed_refs"]) == sorted(set(before["refs"]) - set(java["state"]["refs"]))
    reported = {os.path.relpath(L.norm(f["path"]), t.location) for f in d["deleted_files"] if f["kind"] != "metadata"}
    assert reported == java_del
    assert d["counts"] == java["counts"], f"icectl counts {d['counts']} != Java {java['counts']}"
    assert d["failed_deletes"] == []
    if "removed_schema_ids" in d:
        assert sorted(d["removed_schema_ids"]) == sorted(set(before["schema_ids"]) - set(java["state"]["schema_ids"]))
    if "removed_spec_ids" in d:
        assert sorted(d["removed_spec_ids"]) == sorted(set(before["spec_ids"]) - set(java["state"]["spec_ids"]))
    kinds = {f["kind"] for f in d["deleted_files"]}
    assert kinds <= {"data", "position-deletes", "equality-deletes", "deletion-vector", "manifest", "manifest-list",
                     "statistics", "partition-statistics", "metadata"}, kinds

    # Spark reads the same rows on every ref that is left, and every reachable file exists
    assert ice["missing"] == [], f"files the table reaches are gone: {_rel(t, ice['missing'])}"
    assert "<error>" not in ice["rows"], ice["rows"]
    for ref, rows in ice["rows"].items():
        assert rows == out["rows_before"][ref], f"ref {ref} reads different rows after icectl expire"
    # the case tests what it says it tests (about Java's result)
    if out["case"].expect is not None:
        out["case"].expect(t, out["before"], java["state"], set(_rel(t, java["deleted"])))


@pytest.mark.parametrize("case", V2_CASES, ids=lambda c: c.id)
def test_expire_v2_matches_java(spark, lc_v2, case):
    check_same_as_java(run_expire_case(spark, lc_v2, case))


@pytest.mark.parametrize("case", V3_CASES, ids=lambda c: c.id)
def test_expire_v3_deletion_vectors_matches_java(spark, lc_v3, case):
    check_same_as_java(run_expire_case(spark, lc_v3, case))


@pytest.mark.parametrize("case", V1_CASES, ids=lambda c: c.id)
def test_expire_v1_matches_java(spark, lc_v1, case):
    check_same_as_java(run_expire_case(spark, lc_v1, case))


def test_expire_v3_row_lineage_unchanged(spark, lc_v3):
    t = lc_v3.t
    lc_v3.pristine.restore()
    q = f"SELECT id, _row_id, _last_updated_sequence_number FROM {t.name} ORDER BY id"
    before = [tuple(r) for r in spark.sql(q).collect()]
    L.icectl("--warehouse", t.warehouse, "expire", t.identifier, "--older-than", str(t.ts["s6"] + 1), "--yes")
    assert [tuple(r) for r in spark.sql(q).collect()] == before


def test_expire_dry_run_reports_javas_result_and_changes_nothing(spark, lc_v2):
    """--dry-run --explain: no byte on disk changes; the report names exactly the snapshots and
    files that Iceberg Java's real run expires and deletes; every retained snapshot has a reason."""
    case = V2_CASES[2]  # v2-older-than-mid
    out = run_expire_case(spark, lc_v2, case, "--dry-run", "--explain")
    t, ice, java = out["t"], out["ice"], out["java"]
    assert ice["res"].code == 0, ice["res"].stderr
    assert ice["tree"] == out["before_tree"], "dry run changed files: " + str(
        _rel(t, set(ice["tree"]) ^ set(out["before_tree"])))
    d = ice["res"].json
    assert d["dry_run"] is True
    expired = set(out["before"]["snapshot_ids"]) - set(java["state"]["snapshot_ids"])
    assert t.labels(d["expired_snapshot_ids"]) == t.labels(expired)
    assert t.labels(d["retained_snapshot_ids"]) == t.labels(java["state"]["snapshot_ids"])
    reported = {os.path.relpath(L.norm(f["path"]), t.location) for f in d["deleted_files"]}
    assert reported == set(_rel(t, java["deleted"]))
    assert d["counts"] == java["counts"]
    explained = {e["snapshot_id"]: e["reasons"] for e in d["explain"]}
    assert t.labels(explained) == t.labels(java["state"]["snapshot_ids"])
    assert all(r and all(isinstance(x, str) and x for x in r) for r in explained.values()), explained


def test_expire_removes_hadoop_checksum_sidecars_like_java(spark, lc_v2):
    """Iceberg Java deletes through Hadoop's LocalFileSystem, which also removes each file's
    hidden ".<name>.crc" checksum; icectl should not leave them behind (hidden files are never
    orphans, so nothing would ever remove them)."""
    out = run_expire_case(spark, lc_v2, V2_CASES[2])  # v2-older-than-mid
    t = out["t"]

    def stale_crc(tree):
        return sorted(os.path.relpath(p, t.location) for p in tree
                      if os.path.basename(p).startswith(".") and p.endswith(".crc")
                      and os.path.join(os.path.dirname(p), os.path.basename(p)[1:-4]) not in tree)

    assert out["ice"]["res"].code == 0
    assert stale_crc(out["java"]["tree"]) == []
    assert stale_crc(out["ice"]["tree"]) == [], "checksum files left behind by icectl"


def test_expire_no_delete_files_commits_javas_metadata(spark, lc_v2):
    """--no-delete-files: the metadata is Java's; no file is deleted (Java: cleanExpiredFiles(false))."""
    case = V2_CASES[5]  # v2-retain-last-4
    out = run_expire_case(spark, lc_v2, case, "--no-delete-files")
    t, ice, java = out["t"], out["ice"], out["java"]
    assert ice["res"].code == 0, ice["res"].stderr
    assert _labelled_state(t, ice["state"]) == _labelled_state(t, java["state"])
    assert ice["deleted"] == set(), f"--no-delete-files deleted {_rel(t, ice['deleted'])}"
    assert java["deleted"], "the case should delete files when files are deleted"
    assert [f for f in ice["res"].json["deleted_files"] if f["kind"] != "metadata"] == []


def test_expire_with_nothing_to_expire_commits_nothing(spark, lc_v1):
    """No snapshot is old and no ref is past its age: icectl writes no new metadata."""
    t = lc_v1.t
    lc_v1.pristine.restore()
    before = L.tree(t.location)
    d = L.icectl("--warehouse", t.warehouse, "expire", t.identifier, "--yes", "-o", "json").json
    assert d["expired_snapshot_ids"] == [] and d["deleted_files"] == [] and d["removed_refs"] == []
    assert L.tree(t.location) == before


# --------------------------------------------------------------------------- rollback / cherry-pick


def _java_error(spark, sql: str) -> str | None:
    try:
        spark.sql(sql).collect()
        return None
    except Exception as e:
        return str(e)


def _java_api_error(fn) -> str | None:
    try:
        fn()
        return None
    except Exception as e:
        return str(e)


def run_ref_case(spark, built: Built, ice_args: list[str], java) -> dict:
    """icectl <ice_args> then `java()` (a callable running Iceberg Java; returns an error or None)."""
    t = built.t
    built.pristine.restore()
    before_tree = built.pristine.original_tree()
    res = L.icectl("--warehouse", t.warehouse, *ice_args, "--yes", "-o", "json", expect=None)
    ice = {"res": res, "state": L.state(t.location), "tree": L.tree(t.location)}
    if res.code == 0:
        ice["rows"] = L.java_tables.read_rows(spark, t.name)[1]
        md = L.current_metadata(t.location)
        ice["current"] = L.snapshot_by_id(md, ice["state"]["current_snapshot_id"])
        ice["files"] = sorted(r[0] for r in spark.sql(f"SELECT file_path FROM {t.name}.files").collect())
    built.pristine.restore()
    err = java()
    jstate = L.state(t.location)
    java = {"error": err, "state": jstate}
    if err is None:
        md = L.current_metadata(t.location)
        java["current"] = L.snapshot_by_id(md, jstate["current_snapshot_id"])
        java["rows"] = L.java_tables.read_rows(spark, t.name)[1]
        java["files"] = sorted(r[0] for r in spark.sql(f"SELECT file_path FROM {t.name}.files").collect())
    return {"t": t, "before_tree": before_tree, "ice": ice, "java": java}


def check_ref_case(out: dict, *, new_snapshot: bool = False) -> None:
    t, ice, java = out["t"], out["ice"], out["java"]
    res = ice["res"]
    if java["error"] is not None:
        assert res.code != 0, f"Iceberg Java refused ({java['error'].splitlines()[0][:200]}); icectl did not:\n{res.stdout}"
        assert ice["tree"] == out["before_tree"], "icectl failed but changed files"
        return
    assert res.code == 0, f"icectl exited {res.code}: {res.stderr}"
    if not new_snapshot:
        assert _labelled_state(t, ice["state"]) == _labelled_state(t, java["state"])
    else:
        # a new snapshot with its own random id on each side: compare everything else
        ice_new = set(ice["state"]["snapshot_ids"]) - set(t.snap.values())
        java_new = set(java["state"]["snapshot_ids"]) - set(t.snap.values())
        assert len(ice_new) == len(java_new) == 1, (t.labels(ice_new), t.labels(java_new))
        (i_id,), (j_id,) = ice_new, java_new
        assert _labelled_state(t, ice["state"], i_id) == _labelled_state(t, java["state"], j_id)
        ic, jc = ice["current"], java["current"]
        assert ic.get("parent-snapshot-id") == jc.get("parent-snapshot-id")
        assert ic.get("sequence-number") == jc.get("sequence-number")
        js = {k: v for k, v in jc["summary"].items() if k not in VOLATILE_SUMMARY}
        isum = {k: v for k, v in ic["summary"].items() if k in js}
        assert isum == js, f"summary differs: icectl {ic['summary']} Java {jc['summary']}"
    assert ice["files"] == java["files"]
    assert ice["rows"] == java["rows"]


def _call(spark, t, proc: str, *args: str):
    return lambda: _java_error(spark, f"CALL hc.system.{proc}('{t.identifier}', {', '.join(args)})")


def test_rollback_to_snapshot_matches_java(spark, lc_v2):
    t = lc_v2.t
    out = run_ref_case(spark, lc_v2, ["rollback", t.identifier, "--to-snapshot", str(t.snap["s7"])],
                       _call(spark, t, "rollback_to_snapshot", f"{t.snap['s7']}L"))
    check_ref_case(out)
    assert out["ice"]["state"]["current_snapshot_id"] == t.snap["s7"]


def test_rollback_to_non_ancestor_is_refused_like_java(spark, lc_v2):
    t = lc_v2.t
    out = run_ref_case(spark, lc_v2, ["rollback", t.identifier, "--to-snapshot", str(t.snap["s6"])],
                       _call(spark, t, "rollback_to_snapshot", f"{t.snap['s6']}L"))
    assert out["java"]["error"] is not None
    check_ref_case(out)


@pytest.mark.parametrize("where", ["between-s5-s7", "exactly-s7", "iso-between-s8-s9"])
def test_rollback_to_timestamp_matches_java(spark, lc_v2, where):
    t = lc_v2.t
    if where == "between-s5-s7":
        ms, arg = L.midpoint(t.ts["s5"], t.ts["s7"]), None
    elif where == "exactly-s7":  # strictly older than the time: s7 itself is not chosen
        ms, arg = t.ts["s7"], None
    else:
        ms = L.midpoint(t.ts["s8"], t.ts["s9"])
        arg = L.ms_to_iso(ms)
    out = run_ref_case(spark, lc_v2, ["rollback", t.identifier, "--to-timestamp", arg or str(ms)],
                       _call(spark, t, "rollback_to_timestamp", L.ms_to_sql(ms)))
    check_ref_case(out)


def test_rollback_to_timestamp_before_first_snapshot_is_refused(spark, lc_v2):
    t = lc_v2.t
    out = run_ref_case(spark, lc_v2, ["rollback", t.identifier, "--to-timestamp", str(t.ts["s1"])],
                       _call(spark, t, "rollback_to_timestamp", L.ms_to_sql(t.ts["s1"])))
    assert out["java"]["error"] is not None
    check_ref_case(out)


@pytest.mark.parametrize("label", ["s6", "w2", "b3"])
def test_set_current_matches_java(spark, lc_v2, label):
    """Any snapshot, ancestor or not (s6 rolled back, w2 staged, b3 on branch b)."""
    t = lc_v2.t
    out = run_ref_case(spark, lc_v2, ["rollback", t.identifier, "--set-current", str(t.snap[label])],
                       _call(spark, t, "set_current_snapshot", f"{t.snap[label]}L"))
    check_ref_case(out)


def test_rollback_branch_matches_java_replace_branch(spark, lc_v2):
    """--branch b --to-snapshot b1 (an ancestor of b): b moves, main stays (Java: replaceBranch)."""
    t = lc_v2.t
    out = run_ref_case(
        spark, lc_v2, ["rollback", t.identifier, "--branch", "b", "--to-snapshot", str(t.snap["b1"])],
        lambda: _java_api_error(lambda: L._jt(spark, t.name).manageSnapshots().replaceBranch("b", t.snap["b1"]).commit()))
    check_ref_case(out)
    assert out["ice"]["state"]["refs"]["b"]["snapshot-id"] == t.snap["b1"]


def test_rollback_branch_to_non_ancestor_is_refused(spark, lc_v2):
    t = lc_v2.t
    lc_v2.pristine.restore()
    res = L.icectl("--warehouse", t.warehouse, "rollback", t.identifier, "--branch", "b", "--to-snapshot",
                   str(t.snap["s7"]), "--yes", expect=None)
    assert res.code != 0
    assert L.tree(t.location) == lc_v2.pristine.original_tree()


def test_rollback_dry_run_changes_nothing(spark, lc_v2):
    t = lc_v2.t
    lc_v2.pristine.restore()
    res = L.icectl("--warehouse", t.warehouse, "rollback", t.identifier, "--to-snapshot", str(t.snap["s5"]),
                   "--dry-run", "-o", "json")
    assert res.code == 0
    assert L.tree(t.location) == lc_v2.pristine.original_tree()


@pytest.mark.parametrize("label,new_snapshot", [
    ("w2", True),   # staged WAP append, main moved on since: a new snapshot (published-wap-id)
    ("w3", False),  # staged on main's head: fast-forward, no new snapshot
    ("s6", True),   # a rolled-back append (no WAP id): a new snapshot with source-snapshot-id
    ("b2", True),   # an append on branch b
    ("w1", False),  # its WAP id is already published: both refuse
    ("s7", False),  # an ancestor of main: both refuse
    ("s3", False),  # a delete: both refuse
])
def test_cherry_pick_matches_java(spark, lc_v2, label, new_snapshot):
    t = lc_v2.t
    out = run_ref_case(spark, lc_v2, ["cherry-pick", t.identifier, str(t.snap[label])],
                       _call(spark, t, "cherrypick_snapshot", f"{t.snap[label]}L"))
    if label in ("w1", "s7", "s3"):
        assert out["java"]["error"] is not None
    check_ref_case(out, new_snapshot=new_snapshot)


# --------------------------------------------------------------------------- branches and tags


def test_branch_and_tag_commands_match_java(spark, lc_v2):
    """branch create (retention) / rename / fast-forward / drop and tag create / drop give the
    refs Iceberg Java's ManageSnapshots gives for the same changes."""
    t = lc_v2.t
    s = t.snap
    day = L.DAY_MS
    steps = [
        (["branch", "create", t.identifier, "nb", "--snapshot", str(s["s5"]), "--max-ref-age", "7d",
          "--max-snapshot-age", "36h", "--min-snapshots-to-keep", "3"],
         lambda ms: ms.createBranch("nb", s["s5"]).setMaxRefAgeMs("nb", 7 * day)
         .setMaxSnapshotAgeMs("nb", 36 * 3600 * 1000).setMinSnapshotsToKeep("nb", 3)),
        (["tag", "create", t.identifier, "nt", "--snapshot", str(s["s3"]), "--max-ref-age", "36h"],
         lambda ms: ms.createTag("nt", s["s3"]).setMaxRefAgeMs("nt", 36 * 3600 * 1000)),
        (["tag", "create", t.identifier, "cur"], lambda ms: ms.createTag("cur", s["s10"])),
        (["branch", "rename", t.identifier, "nb", "nb2"], lambda ms: ms.renameBranch("nb", "nb2")),
        (["branch", "fast-forward", t.identifier, "nb2", "--to", "main"], lambda ms: ms.fastForwardBranch("nb2", "main")),
        (["tag", "drop", t.identifier, "t_keep"], lambda ms: ms.removeTag("t_keep")),
        (["branch", "drop", t.identifier, "b"], lambda ms: ms.removeBranch("b")),
    ]
    lc_v2.pristine.restore()
    for args, _ in steps:
        L.icectl("--warehouse", t.warehouse, *args, "--yes")
    ice_refs = L.state(t.location)["refs"]
    listed = L.icectl("--warehouse", t.warehouse, "refs", t.identifier, "-o", "json").json
    lc_v2.pristine.restore()
    for _, java in steps:
        java(L._jt(spark, t.name).manageSnapshots()).commit()
    java_refs = L.state(t.location)["refs"]
    assert ice_refs == java_refs
    names = {r["name"] for r in listed} if isinstance(listed, list) else set()
    assert names == set(java_refs), listed


REFUSED = {
    "drop-main": (["branch", "drop", "{id}", "main"], lambda ms: ms.removeBranch("main")),
    "branch-over-tag": (["branch", "create", "{id}", "t_keep"], lambda ms: ms.createBranch("t_keep")),
    "tag-over-branch": (["tag", "create", "{id}", "b"], lambda ms: ms.createTag("b", None)),
    "ff-not-descendant": (["branch", "fast-forward", "{id}", "b", "--to", "main"],
                          lambda ms: ms.fastForwardBranch("b", "main")),
    "drop-branch-as-tag": (["tag", "drop", "{id}", "b"], lambda ms: ms.removeTag("b")),
    "rename-to-existing": (["branch", "rename", "{id}", "b", "t_keep"], lambda ms: ms.renameBranch("b", "t_keep")),
}


@pytest.mark.parametrize("what", sorted(REFUSED))
def test_ref_commands_refuse_what_java_refuses(spark, lc_v2, what):
    t = lc_v2.t
    args, java = REFUSED[what]
    lc_v2.pristine.restore()
    current = t.snap["s10"]
    err = _java_api_error(lambda: java_with_current(java, L._jt(spark, t.name).manageSnapshots(), current).commit())
    assert err is not None, f"Iceberg Java accepted {what}"
    lc_v2.pristine.restore()
    res = L.icectl("--warehouse", t.warehouse, *[a.format(id=t.identifier) for a in args], "--yes", expect=None)
    assert res.code != 0, res.stdout
    assert L.tree(t.location) == lc_v2.pristine.original_tree()


def java_with_current(java, ms, current):
    """ManageSnapshots.createBranch(name) / createTag(name, id) with the current snapshot."""
    class Wrap:
        def __getattr__(self, name):
            return getattr(ms, name)

        def createBranch(self, name):
            return ms.createBranch(name, current)

        def createTag(self, name, _id):
            return ms.createTag(name, current)

    return java(Wrap())
