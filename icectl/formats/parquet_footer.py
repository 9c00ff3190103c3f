"""The metrics a Parquet file's footer proves, as Iceberg Java derives them for a manifest entry
(``ParquetUtil.footerMetrics``) under the table's metrics modes (``MetricsConfig``):

- ``record_count``: the rows of all row groups;
- per leaf column with a field id whose mode is not ``none``: ``column_sizes`` (the chunks'
  compressed sizes), ``value_counts`` (the chunks' value counts), ``null_value_counts`` (from the
  chunks' statistics; a column with a chunk without statistics gets no null count and no bounds);
- with ``truncate(N)`` or ``full``, the lower and upper bounds of columns not inside a list or a
  map (and not INT96), from the chunks' min/max statistics; ``truncate(N)`` cuts a string to N
  characters and binary to N bytes, and an upper bound so cut is incremented (its last character
  or byte that can be; none when none can), as Java's ``UnicodeUtil.truncateStringMax`` and
  ``BinaryUtil.truncateBinaryMax`` do.

NaN counts are not in a footer: Iceberg Java takes them from its writer's own metrics, so they are
not derived here (:attr:`FooterMetrics.values` lets a check bound them by the non-null values).

pyarrow is imported by :func:`read_footer` itself: ``validate`` loads this module without ``--deep``.
"""
from __future__ import annotations

import datetime
import decimal
import uuid
from dataclasses import dataclass, field
from typing import Any

from icectl.spec.conversions import to_bytes, to_internal, truncate_lower, truncate_upper
from icectl.spec.properties import column_metrics_modes, truncate_length
from icectl.spec.types import IcebergType, PrimitiveType, walk_fields

FIELD_ID = b"PARQUET:field_id"
_NO_BOUNDS = ("variant", "unknown", "geometry", "geography")


@dataclass
class FooterMetrics:
    """What the footer says, per field id. ``lower``/``upper`` are the exact column minimum and
    maximum (internal values, before truncation); ``lower_bounds``/``upper_bounds`` are the
    serialized bounds Iceberg Java would write under the column's mode."""

    record_count: int
    column_sizes: dict[int, int] = field(default_factory=dict)
    value_counts: dict[int, int] = field(default_factory=dict)
    null_value_counts: dict[int, int] = field(default_factory=dict)
    lower: dict[int, Any] = field(default_factory=dict)
    upper: dict[int, Any] = field(default_factory=dict)
    lower_bounds: dict[int, bytes] = field(default_factory=dict)
    upper_bounds: dict[int, bytes] = field(default_factory=dict)
    modes: dict[int, str] = field(default_factory=dict)  # the mode of each column the footer has
    types: dict[int, PrimitiveType] = field(default_factory=dict)


def _leaves(arrow_schema: Any) -> list[tuple[int | None, bool]]:
    """(field id, inside a list or map) of each Parquet leaf column, in column order."""
    import pyarrow as pa

    out: list[tuple[int | None, bool]] = []

    def walk(f: Any, repeated: bool) -> None:
        t = f.type
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                walk(t.field(i), repeated)
        elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            walk(t.value_field, True)
        elif pa.types.is_map(t):
            walk(t.key_field, True)
            walk(t.item_field, True)
        else:
            raw = (f.metadata or {}).get(FIELD_ID)
            out.append((int(raw) if raw is not None else None, repeated))

    for f in arrow_schema:
        walk(f, False)
    return out


def _internal(t: PrimitiveType, v: Any) -> Any:
    """A footer statistic (pyarrow's logical value) as the internal value of Iceberg type ``t``."""
    if isinstance(v, (bytes, bytearray)) and t.base == "string":
        return bytes(v).decode("utf-8")
    if isinstance(v, datetime.datetime) and v.tzinfo is None and t.base in ("timestamptz", "timestamptz_ns"):
        v = v.replace(tzinfo=datetime.timezone.utc)
    if isinstance(v, datetime.datetime) and v.tzinfo is not None and t.base in ("timestamp", "timestamp_ns"):
        v = v.replace(tzinfo=None)
    if t.base in ("long", "int") and isinstance(v, bool):
        return int(v)
    if t.base == "decimal" and isinstance(v, int):
        return decimal.Decimal(v).scaleb(-t.scale)
    v = to_internal(t, v)
    if t.base == "uuid" and isinstance(v, str):
        return uuid.UUID(v)
    if t.base in ("float", "double") and isinstance(v, int):
        return float(v)
    return v


@dataclass
class MetricsTarget:
    """What a table's metrics are measured against: its current schema's field types, names and
    metrics modes (by field id)."""

    types: dict[int, IcebergType]
    names: dict[int, str]
    modes: dict[int, str]


def metrics_target(metadata: Any) -> MetricsTarget:
    """The :class:`MetricsTarget` of table metadata (its current schema, properties and sort order)."""
    schema = metadata.schema
    types: dict[int, IcebergType] = {}
    names: dict[int, str] = {}
    leaves: list[tuple[int, str]] = []
    for name, f in walk_fields(schema.fields):
        types[f.field_id] = f.field_type
        names[f.field_id] = name
        if isinstance(f.field_type, PrimitiveType):
            leaves.append((f.field_id, name))
    try:
        sorted_ids = {sf.source_id for sf in metadata.sort_order.fields}
    except Exception:  # noqa: BLE001  # a default-sort-order-id naming nothing: validate reports it
        sorted_ids = set()
    return MetricsTarget(types, names, column_metrics_modes(metadata.properties, leaves, sorted_ids))


def read_footer(io: Any, path: str) -> Any:
    """The pyarrow FileMetaData of a Parquet file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    local = io.local_file(path)
    if local is not None:
        with pa.OSFile(local) as f:
            return pq.ParquetFile(f).metadata
    with io.open(path, "rb") as f:
        return pq.ParquetFile(f).metadata


def footer_metrics(meta: Any, types: dict[int, IcebergType], modes: dict[int, str]) -> FooterMetrics:
    """The metrics of a Parquet file from its footer ``meta`` (pyarrow FileMetaData): ``types``
    are the table's field types by id, ``modes`` each leaf column's metrics mode
    (:func:`icectl.spec.properties.column_metrics_modes`; a column without one is not counted)."""
    leaves = _leaves(meta.schema.to_arrow_schema())
    out = FooterMetrics(record_count=0)
    missing_stats: set[int] = set()
    no_bounds: set[int] = set()
    for g in range(meta.num_row_groups):
        rg = meta.row_group(g)
        out.record_count += rg.num_rows
        for c in range(rg.num_columns):
            fid, repeated = leaves[c] if c < len(leaves) else (None, True)
            mode = modes.get(fid) if fid is not None else None
            if mode is None or mode == "none":
                continue
            col = rg.column(c)
            out.modes[fid] = mode
            out.column_sizes[fid] = out.column_sizes.get(fid, 0) + col.total_compressed_size
            out.value_counts[fid] = out.value_counts.get(fid, 0) + col.num_values
            stats = col.statistics if col.is_stats_set else None
            if stats is None or not stats.has_null_count:
                missing_stats.add(fid)
                continue
            out.null_value_counts[fid] = out.null_value_counts.get(fid, 0) + stats.null_count
            t = types.get(fid)
            if mode == "counts" or repeated or not isinstance(t, PrimitiveType) or t.base in _NO_BOUNDS \
                    or col.physical_type == "INT96":
                continue
            out.types[fid] = t
            if not stats.has_min_max:
                continue  # only nulls in this chunk: nothing to bound
            try:
                lo, hi = _internal(t, stats.min), _internal(t, stats.max)
            except (ValueError, TypeError, ArithmeticError):
                no_bounds.add(fid)
                continue
            if fid not in out.lower or lo < out.lower[fid]:
                out.lower[fid] = lo
            if fid not in out.upper or hi > out.upper[fid]:
                out.upper[fid] = hi
    for fid in missing_stats:  # as Java: a column missing statistics in any row group has none
        out.null_value_counts.pop(fid, None)
        out.lower.pop(fid, None)
        out.upper.pop(fid, None)
    for fid in no_bounds:
        out.lower.pop(fid, None)
        out.upper.pop(fid, None)
    for fid, lo in out.lower.items():
        t, n = out.types[fid], truncate_length(out.modes[fid])
        out.lower_bounds[fid] = to_bytes(t, truncate_lower(t, lo, n) if n else lo)
        hi = truncate_upper(t, out.upper[fid], n) if n else out.upper[fid]
        if hi is not None:
            out.upper_bounds[fid] = to_bytes(t, hi)
    return out


__all__ = ["FooterMetrics", "MetricsTarget", "footer_metrics", "metrics_target", "read_footer"]
