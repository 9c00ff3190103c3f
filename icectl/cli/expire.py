"""``icectl expire``."""
from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from icectl.cli.context import Env


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
    from icectl.cli.confirm import confirm, progress_deleter
    from icectl.ops.expire import ExpireOptions, apply_expiry, plan_expiry
    from icectl.ops.inspect import parse_time_ms
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
        _render(env, plan, None, dry_run=dry_run, explain=explain, final=True)
        return
    if not env.json:
        _render(env, plan, None, dry_run=True, explain=explain)
    confirm(env, f"Expire {len(plan.expired_snapshot_ids)} snapshots and delete {len(plan.files)} files?", yes=yes)
    result = apply_expiry(t, opts, delete=progress_deleter(env, t.io, len(plan.files)))
    _render(env, result.plan, result, dry_run=False, explain=explain)


def expiry_json(plan: Any, result: Any, *, dry_run: bool, explain: bool) -> dict[str, Any]:
    from icectl.ops.expire import bytes_by_kind, java_counts

    files = plan.files if result is None else result.deleted
    listed = [{"path": f.path, "kind": f.kind, "size": f.size} for f in files]
    metadata = [] if result is None else [{"path": p, "kind": "metadata", "size": None} for p in result.metadata_files_deleted]
    d = {
        "table": plan.table, "dry_run": dry_run,
        "expired_snapshot_ids": plan.expired_snapshot_ids, "retained_snapshot_ids": plan.retained_snapshot_ids,
        "removed_refs": plan.removed_refs, "removed_schema_ids": plan.removed_schema_ids,
        "removed_spec_ids": plan.removed_spec_ids,
        "metadata_location": None if result is None else result.committed_metadata_location,
        "deleted_files": listed + metadata,
        "failed_deletes": [] if result is None else [{"path": p, "error": e} for p, e in result.failed],
        "skipped_outside_location": plan.skipped_outside_location,
        "counts": java_counts(files), "bytes": bytes_by_kind(files),
    }
    if explain:
        d["explain"] = [{"snapshot_id": sid, "reasons": plan.reasons.get(sid, [])} for sid in plan.retained_snapshot_ids]
    return d


def _render(env: Env, plan: Any, result: Any, *, dry_run: bool, explain: bool, final: bool = False) -> None:
    from icectl.cli.output import emit_json, fmt_bytes

    if env.json:
        if result is not None or dry_run or final:
            emit_json(env, expiry_json(plan, result, dry_run=dry_run, explain=explain))
        return
    from rich.table import Table

    c = env.console()
    files = plan.files if result is None else result.deleted
    verb = "would" if result is None else "did"
    c.print(f"{plan.table}: {len(plan.expired_snapshot_ids)} snapshots {'to expire' if result is None else 'expired'}, "
            f"{len(plan.retained_snapshot_ids)} retained"
            + (f"; refs removed: {', '.join(plan.removed_refs)}" if plan.removed_refs else ""))
    if explain:
        t = Table(title="Why each retained snapshot stays", title_justify="left")
        t.add_column("snapshot")
        t.add_column("kept because")
        for sid in plan.retained_snapshot_ids:
            t.add_row(str(sid), "; ".join(plan.reasons.get(sid, [])))
        c.print(t)
    if files or result is not None:
        from icectl.table.reachability import KINDS

        t = Table(title=f"Files that {verb} go", title_justify="left")
        t.add_column("kind")
        t.add_column("files", justify="right")
        t.add_column("bytes", justify="right")
        for kind in KINDS:
            group = [f for f in files if f.kind == kind]
            if group:
                t.add_row(kind, str(len(group)), fmt_bytes(sum(f.size or 0 for f in group)))
        c.print(t)
    if plan.skipped_outside_location:
        c.print(f"[yellow]{len(plan.skipped_outside_location)} unreferenced files lie outside the table location and "
                f"are left alone[/yellow]")
    if result is not None:
        if result.metadata_files_deleted:
            c.print(f"deleted {len(result.metadata_files_deleted)} old metadata files")
        for path, err in result.failed:
            env.stderr.write(f"icectl: warning: could not delete {path}: {err}\n")
        c.print(f"committed {result.committed_metadata_location}" if result.committed_metadata_location
                else "nothing to expire")
    elif not plan.changes_metadata:
        c.print("nothing to expire")


def register(app: typer.Typer) -> None:
    app.command("expire")(expire)
