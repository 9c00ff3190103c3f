"""``icectl upgrade-format`` and ``icectl register``."""
from __future__ import annotations

from typing import Annotated

import typer

from icectl.cli.context import Env
from icectl.cli.options import YesOpt
from icectl.cli.output import render



def upgrade_format(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE to upgrade.")],
    to: Annotated[int, typer.Option("--to", help="Target format version: 2, 3 or 4 (stepwise, never down).",
                                    min=1, max=4)],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the pre-flight report; change nothing.")] = False,
    yes: YesOpt = False,
) -> None:
    """Upgrade a table's format version (metadata only), after a pre-flight report."""
    from icectl.cli.confirm import confirm_plan
    from icectl.cli.views.upgrade import UpgradeResult
    from icectl.ops.upgrade import apply_upgrade, plan_upgrade
    from icectl.errors import RefusedError, UnsupportedError

    from icectl.table.transaction import sent_json
    from icectl.table.requirements import requirements_for

    env: Env = ctx.obj
    t = env.open_table(table)
    plan = plan_upgrade(t, to)
    planned = [sent_json(t.metadata, requirements_for(t.metadata, plan.updates), plan.updates)] if plan.updates \
        else []
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


def register_cmd(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE to register it as, in the configured catalog.")],
    metadata_file: Annotated[str, typer.Argument(help="The table metadata file (*.metadata.json) to register.")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Check the metadata file and the name; register nothing.")] = False,
    yes: YesOpt = False,
) -> None:
    """Register an existing table metadata file in a (SQL) catalog, e.g. before upgrading to v4."""
    from icectl.catalog import parse_identifier
    from icectl.cli.confirm import confirm_plan
    from icectl.cli.views.upgrade import Registered
    from icectl.ops.upgrade import plan_register, register_table

    env: Env = ctx.obj
    ident = parse_identifier(table)
    catalog = env.get_catalog()
    plan = plan_register(catalog, ident, metadata_file)
    if dry_run:
        render(env, Registered(plan, True, False, False))
        return
    confirm_plan(env, Registered(plan, False, False, False), f"Register {plan.table} in catalog {plan.catalog}?",
                 yes=yes, action="register the table")
    register_table(catalog, ident, plan)
    render(env, Registered(plan, False, True, True))


def register(app: typer.Typer) -> None:
    app.command("upgrade-format")(upgrade_format)
    app.command("register")(register_cmd)
