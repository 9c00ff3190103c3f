"""``icectl remove-orphans``."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from icectl.cli.context import Env
from icectl.cli.expire import FailedDelete
from icectl.cli.output import fmt_bytes, print_table, render, say, text_renderer, warn

if TYPE_CHECKING:
    from icectl.engine.expire import FileToDelete
    from icectl.engine.orphans import OrphanPlan


def remove_orphans(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE.")],
    older_than: Annotated[str, typer.Option("--older-than", help="Only files last modified before this (an age such "
                                            "as 3d, or a timestamp). Under 3 days needs --force.")] = "3d",
    force: Annotated[bool, typer.Option("--force", help="Allow --older-than under 3 days (a running writer's new "
                                        "files are orphans until it commits).")] = False,
    location: Annotated[Optional[str], typer.Option("--location", help="List only under this folder of the table.")] = None,
    prefix_mismatch: Annotated[str, typer.Option("--prefix-mismatch", help="A listed file that matches a reachable one "
                                                 "only after ignoring scheme/authority: error, ignore or delete.",
                                                 metavar="error|ignore|delete")] = "error",
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List the orphans; delete nothing.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation (for cron and Airflow).")] = False,
) -> None:
    """Find and delete files under the table location that no snapshot or metadata file reaches."""
    import time

    from icectl.cli.confirm import confirm_plan, progress_deleter
    from icectl.engine.expire import FileToDelete
    from icectl.engine.inspect import parse_time_ms
    from icectl.engine.orphans import DEFAULT_OLDER_THAN_MS, plan_orphans
    from icectl.errors import RefusedError

    env: Env = ctx.obj
    cutoff = parse_time_ms(older_than)
    now = int(time.time() * 1000)
    if cutoff > now - DEFAULT_OLDER_THAN_MS and not force:
        raise RefusedError(f"--older-than {older_than} is under 3 days: files a running writer has not committed yet "
                           f"would look like orphans", hint="add --force if no writer can be running")
    t = env.open_table(table)
    plan = plan_orphans(t, older_than_ms=cutoff, location=location, prefix_mismatch=prefix_mismatch, now_ms=now)
    if dry_run or not plan.orphans:
        render(env, orphan_report(plan, dry_run=dry_run))
        return
    confirm_plan(env, orphan_report(plan, dry_run=False), f"Delete {len(plan.orphans)} orphan files?", yes=yes,
                 action="delete files")
    # Re-check right before deleting: a commit since planning may have made a file reachable.
    fresh = plan_orphans(t.refresh(), older_than_ms=cutoff, location=location, prefix_mismatch=prefix_mismatch,
                         now_ms=now)
    still = {f.path for f in fresh.orphans}
    files = [FileToDelete(f.path, "orphan", f.size) for f in plan.orphans if f.path in still]
    deleted, failed = progress_deleter(env, t.io, len(files))(files)
    render(env, orphan_report(plan, dry_run=False, deleted=deleted, failed=failed))


@dataclass
class PrefixMismatch:
    listed: str  # the file found under the location
    reachable: str  # the reachable path it matches after ignoring scheme and authority


@dataclass
class OrphanReport:
    """Files under the table location that nothing reaches, and what ``remove-orphans`` deleted
    (``applied`` false: a dry run, no orphans, or a plan it refused to apply)."""

    table: str
    location: str
    dry_run: bool
    applied: bool
    older_than_ms: int
    listed_files: int
    too_new: int  # files that nothing reaches but that are newer than the cutoff: left alone
    orphan_files: list[str]
    orphan_bytes: int
    deleted_files: list[str]
    failed_deletes: list[FailedDelete]
    prefix_mismatches: list[PrefixMismatch]
    orphan_sizes: list[int] = field(repr=False)


def orphan_report(plan: OrphanPlan, *, dry_run: bool, deleted: list[FileToDelete] | None = None,
                  failed: list[tuple[str, str]] | None = None) -> OrphanReport:
    return OrphanReport(
        table=plan.table, location=plan.location, dry_run=dry_run, applied=deleted is not None,
        older_than_ms=plan.older_than_ms, listed_files=plan.listed, too_new=plan.too_new,
        orphan_files=[f.path for f in plan.orphans], orphan_bytes=sum(f.size for f in plan.orphans),
        deleted_files=[f.path for f in deleted or []], failed_deletes=[FailedDelete(p, e) for p, e in failed or []],
        prefix_mismatches=[PrefixMismatch(a, b) for a, b in plan.prefix_mismatches],
        orphan_sizes=[f.size for f in plan.orphans])


@text_renderer(OrphanReport)
def _orphans_text(env: Env, r: OrphanReport) -> None:
    if r.applied:  # the plan was printed before
        deleted = set(r.deleted_files)
        size = sum(s for p, s in zip(r.orphan_files, r.orphan_sizes) if p in deleted)
        say(env, f"deleted {len(r.deleted_files)} orphan files ({fmt_bytes(size)})")
        for f in r.failed_deletes:
            warn(env, f"could not delete {f.path}: {f.error}")
        return
    say(env, f"{r.table}: listed {r.listed_files} files under {r.location}; {len(r.orphan_files)} orphans "
             f"({fmt_bytes(r.orphan_bytes)}) older than the cutoff, {r.too_new} newer files left alone"
             + (" (dry run: nothing deleted)" if r.dry_run else ""))
    if r.orphan_files:
        print_table(env, ["orphan file", "size"], [[p, fmt_bytes(s)] for p, s in zip(r.orphan_files, r.orphan_sizes)],
                    right={"size"})


def register(app: typer.Typer) -> None:
    app.command("remove-orphans")(remove_orphans)
