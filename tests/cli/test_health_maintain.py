"""``icectl health`` and ``icectl maintain`` on a generated catalog of tables in different states
(tests/ops/fleet.py), without Spark: the policy leaves compaction out (tests/spark/test_maintain_spark.py
runs the whole fleet with compaction through spark-submit).

- health names, for each table, the steps that would improve it and the exact command; each command,
  run as printed, fixes its finding; a table no step can improve (one small file) is healthy;
- maintain brings every table to a clean health, and a second run does nothing (no file, no
  metadata location changes);
- exit codes 0/13/14/15, the policy from a file and from table properties, the per-table lock
  (also between real processes), the time budget, and bad input (one line, documented code,
  nothing written).
"""
from __future__ import annotations

import io
import json
import os
import pathlib
import shlex
import subprocess
import sys
import time

import pytest

from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.errors import ExitCode

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "ops"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from fleet import NS, build_fleet, snapshot_state  # noqa: E402
from output_shapes import SHAPES, check_shape  # noqa: E402
from test_bad_input import assert_one_error  # noqa: E402

NO_COMPACT = "defaults:\n  steps: [rewrite-deletes, rewrite-manifests, expire, remove-orphans]\n"
EXPECTED_STEPS = {"fleet.deletes": ["rewrite-deletes"], "fleet.dv": ["rewrite-deletes"], "fleet.healthy": [],
                  "fleet.manifests": ["rewrite-manifests"], "fleet.old_snapshots": ["expire"],
                  "fleet.orphans": ["remove-orphans"]}


class Fleet:
    def __init__(self, root: pathlib.Path):
        self.root = root
        self.catalog = build_fleet(str(root))
        self.policy = str(root / "policy.yaml")
        pathlib.Path(self.policy).write_text(NO_COMPACT)

    def run(self, *args: str, catalog: bool = True) -> tuple[int, str, str]:
        env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
        pre = ["--uri", self.catalog["uri"], "--warehouse", self.catalog["warehouse"]] if catalog else []
        code = run(pre + list(args), env)
        return code, env.stdout.getvalue(), env.stderr.getvalue()

    def health(self, *args: str) -> tuple[int, dict]:
        code, out, err = self.run("-o", "json", "health", *args)
        assert out, err
        return code, json.loads(out)

    def locations(self) -> dict[str, str]:
        from icectl.catalog.sql import SqlCatalog
        from icectl.io import FileIO

        cat = SqlCatalog("default", self.catalog["uri"], self.catalog["warehouse"], FileIO())
        return {".".join(i): cat.load_metadata_location(i) for i in cat.list_tables((NS,))}

    def state(self) -> tuple[dict, dict]:
        return self.locations(), snapshot_state(str(self.root))


@pytest.fixture
def fleet(tmp_path, monkeypatch) -> Fleet:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.chdir(tmp_path)
    return Fleet(tmp_path)


def _steps(doc: dict) -> dict[str, list[str]]:
    return {t["table"]: t["steps"] for t in doc["tables"]}


# -- health -------------------------------------------------------------------------------------------------

def test_health_names_the_steps_and_exit_code(fleet):
    code, doc = fleet.health("--all", "--orphans", "--policy", fleet.policy)
    check_shape(doc, SHAPES["health"])
    assert _steps(doc) == EXPECTED_STEPS
    assert code == ExitCode.HEALTH_WARNING and doc["worst"] == "warning" and doc["exit_code"] == 13
    by_table = {t["table"]: t for t in doc["tables"]}
    old = by_table["fleet.old_snapshots"]
    assert old["metrics"]["snapshots"] == 8 and old["metrics"]["expirable_snapshots"] == 7
    f = [x for x in old["findings"] if x["check"] == "snapshots"][0]
    assert f["severity"] == "warning"
    assert f["command"] == f"icectl --uri {fleet.catalog['uri']} --warehouse {fleet.catalog['warehouse']} " \
                           "expire fleet.old_snapshots --yes"
    assert by_table["fleet.orphans"]["metrics"]["orphan_files"] == 3
    assert by_table["fleet.manifests"]["metrics"]["small_manifests"] == 12
    # Compaction is outside this policy: its findings are info and do not count.
    dv = [x for x in by_table["fleet.dv"]["findings"] if x["step"] == "compact"]
    assert dv and all(x["severity"] == "info" and "not in this table's policy" in x["message"] for x in dv)
    # Without --orphans the location is not listed (metadata only).
    _, doc = fleet.health("fleet", "--policy", fleet.policy)
    assert {t["table"]: t for t in doc["tables"]}["fleet.orphans"]["metrics"]["orphan_files"] is None
    assert _steps(doc)["fleet.orphans"] == []


def test_a_table_no_step_can_improve_is_healthy(fleet):
    code, doc = fleet.health("fleet.healthy", "--orphans")  # one file, far under the 512 MB target
    assert code == 0 and doc["worst"] == "healthy", doc
    t = doc["tables"][0]
    assert t["metrics"]["small_files"] == 1 and t["findings"] == [] and t["status"] == "healthy"
    code, out, err = fleet.run("health", "fleet.healthy")
    assert code == 0 and err == "" and "fleet.healthy: healthy" in out


def test_each_printed_command_fixes_its_finding(fleet):
    _, doc = fleet.health("--all", "--orphans", "--policy", fleet.policy)
    for t in doc["tables"]:
        for f in t["findings"]:
            if f["severity"] == "info":
                continue
            argv = shlex.split(f["command"])
            assert argv[0] == "icectl"
            code, _, err = fleet.run(*argv[1:], catalog=False)
            assert code == 0, (f["command"], err)
    code, doc = fleet.health("--all", "--orphans", "--policy", fleet.policy)
    assert code == 0 and all(s == [] for s in _steps(doc).values()), doc


def test_critical_and_the_policy_sources(fleet):
    (fleet.root / "strict.yaml").write_text(NO_COMPACT + "tables:\n  fleet.old_*:\n    snapshots-critical: 5\n")
    code, doc = fleet.health("fleet.old_snapshots", "fleet.healthy", "--policy", str(fleet.root / "strict.yaml"))
    assert code == ExitCode.HEALTH_CRITICAL and doc["worst"] == "critical"
    assert [t["status"] for t in doc["tables"]] == ["critical", "healthy"]
    # A table's own properties: no expiry for this one; the policy file's tables entry wins over them.
    code, _, err = fleet.run("properties", "fleet.old_snapshots", "set", "icectl.maintain.steps=remove-orphans", "--yes")
    assert code == 0, err
    code, doc = fleet.health("fleet.old_snapshots")
    assert code == 0 and doc["tables"][0]["findings"][0]["severity"] == "info"
    (fleet.root / "over.yaml").write_text("tables:\n  fleet.old_snapshots: {steps: [expire]}\n")
    code, doc = fleet.health("fleet.old_snapshots", "--policy", str(fleet.root / "over.yaml"))
    assert code == ExitCode.HEALTH_WARNING and doc["tables"][0]["steps"] == ["expire"]


def test_an_unreadable_table_is_reported_and_the_others_measured(fleet):
    loc = fleet.locations()["fleet.manifests"]
    pathlib.Path(loc).write_text("{not json")
    code, doc = fleet.health("fleet", "--policy", fleet.policy)
    assert code == ExitCode.HEALTH_CRITICAL
    by_table = {t["table"]: t for t in doc["tables"]}
    assert by_table["fleet.manifests"]["status"] == "error" and loc in by_table["fleet.manifests"]["error"]
    assert by_table["fleet.old_snapshots"]["steps"] == ["expire"]


# -- maintain -----------------------------------------------------------------------------------------------

def test_maintain_brings_every_table_to_clean_health_and_a_second_run_does_nothing(fleet):
    before = fleet.state()
    code, out, err = fleet.run("-o", "json", "maintain", "--all", "--policy", fleet.policy, "--dry-run")
    assert code == 0, err
    plan = json.loads(out)
    check_shape(plan, SHAPES["maintain"])
    assert plan["dry_run"] is True and plan["applied"] is False and fleet.state() == before
    assert {t["table"]: [s["step"] for s in t["steps"]] for t in plan["tables"]} == EXPECTED_STEPS
    code, out, err = fleet.run("-o", "json", "maintain", "--all", "--policy", fleet.policy, "--yes")
    assert code == 0, err
    doc = json.loads(out)
    check_shape(doc, SHAPES["maintain"])
    assert doc["applied"] is True and doc["failed"] == []
    status = {t["table"]: t["status"] for t in doc["tables"]}
    assert status == {name: ("done" if steps else "healthy") for name, steps in EXPECTED_STEPS.items()}
    assert all(t["health_after"] == "healthy" for t in doc["tables"])
    steps = {t["table"]: {s["step"]: s for s in t["steps"]} for t in doc["tables"]}
    assert steps["fleet.old_snapshots"]["expire"]["summary"]["expired_snapshots"] == 7
    assert steps["fleet.orphans"]["remove-orphans"]["summary"]["deleted_files"] == 3
    assert steps["fleet.dv"]["rewrite-deletes"]["summary"]["converted_to_dvs"] == 2
    assert steps["fleet.manifests"]["rewrite-manifests"]["summary"]["added_manifests"] == 1
    assert len(doc["commits"]) == 4  # deletes, dv, manifests, old_snapshots (orphans: no commit)
    assert not any(p.endswith("_icectl-maintain.lock") for p in snapshot_state(str(fleet.root)))  # released
    code, hdoc = fleet.health("--all", "--orphans", "--policy", fleet.policy)
    assert code == 0 and hdoc["worst"] == "healthy", hdoc
    after = fleet.state()
    code, out, err = fleet.run("-o", "json", "maintain", "--all", "--policy", fleet.policy, "--yes")
    assert code == 0, err
    again = json.loads(out)
    assert again["applied"] is False and again["commits"] == []
    assert all(t["status"] == "healthy" and t["steps"] == [] for t in again["tables"])
    assert fleet.state() == after, "a second run changed something"


def test_maintain_text_and_refusal_without_yes(fleet):
    before = fleet.state()
    code, out, err = fleet.run("maintain", NS, "--policy", fleet.policy)
    assert code == ExitCode.REFUSED and "without --yes" in err
    assert "fleet.old_snapshots: planned" in out and "icectl" in out and fleet.state() == before
    code, out, err = fleet.run("maintain", NS, "--policy", fleet.policy, "--yes")
    assert code == 0, err
    assert "fleet.old_snapshots: done (health warning -> healthy)" in out and "expire: done" in out
    assert "fleet.old_snapshots: expire:" in err  # progress on stderr


def test_a_failed_table_fails_the_run_and_the_others_are_done(fleet):
    loc = fleet.locations()["fleet.manifests"]
    pathlib.Path(loc).write_text("{not json")
    code, out, err = fleet.run("-o", "json", "maintain", "fleet", "--policy", fleet.policy, "--yes")
    assert code == ExitCode.MAINTENANCE_FAILED
    doc = json.loads(out)
    assert doc["failed"] == ["fleet.manifests"]
    assert {t["table"]: t["status"] for t in doc["tables"]}["fleet.old_snapshots"] == "done"
    assert json.loads(err.splitlines()[-1])["error"]["exit_code"] == 15


def test_a_held_lock_skips_the_table_and_an_expired_one_is_broken(fleet):
    from icectl.catalog.sql import SqlCatalog
    from icectl.io import FileIO
    from icectl.ops.maintain.table_lock import TableLock, lock_path
    from icectl.table.loaded import load_table

    cat = SqlCatalog("default", fleet.catalog["uri"], fleet.catalog["warehouse"], FileIO())
    table = load_table(cat, (NS, "old_snapshots"))
    held = TableLock(table)
    assert held.acquire()
    loc = fleet.locations()["fleet.old_snapshots"]
    code, out, err = fleet.run("-o", "json", "maintain", "fleet.old_snapshots", "--policy", fleet.policy, "--yes")
    assert code == ExitCode.NOT_ALL_MAINTAINED, err  # not a silent green: the table was not maintained
    assert json.loads(out)["not_maintained"] == ["fleet.old_snapshots"]
    t = json.loads(out)["tables"][0]
    assert t["status"] == "locked" and t["locked_by"] == held.mine.owner and t["steps"] == []
    assert fleet.locations()["fleet.old_snapshots"] == loc
    held.release()
    path = lock_path(table)
    pathlib.Path(path).write_text(json.dumps({"owner": "dead:1", "token": "x", "acquired_ms": 1, "expires_ms": 2}))
    code, out, err = fleet.run("-o", "json", "maintain", "fleet.old_snapshots", "--policy", fleet.policy, "--yes")
    assert code == 0, err
    assert json.loads(out)["tables"][0]["status"] == "done" and not os.path.exists(path)


@pytest.mark.parametrize("stale", [False, True])
def test_the_lock_admits_one_process_at_a_time(fleet, stale):
    """Eight processes race for one table's lock (free, or held by a run that died): exactly one
    gets it."""
    if stale:
        from icectl.ops.maintain.table_lock import LOCK_NAME

        table_dir = os.path.dirname(os.path.dirname(fleet.locations()["fleet.healthy"]))
        pathlib.Path(table_dir, "metadata", LOCK_NAME).write_text(
            json.dumps({"owner": "dead:1", "token": "old", "acquired_ms": 1, "expires_ms": 2}))
    script = (
        "import sys,time\n"
        "from icectl.catalog.sql import SqlCatalog\nfrom icectl.io import FileIO\n"
        "from icectl.ops.maintain.table_lock import TableLock\nfrom icectl.table.loaded import load_table\n"
        f"t = load_table(SqlCatalog('default', {fleet.catalog['uri']!r}, {fleet.catalog['warehouse']!r}, FileIO()),"
        " ('fleet', 'healthy'))\n"
        "start = float(sys.argv[1])\n"
        "while time.time() < start: time.sleep(0.001)\n"
        "print(TableLock(t).acquire())\n")
    start = time.time() + 3
    procs = [subprocess.Popen([sys.executable, "-c", script, str(start)], stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ)) for _ in range(8)]
    results = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert sorted(results) == ["False"] * 7 + ["True"], results


def test_the_budget(fleet):
    before = fleet.state()
    code, out, err = fleet.run("-o", "json", "maintain", "--all", "--policy", fleet.policy, "--budget", "0s", "--yes")
    assert code == ExitCode.NOT_ALL_MAINTAINED, err
    doc = json.loads(out)
    assert doc["budget_exhausted"] is True and doc["budget_seconds"] == 0
    assert all(t["status"] == "skipped" for t in doc["tables"]) and fleet.state() == before


# -- bad input ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text,expected,contains", [
    (None, ExitCode.NOT_FOUND, "policy file not found"),
    ("defaults: [1, 2\n", ExitCode.USAGE, "not valid YAML"),
    ("defaults: {steps: [compact, vacuum]}\n", ExitCode.USAGE, "unknown step 'vacuum'"),
    ("defaults: {small-files: 3}\n", ExitCode.USAGE, "unknown policy key 'small-files'"),
    ("defaults: {delete-record-ratio: lots}\n", ExitCode.USAGE, "delete-record-ratio='lots'"),
    ("tables: {fleet.t: {orphans-older-than: soon}}\n", ExitCode.USAGE, "orphans-older-than"),
    ("schedule: daily\n", ExitCode.USAGE, "unknown section 'schedule'"),
    ("- a\n", ExitCode.USAGE, "expected a mapping"),
])
@pytest.mark.parametrize("command", ["health", "maintain"])
def test_bad_policy_file(fleet, text, expected, contains, command):
    path = fleet.root / "bad.yaml"
    if text is not None:
        path.write_text(text)
    before = fleet.state()
    code, out, err = fleet.run(command, "--all", "--policy", str(path), *(["--yes"] if command == "maintain" else []))
    assert_one_error(code, out, err, expected, contains=contains)
    assert fleet.state() == before


@pytest.mark.parametrize("args,expected,contains", [
    (["fleet.nope"], ExitCode.NOT_FOUND, "fleet.nope is neither a table nor a namespace"),
    (["nope"], ExitCode.NOT_FOUND, "nope is neither"),
    ([], ExitCode.USAGE, "or --all"),
    (["fleet", "--all"], ExitCode.USAGE, "not both"),
    (["fleet..t"], ExitCode.USAGE, "invalid namespace"),
])
@pytest.mark.parametrize("command", ["health", "maintain"])
def test_bad_targets(fleet, args, expected, contains, command):
    before = fleet.state()
    code, out, err = fleet.run(command, *args, *(["--yes"] if command == "maintain" else []))
    assert_one_error(code, out, err, expected, contains=contains)
    assert fleet.state() == before


@pytest.mark.parametrize("budget", ["soon", "-1h", "2 hours", "1.5h"])
def test_bad_budget(fleet, budget):
    before = fleet.state()
    code, out, err = fleet.run("maintain", "--all", "--budget", budget, "--yes")
    assert_one_error(code, out, err, ExitCode.USAGE, contains="--budget")
    assert fleet.state() == before


def test_health_of_a_table_location_without_a_catalog(fleet):
    loc = fleet.locations()["fleet.old_snapshots"]
    table_dir = os.path.dirname(os.path.dirname(loc))
    for target in (table_dir, loc):
        code, out, err = fleet.run("-o", "json", "health", target, catalog=False)
        assert code == ExitCode.HEALTH_WARNING, err
        assert json.loads(out)["tables"][0]["steps"] == ["expire"]


# -- no silent green (issue 24) -----------------------------------------------------------------------------

def test_all_over_an_empty_catalog_is_an_error_naming_the_catalog(fleet, tmp_path):
    """The fleet's rows under another catalog_name look like an empty catalog: --all says so (exit 17)
    and names the catalog it resolved, and from where, unless --allow-empty."""
    (tmp_path / ".icectl.yaml").write_text(f"catalog:\n  prod:\n    type: sql\n    uri: {fleet.catalog['uri']}\n"
                                           f"    warehouse: {fleet.catalog['warehouse']}\n")
    for cmd in (["health", "--all"], ["maintain", "--all", "--yes"]):
        code, out, err = fleet.run(*cmd, catalog=False)
        assert_one_error(code, out, err, ExitCode.EMPTY_SELECTION,
                         contains="--all found no tables in catalog prod (sql, sqlite:///")
        assert ".icectl.yaml:2" in err  # where the catalog came from
        code, out, err = fleet.run("-o", "json", *cmd, "--allow-empty", catalog=False)
        assert code == 0, err
        doc = json.loads(out)
        assert doc["tables"] == [] and doc["catalog"].startswith("prod (sql, sqlite:///")
    (tmp_path / ".icectl.yaml").unlink()
    code, doc = fleet.health("--all", "--policy", fleet.policy)
    assert doc["catalog"].startswith("default (sql, ") and len(doc["tables"]) == len(EXPECTED_STEPS)
    code, out, err = fleet.run("health", "--all", "--policy", fleet.policy)
    assert out.splitlines()[-1].startswith("catalog default (sql, sqlite:///")


def _template(fleet, spark_submit: str) -> str:
    path = fleet.root / "template.yaml"
    path.write_text(f"spark_submit: {spark_submit}\nmaster: 'local[1]'\n")
    return str(path)


def test_a_step_whose_engine_is_missing_stops_maintain_before_any_commit(fleet):
    """compact in the policy and no spark-submit: a configuration error before anything is
    committed (not exit 15 after the other steps committed)."""
    pathlib.Path(fleet.policy).write_text("defaults:\n  steps: [compact, expire]\n")
    template = _template(fleet, "/nonexistent/spark-submit")
    before = fleet.state()
    code, out, err = fleet.run("maintain", "--all", "--policy", fleet.policy, "--yes", "--template", template)
    assert_one_error(code, out, err, ExitCode.USAGE, contains="runs compact, but spark-submit not found")
    assert "optional" in err and fleet.state() == before


def test_an_optional_step_whose_engine_is_missing_is_reported_and_the_rest_runs(fleet):
    pathlib.Path(fleet.policy).write_text("defaults:\n  steps: [compact, expire]\n  optional: [compact]\n")
    code, out, err = fleet.run("-o", "json", "maintain", "--all", "--policy", fleet.policy, "--yes",
                               "--template", _template(fleet, "/nonexistent/spark-submit"))
    assert code == 0, err
    doc = json.loads(out)
    status = {t["table"]: t["status"] for t in doc["tables"]}
    assert status["fleet.old_snapshots"] == "done" and doc["not_maintained"] == []
    unavailable = [s for t in doc["tables"] for s in t["steps"] if s["step"] == "compact"]
    assert all(s["status"] == "unavailable" and "spark-submit not found" in s["reason"] for s in unavailable)


@pytest.mark.parametrize("value", ["[vacuum]", "yes"])
def test_bad_optional(fleet, value):
    pathlib.Path(fleet.policy).write_text(f"defaults:\n  optional: {value}\n")
    code, out, err = fleet.run("maintain", "--all", "--policy", fleet.policy, "--yes")
    assert_one_error(code, out, err, ExitCode.USAGE, contains="optional")


# -- -o jsonl (issue 24) ------------------------------------------------------------------------------------

def test_jsonl_is_a_line_per_table_then_a_summary_with_timestamped_progress(fleet):
    from output_shapes import HEALTH_SUMMARY, MAINTAIN_SUMMARY

    code, out, err = fleet.run("-o", "jsonl", "health", "--all", "--policy", fleet.policy)
    assert code == ExitCode.HEALTH_WARNING, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert [t["table"] for t in lines[:-1]] == sorted(EXPECTED_STEPS)
    for t in lines[:-1]:
        check_shape(t, SHAPES["health"]["tables"][0])
    check_shape(lines[-1], HEALTH_SUMMARY)
    assert lines[-1]["summary"] is True and lines[-1]["tables"] == len(EXPECTED_STEPS) and lines[-1]["exit_code"] == 13
    code, out, err = fleet.run("-o", "jsonl", "maintain", "--all", "--policy", fleet.policy, "--yes")
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    for t in lines[:-1]:
        check_shape(t, SHAPES["maintain"]["tables"][0])
    check_shape(lines[-1], MAINTAIN_SUMMARY)
    assert {t["table"]: t["status"] for t in lines[:-1]}["fleet.old_snapshots"] == "done"
    assert lines[-1]["exit_code"] == 0 and lines[-1]["counts"] == {"done": 5, "healthy": 1}
    # progress on stderr, timestamped, per table and step, with -o jsonl too
    import re
    assert re.search(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ icectl: fleet.old_snapshots: expire: done$", err, re.M), err


def test_jsonl_is_written_as_each_table_finishes(fleet, monkeypatch):
    """The first table's line is on stdout before the second table is measured."""
    from icectl.ops.maintain import maintain as maintain_mod

    seen: list[str] = []
    env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
    real = maintain_mod.load_table

    def spy(catalog, ident):
        seen.append(env.stdout.getvalue())
        return real(catalog, ident)

    monkeypatch.setattr(maintain_mod, "load_table", spy)
    code = run(["--uri", fleet.catalog["uri"], "--warehouse", fleet.catalog["warehouse"], "-o", "jsonl", "maintain",
                "--all", "--policy", fleet.policy, "--yes"], env)
    assert code == 0, env.stderr.getvalue()
    # with --all the tables go worst first (the fleet ranking): the line before the last table's
    # measure is the one of the table maintained before it
    order = [t["table"] for t in map(json.loads, env.stdout.getvalue().splitlines()) if "table" in t]
    assert seen[0] == "" and json.loads(seen[-1].splitlines()[-1])["table"] == order[-2]
