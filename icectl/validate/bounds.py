"""Lower and upper bounds of manifest entries, for ``validate``: each bound is a value of its
column's type in the binary form of Appendix D (and not NaN: "NaNs are not permitted as lower or
upper bounds"), and a lower bound is not above its upper bound (Manifests, notes 1 and 2).

A manifest's bounds are checked a column at a time, all columns together in polars (lengths per
column, numbers reinterpreted from their bytes and compared, strings cast as UTF-8, bytes compared
unsigned); only a column that fails, or of a type that needs it, is walked value by value
(:func:`_check_column`), to name the entries. That keeps the bound checks a small part of scanning
a manifest. Values are decoded, and malformed bytes worded, by
:func:`icectl.spec.conversions.from_bytes`, the one decoder of Appendix D's binary values; the byte
widths each type allows are its :data:`~icectl.spec.conversions.BINARY_WIDTHS`.
"""
from __future__ import annotations

import decimal
from typing import Any

from icectl.spec.conversions import BINARY_WIDTHS, MalformedValue, from_bytes
from icectl.spec.types import IcebergType, PrimitiveType

# Reserved metadata columns that delete and data files may carry bounds for ("Reserved Field IDs").
# _row_id and _last_updated_sequence_number: 2147483540/2147483539 in the spec Iceberg Java 1.10
# implements, 2147483543/2147483542 in the first row-lineage change (shared/seeds).
_STRING, _LONG = PrimitiveType("string"), PrimitiveType("long")
RESERVED_TYPES: dict[int, IcebergType] = {
    2147483546: _STRING, 2147483545: _LONG, 2147483646: _STRING, 2147483645: _LONG,
    2147483540: _LONG, 2147483539: _LONG, 2147483543: _LONG, 2147483542: _LONG}

_UNORDERED = ("uuid", "geometry", "geography")  # valid lengths, no order to check
# (type, byte length) -> the numpy type a column of such bounds is reinterpreted as
_NUMBERS = {("int", 4): "<i4", ("date", 4): "<i4", ("long", 8): "<i8", ("long", 4): "<i4",
            ("timestamp", 8): "<i8", ("timestamp", 4): "<i4", ("timestamp_ns", 8): "<i8", ("timestamp_ns", 4): "<i4",
            ("time", 8): "<i8", ("timestamptz", 8): "<i8", ("timestamptz_ns", 8): "<i8",
            ("float", 4): "<f4", ("double", 8): "<f8", ("double", 4): "<f4"}
_POLARS_NUMBER = {"<i4": "Int32", "<i8": "Int64", "<f4": "Float32", "<f8": "Float64"}


def _bounded(t: IcebergType | None) -> PrimitiveType | None:
    """The column type whose bounds are checked; None for variant, unknown and nested types."""
    return t if isinstance(t, PrimitiveType) and t.base not in ("variant", "unknown") else None


def _value(t: PrimitiveType, v: bytes) -> Any:
    """A bound's value (Appendix D), None when the bytes are not one."""
    try:
        return from_bytes(t, v)
    except MalformedValue:
        return None


def check_bounds_frame(frame: Any, types: dict[int, IcebergType], outs: list[Any]) -> None:
    """Every lower and upper bound of some manifests, a column (field id) at a time: each must be
    a value of its column's type (Appendix D) and not NaN, and a lower bound must not be above its
    upper bound. ``frame`` has the manifest ``m`` (findings go to ``outs[m]``), the entry position
    ``n`` and the ``lower_bounds`` and ``upper_bounds`` lists of (key, value).

    All manifests and columns are checked together in polars: value lengths per column first,
    then one pass per value type (numbers reinterpreted from their bytes, strings as UTF-8, bytes
    compared unsigned). A column of a manifest that fails, or whose type needs it (decimal,
    numbers of mixed widths), is checked value by value, which names its entries."""
    import polars as pl

    lo = _long_bounds(frame, "lower_bounds")
    hi = _long_bounds(frame, "upper_bounds")
    if len(lo) == len(hi) and lo.select("m", "n", "key").equals(hi.select("m", "n", "key")):
        both = lo.with_columns(hi.get_column("value").alias("value_hi"))  # the usual case: the same columns
    else:
        both = lo.join(hi, on=["m", "n", "key"], how="full", coalesce=True, suffix="_hi")
    lengths: dict[int, set[int]] = {}
    manifests: dict[int, set[int]] = {}
    # each (manifest, field id, lengths) once: a group-by (a unique over the rows cost ~3x more)
    for m, k, a, b, _ in both.lazy().select("m", "key", pl.col("value").bin.size(), pl.col("value_hi").bin.size()
                                            .alias("b")).group_by("m", "key", "value", "b").len().collect().rows():
        lengths.setdefault(k, set()).update(x for x in (a, b) if x is not None)
        manifests.setdefault(k, set()).add(m)
    both = both.lazy()
    checks: set[tuple[int, int]] = set()  # (manifest, field id) to check value by value
    groups: dict[str, list[int]] = {}
    checked: dict[int, PrimitiveType] = {}
    for k, lens in sorted(lengths.items()):
        found = types.get(k) or RESERVED_TYPES.get(k)
        if found is None:
            for m in sorted(manifests[k]):
                outs[m].add("BOUND_UNKNOWN_FIELD", f"bounds for field id {k}, which is in no schema of the table")
            continue
        t = _bounded(found)
        if t is None:
            continue
        checked[k] = t
        group = _fast_group(t, set(lens))
        if group is None:
            checks.update((m, k) for m in manifests[k])
        elif group:
            groups.setdefault(group, []).append(k)
    for group, keys in groups.items():
        sub = both.filter(pl.col("key").is_in(keys))
        a, b = pl.col("value"), pl.col("value_hi")
        if group == "str":
            try:
                sub.select(a.cast(pl.String), b.cast(pl.String)).collect()
            except pl.exceptions.PolarsError:  # not UTF-8: value by value, to name the entries
                checks.update((m, k) for k in keys for m in manifests[k])
                continue
        elif group != "bytes":
            dtype = getattr(pl, group)
            a = a.bin.reinterpret(dtype=dtype, endianness="little")
            b = b.bin.reinterpret(dtype=dtype, endianness="little")
        bad = (a > b).fill_null(False)
        if group.startswith("Float"):
            bad = bad | a.is_nan().fill_null(False) | b.is_nan().fill_null(False)
        # the (manifest, field id) pairs with a bad value: a filter (few rows pass), not a group-by of every row
        checks.update(sub.filter(bad).select("m", "key").unique().collect().rows())
    if not checks:
        return
    keys = sorted({k for _, k in checks})
    parts = both.filter(pl.col("key").is_in(keys)).sort("m", "key", "n").collect() \
        .partition_by("m", "key", as_dict=True)
    for m, k in sorted(checks):
        col = parts[(m, k)]
        _check_column(k, checked[k], outs[m], rows=col.get_column("n").to_list(),
                      lo=col.get_column("value").to_list(), hi=col.get_column("value_hi").to_list())


def _long_bounds(frame: Any, name: str) -> Any:
    """(m, n, key, value) for every bound of a map column; a key listed twice in one map keeps its
    last value, as a map does."""
    import polars as pl

    long = (frame.lazy().select("m", "n", name).explode(name).drop_nulls(name).unnest(name)
            .filter(pl.col("value").is_not_null()).collect())
    m, n, key = pl.col("m"), pl.col("n"), pl.col("key")
    if long.select(((m == m.shift()) & (n == n.shift()) & (key <= key.shift())).any()).item():
        long = long.unique(["m", "n", "key"], keep="last", maintain_order=True)  # keys not ascending in a map
    return long


def _fast_group(t: PrimitiveType, lengths: set[int]) -> str | None:
    """How polars checks a column of type ``t`` whose values have these lengths: a polars number
    type to reinterpret the bytes as, "str", "bytes" (unsigned order), "" (valid, nothing to
    order: uuid, geo), or None: value by value (invalid lengths, decimal, mixed widths)."""
    base = t.base
    widths = BINARY_WIDTHS.get(base)
    if widths is not None and not lengths <= set(widths):
        return None
    if base in _UNORDERED:
        return ""
    width = next(iter(lengths)) if len(lengths) == 1 else None
    if (base, width) in _NUMBERS:
        return _POLARS_NUMBER[_NUMBERS[(base, width)]]
    if base == "string":
        return "str"
    if base in ("binary", "boolean") or (base == "fixed" and max(lengths, default=0) <= t.length):
        return "bytes"
    return None


def _check_column(k: int, t: PrimitiveType, out: Any, *, rows: list[int], lo: list[Any], hi: list[Any]) -> None:
    """The bounds of field ``k`` in one manifest, value by value: ``rows`` are the entries,
    ``lo`` and ``hi`` their lower and upper bounds (None where an entry has none)."""
    base = t.base
    present = [v for v in lo if v is not None] + [v for v in hi if v is not None]
    valid = True
    lengths = set(map(len, present))
    widths = BINARY_WIDTHS.get(base)
    if widths is not None:
        valid = lengths <= set(widths)
    elif base == "string":
        try:
            b"".join(present).decode("utf-8")
        except UnicodeDecodeError:
            valid = False
    elif base == "fixed":
        valid = max(lengths, default=0) <= t.length
    elif base == "decimal":
        valid = 0 not in lengths
    if not valid:  # find the entries, and leave them out of the order check
        for which, col in (("lower", lo), ("upper", hi)):
            for i, v in enumerate(col):
                if v is None:
                    continue
                try:
                    from_bytes(t, v)
                except MalformedValue as e:
                    out.add("BOUND_TYPE", f"{which} bound of field {k} ({t}): {e.reason}", rows[i])
                    col[i] = None
    if base in _UNORDERED:
        return  # no order to check: Java's uuid order has changed across versions; boxes may wrap
    if base in ("float", "double"):
        _check_nan(k, t, out, rows=rows, lo=lo, hi=hi, lengths=lengths)
    pairs = [i for i, (a, b) in enumerate(zip(lo, hi)) if a is not None and b is not None]
    if not pairs:
        return
    width = next(iter(lengths)) if len(lengths) == 1 else None
    if (base, width) in _NUMBERS:
        import numpy as np

        dtype = _NUMBERS[(base, width)]
        a = np.frombuffer(b"".join([lo[i] for i in pairs]), dtype=dtype)
        b = np.frombuffer(b"".join([hi[i] for i in pairs]), dtype=dtype)
        bad = [pairs[int(j)] for j in np.nonzero(a > b)[0]]
    elif base in ("string", "binary", "boolean", "fixed"):
        bad = [i for i in pairs if lo[i] > hi[i]]  # unsigned bytes; UTF-8 bytes order as code points
    else:  # decimals, and numbers of mixed widths (written before a promotion): by their values
        bad = []
        for i in pairs:
            a, b = _value(t, lo[i]), _value(t, hi[i])
            if a is not None and b is not None and a > b:
                bad.append(i)
    for i in bad:
        a, b = _value(t, lo[i]), _value(t, hi[i])
        out.add("BOUND_ORDER", f"field {k}: lower bound {show(a)} is above upper bound {show(b)}", rows[i])


def _check_nan(k: int, t: PrimitiveType, out: Any, *, rows: list[int], lo: list[Any], hi: list[Any],
               lengths: set[int]) -> None:
    """"NaNs are not permitted as lower or upper bounds" (Manifests, note 2)."""
    import numpy as np

    for which, col in (("lower", lo), ("upper", hi)):
        idx = [i for i, v in enumerate(col) if v is not None and len(v) in (4, 8)]
        for width, dtype in ((4, "<f4"), (8, "<f8")):
            # (a 4-byte NaN found first is None by now: it is not one of the 8-byte values)
            sel = [i for i in idx if col[i] is not None and len(col[i]) == width] if len(lengths) > 1 else \
                (idx if width in lengths else [])
            if not sel:
                continue
            values = np.frombuffer(b"".join([col[i] for i in sel]), dtype=dtype)
            for j in np.nonzero(np.isnan(values))[0]:
                i = sel[int(j)]
                out.add("BOUND_TYPE", f"{which} bound of field {k} ({t}): NaN is not a valid bound", rows[i])
                col[i] = None


def show(v: Any) -> str:
    """A value in a finding's message: text as a quoted string, other bytes as hex, a decimal as
    its digits."""
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, bytes):
        try:
            return repr(v.decode())
        except UnicodeDecodeError:
            return "0x" + v.hex()
    return repr(v)
