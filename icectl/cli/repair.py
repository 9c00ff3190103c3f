"""``icectl repair``."""
from __future__ import annotations

from typing import Annotated

import typer

from icectl.cli.context import Env
from icectl.cli.options import YesOpt
from icectl.cli.output import render
from icectl.cli.confirm import confirm_plan
from icectl.cli.session import open_table
from icectl.cli.views.recovery import duplicates_repair_report, metrics_repair_report, repair_report
from icectl.errors import IncompleteRebuildError, InvalidMetadataError, UsageError
from icectl.ops.recover.repair import apply_repair, plan_repair
from icectl.ops.recover.repair_duplicates import apply_duplicates_repair, plan_duplicates_repair
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
    duplicates: Annotated[bool, typer.Option("--duplicates", help="Instead: keep one entry of each file live more "
                                             "than once in main's head (a data file its lowest data sequence "
                                             "number, a delete file its highest; a replace snapshot).")] = False,
    yes: YesOpt = False,
) -> None:
    """Fix missing or unreadable files and file metrics that lie, with the smallest commit.

    Find the files the current snapshot references that are missing or unreadable (data, deletes, deletion
    vectors, manifests, manifest list) and commit the smallest fix: drop missing files and the deletes only they
    needed, rebuild lost manifests from what other manifests still hold, rebuild a lost manifest list from the
    parent's and the manifests the snapshot wrote (proven against its summary's totals; an unproven rebuild needs
    --accept-loss). Then compare main's Parquet data files'
    manifest metrics with their footers and commit manifests that carry the footers' values (--metrics: only that).
    Files live more than once in main's head keep one entry (--duplicates: only that)."""
    env: Env = ctx.obj
    if metrics and duplicates:
        raise UsageError("--metrics and --duplicates each run one kind of repair: give one, or neither for every kind")
    t = open_table(env, table)
    if duplicates:
        dplan = plan_duplicates_repair(t)
        if dry_run or not dplan.changes:
            render(env, duplicates_repair_report(dplan, None, dry_run=dry_run))
        else:
            confirm_plan(env, duplicates_repair_report(dplan, None, dry_run=False),
                         f"Keep one entry of each duplicated file of {dplan.table}?", yes=yes, action="repair the table")
            render(env, duplicates_repair_report(dplan, apply_duplicates_repair(t, dplan), dry_run=False))
        if dplan.unrepairable:
            raise InvalidMetadataError(f"cannot repair {dplan.unrepairable[0]}" + (
                f" (and {len(dplan.unrepairable) - 1} more)" if len(dplan.unrepairable) > 1 else ""))
        return
    if metrics:
        mplan = plan_metrics_repair(t)
        if dry_run or not mplan.changes:
            render(env, metrics_repair_report(mplan, None, dry_run=dry_run))
        else:
            confirm_plan(env, metrics_repair_report(mplan, None, dry_run=False), f"Repair the metrics of {mplan.table}?",
                         yes=yes, action="repair the table")
            render(env, metrics_repair_report(mplan, apply_metrics_repair(t, mplan), dry_run=False))
        return
    # the default set: missing and unreadable files, then duplicated entries, then main's file metrics
    # (each on what the ones before it leave)
    plan = plan_repair(t, all_refs=all_refs, metrics=True)
    dplan = plan_duplicates_repair(t)
    mplan = plan_metrics_repair(t)
    result = dresult = mresult = None
    if dry_run or not (plan.changes or dplan.changes or mplan.changes):
        render(env, repair_report(plan, None, dry_run=dry_run, metrics=(mplan, None), duplicates=(dplan, None)))
    elif plan.incomplete_rebuilds and not accept_loss:
        render(env, repair_report(plan, None, dry_run=False, metrics=(mplan, None), duplicates=(dplan, None)))
        raise IncompleteRebuildError(f"refused: the rebuilt manifest list of {plan.incomplete_rebuilds[0]}; "
                                     "nothing was committed",
                                     hint="--accept-loss commits what was found (the plan above says what is lost)")
    else:
        confirm_plan(env, repair_report(plan, None, dry_run=False, metrics=(mplan, None), duplicates=(dplan, None)),
                     f"Repair {plan.table}?", yes=yes, action="repair the table")
        if plan.changes:
            result = apply_repair(t, plan, accept_loss=accept_loss)
            t = result.committed[-1].table
            dplan = plan_duplicates_repair(t)  # the files the first commit kept
        if dplan.changes:
            dresult = apply_duplicates_repair(t, dplan)
            t = dresult.committed.table
        if plan.changes or dplan.changes:
            mplan = plan_metrics_repair(t)
        if mplan.changes:
            mresult = apply_metrics_repair(t, mplan)
        render(env, repair_report(plan, result, dry_run=False, metrics=(mplan, mresult), duplicates=(dplan, dresult)))
    unrepairable = plan.unrepairable + dplan.unrepairable
    if unrepairable:
        raise InvalidMetadataError(f"cannot repair {unrepairable[0]}"
                                   + (f" (and {len(unrepairable) - 1} more)" if len(unrepairable) > 1 else ""))
