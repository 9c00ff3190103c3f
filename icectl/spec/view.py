"""View metadata (the Iceberg view spec, ``format/view-spec.md``: "View Metadata", "Versions",
"Summary", "Representations", "Version log").

:func:`parse_view_metadata` reads a view metadata file as Iceberg Java's ``ViewMetadataParser``
does: the required fields must be there with their JSON types, and ``format-version`` must be 1;
what Java checks only when it is used (the current version and its schema exist) or when it builds
new metadata (one SQL per dialect) is the validator's to report (:mod:`icectl.validate.view`), so
that ``describe`` can still show a view whose metadata breaks those rules. Keys this version of
icectl does not know are kept in ``extra`` and written back by :meth:`ViewMetadata.to_json`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from icectl.errors import InvalidMetadataError, UnsupportedFormatVersionError
from icectl.spec.metadata import parse_json, top_level_keys
from icectl.spec.types import Schema, json_int, json_long, schema_from_json

__all__ = ["SUPPORTED_VIEW_FORMAT_VERSION", "SQL", "ViewHistoryEntry", "ViewMetadata", "ViewRepresentation",
           "ViewVersion", "is_view_metadata", "is_view_metadata_json", "parse_view_metadata"]

SUPPORTED_VIEW_FORMAT_VERSION = 1  # "format-version: ... must be 1"
SQL = "sql"  # the one representation type the spec defines
# View properties (Iceberg Java's ViewProperties).
VERSION_HISTORY_SIZE = "version.history.num-entries"
REPLACE_DROP_DIALECT_ALLOWED = "replace.drop-dialect.allowed"

_VIEW_KEYS = frozenset({"view-uuid", "format-version", "location", "schemas", "current-version-id", "versions",
                        "version-log", "properties"})
_VERSION_KEYS = frozenset({"version-id", "schema-id", "timestamp-ms", "summary", "representations",
                           "default-catalog", "default-namespace"})


@dataclass(frozen=True)
class ViewRepresentation:
    """One way to express a version's definition. ``type`` is ``sql`` (spec: "Must be sql") with
    its ``sql`` SELECT and ``dialect``; another type is kept as it is (Java reads it as an unknown
    representation)."""

    type: str
    sql: str | None = None
    dialect: str | None = None
    extra: tuple[tuple[str, Any], ...] = ()

    @property
    def is_sql(self) -> bool:
        return self.type.lower() == SQL

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"type": self.type}
        if self.sql is not None:
            d["sql"] = self.sql
        if self.dialect is not None:
            d["dialect"] = self.dialect
        for k, v in self.extra:
            d.setdefault(k, v)
        return d


@dataclass(frozen=True)
class ViewVersion:
    """A version of the view (spec: "Versions"): immutable once created."""

    version_id: int
    schema_id: int
    timestamp_ms: int
    summary: dict[str, str]
    representations: tuple[ViewRepresentation, ...]
    default_namespace: tuple[str, ...]
    default_catalog: str | None = None
    extra: tuple[tuple[str, Any], ...] = ()

    def sql_for(self, dialect: str) -> str | None:
        """The SQL of ``dialect`` (compared case-insensitively, as Java's ViewMetadata does)."""
        for r in self.representations:
            if r.is_sql and (r.dialect or "").lower() == dialect.lower():
                return r.sql
        return None

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"version-id": self.version_id, "timestamp-ms": self.timestamp_ms,
                             "schema-id": self.schema_id, "summary": dict(self.summary)}
        if self.default_catalog is not None:
            d["default-catalog"] = self.default_catalog
        d["default-namespace"] = list(self.default_namespace)
        d["representations"] = [r.to_json() for r in self.representations]
        for k, v in self.extra:
            d.setdefault(k, v)
        return d


@dataclass(frozen=True)
class ViewHistoryEntry:
    """A version-log entry: when ``current-version-id`` was set to ``version_id``."""

    timestamp_ms: int
    version_id: int

    def to_json(self) -> dict[str, Any]:
        return {"timestamp-ms": self.timestamp_ms, "version-id": self.version_id}


@dataclass(frozen=True)
class ViewMetadata:
    """A view metadata file (spec: "View Metadata")."""

    view_uuid: str
    format_version: int
    location: str
    schemas: tuple[Schema, ...]
    current_version_id: int
    versions: tuple[ViewVersion, ...]
    version_log: tuple[ViewHistoryEntry, ...]
    properties: dict[str, str] = field(default_factory=dict)
    extra: tuple[tuple[str, Any], ...] = ()

    def version(self, version_id: int) -> ViewVersion | None:
        return next((v for v in self.versions if v.version_id == version_id), None)

    @property
    def current_version(self) -> ViewVersion:
        """The current version; InvalidMetadataError when ``current-version-id`` names none (Java:
        "Cannot find current version ... in view versions")."""
        v = self.version(self.current_version_id)
        if v is None:
            raise InvalidMetadataError(f"cannot find current version {self.current_version_id} in view versions: "
                                       f"{sorted(x.version_id for x in self.versions)}")
        return v

    def schema_by_id(self, schema_id: int) -> Schema | None:
        return next((s for s in self.schemas if s.schema_id == schema_id), None)

    @property
    def schema(self) -> Schema:
        """The current version's schema; InvalidMetadataError when it is not in ``schemas``."""
        sid = self.current_version.schema_id
        s = self.schema_by_id(sid)
        if s is None:
            raise InvalidMetadataError(f"cannot find current schema with id {sid} in schemas: "
                                       f"{sorted(x.schema_id for x in self.schemas)}")
        return s

    def to_json(self) -> dict[str, Any]:
        """The JSON in Java's ViewMetadataParser order (properties only when there are some)."""
        d: dict[str, Any] = {"view-uuid": self.view_uuid, "format-version": self.format_version,
                             "location": self.location}
        if self.properties:
            d["properties"] = dict(self.properties)
        d["schemas"] = [s.to_json() for s in self.schemas]
        d["current-version-id"] = self.current_version_id
        d["versions"] = [v.to_json() for v in self.versions]
        d["version-log"] = [e.to_json() for e in self.version_log]
        for k, v in self.extra:
            d.setdefault(k, v)
        return d

    def to_bytes(self) -> bytes:
        return json.dumps(self.to_json(), indent=2).encode()


def is_view_metadata(obj: Any) -> bool:
    """Whether a parsed JSON document is view metadata rather than table metadata: it has the
    view's ``view-uuid`` or its ``versions`` / ``current-version-id`` (a table has neither)."""
    return isinstance(obj, dict) and ("view-uuid" in obj or ("versions" in obj and "current-version-id" in obj)
                                      or "version-log" in obj)


def is_view_metadata_json(data: bytes | str) -> bool:
    """Whether a JSON document is view metadata (:func:`is_view_metadata`); False when it is not
    JSON. A table's metadata is told by its top-level keys, its values not parsed (a neglected
    table's 100 MB of snapshots)."""
    keys = top_level_keys(data)
    if keys is not None and not is_view_metadata(dict.fromkeys(keys)):
        return False
    try:
        return is_view_metadata(json.loads(data))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False


def parse_view_metadata(data: bytes | str | dict[str, Any], *, source: str = "view metadata") -> ViewMetadata:
    """Parse a view metadata document; InvalidMetadataError naming ``source`` when a required field
    is missing or has the wrong type, UnsupportedFormatVersionError for a format version other than 1."""
    obj = data if isinstance(data, dict) else parse_json(data, source=source)
    if not isinstance(obj, dict):
        raise InvalidMetadataError(f"{source}: view metadata must be a JSON object")
    try:
        return _parse(obj)
    except InvalidMetadataError as e:
        raise type(e)(f"{source}: {e.message}", hint=e.hint) from None
    except RecursionError:
        raise InvalidMetadataError(f"{source}: invalid view metadata: a type is nested too deeply") from None
    except (TypeError, ValueError, AttributeError, OverflowError) as e:
        raise InvalidMetadataError(f"{source}: invalid view metadata: {e}") from None


def format_version_of(obj: dict[str, Any]) -> int:
    v = _required(obj, "format-version")
    if not isinstance(v, int) or isinstance(v, bool):
        raise InvalidMetadataError(f"format-version must be an integer, not {v!r}")
    if v != SUPPORTED_VIEW_FORMAT_VERSION:
        raise UnsupportedFormatVersionError(f"unsupported view format-version {v}: the view spec has format "
                                            f"version {SUPPORTED_VIEW_FORMAT_VERSION}")
    return v


def _required(obj: dict[str, Any], key: str, what: str = "view metadata") -> Any:
    if obj.get(key) is None:
        raise InvalidMetadataError(f"{what} is missing {key!r}")
    return obj[key]


def _string(obj: dict[str, Any], key: str, what: str) -> str:
    v = _required(obj, key, what)
    if not isinstance(v, str):
        raise InvalidMetadataError(f"{what}: {key!r} must be a string, not {v!r}")
    return v


def _array(obj: dict[str, Any], key: str, what: str = "view metadata") -> list[Any]:
    v = _required(obj, key, what)
    if not isinstance(v, list):
        raise InvalidMetadataError(f"{what}: {key!r} must be a list, not {v!r}")
    return v


def string_map(obj: dict[str, Any], key: str, what: str, *, required: bool) -> dict[str, str]:
    """A string-to-string map (Java's JsonUtil.getStringMap: every value a string)."""
    v = obj.get(key)
    if v is None:
        if required:
            raise InvalidMetadataError(f"{what} is missing {key!r}")
        return {}
    if not isinstance(v, dict) or not all(isinstance(x, str) for x in v.values()):
        raise InvalidMetadataError(f"{what}: {key!r} must be a map of strings to strings")
    return {str(k): x for k, x in v.items()}


def representation_from_json(obj: Any, what: str) -> ViewRepresentation:
    if not isinstance(obj, dict):
        raise InvalidMetadataError(f"{what}: a representation must be a JSON object, not {obj!r}")
    rtype = _string(obj, "type", what)
    if rtype.lower() != SQL:  # Java keeps an unknown type as an UnknownViewRepresentation
        return ViewRepresentation(rtype, extra=tuple((k, v) for k, v in obj.items() if k != "type"))
    return ViewRepresentation(rtype, _string(obj, "sql", what), _string(obj, "dialect", what),
                              extra=tuple((k, v) for k, v in obj.items() if k not in ("type", "sql", "dialect")))


def version_from_json(obj: Any) -> ViewVersion:
    if not isinstance(obj, dict):
        raise InvalidMetadataError(f"a view version must be a JSON object, not {obj!r}")
    what = f"view version {obj.get('version-id', '?')}"
    namespace = _array(obj, "default-namespace", what)
    if not all(isinstance(level, str) for level in namespace):
        raise InvalidMetadataError(f"{what}: 'default-namespace' must be a list of strings")
    catalog = obj.get("default-catalog")
    if catalog is not None and not isinstance(catalog, str):
        raise InvalidMetadataError(f"{what}: 'default-catalog' must be a string, not {catalog!r}")
    return ViewVersion(
        version_id=json_int(_required(obj, "version-id", what), "version-id"),
        schema_id=json_int(_required(obj, "schema-id", what), "schema-id"),
        timestamp_ms=json_long(_required(obj, "timestamp-ms", what), "timestamp-ms"),
        summary=string_map(obj, "summary", what, required=True),
        representations=tuple(representation_from_json(r, what) for r in _array(obj, "representations", what)),
        default_namespace=tuple(namespace),
        default_catalog=catalog,
        extra=tuple((k, v) for k, v in obj.items() if k not in _VERSION_KEYS),
    )


def history_entry_from_json(obj: Any) -> ViewHistoryEntry:
    if not isinstance(obj, dict):
        raise InvalidMetadataError(f"a version-log entry must be a JSON object, not {obj!r}")
    return ViewHistoryEntry(json_long(_required(obj, "timestamp-ms", "a version-log entry"), "timestamp-ms"),
                            json_int(_required(obj, "version-id", "a version-log entry"), "version-id"))


def _parse(obj: dict[str, Any]) -> ViewMetadata:
    # In Java's ViewMetadataParser order, so that the first problem reported is Java's.
    view_uuid = _string(obj, "view-uuid", "view metadata")
    version = format_version_of(obj)
    location = _string(obj, "location", "view metadata")
    properties = string_map(obj, "properties", "view metadata", required=False)
    schemas = tuple(schema_from_json(s) for s in _array(obj, "schemas"))
    current = json_int(_required(obj, "current-version-id"), "current-version-id")
    versions = tuple(version_from_json(v) for v in _array(obj, "versions"))
    log = tuple(history_entry_from_json(e) for e in _array(obj, "version-log"))
    return ViewMetadata(view_uuid=view_uuid, format_version=version, location=location, schemas=schemas,
                        current_version_id=current, versions=versions, version_log=log, properties=properties,
                        extra=tuple((k, v) for k, v in obj.items() if k not in _VIEW_KEYS))
