"""Iceberg Java appends committing while icectl runs expire, compact and rewrite-manifests on the
same table, for any catalog both reach (the SQL catalog through JdbcCatalog, the REST catalog
through the oracle's server): no commit is lost.

- :func:`race_each_command`: for each command, a Java append commits right before icectl's first
  attempt to commit (the catalog's ``commit`` is wrapped), so icectl's attempt is built on a table
  that has moved. icectl then re-plans and commits (exit 0), or stops with a clean conflict
  (exit 5); either way the Java append's snapshot is an ancestor of main and its rows are there.
- :func:`free_running`: Java appends in a thread while icectl runs the three commands in a loop.

After both, every row either side wrote is in the table exactly once (a compaction that lost or
doubled a concurrent append's rows shows here), and ``validate --deep --all-snapshots`` is clean.
"""
from __future__ import annotations

import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

ALLOWED = (0, 5)  # done, or a clean conflict (nothing committed, nothing deleted)


def spark_work_in(folder: Any, monkeypatch: Any) -> None:
    """spark-submit's work folders (icectl's temporary folders) under the test's ``folder``."""
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", None)


@dataclass
class Race:
    java: Callable[[str], list]  # one Spark SQL statement on the Java side, its rows
    icectl: Callable[..., tuple[int, str, str]]  # icectl ARGS in this process: (exit, stdout, stderr)
    java_name: str  # the table as Spark names it (jc.db.t, rc.ns.t)
    name: str  # the table as icectl names it (db.t, ns.t)
    catalog_class: type  # whose ``commit`` to wrap
    rows: list[int] = field(default_factory=list)  # every id written, in order
    java_snapshots: list[int] = field(default_factory=list)

    def create(self, seed_appends: int = 6) -> None:
        self.java(f"CREATE TABLE {self.java_name} (id bigint, data string) USING iceberg TBLPROPERTIES ("
                  "'format-version'='2', 'commit.retry.num-retries'='100', 'commit.retry.min-wait-ms'='5', "
                  "'commit.retry.max-wait-ms'='200')")
        for _ in range(seed_appends):
            self.append(5)

    def append(self, n: int) -> int:
        """A Java append of ``n`` new ids; returns its snapshot (the newest append of the table)."""
        lo = len(self.rows) + 1
        self.java(f"INSERT INTO {self.java_name} SELECT id, concat('d', id) FROM range({lo}, {lo + n}) AS r(id)")
        self.rows += list(range(lo, lo + n))
        sid = self.java(f"SELECT snapshot_id FROM {self.java_name}.snapshots WHERE operation = 'append' "
                        "ORDER BY committed_at DESC LIMIT 1")[0][0]
        self.java_snapshots.append(int(sid))
        return int(sid)

    def check(self) -> None:
        ids = sorted(int(r[0]) for r in self.java(f"SELECT id FROM {self.java_name}"))
        assert ids == sorted(self.rows), \
            f"rows lost or doubled: {len(ids)} rows, {len(set(ids))} distinct, {len(self.rows)} written"
        code, out, err = self.icectl("validate", self.name, "--deep", "--all-snapshots")
        assert code == 0, out + err

    def ancestors_of_main(self) -> set[int]:
        return {int(r[0]) for r in self.java(f"SELECT snapshot_id FROM {self.java_name}.history "
                                             "WHERE is_current_ancestor")}


# compact first: its Spark job takes longest, so the free-running appends land while it runs
COMMANDS = {
    "compact": lambda name, cutoff: ["compact", name, "--rewrite-all", "--yes"],
    "expire": lambda name, cutoff: ["expire", name, "--older-than", str(cutoff), "--retain-last", "2", "--yes"],
    "rewrite-manifests": lambda name, cutoff: ["rewrite-manifests", name, "--yes"],
}


def race_each_command(race: Race, monkeypatch: Any) -> dict[str, tuple[int, int]]:
    """For each command: a Java append lands between icectl's plan and its first commit. Returns
    command -> (exit code, commit attempts)."""
    out = {}
    original = race.catalog_class.commit
    for command, argv in COMMANDS.items():
        attempts: list[int] = []

        def commit(self, *args, **kwargs):
            attempts.append(1)
            if len(attempts) == 1:
                race.append(3)
            return original(self, *args, **kwargs)

        monkeypatch.setattr(race.catalog_class, "commit", commit)
        cutoff = int(time.time() * 1000)
        time.sleep(0.01)
        code, _, err = race.icectl(*argv(race.name, cutoff))
        monkeypatch.setattr(race.catalog_class, "commit", original)
        assert code in ALLOWED, f"{command}: exit {code}: {err}"
        assert attempts, f"{command} never committed"
        java_sid = race.java_snapshots[-1]
        assert java_sid in race.ancestors_of_main(), f"{command}: the concurrent Java append {java_sid} was lost"
        race.check()
        out[command] = (code, len(attempts))
    return out


def free_running(race: Race, *, appends: int = 16, pause: float = 0.5) -> list[tuple[str, int, bool]]:
    """Java appends in a thread while icectl loops over the commands (at least one round);
    returns (command, exit code, whether Java was appending all along) of every icectl run."""
    errors: list[str] = []
    done = threading.Event()

    def writer() -> None:
        try:
            for _ in range(appends):
                race.append(2)
                time.sleep(pause)
        except Exception as e:  # reported below
            errors.append(f"java: {type(e).__name__}: {e}")
        finally:
            done.set()

    runs: list[tuple[str, int, bool]] = []
    th = threading.Thread(target=writer)
    th.start()
    try:
        rounds = 0
        while not done.is_set() or rounds == 0:
            for command, argv in COMMANDS.items():
                during = not done.is_set()
                code, _, err = race.icectl(*argv(race.name, int(time.time() * 1000)))
                assert code in ALLOWED, f"{command}: exit {code}: {err}"
                runs.append((command, code, during and not done.is_set()))
            rounds += 1
    finally:
        th.join(timeout=600)
    assert errors == []
    # Expiry may remove old Java snapshots (that is its job): their rows are what must remain.
    race.check()
    assert any(code == 0 and during for _, code, during in runs), f"no icectl commit overlapped the appends: {runs}"
    return runs
