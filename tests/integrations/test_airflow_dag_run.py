"""The shipped Airflow DAG (docs/airflow/icectl_maintain_dag.py), run by a real Airflow.

Airflow lives in its own virtualenv, ``.cache/airflow-venv`` (built here on first use: a pinned
``apache-airflow`` from PyPI, then this checkout with its ``airflow`` extra; kept for the next
run). One Airflow home per session (a temporary folder, SQLite metadata database from
``airflow db migrate``); each scenario is one ``airflow dags test icectl_maintain DATE`` against its
own demo catalog (tests/ops/fleet.py, configured as the catalog ``prod`` through ``ICECTL_CONFIG``),
and reads the tasks' states and XComs from the metadata database:

(b) tables need maintenance: maintain runs on the tables health named (through XCom), its XCom
    holds the JSON report with every one of them, and their files shrink;
(a) the same catalog, now healthy: health succeeds, maintain is skipped;
(c) a step fails: the maintain task fails and its log names the table and the step;
(d) a catalog with no tables: the health task fails;
(e) every table that needs maintenance is locked by another process: maintain is skipped and its
    XCom report lists them as not maintained.
The DAG file's own imports give no deprecation warning.
"""
from __future__ import annotations

import json
import os
import pathlib
import sqlite3
import subprocess
import sys
import time

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "ops"))

from fleet import build_fleet  # noqa: E402

pytestmark = [pytest.mark.airflow, pytest.mark.slow]

REPO = pathlib.Path(__file__).resolve().parents[2]
DAG = REPO / "docs" / "airflow" / "icectl_maintain_dag.py"
VENV = REPO / ".cache" / "airflow-venv"
AIRFLOW_VERSION = "3.3.2"  # pinned: a plain install of it resolves here without a constraints file
NO_COMPACT = "defaults:\n  steps: [rewrite-deletes, rewrite-manifests, expire, remove-orphans]\n"


def _venv() -> pathlib.Path:
    py = VENV / "bin" / "python"
    stamp = VENV / "installed.txt"
    want = f"apache-airflow=={AIRFLOW_VERSION}\n"
    if not py.exists() or not stamp.exists() or stamp.read_text() != want:
        if not py.exists():
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", f"apache-airflow=={AIRFLOW_VERSION}"], check=True,
                       timeout=1800)
        stamp.write_text(want)
    # this checkout, each run (its code changes; its dependencies are installed once)
    subprocess.run([str(py), "-m", "pip", "install", "-q", "-e", str(REPO)], check=True, timeout=1800,
                   capture_output=True)
    return py


@pytest.fixture(scope="session")
def airflow(tmp_path_factory):
    py = _venv()
    home = tmp_path_factory.mktemp("airflow-home")
    dags = home / "dags"
    dags.mkdir()
    (dags / DAG.name).write_text(DAG.read_text())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "ICECTL", "PYTHON"))}
    env.update({"AIRFLOW_HOME": str(home), "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
                "AIRFLOW__CORE__LOAD_EXAMPLES": "False", "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
                "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
                "PATH": f"{py.parent}{os.pathsep}{os.environ.get('PATH', '')}", "HOME": str(home)})
    p = subprocess.run([str(py.parent / "airflow"), "db", "migrate"], env=env, capture_output=True, text=True,
                       timeout=900)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return py, home, env


class Scenario:
    def __init__(self, root: pathlib.Path, *, catalog_name: str = "prod", policy: str = NO_COMPACT,
                 spark_template: str | None = None):
        self.root = root
        self.catalog = build_fleet(str(root / "fleet"), catalog_name=catalog_name)
        self.config = root / "icectl.yaml"
        extra = f"    spark.template: {spark_template}\n" if spark_template else ""
        self.config.write_text(f"catalog:\n  prod:\n    type: sql\n    uri: {self.catalog['uri']}\n"
                               f"    warehouse: {self.catalog['warehouse']}\n{extra}")
        self.policy = root / "policy.yaml"
        self.policy.write_text(policy)


_DAY = iter(range(1, 28))


def _run_dag(airflow, scenario: Scenario) -> tuple[subprocess.CompletedProcess, dict[str, str], dict[str, object]]:
    """``airflow dags test`` on a new logical date; (the process, task states, XCom return values)."""
    py, home, env = airflow
    env = dict(env, ICECTL_CONFIG=str(scenario.config), ICECTL_POLICY=str(scenario.policy))
    date = f"2026-02-{next(_DAY):02d}"
    p = subprocess.run([str(py.parent / "airflow"), "dags", "test", "icectl_maintain", date], env=env,
                       capture_output=True, text=True, timeout=900)
    db = sqlite3.connect(home / "airflow.db")
    try:
        run_id = db.execute("select run_id from dag_run where dag_id = 'icectl_maintain' "
                            "order by id desc limit 1").fetchone()[0]
        states = dict(db.execute("select task_id, state from task_instance where dag_id = 'icectl_maintain' "
                                 "and run_id = ?", (run_id,)).fetchall())
        cols = {r[1] for r in db.execute("pragma table_info(xcom)")}
        run_col = "run_id" if "run_id" in cols else "dag_run_id"
        key = run_id if run_col == "run_id" else db.execute(
            "select id from dag_run where run_id = ?", (run_id,)).fetchone()[0]
        xcoms = {}
        for task_id, value in db.execute(f"select task_id, value from xcom where dag_id = 'icectl_maintain' and "
                                         f"{run_col} = ? and key = 'return_value'", (key,)).fetchall():
            if isinstance(value, bytes):
                value = value.decode()
            doc = json.loads(value)
            if isinstance(doc, str) and doc[:1] in "[{":  # stored as JSON text inside JSON
                doc = json.loads(doc)
            xcoms[task_id] = doc
    finally:
        db.close()
    return p, states, xcoms


def test_the_dags_own_imports_warn_nothing(airflow):
    """Every warning raised while the DAG file and the operator are imported, with warnings on:
    none may come from them (Airflow 3 deprecates airflow.operators.bash, airflow.exceptions ...)."""
    py, home, env = airflow
    code = ("import runpy, warnings, json\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            f"    runpy.run_path({str(DAG)!r})\n"
            "print(json.dumps([[str(x.category.__name__), x.filename, str(x.message)] for x in w]))\n")
    p = subprocess.run([str(py), "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    found = json.loads(p.stdout.strip().splitlines()[-1])
    ours = [w for w in found if w[1] == str(DAG) or w[1].startswith(str(REPO / "icectl"))]
    assert ours == [], ours


def _snapshot_files(scenario: Scenario, table: str) -> int:
    meta = pathlib.Path(scenario.catalog["warehouse"], "fleet", table, "metadata")
    return len(list(meta.glob("snap-*.avro")))


def test_the_dag_maintains_what_health_found_then_skips_when_healthy(airflow, tmp_path):
    s = Scenario(tmp_path)
    before = _snapshot_files(s, "old_snapshots")
    p, states, xcoms = _run_dag(airflow, s)
    log = p.stdout + p.stderr
    assert states.get("health") == "success" and states.get("maintain") == "success", (states, log[-4000:])
    need = xcoms["tables_to_maintain"]
    assert set(need) == {"fleet.deletes", "fleet.dv", "fleet.manifests", "fleet.old_snapshots"}, need
    report = xcoms["maintain"]
    assert [t["table"] for t in report["tables"]] == need  # every table health named, through XCom
    assert all(t["status"] == "done" and t["health_after"] == "healthy" for t in report["tables"]), report
    assert len(xcoms["health"]["tables"]) == 6
    assert _snapshot_files(s, "old_snapshots") < before  # expired snapshots' files are gone
    assert "icectl: fleet.old_snapshots: expire: done" in log  # progress lines in the task log
    assert not [ln for ln in log.splitlines() if "Warning" in ln and ("icectl_maintain_dag" in ln or "icectl/" in ln)]
    # (a) healthy now: health green, maintain skipped
    p, states, xcoms = _run_dag(airflow, s)
    assert states.get("health") == "success" and states.get("maintain") == "skipped", (states, p.stdout[-3000:])
    assert xcoms["health"]["worst"] == "healthy" and xcoms["tables_to_maintain"] == []


def test_a_failing_step_fails_maintain_and_the_log_names_table_and_step(airflow, tmp_path):
    fail = tmp_path / "spark-submit"
    fail.write_text("#!/bin/sh\necho 'the cluster is down' >&2\nexit 3\n")
    fail.chmod(0o755)
    template = tmp_path / "template.yaml"
    template.write_text(f"spark_submit: {fail}\nmaster: yarn\n")
    s = Scenario(tmp_path, policy="defaults:\n  steps: [rewrite-deletes, compact, expire]\n",
                 spark_template=str(template))
    p, states, xcoms = _run_dag(airflow, s)
    log = p.stdout + p.stderr
    assert states.get("maintain") == "failed", (states, log[-4000:])
    assert "table fleet.deletes failed at step compact" in log, log[-4000:]
    assert xcoms["maintain"]["failed"]  # the report is in XCom all the same


def test_an_empty_catalog_fails_health(airflow, tmp_path):
    s = Scenario(tmp_path, catalog_name="other")  # the rows are under another catalog name: prod looks empty
    p, states, xcoms = _run_dag(airflow, s)
    assert states.get("health") == "failed", (states, p.stdout[-3000:])
    assert "--all found no tables in catalog prod" in p.stdout + p.stderr
    assert states.get("maintain") != "success"


def test_tables_locked_by_another_process_are_skipped_and_reported(airflow, tmp_path):
    s = Scenario(tmp_path)
    now = int(time.time() * 1000)
    for table in ("deletes", "dv", "manifests", "old_snapshots"):
        lock = pathlib.Path(s.catalog["warehouse"], "fleet", table, "metadata", "_icectl-maintain.lock")
        lock.write_text(json.dumps({"owner": "other-host:4242", "token": "t", "acquired_ms": now,
                                    "expires_ms": now + 3_600_000}))
    p, states, xcoms = _run_dag(airflow, s)
    assert states.get("maintain") == "skipped", (states, p.stdout[-3000:])
    report = xcoms["maintain"]
    assert sorted(report["not_maintained"]) == ["fleet.deletes", "fleet.dv", "fleet.manifests", "fleet.old_snapshots"]
    assert all(t["status"] == "locked" and t["locked_by"] == "other-host:4242" for t in report["tables"])
