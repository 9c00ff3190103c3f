"""Iceberg Java appends (Spark as a client of the same REST server) committing while icectl runs
expire, compact and rewrite-manifests over the REST catalog: no commit lost, no row lost or
doubled, the table validates clean (tests/crash/concurrent_java.py has the races and checks)."""
from __future__ import annotations

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "crash"))
from concurrent_java import Race, free_running, race_each_command, spark_work_in  # noqa: E402


@pytest.fixture
def race(rest_env, spark_rest, tmp_path, monkeypatch) -> Race:
    from icectl.catalog.rest import RestCatalog

    spark_work_in(tmp_path, monkeypatch)
    ns = rest_env.namespace
    spark_rest.sql(f"CREATE NAMESPACE IF NOT EXISTS rc.{ns}")
    r = Race(java=spark_rest.sql, icectl=rest_env.cli, java_name=f"rc.{ns}.t", name=f"{ns}.t",
             catalog_class=RestCatalog)
    r.create()
    return r


def test_java_append_just_before_each_commit_is_kept(race, monkeypatch):
    outcomes = race_each_command(race, monkeypatch)
    print(f"REST catalog, (exit, commit attempts) per command: {outcomes}")
    assert outcomes["compact"][0] == 0 and outcomes["rewrite-manifests"][0] == 0, outcomes


def test_java_appends_while_icectl_maintains(race):
    runs = free_running(race)
    print(f"REST catalog, free-running: {len(race.java_snapshots)} Java appends, icectl runs {runs}")
