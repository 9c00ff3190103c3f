"""``icectl remove-orphans``."""
from __future__ import annotations

import time
from typing import Annotated, Optional

import typer

from icectl.cli.confirm import confirm_plan, progress_deleter
from icectl.cli.context import Env
from icectl.cli.options import YesOpt
from icectl.cli.output import render
from icectl.cli.session import open_table
from icectl.cli.views.orphans import orphan_report
from icectl.errors import RefusedError
from icectl.ops.maintain.expire import FileToDelete
from icectl.expr.timestamp import parse_cutoff
from icectl.ops.maintain.remove_orphans import DEFAULT_OLDER_THAN_MS, plan_orphans, still_orphans


def remove_orphans(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE.")],
    older_than: Annotated[str, typer.Option("--older-than", help="Only files last modified before this: an age "
                                            "with its unit (3d), an ISO 8601 time or epoch milliseconds. Under 3 days "
                                            "needs --force.")] = "3d",
    force: Annotated[bool, typer.Option("--force", help="Allow --older-than under 3 days (a running writer's new "
                                        "files are orphans until it commits).")] = False,
    location: Annotated[Optional[str], typer.Option("--location", help="List only under this folder of the table.")] = None,
    prefix_mismatch: Annotated[str, typer.Option("--prefix-mismatch", help="A listed file that matches a reachable one "
                                                 "only after ignoring scheme/authority: error, ignore or delete.",
                                                 metavar="error|ignore|delete")] = "error",
    remove_symlinks: Annotated[bool, typer.Option("--remove-symlinks", help="Also remove symbolic links that nothing "
                                                  "reaches, as links (never their targets). Without it they are "
                                                  "listed as skipped for safety. A link is never followed.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List the orphans; delete nothing.")] = False,
    yes: YesOpt = False,
) -> None:
    """Find and delete files under the table location that no snapshot or metadata file reaches.

    Nothing outside the table location is deleted: symbolic links are never followed, and a file
    whose real location is outside the table location (or across a mount point) is skipped for
    safety, with the reason, in the plan."""
    env: Env = ctx.obj
    now = int(time.time() * 1000)
    cutoff = parse_cutoff(older_than, what="--older-than", now=now)
    if cutoff.timestamp_ms > now - DEFAULT_OLDER_THAN_MS and not force:
        raise RefusedError(f"--older-than {older_than} is under 3 days: files a running writer has not committed yet "
                           f"would look like orphans", hint="add --force if no writer can be running")
    t = open_table(env, table)
    plan = plan_orphans(t, older_than_ms=cutoff.timestamp_ms, location=location, prefix_mismatch=prefix_mismatch,
                        now_ms=now, remove_symlinks=remove_symlinks)
    if dry_run or not plan.orphans:
        render(env, orphan_report(plan, dry_run=dry_run))
        return
    confirm_plan(env, orphan_report(plan, dry_run=False), f"Delete {len(plan.orphans)} orphan files?", yes=yes,
                 action="delete files")
    # Re-check right before deleting: a commit since planning may have made a file reachable.
    still = {f.path for f in still_orphans(t, plan, prefix_mismatch=prefix_mismatch)}
    files = [FileToDelete(f.path, "orphan", f.size) for f in plan.orphans if f.path in still]
    deleted, failed = progress_deleter(env, t.io, len(files), location=t.metadata.location,
                                       allow_symlinks=remove_symlinks)(files)
    render(env, orphan_report(plan, dry_run=False, deleted=deleted, failed=failed))
