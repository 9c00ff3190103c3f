"""What ``remove-orphans`` prints."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

from icectl.cli.context import Env
from icectl.cli.output import fmt_bytes, print_table, say, text_renderer
from icectl.cli.views.common import SkippedForSafety, say_skipped_for_safety, warn_failed_deletes
from icectl.cli.views.expire import FailedDelete
from icectl.expr.timestamp import timestamp_text

if TYPE_CHECKING:
    from icectl.ops.maintain.expire import FileToDelete
    from icectl.ops.maintain.quarantine import QuarantineOutcome
    from icectl.ops.maintain.remove_orphans import OrphanPlan


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
    skipped_for_safety: list[SkippedForSafety]
    orphan_sizes: list[int] = field(repr=False)
    commits: list[dict] = field(default_factory=list)  # none: removing orphans changes no metadata


def orphan_report(plan: OrphanPlan, *, dry_run: bool, deleted: list[FileToDelete] | None = None,
                  failed: list[tuple[str, str]] | None = None) -> OrphanReport:
    return OrphanReport(
        table=plan.table, location=plan.location, dry_run=dry_run, applied=deleted is not None,
        older_than_ms=plan.older_than_ms, listed_files=plan.listed, too_new=plan.too_new,
        orphan_files=[f.path for f in plan.orphans], orphan_bytes=sum(f.size for f in plan.orphans),
        deleted_files=[f.path for f in deleted or []], failed_deletes=[FailedDelete(p, e) for p, e in failed or []],
        prefix_mismatches=[PrefixMismatch(a, b) for a, b in plan.prefix_mismatches],
        skipped_for_safety=[SkippedForSafety(p, why) for p, why in plan.skipped_for_safety],
        orphan_sizes=[f.size for f in plan.orphans])


@text_renderer(OrphanReport)
def _orphans_text(env: Env, r: OrphanReport) -> None:
    if r.applied:  # the plan was printed before
        deleted = set(r.deleted_files)
        size = sum(s for p, s in zip(r.orphan_files, r.orphan_sizes) if p in deleted)
        say(env, f"deleted {len(r.deleted_files)} orphan files ({fmt_bytes(size)})")
        warn_failed_deletes(env, r.failed_deletes)
        return
    say(env, f"{r.table}: listed {r.listed_files} files under {r.location}; {len(r.orphan_files)} orphans "
             f"({fmt_bytes(r.orphan_bytes)}) older than the cutoff ({timestamp_text(r.older_than_ms)}, "
             f"{r.older_than_ms} ms), {r.too_new} newer files left alone"
             + (" (dry run: nothing deleted)" if r.dry_run else ""))
    if r.orphan_files:
        print_table(env, ["orphan file", "size"], [[p, fmt_bytes(s)] for p, s in zip(r.orphan_files, r.orphan_sizes)],
                    right={"size"}, paths={"orphan file"}, base=r.location)
    say_skipped_for_safety(env, r.skipped_for_safety)


@dataclass
class QuarantinedFile:
    original: str  # where the file was (and is again after a restore)
    quarantine: str  # where it is in quarantine
    size: int
    mtime_ms: int | None  # its modification time when it was moved
    moved_at_ms: int  # when it was moved (purge-quarantine's --older-than measures from this)
    run_id: str  # the quarantine run that moved it


@dataclass
class NotRestored:
    path: str  # the original path
    reason: str  # it exists again, or the file is in neither place


@dataclass
class QuarantineReport:
    """What ``remove-orphans --quarantine``, ``--restore-quarantine`` or ``--purge-quarantine``
    moved, put back or deleted (``action``: quarantine, restore, purge); in a dry run, what it
    would. ``not_restored``: files a restore left in quarantine, with why."""

    table: str
    action: str
    quarantine: str  # the quarantine folder
    run_id: Optional[str]  # the run that quarantined (a restore or purge of one run), else null
    dry_run: bool
    applied: bool
    older_than_ms: Optional[int]  # quarantine: the orphans' cutoff; purge: files moved before this
    listed_files: Optional[int]  # quarantine: files listed under the location
    too_new: Optional[int]  # quarantine: unreached files newer than the cutoff, left alone
    files: list[QuarantinedFile]
    bytes: int
    not_restored: list[NotRestored]
    failed: list[FailedDelete]  # a move or delete that did not happen (the file is where it was)
    skipped_for_safety: list[SkippedForSafety]
    commits: list[dict] = field(default_factory=list)  # none: quarantine changes no metadata


def quarantine_report(out: QuarantineOutcome, *, table: str, action: str, dry_run: bool, applied: bool,
                      plan: OrphanPlan | None = None, older_than_ms: int | None = None) -> QuarantineReport:
    return QuarantineReport(
        table=table, action=action, quarantine=out.root, run_id=out.run_id, dry_run=dry_run, applied=applied,
        older_than_ms=plan.older_than_ms if plan is not None else older_than_ms,
        listed_files=plan.listed if plan is not None else None, too_new=plan.too_new if plan is not None else None,
        files=[QuarantinedFile(e.original, e.quarantine, e.size, e.mtime_ms, e.moved_at_ms, e.run_id)
               for e in out.files],
        bytes=sum(e.size for e in out.files), not_restored=[NotRestored(p, why) for p, why in out.conflicts],
        failed=[FailedDelete(p, e) for p, e in out.failed],
        skipped_for_safety=[SkippedForSafety(p, why) for p, why in plan.skipped_for_safety] if plan else [])


_DONE = {"quarantine": ("moved", "to"), "restore": ("restored", "from"), "purge": ("deleted", "from")}


@text_renderer(QuarantineReport)
def _quarantine_text(env: Env, r: QuarantineReport) -> None:
    verb, prep = _DONE[r.action]
    would = {"moved": "would move", "restored": "would restore", "deleted": "would delete"}[verb]
    head = f"{r.table}: {would if not r.applied else verb} {len(r.files)} files ({fmt_bytes(r.bytes)}) {prep} " \
           f"quarantine {r.quarantine}"
    if r.action == "quarantine" and r.listed_files is not None and not r.applied:
        head += f"; listed {r.listed_files} files, {r.too_new} newer than the cutoff left alone"
    if r.action == "purge" and r.older_than_ms is not None:
        head += f" (moved before {timestamp_text(r.older_than_ms)})"
    say(env, head + (" (dry run: nothing changed)" if r.dry_run else ""))
    if r.files and not (r.applied and r.action == "quarantine"):
        cols = ["quarantined file", "original path", "size"] if r.action != "quarantine" else ["orphan file", "size"]
        rows = [[f.quarantine, f.original, fmt_bytes(f.size)] if r.action != "quarantine"
                else [f.original, fmt_bytes(f.size)] for f in r.files]
        print_table(env, cols, rows, right={"size"}, paths=set(cols[:-1]))
    if r.not_restored:
        print_table(env, ["not restored", "why"], [[n.path, n.reason] for n in r.not_restored],
                    paths={"not restored"})
    warn_failed_deletes(env, r.failed)
    say_skipped_for_safety(env, r.skipped_for_safety)
