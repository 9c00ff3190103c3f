"""``icectl create`` and ``icectl list``."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from icectl.cli.confirm import confirm_plan
from icectl.cli.context import Env
from icectl.cli.options import JSONL, YesOpt
from icectl.cli.output import render
from icectl.cli.session import catalog_config, describe_catalog, open_catalog
from icectl.cli.views.inventory import Inventory
from icectl.cli.views.tables import Created, Listing
from icectl.errors import PartialFailureError, UsageError
from icectl.ops.catalogs import parse_identifier
from icectl.ops.evolve.create import apply_create, check_create_arguments, plan_create
from icectl.ops.evolve.namespaces import list_namespaces, list_tables, list_views
from icectl.ops.inspect.inventory import inventory


def create(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="Table to create, as NAMESPACE.TABLE.")],
    schema: Annotated[str, typer.Option("--schema", "-s", help="Schema: compact form 'id:long!, name:string, "
                                        "ts:timestamptz' (! = required) or an Iceberg schema JSON file (@file or *.json).")],
    partition_by: Annotated[Optional[str], typer.Option("--partition-by", "-p",
                                                        help="Partition spec, e.g. 'day(ts), bucket(16, id)'.")] = None,
    sort_by: Annotated[Optional[str], typer.Option("--sort-by", help="Sort order, e.g. 'id desc nulls last, ts'.")] = None,
    prop: Annotated[Optional[list[str]], typer.Option("--property", "-P", help="Table property KEY=VALUE (repeatable).")] = None,
    format_version: Annotated[int, typer.Option("--format-version", help="Format version 1 to 4.", min=1, max=4)] = 2,
    location: Annotated[Optional[str], typer.Option("--location", help="Table location (default: under the warehouse).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the table that would be created; write nothing "
                                          "(no catalog database, no folder).")] = False,
    yes: YesOpt = False,
) -> None:
    """Create a table."""
    env: Env = ctx.obj
    ident = parse_identifier(table)
    # Arguments first: a bad create reports them, whatever the catalog (SQLite catalogs are created
    # by their first write, so neither a bad create nor a dry run leaves a database behind).
    check_create_arguments(schema_text=schema, partition_by=partition_by, sort_by=sort_by, properties=prop or [],
                           format_version=format_version)
    catalog = open_catalog(env)
    plan = plan_create(catalog, ident, schema_text=schema, partition_by=partition_by, sort_by=sort_by,
                       properties=prop or [], format_version=format_version, location=location)
    name = ".".join(ident)
    commit = plan.commit_json()
    if dry_run:
        render(env, Created.of(name, plan.metadata, None, dry_run=True, commit=commit))
        return
    confirm_plan(env, Created.of(name, plan.metadata, None, commit=commit), f"Create table {name}?", yes=yes,
                 action="create the table")
    t = apply_create(catalog, plan)
    render(env, Created.of(t.name, t.metadata, t.metadata_location, commit=commit))


def list_(
    ctx: typer.Context,
    namespace: Annotated[Optional[str], typer.Argument(help="Namespace to list tables of; omit to list everything.")] = None,
    all_tables: Annotated[bool, typer.Option(
        "--all", help="The catalog's inventory: every table of every namespace (nested too) with its format "
        "version, location, current snapshot, metadata file and last update, then every view with its current "
        "version, a line each as it is read (-o json: an array, -o jsonl: an object a line); one whose metadata "
        "cannot be read is listed with its error and the exit code is 16 (see docs/inventory.md).")] = False,
) -> None:
    """List namespaces, tables and views in the catalog.

    With --all, the catalog's inventory instead: a line per table and per view, with what its
    metadata says, printed as they are read."""
    env: Env = ctx.obj
    if all_tables:
        if namespace:
            raise UsageError("give a namespace or --all, not both")
        _inventory(env)
        return
    if env.output == JSONL:
        raise UsageError("-o jsonl prints one table a line: use it with list --all")
    catalog = open_catalog(env)
    ns = tuple(namespace.split(".")) if namespace else None
    tables = [".".join(t) for t in list_tables(catalog, ns)]
    namespaces = [".".join(n) for n in list_namespaces(catalog, None)] if ns is None else [namespace]
    views = [".".join(v) for v in list_views(catalog, ns)]
    render(env, Listing(catalog.name, namespaces, tables, describe_catalog(catalog_config(env)), views=views))


def _inventory(env: Env) -> None:
    catalog = open_catalog(env)
    result = Inventory.of(inventory(catalog), catalog.name, describe_catalog(catalog_config(env)))
    render(env, result)
    t = result.tally
    if t.errors:
        what = f"{t.tables + t.views} tables and views" if t.views else f"{t.tables} tables"
        raise PartialFailureError(f"{t.errors} of {what} could not be read ({', '.join(t.failed)}"
                                  f"{', ...' if t.errors > len(t.failed) else ''})",
                                  hint="each is listed with its error; icectl validate NAME says more")
