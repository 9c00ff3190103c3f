"""``IcectlOperator``: run an icectl command from Airflow (the ``icectl[airflow]`` extra).

The operator runs ``icectl -o json COMMAND ...`` in a child process (the worker's icectl, in the
operator's Python), copies icectl's progress lines (stderr) into the task log as they come, and
returns the parsed JSON report, so Airflow pushes the whole report to XCom (``return_value``). It
maps icectl's exit codes to Airflow's outcomes:

- success: 0; for ``health`` also 13 and 14 (the report says which tables need maintenance);
- skipped (``AirflowSkipException`` with the reason; the report is still pushed to XCom): nothing
  to do (no table given), or ``maintain`` exit 18 with every table skipped (locked by another run);
- failed: anything else; for ``maintain`` exit 15 the log names each failing table and step.

It works on Airflow 3 (``airflow.sdk``) and 2.9+ (``airflow.models``), and imports nothing
deprecated on either.
"""
from __future__ import annotations

import json
import subprocess
import sys
from typing import Any, Sequence

from icectl.errors import install_hint

try:  # Airflow 3: the task SDK
    from airflow.sdk import BaseOperator
    from airflow.sdk.exceptions import AirflowException, AirflowSkipException
except ImportError:  # Airflow 2.9+
    try:
        from airflow.exceptions import AirflowException, AirflowSkipException
        from airflow.models import BaseOperator
    except ImportError as e:  # no Airflow in this install: the airflow extra names it
        raise ImportError(f"icectl.integrations.airflow needs Apache Airflow, which this install lacks; "
                          f"{install_hint('airflow')}") from e

# icectl's exit codes (docs/exit-codes.md) that are a result, per command, not a failure
RESULT_CODES = {"health": (0, 13, 14), "maintain": (0,)}
NOT_ALL_MAINTAINED = 18
MAINTENANCE_FAILED = 15


class IcectlOperator(BaseOperator):
    """Run ``icectl [--catalog CATALOG] -o json COMMAND *arguments *targets``.

    ``targets`` (templated; an XComArg works) are tables or namespaces appended to the command,
    e.g. the tables a ``health`` task found in need of maintenance; an empty list skips the task
    (nothing to do). ``icectl`` is the argument list that starts icectl (default: this Python's
    ``-m icectl``)."""

    template_fields: Sequence[str] = ("arguments", "targets", "catalog")
    ui_color = "#b3e5fc"

    def __init__(self, *, command: str, arguments: Sequence[str] = (), targets: Any = None,
                 catalog: str | None = None, icectl: Sequence[str] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.command = command
        self.arguments = list(arguments)
        self.targets = targets
        self.catalog = catalog
        self.icectl = list(icectl) if icectl else [sys.executable, "-m", "icectl"]

    def argv(self) -> list[str]:
        catalog = ["--catalog", self.catalog] if self.catalog else []
        targets = [] if self.targets is None else [str(t) for t in self.targets]
        return [*self.icectl, *catalog, "--output", "json", self.command, *self.arguments, *targets]

    def execute(self, context: Any) -> Any:
        if self.targets is not None and not list(self.targets):
            raise AirflowSkipException(f"icectl {self.command}: nothing to do (no table needs it)")
        argv = self.argv()
        self.log.info("running %s", " ".join(argv))
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        errors = []
        assert proc.stderr is not None and proc.stdout is not None
        for line in proc.stderr:  # progress as the run goes; the report comes on stdout at the end
            line = line.rstrip("\n")
            if line.startswith("{"):
                errors.append(line)
            else:
                self.log.info("%s", line)
        out = proc.stdout.read()
        code = proc.wait()
        report = json.loads(out) if out.strip() else None
        if report is not None and code not in RESULT_CODES.get(self.command, (0,)):
            # pushed before the task is skipped or failed: the report says what was done
            context["ti"].xcom_push(key="return_value", value=report)
        if code in RESULT_CODES.get(self.command, (0,)):
            return report
        message = _error_message(errors) or f"icectl {self.command} exited with {code}"
        if code == NOT_ALL_MAINTAINED and report is not None:
            tables = report.get("tables", [])
            skipped = report.get("not_maintained", [])
            reasons = "; ".join(f"{t['table']}: {t['status']}" + (f" by {t['locked_by']}" if t.get("locked_by")
                                                                     else "")
                                for t in tables if t["table"] in skipped)
            if len(skipped) == len([t for t in tables if t["status"] not in ("healthy", "disabled")]):
                raise AirflowSkipException(f"icectl maintain: no table was maintained ({reasons})")
            self.log.warning("icectl maintain: some tables were not maintained: %s", reasons)
            return report
        if code == MAINTENANCE_FAILED and report is not None:
            for t in report.get("tables", []):
                for s in t.get("steps", []):
                    if s["status"] == "failed":
                        self.log.error("table %s failed at step %s: %s", t["table"], s["step"], s["error"])
                if t["status"] == "failed" and t.get("error"):
                    self.log.error("table %s failed: %s", t["table"], t["error"])
            failed = [f"{t['table']} ({', '.join(s['step'] for s in t['steps'] if s['status'] == 'failed') or 'load'})"
                      for t in report.get("tables", []) if t["status"] == "failed"]
            raise AirflowException(f"icectl maintain failed on {', '.join(failed)}: {message}")
        raise AirflowException(f"icectl {self.command} failed (exit {code}): {message}")


def _error_message(lines: list[str]) -> str | None:
    for line in reversed(lines):
        try:
            return json.loads(line)["error"]["message"]
        except (ValueError, KeyError, TypeError):
            continue
    return None


__all__ = ["IcectlOperator"]
