"""``icectl restore``."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from icectl.cli.context import Env
from icectl.cli.options import YesOpt
from icectl.cli.output import render
from icectl.cli.confirm import confirm_plan
from icectl.cli.session import locate_table, open_table
from icectl.cli.views.restore import recovery_report, restore_report
from icectl.errors import IcectlError
from icectl.ops.recover.recover_metadata import (apply_recovery, check_recoverable, is_broken_table_error,
                                                  plan_recovery)
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
    as they were; the metadata log keeps today's file, so another restore undoes it. Without --to-*: when the
    current metadata file is broken (truncated, empty, invalid, another table's, gone), find the newest
    readable, valid metadata file of the table whose files are all there and make it current."""
    env: Env = ctx.obj
    if to_metadata is None and to_version is None and to_time is None:
        recover(env, table, dry_run=dry_run, yes=yes)
        return
    try:
        t = open_table(env, table)
    except IcectlError as e:
        if to_time is not None or not is_broken_table_error(e):
            raise
        recover(env, table, dry_run=dry_run, yes=yes, to_metadata=to_metadata, to_version=to_version)
        return
    plan = plan_restore(t, metadata_file=to_metadata, version=to_version, time=to_time)
    if plan.missing_files or dry_run or plan.changes_nothing:
        render(env, restore_report(plan, None, dry_run=dry_run))
        check_restorable(plan)
        return
    confirm_plan(env, restore_report(plan, None, dry_run=False),
                 f"Restore {plan.table} to {plan.restore_from}?", yes=yes)
    result = apply_restore(t, plan)
    render(env, restore_report(plan, result, dry_run=False))


def recover(env: Env, table: str, *, dry_run: bool, yes: bool, to_metadata: str | None = None,
            to_version: str | None = None) -> None:
    """A table whose current metadata file is broken: the newest good file (or the one named) made
    current through the catalog's compare-and-set against the broken file."""
    catalog, ident = locate_table(env, table)
    plan = plan_recovery(catalog, ident, metadata_file=to_metadata, version=to_version)
    if dry_run or plan.restore_from is None:
        render(env, recovery_report(plan, None, dry_run=dry_run))
        check_recoverable(plan)
        return
    confirm_plan(env, recovery_report(plan, None, dry_run=False),
                 f"Make {plan.restore_from} the current metadata of {plan.table}?", yes=yes)
    render(env, recovery_report(plan, apply_recovery(catalog, ident, plan), dry_run=False))
