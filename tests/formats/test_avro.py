"""The one Avro read entry point (icectl.formats.avro): polars first, the lean decoder when polars
cannot read a file, every failure an InvalidMetadataError naming the file, never a panic; the lean
decoder against fastavro."""
from __future__ import annotations

import io
import pathlib
import sys

import fastavro
import pytest

from icectl.errors import InvalidMetadataError
from icectl.formats import avro
from icectl.formats.avro import field_index, open_avro, polars_supports, read_frame, read_records, record_type

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/ for validate_corpus

from validate_corpus import tables  # noqa: E402

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


@pytest.mark.parametrize("codec", ["null", "deflate"])
@pytest.mark.parametrize("part_bytes", [1, 2500, 1 << 20])
def test_a_file_read_by_parts_gives_what_a_reader_keeps_of_the_whole(codec, part_bytes):
    """read_frame with ``each``: the blocks decoded a run at a time (a run of ``part_bytes`` or a
    block more), each run's frame given to ``each``, the results in order: what ``each`` keeps of
    the whole frame."""
    import polars as pl

    records = [{"a": i if i % 3 else None, "b": list(range(i % 4)), "c": {"x": f"s{i}"}} for i in range(2000)]
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(PLAIN), records, codec=codec, sync_interval=1000)
    f = open_avro(buf.getvalue(), source="f.avro")
    runs = list(f.block_runs(part_bytes))
    assert sum(n for n, _, _ in runs) == 2000 and runs[-1][2] == len(f.data) and runs[0][1] == f.start
    assert all(a[2] == b[1] for a, b in zip(runs, runs[1:]))  # consecutive, whole blocks
    blocks = len(list(f.block_runs(1)))  # a block a run
    assert blocks > 10 and {1: len(runs) == blocks, 2500: 1 < len(runs) < blocks, 1 << 20: len(runs) == 1}[part_bytes]
    seen = []

    def keep(df):
        seen.append(len(df))
        return df.select("a", pl.col("c").struct.field("x"))

    got = read_frame(f, each=keep, part_bytes=part_bytes)
    assert seen == [n for n, _, _ in runs]
    assert got.equals(read_frame(f).select("a", pl.col("c").struct.field("x")))

    def refuse(df):
        raise ValueError("not what this reader reads")

    assert read_frame(f, each=refuse, part_bytes=part_bytes) is None


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


# -- the lean Avro reader -----------------------------------------------------------------------------

def _positional(schema, value):
    """fastavro's decoded value in the lean reader's shape (tuples in writer order, raw logicals)."""
    if isinstance(schema, list):
        if value is None:
            return None
        for branch in schema:
            if branch != "null":
                return _positional(branch, value)
    if isinstance(schema, dict):
        t = schema["type"]
        if t == "record":
            return tuple(_positional(f["type"], value[f["name"]]) for f in schema["fields"])
        if t == "array":
            return [_positional(schema["items"], v) for v in value]
        if t == "map":
            return {k: _positional(schema["values"], v) for k, v in value.items()}
        return _positional(t, value)
    return value


def test_lean_reader_reads_what_fastavro_reads():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    schema = {"type": "record", "name": "r", "fields": [
        {"name": "i", "type": "int"}, {"name": "l", "type": ["null", "long"]}, {"name": "s", "type": "string"},
        {"name": "b", "type": ["bytes", "null"]}, {"name": "f", "type": "float"}, {"name": "d", "type": "double"},
        {"name": "t", "type": "boolean"}, {"name": "x", "type": {"type": "fixed", "name": "f4", "size": 4}},
        {"name": "e", "type": {"type": "enum", "name": "e", "symbols": ["A", "B", "C"]}},
        {"name": "m", "type": {"type": "map", "values": "long"}},
        {"name": "a", "type": ["null", {"type": "array", "items": {"type": "record", "name": "kv", "fields": [
            {"name": "key", "type": "int"}, {"name": "value", "type": "long"}]}}]},
        {"name": "n", "type": {"type": "record", "name": "inner", "fields": [
            {"name": "u", "type": ["null", "string", "long"]}, {"name": "empty", "type": {
                "type": "record", "name": "nothing", "fields": []}}]}},
    ]}
    parsed = fastavro.parse_schema(schema)
    i32 = st.integers(-2**31, 2**31 - 1)
    i64 = st.integers(-2**63, 2**63 - 1)
    record = st.fixed_dictionaries({
        "i": i32, "l": st.none() | i64, "s": st.text(max_size=20), "b": st.none() | st.binary(max_size=20),
        "f": st.floats(width=32, allow_nan=False), "d": st.floats(allow_nan=False), "t": st.booleans(),
        "x": st.binary(min_size=4, max_size=4), "e": st.sampled_from(["A", "B", "C"]),
        "m": st.dictionaries(st.text(max_size=5), i64, max_size=3),
        "a": st.none() | st.lists(st.fixed_dictionaries({"key": i32, "value": i64}), max_size=4),
        "n": st.fixed_dictionaries({"u": st.none() | st.text(max_size=5) | i64, "empty": st.just({})}),
    })

    @settings(max_examples=60, deadline=None)
    @given(st.lists(record, max_size=30), st.sampled_from(["null", "deflate"]))
    def check(records, codec):
        buf = io.BytesIO()
        fastavro.writer(buf, parsed, records, codec=codec, sync_interval=200)
        data = buf.getvalue()
        lean = list(open_avro(data, source="t").records())
        assert lean == [_positional(schema, r) for r in records]
        assert list(open_avro(data, source="t").records(dicts=True)) == records  # fastavro's shape
        skipped = list(open_avro(data, source="t").records(frozenset({"a", "m"})))
        assert [r[:9] for r in skipped] == [r[:9] for r in lean]
        assert all(r[9] is None and r[10] is None for r in skipped)

    check()


@pytest.mark.parametrize("fv", [1, 2, 3, 4])
def test_lean_reader_reads_icectl_manifests_as_fastavro(fv, tmp_path):
    base = tables.build(tmp_path, fv)
    t = base.table
    for m in t.manifests(t.metadata.current_snapshot):
        data = open(m.manifest_path, "rb").read()
        expected = [_positional(fastavro.reader(io.BytesIO(data)).writer_schema, r)
                    for r in fastavro.reader(io.BytesIO(data), return_record_name=False)]
        f = open_avro(data, source=m.manifest_path)
        assert f.metadata["format-version"] == str(fv)
        got = list(f.records())
        assert len(got) == len(expected)
        top = f.schema
        i_status, i_df = field_index(top, "status"), field_index(top, "data_file")
        df_schema = record_type(top["fields"][i_df]["type"])
        names = ("file_path", "record_count", "file_size_in_bytes", "referenced_data_file", "content_offset")
        for a, b in zip(got, expected):
            assert a[i_status] == b[i_status]
            for name in names:
                i = field_index(df_schema, name)
                if i is not None:
                    assert a[i_df][i] == b[i_df][i], name
