"""File metrics of what a compaction writes: value, null and NaN counts of the top-level
primitive columns, and their lower and upper bounds serialized as the spec's Appendix D single
values (strings and binary truncated to 16, as Iceberg Java's default ``truncate(16)`` metrics
mode), gathered over the row groups of a file as they are written.

pyarrow is imported in :meth:`ColumnMetrics.add`, the executors' path: the client imports this
module through :mod:`icectl.spark.rewrite` for its schema helpers."""
from __future__ import annotations

import uuid
from typing import Any

from icectl.spec.conversions import to_bytes, to_internal, truncate_lower, truncate_upper
from icectl.spec.types import PrimitiveType

TRUNCATE_LENGTH = 16


class ColumnMetrics:
    """Counts and bounds of the top-level primitive columns, gathered over the tables added
    (a file is written a row group at a time: its rows need not stay in memory for its metrics)."""

    _NO_BOUNDS = ("variant", "unknown", "geometry", "geography")
    _AS_INT = ("timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns", "time", "date")

    def __init__(self, schema: Any):
        self.fields = [f for f in schema.fields if isinstance(f.field_type, PrimitiveType)]
        self.vc: dict[int, int] = {}
        self.nc: dict[int, int] = {}
        self.nan: dict[int, int] = {}
        self.lo: dict[int, Any] = {}
        self.hi: dict[int, Any] = {}

    def add(self, table: Any) -> "ColumnMetrics":
        import pyarrow as pa
        import pyarrow.compute as pc

        for f in self.fields:
            col = table.column(f.name)
            t, fid = f.field_type, f.field_id
            self.vc[fid] = self.vc.get(fid, 0) + len(col)
            self.nc[fid] = self.nc.get(fid, 0) + col.null_count
            if t.base in self._NO_BOUNDS:
                continue
            values = col
            if t.base in ("float", "double"):
                is_nan = pc.fill_null(pc.is_nan(col), False)
                self.nan[fid] = self.nan.get(fid, 0) + (pc.sum(pc.cast(is_nan, pa.int64())).as_py() or 0)
                values = col.filter(pc.invert(is_nan))
            if len(values) - values.null_count == 0:
                continue
            if t.base in self._AS_INT:
                values = values.cast(pa.int64() if t.base != "date" else pa.int32())
            mm = pc.min_max(values)
            vmin, vmax = mm["min"].as_py(), mm["max"].as_py()
            if fid not in self.lo or vmin < self.lo[fid]:
                self.lo[fid] = vmin
            if fid not in self.hi or vmax > self.hi[fid]:
                self.hi[fid] = vmax
        return self

    def result(self) -> dict[str, dict[int, Any]]:
        """Counts, and bounds serialized as Appendix D single values (hex), strings and binary
        truncated to 16."""
        lo, hi = {}, {}
        for f in self.fields:
            fid, t = f.field_id, f.field_type
            if fid not in self.lo:
                continue
            vmin, vmax = self.lo[fid], self.hi[fid]
            if t.base == "uuid":
                vmin, vmax = uuid.UUID(bytes=vmin), uuid.UUID(bytes=vmax)
            if t.base in ("string", "binary"):
                lower, upper = truncate_lower(t, vmin, TRUNCATE_LENGTH), truncate_upper(t, vmax, TRUNCATE_LENGTH)
            else:
                lower, upper = to_internal(t, vmin), to_internal(t, vmax)
            lo[fid] = to_bytes(t, lower).hex()
            if upper is not None:
                hi[fid] = to_bytes(t, upper).hex()
        return {"value_counts": dict(self.vc), "null_value_counts": dict(self.nc), "nan_value_counts": dict(self.nan),
                "lower_bounds": lo, "upper_bounds": hi}


def column_metrics(table: Any, schema: Any) -> dict[str, dict[int, Any]]:
    return ColumnMetrics(schema).add(table).result()


__all__ = ["ColumnMetrics", "TRUNCATE_LENGTH", "column_metrics"]
