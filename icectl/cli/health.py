"""``icectl health`` and ``icectl maintain``."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from icectl.cli.confirm import confirm_plan
from icectl.cli.context import Env
from icectl.cli.options import YesOpt
from icectl.cli.output import render
from icectl.cli.session import command_prefix, open_catalog, open_table, spark_template
from icectl.cli.views.health import health_report, maintain_report
from icectl.errors import HealthCriticalError, HealthWarningError, MaintenanceFailedError
from icectl.ops.catalogs import looks_like_path
from icectl.ops.compaction_job import JobSettings
from icectl.ops.health import HealthRun, check_table, check_tables, resolve_targets
from icectl.expr.duration import parse_duration_ms
from icectl.ops.maintain import MaintainOptions, maintain as run_maintain
from icectl.ops.maintenance_policy import load_policy_file

TargetsArg = Annotated[Optional[list[str]], typer.Argument(
    help="Tables (NAMESPACE.TABLE) or namespaces (all their tables, and those of the namespaces below); health "
    "also takes a table location or metadata file.",
    show_default=False)]
AllOpt = Annotated[bool, typer.Option("--all", help="Every table of the catalog.")]
PolicyOpt = Annotated[Optional[str], typer.Option(
    "--policy", help="YAML policy file: thresholds and steps, by default and per table pattern (see the README).")]


def _targets(env: Env, targets: list[str] | None, all_tables: bool) -> list[tuple[str, ...]]:
    return resolve_targets(open_catalog(env), list(targets or []), all_tables=all_tables)


def health(
    ctx: typer.Context,
    targets: TargetsArg = None,
    all_tables: AllOpt = False,
    policy: PolicyOpt = None,
    orphans: Annotated[bool, typer.Option("--orphans", help="Also list each table's location for orphan files "
                                          "(the one check that reads more than metadata).")] = False,
) -> None:
    """Measure tables from their metadata and name the icectl command that fixes each finding; exit 0
    when healthy, 13 when maintenance is recommended, 14 when it is overdue."""
    env: Env = ctx.obj
    policies = load_policy_file(policy)
    paths = [t for t in targets or [] if looks_like_path(t)]
    names = [t for t in targets or [] if not looks_like_path(t)]
    # A table location or metadata file is measured read-only, without a catalog (as describe does).
    tables = [open_table(env, p) for p in paths]
    run = HealthRun([check_table(t, policies.policy_for(t.name, t.metadata.properties), orphans=orphans)
                     for t in tables])
    if names or all_tables or not paths:
        run.tables += check_tables(open_catalog(env), _targets(env, names, all_tables), policies,
                                   orphans=orphans).tables
    report = health_report(run, prefix=command_prefix(env))
    render(env, report)
    need = [t.table for t in run.tables if t.status != "healthy"]
    if run.worst == "warning":
        raise HealthWarningError(f"{len(need)} of {len(run.tables)} tables need maintenance ({', '.join(need[:5])})",
                                 hint="icectl maintain runs the commands shown")
    if run.worst in ("critical", "error"):
        raise HealthCriticalError(f"{len(need)} of {len(run.tables)} tables need maintenance urgently or cannot be "
                                  f"measured ({', '.join(need[:5])})", hint="icectl maintain runs the commands shown")


def maintain(
    ctx: typer.Context,
    targets: TargetsArg = None,
    all_tables: AllOpt = False,
    policy: PolicyOpt = None,
    budget: Annotated[Optional[str], typer.Option("--budget", help="Start no step after this long (e.g. 90m, 2h); "
                                                  "tables and steps left are reported as skipped.")] = None,
    template: Annotated[Optional[str], typer.Option("--template", help="spark-submit job template for compact "
                                                    "(default: local[*] with the installed pyspark).")] = None,
    master: Annotated[Optional[str], typer.Option("--master", help="Spark master for compact; overrides the "
                                                  "template.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the steps each table's health calls for; change "
                                          "nothing.")] = False,
    yes: YesOpt = False,
) -> None:
    """For each table, run the steps its health calls for (rewrite-deletes, compact, rewrite-manifests,
    expire, remove-orphans, in that order) under a lock per table; exit 15 when a table failed."""
    env: Env = ctx.obj
    budget_ms = None if budget is None else parse_duration_ms(budget, what="--budget")
    policies = load_policy_file(policy)
    idents = _targets(env, targets, all_tables)
    catalog = open_catalog(env)
    prefix = command_prefix(env)
    settings = JobSettings(template_path=spark_template(env, template), master=master)
    if dry_run or not yes:
        plan = run_maintain(catalog, idents, policies, opts=MaintainOptions(dry_run=True, budget_ms=budget_ms))
        if dry_run or not any(t.status == "planned" for t in plan.tables):
            render(env, maintain_report(plan, prefix=prefix))
            return
        plan.dry_run = False
        confirm_plan(env, maintain_report(plan, prefix=prefix), "Run these maintenance steps?", yes=yes)
    progress = (lambda m: env.stderr.write(f"icectl: {m}\n")) if not env.json or env.is_terminal(env.stderr) else None
    run = run_maintain(catalog, idents, policies, opts=MaintainOptions(budget_ms=budget_ms, job_settings=settings),
                       progress=progress)
    render(env, maintain_report(run, prefix=prefix))
    if run.failed:
        raise MaintenanceFailedError(f"maintenance failed on {len(run.failed)} of {len(run.tables)} tables "
                                     f"({', '.join(run.failed[:5])}); the others were maintained",
                                     hint="the report says which step failed and why")
