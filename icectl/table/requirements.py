"""Table requirements: the REST catalog spec's ``TableRequirement`` objects (``AssertCreate`` ...
``AssertDefaultSortOrderId``), each checked against the table's current metadata before a commit's
updates apply, and :func:`requirements_for`, which derives them from the updates as Iceberg Java's
``UpdateRequirements`` does.

A failed requirement means the table changed under the commit: :class:`RequirementFailed` (a
commit conflict, exit code 5), which an operation answers by re-reading the table and planning
again (spec: "Commit Conflict Resolution and Retry").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from icectl.errors import CommitConflictError, InvalidMetadataError
from icectl.spec.metadata import MAIN_BRANCH, TableMetadata
from icectl.table.updates import (
    AddSchema,
    AddSpec,
    RemovePartitionSpecs,
    RemoveSchemas,
    SetCurrentSchema,
    SetDefaultSortOrder,
    SetDefaultSpec,
    SetSnapshotRef,
    TableUpdate,
)


class RequirementFailed(CommitConflictError):
    """A requirement does not hold for the table's current metadata: it changed concurrently."""


@dataclass(frozen=True)
class TableRequirement:
    type: ClassVar[str] = ""

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, **self._fields()}

    def _fields(self) -> dict[str, Any]:
        return {}

    def validate(self, base: TableMetadata | None) -> None:  # pragma: no cover - overridden
        raise TypeError(type(self).__name__)


def _fail(message: str) -> RequirementFailed:
    return RequirementFailed(f"requirement failed: {message}")


@dataclass(frozen=True)
class AssertCreate(TableRequirement):
    """The table must not exist yet."""

    type: ClassVar[str] = "assert-create"

    def validate(self, base: TableMetadata | None) -> None:
        if base is not None:
            raise _fail("the table already exists")


@dataclass(frozen=True)
class AssertTableUUID(TableRequirement):
    uuid: str
    type: ClassVar[str] = "assert-table-uuid"

    def _fields(self) -> dict[str, Any]:
        return {"uuid": self.uuid}

    def validate(self, base: TableMetadata | None) -> None:
        _exists(base)
        if (base.table_uuid or "").lower() != self.uuid.lower():
            raise _fail(f"the table's UUID is {base.table_uuid}, not {self.uuid} (it was replaced)")


@dataclass(frozen=True)
class AssertRefSnapshotId(TableRequirement):
    """The branch or tag ``ref`` points at ``snapshot_id``; with None, the ref must not exist."""

    ref: str
    snapshot_id: int | None
    type: ClassVar[str] = "assert-ref-snapshot-id"

    def _fields(self) -> dict[str, Any]:
        return {"ref": self.ref, "snapshot-id": self.snapshot_id}

    def validate(self, base: TableMetadata | None) -> None:
        _exists(base)
        current = base.refs.get(self.ref)
        if current is not None:
            if self.snapshot_id is None:
                raise _fail(f"{current.ref_type} {self.ref} was created concurrently")
            if current.snapshot_id != self.snapshot_id:
                raise _fail(f"{current.ref_type} {self.ref} has changed: it points at {current.snapshot_id}, "
                            f"not {self.snapshot_id}")
        elif self.snapshot_id is not None:
            raise _fail(f"branch or tag {self.ref} is missing (expected at {self.snapshot_id})")


@dataclass(frozen=True)
class _AssertInt(TableRequirement):
    value: int
    key: ClassVar[str] = ""
    what: ClassVar[str] = ""

    def _fields(self) -> dict[str, Any]:
        return {self.key: self.value}

    def _current(self, base: TableMetadata) -> int:  # pragma: no cover - overridden
        raise TypeError(type(self).__name__)

    def validate(self, base: TableMetadata | None) -> None:
        _exists(base)
        if self._current(base) != self.value:
            raise _fail(f"{self.what} changed: it is {self._current(base)}, not {self.value}")


@dataclass(frozen=True)
class AssertLastAssignedFieldId(_AssertInt):
    type: ClassVar[str] = "assert-last-assigned-field-id"
    key: ClassVar[str] = "last-assigned-field-id"
    what: ClassVar[str] = "the last assigned field id"

    def _current(self, base: TableMetadata) -> int:
        return base.last_column_id


@dataclass(frozen=True)
class AssertCurrentSchemaId(_AssertInt):
    type: ClassVar[str] = "assert-current-schema-id"
    key: ClassVar[str] = "current-schema-id"
    what: ClassVar[str] = "the current schema id"

    def _current(self, base: TableMetadata) -> int:
        return base.current_schema_id


@dataclass(frozen=True)
class AssertLastAssignedPartitionId(_AssertInt):
    type: ClassVar[str] = "assert-last-assigned-partition-id"
    key: ClassVar[str] = "last-assigned-partition-id"
    what: ClassVar[str] = "the last assigned partition id"

    def _current(self, base: TableMetadata) -> int:
        return base.last_partition_id


@dataclass(frozen=True)
class AssertDefaultSpecId(_AssertInt):
    type: ClassVar[str] = "assert-default-spec-id"
    key: ClassVar[str] = "default-spec-id"
    what: ClassVar[str] = "the default partition spec id"

    def _current(self, base: TableMetadata) -> int:
        return base.default_spec_id


@dataclass(frozen=True)
class AssertDefaultSortOrderId(_AssertInt):
    type: ClassVar[str] = "assert-default-sort-order-id"
    key: ClassVar[str] = "default-sort-order-id"
    what: ClassVar[str] = "the default sort order id"

    def _current(self, base: TableMetadata) -> int:
        return base.default_sort_order_id


def _exists(base: TableMetadata | None) -> None:
    if base is None:
        raise _fail("the table does not exist (it was dropped)")


REQUIREMENT_TYPES: dict[str, type[TableRequirement]] = {
    cls.type: cls for cls in (AssertCreate, AssertTableUUID, AssertRefSnapshotId, AssertLastAssignedFieldId,
                              AssertCurrentSchemaId, AssertLastAssignedPartitionId, AssertDefaultSpecId,
                              AssertDefaultSortOrderId)
}


def requirement_from_json(obj: Any) -> TableRequirement:
    if not isinstance(obj, dict) or obj.get("type") not in REQUIREMENT_TYPES:
        raise InvalidMetadataError(f"unknown table requirement {obj!r}"[:200])
    cls = REQUIREMENT_TYPES[obj["type"]]
    try:
        if cls is AssertCreate:
            return AssertCreate()
        if cls is AssertTableUUID:
            return AssertTableUUID(str(obj["uuid"]))
        if cls is AssertRefSnapshotId:
            sid = obj["snapshot-id"]
            return AssertRefSnapshotId(str(obj["ref"]), int(sid) if sid is not None else None)
        return cls(int(obj[cls.key]))  # type: ignore[call-arg, attr-defined]
    except KeyError as e:
        raise InvalidMetadataError(f"requirement {obj['type']!r} is missing {e.args[0]!r}") from None


def requirements_for(base: TableMetadata | None, updates: list[TableUpdate]) -> list[TableRequirement]:
    """The requirements that make ``updates`` safe to apply to a table that may have changed since
    ``base`` was read, as Iceberg Java's ``UpdateRequirements.forUpdateTable`` (``forCreateTable``
    when ``base`` is None) derives them: the table's UUID; each changed ref as it was; the last
    assigned field and partition ids when a schema or spec is added; the current schema, default
    spec and default sort order when they are set; no branch moved when schemas or specs are removed."""
    if base is None:
        return [AssertCreate()]
    out: list[TableRequirement] = [AssertTableUUID(base.table_uuid or "")]
    changed_refs: set[str] = set()
    flags: set[str] = set()

    def once(flag: str, req: TableRequirement) -> None:
        if flag not in flags:
            flags.add(flag)
            out.append(req)

    def no_branch_moved() -> None:
        for name, ref in base.refs.items():
            if ref.is_branch and name != MAIN_BRANCH:
                out.append(AssertRefSnapshotId(name, ref.snapshot_id))

    for u in updates:
        if isinstance(u, SetSnapshotRef):
            if u.ref_name not in changed_refs:
                changed_refs.add(u.ref_name)
                ref = base.refs.get(u.ref_name)
                out.append(AssertRefSnapshotId(u.ref_name, ref.snapshot_id if ref else None))
        elif isinstance(u, AddSchema):
            once("schema-added", AssertLastAssignedFieldId(base.last_column_id))
        elif isinstance(u, SetCurrentSchema):
            once("schema-set", AssertCurrentSchemaId(base.current_schema_id))
        elif isinstance(u, AddSpec):
            once("spec-added", AssertLastAssignedPartitionId(base.last_partition_id))
        elif isinstance(u, SetDefaultSpec):
            once("spec-set", AssertDefaultSpecId(base.default_spec_id))
        elif isinstance(u, SetDefaultSortOrder):
            once("order-set", AssertDefaultSortOrderId(base.default_sort_order_id))
        elif isinstance(u, RemovePartitionSpecs):
            once("spec-set", AssertDefaultSpecId(base.default_spec_id))
            no_branch_moved()
        elif isinstance(u, RemoveSchemas):
            once("schema-set", AssertCurrentSchemaId(base.current_schema_id))
            no_branch_moved()
    return out


def validate_requirements(requirements: list[TableRequirement], base: TableMetadata | None) -> None:
    for r in requirements:
        r.validate(base)
