"""What ``health`` and ``maintain`` print."""
from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from icectl.cli.context import Env
from icectl.cli.output import fmt_bytes, fmt_duration_ms, print_table, say, text_renderer, warn
from icectl.errors import ExitCode
from icectl.ops.maintain.fleet import need_score, ranked as rank_tables

if TYPE_CHECKING:
    from icectl.ops.maintain.health import HealthRun, Metrics, TableHealth
    from icectl.ops.maintain.maintain import MaintainRun, TableRun


def command_text(prefix: str, args: list[str] | None) -> str | None:
    return f"{prefix} {shlex.join(args)}" if args else None


@dataclass
class FindingView:
    check: str
    severity: str
    message: str
    step: str | None
    command: str | None  # the exact command that fixes it (null: no icectl step does)


@dataclass
class TableHealthView:
    table: str
    metadata_location: str | None
    format_version: int | None
    status: str
    metrics: Metrics | None
    findings: list[FindingView]
    steps: list[str]
    error: str | None
    seconds: float
    rank: int | None  # 1: the table most in need (icectl.ops.maintain.fleet); null in a -o jsonl line
    score: float | None  # the need score the rank comes from (null: not measured)


@dataclass
class HealthReport:
    """``worst``: healthy, warning, critical or error; ``exit_code`` is the command's. ``ranked``:
    the tables are listed by rank (--all), not in the order they were named."""

    tables: list[TableHealthView]
    worst: str
    exit_code: int
    counts: dict[str, int]
    catalog: str | None = None  # which catalog, from where (null: only table locations were measured)
    ranked: bool = False


@dataclass
class HealthSummary:
    """The last line of ``health -o jsonl``: the report without its tables (each was a line)."""

    summary: bool  # always true: the line that is not a table's
    command: str
    tables: int
    worst: str
    exit_code: int
    counts: dict[str, int]
    catalog: str | None


def table_health_view(t: TableHealth, *, prefix: str, rank: int | None = None) -> TableHealthView:
    return TableHealthView(t.table, t.metadata_location, t.format_version, t.status, t.metrics,
                           [FindingView(f.check, f.severity, f.message, f.step, command_text(prefix, f.command))
                            for f in t.findings], t.steps, t.error, t.seconds, rank, need_score(t))


def health_summary(r: HealthReport) -> HealthSummary:
    return HealthSummary(True, "health", len(r.tables), r.worst, r.exit_code, r.counts, r.catalog)


def health_report(run: HealthRun, *, prefix: str, catalog: str | None = None, ranked: bool = False) -> HealthReport:
    rank = {t.table: i for i, t in enumerate(rank_tables(run.tables), 1)}
    tables = rank_tables(run.tables) if ranked else run.tables
    views = [table_health_view(t, prefix=prefix, rank=rank[t.table]) for t in tables]
    code = {"healthy": ExitCode.OK, "warning": ExitCode.HEALTH_WARNING}.get(run.worst, ExitCode.HEALTH_CRITICAL)
    counts: dict[str, int] = {}
    for t in run.tables:
        counts[t.status] = counts.get(t.status, 0) + 1
    return HealthReport(views, run.worst, int(code), counts, catalog=catalog, ranked=ranked)


_MARK = {"info": ("info", None), "warning": ("warning", "yellow"), "critical": ("CRITICAL", "red")}
_STATUS_STYLE = {"healthy": "green", "warning": "yellow", "critical": "red", "error": "red"}


def _metrics_line(m: Metrics) -> str:
    parts = [f"{m.data_files} data files ({fmt_bytes(m.data_bytes)}, {m.small_files} small)",
             f"{m.delete_files} delete files", f"{m.manifests} manifests ({m.small_manifests} small)",
             f"{m.snapshots} snapshots ({m.expirable_snapshots} expirable)"]
    if m.metadata_size is not None:
        parts.append(f"metadata.json {fmt_bytes(m.metadata_size)}")
    if m.orphan_files is not None:
        parts.append(f"{m.orphan_files} orphan files")
    return ", ".join(parts)


@text_renderer(HealthReport)
def _health_text(env: Env, r: HealthReport) -> None:
    for t in r.tables:
        need = f" (rank {t.rank}, need {t.score})" if r.ranked and t.score is not None else \
            f" (rank {t.rank})" if r.ranked else ""
        say(env, (f"{t.table}: {t.status}{need}", _STATUS_STYLE.get(t.status)))
        if t.error:
            warn(env, f"{t.table}: cannot be measured: {t.error}")
            continue
        if t.metrics is not None:
            say(env, f"  {_metrics_line(t.metrics)}")
        for f in t.findings:
            label, style = _MARK[f.severity]
            say(env, (f"  [{label}] {f.check}: {f.message}", style))
            if f.command:
                say(env, f"      fix: {f.command}")
    summary = ", ".join(f"{n} {s}" for s, n in sorted(r.counts.items()))
    say(env, f"{len(r.tables)} tables: {summary}" if r.tables else "no tables")
    if r.catalog:
        say(env, f"catalog {r.catalog}")


# -- maintain -------------------------------------------------------------------------------------------

@dataclass
class StepView:
    step: str
    command: str | None
    status: str
    reason: str
    seconds: float
    summary: dict[str, int]
    error: str | None
    commits: list[dict]


@dataclass
class TableRunView:
    table: str
    status: str
    health_before: str | None
    health_after: str | None
    steps: list[StepView]
    locked_by: str | None
    error: str | None
    seconds: float


@dataclass
class MaintainReport:
    dry_run: bool
    applied: bool
    budget_seconds: float | None
    budget_exhausted: bool
    seconds: float
    tables: list[TableRunView]
    failed: list[str]
    commits: list[dict] = field(default_factory=list)
    left_for_next_run: list[str] = field(default_factory=list)  # tables the budget left that need steps
    not_maintained: list[str] = field(default_factory=list)  # locked by another run, or left by the budget
    catalog: str | None = None  # which catalog, from where


@dataclass
class MaintainSummary:
    """The last line of ``maintain -o jsonl``: the report without its tables (each was a line) and
    commits, with the run's exit code."""

    summary: bool  # always true: the line that is not a table's
    command: str
    dry_run: bool
    applied: bool
    budget_seconds: float | None
    budget_exhausted: bool
    seconds: float
    tables: int
    counts: dict[str, int]
    failed: list[str]
    not_maintained: list[str]
    exit_code: int
    catalog: str | None


def table_run_view(t: TableRun, *, prefix: str) -> TableRunView:
    return TableRunView(t.table, t.status, t.health_before, t.health_after,
                        [StepView(s.step, command_text(prefix, s.command), s.status, s.reason, s.seconds,
                                  s.summary, s.error, s.commits) for s in t.steps],
                        t.locked_by, t.error, t.seconds)


def maintain_exit_code(r: MaintainReport) -> int:
    if r.failed:
        return int(ExitCode.MAINTENANCE_FAILED)
    return int(ExitCode.NOT_ALL_MAINTAINED) if r.not_maintained and not r.dry_run else int(ExitCode.OK)


def maintain_summary(r: MaintainReport) -> MaintainSummary:
    counts: dict[str, int] = {}
    for t in r.tables:
        counts[t.status] = counts.get(t.status, 0) + 1
    return MaintainSummary(True, "maintain", r.dry_run, r.applied, r.budget_seconds, r.budget_exhausted, r.seconds,
                           len(r.tables), counts, r.failed, r.not_maintained, maintain_exit_code(r), r.catalog)


def maintain_report(run: MaintainRun, *, prefix: str, catalog: str | None = None) -> MaintainReport:
    tables = [table_run_view(t, prefix=prefix) for t in run.tables]
    commits = [c for t in run.tables for s in t.steps for c in s.commits]
    return MaintainReport(run.dry_run, run.applied, run.budget_seconds, run.budget_exhausted, run.seconds, tables,
                          run.failed, commits, list(run.left_for_next_run), run.not_maintained, catalog)


@text_renderer(MaintainReport)
def _maintain_text(env: Env, r: MaintainReport) -> None:
    if r.dry_run or not r.applied and any(t.status == "planned" for t in r.tables):
        say(env, "maintenance plan" + (" (dry run: nothing changed)" if r.dry_run else ""))
    for t in r.tables:
        extra = f" (locked by {t.locked_by})" if t.locked_by else ""
        if t.health_before and t.health_after and t.health_before != t.health_after:
            extra += f" (health {t.health_before} -> {t.health_after})"
        elif t.health_before and t.status not in ("planned", "healthy"):
            extra += f" (health {t.health_before})"
        say(env, (f"{t.table}: {t.status}{extra}", _STATUS_STYLE.get(t.status)))
        if t.error:
            warn(env, f"{t.table}: {t.error}")
        for s in t.steps:
            done = ", ".join(f"{k} {v}" for k, v in s.summary.items() if v)
            say(env, f"  {s.step}: {s.status}" + (f" in {fmt_duration_ms(int(s.seconds * 1000))}" if s.seconds else "")
                + (f" ({done})" if done else ""))
            if s.status in ("planned", "skipped", "unavailable"):
                say(env, f"      why: {s.reason}")
            if s.command and s.status == "planned":
                say(env, f"      as: {s.command}")
            if s.error:
                warn(env, f"{t.table}: {s.step} failed: {s.error}")
    if r.tables:
        rows: dict[str, int] = {}
        for t in r.tables:
            rows[t.status] = rows.get(t.status, 0) + 1
        print_table(env, ["status", "tables"], [[k, str(v)] for k, v in sorted(rows.items())], right={"tables"},
                    title=f"{len(r.tables)} tables in {fmt_duration_ms(int(r.seconds * 1000))}"
                    + (" (budget spent)" if r.budget_exhausted else ""))
        if r.left_for_next_run:
            say(env, f"left for the next run: {', '.join(r.left_for_next_run)}")
    else:
        say(env, "no tables")
    if r.not_maintained:
        warn(env, f"not maintained (the next run takes them): {', '.join(r.not_maintained)}")
    if r.catalog:
        say(env, f"catalog {r.catalog}")
