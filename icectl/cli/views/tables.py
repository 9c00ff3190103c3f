"""What ``create`` and ``list`` print."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from icectl.cli.context import Env
from icectl.cli.output import SpecJson, print_kv, print_table, say, text_renderer
from icectl.cli.views.common import print_schema, print_specs_and_orders

if TYPE_CHECKING:
    from icectl.spec.metadata import TableMetadata


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
    # The commit sent (or to send): assert-create and the updates that create the table.
    commits: list[dict] = field(default_factory=list)

    @classmethod
    def of(cls, name: str, md: TableMetadata, metadata_location: str | None, *, dry_run: bool = False,
           commit: dict | None = None) -> "Created":
        applied = metadata_location is not None
        return cls(name, md.location, metadata_location, md.format_version, md.table_uuid if applied else None,
                   md.schema.to_json(), md.spec.to_json(md.format_version), md.sort_order.to_json(),
                   dict(md.properties), dry_run, applied, md, [commit] if commit else [])


@text_renderer(Created)
def _created_text(env: Env, c: Created) -> None:
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
    # Which catalog was read and where its configuration came from (text only: an empty listing
    # says it, so that an unexpected catalog is seen).
    described: str | None = field(default=None, repr=False)
    views: list[str] = field(default_factory=list)  # Iceberg views, apart from the tables


@text_renderer(Listing)
def _listing_text(env: Env, listing: Listing) -> None:
    if not listing.namespaces and not listing.tables and not listing.views:
        say(env, f"no namespaces or tables in catalog {listing.described or listing.catalog}")
        return
    # Each namespace, then its tables, then its views: `icectl list | awk '$1 == "table" {print $2}'`
    # lists tables, `$1 == "view"` views.
    rows: list[list[str]] = []
    namespaces = sorted(set(listing.namespaces) | {t.rsplit(".", 1)[0] for t in listing.tables + listing.views})
    for ns in namespaces:
        rows.append(["namespace", ns])
        rows.extend(["table", t] for t in listing.tables if t.rsplit(".", 1)[0] == ns)
        rows.extend(["view", v] for v in listing.views if v.rsplit(".", 1)[0] == ns)
    views = f", {len(listing.views)} views" if listing.views else ""
    print_table(env, ["kind", "name"], rows, title=f"catalog {listing.catalog}: {len(listing.namespaces)} "
                f"namespaces, {len(listing.tables)} tables{views}")
