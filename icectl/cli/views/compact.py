"""What ``compact`` prints: its plan, and the result of a run."""
from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from icectl.cli.context import Env
from icectl.cli.output import fmt_bytes, print_table, say, say_verbatim, text_renderer, warn

if TYPE_CHECKING:
    from icectl.ops.maintain.compact import CompactionPlan
    from icectl.ops.maintain.compact import CompactionResult


@dataclass
class GroupPlan:
    group_id: int
    partition: str
    files: int
    bytes: int
    records: int
    delete_files: int
    expected_output_files: int


@dataclass
class CompactionPlanView:
    """What ``compact`` would rewrite: the file groups, and with --dry-run the spark-submit
    command (``spark_submit``; null otherwise). ``applied`` is always false: the result of a run
    is a :class:`CompactionOutcome`."""

    table: str
    branch: str
    starting_snapshot_id: int | None
    target_file_size: int
    min_file_size: int
    max_file_size: int
    live_data_files: int
    input_files: int
    input_bytes: int
    groups: list[GroupPlan]
    spark_submit: list[str] | None
    dry_run: bool
    applied: bool
    # The commit it will send once the job wrote the files (its snapshot null until then).
    commits: list[dict] = field(default_factory=list)
    # With --dry-run --keep-plan DIR: the plan file written there, which the command reads (not
    # part of the JSON, whose spark_submit names it)
    plan_file: str | None = field(default=None, repr=False)


def compaction_plan(plan: CompactionPlan, argv: list[str] | None, *, dry_run: bool,
                    plan_file: str | None = None) -> CompactionPlanView:
    return CompactionPlanView(
        table=plan.table, branch=plan.branch, starting_snapshot_id=plan.starting_snapshot_id,
        target_file_size=plan.target_file_size, min_file_size=plan.min_file_size, max_file_size=plan.max_file_size,
        live_data_files=plan.total_files, input_files=plan.input_files, input_bytes=plan.input_bytes,
        groups=[GroupPlan(g.group_id, g.partition_display, len(g.tasks), g.input_bytes, g.input_records,
                          g.delete_files, g.expected_outputs) for g in plan.groups],
        spark_submit=argv, dry_run=dry_run, applied=False, commits=[plan.planned_commit] if plan.groups else [],
        plan_file=plan_file)


@text_renderer(CompactionPlanView)
def _plan_text(env: Env, p: CompactionPlanView) -> None:
    say(env, f"{p.table} ({p.branch}): {p.input_files} of {p.live_data_files} live data files in {len(p.groups)} "
             f"groups, {fmt_bytes(p.input_bytes)}; target {fmt_bytes(p.target_file_size)}"
             + (" (dry run: nothing rewritten)" if p.dry_run else ""))
    if p.groups:
        cols = ["group", "partition", "files", "bytes", "records", "delete files", "expected outputs"]
        print_table(env, cols, [[str(g.group_id), g.partition, str(g.files), fmt_bytes(g.bytes), f"{g.records:,}",
                                 str(g.delete_files), str(g.expected_output_files)] for g in p.groups],
                    right=set(cols) - {"partition"})
    else:
        say(env, "nothing to compact")
    if p.spark_submit is not None:
        say(env, "spark-submit command" + (f" (it reads the plan kept in {p.plan_file}):" if p.plan_file else
                                           " (--keep-plan DIR writes the plan it reads):"))
        say_verbatim(env, shlex.join(p.spark_submit))  # one line that pastes into a shell, whatever the width


@dataclass
class FailedGroup:
    group_id: int
    error: str


@dataclass
class CompactionOutcome:
    """What a ``compact`` run committed: ``committed`` lists the metadata files (one per commit;
    several with --partial-progress), ``failed_groups`` the groups that were not committed."""

    table: str
    dry_run: bool
    applied: bool
    committed: list[str]
    rewritten_data_files: int
    added_data_files: int
    removed_delete_files: int
    rewritten_bytes: int
    added_bytes: int
    failed_groups: list[FailedGroup]
    log_file: str | None
    commits: list[dict] = field(default_factory=list)  # each commit sent: requirements and updates


def compaction_result(r: CompactionResult) -> CompactionOutcome:
    return CompactionOutcome(r.plan.table, False, bool(r.committed), r.committed, r.rewritten_data_files,
                             r.added_data_files, r.removed_delete_files, r.rewritten_bytes, r.added_bytes,
                             [FailedGroup(g, e) for g, e in r.failed_groups], r.log_file, r.sent)


@text_renderer(CompactionOutcome)
def _result_text(env: Env, r: CompactionOutcome) -> None:
    say(env, f"rewrote {r.rewritten_data_files} data files ({fmt_bytes(r.rewritten_bytes)}) into {r.added_data_files} "
             f"({fmt_bytes(r.added_bytes)}); removed {r.removed_delete_files} delete files")
    for g in r.failed_groups:
        warn(env, f"group {g.group_id} not committed: {g.error}")
    for m in r.committed:
        say(env, f"committed {m}")
