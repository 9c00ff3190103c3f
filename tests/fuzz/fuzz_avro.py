"""An Avro object container file taken apart and put back together, byte for byte, for the
fuzzer: the header's metadata map, the sync marker and each block's record count and
(decompressed) bytes can be changed one at a time, so a mutant breaks exactly one thing.

Written from the Avro spec ("Object Container Files", "Binary Encoding"), independently of
icectl's decoder, so that the fuzzer does not share its bugs. Longs are zigzag varints of any
size here: a count of 2**70 is encodable (11 bytes), as a corrupt file may hold it.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field

MAGIC = b"Obj\x01"


def zigzag(n: int) -> int:
    return (n << 1) if n >= 0 else ((-n) << 1) - 1


def encode_long(n: int) -> bytes:
    """The zigzag varint of ``n``, whatever its size."""
    z = zigzag(n)
    out = bytearray()
    while True:
        b = z & 0x7F
        z >>= 7
        if z:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def decode_long(b: bytes, p: int) -> tuple[int, int]:
    z = 0
    shift = 0
    while True:
        c = b[p]
        p += 1
        z |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return (z >> 1) ^ -(z & 1), p


def encode_bytes(b: bytes) -> bytes:
    return encode_long(len(b)) + b


@dataclass
class Block:
    count: int
    data: bytes  # decompressed
    count_bytes: bytes | None = None  # raw encoding of the count, when a mutant overrides it
    size_bytes: bytes | None = None  # raw encoding of the size, when a mutant overrides it


@dataclass
class Container:
    metadata: dict[str, bytes]
    sync: bytes
    blocks: list[Block] = field(default_factory=list)

    @property
    def codec(self) -> str:
        return self.metadata.get("avro.codec", b"null").decode()

    def to_bytes(self, *, codec: str | None = None) -> bytes:
        """The file again; blocks compressed with ``codec`` (default: the header's)."""
        codec = codec or self.codec
        out = bytearray(MAGIC)
        if self.metadata:
            out += encode_long(len(self.metadata))
            for k, v in self.metadata.items():
                out += encode_bytes(k.encode()) + encode_bytes(v)
        out += encode_long(0)
        out += self.sync
        for b in self.blocks:
            raw = compress(b.data, codec)
            out += b.count_bytes if b.count_bytes is not None else encode_long(b.count)
            out += b.size_bytes if b.size_bytes is not None else encode_long(len(raw))
            out += raw
            out += self.sync
        return bytes(out)


def compress(data: bytes, codec: str) -> bytes:
    if codec == "null":
        return data
    if codec == "deflate":
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        return c.compress(data) + c.flush()
    # Any other codec name (a mutant's "zz"): the bytes as they are.
    return data


def decompress(data: bytes, codec: str) -> bytes:
    if codec == "null":
        return data
    if codec == "deflate":
        return zlib.decompress(data, -15)
    raise ValueError(f"codec {codec!r} is not used by icectl's writer")


def parse(data: bytes) -> Container:
    """A well-formed container (the base tables' files); ValueError otherwise."""
    if data[:4] != MAGIC:
        raise ValueError("not an Avro container")
    p = 4
    meta: dict[str, bytes] = {}
    while True:
        n, p = decode_long(data, p)
        if n == 0:
            break
        if n < 0:
            n = -n
            _, p = decode_long(data, p)
        for _ in range(n):
            kl, p = decode_long(data, p)
            k = data[p:p + kl].decode()
            p += kl
            vl, p = decode_long(data, p)
            meta[k] = data[p:p + vl]
            p += vl
    sync = data[p:p + 16]
    p += 16
    c = Container(meta, sync)
    while p < len(data):
        count, p = decode_long(data, p)
        size, p = decode_long(data, p)
        c.blocks.append(Block(count, decompress(data[p:p + size], c.codec)))
        p += size
        if data[p:p + 16] != sync:
            raise ValueError("no sync marker after a block")
        p += 16
    return c


def string_spans(block: bytes, text: bytes) -> list[tuple[int, int, int]]:
    """Where the Avro string ``text`` is encoded in ``block``: (start of its length varint, start
    of its bytes, end), for every occurrence preceded by its own length."""
    prefix = encode_long(len(text))
    out = []
    start = 0
    while True:
        i = block.find(prefix + text, start)
        if i < 0:
            return out
        out.append((i, i + len(prefix), i + len(prefix) + len(text)))
        start = i + 1
