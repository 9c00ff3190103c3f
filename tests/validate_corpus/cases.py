"""The validation corpus: deliberately broken tables, each with one named defect.

Every case starts from a valid table of `tables.build` (format version `fv`), corrupts one thing
(edits the metadata JSON, rewrites a manifest list or a manifest with icectl's writers, deletes or
truncates a file) and names the finding codes `validate` must report: exactly those error codes
(and no other error code), warnings aside. Nothing is checked in: the tables are built in a
temporary folder when the test runs.

    from validate_corpus.cases import CASES, build_case
    base = build_case(CASES["missing-data-file"], tmp_path)
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Callable

from icectl.engine.manifest import (
    DataFile,
    EntryStatus,
    FieldSummary,
    FileContent,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
    read_manifest_list,
    write_manifest,
    write_manifest_list,
)
from icectl.engine.metadata import parse_table_metadata

from . import tables
from .tables import Base


@dataclass(frozen=True)
class Case:
    name: str
    fv: int
    expected: frozenset[str]
    corrupt: Callable[[Base], None]
    deep: bool = False
    catalog: str = "sql"
    deletes: bool = True
    description: str = ""


CASES: dict[str, Case] = {}


def case(name: str, fv: int, *expected: str, deep: bool = False, catalog: str = "sql", deletes: bool = True):
    def register(fn: Callable[[Base], None]) -> Callable[[Base], None]:
        CASES[name] = Case(name, fv, frozenset(expected), fn, deep, catalog, deletes, (fn.__doc__ or "").strip())
        return fn

    return register


def build_case(c: Case, root: Any) -> Base:
    base = tables.build(str(root), c.fv, catalog=c.catalog, deletes=c.deletes)
    c.corrupt(base)
    return base


# -- helpers -------------------------------------------------------------------------------------

def edit_json(base: Base, fn: Callable[[dict], Any]) -> None:
    path = base.metadata_location
    with open(path) as f:
        obj = json.load(f)
    fn(obj)
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)


def write_raw(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def snapshots(obj: dict) -> list[dict]:
    return obj["snapshots"]


def current_list_path(base: Base) -> str:
    t = base.table
    return t.resolve(t.metadata.current_snapshot.manifest_list)


def rewrite_list(base: Base, fn: Callable[[list[ManifestFile]], Any], snapshot_id: int | None = None) -> None:
    """Rewrite a snapshot's manifest list (default: the current one) in place."""
    t = base.table
    md = t.metadata
    snap = md.snapshot_by_id(snapshot_id) if snapshot_id is not None else md.current_snapshot
    path = t.resolve(snap.manifest_list)
    manifests = read_manifest_list(t.io.read(path))
    fn(manifests)
    t.io.write(path, write_manifest_list(manifests, format_version=md.format_version, snapshot_id=snap.snapshot_id,
                                         parent_snapshot_id=snap.parent_snapshot_id,
                                         sequence_number=snap.sequence_number, first_row_id=snap.first_row_id),
               overwrite=True)


def rewrite_manifest(base: Base, pick: Callable[[ManifestFile], bool], fn: Callable[[list[ManifestEntry]], Any],
                     *, recount: bool = True, data: bytes | None = None) -> str:
    """Rewrite one manifest of the current snapshot in place (entries changed by ``fn``, or the
    bytes ``data``), then fix manifest_length (and, with ``recount``, the counts) in every manifest
    list that lists it, as a writer would."""
    t = base.table
    md = t.metadata
    m = next(x for x in t.manifests(md.current_snapshot) if pick(x))
    entries = t.read_entries(m)
    if data is None:
        fn(entries)
        data = write_manifest(entries, format_version=md.format_version, spec=md.spec_by_id(m.partition_spec_id),
                              schema=md.schema, content=m.content)
    t.io.write(m.manifest_path, data, overwrite=True)

    def fix(manifests: list[ManifestFile]) -> None:
        for x in manifests:
            if t.resolve(x.manifest_path) == m.manifest_path:
                x.manifest_length = len(data)
                if recount:
                    for status, files, rows in ((EntryStatus.ADDED, "added_files_count", "added_rows_count"),
                                                (EntryStatus.EXISTING, "existing_files_count", "existing_rows_count"),
                                                (EntryStatus.DELETED, "deleted_files_count", "deleted_rows_count")):
                        group = [e for e in entries if e.status == status]
                        setattr(x, files, len(group))
                        setattr(x, rows, sum(e.data_file.record_count for e in group))

    for s in md.snapshots:
        if any(t.resolve(x.manifest_path) == m.manifest_path for x in t.manifests(s)):
            rewrite_list(base, fix, s.snapshot_id)
    return m.manifest_path


def data_manifest(m: ManifestFile) -> bool:
    return m.content == ManifestContent.DATA


def delete_manifest(m: ManifestFile) -> bool:
    return m.content == ManifestContent.DELETES


def newest_data_manifest(base: Base) -> Callable[[ManifestFile], bool]:
    sid = base.table.metadata.current_snapshot_id
    t = base.table
    target = [m for m in t.manifests(t.metadata.current_snapshot) if m.content == ManifestContent.DATA]
    newest = max(target, key=lambda m: m.sequence_number)
    return lambda m: m.manifest_path == newest.manifest_path and sid is not None


def commit_extra(base: Base, files: list[DataFile]) -> None:
    from icectl.engine.snapshot_writer import append_files

    append_files(base.table, files)


# -- the files (--deep) ------------------------------------------------------------------------------

@case("missing-data-file", 2, "FILE_MISSING", deep=True)
def _missing_data_file(base: Base) -> None:
    """A live data file was deleted from storage."""
    os.remove(base.data_files[2].file_path)


@case("wrong-file-size", 2, "FILE_SIZE_MISMATCH", deep=True)
def _wrong_file_size(base: Base) -> None:
    """A manifest records a data file size 10 bytes larger than the file."""
    def fn(entries):
        entries[0].data_file.file_size_in_bytes += 10
    rewrite_manifest(base, newest_data_manifest(base), fn)


@case("record-count-mismatch", 2, "RECORD_COUNT_MISMATCH", deep=True)
def _record_count(base: Base) -> None:
    """A manifest says a Parquet file holds one more row than its footer does."""
    def fn(entries):
        entries[0].data_file.record_count += 1
    rewrite_manifest(base, newest_data_manifest(base), fn)


@case("truncated-data-file", 2, "FILE_SIZE_MISMATCH", "FILE_UNREADABLE", deep=True)
def _truncated_data_file(base: Base) -> None:
    """A Parquet data file lost its footer (truncated to half)."""
    p = base.data_files[3].file_path
    data = open(p, "rb").read()
    write_raw(p, data[: len(data) // 2])


@case("dv-cardinality", 3, "DV_CARDINALITY", deep=True)
def _dv_cardinality(base: Base) -> None:
    """A deletion vector's record_count is not its bitmap's cardinality."""
    def fn(entries):
        entries[0].data_file.record_count += 1
    rewrite_manifest(base, delete_manifest, fn)


@case("dv-crc", 3, "DV_CORRUPT", deep=True)
def _dv_crc(base: Base) -> None:
    """A byte of a deletion vector's bitmap flipped: its CRC no longer matches."""
    dv = base.delete_files[0]
    data = bytearray(open(dv.file_path, "rb").read())
    data[dv.content_offset + 10] ^= 0xFF
    write_raw(dv.file_path, bytes(data))


@case("dv-blob-offset", 3, "DV_BLOB_MISMATCH", deep=True)
def _dv_blob_offset(base: Base) -> None:
    """A deletion vector's content_offset points one byte past its blob."""
    def fn(entries):
        entries[0].data_file.content_offset += 1
        entries[0].data_file.content_size_in_bytes -= 1
    rewrite_manifest(base, delete_manifest, fn)


@case("puffin-truncated", 3, "FILE_SIZE_MISMATCH", "PUFFIN_INVALID", deep=True)
def _puffin_truncated(base: Base) -> None:
    """The Puffin file of a deletion vector lost its footer."""
    dv = base.delete_files[0]
    data = open(dv.file_path, "rb").read()
    write_raw(dv.file_path, data[: dv.content_offset + dv.content_size_in_bytes])


# -- table metadata --------------------------------------------------------------------------------

@case("garbage-json", 2, "META_INVALID_JSON")
def _garbage_json(base: Base) -> None:
    """The metadata file is not JSON."""
    write_raw(base.metadata_location, b"\x00\x01 this is not json {")


@case("truncated-json", 3, "META_INVALID_JSON")
def _truncated_json(base: Base) -> None:
    """The metadata file was cut in half."""
    data = open(base.metadata_location, "rb").read()
    write_raw(base.metadata_location, data[: len(data) // 2])


@case("unsupported-format-version", 2, "META_FORMAT_VERSION")
def _format_version(base: Base) -> None:
    """format-version 7."""
    edit_json(base, lambda o: o.update({"format-version": 7}))


@case("missing-table-uuid", 2, "META_FIELD_MISSING")
def _missing_uuid(base: Base) -> None:
    """A v2 table without table-uuid."""
    edit_json(base, lambda o: o.pop("table-uuid"))


@case("missing-next-row-id", 3, "META_FIELD_MISSING")
def _missing_next_row_id(base: Base) -> None:
    """A v3 table without next-row-id."""
    edit_json(base, lambda o: o.pop("next-row-id"))


@case("missing-last-updated", 2, "META_FIELD_MISSING")
def _missing_last_updated(base: Base) -> None:
    """A table without last-updated-ms (the parser cannot read it either)."""
    edit_json(base, lambda o: o.pop("last-updated-ms"))


@case("forbidden-schema-field", 2, "META_FIELD_FORBIDDEN")
def _forbidden_schema(base: Base) -> None:
    """A v2 table that also writes v1's singular 'schema' (a warning: should be omitted)."""
    edit_json(base, lambda o: o.update({"schema": o["schemas"][0]}))


@case("wrong-json-type", 2, "META_FIELD_TYPE")
def _wrong_type(base: Base) -> None:
    """last-column-id is a string."""
    edit_json(base, lambda o: o.update({"last-column-id": "three"}))


@case("snapshot-without-manifest-list", 2, "META_FIELD_MISSING")
def _no_manifest_list(base: Base) -> None:
    """A v2 snapshot (not a head) without its manifest-list."""
    edit_json(base, lambda o: snapshots(o)[0].pop("manifest-list"))


@case("duplicate-snapshot-id", 1, "SNAPSHOT_ID_DUPLICATE")
def _duplicate_snapshot_id(base: Base) -> None:
    """Two snapshots with the same id."""
    def fn(o):
        copy = dict(snapshots(o)[0])
        copy["timestamp-ms"] += 1
        snapshots(o).append(copy)
    edit_json(base, fn)


@case("parent-cycle", 1, "SNAPSHOT_PARENT_CYCLE")
def _parent_cycle(base: Base) -> None:
    """The first snapshot's parent is the last one."""
    def fn(o):
        snapshots(o)[0]["parent-snapshot-id"] = snapshots(o)[-1]["snapshot-id"]
    edit_json(base, fn)


@case("sequence-number-backwards", 2, "SEQUENCE_NUMBER_BACKWARDS")
def _seq_backwards(base: Base) -> None:
    """Snapshot 2's sequence number goes above its child's (the table's last is raised to match)."""
    def fn(o):
        snapshots(o)[1]["sequence-number"] = 9
        o["last-sequence-number"] = 9
    edit_json(base, fn)


@case("sequence-number-above-last", 2, "SEQUENCE_NUMBER_ABOVE_LAST")
def _seq_above_last(base: Base) -> None:
    """last-sequence-number is lower than the snapshots' sequence numbers."""
    edit_json(base, lambda o: o.update({"last-sequence-number": 1}))


@case("ref-to-missing-snapshot", 2, "REF_MISSING_SNAPSHOT")
def _ref_missing(base: Base) -> None:
    """A tag points at a snapshot that does not exist."""
    edit_json(base, lambda o: o["refs"].update({"audit": {"snapshot-id": 123456789, "type": "tag"}}))


@case("ref-bad-type", 2, "REF_INVALID")
def _ref_bad_type(base: Base) -> None:
    """A ref of type 'label'."""
    def fn(o):
        o["refs"]["x"] = {"snapshot-id": snapshots(o)[0]["snapshot-id"], "type": "label"}
    edit_json(base, fn)


@case("current-snapshot-mismatch", 2, "CURRENT_SNAPSHOT_MISMATCH")
def _current_mismatch(base: Base) -> None:
    """current-snapshot-id is the first snapshot while main points at the last."""
    edit_json(base, lambda o: o.update({"current-snapshot-id": snapshots(o)[0]["snapshot-id"]}))


@case("current-snapshot-missing", 1, "CURRENT_SNAPSHOT_MISSING")
def _current_missing(base: Base) -> None:
    """A v1 table (no refs) whose current-snapshot-id names no snapshot."""
    def fn(o):
        o.pop("refs", None)
        o["current-snapshot-id"] = 42
    edit_json(base, fn)


@case("snapshot-log-order", 2, "SNAPSHOT_LOG_ORDER")
def _snapshot_log(base: Base) -> None:
    """The snapshot log goes back in time by an hour."""
    def fn(o):
        o["snapshot-log"][1]["timestamp-ms"] = o["snapshot-log"][0]["timestamp-ms"] - 3_600_000
    edit_json(base, fn)


@case("metadata-log-order", 2, "METADATA_LOG_ORDER")
def _metadata_log(base: Base) -> None:
    """The metadata log goes back in time by an hour."""
    def fn(o):
        o["metadata-log"][-1]["timestamp-ms"] = o["metadata-log"][0]["timestamp-ms"] - 3_600_000
    edit_json(base, fn)


@case("duplicate-schema-id", 2, "SCHEMA_ID_DUPLICATE")
def _dup_schema(base: Base) -> None:
    """Two schemas with schema-id 0."""
    edit_json(base, lambda o: o["schemas"].append(dict(o["schemas"][0])))


@case("duplicate-field-id", 2, "FIELD_ID_DUPLICATE")
def _dup_field(base: Base) -> None:
    """A schema where 'name' reuses the id of 'id'."""
    edit_json(base, lambda o: o["schemas"][0]["fields"][1].update({"id": 1}))


@case("reserved-field-id", 2, "FIELD_ID_RESERVED")
def _reserved_field(base: Base) -> None:
    """A column with field id 2147483500 (reserved for metadata columns)."""
    def fn(o):
        o["schemas"].append({"type": "struct", "schema-id": 1, "fields": o["schemas"][0]["fields"] + [
            {"id": 2147483500, "name": "x", "required": False, "type": "int"}]})
        o["last-column-id"] = 2147483500
    edit_json(base, fn)


@case("last-column-id-too-low", 2, "LAST_COLUMN_ID")
def _last_column(base: Base) -> None:
    """last-column-id is below the highest field id."""
    edit_json(base, lambda o: o.update({"last-column-id": 1}))


@case("v3-type-in-v2", 2, "TYPE_NOT_IN_VERSION")
def _v3_type(base: Base) -> None:
    """A v2 table whose (older) schema has a timestamp_ns column."""
    def fn(o):
        o["schemas"].insert(0, {"type": "struct", "schema-id": 7, "fields": [
            {"id": 4, "name": "ns", "required": False, "type": "timestamp_ns"}]})
        o["last-column-id"] = 4
    edit_json(base, fn)


@case("duplicate-spec-id", 2, "SPEC_ID_DUPLICATE")
def _dup_spec(base: Base) -> None:
    """Two partition specs with spec-id 0."""
    edit_json(base, lambda o: o["partition-specs"].append(dict(o["partition-specs"][0])))


@case("last-partition-id-too-low", 2, "LAST_PARTITION_ID")
def _last_partition(base: Base) -> None:
    """last-partition-id is below the partition field id 1000."""
    edit_json(base, lambda o: o.update({"last-partition-id": 999}))


@case("partition-source-missing", 2, "SOURCE_COLUMN_MISSING")
def _partition_source(base: Base) -> None:
    """A second spec partitions by a column id that no schema has."""
    def fn(o):
        o["partition-specs"].append({"spec-id": 1, "fields": [
            {"name": "x", "transform": "identity", "source-id": 99, "field-id": 1001}]})
        o["last-partition-id"] = 1001
    edit_json(base, fn)


@case("sort-order-zero", 2, "SORT_ORDER_ZERO")
def _sort_zero(base: Base) -> None:
    """Sort order 0 (reserved: unsorted) has a field."""
    edit_json(base, lambda o: o["sort-orders"][0]["fields"].append(
        {"transform": "identity", "source-id": 1, "direction": "asc", "null-order": "nulls-first"}))


@case("default-spec-missing", 2, "CURRENT_ID_MISSING")
def _default_spec(base: Base) -> None:
    """default-spec-id names no spec."""
    edit_json(base, lambda o: o.update({"default-spec-id": 5}))


@case("lineage-next-row-id-too-low", 3, "LINEAGE_NEXT_ROW_ID")
def _next_row_id_low(base: Base) -> None:
    """next-row-id is below the row ids the last data snapshot assigned."""
    edit_json(base, lambda o: o.update({"next-row-id": o["next-row-id"] - 1}))


@case("lineage-added-rows-wrong", 3, "LINEAGE_ADDED_ROWS")
def _added_rows(base: Base) -> None:
    """The current snapshot's added-rows says 5 more rows than its new manifests hold."""
    def fn(o):
        cur = next(s for s in snapshots(o) if s["snapshot-id"] == o["current-snapshot-id"])
        cur["added-rows"] += 5
        o["next-row-id"] += 5
    edit_json(base, fn)


@case("lineage-overlap", 3, "LINEAGE_SNAPSHOT")
def _lineage_overlap(base: Base) -> None:
    """Two snapshots claim the same row ids (an older snapshot's first-row-id moved up)."""
    def fn(o):
        snapshots(o)[0]["first-row-id"] = snapshots(o)[1]["first-row-id"]
    edit_json(base, fn)


@case("lineage-fields-in-v2", 2, "LINEAGE_BEFORE_V3")
def _lineage_v2(base: Base) -> None:
    """A v2 table with next-row-id."""
    edit_json(base, lambda o: o.update({"next-row-id": 10}))


@case("v4-in-file-system-catalog", 3, "V4_FILESYSTEM_CATALOG", catalog="hadoop", deletes=False)
def _v4_hadoop(base: Base) -> None:
    """A file-system catalog table whose metadata says format-version 4 (its files are v3)."""
    edit_json(base, lambda o: o.update({"format-version": 4}))


# -- manifest lists ------------------------------------------------------------------------------------

@case("manifest-list-missing", 2, "MANIFEST_LIST_UNREADABLE")
def _list_missing(base: Base) -> None:
    """The current snapshot's manifest list was deleted."""
    os.remove(current_list_path(base))


@case("manifest-list-truncated", 3, "MANIFEST_LIST_UNREADABLE")
def _list_truncated(base: Base) -> None:
    """The current manifest list was truncated."""
    p = current_list_path(base)
    data = open(p, "rb").read()
    write_raw(p, data[: len(data) - 40])


@case("manifest-list-duplicate", 2, "MANIFEST_LIST_DUPLICATE")
def _list_duplicate(base: Base) -> None:
    """A manifest listed twice in one manifest list."""
    rewrite_list(base, lambda ms: ms.append(ms[-1]))


@case("partition-summary-not-bounding", 2, "PARTITION_SUMMARY")
def _summary_bounds(base: Base) -> None:
    """A partition summary whose lower bound is above a live partition value."""
    from icectl.engine.conversions import to_bytes

    def fn(ms):
        for m in ms:
            if m.content == ManifestContent.DATA and m.partitions:
                p = m.partitions[0]
                m.partitions[0] = FieldSummary(p.contains_null, p.contains_nan, to_bytes("int", 30000), p.upper_bound)
    rewrite_list(base, fn)


@case("partition-summary-contains-null", 2, "PARTITION_SUMMARY")
def _summary_null(base: Base) -> None:
    """A live file has a null partition value but the summary says contains_null false."""
    t = base.table
    f = tables.write_data_file(t, [11], ["k"], tables.day_of("2026-01-03"))
    f.partition = (None,)
    commit_extra(base, [f])

    def fn(ms):
        for m in ms:
            if m.partitions and m.partitions[0].contains_null:
                p = m.partitions[0]
                m.partitions[0] = FieldSummary(False, p.contains_nan, p.lower_bound, p.upper_bound)
    rewrite_list(base, fn)


@case("manifest-counts", 2, "MANIFEST_COUNTS")
def _counts(base: Base) -> None:
    """added_files_count of a manifest is one too high."""
    def fn(ms):
        ms[0].added_files_count += 1
    rewrite_list(base, fn)


@case("manifest-length", 2, "MANIFEST_LENGTH")
def _length(base: Base) -> None:
    """manifest_length is one byte short."""
    def fn(ms):
        ms[0].manifest_length -= 1
    rewrite_list(base, fn)


@case("manifest-spec-unknown", 2, "MANIFEST_SPEC_UNKNOWN", "MANIFEST_HEADER")
def _spec_unknown(base: Base) -> None:
    """A manifest list names partition spec 7 (which the manifest header contradicts)."""
    def fn(ms):
        ms[-1].partition_spec_id = 7
    rewrite_list(base, fn)


@case("manifest-sequence-above-snapshot", 2, "MANIFEST_SEQUENCE")
def _manifest_seq(base: Base) -> None:
    """A manifest's sequence_number is above its snapshot's."""
    def fn(ms):
        ms[-1].sequence_number += 5
    rewrite_list(base, fn)


@case("manifest-content-mismatch", 2, "MANIFEST_CONTENT_MISMATCH")
def _content_mismatch(base: Base) -> None:
    """A data manifest listed as a delete manifest."""
    def fn(ms):
        for m in ms:
            if m.content == ManifestContent.DATA:
                m.content = ManifestContent.DELETES
                break
    rewrite_list(base, fn)


@case("relative-path-escapes-location", 4, "PATH_ESCAPES_LOCATION", deletes=False)
def _escape(base: Base) -> None:
    """A v4 manifest list names a manifest at ../../outside.avro."""
    def fn(ms):
        ms[0].manifest_path = "../../outside.avro"
    rewrite_list(base, fn)


@case("relative-path-in-v3", 3, "PATH_RELATIVE_BEFORE_V4")
def _relative_v3(base: Base) -> None:
    """A v3 manifest list names a manifest by a relative path."""
    loc = base.table.location

    def fn(ms):
        ms[0].manifest_path = os.path.relpath(ms[0].manifest_path, loc)
    rewrite_list(base, fn)


@case("lineage-manifest-without-first-row-id", 3, "LINEAGE_MANIFEST")
def _lineage_manifest(base: Base) -> None:
    """An older data manifest lost its first_row_id in the current manifest list."""
    def fn(ms):
        data = sorted((m for m in ms if m.content == ManifestContent.DATA), key=lambda m: m.first_row_id)
        data[0].first_row_id = None
    rewrite_list(base, fn)


@case("lineage-delete-manifest-row-id", 3, "LINEAGE_MANIFEST")
def _lineage_delete_manifest(base: Base) -> None:
    """A delete manifest with a first_row_id."""
    def fn(ms):
        for m in ms:
            if m.content == ManifestContent.DELETES:
                m.first_row_id = 0
    rewrite_list(base, fn)


# -- manifests ------------------------------------------------------------------------------------------

@case("manifest-missing", 2, "MANIFEST_UNREADABLE")
def _manifest_missing(base: Base) -> None:
    """A manifest of the current snapshot was deleted."""
    t = base.table
    os.remove(t.manifests(t.metadata.current_snapshot)[0].manifest_path)


@case("manifest-truncated", 2, "MANIFEST_UNREADABLE")
def _manifest_truncated(base: Base) -> None:
    """A manifest was cut in half."""
    t = base.table
    m = t.manifests(t.metadata.current_snapshot)[0]
    data = open(m.manifest_path, "rb").read()
    write_raw(m.manifest_path, data[: len(data) // 2])


@case("manifest-garbage", 3, "MANIFEST_UNREADABLE")
def _manifest_garbage(base: Base) -> None:
    """A manifest overwritten with random bytes of the same length."""
    t = base.table
    m = t.manifests(t.metadata.current_snapshot)[-1]
    write_raw(m.manifest_path, os.urandom(m.manifest_length))


@case("manifest-wrong-schema", 2, "MANIFEST_UNREADABLE")
def _manifest_schema(base: Base) -> None:
    """A manifest that is valid Avro with the wrong schema."""
    import io

    import fastavro

    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema({"type": "record", "name": "x", "fields": [
        {"name": "a", "type": "int"}]}), [{"a": 1}])
    rewrite_manifest(base, newest_data_manifest(base), lambda e: None, recount=False, data=buf.getvalue())


@case("duplicate-live-file", 2, "DUPLICATE_LIVE_FILE")
def _duplicate_live(base: Base) -> None:
    """A later append adds a data file that is already live."""
    commit_extra(base, [base.data_files[0]])


@case("invalid-entry-status", 2, "ENTRY_STATUS")
def _status(base: Base) -> None:
    """An entry with status 3."""
    def fn(entries):
        entries[0].status = 3
    rewrite_manifest(base, newest_data_manifest(base), fn, recount=False)


@case("existing-without-sequence-numbers", 2, "ENTRY_INHERITANCE")
def _existing_no_seq(base: Base) -> None:
    """An EXISTING entry written without its sequence numbers (they must be explicit)."""
    def fn(entries):
        entries[0].status = EntryStatus.EXISTING
        entries[0].sequence_number = None
        entries[0].file_sequence_number = None
    rewrite_manifest(base, newest_data_manifest(base), fn)


@case("bound-wrong-length", 2, "BOUND_TYPE")
def _bound_type(base: Base) -> None:
    """A long column's lower bound is 3 bytes."""
    def fn(entries):
        entries[0].data_file.lower_bounds[1] = b"\x01\x02\x03"
    rewrite_manifest(base, newest_data_manifest(base), fn)


@case("bound-order", 2, "BOUND_ORDER")
def _bound_order(base: Base) -> None:
    """A lower bound above its upper bound."""
    from icectl.engine.conversions import to_bytes

    def fn(entries):
        entries[0].data_file.lower_bounds[1] = to_bytes("long", 1000)
    rewrite_manifest(base, newest_data_manifest(base), fn)


@case("equality-delete-without-ids", 2, "EQUALITY_IDS")
def _eq_ids(base: Base) -> None:
    """An equality delete file without equality_ids."""
    def fn(entries):
        for e in entries:
            if e.data_file.content == FileContent.EQUALITY_DELETES:
                e.data_file.equality_ids = None
    rewrite_manifest(base, delete_manifest, fn)


@case("second-deletion-vector", 3, "DV_DUPLICATE")
def _second_dv(base: Base) -> None:
    """A second deletion vector for a data file that already has one."""
    t = base.table
    commit_extra(base, [tables.write_dv(t, base.data_files[0], [1])])


@case("dv-for-missing-data-file", 3, "DV_REFERENCED_FILE_NOT_LIVE")
def _dv_orphan(base: Base) -> None:
    """A deletion vector for a data file the table does not have."""
    t = base.table
    ghost = DataFile(os.path.join(t.location, "data", "ghost.parquet"), "parquet", base.data_files[0].partition,
                     5, 100)
    commit_extra(base, [tables.write_dv(t, ghost, [1])])


@case("dv-in-v2", 2, "DV_BEFORE_V3", "DV_FIELDS")
def _dv_v2(base: Base) -> None:
    """A deletion vector in a v2 table (whose manifests cannot even hold its offset)."""
    t = base.table
    commit_extra(base, [tables.write_dv(t, base.data_files[1], [0])])


@case("dv-range-outside-file", 3, "DV_FIELDS")
def _dv_range(base: Base) -> None:
    """A deletion vector whose content range runs past its Puffin file."""
    def fn(entries):
        entries[0].data_file.content_offset = entries[0].data_file.file_size_in_bytes
    rewrite_manifest(base, delete_manifest, fn)


@case("v3-new-position-delete-file", 3, "V3_NEW_POSITION_DELETE_FILE")
def _v3_pos_delete(base: Base) -> None:
    """A v3 snapshot adds a Parquet position delete file instead of a deletion vector."""
    t = base.table
    commit_extra(base, [tables.write_position_delete(t, base.data_files[1], [1])])


@case("delete-file-in-v1", 1, "DELETE_FILE_IN_V1", "MANIFEST_HEADER")
def _delete_v1(base: Base) -> None:
    """A v1 table whose manifest list gains a (v2-written) delete manifest."""
    t = base.table
    md = t.metadata
    pos = tables.write_position_delete(t, base.data_files[0], [0])
    snap = md.current_snapshot
    entries = [ManifestEntry(EntryStatus.ADDED, snap.snapshot_id, None, None, pos)]
    data = write_manifest(entries, format_version=2, spec=md.spec, schema=md.schema, content=ManifestContent.DELETES)
    path = os.path.join(t.location, "metadata", "v1-deletes-m0.avro")
    t.io.write(path, data)

    def fn(ms):
        ms.append(ManifestFile(path, len(data), 0, ManifestContent.DELETES, 0, 0, snap.snapshot_id, 1, 0, 0, 1, 0, 0))
    path_list = t.resolve(snap.manifest_list)
    ms = read_manifest_list(t.io.read(path_list))
    fn(ms)
    t.io.write(path_list, write_manifest_list(ms, format_version=2, snapshot_id=snap.snapshot_id,
                                              parent_snapshot_id=snap.parent_snapshot_id, sequence_number=0),
               overwrite=True)


__all__ = ["CASES", "Case", "build_case", "parse_table_metadata"]
