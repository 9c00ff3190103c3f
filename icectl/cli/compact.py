"""``icectl compact``: plan in the engine, rewrite in a Spark job, commit a replace snapshot."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from icectl.cli.context import Env
from icectl.cli.output import fmt_bytes, print_table, render, say, text_renderer, warn

if TYPE_CHECKING:
    from icectl.engine.compaction import CompactionPlan
    from icectl.engine.compaction_job import CompactionResult


def parse_size(text: str | None) -> int | None:
    import re

    from icectl.errors import UsageError

    if text is None:
        return None
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(b|kb|kib|mb|mib|gb|gib|tb|tib)?\s*", text.lower())
    if not m:
        raise UsageError(f"invalid size {text!r}: use bytes or e.g. 128MB, 1GiB")
    mult = {None: 1, "b": 1, "kb": 1024, "kib": 1024, "mb": 1024 ** 2, "mib": 1024 ** 2, "gb": 1024 ** 3,
            "gib": 1024 ** 3, "tb": 1024 ** 4, "tib": 1024 ** 4}[m.group(2)]
    return int(float(m.group(1)) * mult)


def compact(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE to compact.")],
    target_file_size: Annotated[Optional[str], typer.Option("--target-file-size", help="Target output file size (e.g. "
                                "128MB); default: write.target-file-size-bytes (512 MB).")] = None,
    min_input_files: Annotated[int, typer.Option("--min-input-files", help="Rewrite a group with at least this many "
                                                 "files.", min=1)] = 5,
    delete_file_threshold: Annotated[Optional[int], typer.Option("--delete-file-threshold", help="Rewrite any file with "
                                     "at least this many delete files.", min=0)] = None,
    rewrite_all: Annotated[bool, typer.Option("--rewrite-all", help="Rewrite every file, whatever its size.")] = False,
    max_file_group_size: Annotated[Optional[str], typer.Option("--max-file-group-size", help="Largest group of input "
                                   "bytes rewritten together (default 100GB).")] = None,
    where: Annotated[Optional[str], typer.Option("--where", help="Only partitions that may match, e.g. \"ts >= "
                     "'2026-01-01' and region = 'eu'\" (partition source columns).")] = None,
    strategy: Annotated[str, typer.Option("--strategy", help="binpack, or sort (by the table's sort order or --sort-by).",
                                          metavar="binpack|sort")] = "binpack",
    sort_by: Annotated[Optional[str], typer.Option("--sort-by", help="Sort order for --strategy sort, e.g. 'id desc'.")] = None,
    branch: Annotated[str, typer.Option("--branch", help="Branch to compact.")] = "main",
    partial_progress: Annotated[bool, typer.Option("--partial-progress", help="Commit groups in several commits, so "
                                                   "one conflict does not undo all the work.")] = False,
    max_commits: Annotated[int, typer.Option("--max-commits", help="With --partial-progress: at most this many commits.",
                                             min=1)] = 10,
    template: Annotated[Optional[str], typer.Option("--template", help="spark-submit job template (YAML); default: "
                                                    "local[*] with the installed pyspark.")] = None,
    master: Annotated[Optional[str], typer.Option("--master", help="Spark master, e.g. yarn or k8s://...; overrides "
                                                  "the template.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan and the spark-submit command; run nothing.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation (for cron and Airflow).")] = False,
) -> None:
    """Rewrite small files (and files with many deletes) into files of the target size, on Spark."""
    from icectl.cli.confirm import confirm_plan
    from icectl.engine.compaction import CompactOptions, plan_compaction
    from icectl.engine.compaction_job import JobSettings, prepare, run_compaction

    env: Env = ctx.obj
    t = env.open_table(table)
    opts = CompactOptions(target_file_size=parse_size(target_file_size), min_input_files=min_input_files,
                          rewrite_all=rewrite_all, where=where, strategy=strategy, sort_by=sort_by, branch=branch,
                          **({"delete_file_threshold": delete_file_threshold} if delete_file_threshold is not None else {}),
                          **({"max_file_group_size": parse_size(max_file_group_size)} if max_file_group_size else {}))
    plan = plan_compaction(t, opts)
    settings = JobSettings(template_path=template or _catalog_template(env), master=master,
                           partial_progress=partial_progress, max_commits=max_commits)
    if dry_run:
        _, argv, work, _ = prepare(t, plan, settings)
        render(env, compaction_plan(plan, argv, dry_run=True))
        return
    if not plan.groups:
        render(env, compaction_plan(plan, None, dry_run=False))
        return
    confirm_plan(env, compaction_plan(plan, None, dry_run=False),
                 f"Rewrite {plan.input_files} files in {len(plan.groups)} groups?", yes=yes)
    result = run_compaction(t, plan, settings, progress=lambda m: env.stderr.write(f"icectl: {m}\n"))
    render(env, compaction_result(result))


def _catalog_template(env: Env) -> str | None:
    try:
        from icectl.catalog import resolve_catalog_config

        return resolve_catalog_config(env.catalog, uri=env.uri, warehouse=env.warehouse).properties.get("spark.template")
    except Exception:
        return None


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


def compaction_plan(plan: CompactionPlan, argv: list[str] | None, *, dry_run: bool) -> CompactionPlanView:
    return CompactionPlanView(
        table=plan.table, branch=plan.branch, starting_snapshot_id=plan.starting_snapshot_id,
        target_file_size=plan.target_file_size, min_file_size=plan.min_file_size, max_file_size=plan.max_file_size,
        live_data_files=plan.total_files, input_files=plan.input_files, input_bytes=plan.input_bytes,
        groups=[GroupPlan(g.group_id, g.partition_display, len(g.tasks), g.input_bytes, g.input_records,
                          g.delete_files, g.expected_outputs) for g in plan.groups],
        spark_submit=argv, dry_run=dry_run, applied=False)


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
        import shlex

        say(env, "spark-submit command:")
        say(env, " ".join(shlex.quote(a) for a in p.spark_submit))


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


def compaction_result(r: CompactionResult) -> CompactionOutcome:
    return CompactionOutcome(r.plan.table, False, bool(r.committed), r.committed, r.rewritten_data_files,
                             r.added_data_files, r.removed_delete_files, r.rewritten_bytes, r.added_bytes,
                             [FailedGroup(g, e) for g, e in r.failed_groups], r.log_file)


@text_renderer(CompactionOutcome)
def _result_text(env: Env, r: CompactionOutcome) -> None:
    say(env, f"rewrote {r.rewritten_data_files} data files ({fmt_bytes(r.rewritten_bytes)}) into {r.added_data_files} "
             f"({fmt_bytes(r.added_bytes)}); removed {r.removed_delete_files} delete files")
    for g in r.failed_groups:
        warn(env, f"group {g.group_id} not committed: {g.error}")
    for m in r.committed:
        say(env, f"committed {m}")


def register(app: typer.Typer) -> None:
    app.command("compact")(compact)
