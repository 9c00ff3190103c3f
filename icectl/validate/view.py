"""View metadata against the view spec (``format/view-spec.md``), every finding at once.

Errors are what Iceberg Java refuses: a required field missing or of the wrong type and a format
version other than 1 (``ViewMetadataParser`` fails), a current version or a version's schema that
does not exist (``ViewMetadata.currentVersion()`` / ``currentSchemaId()`` fail), two versions or
schemas with one id, two SQL representations of one dialect (the spec's "only one SQL
representation per dialect"; Java's ``ViewMetadata.Builder`` compares dialects case-insensitively).
Warnings are what Java reads but its writer never produces: a version-log entry for an unknown
version, version-log timestamps going back, a last entry that is not the current version.
"""
from __future__ import annotations

import uuid
from typing import Any

from icectl.errors import IcectlError
from icectl.spec.metadata import parse_json
from icectl.spec.types import schema_from_json, walk_fields
from icectl.spec.view import (SQL, SUPPORTED_VIEW_FORMAT_VERSION, VERSION_HISTORY_SIZE, ViewMetadata,
                              parse_view_metadata)
from icectl.validate.findings import Collector

__all__ = ["check_view_metadata"]

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)


def _is_int(v: Any, bounds: tuple[int, int] = _INT32) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and bounds[0] <= v <= bounds[1]


class _Checker:
    def __init__(self, location: str, out: Collector):
        self.location = location
        self.out = out

    def add(self, code: str, message: str) -> None:
        self.out.add(code, message, file=self.location)

    def field(self, obj: dict[str, Any], key: str, what: str, kind: str, *, required: bool = True) -> Any:
        """``obj[key]`` when present and of ``kind`` (string, int, long, list, map, strings), else
        None after a finding."""
        v = obj.get(key)
        if v is None:
            if required:
                self.add("VIEW_FIELD_MISSING", f"{what} is missing {key!r}")
            return None
        ok = {"string": isinstance(v, str), "int": _is_int(v), "long": _is_int(v, _INT64),
              "list": isinstance(v, list), "map": isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
              "strings": isinstance(v, list) and all(isinstance(x, str) for x in v)}[kind]
        if not ok:
            label = {"map": "a map of strings", "strings": "a list of strings", "int": "an integer",
                     "long": "an integer"}.get(kind, f"a {kind}")
            self.add("VIEW_FIELD_TYPE", f"{what}: {key!r} must be {label}, not {_short(v)}")
            return None
        return v


def check_view_metadata(raw: bytes, location: str, out: Collector) -> ViewMetadata | None:
    """Check a view metadata file's bytes; the parsed metadata when Java's parser would read it."""
    c = _Checker(location, out)
    try:
        obj = parse_json(raw, source=location)
    except IcectlError as e:
        c.add("VIEW_INVALID_JSON", e.message)
        return None
    if not isinstance(obj, dict):
        c.add("VIEW_INVALID_JSON", f"{location}: view metadata must be a JSON object, not {type(obj).__name__}")
        return None
    _check_top(c, obj)
    schema_ids = _check_schemas(c, obj)
    version_ids = _check_versions(c, obj, schema_ids)
    _check_log(c, obj, version_ids)
    try:
        return parse_view_metadata(obj, source=location)
    except IcectlError:
        return None  # already reported field by field


def _check_top(c: _Checker, obj: dict[str, Any]) -> None:
    what = "view metadata"
    fv = obj.get("format-version")
    if fv is None:
        c.add("VIEW_FORMAT_VERSION", "format-version is missing")
    elif not _is_int(fv):
        c.add("VIEW_FORMAT_VERSION", f"format-version must be an integer, not {_short(fv)}")
    elif fv != SUPPORTED_VIEW_FORMAT_VERSION:
        c.add("VIEW_FORMAT_VERSION", f"format-version is {fv}: the view spec has format version "
              f"{SUPPORTED_VIEW_FORMAT_VERSION}")
    view_uuid = c.field(obj, "view-uuid", what, "string")
    if view_uuid is not None:
        try:
            uuid.UUID(view_uuid)
        except ValueError:
            c.add("VIEW_UUID", f"view-uuid {view_uuid!r} is not a UUID")
    c.field(obj, "location", what, "string")
    c.field(obj, "current-version-id", what, "int")
    props = c.field(obj, "properties", what, "map", required=False)
    if props and VERSION_HISTORY_SIZE in props:
        value = props[VERSION_HISTORY_SIZE]
        try:
            ok = int(value) > 0
        except ValueError:
            ok = False
        if not ok:
            c.add("VIEW_PROPERTY", f"{VERSION_HISTORY_SIZE} is {value!r}: it must be a positive integer")


def _check_schemas(c: _Checker, obj: dict[str, Any]) -> set[int] | None:
    """The schema ids (None when ``schemas`` itself is unusable)."""
    schemas = c.field(obj, "schemas", "view metadata", "list")
    if schemas is None:
        return None
    ids: set[int] = set()
    for i, s in enumerate(schemas):
        try:
            schema = schema_from_json(s)
        except (IcectlError, TypeError, ValueError, AttributeError, RecursionError) as e:
            c.add("VIEW_SCHEMA_INVALID", f"schema {i} (of the list, from 0): {getattr(e, 'message', e)}")
            if isinstance(s, dict) and _is_int(s.get("schema-id", 0)):
                ids.add(s.get("schema-id", 0))  # still known, so versions naming it are not reported too
            continue
        if schema.schema_id in ids:
            c.add("VIEW_SCHEMA_ID_DUPLICATE", f"schema-id {schema.schema_id} is used by two schemas")
        ids.add(schema.schema_id)
        seen: dict[int, str] = {}
        for path, f in walk_fields(schema.fields):
            if f.field_id in seen:
                c.add("FIELD_ID_DUPLICATE", f"schema {schema.schema_id}: field id {f.field_id} is both "
                      f"{seen[f.field_id]!r} and {path!r}")
            seen[f.field_id] = path
    return ids


def _check_versions(c: _Checker, obj: dict[str, Any], schema_ids: set[int] | None) -> set[int] | None:
    versions = c.field(obj, "versions", "view metadata", "list")
    if versions is None:
        return None
    ids: set[int] = set()
    for i, v in enumerate(versions):
        if not isinstance(v, dict):
            c.add("VIEW_FIELD_TYPE", f"version {i} (of the list, from 0) must be a JSON object, not {_short(v)}")
            continue
        vid = c.field(v, "version-id", f"version {i} (of the list, from 0)", "int")
        what = f"version {vid if vid is not None else '?'}"
        if vid is not None:
            if vid in ids:
                c.add("VIEW_VERSION_ID_DUPLICATE", f"version-id {vid} is used by two versions")
            ids.add(vid)
        sid = c.field(v, "schema-id", what, "int")
        if sid is not None and schema_ids is not None and sid not in schema_ids:
            c.add("VIEW_VERSION_SCHEMA_MISSING", f"{what}: schema-id {sid} is not in schemas {sorted(schema_ids)}")
        c.field(v, "timestamp-ms", what, "long")
        c.field(v, "summary", what, "map")
        c.field(v, "default-namespace", what, "strings")
        c.field(v, "default-catalog", what, "string", required=False)
        reps = c.field(v, "representations", what, "list")
        _check_representations(c, reps or [], what)
    current = obj.get("current-version-id")
    if _is_int(current) and current not in ids:
        c.add("VIEW_CURRENT_VERSION_MISSING", f"current-version-id {current} is not in versions {sorted(ids)}")
    return ids


def _check_representations(c: _Checker, reps: list[Any], what: str) -> None:
    dialects: dict[str, str] = {}
    for r in reps:
        if not isinstance(r, dict) or not isinstance(r.get("type"), str):
            c.add("VIEW_REPRESENTATION_INVALID", f"{what}: a representation without a type: {_short(r)}")
            continue
        if r["type"].lower() != SQL:
            c.add("VIEW_REPRESENTATION_UNKNOWN", f"{what}: a representation of type {r['type']!r} (readers skip it)")
            continue
        missing = [k for k in ("sql", "dialect") if not isinstance(r.get(k), str)]
        if missing:
            c.add("VIEW_REPRESENTATION_INVALID", f"{what}: a sql representation without a string "
                  f"{' or '.join(repr(m) for m in missing)}")
            continue
        key = r["dialect"].lower()
        if key in dialects:
            c.add("VIEW_DIALECT_DUPLICATE", f"{what}: two SQL representations for dialect {key!r} "
                  f"({dialects[key]!r} and {r['dialect']!r})")
        dialects.setdefault(key, r["dialect"])


def _check_log(c: _Checker, obj: dict[str, Any], version_ids: set[int] | None) -> None:
    log = c.field(obj, "version-log", "view metadata", "list")
    if log is None:
        return
    last_ts: int | None = None
    last_id: int | None = None
    for i, e in enumerate(log):
        if not isinstance(e, dict):
            c.add("VIEW_FIELD_TYPE", f"version-log entry {i} must be a JSON object, not {_short(e)}")
            continue
        ts = c.field(e, "timestamp-ms", f"version-log entry {i}", "long")
        vid = c.field(e, "version-id", f"version-log entry {i}", "int")
        if vid is not None and version_ids is not None and vid not in version_ids:
            c.add("VIEW_VERSION_LOG_UNKNOWN", f"version-log entry {i} names version {vid}, which is not in versions")
        if ts is not None and last_ts is not None and ts < last_ts:
            c.add("VIEW_VERSION_LOG_ORDER", f"version-log entry {i} at {ts} is before the entry above it ({last_ts})")
        last_ts = ts if ts is not None else last_ts
        last_id = vid
    current = obj.get("current-version-id")
    if _is_int(current) and last_id != current and (version_ids is None or current in version_ids):
        c.add("VIEW_VERSION_LOG_CURRENT", "the version log is empty" if not log else
              f"the last version-log entry names version {last_id}, not the current version {current}")


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."
