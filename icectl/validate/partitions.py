"""Partition summaries of a manifest list, for ``validate``: each field summary (spec: "Manifest
Lists: field_summary") against the partition values of the manifest's live entries: a null or
NaN value must be announced by ``contains_null``/``contains_nan``, and the lower and upper bounds
must bound the values.

A manifest's partition values arrive as columns ``p0``, ``p1``, ... of its normalized entries
(:mod:`icectl.formats.entries`), one aggregate per manifest answers for every field.
"""
from __future__ import annotations

from typing import Any

from icectl.errors import IcectlError
from icectl.formats.manifest import ManifestFile
from icectl.spec.conversions import from_bytes, to_internal, unscaled
from icectl.spec.types import PrimitiveType
from icectl.validate.bounds import show

# A manifest's partition fields, as its spec gives them: (field id, name, result type).
SpecFields = tuple[tuple[int, str, PrimitiveType], ...]
# Per partition field: (has a null, has a NaN, lowest, highest) of its live values.
FieldStats = tuple[bool, bool, Any, Any]

_ORDERED = frozenset({"int", "long", "date", "time", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns",
                      "float", "double", "string", "binary", "boolean"})
_UNORDERED = frozenset({"geometry", "geography", "uuid", "variant", "unknown"})
_LONG = PrimitiveType("long")


def partition_key(t: PrimitiveType, value: Any) -> Any:
    """A partition value in the form its order is checked in: a decimal as its unscaled integer,
    None for types without an order."""
    base = t.base
    if base == "decimal":
        return unscaled(t, to_internal(t, value))  # a Decimal, or the Avro bytes the lean decoder reads
    if base in _UNORDERED:
        return None
    return value


def check_partition_summary(ref: ManifestFile, spec: SpecFields, stats: list[FieldStats | None], out: Any) -> None:
    """Each field summary of the manifest list against its live values' ``stats``
    (:func:`partition_stats`: lowest and highest in :func:`partition_key` form, None when no
    value orders, TypeError when they do not compare; None when no live file)."""
    if ref.partitions is None:
        return
    if len(ref.partitions) != len(spec):
        out.add("PARTITION_SUMMARY", f"{len(ref.partitions)} field summaries for spec {ref.partition_spec_id}'s "
                f"{len(spec)} partition fields")
        return
    for (fid, name, t), summary, st in zip(spec, ref.partitions, stats):
        if st is None:
            continue
        has_null, nans, lo, hi = st
        lower, upper = summary.lower_bound, summary.upper_bound
        if has_null and not summary.contains_null:
            out.add("PARTITION_SUMMARY", f"partition field {name!r}: contains_null is false but a live file has a "
                    "null value")
        if nans and summary.contains_nan is False:
            out.add("PARTITION_SUMMARY", f"partition field {name!r}: contains_nan is false but a live file has NaN")
        if lo is None:
            continue
        if lower is None or upper is None:
            out.add("PARTITION_SUMMARY", f"partition field {name!r}: no {'lower' if lower is None else 'upper'} bound "
                    "but live files have values")
            continue
        try:
            lb, ub = partition_key(t, from_bytes(t, lower)), partition_key(t, from_bytes(t, upper))
        except (IcectlError, ValueError, TypeError) as e:
            out.add("PARTITION_SUMMARY", f"partition field {name!r}: a bound is not a {t} value ({e})")
            continue
        if lb is None:
            continue
        try:
            if lo is TypeError:
                raise TypeError
            if lb > lo or ub < hi:
                out.add("PARTITION_SUMMARY", f"partition field {name!r}: summary [{show(lb)}, {show(ub)}] does not "
                        f"bound the live values [{show(lo)}, {show(hi)}]")
        except TypeError:
            out.add("PARTITION_SUMMARY", f"partition field {name!r}: values are not all {t}")


def partition_stats(f: Any, spec: SpecFields) -> list[FieldStats | None]:
    """(has a null, has a NaN, lowest, highest) of each partition field's live values in the
    normalized entries ``f`` of one manifest; None for a field without live values."""
    import polars as pl

    status = pl.col("status")
    live = status.is_in([0, 1]).fill_null(False)
    exprs = []
    for i, (_, _, t) in enumerate(spec):
        exprs += _stat_exprs(i, t, f.schema.get(f"p{i}"), live)
    if not exprs:
        return [None] * len(spec)
    agg = f.select(exprs).row(0, named=True)
    return [_field_stats(i, t, agg, f, live) for i, (_, _, t) in enumerate(spec)]


def partition_stats_many(stacked: Any, spec: SpecFields, frames: list[Any]) -> list[list[FieldStats | None]]:
    """:func:`partition_stats` of the manifests of one spec whose normalized entries are
    ``frames`` (partition columns of the same types), at once: ``stacked`` holds all their
    entries and ``m``, the position of each one's frame."""
    import polars as pl

    live = pl.col("status").is_in([0, 1]).fill_null(False)
    exprs = []
    for i, (_, _, t) in enumerate(spec):
        exprs += _stat_exprs(i, t, stacked.schema.get(f"p{i}"), live)
    if not exprs:
        return [[None] * len(spec) for _ in frames]
    by_m = {row["m"]: row for row in stacked.group_by("m").agg(exprs).rows(named=True)}
    return [[None] * len(spec) if agg is None else  # no entries: no live values
            [_field_stats(i, t, agg, f, live) for i, (_, _, t) in enumerate(spec)]
            for agg, f in ((by_m.get(m), f) for m, f in enumerate(frames))]


def _stat_exprs(i: int, t: PrimitiveType, dtype: Any, live: Any) -> list[Any]:
    """Aggregates for partition field ``p{i}`` over the live entries: how many, any null, any
    NaN, and (for a type polars orders as Iceberg does) the lowest and highest other value."""
    import polars as pl

    if dtype is None:
        return []
    p = pl.col(f"p{i}")
    out = [live.sum().alias(f"p{i}_live"), (live & p.is_null()).any().alias(f"p{i}_null")]
    value = live & p.is_not_null()
    if dtype.is_float():
        out.append((value & p.is_nan()).any().alias(f"p{i}_nan"))
        value = value & ~p.is_nan()
    if t.base in _ORDERED and (dtype.is_numeric() or dtype in (pl.String, pl.Binary, pl.Boolean)):
        out += [p.filter(value).min().alias(f"p{i}_min"), p.filter(value).max().alias(f"p{i}_max")]
    return out


def _field_stats(i: int, t: PrimitiveType, agg: dict[str, Any], f: Any, live: Any) -> FieldStats | None:
    """(has a null, has a NaN, lowest, highest) of partition field ``p{i}``'s live values, in the
    form of :func:`partition_key` (lowest/highest None when no value orders, TypeError when they
    do not compare); None when there are no live values."""
    import polars as pl

    if not agg.get(f"p{i}_live"):
        return None
    base = t.base
    has_null, has_nan = bool(agg[f"p{i}_null"]), base in ("float", "double") and bool(agg.get(f"p{i}_nan"))
    if base in _UNORDERED:
        return has_null, has_nan, None, None
    if f"p{i}_min" in agg:
        return has_null, has_nan, agg[f"p{i}_min"], agg[f"p{i}_max"]
    p = pl.col(f"p{i}")
    column = f.filter(live & p.is_not_null()).get_column(f"p{i}")
    values = column.to_list()
    if isinstance(column.dtype, pl.Decimal):  # the unscaled integers the Avro bytes hold, as the lean decoder reads
        values = [int(x.scaleb(column.dtype.scale)) for x in values]
        t = _LONG
    try:
        keys = [k for k in (partition_key(t, x) for x in values if not (isinstance(x, float) and x != x))
                if k is not None]
        if not keys:
            return has_null, has_nan, None, None
        return has_null, has_nan, min(keys), max(keys)
    except (TypeError, ValueError, IcectlError):
        return has_null, has_nan, TypeError, TypeError
