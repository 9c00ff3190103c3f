"""What a schema change also changes in the table properties, as Iceberg Java's SchemaUpdate does
after it applies the schema:

- ``schema.name-mapping.default`` (spec: "Column Projection", name mapping): a renamed field's
  mapping gains its new name (the old one stays, files still carry it), an added field gets a
  mapping of its own, and a name now taken by another field is removed from the old one;
- per-column properties (``write.metadata.metrics.column.C``,
  ``write.parquet.bloom-filter-enabled.column.C``, ``write.parquet.stats-enabled.column.C``)
  follow a renamed column and go with a dropped one.
"""
from __future__ import annotations

import json
from typing import Any

from icectl.spec.evolution import column_names
from icectl.spec.properties import COLUMN_PREFIXES as COLUMN_FAMILIES
from icectl.spec.properties import METRICS_COLUMN as METRICS_COLUMN_FAMILY
from icectl.spec.properties import NAME_MAPPING as NAME_MAPPING_PROPERTY
from icectl.spec.types import IcebergType, ListType, MapType, NestedField, Schema, StructType

NAME_MAPPING = NAME_MAPPING_PROPERTY.name
METRICS_COLUMN = METRICS_COLUMN_FAMILY.prefix
COLUMN_PREFIXES = tuple(f.prefix for f in COLUMN_FAMILIES)
ROOT = -1


def _create(t: IcebergType) -> list[dict[str, Any]] | None:
    """Java's MappingUtil.create for a type: a mapping per child field, by its own name."""
    if isinstance(t, StructType):
        children = list(t.fields)
    elif isinstance(t, ListType):
        children = [t.element_field]
    elif isinstance(t, MapType):
        children = [t.key_field, t.value_field]
    else:
        return None
    return [_mapped(f.field_id, [f.name], _create(f.field_type)) for f in children]


def _mapped(field_id: int | None, names: list[str], fields: list[dict[str, Any]] | None) -> dict[str, Any]:
    d: dict[str, Any] = {"names": names}
    if field_id is not None:
        d = {"field-id": field_id, "names": names}
    if fields:
        d["fields"] = fields
    return d


def _without_name(m: dict[str, Any], name: str) -> dict[str, Any]:
    return {**m, "names": [n for n in m.get("names", []) if n != name]}


def _remove_reassigned(m: dict[str, Any], assignments: dict[str, int]) -> dict[str, Any]:
    for name in list(m.get("names", [])):
        assigned = assignments.get(name)
        if assigned is not None and assigned != m.get("field-id"):
            m = _without_name(m, name)
    return m


def update_name_mapping(text: str, updates: dict[int, NestedField], adds: dict[int, list[int]]) -> str | None:
    """The mapping JSON after the change (Java's MappingUtil.update), or None when it cannot be
    read or updated (Java then keeps it as it was)."""
    try:
        mapping = json.loads(text)
        if not isinstance(mapping, list):
            return None

        def add_new(fields: list[dict[str, Any]] | None, parent: int) -> list[dict[str, Any]] | None:
            new = [updates[i] for i in adds.get(parent, [])]
            if not new:
                return fields
            new_fields = [_mapped(f.field_id, [f.name], _create(f.field_type)) for f in new]
            if not fields:
                return new_fields
            assignments = {f.name: f.field_id for f in new}
            return [_remove_reassigned(m, assignments) for m in fields] + new_fields

        def visit_fields(fields: list[dict[str, Any]]) -> list[dict[str, Any]]:
            results = [visit_field(m) for m in fields]
            assignments: dict[str, int] = {}
            for m in results:
                u = updates.get(m.get("field-id"))  # type: ignore[arg-type]
                if u is not None:
                    if u.name in assignments:
                        raise ValueError(f"duplicate name {u.name}")  # Java's ImmutableMap refuses it too
                    assignments[u.name] = u.field_id
            return [_remove_reassigned(m, assignments) for m in results]

        def visit_field(m: dict[str, Any]) -> dict[str, Any]:
            nested = visit_fields(m["fields"]) if m.get("fields") else m.get("fields")
            names = list(m.get("names", []))
            u = updates.get(m.get("field-id"))  # type: ignore[arg-type]
            if u is not None and u.name not in names:
                names.append(u.name)
            fid = m.get("field-id")
            nested = add_new(nested, fid) if fid is not None else nested
            return _mapped(fid, names, nested)

        out = add_new(visit_fields(mapping), ROOT)
        return json.dumps(out, separators=(",", ":"))
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def column_property_changes(properties: dict[str, str], old: Schema, new: Schema, *, deletes: list[int],
                            updates: dict[int, NestedField], added: set[int]) -> tuple[dict[str, str], set[str]]:
    """(properties to set, keys to remove) for per-column properties of renamed and dropped
    columns (Java's PropertyUtil.applySchemaChanges; as in Java, a column is renamed when its own
    name changed, not when a parent's did)."""
    old_names, new_names = column_names(old.as_struct), column_names(new.as_struct)
    deleted = {old_names[i] for i in deletes}
    renamed = {old_names[i]: new_names[i] for i in updates
               if i not in added and i in old_names and i in new_names and old_names[i] != new_names[i]}
    if not deleted and not renamed:
        return {}, set()
    new_props: dict[str, str] = {}
    for key, value in properties.items():
        prefix = next((p for p in COLUMN_PREFIXES if key.startswith(p)), None)
        if prefix is None:
            new_props[key] = value
            continue
        column = key[len(prefix):]
        if column in renamed:
            new_props[prefix + renamed[column]] = value
        elif column not in deleted:
            new_props[key] = value
    to_set = {k: v for k, v in new_props.items() if properties.get(k) != v}
    removed = {k for k in properties if k not in new_props}
    return to_set, removed
