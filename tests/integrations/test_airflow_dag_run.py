"""The shipped Airflow DAG (docs/airflow/icectl_maintain_dag.py), run by a real Airflow, 3 and 2.

Each Airflow lives in its own virtualenv, built here on first use and kept for the next run:
``.cache/airflow-venv`` (a pinned ``apache-airflow`` 3 from PyPI) and ``.cache/airflow2-venv`` (a
pinned 2.10, with tests/integrations/airflow2-constraints-3.11.txt on Python 3.11), then this checkout,
editable (installed again only when pyproject.toml changed). One Airflow home per Airflow and
session (a temporary folder, SQLite metadata database from ``airflow db migrate``); each scenario
is one ``airflow dags test icectl_maintain DATE`` against its own demo catalog (tests/ops/fleet.py,
configured as the catalog ``prod`` through ``ICECTL_CONFIG``), and reads the tasks' states and
XComs from the metadata database. On Airflow 3:

(b) tables need maintenance: maintain runs on the tables health named (through XCom), its XCom
    holds the JSON report with every one of them, and their files shrink;
(a) the same catalog, now healthy: health succeeds, maintain is skipped;
(c) a step fails: the maintain task fails and its log names the table and the step;
(d) a catalog with no tables: the health task fails;
(e) every table that needs maintenance is locked by another process: maintain is skipped and its
    XCom report lists them as not maintained.
The DAG file's own imports give no deprecation warning, on either Airflow. On Airflow 2.10 (the
operator's and the DAG's ``airflow.models`` / ``airflow.decorators`` import paths), scenario (b).
"""
from __future__ import annotations

import hashlib
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
NO_COMPACT = "defaults:\n  steps: [rewrite-deletes, rewrite-manifests, expire, remove-orphans]\n"
# major version -> (the pinned apache-airflow, its virtualenv, a constraints file or None)
# 3.3.2: a plain install of it resolves here without a constraints file; 2.10: with ours on 3.11
AIRFLOWS = {
    3: ("3.3.2", REPO / ".cache" / "airflow-venv", None),
    2: ("2.10.5", REPO / ".cache" / "airflow2-venv",
        pathlib.Path(__file__).with_name("airflow2-constraints-3.11.txt")),
}


def _venv(major: int) -> pathlib.Path:
    version, venv, constraints = AIRFLOWS[major]
    py = venv / "bin" / "python"
    stamp = venv / "installed.txt"
    want = f"apache-airflow=={version}\n"
    if not py.exists() or not stamp.exists() or stamp.read_text() != want:
        if not py.exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        use = ["-c", str(constraints)] if constraints and sys.version_info[:2] == (3, 11) else []
        subprocess.run([str(py), "-m", "pip", "install", "-q", f"apache-airflow=={version}", *use], check=True,
                       timeout=1800)
        stamp.write_text(want)
    # this checkout, editable: its code is read from here; installed again when its dependencies change
    ours = venv / "icectl-installed.txt"
    key = f"{REPO}\n{hashlib.sha256((REPO / 'pyproject.toml').read_bytes()).hexdigest()}\n"
    if not ours.exists() or ours.read_text() != key:
        subprocess.run([str(py), "-m", "pip", "install", "-q", "-e", str(REPO)], check=True, timeout=1800,
                       capture_output=True)
        ours.write_text(key)
    return py


def _airflow(tmp_path_factory, major: int) -> tuple[pathlib.Path, pathlib.Path, dict[str, str]]:
    """(the virtualenv's python, AIRFLOW_HOME, the environment) of a migrated Airflow home."""
    py = _venv(major)
    home = tmp_path_factory.mktemp(f"airflow{major}-home")
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


@pytest.fixture(scope="session")
def airflow(tmp_path_factory):
    return _airflow(tmp_path_factory, 3)


@pytest.fixture(scope="session")
def airflow2(tmp_path_factory):
    return _airflow(tmp_path_factory, 2)


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


@pytest.mark.parametrize("which", ["airflow", "airflow2"])
def test_the_dags_own_imports_warn_nothing(which, request):
    """Every warning raised while the DAG file and the operator are imported, with warnings on:
    none may come from them (Airflow 3 deprecates airflow.operators.bash, airflow.exceptions ...),
    on Airflow 3 and on Airflow 2, whose DagBag also loads the DAG folder without an import error."""
    py, home, env = request.getfixturevalue(which)
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
    if which == "airflow":
        return  # Airflow 3 parses it in every airflow dags test below
    bag = ("from airflow.models import DagBag\n"
           f"b = DagBag(dag_folder={str(home / 'dags')!r}, include_examples=False)\n"
           "print(dict(b.import_errors), sorted(t.task_id for t in b.dags['icectl_maintain'].tasks))\n")
    p = subprocess.run([str(py), "-c", bag], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.strip().splitlines()[-1] == "{} ['branch', 'health', 'maintain', 'tables_to_maintain']", p.stdout


def _snapshot_files(scenario: Scenario, table: str) -> int:
    meta = pathlib.Path(scenario.catalog["warehouse"], "fleet", table, "metadata")
    return len(list(meta.glob("snap-*.avro")))


def _maintains_what_health_found(airflow, s: Scenario) -> None:
    """Scenario (b): maintain runs on the tables health named, through XCom; its XCom holds the
    report of every one of them, done and healthy after; expired snapshots' files are gone."""
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


def test_the_dag_maintains_what_health_found_then_skips_when_healthy(airflow, tmp_path):
    s = Scenario(tmp_path)
    _maintains_what_health_found(airflow, s)
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


def test_on_airflow_2_the_dag_maintains_what_health_found(airflow2, tmp_path):
    """Airflow 2.10: the operator from airflow.models, the DAG's airflow.decorators tasks; scenario (b)."""
    _maintains_what_health_found(airflow2, Scenario(tmp_path))
