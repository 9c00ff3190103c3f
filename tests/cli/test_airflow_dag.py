"""The Airflow DAG and the crontab shipped in docs/.

The DAG is read with :mod:`ast` here (tests/integrations/test_airflow_dag_run.py runs it with a real
Airflow); the crontab's job runs three times as cron runs it, against a generated catalog
(tests/ops/fleet.py) configured as the catalog ``prod``. docs/scheduling.md shows both files as
they are, and its metrics example runs here.
"""
from __future__ import annotations

import ast
import io
import json
import pathlib
import re
import shlex
import subprocess
import sys
import time

from prometheus_client.parser import text_string_to_metric_families

from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.cli.views.metrics import SERIES

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "ops"))

from fleet import build_fleet  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
DAG = REPO / "docs" / "airflow" / "icectl_maintain_dag.py"
CRONTAB = REPO / "docs" / "cron" / "icectl-maintain.crontab"
PAGE = REPO / "docs" / "scheduling.md"
NO_COMPACT = "defaults:\n  steps: [rewrite-deletes, rewrite-manifests, expire, remove-orphans]\n"


def test_the_dag_uses_the_operator_and_no_deprecated_import():
    """Without Airflow: the DAG runs icectl through IcectlOperator (tests/integrations/
    test_airflow_dag_run.py runs it with a real Airflow) and imports nothing Airflow 3 deprecated."""
    tree = ast.parse(DAG.read_text(), filename=str(DAG))
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "icectl.integrations.airflow" in modules
    assert not {m for m in modules if m and m.startswith(("airflow.operators", "airflow.exceptions"))}, modules
    calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert "IcectlOperator" in calls and "BashOperator" not in calls


def _crontab() -> tuple[dict[str, str], str]:
    """The crontab's environment lines (``NAME=value``) and its one job's command."""
    assignments, jobs = {}, []
    for ln in CRONTAB.read_text().splitlines():
        if not ln.strip() or ln.startswith("#"):
            continue
        name, eq, value = ln.partition("=")
        if eq and name.strip().isidentifier() and " " not in name.strip():
            assignments[name.strip()] = value.strip()
        else:
            jobs.append(ln)
    assert len(jobs) == 1, jobs
    fields = jobs[0].split(None, 5)
    assert len(fields) == 6 and all(f.replace("*", "").replace("/", "").replace(",", "").isdigit() or f == "*"
                                    for f in fields[:5]), fields
    assert "%" not in fields[5]  # cron turns % into a newline
    return assignments, fields[5]


def test_the_crontab_line_runs_three_times_under_crons_environment(tmp_path):
    """The job's command as cron runs it: ``env -i`` with cron's defaults (PATH=/usr/bin:/bin,
    SHELL=/bin/sh, HOME, LOGNAME) and the crontab's own NAME=value lines, through /bin/sh, three
    times; icectl is where the crontab says (a virtualenv at /opt/icectl, here under tmp_path) and
    the catalog in ~/.icectl.yaml. The log is JSON Lines: every line parses, three runs of a line per
    table and a summary; stderr went to its own file; an overlapping run is kept out by flock."""
    assignments, command = _crontab()
    assert assignments.get("SHELL") == "/bin/sh" and "/usr/bin:/bin" in assignments.get("PATH", "")
    opt, logs, etc = tmp_path / "opt" / "icectl", tmp_path / "var" / "log" / "icectl", tmp_path / "etc"
    (opt / "bin").mkdir(parents=True)
    shim = opt / "bin" / "icectl"  # the virtualenv's console script: this checkout's icectl
    shim.write_text(f'#!/bin/sh\nPYTHONPATH="{REPO}" exec "{sys.executable}" -m icectl "$@"\n')
    shim.chmod(0o755)
    cat = build_fleet(str(tmp_path / "fleet"), catalog_name="prod")
    home = tmp_path / "home"
    home.mkdir()
    (home / ".icectl.yaml").write_text(f"catalog:\n  prod:\n    type: sql\n    uri: {cat['uri']}\n"
                                       f"    warehouse: {cat['warehouse']}\n")
    etc.mkdir()
    (etc / "policy.yaml").write_text(NO_COMPACT)

    def here(text: str) -> str:
        return (text.replace("/opt/icectl", str(opt)).replace("/var/log/icectl", str(logs))
                .replace("/etc/icectl", str(etc)))

    assert not logs.exists()  # the job creates its log folder
    env = {"PATH": "/usr/bin:/bin", "SHELL": "/bin/sh", "HOME": str(home), "LOGNAME": "root"}
    env.update({k: here(v) for k, v in assignments.items()})
    argv = ["env", "-i", *[f"{k}={v}" for k, v in env.items()], env["SHELL"], "-c", here(command)]
    codes = []
    for _ in range(3):
        p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        assert p.stdout == "" and p.stderr == "", (p.stdout, p.stderr)  # all of it went to the two files
        codes.append(p.returncode)
    err = (logs / "maintain.err").read_text()
    assert codes == [0, 0, 0], err
    lines = [json.loads(line) for line in (logs / "maintain.jsonl").read_text().splitlines()]
    summaries = [i for i, d in enumerate(lines) if d.get("summary")]
    assert len(summaries) == 3 and summaries[-1] == len(lines) - 1
    runs = [lines[a + 1:b] for a, b in zip([-1] + summaries, summaries)]
    assert all(len(r) == 6 and all("table" in t and "status" in t for t in r) for r in runs)
    assert "done" in {t["status"] for t in runs[0]} and all(t["status"] == "healthy" for t in runs[2])
    assert [lines[i]["applied"] for i in summaries] == [True, False, False]
    assert "icectl: fleet.old_snapshots: expire: done" in err and not err.lstrip().startswith("{")
    # A run that overlaps one still going is kept out (flock -n), and writes nothing to the log.
    size = (logs / "maintain.jsonl").stat().st_size
    holder = subprocess.Popen(["flock", str(logs / "maintain.lock"), "sleep", "30"])
    try:
        time.sleep(1)
        p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        assert p.returncode == 1 and (logs / "maintain.jsonl").stat().st_size == size
    finally:
        holder.kill()
        holder.wait()


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```$", text, re.S | re.M)


def test_the_scheduling_page_runs(tmp_path, monkeypatch):
    """docs/scheduling.md: the crontab and the DAG are shown as shipped; its ``sh`` block runs as
    written on the demo catalog (a fresh home), ``maintain``'s output is JSON Lines, and the metrics
    files hold the series the page lists (the documented ones, icectl.cli.views.metrics.SERIES), the
    example lines among them as shown."""
    text = PAGE.read_text()
    assert CRONTAB.read_text() in _blocks(text, "text")
    assert _blocks(text, "python") == [DAG.read_text()]
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.chdir(tmp_path)
    commands = [line for block in _blocks(text, "sh") for line in block.splitlines() if line.strip()]
    assert commands[0] == "icectl demo" and len(commands) == 3, commands
    out = ""
    for command in commands:
        env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
        code = run(shlex.split(command)[1:], env)
        assert code in (0, 13), f"{command}: {env.stderr.getvalue()}"
        out = env.stdout.getvalue()
    lines = [json.loads(line) for line in out.splitlines()]  # -o jsonl: a line per table, then the summary
    assert [d["table"] for d in lines[:-1]] == ["demo.events"] and lines[-1]["summary"] is True
    metrics = text.split("\n## Metrics\n", 1)[1]
    listed = re.findall(r"^- `(icectl_\w+)`", metrics, re.M)
    assert listed == [s.name for s in SERIES]
    written = {}
    for name in ("icectl_health.prom", "icectl_maintain.prom"):
        families = list(text_string_to_metric_families((tmp_path / name).read_text()))
        assert {f.name for f in families} <= set(listed), name
        written[name] = {(s.name, tuple(sorted(s.labels.items()))): s.value for f in families for s in f.samples}
    assert {name for name, _ in written["icectl_maintain.prom"]} >= {
        s.name for s in SERIES if "maintain" in s.commands and s.name != "icectl_table_orphan_bytes"}
    example = _blocks(metrics, "text")[0]
    for fam in text_string_to_metric_families(example):
        for sample in fam.samples:
            key = (sample.name, tuple(sorted(sample.labels.items())))
            assert written["icectl_maintain.prom"].get(key) == sample.value, (key, sample.value)
