"""``icectl create`` and ``icectl list``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Optional

import typer

from icectl.cli.context import Env
from icectl.cli.output import emit_json


@dataclass
class Created:
    name: str
    location: str | None
    metadata_location: str
    format_version: int
    table_uuid: str | None
    schema: dict
    partition_spec: dict
    sort_order: dict
    properties: dict


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
) -> None:
    """Create a table."""
    from icectl.catalog import parse_identifier
    from icectl.ops.operations import check_create_arguments, create_table

    env: Env = ctx.obj
    ident = parse_identifier(table)
    # Arguments first: a bad create must not leave a new catalog database behind.
    check_create_arguments(schema_text=schema, partition_by=partition_by, sort_by=sort_by, properties=prop or [],
                           format_version=format_version)
    t = create_table(env.get_catalog(), ident, schema_text=schema, partition_by=partition_by, sort_by=sort_by,
                     properties=prop or [], format_version=format_version, location=location)
    md = t.metadata
    result = Created(t.name, md.location, t.metadata_location, md.format_version, md.table_uuid,
                     md.schema.to_json(), md.spec.to_json(md.format_version), md.sort_order.to_json(),
                     dict(md.properties))
    if env.json:
        emit_json(env, result)
        return
    from icectl.cli.render import render_created

    render_created(env, result, md)


def list_(
    ctx: typer.Context,
    namespace: Annotated[Optional[str], typer.Argument(help="Namespace to list tables of; omit to list everything.")] = None,
) -> None:
    """List namespaces and tables in the catalog."""
    env: Env = ctx.obj
    catalog = env.get_catalog()
    ns = tuple(namespace.split(".")) if namespace else None
    tables = [".".join(t) for t in catalog.list_tables(ns)]
    namespaces = [".".join(n) for n in catalog.list_namespaces()] if ns is None else [namespace]
    if env.json:
        emit_json(env, {"catalog": catalog.name, "namespaces": namespaces, "tables": tables})
        return
    console = env.console()
    if not tables:
        console.print(f"no tables in catalog {catalog.name}" + (f" namespace {namespace}" if namespace else ""))
    for t in tables:
        console.print(t)


def register(app: typer.Typer) -> None:
    app.command("create")(create)
    app.command("list")(list_)
