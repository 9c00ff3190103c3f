"""A big metadata file parses lean (issue 26 items 2 and 4): msgspec splits it at its top level,
the standard library decides whatever msgspec refuses, and snapshots stay their bytes (the
snapshot log its numbers) until read, while a bad snapshot anywhere still fails the load with the
message it always had."""
from __future__ import annotations

import copy
import json
import pickle
import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import pytest

from icectl.errors import InvalidMetadataError
from icectl.spec.metadata import (
    LazyTuple,
    Snapshot,
    parse_json,
    parse_table_metadata,
    snapshot_from_json,
    split_metadata,
    top_level_keys,
)
from icectl.spec.view import is_view_metadata_json


def _doc(n: int) -> dict:
    snaps = [{"snapshot-id": 10 + i, "timestamp-ms": 1000 + i, "sequence-number": i + 1,
              "summary": {"operation": "append", "added-data-files": i}, "manifest-list": f"s3://b/t/snap-{i}.avro",
              "schema-id": 0, **({"parent-snapshot-id": 9 + i} if i else {})} for i in range(n)]
    return {"format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1", "location": "s3://b/t",
            "last-sequence-number": n, "last-updated-ms": 5000, "last-column-id": 1, "current-schema-id": 0,
            "schemas": [{"type": "struct", "schema-id": 0, "fields": [
                {"id": 1, "name": "a", "required": False, "type": "long"}]}],
            "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}], "last-partition-id": 999,
            "default-sort-order-id": 0, "sort-orders": [{"order-id": 0, "fields": []}], "properties": {},
            "current-snapshot-id": 9 + n, "snapshots": snaps,
            "snapshot-log": [{"timestamp-ms": s["timestamp-ms"], "snapshot-id": s["snapshot-id"]} for s in snaps],
            "metadata-log": []}


@pytest.mark.parametrize("text", [
    '{"a": 1, "a": 2}', "123456789012345678901234567890", "[1e400]", "[NaN, Infinity, -Infinity]",
    '"\\ud800"', '{"k": "\\u00e9\\n"}', "  [1.5, -0, 2E3, true, null]  ", '{"é": 1}'])
def test_parse_json_gives_what_the_standard_library_gives(text):
    for data in (text, text.encode()):
        got, want = parse_json(data, source="m.json"), json.loads(data)
        assert repr(got) == repr(want)  # repr: nan != nan, and 1 == 1.0 would hide a float


def test_a_byte_order_mark_is_read_as_the_standard_library_reads_it():
    assert parse_json(b"\xef\xbb\xbf{}", source="m.json") == json.loads(b"\xef\xbb\xbf{}") == {}


@pytest.mark.parametrize("data", ["", "{", '{"a": 1}x', "\ufeff{}", b'"\xff"', "[" * 100_000, b"\xff\xfe"])
def test_malformed_json_gives_the_standard_librarys_error(data):
    with pytest.raises(InvalidMetadataError) as e:
        parse_json(data, source="m.json")
    try:
        json.loads(data)
    except RecursionError:
        want = "m.json: malformed JSON: nested too deeply"
    except (ValueError, UnicodeDecodeError) as err:
        want = f"m.json: malformed JSON: {err}"
    assert e.value.message == want


def test_snapshots_are_built_when_read():
    md = parse_table_metadata(json.dumps(_doc(1000)))
    assert isinstance(md.snapshots, LazyTuple) and isinstance(md.snapshot_log, LazyTuple)
    assert len(md.snapshots) == 1000 and md.snapshot_log[-1].snapshot_id == 1009
    # the same objects an eager parse builds, each built once
    eager = tuple(snapshot_from_json(s) for s in _doc(1000)["snapshots"])
    assert md.snapshots == eager and eager == md.snapshots
    assert md.snapshots[500] is md.snapshots[500] and md.current_snapshot is md.snapshots[-1]
    assert md.snapshot_by_id(510) == eager[500] and md.snapshot_by_id(5) is None
    assert [s.snapshot_id for s in md.ancestors_of(12)] == [12, 11, 10]
    assert md.snapshots[1:3] == eager[1:3] and md.snapshots + () == eager and () + md.snapshots == eager
    assert pickle.loads(pickle.dumps(md)) == md
    assert parse_table_metadata(json.dumps(md.to_json())) == md


def test_only_the_read_snapshots_are_built():
    built = []
    raw = _doc(100)["snapshots"]
    lazy = LazyTuple(raw, lambda o: built.append(o["snapshot-id"]) or snapshot_from_json(o))
    assert isinstance(lazy[7], Snapshot) and lazy[-1].snapshot_id == 109 and lazy[7] is lazy[7]
    assert built == [17, 109]
    assert lazy.field_values("snapshot-id", "snapshot_id") == list(range(10, 110)) and built == [17, 109]


@pytest.mark.parametrize("mutate", [
    lambda s: s.pop("timestamp-ms"),
    lambda s: s.pop("snapshot-id"),
    lambda s: s.update({"snapshot-id": "10"}),
    lambda s: s.update({"snapshot-id": 2 ** 70}),
    lambda s: s.update({"timestamp-ms": 1.5}),
    lambda s: s.update({"parent-snapshot-id": True}),
    lambda s: s.update({"sequence-number": None}),
    lambda s: s.update({"schema-id": 2 ** 40}),
    lambda s: s.update({"first-row-id": "x"}),
    lambda s: s.update({"added-rows": -2 ** 64}),
    lambda s: s.update({"summary": "append"}),
    lambda s: s.update({"manifests": 3}),
])
def test_a_bad_snapshot_anywhere_fails_the_load_as_before(mutate):
    doc = _doc(300)
    bad = copy.deepcopy(doc["snapshots"][200])
    mutate(bad)
    doc["snapshots"][200] = bad
    try:
        snapshot_from_json(bad)
    except InvalidMetadataError as err:
        want = f"m.json: {err.message}"
    except (TypeError, ValueError) as err:
        want = f"m.json: invalid table metadata: {err}"
    with pytest.raises(InvalidMetadataError) as e:
        parse_table_metadata(json.dumps(doc), source="m.json")
    assert e.value.message == want


@pytest.mark.parametrize("entry,want", [
    ({"timestamp-ms": 1}, "m.json: invalid table metadata: missing field 'snapshot-id'"),
    ({"timestamp-ms": 1, "snapshot-id": "2"}, "m.json: snapshot-log snapshot-id must be a long (an integer), not '2'"),
    ([1, 2], "m.json: invalid table metadata: list indices must be integers or slices, not str"),
])
def test_a_bad_snapshot_log_entry_fails_the_load_as_before(entry, want):
    doc = _doc(50)
    doc["snapshot-log"][30] = entry
    with pytest.raises(InvalidMetadataError) as e:
        parse_table_metadata(json.dumps(doc), source="m.json")
    assert e.value.message == want


def test_threads_reading_the_same_snapshots_all_get_them():
    # rewrite-table-path and the listings read snapshots from worker threads: one thread's build
    # lets the JSON object go while another may be about to build the same item
    md = parse_table_metadata(json.dumps(_doc(3000)))
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda k: [s.snapshot_id for s in md.snapshots][k % 7:] + [md.snapshots[-k].snapshot_id],
                                range(1, 41)))
    assert all(r[:-1] == list(range(10 + k % 7, 3010)) for k, r in zip(range(1, 41), results))
    assert md.snapshots == tuple(snapshot_from_json(s) for s in _doc(3000)["snapshots"])


def test_a_callers_dict_is_read_at_once_and_left_as_it_was():
    # rewrite-table-path parses a dict it then changes: the metadata must not follow the change,
    # nor change the dict
    doc = _doc(20)
    md = parse_table_metadata(doc)
    assert isinstance(md.snapshots, tuple)
    doc["snapshots"][3]["manifest-list"] = "s3://elsewhere/x.avro"
    doc["snapshots"][3]["summary"]["operation"] = "overwrite"
    assert md.snapshots[3].manifest_list == "s3://b/t/snap-3.avro" and md.snapshots[3].operation == "append"
    lazy = parse_table_metadata(json.dumps(_doc(20)))
    assert all(isinstance(s, dict) for s in doc["snapshots"]) and lazy.snapshots == md.snapshots


def test_an_item_built_by_another_reader_meanwhile_is_that_item():
    # the interleaving of two threads made deterministic: between a reader seeing item 5 unbuilt
    # and reading its JSON object, another reader builds it (and lets the JSON object go)
    class Raw(list):
        armed = True

        def __getitem__(self, i):
            if i == 5 and Raw.armed:
                Raw.armed = False
                other = lazy[5]  # the other reader, complete
                assert other.snapshot_id == 15
            return super().__getitem__(i)

    lazy = LazyTuple(Raw(_doc(10)["snapshots"]), snapshot_from_json)
    assert lazy[5].snapshot_id == 15 and [s.snapshot_id for s in lazy] == list(range(10, 20))


# -- the file split at its top level: snapshots kept as their bytes (issue 26 items 2 and 4) ------

def _odd_doc() -> dict:
    """Snapshots as writers leave them: unknown keys, a summary with numbers, no sequence number,
    a null parent, v3 fields, and a log entry with a key icectl does not keep."""
    doc = _doc(40)
    doc["format-version"] = 3
    doc["next-row-id"] = 0
    doc["snapshots"][3]["x-writer"] = {"name": "w", "n": [1, 2.5, None]}
    doc["snapshots"][4]["summary"] = {"operation": "append", "added-records": 7, "flag": True}
    del doc["snapshots"][5]["sequence-number"]
    doc["snapshots"][6]["parent-snapshot-id"] = None
    doc["snapshots"][7].update({"first-row-id": 0, "added-rows": 5, "key-id": "k1"})
    doc["snapshots"][8]["summary"] = {}
    doc["snapshot-log"][2]["x-note"] = "kept by nobody"
    doc["x-table"] = [1, {"a": "é"}]
    return doc


def test_a_split_file_gives_the_metadata_a_whole_parse_gives():
    doc = _odd_doc()
    data = json.dumps(doc).encode()
    assert split_metadata(data) is not None
    lean, eager = parse_table_metadata(data), parse_table_metadata(copy.deepcopy(doc))
    assert isinstance(lean.snapshots, LazyTuple) and isinstance(lean.snapshot_log, LazyTuple)
    assert lean == eager and lean.snapshots[3].extra == (("x-writer", {"name": "w", "n": [1, 2.5, None]}),)
    assert lean.snapshots[4].summary == {"operation": "append", "added-records": "7", "flag": "True"}
    # written byte for byte as before, unknown keys kept
    assert lean.to_bytes() == eager.to_bytes()
    for attr in ("snapshot_id", "parent_snapshot_id", "sequence_number", "timestamp_ms"):
        assert lean.snapshot_values(attr) == eager.snapshot_values(attr) == [getattr(s, attr) for s in eager.snapshots]


def test_each_snapshot_builds_without_keeping():
    built = []
    raw = _doc(30)["snapshots"]
    lazy = LazyTuple(raw, lambda o: built.append(o["snapshot-id"]) or snapshot_from_json(o))
    kept = lazy[4]
    assert [s.snapshot_id for s in lazy.each()] == list(range(10, 40))
    assert [s.snapshot_id for s in lazy.each()] == list(range(10, 40))
    assert built == [14] + [i for i in range(10, 40) if i != 14] * 2  # item 4 built once, kept
    n = len(built)
    first = lazy[5]  # not kept by the passes: built now, then kept
    assert lazy[4] is kept and len(built) == n + 1 and lazy[5] is first and len(built) == n + 1
    md = parse_table_metadata(json.dumps(_doc(30)))
    assert list(md.each_snapshot()) == list(md.snapshots) and list(md.each_snapshot_log_entry()) == list(md.snapshot_log)


@pytest.mark.parametrize("change", [
    lambda d: d["snapshots"][3]["summary"].update({"big": 1e400}),  # msgspec refuses, json reads inf
    lambda d: d["snapshots"][3]["summary"].update({"s": "\ud800"}),  # a lone surrogate
    lambda d: d["snapshots"][3].update({"manifests": ["m1.avro"]}),  # v1 inline manifests: built now
    lambda d: d["snapshots"][3].update({"summary": ""}),
    lambda d: d.update({"snapshots": None, "snapshot-log": None}),
    lambda d: d.update({"properties": {"n": 1e400}}),
])
def test_a_file_the_split_does_not_take_parses_as_before(change):
    doc = _doc(20)
    change(doc)
    text = json.dumps(doc)
    assert parse_table_metadata(text) == parse_table_metadata(json.loads(text))
    assert parse_table_metadata(text.encode("utf-8", "surrogatepass")).to_bytes() == \
        parse_table_metadata(json.loads(text)).to_bytes()


@pytest.mark.parametrize("data", [
    # invalid UTF-8 inside a summary: msgspec's split skips it, the check's parse of the item does not
    json.dumps(_doc(20)).encode().replace(b'"append", "added-data-files": 7', b'"app\xffend", "added-data-files": 7'),
    json.dumps(_doc(20)).encode().replace(b'"s3://b/t/snap-7.avro"', b'"s3://b/t/snap-7.avro" ]'),
])
def test_a_malformed_file_fails_with_the_whole_parses_message(data):
    with pytest.raises(InvalidMetadataError) as e:
        parse_table_metadata(data, source="m.json")
    with pytest.raises(InvalidMetadataError) as want:
        parse_json(data, source="m.json")
    assert e.value.message == want.value.message


def test_the_split_keeps_no_parsed_object_per_snapshot():
    # 20,000 snapshots with Java-style summaries: a parsed JSON object each costs more than the
    # file's bytes; kept as their bytes (the file's, held by the caller) a small part of them
    doc = _doc(20_000)
    for i, s in enumerate(doc["snapshots"]):
        s["summary"].update({f"total-{k}": str(i * 7919 + k) for k in range(12)})
    data = json.dumps(doc).encode()
    tracemalloc.start()
    try:
        md = parse_table_metadata(data)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(md.snapshots) == 20_000 and md.snapshots[-1].snapshot_id == 20_009
    assert held < len(data) // 2, (held, len(data))


def test_a_view_is_told_by_its_top_level_keys():
    assert top_level_keys(b'{"b": [1, {"c": 2}], "a": "x"}') == ["b", "a"]
    assert top_level_keys(b"[1]") is None and top_level_keys(b'{"a": NaN}') is None
    assert not is_view_metadata_json(json.dumps(_doc(3)).encode())
    assert is_view_metadata_json(b'{"view-uuid": "u", "x": NaN}')  # the standard library decides
    assert not is_view_metadata_json(b'{"view-uuid": "u", "x": \xff}') and not is_view_metadata_json(b"[")
