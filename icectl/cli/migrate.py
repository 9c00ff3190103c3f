"""``icectl migrate``."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from icectl.cli.confirm import confirm_plan
from icectl.cli.context import Env
from icectl.cli.options import YesOpt
from icectl.cli.output import render
from icectl.cli.views.migrate import migration_report
from icectl.errors import ExitCode, MigrationIncompleteError, UsageError
from icectl.ops.catalogs import Catalog, CatalogOptions, open_catalog, redact_uri
from icectl.ops.migrate import MigrationEntry, MigrationPlan, apply_migration, plan_migration


def _open(env: Env, value: str | None, flag: str) -> Catalog:
    if not value:
        raise UsageError(f"{flag} is required: a configured catalog's name or a catalog URI")
    opts = CatalogOptions(uri=value) if "://" in value else CatalogOptions(name=value)
    catalog = open_catalog(opts)
    if env.verbose:
        env.stderr.write(f"icectl: {flag} catalog {catalog.name} ({catalog.kind})\n")
    return catalog


def _label(value: str | None) -> str:
    return redact_uri(value) if value and "://" in value else str(value)


def migrate(
    ctx: typer.Context,
    names: Annotated[Optional[list[str]], typer.Argument(
        help="Namespaces (their tables and views, and those of the namespaces below) or NAMESPACE.TABLE "
        "(or NAMESPACE.VIEW).",
        show_default=False)] = None,
    source: Annotated[Optional[str], typer.Option("--from", help="The catalog the tables leave: a configured "
                                                  "catalog's name or a catalog URI.")] = None,
    target: Annotated[Optional[str], typer.Option("--to", help="The catalog the tables go to: a configured "
                                                  "catalog's name or a catalog URI.")] = None,
    all_namespaces: Annotated[bool, typer.Option("--all", help="Every namespace of the source catalog.")] = False,
    keep_source: Annotated[bool, typer.Option("--keep-source", help="Register and check in the target, and keep "
                                              "the source entries.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show each table and what will happen to it; change "
                                          "nothing.")] = False,
    yes: YesOpt = False,
) -> None:
    """Move tables to another catalog at their metadata files; nothing is copied or deleted.

    Each table (and view) is registered in the target at its current metadata file, checked, then
    removed from the source.

    No file is copied or deleted. A re-run resumes; a table in both catalogs at different metadata
    files is a conflict, never overwritten; exit 5 when a table is left behind (a conflict, a commit
    to the source during the run). See docs/migrate.md."""
    env: Env = ctx.obj
    if source and source == target:
        raise UsageError("--from and --to name the same catalog")
    src = _open(env, source, "--from")
    dst = _open(env, target, "--to")
    plan = plan_migration(src, dst, list(names or []), all_entries=all_namespaces, keep_source=keep_source)
    # Catalogs by the names the command line gave them (two URIs would otherwise both be "default").
    plan.source, plan.target = _label(source), _label(target)
    if dry_run:
        render(env, migration_report(plan, dry_run=True, applied=False))
        return
    if plan.pending:
        confirm_plan(env, migration_report(plan, dry_run=False, applied=False),
                     f"Move {_entries(plan.pending)} from {plan.source} to {plan.target}?", yes=yes,
                     action="migrate the tables")
    progress = None
    if not env.json or env.is_terminal(env.stderr):
        def progress(entry: MigrationEntry, step: str) -> None:
            env.stderr.write(f"icectl: {entry.name}: {step}\n")
    apply_migration(src, dst, plan, progress=progress)
    render(env, migration_report(plan, dry_run=False, applied=True))
    _exit_code(plan)


def _entries(entries: list[MigrationEntry]) -> str:
    """``3 tables`` or ``3 tables and 2 views``."""
    views = sum(e.kind == "view" for e in entries)
    return f"{len(entries) - views} tables" + (f" and {views} views" if views else "")


def _exit_code(plan: MigrationPlan) -> None:
    """A run that left a table behind ends with a documented exit code, after the report: that of the
    first table an error stopped, else 5 (a conflict, a change during the run), else the first skipped
    table's (7: the target cannot hold it; an unreadable one: its error's, 4 for invalid metadata)."""
    left = plan.incomplete
    if not left:
        return
    names = ", ".join(e.name for e in left[:5]) + (", ..." if len(left) > 5 else "")
    codes = [e.exit_code for e in left if e.exit_code is not None]
    code = next((e.exit_code for e in left if e.outcome == "failed"), None) or \
        (ExitCode.CONFLICT if ExitCode.CONFLICT in codes else codes[0])
    raise MigrationIncompleteError(f"{len(left)} of {len(plan.entries)} tables were not migrated ({names})",
                                   exit_code=ExitCode(code),
                                   hint="the report says what happened to each table and why; a re-run resumes")
