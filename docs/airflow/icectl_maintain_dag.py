"""Airflow DAG: measure every table's health, and run maintenance only when a table needs it.

The ``health`` task branches on icectl's exit code: 0 (every table healthy) becomes Airflow's
"skipped" (exit 99, BashOperator's ``skip_on_exit_code``), so ``maintain`` does not run; 13
(maintenance recommended) and 14 (overdue, or a table could not be measured) succeed and
``maintain`` runs; any other code (a bad option, an unreachable catalog) fails the task. ``maintain``
fails when a table failed (exit 15); the other tables were still maintained, and its JSON report
(stdout, in the task log and in XCom) says which step failed and why.

Needs Airflow 2.6+ and icectl on the workers (``pip install 'icectl[spark]'`` for ``compact``), with
the catalog in ``~/.icectl.yaml`` or ``$ICECTL_CONFIG``.
"""
from __future__ import annotations

import shlex

import pendulum
from airflow import DAG
from airflow.operators.bash import BashOperator

CATALOG = "prod"
POLICY = "/etc/icectl/policy.yaml"

# The commands, as argument lists (tests/cli/test_airflow_dag.py runs them against a real catalog).
HEALTH = ["icectl", "--catalog", CATALOG, "--output", "json", "health", "--all", "--orphans", "--policy", POLICY]
MAINTAIN = ["icectl", "--catalog", CATALOG, "--output", "json", "maintain", "--all", "--policy", POLICY,
            "--budget", "3h", "--yes"]

SKIP = 99
HEALTH_BRANCH = (f"{shlex.join(HEALTH)}; code=$?; "
                 f"if [ $code -eq 0 ]; then exit {SKIP}; fi; "
                 "if [ $code -eq 13 ] || [ $code -eq 14 ]; then exit 0; fi; exit $code")

with DAG(
    dag_id="icectl_maintain",
    schedule="10 3 * * *",
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,  # icectl's per-table lock also keeps overlapping runs apart
    tags=["iceberg", "maintenance"],
) as dag:
    health = BashOperator(task_id="health", bash_command=HEALTH_BRANCH, skip_on_exit_code=SKIP)
    maintain = BashOperator(task_id="maintain", bash_command=shlex.join(MAINTAIN), do_xcom_push=True,
                            execution_timeout=pendulum.duration(hours=4))
    health >> maintain
