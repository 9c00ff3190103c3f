"""Lower and upper bounds of manifest entries, for ``validate``: each bound is a value of its
column's type in the binary form of Appendix D (and not NaN: "NaNs are not permitted as lower or
upper bounds"), and a lower bound is not above its upper bound (Manifests, notes 1 and 2).

A manifest's bounds are checked a column at a time: lengths as a set, UTF-8 by one decode of the
whole column, order with numpy; only a column that fails is walked value by value, to name the
entries. That keeps the bound checks a small part of scanning a manifest.
"""
from __future__ import annotations

import math
from typing import Any

# Reserved metadata columns that delete and data files may carry bounds for ("Reserved Field IDs").
# _row_id and _last_updated_sequence_number: 2147483540/2147483539 in the spec Iceberg Java 1.10
# implements, 2147483543/2147483542 in the first row-lineage change (shared/seeds).
RESERVED_TYPES = {2147483546: "string", 2147483545: "long", 2147483646: "string", 2147483645: "long",
                  2147483540: "long", 2147483539: "long", 2147483543: "long", 2147483542: "long"}


def _bound_kind(type_name: str) -> str | None:
    t = type_name
    base = t.split("(")[0].split("[")[0]
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


def check_bounds_columns(rows: list[int], los: list[Any], his: list[Any], types: dict[int, str], out: Any) -> None:
    """Every lower and upper bound of a manifest, a column at a time: each must be a value of its
    column's type (Appendix D) and not NaN, and a lower bound must not be above its upper bound.
    Whole columns are checked at once (lengths as a set, UTF-8 by one decode, order with numpy)
    and only a column that fails is checked value by value, to say which entries."""
    dlos = [x if isinstance(x, dict) else dict(x or ()) for x in los]
    dhis = [x if isinstance(x, dict) else dict(x or ()) for x in his]
    keys: set[int] = set()
    keys.update(*dlos, *dhis)
    for k in sorted(keys):
        t = types.get(k) or RESERVED_TYPES.get(k)
        if t is None:
            out.add("BOUND_UNKNOWN_FIELD", f"bounds for field id {k}, which is in no schema of the table")
            continue
        kind = _bound_kind(t)
        if kind is None:
            continue
        lo = [d.get(k) for d in dlos]
        hi = [d.get(k) for d in dhis]
        _check_column(k, t, kind, rows, lo, hi, out)


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
