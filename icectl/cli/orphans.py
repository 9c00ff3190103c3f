"""``icectl remove-orphans``."""
from __future__ import annotations

import time
from typing import Annotated, Any, Optional

import typer

from icectl.cli.confirm import confirm_plan, progress_deleter
from icectl.cli.context import Env
from icectl.cli.options import YesOpt
from icectl.cli.output import render
from icectl.cli.session import open_table
from icectl.cli.views.orphans import orphan_report, quarantine_report
from icectl.errors import QuarantineLeftError, RefusedError, UsageError
from icectl.ops.maintain.expire import FileToDelete
from icectl.expr.timestamp import parse_cutoff
from icectl.ops.maintain.quarantine import (QuarantineOutcome, apply_quarantine, plan_quarantine, purge_quarantine,
                                            quarantine_root, restore_quarantine)
from icectl.ops.maintain.remove_orphans import (DEFAULT_OLDER_THAN_MS, OrphanPlan, plan_orphans, quarantine_roots,
                                                still_orphans)

def now_ms() -> int:
    """The run's clock, read once (the seam tests move to age a quarantine without sleeping)."""
    return int(time.time() * 1000)


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
    quarantine: Annotated[Optional[str], typer.Option(
        "--quarantine", metavar="PREFIX",
        help="Move the orphans to this folder (relative to the table location, outside data/ and metadata/) "
             "with a manifest of what moved from where, instead of deleting them. With --restore-quarantine or "
             "--purge-quarantine: the quarantine folder to act on.")] = None,
    restore: Annotated[bool, typer.Option(
        "--restore-quarantine", help="Put quarantined files back where they were, byte for byte (every run's, or "
                                     "--run's); a path that exists again is never overwritten.")] = False,
    purge: Annotated[bool, typer.Option(
        "--purge-quarantine", help="Delete for good the quarantined files moved before --older-than "
                                   "(e.g. --older-than 7d), and their manifest entries.")] = False,
    run: Annotated[Optional[str], typer.Option("--run", metavar="RUN", help="With --restore-quarantine or "
                                               "--purge-quarantine: only the files of this quarantine run (its id is "
                                               "in the output and the folder name).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List the orphans; delete nothing.")] = False,
    yes: YesOpt = False,
) -> None:
    """Find and delete files under the table location that no snapshot or metadata file reaches.

    Nothing outside the table location is deleted: symbolic links are never followed, and a file
    whose real location is outside the table location (or across a mount point) is skipped for
    safety, with the reason, in the plan."""
    env: Env = ctx.obj
    now = now_ms()
    cutoff = parse_cutoff(older_than, what="--older-than", now=now)
    if restore or purge:
        if restore and purge:
            raise UsageError("--restore-quarantine and --purge-quarantine are two commands: give one")
        _quarantined(env, open_table(env, table), quarantine, action="restore" if restore else "purge", run=run,
                     moved_before_ms=cutoff.timestamp_ms, dry_run=dry_run, yes=yes)
        return
    if run is not None:
        raise UsageError("--run goes with --restore-quarantine or --purge-quarantine")
    if cutoff.timestamp_ms > now - DEFAULT_OLDER_THAN_MS and not force:
        raise RefusedError(f"--older-than {older_than} is under 3 days: files a running writer has not committed yet "
                           f"would look like orphans", hint="add --force if no writer can be running")
    t = open_table(env, table)
    plan = plan_orphans(t, older_than_ms=cutoff.timestamp_ms, location=location, prefix_mismatch=prefix_mismatch,
                        now_ms=now, remove_symlinks=remove_symlinks)
    if quarantine is not None:
        _quarantine(env, t, plan, quarantine_root(t, quarantine), now=now, prefix_mismatch=prefix_mismatch,
                    dry_run=dry_run, yes=yes)
        return
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


def _quarantine(env: Env, t: Any, plan: OrphanPlan, root: str, *, now: int, prefix_mismatch: str, dry_run: bool,
                yes: bool) -> None:
    planned = plan_quarantine(t, plan.orphans, root, now_ms=now)
    report = quarantine_report(planned, table=t.name, action="quarantine", dry_run=dry_run, applied=False, plan=plan)
    if dry_run or not planned.files:
        render(env, report)
        return
    confirm_plan(env, report, f"Move {len(planned.files)} orphan files to {root}?", yes=yes, action="move files")
    # Re-check right before moving: a commit since planning may have made a file reachable.
    still = {f.path for f in still_orphans(t, plan, prefix_mismatch=prefix_mismatch)}
    planned.files = [e for e in planned.files if e.original in still]
    done = apply_quarantine(t, planned)
    render(env, quarantine_report(done, table=t.name, action="quarantine", dry_run=False, applied=True, plan=plan))


def _quarantined(env: Env, t: Any, prefix: str | None, *, action: str, run: str | None, moved_before_ms: int,
                 dry_run: bool, yes: bool) -> None:
    """--restore-quarantine and --purge-quarantine: on the folder named, or the one the table has."""
    if prefix is not None:
        root = quarantine_root(t, prefix)
    else:
        roots = quarantine_roots(t)
        if len(roots) > 1:
            raise UsageError(f"{t.name} has {len(roots)} quarantine folders ({', '.join(roots)})",
                             hint="name one with --quarantine")
        root = roots[0] if roots else None
    cutoff = moved_before_ms if action == "purge" else None
    if root is None:
        render(env, quarantine_report(QuarantineOutcome("", run), table=t.name, action=action, dry_run=dry_run,
                                      applied=False, older_than_ms=cutoff))
        return

    def act(dry: bool) -> QuarantineOutcome:
        if action == "restore":
            return restore_quarantine(t, root, run_id=run, dry_run=dry)
        return purge_quarantine(t, root, moved_before_ms=moved_before_ms, run_id=run, dry_run=dry)

    planned = act(True)
    report = quarantine_report(planned, table=t.name, action=action, dry_run=dry_run, applied=False,
                               older_than_ms=cutoff)
    if not dry_run and (planned.files or planned.settled):
        question = (f"Put {len(planned.files)} quarantined files back (and tidy {planned.settled} entries of an "
                    f"interrupted run)?" if planned.settled else f"Put {len(planned.files)} quarantined files back?")
        question = (question if action == "restore"
                    else f"Delete {len(planned.files)} quarantined files for good?")
        confirm_plan(env, report, question, yes=yes, action="move files" if action == "restore" else "delete files")
        report = quarantine_report(act(False), table=t.name, action=action, dry_run=False, applied=True,
                                   older_than_ms=cutoff)
    render(env, report)
    if report.not_restored:
        raise QuarantineLeftError(f"{len(report.not_restored)} files stay in quarantine {root} "
                                  f"(e.g. {report.not_restored[0].path}: {report.not_restored[0].reason})",
                                  hint="move or remove what is at those paths now, then restore again")
