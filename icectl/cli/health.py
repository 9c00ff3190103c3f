"""``icectl health``."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from icectl.cli.context import Env
from icectl.cli.options import JSONL, AllOpt, AllowEmptyOpt, PolicyOpt, TargetsArg
from icectl.cli.output import render, write_json_line
from icectl.cli.session import command_prefix, open_catalog, open_table, select_tables
from icectl.cli.views.health import health_report, health_summary, table_health_view
from icectl.cli.views.metrics import health_metrics, require_metrics, write_metrics_file
from icectl.errors import HealthCriticalError, HealthWarningError
from icectl.ops.catalogs import looks_like_path
from icectl.ops.maintain.health import HealthRun, check_table, check_tables
from icectl.ops.maintain.policy import load_policy_file


def health(
    ctx: typer.Context,
    targets: TargetsArg = None,
    all_tables: AllOpt = False,
    policy: PolicyOpt = None,
    allow_empty: AllowEmptyOpt = False,
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
    prefix = command_prefix(env)
    # -o jsonl: each table's line as its measure is done, then the summary line
    on_table = (lambda t: write_json_line(env.stdout, table_health_view(t, prefix=prefix))) \
        if env.output == JSONL else None
    run = HealthRun([])
    for t in tables:
        run.tables.append(check_table(t, policies.policy_for(t.name, t.metadata.properties), orphans=orphans))
        if on_table:
            on_table(run.tables[-1])
    described = None
    if names or all_tables or not paths:
        idents, described = select_tables(env, names, all_tables=all_tables, allow_empty=allow_empty)
        run.tables += check_tables(open_catalog(env), idents, policies, orphans=orphans, on_table=on_table).tables
    report = health_report(run, prefix=prefix, catalog=described, ranked=all_tables)
    if on_table:
        write_json_line(env.stdout, health_summary(report))
    else:
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
