"""``icectl compact``: plan in the engine, rewrite in a Spark job, commit a replace snapshot."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from icectl.cli.confirm import confirm_plan
from icectl.cli.context import Env
from icectl.cli.options import MasterOpt, TemplateOpt, YesOpt
from icectl.cli.output import render
from icectl.cli.session import open_table, spark_template
from icectl.cli.views.compact import compaction_plan, compaction_result
from icectl.expr.size import parse_size
from icectl.ops.maintain.compact import CompactOptions, plan_compaction
from icectl.ops.maintain.compact import run_compaction, write_compaction_job_files
from icectl.ops.spark_job import JobSettings, prepare
from icectl.spec.properties import TARGET_FILE_SIZE_BYTES


def compact(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE to compact.")],
    target_file_size: Annotated[Optional[str], typer.Option("--target-file-size", help="Target output file size with its "
                                f"unit (binary: 128MB = 128MiB); default: {TARGET_FILE_SIZE_BYTES.name} (512MB).")] = None,
    min_input_files: Annotated[int, typer.Option("--min-input-files", help="Rewrite a group with at least this many "
                                                 "files.", min=1)] = 5,
    delete_file_threshold: Annotated[Optional[int], typer.Option("--delete-file-threshold", help="Rewrite any file with "
                                     "at least this many delete files.", min=0)] = None,
    rewrite_all: Annotated[bool, typer.Option("--rewrite-all", help="Rewrite every file, whatever its size.")] = False,
    max_file_group_size: Annotated[Optional[str], typer.Option("--max-file-group-size", help="Largest group of input "
                                   "bytes rewritten together, with its unit (default 100GB).")] = None,
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
    template: TemplateOpt = None,
    master: MasterOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan and the spark-submit command; run nothing.")] = False,
    keep_plan: Annotated[Optional[str], typer.Option("--keep-plan", metavar="DIR", help="Write the job's plan file in "
                         "DIR and keep it (with --dry-run, the printed command then runs as it is).")] = None,
    yes: YesOpt = False,
) -> None:
    """Rewrite small files (and files with many deletes) into files of the target size, on Spark."""
    env: Env = ctx.obj
    target = None if target_file_size is None else parse_size(target_file_size, what="--target-file-size")
    group = None if max_file_group_size is None else parse_size(max_file_group_size, what="--max-file-group-size")
    t = open_table(env, table)
    opts = CompactOptions(target_file_size=target, min_input_files=min_input_files,
                          rewrite_all=rewrite_all, where=where, strategy=strategy, sort_by=sort_by, branch=branch,
                          **({"delete_file_threshold": delete_file_threshold} if delete_file_threshold is not None else {}),
                          **({"max_file_group_size": group} if group is not None else {}))
    plan = plan_compaction(t, opts)
    settings = JobSettings(template_path=spark_template(env, template), master=master, work_dir=keep_plan,
                           partial_progress=partial_progress, max_commits=max_commits)
    if dry_run:
        job = prepare(t, settings)
        if keep_plan is not None and plan.groups:
            write_compaction_job_files(t, plan, job=job)
        render(env, compaction_plan(plan, job.argv, dry_run=True,
                                    plan_file=job.plan_file if keep_plan is not None and plan.groups else None))
        return
    if not plan.groups:
        render(env, compaction_plan(plan, None, dry_run=False))
        return
    confirm_plan(env, compaction_plan(plan, None, dry_run=False),
                 f"Rewrite {plan.input_files} files in {len(plan.groups)} groups?", yes=yes)
    result = run_compaction(t, plan, settings, progress=lambda m: env.stderr.write(f"icectl: {m}\n"))
    render(env, compaction_result(result))
