"""Table metadata (spec: "Table Metadata", "Table Metadata Fields", Appendix C, Appendix E).

Read tolerantly, write strictly: :func:`parse_table_metadata` accepts any format version 1-4
(v1's singular ``schema`` / ``partition-spec`` normalised into the lists), and
:meth:`TableMetadata.to_json` writes exactly the fields the table's format version requires
or allows. Keys this version of icectl does not know are kept in ``extra`` and written back.
"""
from __future__ import annotations

import json
from array import array
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from functools import partial
from operator import attrgetter
from typing import Annotated, Any, Optional

import msgspec

from icectl.spec.partitioning import (
    PARTITION_DATA_ID_START,
    PartitionSpec,
    SortOrder,
    UNSORTED,
    sort_order_from_json,
    spec_from_json,
)
from icectl.spec.types import INT_MAX, INT_MIN, LONG_MAX, LONG_MIN, Schema, json_int, json_long, schema_from_json
from icectl.errors import InvalidMetadataError, UnsupportedFormatVersionError

SUPPORTED_FORMAT_VERSIONS = (1, 2, 3, 4)
MAX_FORMAT_VERSION = 4
MAIN_BRANCH = "main"
INITIAL_SEQUENCE_NUMBER = 0


@dataclass(frozen=True)
class SnapshotRef:
    """A named reference (spec: "Snapshot References"): a branch or a tag with retention."""

    snapshot_id: int
    ref_type: str  # "branch" | "tag"
    min_snapshots_to_keep: int | None = None
    max_snapshot_age_ms: int | None = None
    max_ref_age_ms: int | None = None
    extra: tuple[tuple[str, Any], ...] = ()

    @property
    def is_branch(self) -> bool:
        return self.ref_type == "branch"

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"snapshot-id": self.snapshot_id, "type": self.ref_type}
        if self.min_snapshots_to_keep is not None:
            d["min-snapshots-to-keep"] = self.min_snapshots_to_keep
        if self.max_snapshot_age_ms is not None:
            d["max-snapshot-age-ms"] = self.max_snapshot_age_ms
        if self.max_ref_age_ms is not None:
            d["max-ref-age-ms"] = self.max_ref_age_ms
        for k, v in self.extra:
            d.setdefault(k, v)
        return d


_REF_KEYS = {"snapshot-id", "type", "min-snapshots-to-keep", "max-snapshot-age-ms", "max-ref-age-ms"}


def ref_from_json(obj: dict[str, Any]) -> SnapshotRef:
    try:
        ref_type = str(obj["type"]).lower()
        if ref_type not in ("branch", "tag"):
            raise InvalidMetadataError(f"ref type must be 'branch' or 'tag', not {obj['type']!r}")
        return SnapshotRef(
            snapshot_id=json_long(obj["snapshot-id"], "ref snapshot-id"),
            ref_type=ref_type,
            min_snapshots_to_keep=_opt_int(obj.get("min-snapshots-to-keep"), "min-snapshots-to-keep"),
            max_snapshot_age_ms=_opt_long(obj.get("max-snapshot-age-ms"), "max-snapshot-age-ms"),
            max_ref_age_ms=_opt_long(obj.get("max-ref-age-ms"), "max-ref-age-ms"),
            extra=tuple((k, v) for k, v in obj.items() if k not in _REF_KEYS),
        )
    except KeyError as e:
        raise InvalidMetadataError(f"ref is missing {e.args[0]!r}: {obj!r}") from None


_SNAPSHOT_KEYS = {"snapshot-id", "parent-snapshot-id", "sequence-number", "timestamp-ms", "manifest-list",
                  "manifests", "summary", "schema-id", "first-row-id", "added-rows", "key-id"}


@dataclass(frozen=True)
class Snapshot:
    """A snapshot (spec: "Snapshots")."""

    snapshot_id: int
    timestamp_ms: int
    parent_snapshot_id: int | None = None
    sequence_number: int = INITIAL_SEQUENCE_NUMBER
    manifest_list: str | None = None
    manifests: tuple[str, ...] | None = None  # v1 only: inline manifest paths
    summary: dict[str, str] = field(default_factory=dict)
    schema_id: int | None = None
    first_row_id: int | None = None  # v3
    added_rows: int | None = None  # v3
    key_id: str | None = None  # v3 encryption
    extra: tuple[tuple[str, Any], ...] = ()

    @property
    def operation(self) -> str | None:
        return self.summary.get("operation")

    def to_json(self, format_version: int) -> dict[str, Any]:
        d: dict[str, Any] = {"snapshot-id": self.snapshot_id}
        if self.parent_snapshot_id is not None:
            d["parent-snapshot-id"] = self.parent_snapshot_id
        if format_version >= 2:
            d["sequence-number"] = self.sequence_number
        d["timestamp-ms"] = self.timestamp_ms
        if self.manifest_list is not None:
            d["manifest-list"] = self.manifest_list
        elif self.manifests is not None:
            d["manifests"] = list(self.manifests)
        # v1 allows a missing summary; later versions require one with an operation.
        if self.summary or format_version >= 2:
            d["summary"] = {"operation": self.operation or "append", **self.summary}
        if self.schema_id is not None:
            d["schema-id"] = self.schema_id
        if format_version >= 3:
            if self.first_row_id is not None:
                d["first-row-id"] = self.first_row_id
            if self.added_rows is not None:
                d["added-rows"] = self.added_rows
            if self.key_id is not None:
                d["key-id"] = self.key_id
        for k, v in self.extra:
            d.setdefault(k, v)
        return d


def _str_dict(d: dict[Any, Any], share: bool) -> dict[str, str]:
    """``d`` with its keys and values as str; with ``share``, ``d`` itself when they are (a summary
    parsed from a file's bytes, which nothing else holds: one copy of 100,000 summaries, not two)."""
    if share:
        for k, v in d.items():
            if type(k) is not str or type(v) is not str:
                break
        else:
            return d
    return {str(k): str(v) for k, v in d.items()}


def _owned_snapshot(obj: dict[str, Any]) -> Snapshot:
    return snapshot_from_json(obj, share_summary=True)


def snapshot_from_json(obj: dict[str, Any], *, share_summary: bool = False, plain: bool = False) -> Snapshot:
    """A snapshot from its JSON object. ``plain``: the caller made ``_plain_snapshot``'s checks
    (the load, for each snapshot of a file); otherwise they are made here. A snapshot that passes
    them is built without a check per field; any other is read field by field, with the error of
    the first bad one."""
    if plain or _plain_snapshot(obj):
        get = obj.get
        return Snapshot(
            obj["snapshot-id"], obj["timestamp-ms"], get("parent-snapshot-id"),
            get("sequence-number", INITIAL_SEQUENCE_NUMBER), get("manifest-list"), None,
            _str_dict(get("summary") or {}, share_summary), get("schema-id"), get("first-row-id"), get("added-rows"),
            get("key-id"),
            () if obj.keys() <= _SNAPSHOT_KEYS else tuple((k, v) for k, v in obj.items() if k not in _SNAPSHOT_KEYS))
    try:
        summary = obj.get("summary") or {}
        if not isinstance(summary, dict):
            raise InvalidMetadataError(f"snapshot {obj.get('snapshot-id')} has a summary that is not an object")
        manifests = obj.get("manifests")
        return Snapshot(
            snapshot_id=json_long(obj["snapshot-id"], "snapshot-id"),
            timestamp_ms=json_long(obj["timestamp-ms"], "snapshot timestamp-ms"),
            parent_snapshot_id=_opt_long(obj.get("parent-snapshot-id"), "parent-snapshot-id"),
            sequence_number=json_long(obj.get("sequence-number", INITIAL_SEQUENCE_NUMBER), "snapshot sequence-number"),
            manifest_list=obj.get("manifest-list"),
            manifests=tuple(manifests) if manifests is not None else None,
            summary=_str_dict(summary, share_summary),
            schema_id=_opt_int(obj.get("schema-id"), "snapshot schema-id"),
            first_row_id=_opt_long(obj.get("first-row-id"), "first-row-id"),
            added_rows=_opt_long(obj.get("added-rows"), "added-rows"),
            key_id=obj.get("key-id"),
            extra=tuple((k, v) for k, v in obj.items() if k not in _SNAPSHOT_KEYS),
        )
    except KeyError as e:
        raise InvalidMetadataError(f"snapshot is missing {e.args[0]!r}") from None


class LazyTuple(Sequence):
    """A tuple whose items are built on first access, each once, from what the load kept of
    them: a parsed JSON object, or (a metadata file icectl read, ``split_metadata``) a snapshot's
    bytes as a ``msgspec.Raw`` slice of the file or a log entry's position in its columns, so a
    neglected table's 100,000 snapshots cost their bytes until a command reads them.

    Only JSON the builder cannot refuse is kept this way (``_lazy`` and ``split_metadata`` check
    it first), so building later never raises. ``known`` holds fields of every item read by that
    check (``field_values``). It compares equal to the tuple of its items and concatenates with
    tuples."""

    __slots__ = ("_raw", "_build", "_items", "_known")

    def __init__(self, raw: list[Any], build: Callable[[Any], Any], known: dict[str, Sequence[Any]] | None = None):
        self._raw = raw
        self._build = build
        self._items: list[Any] = [None] * len(raw)
        self._known = known or {}

    def __len__(self) -> int:
        return len(self._raw)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(len(self._raw))))
        item = self._items[i]
        return item if item is not None else self._built(i)

    def _built(self, i: int) -> Any:
        o = self._raw[i]
        if o is None:  # another thread built it since this one looked
            return self._items[i]
        item = self._items[i] = self._build(o)
        self._raw[i] = None  # built (set first): its JSON object is not needed any more
        return item

    def __iter__(self) -> Iterator[Any]:
        for i, item in enumerate(self._items):
            yield item if item is not None else self._built(i)

    def each(self) -> Iterator[Any]:
        """Every item, in order; one not built yet is built for this reader alone and not kept
        (a pass over 100,000 snapshots holds one at a time)."""
        for i, item in enumerate(self._items):
            if item is None:
                o = self._raw[i]
                item = self._items[i] if o is None else self._build(o)  # None: another thread built it
            yield item

    def field_values(self, key: str, attr: str, default: Any = None) -> list[Any]:
        """One field of every item without building any: ``key`` as the load's check read it,
        or of its JSON object (a field ``_lazy`` checked; ``default`` when absent), or ``attr``
        of the item when it is built (its JSON object let go)."""
        known = self._known.get(key)
        if known is not None:
            return list(known)
        return [getattr(item, attr) if o is None else o.get(key, default) for o, item in zip(self._raw, self._items)]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (tuple, LazyTuple)):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __add__(self, other: Any) -> tuple:
        if isinstance(other, (tuple, LazyTuple)):
            return tuple(self) + tuple(other)
        return NotImplemented

    def __radd__(self, other: Any) -> tuple:
        if isinstance(other, tuple):
            return other + tuple(self)
        return NotImplemented

    def __reduce__(self):
        return (tuple, (tuple(self),))

    def __repr__(self) -> str:
        return repr(tuple(self))


_LONG_OR_ABSENT = ("parent-snapshot-id", "first-row-id", "added-rows")


def _plain_snapshot(o: Any) -> bool:
    """True when ``snapshot_from_json(o)`` cannot raise: the checks it makes, made in advance."""
    if type(o) is not dict:
        return False
    get = o.get
    for k in ("snapshot-id", "timestamp-ms"):
        v = get(k)
        if type(v) is not int or not LONG_MIN <= v <= LONG_MAX:
            return False
    for k in _LONG_OR_ABSENT:
        v = get(k)
        if v is not None and (type(v) is not int or not LONG_MIN <= v <= LONG_MAX):
            return False
    if "sequence-number" in o:
        v = o["sequence-number"]
        if type(v) is not int or not LONG_MIN <= v <= LONG_MAX:
            return False
    v = get("schema-id")
    if v is not None and (type(v) is not int or not INT_MIN <= v <= INT_MAX):
        return False
    v = get("summary")
    return (not v or type(v) is dict) and "manifests" not in o


def _plain_log_entry(o: Any) -> bool:
    """True when a snapshot-log entry parses without error (two longs)."""
    if type(o) is not dict:
        return False
    a, b = o.get("timestamp-ms"), o.get("snapshot-id")
    return type(a) is int and type(b) is int and LONG_MIN <= a <= LONG_MAX and LONG_MIN <= b <= LONG_MAX


def _snapshot_log_entry(e: dict[str, Any]) -> SnapshotLogEntry:
    return SnapshotLogEntry(json_long(e["timestamp-ms"], "snapshot-log timestamp-ms"),
                            json_long(e["snapshot-id"], "snapshot-log snapshot-id"))


_Long = Annotated[int, msgspec.Meta(ge=LONG_MIN, le=LONG_MAX)]
_Int = Annotated[int, msgspec.Meta(ge=INT_MIN, le=INT_MAX)]


class _SnapshotJson(msgspec.Struct, rename="kebab", forbid_unknown_fields=True, gc=False):
    """A snapshot's JSON object decoded in one call, for the common case: only the keys below,
    each of the type ``_plain_snapshot`` takes, and a manifest list, key id and summary values
    that are strings (what ``snapshot_from_json`` keeps as they are). Every byte is decoded (no
    member skipped), so an object this decoder takes is one the generic decoder takes too, with
    the same values (the last of a repeated key, as a dict); any other object is refused
    (ValueError) and goes the generic way."""

    snapshot_id: _Long
    timestamp_ms: _Long
    parent_snapshot_id: Optional[_Long] = None
    sequence_number: _Long = INITIAL_SEQUENCE_NUMBER
    manifest_list: Optional[str] = None
    summary: Optional[dict[str, str]] = None
    schema_id: Optional[_Int] = None
    first_row_id: Optional[_Long] = None
    added_rows: Optional[_Long] = None
    key_id: Optional[str] = None


_DECODE_SNAPSHOT = msgspec.json.Decoder(_SnapshotJson).decode
_DECODE_SNAPSHOTS = msgspec.json.Decoder(list[_SnapshotJson]).decode


def _snapshot_of(f: _SnapshotJson) -> Snapshot:
    """``snapshot_from_json(..., share_summary=True, plain=True)`` of the object ``f`` was decoded
    from: it passes ``_plain_snapshot``, has no key outside ``_SNAPSHOT_KEYS`` and no inline
    manifests, and its summary's values are strings (the summary itself is kept)."""
    summary = f.summary
    return Snapshot(f.snapshot_id, f.timestamp_ms, f.parent_snapshot_id, f.sequence_number, f.manifest_list, None,
                    summary if summary is not None else {}, f.schema_id, f.first_row_id, f.added_rows, f.key_id)


def _snapshot_from_bytes(raw: msgspec.Raw) -> Snapshot:
    """A snapshot ``_plain_snapshot`` passed at the load, from its bytes (the checks not made again)."""
    try:
        return _snapshot_of(_DECODE_SNAPSHOT(raw))
    except ValueError:  # another key or type: built from the parsed object, as the check read it
        return snapshot_from_json(_DECODE(raw), share_summary=True, plain=True)


def _log_entry_at(times: Sequence[int], ids: Sequence[int], i: int) -> SnapshotLogEntry:
    return SnapshotLogEntry(times[i], ids[i])


def _lazy(raw: Any, plain: Callable[[Any], bool], build: Callable[[Any], Any]) -> Sequence[Any]:
    """``raw`` (a JSON list) as a LazyTuple when every item passes ``plain``; else built now, item
    by item, so a bad item raises the error it always raised."""
    if not raw:
        return ()
    if type(raw) is list and all(map(plain, raw)):
        return LazyTuple(raw, build)
    return tuple(build(o) for o in raw)


@dataclass(frozen=True)
class SnapshotLogEntry:
    timestamp_ms: int
    snapshot_id: int

    def to_json(self) -> dict[str, Any]:
        return {"timestamp-ms": self.timestamp_ms, "snapshot-id": self.snapshot_id}


@dataclass(frozen=True)
class MetadataLogEntry:
    timestamp_ms: int
    metadata_file: str

    def to_json(self) -> dict[str, Any]:
        return {"timestamp-ms": self.timestamp_ms, "metadata-file": self.metadata_file}


@dataclass(frozen=True)
class StatisticsFile:
    """A table statistics file (Puffin) or partition statistics file; the JSON object is kept."""

    snapshot_id: int
    statistics_path: str
    file_size_in_bytes: int
    raw: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {**self.raw, "snapshot-id": self.snapshot_id, "statistics-path": self.statistics_path,
                "file-size-in-bytes": self.file_size_in_bytes}


def statistics_from_json(obj: dict[str, Any]) -> StatisticsFile:
    try:
        return StatisticsFile(json_long(obj["snapshot-id"], "statistics snapshot-id"), str(obj["statistics-path"]),
                              json_long(obj["file-size-in-bytes"], "statistics file-size-in-bytes"), dict(obj))
    except KeyError as e:
        raise InvalidMetadataError(f"statistics entry is missing {e.args[0]!r}") from None


_TABLE_KEYS = {
    "format-version", "table-uuid", "location", "last-sequence-number", "last-updated-ms", "last-column-id",
    "schema", "schemas", "current-schema-id", "partition-spec", "partition-specs", "default-spec-id",
    "last-partition-id", "properties", "current-snapshot-id", "snapshots", "snapshot-log", "metadata-log",
    "sort-orders", "default-sort-order-id", "refs", "statistics", "partition-statistics", "next-row-id",
    "encryption-keys",
}


@dataclass(frozen=True)
class TableMetadata:
    """The table metadata file's content, normalised to the lists of v2 and later."""

    format_version: int
    table_uuid: str | None
    location: str | None
    last_updated_ms: int
    last_column_id: int
    schemas: tuple[Schema, ...]
    current_schema_id: int
    partition_specs: tuple[PartitionSpec, ...]
    default_spec_id: int
    last_partition_id: int
    last_sequence_number: int = INITIAL_SEQUENCE_NUMBER
    properties: dict[str, str] = field(default_factory=dict)
    current_snapshot_id: int | None = None
    # a tuple, or a LazyTuple when parsed from a file (Snapshot objects built as they are read)
    snapshots: Sequence[Snapshot] = ()
    snapshot_log: Sequence[SnapshotLogEntry] = ()
    metadata_log: tuple[MetadataLogEntry, ...] = ()
    sort_orders: tuple[SortOrder, ...] = (UNSORTED,)
    default_sort_order_id: int = 0
    refs: dict[str, SnapshotRef] = field(default_factory=dict)
    statistics: tuple[StatisticsFile, ...] = ()
    partition_statistics: tuple[StatisticsFile, ...] = ()
    next_row_id: int | None = None  # v3
    encryption_keys: tuple[dict[str, Any], ...] = ()  # v3
    extra: tuple[tuple[str, Any], ...] = ()

    # -- lookups ------------------------------------------------------------------------------
    @property
    def schema(self) -> Schema:
        return self.schema_by_id(self.current_schema_id)

    def schema_by_id(self, schema_id: int | None) -> Schema:
        for s in self.schemas:
            if s.schema_id == schema_id:
                return s
        if schema_id is None:
            return self.schema
        raise InvalidMetadataError(f"schema {schema_id} does not exist")

    @property
    def current_schema_or_none(self) -> Schema | None:
        """The current schema, or None when current-schema-id names no schema (validate reports it)."""
        return next((s for s in self.schemas if s.schema_id == self.current_schema_id), None)

    def find_type(self, field_id: int):
        """The type of a field id in the current schema, else in the newest schema that has it."""
        current = self.current_schema_or_none
        for s in ((current,) if current is not None else ()) + tuple(reversed(self.schemas)):
            t = s.find_type(field_id)
            if t is not None:
                return t
        return None

    @property
    def spec(self) -> PartitionSpec:
        return self.spec_by_id(self.default_spec_id)

    def spec_by_id(self, spec_id: int) -> PartitionSpec:
        for s in self.partition_specs:
            if s.spec_id == spec_id:
                return s
        raise InvalidMetadataError(f"partition spec {spec_id} does not exist")

    @property
    def specs_by_id(self) -> dict[int, PartitionSpec]:
        return {s.spec_id: s for s in self.partition_specs}

    @property
    def sort_order(self) -> SortOrder:
        for o in self.sort_orders:
            if o.order_id == self.default_sort_order_id:
                return o
        raise InvalidMetadataError(f"sort order {self.default_sort_order_id} does not exist")

    def snapshot_by_id(self, snapshot_id: int | None) -> Snapshot | None:
        if snapshot_id is None:
            return None
        i = self._snapshot_positions.get(snapshot_id)
        return None if i is None else self.snapshots[i]

    @property
    def _snapshot_positions(self) -> dict[int, int]:
        """Snapshot id -> position in ``snapshots`` (the last of a repeated id), built once."""
        idx = self.__dict__.get("_snap_idx")
        if idx is None:
            idx = {sid: i for i, sid in enumerate(self.snapshot_values("snapshot_id"))}
            object.__setattr__(self, "_snap_idx", idx)
        return idx

    def snapshot_values(self, attr: str) -> list[Any]:
        """One attribute of every snapshot, in order: ``snapshot_id``, ``parent_snapshot_id``,
        ``sequence_number`` or ``timestamp_ms``; from what the load's check read when the
        snapshots are still their file's bytes (no Snapshot object built nor kept)."""
        snaps = self.snapshots
        if isinstance(snaps, LazyTuple):
            key, default = _SNAPSHOT_VALUES[attr]
            return snaps.field_values(key, attr, default)
        return list(map(attrgetter(attr), snaps))

    def each_snapshot(self) -> Iterator[Snapshot]:
        """Every snapshot, in order, without keeping those no reader built before (one pass over
        all of them holds one at a time; ``snapshots`` keeps each it builds)."""
        snaps = self.snapshots
        return snaps.each() if isinstance(snaps, LazyTuple) else iter(snaps)

    def each_snapshot_log_entry(self) -> Iterator[SnapshotLogEntry]:
        """Every snapshot-log entry, in order, as ``each_snapshot`` does."""
        log = self.snapshot_log
        return log.each() if isinstance(log, LazyTuple) else iter(log)

    @property
    def current_snapshot(self) -> Snapshot | None:
        return self.snapshot_by_id(self.current_snapshot_id)

    def snapshot_for_ref(self, name: str) -> Snapshot | None:
        ref = self.all_refs.get(name)
        return self.snapshot_by_id(ref.snapshot_id) if ref else None

    @property
    def all_refs(self) -> dict[str, SnapshotRef]:
        """The refs, with ``main`` implied by ``current-snapshot-id`` when refs omit it (v1)."""
        refs = dict(self.refs)
        if MAIN_BRANCH not in refs and self.current_snapshot_id is not None:
            refs[MAIN_BRANCH] = SnapshotRef(self.current_snapshot_id, "branch")
        return refs

    def ancestors_of(self, snapshot_id: int | None) -> list[Snapshot]:
        """The snapshot and its ancestors, newest first, stopping where a parent is missing."""
        out: list[Snapshot] = []
        seen: set[int] = set()
        snap = self.snapshot_by_id(snapshot_id)
        while snap is not None and snap.snapshot_id not in seen:
            out.append(snap)
            seen.add(snap.snapshot_id)
            snap = self.snapshot_by_id(snap.parent_snapshot_id)
        return out

    def ancestor_ids(self, snapshot_id: int | None) -> list[int]:
        """The ids of :meth:`ancestors_of`, newest first, from the snapshots' id and parent columns
        the load read (no Snapshot built: a neglected table's main has 100,000 ancestors)."""
        positions = self._snapshot_positions
        parents = self.snapshot_values("parent_snapshot_id")
        out: list[int] = []
        seen: set[int] = set()
        while snapshot_id is not None and snapshot_id not in seen:
            i = positions.get(snapshot_id)
            if i is None:
                break
            out.append(snapshot_id)
            seen.add(snapshot_id)
            snapshot_id = parents[i]
        return out

    def property(self, key: str, default: str | None = None) -> str | None:
        return self.properties.get(key, default)

    # -- writing ------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        v = self.format_version
        d: dict[str, Any] = {"format-version": v}
        if self.table_uuid is not None:
            d["table-uuid"] = self.table_uuid
        if self.location is not None or v < 4:
            d["location"] = self.location
        if v >= 2:
            d["last-sequence-number"] = self.last_sequence_number
        d["last-updated-ms"] = self.last_updated_ms
        d["last-column-id"] = self.last_column_id
        if v == 1:
            # v1 readers need the singular fields; later writers keep the lists too (Appendix E).
            d["schema"] = self.schema.to_json()
        d["current-schema-id"] = self.current_schema_id
        d["schemas"] = [s.to_json() for s in self.schemas]
        if v == 1:
            d["partition-spec"] = self.spec.fields_json(v)
        d["default-spec-id"] = self.default_spec_id
        d["partition-specs"] = [s.to_json(v) for s in self.partition_specs]
        d["last-partition-id"] = self.last_partition_id
        d["default-sort-order-id"] = self.default_sort_order_id
        d["sort-orders"] = [o.to_json() for o in self.sort_orders]
        d["properties"] = dict(self.properties)
        d["current-snapshot-id"] = self.current_snapshot_id if self.current_snapshot_id is not None else -1
        if v >= 2 or self.refs:
            d["refs"] = {name: r.to_json() for name, r in self.refs.items()}
        d["snapshots"] = [s.to_json(v) for s in self.snapshots]
        d["statistics"] = [s.to_json() for s in self.statistics]
        if v >= 2 or self.partition_statistics:
            d["partition-statistics"] = [s.to_json() for s in self.partition_statistics]
        d["snapshot-log"] = [e.to_json() for e in self.snapshot_log]
        d["metadata-log"] = [e.to_json() for e in self.metadata_log]
        if v >= 3:
            d["next-row-id"] = self.next_row_id if self.next_row_id is not None else 0
            if self.encryption_keys:
                d["encryption-keys"] = list(self.encryption_keys)
        for k, val in self.extra:
            d.setdefault(k, val)
        return d

    def to_bytes(self) -> bytes:
        return json.dumps(self.to_json(), indent=2).encode()

    def replace(self, **changes: Any) -> TableMetadata:
        return replace(self, **changes)


def _opt_int(v: Any, what: str) -> int | None:
    return None if v is None else json_int(v, what)


def _opt_long(v: Any, what: str) -> int | None:
    return None if v is None else json_long(v, what)


def parse_table_metadata(data: bytes | str | dict[str, Any] | MetadataDocument, *,
                         source: str = "metadata") -> TableMetadata:
    """Parse a metadata JSON document of any supported format version (its bytes or text, a
    caller's parsed dict, or a document :func:`split_metadata` split).

    ``source`` names the file in error messages.
    """
    lean = data if isinstance(data, MetadataDocument) else None
    if isinstance(data, dict):
        obj = data
    else:
        if lean is None and (lean := split_metadata(data)) is None:
            obj = parse_json(data, source=source)
        else:
            obj = lean.fields
    if not isinstance(obj, dict):
        raise InvalidMetadataError(f"{source}: table metadata must be a JSON object")
    try:
        # a document parsed here is icectl's own: its snapshots may stay JSON until read; a
        # caller's dict is read now (the caller may change it after)
        return _parse(obj, owned=not isinstance(data, dict), lean=lean)
    except InvalidMetadataError as e:
        if e.message.startswith(source):
            raise
        raise type(e)(f"{source}: {e.message}", hint=e.hint) from None
    except RecursionError:
        raise InvalidMetadataError(f"{source}: invalid table metadata: a type is nested too deeply") from None
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as e:
        what = f"missing field {e.args[0]!r}" if isinstance(e, KeyError) else str(e)
        raise InvalidMetadataError(f"{source}: invalid table metadata: {what}") from None


_DECODE = msgspec.json.Decoder().decode
_SPLIT_OBJECT = msgspec.json.Decoder(dict[str, msgspec.Raw]).decode
_SPLIT_LIST = msgspec.json.Decoder(list[msgspec.Raw]).decode
# Snapshot attribute -> its JSON key and the value of an absent key (TableMetadata.snapshot_values).
_SNAPSHOT_VALUES = {"snapshot_id": ("snapshot-id", None), "parent_snapshot_id": ("parent-snapshot-id", None),
                    "sequence_number": ("sequence-number", INITIAL_SEQUENCE_NUMBER),
                    "timestamp_ms": ("timestamp-ms", None)}


@dataclass(frozen=True)
class MetadataDocument:
    """A table metadata file split at its top level (:func:`split_metadata`): ``fields`` holds
    every top-level field parsed, but for the snapshots and the snapshot log. Of those, each item
    checked to build (as ``_lazy`` checks), the load keeps: a snapshot's bytes (a ``msgspec.Raw``
    slice of the file; None: the file has no snapshots) and four of its fields by column
    (``snapshot_columns``, JSON key -> values in snapshot order), or, split within
    :func:`every_snapshot_read`, the snapshots built; a snapshot-log entry's two numbers (``log``:
    timestamps and snapshot ids; None: the file has no snapshot log)."""

    fields: dict[str, Any]
    snapshots: list[msgspec.Raw] | tuple[Snapshot, ...] | None = None
    snapshot_columns: dict[str, Sequence[Any]] = field(default_factory=dict)
    log: tuple[Sequence[int], Sequence[int]] | None = None

    def lazy_snapshots(self) -> Sequence[Snapshot] | None:
        if self.snapshots is None or isinstance(self.snapshots, tuple):
            return self.snapshots
        return LazyTuple(list(self.snapshots), _snapshot_from_bytes, self.snapshot_columns) if self.snapshots else ()

    def lazy_snapshot_log(self) -> Sequence[SnapshotLogEntry] | None:
        if self.log is None:
            return None
        times, ids = self.log
        return LazyTuple(list(range(len(times))), partial(_log_entry_at, times, ids)) if len(times) else ()


_EVERY_SNAPSHOT_READ: ContextVar[bool] = ContextVar("icectl_every_snapshot_read", default=False)


@contextmanager
def every_snapshot_read(enabled: bool = True) -> Iterator[None]:
    """Within it (when ``enabled``), a metadata file loaded in this thread builds each snapshot as
    the load's check parses it, for a reader of them all (``snapshots``): each snapshot is parsed
    once, not at the check and again when read, and the file's bytes are let go after the load.
    Outside it, snapshots stay their bytes until read (a command that reads a few of them)."""
    token = _EVERY_SNAPSHOT_READ.set(enabled)
    try:
        yield
    finally:
        _EVERY_SNAPSHOT_READ.reset(token)


def _split_snapshots(raw: msgspec.Raw, fields: dict[str, Any], visit: SnapshotVisitor | None, build: bool
                     ) -> tuple[list[msgspec.Raw] | tuple[Snapshot, ...], dict[str, Sequence[Any]]] | None:
    if build:  # each parsed once, into its snapshot: all in one call when every one is common
        try:
            common = _DECODE_SNAPSHOTS(raw)
        except ValueError:
            pass
        else:
            return tuple(map(_snapshot_of, common)), {}
    items = _SPLIT_LIST(raw)
    if build:
        built = []
        for item in items:
            try:
                built.append(_snapshot_of(_DECODE_SNAPSHOT(item)))
            except ValueError:
                o = _DECODE(item)
                if not _plain_snapshot(o):
                    return None
                built.append(snapshot_from_json(o, share_summary=True, plain=True))
        return tuple(built), {}
    # 64-bit arrays, not lists of int objects, for the fields that are always a long
    ids, parents, seqs, times = array("q"), [], array("q"), array("q")
    for item in items:
        if visit is None:
            try:  # the check in one call (most snapshots); its objects let go at once
                f = _DECODE_SNAPSHOT(item)
            except ValueError:
                pass
            else:
                ids.append(f.snapshot_id)
                parents.append(f.parent_snapshot_id)
                seqs.append(f.sequence_number)
                times.append(f.timestamp_ms)
                continue
        o = _DECODE(item)
        if not _plain_snapshot(o):
            return None
        if visit is not None:
            visit(fields, o)
        get = o.get
        ids.append(o["snapshot-id"])
        parents.append(get("parent-snapshot-id"))
        seqs.append(get("sequence-number", INITIAL_SEQUENCE_NUMBER))
        times.append(o["timestamp-ms"])
    return items, {"snapshot-id": ids, "parent-snapshot-id": parents, "sequence-number": seqs, "timestamp-ms": times}


class _LogEntryJson(msgspec.Struct, rename="kebab", forbid_unknown_fields=True, gc=False):
    """A snapshot-log entry of just its two longs (any other is read the generic way)."""

    timestamp_ms: _Long
    snapshot_id: _Long


_DECODE_LOG = msgspec.json.Decoder(list[_LogEntryJson]).decode


def _split_log(raw: msgspec.Raw) -> tuple[Sequence[int], Sequence[int]] | None:
    try:  # the whole log in one call (every entry of its two longs alone)
        entries = _DECODE_LOG(raw)
    except ValueError:
        pass
    else:
        return array("q", [e.timestamp_ms for e in entries]), array("q", [e.snapshot_id for e in entries])
    times, ids = array("q"), array("q")
    for item in _SPLIT_LIST(raw):
        o = _DECODE(item)
        if not _plain_log_entry(o):
            return None
        times.append(o["timestamp-ms"])
        ids.append(o["snapshot-id"])
    return times, ids


# Called with a document's top-level fields (all but the snapshots and the snapshot log) and
# a snapshot's parsed object (split_metadata's ``each_snapshot``).
SnapshotVisitor = Callable[[dict[str, Any], dict[str, Any]], Any]


def split_metadata(data: bytes | str, each_snapshot: SnapshotVisitor | None = None) -> MetadataDocument | None:
    """The document split at its top level (:class:`MetadataDocument`); None when msgspec refuses
    any part, or a snapshot or log entry is not one its builder takes for sure: then the whole
    document must be parsed as before (``parse_json``), so the result, or the error and its
    message, is what it always was.

    Each snapshot and log entry is parsed once here, to check it, and let go: the parsed objects
    of 100,000 snapshots never live at the same time. ``each_snapshot`` is called with the
    top-level fields and each snapshot's object as it is checked (a reader's pass over every
    snapshot, without parsing them again); when the result is None it may have seen only some."""
    try:
        fields: dict[str, Any] = {}
        snapshots = log = None
        parts = _SPLIT_OBJECT(data)  # a repeated key: the last, as parse_json
        for key, raw in parts.items():
            if key != "snapshots" and key != "snapshot-log":
                fields[key] = _DECODE(raw)
        if "snapshots" in parts:  # after the other fields: ``each_snapshot`` reads them
            build = each_snapshot is None and _EVERY_SNAPSHOT_READ.get()
            if (snapshots := _split_snapshots(parts["snapshots"], fields, each_snapshot, build)) is None:
                return None
        if "snapshot-log" in parts:
            if (log := _split_log(parts["snapshot-log"])) is None:
                return None
        if snapshots is None:
            return MetadataDocument(fields, log=log)
        return MetadataDocument(fields, snapshots[0], snapshots[1], log)
    except (ValueError, RecursionError):  # msgspec's DecodeError / ValidationError are ValueErrors
        return None


def top_level_keys(data: bytes | str) -> list[str] | None:
    """The keys of a JSON object document, its values not parsed; None when msgspec cannot split
    it (not an object, or JSON msgspec refuses: the standard library may still read it)."""
    try:
        return list(_SPLIT_OBJECT(data))
    except (ValueError, RecursionError):
        return None


def parse_json(data: bytes | str, *, source: str) -> Any:
    """A JSON document (metadata, a manifest's schema or partition spec), or InvalidMetadataError
    naming ``source``: malformed, not UTF-8, or nested deeper than Python's parser recurses."""
    try:
        # msgspec: the fastest of the well-kept parsers on a 100 MB metadata file (bench/RESULTS.md).
        # Anything it refuses (NaN, a lone surrogate, a number beyond a double, ...) goes to the
        # standard library, which gives the result or the error icectl always gave.
        return _DECODE(data)
    except (ValueError, RecursionError):
        pass
    try:
        return json.loads(data)
    except RecursionError:
        raise InvalidMetadataError(f"{source}: malformed JSON: nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise InvalidMetadataError(f"{source}: malformed JSON: {e}") from None


def _parse(obj: dict[str, Any], *, owned: bool, lean: MetadataDocument | None) -> TableMetadata:
    if "format-version" not in obj:
        raise InvalidMetadataError("missing field 'format-version'")
    version = obj["format-version"]
    if not isinstance(version, int) or isinstance(version, bool):
        raise InvalidMetadataError(f"format-version must be an integer, not {version!r}")
    if version not in SUPPORTED_FORMAT_VERSIONS:
        raise UnsupportedFormatVersionError(
            f"unsupported format-version {version}: icectl reads format versions 1 to {MAX_FORMAT_VERSION}",
            hint="a newer icectl may read this table" if version > MAX_FORMAT_VERSION else None)

    if "schemas" in obj:
        # Iceberg Java (TableMetadataParser) requires current-schema-id whenever schemas is given.
        if obj.get("current-schema-id") is None:
            raise InvalidMetadataError("'schemas' is given without 'current-schema-id'")
        schemas = tuple(schema_from_json(s) for s in obj["schemas"])
        current_schema_id = json_int(obj["current-schema-id"], "current-schema-id")
    elif "schema" in obj:
        s = schema_from_json(obj["schema"])
        schemas = (s,)
        current_schema_id = s.schema_id
    else:
        raise KeyError("schemas")
    if not schemas:
        raise InvalidMetadataError("table metadata has no schema")

    if "partition-specs" in obj:
        specs = tuple(spec_from_json(s) for s in obj["partition-specs"])
        default_spec_id = json_int(obj.get("default-spec-id", specs[0].spec_id if specs else 0), "default-spec-id")
    elif "partition-spec" in obj:
        specs = (spec_from_json(obj["partition-spec"], spec_id=0),)
        default_spec_id = 0
    else:
        raise KeyError("partition-specs")
    if not specs:
        raise InvalidMetadataError("table metadata has no partition spec")
    last_partition_id = obj.get("last-partition-id")
    if last_partition_id is None:
        last_partition_id = max((s.last_field_id for s in specs), default=PARTITION_DATA_ID_START - 1)

    if version >= 2 and not obj.get("sort-orders"):
        # "sort-orders" is required from v2 on and holds at least the unsorted order (Java refuses both).
        raise InvalidMetadataError(f"format version {version} requires a non-empty 'sort-orders'")
    sort_orders = tuple(sort_order_from_json(o) for o in obj.get("sort-orders", [])) or (UNSORTED,)
    current_snapshot_id = _opt_long(obj.get("current-snapshot-id"), "current-snapshot-id")
    if current_snapshot_id == -1:
        current_snapshot_id = None
    if obj.get("refs") is not None:
        refs = {str(k): ref_from_json(v) for k, v in obj["refs"].items()}
    else:
        # Without refs (v1), main is the current snapshot, as Iceberg Java reads it; refs given
        # without main stay without main.
        refs = {MAIN_BRANCH: SnapshotRef(current_snapshot_id, "branch")} if current_snapshot_id is not None else {}
    if version >= 4 and obj.get("location") is None:
        location = None
    elif obj.get("location") is None:  # absent or null: required before v4
        raise InvalidMetadataError(f"format version {version} requires a 'location'")
    else:
        location = str(obj["location"])

    lean_snapshots = lean.lazy_snapshots() if lean is not None else None
    lean_log = lean.lazy_snapshot_log() if lean is not None else None
    md = TableMetadata(
        format_version=version,
        table_uuid=obj.get("table-uuid"),
        location=location.rstrip("/") if location else location,
        last_updated_ms=json_long(obj["last-updated-ms"], "last-updated-ms"),
        last_column_id=json_int(obj["last-column-id"], "last-column-id"),
        schemas=schemas,
        current_schema_id=current_schema_id,
        partition_specs=specs,
        default_spec_id=default_spec_id,
        last_partition_id=json_int(last_partition_id, "last-partition-id"),
        last_sequence_number=json_long(obj.get("last-sequence-number", INITIAL_SEQUENCE_NUMBER), "last-sequence-number"),
        properties={str(k): str(v) for k, v in (obj.get("properties") or {}).items()},
        current_snapshot_id=current_snapshot_id,
        snapshots=lean_snapshots if lean_snapshots is not None else
        _lazy(obj.get("snapshots"), _plain_snapshot, _owned_snapshot) if owned else
        tuple(snapshot_from_json(s) for s in obj.get("snapshots") or []),
        snapshot_log=lean_log if lean_log is not None else
        _lazy(obj.get("snapshot-log"), _plain_log_entry, _snapshot_log_entry) if owned else
        tuple(_snapshot_log_entry(e) for e in obj.get("snapshot-log") or []),
        metadata_log=tuple(MetadataLogEntry(json_long(e["timestamp-ms"], "metadata-log timestamp-ms"), str(e["metadata-file"]))
                           for e in obj.get("metadata-log") or []),
        sort_orders=sort_orders,
        default_sort_order_id=json_int(obj.get("default-sort-order-id", sort_orders[0].order_id), "default-sort-order-id"),
        refs=refs,
        statistics=tuple(statistics_from_json(s) for s in obj.get("statistics") or []),
        partition_statistics=tuple(statistics_from_json(s) for s in obj.get("partition-statistics") or []),
        next_row_id=_opt_long(obj.get("next-row-id"), "next-row-id"),
        encryption_keys=tuple(obj.get("encryption-keys") or ()),
        extra=tuple((k, v) for k, v in obj.items() if k not in _TABLE_KEYS),
    )
    return md
