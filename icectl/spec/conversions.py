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

Dates and timestamps are computed on the proleptic Gregorian calendar without ``datetime``,
so every value of the underlying int/long converts, including years before 1 and after 9999.
"""
from __future__ import annotations

import decimal
import json
import math
import re
import struct
import uuid
from typing import Any, Iterable

from icectl.spec.types import IcebergType, ListType, MapType, PrimitiveType, StructType, primitive
from icectl.errors import InvalidMetadataError

__all__ = [
    "to_bytes", "from_bytes", "to_json", "from_json", "human",
    "days_to_iso", "iso_to_days", "micros_to_iso_time", "civil_from_days", "days_from_civil",
    "decimal_min_bytes", "decimal_from_unscaled", "unscaled",
]

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
MICROS_PER_DAY = 86_400_000_000
NANOS_PER_DAY = MICROS_PER_DAY * 1000
# Enough digits for any decimal(38, S) and its arithmetic, so no context rounding ever happens.
_DECIMAL_CONTEXT = decimal.Context(prec=100, Emax=10**6, Emin=-(10**6))


def _bad(msg: str) -> InvalidMetadataError:
    return InvalidMetadataError(msg)


def _prim(t: PrimitiveType | str) -> PrimitiveType:
    return primitive(t) if isinstance(t, str) else t


# ---------------------------------------------------------------------------------------------
# Calendar arithmetic (proleptic Gregorian; H. Hinnant's civil_from_days / days_from_civil)


def civil_from_days(days: int) -> tuple[int, int, int]:
    """(year, month, day) of a day count from 1970-01-01, for any integer."""
    z = days + 719_468
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    y = yoe + era * 400 + (1 if m <= 2 else 0)
    return y, m, d


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 of a proleptic Gregorian date."""
    y = year - (1 if month <= 2 else 0)
    era = y // 400
    yoe = y - era * 400
    mp = month - 3 if month > 2 else month + 9
    doy = (153 * mp + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146_097 + doe - 719_468


def _iso_year(y: int) -> str:
    # ISO-8601 / java.time: four digits, a sign when negative or longer than four digits.
    return f"-{-y:04d}" if y < 0 else f"+{y}" if y > 9999 else f"{y:04d}"


def days_to_iso(days: int) -> str:
    """``2017-11-16`` for 17486 (Appendix D JSON ``date``)."""
    y, m, d = civil_from_days(days)
    return f"{_iso_year(y)}-{m:02d}-{d:02d}"


_DATE = r"([+-]?\d{4,})-(\d{2})-(\d{2})"
_TIME = r"(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?"
_DATE_RE = re.compile(_DATE)
_TIME_RE = re.compile(_TIME)
_TS_RE = re.compile(_DATE + r"[Tt]" + _TIME + r"([Zz]|[+-]\d{2}:\d{2}(?::\d{2})?)?")


def _date_parts(y: str, mo: str, d: str, text: str) -> int:
    ymd = (int(y), int(mo), int(d))
    days = days_from_civil(*ymd)
    if not 1 <= ymd[1] <= 12 or civil_from_days(days) != ymd:  # e.g. 2017-02-29 or day 32
        raise _bad(f"invalid date {text!r}")
    return days


def _time_nanos(h: str, mi: str, s: str | None, frac: str | None, text: str) -> int:
    hour, minute, second = int(h), int(mi), int(s or 0)
    if hour > 23 or minute > 59 or second > 59:
        raise _bad(f"invalid time {text!r}")
    nanos = int((frac or "").ljust(9, "0"))
    return ((hour * 60 + minute) * 60 + second) * 1_000_000_000 + nanos


def iso_to_days(text: str) -> int:
    """Days from 1970-01-01 of an ISO-8601 date such as ``2017-11-16``."""
    m = _DATE_RE.fullmatch(text) if isinstance(text, str) else None
    if not m:
        raise _bad(f"invalid date {text!r}: expected an ISO-8601 date like 2017-11-16")
    return _date_parts(*m.groups(), text)


def _fraction(nanos: int, digits: int, trim: bool) -> str:
    """The fraction of a second for ``nanos`` (0..999_999_999), ``digits`` wide or trimmed."""
    if trim:
        return "." + f"{nanos:09d}".rstrip("0") if nanos else ""
    return "." + f"{nanos:09d}"[:digits]


def _time_of_day(nanos_of_day: int, digits: int, trim: bool) -> str:
    secs, nanos = divmod(nanos_of_day, 1_000_000_000)
    h, rem = divmod(secs, 3600)
    mi, s = divmod(rem, 60)
    return f"{h:02d}:{mi:02d}:{s:02d}{_fraction(nanos, digits, trim)}"


def micros_to_iso_time(micros: int, *, trim: bool = False) -> str:
    """``22:31:08.123456`` (microsecond precision; ``trim`` drops trailing zeros as Java)."""
    if not 0 <= micros < MICROS_PER_DAY:
        raise _bad(f"time value {micros} is not within a day (0 <= micros < {MICROS_PER_DAY})")
    return _time_of_day(micros * 1000, 6, trim)


def _timestamp_to_iso(value: int, *, nanos: bool, tz: bool, trim: bool) -> str:
    per_day = NANOS_PER_DAY if nanos else MICROS_PER_DAY
    days, of_day = divmod(value, per_day)
    text = days_to_iso(days) + "T" + _time_of_day(of_day if nanos else of_day * 1000, 9 if nanos else 6, trim)
    return text + "+00:00" if tz else text


def _iso_to_timestamp(text: Any, *, nanos: bool, tz: bool, type_name: str) -> int:
    m = _TS_RE.fullmatch(text) if isinstance(text, str) else None
    if not m:
        example = "2017-11-16T22:31:08.123456" + ("+00:00" if tz else "")
        raise _bad(f"invalid {type_name} value {text!r}: expected ISO-8601 like {example}")
    y, mo, d, h, mi, s, frac, offset = m.groups()
    if tz and offset is None:
        raise _bad(f"invalid {type_name} value {text!r}: a zone offset (+00:00) is required")
    if not tz and offset is not None:
        raise _bad(f"invalid {type_name} value {text!r}: must not include a zone offset")
    if offset is not None and offset.upper() != "Z" and offset[1:].replace(":", "").strip("0"):
        raise _bad(f"invalid {type_name} value {text!r}: the zone offset must be +00:00 (UTC)")
    total = _date_parts(y, mo, d, text) * NANOS_PER_DAY + _time_nanos(h, mi, s, frac, text)
    if nanos:
        return total
    # java.time's ChronoUnit.MICROS.between truncates extra nanosecond digits toward zero.
    q = abs(total) // 1000
    return q if total >= 0 else -q


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


def from_bytes(t: PrimitiveType | str, data: bytes) -> Any:
    """Decode a binary single value (spec Appendix D), e.g. a lower or upper bound.

    Tolerates bounds written before a type promotion ("Schema Evolution"): 4 bytes for a
    ``long`` (an ``int``), for a ``double`` (a ``float``), for a ``timestamp``/``timestamp_ns``
    (a ``date``, converted to the start of that day); a ``fixed`` bound may be shorter than L
    (a truncated bound).
    """
    t = _prim(t)
    data = bytes(_expect(t, data, (bytes, bytearray, memoryview), "bytes"))
    base, n = t.base, len(data)

    def need(*lengths: int) -> None:
        if n not in lengths:
            want = " or ".join(str(x) for x in lengths)
            raise _bad(f"invalid {t} value: {n} bytes, expected {want} (bytes: {data.hex()})")

    if base == "boolean":
        need(1)
        return data != b"\x00"
    if base in _INT_LIKE:
        need(4)
        return struct.unpack("<i", data)[0]
    if base in _LONG_LIKE:
        need(*((4, 8) if base in ("long", "timestamp", "timestamp_ns") else (8,)))
        if n == 8:
            return struct.unpack("<q", data)[0]
        small = struct.unpack("<i", data)[0]
        if base == "long":
            return small  # written as int before int -> long
        return small * (NANOS_PER_DAY if base == "timestamp_ns" else MICROS_PER_DAY)  # was a date
    if base == "float":
        need(4)
        return struct.unpack("<f", data)[0]
    if base == "double":
        need(4, 8)
        return struct.unpack("<f" if n == 4 else "<d", data)[0]
    if base == "string":
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise _bad(f"invalid string value: not UTF-8 ({e.reason} at byte {e.start})") from None
    if base == "uuid":
        need(16)
        return uuid.UUID(bytes=data)
    if base == "fixed":
        if n > t.length:
            raise _bad(f"invalid {t} value: {n} bytes, expected at most {t.length}")
        return data
    if base == "binary":
        return data
    if base == "decimal":
        if n == 0:
            raise _bad(f"invalid {t} value: empty bytes")
        return decimal_from_unscaled(int.from_bytes(data, "big", signed=True), t.scale)
    if base in ("geometry", "geography"):
        need(16, 24, 32)
        return struct.unpack(f"<{n // 8}d", data)
    raise _bad(f"type {t} has no binary single-value serialization; cannot decode {n} bytes")


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
        return _timestamp_to_iso(v, nanos=base.endswith("_ns"), tz="tz" in base, trim=False)
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
            m = _TIME_RE.fullmatch(obj)
            if not m:
                raise _bad(f"invalid time value {obj!r}: expected ISO-8601 like 22:31:08.123456")
            return _time_nanos(*m.groups(), obj) // 1000
        return _iso_to_timestamp(obj, nanos=base.endswith("_ns"), tz="tz" in base, type_name=str(t))
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
            return _timestamp_to_iso(value, nanos=base.endswith("_ns"), tz="tz" in base, trim=True)
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
