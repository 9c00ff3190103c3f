"""``icectl create`` and ``icectl list``."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from icectl.cli.context import Env
from icectl.cli.output import SpecJson, print_kv, print_table, render, say, text_renderer

if TYPE_CHECKING:
    from icectl.engine.metadata import TableMetadata


@dataclass
class Created:
    """The table ``create`` made, or would make (a dry run, or a plan it refused to apply)."""

    name: str
    location: str | None
    metadata_location: str | None  # None until created
    format_version: int
    table_uuid: str | None  # None until created
    schema: SpecJson
    partition_spec: SpecJson
    sort_order: SpecJson
    properties: dict[str, str]
    dry_run: bool
    applied: bool
    metadata: TableMetadata = field(repr=False)

    @classmethod
    def of(cls, name: str, md: TableMetadata, metadata_location: str | None, *, dry_run: bool = False) -> "Created":
        applied = metadata_location is not None
        return cls(name, md.location, metadata_location, md.format_version, md.table_uuid if applied else None,
                   md.schema.to_json(), md.spec.to_json(md.format_version), md.sort_order.to_json(),
                   dict(md.properties), dry_run, applied, md)


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
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation (for scripts, cron and "
                                      "Airflow).")] = False,
) -> None:
    """Create a table."""
    from icectl.catalog import parse_identifier
    from icectl.cli.confirm import confirm_plan
    from icectl.engine.operations import apply_create, plan_create

    env: Env = ctx.obj
    ident = parse_identifier(table)
    catalog = env.get_catalog()  # SQLite catalogs are created by their first write, not here
    plan = plan_create(catalog, ident, schema_text=schema, partition_by=partition_by, sort_by=sort_by,
                       properties=prop or [], format_version=format_version, location=location)
    name = ".".join(ident)
    if dry_run:
        render(env, Created.of(name, plan.metadata, None, dry_run=True))
        return
    confirm_plan(env, Created.of(name, plan.metadata, None), f"Create table {name}?", yes=yes,
                 action="create the table")
    t = apply_create(catalog, plan)
    render(env, Created.of(t.name, t.metadata, t.metadata_location))


@text_renderer(Created)
def _created_text(env: Env, c: Created) -> None:
    from icectl.cli.render import print_schema, print_specs_and_orders

    if c.applied:  # the plan was printed before
        say(env, f"created {c.name} (format version {c.format_version}): metadata {c.metadata_location}, "
                 f"uuid {c.table_uuid}")
        return
    say(env, f"{c.name}: table to create, format version {c.format_version}"
             + (" (dry run: nothing written)" if c.dry_run else ""))
    print_kv(env, [("location", c.location)])
    print_schema(env, c.metadata.schema)
    print_specs_and_orders(env, c.metadata)
    if c.properties:
        print_kv(env, sorted(c.properties.items()), title="Properties")


@dataclass
class Listing:
    """The namespaces and tables of a catalog (or of one namespace)."""

    catalog: str
    namespaces: list[str]
    tables: list[str]


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
    render(env, Listing(catalog.name, namespaces, tables))


@text_renderer(Listing)
def _listing_text(env: Env, listing: Listing) -> None:
    if not listing.namespaces and not listing.tables:
        say(env, f"no namespaces or tables in catalog {listing.catalog}")
        return
    # Each namespace, then its tables: `icectl list | awk '$1 == "table" {print $2}'` lists tables.
    rows: list[list[str]] = []
    namespaces = sorted(set(listing.namespaces) | {t.rsplit(".", 1)[0] for t in listing.tables})
    for ns in namespaces:
        rows.append(["namespace", ns])
        rows.extend(["table", t] for t in listing.tables if t.rsplit(".", 1)[0] == ns)
    print_table(env, ["kind", "name"], rows, title=f"catalog {listing.catalog}: {len(listing.namespaces)} "
                f"namespaces, {len(listing.tables)} tables")


def register(app: typer.Typer) -> None:
    app.command("create")(create)
    app.command("list")(list_)
