"""Defects in manifest lists and manifests."""
from __future__ import annotations

import os

from icectl.formats.manifest import (
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

from . import tables
from .helpers import (
    case,
    commit_extra,
    current_list_path,
    delete_manifest,
    newest_data_manifest,
    rewrite_list,
    rewrite_manifest,
    write_raw,
)
from .tables import Base


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
    from icectl.spec.conversions import to_bytes

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


@case("duplicate-live-file", 2, "DUPLICATE_LIVE_FILE", "DUPLICATE_FILE_CONFLICT")
def _duplicate_live(base: Base) -> None:
    """A later append adds a data file that is already live (its second entry has another data
    sequence number: the entries disagree)."""
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
    from icectl.spec.conversions import to_bytes

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
