"""Iceberg Java appends committing while icectl runs expire, compact and rewrite-manifests on the
SQL catalog (JdbcCatalog ``jc`` on a shared SQLite file): no commit lost, no row lost or doubled,
the table validates clean (tests/crash/concurrent_java.py has the races and the checks)."""
from __future__ import annotations

import itertools
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "crash"))
from concurrent_java import Race, free_running, race_each_command, spark_work_in  # noqa: E402

pytestmark = [pytest.mark.interop, pytest.mark.spark]

_n = itertools.count(1)


@pytest.fixture
def race(spark, jdbc_catalog_db, jdbc_warehouse, tmp_path, monkeypatch) -> Race:
    import lifecycle_tables as L

    from icectl.catalog.sql import SqlCatalog

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    spark_work_in(tmp_path, monkeypatch)
    spark.sql("CREATE NAMESPACE IF NOT EXISTS jc.db")
    args = ["-c", "jc", "--uri", f"jdbc:sqlite:{jdbc_catalog_db}", "--warehouse", str(jdbc_warehouse)]

    def icectl(*a: str) -> tuple[int, str, str]:
        r = L.icectl(*args, *a, expect=None)
        return r.code, r.stdout, r.stderr

    n = next(_n)
    r = Race(java=lambda q: [list(row) for row in spark.sql(q).collect()], icectl=icectl,
             java_name=f"jc.db.maint_{n}", name=f"db.maint_{n}", catalog_class=SqlCatalog)
    r.create()
    return r


def test_java_append_just_before_each_commit_is_kept(race, monkeypatch):
    outcomes = race_each_command(race, monkeypatch)
    print(f"SQL catalog, (exit, commit attempts) per command: {outcomes}")
    # compact and rewrite-manifests change no rows: they re-plan on the new table and commit
    assert outcomes["compact"][0] == 0 and outcomes["rewrite-manifests"][0] == 0, outcomes
    assert all(attempts >= 2 for code, attempts in outcomes.values() if code == 0), outcomes


def test_java_appends_while_icectl_maintains(race):
    runs = free_running(race)
    print(f"SQL catalog, free-running: {len(race.java_snapshots)} Java appends, icectl runs {runs}")
