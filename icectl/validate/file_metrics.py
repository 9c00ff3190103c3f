"""A data file's manifest metrics against what its Parquet footer proves
(:func:`icectl.formats.parquet_footer.footer_metrics`), for ``validate --deep`` and
``repair --metrics``. Each difference is its own finding:

- a bound that can hide rows (a lower bound above the footer's minimum, an upper bound below its
  maximum): ``BOUND_HIDES_ROWS``, an error; a bound that is safe but looser than the footer's and
  not a truncation of it: ``BOUND_LOOSE``, a warning (a bound tighter than the mode's but safe, as
  written under another mode, is fine);
- a value or null count not the footer's: ``METRIC_VALUE_COUNT`` / ``METRIC_NULL_COUNT``, errors
  (filters and count pushdown read them); a NaN count above the non-null values:
  ``METRIC_NAN_COUNT``; a column size not the footer's: ``METRIC_COLUMN_SIZE``, a warning;
- metrics the mode asks for and the footer proves but the entry lacks: one ``METRIC_MISSING``
  note per file.

``record_count`` and ``file_size_in_bytes`` are compared by :mod:`icectl.validate.deep` (every
format); the repair carries the footer's values for all of these.
"""
from __future__ import annotations

from typing import Any

from icectl.formats.parquet_footer import FooterMetrics
from icectl.spec.conversions import MalformedValue, from_bytes, truncate_upper
from icectl.spec.types import PrimitiveType

Found = list[tuple[str, str]]


def _value(t: PrimitiveType, raw: bytes | None) -> Any:
    if raw is None:
        return None
    try:
        return from_bytes(t, raw)
    except MalformedValue:
        return None  # reported as BOUND_TYPE by the manifest checks


def _is_truncation_of_max(t: PrimitiveType, bound: Any, real: Any) -> bool:
    """Whether an upper bound above ``real`` is what truncate(len) makes of it."""
    if t.base not in ("string", "binary") or not bound:
        return False
    return truncate_upper(t, real, len(bound)) == bound


def compare(data_file: Any, fm: FooterMetrics, names: dict[int, str]) -> Found:
    """The differences between a data file's entry (a :class:`~icectl.formats.manifest.DataFile`)
    and its footer's metrics; ``names`` gives the column name of a field id for the messages."""
    found: Found = []
    missing: list[str] = []

    def name(fid: int) -> str:
        return names.get(fid, f"field {fid}")

    for label, code, have, real in (
            ("value count", "METRIC_VALUE_COUNT", data_file.value_counts or {}, fm.value_counts),
            ("null count", "METRIC_NULL_COUNT", data_file.null_value_counts or {}, fm.null_value_counts),
            ("size", "METRIC_COLUMN_SIZE", data_file.column_sizes or {}, fm.column_sizes)):
        for fid, n in sorted(real.items()):
            v = have.get(fid)
            if v is None:
                if code != "METRIC_COLUMN_SIZE":
                    missing.append(f"{label} of {name(fid)}")
            elif v != n:
                found.append((code, f"{name(fid)}: the {label} is {v:,}, the footer says {n:,}"))
    for fid, nan in sorted((data_file.nan_value_counts or {}).items()):
        vc, nc = fm.value_counts.get(fid), fm.null_value_counts.get(fid)
        if vc is not None and nc is not None and nan > vc - nc:
            found.append(("METRIC_NAN_COUNT", f"{name(fid)}: {nan:,} NaN values, but the footer counts "
                          f"{vc - nc:,} non-null values"))
    lowers, uppers = data_file.lower_bounds or {}, data_file.upper_bounds or {}
    for fid, t in sorted(fm.types.items()):
        if fid not in fm.lower:
            continue
        lo, hi = _value(t, lowers.get(fid)), _value(t, uppers.get(fid))
        rmin, rmax = fm.lower[fid], fm.upper[fid]
        if t.base in ("float", "double") and (_nan(lo) or _nan(hi)):
            continue  # a NaN bound is BOUND_TYPE's
        if lo is None:
            if fid in fm.lower_bounds:
                missing.append(f"lower bound of {name(fid)}")
        elif lo > rmin:
            found.append(("BOUND_HIDES_ROWS", f"{name(fid)}: the lower bound is {_show(lo)}, above the "
                          f"file's minimum {_show(rmin)}"))
        elif lo < rmin and not (t.base in ("string", "binary") and rmin[:len(lo)] == lo):
            found.append(("BOUND_LOOSE", f"{name(fid)}: the lower bound is {_show(lo)}, the file's minimum "
                          f"{_show(rmin)}"))
        if hi is None:
            if fid in fm.upper_bounds:
                missing.append(f"upper bound of {name(fid)}")
        elif hi < rmax:
            found.append(("BOUND_HIDES_ROWS", f"{name(fid)}: the upper bound is {_show(hi)}, below the "
                          f"file's maximum {_show(rmax)}"))
        elif hi > rmax and not _is_truncation_of_max(t, hi, rmax):
            found.append(("BOUND_LOOSE", f"{name(fid)}: the upper bound is {_show(hi)}, the file's maximum "
                          f"{_show(rmax)}"))
    if missing:
        found.append(("METRIC_MISSING", "no " + ", no ".join(missing)))
    return found


def _nan(v: Any) -> bool:
    return isinstance(v, float) and v != v


def _show(v: Any) -> str:
    text = repr(v) if isinstance(v, (str, bytes)) else str(v)
    return text if len(text) <= 40 else text[:37] + "..."


__all__ = ["compare"]
