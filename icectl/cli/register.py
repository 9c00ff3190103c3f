"""``icectl register``."""
from __future__ import annotations

from typing import Annotated

import typer

from icectl.cli.confirm import confirm_plan
from icectl.cli.context import Env
from icectl.cli.options import YesOpt
from icectl.cli.output import render
from icectl.cli.session import open_catalog
from icectl.cli.views.upgrade import Registered
from icectl.ops.catalogs import parse_identifier
from icectl.ops.evolve.register import plan_register, register_table


def register_cmd(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE to register it as, in the configured catalog.")],
    metadata_file: Annotated[str, typer.Argument(help="The table metadata file (*.metadata.json) to register.")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Check the metadata file and the name; register nothing.")] = False,
    yes: YesOpt = False,
) -> None:
    """Register an existing table metadata file in a (SQL) catalog.

    Use it, e.g., before upgrading a table to v4."""
    env: Env = ctx.obj
    ident = parse_identifier(table)
    catalog = open_catalog(env)
    plan = plan_register(catalog, ident, metadata_file)
    if dry_run:
        render(env, Registered(plan, True, False, False))
        return
    confirm_plan(env, Registered(plan, False, False, False), f"Register {plan.table} in catalog {plan.catalog}?",
                 yes=yes, action="register the table")
    register_table(catalog, ident, plan)
    render(env, Registered(plan, False, True, True))
