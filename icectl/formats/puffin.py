"""Puffin files and deletion vectors (Puffin spec: "File structure", "Footer structure",
"FileMetadata", "BlobMetadata", "`deletion-vector-v1` blob type"; table spec v3: "Deletion
Vectors", "Delete Formats").

A Puffin file is ``Magic Blob₁ … Blobₙ Footer`` and its footer is
``Magic FooterPayload FooterPayloadSize Flags Magic``; the payload is UTF-8 JSON naming each
blob's ``offset`` and ``length``. A ``deletion-vector-v1`` blob is a big-endian length, the magic
``D1 D3 39 64``, a 64-bit "portable" Roaring bitmap of deleted row positions and a big-endian
CRC-32 of magic and bitmap. In a v3 manifest a DV's ``content_offset`` and
``content_size_in_bytes`` point at the whole blob (length prefix and CRC included) and its
``record_count`` is the blob's ``cardinality``.

Bitmaps are ``pyroaring.BitMap64`` (pyroaring >= 1.0): its ``serialize()`` is the 64-bit
portable format the spec names. The only Roaring code here walks the 32-bit headers to find
where each bitmap ends, so that a malformed vector is reported before pyroaring decodes it.
"""
from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, Iterable, Mapping, Protocol, Sequence, Union, runtime_checkable

from icectl import __version__
from icectl.errors import InvalidMetadataError, UnsupportedError

if TYPE_CHECKING:  # pragma: no cover
    from pyroaring import BitMap, BitMap64

MAGIC = b"PFA1"
FOOTER_STRUCT_LENGTH = 12  # FooterPayloadSize (4) + Flags (4) + Magic (4)
FOOTER_OVERHEAD = len(MAGIC) + FOOTER_STRUCT_LENGTH  # footer size minus the payload
FLAG_FOOTER_PAYLOAD_COMPRESSED = 0x01  # byte 0, bit 0
COMPRESSION_CODECS = ("lz4", "zstd")  # Puffin spec: "Compression codecs"

DELETION_VECTOR_V1 = "deletion-vector-v1"
DV_MAGIC = b"\xd1\xd3\x39\x64"
ROW_POSITION_FIELD_ID = 2147483645  # _pos, reserved field id (table spec: "Reserved Field IDs")
REFERENCED_DATA_FILE = "referenced-data-file"
CARDINALITY = "cardinality"
CREATED_BY = "created-by"
# Iceberg Java's RoaringPositionBitmap rejects the key 2^31-1, so icectl writes keys up to
# 2^31-2 only (write strictly); reading accepts every key the spec allows.
MAX_WRITE_POSITION = (((1 << 31) - 2) << 32) | 0xFFFFFFFF

_LE_I32 = struct.Struct("<i")
_BE_U32 = struct.Struct(">I")


# ---------------------------------------------------------------------------------------------
# Model

@dataclass(frozen=True)
class PuffinBlob:
    """A blob's metadata before it is written: a BlobMetadata without ``offset`` and ``length``."""

    type: str
    fields: tuple[int, ...]
    snapshot_id: int = -1
    sequence_number: int = -1
    compression_codec: str | None = None  # the blob bytes given to write_puffin are already compressed
    properties: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class BlobMetadata:
    """Puffin spec "BlobMetadata": where a blob lies in the file and what it is."""

    type: str
    fields: tuple[int, ...]
    snapshot_id: int
    sequence_number: int
    offset: int
    length: int
    compression_codec: str | None = None
    properties: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The JSON object, keys in the order Iceberg Java writes them."""
        d: dict[str, Any] = {
            "type": self.type,
            "fields": list(self.fields),
            "snapshot-id": self.snapshot_id,
            "sequence-number": self.sequence_number,
            "offset": self.offset,
            "length": self.length,
        }
        if self.compression_codec is not None:
            d["compression-codec"] = self.compression_codec
        if self.properties:
            d["properties"] = dict(self.properties)
        return d


@dataclass(frozen=True)
class PuffinFooter:
    """A Puffin file's footer: the spec's FileMetadata plus the sizes a table's statistics need.

    ``footer_size`` is the whole footer (both magics, payload, size and flags), the value of a
    statistics file's ``file-footer-size-in-bytes``; ``payload_size`` is FooterPayloadSize.
    """

    blobs: list[BlobMetadata]
    properties: dict[str, str]
    file_size: int
    footer_size: int
    payload_size: int


@dataclass(frozen=True)
class DeletionVectorBlob:
    """One DV in a Puffin file, in Puffin's words; a v3 delete-file entry takes ``offset`` as
    ``content_offset``, ``length`` as ``content_size_in_bytes`` and ``cardinality`` as
    ``record_count`` (table spec: "Deletion Vectors")."""

    referenced_data_file: str
    offset: int
    length: int
    cardinality: int


@runtime_checkable
class RangeReader(Protocol):
    """Anything that reads byte ranges of one file (see :class:`FileIOSource`)."""

    def size(self) -> int: ...

    def read_range(self, offset: int, length: int) -> bytes: ...


@dataclass(frozen=True)
class FileIOSource:
    """One path of an ``icectl.io.FileIO`` (or anything with ``size(path)`` and
    ``read_range(path, offset, length)``) as a :class:`RangeReader`."""

    file_io: Any
    path: str

    def size(self) -> int:
        return int(self.file_io.size(self.path))

    def read_range(self, offset: int, length: int) -> bytes:
        return bytes(self.file_io.read_range(self.path, offset, length))


PuffinSource = Union[bytes, bytearray, memoryview, BinaryIO, RangeReader]


# ---------------------------------------------------------------------------------------------
# Reading Puffin files

class _Reader:
    """Random access to bytes, a seekable binary file or a RangeReader, with a name for errors."""

    def __init__(self, src: PuffinSource, source: str | None):
        self._src = src
        if isinstance(src, (bytes, bytearray, memoryview)):
            self._view: memoryview | None = memoryview(src).cast("B")
            self.size = len(self._view)
        else:
            self._view = None
            if isinstance(src, RangeReader):
                self.size = src.size()
            elif hasattr(src, "seek") and hasattr(src, "read"):
                self.size = src.seek(0, 2)
            else:
                raise TypeError(f"cannot read a Puffin file from {type(src).__name__}")
        self.name = source or _source_name(src)

    def read(self, offset: int, length: int) -> bytes:
        if offset < 0 or length < 0 or offset + length > self.size:
            raise InvalidMetadataError(
                f"{self.name}: truncated: {length} bytes at offset {offset} lie past the end of the "
                f"file ({self.size} bytes)"
            )
        if self._view is not None:
            data = bytes(self._view[offset:offset + length])
        elif isinstance(self._src, RangeReader):
            data = self._src.read_range(offset, length)
        else:
            self._src.seek(offset)  # type: ignore[union-attr]
            data = self._src.read(length)  # type: ignore[union-attr]
        if len(data) != length:
            raise InvalidMetadataError(f"{self.name}: truncated: read {len(data)} of {length} bytes at offset {offset}")
        return data


def _source_name(src: Any) -> str:
    for attr in ("path", "name"):
        value = getattr(src, attr, None)
        if isinstance(value, str):
            return value
    return "Puffin file"


def read_puffin_footer(data_or_reader: PuffinSource, *, source: str | None = None) -> PuffinFooter:
    """Read and check a Puffin file's footer (Puffin spec: "Footer structure", "FileMetadata").

    ``data_or_reader`` is the whole file, a seekable binary file (``open(p, "rb")``, an fsspec
    file) or a :class:`RangeReader`; only the footer and the leading magic are read. ``source``
    names the file in errors. Raises InvalidMetadataError for a truncated or malformed file and
    UnsupportedError for a compressed footer (LZ4) or flags this icectl does not know.
    """
    r = _Reader(data_or_reader, source)
    if r.size < len(MAGIC) + FOOTER_OVERHEAD:
        raise InvalidMetadataError(f"{r.name}: too short to be a Puffin file ({r.size} bytes)")
    struct_offset = r.size - FOOTER_STRUCT_LENGTH
    footer_struct = r.read(struct_offset, FOOTER_STRUCT_LENGTH)
    if footer_struct[8:] != MAGIC:
        raise InvalidMetadataError(f"{r.name}: does not end with the Puffin magic PFA1 (truncated or not a Puffin file)")
    if r.read(0, len(MAGIC)) != MAGIC:
        raise InvalidMetadataError(f"{r.name}: does not start with the Puffin magic PFA1")
    (payload_size,) = _LE_I32.unpack_from(footer_struct, 0)
    footer_size = payload_size + FOOTER_OVERHEAD
    if payload_size < 0 or len(MAGIC) + footer_size > r.size:
        raise InvalidMetadataError(
            f"{r.name}: footer payload size {payload_size} does not fit in a file of {r.size} bytes (truncated?)"
        )
    flags = footer_struct[4:8]
    if flags[0] & FLAG_FOOTER_PAYLOAD_COMPRESSED:
        raise UnsupportedError(f"{r.name}: the Puffin footer payload is LZ4-compressed, which icectl cannot read")
    if flags[0] & ~FLAG_FOOTER_PAYLOAD_COMPRESSED or any(flags[1:]):
        raise UnsupportedError(f"{r.name}: unknown Puffin footer flags 0x{flags.hex()}")
    footer_offset = r.size - footer_size
    footer = r.read(footer_offset, len(MAGIC) + payload_size)
    if footer[:4] != MAGIC:
        raise InvalidMetadataError(f"{r.name}: no Puffin magic at the footer start (offset {footer_offset})")
    try:
        obj = json.loads(footer[4:].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise InvalidMetadataError(f"{r.name}: footer payload is not UTF-8 JSON ({type(e).__name__}: {e})") from None
    blobs, properties = _file_metadata_from_json(obj, r.name)
    for i, b in enumerate(blobs):
        if b.offset < len(MAGIC) or b.length < 0 or b.offset + b.length > footer_offset:
            raise InvalidMetadataError(
                f"{r.name}: blob {i} ({b.type}) at offset {b.offset} length {b.length} lies outside the "
                f"blob area [4, {footer_offset})"
            )
    return PuffinFooter(
        blobs=blobs, properties=properties, file_size=r.size, footer_size=footer_size, payload_size=payload_size
    )


def _file_metadata_from_json(obj: Any, name: str) -> tuple[list[BlobMetadata], dict[str, str]]:
    """Puffin spec "FileMetadata": ``blobs`` required, ``properties`` optional."""
    if not isinstance(obj, dict) or not isinstance(obj.get("blobs"), list):
        raise InvalidMetadataError(f"{name}: footer payload must be an object with a 'blobs' list")
    blobs = [_blob_from_json(b, name, i) for i, b in enumerate(obj["blobs"])]
    return blobs, _string_map(obj.get("properties"), f"{name}: footer properties")


def _blob_from_json(obj: Any, name: str, index: int) -> BlobMetadata:
    where = f"{name}: blob {index}"
    if not isinstance(obj, dict):
        raise InvalidMetadataError(f"{where} is not a JSON object")

    def required_int(key: str) -> int:
        value = obj.get(key)
        if not _is_int(value):
            raise InvalidMetadataError(f"{where} needs an integer {key!r}, got {value!r}")
        return value

    blob_type, fields, codec = obj.get("type"), obj.get("fields"), obj.get("compression-codec")
    if not isinstance(blob_type, str):
        raise InvalidMetadataError(f"{where} needs a string 'type', got {blob_type!r}")
    if not isinstance(fields, list) or not all(_is_int(f) for f in fields):
        raise InvalidMetadataError(f"{where} ({blob_type}) needs 'fields' as a list of ints, got {fields!r}")
    if codec is not None and not isinstance(codec, str):
        raise InvalidMetadataError(f"{where} ({blob_type}) has a non-string 'compression-codec' {codec!r}")
    return BlobMetadata(
        type=blob_type,
        fields=tuple(fields),
        snapshot_id=required_int("snapshot-id"),
        sequence_number=required_int("sequence-number"),
        offset=required_int("offset"),
        length=required_int("length"),
        compression_codec=codec,
        properties=_string_map(obj.get("properties"), f"{where} ({blob_type}) properties"),
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _string_map(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise InvalidMetadataError(f"{where} must be an object of string values")
    return dict(value)


def read_blob(file_bytes_or_fs_reader: PuffinSource, offset: int, length: int, *, source: str | None = None) -> bytes:
    """The ``length`` stored bytes at ``offset`` (still compressed if the blob names a codec).

    Raises InvalidMetadataError, naming the file, when the range runs past the end of the file.
    """
    return _Reader(file_bytes_or_fs_reader, source).read(offset, length)


def deletion_vectors(footer: PuffinFooter, *, source: str = "Puffin file") -> list[DeletionVectorBlob]:
    """The ``deletion-vector-v1`` blobs of a footer, their required properties checked
    (Puffin spec: "`deletion-vector-v1` blob type")."""
    out = []
    for b in footer.blobs:
        if b.type != DELETION_VECTOR_V1:
            continue
        where = f"{source}: deletion vector blob at offset {b.offset}"
        data_file = b.properties.get(REFERENCED_DATA_FILE)
        cardinality = b.properties.get(CARDINALITY, "")
        if not data_file:
            raise InvalidMetadataError(f"{where} has no {REFERENCED_DATA_FILE!r} property")
        if not (cardinality.isascii() and cardinality.isdigit()):
            raise InvalidMetadataError(f"{where} needs a non-negative integer {CARDINALITY!r}, got {cardinality!r}")
        if b.compression_codec is not None:
            raise InvalidMetadataError(f"{where} is compressed ({b.compression_codec}); DVs must not be")
        out.append(DeletionVectorBlob(data_file, b.offset, b.length, int(cardinality)))
    return out


# ---------------------------------------------------------------------------------------------
# Writing Puffin files

def write_puffin(
    blobs: Sequence[tuple[PuffinBlob, bytes]],
    properties: Mapping[str, str] | None = None,
    *,
    created_by: str | None = None,
) -> tuple[bytes, list[BlobMetadata]]:
    """A whole Puffin file with an uncompressed footer, and the metadata of each blob in order.

    ``created-by`` (Puffin spec: "Common properties") is set to ``created_by``, else kept from
    ``properties``, else "icectl <version>". Blob bytes are written as given. Raises ValueError
    for blob metadata the spec forbids (an unknown codec, a DV without its properties).
    """
    props = dict(properties or {})
    if created_by is not None:
        props[CREATED_BY] = created_by
    props.setdefault(CREATED_BY, f"icectl {__version__}")
    parts = [MAGIC]
    offset = len(MAGIC)
    written: list[BlobMetadata] = []
    for blob, data in blobs:
        _check_blob(blob)
        written.append(BlobMetadata(
            type=blob.type, fields=tuple(blob.fields), snapshot_id=blob.snapshot_id,
            sequence_number=blob.sequence_number, offset=offset, length=len(data),
            compression_codec=blob.compression_codec, properties=dict(blob.properties),
        ))
        parts.append(bytes(data))
        offset += len(data)
    payload_json: dict[str, Any] = {"blobs": [b.to_json() for b in written]}
    if props:
        payload_json["properties"] = props
    payload = json.dumps(payload_json, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    if len(payload) > 0x7FFFFFFF:
        raise ValueError("Puffin footer payload over 2 GiB")
    parts += [MAGIC, payload, _LE_I32.pack(len(payload)), b"\x00\x00\x00\x00", MAGIC]
    return b"".join(parts), written


def _check_blob(blob: PuffinBlob) -> None:
    if blob.compression_codec is not None and blob.compression_codec not in COMPRESSION_CODECS:
        raise ValueError(f"unknown Puffin compression codec {blob.compression_codec!r}")
    if not all(isinstance(v, str) for v in blob.properties.values()):
        raise ValueError(f"{blob.type} blob properties must be strings")
    if blob.type == DELETION_VECTOR_V1:
        if blob.compression_codec is not None:
            raise ValueError("a deletion-vector-v1 blob must not be compressed")
        cardinality = blob.properties.get(CARDINALITY, "")
        if not blob.properties.get(REFERENCED_DATA_FILE) or not (cardinality.isascii() and cardinality.isdigit()):
            raise ValueError(f"a deletion-vector-v1 blob needs {REFERENCED_DATA_FILE!r} and {CARDINALITY!r}")
        if (blob.snapshot_id, blob.sequence_number) != (-1, -1):
            raise ValueError("a deletion-vector-v1 blob has snapshot-id and sequence-number -1")


def deletion_vector_file(
    entries: Mapping[str, Iterable[int] | BitMap | BitMap64],
    *,
    created_by: str | None = None,
) -> tuple[bytes, list[DeletionVectorBlob]]:
    """A Puffin file with one ``deletion-vector-v1`` blob per data file, in ``entries`` order.

    ``entries`` maps a data file's location (exactly as in table metadata) to its deleted row
    positions. Each result gives the blob's offset, length and cardinality for the DV's
    ``content_offset``, ``content_size_in_bytes`` and ``record_count``. A data file with no
    deleted position is a ValueError: a DV that deletes nothing has no reason to exist.
    """
    blobs: list[tuple[PuffinBlob, bytes]] = []
    for data_file, positions in entries.items():
        bitmap = _position_bitmap(positions)
        if not bitmap:
            raise ValueError(f"no deleted positions for {data_file}")
        props = {REFERENCED_DATA_FILE: data_file, CARDINALITY: str(len(bitmap))}
        blobs.append((PuffinBlob(DELETION_VECTOR_V1, (ROW_POSITION_FIELD_ID,), properties=props),
                      _serialize_bitmap(bitmap)))
    data, written = write_puffin(blobs, created_by=created_by)
    return data, [
        DeletionVectorBlob(b.properties[REFERENCED_DATA_FILE], b.offset, b.length, int(b.properties[CARDINALITY]))
        for b in written
    ]


# ---------------------------------------------------------------------------------------------
# Deletion vectors

def serialize_deletion_vector(positions: Iterable[int] | BitMap | BitMap64) -> bytes:
    """The ``deletion-vector-v1`` blob for these row positions (Puffin spec:
    "`deletion-vector-v1` blob type"), run-length encoded as Iceberg Java writes it.

    Positions must lie in ``[0, MAX_WRITE_POSITION]``; otherwise ValueError.
    """
    return _serialize_bitmap(_position_bitmap(positions))


def _position_bitmap(positions: Iterable[int] | BitMap | BitMap64) -> BitMap64:
    from pyroaring import BitMap64

    try:
        bitmap = BitMap64(positions)
    except (OverflowError, TypeError, ValueError) as e:
        raise ValueError(f"deletion vector positions must be integers in [0, {MAX_WRITE_POSITION}] ({e})") from None
    if bitmap and bitmap.max() > MAX_WRITE_POSITION:
        raise ValueError(f"deletion vector position {bitmap.max()} is above {MAX_WRITE_POSITION}")
    return bitmap


def _serialize_bitmap(bitmap: BitMap64) -> bytes:
    bitmap.run_optimize()  # what Java's BitmapPositionDeleteIndex.serialize does first
    data = DV_MAGIC + bitmap.serialize()
    return _BE_U32.pack(len(data)) + data + _BE_U32.pack(zlib.crc32(data))


def deserialize_deletion_vector(
    blob: bytes | bytearray | memoryview,
    *,
    expected_cardinality: int | None = None,
    source: str = "deletion vector",
) -> BitMap64:
    """The deleted row positions of a ``deletion-vector-v1`` blob (the whole blob, from the
    length prefix through the CRC; Puffin spec: "`deletion-vector-v1` blob type").

    Checks, in order, the length prefix, the magic, the CRC-32, the 64-bit portable layout (bitmap
    count, keys ascending with the most significant bit 0, nothing left over) and, if given, the
    cardinality (a DV's ``record_count``). Each failure is an InvalidMetadataError naming
    ``source`` and the check.
    """
    from pyroaring import BitMap64

    view = memoryview(blob).cast("B")
    if len(view) < 12:
        raise InvalidMetadataError(f"{source}: length check failed: blob is {len(view)} bytes, shorter than 12")
    (data_length,) = _BE_U32.unpack_from(view, 0)
    if data_length + 8 != len(view):
        raise InvalidMetadataError(
            f"{source}: length check failed: prefix says {data_length} bytes of magic and vector, blob holds "
            f"{len(view) - 8}"
        )
    data = view[4:4 + data_length]
    if data[:4] != DV_MAGIC:
        raise InvalidMetadataError(f"{source}: magic check failed: expected d1d33964, found {data[:4].hex()}")
    (stored_crc,) = _BE_U32.unpack_from(view, 4 + data_length)
    crc = zlib.crc32(data)
    if crc != stored_crc:
        raise InvalidMetadataError(f"{source}: CRC check failed: computed 0x{crc:08x}, stored 0x{stored_crc:08x}")
    vector = data[4:]
    _check_portable_layout(vector, source)
    try:
        bitmap = BitMap64.deserialize(bytes(vector))
    except (ValueError, IndexError) as e:
        raise InvalidMetadataError(f"{source}: Roaring bitmap check failed: {e}") from None
    if expected_cardinality is not None and len(bitmap) != expected_cardinality:
        raise InvalidMetadataError(
            f"{source}: cardinality check failed: vector holds {len(bitmap)} positions, expected {expected_cardinality}"
        )
    return bitmap


def read_deletion_vector(
    file_bytes_or_fs_reader: PuffinSource,
    offset: int,
    length: int,
    *,
    record_count: int | None = None,
    source: str | None = None,
) -> BitMap64:
    """The positions of the DV at ``content_offset``/``content_size_in_bytes`` of a Puffin file,
    checked against the DV's ``record_count`` when given."""
    r = _Reader(file_bytes_or_fs_reader, source)
    return deserialize_deletion_vector(
        r.read(offset, length), expected_cardinality=record_count, source=f"{r.name}: DV at offset {offset}"
    )


# The Roaring format spec's cookies ("RoaringFormatSpec", "General layout").
_SERIAL_COOKIE_NO_RUNCONTAINER = 12346
_SERIAL_COOKIE = 12347
_NO_OFFSET_THRESHOLD = 4
_ARRAY_MAX_CARDINALITY = 4096
_BITSET_CONTAINER_BYTES = 8192


def _check_portable_layout(vector: memoryview, source: str) -> None:
    """The 64-bit portable envelope: an 8-byte LE count, then per bitmap a 4-byte LE key (unsigned,
    ascending, most significant bit 0) and a 32-bit portable bitmap, and nothing after the last."""
    def fail(why: str) -> InvalidMetadataError:
        return InvalidMetadataError(f"{source}: Roaring layout check failed: {why}")

    if len(vector) < 8:
        raise fail("no 8-byte bitmap count")
    (count,) = struct.unpack_from("<Q", vector, 0)
    if count > (len(vector) - 8) // 12:  # a key and the smallest bitmap take 12 bytes
        raise fail(f"bitmap count {count} does not fit in {len(vector)} bytes")
    pos, last_key = 8, -1
    for _ in range(count):
        if pos + 4 > len(vector):
            raise fail(f"truncated at offset {pos}")
        (key,) = struct.unpack_from("<I", vector, pos)
        if key <= last_key:
            raise fail(f"key {key} is not above the previous key {last_key}")
        if key >> 31:
            raise fail(f"key {key} sets the most significant bit of a position")
        pos = _portable_bitmap_end(vector, pos + 4, fail)
        last_key = key
    if pos != len(vector):
        raise fail(f"{len(vector) - pos} bytes after the last bitmap")


def _portable_bitmap_end(buf: memoryview, start: int, fail: Any) -> int:
    """Where the 32-bit portable bitmap starting at ``start`` ends (header walk only)."""
    def u16(at: int) -> int:
        if at + 2 > len(buf):
            raise fail(f"truncated 32-bit bitmap at offset {start}")
        return int.from_bytes(buf[at:at + 2], "little")

    cookie = u16(start) | u16(start + 2) << 16
    if cookie & 0xFFFF == _SERIAL_COOKIE:
        n = (cookie >> 16) + 1
        pos = start + 4 + (n + 7) // 8
        if pos > len(buf):
            raise fail(f"truncated 32-bit bitmap at offset {start}")
        run_flags = bytes(buf[start + 4:pos])
        has_offsets = n >= _NO_OFFSET_THRESHOLD
    elif cookie == _SERIAL_COOKIE_NO_RUNCONTAINER:
        n = u16(start + 4) | u16(start + 6) << 16
        run_flags, pos, has_offsets = b"", start + 8, True
    else:
        raise fail(f"unknown 32-bit bitmap cookie {cookie} at offset {start}")
    if n > 1 << 16:
        raise fail(f"{n} containers in one 32-bit bitmap")
    header = pos
    pos += 4 * n + (4 * n if has_offsets else 0)
    for i in range(n):
        if run_flags and run_flags[i // 8] >> (i % 8) & 1:
            pos += 2 + 4 * u16(pos)
        else:
            cardinality = u16(header + 4 * i + 2) + 1
            pos += 2 * cardinality if cardinality <= _ARRAY_MAX_CARDINALITY else _BITSET_CONTAINER_BYTES
    if pos > len(buf):
        raise fail(f"truncated 32-bit bitmap at offset {start}")
    return pos
