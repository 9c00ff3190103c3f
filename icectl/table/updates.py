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

from icectl.spec.metadata import Snapshot, SnapshotRef, StatisticsFile
from icectl.spec.partitioning import PartitionSpec, SortOrder
from icectl.spec.types import Schema

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
