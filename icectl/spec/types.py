"""Schemas and data types (spec: "Schemas and Data Types", Appendix C "Schemas").

Types are immutable values. Primitive types serialize to their JSON string form
(``"long"``, ``"decimal(9,2)"``, ``"fixed[16]"``, ``"geometry(srid:4326)"``); nested types
to the JSON objects of Appendix C. Unknown keys on schemas and fields are kept so a rewrite
does not drop what a newer writer put there.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterator

from icectl.errors import InvalidMetadataError


INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1


def json_long(v: Any, what: str) -> int:
    """A JSON number where the spec wants a long: an integer within 64 bits, as Iceberg Java's
    ``JsonUtil.getLong`` requires (a string, a fraction, a boolean or 2**70 is invalid metadata)."""
    return _json_integer(v, what, (LONG_MIN, LONG_MAX), "a long")


def json_int(v: Any, what: str) -> int:
    """A JSON number where the spec wants an int: an integer within 32 bits (``JsonUtil.getInt``)."""
    return _json_integer(v, what, (INT_MIN, INT_MAX), "an int")


def _json_integer(v: Any, what: str, bounds: tuple[int, int], kind: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        shown = repr(v)
        raise InvalidMetadataError(f"{what} must be {kind} (an integer), not "
                                   f"{shown if len(shown) <= 40 else shown[:37] + '...'}")
    if not bounds[0] <= v <= bounds[1]:
        raise InvalidMetadataError(f"{what} is out of range for {kind}: {v if abs(v) < 10 ** 30 else f'about 2**{v.bit_length()}'}")
    return v


class IcebergType:
    """Base of every Iceberg type."""

    is_primitive = False

    def to_json(self) -> Any:  # pragma: no cover - overridden
        raise TypeError(type(self).__name__)


@dataclass(frozen=True)
class PrimitiveType(IcebergType):
    """A primitive type, named as in the spec (``int``, ``decimal(P,S)``, ``fixed[L]``...)."""

    name: str
    is_primitive = True

    def to_json(self) -> str:
        return self.name

    def __str__(self) -> str:
        return self.name

    # Convenience accessors for parameterised types.
    @property
    def base(self) -> str:
        return base_type(self.name)

    @property
    def precision(self) -> int:
        return _decimal_params(self.name)[0]

    @property
    def scale(self) -> int:
        return _decimal_params(self.name)[1]

    @property
    def length(self) -> int:
        m = _FIXED.fullmatch(self.name)
        if not m:
            raise TypeError(f"{self.name} has no length")
        return int(m.group(1))


SIMPLE_PRIMITIVES = (
    "boolean", "int", "long", "float", "double", "date", "time", "timestamp", "timestamptz",
    "timestamp_ns", "timestamptz_ns", "string", "uuid", "binary", "unknown", "variant",
)
# Types added by format version 3 (spec "Schemas and Data Types": "Added by version").
V3_TYPES = ("timestamp_ns", "timestamptz_ns", "unknown", "variant", "geometry", "geography")

_DECIMAL = re.compile(r"decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)")
_FIXED = re.compile(r"fixed\[\s*(\d+)\s*\]")
_GEOMETRY = re.compile(r"geometry(?:\(\s*([^)]*?)\s*\))?")
_GEOGRAPHY = re.compile(r"geography(?:\(\s*([^,)]*?)\s*(?:,\s*([^)]*?)\s*)?\))?")


def _decimal_params(name: str) -> tuple[int, int]:
    m = _DECIMAL.fullmatch(name)
    if not m:
        raise TypeError(f"{name} is not a decimal")
    return int(m.group(1)), int(m.group(2))


def base_type(name: str) -> str:
    """The type name without its parameters: ``decimal(9, 2)`` -> ``decimal``, ``fixed[16]`` -> ``fixed``."""
    return name.split("(")[0].split("[")[0]


def primitive(name: str) -> PrimitiveType:
    """Parse a primitive type string, normalising its spelling; raise on an unknown type."""
    s = name.strip().lower()
    if s in SIMPLE_PRIMITIVES:
        return PrimitiveType(s)
    m = _DECIMAL.fullmatch(s)
    if m:
        p, sc = int(m.group(1)), int(m.group(2))
        if not 1 <= p <= 38 or sc > p:
            raise InvalidMetadataError(f"invalid decimal type {name!r}: precision must be 1..38 and scale <= precision")
        return PrimitiveType(f"decimal({p}, {sc})")
    m = _FIXED.fullmatch(s)
    if m:
        return PrimitiveType(f"fixed[{int(m.group(1))}]")
    m = _GEOMETRY.fullmatch(name.strip())
    if m and name.strip().lower().startswith("geometry"):
        crs = m.group(1)
        return PrimitiveType(f"geometry({crs})" if crs and crs != "OGC:CRS84" else "geometry")
    m = _GEOGRAPHY.fullmatch(name.strip())
    if m and name.strip().lower().startswith("geography"):
        crs, algo = m.group(1), m.group(2)
        if algo:
            return PrimitiveType(f"geography({crs or 'OGC:CRS84'}, {algo.lower()})")
        return PrimitiveType(f"geography({crs})" if crs and crs != "OGC:CRS84" else "geography")
    raise InvalidMetadataError(f"unknown type {name!r}")


@dataclass(frozen=True)
class NestedField:
    """A struct field, list element or map key/value: id, name, type, required, defaults."""

    field_id: int
    name: str
    field_type: IcebergType
    required: bool = False
    doc: str | None = None
    initial_default: Any = None
    write_default: Any = None
    has_initial_default: bool = False
    has_write_default: bool = False
    extra: tuple[tuple[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.field_id, "name": self.name, "required": self.required,
                             "type": self.field_type.to_json()}
        if self.doc is not None:
            d["doc"] = self.doc
        if self.has_initial_default:
            d["initial-default"] = self.initial_default
        if self.has_write_default:
            d["write-default"] = self.write_default
        for k, v in self.extra:
            d.setdefault(k, v)
        return d


@dataclass(frozen=True)
class StructType(IcebergType):
    fields: tuple[NestedField, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"type": "struct", "fields": [f.to_json() for f in self.fields]}

    def field(self, field_id: int) -> NestedField | None:
        for f in self.fields:
            if f.field_id == field_id:
                return f
        return None

    def __str__(self) -> str:
        return "struct<" + ", ".join(f"{f.name}: {f.field_type}" for f in self.fields) + ">"


@dataclass(frozen=True)
class ListType(IcebergType):
    element_id: int
    element_type: IcebergType
    element_required: bool = False

    @property
    def element_field(self) -> NestedField:
        return NestedField(self.element_id, "element", self.element_type, self.element_required)

    def to_json(self) -> dict[str, Any]:
        return {"type": "list", "element-id": self.element_id, "element": self.element_type.to_json(),
                "element-required": self.element_required}

    def __str__(self) -> str:
        return f"list<{self.element_type}>"


@dataclass(frozen=True)
class MapType(IcebergType):
    key_id: int
    key_type: IcebergType
    value_id: int
    value_type: IcebergType
    value_required: bool = False

    @property
    def key_field(self) -> NestedField:
        return NestedField(self.key_id, "key", self.key_type, True)

    @property
    def value_field(self) -> NestedField:
        return NestedField(self.value_id, "value", self.value_type, self.value_required)

    def to_json(self) -> dict[str, Any]:
        return {"type": "map", "key-id": self.key_id, "key": self.key_type.to_json(),
                "value-id": self.value_id, "value": self.value_type.to_json(),
                "value-required": self.value_required}

    def __str__(self) -> str:
        return f"map<{self.key_type}, {self.value_type}>"


@dataclass(frozen=True)
class Schema:
    """A table schema: a struct with a schema id and identifier fields."""

    fields: tuple[NestedField, ...]
    schema_id: int = 0
    identifier_field_ids: tuple[int, ...] = ()
    extra: tuple[tuple[str, Any], ...] = ()
    _index: dict[int, NestedField] = field(default=None, compare=False, repr=False)  # type: ignore[assignment]
    _names: dict[int, str] = field(default=None, compare=False, repr=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        index: dict[int, NestedField] = {}
        names: dict[int, str] = {}
        for path, f in walk_fields(self.fields):
            index[f.field_id] = f
            names[f.field_id] = path
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_names", names)

    @property
    def as_struct(self) -> StructType:
        return StructType(self.fields)

    def find_field(self, field_id: int) -> NestedField | None:
        return self._index.get(field_id)

    def find_type(self, field_id: int) -> IcebergType | None:
        f = self._index.get(field_id)
        return f.field_type if f else None

    def column_name(self, field_id: int) -> str | None:
        return self._names.get(field_id)

    def field_by_name(self, name: str, *, case_sensitive: bool = False) -> NestedField | None:
        for fid, n in self._names.items():
            if n == name or (not case_sensitive and n.lower() == name.lower()):
                return self._index[fid]
        return None

    def all_field_ids(self) -> list[int]:
        return list(self._index)

    @property
    def highest_field_id(self) -> int:
        return max(self._index, default=0)

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"type": "struct", "schema-id": self.schema_id}
        if self.identifier_field_ids:
            d["identifier-field-ids"] = list(self.identifier_field_ids)
        d["fields"] = [f.to_json() for f in self.fields]
        for k, v in self.extra:
            d.setdefault(k, v)
        return d


def walk_fields(fields: tuple[NestedField, ...], prefix: str = "") -> Iterator[tuple[str, NestedField]]:
    """Every field, depth first, with its dotted name (list elements and map keys/values too)."""
    for f in fields:
        path = f"{prefix}{f.name}"
        yield path, f
        yield from _walk_type(f.field_type, path + ".")


def _walk_type(t: IcebergType, prefix: str) -> Iterator[tuple[str, NestedField]]:
    if isinstance(t, StructType):
        yield from walk_fields(t.fields, prefix)
    elif isinstance(t, ListType):
        ef = t.element_field
        yield prefix + "element", ef
        yield from _walk_type(t.element_type, prefix + "element.")
    elif isinstance(t, MapType):
        yield prefix + "key", t.key_field
        yield from _walk_type(t.key_type, prefix + "key.")
        yield prefix + "value", t.value_field
        yield from _walk_type(t.value_type, prefix + "value.")


# ---------------------------------------------------------------------------------------------
# JSON (Appendix C)

_FIELD_KEYS = {"id", "name", "required", "type", "doc", "initial-default", "write-default"}
_SCHEMA_KEYS = {"type", "schema-id", "identifier-field-ids", "fields"}


def type_label(t: IcebergType) -> str:
    """A field's type in one word: ``struct``, ``list``, ``map``, or the primitive's name."""
    if isinstance(t, StructType):
        return "struct"
    if isinstance(t, ListType):
        return "list"
    if isinstance(t, MapType):
        return "map"
    return str(t)


def type_from_json(obj: Any) -> IcebergType:
    if isinstance(obj, str):
        return primitive(obj)
    if not isinstance(obj, dict):
        raise InvalidMetadataError(f"invalid type {obj!r}")
    kind = obj.get("type")
    try:
        if kind == "struct":
            return StructType(tuple(field_from_json(f) for f in obj.get("fields", [])))
        if kind == "list":
            return ListType(json_int(obj["element-id"], "list element-id"), type_from_json(obj["element"]),
                            bool(obj.get("element-required", False)))
        if kind == "map":
            return MapType(json_int(obj["key-id"], "map key-id"), type_from_json(obj["key"]),
                           json_int(obj["value-id"], "map value-id"),
                           type_from_json(obj["value"]), bool(obj.get("value-required", False)))
    except KeyError as e:
        raise InvalidMetadataError(f"{kind} type is missing {e.args[0]!r}") from None
    raise InvalidMetadataError(f"invalid type {obj!r}")


def field_from_json(obj: dict[str, Any]) -> NestedField:
    try:
        return NestedField(
            field_id=json_int(obj["id"], "schema field id"),
            name=str(obj["name"]),
            field_type=type_from_json(obj["type"]),
            required=bool(obj.get("required", False)),
            doc=obj.get("doc"),
            initial_default=obj.get("initial-default"),
            write_default=obj.get("write-default"),
            has_initial_default="initial-default" in obj,
            has_write_default="write-default" in obj,
            extra=tuple((k, v) for k, v in obj.items() if k not in _FIELD_KEYS),
        )
    except KeyError as e:
        raise InvalidMetadataError(f"schema field is missing {e.args[0]!r}: {obj!r}") from None
    except (TypeError, ValueError) as e:
        raise InvalidMetadataError(f"invalid schema field {obj!r}: {e}") from None


def schema_from_json(obj: dict[str, Any]) -> Schema:
    if not isinstance(obj, dict) or not isinstance(obj.get("fields"), list):
        raise InvalidMetadataError("a schema must be a JSON object with a 'fields' list")
    if obj.get("type") != "struct":
        raise InvalidMetadataError(f"schema {obj.get('schema-id', 0)} is not a struct type: its 'type' is "
                                   f"{obj.get('type')!r}, not 'struct'")
    return Schema(
        fields=tuple(field_from_json(f) for f in obj["fields"]),
        schema_id=json_int(obj.get("schema-id", 0), "schema-id"),
        identifier_field_ids=tuple(json_int(i, "identifier-field-ids") for i in obj.get("identifier-field-ids", []) or []),
        extra=tuple((k, v) for k, v in obj.items() if k not in _SCHEMA_KEYS),
    )


def type_min_version(t: IcebergType) -> int:
    """The lowest format version that can hold this type (nested types: the max of children)."""
    if isinstance(t, PrimitiveType):
        return 3 if t.base in V3_TYPES else 1
    if isinstance(t, StructType):
        return max((type_min_version(f.field_type) for f in t.fields), default=1)
    if isinstance(t, ListType):
        return type_min_version(t.element_type)
    if isinstance(t, MapType):
        return max(type_min_version(t.key_type), type_min_version(t.value_type))
    return 1
