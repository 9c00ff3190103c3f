"""The metadata builder: the only code that produces new table metadata.

It applies :mod:`icectl.table.updates` in order to a base (None when a table is created) and
enforces on each the rules of the table's format version, as Iceberg Java's
``TableMetadata.Builder`` does (the reference for every check and message here): sequence numbers
of added snapshots, ``last-column-id`` and ``last-partition-id``, schema, spec and sort order ids
reused for identical ones, the snapshot log (intermediate and removed snapshots), the metadata
log (``write.metadata.previous-versions-max``), v3 row lineage's ``next-row-id``, and v4 paths
(spec: "Table Metadata Fields", "Snapshots", "Sequence Numbers", "Row Lineage"; v4 walk-through:
"Relative paths").

A change the table's rules forbid raises :class:`InvalidUpdateError` (exit code 2) before
anything is written; one that only a concurrent commit can have caused (a snapshot behind the
table's sequence number or next-row-id) raises :class:`StaleUpdateError`, a conflict that an
operation answers by re-reading and planning again.
"""
from __future__ import annotations

import posixpath
import time
from dataclasses import replace
from typing import Any, Callable, Iterable

from icectl.errors import CommitConflictError
from icectl.io import has_scheme
from icectl.spec.metadata import (
    INITIAL_SEQUENCE_NUMBER,
    MAIN_BRANCH,
    MAX_FORMAT_VERSION,
    MetadataLogEntry,
    Snapshot,
    SnapshotLogEntry,
    SnapshotRef,
    StatisticsFile,
    TableMetadata,
)
from icectl.spec.partitioning import PARTITION_DATA_ID_START, UNSORTED, PartitionSpec, SortOrder
from icectl.spec.properties import METADATA_PREVIOUS_VERSIONS_MAX
from icectl.spec.types import Schema
from icectl.table.compatibility import (
    InvalidUpdateError,
    check_partition_names,
    check_schema_version,
    check_sort_order,
    check_spec,
    compatible_specs,
    same_schema,
    sequential_ids,
)
from icectl.table.updates import (
    LAST_ADDED,
    AddEncryptionKey,
    AddSchema,
    AddSnapshot,
    AddSortOrder,
    AddSpec,
    AssignUUID,
    RemoveEncryptionKey,
    RemovePartitionSpecs,
    RemovePartitionStatistics,
    RemoveProperties,
    RemoveSchemas,
    RemoveSnapshotRef,
    RemoveSnapshots,
    RemoveStatistics,
    SetCurrentSchema,
    SetDefaultSortOrder,
    SetDefaultSpec,
    SetLocation,
    SetPartitionStatistics,
    SetProperties,
    SetSnapshotRef,
    SetStatistics,
    TableUpdate,
    UpgradeFormatVersion,
)

INITIAL_SPEC_ID = 0
INITIAL_SORT_ORDER_ID = 1
INITIAL_SCHEMA_ID = 0


class StaleUpdateError(CommitConflictError):
    """An update built against an older state of the table (another commit came first)."""


class MetadataBuilder:
    """Applies updates to a base (or to nothing, for a new table) and builds the new metadata.

    ``now_ms`` is the commit time (tests and ``icectl demo`` pass one; default: the clock).
    """

    def __init__(self, base: TableMetadata | None, *, format_version: int | None = None,
                 now_ms: int | None = None):
        self.base = base
        self.now_ms = now_ms
        self.changes: list[TableUpdate] = []
        self._last_added_schema: int | None = None
        self._last_added_spec: int | None = None
        self._last_added_order: int | None = None
        self._last_updated_ms: int | None = None
        self._added_snapshots: set[int] = set()
        if base is None:
            v = format_version or 2
            if not 1 <= v <= MAX_FORMAT_VERSION:
                raise InvalidUpdateError(f"unsupported format version {v} (icectl writes 1 to {MAX_FORMAT_VERSION})")
            self.format_version = v
            self.uuid: str | None = None
            self.location: str | None = None
            self.last_sequence_number = INITIAL_SEQUENCE_NUMBER
            self.last_column_id = 0
            self.schemas: list[Schema] = []
            self.current_schema_id = -1
            self.specs: list[PartitionSpec] = []
            self.default_spec_id = -1
            self.last_partition_id = PARTITION_DATA_ID_START - 1
            self.sort_orders: list[SortOrder] = []
            self.default_sort_order_id = -1
            self.properties: dict[str, str] = {}
            self.current_snapshot_id: int | None = None
            self.snapshots: list[Snapshot] = []
            self.snapshot_log: list[SnapshotLogEntry] = []
            self.refs: dict[str, SnapshotRef] = {}
            self.statistics: dict[int, StatisticsFile] = {}
            self.partition_statistics: dict[int, StatisticsFile] = {}
            self.next_row_id = 0
            self.encryption_keys: list[dict] = []
            self.extra: tuple = ()
        else:
            b = base
            self.format_version = b.format_version
            self.uuid = b.table_uuid
            self.location = b.location
            self.last_sequence_number = b.last_sequence_number
            self.last_column_id = b.last_column_id
            self.schemas = list(b.schemas)
            self.current_schema_id = b.current_schema_id
            self.specs = list(b.partition_specs)
            self.default_spec_id = b.default_spec_id
            self.last_partition_id = b.last_partition_id
            self.sort_orders = list(b.sort_orders)
            self.default_sort_order_id = b.default_sort_order_id
            self.properties = dict(b.properties)
            self.current_snapshot_id = b.current_snapshot_id
            self.snapshots = list(b.snapshots)
            self.snapshot_log = list(b.snapshot_log)
            self.refs = dict(b.refs)
            self.statistics = {s.snapshot_id: s for s in b.statistics}
            self.partition_statistics = {s.snapshot_id: s for s in b.partition_statistics}
            self.next_row_id = b.next_row_id or 0
            self.encryption_keys = list(b.encryption_keys)
            self.extra = b.extra
        self._by_id: dict[int, Snapshot] = {s.snapshot_id: s for s in self.snapshots}

    # -- lookups ------------------------------------------------------------------------------
    def _schema(self, schema_id: int) -> Schema | None:
        return next((s for s in self.schemas if s.schema_id == schema_id), None)

    def _snapshot(self, snapshot_id: int) -> Snapshot | None:
        return self._by_id.get(snapshot_id)

    @property
    def _current_schema(self) -> Schema:
        s = self._schema(self.current_schema_id)
        if s is None:
            raise InvalidUpdateError("the table has no current schema: add one first")
        return s

    # -- applying -----------------------------------------------------------------------------
    def apply(self, updates: Iterable[TableUpdate]) -> MetadataBuilder:
        handlers = self._handlers()
        for u in updates:
            handler = handlers.get(type(u))
            if handler is None:
                raise InvalidUpdateError(f"icectl's builder cannot apply a {u.action!r} update")
            handler(u)
        return self

    def _handlers(self) -> dict[type[TableUpdate], Callable[[Any], None]]:
        """The handler of each update type (one per REST spec ``TableUpdate`` action)."""
        return {
            AssignUUID: self._assign_uuid,
            UpgradeFormatVersion: self._upgrade_format_version,
            AddSchema: self._add_schema,
            SetCurrentSchema: self._set_current_schema,
            AddSpec: self._add_spec,
            SetDefaultSpec: self._set_default_spec,
            AddSortOrder: self._add_sort_order,
            SetDefaultSortOrder: self._set_default_sort_order,
            AddSnapshot: self._add_snapshot,
            SetSnapshotRef: self._set_snapshot_ref,
            RemoveSnapshotRef: self._remove_snapshot_ref,
            RemoveSnapshots: self._remove_snapshots,
            SetLocation: self._set_location,
            SetProperties: self._set_properties,
            RemoveProperties: self._remove_properties,
            SetStatistics: self._set_statistics,
            RemoveStatistics: self._remove_statistics,
            SetPartitionStatistics: self._set_partition_statistics,
            RemovePartitionStatistics: self._remove_partition_statistics,
            RemovePartitionSpecs: self._remove_partition_specs,
            RemoveSchemas: self._remove_schemas,
            AddEncryptionKey: self._add_encryption_key,
            RemoveEncryptionKey: self._remove_encryption_key,
        }

    # -- what a client's builder does (the changes it records are the updates it sends) ---------
    def set_current_schema(self, schema: Schema, last_column_id: int | None = None) -> MetadataBuilder:
        """Add ``schema`` (or find the identical one) and make it current, recording
        ``add-schema`` only when it is new, as Java's ``setCurrentSchema(schema, lastColumnId)``."""
        new_id = self._add_schema_internal(schema, max(self.last_column_id, schema.highest_field_id,
                                                       last_column_id or 0))
        self._set_current_schema(SetCurrentSchema(new_id))
        return self

    def set_default_spec(self, spec: PartitionSpec) -> MetadataBuilder:
        self._set_default_spec(SetDefaultSpec(self._add_spec_internal(spec)))
        return self

    def set_default_sort_order(self, order: SortOrder) -> MetadataBuilder:
        self._set_default_sort_order(SetDefaultSortOrder(self._add_sort_order_internal(order)))
        return self

    def _record(self, u: TableUpdate) -> None:
        self.changes.append(u)

    def _assign_uuid(self, u: AssignUUID) -> None:
        if not u.uuid:
            raise InvalidUpdateError("cannot set the table uuid to nothing")
        if u.uuid != self.uuid:
            self.uuid = u.uuid
            self._record(u)

    def _upgrade_format_version(self, u: UpgradeFormatVersion) -> None:
        v = u.format_version
        if v > MAX_FORMAT_VERSION:
            raise InvalidUpdateError(f"cannot upgrade the table to unsupported format version {v} "
                                     f"(icectl writes 1 to {MAX_FORMAT_VERSION})")
        if v < self.format_version:
            raise InvalidUpdateError(f"cannot downgrade a v{self.format_version} table to v{v}")
        if v == self.format_version:
            return
        self.format_version = v
        self._record(u)

    def _add_schema(self, u: AddSchema) -> None:
        self._add_schema_internal(u.schema, max(self.last_column_id, u.schema.highest_field_id,
                                                u.last_column_id or 0))

    def _add_schema_internal(self, schema: Schema, new_last_column_id: int) -> int:
        if new_last_column_id < self.last_column_id:
            raise InvalidUpdateError(f"invalid last column id {new_last_column_id} < {self.last_column_id} "
                                     "(the previous last column id)")
        check_schema_version(schema, self.format_version)
        new_id = self._reuse_or_new_schema_id(schema)
        found = self._schema(new_id) is not None
        if found and new_last_column_id == self.last_column_id:
            added_now = any(isinstance(c, AddSchema) and c.schema.schema_id == new_id for c in self.changes)
            self._last_added_schema = new_id if (self._last_added_schema is not None and added_now) else None
            return new_id
        self.last_column_id = new_last_column_id
        new_schema = replace(schema, schema_id=new_id) if schema.schema_id != new_id else schema
        if not found:
            self.schemas.append(new_schema)
        self._record(AddSchema(new_schema, new_last_column_id))
        self._last_added_schema = new_id
        return new_id

    def _reuse_or_new_schema_id(self, schema: Schema) -> int:
        new_id = self.current_schema_id if self.current_schema_id >= 0 else INITIAL_SCHEMA_ID
        for s in self.schemas:
            if same_schema(s, schema):
                return s.schema_id
            if s.schema_id >= new_id:
                new_id = s.schema_id + 1
        return new_id

    def _set_current_schema(self, u: SetCurrentSchema) -> None:
        schema_id = u.schema_id
        if schema_id == LAST_ADDED:
            if self._last_added_schema is None:
                raise InvalidUpdateError("cannot set the last added schema: no schema has been added")
            schema_id = self._last_added_schema
        if schema_id == self.current_schema_id:
            return
        schema = self._schema(schema_id)
        if schema is None:
            raise InvalidUpdateError(f"cannot set the current schema to unknown schema {schema_id}")
        for spec in self.specs:  # Java rebinds every spec to the new current schema
            check_partition_names(spec, schema)
        self.current_schema_id = schema_id
        self._record(SetCurrentSchema(LAST_ADDED if schema_id == self._last_added_schema else schema_id))

    def _add_spec(self, u: AddSpec) -> None:
        self._add_spec_internal(u.spec)

    def _add_spec_internal(self, spec: PartitionSpec) -> int:
        new_id = self._reuse_or_new_spec_id(spec)
        if any(s.spec_id == new_id for s in self.specs):
            added_now = any(isinstance(c, AddSpec) and c.spec.spec_id == new_id for c in self.changes)
            self._last_added_spec = new_id if (self._last_added_spec is not None and added_now) else None
            return new_id
        check_spec(spec, self._current_schema)
        check_partition_names(spec, self._current_schema)
        if self.format_version == 1 and not sequential_ids(spec):
            raise InvalidUpdateError(f"a v1 partition spec needs sequential field ids from {PARTITION_DATA_ID_START}: "
                                     f"{[f.field_id for f in spec.fields]}")
        new_spec = replace(spec, spec_id=new_id)
        self.last_partition_id = max(self.last_partition_id, new_spec.last_field_id)
        self.specs.append(new_spec)
        self._record(AddSpec(new_spec))
        self._last_added_spec = new_id
        return new_id

    def _reuse_or_new_spec_id(self, spec: PartitionSpec) -> int:
        new_id = INITIAL_SPEC_ID
        for s in self.specs:
            if compatible_specs(spec, s):
                return s.spec_id
            if new_id <= s.spec_id:
                new_id = s.spec_id + 1
        return new_id

    def _set_default_spec(self, u: SetDefaultSpec) -> None:
        spec_id = u.spec_id
        if spec_id == LAST_ADDED:
            if self._last_added_spec is None:
                raise InvalidUpdateError("cannot set the last added spec: no spec has been added")
            spec_id = self._last_added_spec
        if spec_id == self.default_spec_id:
            return
        if not any(s.spec_id == spec_id for s in self.specs):
            raise InvalidUpdateError(f"cannot set the default spec to unknown spec {spec_id}")
        self.default_spec_id = spec_id
        self._record(SetDefaultSpec(LAST_ADDED if spec_id == self._last_added_spec else spec_id))

    def _add_sort_order(self, u: AddSortOrder) -> None:
        self._add_sort_order_internal(u.sort_order)

    def _add_sort_order_internal(self, order: SortOrder) -> int:
        new_id = self._reuse_or_new_order_id(order)
        if any(o.order_id == new_id for o in self.sort_orders):
            added_now = any(isinstance(c, AddSortOrder) and c.sort_order.order_id == new_id for c in self.changes)
            self._last_added_order = new_id if (self._last_added_order is not None and added_now) else None
            return new_id
        check_sort_order(order, self._current_schema)
        new_order = UNSORTED if not order.fields else replace(order, order_id=new_id)
        self.sort_orders.append(new_order)
        self._record(AddSortOrder(new_order))
        self._last_added_order = new_id
        return new_id

    def _reuse_or_new_order_id(self, order: SortOrder) -> int:
        if not order.fields:
            return UNSORTED.order_id
        new_id = INITIAL_SORT_ORDER_ID
        for o in self.sort_orders:
            if o.fields == order.fields:
                return o.order_id
            if new_id <= o.order_id:
                new_id = o.order_id + 1
        return new_id

    def _set_default_sort_order(self, u: SetDefaultSortOrder) -> None:
        order_id = u.sort_order_id
        if order_id == LAST_ADDED:
            if self._last_added_order is None:
                raise InvalidUpdateError("cannot set the last added sort order: no sort order has been added")
            order_id = self._last_added_order
        if order_id == self.default_sort_order_id:
            return
        if not any(o.order_id == order_id for o in self.sort_orders):
            raise InvalidUpdateError(f"cannot set the default sort order to unknown sort order {order_id}")
        self.default_sort_order_id = order_id
        self._record(SetDefaultSortOrder(LAST_ADDED if order_id == self._last_added_order else order_id))

    def _add_snapshot(self, u: AddSnapshot) -> None:
        s = u.snapshot
        if not self.schemas:
            raise InvalidUpdateError("cannot add a snapshot before a schema is added")
        if not self.specs:
            raise InvalidUpdateError("cannot add a snapshot before a partition spec is added")
        if not self.sort_orders:
            raise InvalidUpdateError("cannot add a snapshot before a sort order is added")
        if self._snapshot(s.snapshot_id) is not None:
            raise InvalidUpdateError(f"snapshot {s.snapshot_id} already exists")
        if self.format_version >= 2 and s.parent_snapshot_id is not None \
                and s.sequence_number <= self.last_sequence_number:
            raise StaleUpdateError(f"cannot add snapshot {s.snapshot_id}: its sequence number {s.sequence_number} is "
                                   f"not above the table's last sequence number {self.last_sequence_number}")
        self._check_path(s.manifest_list, f"snapshot {s.snapshot_id}'s manifest list")
        for p in s.manifests or ():
            self._check_path(p, f"snapshot {s.snapshot_id}'s manifest")
        if self.format_version >= 3:
            if s.first_row_id is None:
                raise InvalidUpdateError(f"cannot add snapshot {s.snapshot_id}: a v{self.format_version} snapshot "
                                         "needs first-row-id")
            if s.first_row_id < self.next_row_id:
                raise StaleUpdateError(f"cannot add snapshot {s.snapshot_id}: its first-row-id {s.first_row_id} is "
                                       f"behind the table's next-row-id {self.next_row_id}")
        self._last_updated_ms = s.timestamp_ms
        self.last_sequence_number = s.sequence_number
        self.snapshots.append(s)
        self._by_id[s.snapshot_id] = s
        self._added_snapshots.add(s.snapshot_id)
        self._record(u)
        if self.format_version >= 3:
            self.next_row_id += s.added_rows or 0

    def _set_snapshot_ref(self, u: SetSnapshotRef) -> None:
        name, ref = u.ref_name, u.ref
        existing = self.refs.get(name)
        if existing is not None and _same_ref(existing, ref):
            return
        snap = self._snapshot(ref.snapshot_id)
        if snap is None:
            raise InvalidUpdateError(f"cannot set {name} to unknown snapshot {ref.snapshot_id}")
        if name == MAIN_BRANCH and not ref.is_branch:
            raise InvalidUpdateError("main must be a branch, not a tag")
        if ref.snapshot_id in self._added_snapshots:
            self._last_updated_ms = snap.timestamp_ms
        if name == MAIN_BRANCH:
            self.current_snapshot_id = ref.snapshot_id
            if self._last_updated_ms is None:
                self._last_updated_ms = self._now()
            self.snapshot_log.append(SnapshotLogEntry(self._last_updated_ms, ref.snapshot_id))
        self.refs[name] = ref
        self._record(u)

    def _remove_snapshot_ref(self, u: RemoveSnapshotRef) -> None:
        if u.ref_name == MAIN_BRANCH:
            self.current_snapshot_id = None
        if self.refs.pop(u.ref_name, None) is not None:
            self._record(u)

    def _remove_snapshots(self, u: RemoveSnapshots) -> None:
        ids = set(u.snapshot_ids)
        kept = []
        for s in self.snapshots:
            if s.snapshot_id in ids:
                self._record(RemoveSnapshots((s.snapshot_id,)))
                self._remove_statistics(RemoveStatistics(s.snapshot_id))
                self._remove_partition_statistics(RemovePartitionStatistics(s.snapshot_id))
            else:
                kept.append(s)
        self.snapshots = kept
        self._by_id = {s.snapshot_id: s for s in kept}
        alive = set(self._by_id)
        for name in [n for n, r in self.refs.items() if r.snapshot_id not in alive]:
            self._remove_snapshot_ref(RemoveSnapshotRef(name))

    def _set_location(self, u: SetLocation) -> None:
        if self.location is not None and self.location == u.location.rstrip("/"):
            return
        self.location = u.location.rstrip("/")
        self._record(u)

    def _set_properties(self, u: SetProperties) -> None:
        if not u.updates:
            return
        self.properties.update(u.updates)
        self._record(u)

    def _remove_properties(self, u: RemoveProperties) -> None:
        if not u.removals:
            return
        for k in u.removals:
            self.properties.pop(k, None)
        self._record(u)

    def _set_statistics(self, u: SetStatistics) -> None:
        self._check_path(u.statistics.statistics_path, "a statistics file")
        self.statistics[u.statistics.snapshot_id] = u.statistics
        self._record(u)

    def _remove_statistics(self, u: RemoveStatistics) -> None:
        if self.statistics.pop(u.snapshot_id, None) is not None:
            self._record(u)

    def _set_partition_statistics(self, u: SetPartitionStatistics) -> None:
        self._check_path(u.partition_statistics.statistics_path, "a partition statistics file")
        self.partition_statistics[u.partition_statistics.snapshot_id] = u.partition_statistics
        self._record(u)

    def _remove_partition_statistics(self, u: RemovePartitionStatistics) -> None:
        if self.partition_statistics.pop(u.snapshot_id, None) is not None:
            self._record(u)

    def _remove_partition_specs(self, u: RemovePartitionSpecs) -> None:
        ids = set(u.spec_ids)
        if self.default_spec_id in ids:
            raise InvalidUpdateError("cannot remove the default partition spec")
        if ids:
            self.specs = [s for s in self.specs if s.spec_id not in ids]
            self._record(u)

    def _remove_schemas(self, u: RemoveSchemas) -> None:
        ids = set(u.schema_ids)
        if self.current_schema_id in ids:
            raise InvalidUpdateError("cannot remove the current schema")
        if ids:
            self.schemas = [s for s in self.schemas if s.schema_id not in ids]
            self._record(u)

    def _add_encryption_key(self, u: AddEncryptionKey) -> None:
        key_id = u.encryption_key.get("key-id")
        if any(k.get("key-id") == key_id for k in self.encryption_keys):
            return
        self.encryption_keys.append(dict(u.encryption_key))
        self._record(u)

    def _remove_encryption_key(self, u: RemoveEncryptionKey) -> None:
        before = len(self.encryption_keys)
        self.encryption_keys = [k for k in self.encryption_keys if k.get("key-id") != u.key_id]
        if len(self.encryption_keys) != before:
            self._record(u)

    # -- rules --------------------------------------------------------------------------------
    def _now(self) -> int:
        now = self.now_ms if self.now_ms is not None else int(time.time() * 1000)
        # Never before the base: the logs' timestamps only go forward.
        return max(now, self.base.last_updated_ms) if self.base is not None and self.now_ms is None else now

    def _check_path(self, path: str | None, what: str) -> None:
        """Paths are full URIs before v4; from v4 a relative path is under the table location
        (v4 walk-through: "Relative paths") and must not leave it."""
        if path is None or has_scheme(path) or path.startswith("/"):
            return
        if self.format_version < 4:
            raise InvalidUpdateError(f"{what} has a relative path {path!r}: relative paths need format version 4")
        norm = posixpath.normpath(path)
        if norm in (".", "..") or norm.startswith("../"):
            raise InvalidUpdateError(f"{what} has a relative path {path!r} that leaves the table location")

    @property
    def has_changes(self) -> bool:
        return bool(self.changes)

    def build(self, *, previous_location: str | None = None) -> TableMetadata:
        """The new metadata. ``previous_location`` (the base's metadata file) joins the metadata
        log, trimmed to ``write.metadata.previous-versions-max``. With no change, the base."""
        if self.base is not None and not self.changes:
            return self.base
        if self.location is None and self.format_version < 4:
            raise InvalidUpdateError(f"a format version {self.format_version} table needs a location")
        schema = self._current_schema
        spec = next((s for s in self.specs if s.spec_id == self.default_spec_id), None)
        if spec is None:
            raise InvalidUpdateError(f"the default partition spec {self.default_spec_id} does not exist")
        check_spec(spec, schema)
        order = next((o for o in self.sort_orders if o.order_id == self.default_sort_order_id), None)
        if order is None:
            raise InvalidUpdateError(f"the default sort order {self.default_sort_order_id} does not exist")
        check_sort_order(order, schema)
        last_updated = self._last_updated_ms if self._last_updated_ms is not None else self._now()
        metadata_log = list(self.base.metadata_log) if self.base is not None else []
        if self.base is not None and previous_location is not None:
            keep = max(1, METADATA_PREVIOUS_VERSIONS_MAX.read(self.properties))  # as Java: at least one
            if len(metadata_log) >= keep:
                metadata_log = metadata_log[len(metadata_log) - keep + 1:]
            metadata_log.append(MetadataLogEntry(self.base.last_updated_ms, previous_location))
        return TableMetadata(
            format_version=self.format_version,
            table_uuid=self.uuid,
            location=self.location,
            last_updated_ms=last_updated,
            last_column_id=self.last_column_id,
            schemas=tuple(self.schemas),
            current_schema_id=self.current_schema_id,
            partition_specs=tuple(self.specs),
            default_spec_id=self.default_spec_id,
            last_partition_id=self.last_partition_id,
            last_sequence_number=self.last_sequence_number,
            properties=dict(self.properties),
            current_snapshot_id=self.current_snapshot_id,
            snapshots=tuple(self.snapshots),
            snapshot_log=tuple(self._new_snapshot_log()),
            metadata_log=tuple(metadata_log),
            sort_orders=tuple(self.sort_orders),
            default_sort_order_id=self.default_sort_order_id,
            refs=dict(self.refs),
            statistics=tuple(self.statistics.values()),
            partition_statistics=tuple(self.partition_statistics.values()),
            next_row_id=self.next_row_id if self.format_version >= 3 else None,
            encryption_keys=tuple(self.encryption_keys),
            extra=self.extra,
        )

    def _new_snapshot_log(self) -> list[SnapshotLogEntry]:
        """Java's updateSnapshotLog: drop snapshots added but replaced as main within these
        changes, and when snapshots were removed, all history up to the last entry of a removed
        one (a gap would make time travel answer wrongly)."""
        added: set[int] = set()
        intermediate: set[int] = set()
        for c in self.changes:
            if isinstance(c, AddSnapshot):
                added.add(c.snapshot.snapshot_id)
            elif isinstance(c, SetSnapshotRef) and c.ref_name == MAIN_BRANCH and c.ref.snapshot_id in added \
                    and c.ref.snapshot_id != self.current_snapshot_id:
                intermediate.add(c.ref.snapshot_id)
        removed = any(isinstance(c, RemoveSnapshots) for c in self.changes)
        if not intermediate and not removed:
            return self.snapshot_log
        alive = {s.snapshot_id for s in self.snapshots}
        out: list[SnapshotLogEntry] = []
        for e in self.snapshot_log:
            if e.snapshot_id in alive:
                if e.snapshot_id not in intermediate:
                    out.append(e)
            elif removed:
                out = []
        # Java also checks that the latest entry is the current snapshot; a log that was already
        # inconsistent (or empty) is read tolerantly here rather than blocking every commit.
        return out


def apply_updates(base: TableMetadata | None, updates: Iterable[TableUpdate], *,
                  previous_location: str | None = None, now_ms: int | None = None) -> TableMetadata:
    """The metadata after ``updates`` (a new table's when ``base`` is None: its format version is
    the first ``upgrade-format-version``'s, as a REST server creates one)."""
    updates = list(updates)
    fv = None
    if base is None:
        fv = next((u.format_version for u in updates if isinstance(u, UpgradeFormatVersion)), None)
    return MetadataBuilder(base, format_version=fv, now_ms=now_ms).apply(updates).build(
        previous_location=previous_location)


def _same_ref(a: SnapshotRef, b: SnapshotRef) -> bool:
    return (a.snapshot_id, a.ref_type, a.min_snapshots_to_keep, a.max_snapshot_age_ms, a.max_ref_age_ms) == \
        (b.snapshot_id, b.ref_type, b.min_snapshots_to_keep, b.max_snapshot_age_ms, b.max_ref_age_ms)
