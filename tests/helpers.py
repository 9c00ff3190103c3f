"""Shortcuts the tests (and bench/) use to set tables up, built on icectl's public API: create a
table from its compact schema form, commit a fast append or any snapshot change once, and parse
a ``TableUpdate`` back from its JSON (the inverse of ``TableUpdate.to_json``, for round trips).
None of this is part of icectl: commands plan and commit through ``icectl.ops``."""
from __future__ import annotations

from typing import Any

from icectl.errors import InvalidMetadataError
from icectl.formats.manifest import DataFile, FileContent
from icectl.ops.evolve.create import apply_create, plan_create
from icectl.spec.metadata import MAIN_BRANCH, ref_from_json, snapshot_from_json, statistics_from_json
from icectl.spec.partitioning import sort_order_from_json, spec_from_json
from icectl.spec.types import schema_from_json
from icectl.table.identifier import Identifier
from icectl.table.loaded import Table
from icectl.table.snapshot_producer import SnapshotChange, build_snapshot
from icectl.table.transaction import Transaction
from icectl.table.updates import (
    AddEncryptionKey, AddSchema, AddSnapshot, AddSortOrder, AddSpec, AssignUUID, RemoveEncryptionKey,
    RemovePartitionSpecs, RemovePartitionStatistics, RemoveProperties, RemoveSchemas, RemoveSnapshotRef,
    RemoveSnapshots, RemoveStatistics, SetCurrentSchema, SetDefaultSortOrder, SetDefaultSpec, SetLocation,
    SetPartitionStatistics, SetProperties, SetSnapshotRef, SetStatistics, TableUpdate, UpgradeFormatVersion)


def create_table(catalog: Any, ident: Identifier, *, schema_text: str, partition_by: str | None = None,
                 sort_by: str | None = None, properties: list[str] | dict[str, str] | None = None,
                 format_version: int = 2, location: str | None = None, created_ms: int | None = None) -> Table:
    """Create a table from the compact schema form (or a schema JSON file) and expressions;
    ``created_ms`` is its first ``last-updated-ms`` (default: now)."""
    plan = plan_create(catalog, ident, schema_text=schema_text, partition_by=partition_by, sort_by=sort_by,
                       properties=properties, format_version=format_version, location=location, created_ms=created_ms)
    return apply_create(catalog, plan, now_ms=created_ms)


def append_files(table: Table, files: list[DataFile], *, branch: str = MAIN_BRANCH,
                 timestamp_ms: int | None = None) -> Table:
    """Commit a fast append of ``files`` (data files, or delete files for a row delta)."""
    # As Iceberg Java's AppendFiles / RowDelta name them: only delete files added is "delete"
    # (spec "Snapshots": "... and/or delete files were added to delete rows").
    if all(f.content == FileContent.DATA for f in files):
        op = "append"
    elif all(f.content != FileContent.DATA for f in files):
        op = "delete"
    else:
        op = "overwrite"
    return commit_snapshot(table, SnapshotChange(op, added=list(files)), branch=branch, timestamp_ms=timestamp_ms)


def commit_snapshot(table: Table, change: SnapshotChange, *, branch: str = MAIN_BRANCH,
                    timestamp_ms: int | None = None) -> Table:
    """Write a snapshot of ``change`` on ``branch`` and commit it once (no re-plan: a conflict
    fails it, and removes what it wrote); return the table after it."""
    txn = Transaction(table)
    return txn.stage(build_snapshot(txn, change, branch=branch, timestamp_ms=timestamp_ms)).commit().table


def update_from_json(obj: Any) -> TableUpdate:
    """Parse one ``TableUpdate`` object (as a REST server receives it)."""
    if not isinstance(obj, dict) or not isinstance(obj.get("action"), str):
        raise InvalidMetadataError(f"a table update must be an object with an 'action': {obj!r}"[:200])
    action = obj["action"]
    try:
        if action == "assign-uuid":
            return AssignUUID(str(obj["uuid"]))
        if action == "upgrade-format-version":
            return UpgradeFormatVersion(int(obj["format-version"]))
        if action == "add-schema":
            lc = obj.get("last-column-id")
            return AddSchema(schema_from_json(obj["schema"]), int(lc) if lc is not None else None)
        if action == "set-current-schema":
            return SetCurrentSchema(int(obj["schema-id"]))
        if action == "add-spec":
            return AddSpec(spec_from_json(obj["spec"]))
        if action == "set-default-spec":
            return SetDefaultSpec(int(obj["spec-id"]))
        if action == "add-sort-order":
            return AddSortOrder(sort_order_from_json(obj["sort-order"]))
        if action == "set-default-sort-order":
            return SetDefaultSortOrder(int(obj["sort-order-id"]))
        if action == "add-snapshot":
            return AddSnapshot(snapshot_from_json(obj["snapshot"]))
        if action == "set-snapshot-ref":
            return SetSnapshotRef(str(obj["ref-name"]),
                                  ref_from_json({k: v for k, v in obj.items() if k not in ("action", "ref-name")}))
        if action == "remove-snapshots":
            return RemoveSnapshots(tuple(int(i) for i in obj["snapshot-ids"]))
        if action == "remove-snapshot-ref":
            return RemoveSnapshotRef(str(obj["ref-name"]))
        if action == "set-location":
            return SetLocation(str(obj["location"]))
        if action == "set-properties":
            return SetProperties({str(k): str(v) for k, v in obj["updates"].items()})
        if action == "remove-properties":
            return RemoveProperties(tuple(str(k) for k in obj["removals"]))
        if action == "set-statistics":
            return SetStatistics(statistics_from_json(obj["statistics"]))
        if action == "remove-statistics":
            return RemoveStatistics(int(obj["snapshot-id"]))
        if action == "set-partition-statistics":
            return SetPartitionStatistics(statistics_from_json(obj["partition-statistics"]))
        if action == "remove-partition-statistics":
            return RemovePartitionStatistics(int(obj["snapshot-id"]))
        if action == "remove-partition-specs":
            return RemovePartitionSpecs(tuple(int(i) for i in obj["spec-ids"]))
        if action == "remove-schemas":
            return RemoveSchemas(tuple(int(i) for i in obj["schema-ids"]))
        if action == "add-encryption-key":
            return AddEncryptionKey(dict(obj["encryption-key"]))
        if action == "remove-encryption-key":
            return RemoveEncryptionKey(str(obj["key-id"]))
    except KeyError as e:
        raise InvalidMetadataError(f"table update {action!r} is missing {e.args[0]!r}") from None
    except (TypeError, ValueError, AttributeError) as e:
        raise InvalidMetadataError(f"invalid table update {action!r}: {e}") from None
    raise InvalidMetadataError(f"unknown table update action {action!r}")


def live_entry_rows(t: Table) -> list[tuple]:
    """The current snapshot's live entries as sorted tuples (path, content, snapshot id, data and
    file sequence numbers, first row id, record count): what a repair must leave unchanged."""
    return sorted((e.data_file.file_path, int(e.data_file.content), e.snapshot_id, e.sequence_number,
                   e.file_sequence_number, e.data_file.first_row_id, e.data_file.record_count)
                  for e in t.live_entries(t.metadata.current_snapshot))
