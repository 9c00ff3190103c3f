"""What a schema, partition spec or sort order must satisfy before the metadata builder adds it
(Iceberg Java's ``Schema``/``PartitionSpec``/``SortOrder.checkCompatibility`` and the tests it uses to
reuse an existing id for an identical one). A violation is an :class:`InvalidUpdateError`."""
from __future__ import annotations

from icectl.errors import UsageError
from icectl.spec.partitioning import PARTITION_DATA_ID_START, PartitionSpec, SortOrder
from icectl.spec.types import ListType, MapType, PrimitiveType, Schema, StructType, type_min_version, walk_fields
from icectl.spec.evolution import index_by_name
from icectl.spec.transforms import parse_transform


class InvalidUpdateError(UsageError):
    """An update the table's format version or state does not allow (Java's ValidationException)."""


def same_schema(a: Schema, b: Schema) -> bool:
    """Java's Schema.sameSchema: the same struct and the same identifier fields (as a set)."""
    return a.fields == b.fields and set(a.identifier_field_ids) == set(b.identifier_field_ids)


def check_schema_version(schema: Schema, format_version: int) -> None:
    """Java's Schema.checkCompatibility: types and defaults of a later format version are refused."""
    need = type_min_version(schema.as_struct)
    if need > format_version:
        raise InvalidUpdateError(f"the schema uses types of format version {need} (variant, geometry, geography, "
                                 f"unknown, timestamp_ns) in a format version {format_version} table")
    if format_version < 3:
        for path, f in walk_fields(schema.fields):
            if f.has_initial_default and f.initial_default is not None:
                raise InvalidUpdateError(f"invalid initial default for {path}: non-null defaults need format "
                                         f"version 3")


def compatible_specs(a: PartitionSpec, b: PartitionSpec) -> bool:
    """Java's PartitionSpec.compatibleWith: the same fields (source, transform, name) in order."""
    if len(a.fields) != len(b.fields):
        return False
    return all(x.source_id == y.source_id and x.transform.lower() == y.transform.lower() and x.name == y.name
               for x, y in zip(a.fields, b.fields))


def sequential_ids(spec: PartitionSpec) -> bool:
    return all(f.field_id == PARTITION_DATA_ID_START + i for i, f in enumerate(spec.fields))


def _in_collections(schema: Schema) -> set[int]:
    """The field ids inside a list or a map (at any depth): not valid partition or sort sources,
    whose ancestors must all be structs."""
    out: set[int] = set()

    def walk(t: object, inside: bool) -> None:
        if isinstance(t, StructType):
            for f in t.fields:
                if inside:
                    out.add(f.field_id)
                walk(f.field_type, inside)
        elif isinstance(t, ListType):
            out.add(t.element_id)
            walk(t.element_type, True)
        elif isinstance(t, MapType):
            out.update((t.key_id, t.value_id))
            walk(t.key_type, True)
            walk(t.value_type, True)

    walk(schema.as_struct, False)
    return out


def _check_source(schema: Schema, source_id: int, *, transform: str, what: str) -> None:
    """Java's PartitionSpec/SortOrder.checkCompatibility for one source column."""
    if transform.lower() == "void":
        return  # a dropped v1 partition field: always compatible
    t = schema.find_type(source_id)
    if t is None:
        raise InvalidUpdateError(f"cannot find the source column {source_id} of {what} in the current schema")
    if not isinstance(t, PrimitiveType):
        raise InvalidUpdateError(f"invalid {what}: its source column {source_id} is not a primitive ({t})")
    if not parse_transform(transform).can_transform(t):
        raise InvalidUpdateError(f"invalid source type {t} for transform {transform} ({what})")
    if source_id in _in_collections(schema):
        raise InvalidUpdateError(f"invalid {what}: its source column {source_id} is inside a list or map")


def check_spec(spec: PartitionSpec, schema: Schema) -> None:
    for f in spec.fields:
        for src in (f.source_ids or (f.source_id,)):
            if len(f.source_ids) > 1:
                if schema.find_type(src) is None and f.transform.lower() != "void":
                    raise InvalidUpdateError(f"cannot find the source column {src} of partition field {f.name!r}")
                continue
            _check_source(schema, src, transform=f.transform, what=f"partition field {f.name!r}")


def check_partition_names(spec: PartitionSpec, schema: Schema) -> None:
    """Java's PartitionSpec.Builder.checkAndAddPartitionName, run whenever a spec is bound to a
    schema (added, or every spec when the current schema changes): a partition field may share
    its name only with its own source column, and a spec uses a name once."""
    names = index_by_name(schema.as_struct)
    seen: set[str] = set()
    for f in spec.fields:
        column = names.get(f.name)
        if column is not None and column != f.source_id:
            raise InvalidUpdateError(f"column {f.name} has the name of partition field {f.name} ({f.transform}) of spec "
                                     f"{spec.spec_id}, whose source is another column")
        if not f.name:
            raise InvalidUpdateError(f"a partition field of spec {spec.spec_id} has an empty name")
        if f.name in seen:
            raise InvalidUpdateError(f"partition field name {f.name} is used twice in spec {spec.spec_id}")
        seen.add(f.name)


def check_sort_order(order: SortOrder, schema: Schema) -> None:
    for f in order.fields:
        for src in (f.source_ids or (f.source_id,)):
            if len(f.source_ids) > 1:
                if schema.find_type(src) is None:
                    raise InvalidUpdateError(f"cannot find the source column {src} of a sort field")
                continue
            _check_source(schema, src, transform=f.transform, what="sort field")
