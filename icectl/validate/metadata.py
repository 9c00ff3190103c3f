"""Table metadata checks for ``validate``: the raw JSON against the writer requirements of its
format version (spec: "Table Metadata Fields", "Snapshots", Appendix E; the row-lineage change;
the v4 walk-through), then the parsed metadata: ids, bounds, refs, logs, sequence numbers and row
lineage.

The raw JSON is checked because :func:`icectl.spec.metadata.parse_table_metadata` is tolerant:
it fills defaults and normalises v1's singular fields, so a missing required field would not show.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from icectl.errors import InvalidMetadataError
from icectl.io import has_scheme, resolve_path
from icectl.spec.metadata import MAIN_BRANCH, TableMetadata, parse_json, parse_table_metadata, split_metadata
from icectl.spec.types import type_min_version, walk_fields
from icectl.validate.findings import Collector

MAX_FIELD_ID = 2147483447  # "must not use field ids greater than 2147483447 (Integer.MAX_VALUE - 200)"
ONE_MINUTE_MS = 60_000  # Iceberg Java's tolerance for clock skew between log entries
OPERATIONS = ("append", "replace", "overwrite", "delete")

_INT, _STR, _OBJ, _LIST = "integer", "string", "object", "list"
FIELD_TYPES = {
    "format-version": _INT, "table-uuid": _STR, "location": _STR, "last-sequence-number": _INT,
    "last-updated-ms": _INT, "last-column-id": _INT, "schema": _OBJ, "schemas": _LIST, "current-schema-id": _INT,
    "partition-spec": _LIST, "partition-specs": _LIST, "default-spec-id": _INT, "last-partition-id": _INT,
    "properties": _OBJ, "current-snapshot-id": _INT, "snapshots": _LIST, "snapshot-log": _LIST,
    "metadata-log": _LIST, "sort-orders": _LIST, "default-sort-order-id": _INT, "refs": _OBJ,
    "statistics": _LIST, "partition-statistics": _LIST, "next-row-id": _INT,
}
_V2_REQUIRED = ("format-version", "table-uuid", "location", "last-sequence-number", "last-updated-ms",
                "last-column-id", "schemas", "current-schema-id", "partition-specs", "default-spec-id",
                "last-partition-id", "sort-orders", "default-sort-order-id")
# Writer requirements, per format version: fields that must be written, and fields to omit.
REQUIRED: dict[int, tuple[str, ...]] = {
    1: ("format-version", "location", "last-updated-ms", "last-column-id", "schema", "partition-spec"),
    2: _V2_REQUIRED,
    3: _V2_REQUIRED + ("next-row-id",),
    4: tuple(f for f in _V2_REQUIRED if f != "location") + ("next-row-id",),  # v4: "location ... optional"
}
OMIT: dict[int, tuple[str, ...]] = {
    1: ("last-sequence-number",),
    2: ("schema", "partition-spec"),
    3: ("schema", "partition-spec"),
    4: ("schema", "partition-spec"),
}
SNAPSHOT_TYPES = {"snapshot-id": _INT, "parent-snapshot-id": _INT, "sequence-number": _INT, "timestamp-ms": _INT,
                  "manifest-list": _STR, "manifests": _LIST, "summary": _OBJ, "schema-id": _INT,
                  "first-row-id": _INT, "added-rows": _INT}


def _is(value: Any, kind: str) -> bool:
    if kind == _INT:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == _STR:
        return isinstance(value, str)
    if kind == _OBJ:
        return isinstance(value, dict)
    return isinstance(value, list)


def check_metadata(raw: bytes, location: str, out: Collector, *, catalog_kind: str = "",
                   supports_v4: bool = True) -> TableMetadata | None:
    """Check a metadata file's bytes; return the parsed metadata (None when it cannot be parsed)."""
    # Split at its top level when it can be (the snapshots kept as their bytes, each parsed once,
    # as the load checks it, and checked then: ``seen``); else parsed whole, the findings the same.
    seen = _SnapshotPass(location)
    doc = split_metadata(raw, seen.visit)
    if doc is not None:
        obj: Any = doc.fields
    else:
        try:
            obj = parse_json(raw, source=location)
        except InvalidMetadataError as e:
            out.add("META_INVALID_JSON", e.message.removeprefix(f"{location}: "), file=location)
            return None
    if not isinstance(obj, dict):
        out.add("META_INVALID_JSON", f"table metadata must be a JSON object, not {type(obj).__name__}", file=location)
        return None
    version = obj.get("format-version")
    if not _is(version, _INT) or version not in REQUIRED:
        what = "missing" if "format-version" not in obj else f"{version!r}"
        out.add("META_FORMAT_VERSION", f"format-version is {what}: icectl validates format versions 1 to 4",
                file=location)
        return None
    before = len(out.findings)
    _check_raw_fields(obj, version, location, out, seen if doc is not None else None)
    if version >= 4 and not supports_v4:
        out.add("V4_FILESYSTEM_CATALOG", f"format version {version} tables cannot live in a {catalog_kind} catalog; "
                "register the metadata file in a SQL catalog (icectl register)", file=location)
    clean = _without_invalid_refs(obj)
    try:
        md = parse_table_metadata(replace(doc, fields=clean) if doc is not None else clean, source=location)
    except InvalidMetadataError as e:
        reported = any(f.code in ("META_FIELD_MISSING", "META_FIELD_TYPE") for f in out.findings[before:])
        if not reported:
            out.add("META_INVALID", e.message, file=location)
        return None
    _check_parsed(md, obj, location, out, seen if doc is not None else None)
    return md


class _SnapshotPass:
    """What the checks need of each snapshot of a split document, taken in the load's one pass
    over them (``split_metadata``'s ``each_snapshot``): the raw snapshot checks' findings, the
    manifest-list paths that are not absolute (the only ones a path rule can break) and the row
    lineage fields, so no snapshot is parsed again."""

    def __init__(self, location: str):
        self.location = location
        self.out = Collector()
        self.relative: list[tuple[int, str]] = []  # (snapshot id, manifest-list path)
        self.lineage: list[tuple[int, int | None, int | None]] = []  # (snapshot id, first-row-id, added-rows)

    def visit(self, fields: dict[str, Any], s: dict[str, Any]) -> None:
        v = fields.get("format-version")
        if not _is(v, _INT) or v not in REQUIRED:
            return  # check_metadata stops at the format version
        _check_raw_snapshot(s, v, self.location, self.out)
        path = s.get("manifest-list")
        if isinstance(path, str) and path and not (path.startswith("/") or has_scheme(path)):
            self.relative.append((s["snapshot-id"], path))
        first, added = s.get("first-row-id"), s.get("added-rows")
        if first is not None or added is not None:
            self.lineage.append((s["snapshot-id"], first, added))


# -- raw JSON ------------------------------------------------------------------------------------

def _short(value: Any) -> str:
    """The start of a value's JSON text (a value nested too deeply to write: its JSON type)."""
    try:
        return json.dumps(value)[:60]
    except (RecursionError, ValueError):
        return "a deeply nested " + type(value).__name__

def _check_raw_fields(obj: dict[str, Any], v: int, location: str, out: Collector,
                      seen: _SnapshotPass | None = None) -> None:
    """``seen``: the snapshots' checks, made as they were split, when ``obj`` does not hold them
    (a split document)."""
    for name in REQUIRED[v]:
        if name not in obj or (obj[name] is None and name != "current-snapshot-id"):
            out.add("META_FIELD_MISSING", f"format version {v} requires {name!r}", file=location)
    if v == 1 and "schemas" in obj and obj.get("current-schema-id") is None:
        out.add("META_FIELD_MISSING", "'schemas' is given without 'current-schema-id' (a reader cannot tell which "
                "schema is current)", file=location)
    for name in OMIT[v]:
        if name in obj:
            out.add("META_FIELD_FORBIDDEN", f"format version {v} metadata should not write {name!r}", file=location)
    if v < 3 and "next-row-id" in obj:
        out.add("LINEAGE_BEFORE_V3", f"'next-row-id' is a v3 field, but the table is format version {v}",
                file=location)
    for name, kind in FIELD_TYPES.items():
        value = obj.get(name)
        if value is None:
            continue
        if not _is(value, kind):
            out.add("META_FIELD_TYPE", f"{name!r} must be a JSON {kind}, not {_short(value)}", file=location)
    refs = obj.get("refs")
    if isinstance(refs, dict):
        for name, ref in refs.items():
            if not isinstance(ref, dict) or not _is(ref.get("snapshot-id"), _INT):
                out.add("REF_INVALID", f"ref {name!r} has no integer snapshot-id", file=location)
            elif str(ref.get("type", "")).lower() not in ("branch", "tag"):
                out.add("REF_INVALID", f"ref {name!r} has type {ref.get('type')!r}; a ref is a branch or a tag",
                        file=location)
            elif name == MAIN_BRANCH and str(ref.get("type")).lower() != "branch":
                out.add("REF_INVALID", "the main ref must be a branch", file=location)
    if seen is not None:
        out.extend(seen.out.findings)
        return
    snaps = obj.get("snapshots")
    for s in snaps if isinstance(snaps, list) else []:
        if isinstance(s, dict):
            _check_raw_snapshot(s, v, location, out)


def _check_raw_snapshot(s: dict[str, Any], v: int, location: str, out: Collector) -> None:
    if _usual_snapshot(s, v):
        return
    sid = s.get("snapshot-id") if _is(s.get("snapshot-id"), _INT) else None
    for name, kind in SNAPSHOT_TYPES.items():
        if s.get(name) is not None and not _is(s[name], kind):
            out.add("META_FIELD_TYPE", f"snapshot field {name!r} must be a JSON {kind}", file=location, snapshot_id=sid)
    for name in ("snapshot-id", "timestamp-ms"):
        if s.get(name) is None:
            out.add("META_FIELD_MISSING", f"a snapshot requires {name!r}", file=location, snapshot_id=sid)
    seq = s.get("sequence-number")
    # Snapshots written before an upgrade from v1 have no sequence number (read as 0): the v1
    # rules still apply to them (Appendix E: "Tables that are upgraded from v1 may contain metadata
    # that does not follow these requirements").
    v2_rules = v >= 2 and _is(seq, _INT) and seq > 0
    if v == 1 and "sequence-number" in s:
        out.add("META_FIELD_FORBIDDEN", "format version 1 snapshots should not write 'sequence-number'",
                file=location, snapshot_id=sid)
    if v2_rules:
        if not s.get("manifest-list"):
            out.add("META_FIELD_MISSING", f"format version {v} snapshots require 'manifest-list'", file=location,
                    snapshot_id=sid)
        if "manifests" in s:
            out.add("META_FIELD_FORBIDDEN", f"format version {v} snapshots should not write 'manifests'",
                    file=location, snapshot_id=sid)
        summary = s.get("summary")
        if not isinstance(summary, dict) or "operation" not in summary:
            out.add("META_FIELD_MISSING", f"format version {v} snapshots require a 'summary' with an 'operation'",
                    file=location, snapshot_id=sid)
    elif not s.get("manifest-list") and s.get("manifests") is None:
        out.add("META_FIELD_MISSING", "a snapshot needs a 'manifest-list' (or, in v1, 'manifests')", file=location,
                snapshot_id=sid)
    summary = s.get("summary")
    if isinstance(summary, dict) and "operation" in summary and summary["operation"] not in OPERATIONS:
        out.add("SNAPSHOT_OPERATION", f"unknown operation {summary['operation']!r} (expected one of "
                f"{', '.join(OPERATIONS)})", file=location, snapshot_id=sid)
    elif not v2_rules and (not isinstance(summary, dict) or "operation" not in summary) and v == 1 \
            and summary is not None:
        out.add("SNAPSHOT_OPERATION", "the summary has no operation", file=location, snapshot_id=sid)
    if v < 3 and ("first-row-id" in s or "added-rows" in s):
        out.add("LINEAGE_BEFORE_V3", f"snapshot row-lineage fields in a format version {v} table", file=location,
                snapshot_id=sid)


_USUAL_KEYS = frozenset(("snapshot-id", "parent-snapshot-id", "sequence-number", "timestamp-ms", "manifest-list",
                         "summary", "schema-id"))


def _usual_snapshot(s: dict[str, Any], v: int) -> bool:
    """True for the snapshot every v2+ writer writes, which breaks none of the rules of
    ``_check_raw_snapshot`` (a table of 100,000 snapshots is checked in a fraction of the time):
    only these keys, each of its JSON type, a positive sequence number, a manifest list and a
    summary with a known operation."""
    if v < 2 or not s.keys() <= _USUAL_KEYS:
        return False
    get = s.get
    seq, path, summary = get("sequence-number"), get("manifest-list"), get("summary")
    if type(seq) is not int or seq <= 0 or type(path) is not str or not path or type(summary) is not dict:
        return False
    parent, schema_id = get("parent-snapshot-id"), get("schema-id")
    return summary.get("operation") in OPERATIONS and type(get("snapshot-id")) is int and \
        type(get("timestamp-ms")) is int and (parent is None or type(parent) is int) and \
        (schema_id is None or type(schema_id) is int)


def _without_invalid_refs(obj: dict[str, Any]) -> dict[str, Any]:
    refs = obj.get("refs")
    if not isinstance(refs, dict):
        return obj
    good = {k: r for k, r in refs.items() if isinstance(r, dict) and _is(r.get("snapshot-id"), _INT)
            and str(r.get("type", "")).lower() in ("branch", "tag")}
    return obj if len(good) == len(refs) else {**obj, "refs": good}


# -- parsed metadata -------------------------------------------------------------------------------

def _check_parsed(md: TableMetadata, obj: dict[str, Any], location: str, out: Collector,
                  seen: _SnapshotPass | None = None) -> None:
    """``seen``: what the split document's pass took of each snapshot (else the snapshots are read)."""
    _check_schemas(md, location, out)
    _check_specs_and_orders(md, obj, location, out)
    _check_snapshots(md, location, out)
    _check_refs(md, location, out, refs_given=obj.get("refs") is not None)
    _check_logs(md, location, out)
    if md.format_version >= 3:
        _check_lineage(md, location, out, seen.lineage if seen is not None else
                       [(s.snapshot_id, s.first_row_id, s.added_rows) for s in md.each_snapshot()])
    if seen is not None:  # its snapshots have no inline manifests (split_metadata sends those to a whole parse)
        for sid, path in seen.relative:
            check_path(md, path, out, file=location, snapshot_id=sid)
    else:
        for s in md.each_snapshot():
            if s.manifest_list is not None:
                check_path(md, s.manifest_list, out, file=location, snapshot_id=s.snapshot_id)
            for m in s.manifests or ():
                check_path(md, m, out, file=location, snapshot_id=s.snapshot_id)
    for e in md.metadata_log:
        check_path(md, e.metadata_file, out, file=location)
    for st in md.statistics + md.partition_statistics:
        check_path(md, st.statistics_path, out, file=location, snapshot_id=st.snapshot_id)


def check_path(md: TableMetadata, path: str, out: Collector, **where: Any) -> str | None:
    """The absolute path of a stored path, or None (and a finding) when it breaks the path rules."""
    if not isinstance(path, str) or not path:
        return None
    absolute = has_scheme(path) or path.startswith("/")
    if md.format_version < 4:
        if not absolute:
            out.add("PATH_RELATIVE_BEFORE_V4", f"relative path {path!r}: format version {md.format_version} "
                    "stores full URIs", **where)
            return None
        return path
    try:
        return resolve_path(md.location, path, md.format_version)
    except InvalidMetadataError as e:
        out.add("PATH_ESCAPES_LOCATION", e.message, **where)
        return None


def _check_schemas(md: TableMetadata, location: str, out: Collector) -> None:
    seen: set[int] = set()
    highest = 0
    for s in md.schemas:
        if s.schema_id in seen:
            out.add("SCHEMA_ID_DUPLICATE", f"schema-id {s.schema_id} is used by more than one schema", file=location)
        seen.add(s.schema_id)
        ids: dict[int, str] = {}
        for path, f in walk_fields(s.fields):
            if f.field_id in ids:
                out.add("FIELD_ID_DUPLICATE", f"schema {s.schema_id}: field id {f.field_id} is both "
                        f"{ids[f.field_id]!r} and {path!r}", file=location)
            ids[f.field_id] = path
            if f.field_id > MAX_FIELD_ID:
                out.add("FIELD_ID_RESERVED", f"schema {s.schema_id}: field {path!r} has id {f.field_id}, above "
                        f"{MAX_FIELD_ID} (reserved for metadata columns)", file=location)
            highest = max(highest, f.field_id)
            if md.format_version < 3 and (f.has_initial_default or f.has_write_default):
                out.add("TYPE_NOT_IN_VERSION", f"schema {s.schema_id}: field {path!r} has a default value; column "
                        f"defaults need format version 3", file=location)
        need = type_min_version(s.as_struct)
        if need > md.format_version:
            out.add("TYPE_NOT_IN_VERSION", f"schema {s.schema_id} uses types of format version {need} (variant, "
                    f"geometry, geography, unknown, timestamp_ns) in a format version {md.format_version} table",
                    file=location)
    if highest > md.last_column_id:
        out.add("LAST_COLUMN_ID", f"field id {highest} is above last-column-id {md.last_column_id}", file=location)
    if md.current_schema_id not in seen:
        out.add("CURRENT_ID_MISSING", f"current-schema-id {md.current_schema_id} is not a schema of the table",
                file=location)


def _all_field_ids(md: TableMetadata) -> set[int]:
    ids: set[int] = set()
    for s in md.schemas:
        ids.update(s.all_field_ids())
    return ids


def _check_specs_and_orders(md: TableMetadata, obj: dict[str, Any], location: str, out: Collector) -> None:
    field_ids = _all_field_ids(md)
    seen_specs: set[int] = set()
    by_field_id: dict[int, tuple[int, str, int]] = {}
    highest = None
    for spec in md.partition_specs:
        if spec.spec_id in seen_specs:
            out.add("SPEC_ID_DUPLICATE", f"spec-id {spec.spec_id} is used by more than one partition spec",
                    file=location)
        seen_specs.add(spec.spec_id)
        in_spec: set[int] = set()
        for f in spec.fields:
            if f.field_id in in_spec:
                out.add("PARTITION_FIELD_ID_DUPLICATE", f"spec {spec.spec_id}: partition field id {f.field_id} is "
                        "used twice", file=location)
            in_spec.add(f.field_id)
            highest = f.field_id if highest is None else max(highest, f.field_id)
            for src in (f.source_ids or (f.source_id,)):
                if src not in field_ids:
                    out.add("SOURCE_COLUMN_MISSING", f"spec {spec.spec_id}: partition field {f.name!r} reads column "
                            f"{src}, which is in no schema", file=location)
            if md.format_version >= 2:
                prev = by_field_id.get(f.field_id)
                if prev is not None and _different_partition_field(prev, (f.source_id, f.transform)):
                    out.add("PARTITION_FIELD_ID_DUPLICATE", f"partition field id {f.field_id} means different fields "
                            f"in spec {prev[2]} and spec {spec.spec_id}; in v2 a partition field id is unique across "
                            "specs", file=location)
                else:
                    by_field_id.setdefault(f.field_id, (f.source_id, f.transform, spec.spec_id))
    if "last-partition-id" in obj and highest is not None and highest > md.last_partition_id:
        out.add("LAST_PARTITION_ID", f"partition field id {highest} is above last-partition-id "
                f"{md.last_partition_id}", file=location)
    if md.default_spec_id not in seen_specs:
        out.add("CURRENT_ID_MISSING", f"default-spec-id {md.default_spec_id} is not a partition spec of the table",
                file=location)
    seen_orders: set[int] = set()
    for order in md.sort_orders:
        if order.order_id in seen_orders:
            out.add("SORT_ORDER_ID_DUPLICATE", f"order-id {order.order_id} is used by more than one sort order",
                    file=location)
        seen_orders.add(order.order_id)
        if order.order_id == 0 and order.fields:
            out.add("SORT_ORDER_ZERO", "sort order 0 is reserved for the unsorted order but has fields", file=location)
        for f in order.fields:
            for src in (f.source_ids or (f.source_id,)):
                if src not in field_ids:
                    out.add("SOURCE_COLUMN_MISSING", f"sort order {order.order_id} reads column {src}, which is in "
                            "no schema", file=location)
    if ("sort-orders" in obj or md.default_sort_order_id != 0) and md.default_sort_order_id not in seen_orders:
        out.add("CURRENT_ID_MISSING", f"default-sort-order-id {md.default_sort_order_id} is not a sort order of the "
                "table", file=location)


def _different_partition_field(prev: tuple[int, str, int], cur: tuple[int, str]) -> bool:
    # A v1 spec drops a field by replacing its transform with void: still the same field.
    if prev[0] != cur[0]:
        return True
    return prev[1] != cur[1] and "void" not in (prev[1], cur[1])


def _check_snapshots(md: TableMetadata, location: str, out: Collector) -> None:
    # The three fields these checks read, not a Snapshot object each (a neglected table has 100,000).
    snap_ids = md.snapshot_values("snapshot_id")
    parents = md.snapshot_values("parent_snapshot_id")
    ids: dict[int, int] = {}
    for sid in snap_ids:
        ids[sid] = ids.get(sid, 0) + 1
    for sid, n in ids.items():
        if n > 1:
            out.add("SNAPSHOT_ID_DUPLICATE", f"snapshot-id {sid} is used by {n} snapshots", file=location,
                    snapshot_id=sid)
    by_id = {sid: i for i, sid in enumerate(snap_ids)}  # the last snapshot of a repeated id
    # Cycles: follow parents; a chain that comes back to a snapshot on the current walk loops.
    done: set[int] = set()
    for i in range(len(snap_ids)):
        walk: list[int] = []
        on_walk: set[int] = set()
        cur: int | None = i
        while cur is not None and snap_ids[cur] not in done:
            if snap_ids[cur] in on_walk:
                out.add("SNAPSHOT_PARENT_CYCLE", f"snapshot {snap_ids[cur]} is its own ancestor", file=location,
                        snapshot_id=snap_ids[cur])
                break
            on_walk.add(snap_ids[cur])
            walk.append(snap_ids[cur])
            cur = by_id.get(parents[cur]) if parents[cur] is not None else None
        done.update(walk)
    if md.format_version < 2:
        return
    seqs: dict[int, list[int]] = {}
    seq_numbers = md.snapshot_values("sequence_number")
    for sid, seq, parent_id in zip(snap_ids, seq_numbers, parents):
        if seq > md.last_sequence_number:
            out.add("SEQUENCE_NUMBER_ABOVE_LAST", f"sequence-number {seq} is above last-sequence-number "
                    f"{md.last_sequence_number}", file=location, snapshot_id=sid)
        if seq > 0:
            seqs.setdefault(seq, []).append(sid)
        p = by_id.get(parent_id) if parent_id is not None else None
        if p is not None and seq > 0 and snap_ids[p] != sid and seq <= seq_numbers[p]:
            out.add("SEQUENCE_NUMBER_BACKWARDS", f"sequence-number {seq} is not above its parent "
                    f"{snap_ids[p]}'s {seq_numbers[p]}", file=location, snapshot_id=sid)
    for seq, sids in seqs.items():
        if len(sids) > 1:
            out.add("SEQUENCE_NUMBER_DUPLICATE", f"sequence-number {seq} is used by snapshots "
                    f"{', '.join(map(str, sids))}", file=location, snapshot_id=sids[-1])


def _check_refs(md: TableMetadata, location: str, out: Collector, *, refs_given: bool = True) -> None:
    by_id = set(md.snapshot_values("snapshot_id"))
    for name, ref in md.refs.items():
        if not refs_given and name == MAIN_BRANCH:
            continue  # main implied by current-snapshot-id (no refs in the file): checked below
        if ref.snapshot_id not in by_id:
            out.add("REF_MISSING_SNAPSHOT", f"{ref.ref_type} {name!r} points at snapshot {ref.snapshot_id}, which "
                    "does not exist", file=location, snapshot_id=ref.snapshot_id)
    cur = md.current_snapshot_id
    if cur is not None and cur not in by_id:
        out.add("CURRENT_SNAPSHOT_MISSING", f"current-snapshot-id {cur} is not a snapshot of the table", file=location,
                snapshot_id=cur)
    main = md.refs.get(MAIN_BRANCH)
    if main is not None and main.snapshot_id != cur:
        out.add("CURRENT_SNAPSHOT_MISMATCH", f"current-snapshot-id is {cur if cur is not None else -1} but main "
                f"points at {main.snapshot_id}", file=location)
    snaps = by_id
    for st in md.statistics + md.partition_statistics:
        if st.snapshot_id not in snaps:
            out.add("STATISTICS_UNKNOWN_SNAPSHOT", f"statistics file {st.statistics_path} is for snapshot "
                    f"{st.snapshot_id}, which is not in the table", file=location, snapshot_id=st.snapshot_id)


def _check_logs(md: TableMetadata, location: str, out: Collector) -> None:
    snaps = set(md.snapshot_values("snapshot_id"))
    prev = None
    for i, e in enumerate(md.each_snapshot_log_entry()):
        if prev is not None and e.timestamp_ms < prev - ONE_MINUTE_MS:
            out.add("SNAPSHOT_LOG_ORDER", f"snapshot-log entry {i} ({e.timestamp_ms}) is before the entry before it "
                    f"({prev})", file=location, snapshot_id=e.snapshot_id)
        prev = e.timestamp_ms if prev is None else max(prev, e.timestamp_ms)
        if e.snapshot_id not in snaps:
            out.add("SNAPSHOT_LOG_UNKNOWN", f"snapshot-log entry {i} names snapshot {e.snapshot_id}, which is not in "
                    "the table; entries up to an expired snapshot should be removed", file=location,
                    snapshot_id=e.snapshot_id)
    if md.snapshot_log and md.snapshot_log[-1].timestamp_ms > md.last_updated_ms + ONE_MINUTE_MS:
        out.add("SNAPSHOT_LOG_ORDER", f"the last snapshot-log entry ({md.snapshot_log[-1].timestamp_ms}) is after "
                f"last-updated-ms ({md.last_updated_ms})", file=location)
    prev = None
    for i, m in enumerate(md.metadata_log):
        if prev is not None and m.timestamp_ms < prev - ONE_MINUTE_MS:
            out.add("METADATA_LOG_ORDER", f"metadata-log entry {i} ({m.timestamp_ms}) is before the entry before it "
                    f"({prev})", file=location)
        prev = m.timestamp_ms if prev is None else max(prev, m.timestamp_ms)
    if md.metadata_log and md.metadata_log[-1].timestamp_ms > md.last_updated_ms + ONE_MINUTE_MS:
        out.add("METADATA_LOG_ORDER", f"the last metadata-log entry ({md.metadata_log[-1].timestamp_ms}) is after "
                f"last-updated-ms ({md.last_updated_ms})", file=location)


def _check_lineage(md: TableMetadata, location: str, out: Collector,
                   snapshots: Iterable[tuple[int, int | None, int | None]]) -> None:
    """``snapshots``: (id, first-row-id, added-rows) of each snapshot (at least of each with one of them)."""
    nxt = md.next_row_id
    if nxt is None:
        return  # reported as a missing required field
    if nxt < 0:
        out.add("LINEAGE_NEXT_ROW_ID", f"next-row-id {nxt} is negative", file=location)
    ranges = []
    for sid, first, added in snapshots:
        if first is None and added is None:
            continue
        if first is None or added is None:
            missing = "added-rows" if added is None else "first-row-id"
            out.add("LINEAGE_SNAPSHOT", f"the snapshot has row lineage but no {missing!r}", file=location,
                    snapshot_id=sid)
            continue
        if first < 0 or added < 0:
            out.add("LINEAGE_SNAPSHOT", f"first-row-id {first} and added-rows {added} must not be "
                    "negative", file=location, snapshot_id=sid)
            continue
        end = first + added
        if end > nxt:
            out.add("LINEAGE_NEXT_ROW_ID", f"row ids {first} to {end - 1} (first-row-id + added-rows) reach "
                    f"past next-row-id {nxt}", file=location, snapshot_id=sid)
        if added:
            ranges.append((first, end, sid))
    ranges.sort()
    for (a0, a1, sa), (b0, b1, sb) in zip(ranges, ranges[1:]):
        if b0 < a1:
            out.add("LINEAGE_SNAPSHOT", f"row ids {b0} to {b1 - 1} overlap those of snapshot {sa} ({a0} to {a1 - 1})",
                    file=location, snapshot_id=sb)

