"""``icectl expire``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from icectl.cli.context import Env
from icectl.cli.output import fmt_bytes, print_table, render, say, text_renderer, warn

if TYPE_CHECKING:
    from icectl.engine.expire import ExpiryPlan, ExpiryResult, FileToDelete


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
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation (for cron and Airflow).")] = False,
) -> None:
    """Expire old snapshots and delete the files only they reach, as Iceberg Java's expire_snapshots."""
    from icectl.cli.confirm import confirm_plan, progress_deleter
    from icectl.engine.expire import ExpireOptions, apply_expiry, plan_expiry
    from icectl.engine.inspect import parse_time_ms
    from icectl.errors import RefusedError

    env: Env = ctx.obj
    t = env.open_table(table)
    opts = ExpireOptions(older_than_ms=parse_time_ms(older_than) if older_than else None, retain_last=retain_last,
                         snapshot_ids=tuple(snapshot_id or ()), clean_expired_metadata=clean_expired_metadata,
                         delete_files=not no_delete_files)
    gc_off = t.metadata.properties.get("gc.enabled", "true").lower() == "false"
    if gc_off and opts.delete_files:
        raise RefusedError("cannot expire snapshots: gc.enabled is false for this table (deleting files may corrupt "
                           "other tables)", hint="use --no-delete-files to expire metadata only")
    plan = plan_expiry(t, opts)
    if dry_run or not plan.changes_metadata:
        render(env, expire_report(plan, None, dry_run=dry_run, explain=explain))
        return
    confirm_plan(env, expire_report(plan, None, dry_run=False, explain=explain),
                 f"Expire {len(plan.expired_snapshot_ids)} snapshots and delete {len(plan.files)} files?", yes=yes)
    result = apply_expiry(t, opts, delete=progress_deleter(env, t.io, len(plan.files)))
    render(env, expire_report(result.plan, result, dry_run=False, explain=explain))


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
    counts: dict[str, int]
    bytes: dict[str, int]
    explain: list[RetainedBecause] | None  # with --explain: the rules that keep each retained snapshot


def expire_report(plan: ExpiryPlan, result: ExpiryResult | None, *, dry_run: bool, explain: bool) -> ExpireReport:
    from icectl.engine.expire import FileToDelete, bytes_by_kind, java_counts

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
        skipped_outside_location=plan.skipped_outside_location, counts=java_counts(files), bytes=bytes_by_kind(files),
        explain=[RetainedBecause(sid, plan.reasons.get(sid, [])) for sid in plan.retained_snapshot_ids]
        if explain else None)


@text_renderer(ExpireReport)
def _expire_text(env: Env, r: ExpireReport) -> None:
    from icectl.engine.reachability import KINDS

    say(env, f"{r.table}: {len(r.expired_snapshot_ids)} snapshots {'expired' if r.applied else 'to expire'}, "
             f"{len(r.retained_snapshot_ids)} retained"
             + (f"; refs removed: {', '.join(r.removed_refs)}" if r.removed_refs else "")
             + (" (dry run: nothing changed)" if r.dry_run else ""))
    if r.explain is not None:
        print_table(env, ["snapshot", "kept because"], [[str(e.snapshot_id), "; ".join(e.reasons)] for e in r.explain],
                    title="Why each retained snapshot stays")
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
    metadata = len(r.deleted_files) - len(content)
    if metadata:
        say(env, f"deleted {metadata} old metadata files")
    for f in r.failed_deletes:
        warn(env, f"could not delete {f.path}: {f.error}")
    if r.applied:
        say(env, f"committed {r.metadata_location}")
    elif not (r.expired_snapshot_ids or r.removed_refs or r.removed_schema_ids or r.removed_spec_ids):
        say(env, "nothing to expire")


def register(app: typer.Typer) -> None:
    app.command("expire")(expire)
