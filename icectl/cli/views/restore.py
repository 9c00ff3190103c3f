"""What ``restore`` prints."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from icectl.cli.context import Env
from icectl.cli.output import fmt_ts, print_kv, print_table, say, text_renderer
from icectl.cli.views.diff import print_diff
from icectl.ops.inspect.diff import TableDiff
from icectl.ops.recover.recover_metadata import RecoveryPlan
from icectl.ops.recover.restore import MissingFile

if TYPE_CHECKING:
    from icectl.ops.recover.restore import RestorePlan, RestoreResult


@dataclass
class RestoreReport:
    """A restore's plan (``applied`` false) or what it committed. ``diff`` is from today's state
    to the restored one; ``commits`` is empty when the table already is in that state or the
    restore is refused."""

    table: str
    metadata_location: str  # today's file (before the restore)
    restore_from: str
    restore_from_version: int
    restore_from_timestamp_ms: int
    dry_run: bool
    applied: bool
    new_metadata_location: str | None  # the committed file; null until committed
    current_snapshot_id_before: int | None
    current_snapshot_id_after: int | None
    refs_before: dict[str, int]
    refs_after: dict[str, int]
    changes: list[str]
    checked_files: int
    missing_files: list[MissingFile]
    not_restored_snapshots: list[int]
    diff: TableDiff | None
    commits: list[dict] = field(default_factory=list)


def restore_report(plan: RestorePlan, result: RestoreResult | None, *, dry_run: bool) -> RestoreReport:
    commits = plan.commits
    if result is not None and result.committed is not None:
        commits = [result.committed.sent_json()]
    return RestoreReport(
        table=plan.table, metadata_location=plan.metadata_location, restore_from=plan.restore_from,
        restore_from_version=plan.restore_from_version, restore_from_timestamp_ms=plan.restore_from_timestamp_ms,
        dry_run=dry_run, applied=result is not None and result.metadata_location is not None,
        new_metadata_location=result.metadata_location if result is not None else None,
        current_snapshot_id_before=plan.current_snapshot_id_before,
        current_snapshot_id_after=plan.current_snapshot_id_after, refs_before=plan.refs_before,
        refs_after=plan.refs_after, changes=plan.changes, checked_files=plan.checked_files,
        missing_files=plan.missing_files, not_restored_snapshots=plan.not_restored_snapshots, diff=plan.diff,
        commits=commits if not plan.missing_files else [])


@text_renderer(RestoreReport)
def _restore_text(env: Env, r: RestoreReport) -> None:
    if r.applied:
        say(env, f"restored {r.table} to {r.restore_from}: committed {r.new_metadata_location}")
        say(env, f"undo: icectl restore {r.table} --to-metadata {r.metadata_location}")
        return
    say(env, f"{r.table}: restore to {r.restore_from}" + (" (dry run: nothing committed)" if r.dry_run else ""))
    print_kv(env, [("today", r.metadata_location), ("restore from", r.restore_from),
                   ("its time", fmt_ts(r.restore_from_timestamp_ms)),
                   ("current snapshot", f"{r.current_snapshot_id_before} -> {r.current_snapshot_id_after}"),
                   ("files checked", r.checked_files)])
    if r.missing_files:
        print_table(env, ["kind", "needed by snapshot", "missing file"],
                    [[f.kind, str(f.snapshot_id), f.path] for f in r.missing_files], title="files that are gone")
        return
    if not r.commits:
        say(env, "nothing to restore: the table already is in that state" if not r.changes else r.changes[0])
        return
    say(env, "changes:")
    for c in r.changes:
        say(env, f"  {c}")
    if r.not_restored_snapshots:
        say(env, f"  ({len(r.not_restored_snapshots)} older snapshots of that file were expired since and stay gone)")
    if r.diff is not None:
        say(env, "diff from today to the restored state:")
        print_diff(env, r.diff)


@dataclass
class RecoveryCandidate:
    """A metadata file looked at; ``problem`` is null for a good one."""

    location: str
    version: int
    found_in: str
    table_uuid: str | None
    problem: str | None


@dataclass
class RecoveryReport:
    """``restore`` without ``--to-*`` (or with one when the current file is broken): what is wrong
    with the current metadata file and the newest good one made current."""

    table: str
    metadata_location: str  # the catalog's current file
    broken: str | None  # what is wrong with it; null when it is fine
    table_uuid: str | None
    restore_from: str | None  # the good file; null when none (or none needed)
    restore_from_version: int
    restore_from_timestamp_ms: int | None
    current_snapshot_id_after: int | None
    refs_after: dict[str, int]
    schema_id_after: int | None
    checked_files: int
    missing_files: list[MissingFile]
    candidates: list[RecoveryCandidate]
    dry_run: bool
    applied: bool
    new_metadata_location: str | None


def recovery_report(plan: RecoveryPlan, new_location: str | None, *, dry_run: bool) -> RecoveryReport:
    return RecoveryReport(
        table=plan.table, metadata_location=plan.metadata_location, broken=plan.broken, table_uuid=plan.table_uuid,
        restore_from=plan.restore_from, restore_from_version=plan.restore_from_version,
        restore_from_timestamp_ms=plan.restore_from_timestamp_ms,
        current_snapshot_id_after=plan.current_snapshot_id_after, refs_after=plan.refs_after,
        schema_id_after=plan.schema_id_after, checked_files=plan.checked_files, missing_files=plan.missing_files,
        candidates=[RecoveryCandidate(c.location, c.version, c.found_in, c.table_uuid, c.problem)
                    for c in plan.candidates],
        dry_run=dry_run, applied=new_location is not None, new_metadata_location=new_location)


@text_renderer(RecoveryReport)
def _recovery_text(env: Env, r: RecoveryReport) -> None:
    if r.applied:
        say(env, f"restored {r.table}: {r.new_metadata_location} (the state of {r.restore_from}) is current; "
                 f"the broken {r.metadata_location} is kept")
        return
    if r.broken is None and r.restore_from is None:
        say(env, f"{r.table}: the current metadata file {r.metadata_location} is readable and valid: nothing to "
                 "recover (--to-version N or --to-metadata FILE restores an earlier state)")
        return
    say(env, f"{r.table}: the current metadata file is broken" + (" (dry run: nothing changed)" if r.dry_run else ""))
    rows: list[tuple[str, object]] = [("current", r.metadata_location), ("what is wrong", r.broken or "nothing")]
    if r.restore_from is not None:
        rows += [("restore from", r.restore_from), ("its time", fmt_ts(r.restore_from_timestamp_ms)),
                 ("current snapshot", r.current_snapshot_id_after),
                 ("refs", ", ".join(f"{n}={s}" for n, s in sorted(r.refs_after.items())) or "none"),
                 ("schema", r.schema_id_after), ("files checked", r.checked_files)]
    print_kv(env, rows)
    skipped = [c for c in r.candidates if c.problem is not None]
    if skipped:
        print_table(env, ["candidate", "found in", "why not"],
                    [[c.location.rsplit("/", 1)[-1], c.found_in, c.problem] for c in skipped],
                    title="newer or other files not chosen" if r.restore_from else "files looked at")
    if r.missing_files:
        print_table(env, ["kind", "needed by snapshot", "missing file"],
                    [[f.kind, str(f.snapshot_id), f.path] for f in r.missing_files], title="files that are gone")
