"""``icectl drop`` and ``icectl rename``."""
from __future__ import annotations

from typing import Annotated

import typer

from icectl.cli.context import Env
from icectl.cli.options import YesOpt
from icectl.cli.output import render
from icectl.cli.confirm import confirm_plan, progress_deleter
from icectl.cli.session import locate_table, open_table
from icectl.cli.views.catalog_views import view_drop_report
from icectl.cli.views.housekeeping import RenameReport, drop_report
from icectl.errors import UsageError
from icectl.ops.catalogs import LoadedView, open_table_or_view, parse_identifier
from icectl.ops.evolve.drop import apply_drop, apply_rename, plan_drop, plan_rename
from icectl.ops.evolve.views import apply_drop_view, plan_drop_view


def drop(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE (or NAMESPACE.VIEW) to drop.")],
    purge: Annotated[bool, typer.Option(
        "--purge", help="Also delete every file the table's metadata reaches (only under its location, after the "
        "catalog drop). REST: the server is asked to (purgeRequested=true).")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would be dropped and deleted; change "
                                          "nothing.")] = False,
    yes: YesOpt = False,
) -> None:
    """Drop a table from its catalog (metadata only), or with --purge together with its files; or a
    view (its metadata files stay)."""
    env: Env = ctx.obj
    catalog, ident = locate_table(env, table)
    t = open_table_or_view(catalog, ident)
    if isinstance(t, LoadedView):
        if purge:
            raise UsageError(f"{t.name} is a view: --purge is for tables (a view has no data; its metadata files "
                             "stay)")
        view_plan = plan_drop_view(catalog, t)
        if dry_run:
            render(env, view_drop_report(view_plan, dry_run=True, applied=False))
            return
        confirm_plan(env, view_drop_report(view_plan, dry_run=False, applied=False), f"Drop view {t.name}?",
                     yes=yes, action="drop the view")
        apply_drop_view(catalog, view_plan)
        render(env, view_drop_report(view_plan, dry_run=False, applied=True))
        return
    plan = plan_drop(t, purge=purge)
    if dry_run:
        render(env, drop_report(plan, None, dry_run=True))
        return
    question = (f"Drop {plan.table} and delete {len(plan.files)} files?" if purge and plan.purged_by == "icectl"
                else f"Drop {plan.table}{' and have the server purge its files' if purge else ''}?")
    confirm_plan(env, drop_report(plan, None, dry_run=False), question, yes=yes, action="drop the table")
    result = apply_drop(t, plan, delete=progress_deleter(env, t.io, len(plan.files), location=plan.location))
    render(env, drop_report(plan, result, dry_run=False))


def rename(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE to rename.")],
    new_name: Annotated[str, typer.Argument(help="Its new NAMESPACE.TABLE (the namespace must exist).")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Check the rename; change nothing.")] = False,
    yes: YesOpt = False,
) -> None:
    """Rename a table, or move it to another namespace (its files stay where they are)."""
    env: Env = ctx.obj
    t = open_table(env, table)
    destination = parse_identifier(new_name)
    plan = plan_rename(t, destination)

    def report(*, dry: bool, applied: bool) -> RenameReport:
        return RenameReport(plan.source, plan.destination, plan.catalog, plan.location, plan.metadata_location,
                            dry, applied)

    if dry_run:
        render(env, report(dry=True, applied=False))
        return
    confirm_plan(env, report(dry=False, applied=False), f"Rename {plan.source} to {plan.destination}?", yes=yes,
                 action="rename the table")
    apply_rename(t, destination)
    render(env, report(dry=False, applied=True))
