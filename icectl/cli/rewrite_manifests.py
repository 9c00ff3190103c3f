"""``icectl rewrite-manifests``."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from icectl.cli.context import Env
from icectl.cli.options import YesOpt
from icectl.cli.output import render
from icectl.cli.confirm import confirm_plan
from icectl.cli.session import open_table
from icectl.cli.views.housekeeping import rewrite_manifests_report
from icectl.ops.maintain.rewrite_manifests import apply_rewrite_manifests, plan_rewrite_manifests


def rewrite_manifests(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE whose manifests to rewrite.")],
    spec_id: Annotated[Optional[int], typer.Option(
        "--spec-id", help="Rewrite the manifests of this partition spec (default: the table's default spec).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show which manifests would be rewritten; change "
                                          "nothing.")] = False,
    yes: YesOpt = False,
) -> None:
    """Rewrite the current snapshot's manifests, clustered by partition.

    Rewrite the current snapshot's manifests clustered by partition, at the table's target manifest size
    (metadata only, as Iceberg Java's rewrite_manifests)."""
    env: Env = ctx.obj
    t = open_table(env, table)
    plan = plan_rewrite_manifests(t, spec_id=spec_id)
    if dry_run or not plan.changes:
        render(env, rewrite_manifests_report(plan, None, dry_run=dry_run))
        return
    confirm_plan(env, rewrite_manifests_report(plan, None, dry_run=False),
                 f"Rewrite {len(plan.rewritten)} manifests of {plan.table}?", yes=yes)
    result = apply_rewrite_manifests(t, plan)
    render(env, rewrite_manifests_report(plan, result, dry_run=False))
