"""Schema evolution rules in the spec's words ("Schema Evolution", "Identifier Field IDs",
"Default values") and the name and parent indexes that evolution works with.

Names follow Iceberg Java's ``IndexByName``: a field's full name joins its parents' names with
dots (``points.element.x``, ``m.value.y``); a struct inside a list or a map value also answers to
its short name (``points.x``, ``m.y``) when no full name is the same.
"""
from __future__ import annotations

from typing import Any, Iterable, Iterator

from icectl.spec.types import IcebergType, ListType, MapType, NestedField, PrimitiveType, StructType

# The v1/v2 promotions, then what v3 adds (spec "Schema Evolution"; v1-to-v4 walk-through, v3).
PROMOTIONS = "int to long, float to double, decimal(P, S) to decimal(P', S) with P' > P"
V3_PROMOTIONS = "unknown to any primitive type, date to timestamp or timestamp_ns"


# -- indexes ----------------------------------------------------------------------------------------

def _children(t: IcebergType) -> list[tuple[NestedField, bool]]:
    """The child fields of a nested type, each with whether it is a list element or map value
    whose struct type is skipped in short names."""
    if isinstance(t, StructType):
        return [(f, False) for f in t.fields]
    if isinstance(t, ListType):
        return [(t.element_field, True)]
    if isinstance(t, MapType):
        return [(t.key_field, False), (t.value_field, True)]
    return []


def walk_names(t: IcebergType, full: tuple[str, ...], short: tuple[str, ...]) -> Iterator[tuple[str, str, NestedField]]:
    for f, element_or_value in _children(t):
        f_full = full + (f.name,)
        skip = element_or_value and isinstance(f.field_type, StructType)
        f_short = short if skip else short + (f.name,)
        yield ".".join(f_full), ".".join(short + (f.name,)), f
        yield from walk_names(f.field_type, f_full, f_short)


def index_by_name(struct: StructType) -> dict[str, int]:
    """Every field's full name, and the short names that no full name shadows, to its id."""
    full: dict[str, int] = {}
    short: dict[str, int] = {}
    for full_name, short_name, f in walk_names(struct, (), ()):
        full[full_name] = f.field_id
        short.setdefault(short_name, f.field_id)
    return {**{k: v for k, v in short.items() if k not in full}, **full}


def column_names(struct: StructType) -> dict[int, str]:
    """Every field id to its full name."""
    return {f.field_id: name for name, _, f in walk_names(struct, (), ())}


def index_by_id(struct: StructType) -> dict[int, NestedField]:
    return {f.field_id: f for _, _, f in walk_names(struct, (), ())}


def index_parents(struct: StructType) -> dict[int, int]:
    """Every nested field id to the id of the field that holds it (a struct field, a list, a map,
    or a list element or map value whose type is a struct)."""
    out: dict[int, int] = {}

    def visit(t: IcebergType, parent: int | None) -> None:
        for f, _ in _children(t):
            if parent is not None:
                out[f.field_id] = parent
            visit(f.field_type, f.field_id)

    visit(struct, None)
    return out


# -- Java's hash set iteration order ----------------------------------------------------------------

def _java_string_hash(s: str) -> int:
    data = s.encode("utf-16-be")  # Java hashes UTF-16 code units
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h


def java_hash_set_order(items: Iterable[Any], *, presized: bool = False) -> list[Any]:
    """``items`` (ints or strs, in insertion order) in the order a ``java.util.HashSet`` iterates
    them: by bucket, then by insertion. Iceberg Java keeps identifier field ids in such a set, so
    the order of a schema's ``identifier-field-ids`` is this one. ``presized``: built with
    ``new HashSet(collection)`` rather than by adding one at a time."""
    seen: list[Any] = []
    for x in items:
        if x not in seen:
            seen.append(x)
    n = len(seen)
    cap = 16
    if presized:
        want = max(int(n / 0.75) + 1, 16)
        while cap < want:
            cap *= 2
    else:
        while n > cap * 0.75:
            cap *= 2

    def bucket(x: Any) -> int:
        h = _java_string_hash(x) if isinstance(x, str) else x & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (cap - 1)

    return sorted(seen, key=lambda x: (bucket(x), seen.index(x)))


# -- rules ------------------------------------------------------------------------------------------

def promotion_error(name: str, old: IcebergType, new: IcebergType, format_version: int) -> str | None:
    """Why ``old`` cannot be promoted to ``new`` in a table of ``format_version`` (None when it can)."""
    if old == new:
        return None
    why = f"cannot change {name} from {old} to {new}: "
    if not isinstance(new, PrimitiveType):
        return why + "a column's type can only be promoted to a primitive type"
    if not isinstance(old, PrimitiveType):
        return why + f"{old} is not a primitive type; the spec promotes only {PROMOTIONS}"
    a, b = old.base, new.base
    if (a, b) in (("int", "long"), ("float", "double")):
        return None
    if a == b == "decimal":
        if old.scale != new.scale:
            return why + "a decimal's scale cannot change (the spec widens only its precision)"
        if new.precision < old.precision:
            return why + "a decimal's precision can only be widened"
        return None
    v3 = a == "unknown" or (a == "date" and b in ("timestamp", "timestamp_ns"))
    if v3 and format_version >= 3:
        return None
    if v3:
        return why + f"{V3_PROMOTIONS} needs format version 3 (this table is v{format_version})"
    allowed = PROMOTIONS + (f", and from v3 {V3_PROMOTIONS}" if format_version >= 3 else "")
    return why + f"the spec allows only {allowed}"


def partition_promotion_error(name: str, old: PrimitiveType, new: PrimitiveType,
                              transforms: Iterable[str]) -> str | None:
    """The spec refuses a promotion of a partition source when its transform would give other
    partition values afterwards: ``date`` to a timestamp changes ``identity`` values (their type)
    and ``bucket`` hashes (days are hashed, then microseconds)."""
    if old.base != "date" or not new.base.startswith("timestamp"):
        return None
    for t in transforms:
        base = t.split("[")[0].lower()
        if base in ("identity", "bucket"):
            return (f"cannot change {name} from {old} to {new}: it is the source of a {t} partition field, whose "
                    f"values would change with the type")
    return None


def identifier_field_error(field_id: int, struct: StructType) -> str | None:
    """Why a field cannot be an identifier field (spec "Identifier Field IDs": a required primitive,
    not float or double, not inside a list or map, not nested in an optional struct)."""
    by_id = index_by_id(struct)
    parents = index_parents(struct)
    f = by_id.get(field_id)
    if f is None:
        return f"field {field_id} does not exist"
    name = column_names(struct).get(field_id, f.name)
    if not isinstance(f.field_type, PrimitiveType):
        return f"{name} cannot be an identifier field: it is not a primitive type"
    if not f.required:
        return f"{name} cannot be an identifier field: it is optional (identifier fields must be required)"
    if f.field_type.base in ("float", "double"):
        return f"{name} cannot be an identifier field: it is {f.field_type} (float and double are not allowed)"
    chain = []
    p = parents.get(field_id)
    while p is not None:
        chain.append(p)
        p = parents.get(p)
    for pid in reversed(chain):
        parent = by_id[pid]
        if not isinstance(parent.field_type, StructType):
            return f"{name} cannot be an identifier field: it is nested in a {parent.field_type} ({parent.name})"
        if not parent.required:
            return f"{name} cannot be an identifier field: it is nested in the optional struct {parent.name}"
    return None
