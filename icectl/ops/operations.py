"""Table-level operations that the CLI calls: each takes a catalog or table and returns a table
or a plain result. Planning functions of later commands live in their own modules.
"""
from __future__ import annotations

from icectl.catalog.base import Catalog, Identifier
from icectl.ops.create import (
    load_schema_argument,
    new_table_metadata,
    parse_partition_spec,
    parse_properties,
    parse_sort_order,
)
from icectl.table.loaded import Table, read_metadata_file
from icectl.errors import UsageError
from icectl.io import has_scheme


def check_create_arguments(*, schema_text: str, partition_by: str | None = None, sort_by: str | None = None,
                           properties: list[str] | dict[str, str] | None = None, format_version: int = 2) -> None:
    """Raise what :func:`create_table` would raise for bad arguments, without a catalog, so a
    create that fails on its arguments opens (and so creates) no catalog database or folder."""
    schema = load_schema_argument(schema_text)
    spec = parse_partition_spec(partition_by, schema)
    order = parse_sort_order(sort_by, schema)
    props = properties if isinstance(properties, dict) else parse_properties(properties)
    new_table_metadata(schema=schema, spec=spec, sort_order=order, location="unchecked://location",
                       properties=props, format_version=format_version)


def create_table(catalog: Catalog, ident: Identifier, *, schema_text: str, partition_by: str | None = None,
                 sort_by: str | None = None, properties: list[str] | dict[str, str] | None = None,
                 format_version: int = 2, location: str | None = None, created_ms: int | None = None) -> Table:
    """Create a table from the compact schema form (or a schema JSON file) and expressions;
    ``created_ms`` is its first ``last-updated-ms`` (default: now)."""
    import os

    if catalog.read_only:
        raise UsageError("cannot create a table through a path: configure a catalog")
    schema = load_schema_argument(schema_text)
    spec = parse_partition_spec(partition_by, schema)
    order = parse_sort_order(sort_by, schema)
    props = properties if isinstance(properties, dict) else parse_properties(properties)
    if location is not None and not has_scheme(location):
        location = os.path.abspath(os.path.expanduser(location))
    table_location = (location or catalog.default_table_location(ident)).rstrip("/")
    md = new_table_metadata(schema=schema, spec=spec, sort_order=order, location=table_location,
                            properties=props, format_version=format_version, last_updated_ms=created_ms)
    metadata_location = catalog.create_table(ident, table_location=table_location, metadata=md.to_bytes(),
                                             format_version=format_version)
    return Table(ident, read_metadata_file(catalog.io, metadata_location), metadata_location, catalog)
