"""Single-value serialization (spec Appendix D): known encodings, Java's JSON forms, promotion
tolerance, errors, and Hypothesis round trips for every primitive type."""
from __future__ import annotations

import datetime as dt
import json
import math
import struct
import uuid
from decimal import Decimal

import pytest
from hypothesis import given, settings, strategies as st

from icectl.spec.conversions import (
    INT_MAX, INT_MIN, LONG_MAX, LONG_MIN, decimal_from_unscaled, from_bytes, from_json, human, to_bytes, to_json,
)
from icectl.spec.temporal import MICROS_PER_DAY, civil_from_days, days_from_civil
from icectl.spec.types import ListType, MapType, NestedField, StructType, primitive
from icectl.errors import InvalidMetadataError

UUID = uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")
TS = 1510871468000000  # 2017-11-16T22:31:08 as micros (Appendix B test value)


# ---------------------------------------------------------------------------------------------
# Hypothesis strategies, one per primitive type


def values(type_name: str) -> st.SearchStrategy:
    t = primitive(type_name)
    base = t.base
    if base == "boolean":
        return st.booleans()
    if base in ("int", "date"):
        return st.integers(INT_MIN, INT_MAX)
    if base in ("long", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"):
        return st.integers(LONG_MIN, LONG_MAX)
    if base == "time":
        return st.integers(0, MICROS_PER_DAY - 1)
    if base == "float":
        return st.floats(width=32, allow_nan=False)
    if base == "double":
        return st.floats(allow_nan=False)
    if base == "decimal":
        limit = 10**t.precision - 1
        return st.integers(-limit, limit).map(lambda n: decimal_from_unscaled(n, t.scale))
    if base == "string":
        return st.text()
    if base == "uuid":
        return st.uuids()
    if base == "fixed":
        return st.binary(min_size=t.length, max_size=t.length)
    if base == "binary":
        return st.binary()
    if base in ("geometry", "geography"):
        return st.lists(st.floats(allow_nan=False), min_size=2, max_size=4).map(tuple)
    raise AssertionError(type_name)


BINARY_TYPES = [
    "boolean", "int", "long", "float", "double", "date", "time", "timestamp", "timestamptz",
    "timestamp_ns", "timestamptz_ns", "string", "uuid", "fixed[1]", "fixed[16]", "binary",
    "decimal(1, 0)", "decimal(9, 2)", "decimal(18, 6)", "decimal(38, 0)", "decimal(38, 10)",
    "decimal(38, 38)", "geometry", "geography",
]
JSON_TYPES = [t for t in BINARY_TYPES if not t.startswith("geo")]


@pytest.mark.parametrize("type_name", BINARY_TYPES)
@given(data=st.data())
def test_binary_round_trip(type_name: str, data: st.DataObject) -> None:
    t = primitive(type_name)
    value = data.draw(values(type_name))
    encoded = to_bytes(t, value)
    decoded = from_bytes(t, encoded)
    assert decoded == value
    assert type(decoded) is type(value)
    assert to_bytes(t, decoded) == encoded


@pytest.mark.parametrize("type_name", JSON_TYPES)
@given(data=st.data())
def test_json_round_trip(type_name: str, data: st.DataObject) -> None:
    t = primitive(type_name)
    value = data.draw(values(type_name))
    text = json.dumps(to_json(t, value), allow_nan=False)  # real JSON, no NaN/Infinity literals
    decoded = from_json(t, json.loads(text))
    assert decoded == value
    assert type(decoded) is type(value)
    if t.base == "decimal":
        assert decoded.as_tuple().exponent == -t.scale


@given(st.integers(dt.date.min.toordinal(), dt.date.max.toordinal()))
def test_calendar_matches_datetime(ordinal: int) -> None:
    date = dt.date.fromordinal(ordinal)
    days = ordinal - dt.date(1970, 1, 1).toordinal()
    assert civil_from_days(days) == (date.year, date.month, date.day)
    assert days_from_civil(date.year, date.month, date.day) == days
    assert to_json("date", days) == date.isoformat()


@given(st.integers(-(2**62), 2**62))
def test_timestamp_json_matches_datetime(micros: int) -> None:
    epoch = dt.datetime(1970, 1, 1)
    try:
        expected = epoch + dt.timedelta(microseconds=micros)
    except OverflowError:
        return
    assert to_json("timestamp", micros) == expected.isoformat(timespec="microseconds")
    assert to_json("timestamptz", micros) == expected.isoformat(timespec="microseconds") + "+00:00"


# ---------------------------------------------------------------------------------------------
# Known binary encodings (Appendix D)


@pytest.mark.parametrize(("type_name", "value", "hex_bytes"), [
    ("boolean", False, "00"),
    ("boolean", True, "01"),
    ("int", 34, "22000000"),
    ("int", -1, "ffffffff"),
    ("long", 34, "2200000000000000"),
    ("float", 1.0, "0000803f"),
    ("double", 1.0, "000000000000f03f"),
    ("date", 17486, "4e440000"),
    ("time", 81068000000, "008307e012000000"),
    ("timestamp", TS, "00c3262d215e0500"),
    ("timestamptz", TS, "00c3262d215e0500"),
    ("timestamp_ns", TS * 1000, "00b8695f98b1f714"),
    ("string", "iceberg", "69636562657267"),
    ("string", "\u00e9", "c3a9"),
    ("uuid", UUID, "f79c3e09677c4bbda4793f349cb785e7"),
    ("fixed[4]", b"\x00\x01\x02\x03", "00010203"),
    ("binary", b"\x00\x01\x02\x03", "00010203"),
    ("binary", b"", ""),
    ("decimal(4, 2)", Decimal("14.20"), "058c"),
    ("decimal(9, 2)", Decimal("14.20"), "058c"),
    ("decimal(9, 2)", Decimal("-14.20"), "fa74"),
    ("decimal(9, 2)", Decimal("0.00"), "00"),
    ("decimal(9, 2)", Decimal("1.27"), "7f"),
    ("decimal(9, 2)", Decimal("1.28"), "0080"),
    ("decimal(9, 2)", Decimal("-1.28"), "80"),
    ("decimal(9, 2)", Decimal("-1.29"), "ff7f"),
    ("geometry", (1.0, 2.0), "000000000000f03f0000000000000040"),
])
def test_known_encodings(type_name: str, value: object, hex_bytes: str) -> None:
    t = primitive(type_name)
    assert to_bytes(t, value).hex() == hex_bytes
    assert from_bytes(t, bytes.fromhex(hex_bytes)) == value


def test_nonzero_byte_is_true() -> None:
    assert from_bytes("boolean", b"\x02") is True


def test_decimal_padded_bytes_decode() -> None:
    # A fixed-width (padded) big-endian unscaled value still decodes by its sign.
    assert from_bytes("decimal(9, 2)", bytes.fromhex("0000058c")) == Decimal("14.20")
    assert from_bytes("decimal(9, 2)", bytes.fromhex("fffffa74")) == Decimal("-14.20")


def test_decimal_38_digits_exact() -> None:
    t = primitive("decimal(38, 10)")
    v = Decimal("9999999999999999999999999999.9999999999")
    assert from_bytes(t, to_bytes(t, v)) == v
    assert str(from_bytes(t, to_bytes(t, v))) == "9999999999999999999999999999.9999999999"


# Spec "Schema Evolution": bounds written before a promotion keep their old width.
@pytest.mark.parametrize(("type_name", "data", "expected"), [
    ("long", struct.pack("<i", -5), -5),
    ("long", struct.pack("<i", INT_MAX), INT_MAX),
    ("double", struct.pack("<f", 1.5), 1.5),
    ("timestamp", struct.pack("<i", 1), MICROS_PER_DAY),
    ("timestamp", struct.pack("<i", -1), -MICROS_PER_DAY),
    ("timestamp_ns", struct.pack("<i", 17486), 17486 * MICROS_PER_DAY * 1000),
    ("decimal(18, 2)", bytes.fromhex("058c"), Decimal("14.20")),
    ("fixed[16]", b"abc", b"abc"),  # truncated bound
])
def test_promoted_bounds(type_name: str, data: bytes, expected: object) -> None:
    assert from_bytes(type_name, data) == expected


@pytest.mark.parametrize(("type_name", "data"), [
    ("boolean", b""),
    ("boolean", b"\x00\x00"),
    ("int", b"\x00\x00\x00"),
    ("int", b"\x00" * 8),
    ("date", b"\x00" * 8),
    ("long", b"\x00" * 5),
    ("time", b"\x00" * 4),
    ("timestamptz", b"\x00" * 4),
    ("timestamptz_ns", b"\x00" * 4),
    ("float", b"\x00" * 8),
    ("double", b"\x00" * 2),
    ("uuid", b"\x00" * 15),
    ("fixed[2]", b"\x00" * 3),
    ("decimal(9, 2)", b""),
    ("string", b"\xff\xfe"),
    ("geometry", b"\x00" * 8),
    ("geography", b"\x00" * 40),
    ("variant", b"\x01"),
    ("unknown", b""),
])
def test_malformed_bytes(type_name: str, data: bytes) -> None:
    with pytest.raises(InvalidMetadataError):
        from_bytes(type_name, data)


@pytest.mark.parametrize(("type_name", "value"), [
    ("int", 2**31),
    ("int", True),
    ("long", -(2**63) - 1),
    ("long", 1.0),
    ("float", 1e300),
    ("time", MICROS_PER_DAY),
    ("fixed[2]", b"abc"),
    ("decimal(4, 2)", Decimal("100.00")),
    ("decimal(9, 2)", Decimal("1.005")),
    ("decimal(9, 2)", 1.5),
    ("uuid", str(UUID)),
    ("string", b"abc"),
    ("boolean", 1),
    ("geometry", (1.0,)),
    ("variant", b""),
    ("unknown", None),
])
def test_invalid_values_to_bytes(type_name: str, value: object) -> None:
    with pytest.raises(InvalidMetadataError):
        to_bytes(type_name, value)


def test_decimal_rescaled_losslessly() -> None:
    assert to_bytes("decimal(9, 2)", Decimal("14.2")) == to_bytes("decimal(9, 2)", Decimal("14.20"))
    assert to_bytes("decimal(9, 0)", Decimal("2E+2")).hex() == "00c8"


def test_geometry_bounds() -> None:
    t = primitive("geometry")
    xyzm = struct.pack("<4d", 1.0, 2.0, math.nan, 4.0)
    x, y, z, m = from_bytes(t, xyzm)
    assert (x, y, m) == (1.0, 2.0, 4.0) and math.isnan(z)
    assert human(t, (x, y, z, m)) == "POINT M (1 2 4)"
    assert human(t, (30.0, 10.5)) == "POINT (30 10.5)"
    assert human(t, (1.0, 2.0, 3.0)) == "POINT Z (1 2 3)"
    assert human(t, (1.0, 2.0, 3.0, 4.0)) == "POINT ZM (1 2 3 4)"
    assert from_bytes("geography(EPSG:4326, karney)", struct.pack("<3d", 1, 2, 3)) == (1.0, 2.0, 3.0)


def test_float_edge_bits() -> None:
    assert to_bytes("double", -0.0).hex() == "0000000000000080"
    assert math.isnan(from_bytes("double", struct.pack("<d", math.nan)))
    assert math.isnan(from_bytes("float", struct.pack("<f", math.nan)))
    assert from_bytes("float", to_bytes("float", 0.1)) == struct.unpack("<f", struct.pack("<f", 0.1))[0]


# ---------------------------------------------------------------------------------------------
# JSON (Appendix D "JSON single-value serialization")


@pytest.mark.parametrize(("type_name", "value", "obj"), [
    ("boolean", True, True),
    ("int", 34, 34),
    ("long", 34, 34),
    ("float", 1.0, 1.0),
    ("double", 1.0, 1.0),
    ("decimal(4, 2)", Decimal("14.20"), "14.20"),
    ("decimal(9, 4)", Decimal("-0.0012"), "-0.0012"),
    ("decimal(21, 0)", Decimal("200000000000000000000"), "200000000000000000000"),
    ("date", 17486, "2017-11-16"),
    ("date", -1, "1969-12-31"),
    ("time", 81068123456, "22:31:08.123456"),
    ("timestamp", TS + 123456, "2017-11-16T22:31:08.123456"),
    ("timestamptz", TS + 123456, "2017-11-16T22:31:08.123456+00:00"),
    ("timestamp_ns", (TS + 123456) * 1000 + 789, "2017-11-16T22:31:08.123456789"),
    ("timestamptz_ns", (TS + 123456) * 1000 + 789, "2017-11-16T22:31:08.123456789+00:00"),
    ("timestamp", -1, "1969-12-31T23:59:59.999999"),
    ("string", "iceberg", "iceberg"),
    ("uuid", UUID, "f79c3e09-677c-4bbd-a479-3f349cb785e7"),
    ("fixed[4]", b"\x00\x01\x02\xff", "000102ff"),
    ("binary", b"\x00\x01\x02\xff", "000102ff"),
])
def test_json_spec_examples(type_name: str, value: object, obj: object) -> None:
    assert to_json(type_name, value) == obj
    assert from_json(type_name, obj) == value


def test_float_json_is_shortest() -> None:
    assert to_json("float", from_bytes("float", to_bytes("float", 0.1))) == 0.1
    assert json.dumps(to_json("float", 3.4028234663852886e38)) == "3.4028235e+38"


# What Iceberg Java (SingleValueParser / DateTimeUtil) writes or accepts.
@pytest.mark.parametrize(("type_name", "obj", "value"), [
    ("time", "22:31:08", 81068000000),
    ("time", "22:31", 81060000000),
    ("time", "22:31:08.1", 81068100000),
    ("time", "22:31:08.123456789", 81068123456),
    ("timestamp", "2017-11-16T22:31:08", TS),
    ("timestamp", "2017-11-16T22:31:08.1", TS + 100000),
    ("timestamptz", "2017-11-16T22:31:08+00:00", TS),
    ("timestamptz", "2017-11-16T22:31:08Z", TS),
    ("timestamptz", "2017-11-16T22:31:08.000001-00:00", TS + 1),
    ("timestamptz_ns", "2017-11-16T22:31:08.000001001+00:00", (TS + 1) * 1000 + 1),
    ("timestamp_ns", "2017-11-16T22:31:08", TS * 1000),
    ("fixed[4]", "000102FF", b"\x00\x01\x02\xff"),
    ("binary", "CAFE", b"\xca\xfe"),
    ("binary", "", b""),
    ("uuid", "F79C3E09-677C-4BBD-A479-3F349CB785E7", UUID),
    ("decimal(9, 2)", "14.2", Decimal("14.20")),
    ("decimal(21, 0)", "2E+20", Decimal("200000000000000000000")),
    ("double", 1, 1.0),
    ("double", "Infinity", math.inf),
    ("float", "-Infinity", -math.inf),
    ("date", "+10000-01-01", days_from_civil(10000, 1, 1)),
    ("date", "-0001-12-31", days_from_civil(-1, 12, 31)),
])
def test_json_java_forms(type_name: str, obj: object, value: object) -> None:
    assert from_json(type_name, obj) == value


def test_json_nan() -> None:
    assert to_json("double", math.nan) == "NaN"
    assert math.isnan(from_json("double", "NaN"))
    assert math.isnan(from_json("float", "NaN"))


@pytest.mark.parametrize(("type_name", "obj"), [
    ("boolean", "true"),
    ("int", True),
    ("int", 1.5),
    ("int", 2**31),
    ("long", "34"),
    ("float", "1.0"),
    ("decimal(9, 2)", 14.2),
    ("decimal(9, 2)", "14.205"),
    ("decimal(9, 2)", "abc"),
    ("decimal(9, 2)", "NaN"),
    ("date", "2017-02-29"),
    ("date", "2017-13-01"),
    ("date", "2017/11/16"),
    ("date", 17486),
    ("time", "24:00:00"),
    ("time", "22:31:08+00:00"),
    ("timestamp", "2017-11-16T22:31:08+00:00"),
    ("timestamp", "2017-11-16 22:31:08"),
    ("timestamptz", "2017-11-16T22:31:08"),
    ("timestamptz", "2017-11-16T14:31:08-08:00"),
    ("timestamp_ns", "2017-11-16T22:31:08.1234567891"),
    ("string", 1),
    ("uuid", "f79c3e09677c4bbda4793f349cb785e7"),
    ("fixed[4]", "0001"),
    ("binary", "xyz"),
    ("variant", {}),
    ("unknown", 1),
])
def test_malformed_json(type_name: str, obj: object) -> None:
    with pytest.raises(InvalidMetadataError):
        from_json(type_name, obj)


def test_json_null() -> None:
    assert to_json("int", None) is None
    assert from_json("unknown", None) is None
    assert from_json("variant", None) is None


def test_json_nested() -> None:
    struct_t = StructType((
        NestedField(1, "a", primitive("int")),
        NestedField(2, "b", primitive("string")),
        NestedField(3, "c", ListType(4, primitive("date"))),
    ))
    value = {1: 1, 2: "bar", 3: [0, None]}
    obj = {"1": 1, "2": "bar", "3": ["1970-01-01", None]}
    assert to_json(struct_t, value) == obj
    assert from_json(struct_t, obj) == value
    assert from_json(struct_t, {"1": 1}) == {1: 1, 2: None, 3: None}

    map_t = MapType(5, primitive("string"), 6, primitive("int"))
    assert to_json(map_t, {"a": 1, "b": 2}) == {"keys": ["a", "b"], "values": [1, 2]}
    assert from_json(map_t, {"keys": ["a", "b"], "values": [1, 2]}) == {"a": 1, "b": 2}
    with pytest.raises(InvalidMetadataError):
        from_json(map_t, {"keys": ["a"], "values": [1, 2]})
    with pytest.raises(InvalidMetadataError):
        from_json(map_t, {"keys": ["a", "a"], "values": [1, 2]})
    with pytest.raises(InvalidMetadataError):
        from_json(map_t, [["a", 1]])

    struct_key = MapType(7, StructType((NestedField(8, "x", primitive("int")),)), 9, primitive("int"))
    pairs = from_json(struct_key, {"keys": [{"8": 1}], "values": [2]})
    assert pairs == [({8: 1}, 2)]
    assert to_json(struct_key, pairs) == {"keys": [{"8": 1}], "values": [2]}


def test_geometry_json_is_wkt() -> None:
    assert from_json("geometry", "POINT (30 10)") == "POINT (30 10)"
    assert to_json("geography", (30.0, 10.0)) == "POINT (30 10)"


# ---------------------------------------------------------------------------------------------
# Display


@pytest.mark.parametrize(("type_name", "value", "text"), [
    ("boolean", True, "true"),
    ("int", -7, "-7"),
    ("float", struct.unpack("<f", struct.pack("<f", 0.1))[0], "0.1"),
    ("double", math.inf, "Infinity"),
    ("double", math.nan, "NaN"),
    ("decimal(9, 2)", Decimal("14.20"), "14.20"),
    ("date", 17486, "2017-11-16"),
    ("time", 81068000000, "22:31:08"),
    ("time", 81068100000, "22:31:08.1"),
    ("timestamp", TS, "2017-11-16T22:31:08"),
    ("timestamp", TS + 123000, "2017-11-16T22:31:08.123"),
    ("timestamptz", TS, "2017-11-16T22:31:08+00:00"),
    ("timestamptz_ns", TS * 1000 + 1, "2017-11-16T22:31:08.000000001+00:00"),
    ("timestamp", -1, "1969-12-31T23:59:59.999999"),
    ("string", "iceberg", "iceberg"),
    ("uuid", UUID, "f79c3e09-677c-4bbd-a479-3f349cb785e7"),
    ("binary", b"\x00\x01\xff", "0x0001ff"),
    ("fixed[2]", b"\xca\xfe", "0xcafe"),
    ("int", None, "null"),
])
def test_human(type_name: str, value: object, text: str) -> None:
    assert human(type_name, value) == text


def test_human_never_raises() -> None:
    assert human("time", -1) == "-1"
    assert human("uuid", "not-a-uuid") == "'not-a-uuid'"


# ---------------------------------------------------------------------------------------------
# Cross-check with PyIceberg, an independent implementation


@pytest.mark.interop
@pytest.mark.parametrize("type_name", [t for t in BINARY_TYPES if not t.startswith(("geo", "timestamp_ns", "timestamptz_ns"))])
@settings(deadline=None)  # the first example imports PyIceberg
@given(data=st.data())
def test_bytes_match_pyiceberg(type_name: str, data: st.DataObject) -> None:
    conversions = pytest.importorskip("pyiceberg.conversions")
    from pyiceberg.types import IcebergType

    py_type = IcebergType.model_validate_json(json.dumps(type_name))
    value = data.draw(values(type_name))
    assert to_bytes(type_name, value) == conversions.to_bytes(py_type, value)
