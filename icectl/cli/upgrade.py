"""``icectl upgrade-format``."""
from __future__ import annotations

from typing import Annotated

import typer

from icectl.cli.confirm import confirm_plan
from icectl.cli.context import Env
from icectl.cli.options import YesOpt
from icectl.cli.output import render
from icectl.cli.session import open_table
from icectl.cli.views.upgrade import UpgradeResult
from icectl.errors import RefusedError, UnsupportedError
from icectl.ops.evolve.upgrade import apply_upgrade, plan_upgrade


def upgrade_format(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE to upgrade.")],
    to: Annotated[int, typer.Option("--to", help="Target format version: 2, 3 or 4 (stepwise, never down).",
                                    min=1, max=4)],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the pre-flight report; change nothing.")] = False,
    yes: YesOpt = False,
) -> None:
    """Upgrade a table's format version (metadata only), after a pre-flight report."""
    env: Env = ctx.obj
    t = open_table(env, table)
    plan = plan_upgrade(t, to)
    planned = [plan.planned_commit] if plan.planned_commit else []
    if dry_run or not plan.steps:
        render(env, UpgradeResult(plan, dry_run, False, None, planned))
        return
    report = UpgradeResult(plan, False, False, None, planned)
    if plan.blockers:
        render(env, report)
        b = plan.blockers[0]
        cls = UnsupportedError if b.code in ("V4_FILESYSTEM_CATALOG", "READ_ONLY") else RefusedError
        raise cls(f"cannot upgrade {plan.table}: {b.message}", hint=b.hint)
    confirm_plan(env, report, f"Upgrade {plan.table} from format version {plan.from_version} to {plan.to_version}?",
                 yes=yes)
    done = apply_upgrade(t, to)
    render(env, UpgradeResult(plan, False, True, done.table.metadata_location, [done.sent_json()]))
