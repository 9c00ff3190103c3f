"""Puffin files and deletion vectors (icectl.formats.puffin).

Golden bytes come from Apache Iceberg's own test resources (core/src/test/resources/org/apache/
iceberg/{deletes,puffin/v1}/ at apache-iceberg-1.10.2): DV blobs written by Iceberg Java's
BitmapPositionDeleteIndex, 64-bit portable bitmaps from CRoaring's official examples, and Puffin
files written by Iceberg Java's PuffinWriter. The `interop` test at the end has Iceberg Java
itself write a DV and read one icectl wrote.
"""
from __future__ import annotations

import io
import json
import os
import struct
import sys
import uuid
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icectl.formats.puffin import (
    DELETION_VECTOR_V1,
    MAX_WRITE_POSITION,
    ROW_POSITION_FIELD_ID,
    BlobMetadata,
    DeletionVectorBlob,
    FileIOSource,
    PuffinBlob,
    deletion_vector_file,
    deletion_vectors,
    deserialize_deletion_vector,
    read_blob,
    read_deletion_vector,
    read_puffin_footer,
    serialize_deletion_vector,
    write_puffin,
)
from icectl.errors import InvalidMetadataError, UnsupportedError

B32 = 1 << 32
CONTAINER = 1 << 16

# --- Iceberg Java golden DV blobs (TestBitmapPositionDeleteIndex) ---------------------------------
JAVA_EMPTY_DV = "0000000cd1d339640000000000000000bf18480c"
JAVA_SMALL_ALTERNATING_DV = (
    "0000002ad1d339640100000000000000000000003a30000001000000000004001000000001000300050007000900b3fb20be"
)
JAVA_SMALL_AND_LARGE_DV = (
    "00000030d1d339640100000000000000000000003a300000020000000000010000800100180000001c0000006400650063006400"
    "15eb1c7c"
)
JAVA_ALL_CONTAINER_TYPES_DV = (
    "00000056d1d339640200000000000000000000003b30020006000001000100e6030200fdff0500070001000100e60301000100fd"
    "ff010000003b30020006000001000100e9010200fdff0a00140001000a00e90101000100fdffc89be397"
)


def _all_container_types_positions() -> set[int]:
    """TestBitmapPositionDeleteIndex.testAllContainerTypesIndexSerialization: bitmaps 0 and 1,
    each with an array, a run and a bitset container (`delete(a, b)` is the range [a, b))."""
    out: set[int] = set()
    for key, (a, b), (r0, r1) in ((0, (5, 7), (1, 1000)), (1, (10, 20), (10, 500))):
        base = key * B32
        out |= {base + a, base + b}
        out |= set(range(base + CONTAINER + r0, base + CONTAINER + r1))
        out |= set(range(base + 2 * CONTAINER + 1, base + 3 * CONTAINER - 1))
    return out


JAVA_GOLDEN_DVS = [
    pytest.param(set(), JAVA_EMPTY_DV, id="empty"),
    pytest.param({1, 3, 5, 7, 9}, JAVA_SMALL_ALTERNATING_DV, id="small-alternating"),
    pytest.param({100, 101, 2**31 - 1 + 100, 2**31 - 1 + 101}, JAVA_SMALL_AND_LARGE_DV, id="small-and-large"),
    pytest.param(_all_container_types_positions(), JAVA_ALL_CONTAINER_TYPES_DV, id="all-container-types"),
]

# --- CRoaring official 64-bit portable examples (the vector only, no DV envelope) ------------------
_TEN = "00000000" + "3a3000000100000000000900100000000000010002000300040005000600070008000900"
CROARING_64MAP_32BITVALS = "0100000000000000" + _TEN
CROARING_64MAP_SPREADVALS = "0a00000000000000" + "".join(f"{k:02x}" + _TEN[2:] for k in range(10))

# --- Iceberg Java golden Puffin files (TestPuffinWriter / TestPuffinReader) -------------------------
JAVA_EMPTY_PUFFIN = "50464131504641317b22626c6f6273223a5b5d7d0c0000000000000050464131"
SAMPLE_BLOB_1 = b"abcdefghi"
SAMPLE_BLOB_2 = "some blob \u0000 binary data 🤯 that is not very very very very very very long, is it?".encode()
JAVA_SAMPLE_METRIC_PUFFIN = (
    b"PFA1" + SAMPLE_BLOB_1 + SAMPLE_BLOB_2 + b"PFA1"
    + b'{"blobs":[{"type":"some-blob","fields":[1],"snapshot-id":2,"sequence-number":1,"offset":4,"length":9},'
    b'{"type":"some-other-blob","fields":[2],"snapshot-id":2,"sequence-number":1,"offset":13,"length":83}],'
    b'"properties":{"created-by":"Test 1234"}}'
    + bytes.fromhex("f30000000000000050464131")
)


def _dv_envelope(vector: bytes) -> bytes:
    """Length, magic, vector and CRC around a vector, as the spec lays a DV blob out."""
    data = b"\xd1\xd3\x39\x64" + vector
    return struct.pack(">I", len(data)) + data + struct.pack(">I", zlib.crc32(data))


# ---------------------------------------------------------------------------------------------
# Deletion vectors


@pytest.mark.parametrize("positions, golden", JAVA_GOLDEN_DVS)
def test_dv_bytes_equal_iceberg_java(positions: set[int], golden: str) -> None:
    assert serialize_deletion_vector(positions).hex() == golden
    assert set(deserialize_deletion_vector(bytes.fromhex(golden))) == positions


@pytest.mark.parametrize(
    "vector, positions",
    [
        (CROARING_64MAP_32BITVALS, set(range(10))),
        (CROARING_64MAP_SPREADVALS, {k * B32 + v for k in range(10) for v in range(10)}),
        ("0000000000000000", set()),
    ],
    ids=["64map32bitvals", "64mapspreadvals", "64mapempty"],
)
def test_dv_reads_croaring_official_examples(vector: str, positions: set[int]) -> None:
    assert set(deserialize_deletion_vector(_dv_envelope(bytes.fromhex(vector)))) == positions


def test_dv_reads_empty_32_bit_bitmaps_in_key_gaps() -> None:
    # Iceberg Java writes one (possibly empty) bitmap for every key below the highest.
    from pyroaring import BitMap

    vector = struct.pack("<Q", 3)
    for key, values in ((0, []), (1, []), (2, [7])):
        vector += struct.pack("<I", key) + BitMap(values).serialize()
    assert list(deserialize_deletion_vector(_dv_envelope(vector))) == [2 * B32 + 7]


@pytest.mark.parametrize(
    "positions",
    [
        [],
        [0],
        [B32 - 1, B32, B32 + 1],
        [5, 2**33 + 1, 2**40 + 7, MAX_WRITE_POSITION],
        range(0, 200_000),  # run containers
        range(0, 3 * CONTAINER, 2),  # bitset containers
        list(range(10)) + list(range(7 * B32, 7 * B32 + 5000, 3)),
    ],
    ids=["empty", "zero", "around-2^32", "high-keys", "runs", "bitsets", "mixed"],
)
def test_dv_round_trip(positions) -> None:
    blob = serialize_deletion_vector(positions)
    bitmap = deserialize_deletion_vector(blob, expected_cardinality=len(set(positions)))
    assert list(bitmap) == sorted(set(positions))


_positions = st.one_of(
    st.integers(0, 2**16),
    st.integers(0, MAX_WRITE_POSITION),
    st.builds(lambda k, v: k * B32 + v, st.integers(0, 3), st.integers(0, B32 - 1)),
)


@settings(max_examples=200, deadline=None)
@given(st.sets(_positions, max_size=300), st.lists(st.tuples(st.integers(0, 4 * B32), st.integers(1, 5000)), max_size=3))
def test_dv_round_trip_property(points: set[int], ranges: list[tuple[int, int]]) -> None:
    positions = set(points)
    for start, n in ranges:
        positions |= set(range(start, start + n))
    blob = serialize_deletion_vector(positions)
    assert list(deserialize_deletion_vector(blob, expected_cardinality=len(positions))) == sorted(positions)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sets(_positions, max_size=50), st.data())
def test_dv_any_single_byte_change_or_truncation_is_detected(positions: set[int], data) -> None:
    blob = serialize_deletion_vector(positions)
    i = data.draw(st.integers(0, len(blob) - 1), label="byte")
    flip = data.draw(st.integers(1, 255), label="xor")
    tampered = blob[:i] + bytes([blob[i] ^ flip]) + blob[i + 1:]
    with pytest.raises(InvalidMetadataError):
        deserialize_deletion_vector(tampered)
    cut = data.draw(st.integers(0, len(blob) - 1), label="cut")
    with pytest.raises(InvalidMetadataError, match="length check failed"):
        deserialize_deletion_vector(blob[:cut])


def test_dv_crc_tamper() -> None:
    blob = bytearray(serialize_deletion_vector([1, 2, 2**33]))
    blob[-1] ^= 0x01
    with pytest.raises(InvalidMetadataError, match=r"^dv\.puffin: CRC check failed: computed 0x[0-9a-f]{8}, stored"):
        deserialize_deletion_vector(bytes(blob), source="dv.puffin")
    blob[-1] ^= 0x01
    blob[20] ^= 0x40  # inside the vector
    with pytest.raises(InvalidMetadataError, match="CRC check failed"):
        deserialize_deletion_vector(bytes(blob))


def test_dv_magic_checked_before_crc() -> None:
    blob = bytearray(serialize_deletion_vector([1]))
    blob[4:8] = b"\xd1\xd3\x39\x65"
    with pytest.raises(InvalidMetadataError, match="magic check failed: expected d1d33964, found d1d33965"):
        deserialize_deletion_vector(bytes(blob))


@pytest.mark.parametrize("cut", [0, 3, 11, 19, 27])
def test_dv_truncated(cut: int) -> None:
    blob = serialize_deletion_vector([1, 3, 5, 7, 9])
    with pytest.raises(InvalidMetadataError, match="^x: length check failed"):
        deserialize_deletion_vector(blob[:cut], source="x")
    with pytest.raises(InvalidMetadataError, match="length check failed"):
        deserialize_deletion_vector(blob + b"\x00")


def test_dv_cardinality_check() -> None:
    blob = serialize_deletion_vector([1, 2, 3])
    with pytest.raises(InvalidMetadataError, match="cardinality check failed: vector holds 3 positions, expected 4"):
        deserialize_deletion_vector(blob, expected_cardinality=4)


@pytest.mark.parametrize(
    "vector, why",
    [
        (b"\x01\x00\x00", "no 8-byte bitmap count"),
        (struct.pack("<Q", 5) + b"\x00" * 12, "bitmap count 5 does not fit"),
        (struct.pack("<QI", 2, 1) + bytes.fromhex("3a3000000000000000000000") + bytes.fromhex("3a30000000000000"),
         "key 0 is not above the previous key 1"),
        (struct.pack("<QI", 1, 2**31) + bytes.fromhex("3a30000000000000"), "key 2147483648 sets the most significant bit"),
        (struct.pack("<QI", 1, 0) + bytes.fromhex("3a30000000000000") + b"\x00", "1 bytes after the last bitmap"),
        (struct.pack("<QI", 1, 0) + bytes.fromhex("ffff000000000000"), "unknown 32-bit bitmap cookie"),
        # one array container announcing 10 values but holding 2
        (struct.pack("<QI", 1, 0) + bytes.fromhex("3a30000001000000000009001000000000000100"), "truncated 32-bit bitmap"),
    ],
    ids=["no-count", "count", "keys-order", "msb-key", "trailing", "cookie", "short-container"],
)
def test_dv_layout_checks(vector: bytes, why: str) -> None:
    with pytest.raises(InvalidMetadataError, match=f"^blob 7: Roaring layout check failed: {why}"):
        deserialize_deletion_vector(_dv_envelope(vector), source="blob 7")


@pytest.mark.parametrize("bad", [[-1], [MAX_WRITE_POSITION + 1], [2**64], ["a"]])
def test_dv_positions_out_of_range(bad) -> None:
    with pytest.raises(ValueError, match="deletion vector position"):
        serialize_deletion_vector(bad)


def test_dv_serialize_does_not_change_the_callers_bitmap() -> None:
    from pyroaring import BitMap64

    bitmap = BitMap64(range(1000))
    before = bitmap.serialize()
    assert set(deserialize_deletion_vector(serialize_deletion_vector(bitmap))) == set(range(1000))
    assert bitmap.serialize() == before


# ---------------------------------------------------------------------------------------------
# Puffin files


def test_footer_of_java_sample_file() -> None:
    footer = read_puffin_footer(JAVA_SAMPLE_METRIC_PUFFIN)
    assert footer.blobs == [
        BlobMetadata("some-blob", (1,), 2, 1, offset=4, length=9),
        BlobMetadata("some-other-blob", (2,), 2, 1, offset=13, length=83),
    ]
    assert footer.properties == {"created-by": "Test 1234"}
    assert footer.file_size == len(JAVA_SAMPLE_METRIC_PUFFIN) == 355
    assert footer.payload_size == 0xF3
    assert footer.footer_size == 0xF3 + 16
    assert read_blob(JAVA_SAMPLE_METRIC_PUFFIN, 4, 9) == SAMPLE_BLOB_1
    assert read_blob(JAVA_SAMPLE_METRIC_PUFFIN, 13, 83) == SAMPLE_BLOB_2


def test_write_puffin_equals_java_sample_file() -> None:
    data, blobs = write_puffin(
        [(PuffinBlob("some-blob", (1,), 2, 1), SAMPLE_BLOB_1), (PuffinBlob("some-other-blob", (2,), 2, 1), SAMPLE_BLOB_2)],
        created_by="Test 1234",
    )
    assert data == JAVA_SAMPLE_METRIC_PUFFIN
    assert blobs == read_puffin_footer(data).blobs


def test_footer_of_java_empty_file() -> None:
    footer = read_puffin_footer(bytes.fromhex(JAVA_EMPTY_PUFFIN))
    assert (footer.blobs, footer.properties, footer.footer_size) == ([], {}, 28)


def test_footer_round_trip_with_codecs_properties_and_non_ascii() -> None:
    blobs = [
        (PuffinBlob("apache-datasketches-theta-v1", (1, 2), 77, 3, properties={"ndv": "12"}), b"\x00\x01sketch"),
        (PuffinBlob("custom", (), 5, 6, compression_codec="zstd"), b"compressed-elsewhere"),
        (PuffinBlob("empty-blob", (9,), 1, 1), b""),
    ]
    data, written = write_puffin(blobs, {"created-by": "someone", "note": "données"})
    footer = read_puffin_footer(data)
    assert footer.blobs == written
    assert footer.properties == {"created-by": "someone", "note": "données"}
    assert [read_blob(data, b.offset, b.length) for b in written] == [b for _, b in blobs]
    assert written[1].compression_codec == "zstd" and written[0].properties == {"ndv": "12"}
    assert write_puffin([])[0].count(b'"created-by":"icectl ') == 1


def test_footer_from_file_object_range_reader_and_file_io(tmp_path) -> None:
    from icectl.io import FileIO

    data, _ = write_puffin([(PuffinBlob("b", (1,), 1, 1), b"hello")])
    path = tmp_path / "stats.puffin"
    path.write_bytes(data)
    expected = read_puffin_footer(data)
    with open(path, "rb") as f:
        assert read_puffin_footer(f) == expected
        assert read_blob(f, 4, 5) == b"hello"
    assert read_puffin_footer(io.BytesIO(data)) == expected
    source = FileIOSource(FileIO(), str(path))
    assert read_puffin_footer(source) == expected
    assert read_blob(source, 4, 5) == b"hello"
    with open(path, "r+b") as f:
        f.truncate(len(data) - 1)
    with open(path, "rb") as f, pytest.raises(InvalidMetadataError, match=f"^{path}: does not end with the Puffin magic"):
        read_puffin_footer(f)


def test_footer_truncated_anywhere() -> None:
    for cut in range(len(JAVA_SAMPLE_METRIC_PUFFIN)):
        with pytest.raises(InvalidMetadataError, match="^s3://b/t/stats.puffin: "):
            read_puffin_footer(JAVA_SAMPLE_METRIC_PUFFIN[:cut], source="s3://b/t/stats.puffin")
    # a file cut at the front still ends with a footer, but its blob offsets no longer match
    with pytest.raises(InvalidMetadataError):
        read_puffin_footer(JAVA_SAMPLE_METRIC_PUFFIN[20:])


def test_read_blob_past_end() -> None:
    with pytest.raises(InvalidMetadataError, match=r"^f\.puffin: truncated: 10 bytes at offset 350 lie past the end"):
        read_blob(JAVA_SAMPLE_METRIC_PUFFIN, 350, 10, source="f.puffin")
    with pytest.raises(InvalidMetadataError, match="truncated"):
        read_blob(io.BytesIO(b"PFA1abc"), 4, 4)


def _with_footer(payload: bytes, flags: bytes = b"\x00" * 4, body: bytes = b"") -> bytes:
    return b"PFA1" + body + b"PFA1" + payload + struct.pack("<i", len(payload)) + flags + b"PFA1"


def test_footer_flags() -> None:
    payload = b'{"blobs":[]}'
    with pytest.raises(UnsupportedError, match="^p: the Puffin footer payload is LZ4-compressed"):
        read_puffin_footer(_with_footer(payload, b"\x01\x00\x00\x00"), source="p")
    with pytest.raises(UnsupportedError, match="unknown Puffin footer flags 0x00010000"):
        read_puffin_footer(_with_footer(payload, b"\x00\x01\x00\x00"))


@pytest.mark.parametrize(
    "payload, why",
    [
        (b"\xff{", "footer payload is not UTF-8 JSON"),
        (b"{not json", "footer payload is not UTF-8 JSON"),
        (b'{"properties":{}}', "must be an object with a 'blobs' list"),
        (b'{"blobs":[1]}', "blob 0 is not a JSON object"),
        (b'{"blobs":[{"type":"t","fields":[1],"snapshot-id":1,"sequence-number":1,"offset":4}]}',
         "blob 0 needs an integer 'length', got None"),
        (b'{"blobs":[{"type":"t","fields":["1"],"snapshot-id":1,"sequence-number":1,"offset":4,"length":0}]}',
         r"blob 0 \(t\) needs 'fields' as a list of ints"),
        (b'{"blobs":[{"type":"t","fields":[],"snapshot-id":true,"sequence-number":1,"offset":4,"length":0}]}',
         "needs an integer 'snapshot-id'"),
        (b'{"blobs":[],"properties":{"a":1}}', "footer properties must be an object of string values"),
        (b'{"blobs":[{"type":"t","fields":[],"snapshot-id":1,"sequence-number":1,"offset":4,"length":9}]}',
         r"blob 0 \(t\) at offset 4 length 9 lies outside the blob area \[4, 7\)"),
        (b'{"blobs":[{"type":"t","fields":[],"snapshot-id":1,"sequence-number":1,"offset":0,"length":1}]}',
         "lies outside the blob area"),
    ],
)
def test_footer_malformed(payload: bytes, why: str) -> None:
    with pytest.raises(InvalidMetadataError, match=f"^m.puffin: .*{why}"):
        read_puffin_footer(_with_footer(payload, body=b"abc"), source="m.puffin")


def test_footer_structure_errors() -> None:
    good = _with_footer(b'{"blobs":[]}')
    with pytest.raises(InvalidMetadataError, match="too short to be a Puffin file"):
        read_puffin_footer(b"PFA1PFA1")
    with pytest.raises(InvalidMetadataError, match="does not start with the Puffin magic"):
        read_puffin_footer(b"XXXX" + good[4:])
    bad_size = good[:-12] + struct.pack("<i", 1000) + good[-8:]
    with pytest.raises(InvalidMetadataError, match="footer payload size 1000 does not fit"):
        read_puffin_footer(bad_size)
    with pytest.raises(InvalidMetadataError, match="footer payload size -1"):
        read_puffin_footer(good[:-12] + struct.pack("<i", -1) + good[-8:])
    with pytest.raises(InvalidMetadataError, match="no Puffin magic at the footer start"):
        read_puffin_footer(b"PFA1" + _with_footer(b'{"blobs":[]} ')[4:].replace(b"PFA1{", b"PFA2{"))


def test_write_puffin_rejects_what_the_spec_forbids() -> None:
    dv = {"referenced-data-file": "s3://b/d.parquet", "cardinality": "1"}
    with pytest.raises(ValueError, match="unknown Puffin compression codec 'gzip'"):
        write_puffin([(PuffinBlob("t", (1,), compression_codec="gzip"), b"")])
    with pytest.raises(ValueError, match="must not be compressed"):
        write_puffin([(PuffinBlob(DELETION_VECTOR_V1, (ROW_POSITION_FIELD_ID,), compression_codec="zstd", properties=dv), b"")])
    with pytest.raises(ValueError, match="needs 'referenced-data-file' and 'cardinality'"):
        write_puffin([(PuffinBlob(DELETION_VECTOR_V1, (ROW_POSITION_FIELD_ID,)), b"")])
    with pytest.raises(ValueError, match="snapshot-id and sequence-number -1"):
        write_puffin([(PuffinBlob(DELETION_VECTOR_V1, (ROW_POSITION_FIELD_ID,), 5, 5, properties=dv), b"")])


# ---------------------------------------------------------------------------------------------
# Puffin files of deletion vectors


def test_deletion_vector_file_round_trip() -> None:
    entries = {
        "s3://bucket/t/data/a.parquet": [0, 5, 9],
        "s3://bucket/t/data/b.parquet": range(10, 5000),
        "s3://bucket/t/data/é.parquet": [3 * B32 + 1, 1],
    }
    data, dvs = deletion_vector_file(entries, created_by="icectl test")
    footer = read_puffin_footer(data, source="dv.puffin")
    assert footer.properties == {"created-by": "icectl test"}
    assert deletion_vectors(footer) == dvs
    assert [dv.referenced_data_file for dv in dvs] == list(entries)
    assert [dv.cardinality for dv in dvs] == [3, 4990, 2]
    assert dvs[0].offset == 4 and dvs[1].offset == dvs[0].offset + dvs[0].length
    for blob, dv in zip(footer.blobs, dvs):
        assert (blob.type, blob.fields, blob.snapshot_id, blob.sequence_number) == (
            DELETION_VECTOR_V1, (ROW_POSITION_FIELD_ID,), -1, -1)
        assert blob.compression_codec is None
        assert blob.properties == {"referenced-data-file": dv.referenced_data_file, "cardinality": str(dv.cardinality)}
        positions = read_deletion_vector(data, dv.offset, dv.length, record_count=dv.cardinality)
        assert list(positions) == sorted(set(entries[dv.referenced_data_file]))
        # content_offset / content_size_in_bytes cover the whole blob, length prefix to CRC
        raw = read_blob(data, dv.offset, dv.length)
        assert struct.unpack(">I", raw[:4])[0] == dv.length - 8 and raw[4:8] == b"\xd1\xd3\x39\x64"


def test_deletion_vector_file_errors() -> None:
    with pytest.raises(ValueError, match="no deleted positions for a.parquet"):
        deletion_vector_file({"a.parquet": []})
    data, dvs = deletion_vector_file({"a.parquet": [1, 2]})
    with pytest.raises(InvalidMetadataError, match="^f.puffin: DV at offset 4: cardinality check failed"):
        read_deletion_vector(data, dvs[0].offset, dvs[0].length, record_count=3, source="f.puffin")
    with pytest.raises(InvalidMetadataError, match="length check failed"):
        read_deletion_vector(data, dvs[0].offset, dvs[0].length - 1)


def test_deletion_vectors_checks_blob_properties() -> None:
    def footer_with(props: dict, codec: str | None = None):
        blob = {"type": DELETION_VECTOR_V1, "fields": [ROW_POSITION_FIELD_ID], "snapshot-id": -1,
                "sequence-number": -1, "offset": 4, "length": 1, "properties": props}
        if codec:
            blob["compression-codec"] = codec
        return read_puffin_footer(_with_footer(json.dumps({"blobs": [blob]}).encode(), body=b"x"))

    with pytest.raises(InvalidMetadataError, match="^d.puffin: deletion vector blob at offset 4 has no 'referenced-data-file'"):
        deletion_vectors(footer_with({"cardinality": "1"}), source="d.puffin")
    with pytest.raises(InvalidMetadataError, match="non-negative integer 'cardinality', got '-1'"):
        deletion_vectors(footer_with({"referenced-data-file": "f", "cardinality": "-1"}))
    with pytest.raises(InvalidMetadataError, match="non-negative integer 'cardinality'"):
        deletion_vectors(footer_with({"referenced-data-file": "f", "cardinality": "\u00b2"}))
    with pytest.raises(InvalidMetadataError, match=r"is compressed \(zstd\)"):
        deletion_vectors(footer_with({"referenced-data-file": "f", "cardinality": "1"}, "zstd"))
    assert deletion_vectors(footer_with({"referenced-data-file": "f", "cardinality": "1"})) == [
        DeletionVectorBlob("f", 4, 1, 1)]


# ---------------------------------------------------------------------------------------------
# Iceberg Java 1.10.2 (the reference implementation) writes and reads DVs


@pytest.fixture(scope="module")
def java(tmp_path_factory):
    """(spark, iceberg_java) from the oracle ($ICECTL_ORACLE_DIR, else <repo>/../shared/oracle).

    Reuses a running SparkSession (another module's oracle session) and stops only its own.
    """
    pytest.importorskip("pyspark")
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    oracle_dir = os.environ.get("ICECTL_ORACLE_DIR") or os.path.normpath(os.path.join(repo, "..", "shared", "oracle"))
    if not os.path.exists(os.path.join(oracle_dir, "iceberg_java.py")):
        pytest.skip(f"iceberg_java.py not found in {oracle_dir}: set ICECTL_ORACLE_DIR")
    if oracle_dir not in sys.path:
        sys.path.insert(0, oracle_dir)
    import iceberg_java
    from pyspark.sql import SparkSession

    existing = SparkSession.getActiveSession()
    spark = existing or iceberg_java.session(str(tmp_path_factory.mktemp("puffin-warehouse")))
    yield spark, iceberg_java
    if existing is None:
        spark.stop()


def _v3_table(spark, rows: int) -> str:
    """A v3 merge-on-read table with one data file holding ids 0..rows-1 in order."""
    name = f"hc.puffin_{uuid.uuid4().hex[:8]}.t"
    spark.sql(
        f"CREATE TABLE {name} (id bigint) USING iceberg "
        "TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read')"
    )
    spark.range(0, rows).coalesce(1).sortWithinPartitions("id").writeTo(name).append()
    return name


@pytest.mark.spark
@pytest.mark.interop
@pytest.mark.slow
def test_reads_dv_written_by_iceberg_java(java) -> None:
    spark, _ = java
    name = _v3_table(spark, 100)
    pos_of = {r["id"]: r["_pos"] for r in spark.sql(f"SELECT id, _pos FROM {name}").collect()}
    spark.sql(f"DELETE FROM {name} WHERE id % 3 = 0 OR id = 98")
    (dv,) = spark.sql(f"SELECT * FROM {name}.delete_files").collect()
    assert dv["file_format"] == "PUFFIN"

    with open(dv["file_path"], "rb") as f:
        footer = read_puffin_footer(f)
        assert footer.file_size == dv["file_size_in_bytes"]
        assert footer.properties["created-by"].startswith("Apache Iceberg")
        assert deletion_vectors(footer, source=dv["file_path"]) == [DeletionVectorBlob(
            dv["referenced_data_file"], dv["content_offset"], dv["content_size_in_bytes"], dv["record_count"])]
        assert footer.blobs[0].fields == (ROW_POSITION_FIELD_ID,)
        positions = read_deletion_vector(f, dv["content_offset"], dv["content_size_in_bytes"], record_count=dv["record_count"])
        blob = read_blob(f, dv["content_offset"], dv["content_size_in_bytes"])
    expected = sorted(pos_of[i] for i in pos_of if i % 3 == 0 or i == 98)
    assert list(positions) == expected
    assert serialize_deletion_vector(expected) == blob  # icectl writes the very bytes Java wrote


@pytest.mark.spark
@pytest.mark.interop
@pytest.mark.slow
def test_iceberg_java_reads_dv_written_by_icectl(java) -> None:
    spark, iceberg_java = java
    jvm = spark._jvm
    name = _v3_table(spark, 100)
    ((data_file,),) = spark.sql(f"SELECT file_path FROM {name}.files").collect()
    pos_of = {r["id"]: r["_pos"] for r in spark.sql(f"SELECT id, _pos FROM {name}").collect()}
    deleted = {0, 1, 2, 50, 97, 99}

    data, (dv,) = deletion_vector_file({data_file: [pos_of[i] for i in deleted]})
    table = iceberg_java.java_table(spark, name)
    puffin_path = f"{table.location()}/data/icectl-{uuid.uuid4().hex}-deletes.puffin"
    with open(puffin_path, "wb") as f:
        f.write(data)

    # Java's own Puffin reader agrees with the footer
    reader = jvm.org.apache.iceberg.puffin.Puffin.read(table.io().newInputFile(puffin_path)).build()
    (blob,) = list(reader.fileMetadata().blobs())
    assert (blob.type(), blob.offset(), blob.length()) == (DELETION_VECTOR_V1, dv.offset, dv.length)
    assert dict(blob.properties()) == {"referenced-data-file": data_file, "cardinality": "6"}
    reader.close()

    delete_file = (
        jvm.org.apache.iceberg.FileMetadata.deleteFileBuilder(table.spec())
        .ofPositionDeletes()
        .withFormat(jvm.org.apache.iceberg.FileFormat.PUFFIN)
        .withPath(puffin_path)
        .withFileSizeInBytes(len(data))
        .withReferencedDataFile(data_file)
        .withContentOffset(dv.offset)
        .withContentSizeInBytes(dv.length)
        .withRecordCount(dv.cardinality)
        .build()
    )
    table.newRowDelta().addDeletes(delete_file).commit()
    spark.sql(f"REFRESH TABLE {name}")
    ids = {r["id"] for r in spark.sql(f"SELECT id FROM {name}").collect()}
    assert ids == set(range(100)) - deleted


@pytest.mark.spark
@pytest.mark.interop
@pytest.mark.slow
def test_iceberg_java_reads_high_positions_written_by_icectl(java) -> None:
    spark, _ = java
    jvm = spark._jvm
    positions = [5, B32 - 1, 2**33 + 1, 2**40 + 7, 3 * B32 + CONTAINER + 9]
    blob = serialize_deletion_vector(positions + list(range(2**34, 2**34 + 70_000)))
    spec = jvm.org.apache.iceberg.PartitionSpec.unpartitioned()
    delete_file = (
        jvm.org.apache.iceberg.FileMetadata.deleteFileBuilder(spec)
        .ofPositionDeletes()
        .withFormat(jvm.org.apache.iceberg.FileFormat.PUFFIN)
        .withPath("/nowhere/dv.puffin")
        .withFileSizeInBytes(len(blob) + 100)
        .withReferencedDataFile("/nowhere/data.parquet")
        .withContentOffset(4)
        .withContentSizeInBytes(len(blob))
        .withRecordCount(len(positions) + 70_000)
        .build()
    )
    index = jvm.org.apache.iceberg.deletes.PositionDeleteIndex.deserialize(bytearray(blob), delete_file)
    assert index.cardinality() == len(positions) + 70_000
    for p in positions + [2**34, 2**34 + 69_999]:
        assert index.isDeleted(p)
    for p in (4, 6, B32, 2**33, 2**34 - 1, 2**34 + 70_000):
        assert not index.isDeleted(p)
