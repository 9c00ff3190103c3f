"""The one Avro read entry point (icectl.formats.avro): polars first, the lean decoder when polars
cannot read a file, every failure an InvalidMetadataError naming the file, never a panic."""
from __future__ import annotations

import io

import fastavro
import pytest

from icectl.errors import InvalidMetadataError
from icectl.formats import avro
from icectl.formats.avro import open_avro, polars_supports, read_frame, read_records

WITH_MAP = {"type": "record", "name": "r", "fields": [{"name": "m", "type": {"type": "map", "values": "long"}}]}
UNION = {"type": "record", "name": "r", "fields": [{"name": "u", "type": ["null", "long", "string"]}]}
PLAIN = {"type": "record", "name": "r", "fields": [
    {"name": "a", "type": ["null", "long"]}, {"name": "b", "type": {"type": "array", "items": "int"}},
    {"name": "c", "type": {"type": "record", "name": "c", "fields": [{"name": "x", "type": "string"}]}}]}


def _avro(schema, records, codec="null") -> bytes:
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), records, codec=codec)
    return buf.getvalue()


def test_avro_schemas_polars_cannot_read_fall_back_without_a_panic(capfd):
    """polars panics on Avro maps and refuses unions of two types: such files are never given to
    it, and the lean decoder reads them."""
    assert not polars_supports(WITH_MAP) and not polars_supports(UNION) and polars_supports(PLAIN)
    for schema, rec in ((WITH_MAP, {"m": {"k": 1}}), (UNION, {"u": "s"})):
        f = open_avro(_avro(schema, [rec]), source="f.avro")
        assert read_frame(f) is None
        assert read_records(f) == [rec]
    assert "panicked" not in capfd.readouterr().err


def test_polars_reads_what_the_lean_decoder_reads(monkeypatch):
    records = [{"a": i if i % 3 else None, "b": list(range(i % 4)), "c": {"x": f"s{i}"}} for i in range(500)]
    data = _avro(PLAIN, records, codec="deflate")
    f = open_avro(data, source="f.avro")
    assert read_frame(f) is not None and len(read_frame(f)) == 500
    assert read_records(f) == records
    monkeypatch.setenv(avro.READER_ENV, "lean")
    assert read_frame(f) is None
    assert read_records(f) == records


def test_a_polars_failure_falls_back_to_the_lean_decoder(monkeypatch):
    """Whatever polars raises, a Rust panic included, the lean decoder reads the file."""
    import polars as pl
    from polars.exceptions import PanicException

    records = [{"a": 1, "b": [2], "c": {"x": "y"}}]
    f = open_avro(_avro(PLAIN, records), source="f.avro")
    for exc in (PanicException("boom"), RuntimeError("boom")):
        def fail(*a, exc=exc, **k):
            raise exc
        monkeypatch.setattr(pl, "read_avro", fail)
        assert read_frame(f) is None
        assert read_records(f) == records


@pytest.mark.parametrize("cut", ["garbage", "header", "block"])
def test_what_neither_decoder_reads_is_an_invalid_metadata_error_naming_the_file(cut):
    data = _avro(PLAIN, [{"a": i, "b": [i], "c": {"x": "y" * 50}} for i in range(100)])
    bad = {"garbage": b"not avro at all", "header": data[:20], "block": data[:-40]}[cut]
    with pytest.raises(InvalidMetadataError, match=r"^bad\.avro: "):
        read_records(open_avro(bad, source="bad.avro"))
