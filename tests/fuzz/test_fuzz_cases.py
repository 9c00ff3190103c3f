"""The inputs issue 14 names, one test each: every command keeps the fuzzer's rules
(:func:`fuzz_harness.violations`: a documented exit code, never 1, one line on stderr, no
traceback or panic text, no write, no hang) and says what it should."""
from __future__ import annotations

import json
import os

import pytest

import fuzz_avro
import fuzz_harness
import fuzz_mutate


def _mutant(base, kind: str, target: str, data: bytes, detail: str, names: tuple[str, ...] = (),
            json_output: bool = False) -> fuzz_harness.Mutant:
    return fuzz_harness.Mutant(0, base, kind, target, "case", detail, names + (os.path.basename(target),), data,
                               json_output=json_output, all_snapshots=True)


def _run(m: fuzz_harness.Mutant) -> dict[str, fuzz_harness.Outcome]:
    """Every command on the mutant: the outcomes by command; fails on any broken rule."""
    out = {}
    with fuzz_harness.applied(m):
        before = fuzz_harness.tree(m.base.root)
        for c in fuzz_harness.COMMANDS:
            o = fuzz_harness.run_in_process(fuzz_harness.argv_for(m, c), c)
            problems = fuzz_harness.violations(o, json_output=m.json_output, names=m.names)
            assert not problems, f"{m.detail}: {c} -> {o.code}: {problems}\n{o.stderr}"
            out[c] = o
        assert fuzz_harness.tree(m.base.root) == before, "a command wrote or deleted a file"
    return out


def _metadata(base, change, *, text: dict[str, str] | None = None) -> bytes:
    with open(base.metadata, "rb") as f:
        obj = json.load(f)
    change(obj)
    return fuzz_mutate._dump(obj, text)


def _first_snapshot(obj):
    return obj["snapshots"][0]


def _error(o: fuzz_harness.Outcome) -> str:
    return o.stderr.splitlines()[0]


def test_snapshot_summary_nested_1000_levels(fuzz_bases):
    base = fuzz_bases["v2"]
    data = _metadata(base, lambda o: _first_snapshot(o).__setitem__("summary", "__DEEP__"),
                     text={"__DEEP__": fuzz_mutate.deep_json(1000, __import__("random").Random(1))})
    out = _run(_mutant(base, "metadata", base.metadata, data, "summary 1,000 levels deep"))
    assert out["describe"].code == 4 and "nested too deeply" in _error(out["describe"])
    assert out["validate"].code == 8


@pytest.mark.parametrize("value", [2**62, -2**62, 2**63 - 1])
def test_snapshot_timestamp_out_of_datetime_range(fuzz_bases, value):
    """A timestamp-ms a long can hold but Python's datetime cannot: shown, with its year."""
    base = fuzz_bases["v2"]
    data = _metadata(base, lambda o: [s.__setitem__("timestamp-ms", value) for s in o["snapshots"]])
    out = _run(_mutant(base, "metadata", base.metadata, data, f"timestamp-ms {value}"))
    assert out["snapshots"].code == 0
    year = {2**62: "+146140482-", -2**62: "-146136543-", 2**63 - 1: "+292278994-"}[value]
    assert year in out["snapshots"].stdout


@pytest.mark.parametrize("value", ["1180591620717411303424", "1e+308", "1e400"])
def test_last_updated_ms_huge(fuzz_bases, value):
    base = fuzz_bases["v3"]
    data = _metadata(base, lambda o: o.__setitem__("last-updated-ms", "__HUGE__"), text={"__HUGE__": value})
    out = _run(_mutant(base, "metadata", base.metadata, data, f"last-updated-ms {value}"))
    assert out["describe"].code in (0, 4)


@pytest.mark.parametrize("where, value, words", [
    ("snapshot-id", 2**70, "snapshot-id is out of range for a long"),
    ("snapshot-id", 2**63, "snapshot-id is out of range for a long"),
    ("snapshot-id", "12", "snapshot-id must be a long (an integer), not '12'"),
    ("sequence-number", 1.5, "snapshot sequence-number must be a long (an integer), not 1.5"),
    ("schema-id", 2**31, "snapshot schema-id is out of range for an int"),
    ("schema-id", True, "snapshot schema-id must be an int (an integer), not True"),
])
def test_snapshot_number_not_a_long(fuzz_bases, where, value, words):
    """Where the spec wants a long (or an int), only an integer in 64 (32) bits is one, as Java's
    JsonUtil.getLong/getInt require: 2**70 or "12" is invalid metadata naming the field, not a
    number icectl would write back."""
    base = fuzz_bases["v2"]
    data = _metadata(base, lambda o: _first_snapshot(o).__setitem__(where, value))
    out = _run(_mutant(base, "metadata", base.metadata, data, f"{where} {value!r}"))
    assert out["describe"].code == 4 and words in _error(out["describe"]), _error(out["describe"])
    assert out["validate"].code == 8 and where in out["validate"].stdout


@pytest.mark.parametrize("insert, words", [("\x00", "NUL byte"), ("\ud800", "lone surrogate")])
def test_bad_character_in_manifest_list_path(fuzz_bases, insert, words):
    base = fuzz_bases["v1"]

    def change(o):
        for s in o["snapshots"]:
            s["manifest-list"] = s["manifest-list"][:10] + insert + s["manifest-list"][10:]
    data = _metadata(base, change)
    out = _run(_mutant(base, "metadata", base.metadata, data, f"{words} in manifest-list"))
    assert out["files"].code == 4 and words in _error(out["files"])
    assert out["validate"].code == 8


def test_lone_surrogate_in_location(fuzz_bases):
    base = fuzz_bases["v2"]
    data = _metadata(base, lambda o: o.__setitem__("location", o["location"] + "/\udfff"))
    out = _run(_mutant(base, "metadata", base.metadata, data, "lone surrogate in location", json_output=True))
    assert out["describe"].code == 0
    assert json.loads(out["describe"].stdout)["location"].endswith("/\udfff")  # written as its escape


def test_line_break_in_path_stays_one_line(fuzz_bases):
    base = fuzz_bases["v2"]
    data = _metadata(base, lambda o: _first_snapshot(o).__setitem__("manifest-list", "/no/such\nicectl: error: x"))
    m = _mutant(base, "metadata", base.metadata, data, "newline in a manifest-list path")
    m.all_snapshots = True
    out = _run(m)
    assert "no/such\\nicectl" in out["expire"].stderr


@pytest.mark.parametrize("scheme", ["zz://bucket/", "zz:"])
def test_unknown_uri_scheme(fuzz_bases, scheme):
    base = fuzz_bases["demo-v2"]

    def change(o):
        for s in o["snapshots"]:
            s["manifest-list"] = scheme + s["manifest-list"].lstrip("/")
    out = _run(_mutant(base, "metadata", base.metadata, _metadata(base, change), f"{scheme} manifest lists"))
    assert out["files"].code == 7 and "no file system for the URI scheme 'zz'" in _error(out["files"])
    assert out["validate"].code == 8


def _manifest_list(base) -> tuple[str, bytes]:
    path = base.manifest_lists[0]
    with open(path, "rb") as f:
        return path, f.read()


@pytest.mark.parametrize("field, new_type, value", [
    ("manifest_path", "long", 7), ("partitions", "string", "zz"), ("added_snapshot_id", "string", "zz"),
    ("partition_spec_id", {"type": "map", "values": "string"}, {"a": "b"}),
])
def test_wrong_avro_type_in_manifest_list(fuzz_bases, field, new_type, value):
    base = fuzz_bases["v2"]
    path, data = _manifest_list(base)
    schema, meta, records = fuzz_mutate._read_all(data)
    f = next(x for x in schema["fields"] if x["name"] == field)
    f["type"] = ["null", new_type] if isinstance(f["type"], list) else new_type
    f.pop("default", None)
    for r in records:
        r[field] = value
    out = _run(_mutant(base, "manifest-list", path, fuzz_mutate._write_all(schema, meta, records),
                       f"{field} of Avro type {new_type}", (field,), json_output=True))
    for c in ("files", "expire"):
        assert out[c].code == 4, (c, out[c].stderr)
        assert f"field {field}" in json.loads(out[c].stderr)["error"]["message"]
    findings = json.loads(out["validate"].stdout)["findings"]
    assert any(field in f["message"] and f["file"] == path for f in findings), findings


@pytest.mark.parametrize("length", [-5, -1, 2**62, 2**31])
def test_avro_string_length_out_of_range(fuzz_bases, length):
    base = fuzz_bases["v1"]
    path, data = _manifest_list(base)
    c = fuzz_avro.parse(data)
    text = fuzz_mutate._known_strings(data)[0].encode()
    lp, sp, end = fuzz_avro.string_spans(c.blocks[0].data, text)[0]
    c.blocks[0].data = c.blocks[0].data[:lp] + fuzz_avro.encode_long(length) + c.blocks[0].data[sp:]
    out = _run(_mutant(base, "manifest-list", path, c.to_bytes(), f"string length {length}"))
    assert out["files"].code == 4 and os.path.basename(path) in _error(out["files"])
    assert out["validate"].code == 8


@pytest.mark.parametrize("base_name", ["v2", "v3", "demo-v3"])
@pytest.mark.parametrize("count", [2**62, -1, 2**63 - 1, 2**40])
def test_avro_block_count_out_of_range(fuzz_bases, base_name, count):
    """polars panicked (capacity overflow) on these counts, and printed the panic on stderr."""
    base = fuzz_bases[base_name]
    path = base.manifests[0]
    with open(path, "rb") as f:
        c = fuzz_avro.parse(f.read())
    c.blocks[0].count_bytes = fuzz_avro.encode_long(count)
    out = _run(_mutant(base, "manifest", path, c.to_bytes(), f"block record count {count}"))
    for cmd in ("files", "expire"):
        assert out[cmd].code == 4 and os.path.basename(path) in _error(out[cmd]), out[cmd].stderr
    assert out["validate"].code == 8


def test_avro_schema_nested_1000_levels(fuzz_bases):
    base = fuzz_bases["v4"]
    path = base.manifests[0]
    with open(path, "rb") as f:
        c = fuzz_avro.parse(f.read())
    schema = json.loads(c.metadata["avro.schema"])
    schema["fields"][1]["type"] = "__DEEP__"
    c.metadata["avro.schema"] = fuzz_mutate._dump(
        schema, {"__DEEP__": '{"type":"array","items":' * 1000 + '"long"' + "}" * 1000})
    out = _run(_mutant(base, "manifest", path, c.to_bytes(), "writer schema 1,000 levels deep"))
    assert out["files"].code == 4 and "nested too deeply" in _error(out["files"])
    assert out["validate"].code == 8


def test_manifest_header_schema_nested_1000_levels(fuzz_bases):
    base = fuzz_bases["v2"]
    path = base.manifests[0]
    with open(path, "rb") as f:
        c = fuzz_avro.parse(f.read())
    c.metadata["schema"] = ('{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"x","required":false,"type":'
                            * 1000 + '"long"' + "}]}" * 1000).encode()
    _run(_mutant(base, "manifest", path, c.to_bytes(), "header schema 1,000 levels deep"))


def test_required_data_file_field_null(fuzz_bases):
    base = fuzz_bases["v1"]
    path = base.manifests[0]
    with open(path, "rb") as f:
        schema, meta, records = fuzz_mutate._read_all(f.read())
    data_file = next(x for x in schema["fields"] if x["name"] == "data_file")["type"]
    f = next(x for x in data_file["fields"] if x["name"] == "record_count")
    f["type"] = ["null", "long"]
    for r in records:
        r["data_file"]["record_count"] = None
    out = _run(_mutant(base, "manifest", path, fuzz_mutate._write_all(schema, meta, records), "record_count null"))
    assert out["files"].code == 4 and "record_count is null" in _error(out["files"])


@pytest.mark.parametrize("field", ["content", "file_path", "file_size_in_bytes"])
def test_required_data_file_field_null_v2(fuzz_bases, field):
    base = fuzz_bases["v2"]
    path = base.manifests[0]
    with open(path, "rb") as f:
        schema, meta, records = fuzz_mutate._read_all(f.read())
    data_file = next(x for x in schema["fields"] if x["name"] == "data_file")["type"]
    f = next(x for x in data_file["fields"] if x["name"] == field)
    f["type"] = ["null", f["type"]]
    for r in records:
        r["data_file"][field] = None
    _run(_mutant(base, "manifest", path, fuzz_mutate._write_all(schema, meta, records), f"{field} null"))
