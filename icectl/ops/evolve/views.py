"""Dropping a view: its catalog entry goes, its metadata files stay (as Iceberg Java's
``dropView``: a view has no data, and another catalog may have registered the same files)."""
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
