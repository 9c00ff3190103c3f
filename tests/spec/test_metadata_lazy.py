"""A big metadata file parses lean (issue 26 item 2): msgspec decodes it, the standard library
decides whatever msgspec refuses, and snapshots / the snapshot log stay parsed JSON until read,
while a bad snapshot anywhere still fails the load with the message it always had."""
from __future__ import annotations

import copy
import json
import pickle
from concurrent.futures import ThreadPoolExecutor

import pytest

from icectl.errors import InvalidMetadataError
from icectl.spec.metadata import LazyTuple, Snapshot, parse_json, parse_table_metadata, snapshot_from_json


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
