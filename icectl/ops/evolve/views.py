"""Dropping a view: its catalog entry goes. SQL and Hive catalogs keep its metadata files (a view
has no data, and another catalog may point at them), where Iceberg Java's ``dropView`` deletes the
current one; over REST the server decides (Iceberg Java's server deletes it)."""
from __future__ import annotations

from dataclasses import dataclass, field

from icectl.catalog.base import Catalog, Identifier
from icectl.ops.catalogs import LoadedView


@dataclass
class ViewDropPlan:
    """The view to drop and where its metadata is (kept)."""

    view: str
    identifier: Identifier = field(repr=False)
    catalog: str
    catalog_kind: str
    location: str
    metadata_location: str


def plan_drop_view(catalog: Catalog, view: LoadedView) -> ViewDropPlan:
    return ViewDropPlan(view.name, view.identifier, catalog.name, catalog.kind, view.state.metadata.location,
                        view.state.metadata_location)


def apply_drop_view(catalog: Catalog, plan: ViewDropPlan) -> None:
    catalog.drop_view(plan.identifier)
