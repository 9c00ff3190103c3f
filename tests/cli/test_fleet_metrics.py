"""issue 24 items 4 and 5: ``--metrics-file`` (Prometheus text for node_exporter's textfile
collector, written atomically) and the fleet view (``health --all`` ranks tables by the need score
of docs/metrics.md; ``maintain --all --budget`` works down that ranking, worst first).

- the file parses with prometheus_client's text parser and holds the documented series for every
  table, with the values of the JSON report; the documented list (docs/metrics.md) is the written one;
- a crash between writing and renaming (an exception, or a process killed there) leaves the previous
  file intact, and no other ``*.prom`` file behind;
- without prometheus_client: one line naming the extra, both install forms, nothing run;
- 30 tables of varied need are ranked as documented (the score recomputed here from the report's
  measurements, with the page's formula);
- ``maintain`` with a budget that fits only some tables maintains the worst first and lists the
  others for the next run; time comes from the documented test seam ``MaintainOptions.clock``
  (advanced one hour per step done), not from sleeping.
"""
from __future__ import annotations

import io
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys

import pytest
from prometheus_client.parser import text_string_to_metric_families

from icectl.catalog.sql import SqlCatalog
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.cli.views import metrics as metrics_view
from icectl.cli.views.metrics import HEALTH_VALUE, SERIES
from icectl.errors import ExitCode
from icectl.io import FileIO
from icectl.ops.maintain.maintain import MaintainOptions, maintain
from icectl.ops.maintain.policy import load_policy_file

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "ops"))

from fleet import NS, RANKED_KINDS, build_fleet, build_ranked_fleet  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "metrics.md"
NO_COMPACT = "defaults:\n  steps: [rewrite-deletes, rewrite-manifests, expire, remove-orphans]\n"
POLICY = NO_COMPACT + "  snapshots-critical: 4\n"
HOUR = 3600.0


class Catalog:
    def __init__(self, root: pathlib.Path, options: dict[str, str], policy: str):
        self.root, self.options = root, options
        self.policy = str(root / "policy.yaml")
        pathlib.Path(self.policy).write_text(policy)

    def run(self, *args: str) -> tuple[int, str, str]:
        env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
        code = run(["--uri", self.options["uri"], "--warehouse", self.options["warehouse"], *args], env)
        return code, env.stdout.getvalue(), env.stderr.getvalue()

    def json(self, *args: str) -> tuple[int, dict]:
        code, out, err = self.run("-o", "json", *args)
        assert out, err
        return code, json.loads(out)

    def open(self) -> SqlCatalog:
        return SqlCatalog("default", self.options["uri"], self.options["warehouse"], FileIO())


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def fleet(home) -> Catalog:
    return Catalog(home, build_fleet(str(home)), NO_COMPACT)


@pytest.fixture(scope="module")
def ranked_fleet(tmp_path_factory) -> Catalog:
    root = tmp_path_factory.mktemp("ranked")
    return Catalog(root, build_ranked_fleet(str(root)), POLICY)


# -- the metrics file ---------------------------------------------------------------------------------------

def parse(path: pathlib.Path) -> dict[str, dict]:
    """{family name: {"type": ..., "samples": {(sample name, labels...): value}}} of a metrics file."""
    out = {}
    for fam in text_string_to_metric_families(path.read_text()):
        out[fam.name] = {"type": fam.type, "samples": {
            (s.name, tuple(sorted(s.labels.items()))): s.value for s in fam.samples}}
    return out


def series_of(families: dict, name: str) -> dict[str, float]:
    """{table: value} of one series (and the status label, for the maintenance status)."""
    out = {}
    for (_, labels), value in families.get(name, {"samples": {}})["samples"].items():
        lab = dict(labels)
        assert lab["catalog"] == "default"
        key = lab["table"] + (f"/{lab['status']}" if "status" in lab else "")
        out[key] = value
    return out


def documented_series() -> list[tuple[str, str, tuple[str, ...], tuple[str, ...]]]:
    rows = re.findall(r"^\| `(icectl_\w+)` \| (\w+) \| ([\w, ]+) \| ([\w, ]+) \|", PAGE.read_text(), re.M)
    return [(n, t, tuple(x.strip() for x in labels.split(",")), tuple(x.strip() for x in cmds.split(",")))
            for n, t, labels, cmds in rows]


def test_the_documented_series_are_the_written_ones():
    documented = documented_series()
    assert documented == [(s.name, s.type, s.labels, s.commands) for s in SERIES]
    helps = re.findall(r"^\| `icectl_\w+` \|[^|]+\|[^|]+\|[^|]+\| (.+) \|$", PAGE.read_text(), re.M)
    assert helps == [s.help for s in SERIES]


def test_health_metrics_file_holds_every_documented_series_for_every_table(fleet):
    prom = fleet.root / "health.prom"
    code, doc = fleet.json("health", "--all", "--orphans", "--policy", fleet.policy, "--metrics-file", str(prom))
    assert code == ExitCode.HEALTH_WARNING
    families = parse(prom)
    written = [s for s in SERIES if "health" in s.commands]
    assert sorted(families) == sorted(s.name for s in written)
    assert all(families[s.name]["type"] == s.type for s in written)
    tables = {t["table"]: t for t in doc["tables"]}
    assert len(tables) == 6
    field = {"icectl_table_snapshots": "snapshots", "icectl_table_metadata_file_bytes": "metadata_size",
             "icectl_table_data_files": "data_files", "icectl_table_data_bytes": "data_bytes",
             "icectl_table_small_files": "small_files", "icectl_table_delete_files": "delete_files",
             "icectl_table_orphan_bytes": "orphan_bytes"}
    for s in written:
        values = series_of(families, s.name)
        assert sorted(values) == sorted(tables), s.name  # every table, each once
        for name, t in tables.items():
            if s.name in field:
                assert values[name] == t["metrics"][field[s.name]], (s.name, name)
            elif s.name == "icectl_table_health":
                assert values[name] == HEALTH_VALUE[t["status"]]
            elif s.name == "icectl_table_need_score":
                assert values[name] == t["score"]
    assert series_of(families, "icectl_table_orphan_bytes")["fleet.orphans"] > 0
    # Without --orphans the location is not listed: no orphan series rather than a false 0.
    code, _ = fleet.json("health", "--all", "--policy", fleet.policy, "--metrics-file", str(prom))
    assert series_of(parse(prom), "icectl_table_orphan_bytes") == {}
    assert len(series_of(parse(prom), "icectl_table_snapshots")) == 6


def test_maintain_metrics_file_has_the_outcome_duration_and_health_after(fleet):
    prom = fleet.root / "maintain.prom"
    code, doc = fleet.json("maintain", "--all", "--policy", fleet.policy, "--yes", "--metrics-file", str(prom))
    assert code == 0
    families = parse(prom)
    assert sorted(families) == sorted(s.name for s in SERIES)
    tables = {t["table"]: t for t in doc["tables"]}
    status = series_of(families, "icectl_table_maintenance_status")
    assert status == {f"{n}/{t['status']}": 1.0 for n, t in tables.items()}
    assert {n for n, t in tables.items() if t["status"] == "done"} == \
        {"fleet.deletes", "fleet.dv", "fleet.manifests", "fleet.old_snapshots", "fleet.orphans"}
    assert series_of(families, "icectl_table_maintenance_duration_seconds") == \
        {n: t["seconds"] for n, t in tables.items()}
    assert series_of(families, "icectl_table_health") == {n: HEALTH_VALUE[t["health_after"]] for n, t in tables.items()}
    assert len(series_of(families, "icectl_table_maintenance_timestamp_seconds")) == 6
    # The measurements are the ones after maintenance: health now agrees.
    _, health = fleet.json("health", "--all", "--policy", fleet.policy)
    snaps = series_of(families, "icectl_table_snapshots")
    assert snaps == {t["table"]: t["metrics"]["snapshots"] for t in health["tables"]}
    assert snaps["fleet.old_snapshots"] == 1


def test_a_crash_between_write_and_rename_leaves_the_previous_file(fleet, monkeypatch):
    prom = fleet.root / "health.prom"
    assert fleet.run("health", "--all", "--policy", fleet.policy, "--metrics-file", str(prom))[0] == 13
    before = prom.read_bytes()
    assert b"icectl_table_snapshots" in before

    def crash(*_a, **_k):
        raise KeyboardInterrupt  # as a signal delivered between the write and the rename

    monkeypatch.setattr(os, "replace", crash)
    code, _, err = fleet.run("health", "fleet.healthy", "--policy", fleet.policy, "--metrics-file", str(prom))
    monkeypatch.undo()
    assert code == 130, err  # what icectl returns when interrupted
    assert prom.read_bytes() == before
    assert sorted(p.name for p in fleet.root.iterdir() if ".prom" in p.name) == ["health.prom"]


def test_a_process_killed_before_the_rename_leaves_the_previous_file(fleet):
    prom = fleet.root / "health.prom"
    assert fleet.run("health", "--all", "--policy", fleet.policy, "--metrics-file", str(prom))[0] == 13
    before = prom.read_bytes()
    # The child writes the new file in full, then is killed (SIGKILL: no clean-up) where it would rename it.
    child = ("import os, signal, sys\n"
             "os.replace = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)\n"
             "from icectl.cli.main import run\n"
             "sys.exit(run(sys.argv[1:]))\n")
    proc = subprocess.run([sys.executable, "-c", child, "--uri", fleet.options["uri"], "--warehouse",
                           fleet.options["warehouse"], "health", "fleet.healthy", "--metrics-file", str(prom)],
                          capture_output=True, text=True, cwd=fleet.root, timeout=300)
    assert proc.returncode == -9, proc.stderr
    assert prom.read_bytes() == before
    left = [p for p in fleet.root.iterdir() if ".prom" in p.name and p.name != "health.prom"]
    assert len(left) == 1 and left[0].name.startswith(".") and not left[0].name.endswith(".prom")
    assert "fleet.healthy" in left[0].read_text()  # it was written, and the collector skips it


def test_without_prometheus_client_one_line_names_the_extra(fleet, monkeypatch):
    monkeypatch.setattr(metrics_view, "Gauge", None)
    before = fleet.open().load_metadata_location((NS, "old_snapshots"))
    for command in (["health", "--all"], ["maintain", "--all", "--yes"]):
        code, out, err = fleet.run(*command, "--policy", fleet.policy, "--metrics-file", "m.prom")
        assert code == ExitCode.UNSUPPORTED
        assert out == ""
        assert err == ("icectl: error: --metrics-file needs prometheus_client, in the extra icectl[metrics]\n"
                       "hint: pip install 'icectl[metrics]' (from a checkout: pip install '.[metrics]')\n")
        assert err in PAGE.read_text()
    assert not (fleet.root / "m.prom").exists()
    assert fleet.open().load_metadata_location((NS, "old_snapshots")) == before  # maintain did nothing


# -- the fleet view --------------------------------------------------------------------------------------------

def documented_score(t: dict) -> float | None:
    """docs/metrics.md's need score, from a health report's table."""
    m = t["metrics"]
    verdict = {"critical": 100, "warning": 10, "healthy": 0}.get(t["status"])
    if m is None or verdict is None:
        return None
    return round(verdict + (m["metadata_size"] or 0) / 1_048_576 + m["snapshots"] / 100 + m["small_files"] / 100
                 + m["delete_files"] / 10 + 10 * m["delete_record_ratio"]
                 + (m["maintenance_age_ms"] or 0) / 86_400_000 / 30, 2)


def test_health_all_ranks_thirty_tables_as_documented(ranked_fleet):
    code, doc = ranked_fleet.json("health", "--all", "--policy", ranked_fleet.policy)
    assert code == ExitCode.HEALTH_CRITICAL
    tables = doc["tables"]
    assert len(tables) == 30 and doc["ranked"] is True
    assert [t["rank"] for t in tables] == list(range(1, 31))
    for t in tables:
        assert t["score"] == documented_score(t), t["table"]
    order = sorted(tables, key=lambda t: (-t["score"], t["table"]))
    assert [t["table"] for t in tables] == [t["table"] for t in order]
    assert len({t["score"] for t in tables}) >= 20  # varied need, not a tie broken by name
    # The verdict first: critical, then warning, then healthy.
    statuses = [t["status"] for t in tables]
    assert statuses == sorted(statuses, key=["critical", "warning", "healthy"].index)
    assert statuses.count("critical") == 3 and statuses.count("healthy") >= 5
    # Within a kind, more trouble ranks higher: more delete files, more snapshots to expire.
    rank = {t["table"].split(".")[1]: t["rank"] for t in tables}
    for kind in ("snapshots", "deletes", "mixed"):
        k = RANKED_KINDS.index(kind)
        ranks = [rank[f"t{n:02d}"] for n in range(k, 30, 5)]
        assert ranks == sorted(ranks, reverse=True), (kind, ranks)
    # The text lists the same order, with rank and score.
    code, out, _ = ranked_fleet.run("health", "--all", "--policy", ranked_fleet.policy)
    heads = [line for line in out.splitlines() if line.startswith("fleet.")]
    assert heads == [f"{t['table']}: {t['status']} (rank {t['rank']}, need {t['score']})" for t in tables]
    # Tables named: their order, ranks still given.
    code, named = ranked_fleet.json("health", "fleet.t00", "fleet.t25", "--policy", ranked_fleet.policy)
    assert [t["table"] for t in named["tables"]] == ["fleet.t00", "fleet.t25"] and named["ranked"] is False
    assert [t["rank"] for t in named["tables"]] == [2, 1]


class StepClock:
    """MaintainOptions.clock: an hour passes when a step is done (told by maintain's progress)."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def progress(self, message: str) -> None:
        if re.search(r"^[^:]+: [\w-]+: (done|failed)(: |$)", message):  # a step's end, not a table's
            self.now += HOUR


def test_maintain_with_a_budget_does_the_worst_tables_first(ranked_fleet, tmp_path_factory):
    root = tmp_path_factory.mktemp("budget")
    cat = Catalog(root, build_ranked_fleet(str(root)), POLICY)
    _, health = cat.json("health", "--all", "--policy", cat.policy)
    ranking = [t["table"] for t in health["tables"]]
    steps = {t["table"]: len(t["steps"]) for t in health["tables"]}
    needing = [n for n in ranking if steps[n]]
    assert len(needing) == 17
    catalog = cat.open()
    idents = sorted(tuple(i) for i in catalog.list_tables((NS,)))  # by name: not the ranking's order
    clock = StepClock()
    out = maintain(catalog, idents, load_policy_file(cat.policy),
                   opts=MaintainOptions(budget_ms=10 * 3_600_000, rank=True, clock=clock), progress=clock.progress)
    assert [t.table for t in out.tables] == ranking  # worked down the ranking
    done = [t.table for t in out.tables if t.status == "done"]
    # The budget (ten step-hours) runs out: the worst tables are done, in order, and the others left.
    hours, expect_done = 0, []
    for name in needing:
        if hours >= 10:
            break
        expect_done.append(name)
        hours += steps[name]
    assert done == [n for n in expect_done if all(s.status == "done" for t in out.tables if t.table == n
                                                  for s in t.steps)]
    assert done[:3] == needing[:3] and 4 <= len(done) < len(needing)
    assert out.budget_exhausted
    assert out.left_for_next_run == [n for n in needing if n not in done]
    assert not set(out.left_for_next_run) & set(done)
    assert max(ranking.index(n) for n in done) < min(ranking.index(n) for n in out.left_for_next_run
                                                     if n not in expect_done)
    # By name, the same budget would have maintained other tables: the ranking decided.
    assert set(done) != set([n for n in sorted(needing)][:len(done)])
    # Healthy tables are not "left": nothing was to be done.
    assert all(steps[n] for n in out.left_for_next_run)


def test_maintain_budget_report_lists_the_tables_left(ranked_fleet):
    code, doc = ranked_fleet.json("maintain", "--all", "--policy", ranked_fleet.policy, "--budget", "1ms", "--yes")
    assert code == 18  # some tables were not maintained (docs/exit-codes.md)
    _, health = ranked_fleet.json("health", "--all", "--policy", ranked_fleet.policy)
    needing = [t["table"] for t in health["tables"] if t["steps"]]
    assert doc["budget_exhausted"] is True and doc["left_for_next_run"] == needing
    code, out, _ = ranked_fleet.run("maintain", "--all", "--policy", ranked_fleet.policy, "--budget", "1ms", "--yes")
    assert f"left for the next run: {', '.join(needing)}\n" in out


# -- the docs page -----------------------------------------------------------------------------------------------

@pytest.mark.spark
def test_the_docs_page_runs(home):
    """docs/metrics.md: its ``sh`` blocks run as written (the demo catalog in a fresh folder; the
    install lines are the reader's), and each metrics file holds the documented series."""
    text = PAGE.read_text()
    commands = [line.split("#")[0].strip() for block in re.findall(r"```sh\n(.*?)```", text, re.S)
                for line in block.splitlines() if line.strip()]
    assert [c for c in commands if c.startswith("pip install")] == ["pip install 'icectl[metrics]'",
                                                                     "pip install '.[metrics]'"]
    ran = [c for c in commands if not c.startswith("pip install")]
    assert ran[0] == "icectl demo" and len(ran) == 3
    for command in ran:
        env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
        code = run(shlex.split(command)[1:], env)
        assert code in (0, 13), f"{command}: {env.stderr.getvalue()}"
        if "health" in command:
            assert "demo.events: warning (rank 1, need " in env.stdout.getvalue()
    for name, command in (("icectl_health.prom", "health"), ("icectl_maintain.prom", "maintain")):
        families = parse(home / name)
        assert sorted(families) == sorted(s.name for s in SERIES if command in s.commands and
                                          s.name != "icectl_table_orphan_bytes" or s.name == "icectl_table_orphan_bytes"
                                          and command in s.commands)
        assert series_of(families, "icectl_table_snapshots").keys() == {"demo.events"}
