"""What ``remove-orphans`` prints."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from icectl.cli.context import Env
from icectl.cli.output import fmt_bytes, print_table, say, text_renderer
from icectl.cli.views.common import SkippedForSafety, say_skipped_for_safety, warn_failed_deletes
from icectl.cli.views.expire import FailedDelete
from icectl.expr.timestamp import timestamp_text

if TYPE_CHECKING:
    from icectl.ops.maintain.expire import FileToDelete
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
