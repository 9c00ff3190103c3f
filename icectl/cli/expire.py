"""``icectl expire``."""
from __future__ import annotations

import time

from typing import Annotated, Optional

import typer

from icectl.cli.context import Env
from icectl.cli.options import YesOpt
from icectl.cli.output import render


def expire(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE to expire snapshots of.")],
    older_than: Annotated[Optional[str], typer.Option(
        "--older-than", help="Expire snapshots older than this: an age (7d, 36h) or a timestamp. Default: the "
        "table's history.expire.max-snapshot-age-ms (5 days).")] = None,
    retain_last: Annotated[Optional[int], typer.Option(
        "--retain-last", help="Keep at least this many ancestors of each branch (default: the table's "
        "history.expire.min-snapshots-to-keep, 1).", min=1)] = None,
    snapshot_id: Annotated[Optional[list[int]], typer.Option(
        "--snapshot-id", help="Expire this snapshot (repeatable); an error if a ref still points at it.")] = None,
    clean_expired_metadata: Annotated[bool, typer.Option(
        "--clean-expired-metadata", help="Also remove schemas and partition specs no retained snapshot uses.")] = False,
    no_delete_files: Annotated[bool, typer.Option(
        "--no-delete-files", help="Change the metadata only; delete no files.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would be expired and deleted; change nothing.")] = False,
    explain: Annotated[bool, typer.Option("--explain", help="Say, for each retained snapshot, the rule that keeps it.")] = False,
    yes: YesOpt = False,
) -> None:
    """Expire old snapshots and delete the files only they reach, as Iceberg Java's expire_snapshots."""
    from icectl.cli.confirm import confirm_plan, progress_deleter
    from icectl.cli.views.expire import expire_report
    from icectl.ops.expire import ExpireOptions, apply_expiry, plan_expiry
    from icectl.ops.inspect import parse_time_ms

    env: Env = ctx.obj
    t = env.open_table(table)
    # The clock is read once: a commit retried later plans with the cut-off the user saw.
    opts = ExpireOptions(older_than_ms=parse_time_ms(older_than) if older_than else None, retain_last=retain_last,
                         snapshot_ids=tuple(snapshot_id or ()), clean_expired_metadata=clean_expired_metadata,
                         delete_files=not no_delete_files, now_ms=int(time.time() * 1000))
    plan = plan_expiry(t, opts)
    if dry_run or not plan.changes_metadata:
        render(env, expire_report(plan, None, dry_run=dry_run, explain=explain))
        return
    confirm_plan(env, expire_report(plan, None, dry_run=False, explain=explain),
                 f"Expire {len(plan.expired_snapshot_ids)} snapshots and delete {len(plan.files)} files?", yes=yes)
    result = apply_expiry(t, opts, delete=progress_deleter(env, t.io, len(plan.files), location=t.metadata.location), approved=plan)
    render(env, expire_report(result.plan, result, dry_run=False, explain=explain))


def register(app: typer.Typer) -> None:
    app.command("expire")(expire)
