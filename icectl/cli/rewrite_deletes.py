"""``icectl rewrite-deletes``."""
from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from icectl.cli.context import Env


def rewrite_deletes(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE.")],
    branch: Annotated[str, typer.Option("--branch", help="Branch to rewrite.")] = "main",
    apply_equality_deletes: Annotated[bool, typer.Option(
        "--apply-equality-deletes", help="Also rewrite the data files that equality deletes touch (a Spark job), so "
        "the equality deletes can be removed.")] = False,
    template: Annotated[Optional[str], typer.Option("--template", help="spark-submit job template for "
                                                    "--apply-equality-deletes.")] = None,
    master: Annotated[Optional[str], typer.Option("--master", help="Spark master for --apply-equality-deletes.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would change; commit nothing.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation (for cron and Airflow).")] = False,
) -> None:
    """Merge position deletes (v2), convert them to deletion vectors (v3+), drop dangling deletes."""
    from icectl.cli.confirm import confirm
    from icectl.ops.delete_rewrite import build_delete_rewrite, plan_delete_rewrite
    from icectl.table.loaded import commit_with_retry

    env: Env = ctx.obj
    t = env.open_table(table)
    plan = plan_delete_rewrite(t, branch=branch)
    summary = _plan_summary(plan)
    eq_plan = None
    if apply_equality_deletes:
        from icectl.ops.compaction import CompactOptions, plan_compaction

        eq_plan = plan_compaction(t, CompactOptions(branch=branch, only_equality_deleted=True))
        summary["equality_rewrite"] = {"data_files": eq_plan.input_files, "groups": len(eq_plan.groups),
                                       "bytes": eq_plan.input_bytes}
    nothing = not plan.changes and not (eq_plan and eq_plan.groups)
    if dry_run or nothing:
        _render(env, summary, None, dry_run=True)
        return
    if not env.json:
        _render(env, summary, None, dry_run=True)
    confirm(env, "Rewrite the delete files?", yes=yes)
    result: dict[str, Any] = {"committed": []}
    if eq_plan is not None and eq_plan.groups:
        from icectl.ops.compaction_job import JobSettings, run_compaction

        r = run_compaction(t, eq_plan, JobSettings(template_path=template, master=master),
                           progress=lambda m: env.stderr.write(f"icectl: {m}\n"))
        result["committed"] += r.committed
        result["equality_rewrite"] = {"rewritten_data_files": r.rewritten_data_files,
                                      "removed_delete_files": r.removed_delete_files}
        t = t.refresh()
        plan = plan_delete_rewrite(t, branch=branch)
    if plan.changes:
        counts: dict[str, int] = {}

        def build(cur):
            md, c = build_delete_rewrite(cur, plan)
            counts.clear()
            counts.update(c)
            return md

        committed = commit_with_retry(t, build)
        result["committed"].append(committed.metadata_location)
        result.update(counts)
    _render(env, summary, result, dry_run=False)


def _plan_summary(plan: Any) -> dict[str, Any]:
    return {
        "table": plan.table, "branch": plan.branch, "format_version": plan.format_version,
        "dangling_delete_files": [d.data_file.file_path for d in plan.dangling],
        "position_delete_files_to_merge": sum(len(v) for v in plan.to_merge.values()),
        "partitions_to_merge": len(plan.to_merge),
        "position_delete_files_to_convert": len(plan.to_dv),
        "deletion_vectors_to_merge": len(plan.dvs_to_merge),
        "equality_delete_files": plan.equality_targets,
    }


def _render(env: Env, summary: dict[str, Any], result: dict[str, Any] | None, *, dry_run: bool) -> None:
    from icectl.cli.output import emit_json

    if env.json:
        emit_json(env, {**summary, "dry_run": dry_run, "result": result})
        return
    c = env.console()
    if result is None:
        c.print(f"{summary['table']} (v{summary['format_version']}, {summary['branch']}): "
                f"{len(summary['dangling_delete_files'])} dangling delete files to drop; "
                f"{summary['position_delete_files_to_merge']} position-delete files to merge in "
                f"{summary['partitions_to_merge']} partitions; {summary['position_delete_files_to_convert']} to convert "
                f"to deletion vectors")
        if "equality_rewrite" in summary:
            e = summary["equality_rewrite"]
            c.print(f"equality deletes: {e['data_files']} data files to rewrite in {e['groups']} groups")
        if dry_run and not (summary['dangling_delete_files'] or summary['position_delete_files_to_merge']
                            or summary['position_delete_files_to_convert'] or summary.get("equality_rewrite", {}).get("data_files")):
            c.print("nothing to rewrite")
        return
    c.print(f"dropped {result.get('dangling_removed', 0)} dangling delete files; merged {result.get('merged_inputs', 0)} "
            f"position-delete files into {result.get('merged_outputs', 0)}; converted {result.get('converted_to_dvs', 0)} "
            f"into {result.get('deletion_vectors_written', 0)} deletion vectors")
    for m in result["committed"]:
        c.print(f"committed {m}")


def register(app: typer.Typer) -> None:
    app.command("rewrite-deletes")(rewrite_deletes)
