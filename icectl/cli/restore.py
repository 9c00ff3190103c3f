"""``icectl restore``."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from icectl.cli.context import Env
from icectl.cli.options import YesOpt
from icectl.cli.output import render
from icectl.cli.confirm import confirm_plan
from icectl.cli.session import open_table
from icectl.cli.views.restore import restore_report
from icectl.ops.recover.restore import apply_restore, check_restorable, plan_restore


def restore(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE to restore.")],
    to_metadata: Annotated[Optional[str], typer.Option(
        "--to-metadata", help="Restore the state of this metadata file: a path, or a file name of the table's "
        "metadata folder or log.")] = None,
    to_version: Annotated[Optional[str], typer.Option(
        "--to-version", help="Restore the state of metadata file version N (NNNNN-<uuid>.metadata.json or "
        "vN.metadata.json).")] = None,
    to_time: Annotated[Optional[str], typer.Option(
        "--to-time", help="Restore the state the table had at this time (ISO 8601, epoch milliseconds, or an age "
        "with its unit: 2h): the newest metadata-log file not newer.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the plan and the diff to today; change "
                                          "nothing.")] = False,
    yes: YesOpt = False,
) -> None:
    """Restore a table to an earlier metadata file, as a new commit.

    Restore a table to an earlier metadata file, as a commit: refs, schema, spec, sort order and properties
    as they were; the metadata log keeps today's file, so another restore undoes it."""
    env: Env = ctx.obj
    t = open_table(env, table)
    plan = plan_restore(t, metadata_file=to_metadata, version=to_version, time=to_time)
    if plan.missing_files or dry_run or plan.changes_nothing:
        render(env, restore_report(plan, None, dry_run=dry_run))
        check_restorable(plan)
        return
    confirm_plan(env, restore_report(plan, None, dry_run=False),
                 f"Restore {plan.table} to {plan.restore_from}?", yes=yes)
    result = apply_restore(t, plan)
    render(env, restore_report(plan, result, dry_run=False))
