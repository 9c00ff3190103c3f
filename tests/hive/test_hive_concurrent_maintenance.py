"""Iceberg Java (the oracle's Spark session with HiveCatalog) appends in a loop, in a thread of its
own, while icectl runs expire, compact (the Spark job) and rewrite-manifests on the same Hive
Metastore table (tests/crash/concurrent_java.py has the races). Both take Hive's table lock around
their swap of ``metadata_location``.

Afterwards: every appended row is in the table exactly once; every icectl command that succeeded
is in the table whole (its metadata file in the metadata log, the snapshots an expire removed gone
from Java's view), and one that stopped on a conflict left nothing (every metadata file of the
table is in its metadata log: no file of a half-made commit); ``validate --deep --all-snapshots``
is clean; Java and icectl agree on the snapshots and the snapshot log.
"""
from __future__ import annotations

import json
import pathlib
import sys
import time

import pytest

from icectl.catalog.hive import HiveCatalog
from icectl.errors import CommitConflictError
from icectl.table.loaded import load_table

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "crash"))
from concurrent_java import Race, free_running, race_each_command, spark_work_in  # noqa: E402

pytestmark = [pytest.mark.hive, pytest.mark.spark, pytest.mark.interop]


@pytest.fixture
def race(hive_env, spark, tmp_path, monkeypatch) -> Race:
    spark_work_in(tmp_path, monkeypatch)
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)
    db = hive_env.database
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS hive.{db}")
    runs: list[tuple[str, int, str]] = []

    def icectl(*args: str) -> tuple[int, str, str]:
        code, out, err = hive_env.cli("-o", "json", *args)
        runs.append((args[0], code, out))
        return code, out, err

    r = Race(java=lambda q: [list(row) for row in spark.sql(q).collect()], icectl=icectl,
             java_name=f"hive.{db}.t", name=f"{db}.t", catalog_class=HiveCatalog)
    r.create(seed_appends=0)
    # Every metadata file stays in the log, so that the check below sees all of them.
    r.java(f"ALTER TABLE {r.java_name} SET TBLPROPERTIES ('write.metadata.previous-versions-max'='10000')")
    for _ in range(6):
        r.append(5)
    r.runs = runs  # type: ignore[attr-defined]
    return r


def check_commits_whole(race: Race, env) -> None:
    """Each icectl command that exited 0 is in the table whole; nothing of one that did not."""
    log = {row[0] for row in race.java(f"SELECT file FROM {race.java_name}.metadata_log_entries")}
    current = load_table(env.catalog(), tuple(race.name.split(".")))
    assert current.metadata_location in log
    java_snapshots = {int(row[0]) for row in race.java(f"SELECT snapshot_id FROM {race.java_name}.snapshots")}
    checked = 0
    for command, code, out in race.runs:
        if code != 0 or command == "validate":
            continue
        res = json.loads(out)
        if command == "expire" and res["applied"]:
            assert res["metadata_location"] in log, res
            assert not set(res["expired_snapshot_ids"]) & java_snapshots, res["expired_snapshot_ids"]
            checked += 1
        elif command == "compact" and res["applied"]:
            assert res["committed"] and set(res["committed"]) <= log, res["committed"]
            checked += 1
    assert checked, race.runs
    # No metadata file outside the log: a commit that lost its race (icectl's or Java's) removed
    # the file it had written.
    metadata_dir = pathlib.Path(current.metadata.location.removeprefix("file:")) / "metadata"
    on_disk = {p.name for p in metadata_dir.glob("*.metadata.json")}
    assert on_disk == {f.rsplit("/", 1)[-1] for f in log}, on_disk ^ {f.rsplit("/", 1)[-1] for f in log}


def check_snapshots_agree(race: Race, env) -> None:
    """Java's snapshots and snapshot log are icectl's."""
    code, out, err = env.cli("snapshots", race.name, "-o", "json")
    assert code == 0, err
    java = {int(r[0]) for r in race.java(f"SELECT snapshot_id FROM {race.java_name}.snapshots")}
    assert {s["snapshot_id"] for s in json.loads(out)} == java
    md = load_table(env.catalog(), tuple(race.name.split("."))).metadata
    java_log = [(int(r[0]), int(r[1])) for r in race.java(
        f"SELECT unix_millis(made_current_at), snapshot_id FROM {race.java_name}.history ORDER BY made_current_at")]
    assert [(e.timestamp_ms, e.snapshot_id) for e in md.snapshot_log] == java_log


def test_java_appends_while_icectl_expires_and_compacts(race, hive_env, monkeypatch):
    """Free-running, with every other swap of icectl's held until Java has committed an append
    (or 5 s passed): the compare-and-set of ``metadata_location`` under Hive's lock meets a
    moved table, not only the requirement check before it."""
    original = HiveCatalog._swap_pointer
    swaps = {"n": 0, "conflicts": 0}

    def held_swap(self, ident, base_location, md, location):  # noqa: ANN001, ANN202
        swaps["n"] += 1
        if swaps["n"] % 2:
            seen, deadline = len(race.java_snapshots), time.monotonic() + 5
            while len(race.java_snapshots) == seen and time.monotonic() < deadline:
                time.sleep(0.05)
        try:
            return original(self, ident, base_location, md, location)
        except CommitConflictError:
            swaps["conflicts"] += 1
            raise

    monkeypatch.setattr(HiveCatalog, "_swap_pointer", held_swap)
    runs = free_running(race, appends=30)  # Java outlives icectl's first round (a Spark job, then the rest)
    monkeypatch.setattr(HiveCatalog, "_swap_pointer", original)
    print(f"Hive catalog, free-running: {len(race.java_snapshots)} Java appends, icectl runs {runs}, swaps {swaps}")
    assert swaps["conflicts"] >= 1, swaps  # a Java commit landed inside icectl's commit
    ran = {command for command, code, _ in runs if code == 0}
    assert {"expire", "compact"} <= ran, runs
    check_commits_whole(race, hive_env)
    check_snapshots_agree(race, hive_env)


def test_java_append_just_before_each_commit_is_kept(race, hive_env, monkeypatch):
    outcomes = race_each_command(race, monkeypatch)
    print(f"Hive catalog, (exit, commit attempts) per command: {outcomes}")
    assert outcomes["compact"][0] == 0 and outcomes["rewrite-manifests"][0] == 0, outcomes
    assert all(attempts >= 2 for code, attempts in outcomes.values() if code == 0), outcomes
    check_commits_whole(race, hive_env)
    check_snapshots_agree(race, hive_env)
