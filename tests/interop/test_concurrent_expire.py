"""`icectl expire` while Iceberg Java commits to the same table (JdbcCatalog `jc` on a shared
SQLite file): no commit is lost, and no file the final table reaches is deleted.

Deterministic races: SqlCatalog.commit is wrapped so that, the first time icectl tries to swap
the metadata pointer, Spark commits first (an append, a tag on a snapshot icectl is about to
expire, or a cherry-pick of a staged snapshot whose data files icectl is about to delete). icectl's
compare-and-set then fails, and it must re-plan on the new metadata.
A free-running race: icectl expires in a subprocess loop while Spark appends.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

import lifecycle_tables as L

pytestmark = [pytest.mark.interop, pytest.mark.spark]

_n = iter(range(1, 1000))


@pytest.fixture
def jc(spark, jdbc_catalog_db, jdbc_warehouse, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))  # no user configuration leaks in
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    spark.sql("CREATE NAMESPACE IF NOT EXISTS jc.db")
    return ["-c", "jc", "--uri", f"jdbc:sqlite:{jdbc_catalog_db}", "--warehouse", str(jdbc_warehouse)]


def _table(spark, wap: bool = False) -> L.LifecycleTable:
    name = f"jc.db.conc_{next(_n)}"
    props = "'format-version'='2'" + (", 'write.wap.enabled'='true'" if wap else "")
    spark.sql(f"CREATE TABLE {name} (id bigint, data string) USING iceberg TBLPROPERTIES ({props})")
    t = L.LifecycleTable(name, name.split(".", 1)[1], "", "", 2)
    t.location = L.norm(L._jt(spark, name).location())
    return t


def _append(spark, t: L.LifecycleTable, label: str, lo: int, hi: int) -> None:
    spark.sql(f"INSERT INTO {t.name} SELECT id, concat('d', id) FROM range({lo}, {hi + 1}) AS r(id)")
    L._record(t, spark, label)


def _ids(spark, query: str) -> list[int]:
    return sorted(r[0] for r in spark.sql(query).collect())


def _snapshot_ids(spark, t) -> set[int]:
    return {r[0] for r in spark.sql(f"SELECT snapshot_id FROM {t.name}.snapshots").collect()}


def _race_on_first_commit(monkeypatch, action):
    """Wraps SqlCatalog.commit: before icectl's first pointer swap, run `action()` (a Spark
    commit). Returns the list of commit attempts (metadata locations icectl based them on)."""
    from icectl.catalog.sql import SqlCatalog

    original = SqlCatalog.commit
    attempts: list[str] = []

    def commit(self, ident, requirements, updates, *, base_location=None, **kw):
        attempts.append(base_location)
        if len(attempts) == 1:
            action()
        return original(self, ident, requirements, updates, base_location=base_location, **kw)

    monkeypatch.setattr(SqlCatalog, "commit", commit)
    return attempts


def _check_reachable(spark, t) -> None:
    missing = L.missing_reachable(spark, t.name)
    assert missing == [], f"icectl deleted files the table still reaches: {missing}"


def test_append_during_expire_is_kept(spark, jc, monkeypatch):
    t = _table(spark)
    for i in range(1, 5):
        _append(spark, t, f"s{i}", 10 * i, 10 * i + 4)
    cutoff = t.ts["s4"] + 1

    def spark_append():
        _append(spark, t, "s5", 50, 54)

    attempts = _race_on_first_commit(monkeypatch, spark_append)
    before = L.tree(t.location)
    # The plan shown keeps s4, the head (retain 1). Re-planned on the new head s5, expire would
    # also expire s4: more than was approved, so it stops (exit 5), committing and deleting
    # nothing (a retry never does more than the plan that was shown).
    res = L.icectl(*jc, "expire", t.identifier, "--older-than", str(cutoff), "--yes", "-o", "json", expect=5)
    # The first commit lost the race to Spark's append; the re-plan stopped before a second one.
    assert len(attempts) == 1 and t.labels(_snapshot_ids(spark, t))[-1] == "s5"
    assert "changed since the plan was shown: 1 more snapshots would expire" in res.stderr
    assert {p for p in before} <= set(L.tree(t.location))  # nothing deleted
    assert t.labels(_snapshot_ids(spark, t)) == ["s1", "s2", "s3", "s4", "s5"]
    # Run again: a new plan (s1..s4), shown and applied, keeps Spark's append.
    monkeypatch.undo()
    d = L.icectl(*jc, "expire", t.identifier, "--older-than", str(cutoff), "--yes", "-o", "json").json
    assert t.labels(d["retained_snapshot_ids"]) == ["s5"]
    assert t.labels(d["expired_snapshot_ids"]) == ["s1", "s2", "s3", "s4"]
    assert t.labels(_snapshot_ids(spark, t)) == ["s5"]
    _check_reachable(spark, t)
    assert _ids(spark, f"SELECT id FROM {t.name}") == [x for i in range(1, 6) for x in range(10 * i, 10 * i + 5)]


def test_tag_created_during_expire_keeps_its_snapshot(spark, jc, monkeypatch):
    """Spark tags s2 after icectl planned to expire it: the re-planned expiry keeps s2 and every
    file it reaches (Iceberg Java's RemoveSnapshots re-applies on the refreshed metadata)."""
    t = _table(spark)
    for i in range(1, 4):
        _append(spark, t, f"s{i}", 10 * i, 10 * i + 4)
    spark.sql(f"DELETE FROM {t.name} WHERE id = 10 OR id = 20")  # copy-on-write: s2's files leave main
    L._record(t, spark, "s4")
    rows_s2 = _ids(spark, f"SELECT id FROM {t.name} VERSION AS OF {t.snap['s2']}")
    rows_main = _ids(spark, f"SELECT id FROM {t.name}")
    cutoff = t.ts["s4"] + 1

    attempts = _race_on_first_commit(
        monkeypatch, lambda: spark.sql(f"ALTER TABLE {t.name} CREATE TAG keep AS OF VERSION {t.snap['s2']}"))
    res = L.icectl(*jc, "expire", t.identifier, "--older-than", str(cutoff), "--yes", "-o", "json", expect=None)
    assert len(attempts) >= 1
    assert res.code in (0, 5), res.stderr  # success after re-planning, or a clean conflict
    if res.code == 0:
        assert t.snap["s2"] in res.json["retained_snapshot_ids"]
    assert t.snap["s2"] in _snapshot_ids(spark, t), "the tagged snapshot was expired"
    assert L.spark_refs(spark, t.name).get("keep") == t.snap["s2"], "Spark's tag was lost"
    _check_reachable(spark, t)
    assert _ids(spark, f"SELECT id FROM {t.name} VERSION AS OF 'keep'") == rows_s2
    assert _ids(spark, f"SELECT id FROM {t.name}") == rows_main


def test_cherry_pick_during_expire_keeps_the_picked_files(spark, jc, monkeypatch):
    """A staged WAP snapshot w is old and unreferenced: icectl plans to expire it and delete its
    data files. Spark cherry-picks w before icectl commits: the new main snapshot reaches w's data
    files, so they must survive."""
    t = _table(spark, wap=True)
    _append(spark, t, "s1", 1, 5)
    spark.conf.set("spark.wap.id", "conc-w")
    try:
        spark.sql(f"INSERT INTO {t.name} SELECT id, 'staged' FROM range(100, 105) AS r(id)")
    finally:
        spark.conf.unset("spark.wap.id")
    w = [r[0] for r in spark.sql(f"SELECT snapshot_id, summary FROM {t.name}.snapshots").collect()
         if r[0] != t.snap["s1"]][0]
    t.snap["w"] = w
    L._gap()
    _append(spark, t, "s2", 6, 10)  # main moves on: the cherry-pick is not a fast-forward
    cutoff = t.ts["s2"] + 1

    attempts = _race_on_first_commit(
        monkeypatch, lambda: spark.sql(f"CALL jc.system.cherrypick_snapshot('{t.identifier}', {w}L)").collect())
    res = L.icectl(*jc, "expire", t.identifier, "--older-than", str(cutoff), "--yes", "-o", "json", expect=None)
    assert len(attempts) >= 1
    assert res.code in (0, 5), res.stderr  # success after re-planning, or a clean conflict
    _check_reachable(spark, t)
    assert _ids(spark, f"SELECT id FROM {t.name}") == list(range(1, 11)) + list(range(100, 105))


def test_free_running_expire_and_appends(spark, jc, tmp_path):
    """icectl expires in a loop (separate processes) while Spark appends 8 times."""
    t = _table(spark)
    _append(spark, t, "s0", 0, 4)
    env = {**os.environ, "HOME": str(tmp_path)}
    env.pop("ICECTL_CONFIG", None)
    stop = threading.Event()
    runs: list[tuple[int, str]] = []
    expired_while_writing: list[int] = []

    def expire_loop():
        while not stop.is_set():
            p = subprocess.run([sys.executable, "-m", "icectl", *jc, "expire", t.identifier, "--older-than",
                                str(L.now_ms()), "--retain-last", "2", "--yes", "-o", "json"],
                               env=env, capture_output=True, text=True, timeout=120)
            runs.append((p.returncode, p.stderr.strip()[-300:]))
            if p.returncode == 0 and not stop.is_set():
                import json

                expired_while_writing.extend(json.loads(p.stdout)["expired_snapshot_ids"])

    th = threading.Thread(target=expire_loop, daemon=True)
    th.start()
    try:
        for i in range(1, 9):
            spark.sql(f"INSERT INTO {t.name} SELECT id, concat('d', id) FROM range({10 * i}, {10 * i + 5}) AS r(id)")
            time.sleep(0.3)
    finally:
        stop.set()
        th.join(timeout=180)
    final = subprocess.run([sys.executable, "-m", "icectl", *jc, "expire", t.identifier, "--older-than",
                            str(L.now_ms()), "--retain-last", "2", "--yes", "-o", "json"],
                           env=env, capture_output=True, text=True, timeout=120)
    assert final.returncode == 0, final.stderr
    assert runs, "icectl never ran"
    bad = [r for r in runs if r[0] not in (0, 5)]  # 5: a clean commit conflict after retries
    assert bad == [], bad
    assert expired_while_writing, f"no expiry overlapped the writes ({len(runs)} runs): the test proved nothing"
    _check_reachable(spark, t)
    assert _ids(spark, f"SELECT id FROM {t.name}") == [x for i in range(0, 9) for x in range(10 * i, 10 * i + 5)]
    assert len(_snapshot_ids(spark, t)) == 2
