"""The Airflow DAG and the crontab line shipped in docs/ run commands that exist and work.

Airflow is not installed: the DAG file is parsed with :mod:`ast`. Its command lists (``HEALTH``,
``MAINTAIN``) are evaluated from the module's constants, every ``BashOperator`` must run one of
them, and then they run for real, through bash and an ``icectl`` on PATH, against a generated
catalog (tests/ops/fleet.py) configured as the DAG's catalog ``prod``: the health branch succeeds
(so ``maintain`` runs) while tables need maintenance, ``maintain`` brings them to health, and the
branch then exits with the skip code. The crontab line's command runs the same way.
"""
from __future__ import annotations

import ast
import os
import pathlib
import shlex
import subprocess
import sys
import time

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "ops"))

from fleet import build_fleet  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
DAG = REPO / "docs" / "airflow" / "icectl_maintain_dag.py"
CRONTAB = REPO / "docs" / "cron" / "icectl-maintain.crontab"
NO_COMPACT = "defaults:\n  steps: [rewrite-deletes, rewrite-manifests, expire, remove-orphans]\n"


def _constants(tree: ast.Module) -> dict[str, object]:
    """Module-level ``NAME = <literal>`` assignments; list items may name earlier constants."""
    known: dict[str, object] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        value = node.value
        if isinstance(value, ast.List):
            items = []
            for elt in value.elts:
                if isinstance(elt, ast.Name) and elt.id in known:
                    items.append(known[elt.id])
                else:
                    items.append(ast.literal_eval(elt))
            known[node.targets[0].id] = items
        else:
            try:
                known[node.targets[0].id] = ast.literal_eval(value)
            except ValueError:
                continue
    return known


def _dag():
    tree = ast.parse(DAG.read_text(), filename=str(DAG))
    consts = _constants(tree)
    operators = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "BashOperator"]
    return tree, consts, operators


def _health_branch(consts: dict) -> str:
    tree = ast.parse(DAG.read_text())
    node = next(n for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "HEALTH_BRANCH")
    return eval(compile(ast.Expression(node.value), str(DAG), "eval"), {"shlex": shlex, **consts})  # noqa: S307


def test_the_dag_parses_and_every_task_runs_an_icectl_command():
    tree, consts, operators = _dag()
    assert {"HEALTH", "MAINTAIN", "SKIP"} <= set(consts)
    assert len(operators) == 2
    for op in operators:
        kw = {k.arg: k.value for k in op.keywords}
        names = {n.id for n in ast.walk(kw["bash_command"]) if isinstance(n, ast.Name)}
        if "HEALTH_BRANCH" in names:
            branch = next(n for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "HEALTH_BRANCH")
            names |= {n.id for n in ast.walk(branch.value) if isinstance(n, ast.Name)}
            skip = kw["skip_on_exit_code"]
            assert (skip.id if isinstance(skip, ast.Name) else ast.literal_eval(skip)) in ("SKIP", consts["SKIP"])
        assert names & {"HEALTH", "MAINTAIN"}, ast.unparse(op)
    for cmd in (consts["HEALTH"], consts["MAINTAIN"]):
        assert cmd[0] == "icectl"


@pytest.fixture
def prod(tmp_path):
    """The fleet, as the configured catalog ``prod``, and an environment with ``icectl`` on PATH."""
    cat = build_fleet(str(tmp_path / "fleet"), catalog_name="prod")
    config = tmp_path / "icectl.yaml"
    config.write_text(f"catalog:\n  prod:\n    type: sql\n    uri: {cat['uri']}\n    warehouse: {cat['warehouse']}\n")
    policy = tmp_path / "policy.yaml"
    policy.write_text(NO_COMPACT)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    shim = bindir / "icectl"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m icectl "$@"\n')
    shim.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["ICECTL_CONFIG"] = str(config)
    env["HOME"] = str(tmp_path)
    env.pop("ICECTL_CATALOG", None)
    return env, str(policy)


def _bash(script: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=600)


def test_the_dag_commands_exist_parse_and_work(prod):
    env, policy = prod
    _, consts, _ = _dag()
    health = [policy if a == consts["POLICY"] else a for a in consts["HEALTH"]]
    maintain = [policy if a == consts["POLICY"] else a for a in consts["MAINTAIN"]]
    for cmd in (health, maintain):
        command = [a for a in cmd[1:] if not a.startswith("-")][2]  # after the global options' values
        assert command in ("health", "maintain")
        p = _bash(f"icectl {command} --help", env)
        assert p.returncode == 0 and "Usage:" in p.stdout, p.stderr
    dry = _bash(shlex.join([a if a != "--yes" else "--dry-run" for a in maintain]), env)
    assert dry.returncode == 0, dry.stderr
    # The health task's script, evaluated from the DAG's own expression with the test's policy file.
    script = _health_branch({**consts, "HEALTH": health})
    assert shlex.join(health) in script
    assert _bash(script, env).returncode == 0  # tables need maintenance: maintain runs
    run = _bash(shlex.join(maintain), env)
    assert run.returncode == 0, run.stderr
    assert _bash(script, env).returncode == consts["SKIP"]  # all healthy now: maintain is skipped


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
    import json

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
