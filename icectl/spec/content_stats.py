"""v4 typed ``content_stats`` (v4 walk-through: "Typed content_stats: five maps become one struct").

The walk-through fixes the idea but not every id, so icectl's layout is this, documented here and
in docs/format-versions.md: ``content_stats`` is data_file field **146** (its Avro record:
:func:`icectl.formats.avro_schemas.content_stats_schema`), an optional struct with one optional
sub-struct per primitive column of the table schema. Each column reserves a block of 200 ids
starting at ``STATS_ID_BASE + 200 * field_id``; within its block:

====  ==========================  ===========================================================
+0    the column's struct         named ``f<field_id>``
+1    ``value_count``             long
+2    ``null_value_count``        long
+3    ``nan_value_count``         long (float and double columns)
+4    ``avg_value_size_in_bytes`` int (variable-length columns: string, binary)
+5    ``lower_bound``             the column's own type (spatial: struct x, y, z, m doubles)
+6    ``upper_bound``             the column's own type (spatial: struct x, y, z, m doubles)
+7    ``tight_bounds``            boolean: the bounds are the exact min and max, not truncated
+8    ``column_size_in_bytes``    long
====  ==========================  ===========================================================

"A missing map key in v3 is the same as a missing-or-null sub-struct in v4", so
:func:`from_maps` and :func:`to_maps` translate losslessly between the two.
"""
from __future__ import annotations

import decimal
from typing import Any

from icectl.spec.conversions import from_bytes, to_bytes, to_internal
from icectl.spec.types import PrimitiveType, Schema, walk_fields

STATS_ID_BASE = 10_000
BLOCK = 200
NAN_TYPES = ("float", "double")  # columns with a nan_value_count
VARLEN_TYPES = ("string", "binary")  # columns with an avg_value_size_in_bytes
SPATIAL = ("geometry", "geography")  # bounds are points: a struct of x, y, z, m
NO_BOUNDS = ("variant", "unknown")


def stats_columns(schema: Schema) -> list[tuple[int, PrimitiveType]]:
    return [(f.field_id, f.field_type) for _, f in walk_fields(schema.fields)
            if isinstance(f.field_type, PrimitiveType) and f.field_type.base != "unknown"]


def column_block(field_id: int) -> int:
    return STATS_ID_BASE + BLOCK * field_id


def from_maps(schema: Schema, *, value_counts: dict[int, int] | None, null_value_counts: dict[int, int] | None,
              nan_value_counts: dict[int, int] | None, lower_bounds: dict[int, bytes] | None,
              upper_bounds: dict[int, bytes] | None, column_sizes: dict[int, int] | None,
              tight_bounds: dict[int, bool] | None = None) -> dict[str, Any] | None:
    """The typed struct from the v3 maps; bounds decoded to values of the column type."""
    out: dict[str, Any] = {}
    for fid, t in stats_columns(schema):
        col: dict[str, Any] = {}
        for key, m in (("value_count", value_counts), ("null_value_count", null_value_counts),
                       ("nan_value_count", nan_value_counts if t.base in NAN_TYPES else None),
                       ("column_size_in_bytes", column_sizes)):
            if m is not None and fid in m:
                col[key] = m[fid]
        for key, m in (("lower_bound", lower_bounds), ("upper_bound", upper_bounds)):
            if m is not None and fid in m and t.base not in NO_BOUNDS:
                v = from_bytes(t, m[fid])
                if t.base in SPATIAL:
                    v = {"x": v[0], "y": v[1], "z": v[2] if len(v) > 2 else None, "m": v[3] if len(v) > 3 else None}
                col[key] = _avro_value(t, v)
        if tight_bounds is not None and fid in tight_bounds:
            col["tight_bounds"] = tight_bounds[fid]
        if col:
            out[f"f{fid}"] = col
    return out or None


def _avro_value(t: PrimitiveType, v: Any) -> Any:
    if t.base == "decimal" and isinstance(v, int):
        return decimal.Decimal(v).scaleb(-t.scale)
    if t.base == "uuid" and not isinstance(v, (bytes, bytearray)):
        return v.bytes  # a uuid is an Avro fixed[16]; fastavro writes it from bytes only
    return v


def to_maps(schema: Schema, stats: dict[str, Any] | None) -> dict[str, dict[int, Any]]:
    """The v3 maps (value_counts, ..., lower_bounds as Appendix D bytes) from the typed struct."""
    maps: dict[str, dict[int, Any]] = {k: {} for k in ("value_counts", "null_value_counts", "nan_value_counts",
                                                       "column_sizes", "lower_bounds", "upper_bounds", "tight_bounds")}
    if not stats:
        return maps
    types = dict(stats_columns(schema))
    for name, col in stats.items():
        if col is None or not name.startswith("f"):
            continue
        fid = int(name[1:])
        t = types.get(fid)
        for key, target in (("value_count", "value_counts"), ("null_value_count", "null_value_counts"),
                            ("nan_value_count", "nan_value_counts"), ("column_size_in_bytes", "column_sizes"),
                            ("tight_bounds", "tight_bounds")):
            if col.get(key) is not None:
                maps[target][fid] = col[key]
        if t is None:
            continue
        for key, target in (("lower_bound", "lower_bounds"), ("upper_bound", "upper_bounds")):
            v = col.get(key)
            if v is None:
                continue
            if t.base in SPATIAL:
                v = tuple(x for x in (v["x"], v["y"], v.get("z"), v.get("m")) if x is not None)
            else:
                v = to_internal(t, v)
            maps[target][fid] = to_bytes(t, v)
    return maps
