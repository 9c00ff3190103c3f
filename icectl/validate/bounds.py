"""Lower and upper bounds of manifest entries, for ``validate``: each bound is a value of its
column's type in the binary form of Appendix D (and not NaN: "NaNs are not permitted as lower or
upper bounds"), and a lower bound is not above its upper bound (Manifests, notes 1 and 2).

A manifest's bounds are checked a column at a time, all columns together in polars (lengths per
column, numbers reinterpreted from their bytes and compared, strings cast as UTF-8, bytes compared
unsigned); only a column that fails, or of a type that needs it, is walked value by value
(:func:`_check_column`), to name the entries. That keeps the bound checks a small part of scanning
a manifest.
"""
from __future__ import annotations

import math
from typing import Any

from icectl.spec.types import base_type

# Reserved metadata columns that delete and data files may carry bounds for ("Reserved Field IDs").
# _row_id and _last_updated_sequence_number: 2147483540/2147483539 in the spec Iceberg Java 1.10
# implements, 2147483543/2147483542 in the first row-lineage change (shared/seeds).
RESERVED_TYPES = {2147483546: "string", 2147483545: "long", 2147483646: "string", 2147483645: "long",
                  2147483540: "long", 2147483539: "long", 2147483543: "long", 2147483542: "long"}


def _bound_kind(type_name: str) -> str | None:
    t = type_name
    base = base_type(t)
    if base in ("int", "date"):
        return "i4"
    if base == "long":
        return "i8p"  # 4 bytes: written as an int before int -> long
    if base in ("timestamp", "timestamp_ns"):
        return "tsp"  # 4 bytes: written as a date before date -> timestamp
    if base in ("time", "timestamptz", "timestamptz_ns"):
        return "i8"
    if base == "float":
        return "f4"
    if base == "double":
        return "f8p"
    if base == "boolean":
        return "b1"
    if base == "string":
        return "str"
    if base == "binary":
        return "bin"
    if base == "fixed":
        return "fix" + t[t.index("[") + 1:t.index("]")]
    if base == "uuid":
        return "uuid"
    if base == "decimal":
        return "dec"
    if base in ("geometry", "geography"):
        return "geo"
    return None  # variant, unknown, nested: no bounds to check


def _bound_value(kind: str, v: bytes) -> tuple[Any, str | None]:
    """(comparable value or None, error) of one serialized bound (Appendix D)."""
    n = len(v)
    if kind == "i4":
        return (int.from_bytes(v, "little", signed=True), None) if n == 4 else (None, f"{n} bytes, expected 4")
    if kind in ("i8p", "tsp", "i8"):
        if n == 8:
            return int.from_bytes(v, "little", signed=True), None
        if n == 4 and kind != "i8":
            x = int.from_bytes(v, "little", signed=True)
            return (x * 86_400_000_000 if kind == "tsp" else x), None
        return None, f"{n} bytes, expected 8"
    if kind in ("f4", "f8p"):
        if n == 4 or (n == 8 and kind == "f8p"):
            import struct

            x = struct.unpack("<f" if n == 4 else "<d", v)[0]
            return (None, "NaN is not a valid bound") if math.isnan(x) else (x, None)
        return None, f"{n} bytes, expected {'4' if kind == 'f4' else '8'}"
    if kind == "b1":
        return (v, None) if n == 1 else (None, f"{n} bytes, expected 1")
    if kind == "str":
        try:
            v.decode("utf-8")
        except UnicodeDecodeError:
            return None, "not UTF-8"
        return v, None  # UTF-8 bytes order as code points
    if kind == "bin":
        return v, None
    if kind.startswith("fix"):
        return (v, None) if n <= int(kind[3:]) else (None, f"{n} bytes, expected at most {kind[3:]}")
    if kind == "uuid":
        return (None, None) if n == 16 else (None, f"{n} bytes, expected 16")
    if kind == "dec":
        return (int.from_bytes(v, "big", signed=True), None) if n else (None, "empty bytes")
    if kind == "geo":
        return (None, None) if n in (16, 24, 32) else (None, f"{n} bytes, expected 16, 24 or 32")
    return None, None


def check_bounds_frame(frame: Any, types: dict[int, str], outs: list[Any]) -> None:
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
    for m, k, a, b in both.select("m", "key", pl.col("value").bin.size(), pl.col("value_hi").bin.size()
                                  .alias("b")).unique().rows():
        lengths.setdefault(k, set()).update(x for x in (a, b) if x is not None)
        manifests.setdefault(k, set()).add(m)
    both = both.lazy()
    checks: set[tuple[int, int]] = set()  # (manifest, field id) to check value by value
    groups: dict[str, list[int]] = {}
    kinds: dict[int, tuple[str, str]] = {}
    for k, lens in sorted(lengths.items()):
        t = types.get(k) or RESERVED_TYPES.get(k)
        if t is None:
            for m in sorted(manifests[k]):
                outs[m].add("BOUND_UNKNOWN_FIELD", f"bounds for field id {k}, which is in no schema of the table")
            continue
        kind = _bound_kind(t)
        if kind is None:
            continue
        kinds[k] = (t, kind)
        group = _fast_group(kind, set(lens))
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
        checks.update((m, k) for m, k, x in sub.group_by("m", "key").agg(bad.any()).collect().rows() if x)
    if not checks:
        return
    keys = sorted({k for _, k in checks})
    parts = both.filter(pl.col("key").is_in(keys)).sort("m", "key", "n").collect() \
        .partition_by("m", "key", as_dict=True)
    for m, k in sorted(checks):
        t, kind = kinds[k]
        col = parts[(m, k)]
        _check_column(k, t, kind, col.get_column("n").to_list(), col.get_column("value").to_list(),
                      col.get_column("value_hi").to_list(), outs[m])


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


def _fast_group(kind: str, lengths: set[int]) -> str | None:
    """How polars checks a column of ``kind`` whose values have these lengths: a polars number
    type to reinterpret the bytes as, "str", "bytes" (unsigned order), "" (valid, nothing to
    order: uuid, geo), or None: value by value (invalid lengths, decimal, mixed widths)."""
    allowed = _LENGTHS.get(kind)
    if allowed is not None and not lengths <= allowed:
        return None
    if kind in ("uuid", "geo"):
        return ""
    width = next(iter(lengths)) if len(lengths) == 1 else None
    if (kind, width) in _NUMPY:
        return _POLARS_NUMBER[_NUMPY[(kind, width)]]
    if kind == "str":
        return "str"
    if kind in ("bin", "b1") or (kind.startswith("fix") and max(lengths, default=0) <= int(kind[3:])):
        return "bytes"
    return None


_POLARS_NUMBER = {"<i4": "Int32", "<i8": "Int64", "<f4": "Float32", "<f8": "Float64"}


_LENGTHS = {"i4": {4}, "i8": {8}, "i8p": {4, 8}, "tsp": {4, 8}, "f4": {4}, "f8p": {4, 8}, "b1": {1}, "uuid": {16},
            "geo": {16, 24, 32}}
_NUMPY = {("i4", 4): "<i4", ("i8", 8): "<i8", ("i8p", 8): "<i8", ("i8p", 4): "<i4", ("tsp", 8): "<i8",
          ("tsp", 4): "<i4", ("f4", 4): "<f4", ("f8p", 8): "<f8", ("f8p", 4): "<f4"}


def _check_column(k: int, t: str, kind: str, rows: list[int], lo: list[Any], hi: list[Any], out: Any) -> None:
    present = [v for v in lo if v is not None] + [v for v in hi if v is not None]
    valid = True
    lengths = set(map(len, present))
    allowed = _LENGTHS.get(kind)
    if allowed is not None:
        valid = lengths <= allowed
    elif kind == "str":
        try:
            b"".join(present).decode("utf-8")
        except UnicodeDecodeError:
            valid = False
    elif kind.startswith("fix"):
        valid = max(lengths, default=0) <= int(kind[3:])
    elif kind == "dec":
        valid = 0 not in lengths
    if not valid:  # find the entries, and leave them out of the order check
        for which, col in (("lower", lo), ("upper", hi)):
            for i, v in enumerate(col):
                if v is not None and _bound_value(kind, v)[1] is not None:
                    out.add("BOUND_TYPE", f"{which} bound of field {k} ({t}): {_bound_value(kind, v)[1]}", rows[i])
                    col[i] = None
    if kind in ("uuid", "geo"):
        return  # no order to check: Java's uuid order has changed across versions; boxes may wrap
    if kind in ("f4", "f8p"):
        _check_nan(k, t, rows, lo, hi, lengths, out)
    pairs = [i for i, (a, b) in enumerate(zip(lo, hi)) if a is not None and b is not None]
    if not pairs:
        return
    width = next(iter(lengths)) if len(lengths) == 1 else None
    if (kind, width) in _NUMPY:
        import numpy as np

        dtype = _NUMPY[(kind, width)]
        a = np.frombuffer(b"".join([lo[i] for i in pairs]), dtype=dtype)
        b = np.frombuffer(b"".join([hi[i] for i in pairs]), dtype=dtype)
        bad = [pairs[int(j)] for j in np.nonzero(a > b)[0]]
    elif kind in ("str", "bin", "b1") or kind.startswith("fix"):
        bad = [i for i in pairs if lo[i] > hi[i]]  # unsigned bytes; UTF-8 bytes order as code points
    else:
        bad = []
        for i in pairs:
            a, b = _bound_value(kind, lo[i])[0], _bound_value(kind, hi[i])[0]
            if a is not None and b is not None and a > b:
                bad.append(i)
    for i in bad:
        a, b = _bound_value(kind, lo[i])[0], _bound_value(kind, hi[i])[0]
        out.add("BOUND_ORDER", f"field {k}: lower bound {show(a)} is above upper bound {show(b)}", rows[i])


def _check_nan(k: int, t: str, rows: list[int], lo: list[Any], hi: list[Any], lengths: set[int],
               out: Any) -> None:
    """"NaNs are not permitted as lower or upper bounds" (Manifests, note 2)."""
    import numpy as np

    for which, col in (("lower", lo), ("upper", hi)):
        idx = [i for i, v in enumerate(col) if v is not None and len(v) in (4, 8)]
        for width, dtype in ((4, "<f4"), (8, "<f8")):
            sel = [i for i in idx if len(col[i]) == width] if len(lengths) > 1 else (idx if width in lengths else [])
            if not sel:
                continue
            values = np.frombuffer(b"".join([col[i] for i in sel]), dtype=dtype)
            for j in np.nonzero(np.isnan(values))[0]:
                i = sel[int(j)]
                out.add("BOUND_TYPE", f"{which} bound of field {k} ({t}): NaN is not a valid bound", rows[i])
                col[i] = None


def show(v: Any) -> str:
    if isinstance(v, bytes):
        try:
            return repr(v.decode())
        except UnicodeDecodeError:
            return "0x" + v.hex()
    return repr(v)
