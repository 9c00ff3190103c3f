"""A metadata file's snapshots decoded in one typed msgspec call each, and, within
``every_snapshot_read``, built by the load's own check (issue 26 item 4: ``snapshots`` parses each
snapshot once). Whatever JSON a snapshot or snapshot-log entry holds, the three ways to load it (the
load's check keeping bytes, the load building each snapshot, and a caller's dict read by
``snapshot_from_json``: the rules from before) give the same metadata, or the same error."""
from __future__ import annotations

import copy
import json

import msgspec
import pytest

from icectl.errors import InvalidMetadataError
from icectl.spec.metadata import LazyTuple, every_snapshot_read, parse_table_metadata

LONG = 2 ** 63
INT = 2 ** 31


def _doc(n: int = 30) -> dict:
    snaps = [{"snapshot-id": 10 + i, "timestamp-ms": 1000 + i, "sequence-number": i + 1,
              "summary": {"operation": "append", "added-data-files": str(i), "added-records": "7"},
              "manifest-list": f"s3://b/t/snap-{i}.avro", "schema-id": 0,
              **({"parent-snapshot-id": 9 + i} if i else {})} for i in range(n)]
    return {"format-version": 3, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1", "location": "s3://b/t",
            "last-sequence-number": n, "last-updated-ms": 5000, "last-column-id": 1, "current-schema-id": 0,
            "schemas": [{"type": "struct", "schema-id": 0, "fields": [
                {"id": 1, "name": "a", "required": False, "type": "long"}]}],
            "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}], "last-partition-id": 999,
            "default-sort-order-id": 0, "sort-orders": [{"order-id": 0, "fields": []}], "properties": {},
            "current-snapshot-id": 9 + n, "next-row-id": 0, "snapshots": snaps,
            "snapshot-log": [{"timestamp-ms": s["timestamp-ms"], "snapshot-id": s["snapshot-id"]} for s in snaps],
            "metadata-log": []}


def _loads(text: str) -> dict[str, object]:
    """The three loads of ``text``: the file's bytes (snapshots kept as bytes until read), the same
    within every_snapshot_read, and json's dict (each snapshot read by snapshot_from_json at once):
    each a repr of its metadata and its bytes written back, or the error's message."""
    out: dict[str, object] = {}
    data = text.encode("utf-8", "surrogatepass")

    def load(what):
        try:
            md = what()
        except InvalidMetadataError as e:
            return ("error", e.message)
        snaps = tuple(md.snapshots)
        return (repr(snaps), repr(tuple(md.snapshot_log)), md.to_bytes(),
                [md.snapshot_values(a) for a in ("snapshot_id", "parent_snapshot_id", "sequence_number",
                                                 "timestamp_ms")])

    out["lazy"] = load(lambda: parse_table_metadata(data, source="m.json"))
    with every_snapshot_read():
        out["built"] = load(lambda: parse_table_metadata(data, source="m.json"))
    try:
        obj = json.loads(data)
    except ValueError as e:
        out["dict"] = ("error", f"m.json: malformed JSON: {e}")
    else:
        out["dict"] = load(lambda: parse_table_metadata(obj, source="m.json"))
    return out


# A snapshot as writers leave it, and as a corrupt file may hold it: each a JSON text for
# snapshot 5 (``{}`` is replaced by the usual object's members).
SNAPSHOT_TEXTS = [
    '{"snapshot-id": 15, "timestamp-ms": 1005, "summary": {"operation": "append"}}',  # no sequence number
    '{"snapshot-id": 15, "timestamp-ms": 1005, "sequence-number": 6, "parent-snapshot-id": null}',
    '{"snapshot-id": 15, "timestamp-ms": 1005, "summary": null, "manifest-list": null, "schema-id": null}',
    '{"snapshot-id": 15, "timestamp-ms": 1005, "summary": {}}',
    '{"snapshot-id": 15, "timestamp-ms": 1005, "summary": ""}',
    '{"snapshot-id": 15, "timestamp-ms": 1005, "summary": 0}',
    '{"snapshot-id": 15, "timestamp-ms": 1005, "summary": []}',
    '{"snapshot-id": 15, "timestamp-ms": 1005, "summary": false}',
    '{"snapshot-id": 15, "timestamp-ms": 1005, "summary": "append"}',
    '{"snapshot-id": 15, "timestamp-ms": 1005, "summary": {"operation": "append", "added-records": 7, "f": true}}',
    '{"snapshot-id": 15, "timestamp-ms": 1005, "summary": {"big": 1e400}}',
    '{"snapshot-id": 15, "timestamp-ms": 1005, "summary": {"n": null, "x": [1, {"y": 2.5}]}}',
    '{"snapshot-id": 15, "timestamp-ms": 1005, "summary": {"s": "caf\\u00e9 \\"q\\" \\\\ \\n"}}',
    '{"snapshot-id": 15, "timestamp-ms": 1005, "summary": {"s": "\\ud800"}}',  # a lone surrogate
    '{"snapshot-id": 15, "timestamp-ms": 1005, "summary": {"a": "1", "a": "2", "b": "3"}}',
    '{"snapshot-id": 15, "timestamp-ms": 1005, "summary": {"operation": "append"}, "summary": null}',
    '{"snapshot-id": "15", "timestamp-ms": 1005, "snapshot-id": 15}',  # repeated: the last counts
    '{"snapshot-id": 15, "timestamp-ms": 1005, "snapshot-id": "15"}',
    '{"snapshot-id": 15.0, "timestamp-ms": 1005}',
    '{"snapshot-id": true, "timestamp-ms": 1005}',
    '{"snapshot-id": 15, "timestamp-ms": 1005, "parent-snapshot-id": false}',
    '{"snapshot-id": 15, "timestamp-ms": 1005, "sequence-number": null}',
    '{"timestamp-ms": 1005}',
    '{"snapshot-id": 15}',
    f'{{"snapshot-id": {LONG - 1}, "timestamp-ms": {-LONG}, "parent-snapshot-id": {-LONG}}}',
    f'{{"snapshot-id": {LONG}, "timestamp-ms": 1005}}',
    f'{{"snapshot-id": 15, "timestamp-ms": 1005, "first-row-id": {-LONG - 1}}}',
    f'{{"snapshot-id": 15, "timestamp-ms": 1005, "schema-id": {INT - 1}, "first-row-id": 0, "added-rows": 5}}',
    f'{{"snapshot-id": 15, "timestamp-ms": 1005, "schema-id": {INT}}}',
    f'{{"snapshot-id": 15, "timestamp-ms": 1005, "schema-id": {-INT - 1}}}',
    '{"snapshot-id": 15, "timestamp-ms": 1005, "added-rows": "5"}',
    '{"snapshot-id": 15, "timestamp-ms": 1005, "manifest-list": 7}',
    '{"snapshot-id": 15, "timestamp-ms": 1005, "manifest-list": {"path": "x"}}',
    '{"snapshot-id": 15, "timestamp-ms": 1005, "key-id": "k1"}',
    '{"snapshot-id": 15, "timestamp-ms": 1005, "key-id": 3}',
    '{"snapshot-id": 15, "timestamp-ms": 1005, "manifests": ["m1.avro", "m2.avro"]}',
    '{"snapshot-id": 15, "timestamp-ms": 1005, "x-writer": {"name": "w", "n": [1, 2.5, null]}}',
    '{"snapshot-id": 15, "timestamp-ms": 1005, "x-big": 123456789012345678901234567890}',
    '{"snapshot-id": 15, "timestamp-ms": 1005, "x-inf": -1e400}',
    '[15, 1005]',
    'null',
]


def _assert_loads_agree(key: str, element: str) -> None:
    """The sixth element of ``key``'s list replaced by the JSON text ``element``: the three loads agree."""
    doc = _doc()
    text = json.dumps(doc).replace(json.dumps(doc[key][5]), element)
    assert element in text
    loads = _loads(text)
    assert loads["lazy"] == loads["built"] == loads["dict"], loads


@pytest.mark.parametrize("snapshot", SNAPSHOT_TEXTS)
def test_any_snapshot_loads_as_the_rules_from_before_load_it(snapshot):
    _assert_loads_agree("snapshots", snapshot)


@pytest.mark.parametrize("entry", [
    '{"timestamp-ms": 1005, "snapshot-id": 15, "x-note": "kept by nobody"}',
    '{"timestamp-ms": 1005, "snapshot-id": "15", "snapshot-id": 15}',
    '{"timestamp-ms": 1005, "snapshot-id": 15, "snapshot-id": null}',
    '{"timestamp-ms": 1005.0, "snapshot-id": 15}',
    f'{{"timestamp-ms": {-LONG}, "snapshot-id": {LONG - 1}}}',
    f'{{"timestamp-ms": 1005, "snapshot-id": {LONG}}}',
    '{"timestamp-ms": 1005, "snapshot-id": 15, "x": 1e400}',
    '{"timestamp-ms": 1005}',
    '[1005, 15]',
])
def test_any_snapshot_log_entry_loads_as_before(entry):
    _assert_loads_agree("snapshot-log", entry)


def test_malformed_utf8_in_a_summary_fails_each_load_with_the_whole_parses_message():
    data = json.dumps(_doc()).encode().replace(b'"added-data-files": "7"', b'"added-data-files": "\xff7"')
    messages = []
    for built in (False, True):
        with every_snapshot_read(built), pytest.raises(InvalidMetadataError) as e:
            parse_table_metadata(data, source="m.json")
        messages.append(e.value.message)
    assert messages[0] == messages[1] and messages[0].startswith("m.json: malformed JSON: ")


def test_within_every_snapshot_read_the_load_builds_each_snapshot_and_keeps_no_bytes():
    doc = _doc(200)
    doc["snapshots"][7]["x-writer"] = {"n": [1, None]}  # one built the generic way
    data = json.dumps(doc).encode()
    with every_snapshot_read():
        md = parse_table_metadata(data)
    assert type(md.snapshots) is tuple and len(md.snapshots) == 200
    assert not any(isinstance(v, msgspec.Raw) for v in vars(md).values())
    assert md == parse_table_metadata(copy.deepcopy(doc)) and md.snapshots[7].extra == (("x-writer", {"n": [1, None]}),)
    # outside it (and once it is left), snapshots stay their bytes until read
    assert isinstance(parse_table_metadata(data).snapshots, LazyTuple)
    with every_snapshot_read(False):
        assert isinstance(parse_table_metadata(data).snapshots, LazyTuple)


def test_a_summary_is_kept_as_decoded_not_copied():
    md = parse_table_metadata(json.dumps(_doc(3)).encode())
    s = md.snapshots[1]
    assert s.summary == {"operation": "append", "added-data-files": "1", "added-records": "7"}
    assert s.summary is md.snapshots[1].summary and s.extra == ()


@pytest.mark.parametrize("case", ["chain", "missing-parent", "cycle", "repeated-id", "own-parent"])
def test_ancestor_ids_are_the_ids_of_ancestors_of(case):
    """TableMetadata.ancestor_ids (from the id and parent columns) walks as ancestors_of does:
    newest first, stopping at a missing parent or a snapshot seen before, the last of a repeated id."""
    doc = _doc(8)
    snaps = doc["snapshots"]
    if case == "missing-parent":
        snaps[4]["parent-snapshot-id"] = 999
    elif case == "cycle":
        snaps[0]["parent-snapshot-id"] = 13
    elif case == "repeated-id":
        snaps.append(dict(snaps[5], **{"parent-snapshot-id": 11, "sequence-number": 9}))
    elif case == "own-parent":
        snaps[6]["parent-snapshot-id"] = 16
    data = json.dumps(doc).encode()
    loads = [lambda: parse_table_metadata(data, source="m.json"),
             lambda: parse_table_metadata(json.loads(data), source="m.json")]
    for load in loads:
        for built_first in (False, True):
            md = load()
            if built_first:
                tuple(md.snapshots)
            for start in [*md.snapshot_values("snapshot_id"), None, 999]:
                assert md.ancestor_ids(start) == [s.snapshot_id for s in md.ancestors_of(start)], (case, start)
    with every_snapshot_read():
        md = parse_table_metadata(data, source="m.json")
    assert md.ancestor_ids(17) == [s.snapshot_id for s in md.ancestors_of(17)]
