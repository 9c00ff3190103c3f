"""Airflow DAG: measure every table's health, and maintain only the tables that need it.

``health`` (``IcectlOperator``, the ``icectl[airflow]`` extra) runs ``icectl health --all`` and
pushes its whole JSON report to XCom; it succeeds when tables are healthy (0) or need maintenance
(13, 14) and fails on anything else: an unreachable catalog, or one with no tables (exit 17: a
wrong catalog name looks empty). ``tables_to_maintain`` reads the report from XCom and returns the
tables whose health calls for a step; ``branch`` skips ``maintain`` when there are none. ``maintain``
gets that list through XCom, runs ``icectl maintain`` on those tables only, and pushes its JSON
report (every table, its steps, their counts and commits) to XCom. It fails when a table failed
(exit 15; the task log names each table and step), and is skipped, with the reason, when another
run held every table's lock (exit 18). icectl's progress lines, timestamped, are in the task log
while it runs.

Needs Airflow 3 (or 2.9+) and ``pip install 'icectl[airflow,spark]'`` on the workers, with the
catalog in ``~/.icectl.yaml`` or ``$ICECTL_CONFIG``; ``ICECTL_POLICY`` names the policy file.
"""
from __future__ import annotations

import os

import pendulum

try:  # Airflow 3
    from airflow.sdk import DAG, task
except ImportError:  # Airflow 2.9+
    from airflow import DAG
    from airflow.decorators import task

from icectl.integrations.airflow import IcectlOperator

CATALOG = os.environ.get("ICECTL_DAG_CATALOG", "prod")
POLICY = os.environ.get("ICECTL_POLICY", "/etc/icectl/policy.yaml")

with DAG(
    dag_id="icectl_maintain",
    schedule="10 3 * * *",
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    tags=["iceberg", "maintenance"],
) as dag:
    health = IcectlOperator(task_id="health", command="health", arguments=["--all", "--policy", POLICY],
                            catalog=CATALOG)

    @task
    def tables_to_maintain(report: dict) -> list[str]:
        """The tables whose health calls for a maintenance step."""
        return [t["table"] for t in report["tables"] if t["steps"]]

    @task.branch
    def branch(tables: list[str]) -> str | None:
        return "maintain" if tables else None  # None: maintain is skipped

    tables = tables_to_maintain(health.output)
    maintain = IcectlOperator(task_id="maintain", command="maintain",
                              arguments=["--policy", POLICY, "--budget", "3h", "--yes"], targets=tables,
                              catalog=CATALOG)
    branch(tables) >> maintain
