"""``icectl rewrite-deletes``."""
from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Optional

import typer

from icectl.cli.confirm import confirm_plan
from icectl.cli.context import Env
from icectl.cli.options import YesOpt
from icectl.cli.output import render
from icectl.cli.session import open_table
from icectl.cli.views.rewrite_deletes import DeleteRewriteOutcome, EqualityRewriteOutcome, delete_rewrite_report
from icectl.ops.maintain.compact import CompactOptions, plan_compaction
from icectl.ops.spark_job import JobSettings
from icectl.ops.maintain.rewrite_deletes import plan_delete_rewrite, run_delete_rewrite


def rewrite_deletes(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE.")],
    branch: Annotated[str, typer.Option("--branch", help="Branch to rewrite.")] = "main",
    apply_equality_deletes: Annotated[bool, typer.Option(
        "--apply-equality-deletes", help="Also rewrite the data files that equality deletes touch (a Spark job), so "
        "the equality deletes can be removed.")] = False,
    template: Annotated[Optional[str], typer.Option("--template", help="spark-submit job template for "
                                                    "--apply-equality-deletes.")] = None,
    master: Annotated[Optional[str], typer.Option("--master", help="Spark master for --apply-equality-deletes.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would change; commit nothing.")] = False,
    yes: YesOpt = False,
) -> None:
    """Merge position deletes (v2), convert them to deletion vectors (v3+), drop dangling deletes."""
    env: Env = ctx.obj
    t = open_table(env, table)
    plan = plan_delete_rewrite(t, branch=branch)
    eq_plan = None
    if apply_equality_deletes:
        eq_plan = plan_compaction(t, CompactOptions(branch=branch, only_equality_deleted=True))
    report = delete_rewrite_report(plan, eq_plan, dry_run=dry_run)
    if dry_run or (not plan.changes and not (eq_plan and eq_plan.groups)):
        render(env, report)
        return
    confirm_plan(env, report, "Rewrite the delete files?", yes=yes)
    run = run_delete_rewrite(t, plan, equality_plan=eq_plan, job_settings=JobSettings(template_path=template,
                                                                                        master=master),
                             progress=lambda m: env.stderr.write(f"icectl: {m}\n"))
    eq = None if run.equality_rewritten_data_files is None else EqualityRewriteOutcome(
        run.equality_rewritten_data_files, run.equality_removed_delete_files or 0)
    outcome = replace(DeleteRewriteOutcome(run.committed, eq), **run.counts)
    render(env, replace(report, applied=bool(run.committed), result=outcome, commits=run.commits))
