"""``icectl maintain``."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from icectl.cli.confirm import confirm_plan
from icectl.cli.context import Env
from icectl.cli.options import AllOpt, PolicyOpt, TargetsArg, YesOpt
from icectl.cli.output import render
from icectl.cli.session import command_prefix, open_catalog, spark_template
from icectl.cli.views.health import maintain_report
from icectl.cli.views.metrics import maintain_metrics, require_metrics, write_metrics_file
from icectl.errors import MaintenanceFailedError
from icectl.expr.duration import parse_duration_ms
from icectl.ops.maintain.health import resolve_targets
from icectl.ops.maintain.maintain import MaintainOptions, maintain as run_maintain
from icectl.ops.maintain.policy import load_policy_file
from icectl.ops.spark_job import JobSettings


def maintain(
    ctx: typer.Context,
    targets: TargetsArg = None,
    all_tables: AllOpt = False,
    policy: PolicyOpt = None,
    budget: Annotated[Optional[str], typer.Option("--budget", help="Start no step after this long (e.g. 90m, 2h); "
                                                  "tables and steps left are reported as skipped.")] = None,
    template: Annotated[Optional[str], typer.Option("--template", help="spark-submit job template for compact "
                                                    "(default: local[*] with the installed pyspark).")] = None,
    master: Annotated[Optional[str], typer.Option("--master", help="Spark master for compact; overrides the "
                                                  "template.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the steps each table's health calls for; change "
                                          "nothing.")] = False,
    yes: YesOpt = False,
    metrics_file: Annotated[Optional[str], typer.Option("--metrics-file", metavar="FILE",
                                                        help="Also write each table's outcome and measurements in "
                                                        "the Prometheus text format (node_exporter's textfile "
                                                        "collector), atomically; needs icectl[metrics].")] = None,
) -> None:
    """Run the maintenance steps each table's health calls for.

    For each table, the steps run in the order rewrite-deletes, compact, rewrite-manifests,
    expire, remove-orphans, under a lock per table; exit 15 when a table failed. With --all the tables are done worst
    first (health --all's ranking), so a --budget that runs out leaves those that need it least."""
    env: Env = ctx.obj
    if metrics_file:
        require_metrics()
    budget_ms = None if budget is None else parse_duration_ms(budget, what="--budget")
    policies = load_policy_file(policy)
    catalog = open_catalog(env)
    idents = resolve_targets(catalog, list(targets or []), all_tables=all_tables)
    prefix = command_prefix(env)
    settings = JobSettings(template_path=spark_template(env, template), master=master)
    if dry_run or not yes:
        plan = run_maintain(catalog, idents, policies, opts=MaintainOptions(dry_run=True, budget_ms=budget_ms,
                                                                            rank=all_tables))
        if dry_run or not any(t.status == "planned" for t in plan.tables):
            render(env, maintain_report(plan, prefix=prefix))
            return
        plan.dry_run = False
        confirm_plan(env, maintain_report(plan, prefix=prefix), "Run these maintenance steps?", yes=yes)
    progress = (lambda m: env.stderr.write(f"icectl: {m}\n")) if not env.json or env.is_terminal(env.stderr) else None
    run = run_maintain(catalog, idents, policies, opts=MaintainOptions(budget_ms=budget_ms, job_settings=settings,
                                                                       rank=all_tables), progress=progress)
    render(env, maintain_report(run, prefix=prefix))
    if metrics_file:
        write_metrics_file(metrics_file, maintain_metrics(run, catalog=catalog.name))
    if run.failed:
        raise MaintenanceFailedError(f"maintenance failed on {len(run.failed)} of {len(run.tables)} tables "
                                     f"({', '.join(run.failed[:5])}); the others were maintained",
                                     hint="the report says which step failed and why")
