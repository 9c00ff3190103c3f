"""Iceberg types as Hive type strings: the column types a metastore keeps in a table's storage
descriptor (Hive Metastore, AWS Glue). One walk over nested types; each catalog brings its table
of primitive names (Java's ``HiveSchemaUtil`` for Hive, PyIceberg's ``GLUE_PRIMITIVE_TYPES`` for
Glue). Decimals are ``decimal(P,S)`` and fixed is ``binary`` in both."""
from __future__ import annotations

from typing import Mapping

from icectl.spec.types import IcebergType, ListType, MapType, StructType


def hive_type_string(t: IcebergType, primitives: Mapping[str, str], default: str | None = None) -> str:
    """The Hive type string of ``t``: ``struct<a:int,...>``, ``array<...>``, ``map<k,v>``, and each
    primitive by ``primitives`` (keyed by Iceberg's name); a primitive not in it is ``default``,
    or Iceberg's own name when ``default`` is None."""
    if isinstance(t, StructType):
        return "struct<" + ",".join(f"{f.name}:{hive_type_string(f.field_type, primitives, default)}"
                                    for f in t.fields) + ">"
    if isinstance(t, ListType):
        return f"array<{hive_type_string(t.element_type, primitives, default)}>"
    if isinstance(t, MapType):
        return (f"map<{hive_type_string(t.key_type, primitives, default)},"
                f"{hive_type_string(t.value_type, primitives, default)}>")
    name = str(t)
    if name.startswith("decimal"):
        return name.replace(" ", "")
    if name.startswith("fixed"):
        return "binary"
    return primitives.get(name, name if default is None else default)
