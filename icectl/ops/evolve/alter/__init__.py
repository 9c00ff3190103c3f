"""``icectl alter`` and ``icectl properties``: schema, partition spec, sort order and property
changes as one commit, with Iceberg Java's rules and ids (see :mod:`.plan`)."""
from __future__ import annotations

from icectl.ops.evolve.alter.plan import AlterPlan, AlterRequest, commit_alter, plan_alter, properties_request
from icectl.spec.evolution import column_names  # every field id to its full name, for the views

__all__ = ["AlterPlan", "AlterRequest", "column_names", "commit_alter", "plan_alter", "properties_request"]
