"""What ``expire`` prints."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from icectl.cli.context import Env
from icectl.cli.output import fmt_bytes, print_table, say, text_renderer
from icectl.cli.views.common import SkippedForSafety, say_skipped_for_safety, warn_failed_deletes
from icectl.ops.maintain.expire import FileToDelete, KINDS, bytes_by_kind, java_counts

if TYPE_CHECKING:
    from icectl.ops.maintain.expire import ExpiryPlan, ExpiryResult


@dataclass
class FailedDelete:
    path: str
    error: str


@dataclass
class RetainedBecause:
    snapshot_id: int
    reasons: list[str]


@dataclass
class ExpireReport:
    """What ``expire`` did, or would do (``applied`` false: a dry run, nothing to expire, or a plan
    it refused to apply). ``deleted_files`` are the files deleted, or to delete; ``counts`` are
    the columns of Iceberg Java's expire_snapshots procedure; ``bytes`` sums sizes by kind."""

    table: str
    dry_run: bool
    applied: bool
    expired_snapshot_ids: list[int]
    retained_snapshot_ids: list[int]
    removed_refs: list[str]
    removed_schema_ids: list[int]
    removed_spec_ids: list[int]
    metadata_location: str | None  # the committed metadata file; None until committed
    deleted_files: list[FileToDelete]
    failed_deletes: list[FailedDelete]
    skipped_outside_location: list[str]
    skipped_for_safety: list[SkippedForSafety]
    counts: dict[str, int]
    bytes: dict[str, int]
    explain: list[RetainedBecause] | None  # with --explain: the rules that keep each retained snapshot
    # The cutoff of snapshots outside any ref's own retention, and the same in words:
    # "older than 7d (604800000 ms): before 2025-11-19 22:00:00 UTC (1763589600000)".
    older_than_ms: int | None
    older_than: str
    # The commit sent (or, before it, to send): {"requirements": [...], "updates": [...]}.
    commits: list[dict] = field(default_factory=list)


def expire_report(plan: ExpiryPlan, result: ExpiryResult | None, *, dry_run: bool, explain: bool) -> ExpireReport:
    files = plan.files if result is None else result.deleted
    metadata = [] if result is None else [FileToDelete(p, "metadata", None) for p in result.metadata_files_deleted]
    return ExpireReport(
        table=plan.table, dry_run=dry_run, applied=result is not None and result.committed_metadata_location is not None,
        expired_snapshot_ids=plan.expired_snapshot_ids, retained_snapshot_ids=plan.retained_snapshot_ids,
        removed_refs=plan.removed_refs, removed_schema_ids=plan.removed_schema_ids,
        removed_spec_ids=plan.removed_spec_ids,
        metadata_location=None if result is None else result.committed_metadata_location,
        deleted_files=list(files) + metadata,
        failed_deletes=[] if result is None else [FailedDelete(p, e) for p, e in result.failed],
        skipped_outside_location=plan.skipped_outside_location,
        skipped_for_safety=[SkippedForSafety(p, why) for p, why in plan.skipped_for_safety], counts=java_counts(files), bytes=bytes_by_kind(files),
        explain=[RetainedBecause(sid, plan.reasons.get(sid, [])) for sid in plan.retained_snapshot_ids]
        if explain else None,
        older_than_ms=plan.older_than_ms, older_than=plan.older_than,
        commits=[result.committed.sent_json()] if result is not None and result.committed is not None
        else ([plan.planned_commit] if plan.planned_commit else []))


@text_renderer(ExpireReport)
def _expire_text(env: Env, r: ExpireReport) -> None:
    say(env, f"{r.table}: {len(r.expired_snapshot_ids)} snapshots {'expired' if r.applied else 'to expire'}, "
             f"{len(r.retained_snapshot_ids)} retained"
             + (f"; refs removed: {', '.join(r.removed_refs)}" if r.removed_refs else "")
             + (" (dry run: nothing changed)" if r.dry_run else ""))
    say(env, f"cutoff: {r.older_than}")
    if r.explain is not None:
        print_table(env, ["snapshot", "kept because"], [[str(e.snapshot_id), "; ".join(e.reasons)] for e in r.explain],
                    title="Why each retained snapshot stays", ids={"snapshot"})
    content = [f for f in r.deleted_files if f.kind != "metadata"]
    if content or r.applied:
        rows = []
        for kind in KINDS:
            group = [f for f in content if f.kind == kind]
            if group:
                rows.append([kind, str(len(group)), fmt_bytes(sum(f.size or 0 for f in group))])
        print_table(env, ["kind", "files", "bytes"], rows, right={"files", "bytes"},
                    title=f"Files that {'did' if r.applied else 'would'} go")
    if r.skipped_outside_location:
        say(env, (f"{len(r.skipped_outside_location)} unreferenced files lie outside the table location and are "
                  f"left alone", "yellow"))
    say_skipped_for_safety(env, r.skipped_for_safety)
    metadata = len(r.deleted_files) - len(content)
    if metadata:
        say(env, f"deleted {metadata} old metadata files")
    warn_failed_deletes(env, r.failed_deletes)
    if r.applied:
        say(env, f"committed {r.metadata_location}")
    elif not (r.expired_snapshot_ids or r.removed_refs or r.removed_schema_ids or r.removed_spec_ids):
        say(env, "nothing to expire")
