"""``icectl maintain``."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from icectl.cli.confirm import confirm_plan
from icectl.cli.context import Env
from icectl.cli.options import JSONL, AllOpt, AllowEmptyOpt, PolicyOpt, TargetsArg, YesOpt
from icectl.cli.output import progress_writer, render, write_json_line
from icectl.cli.session import command_prefix, open_catalog, select_tables, spark_template
from icectl.cli.views.health import MaintainReport, maintain_report, maintain_summary, table_run_view
from icectl.errors import MaintenanceFailedError, NotAllMaintainedError
from icectl.cli.views.metrics import maintain_metrics, require_metrics, write_metrics_file
from icectl.expr.duration import parse_duration_ms
from icectl.ops.maintain.maintain import MaintainOptions, maintain as run_maintain
from icectl.ops.maintain.policy import load_policy_file
from icectl.ops.spark_job import JobSettings


def _render(env: Env, report: MaintainReport) -> None:
    """A plan: as one document, or as JSON Lines (a line a table, then the summary)."""
    if env.output != JSONL:
        render(env, report)
        return
    for t in report.tables:
        write_json_line(env.stdout, t)
    write_json_line(env.stdout, maintain_summary(report))


def maintain(
    ctx: typer.Context,
    targets: TargetsArg = None,
    all_tables: AllOpt = False,
    policy: PolicyOpt = None,
    allow_empty: AllowEmptyOpt = False,
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
    idents, described = select_tables(env, list(targets or []), all_tables=all_tables, allow_empty=allow_empty)
    prefix = command_prefix(env)
    settings = JobSettings(template_path=spark_template(env, template), master=master)
    if dry_run or not yes:
        plan = run_maintain(catalog, idents, policies, opts=MaintainOptions(dry_run=True, budget_ms=budget_ms,
                                                                            job_settings=settings,
                                                                            rank=all_tables))
        if dry_run or not any(t.status == "planned" for t in plan.tables):
            _render(env, maintain_report(plan, prefix=prefix, catalog=described))
            return
        plan.dry_run = False
        confirm_plan(env, maintain_report(plan, prefix=prefix, catalog=described), "Run these maintenance steps?",
                     yes=yes)
    # -o jsonl: each table's line as it is done, then the summary line
    on_table = (lambda t: write_json_line(env.stdout, table_run_view(t, prefix=prefix))) \
        if env.output == JSONL else None
    run = run_maintain(catalog, idents, policies, opts=MaintainOptions(budget_ms=budget_ms, job_settings=settings,
                                                                       rank=all_tables),
                       progress=progress_writer(env), on_table=on_table)
    report = maintain_report(run, prefix=prefix, catalog=described)
    if on_table:
        write_json_line(env.stdout, maintain_summary(report))
    else:
        render(env, report)
    if metrics_file:
        write_metrics_file(metrics_file, maintain_metrics(run, catalog=catalog.name))
    if run.failed:
        raise MaintenanceFailedError(f"maintenance failed on {len(run.failed)} of {len(run.tables)} tables "
                                     f"({', '.join(run.failed[:5])}); the others were maintained",
                                     hint="the report says which step failed and why")
    skipped = run.not_maintained
    if skipped:
        raise NotAllMaintainedError(f"{len(skipped)} of {len(run.tables)} tables were not maintained "
                                    f"({', '.join(skipped[:5])}): locked by another run or left when the time "
                                    "budget was spent", hint="the report says why each was skipped; the next run "
                                    "takes them")
