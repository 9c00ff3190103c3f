"""``icectl health``."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from icectl.cli.context import Env
from icectl.cli.options import AllOpt, PolicyOpt, TargetsArg
from icectl.cli.output import render
from icectl.cli.session import command_prefix, open_catalog, open_table
from icectl.cli.views.health import health_report
from icectl.cli.views.metrics import health_metrics, require_metrics, write_metrics_file
from icectl.errors import HealthCriticalError, HealthWarningError
from icectl.ops.catalogs import looks_like_path
from icectl.ops.maintain.health import HealthRun, check_table, check_tables, resolve_targets
from icectl.ops.maintain.policy import load_policy_file

def _targets(env: Env, targets: list[str] | None, all_tables: bool) -> list[tuple[str, ...]]:
    return resolve_targets(open_catalog(env), list(targets or []), all_tables=all_tables)


def health(
    ctx: typer.Context,
    targets: TargetsArg = None,
    all_tables: AllOpt = False,
    policy: PolicyOpt = None,
    orphans: Annotated[bool, typer.Option("--orphans", help="Also list each table's location for orphan files "
                                          "(the one check that reads more than metadata).")] = False,
    metrics_file: Annotated[Optional[str], typer.Option("--metrics-file", metavar="FILE",
                                                        help="Also write the measurements in the Prometheus text "
                                                        "format (node_exporter's textfile collector), atomically; "
                                                        "needs icectl[metrics].")] = None,
) -> None:
    """Measure tables and name the command that fixes each finding.

    From their metadata alone (--orphans also lists files); exit 0
    when healthy, 13 when maintenance is recommended, 14 when it is overdue. With --all the tables
    are listed by need, worst first (rank and score: docs/metrics.md)."""
    env: Env = ctx.obj
    if metrics_file:
        require_metrics()
    policies = load_policy_file(policy)
    paths = [t for t in targets or [] if looks_like_path(t)]
    names = [t for t in targets or [] if not looks_like_path(t)]
    # A table location or metadata file is measured read-only, without a catalog (as describe does).
    tables = [open_table(env, p) for p in paths]
    run = HealthRun([check_table(t, policies.policy_for(t.name, t.metadata.properties), orphans=orphans)
                     for t in tables])
    if names or all_tables or not paths:
        run.tables += check_tables(open_catalog(env), _targets(env, names, all_tables), policies,
                                   orphans=orphans).tables
    report = health_report(run, prefix=command_prefix(env), ranked=all_tables)
    render(env, report)
    if metrics_file:
        catalog = open_catalog(env).name if names or all_tables or not paths else ""
        write_metrics_file(metrics_file, health_metrics(run, catalog=catalog))
    need = [t.table for t in run.tables if t.status != "healthy"]
    if run.worst == "warning":
        raise HealthWarningError(f"{len(need)} of {len(run.tables)} tables need maintenance ({', '.join(need[:5])})",
                                 hint="icectl maintain runs the commands shown")
    if run.worst in ("critical", "error"):
        raise HealthCriticalError(f"{len(need)} of {len(run.tables)} tables need maintenance urgently or cannot be "
                                  f"measured ({', '.join(need[:5])})", hint="icectl maintain runs the commands shown")
