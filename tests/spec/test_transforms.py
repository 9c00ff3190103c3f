"""Partition transforms (spec "Partition Transforms") and the bucket hash (spec Appendix B)."""
from __future__ import annotations

import datetime as dt
import json
import re
import struct
import uuid
from decimal import Decimal

import pytest
from hypothesis import given, settings, strategies as st

from icectl.spec.conversions import (
    INT_MAX, INT_MIN, LONG_MAX, LONG_MIN, MICROS_PER_DAY, decimal_from_unscaled, from_json,
)
from icectl.spec.transforms import (
    DAY, HOUR, IDENTITY, MONTH, VOID, YEAR, BucketTransform, DayTransform, IdentityTransform,
    TruncateTransform, UnknownTransform, bucket_hash, parse_transform,
)
from icectl.spec.types import primitive
from icectl.errors import InvalidMetadataError, UnsupportedError

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def micros(text: str) -> int:
    """Micros from the epoch of an ISO timestamp with any offset (naive means UTC)."""
    d = dt.datetime.fromisoformat(text)
    if d.tzinfo is None:
        d = d.replace(tzinfo=dt.timezone.utc)
    return (d - EPOCH) // dt.timedelta(microseconds=1)


def nanos(text: str) -> int:
    """Nanos from the epoch; ``text`` may carry 9 fraction digits (datetime takes only 6)."""
    head, _, rest = text.partition(".")
    if not rest:
        return micros(text) * 1000
    digits = re.match(r"\d*", rest).group()
    offset = rest[len(digits):]
    return micros(head + offset) * 1000 + int(digits.ljust(9, "0"))


UUID = uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")

# Appendix B "Hash results" (the seed spec's table plus the microsecond/nanosecond rows of the
# current spec).
HASH_VECTORS = [
    ("int", 34, 2017239379),
    ("long", 34, 2017239379),
    ("decimal(4, 2)", Decimal("14.20"), -500754589),
    ("decimal(38, 2)", Decimal("14.20"), -500754589),  # "not dependent on decimal scale" / precision
    ("date", from_json("date", "2017-11-16"), -653330422),
    ("time", from_json("time", "22:31:08"), -662762989),
    ("timestamp", micros("2017-11-16T22:31:08"), -2047944441),
    ("timestamp", micros("2017-11-16T22:31:08.000001"), -1207196810),
    ("timestamptz", micros("2017-11-16T14:31:08-08:00"), -2047944441),
    ("timestamptz", micros("2017-11-16T14:31:08.000001-08:00"), -1207196810),
    ("timestamp_ns", nanos("2017-11-16T22:31:08"), -2047944441),
    ("timestamp_ns", nanos("2017-11-16T22:31:08.000001001"), -1207196810),
    ("timestamptz_ns", nanos("2017-11-16T14:31:08-08:00"), -2047944441),
    ("timestamptz_ns", nanos("2017-11-16T14:31:08.000001001-08:00"), -1207196810),
    ("string", "iceberg", 1210000089),
    ("string", "34", -427558391),  # spec "Schema Evolution" example
    ("uuid", UUID, 1488055340),
    ("fixed[4]", bytes([0, 1, 2, 3]), -188683207),
    ("binary", bytes([0, 1, 2, 3]), -188683207),
    # "not currently valid for bucketing" table
    ("boolean", True, 1392991556),
    ("float", 1.0, -142385009),
    ("float", 0.0, 1669671676),
    ("float", -0.0, 1669671676),
    ("double", 1.0, -142385009),
    ("double", 0.0, 1669671676),
    ("double", -0.0, 1669671676),
]


@pytest.mark.parametrize(("type_name", "value", "expected"), HASH_VECTORS)
def test_appendix_b_hash_vectors(type_name: str, value: object, expected: int) -> None:
    assert bucket_hash(primitive(type_name), value) == expected


def test_hash_vector_helpers() -> None:
    assert micros("2017-11-16T14:31:08-08:00") == micros("2017-11-16T22:31:08") == 1510871468000000
    assert from_json("timestamptz", "2017-11-16T22:31:08+00:00") == micros("2017-11-16T14:31:08-08:00")


def test_uuid_bytes_are_big_endian() -> None:
    assert UUID.bytes.hex().upper() == "F79C3E09677C4BBDA4793F349CB785E7"


def test_hash_nan_is_canonical() -> None:
    quiet = struct.unpack("<d", struct.pack("<q", 0x7FF8000000000001))[0]
    assert bucket_hash("double", quiet) == bucket_hash("double", float("nan")) == bucket_hash("float", float("nan"))


def test_hash_no_definition() -> None:
    assert bucket_hash("unknown", None) is None
    assert bucket_hash("int", None) is None
    for t in ("variant", "geometry", "geography"):
        with pytest.raises(InvalidMetadataError):
            bucket_hash(t, b"")


@given(st.integers(INT_MIN, INT_MAX))
def test_int_and_long_hash_alike(v: int) -> None:
    assert bucket_hash("int", v) == bucket_hash("long", v) == bucket_hash("date", v)


@given(st.floats(width=32))
def test_float_and_double_hash_alike(v: float) -> None:
    assert bucket_hash("float", v) == bucket_hash("double", v)


@given(st.integers(LONG_MIN, LONG_MAX))
def test_nanos_hash_as_floored_micros(v: int) -> None:
    assert bucket_hash("timestamp_ns", v) == bucket_hash("timestamp", v // 1000)
    assert bucket_hash("timestamptz_ns", v) == bucket_hash("timestamptz", v // 1000)


@given(st.integers(-(10**38) + 1, 10**38 - 1), st.integers(0, 38))
def test_decimal_hash_ignores_scale(n: int, scale: int) -> None:
    assert bucket_hash(f"decimal(38, {scale})", decimal_from_unscaled(n, scale)) == \
        bucket_hash("decimal(38, 0)", decimal_from_unscaled(n, 0))


# ---------------------------------------------------------------------------------------------
# bucket[N]


def test_bucket_known_values() -> None:
    assert BucketTransform(100).apply("long", 34) == 79
    assert BucketTransform(100).apply("int", 34) == 79
    assert BucketTransform(16).apply("string", "iceberg") == 1210000089 % 16
    # negative hash: the sign bit is discarded before the modulo
    assert BucketTransform(16).apply("decimal(4, 2)", Decimal("14.20")) == (-500754589 & 0x7FFFFFFF) % 16
    assert BucketTransform(16).apply("string", None) is None


@given(st.integers(1, INT_MAX), st.integers(LONG_MIN, LONG_MAX))
def test_bucket_range(n: int, v: int) -> None:
    b = BucketTransform(n).apply("long", v)
    assert 0 <= b < n


@pytest.mark.parametrize("type_name", ["int", "long", "decimal(9, 2)", "date", "time", "timestamp",
                                       "timestamptz", "timestamp_ns", "timestamptz_ns", "string",
                                       "uuid", "fixed[3]", "binary"])
def test_bucket_sources(type_name: str) -> None:
    t = BucketTransform(8)
    assert t.can_transform(type_name)
    assert str(t.result_type(type_name)) == "int"


@pytest.mark.parametrize("type_name", ["boolean", "float", "double", "variant", "geometry", "unknown"])
def test_bucket_rejects(type_name: str) -> None:
    t = BucketTransform(8)
    assert not t.can_transform(type_name)
    with pytest.raises(InvalidMetadataError):
        t.apply(type_name, 1)
    with pytest.raises(InvalidMetadataError):
        t.result_type(type_name)


# ---------------------------------------------------------------------------------------------
# truncate[W] (spec "Truncate Transform Details" examples)


@pytest.mark.parametrize(("width", "type_name", "value", "expected"), [
    (10, "int", 1, 0),
    (10, "int", -1, -10),
    (10, "int", 10, 10),
    (10, "int", -10, -10),
    (10, "int", -11, -20),
    (10, "long", 1, 0),
    (10, "long", -1, -10),
    (50, "decimal(4, 2)", Decimal("10.65"), Decimal("10.50")),
    (50, "decimal(9, 2)", Decimal("-0.05"), Decimal("-0.50")),
    (10, "decimal(9, 0)", Decimal("12345"), Decimal("12340")),
    (3, "string", "iceberg", "ice"),
    (3, "string", "ic", "ic"),
    (1, "string", "\u6d4b\u8bd5", "\u6d4b"),
    (2, "string", "\U0001f600\U0001f600\U0001f600", "\U0001f600\U0001f600"),  # code points, not UTF-16 units
    (3, "binary", b"\x01\x02\x03\x04\x05", b"\x01\x02\x03"),
    (6, "binary", "\u6d4b\u8bd5x".encode(), "\u6d4b\u8bd5".encode()),
])
def test_truncate_examples(width: int, type_name: str, value: object, expected: object) -> None:
    result = TruncateTransform(width).apply(type_name, value)
    assert result == expected
    assert type(result) is type(expected)
    if isinstance(result, Decimal):
        assert result.as_tuple().exponent == expected.as_tuple().exponent  # keeps the column scale


@given(st.integers(1, 1000), st.integers(LONG_MIN, LONG_MAX))
def test_truncate_int_floor(w: int, v: int) -> None:
    r = TruncateTransform(w).apply("long", v)
    assert r % w == 0 and r <= v < r + w


@given(st.integers(1, 1000), st.integers(-(10**9) + 1, 10**9 - 1))
def test_truncate_decimal_unscaled(w: int, n: int) -> None:
    r = TruncateTransform(w).apply("decimal(9, 3)", decimal_from_unscaled(n, 3))
    unscaled = int(r.scaleb(3))
    assert r.as_tuple().exponent == -3
    assert unscaled % w == 0 and unscaled <= n < unscaled + w


@given(st.integers(1, 20), st.text())
def test_truncate_string_code_points(w: int, s: str) -> None:
    r = TruncateTransform(w).apply("string", s)
    assert s.startswith(r) and len(r) == min(w, len(s))
    r.encode("utf-8")  # still valid UTF-8


@pytest.mark.parametrize("type_name", ["boolean", "float", "date", "timestamp", "uuid", "fixed[4]"])
def test_truncate_rejects(type_name: str) -> None:
    assert not TruncateTransform(4).can_transform(type_name)


# ---------------------------------------------------------------------------------------------
# year / month / day / hour


TS = micros("2017-11-16T22:31:08")


@pytest.mark.parametrize(("transform", "type_name", "value", "expected", "shown"), [
    (YEAR, "timestamp", TS, 47, "2017"),
    (MONTH, "timestamp", TS, 574, "2017-11"),
    (DAY, "timestamp", TS, 17486, "2017-11-16"),
    (HOUR, "timestamp", TS, 419686, "2017-11-16-22"),
    (YEAR, "date", 17486, 47, "2017"),
    (MONTH, "date", 17486, 574, "2017-11"),
    (DAY, "date", 17486, 17486, "2017-11-16"),
    (HOUR, "timestamptz_ns", TS * 1000 + 999, 419686, "2017-11-16-22"),
    (DAY, "timestamp_ns", TS * 1000, 17486, "2017-11-16"),
    (YEAR, "timestamp", 0, 0, "1970"),
    (MONTH, "timestamp", 0, 0, "1970-01"),
    (HOUR, "timestamp", 0, 0, "1970-01-01-00"),
    # negative timestamps floor toward the past
    (YEAR, "timestamp", -1, -1, "1969"),
    (MONTH, "timestamp", -1, -1, "1969-12"),
    (DAY, "timestamp", -1, -1, "1969-12-31"),
    (HOUR, "timestamp", -1, -1, "1969-12-31-23"),
    (HOUR, "timestamp_ns", -1, -1, "1969-12-31-23"),
    (YEAR, "timestamp", micros("1969-01-01T00:00:00"), -1, "1969"),
    (YEAR, "timestamp", micros("1968-12-31T23:59:59.999999"), -2, "1968"),
    (MONTH, "timestamp", micros("1969-12-01T00:00:00"), -1, "1969-12"),
    (MONTH, "timestamp", micros("1969-11-30T23:59:59.999999"), -2, "1969-11"),
    (DAY, "timestamp", -MICROS_PER_DAY, -1, "1969-12-31"),
    (DAY, "timestamp", -MICROS_PER_DAY - 1, -2, "1969-12-30"),
    (YEAR, "date", -1, -1, "1969"),
    (MONTH, "date", -31, -1, "1969-12"),
    (MONTH, "date", -32, -2, "1969-11"),
    (YEAR, "timestamp", micros("2026-01-02T05:00:00"), 56, "2026"),
    (HOUR, "timestamptz", micros("2026-01-02T05:59:59+00:00"), None, "2026-01-02-05"),
])
def test_time_transforms(transform, type_name: str, value: int, expected: int | None, shown: str) -> None:
    result = transform.apply(type_name, value)
    if expected is not None:
        assert result == expected
    assert transform.human(result) == shown


@given(st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31, 23, 59, 59)))
def test_time_transforms_match_calendar(d: dt.datetime) -> None:
    v = micros(d.isoformat())
    assert YEAR.apply("timestamp", v) == d.year - 1970
    assert MONTH.apply("timestamptz", v) == (d.year - 1970) * 12 + d.month - 1
    assert DAY.apply("timestamp", v) == (d.date() - dt.date(1970, 1, 1)).days
    assert HOUR.apply("timestamp", v) == (d - dt.datetime(1970, 1, 1)) // dt.timedelta(hours=1)
    assert DAY.human(DAY.apply("timestamp", v)) == d.date().isoformat()
    assert HOUR.human(HOUR.apply("timestamp", v)) == f"{d.year:04d}-{d.month:02d}-{d.day:02d}-{d.hour:02d}"
    assert MONTH.human(MONTH.apply("timestamp", v)) == f"{d.year:04d}-{d.month:02d}"
    assert YEAR.human(YEAR.apply("timestamp", v)) == f"{d.year:04d}"
    days = DAY.apply("timestamp", v)
    assert YEAR.apply("date", days) == YEAR.apply("timestamp", v)
    assert MONTH.apply("date", days) == MONTH.apply("timestamp", v)


@given(st.integers(LONG_MIN, LONG_MAX))
def test_nanos_transforms_agree_with_micros(v: int) -> None:
    for t in (YEAR, MONTH, DAY, HOUR):
        assert t.apply("timestamp_ns", v) == t.apply("timestamp", v // 1000)


def test_time_transform_types() -> None:
    for t in (YEAR, MONTH, HOUR):
        assert str(t.result_type("timestamp")) == "int"
    assert str(DAY.result_type("timestamptz")) == "date"
    assert DAY.result_type("date") == primitive("date")
    assert not HOUR.can_transform("date")
    for t in (YEAR, MONTH, DAY, HOUR):
        assert not t.can_transform("long")
        assert not t.can_transform("time")
        assert t.apply("timestamp", None) is None
    with pytest.raises(InvalidMetadataError):
        HOUR.apply("date", 1)


# ---------------------------------------------------------------------------------------------
# identity, void, unknown, parsing


def test_identity() -> None:
    assert IDENTITY.apply("string", "a") == "a"
    assert IDENTITY.apply("int", None) is None
    assert IDENTITY.result_type("decimal(9, 2)") == primitive("decimal(9,2)")
    assert IDENTITY.can_transform("unknown")
    for t in ("geometry", "geography(EPSG:4326)", "variant"):
        assert not IDENTITY.can_transform(t)
    assert IDENTITY.human(17486, "date") == "2017-11-16"
    assert IDENTITY.human(b"\x01", "binary") == "0x01"
    assert IDENTITY.human(micros("2017-11-16T22:31:08"), "timestamptz") == "2017-11-16T22:31:08+00:00"
    assert TruncateTransform(2).human(Decimal("1.50"), "decimal(9, 2)") == "1.50"


def test_void() -> None:
    assert VOID.apply("int", 5) is None
    assert VOID.result_type("string") == primitive("string")
    assert VOID.can_transform("variant")
    assert VOID.human(None) == "null"


def test_unknown_transform() -> None:
    t = parse_transform("zorder[3]")
    assert isinstance(t, UnknownTransform)
    assert str(t) == "zorder[3]"
    assert t.can_transform("int")
    assert str(t.result_type("int")) == "string"
    with pytest.raises(UnsupportedError):
        t.apply("int", 1)


@pytest.mark.parametrize("text", ["identity", "bucket[16]", "truncate[4]", "year", "month", "day",
                                  "hour", "void", "bucket[1]", "truncate[2147483647]", "geohash[5]",
                                  "custom"])
def test_parse_round_trip(text: str) -> None:
    t = parse_transform(text)
    assert str(t) == text
    assert t.to_json() == text
    assert parse_transform(str(t)) == t


def test_parse_forms() -> None:
    assert parse_transform("Bucket[16]") == BucketTransform(16)
    assert parse_transform("DAY") == DAY
    assert isinstance(parse_transform("day"), DayTransform)
    assert parse_transform("identity") == IdentityTransform()
    assert parse_transform("truncate[4]").width == 4
    assert parse_transform("bucket[16]").num_buckets == 16
    assert parse_transform("bucket[16]") != parse_transform("bucket[8]")
    assert YEAR != MONTH
    assert len({YEAR, MONTH, DAY, HOUR, VOID, IDENTITY}) == 6
    assert isinstance(parse_transform("bucket"), UnknownTransform)
    assert isinstance(parse_transform("bucket[-1]"), UnknownTransform)
    for bad in ("bucket[0]", "truncate[0]", "bucket[2147483648]"):
        with pytest.raises(InvalidMetadataError):
            parse_transform(bad)
    with pytest.raises(InvalidMetadataError):
        parse_transform(16)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# Cross-check with PyIceberg, an independent implementation

_BUCKET_VALUES = {
    "int": st.integers(INT_MIN, INT_MAX),
    "long": st.integers(LONG_MIN, LONG_MAX),
    "decimal(9, 2)": st.integers(-(10**9) + 1, 10**9 - 1).map(lambda n: decimal_from_unscaled(n, 2)),
    "date": st.integers(-(10**6), 10**6),
    "time": st.integers(0, MICROS_PER_DAY - 1),
    "timestamp": st.integers(-(2**60), 2**60),
    "timestamptz": st.integers(-(2**60), 2**60),
    "string": st.text(),
    "uuid": st.uuids(),
    "fixed[5]": st.binary(min_size=5, max_size=5),
    "binary": st.binary(),
}


def _py_type(type_name: str):
    from pyiceberg.types import IcebergType

    return IcebergType.model_validate_json(json.dumps(type_name))


@pytest.mark.interop
@pytest.mark.parametrize("type_name", list(_BUCKET_VALUES))
@settings(deadline=None)  # the first example imports PyIceberg
@given(data=st.data(), n=st.integers(1, 1024))
def test_bucket_matches_pyiceberg(type_name: str, data: st.DataObject, n: int) -> None:
    transforms = pytest.importorskip("pyiceberg.transforms")
    value = data.draw(_BUCKET_VALUES[type_name])
    expected = transforms.BucketTransform(n).transform(_py_type(type_name))(value)
    assert BucketTransform(n).apply(type_name, value) == expected


@pytest.mark.interop
@pytest.mark.parametrize("type_name", ["int", "long", "decimal(9, 2)", "string", "binary"])
@settings(deadline=None)  # the first example imports PyIceberg
@given(data=st.data(), w=st.integers(1, 100))
def test_truncate_matches_pyiceberg(type_name: str, data: st.DataObject, w: int) -> None:
    transforms = pytest.importorskip("pyiceberg.transforms")
    value = data.draw(_BUCKET_VALUES[type_name])
    assert TruncateTransform(w).apply(type_name, value) == transforms.TruncateTransform(w).transform(_py_type(type_name))(value)


# PyIceberg goes through datetime, so stay within years 1..9999.
_DATETIME_RANGE = {
    "date": st.integers(-719162, 2932896),
    "timestamp": st.integers(-62135596800000000, 253402300799999999),
    "timestamptz": st.integers(-62135596800000000, 253402300799999999),
}


@pytest.mark.interop
@pytest.mark.parametrize("type_name", list(_DATETIME_RANGE))
@settings(deadline=None)  # the first example imports PyIceberg
@given(data=st.data())
def test_time_transforms_match_pyiceberg(type_name: str, data: st.DataObject) -> None:
    transforms = pytest.importorskip("pyiceberg.transforms")
    value = data.draw(_DATETIME_RANGE[type_name])
    py_type = _py_type(type_name)
    pairs = [(YEAR, transforms.YearTransform()), (MONTH, transforms.MonthTransform()),
             (DAY, transforms.DayTransform())]
    if type_name != "date":
        pairs.append((HOUR, transforms.HourTransform()))
    for ours, theirs in pairs:
        assert ours.apply(type_name, value) == theirs.transform(py_type)(value)
