"""Manifests and manifest lists of each format version: write, read back with inheritance, the
Avro field ids and key-value metadata each version must have (spec: "Manifests", "Manifest
Lists", "Sequence Number Inheritance", v3 "First Row ID Inheritance", Appendix E)."""
from __future__ import annotations

import copy
import os
import io
import json
import uuid
from decimal import Decimal

import fastavro
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from strategies import content_stats_structs, manifest_entries, manifest_files, partitioned_tables

from icectl.formats import avro_schemas
from icectl.spec import content_stats
from icectl.formats.manifest import (
    DataFile,
    EntryStatus,
    FileContent,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
    partition_fields,
    read_manifest,
    read_manifest_header,
    read_manifest_list,
    write_manifest,
    write_manifest_list,
)
from icectl.spec.partitioning import PartitionField, PartitionSpec
from icectl.spec.types import NestedField, Schema, StructType, primitive
from icectl.errors import InvalidMetadataError

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LOCATION = "s3://bucket/wh/db/t"


def _avro_schema(data: bytes) -> dict:
    return json.loads(fastavro.reader(io.BytesIO(data)).metadata["avro.schema"])


def _ids(record: dict) -> dict[str, int]:
    return {f["name"]: f["field-id"] for f in record["fields"]}


def _field(record: dict, name: str) -> dict:
    return next(f for f in record["fields"] if f["name"] == name)


def _nonnull(t):
    return next(x for x in t if x != "null") if isinstance(t, list) else t


def expected_read(entries: list[ManifestEntry], manifest: ManifestFile, version: int,
                  schema: Schema) -> list[ManifestEntry]:
    """What a reader must see, by the spec's inheritance rules."""
    out = []
    next_row_id = manifest.first_row_id
    for e in copy.deepcopy(entries):
        df = e.data_file
        df.spec_id = manifest.partition_spec_id
        if version == 1:
            df.content = FileContent.DATA
        if version < 4:
            df.content_stats = None
        else:  # v4 has content_stats instead of the metric maps
            df.column_sizes = df.value_counts = df.null_value_counts = None
            df.nan_value_counts = df.lower_bounds = df.upper_bounds = None
        if version < 2:
            df.equality_ids = df.referenced_data_file = None
        if version < 3:
            df.first_row_id = df.content_offset = df.content_size_in_bytes = None
        snapshot_id = manifest.added_snapshot_id if e.snapshot_id is None else e.snapshot_id
        if version == 1:
            # "When reading v1 manifests with no sequence number column, sequence numbers for all
            # files must default to 0" (the v1 manifest list gives 0 to inherit as well).
            seq = fseq = manifest.sequence_number if e.status == EntryStatus.ADDED else 0
        elif e.status == EntryStatus.ADDED:
            seq = manifest.sequence_number if e.sequence_number is None else e.sequence_number
            fseq = manifest.sequence_number if e.file_sequence_number is None else e.file_sequence_number
        else:
            seq, fseq = e.sequence_number, e.file_sequence_number
        if (version >= 3 and df.content == FileContent.DATA and e.status == EntryStatus.ADDED
                and df.first_row_id is None and next_row_id is not None):
            df.first_row_id = next_row_id
            next_row_id += df.record_count
        out.append(ManifestEntry(e.status, snapshot_id, seq, fseq, df))
    return out


def _normalise_stats(entries: list[ManifestEntry], schema: Schema) -> None:
    """content_stats compared by the v3 maps they stand for (fastavro returns every key of the
    record, a writer passes only the ones it has)."""
    for e in entries:
        if e.data_file.content_stats is not None:
            e.data_file.content_stats = content_stats.to_maps(schema, e.data_file.content_stats)


@pytest.mark.parametrize("version", [1, 2, 3, 4])
@pytest.mark.parametrize("content", [ManifestContent.DATA, ManifestContent.DELETES])
@SETTINGS
@given(data=st.data())
def test_manifest_round_trip(version, content, data):
    if version == 1 and content == ManifestContent.DELETES:
        pytest.skip("v1 has no delete files")
    schema, spec = data.draw(partitioned_tables(version))
    ptypes = [t for _, _, t in partition_fields(spec, schema)]
    first_row_id = data.draw(st.none() | st.integers(0, 10**12)) \
        if version >= 3 and content == ManifestContent.DATA else None
    stats = content_stats_structs(schema) if version >= 4 else None
    entries = data.draw(manifest_entries(version, content, ptypes, spec.spec_id, manifest_first_row_id=first_row_id,
                                         content_stats=stats))
    written = copy.deepcopy(entries)
    blob = write_manifest(entries, format_version=version, spec=spec, schema=schema, content=content,
                          content_stats_schema=avro_schemas.content_stats_schema(schema) if version >= 4 else None)
    assert entries == written  # writing does not change what it is given
    seq = data.draw(st.integers(0, 10**6)) if version >= 2 else 0
    manifest = ManifestFile(f"{LOCATION}/metadata/{uuid.uuid4()}-m0.avro", len(blob), spec.spec_id, content,
                            sequence_number=seq, min_sequence_number=0, added_snapshot_id=data.draw(st.integers(1, 2**63 - 1)),
                            first_row_id=first_row_id)
    got = read_manifest(blob, manifest, partition_types=ptypes)
    want = expected_read(entries, manifest, version, schema)
    os.environ["ICECTL_AVRO_READER"] = "lean"  # the fallback reader must agree with the fast one
    try:
        slow = read_manifest(blob, manifest, partition_types=ptypes)
    finally:
        del os.environ["ICECTL_AVRO_READER"]
    _normalise_stats(slow, schema)
    _normalise_stats(got, schema)
    assert got == slow
    _normalise_stats(want, schema)
    assert got == want

    live = read_manifest(blob, manifest, partition_types=ptypes, live_only=True)
    _normalise_stats(live, schema)
    assert live == [e for e in want if e.status != EntryStatus.DELETED]

    lean = read_manifest(blob, manifest, partition_types=ptypes, with_stats=False)
    for g, w in zip(lean, want):
        assert (g.status, g.snapshot_id, g.sequence_number, g.file_sequence_number) == \
            (w.status, w.snapshot_id, w.sequence_number, w.file_sequence_number)
        for name in ("file_path", "file_format", "partition", "record_count", "file_size_in_bytes", "content",
                     "equality_ids", "first_row_id", "referenced_data_file", "content_offset",
                     "content_size_in_bytes", "sort_order_id"):
            assert getattr(g.data_file, name) == getattr(w.data_file, name), name
        assert g.data_file.lower_bounds is None and g.data_file.content_stats is None

    header = read_manifest_header(blob)
    assert header.format_version == version
    assert header.partition_spec_id == spec.spec_id
    assert header.content == content


# -- what each version writes ------------------------------------------------------------------------

_SCHEMA = Schema((
    NestedField(1, "id", primitive("long"), True),
    NestedField(2, "ts", primitive("timestamptz")),
    NestedField(3, "price", primitive("decimal(9, 2)")),
    NestedField(4, "u", primitive("uuid")),
    NestedField(5, "s", StructType((NestedField(6, "name", primitive("string")),))),
), schema_id=3)
_SPEC = PartitionSpec(2, (PartitionField(2, 1000, "ts_day", "day"), PartitionField(1, 1001, "id_bucket", "bucket[16]"),
                          PartitionField(3, 1002, "price", "identity"), PartitionField(4, 1003, "u", "identity"),
                          PartitionField(6, 1004, "s.name", "identity")))
_PARTITION = (19000, 7, Decimal("12.34"), uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"), "x")

# data_file field ids by version (spec "Manifests"; v3 row lineage and DVs; v4 content_stats).
DATA_FILE_IDS = {
    1: {100, 101, 102, 103, 104, 105, 108, 109, 110, 137, 125, 128, 131, 132, 140},
    2: {134, 100, 101, 102, 103, 104, 108, 109, 110, 137, 125, 128, 131, 132, 135, 140, 143},
    3: {134, 100, 101, 102, 103, 104, 108, 109, 110, 137, 125, 128, 131, 132, 135, 140, 142, 143, 144, 145},
    4: {134, 100, 101, 102, 103, 104, 131, 132, 135, 140, 142, 143, 144, 145, 146},
}
MAP_IDS = {"column_sizes": (117, 118), "value_counts": (119, 120), "null_value_counts": (121, 122),
           "nan_value_counts": (138, 139), "lower_bounds": (126, 127), "upper_bounds": (129, 130)}
MANIFEST_FILE_IDS = {
    1: {500, 501, 502, 503, 504, 505, 506, 512, 513, 514, 507, 519},
    2: {500, 501, 502, 517, 515, 516, 503, 504, 505, 506, 512, 513, 514, 507, 519},
    3: {500, 501, 502, 517, 515, 516, 503, 504, 505, 506, 512, 513, 514, 507, 519, 520},
    4: {500, 501, 502, 517, 515, 516, 503, 504, 505, 506, 512, 513, 514, 507, 519, 520},
}


def _sample_manifest(version: int, content: ManifestContent = ManifestContent.DATA) -> bytes:
    df = DataFile(f"{LOCATION}/data/a.parquet", "parquet", _PARTITION, 10, 1000,
                  content=FileContent.DATA if content == ManifestContent.DATA else FileContent.EQUALITY_DELETES,
                  spec_id=2, value_counts={1: 10}, lower_bounds={1: b"\x01" + bytes(7)},
                  equality_ids=None if content == ManifestContent.DATA else [1])
    if version >= 4:
        df.content_stats = content_stats.from_maps(_SCHEMA, value_counts={1: 10}, null_value_counts=None,
                                                   nan_value_counts=None, lower_bounds={1: b"\x01" + bytes(7)},
                                                   upper_bounds=None, column_sizes=None)
    return write_manifest([ManifestEntry(EntryStatus.ADDED, 5, None, None, df)], format_version=version, spec=_SPEC,
                          schema=_SCHEMA, content=content,
                          content_stats_schema=avro_schemas.content_stats_schema(_SCHEMA) if version >= 4 else None)


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_manifest_field_ids(version):
    schema = _avro_schema(_sample_manifest(version))
    entry = _ids(schema)
    assert entry == ({"status": 0, "snapshot_id": 1, "data_file": 2} if version == 1 else
                     {"status": 0, "snapshot_id": 1, "sequence_number": 3, "file_sequence_number": 4, "data_file": 2})
    # v1: snapshot_id is required; v2+: optional, for inheritance.
    assert (_field(schema, "snapshot_id")["type"] == "long") == (version == 1)
    data_file = _field(schema, "data_file")["type"]
    ids = _ids(data_file)
    assert set(ids.values()) == DATA_FILE_IDS[version]
    assert len(ids) == len(set(ids.values()))
    if version == 1:
        assert "content" not in ids and ids["block_size_in_bytes"] == 105
    else:
        assert ids["content"] == 134 and "block_size_in_bytes" not in ids
    assert not {106, 107, 141} & set(ids.values())  # deprecated or reserved
    for name, (k, v) in MAP_IDS.items():
        if version < 4:
            items = _nonnull(_field(data_file, name)["type"])["items"]
            assert items["type"] == "record" and items.get("name") == f"k{k}_v{v}"
            assert _ids(items) == {"key": k, "value": v}
    split = _nonnull(_field(data_file, "split_offsets")["type"])
    assert split["element-id"] == 133
    if version >= 2:
        assert _nonnull(_field(data_file, "equality_ids")["type"])["element-id"] == 136
    partition = _field(data_file, "partition")["type"]
    assert partition["type"] == "record"
    assert [f["field-id"] for f in partition["fields"]] == [1000, 1001, 1002, 1003, 1004]
    # Avro names must be legal: the nested column's partition field is written as Java writes it.
    assert [f["name"] for f in partition["fields"]] == ["ts_day", "id_bucket", "price", "u", "s_x2Ename"]
    ptypes = [_nonnull(f["type"]) for f in partition["fields"]]
    assert ptypes[0] == {"type": "int", "logicalType": "date"}
    assert ptypes[2]["logicalType"] == "decimal" and ptypes[2]["type"] == "fixed" and ptypes[2]["size"] == 4
    assert ptypes[3]["logicalType"] == "uuid" and ptypes[3]["size"] == 16
    if version >= 4:
        stats = _nonnull(_field(data_file, "content_stats")["type"])
        assert stats["type"] == "record"


@pytest.mark.parametrize("version", [1, 2, 3, 4])
@pytest.mark.parametrize("content", [ManifestContent.DATA, ManifestContent.DELETES])
def test_manifest_key_value_metadata(version, content):
    if version == 1 and content == ManifestContent.DELETES:
        return
    meta = {k: v.decode() if isinstance(v, bytes) else v
            for k, v in fastavro.reader(io.BytesIO(_sample_manifest(version, content))).metadata.items()
            if not k.startswith("avro.")}
    expected_keys = {"schema", "schema-id", "partition-spec", "partition-spec-id", "format-version"}
    if version >= 2:
        expected_keys.add("content")
    assert set(meta) == expected_keys
    assert json.loads(meta["schema"]) == _SCHEMA.to_json()
    assert meta["schema-id"] == "3"
    assert json.loads(meta["partition-spec"]) == _SPEC.fields_json(version)
    assert meta["partition-spec-id"] == "2"
    assert meta["format-version"] == str(version)
    if version >= 2:
        assert meta["content"] == ("data" if content == ManifestContent.DATA else "deletes")


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_manifest_partition_values_round_trip(version):
    blob = _sample_manifest(version)
    ptypes = [t for _, _, t in partition_fields(_SPEC, _SCHEMA)]
    [entry] = read_manifest(blob, ManifestFile("m.avro", len(blob), 2, sequence_number=4, added_snapshot_id=9),
                            partition_types=ptypes)
    assert entry.data_file.partition == _PARTITION
    assert isinstance(entry.data_file.partition[3], uuid.UUID)
    assert entry.data_file.spec_id == 2


# -- manifest lists ------------------------------------------------------------------------------------

def _expected_list_entry(m: ManifestFile, version: int) -> ManifestFile:
    m = copy.deepcopy(m)
    if version == 1:
        m.content, m.sequence_number, m.min_sequence_number = ManifestContent.DATA, 0, 0
    if version < 3:
        m.first_row_id = None
    return m


@pytest.mark.parametrize("version", [1, 2, 3, 4])
@SETTINGS
@given(data=st.data())
def test_manifest_list_round_trip(version, data):
    manifests = data.draw(st.lists(manifest_files(version), max_size=5))
    snapshot_id = data.draw(st.integers(1, 2**63 - 1))
    parent = data.draw(st.none() | st.integers(1, 2**63 - 1))
    seq = data.draw(st.integers(0, 10**6))
    first_row_id = data.draw(st.none() | st.integers(0, 10**9))
    blob = write_manifest_list(manifests, format_version=version, snapshot_id=snapshot_id, parent_snapshot_id=parent,
                               sequence_number=seq, first_row_id=first_row_id)
    assert read_manifest_list(blob) == [_expected_list_entry(m, version) for m in manifests]
    meta = {k: v.decode() if isinstance(v, bytes) else v
            for k, v in fastavro.reader(io.BytesIO(blob)).metadata.items() if not k.startswith("avro.")}
    assert meta["snapshot-id"] == str(snapshot_id)
    assert meta["parent-snapshot-id"] == (str(parent) if parent is not None else "null")
    assert meta["format-version"] == str(version)
    assert ("sequence-number" in meta) == (version >= 2)
    if version >= 2:
        assert meta["sequence-number"] == str(seq)
    assert ("first-row-id" in meta) == (version >= 3 and first_row_id is not None)


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_manifest_list_field_ids(version):
    blob = write_manifest_list([], format_version=version, snapshot_id=1, parent_snapshot_id=None, sequence_number=1)
    schema = _avro_schema(blob)
    ids = _ids(schema)
    assert set(ids.values()) == MANIFEST_FILE_IDS[version]
    assert len(ids) == len(set(ids.values()))
    summary = _nonnull(_field(schema, "partitions")["type"])
    assert summary["element-id"] == 508
    assert _ids(summary["items"]) == {"contains_null": 509, "contains_nan": 518, "lower_bound": 510,
                                      "upper_bound": 511}
    # v2 made the counts required (Appendix E); v1 has them optional.
    for name in ("added_files_count", "existing_files_count", "deleted_files_count", "added_rows_count",
                 "existing_rows_count", "deleted_rows_count"):
        assert isinstance(_field(schema, name)["type"], list) == (version == 1), name


def test_v1_manifest_list_and_manifest_read_by_v2_logic():
    """Appendix E "Reading v1 metadata for v2": sequence numbers 0, content data."""
    df = DataFile(f"{LOCATION}/data/a.parquet", "parquet", (), 3, 30)
    entries = [ManifestEntry(EntryStatus.ADDED, 1, None, None, df),
               ManifestEntry(EntryStatus.EXISTING, 1, None, None, copy.deepcopy(df)),
               ManifestEntry(EntryStatus.DELETED, 2, None, None, copy.deepcopy(df))]
    schema = Schema((NestedField(1, "a", primitive("int")),))
    blob = write_manifest(entries, format_version=1, spec=PartitionSpec(0, ()), schema=schema,
                          content=ManifestContent.DATA)
    lst = write_manifest_list([ManifestFile(f"{LOCATION}/metadata/m.avro", len(blob), 0, added_snapshot_id=1,
                                            added_files_count=1, existing_files_count=1, deleted_files_count=1)],
                              format_version=1, snapshot_id=2, parent_snapshot_id=1, sequence_number=0)
    [m] = read_manifest_list(lst)
    assert (m.content, m.sequence_number, m.min_sequence_number, m.first_row_id) == (ManifestContent.DATA, 0, 0, None)
    got = read_manifest(blob, m)
    assert [(e.sequence_number, e.file_sequence_number) for e in got] == [(0, 0)] * 3
    assert all(e.data_file.content == FileContent.DATA for e in got)
    assert [e.snapshot_id for e in got] == [1, 1, 2]
    assert read_manifest_header(blob).content == ManifestContent.DATA


def test_java_v1_manifest_list_names():
    """Old Java writers named the v1 counts added_data_files_count etc. (same field ids)."""
    schema = {"type": "record", "name": "manifest_file", "fields": [
        {"name": "manifest_path", "type": "string", "field-id": 500},
        {"name": "manifest_length", "type": "long", "field-id": 501},
        {"name": "partition_spec_id", "type": "int", "field-id": 502},
        {"name": "added_snapshot_id", "type": ["null", "long"], "default": None, "field-id": 503},
        {"name": "added_data_files_count", "type": ["null", "int"], "default": None, "field-id": 504},
        {"name": "existing_data_files_count", "type": ["null", "int"], "default": None, "field-id": 505},
        {"name": "deleted_data_files_count", "type": ["null", "int"], "default": None, "field-id": 506},
        {"name": "partitions", "type": ["null", {"type": "array", "element-id": 508, "items": {
            "type": "record", "name": "r508", "fields": [
                {"name": "contains_null", "type": "boolean", "field-id": 509},
                {"name": "lower_bound", "type": ["null", "bytes"], "default": None, "field-id": 510},
                {"name": "upper_bound", "type": ["null", "bytes"], "default": None, "field-id": 511}]}}],
         "default": None, "field-id": 507}]}
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), [{
        "manifest_path": "s3://b/t/metadata/m.avro", "manifest_length": 10, "partition_spec_id": 0,
        "added_snapshot_id": 7, "added_data_files_count": 2, "existing_data_files_count": 3,
        "deleted_data_files_count": 0, "partitions": [{"contains_null": True, "lower_bound": None,
                                                       "upper_bound": b"\x01"}]}],
        metadata={"format-version": "1"})
    [m] = read_manifest_list(buf.getvalue())
    assert (m.added_files_count, m.existing_files_count, m.deleted_files_count) == (2, 3, 0)
    assert (m.content, m.sequence_number, m.min_sequence_number) == (ManifestContent.DATA, 0, 0)
    assert m.partitions[0].contains_null and m.partitions[0].contains_nan is None
    assert m.added_rows_count is None and m.first_row_id is None


def test_first_row_id_inheritance_walkthrough():
    """The spec's example: manifest added1 has first_row_id 1000; EXISTING data1 keeps 800,
    ADDED data2 and data3 (null) get 1000 and 1050."""
    def f(name, n, first=None):
        return DataFile(f"{LOCATION}/data/{name}.parquet", "parquet", (), n, 100, first_row_id=first)

    entries = [ManifestEntry(EntryStatus.EXISTING, 1, 3, 3, f("data1", 25, 800)),
               ManifestEntry(EntryStatus.ADDED, None, None, None, f("data2", 50)),
               ManifestEntry(EntryStatus.ADDED, None, None, None, f("data3", 50))]
    schema = Schema((NestedField(1, "a", primitive("int")),))
    blob = write_manifest(entries, format_version=3, spec=PartitionSpec(0, ()), schema=schema,
                          content=ManifestContent.DATA)
    m = ManifestFile("added1", len(blob), 0, sequence_number=7, added_snapshot_id=42, first_row_id=1000)
    got = read_manifest(blob, m)
    assert [e.data_file.first_row_id for e in got] == [800, 1000, 1050]
    assert [(e.snapshot_id, e.sequence_number, e.file_sequence_number) for e in got] == \
        [(1, 3, 3), (42, 7, 7), (42, 7, 7)]
    # Without a manifest first_row_id (row lineage not enabled) nothing is assigned.
    m.first_row_id = None
    assert [e.data_file.first_row_id for e in read_manifest(blob, m)] == [800, None, None]


def test_delete_files_never_inherit_first_row_id():
    dv = DataFile(f"{LOCATION}/data/dv.puffin", "puffin", (), 4, 100, content=FileContent.POSITION_DELETES,
                  referenced_data_file=f"{LOCATION}/data/a.parquet", content_offset=4, content_size_in_bytes=40)
    schema = Schema((NestedField(1, "a", primitive("int")),))
    blob = write_manifest([ManifestEntry(EntryStatus.ADDED, None, None, None, dv)], format_version=3,
                          spec=PartitionSpec(0, ()), schema=schema, content=ManifestContent.DELETES)
    [e] = read_manifest(blob, ManifestFile("d", len(blob), 0, ManifestContent.DELETES, 5, added_snapshot_id=1,
                                           first_row_id=100))
    assert e.data_file.first_row_id is None
    assert e.data_file.is_deletion_vector and e.data_file.kind == "deletion-vector"
    assert (e.data_file.referenced_data_file, e.data_file.content_offset, e.data_file.content_size_in_bytes) == \
        (f"{LOCATION}/data/a.parquet", 4, 40)


# -- damaged files -------------------------------------------------------------------------------------

SOURCE = "s3://bucket/wh/db/t/metadata/snap-1-1-x.avro"


def test_truncated_manifest_list_names_the_file():
    manifests = [ManifestFile(f"{LOCATION}/metadata/m{i}.avro", 100, 0, ManifestContent.DATA, 1, 1, 5, 1, 0, 0, 10,
                              0, 0, []) for i in range(3)]
    blob = write_manifest_list(manifests, format_version=2, snapshot_id=5, parent_snapshot_id=None, sequence_number=1)
    succeeded = []
    for n in range(len(blob)):
        try:
            out = read_manifest_list(blob[:n], source=SOURCE)
        except InvalidMetadataError as e:
            assert e.message.startswith(SOURCE + ": "), e.message
            continue
        succeeded.append((n, out))
    # Only a cut exactly after the header (no data block at all) still reads, as no manifests:
    # a manifest list's length is recorded nowhere, so that one cannot be told from an empty list.
    assert len(succeeded) <= 1 and all(out == [] for _, out in succeeded)


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_truncated_manifest_names_the_file(version):
    blob = _sample_manifest(version)
    m = ManifestFile(SOURCE, len(blob), 2, sequence_number=1, added_snapshot_id=1)
    for n in range(0, len(blob), 7):
        with pytest.raises(InvalidMetadataError) as e:
            read_manifest(blob[:n], m)
        assert e.value.message.startswith(SOURCE + ": ")


@pytest.mark.parametrize("junk", [b"", b"not avro at all", b"Obj\x01garbage", bytes(100)])
def test_not_avro(junk):
    with pytest.raises(InvalidMetadataError, match="^manifest-x.avro: "):
        read_manifest_list(junk, source="manifest-x.avro")
    with pytest.raises(InvalidMetadataError, match="^manifest-x.avro: "):
        read_manifest(junk, ManifestFile("manifest-x.avro", 0, 0))
