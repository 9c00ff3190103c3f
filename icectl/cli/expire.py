"""``icectl expire``."""
from __future__ import annotations

import time

from typing import Annotated, Optional

import typer

from icectl.cli.confirm import PhaseProgress, confirm_plan
from icectl.cli.context import Env
from icectl.cli.options import YesOpt
from icectl.cli.output import render
from icectl.cli.session import open_table
from icectl.cli.views.expire import expire_report
from icectl.expr.timestamp import parse_cutoff
from icectl.ops.maintain.expire import ExpireOptions, ExpiryResult, apply_expiry, delete_files, plan_expiry
from icectl.ops.maintain.expire_pending import finish_pending, read_pending
from icectl.spec.properties import MAX_SNAPSHOT_AGE_MS, MIN_SNAPSHOTS_TO_KEEP


def expire(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE to expire snapshots of.")],
    older_than: Annotated[Optional[str], typer.Option(
        "--older-than", help="Expire snapshots older than this: an age with its unit (7d, 36h; ms, s, m, h, d, w), "
        "an ISO 8601 time (no zone: UTC) or epoch milliseconds (13 digits). Default: the table's "
        f"{MAX_SNAPSHOT_AGE_MS.name} (5 days).")] = None,
    retain_last: Annotated[Optional[int], typer.Option(
        "--retain-last", help="Keep at least this many ancestors of each branch (default: the table's "
        f"{MIN_SNAPSHOTS_TO_KEEP.name}, 1).", min=1)] = None,
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
    env: Env = ctx.obj
    # The clock is read once: a commit retried later plans with the cut-off the user saw.
    now = int(time.time() * 1000)
    cutoff = None if older_than is None else parse_cutoff(older_than, what="--older-than", now=now)
    t = open_table(env, table)
    opts = ExpireOptions(older_than_ms=cutoff.timestamp_ms if cutoff else None, older_than=cutoff,
                         retain_last=retain_last, snapshot_ids=tuple(snapshot_id or ()),
                         clean_expired_metadata=clean_expired_metadata, delete_files=not no_delete_files, now_ms=now)
    with PhaseProgress(env, f"{t.name}: expire") as progress:
        plan = plan_expiry(t, opts, progress=progress)
    # An earlier expire killed after its commit left deletes owed (icectl.ops.maintain.expire_pending).
    pending = None if no_delete_files else read_pending(t)
    owed = f"; {len(pending.files)} files an earlier expire left to delete" if pending and pending.files else ""
    if owed:
        progress.say(f"{t.name}: expire: {len(pending.files)} files an earlier expire left to delete "  # type: ignore[union-attr]
                     "(a run without --dry-run deletes those the table no longer reaches)")
    if pending is not None and pending.unreadable:
        progress.say(f"{t.name}: expire: the record of an earlier expire's deletes is cut short ({pending.unreadable}): "
                     "a run without --dry-run drops it; remove-orphans finds those files")
    if dry_run or not (plan.changes_metadata or pending):
        render(env, expire_report(plan, None, dry_run=dry_run, explain=explain))
        return
    question = (f"Expire {len(plan.expired_snapshot_ids)} snapshots and delete {len(plan.files)} files{owed}?"
                if plan.changes_metadata else f"Finish the deletes of an earlier expire ({len(pending.files)} files)?")  # type: ignore[union-attr]
    confirm_plan(env, expire_report(plan, None, dry_run=False, explain=explain), question, yes=yes)
    with PhaseProgress(env, f"{t.name}: expire") as progress:
        def delete(files):
            done = [0]

            def advance(n: int) -> None:
                done[0] += n
                progress("deleting files", done[0], len(files))
            return delete_files(t.io, files, location=t.metadata.location, progress=advance)

        finished = finish_pending(t, pending, delete=delete, progress=progress) if pending else None
        result = apply_expiry(t, opts, delete=delete, approved=plan, progress=progress) if plan.changes_metadata \
            else ExpiryResult(plan, None, [], [])
    if finished is not None:
        result.deleted = finished.deleted + result.deleted
        result.failed = finished.failed + result.failed
    render(env, expire_report(result.plan, result, dry_run=False, explain=explain))
