"""Creating a table: the first metadata of each format version, from a schema (the compact form
of :mod:`icectl.expr.schema`, or a schema JSON file), a partition spec and a sort order (the
grammars of :mod:`icectl.expr`).
"""
from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass, field

from icectl.expr.pairs import parse_properties
from icectl.expr.partition import partition_spec
from icectl.expr.schema import parse_schema
from icectl.expr.sort import sort_order
from icectl.catalog.base import Catalog
from icectl.spec.metadata import MAX_FORMAT_VERSION, TableMetadata
from icectl.spec.partitioning import PartitionSpec, SortOrder
from icectl.spec.properties import check_setting
from icectl.spec.types import Schema, schema_from_json
from icectl.errors import (AlreadyExistsError, IcectlError, InvalidMetadataError, NoSuchTableError, UnsupportedError,
                           UsageError)
from icectl.io import has_scheme
from icectl.table.builder import apply_updates
from icectl.table.identifier import Identifier, ident_str
from icectl.table.loaded import Table
from icectl.table.requirements import AssertCreate, TableRequirement
from icectl.table.transaction import Transaction
from icectl.table.updates import (
    LAST_ADDED,
    AddSchema,
    AddSortOrder,
    AddSpec,
    AssignUUID,
    SetCurrentSchema,
    SetDefaultSortOrder,
    SetDefaultSpec,
    SetLocation,
    SetProperties,
    TableUpdate,
    UpgradeFormatVersion,
    updates_json,
)


def load_schema_argument(text: str) -> Schema:
    """A compact schema string, or the path of an Iceberg schema JSON file (``@file`` or a .json)."""
    path = text[1:] if text.startswith("@") else text
    if text.startswith("@") or path.endswith(".json"):
        try:
            with open(path) as f:
                obj = json.load(f)
        except FileNotFoundError:
            raise UsageError(f"schema file not found: {path}") from None
        except ValueError as e:
            raise UsageError(f"{path}: malformed JSON: {e}") from None
        try:
            schema = schema_from_json(obj)
        except InvalidMetadataError as e:
            raise UsageError(f"{path}: {e.message}") from None
        return Schema(schema.fields, 0, schema.identifier_field_ids, schema.extra)
    return parse_schema(text)


# -- the first metadata ------------------------------------------------------------------------------

def create_updates(*, schema: Schema, spec: PartitionSpec, sort_order: SortOrder, location: str | None,
                   properties: dict[str, str], format_version: int) -> list[TableUpdate]:
    """The updates that create a table, in the order Iceberg Java's ``newTableMetadata`` records
    them (a REST create transaction sends these after ``assert-create``)."""
    if format_version not in range(1, MAX_FORMAT_VERSION + 1):
        raise UsageError(f"format version must be 1 to {MAX_FORMAT_VERSION}, not {format_version}")
    if location is None and format_version < 4:
        raise IcectlError("a table location is required")
    for k, v in properties.items():
        check_setting(k, v)
    updates: list[TableUpdate] = [
        AssignUUID(str(uuid.uuid4())),
        UpgradeFormatVersion(format_version),
        AddSchema(schema, schema.highest_field_id),
        SetCurrentSchema(LAST_ADDED),
        AddSpec(spec),
        SetDefaultSpec(LAST_ADDED),
        AddSortOrder(sort_order),
        SetDefaultSortOrder(LAST_ADDED),
    ]
    if location is not None:
        updates.append(SetLocation(location.rstrip("/")))
    if properties:
        updates.append(SetProperties(dict(properties)))
    return updates


@dataclass
class CreatePlan:
    """What ``create`` would write: the updates, and the first metadata they give."""

    identifier: Identifier
    location: str | None  # the table location (None only for a v4 table without one)
    updates: list[TableUpdate]
    metadata: TableMetadata
    requirements: list[TableRequirement] = field(default_factory=lambda: [AssertCreate()])

    def commit_json(self) -> dict[str, list]:
        return {"requirements": [r.to_json() for r in self.requirements],
                "updates": updates_json(self.updates, self.metadata.format_version)}


def check_create_arguments(*, schema_text: str, partition_by: str | None = None, sort_by: str | None = None,
                           properties: list[str] | dict[str, str] | None = None, format_version: int = 2) -> None:
    """Raise what :func:`plan_create` would raise for bad arguments, without a catalog, so a
    create that fails on its arguments opens (and so creates) no catalog database or folder."""
    _plan(None, ("unchecked", "table"), schema_text=schema_text, partition_by=partition_by, sort_by=sort_by,
          properties=properties, format_version=format_version, location="unchecked://location")


def existing_metadata_location(catalog: Catalog, ident: Identifier) -> str | None:
    """The current metadata file of table ``ident`` in ``catalog``; None when there is no such
    table (before creating or registering one)."""
    try:
        return catalog.load_metadata_location(ident)
    except NoSuchTableError:
        return None


def plan_create(catalog: Catalog, ident: Identifier, *, schema_text: str, partition_by: str | None = None,
                sort_by: str | None = None, properties: list[str] | dict[str, str] | None = None,
                format_version: int = 2, location: str | None = None, created_ms: int | None = None) -> CreatePlan:
    """Check the arguments and the catalog and build the first metadata, writing nothing: neither
    the catalog database nor the table folder is created (a SQLite catalog is created by its first
    write, and a missing one holds no table). ``created_ms``: the first ``last-updated-ms``."""
    if catalog.read_only:
        raise UsageError("cannot create a table through a path: configure a catalog")
    check_create_arguments(schema_text=schema_text, partition_by=partition_by, sort_by=sort_by,
                           properties=properties, format_version=format_version)
    if location is not None and not has_scheme(location):
        location = os.path.abspath(os.path.expanduser(location))
    table_location = (location or catalog.default_table_location(ident)).rstrip("/")
    if format_version >= 4 and not catalog.supports_v4:
        raise UnsupportedError(f"a {catalog.kind} catalog cannot hold a format version 4 table (v4 requires a "
                               "metastore catalog)", hint="create it in a SQL catalog (e.g. --uri sqlite:///catalog.db); "
                               "an existing table moves to one with icectl register")
    if existing_metadata_location(catalog, ident) is not None:
        raise AlreadyExistsError(f"table {ident_str(ident)} already exists in catalog {catalog.name}")
    return _plan(catalog, ident, schema_text=schema_text, partition_by=partition_by, sort_by=sort_by,
                 properties=properties, format_version=format_version, location=table_location, created_ms=created_ms)


def _plan(catalog: Catalog | None, ident: Identifier, *, schema_text: str, partition_by: str | None,
          sort_by: str | None, properties: list[str] | dict[str, str] | None, format_version: int,
          location: str | None, created_ms: int | None = None) -> CreatePlan:
    schema = load_schema_argument(schema_text)
    spec = partition_spec(partition_by, schema)
    order = sort_order(sort_by, schema)
    props = properties if isinstance(properties, dict) else parse_properties(properties)
    updates = create_updates(schema=schema, spec=spec, sort_order=order, location=location, properties=props,
                             format_version=format_version)
    md = apply_updates(None, updates, now_ms=created_ms)
    return CreatePlan(ident, md.location, updates, md)


def apply_create(catalog: Catalog, plan: CreatePlan, *, now_ms: int | None = None) -> Table:
    """Commit the planned updates with ``assert-create`` (the catalog checks again that the name
    is free: a create that raced with another fails with AlreadyExistsError)."""
    txn = Transaction.create(catalog, plan.identifier, now_ms=now_ms).stage(plan.updates).require(plan.requirements)
    return txn.commit().table
