"""Defects in the table metadata JSON."""
from __future__ import annotations

from .helpers import (
    case,
    edit_json,
    snapshots,
    write_raw,
)
from .tables import Base


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


@case("current-schema-missing", 2, "CURRENT_ID_MISSING")
def _current_schema_missing(base: Base) -> None:
    """current-schema-id names no schema (validate reports it; it does not refuse the table)."""
    edit_json(base, lambda o: o.update({"current-schema-id": 7}))


@case("default-sort-order-missing", 2, "CURRENT_ID_MISSING")
def _default_order_missing(base: Base) -> None:
    """default-sort-order-id names no sort order."""
    edit_json(base, lambda o: o.update({"default-sort-order-id": 7}))


@case("v1-schemas-without-current-schema-id", 1, "META_FIELD_MISSING")
def _v1_schemas_without_current(base: Base) -> None:
    """A v1 table with 'schemas' but no 'current-schema-id' (Iceberg Java refuses it)."""
    edit_json(base, lambda o: o.pop("current-schema-id"))


@case("schema-not-a-struct", 2, "META_INVALID")
def _schema_not_struct(base: Base) -> None:
    """A schema object without "type": "struct" (Iceberg Java refuses it)."""
    edit_json(base, lambda o: o["schemas"][0].pop("type"))


@case("empty-sort-orders", 2, "META_INVALID")
def _empty_sort_orders(base: Base) -> None:
    """A v2 table whose sort-orders list is empty (Iceberg Java refuses it)."""
    edit_json(base, lambda o: o.update({"sort-orders": []}))


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
