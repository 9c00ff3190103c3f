"""``icectl rewrite-table-path``."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from icectl.cli.context import Env
from icectl.cli.options import YesOpt
from icectl.cli.confirm import confirm_plan
from icectl.cli.output import fmt_bytes, render
from icectl.cli.session import open_table
from icectl.cli.views.recovery import relocation_report
from icectl.ops.recover.rewrite_table_path import apply_relocation, plan_relocation


def rewrite_table_path(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE, or a metadata file or table location (works when "
                                         "the catalog is gone).")],
    source_prefix: Annotated[str, typer.Option("--from", help="The path prefix to replace (e.g. the old warehouse "
                                               "folder or bucket).")],
    target_prefix: Annotated[str, typer.Option("--to", help="The prefix that replaces it; the rewritten metadata "
                                               "is written there.")],
    copy: Annotated[bool, typer.Option("--copy", help="Also copy the data and equality delete files to the target "
                                       "(skipping those already there with the same size).")] = False,
    start_version: Annotated[Optional[str], typer.Option(
        "--start-version", help="Only the versions after this metadata file (its file name), for an incremental "
        "relocation.")] = None,
    end_version: Annotated[Optional[str], typer.Option(
        "--end-version", help="Relocate up to this metadata file (default: the current one).")] = None,
    copy_plan: Annotated[Optional[str], typer.Option(
        "--copy-plan", help="Where to write the copy plan CSV (default: the target's metadata folder).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Check and count what would be written; write "
                                          "nothing.")] = False,
    yes: YesOpt = False,
) -> None:
    """Copy a table's metadata with every path moved to another prefix.

    Write a copy of the table's metadata tree with every path moved from one prefix to another, plus a
    source,target copy plan for the data files (as Iceberg Java's rewrite_table_path); with --copy copy them too.
    The source is only read."""
    env: Env = ctx.obj
    t = open_table(env, table)
    plan = plan_relocation(t, source_prefix=source_prefix, target_prefix=target_prefix, start_version=start_version,
                           end_version=end_version, copy_plan=copy_plan)
    if dry_run:
        render(env, relocation_report(plan, None, dry_run=True))
        return
    confirm_plan(env, relocation_report(plan, None, dry_run=False),
                 f"Write the relocated metadata of {plan.table} under {plan.target_prefix}?", yes=yes,
                 action="write the relocated table")
    result = apply_relocation(t, plan, copy=copy, progress=_progress(env, len(plan.copy_rows)) if copy else None)
    render(env, relocation_report(plan, result, dry_run=False))


def _progress(env: Env, total: int):
    """A progress line on stderr when it is a terminal (the copy can take long)."""
    if not env.is_terminal(env.stderr) or not total:
        return None
    def show(done: int, total: int, copied_bytes: int) -> None:
        env.stderr.write(f"\rcopying files: {done}/{total} ({fmt_bytes(copied_bytes)})")
        if done == total:
            env.stderr.write("\n")
        env.stderr.flush()

    return show
