"""Table health, measured from metadata (the metadata file, manifest lists and manifests; with
``orphans`` also a listing of the table location), with a finding for every maintenance step that
would improve the table.

A finding is raised only when the planner of the command that fixes it says that command would
change something: ``compact`` (the compaction planner: the same size thresholds, min-input-files and
delete rules), ``rewrite-deletes``, ``rewrite-manifests``, ``expire`` and ``remove-orphans`` (their
own plans). So a table that no step can improve (one file smaller than the target, one manifest,
snapshots younger than the retention) is healthy, and ``maintain`` never runs a step that does
nothing. On top of "would change something", each check has a threshold (the policy, see
:mod:`icectl.ops.maintain.policy`) so that one extra manifest or one delete does not page anyone.

Severities: ``info`` (an observation no icectl step fixes, or a step this table's policy leaves
out), ``warning`` (maintenance recommended) and ``critical`` (maintenance overdue: readers are
slowed or metadata grows without bound). The command's exit code is that of the worst finding.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from icectl.expr.duration import human_duration, parse_duration_ms
from icectl.expr.size import human_size
from icectl.errors import IcectlError
from icectl.ops.maintain.policy import Policy, PolicyFile, STEPS
from icectl.spec.properties import (GC_ENABLED, MANIFEST_TARGET_SIZE_BYTES, MAX_SNAPSHOT_AGE_MS,
                                    METADATA_PREVIOUS_VERSIONS_MAX)
from icectl.table.loaded import Table, load_table
from icectl.table.listing import DataFileSizes, live_data_entries, live_data_sizes
from icectl.formats.manifest import ManifestContent
from icectl.ops.inspect.profile import partition_skew
from icectl.ops.maintain.compact import (CompactionCounts, CompactionPlan, CompactOptions, compaction_counts,
                                         file_size_bounds, plan_compaction)
from icectl.ops.maintain.expire import ExpireOptions, expiry_updates
from icectl.ops.maintain.remove_orphans import DEFAULT_OLDER_THAN_MS, plan_orphans
from icectl.ops.maintain.rewrite_manifests import main_head, plan_rewrite_manifests
from icectl.spec.metadata import Snapshot
from icectl.table.scan import branch_head, plan_files

SEVERITIES = ("info", "warning", "critical")


@dataclass
class Finding:
    """One thing a maintenance step would improve, or an observation (``info``)."""

    check: str  # data-files | deletes | delete-files | manifests | snapshots | orphans | partitions | statistics
    severity: str  # info | warning | critical
    message: str
    step: str | None  # the maintain step that fixes it (null: none does)
    command: list[str] | None  # icectl's arguments that fix it (after ``icectl`` and the catalog options)
    options: dict[str, Any] = field(default_factory=dict, repr=False)  # the step's options, for maintain


@dataclass
class Metrics:
    data_files: int = 0
    data_bytes: int = 0
    records: int = 0
    target_file_size: int = 0
    small_files: int = 0  # under compact's min-file-size (0.75 x target)
    small_file_ratio: float = 0.0
    delete_files: int = 0
    delete_records: int = 0
    delete_file_ratio: float = 0.0  # delete files / data files
    delete_record_ratio: float = 0.0  # delete records / data records
    manifests: int = 0
    data_manifests: int = 0
    delete_manifests: int = 0
    manifest_bytes: int = 0
    manifest_target_size: int = 0
    small_manifests: int = 0  # under the target size, of the default spec
    snapshots: int = 0
    expirable_snapshots: int = 0
    oldest_snapshot_age_ms: int | None = None
    # since the newest replace snapshot (compact, rewrite-manifests, rewrite-deletes), or the oldest
    # snapshot when there is none (never maintained); null without snapshots
    maintenance_age_ms: int | None = None
    max_snapshot_age_ms: int = 0  # history.expire.max-snapshot-age-ms
    metadata_size: int | None = None
    metadata_log_entries: int = 0
    previous_versions_max: int = 0  # write.metadata.previous-versions-max
    partitions: int = 0
    partition_skew: float | None = None  # largest / median partition bytes
    statistics_files: int = 0
    statistics_snapshots_behind: int | None = None
    statistics_age_ms: int | None = None
    orphan_files: int | None = None  # null unless the location was listed
    orphan_bytes: int | None = None


@dataclass
class TableHealth:
    table: str
    metadata_location: str | None
    format_version: int | None
    status: str  # healthy | warning | critical | error
    metrics: Metrics | None
    findings: list[Finding]
    error: str | None = None
    error_exit_code: int | None = None
    seconds: float = 0.0

    @property
    def steps(self) -> list[str]:
        """The steps the findings call for, in the safe order."""
        wanted = {f.step for f in self.findings if f.step and f.severity != "info"}
        return [s for s in STEPS if s in wanted]

    def finding_for(self, step: str) -> Finding | None:
        found = [f for f in self.findings if f.step == step and f.severity != "info"]
        # compact: the finding that applies deletes is the superset of the plain compaction.
        found.sort(key=lambda f: len(f.options), reverse=True)
        return found[0] if found else None


def worst(severities: list[str]) -> str | None:
    ranked = [s for s in severities if s in SEVERITIES]
    return max(ranked, key=SEVERITIES.index) if ranked else None


def _status(findings: list[Finding]) -> str:
    w = worst([f.severity for f in findings])
    return w if w in ("warning", "critical") else "healthy"


# -- the checks -----------------------------------------------------------------------------------------

def _ratio(a: int, b: int) -> float:
    return round(a / b, 4) if b else 0.0


def _gate(policy: Policy, step: str, severity: str, message: str) -> tuple[str, str]:
    """A step this table's policy leaves out cannot be called for: its finding is info."""
    if policy.step_enabled(step):
        return severity, message
    why = "maintenance is disabled for this table" if not policy.enabled else f"{step} is not in this table's policy"
    return "info", f"{message} ({why})"


def _finding(policy: Policy, check: str, step: str, severity: str, message: str, command: list[str],
             options: dict[str, Any] | None = None) -> Finding:
    severity, message = _gate(policy, step, severity, message)
    return Finding(check, severity, message, step, command, dict(options or {}))


def _files_by_column(table: Table, snap: Snapshot | None) -> DataFileSizes | None:
    """The branch head's live data files as columns, when no delete file can apply to them (no
    delete manifest): what the checks below add up, without a scan task a file."""
    if snap is None or any(m.content == ManifestContent.DELETES for m in table.manifests(snap)):
        return None
    return live_data_sizes(table, snap)


def _check_files(table: Table, policy: Policy, m: Metrics, out: list[Finding]) -> None:
    import polars as pl  # loaded by the command that reads manifests, not at start-up

    md = table.metadata
    snap = branch_head(table, "main", operation="health")
    target, lo, _ = file_size_bounds(md, CompactOptions())
    m.target_file_size = target
    sizes = _files_by_column(table, snap)
    if sizes is not None:
        tasks, deletes = [], []
        size = pl.col("file_size_in_bytes")
        m.data_files, m.data_bytes, m.records, m.small_files = sizes.frame.select(
            pl.len(), size.sum().alias("bytes"), pl.col("record_count").sum(), (size < lo).sum().alias("small")).row(0)
        partition_bytes = sizes.frame.group_by("partition_key").agg(size.sum()).sort(
            "partition_key").get_column("file_size_in_bytes").to_list()
    else:
        # the data manifests' entries by column (no statistics needed here), the delete files' as always
        tasks, deletes = plan_files(table, snap, data_entries=live_data_entries(table, snap) if snap else None)
        m.data_files = len(tasks)
        m.data_bytes = sum(t.length for t in tasks)
        m.records = sum(t.file.record_count for t in tasks)
        m.small_files = sum(1 for t in tasks if t.length < lo)
        by_partition: dict[tuple, int] = {}
        for t in tasks:
            key = (t.file.spec_id, t.file.partition)
            by_partition[key] = by_partition.get(key, 0) + t.length
        partition_bytes = list(by_partition.values())
        del by_partition
    m.small_file_ratio = _ratio(m.small_files, m.data_files)
    m.delete_files = len(deletes)
    m.delete_records = sum(d.data_file.record_count for d in deletes)
    m.delete_file_ratio = _ratio(m.delete_files, m.data_files)
    m.delete_record_ratio = _ratio(m.delete_records, m.records)
    m.partitions = len(partition_bytes)
    if len(partition_bytes) >= 2:
        m.partition_skew = partition_skew(partition_bytes)
        if m.partition_skew is not None and m.partition_skew >= policy.partition_skew:
            out.append(Finding("partitions", "info", f"partitions are skewed: the largest holds {m.partition_skew}x "
                               f"the median partition's bytes ({m.partitions} partitions); no maintenance step "
                               "changes that (a partition spec change does: icectl alter)", None, None))
    del partition_bytes
    if snap is None:
        return
    name = table.name
    min_files = policy.compact_min_input_files
    base = ["compact", name] + (["--min-input-files", str(min_files)] if min_files != 5 else [])
    # the files read above, read once for the metrics and both compaction checks
    opts = CompactOptions(min_input_files=min_files)
    plan = compaction_counts(table, opts, sizes) if sizes is not None else \
        _counts(plan_compaction(table, opts, planned=tasks))
    if plan.groups:
        sev = "critical" if plan.input_files >= policy.small_files_critical else "warning"
        out.append(_finding(policy, "data-files", "compact", sev,
                            f"{m.small_files} of {m.data_files} data files are under {human_size(lo)} (target {human_size(target)}): "
                            f"compact would rewrite {plan.input_files} files in {plan.groups} groups",
                            base + ["--yes"], {"min_input_files": min_files}))
    if deletes and (m.delete_record_ratio >= policy.delete_record_ratio
                    or m.delete_file_ratio >= policy.delete_file_ratio):
        plan = _counts(plan_compaction(table, CompactOptions(min_input_files=min_files, delete_file_threshold=1),
                                       planned=tasks))
        if plan.groups:
            sev = "critical" if m.delete_record_ratio >= policy.delete_record_ratio_critical else "warning"
            out.append(_finding(policy, "deletes", "compact", sev,
                                f"{m.delete_files} delete files ({m.delete_records} delete records) for "
                                f"{m.data_files} data files ({m.records} records): delete-record ratio "
                                f"{m.delete_record_ratio}, delete-file ratio {m.delete_file_ratio}; compact would "
                                f"apply them, rewriting {plan.input_files} files",
                                base + ["--delete-file-threshold", "1", "--yes"],
                                {"min_input_files": min_files, "delete_file_threshold": 1}))
    if deletes:
        # its module writes Parquet: pyarrow is loaded for a table with delete files only
        from icectl.ops.maintain.rewrite_deletes import plan_delete_rewrite

        drp = plan_delete_rewrite(table)
        if drp.changes:
            what = []
            if drp.dangling:
                what.append(f"{len(drp.dangling)} dangling delete files to drop")
            if drp.to_merge:
                what.append(f"{sum(len(v) for v in drp.to_merge.values())} position-delete files to merge in "
                            f"{len(drp.to_merge)} partitions")
            if drp.to_dv:
                what.append(f"{len(drp.to_dv)} position-delete files to convert to deletion vectors")
            out.append(_finding(policy, "delete-files", "rewrite-deletes", "warning", "; ".join(what),
                                ["rewrite-deletes", name, "--yes"]))


def _counts(plan: CompactionPlan) -> CompactionCounts:
    return CompactionCounts(len(plan.groups), plan.input_files)


def _check_manifests(table: Table, policy: Policy, m: Metrics, out: list[Finding]) -> None:
    head = main_head(table)
    m.manifest_target_size = MANIFEST_TARGET_SIZE_BYTES.read(table.metadata.properties)
    if head is None:
        return
    manifests = table.manifests(head)
    m.manifests = len(manifests)
    m.data_manifests = sum(1 for x in manifests if x.content == ManifestContent.DATA)
    m.delete_manifests = m.manifests - m.data_manifests
    m.manifest_bytes = sum(x.manifest_length for x in manifests)
    plan = plan_rewrite_manifests(table)
    spec = plan.spec_id
    m.small_manifests = sum(1 for x in manifests if x.partition_spec_id == spec
                            and x.manifest_length < m.manifest_target_size)
    wanted = [g for g in plan.groups if g.rewrite and g.manifests > g.target_manifests and
              sum(1 for x in g.manifest_files if x.manifest_length < plan.target_size_bytes) >= policy.min_small_manifests]
    if wanted:
        text = "; ".join(f"{g.manifests} {g.content} manifests ({human_size(g.bytes)}) would become {g.target_manifests}"
                         for g in wanted)
        out.append(_finding(policy, "manifests", "rewrite-manifests", "warning",
                            f"{m.small_manifests} manifests are under the target size {human_size(m.manifest_target_size)}: {text}",
                            ["rewrite-manifests", table.name, "--yes"]))


def _check_snapshots(table: Table, policy: Policy, m: Metrics, out: list[Finding], *, now_ms: int) -> None:
    md = table.metadata
    m.snapshots = len(md.snapshots)
    oldest = min(md.snapshot_values("timestamp_ms")) if md.snapshots else None
    m.oldest_snapshot_age_ms = now_ms - oldest if oldest is not None else None
    replaced = [s.timestamp_ms for s in md.snapshots if s.summary.get("operation") == "replace"]
    if oldest is not None:
        m.maintenance_age_ms = now_ms - (max(replaced) if replaced else oldest)
    m.max_snapshot_age_ms = MAX_SNAPSHOT_AGE_MS.read(md.properties)
    m.metadata_log_entries = len(md.metadata_log)
    m.previous_versions_max = METADATA_PREVIOUS_VERSIONS_MAX.read(md.properties)
    try:
        m.metadata_size = table.io.size(table.metadata_location)
    except (IcectlError, OSError):
        m.metadata_size = None
    # Metadata only: which snapshots and refs expire does not depend on the files. expire's own
    # retention rules, without building the metadata its commit would write (the snapshots and
    # refs they drop are what would change: health's expiry cleans no schema or spec).
    _, retained, kept_refs, *_ = expiry_updates(table, ExpireOptions(now_ms=now_ms, delete_files=False))
    m.expirable_snapshots = sum(1 for sid in md.snapshot_values("snapshot_id") if sid not in retained)
    removed_refs = sorted(n for n in md.refs if n not in kept_refs)
    if not (m.expirable_snapshots or removed_refs):
        return
    gc_off = not GC_ENABLED.read(md.properties)
    big = m.metadata_size is not None and m.metadata_size >= policy.metadata_size_critical
    sev = "critical" if m.expirable_snapshots >= policy.snapshots_critical or big else "warning"
    what = f"{m.expirable_snapshots} of {m.snapshots} snapshots are past the retention " \
           f"of {human_duration(m.max_snapshot_age_ms)} ({MAX_SNAPSHOT_AGE_MS.name})"
    if removed_refs:
        what += f"; refs past their max-ref-age: {', '.join(removed_refs)}"
    if m.metadata_size is not None:
        what += f"; metadata.json is {human_size(m.metadata_size)}"
    clean = policy.expire_clean_expired_metadata
    command = ["expire", table.name] + (["--no-delete-files"] if gc_off else []) + \
        (["--clean-expired-metadata"] if clean else []) + ["--yes"]
    out.append(_finding(policy, "snapshots", "expire", sev, what, command,
                        {"delete_files": not gc_off, "clean_expired_metadata": clean}))


def _check_statistics(table: Table, policy: Policy, m: Metrics, out: list[Finding], *, now_ms: int) -> None:
    md = table.metadata
    m.statistics_files = len(md.statistics)
    if not md.statistics or md.current_snapshot_id is None:
        return
    history = md.ancestor_ids(md.current_snapshot_id)  # newest first
    with_stats = {s.snapshot_id for s in md.statistics}
    behind = next((i for i, sid in enumerate(history) if sid in with_stats), None)
    if behind is None:
        return
    m.statistics_snapshots_behind = behind
    snap = md.snapshot_by_id(history[behind])
    m.statistics_age_ms = now_ms - snap.timestamp_ms if snap else None
    if behind >= policy.statistics_behind:
        # Not a maintain step: statistics are for query planning, and computing them is a Spark job.
        out.append(Finding("statistics", "info", f"the table statistics are {behind} snapshots behind the current "
                           "snapshot", None, ["compute-stats", table.name, "--yes"]))


def _check_orphans(table: Table, policy: Policy, m: Metrics, out: list[Finding], *, now_ms: int) -> None:
    age = parse_duration_ms(policy.orphans_older_than, what="orphans-older-than")
    plan = plan_orphans(table, older_than_ms=now_ms - age, now_ms=now_ms)
    m.orphan_files = len(plan.orphans)
    m.orphan_bytes = sum(f.size for f in plan.orphans)
    if plan.orphans:
        extra = [] if age == DEFAULT_OLDER_THAN_MS else ["--older-than", policy.orphans_older_than]
        if age < DEFAULT_OLDER_THAN_MS:
            extra.append("--force")
        options: dict[str, Any] = {"older_than_ms": age}
        if policy.orphans_quarantine:  # moved to the quarantine folder, not deleted
            extra += ["--quarantine", policy.orphans_quarantine]
            options["quarantine"] = policy.orphans_quarantine
        out.append(_finding(policy, "orphans", "remove-orphans", "warning",
                            f"{m.orphan_files} files ({human_size(m.orphan_bytes)}) under the table location older than "
                            f"{policy.orphans_older_than} are reachable from no snapshot or metadata file",
                            ["remove-orphans", table.name] + extra + ["--yes"], options))


CHECKS = ("files", "manifests", "snapshots", "statistics", "orphans")
STEP_CHECK = {"rewrite-deletes": "files", "compact": "files", "rewrite-manifests": "manifests",
              "expire": "snapshots", "remove-orphans": "orphans"}


def check_table(table: Table, policy: Policy, *, now_ms: int | None = None, orphans: bool = False,
                checks: tuple[str, ...] = CHECKS) -> TableHealth:
    """Measure one table and say which steps would improve it (``checks``: a part of the
    measurements, for ``maintain`` to look again before each step; ``orphans``: list the table
    location, the one measurement that is not metadata)."""
    start = time.monotonic()
    now = now_ms if now_ms is not None else int(time.time() * 1000)
    m = Metrics()
    findings: list[Finding] = []
    with table.manifest_lists_kept():  # each check reads the head's manifest list: once in all
        if "files" in checks:
            _check_files(table, policy, m, findings)
        if "manifests" in checks:
            _check_manifests(table, policy, m, findings)
        if "snapshots" in checks:
            _check_snapshots(table, policy, m, findings, now_ms=now)
        if "statistics" in checks:
            _check_statistics(table, policy, m, findings, now_ms=now)
        if orphans and "orphans" in checks:
            _check_orphans(table, policy, m, findings, now_ms=now)
    return TableHealth(table.name, table.metadata_location, table.metadata.format_version, _status(findings), m,
                       findings, seconds=round(time.monotonic() - start, 3))


def failed_table(name: str, error: IcectlError) -> TableHealth:
    return TableHealth(name, None, None, "error", None, [], error=error.message, error_exit_code=int(error.exit_code))


@dataclass
class HealthRun:
    tables: list[TableHealth]

    @property
    def worst(self) -> str:
        if any(t.status == "error" for t in self.tables):
            return "error"
        w = worst([t.status for t in self.tables])
        return w or "healthy"


def check_tables(catalog: Any, identifiers: list[tuple[str, ...]], policies: PolicyFile, *,
                 now_ms: int | None = None, orphans: bool = False, progress: Any = None,
                 on_table: Any = None) -> HealthRun:
    """Measure every table; a table that cannot be read is reported (status ``error``), the others
    are still measured. ``on_table(health)`` is called as each table's measure is done."""
    out = []
    for ident in identifiers:
        name = ".".join(ident)
        if progress:
            progress(f"{name}: checking")
        try:
            table = load_table(catalog, ident)
            out.append(check_table(table, policies.policy_for(name, table.metadata.properties), now_ms=now_ms,
                                   orphans=orphans))
        except IcectlError as e:
            out.append(failed_table(name, e))
        if progress:
            progress(f"{name}: {out[-1].status}")
        if on_table:
            on_table(out[-1])
    return HealthRun(out)


__all__ = ["Finding", "HealthRun", "Metrics", "SEVERITIES", "TableHealth", "check_table", "check_tables",
           "worst"]
