"""Policy-driven maintenance of many tables: for each table, the steps its health calls for, in a
safe order, within a time budget, under a lock per table.

For each table: its policy (:mod:`icectl.ops.maintain.policy`); its health
(:func:`icectl.ops.maintain.health.check_table`, with the location listed when ``remove-orphans`` is in the
policy); nothing more when no step is called for: a healthy table is not locked and nothing is
written, so a second run does nothing. Otherwise, under the table's lock
(:mod:`icectl.ops.maintain.table_lock`), each step of :data:`~icectl.ops.maintain.policy.STEPS` in order is
measured again on the table as the previous steps left it, and run when its check still calls for
it, with the options of that check's finding (the same planners, so a step never runs for
nothing). A failed step fails the table; its later steps still run (each plans and commits on its
own), except after a commit whose outcome is unknown. No step starts once the budget is spent (a
running step is never interrupted: a Spark job or a commit cut short helps nobody); the steps and
tables left are reported as skipped (and named in ``left_for_next_run``). Last, the table's health
is measured again.

With ``rank`` (``maintain --all``), every table is measured first and the tables are maintained in
the order of their need score (:mod:`icectl.ops.maintain.fleet`), worst first, so a budget that runs
out leaves the tables that need maintenance least.

Test seam: ``MaintainOptions.clock`` is the monotonic clock (seconds) the budget and the step
durations are measured with; a test gives a fake one (advanced, e.g., from the ``progress`` callback
when a step is done) to make the budget deterministic without sleeping.

A step that needs an engine icectl does not carry (compact: Spark) is checked before any table is
touched: when the engine is missing, a policy that enables the step is a configuration error
(nothing is committed), unless the policy lists the step as ``optional``; then the step is reported
as ``unavailable`` where health calls for it, and the table's other steps run.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from icectl.errors import CommitStateUnknownError, IcectlError, UsageError
from icectl.ops.maintain.fleet import ranked
from icectl.ops.maintain.health import STEP_CHECK, Finding, Metrics, TableHealth, check_table, failed_table
from icectl.ops.maintain.policy import STEPS, Policy, PolicyFile
from icectl.table.loaded import Table, load_table
from icectl.ops.maintain.compact import CompactOptions, plan_compaction, run_compaction
from icectl.ops.maintain.expire import ExpireOptions, apply_expiry, FileToDelete, delete_files
from icectl.ops.maintain.expire_pending import FinishedPending, finish_pending, progress_lines, read_pending
from icectl.ops.maintain.quarantine import apply_quarantine, plan_quarantine, quarantine_root
from icectl.ops.maintain.remove_orphans import plan_orphans
from icectl.ops.maintain.rewrite_deletes import plan_delete_rewrite, run_delete_rewrite
from icectl.ops.maintain.rewrite_manifests import apply_rewrite_manifests, plan_rewrite_manifests
from icectl.ops.maintain.table_lock import DEFAULT_LEASE_MS, TableLock
from icectl.ops.spark_job import JobSettings, missing_engine

# The steps that run an engine icectl does not carry, and the check that finds it missing.
ENGINE_STEPS: dict[str, Callable[["MaintainOptions"], str | None]] = {
    "compact": lambda opts: missing_engine(opts.job_settings or JobSettings()),
}

Progress = Callable[[str], None]


@dataclass
class StepRun:
    step: str
    command: list[str]  # icectl's arguments that do the same
    status: str  # planned | done | failed | skipped | unavailable (optional, its engine missing)
    reason: str  # the finding that called for it
    seconds: float = 0.0
    summary: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    commits: list[dict] = field(default_factory=list)


@dataclass
class TableRun:
    table: str
    status: str  # healthy | planned | done | failed | locked | skipped | disabled | unavailable
    health_before: str | None  # healthy | warning | critical | error
    health_after: str | None
    steps: list[StepRun] = field(default_factory=list)
    error: str | None = None
    locked_by: str | None = None
    seconds: float = 0.0
    metrics: Metrics | None = field(default=None, repr=False)  # the latest measurement (after, else before)


@dataclass
class MaintainRun:
    dry_run: bool
    budget_seconds: float | None
    tables: list[TableRun] = field(default_factory=list)
    seconds: float = 0.0
    budget_exhausted: bool = False
    left_for_next_run: list[str] = field(default_factory=list)  # tables the budget left (some or all steps)

    @property
    def failed(self) -> list[str]:
        return [t.table for t in self.tables if t.status == "failed"]

    @property
    def not_maintained(self) -> list[str]:
        """The tables skipped: locked by another run, or left when the time budget was spent."""
        return [t.table for t in self.tables if t.status in ("locked", "skipped")]

    @property
    def applied(self) -> bool:
        return any(s.status == "done" for t in self.tables for s in t.steps)


@dataclass
class MaintainOptions:
    dry_run: bool = False
    budget_ms: int | None = None
    job_settings: Any = None  # icectl.ops.spark_job.JobSettings for compact
    lease_ms: int | None = None
    rank: bool = False  # measure every table first, maintain the worst first (icectl.ops.maintain.fleet)
    clock: Callable[[], float] = time.monotonic  # the test seam of the module docstring


class _Clock:
    def __init__(self, budget_ms: int | None, now: Callable[[], float] = time.monotonic):
        self.now = now
        self.start = now()
        self.budget_ms = budget_ms

    @property
    def elapsed_ms(self) -> int:
        return int((self.now() - self.start) * 1000)

    @property
    def spent(self) -> bool:
        return self.budget_ms is not None and self.elapsed_ms >= self.budget_ms

    def lease_ms(self) -> int:
        if self.budget_ms is None:
            return DEFAULT_LEASE_MS
        return max(self.budget_ms - self.elapsed_ms, 0) + 3_600_000


def _orphans_on(policy: Policy) -> bool:
    return policy.step_enabled("remove-orphans")


# -- the steps --------------------------------------------------------------------------------------------

def _run_step(table: Table, step: str, finding: Finding, *, opts: MaintainOptions, now_ms: int,
              progress: Progress | None) -> tuple[dict[str, int], list[dict]]:
    """Run one step with its finding's options; (counts, commits sent)."""
    if step == "rewrite-deletes":
        run = run_delete_rewrite(table, plan_delete_rewrite(table))
        return dict(run.counts), list(run.commits)
    if step == "compact":
        plan = plan_compaction(table, CompactOptions(**finding.options))
        r = run_compaction(table, plan, opts.job_settings or JobSettings(), progress=progress)
        return ({"rewritten_data_files": r.rewritten_data_files, "added_data_files": r.added_data_files,
                 "removed_delete_files": r.removed_delete_files, "rewritten_bytes": r.rewritten_bytes,
                 "added_bytes": r.added_bytes}, list(r.sent))
    if step == "rewrite-manifests":
        plan = plan_rewrite_manifests(table)
        res = apply_rewrite_manifests(table, plan)
        return ({"rewritten_manifests": len(plan.rewritten), "added_manifests": len(res.added_manifests)},
                [res.committed.sent_json()] if res.committed else [])
    if step == "expire":
        delete = finding.options.get("delete_files", True)
        lines = progress_lines(lambda m: progress(f"expire: {m}")) if progress else None
        pending = read_pending(table) if delete else None
        finished = finish_pending(table, pending, progress=lines,
                                  delete=lambda fs: delete_files(table.io, fs, location=table.location)) if pending \
            else FinishedPending()
        res = apply_expiry(table, ExpireOptions(now_ms=now_ms, delete_files=delete,
                                                clean_expired_metadata=finding.options.get("clean_expired_metadata",
                                                                                           False)),
                           progress=lines)
        res.deleted, res.failed = finished.deleted + res.deleted, finished.failed + res.failed
        if res.failed:
            raise _PartialError(f"expired {len(res.plan.expired_snapshot_ids)} snapshots but {len(res.failed)} files "
                                f"could not be deleted (e.g. {res.failed[0][0]}: {res.failed[0][1]})",
                                {"expired_snapshots": len(res.plan.expired_snapshot_ids),
                                 "deleted_files": len(res.deleted), "failed_deletes": len(res.failed)},
                                [res.committed.sent_json()] if res.committed else [])
        return ({"expired_snapshots": len(res.plan.expired_snapshot_ids), "removed_refs": len(res.plan.removed_refs),
                 "deleted_files": len(res.deleted)}, [res.committed.sent_json()] if res.committed else [])
    if step == "remove-orphans":
        cutoff = now_ms - finding.options["older_than_ms"]
        plan = plan_orphans(table, older_than_ms=cutoff, now_ms=now_ms)
        # Again right before deleting, as remove-orphans does: a commit since may reach a file.
        fresh = {f.path for f in plan_orphans(table.refresh(), older_than_ms=cutoff, now_ms=now_ms).orphans}
        if finding.options.get("quarantine"):  # moved, with a manifest, not deleted
            planned = plan_quarantine(table, [f for f in plan.orphans if f.path in fresh],
                                      quarantine_root(table, finding.options["quarantine"]), now_ms=now_ms)
            moved = apply_quarantine(table, planned)
            counts = {"quarantined_files": len(moved.files), "quarantined_bytes": sum(e.size for e in moved.files),
                      "failed_moves": len(moved.failed)}
            if moved.failed:
                raise _PartialError(f"{len(moved.failed)} orphan files could not be moved to quarantine (e.g. "
                                    f"{moved.failed[0][0]}: {moved.failed[0][1]})", counts, [])
            return counts, []
        files = [FileToDelete(f.path, "orphan", f.size) for f in plan.orphans if f.path in fresh]
        deleted, failed = delete_files(table.io, files, location=table.metadata.location)
        counts = {"deleted_files": len(deleted), "deleted_bytes": sum(f.size or 0 for f in deleted),
                  "failed_deletes": len(failed)}
        if plan.skipped_for_safety:  # links and what the path guard refused: listed by remove-orphans --dry-run
            counts["skipped_for_safety"] = len(plan.skipped_for_safety)
        if failed:
            raise _PartialError(f"{len(failed)} orphan files could not be deleted (e.g. {failed[0][0]}: "
                                f"{failed[0][1]})", counts, [])
        return counts, []
    raise ValueError(step)


class _PartialError(IcectlError):
    """A step that committed, then could not delete everything."""

    def __init__(self, message: str, counts: dict[str, int], commits: list[dict]):
        super().__init__(message)
        self.counts, self.commits = counts, commits


def _maintain_table(table: Table, policy: Policy, health: TableHealth, run: TableRun, *, opts: MaintainOptions,
                    clock: _Clock, lock: Any, progress: Progress | None, missing: dict[str, str]) -> None:
    say = (lambda m: progress(f"{table.name}: {m}")) if progress else (lambda m: None)
    for i, step in enumerate(STEPS):
        if not policy.step_enabled(step):
            continue
        if step in missing:
            if step in health.steps:
                run.steps.append(StepRun(step, [], "unavailable", f"optional, and {missing[step]}"))
                say(f"{step}: unavailable: {missing[step]}")
            continue
        if clock.spent:
            run.steps += [StepRun(s, [], "skipped", "the time budget is spent") for s in STEPS[i:]
                          if policy.step_enabled(s) and s in health.steps]
            return
        if not lock.renew(opts.lease_ms or clock.lease_ms()):
            raise IcectlError(f"the maintenance lock of {table.name} was taken by another run (it expired); "
                              "stopping", hint="give maintain a --budget longer than its steps take")
        table = table.refresh()
        now = int(time.time() * 1000)
        h = check_table(table, policy, now_ms=now, orphans=step == "remove-orphans", checks=(STEP_CHECK[step],))
        finding = h.finding_for(step)
        if finding is None:
            continue
        say(f"{step}: {finding.message}")
        sr = StepRun(step, finding.command or [], "done", finding.message)
        run.steps.append(sr)
        start = clock.now()
        try:
            sr.summary, sr.commits = _run_step(table, step, finding, opts=opts, now_ms=now, progress=say)
        except _PartialError as e:
            sr.status, sr.error, sr.summary, sr.commits = "failed", e.message, e.counts, e.commits
        except IcectlError as e:
            sr.status, sr.error = "failed", e.message
            if isinstance(e, CommitStateUnknownError):
                sr.seconds = round(clock.now() - start, 3)
                return
        finally:
            sr.seconds = round(clock.now() - start, 3)
        say(f"{step}: {sr.status}" + (f": {sr.error}" if sr.error else ""))


def _missing_engines(catalog: Any, identifiers: list[tuple[str, ...]], policies: PolicyFile,
                     opts: MaintainOptions) -> dict[str, str]:
    """{step: why its engine cannot run} for the engine steps; a UsageError when a table's policy
    enables such a step without marking it optional (before any table is touched)."""
    missing = {step: why for step, check in ENGINE_STEPS.items() if (why := check(opts)) is not None}
    if not missing:
        return missing
    required: dict[str, list[str]] = {}
    for ident in identifiers:
        name = ".".join(ident)
        try:
            policy = policies.policy_for(name, load_table(catalog, ident).metadata.properties)
        except IcectlError:
            continue  # the run reports it, table by table
        for step in missing:
            if policy.step_enabled(step) and step not in policy.optional:
                required.setdefault(step, []).append(name)
    for step, names in required.items():
        raise UsageError(f"the maintenance policy of {len(names)} tables ({', '.join(names[:5])}) runs {step}, "
                         f"but {missing[step]}; nothing was changed",
                         hint=f"install the engine, or list the step in the policy's optional (optional: [{step}]: "
                              f"skipped where its engine is missing) or remove it from steps")
    return missing


def maintain(catalog: Any, identifiers: list[tuple[str, ...]], policies: PolicyFile, *, opts: MaintainOptions,
             progress: Progress | None = None, on_table: Callable[[TableRun], None] | None = None) -> MaintainRun:
    """Maintain every table; a table that fails is reported and the others are still maintained.
    ``on_table(run)`` is called as each table is done."""
    missing = _missing_engines(catalog, identifiers, policies, opts)
    clock = _Clock(opts.budget_ms, opts.clock)
    out = MaintainRun(opts.dry_run, opts.budget_ms / 1000 if opts.budget_ms is not None else None)
    measured: dict[str, TableHealth] = {}
    if opts.rank:
        identifiers, measured = _rank(catalog, identifiers, policies, progress)
    for ident in identifiers:
        name = ".".join(ident)
        run = TableRun(name, "healthy", None, None)
        out.tables.append(run)
        if clock.spent:
            run.status, out.budget_exhausted = "skipped", True
            known = measured.get(name)
            if known is not None:  # measured for the ranking
                run.health_before, run.metrics = known.status, known.metrics
            if known is None or known.steps:  # not when the ranking's measurement found nothing to do
                out.left_for_next_run.append(name)
            if on_table:
                on_table(run)
            continue
        start = clock.now()
        try:
            table = load_table(catalog, ident)
            policy = policies.policy_for(name, table.metadata.properties)
            if not policy.enabled:
                run.status = "disabled"
                continue
            health = measured.pop(name, None)
            if health is None:
                if progress:
                    progress(f"{name}: checking")
                health = check_table(table, policy, orphans=_orphans_on(policy))
            run.health_before, run.metrics = health.status, health.metrics
            if not health.steps:
                run.health_after = health.status
                continue
            if all(step in missing for step in health.steps):  # nothing it can do here: not locked
                run.status, run.health_after = "unavailable", health.status
                run.steps = [StepRun(step, [], "unavailable", f"optional, and {missing[step]}") for step in health.steps]
                continue
            if opts.dry_run:
                run.status = "planned"
                for step in health.steps:
                    f = health.finding_for(step)
                    run.steps.append(StepRun(step, f.command or [], "planned", f.message) if step not in missing
                                     else StepRun(step, [], "unavailable", f"optional, and {missing[step]}"))
                continue
            lock = TableLock(table, lease_ms=opts.lease_ms or clock.lease_ms())
            if not lock.acquire():
                run.status = "locked"
                run.locked_by = lock.holder.owner if lock.holder else None
                if progress:
                    progress(f"{name}: locked by {run.locked_by}: skipped")
                continue
            try:
                _maintain_table(table, policy, health, run, opts=opts, clock=clock, lock=lock, progress=progress,
                                missing=missing)
            finally:
                lock.release()
            if any(s.status == "skipped" for s in run.steps):
                out.budget_exhausted = True
                out.left_for_next_run.append(name)
            after = check_table(table.refresh(), policy, orphans=_orphans_on(policy))
            run.health_after, run.metrics = after.status, after.metrics
            run.status = "failed" if any(s.status == "failed" for s in run.steps) else \
                "skipped" if any(s.status == "skipped" for s in run.steps) else "done"
        except IcectlError as e:
            run.status, run.error = "failed", e.message
        finally:
            run.seconds = round(clock.now() - start, 3)
            if progress and run.status not in ("healthy", "planned"):
                progress(f"{name}: {run.status}" + (f": {run.error}" if run.error else ""))
            if on_table:
                on_table(run)
    out.seconds = round(clock.elapsed_ms / 1000, 3)
    return out


def _rank(catalog: Any, identifiers: list[tuple[str, ...]], policies: PolicyFile,
          progress: Progress | None) -> tuple[list[tuple[str, ...]], dict[str, TableHealth]]:
    """Measure every table (as maintain does before its steps) and order them by need, worst first; a
    table that cannot be read or whose maintenance is disabled keeps no score (ranked last)."""
    by_name = {".".join(i): i for i in identifiers}
    healths: list[TableHealth] = []
    for name, ident in by_name.items():
        if progress:
            progress(f"{name}: checking")
        try:
            table = load_table(catalog, ident)
            policy = policies.policy_for(name, table.metadata.properties)
            if not policy.enabled:
                healths.append(TableHealth(name, None, None, "disabled", None, []))
                continue
            healths.append(check_table(table, policy, orphans=_orphans_on(policy)))
        except IcectlError as e:
            healths.append(failed_table(name, e))
    order = ranked(healths)
    return [by_name[h.table] for h in order], {h.table: h for h in order if h.metrics is not None}


__all__ = ["ENGINE_STEPS", "MaintainOptions", "MaintainRun", "StepRun", "TableRun", "maintain"]
