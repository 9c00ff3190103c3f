"""``register``: put an existing table metadata file into a catalog (for example a file-system
table into a SQL catalog before it is upgraded to format version 4)."""
from __future__ import annotations

import os
from dataclasses import dataclass

from icectl.catalog.base import Catalog, Identifier, ident_str
from icectl.table.loaded import Table, load_table, read_metadata_file
from icectl.errors import AlreadyExistsError, UnsupportedError
from icectl.ops.evolve.create import existing_metadata_location
from icectl.io import has_scheme


@dataclass
class RegisterPlan:
    table: str
    catalog: str
    metadata_location: str
    format_version: int
    location: str | None
    table_uuid: str | None
    snapshots: int
    current_snapshot_id: int | None


def plan_register(catalog: Catalog, ident: Identifier, metadata_location: str) -> RegisterPlan:
    """Check that ``metadata_location`` is a readable table metadata file this catalog can hold."""
    if not has_scheme(metadata_location):
        metadata_location = os.path.abspath(os.path.expanduser(metadata_location))
    if catalog.read_only or catalog.kind == "file-system":
        raise UnsupportedError(f"a {catalog.kind} catalog cannot register tables",
                               hint="register in a SQL catalog: icectl -c SQLCATALOG register ...")
    md = read_metadata_file(catalog.io, metadata_location)
    if md.format_version >= 4 and not catalog.supports_v4:
        raise UnsupportedError(f"format version 4 tables cannot live in a {catalog.kind} catalog")
    existing = existing_metadata_location(catalog, ident)
    if existing is not None:
        raise AlreadyExistsError(f"table {ident_str(ident)} already exists in catalog {catalog.name} "
                                 f"({existing})")
    return RegisterPlan(table=ident_str(ident), catalog=catalog.name, metadata_location=metadata_location,
                        format_version=md.format_version, location=md.location, table_uuid=md.table_uuid,
                        snapshots=len(md.snapshots), current_snapshot_id=md.current_snapshot_id)


def register_table(catalog: Catalog, ident: Identifier, plan: RegisterPlan) -> Table:
    catalog.register_table(ident, plan.metadata_location)
    return load_table(catalog, ident)
