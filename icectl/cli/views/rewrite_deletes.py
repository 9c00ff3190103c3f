"""What ``rewrite-deletes`` prints."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from icectl.cli.context import Env
from icectl.cli.output import say, text_renderer

if TYPE_CHECKING:
    from icectl.ops.maintain.compact import CompactionPlan
    from icectl.ops.maintain.rewrite_deletes import DeleteRewritePlan


@dataclass
class EqualityRewritePlan:
    data_files: int  # data files that equality deletes apply to, to rewrite on Spark
    groups: int
    bytes: int


@dataclass
class EqualityRewriteOutcome:
    rewritten_data_files: int
    removed_delete_files: int


@dataclass
class DeleteRewriteOutcome:
    committed: list[str]  # metadata files, one per commit
    equality_rewrite: EqualityRewriteOutcome | None  # with --apply-equality-deletes
    dangling_removed: int = 0
    merged_inputs: int = 0
    merged_outputs: int = 0
    converted_to_dvs: int = 0
    deletion_vectors_written: int = 0


@dataclass
class DeleteRewriteReport:
    """What ``rewrite-deletes`` would do (the plan) and, once applied, did (``result``)."""

    table: str
    branch: str
    format_version: int
    dangling_delete_files: list[str]
    position_delete_files_to_merge: int
    partitions_to_merge: int
    position_delete_files_to_convert: int
    deletion_vectors_to_merge: int
    equality_delete_files: int
    equality_rewrite: EqualityRewritePlan | None  # with --apply-equality-deletes
    dry_run: bool
    applied: bool
    result: DeleteRewriteOutcome | None  # None until applied
    # Each commit sent (or, before them, to send): {"requirements": [...], "updates": [...]}.
    commits: list[dict] = field(default_factory=list)


def delete_rewrite_report(plan: DeleteRewritePlan, eq_plan: CompactionPlan | None, *, dry_run: bool) -> DeleteRewriteReport:
    return DeleteRewriteReport(
        table=plan.table, branch=plan.branch, format_version=plan.format_version,
        dangling_delete_files=[d.data_file.file_path for d in plan.dangling],
        position_delete_files_to_merge=sum(len(v) for v in plan.to_merge.values()),
        partitions_to_merge=len(plan.to_merge), position_delete_files_to_convert=len(plan.to_dv),
        deletion_vectors_to_merge=len(plan.dvs_to_merge), equality_delete_files=plan.equality_targets,
        equality_rewrite=None if eq_plan is None else EqualityRewritePlan(eq_plan.input_files, len(eq_plan.groups),
                                                                          eq_plan.input_bytes),
        dry_run=dry_run, applied=False, result=None, commits=planned_commits(plan, eq_plan))


def planned_commits(plan: DeleteRewritePlan, eq_plan: CompactionPlan | None) -> list[dict]:
    """The commits a rewrite will send: the equality-delete rewrite's, then the delete rewrite's
    (their snapshots exist only once written)."""
    out = []
    if eq_plan is not None and eq_plan.groups:
        out.append(eq_plan.planned_commit)
    if plan.changes:
        out.append(plan.planned_commit)
    return out


@text_renderer(DeleteRewriteReport)
def _rewrite_deletes_text(env: Env, r: DeleteRewriteReport) -> None:
    res = r.result
    if res is not None:  # the plan was printed before
        say(env, f"dropped {res.dangling_removed} dangling delete files; merged {res.merged_inputs} position-delete "
                 f"files into {res.merged_outputs}; converted {res.converted_to_dvs} into "
                 f"{res.deletion_vectors_written} deletion vectors")
        if res.equality_rewrite is not None:
            e = res.equality_rewrite
            say(env, f"equality deletes: rewrote {e.rewritten_data_files} data files, removed "
                     f"{e.removed_delete_files} delete files")
        for m in res.committed:
            say(env, f"committed {m}")
        return
    say(env, f"{r.table} (v{r.format_version}, {r.branch}): {len(r.dangling_delete_files)} dangling delete files to "
             f"drop; {r.position_delete_files_to_merge} position-delete files to merge in {r.partitions_to_merge} "
             f"partitions; {r.position_delete_files_to_convert} to convert to deletion vectors"
             + (" (dry run: nothing committed)" if r.dry_run else ""))
    if r.equality_rewrite is not None:
        e = r.equality_rewrite
        say(env, f"equality deletes: {e.data_files} data files to rewrite in {e.groups} groups")
    if not (r.dangling_delete_files or r.position_delete_files_to_merge or r.position_delete_files_to_convert
            or (r.equality_rewrite is not None and r.equality_rewrite.data_files)):
        say(env, "nothing to rewrite")
