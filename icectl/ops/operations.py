"""Table-level operations that the CLI calls: each takes a catalog or table and returns a table
or a plain result. Planning functions of later commands live in their own modules.
"""
from __future__ import annotations

from dataclasses import dataclass

from icectl.catalog.base import Catalog, Identifier, ident_str
from icectl.ops.create import (
    load_schema_argument,
    new_table_metadata,
    parse_partition_spec,
    parse_properties,
    parse_sort_order,
)
from icectl.spec.metadata import TableMetadata
from icectl.table.loaded import Table, read_metadata_file
from icectl.errors import AlreadyExistsError, NoSuchTableError, UnsupportedError, UsageError
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


@dataclass
class CreatePlan:
    """What ``create`` would write: the first metadata of the table, at its location."""

    identifier: Identifier
    location: str | None  # the table location (None only for a v4 table without one)
    metadata: TableMetadata


def plan_create(catalog: Catalog, ident: Identifier, *, schema_text: str, partition_by: str | None = None,
                sort_by: str | None = None, properties: list[str] | dict[str, str] | None = None,
                format_version: int = 2, location: str | None = None, created_ms: int | None = None) -> CreatePlan:
    """Check the arguments and the catalog and build the first metadata, writing nothing: neither
    the catalog database nor the table folder is created (a SQLite catalog is created by its first
    write, and a missing one holds no table). ``created_ms`` is the first ``last-updated-ms``
    (default: now)."""
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
    if format_version >= 4 and not catalog.supports_v4:
        raise UnsupportedError(f"a {catalog.kind} catalog cannot hold a format version 4 table (v4 requires a "
                               f"metastore catalog)", hint="create it in a SQL catalog (e.g. --uri sqlite:///catalog.db); an "
                               "existing table moves to one with icectl register")
    try:
        catalog.load_metadata_location(ident)
    except NoSuchTableError:
        pass
    else:
        raise AlreadyExistsError(f"table {ident_str(ident)} already exists in catalog {catalog.name}")
    return CreatePlan(ident, md.location, md)


def apply_create(catalog: Catalog, plan: CreatePlan) -> Table:
    """Write the planned metadata and register the table (the catalog checks again that the name
    is free: a create that raced with another fails with AlreadyExistsError)."""
    md = plan.metadata
    metadata_location = catalog.create_table(plan.identifier, table_location=plan.location or "",
                                             metadata=md.to_bytes(), format_version=md.format_version)
    return Table(plan.identifier, read_metadata_file(catalog.io, metadata_location), metadata_location, catalog)


def create_table(catalog: Catalog, ident: Identifier, *, schema_text: str, partition_by: str | None = None,
                 sort_by: str | None = None, properties: list[str] | dict[str, str] | None = None,
                 format_version: int = 2, location: str | None = None, created_ms: int | None = None) -> Table:
    """Create a table from the compact schema form (or a schema JSON file) and expressions;
    ``created_ms`` is its first ``last-updated-ms`` (default: now)."""
    return apply_create(catalog, plan_create(catalog, ident, schema_text=schema_text, partition_by=partition_by,
                                             sort_by=sort_by, properties=properties, format_version=format_version,
                                             location=location, created_ms=created_ms))
