"""Table metadata JSON round trips for format versions 1-4 (spec: "Table Metadata",
Appendix C "JSON serialization", Appendix E "Format version changes"; v3 row lineage; v4
optional location)."""
from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from strategies import table_metadata

from icectl.spec.metadata import TableMetadata, parse_table_metadata
from icectl.spec.partitioning import PARTITION_DATA_ID_START
from icectl.errors import InvalidMetadataError, UnsupportedFormatVersionError

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _text(md: TableMetadata) -> str:
    # allow_nan=False: what we write must be strict JSON that any reader takes.
    return json.dumps(md.to_json(), allow_nan=False)


def _walk_keys(obj, path=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield path + (k,)
            yield from _walk_keys(v, path + (k,))
    elif isinstance(obj, list):
        for v in obj:
            yield from _walk_keys(v, path + ("[]",))


@pytest.mark.parametrize("version", [1, 2, 3, 4])
@SETTINGS
@given(data=st.data())
def test_round_trip(version, data):
    md = data.draw(table_metadata(version))
    text = _text(md)
    back = parse_table_metadata(text)
    assert back == md
    # Writing again gives the same document (statistics' raw objects are not part of ==).
    assert back.to_json() == md.to_json()
    assert json.loads(text) == md.to_json()


@pytest.mark.parametrize("version", [1, 2, 3, 4])
@SETTINGS
@given(data=st.data())
def test_written_fields_follow_the_version(version, data):
    md = data.draw(table_metadata(version, with_extras=False))
    doc = json.loads(_text(md))
    assert doc["format-version"] == version
    keys = set(doc)
    if version == 1:
        # v1 readers need the singular fields (Appendix E); the lists are written too.
        assert {"schema", "partition-spec", "schemas", "partition-specs"} <= keys
        assert doc["schema"] == next(s for s in doc["schemas"] if s["schema-id"] == doc["current-schema-id"])
        default = next(s for s in doc["partition-specs"] if s["spec-id"] == doc["default-spec-id"])
        assert doc["partition-spec"] == default["fields"]
        assert "last-sequence-number" not in keys
        for s in doc["snapshots"]:
            assert "sequence-number" not in s
    else:
        # "schema is no longer required and should be omitted", likewise partition-spec.
        assert "schema" not in keys and "partition-spec" not in keys
        for k in ("last-sequence-number", "table-uuid", "current-schema-id", "schemas", "partition-specs",
                  "default-spec-id", "last-partition-id", "sort-orders", "default-sort-order-id"):
            assert k in keys, k
        for s in doc["snapshots"]:
            assert "sequence-number" in s and "manifest-list" in s and "manifests" not in s
            assert s["summary"]["operation"] in ("append", "replace", "overwrite", "delete")
    if version >= 3:
        assert isinstance(doc["next-row-id"], int)
    else:
        assert "next-row-id" not in keys and "encryption-keys" not in keys
        for s in doc["snapshots"]:
            assert not {"first-row-id", "added-rows", "key-id"} & set(s)
        for path in _walk_keys(doc):
            assert path[-1] not in ("initial-default", "write-default"), path
    if version < 4:
        assert "location" in keys and isinstance(doc["location"], str)
    elif md.location is None:
        assert "location" not in keys


@pytest.mark.slow  # ~18 s of generated metadata; test_round_trip stays in the fast suite
@pytest.mark.parametrize("version", [1, 2, 3, 4])
@SETTINGS
@given(data=st.data())
def test_unknown_keys_survive(version, data):
    md = data.draw(table_metadata(version))
    doc = md.to_json()
    doc["x-future-top"] = {"nested": [1, 2, {"a": None}]}
    doc["schemas"][0]["fields"][0]["x-future-field"] = "kept"
    for s in doc["snapshots"]:
        s["x-future-snapshot"] = 7
    if version == 1 and doc["schema"]["schema-id"] == doc["schemas"][0]["schema-id"]:
        doc["schema"] = doc["schemas"][0]  # the singular copy is written from the list
    back = parse_table_metadata(json.dumps(doc)).to_json()
    assert back["x-future-top"] == {"nested": [1, 2, {"a": None}]}
    assert back["schemas"][0]["fields"][0]["x-future-field"] == "kept"
    assert all(s["x-future-snapshot"] == 7 for s in back["snapshots"])
    assert back == doc


@SETTINGS
@given(data=st.data())
def test_v1_singular_schema_and_spec_normalise(data):
    md = data.draw(table_metadata(1, with_extras=False, max_snapshots=2))
    md = md.replace(schemas=(md.schema,), partition_specs=(md.spec,),
                    last_partition_id=max(md.spec.last_field_id, PARTITION_DATA_ID_START - 1))
    doc = md.to_json()
    # An old v1 writer: only the singular fields, no ids for the spec, no sort orders.
    for k in ("schemas", "current-schema-id", "partition-specs", "default-spec-id", "last-partition-id",
              "sort-orders", "default-sort-order-id"):
        del doc[k]
    for f in doc["partition-spec"]:
        del f["field-id"]  # "assigned sequentially starting at 1000" by readers
    back = parse_table_metadata(json.dumps(doc))
    assert back.schemas == (md.schema,)
    assert back.current_schema_id == md.schema.schema_id
    assert len(back.partition_specs) == 1 and back.default_spec_id == 0
    assert [f.field_id for f in back.spec.fields] == [PARTITION_DATA_ID_START + i for i in range(len(md.spec.fields))]
    assert [(f.source_id, f.name, f.transform) for f in back.spec.fields] == \
        [(f.source_id, f.name, f.transform) for f in md.spec.fields]
    assert back.last_partition_id == max(back.spec.last_field_id, PARTITION_DATA_ID_START - 1)
    assert back.sort_order.is_unsorted
    out = back.to_json()
    assert out["schemas"] == [out["schema"]] and out["partition-spec"] == out["partition-specs"][0]["fields"]
    # And it reads as v2 logic wants it: sequence numbers default to 0 (Appendix E).
    assert back.last_sequence_number == 0 and all(s.sequence_number == 0 for s in back.snapshots)


def test_v1_schema_without_schema_id_reads_as_zero():
    doc = {"format-version": 1, "location": "s3://b/t", "last-updated-ms": 1, "last-column-id": 1,
           "schema": {"type": "struct", "fields": [{"id": 1, "name": "a", "required": True, "type": "int"}]},
           "partition-spec": [{"name": "a", "transform": "identity", "source-id": 1}]}
    md = parse_table_metadata(json.dumps(doc))
    assert md.current_schema_id == 0 and md.schema.schema_id == 0
    assert md.spec.fields[0].field_id == 1000 and md.last_partition_id == 1000
    assert md.current_snapshot is None and md.snapshots == ()
    assert md.to_json()["current-snapshot-id"] == -1


@SETTINGS
@given(data=st.data())
def test_v4_without_location(data):
    md = data.draw(table_metadata(4, with_extras=False)).replace(location=None)
    doc = md.to_json()
    assert "location" not in doc
    assert parse_table_metadata(json.dumps(doc)).location is None
    doc["location"] = None  # an explicit null is the same as no location
    assert parse_table_metadata(json.dumps(doc)).location is None


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("location", ["absent", None])
def test_location_required_before_v4(version, location):
    doc = _minimal(version)
    if location == "absent":
        del doc["location"]
    else:
        doc["location"] = location
    with pytest.raises(InvalidMetadataError, match="location"):
        parse_table_metadata(json.dumps(doc), source="s3://b/t/metadata/v1.metadata.json")


def test_location_trailing_slash_is_dropped():
    doc = _minimal(2)
    doc["location"] = "s3://b/t/"
    assert parse_table_metadata(json.dumps(doc)).location == "s3://b/t"


def _minimal(version: int) -> dict:
    doc = {"format-version": version, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1", "location": "s3://b/t",
           "last-sequence-number": 0, "last-updated-ms": 1, "last-column-id": 1, "current-schema-id": 0,
           "schemas": [{"type": "struct", "schema-id": 0, "fields": [
               {"id": 1, "name": "a", "required": False, "type": "long"}]}],
           "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}], "last-partition-id": 999,
           "default-sort-order-id": 0, "sort-orders": [{"order-id": 0, "fields": []}], "properties": {},
           "current-snapshot-id": -1, "snapshots": [], "snapshot-log": [], "metadata-log": []}
    if version >= 3:
        doc["next-row-id"] = 0
    return doc


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_minimal_documents_round_trip(version):
    doc = _minimal(version)
    md = parse_table_metadata(json.dumps(doc))
    assert parse_table_metadata(json.dumps(md.to_json())) == md


@pytest.mark.parametrize("bad,error", [
    (5, UnsupportedFormatVersionError), (0, UnsupportedFormatVersionError), ("2", InvalidMetadataError),
    (True, InvalidMetadataError), (None, InvalidMetadataError)])
def test_bad_format_versions(bad, error):
    doc = _minimal(2)
    doc["format-version"] = bad
    with pytest.raises(error) as e:
        parse_table_metadata(json.dumps(doc), source="m.json")
    assert e.value.message.startswith("m.json: ")


def test_missing_format_version():
    doc = _minimal(2)
    del doc["format-version"]
    with pytest.raises(InvalidMetadataError, match="m.json: missing field 'format-version'"):
        parse_table_metadata(json.dumps(doc), source="m.json")


@pytest.mark.parametrize("text", ["", "{", "[1, 2]", "null", '"x"', "{\"format-version\": 2,}", b"\xff\xfe"])
def test_malformed_json_names_the_source(text):
    with pytest.raises(InvalidMetadataError) as e:
        parse_table_metadata(text, source="s3://b/t/metadata/00001-x.metadata.json")
    assert e.value.message.startswith("s3://b/t/metadata/00001-x.metadata.json: ")


@pytest.mark.parametrize("drop", ["last-updated-ms", "last-column-id", "schemas", "partition-specs"])
def test_missing_required_fields(drop):
    doc = _minimal(2)
    del doc[drop]
    with pytest.raises(InvalidMetadataError, match=f"m.json: .*{drop}"):
        parse_table_metadata(json.dumps(doc), source="m.json")


@pytest.mark.parametrize("mutate", [
    lambda d: d["schemas"][0]["fields"][0].update(type="lng"),
    lambda d: d["schemas"][0]["fields"][0].pop("id"),
    lambda d: d.update(refs={"main": {"snapshot-id": 1, "type": "trunk"}}),
    lambda d: d.update(snapshots=[{"snapshot-id": 1}]),
    lambda d: d.update(snapshots=[{"snapshot-id": 1, "timestamp-ms": 2, "summary": "append"}]),
    lambda d: d.update(schemas=[]),
    lambda d: d.update(properties=[1]),
    lambda d: d.update(statistics=[{"snapshot-id": 1}]),
    lambda d: d["partition-specs"][0].update(fields=[{"transform": "identity"}]),
    lambda d: d.update({"last-column-id": "many"}),
])
def test_invalid_documents_raise_invalid_metadata(mutate):
    doc = copy.deepcopy(_minimal(2))
    mutate(doc)
    with pytest.raises(InvalidMetadataError) as e:
        parse_table_metadata(json.dumps(doc), source="m.json")
    assert e.value.message.startswith("m.json: ")


def test_v3_row_lineage_fields():
    doc = _minimal(3)
    doc["next-row-id"] = 1225
    doc["snapshots"] = [{"snapshot-id": 5, "sequence-number": 1, "timestamp-ms": 10, "manifest-list": "s3://b/t/l.avro",
                         "summary": {"operation": "append"}, "first-row-id": 1000, "added-rows": 225}]
    doc["current-snapshot-id"] = 5
    md = parse_table_metadata(json.dumps(doc))
    assert md.next_row_id == 1225
    assert (md.current_snapshot.first_row_id, md.current_snapshot.added_rows) == (1000, 225)
    out = md.to_json()
    assert out["next-row-id"] == 1225
    assert out["snapshots"][0]["first-row-id"] == 1000 and out["snapshots"][0]["added-rows"] == 225
    # The same snapshot written as v2 drops the v3-only fields.
    v2 = md.replace(format_version=2, next_row_id=None).to_json()
    assert "next-row-id" not in v2 and "first-row-id" not in v2["snapshots"][0]


def test_v3_defaults_are_kept_verbatim():
    doc = _minimal(3)
    doc["schemas"][0]["fields"].append({"id": 2, "name": "d", "required": True, "type": "date",
                                        "initial-default": "2024-01-02", "write-default": "2025-03-04"})
    doc["schemas"][0]["fields"].append({"id": 3, "name": "n", "required": False, "type": "int",
                                        "initial-default": None})
    md = parse_table_metadata(json.dumps(doc))
    d = md.schema.find_field(2)
    assert (d.initial_default, d.write_default) == ("2024-01-02", "2025-03-04")
    n = md.schema.find_field(3)
    assert n.has_initial_default and n.initial_default is None and not n.has_write_default
    fields = md.to_json()["schemas"][0]["fields"]
    assert fields[1]["initial-default"] == "2024-01-02" and fields[1]["write-default"] == "2025-03-04"
    assert "initial-default" in fields[2] and fields[2]["initial-default"] is None and "write-default" not in fields[2]


def test_refs_and_main_implied():
    doc = _minimal(2)
    doc["snapshots"] = [{"snapshot-id": 1, "sequence-number": 1, "timestamp-ms": 10, "manifest-list": "l1",
                         "summary": {"operation": "append"}},
                        {"snapshot-id": 2, "parent-snapshot-id": 1, "sequence-number": 2, "timestamp-ms": 20,
                         "manifest-list": "l2", "summary": {"operation": "append"}}]
    doc["current-snapshot-id"] = 2
    doc["refs"] = {"audit": {"snapshot-id": 1, "type": "tag", "max-ref-age-ms": 86400000},
                   "dev": {"snapshot-id": 1, "type": "branch", "min-snapshots-to-keep": 3,
                           "max-snapshot-age-ms": 1000, "max-ref-age-ms": 2000}}
    md = parse_table_metadata(json.dumps(doc))
    assert set(md.all_refs) == {"main", "audit", "dev"} and md.all_refs["main"].snapshot_id == 2
    assert md.refs["dev"].min_snapshots_to_keep == 3 and md.refs["audit"].max_ref_age_ms == 86400000
    assert md.to_json()["refs"] == doc["refs"]  # the implied main is not written
    assert [s.snapshot_id for s in md.ancestors_of(2)] == [2, 1]
