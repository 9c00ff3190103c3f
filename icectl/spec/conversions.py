"""Single values of primitive types: binary (bounds), JSON (defaults) and display forms.

Spec: "Appendix D: Single-value serialization" (binary and JSON), "Bound serialization" for
geometry/geography points, and "Schema Evolution" / type promotion for bounds written before a
column was promoted.

Python representation of a value, by type:

boolean                   ``bool``
int, long                 ``int``
float, double             ``float`` (a ``float`` value is always exactly a float32)
decimal(P,S)              ``decimal.Decimal`` with exponent ``-S``
date                      ``int``: days from 1970-01-01
time                      ``int``: microseconds from midnight
timestamp, timestamptz    ``int``: microseconds from 1970-01-01T00:00:00 (UTC)
timestamp_ns, *tz_ns      ``int``: nanoseconds from 1970-01-01T00:00:00 (UTC)
string                    ``str``
uuid                      ``uuid.UUID``
fixed[L], binary          ``bytes``
geometry, geography       bounds: ``tuple`` of 2 to 4 floats (x, y[, z[, m]]);
                          JSON: ``str`` (WKT)
struct (JSON only)        ``dict`` of field id -> value
list (JSON only)          ``list``
map (JSON only)           ``dict``; a list of ``(key, value)`` pairs when keys are unhashable

Dates and timestamps: :mod:`icectl.spec.temporal`.
"""
from __future__ import annotations

import datetime
import decimal
import json
import math
import re
import struct
import uuid
from typing import Any, Iterable

from icectl.errors import InvalidMetadataError
from icectl.spec.temporal import (
    MICROS_PER_DAY,
    NANOS_PER_DAY,
    TIME_RE,
    days_to_iso,
    iso_to_days,
    iso_to_timestamp,
    micros_to_iso_time,
    time_nanos,
    timestamp_to_iso,
)
from icectl.spec.types import (
    INT_MAX,
    INT_MIN,
    LONG_MAX,
    LONG_MIN,
    IcebergType,
    ListType,
    MapType,
    PrimitiveType,
    StructType,
    primitive,
)

__all__ = [
    "to_bytes", "from_bytes", "to_internal", "MalformedValue", "BINARY_WIDTHS", "to_json", "from_json", "human",
    "decimal_min_bytes", "decimal_from_unscaled", "unscaled", "truncate_lower", "truncate_upper",
]

# Enough digits for any decimal(38, S) and its arithmetic, so no context rounding ever happens.
_DECIMAL_CONTEXT = decimal.Context(prec=100, Emax=10**6, Emin=-(10**6))


def _bad(msg: str) -> InvalidMetadataError:
    return InvalidMetadataError(msg)


def _prim(t: PrimitiveType | str) -> PrimitiveType:
    return primitive(t) if isinstance(t, str) else t


# ---------------------------------------------------------------------------------------------
# Numbers


def _f32(x: float) -> float:
    """``x`` rounded to a 32-bit float (raise when it overflows)."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except (OverflowError, struct.error):
        raise _bad(f"{x!r} is out of range for float") from None


def _f32_shortest(x: float) -> float:
    """The shortest decimal that reads back as the same float32 (what Java's Float.toString shows)."""
    if not math.isfinite(x):
        return x
    for p in range(1, 10):
        candidate = float(f"{x:.{p}g}")
        try:
            if struct.unpack("<f", struct.pack("<f", candidate))[0] == x:
                return candidate
        except OverflowError:  # rounded up past the largest float32
            continue
    return x


def _number_text(x: float) -> str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return repr(x)


def unscaled(t: PrimitiveType, value: decimal.Decimal) -> int:
    """The unscaled integer of ``value`` at the scale of decimal type ``t``; raise if inexact."""
    if not isinstance(value, decimal.Decimal) or not value.is_finite():
        raise _bad(f"invalid {t} value {value!r}: expected a finite decimal.Decimal")
    scale = t.scale
    sign, digits, exp = value.as_tuple()
    n = int("".join(map(str, digits)) or "0")
    shift = exp + scale  # type: ignore[operator]
    if shift >= 0:
        n *= 10**shift
    else:
        n, rem = divmod(n, 10**-shift)
        if rem:
            raise _bad(f"invalid {t} value {value}: more than {scale} digits after the decimal point")
    return -n if sign else n


def decimal_from_unscaled(n: int, scale: int) -> decimal.Decimal:
    """The decimal ``n * 10**-scale`` with exponent ``-scale``, exactly (no context rounding)."""
    return decimal.Decimal(n).scaleb(-scale, _DECIMAL_CONTEXT)


def decimal_min_bytes(n: int) -> bytes:
    """Two's-complement big-endian bytes of ``n``, as few as hold it (Java's BigInteger.toByteArray)."""
    length = (n if n >= 0 else ~n).bit_length() // 8 + 1
    return n.to_bytes(length, "big", signed=True)


def _expect(t: PrimitiveType, value: Any, cls: type | tuple[type, ...], what: str) -> Any:
    if not isinstance(value, cls):
        raise _bad(f"invalid {t} value {value!r}: expected {what}")
    return value


def _check_int(t: PrimitiveType, value: Any, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(f"invalid {t} value {value!r}: expected an integer")
    if not lo <= value <= hi:
        raise _bad(f"{t} value {value} is out of range [{lo}, {hi}]")
    return value


def _check_decimal(t: PrimitiveType, value: Any) -> int:
    n = unscaled(t, value)
    if len(str(abs(n))) > t.precision:
        raise _bad(f"{t} value {value} has more than {t.precision} digits")
    return n


def _check_bytes(t: PrimitiveType, value: Any) -> bytes:
    value = bytes(_expect(t, value, (bytes, bytearray, memoryview), "bytes"))
    if t.base == "fixed" and len(value) != t.length:
        raise _bad(f"invalid {t} value: {len(value)} bytes, expected {t.length}")
    return value


def _check_point(t: PrimitiveType, value: Any) -> tuple[float, ...]:
    if not isinstance(value, (tuple, list)) or not 2 <= len(value) <= 4:
        raise _bad(f"invalid {t} bound {value!r}: expected a point (x, y[, z[, m]])")
    try:
        return tuple(float(c) for c in value)
    except (TypeError, ValueError):
        raise _bad(f"invalid {t} bound {value!r}: coordinates must be numbers") from None


# ---------------------------------------------------------------------------------------------
# Binary (Appendix D "Binary single-value serialization" and "Bound serialization")

_INT_LIKE = ("int", "date")
_LONG_LIKE = ("long", "time", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns")


def to_bytes(t: PrimitiveType | str, value: Any) -> bytes:
    """Binary single-value serialization of ``value`` (spec Appendix D), as written in bounds.

    Geometry and geography take a bound point (Appendix D "Bound serialization"): x:y[:z[:m]]
    as little-endian doubles. ``variant`` and ``unknown`` have no binary form here.
    """
    t = _prim(t)
    base = t.base
    if base == "boolean":
        return b"\x01" if _expect(t, value, bool, "true or false") else b"\x00"
    if base in _INT_LIKE:
        return struct.pack("<i", _check_int(t, value, INT_MIN, INT_MAX))
    if base in _LONG_LIKE:
        v = _check_int(t, value, LONG_MIN, LONG_MAX)
        if base == "time" and not 0 <= v < MICROS_PER_DAY:
            raise _bad(f"time value {v} is not within a day")
        return struct.pack("<q", v)
    if base == "float":
        return struct.pack("<f", _f32(_check_float(t, value)))
    if base == "double":
        return struct.pack("<d", _check_float(t, value))
    if base == "string":
        try:
            return _expect(t, value, str, "a str").encode("utf-8")
        except UnicodeEncodeError as e:
            raise _bad(f"string value cannot be encoded as UTF-8: {e}") from None
    if base == "uuid":
        return _expect(t, value, uuid.UUID, "a uuid.UUID").bytes
    if base in ("fixed", "binary"):
        return _check_bytes(t, value)
    if base == "decimal":
        return decimal_min_bytes(_check_decimal(t, value))
    if base in ("geometry", "geography"):
        point = _check_point(t, value)
        return struct.pack(f"<{len(point)}d", *point)
    raise _bad(f"type {t} has no binary single-value serialization")


def _check_float(t: PrimitiveType, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _bad(f"invalid {t} value {value!r}: expected a number")
    return float(value)


# Byte lengths a binary single value of a fixed-width type may have: besides its own width, the
# width it had before a promotion ("Schema Evolution": int -> long, float -> double, and
# date -> timestamp/timestamp_ns, where a 4-byte bound is a day).
BINARY_WIDTHS: dict[str, tuple[int, ...]] = {
    "boolean": (1,), "int": (4,), "date": (4,), "long": (4, 8), "time": (8,), "timestamp": (4, 8),
    "timestamptz": (8,), "timestamp_ns": (4, 8), "timestamptz_ns": (8,), "float": (4,), "double": (4, 8),
    "uuid": (16,), "geometry": (16, 24, 32), "geography": (16, 24, 32),
}


class MalformedValue(InvalidMetadataError):
    """Bytes that are not a binary single value of their type; ``reason`` says why, briefly
    ("5 bytes, expected 4 or 8")."""

    def __init__(self, t: PrimitiveType, data: bytes, reason: str, *, show_bytes: bool = False):
        super().__init__(f"invalid {t} value: {reason}" + (f" (bytes: {data.hex()})" if show_bytes else ""))
        self.reason = reason


def _widths(lengths: tuple[int, ...]) -> str:
    text = [str(x) for x in lengths]
    return text[0] if len(text) == 1 else f"{', '.join(text[:-1])} or {text[-1]}"


def from_bytes(t: PrimitiveType | str, data: bytes) -> Any:
    """Decode a binary single value (spec Appendix D), e.g. a lower or upper bound; raises
    :class:`MalformedValue` for bytes that are not a value of ``t``.

    Tolerates bounds written before a type promotion ("Schema Evolution"): 4 bytes for a
    ``long`` (an ``int``), for a ``double`` (a ``float``), for a ``timestamp``/``timestamp_ns``
    (a ``date``, converted to the start of that day); a ``fixed`` bound may be shorter than L
    (a truncated bound).
    """
    t = _prim(t)
    data = bytes(_expect(t, data, (bytes, bytearray, memoryview), "bytes"))
    base, n = t.base, len(data)
    widths = BINARY_WIDTHS.get(base)
    if widths is not None and n not in widths:
        raise MalformedValue(t, data, f"{n} bytes, expected {_widths(widths)}", show_bytes=True)
    if base == "boolean":
        return data != b"\x00"
    if base in _INT_LIKE:
        return struct.unpack("<i", data)[0]
    if base in _LONG_LIKE:
        if n == 8:
            return struct.unpack("<q", data)[0]
        small = struct.unpack("<i", data)[0]
        if base == "long":
            return small  # written as int before int -> long
        return small * (NANOS_PER_DAY if base == "timestamp_ns" else MICROS_PER_DAY)  # was a date
    if base == "float":
        return struct.unpack("<f", data)[0]
    if base == "double":
        return struct.unpack("<f" if n == 4 else "<d", data)[0]
    if base == "string":
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise MalformedValue(t, data, f"not UTF-8 ({e.reason} at byte {e.start})") from None
    if base == "uuid":
        return uuid.UUID(bytes=data)
    if base == "fixed":
        if n > t.length:
            raise MalformedValue(t, data, f"{n} bytes, expected at most {t.length}")
        return data
    if base == "binary":
        return data
    if base == "decimal":
        if n == 0:
            raise MalformedValue(t, data, "empty bytes")
        return decimal_from_unscaled(int.from_bytes(data, "big", signed=True), t.scale)
    if base in ("geometry", "geography"):
        return struct.unpack(f"<{n // 8}d", data)
    raise _bad(f"type {t} has no binary single-value serialization; cannot decode {n} bytes")


_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_TZ = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_EPOCH_DATE = datetime.date(1970, 1, 1)


def to_internal(t: PrimitiveType | None, v: Any) -> Any:
    """A value as an Avro reader returns it, in the representation above: ``date``, ``time``
    and ``datetime`` objects (from readers that convert logical types) as days and micros (nanos
    for the ``_ns`` timestamps), a uuid's fixed[16] bytes as ``uuid.UUID``, a decimal's unscaled
    big-endian bytes (from readers that do not convert) as ``Decimal``; anything else as it is."""
    if v is None:
        return None
    if t is not None and isinstance(v, (bytes, bytearray)):
        if t.base == "uuid" and len(v) == 16:
            return uuid.UUID(bytes=bytes(v))
        if t.base == "decimal":
            return decimal_from_unscaled(int.from_bytes(v, "big", signed=True), t.scale)
        return v
    if isinstance(v, datetime.datetime):
        delta = v - (_EPOCH_TZ if v.tzinfo else _EPOCH)
        micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
        if t is not None and t.base in ("timestamp_ns", "timestamptz_ns"):
            return micros * 1000
        return micros
    if isinstance(v, datetime.date):
        return (v - _EPOCH_DATE).days
    if isinstance(v, datetime.time):
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
    return v


# ---------------------------------------------------------------------------------------------
# JSON (Appendix D "JSON single-value serialization", used by initial-default / write-default)

_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def to_json(t: IcebergType | str, value: Any) -> Any:
    """The JSON single-value form of ``value`` (spec Appendix D) as a JSON-ready Python object."""
    t = _prim(t) if isinstance(t, str) else t
    if value is None:
        return None
    if isinstance(t, StructType):
        if not isinstance(value, dict):
            raise _bad(f"invalid struct value {value!r}: expected a dict of field id -> value")
        return {str(f.field_id): to_json(f.field_type, value[f.field_id])
                for f in t.fields if f.field_id in value}
    if isinstance(t, ListType):
        if isinstance(value, (str, bytes, dict)) or not isinstance(value, Iterable):
            raise _bad(f"invalid list value {value!r}")
        return [to_json(t.element_type, v) for v in value]
    if isinstance(t, MapType):
        pairs = list(value.items()) if isinstance(value, dict) else list(value)
        return {"keys": [to_json(t.key_type, k) for k, _ in pairs],
                "values": [to_json(t.value_type, v) for _, v in pairs]}
    if not isinstance(t, PrimitiveType):
        raise _bad(f"cannot serialize a value of type {t}")
    base = t.base
    if base == "boolean":
        return _expect(t, value, bool, "true or false")
    if base in ("int", "long"):
        return _check_int(t, value, *((INT_MIN, INT_MAX) if base == "int" else (LONG_MIN, LONG_MAX)))
    if base in ("float", "double"):
        x = _check_float(t, value)
        if base == "float":
            x = _f32_shortest(_f32(x))
        return x if math.isfinite(x) else _number_text(x)  # JSON has no NaN; Jackson writes strings
    if base == "decimal":
        n = _check_decimal(t, value)
        return _decimal_text(n, t.scale)
    if base == "date":
        return days_to_iso(_check_int(t, value, INT_MIN, INT_MAX))
    if base == "time":
        return micros_to_iso_time(_check_int(t, value, LONG_MIN, LONG_MAX))
    if base in ("timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"):
        v = _check_int(t, value, LONG_MIN, LONG_MAX)
        return timestamp_to_iso(v, nanos=base.endswith("_ns"), tz="tz" in base, trim=False)
    if base == "string":
        return _expect(t, value, str, "a str")
    if base == "uuid":
        return str(_expect(t, value, uuid.UUID, "a uuid.UUID"))
    if base in ("fixed", "binary"):
        return _check_bytes(t, value).hex()
    if base in ("geometry", "geography"):
        if isinstance(value, str):
            return value  # already WKT
        return _wkt_point(_check_point(t, value))
    raise _bad(f"type {t} has no JSON single-value serialization (only null)")


def _decimal_text(n: int, scale: int) -> str:
    if scale == 0:
        return str(n)
    digits = str(abs(n)).rjust(scale + 1, "0")
    return ("-" if n < 0 else "") + digits[:-scale] + "." + digits[-scale:]


def from_json(t: IcebergType | str, obj: Any) -> Any:
    """Read a JSON single value (spec Appendix D), accepting what Iceberg Java writes.

    Java writes fixed/binary hex in upper case, times and timestamps with the fraction trimmed
    (``22:31:08``, ``2017-11-16T22:31:08.1``) and NaN/Infinity as strings; all are accepted.
    Struct values come back with every field id of the struct (missing ones as ``None``).
    """
    t = _prim(t) if isinstance(t, str) else t
    if obj is None:
        return None
    if isinstance(t, StructType):
        if not isinstance(obj, dict):
            raise _bad(f"invalid struct value {obj!r}: expected a JSON object keyed by field id")
        return {f.field_id: from_json(f.field_type, obj.get(str(f.field_id))) for f in t.fields}
    if isinstance(t, ListType):
        if not isinstance(obj, list):
            raise _bad(f"invalid list value {obj!r}: expected a JSON array")
        return [from_json(t.element_type, v) for v in obj]
    if isinstance(t, MapType):
        return _map_from_json(t, obj)
    if not isinstance(t, PrimitiveType):
        raise _bad(f"cannot read a value of type {t}")
    base = t.base
    if base == "boolean":
        return _expect(t, obj, bool, "a JSON boolean")
    if base in ("int", "long"):
        return _check_int(t, obj, *((INT_MIN, INT_MAX) if base == "int" else (LONG_MIN, LONG_MAX)))
    if base in ("float", "double"):
        if isinstance(obj, str) and obj in _NON_FINITE:
            return _NON_FINITE[obj]
        x = _check_float(t, obj)
        return _f32(x) if base == "float" else x
    if base == "decimal":
        return _decimal_from_json(t, obj)
    if base in ("date", "time") or base.startswith("timestamp"):
        _expect(t, obj, str, "an ISO-8601 string")
        if base == "date":
            return iso_to_days(obj)
        if base == "time":
            m = TIME_RE.fullmatch(obj)
            if not m:
                raise _bad(f"invalid time value {obj!r}: expected ISO-8601 like 22:31:08.123456")
            return time_nanos(*m.groups(), obj) // 1000
        return iso_to_timestamp(obj, nanos=base.endswith("_ns"), tz="tz" in base, type_name=str(t))
    if base == "string":
        return _expect(t, obj, str, "a JSON string")
    if base == "uuid":
        if not isinstance(obj, str) or not re.fullmatch(r"[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}", obj):
            raise _bad(f"invalid uuid value {obj!r}: expected 8-4-4-4-12 hex digits")
        return uuid.UUID(obj)
    if base in ("fixed", "binary"):
        try:
            data = bytes.fromhex(_expect(t, obj, str, "a hex string"))
        except ValueError:
            raise _bad(f"invalid {t} value {obj!r}: not a hexadecimal string") from None
        return _check_bytes(t, data)
    if base in ("geometry", "geography"):
        return _expect(t, obj, str, "a WKT string")
    raise _bad(f"type {t} has no JSON single-value serialization (only null): got {obj!r}")


def _decimal_from_json(t: PrimitiveType, obj: Any) -> decimal.Decimal:
    if not isinstance(obj, str):
        raise _bad(f"invalid {t} value {obj!r}: expected a JSON string such as \"14.20\"")
    try:
        value = decimal.Decimal(obj.strip())
    except decimal.InvalidOperation:
        raise _bad(f"invalid {t} value {obj!r}: not a decimal number") from None
    if not value.is_finite():
        raise _bad(f"invalid {t} value {obj!r}: not a finite number")
    # Java insists the scale matches; a lossless rescale (e.g. "14.2" for scale 2) is tolerated.
    return decimal_from_unscaled(unscaled(t, value), t.scale)


def _map_from_json(t: MapType, obj: Any) -> Any:
    if not (isinstance(obj, dict) and isinstance(obj.get("keys"), list) and isinstance(obj.get("values"), list)):
        raise _bad(f"invalid map value {obj!r}: expected {{\"keys\": [...], \"values\": [...]}}")
    keys, values = obj["keys"], obj["values"]
    if len(keys) != len(values):
        raise _bad(f"invalid map value: {len(keys)} keys but {len(values)} values")
    pairs = [(from_json(t.key_type, k), from_json(t.value_type, v)) for k, v in zip(keys, values)]
    try:
        result = dict(pairs)
    except TypeError:
        return pairs  # unhashable keys (struct, list or map keys)
    if len(result) != len(pairs):
        raise _bad("invalid map value: duplicate keys")
    return result


# ---------------------------------------------------------------------------------------------
# Display


def _wkt_number(x: float) -> str:
    if math.isfinite(x) and x == int(x):
        return str(int(x))
    return _number_text(x)


def _wkt_point(p: tuple[float, ...]) -> str:
    if len(p) == 2:
        return f"POINT ({_wkt_number(p[0])} {_wkt_number(p[1])})"
    if len(p) == 3:
        return "POINT Z (" + " ".join(map(_wkt_number, p)) + ")"
    if math.isnan(p[2]):  # x:y:NaN:m means z is unset
        return f"POINT M ({_wkt_number(p[0])} {_wkt_number(p[1])} {_wkt_number(p[3])})"
    return "POINT ZM (" + " ".join(map(_wkt_number, p)) + ")"


def human(t: IcebergType | str, value: Any) -> str:
    """A display string for a value: ISO dates and timestamps, plain decimals, ``0x`` hex bytes.

    Times and timestamps drop trailing zero fraction digits, as Iceberg Java's
    ``Transform.toHumanString`` does (``2017-11-16T22:31:08+00:00``). Never raises: a value that
    does not fit its type is shown with ``repr``.
    """
    t = _prim(t) if isinstance(t, str) else t
    if value is None:
        return "null"
    try:
        if not isinstance(t, PrimitiveType):
            return json.dumps(to_json(t, value), sort_keys=False)
        base = t.base
        if base == "boolean":
            return "true" if value else "false"
        if base in ("float", "double"):
            x = float(value)
            return _number_text(_f32_shortest(x) if base == "float" else x)
        if base == "time":
            return micros_to_iso_time(value, trim=True)
        if base.startswith("timestamp"):
            _check_int(t, value, LONG_MIN, LONG_MAX)
            return timestamp_to_iso(value, nanos=base.endswith("_ns"), tz="tz" in base, trim=True)
        if base in ("fixed", "binary"):
            return "0x" + bytes(value).hex()
        if base in ("geometry", "geography"):
            return value if isinstance(value, str) else _wkt_point(_check_point(t, value))
        if base in ("decimal", "date", "uuid"):
            return str(to_json(t, value))
        if base in ("int", "long"):
            return str(int(value))
        return str(value)
    except (InvalidMetadataError, TypeError, ValueError, OverflowError):
        return repr(value)


# ---------------------------------------------------------------------------------------------
# Truncated bounds (the ``truncate(N)`` metrics mode): strings to N characters, binary to N bytes.

def truncate_lower(t: PrimitiveType, value: Any, n: int) -> Any:
    """A lower bound of a ``truncate(n)`` column: a prefix is never above the value."""
    if t.base in ("string", "binary"):
        return value[:n]
    return value


def truncate_upper(t: PrimitiveType, value: Any, n: int) -> Any:
    """An upper bound of a ``truncate(n)`` column, or None when there is none (Java's
    ``UnicodeUtil.truncateStringMax`` / ``BinaryUtil.truncateBinaryMax``): a value not longer than
    ``n`` is kept; else its first ``n`` characters (bytes) with the last one that can be
    incremented incremented and what follows it dropped (a character never into the surrogate
    range, and not past U+10FFFF; a byte not past 0xFF)."""
    if t.base == "string":
        if len(value) <= n:
            return value
        chars = list(value[:n])
        while chars:
            c = ord(chars[-1]) + 1
            if 0xD800 <= c <= 0xDFFF:
                c = 0xE000
            if c <= 0x10FFFF:
                chars[-1] = chr(c)
                return "".join(chars)
            chars.pop()
        return None
    if t.base == "binary":
        if len(value) <= n:
            return value
        arr = bytearray(value[:n])
        while arr:
            if arr[-1] < 0xFF:
                arr[-1] += 1
                return bytes(arr)
            arr.pop()
        return None
    return value
