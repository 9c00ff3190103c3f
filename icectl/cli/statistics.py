"""``icectl compute-stats`` and ``icectl compute-partition-stats``."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from icectl.cli.context import Env
from icectl.cli.confirm import confirm_plan
from icectl.cli.options import MasterOpt, TemplateOpt, YesOpt
from icectl.cli.output import render
from icectl.cli.session import open_table, spark_template
from icectl.cli.views.statistics import compute_stats_report, partition_stats_report
from icectl.ops.spark_job import JobSettings, prepare
from icectl.ops.stats.compute_stats import plan_compute_stats, run_compute_stats
from icectl.ops.stats.partition_stats import apply_partition_stats, plan_partition_stats


def compute_stats(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE to compute NDV statistics of.")],
    columns: Annotated[Optional[str], typer.Option(
        "--columns", help="Comma-separated columns (a.b for a struct's field); default: every top-level primitive "
                          "column.")] = None,
    snapshot: Annotated[Optional[int], typer.Option("--snapshot", help="Snapshot id (default: the current "
                                                    "snapshot).")] = None,
    template: TemplateOpt = None,
    master: MasterOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan and the spark-submit command; run "
                                          "nothing.")] = False,
    yes: YesOpt = False,
) -> None:
    """Compute NDV statistics of columns on Spark and register them.

    Compute NDV statistics (theta sketches in a Puffin file, as Iceberg Java's compute_table_stats) on Spark and
    register them for the snapshot."""
    env: Env = ctx.obj
    t = open_table(env, table)
    names = [c for c in columns.split(",")] if columns is not None else None
    plan = plan_compute_stats(t, columns=names, snapshot_id=snapshot)
    settings = JobSettings(template_path=spark_template(env, template), master=master)
    if dry_run:
        render(env, compute_stats_report(plan, None, dry_run=True,
                                         command=prepare(t, settings, command="compute-stats").argv))
        return
    confirm_plan(env, compute_stats_report(plan, None, dry_run=False),
                 f"Compute NDV statistics of {len(plan.columns)} columns of {plan.table}?", yes=yes)
    result = run_compute_stats(t, plan, settings, progress=lambda m: env.stderr.write(f"icectl: {m}\n"))
    render(env, compute_stats_report(plan, result, dry_run=False))


def compute_partition_stats(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE to compute partition statistics of.")],
    snapshot: Annotated[Optional[int], typer.Option("--snapshot", help="Snapshot id (default: the current "
                                                    "snapshot).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the partition statistics; write nothing.")] = False,
    yes: YesOpt = False,
) -> None:
    """Compute the partition statistics file of a snapshot and register it.

    Compute the partition statistics file from the snapshot's manifests (no Spark, as Iceberg Java's
    compute_partition_stats) and register it."""
    env: Env = ctx.obj
    t = open_table(env, table)
    plan = plan_partition_stats(t, snapshot_id=snapshot)
    if dry_run or not plan.changes:
        render(env, partition_stats_report(plan, None, dry_run=dry_run))
        return
    confirm_plan(env, partition_stats_report(plan, None, dry_run=False),
                 f"Write partition statistics of {len(plan.rows)} partitions of {plan.table}?", yes=yes)
    result = apply_partition_stats(t, plan)
    render(env, partition_stats_report(plan, result, dry_run=False))
