"""``icectl repair``."""
from __future__ import annotations

from typing import Annotated

import typer

from icectl.cli.context import Env
from icectl.cli.options import YesOpt
from icectl.cli.output import render
from icectl.cli.confirm import confirm_plan
from icectl.cli.session import open_table
from icectl.cli.views.recovery import metrics_repair_report, repair_report
from icectl.errors import IncompleteRebuildError, InvalidMetadataError
from icectl.ops.recover.repair import apply_repair, plan_repair
from icectl.ops.recover.repair_metrics import apply_metrics_repair, plan_metrics_repair


def repair(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE to repair.")],
    all_refs: Annotated[bool, typer.Option("--all-refs", help="Check and repair the head of every branch and tag, "
                                           "not only main.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the problems and the fix, with the records and "
                                          "bytes lost; commit nothing.")] = False,
    metrics: Annotated[bool, typer.Option("--metrics", help="Instead: compare main's Parquet data files' manifest "
                                          "metrics with their footers and commit manifests carrying the footers' "
                                          "values (a replace snapshot).")] = False,
    accept_loss: Annotated[bool, typer.Option("--accept-loss", help="Commit a rebuilt manifest list that the "
                                              "snapshot summary does not prove complete (what was found; the "
                                              "plan says what is missing).")] = False,
    yes: YesOpt = False,
) -> None:
    """Fix missing or unreadable files and file metrics that lie, with the smallest commit.

    Find the files the current snapshot references that are missing or unreadable (data, deletes, deletion
    vectors, manifests, manifest list) and commit the smallest fix: drop missing files and the deletes only they
    needed, rebuild lost manifests from what other manifests still hold, rebuild a lost manifest list from the
    parent's and the manifests the snapshot wrote (proven against its summary's totals; an unproven rebuild needs
    --accept-loss). Then compare main's Parquet data files'
    manifest metrics with their footers and commit manifests that carry the footers' values (--metrics: only that)."""
    env: Env = ctx.obj
    t = open_table(env, table)
    if metrics:
        mplan = plan_metrics_repair(t)
        if dry_run or not mplan.changes:
            render(env, metrics_repair_report(mplan, None, dry_run=dry_run))
        else:
            confirm_plan(env, metrics_repair_report(mplan, None, dry_run=False), f"Repair the metrics of {mplan.table}?",
                         yes=yes, action="repair the table")
            render(env, metrics_repair_report(mplan, apply_metrics_repair(t, mplan), dry_run=False))
        return
    # the default set: missing and unreadable files, then main's file metrics (on what the first leaves)
    plan = plan_repair(t, all_refs=all_refs, metrics=True)
    mplan = plan_metrics_repair(t)
    result = mresult = None
    if dry_run or not (plan.changes or mplan.changes):
        render(env, repair_report(plan, None, dry_run=dry_run, metrics=(mplan, None)))
    elif plan.incomplete_rebuilds and not accept_loss:
        render(env, repair_report(plan, None, dry_run=False, metrics=(mplan, None)))
        raise IncompleteRebuildError(f"refused: the rebuilt manifest list of {plan.incomplete_rebuilds[0]}; "
                                     "nothing was committed",
                                     hint="--accept-loss commits what was found (the plan above says what is lost)")
    else:
        confirm_plan(env, repair_report(plan, None, dry_run=False, metrics=(mplan, None)), f"Repair {plan.table}?",
                     yes=yes, action="repair the table")
        if plan.changes:
            result = apply_repair(t, plan, accept_loss=accept_loss)
            t = result.committed[-1].table
            mplan = plan_metrics_repair(t)  # the files the first commit kept
        if mplan.changes:
            mresult = apply_metrics_repair(t, mplan)
        render(env, repair_report(plan, result, dry_run=False, metrics=(mplan, mresult)))
    if plan.unrepairable:
        raise InvalidMetadataError(f"cannot repair {plan.unrepairable[0]}"
                                   + (f" (and {len(plan.unrepairable) - 1} more)" if len(plan.unrepairable) > 1 else ""))
