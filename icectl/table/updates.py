"""Table updates: the REST catalog spec's ``TableUpdate`` objects (``open-api/rest-catalog-open-api.yaml``,
components ``AssignUUIDUpdate`` ... ``RemoveEncryptionKeyUpdate``), with their JSON names and shapes.

Every change icectl makes to a table is a list of these (and of requirements, see
:mod:`icectl.table.requirements`): a REST catalog receives them as they are; the SQL and
file-system catalogs apply them with :mod:`icectl.table.builder`, the only code that produces new
table metadata.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from icectl.errors import InvalidMetadataError
from icectl.spec.metadata import (
    Snapshot,
    SnapshotRef,
    StatisticsFile,
    ref_from_json,
    snapshot_from_json,
    statistics_from_json,
)
from icectl.spec.partitioning import PartitionSpec, SortOrder, sort_order_from_json, spec_from_json
from icectl.spec.types import Schema, schema_from_json

LAST_ADDED = -1  # "set-current-schema" (and the other set-default updates): the id last added


@dataclass(frozen=True)
class TableUpdate:
    """One ``TableUpdate``; ``action`` is its discriminator."""

    action: ClassVar[str] = ""

    def to_json(self, format_version: int = 4) -> dict[str, Any]:
        """The update's JSON object. ``format_version`` is the table's (after the updates before
        this one): it decides the fields of a snapshot or spec, as the metadata file's JSON."""
        return {"action": self.action, **self._fields(format_version)}

    def _fields(self, format_version: int) -> dict[str, Any]:  # pragma: no cover - overridden
        raise TypeError(type(self).__name__)


@dataclass(frozen=True)
class AssignUUID(TableUpdate):
    uuid: str
    action: ClassVar[str] = "assign-uuid"

    def _fields(self, format_version: int) -> dict[str, Any]:
        return {"uuid": self.uuid}


@dataclass(frozen=True)
class UpgradeFormatVersion(TableUpdate):
    format_version: int
    action: ClassVar[str] = "upgrade-format-version"

    def _fields(self, format_version: int) -> dict[str, Any]:
        return {"format-version": self.format_version}


@dataclass(frozen=True)
class AddSchema(TableUpdate):
    schema: Schema
    # Deprecated in the REST spec (the server computes it) but required by older servers: sent
    # when known, as Iceberg Java 1.10's clients still send it.
    last_column_id: int | None = None
    action: ClassVar[str] = "add-schema"

    def _fields(self, format_version: int) -> dict[str, Any]:
        d: dict[str, Any] = {"schema": self.schema.to_json()}
        if self.last_column_id is not None:
            d["last-column-id"] = self.last_column_id
        return d


@dataclass(frozen=True)
class SetCurrentSchema(TableUpdate):
    schema_id: int  # -1: the schema last added
    action: ClassVar[str] = "set-current-schema"

    def _fields(self, format_version: int) -> dict[str, Any]:
        return {"schema-id": self.schema_id}


@dataclass(frozen=True)
class AddSpec(TableUpdate):
    spec: PartitionSpec
    action: ClassVar[str] = "add-spec"

    def _fields(self, format_version: int) -> dict[str, Any]:
        return {"spec": self.spec.to_json(format_version)}


@dataclass(frozen=True)
class SetDefaultSpec(TableUpdate):
    spec_id: int  # -1: the spec last added
    action: ClassVar[str] = "set-default-spec"

    def _fields(self, format_version: int) -> dict[str, Any]:
        return {"spec-id": self.spec_id}


@dataclass(frozen=True)
class AddSortOrder(TableUpdate):
    sort_order: SortOrder
    action: ClassVar[str] = "add-sort-order"

    def _fields(self, format_version: int) -> dict[str, Any]:
        return {"sort-order": self.sort_order.to_json()}


@dataclass(frozen=True)
class SetDefaultSortOrder(TableUpdate):
    sort_order_id: int  # -1: the order last added
    action: ClassVar[str] = "set-default-sort-order"

    def _fields(self, format_version: int) -> dict[str, Any]:
        return {"sort-order-id": self.sort_order_id}


@dataclass(frozen=True)
class AddSnapshot(TableUpdate):
    snapshot: Snapshot
    action: ClassVar[str] = "add-snapshot"

    def _fields(self, format_version: int) -> dict[str, Any]:
        return {"snapshot": self.snapshot.to_json(format_version)}


@dataclass(frozen=True)
class SetSnapshotRef(TableUpdate):
    ref_name: str
    ref: SnapshotRef
    action: ClassVar[str] = "set-snapshot-ref"

    def _fields(self, format_version: int) -> dict[str, Any]:
        return {"ref-name": self.ref_name, **self.ref.to_json()}


@dataclass(frozen=True)
class RemoveSnapshots(TableUpdate):
    snapshot_ids: tuple[int, ...]
    action: ClassVar[str] = "remove-snapshots"

    def _fields(self, format_version: int) -> dict[str, Any]:
        return {"snapshot-ids": list(self.snapshot_ids)}


@dataclass(frozen=True)
class RemoveSnapshotRef(TableUpdate):
    ref_name: str
    action: ClassVar[str] = "remove-snapshot-ref"

    def _fields(self, format_version: int) -> dict[str, Any]:
        return {"ref-name": self.ref_name}


@dataclass(frozen=True)
class SetLocation(TableUpdate):
    location: str
    action: ClassVar[str] = "set-location"

    def _fields(self, format_version: int) -> dict[str, Any]:
        return {"location": self.location}


@dataclass(frozen=True)
class SetProperties(TableUpdate):
    updates: dict[str, str] = field(default_factory=dict)
    action: ClassVar[str] = "set-properties"

    def _fields(self, format_version: int) -> dict[str, Any]:
        return {"updates": dict(self.updates)}


@dataclass(frozen=True)
class RemoveProperties(TableUpdate):
    removals: tuple[str, ...] = ()
    action: ClassVar[str] = "remove-properties"

    def _fields(self, format_version: int) -> dict[str, Any]:
        return {"removals": list(self.removals)}


@dataclass(frozen=True)
class SetStatistics(TableUpdate):
    statistics: StatisticsFile
    action: ClassVar[str] = "set-statistics"

    def _fields(self, format_version: int) -> dict[str, Any]:
        # "snapshot-id" is deprecated (it repeats statistics.snapshot-id) but older servers need it.
        return {"snapshot-id": self.statistics.snapshot_id, "statistics": self.statistics.to_json()}


@dataclass(frozen=True)
class RemoveStatistics(TableUpdate):
    snapshot_id: int
    action: ClassVar[str] = "remove-statistics"

    def _fields(self, format_version: int) -> dict[str, Any]:
        return {"snapshot-id": self.snapshot_id}


@dataclass(frozen=True)
class SetPartitionStatistics(TableUpdate):
    partition_statistics: StatisticsFile
    action: ClassVar[str] = "set-partition-statistics"

    def _fields(self, format_version: int) -> dict[str, Any]:
        return {"partition-statistics": self.partition_statistics.to_json()}


@dataclass(frozen=True)
class RemovePartitionStatistics(TableUpdate):
    snapshot_id: int
    action: ClassVar[str] = "remove-partition-statistics"

    def _fields(self, format_version: int) -> dict[str, Any]:
        return {"snapshot-id": self.snapshot_id}


@dataclass(frozen=True)
class RemovePartitionSpecs(TableUpdate):
    spec_ids: tuple[int, ...]
    action: ClassVar[str] = "remove-partition-specs"

    def _fields(self, format_version: int) -> dict[str, Any]:
        return {"spec-ids": list(self.spec_ids)}


@dataclass(frozen=True)
class RemoveSchemas(TableUpdate):
    schema_ids: tuple[int, ...]
    action: ClassVar[str] = "remove-schemas"

    def _fields(self, format_version: int) -> dict[str, Any]:
        return {"schema-ids": list(self.schema_ids)}


@dataclass(frozen=True)
class AddEncryptionKey(TableUpdate):
    encryption_key: dict[str, Any]  # the spec's EncryptedKey object, kept as JSON
    action: ClassVar[str] = "add-encryption-key"

    def _fields(self, format_version: int) -> dict[str, Any]:
        return {"encryption-key": dict(self.encryption_key)}


@dataclass(frozen=True)
class RemoveEncryptionKey(TableUpdate):
    key_id: str
    action: ClassVar[str] = "remove-encryption-key"

    def _fields(self, format_version: int) -> dict[str, Any]:
        return {"key-id": self.key_id}


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


def updates_json(updates: list[TableUpdate], format_version: int) -> list[dict[str, Any]]:
    """The JSON of a list of updates, each written for the format version in force when it applies
    (an ``upgrade-format-version`` changes it for the updates after it)."""
    out = []
    v = format_version
    for u in updates:
        out.append(u.to_json(v))
        if isinstance(u, UpgradeFormatVersion):
            v = u.format_version
    return out
