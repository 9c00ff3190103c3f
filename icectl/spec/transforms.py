"""Partition transforms (spec "Partition Transforms", "Bucket Transform Details",
"Truncate Transform Details") and the 32-bit bucket hash (spec "Appendix B: 32-bit Hash
Requirements").

Transforms work on the Python value representation of :mod:`icectl.spec.conversions`
(dates as days, timestamps as micros or nanos, decimals as ``Decimal``...). Every transform
maps ``None`` to ``None`` ("All transforms must return null for a null input value").

A transform string this module does not know is kept verbatim as an :class:`UnknownTransform`:
readers must tolerate it (required from v3), but it cannot be applied.
"""
from __future__ import annotations

from abc import ABC, abstractmethod

import math
import re
import struct
import uuid
from dataclasses import dataclass
from typing import Any

import mmh3

from icectl.spec import conversions
from icectl.spec.temporal import MICROS_PER_DAY, NANOS_PER_DAY, civil_from_days
from icectl.spec.types import INT_MAX, PrimitiveType, primitive
from icectl.errors import InvalidMetadataError, UnsupportedError

__all__ = [
    "Transform", "IdentityTransform", "BucketTransform", "TruncateTransform", "YearTransform",
    "MonthTransform", "DayTransform", "HourTransform", "VoidTransform", "UnknownTransform",
    "parse_transform", "bucket_hash", "IDENTITY", "YEAR", "MONTH", "DAY", "HOUR", "VOID",
]

_INT = primitive("int")
_DATE = primitive("date")
_STRING = primitive("string")
_TIMESTAMPS = ("timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns")
_BUCKET_SOURCES = ("int", "long", "decimal", "date", "time", *_TIMESTAMPS, "string", "uuid", "fixed", "binary")
_TRUNCATE_SOURCES = ("int", "long", "decimal", "string", "binary")
_IDENTITY_EXCLUDED = ("geometry", "geography", "variant")
_EPOCH_YEAR = 1970


def _prim(t: PrimitiveType | str) -> PrimitiveType:
    return primitive(t) if isinstance(t, str) else t


# ---------------------------------------------------------------------------------------------
# Appendix B: 32-bit hash


def _murmur3(data: bytes) -> int:
    return mmh3.hash(data, 0, signed=True)


def _hash_long(v: int) -> int:
    try:
        return _murmur3(struct.pack("<q", v))
    except struct.error:
        raise InvalidMetadataError(f"value {v} does not fit in a long") from None


def bucket_hash(t: PrimitiveType | str, value: Any) -> int:
    """The signed 32-bit Murmur3 (x86, seed 0) hash of ``value`` per spec Appendix B.

    int, long, date, time and timestamps hash as an 8-byte little-endian long (so ``34`` and
    ``34L`` agree); nanosecond timestamps are first floored to microseconds (Appendix B note 3);
    decimals hash the minimum two's-complement big-endian bytes of the unscaled value; strings
    their UTF-8 bytes; uuids their 16 big-endian bytes; fixed and binary the bytes themselves.
    boolean, float and double follow the "not currently valid for bucketing" table (floats are
    widened to double, NaN and -0.0 canonicalized). ``unknown`` (and ``None``) hash to ``None``.
    """
    t = _prim(t)
    base = t.base
    if value is None or base == "unknown":
        return None  # type: ignore[return-value]
    if base in ("int", "long", "date", "time", "timestamp", "timestamptz"):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidMetadataError(f"invalid {t} value {value!r}: expected an integer")
        return _hash_long(value)
    if base in ("timestamp_ns", "timestamptz_ns"):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidMetadataError(f"invalid {t} value {value!r}: expected an integer")
        return _hash_long(value // 1000)
    if base == "decimal":
        return _murmur3(conversions.decimal_min_bytes(conversions.unscaled(t, value)))
    if base == "string":
        if not isinstance(value, str):
            raise InvalidMetadataError(f"invalid string value {value!r}")
        return _murmur3(value.encode("utf-8"))
    if base == "uuid":
        if not isinstance(value, uuid.UUID):
            raise InvalidMetadataError(f"invalid uuid value {value!r}: expected uuid.UUID")
        return _murmur3(value.bytes)
    if base in ("fixed", "binary"):
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise InvalidMetadataError(f"invalid {t} value {value!r}: expected bytes")
        return _murmur3(bytes(value))
    if base == "boolean":
        return _hash_long(1 if value else 0)
    if base in ("float", "double"):
        x = float(value)
        if math.isnan(x):
            bits = 0x7FF8000000000000
        else:
            bits = struct.unpack("<q", struct.pack("<d", x + 0.0))[0]  # x + 0.0 turns -0.0 into 0.0
        return _hash_long(bits if bits < 2**63 else bits - 2**64)
    raise InvalidMetadataError(f"no 32-bit hash is defined for type {t}")


# ---------------------------------------------------------------------------------------------
# Transforms


class Transform(ABC):
    """A partition (or sort) transform; ``str()`` gives its JSON string form."""

    preserves_order: bool = False

    @abstractmethod
    def __str__(self) -> str: ...

    def to_json(self) -> str:
        return str(self)

    @abstractmethod
    def can_transform(self, source: PrimitiveType | str) -> bool:
        """Whether ``source`` is one of the spec's "Source types" for this transform."""

    @abstractmethod
    def result_type(self, source: PrimitiveType | str) -> PrimitiveType:
        """The spec's "Result type" for a source type (raise if the source is not allowed)."""

    @abstractmethod
    def apply(self, source: PrimitiveType | str, value: Any) -> Any:
        """The partition value for a source value (``None`` stays ``None``)."""

    def human(self, value: Any, source: PrimitiveType | str | None = None) -> str:
        """A partition value as Iceberg Java's ``toHumanString`` shows it (bytes as ``0x`` hex)."""
        if value is None:
            return "null"
        if source is not None:
            return conversions.human(self.result_type(source), value)
        if isinstance(value, (bytes, bytearray)):
            return "0x" + bytes(value).hex()
        return str(value)

    def _check(self, source: PrimitiveType | str) -> PrimitiveType:
        source = _prim(source)
        if not self.can_transform(source):
            raise InvalidMetadataError(f"transform {self} cannot be applied to type {source}")
        return source

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"


@dataclass(frozen=True, repr=False)
class IdentityTransform(Transform):
    """``identity``: the source value, unmodified; any primitive but geometry/geography (and variant)."""

    preserves_order = True

    def __str__(self) -> str:
        return "identity"

    def can_transform(self, source: PrimitiveType | str) -> bool:
        source = _prim(source)
        return isinstance(source, PrimitiveType) and source.base not in _IDENTITY_EXCLUDED

    def result_type(self, source: PrimitiveType | str) -> PrimitiveType:
        return self._check(source)

    def apply(self, source: PrimitiveType | str, value: Any) -> Any:
        self._check(source)
        return value


@dataclass(frozen=True, repr=False)
class BucketTransform(Transform):
    """``bucket[N]``: ``(murmur3_x86_32_hash(v) & Integer.MAX_VALUE) % N`` (Bucket Transform Details)."""

    num_buckets: int

    def __post_init__(self) -> None:
        if not 0 < self.num_buckets <= INT_MAX:
            raise InvalidMetadataError(f"invalid transform bucket[{self.num_buckets}]: N must be positive")

    def __str__(self) -> str:
        return f"bucket[{self.num_buckets}]"

    def can_transform(self, source: PrimitiveType | str) -> bool:
        return _prim(source).base in _BUCKET_SOURCES

    def result_type(self, source: PrimitiveType | str) -> PrimitiveType:
        self._check(source)
        return _INT

    def apply(self, source: PrimitiveType | str, value: Any) -> int | None:
        source = self._check(source)
        if value is None:
            return None
        return (bucket_hash(source, value) & INT_MAX) % self.num_buckets

    def human(self, value: Any, source: PrimitiveType | str | None = None) -> str:
        return "null" if value is None else str(value)


@dataclass(frozen=True, repr=False)
class TruncateTransform(Transform):
    """``truncate[W]`` (Truncate Transform Details): ints and decimals down to a multiple of W
    (floor, remainders positive; decimals on the unscaled value at the column's scale), strings to
    W code points, binary to W bytes."""

    width: int
    preserves_order = True

    def __post_init__(self) -> None:
        if not 0 < self.width <= INT_MAX:
            raise InvalidMetadataError(f"invalid transform truncate[{self.width}]: W must be positive")

    def __str__(self) -> str:
        return f"truncate[{self.width}]"

    def can_transform(self, source: PrimitiveType | str) -> bool:
        return _prim(source).base in _TRUNCATE_SOURCES

    def result_type(self, source: PrimitiveType | str) -> PrimitiveType:
        return self._check(source)

    def apply(self, source: PrimitiveType | str, value: Any) -> Any:
        source = self._check(source)
        if value is None:
            return None
        w, base = self.width, source.base
        if base in ("int", "long"):
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidMetadataError(f"invalid {source} value {value!r}: expected an integer")
            return value - (((value % w) + w) % w)
        if base == "decimal":
            n = conversions.unscaled(source, value)
            n -= ((n % w) + w) % w
            return conversions.decimal_from_unscaled(n, source.scale)
        if base == "string":
            if not isinstance(value, str):
                raise InvalidMetadataError(f"invalid string value {value!r}")
            return value[:w]  # Python strings index code points, as the spec asks
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise InvalidMetadataError(f"invalid binary value {value!r}: expected bytes")
        return bytes(value)[:w]


def _days_of(source: PrimitiveType, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidMetadataError(f"invalid {source} value {value!r}: expected an integer")
    base = source.base
    if base == "date":
        return value
    return value // (NANOS_PER_DAY if base.endswith("_ns") else MICROS_PER_DAY)  # floor: before 1970 too


@dataclass(frozen=True, repr=False)
class _TimeTransform(Transform):
    preserves_order = True
    _sources = ("date", *_TIMESTAMPS)

    def can_transform(self, source: PrimitiveType | str) -> bool:
        return _prim(source).base in self._sources

    def result_type(self, source: PrimitiveType | str) -> PrimitiveType:
        self._check(source)
        return _INT


@dataclass(frozen=True, repr=False)
class YearTransform(_TimeTransform):
    """``year``: years from 1970 of a date or timestamp (floor, so 1969-12-31 is -1)."""

    def __str__(self) -> str:
        return "year"

    def apply(self, source: PrimitiveType | str, value: Any) -> int | None:
        source = self._check(source)
        if value is None:
            return None
        return civil_from_days(_days_of(source, value))[0] - _EPOCH_YEAR

    def human(self, value: Any, source: PrimitiveType | str | None = None) -> str:
        return "null" if value is None else f"{_EPOCH_YEAR + value:04d}"


@dataclass(frozen=True, repr=False)
class MonthTransform(_TimeTransform):
    """``month``: months from 1970-01 of a date or timestamp."""

    def __str__(self) -> str:
        return "month"

    def apply(self, source: PrimitiveType | str, value: Any) -> int | None:
        source = self._check(source)
        if value is None:
            return None
        y, m, _ = civil_from_days(_days_of(source, value))
        return (y - _EPOCH_YEAR) * 12 + m - 1

    def human(self, value: Any, source: PrimitiveType | str | None = None) -> str:
        if value is None:
            return "null"
        return f"{_EPOCH_YEAR + value // 12:04d}-{value % 12 + 1:02d}"


def _human_day(days: int) -> str:
    y, m, d = civil_from_days(days)
    return f"{y:04d}-{m:02d}-{d:02d}"


@dataclass(frozen=True, repr=False)
class DayTransform(_TimeTransform):
    """``day``: days from 1970-01-01 of a date or timestamp.

    The result type is ``date`` (the spec's table, whose note 1 says readers must also accept
    ``int``; both have the same 4-byte encoding). Iceberg Java uses ``date`` too.
    """

    def __str__(self) -> str:
        return "day"

    def result_type(self, source: PrimitiveType | str) -> PrimitiveType:
        self._check(source)
        return _DATE

    def apply(self, source: PrimitiveType | str, value: Any) -> int | None:
        source = self._check(source)
        return None if value is None else _days_of(source, value)

    def human(self, value: Any, source: PrimitiveType | str | None = None) -> str:
        return "null" if value is None else _human_day(value)


@dataclass(frozen=True, repr=False)
class HourTransform(_TimeTransform):
    """``hour``: hours from 1970-01-01T00:00 of a timestamp (not a date)."""

    _sources = _TIMESTAMPS

    def __str__(self) -> str:
        return "hour"

    def apply(self, source: PrimitiveType | str, value: Any) -> int | None:
        source = self._check(source)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidMetadataError(f"invalid {source} value {value!r}: expected an integer")
        per_hour = 3_600_000_000_000 if source.base.endswith("_ns") else 3_600_000_000
        return value // per_hour

    def human(self, value: Any, source: PrimitiveType | str | None = None) -> str:
        if value is None:
            return "null"
        days, hour = divmod(value, 24)
        return f"{_human_day(days)}-{hour:02d}"


@dataclass(frozen=True, repr=False)
class VoidTransform(Transform):
    """``void``: always null; accepts any source and keeps its type as the result type."""

    def __str__(self) -> str:
        return "void"

    def can_transform(self, source: PrimitiveType | str) -> bool:
        return True

    def result_type(self, source: PrimitiveType | str) -> PrimitiveType:
        return _prim(source)

    def apply(self, source: PrimitiveType | str, value: Any) -> None:
        return None

    def human(self, value: Any, source: PrimitiveType | str | None = None) -> str:
        return "null"


@dataclass(frozen=True, repr=False)
class UnknownTransform(Transform):
    """A transform this version does not know, kept verbatim so a rewrite preserves it.

    Readers ignore such partition fields when filtering; writers must not commit with them.
    Like Iceberg Java, it accepts any source type and reports ``string`` as its result type.
    """

    text: str

    def __str__(self) -> str:
        return self.text

    def can_transform(self, source: PrimitiveType | str) -> bool:
        return True

    def result_type(self, source: PrimitiveType | str) -> PrimitiveType:
        return _STRING

    def apply(self, source: PrimitiveType | str, value: Any) -> Any:
        raise UnsupportedError(f"unknown partition transform {self.text!r} cannot be applied",
                               hint="a newer Iceberg version may define it")

    def human(self, value: Any, source: PrimitiveType | str | None = None) -> str:
        return "null" if value is None else str(value)


IDENTITY = IdentityTransform()
YEAR = YearTransform()
MONTH = MonthTransform()
DAY = DayTransform()
HOUR = HourTransform()
VOID = VoidTransform()
_BY_NAME: dict[str, Transform] = {str(t): t for t in (IDENTITY, YEAR, MONTH, DAY, HOUR, VOID)}
_WITH_ARG = re.compile(r"(\w+)\[(\d+)\]")


def parse_transform(text: str) -> Transform:
    """A transform from its JSON string (spec Appendix C, "Partition Specs").

    Names are matched case-insensitively, as Iceberg Java does; anything else becomes an
    :class:`UnknownTransform` that keeps the original text.
    """
    if not isinstance(text, str):
        raise InvalidMetadataError(f"a transform must be a string, got {text!r}")
    s = text.strip()
    m = _WITH_ARG.fullmatch(s)
    if m:
        name, arg = m.group(1).lower(), int(m.group(2))
        if name == "bucket":
            return BucketTransform(arg)
        if name == "truncate":
            return TruncateTransform(arg)
    known = _BY_NAME.get(s.lower())
    return known if known is not None else UnknownTransform(text)
