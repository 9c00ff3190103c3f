"""What ``repair`` and ``rewrite-table-path`` print."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from icectl.cli.context import Env
from icectl.cli.output import fmt_bytes, num, print_kv, print_table, say, text_renderer, warn
from icectl.ops.recover.repair import Problem, RefRepair  # plain dataclasses: the report holds them as they are
from icectl.ops.recover.repair_duplicates import DuplicateFile
from icectl.ops.recover.repair_metrics import MetricsChange

if TYPE_CHECKING:
    from icectl.ops.recover.rewrite_table_path import RelocationPlan, RelocationResult
    from icectl.ops.recover.repair import RepairPlan, RepairResult
    from icectl.ops.recover.repair_duplicates import DuplicatesRepairPlan, DuplicatesRepairResult
    from icectl.ops.recover.repair_metrics import MetricsRepairPlan, MetricsRepairResult


# -- repair --------------------------------------------------------------------------------------------------

@dataclass
class RepairReport:
    """What ``repair`` found and did or would do: per ref checked, the problems, the files
    removed, the manifests rebuilt, the records and bytes lost."""

    table: str
    all_refs: bool
    refs: list[RefRepair]
    statistics: list[Problem]
    records_lost: int
    bytes_lost: int
    unrepairable: list[str]
    metadata_location: str | None  # after the repair
    dry_run: bool
    applied: bool
    commits: list[dict] = field(default_factory=list)
    # repair --metrics: the Parquet data files whose entries get their footers' metrics
    metrics: list[MetricsChange] = field(default_factory=list)
    metrics_files_checked: int = 0
    metrics_snapshot_id: int | None = None
    # repair --duplicates: the files live more than once in main's head and the entry each keeps
    duplicates: list[DuplicateFile] = field(default_factory=list)
    duplicates_entries_checked: int = 0
    duplicates_snapshot_id: int | None = None
    kinds: list[str] = field(default_factory=list)  # what was checked: files, duplicates, metrics


def duplicates_repair_report(plan: DuplicatesRepairPlan, result: DuplicatesRepairResult | None, *,
                             dry_run: bool) -> RepairReport:
    applied = result is not None and result.committed is not None
    return RepairReport(
        table=plan.table, all_refs=False, refs=[], statistics=[], records_lost=0, bytes_lost=0,
        unrepairable=plan.unrepairable + plan.unreadable,
        metadata_location=result.committed.table.metadata_location if applied else None, dry_run=dry_run,
        applied=applied, commits=[result.committed.sent_json()] if applied else list(plan.planned_commits),
        duplicates=plan.duplicates, duplicates_entries_checked=plan.entries_checked,
        duplicates_snapshot_id=result.new_snapshot_id if applied else None, kinds=["duplicates"])


def metrics_repair_report(plan: MetricsRepairPlan, result: MetricsRepairResult | None, *,
                          dry_run: bool) -> RepairReport:
    applied = result is not None and result.committed is not None
    return RepairReport(
        table=plan.table, all_refs=False, refs=[], statistics=[], records_lost=0, bytes_lost=0, unrepairable=[],
        metadata_location=result.committed.table.metadata_location if applied else None, dry_run=dry_run,
        applied=applied, commits=[result.committed.sent_json()] if applied else list(plan.planned_commits),
        metrics=plan.changes, metrics_files_checked=plan.files_checked,
        metrics_snapshot_id=result.new_snapshot_id if applied else None, kinds=["metrics"])


def repair_report(plan: RepairPlan, result: RepairResult | None, *, dry_run: bool,
                  metrics: tuple[MetricsRepairPlan, MetricsRepairResult | None] | None = None,
                  duplicates: tuple[DuplicatesRepairPlan, DuplicatesRepairResult | None] | None = None
                  ) -> RepairReport:
    applied = result is not None and bool(result.committed)
    mplan, mresult = metrics if metrics is not None else (None, None)
    mapplied = mresult is not None and mresult.committed is not None
    dplan, dresult = duplicates if duplicates is not None else (None, None)
    dapplied = dresult is not None and dresult.committed is not None
    commits = [c.sent_json() for c in result.committed] if applied else list(plan.planned_commits)
    # a dry run shows each kind's commit as planned on the table as it is
    if dplan is not None:
        commits += [dresult.committed.sent_json()] if dapplied else ([] if applied else list(dplan.planned_commits))
    if mplan is not None:
        commits += [mresult.committed.sent_json()] if mapplied else (
            [] if applied or dapplied else list(mplan.planned_commits))
    last = mresult.committed if mapplied else dresult.committed if dapplied else (
        result.committed[-1] if applied else None)
    return RepairReport(
        table=plan.table, all_refs=plan.all_refs, refs=plan.refs, statistics=plan.statistics,
        records_lost=sum(r.records_lost for r in plan.refs if r.unrepairable is None),
        bytes_lost=sum(r.bytes_lost for r in plan.refs if r.unrepairable is None),
        unrepairable=plan.unrepairable + (dplan.unrepairable if dplan is not None else []),
        metadata_location=last.table.metadata_location if last is not None else None,
        dry_run=dry_run, applied=applied or mapplied or dapplied, commits=commits,
        metrics=mplan.changes if mplan is not None else [],
        metrics_files_checked=mplan.files_checked if mplan is not None else 0,
        metrics_snapshot_id=mresult.new_snapshot_id if mapplied else None,
        duplicates=dplan.duplicates if dplan is not None else [],
        duplicates_entries_checked=dplan.entries_checked if dplan is not None else 0,
        duplicates_snapshot_id=dresult.new_snapshot_id if dapplied else None,
        kinds=["files"] + (["duplicates"] if dplan is not None else []) + (["metrics"] if mplan is not None else []))


@text_renderer(RepairReport)
def _repair_text(env: Env, r: RepairReport) -> None:
    if r.kinds == ["duplicates"]:
        _duplicates_text(env, r)
        return
    if r.refs or r.statistics or not (r.metrics_files_checked or r.metrics):
        _files_text(env, r)
    if "duplicates" in r.kinds and (r.duplicates or not r.applied):
        _duplicates_text(env, r)
    if r.metrics_files_checked or r.metrics:
        _metrics_text(env, r)


def _files_text(env: Env, r: RepairReport) -> None:
    if r.applied:
        if not any(ref.new_snapshot_id is not None for ref in r.refs) and not r.statistics:
            return  # only the metrics or duplicates were repaired
        for ref in r.refs:
            if ref.new_snapshot_id is not None:
                say(env, f"repaired {ref.ref}: {ref.operation} snapshot {ref.new_snapshot_id} "
                         f"({num(ref.records_lost)} records, {fmt_bytes(ref.bytes_lost)} lost)")
        if r.statistics:
            say(env, f"removed {len(r.statistics)} missing statistics files from the metadata")
        if r.metrics_snapshot_id is None and r.duplicates_snapshot_id is None:
            say(env, f"committed {r.metadata_location}")
        for u in r.unrepairable:
            warn(env, f"not repaired: {u}")
        return
    checked = ", ".join(f"{ref.ref} ({ref.ref_type}, snapshot {ref.snapshot_id})" for ref in r.refs) or "no refs"
    say(env, f"{r.table}: checked {checked}" + (" (dry run: nothing changed)" if r.dry_run else ""))
    problems = [(ref.ref, p) for ref in r.refs for p in ref.problems] + [("", p) for p in r.statistics]
    if not problems:
        say(env, "every file the checked snapshots reference is there and readable: nothing to repair")
        return
    print_table(env, ["ref", "kind", "problem", "records", "bytes", "path"],
                [[ref, p.kind, p.problem, num(p.records), fmt_bytes(p.bytes) if p.bytes is not None else "",
                  p.path] for ref, p in problems], right={"records", "bytes"}, title="Missing or unreadable files")
    for ref in r.refs:
        if ref.unrepairable:
            say(env, (f"{ref.ref}: cannot repair: {ref.unrepairable}", "red"))
            continue
        if ref.operation is None:
            continue
        if ref.manifest_list is not None:
            _manifest_list_text(env, ref)
        for m in ref.rebuilt_manifests:
            held = f"held {m.recorded_files} files, {num(m.recorded_records)} records" \
                if m.recorded_files is not None else "its counts are unknown"
            say(env, f"{ref.ref}: rebuild the {m.content} manifest(s) {', '.join(m.manifests)} ({held}): "
                     f"{m.recovered_files} files found in {len(m.sources)} other manifests"
                     + (f", {m.lost_files} files ({num(m.lost_records)} records) lost" if m.lost_files else ""))
        if ref.removed_files:
            print_table(env, ["kind", "reason", "records", "bytes", "path"],
                        [[f.kind, f.reason, num(f.records), fmt_bytes(f.bytes), f.path] for f in ref.removed_files],
                        right={"records", "bytes"}, title=f"Files to remove from {ref.ref} ({ref.operation} commit)")
        say(env, f"{ref.ref}: a {ref.operation} snapshot; {num(ref.records_lost)} records and "
                 f"{fmt_bytes(ref.bytes_lost)} of data are lost")
        if ref.delete_records_dropped:
            say(env, (f"{ref.ref}: {num(ref.delete_records_dropped)} delete records are dropped with missing delete "
                      "files: the rows they deleted come back", "yellow"))


def _manifest_list_text(env: Env, ref: RefRepair) -> None:
    b = ref.manifest_list
    parent = {"read": f"the parent's ({b.parent_snapshot_id}): {b.parent_manifests_kept} manifests kept, "
                      f"{b.parent_manifests_replaced} replaced by the snapshot",
              "none": "no parent"}.get(b.parent_list, f"the parent's manifest list is {b.parent_list}")
    say(env, f"{ref.ref}: rebuild the manifest list of snapshot {b.snapshot_id} from {parent}, and "
             f"{len(b.snapshot_manifests)} manifests the snapshot wrote")
    if b.checks:
        print_table(env, ["summary", "recorded", "rebuilt", ""],
                    [[c.key, num(c.recorded), num(c.rebuilt), "ok" if c.matches else f"{c.rebuilt - c.recorded:+d}"]
                     for c in b.checks], right={"recorded", "rebuilt"}, title="The rebuilt list against the summary")
    if b.complete:
        say(env, (f"{ref.ref}: the rebuild is proven complete: every total of the summary matches", "green"))
        return
    for u in b.unaccounted:
        say(env, (f"{ref.ref}: cannot account for {u}", "yellow"))
    for path in b.may_be_missing:
        say(env, (f"{ref.ref}: may be missing: {path}", "yellow"))
    say(env, (f"{ref.ref}: the rebuild is not proven complete: committing it needs --accept-loss", "yellow"))


# -- rewrite-table-path -------------------------------------------------------------------------------------

@dataclass
class RelocationReport:
    """What ``rewrite-table-path`` wrote or would write: the metadata files rewritten under the
    target, the copy plan (source,target CSV) and, with ``--copy``, the files copied."""

    source_metadata_location: str
    source_prefix: str
    target_prefix: str
    format_version: int
    metadata_location: str  # the new (rewritten) metadata file
    start_version: str | None
    end_version: str
    metadata_files: int
    manifest_lists: int
    manifests: int
    position_delete_files: int
    statistics_files: int
    copied_as_is: int  # metadata files that hold no path to rewrite (v4 relative paths): copied
    copy_plan: str | None  # the CSV file
    copy_plan_rows: int
    copy_bytes: int | None
    copied_files: int
    copied_bytes: int
    note: str | None
    dry_run: bool
    applied: bool
    commits: list[dict] = field(default_factory=list)  # none: the source table is not changed


def relocation_report(plan: RelocationPlan, result: RelocationResult | None, *, dry_run: bool) -> RelocationReport:
    return RelocationReport(
        source_metadata_location=plan.source_metadata_location, source_prefix=plan.source_prefix,
        target_prefix=plan.target_prefix, format_version=plan.format_version,
        metadata_location=plan.target_metadata_location, start_version=plan.start_version,
        end_version=plan.end_version, metadata_files=len(plan.metadata_files), manifest_lists=len(plan.manifest_lists),
        manifests=len(plan.manifests), position_delete_files=len(plan.position_delete_files),
        statistics_files=len(plan.statistics_files), copied_as_is=len(plan.copied_as_is),
        copy_plan=result.copy_plan if result else None, copy_plan_rows=len(plan.copy_rows),
        copy_bytes=plan.copy_bytes, copied_files=result.copied_files if result else 0,
        copied_bytes=result.copied_bytes if result else 0, note=plan.note, dry_run=dry_run,
        applied=result is not None)


@text_renderer(RelocationReport)
def _relocation_text(env: Env, r: RelocationReport) -> None:
    if r.applied:
        say(env, f"wrote {r.metadata_files} metadata files, {r.manifest_lists} manifest lists, {r.manifests} "
                 f"manifests, {r.position_delete_files} position delete files under {r.target_prefix}")
        say(env, f"copy plan: {r.copy_plan} ({r.copy_plan_rows} files)")
        if r.copied_files:
            say(env, f"copied {r.copied_files} files ({fmt_bytes(r.copied_bytes)})")
        if r.note:
            say(env, r.note)
        say(env, f"metadata: {r.metadata_location}")
        return
    say(env, f"rewrite {r.source_prefix} -> {r.target_prefix}" + (" (dry run: nothing written)" if r.dry_run else ""))
    print_kv(env, [("source metadata", r.source_metadata_location), ("new metadata", r.metadata_location),
                   ("versions", f"{r.start_version or '(first)'} .. {r.end_version}"),
                   ("metadata files", str(r.metadata_files)), ("manifest lists", str(r.manifest_lists)),
                   ("manifests", str(r.manifests)), ("position delete files", str(r.position_delete_files)),
                   ("statistics files", str(r.statistics_files)),
                   ("files to copy", f"{r.copy_plan_rows} ({fmt_bytes(r.copy_bytes)})")])
    if r.note:
        say(env, r.note)


def _duplicates_text(env: Env, r: RepairReport) -> None:
    if r.duplicates_snapshot_id is not None:
        say(env, f"kept one entry of each of {len([d for d in r.duplicates if d.unrepairable is None])} files live "
                 f"more than once: replace snapshot {r.duplicates_snapshot_id}")
        if r.metrics_snapshot_id is None:
            say(env, f"committed {r.metadata_location}")
    elif not r.applied:
        say(env, f"{r.table}: checked {num(r.duplicates_entries_checked)} live entries of main's head for files "
            "listed more than once" + (" (dry run: nothing changed)" if r.dry_run else ""))
        if not r.duplicates:
            say(env, "every live file is listed once: nothing to repair")
        else:
            print_table(env, ["file", "kind", "manifest", "data seq", "records", "bytes", "kept"],
                        [[d.path if i == 0 else "", d.kind if i == 0 else "", e.manifest,
                          "" if e.data_sequence_number is None else str(e.data_sequence_number), num(e.record_count),
                          fmt_bytes(e.file_size_in_bytes), "kept" if e.kept else ("-" if d.unrepairable else "dropped")]
                         for d in r.duplicates for i, e in enumerate(d.entries)],
                        right={"records", "bytes"}, title=f"Files live more than once ({len(r.duplicates)}, replace "
                                                          "commit)")
            twice = sum(d.records_counted_twice for d in r.duplicates if d.unrepairable is None)
            say(env, f"readers count {num(twice)} rows more than once today; the entries kept count each once")
            for d in r.duplicates:
                if d.conflicts:
                    say(env, (f"{d.path}: its entries disagree on {', '.join(d.conflicts)}", "yellow"))
    for u in r.unrepairable if r.kinds == ["duplicates"] else []:
        warn(env, f"not repaired: {u}")


def _metrics_text(env: Env, r: RepairReport) -> None:
    if r.metrics_snapshot_id is not None:
        say(env, f"repaired the metrics of {len(r.metrics)} files: replace snapshot {r.metrics_snapshot_id}")
        say(env, f"committed {r.metadata_location}")
        return
    if r.applied:
        return
    say(env, f"{r.table}: checked the footers of {num(r.metrics_files_checked)} Parquet data files"
        + (" (dry run: nothing changed)" if r.dry_run else ""))
    if not r.metrics:
        say(env, "every entry's metrics are what its footer says: nothing to repair")
        return
    print_table(env, ["file", "code", "difference"],
                [[c.path if i == 0 else "", d.code, d.message] for c in r.metrics for i, d in enumerate(c.differences)],
                title=f"Entries to carry their footer's metrics ({len(r.metrics)} files, replace commit)")
