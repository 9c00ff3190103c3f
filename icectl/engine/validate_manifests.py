"""Manifests, for ``validate``: one pass over every entry of a manifest.

Each manifest is scanned once per run (manifests are immutable; one shared by many snapshots is
checked once) by :func:`scan_manifest`, a pure function of the manifest's bytes, its manifest-list
entry and a small picklable :class:`ScanContext`, so large tables scan manifests in worker
processes. The scan checks every entry (status, inheritance, content, delete-file rules, bounds,
paths, row lineage) and returns the few facts the snapshot-level rules need: its live files.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from icectl.engine.validate import Finding, Severity
from icectl.engine.validate_bounds import check_bounds_columns, show
from icectl.errors import IcectlError, InvalidMetadataError

SKIP_FIELDS = frozenset({"column_sizes", "value_counts", "null_value_counts", "nan_value_counts", "distinct_counts",
                         "split_offsets", "key_metadata", "content_stats", "block_size_in_bytes", "file_ordinal",
                         "sort_columns"})
BOUND_FIELDS = frozenset({"lower_bounds", "upper_bounds"})
FORMATS = ("parquet", "avro", "orc", "puffin")
MAX_PER_CODE = 20  # findings of one code per manifest; the rest are counted in one more finding
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]+:")
REQUIRED_LIST_V2 = ("content", "sequence_number", "min_sequence_number", "added_snapshot_id", "added_files_count",
                     "existing_files_count", "deleted_files_count", "added_rows_count", "existing_rows_count",
                     "deleted_rows_count")


@dataclass(frozen=True)
class ManifestRef:
    """A manifest-list entry, as the scan needs it (picklable)."""

    path: str  # absolute
    length: int | None
    spec_id: int
    content: int = 0
    sequence_number: int = 0
    min_sequence_number: int = 0
    added_snapshot_id: int | None = None
    added_files: int | None = None
    existing_files: int | None = None
    deleted_files: int | None = None
    added_rows: int | None = None
    existing_rows: int | None = None
    deleted_rows: int | None = None
    partitions: tuple[tuple[bool, bool | None, bytes | None, bytes | None], ...] | None = None
    first_row_id: int | None = None
    usable_path: bool = True  # False: the stored path breaks the path rules (reported); not scanned


@dataclass(frozen=True)
class ScanContext:
    format_version: int
    location: str | None
    next_row_id: int | None
    specs: dict[int, tuple[tuple[int, str, str], ...]]  # spec id -> (field id, name, result type)
    types: dict[int, str]  # field id -> type, the newest schema that has it
    check_bounds: bool = True
    deep: bool = False


@dataclass
class LiveFile:
    """A live delete file (data files travel as plain tuples: there are many, and scans of worker
    processes are pickled)."""

    path: str
    content: int
    is_dv: bool
    referenced_data_file: str | None
    entry: int
    file_format: str = ""
    record_count: int = 0
    file_size_in_bytes: int = 0
    content_offset: int | None = None
    content_size_in_bytes: int | None = None


@dataclass
class ManifestScan:
    path: str
    readable: bool = True
    entries: int = 0
    findings: list[Finding] = field(default_factory=list)
    data: list[tuple[str, int, int, int, str]] = field(default_factory=list)  # path, entry, records, size, format
    deletes: list[LiveFile] = field(default_factory=list)


class _Out:
    """Findings of one manifest, at most MAX_PER_CODE of a code (then one that counts the rest)."""

    def __init__(self, manifest: str):
        self.manifest = manifest
        self.findings: list[Finding] = []
        self.counts: dict[str, int] = {}

    def add(self, code: str, message: str, entry: int | None = None, severity: Severity | None = None,
            file: str | None = None) -> None:
        n = self.counts.get(code, 0) + 1
        self.counts[code] = n
        if n <= MAX_PER_CODE:
            self.findings.append(Finding(code, message, file=file, manifest=self.manifest, entry=entry,
                                         severity=severity))  # type: ignore[arg-type]

    def close(self) -> list[Finding]:
        for code, n in self.counts.items():
            if n > MAX_PER_CODE:
                self.findings.append(Finding(code, f"... and {n - MAX_PER_CODE} more {code} findings in this manifest",
                                             manifest=self.manifest))
        return self.findings


def _header_types(header_schema: str | None, fallback: dict[int, str]) -> dict[int, str]:
    if not header_schema:
        return fallback
    cached = _HEADER_TYPES.get(header_schema)
    if cached is not None:
        return cached
    from icectl.engine.types import PrimitiveType, schema_from_json, walk_fields

    try:
        s = schema_from_json(json.loads(header_schema))
        types = {f.field_id: str(f.field_type) for _, f in walk_fields(s.fields)
                 if isinstance(f.field_type, PrimitiveType)}
    except (ValueError, IcectlError, TypeError, AttributeError):
        return fallback
    merged = {**fallback, **types}
    _HEADER_TYPES[header_schema] = merged
    return merged


_HEADER_TYPES: dict[str, dict[int, str]] = {}


# -- one manifest -------------------------------------------------------------------------------------

def scan_manifest(data: bytes | None, ref: ManifestRef, ctx: ScanContext) -> ManifestScan:
    """Check one manifest against its manifest-list entry; never raises for bad input.

    The cyclic garbage collector is paused meanwhile: a scan makes millions of small tuples and
    no cycles, and its collections would cost more than the decoding."""
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        return _scan_manifest(data, ref, ctx)
    finally:
        if enabled:
            gc.enable()


def _scan_manifest(data: bytes | None, ref: ManifestRef, ctx: ScanContext) -> ManifestScan:
    from icectl.engine.validate_avro import field_index, open_avro, record_type

    scan = ManifestScan(ref.path)
    out = _Out(ref.path)
    if data is None:
        out.add("MANIFEST_UNREADABLE", "manifest file not found", file=ref.path)
        scan.readable = False
        scan.findings = out.close()
        return scan
    if ref.length is not None and len(data) != ref.length:
        if len(data) < ref.length:
            out.add("MANIFEST_UNREADABLE", f"truncated: {len(data)} bytes, but manifest_length is {ref.length}")
            scan.readable = False
            scan.findings = out.close()
            return scan
        out.add("MANIFEST_LENGTH", f"manifest_length is {ref.length}, the file has {len(data)} bytes")
    try:
        avro = open_avro(data, source=ref.path)
        top = avro.schema if isinstance(avro.schema, dict) else {}
        i_status, i_snap = field_index(top, "status"), field_index(top, "snapshot_id")
        i_seq, i_fseq = field_index(top, "sequence_number"), field_index(top, "file_sequence_number")
        i_df = field_index(top, "data_file")
        df_schema = record_type(top["fields"][i_df]["type"]) if i_df is not None else None
        if i_status is None or df_schema is None:
            raise InvalidMetadataError("wrong Avro schema: a manifest entry needs 'status' and 'data_file'")
        idx = {f["name"]: i for i, f in enumerate(df_schema["fields"])}
        missing = [n for n in ("file_path", "file_format", "partition", "record_count", "file_size_in_bytes")
                   if n not in idx]
        if missing:
            raise InvalidMetadataError(f"wrong Avro schema: data_file has no {', '.join(missing)}")
        skip = SKIP_FIELDS if ctx.check_bounds else SKIP_FIELDS | BOUND_FIELDS
        records = _decode_all(avro, skip)
    except InvalidMetadataError as e:
        msg = e.message[len(ref.path) + 2:] if e.message.startswith(ref.path + ": ") else e.message
        out.add("MANIFEST_UNREADABLE", msg)
        scan.readable = False
        scan.findings = out.close()
        return scan
    scan.entries = len(records)
    meta = avro.metadata
    mfv = _header_checks(meta, ref, ctx, out)
    spec = ctx.specs.get(ref.spec_id)
    part_schema = record_type(df_schema["fields"][idx["partition"]]["type"])
    if spec is not None and part_schema is not None:
        pf = part_schema.get("fields", [])
        if len(pf) != len(spec):
            out.add("MANIFEST_PARTITION_TUPLE", f"the partition struct has {len(pf)} fields, spec {ref.spec_id} has "
                    f"{len(spec)}")
            spec = None
        elif mfv >= 2 and any(f.get("field-id") is not None and int(f["field-id"]) != s[0] for f, s in zip(pf, spec)):
            out.add("MANIFEST_PARTITION_TUPLE", f"partition struct field ids {[f.get('field-id') for f in pf]} are "
                    f"not spec {ref.spec_id}'s {[s[0] for s in spec]}")
    types = _header_types(meta.get("schema"), ctx.types) if ctx.check_bounds else ctx.types
    _scan_entries(records, ref, ctx, mfv, spec, types, idx, (i_status, i_snap, i_seq, i_fseq, i_df), scan, out)
    scan.findings = out.close()
    return scan


def _decode_all(avro: Any, skip: frozenset[str]) -> list[tuple]:
    return list(avro.records(skip, as_dict=BOUND_FIELDS))


def _header_checks(meta: dict[str, str], ref: ManifestRef, ctx: ScanContext, out: _Out) -> int:
    fv_text = meta.get("format-version")
    try:
        mfv = int(fv_text) if fv_text is not None else 1
    except ValueError:
        out.add("MANIFEST_HEADER", f"format-version {fv_text!r} is not a number")
        mfv = 1
    if mfv > ctx.format_version:
        out.add("MANIFEST_HEADER", f"a format version {mfv} manifest in a format version {ctx.format_version} table")
    # "schema-id" is required by the spec's table, but Iceberg Java (the reference) never writes
    # it, and no reader needs it: not checked.
    required = ["schema", "partition-spec"] + (["partition-spec-id", "content"] if mfv >= 2 else [])
    missing = [k for k in required if k not in meta]
    if missing:
        out.add("MANIFEST_HEADER", f"key-value metadata lacks {', '.join(missing)}")
    spec_id = meta.get("partition-spec-id")
    if spec_id is not None and spec_id.strip().lstrip("-").isdigit() and int(spec_id) != ref.spec_id:
        out.add("MANIFEST_HEADER", f"partition-spec-id is {spec_id}, the manifest list says {ref.spec_id}")
    content = meta.get("content")
    if content is not None and content not in ("data", "deletes"):
        out.add("MANIFEST_HEADER", f"content is {content!r}, not 'data' or 'deletes'")
    elif content is not None and (content == "deletes") != (ref.content == 1):
        out.add("MANIFEST_CONTENT_MISMATCH", f"the manifest says its content is {content!r}, the manifest list says "
                f"{'deletes' if ref.content == 1 else 'data'}")
    return mfv


def _scan_entries(records: list[tuple], ref: ManifestRef, ctx: ScanContext, mfv: int, spec: Any,
                  types: dict[int, str], idx: dict[str, int], top: tuple, scan: ManifestScan, out: _Out) -> None:
    i_status, i_snap, i_seq, i_fseq, i_df = top
    get = idx.get
    i_content, i_path, i_fmt, i_part = get("content"), idx["file_path"], idx["file_format"], idx["partition"]
    i_rc, i_size, i_lo, i_hi = idx["record_count"], idx["file_size_in_bytes"], get("lower_bounds"), get("upper_bounds")
    i_eq, i_frid, i_ref = get("equality_ids"), get("first_row_id"), get("referenced_data_file")
    i_off, i_csize = get("content_offset"), get("content_size_in_bytes")
    fv, m_seq, m_snap, m_content = ctx.format_version, ref.sequence_number, ref.added_snapshot_id, ref.content
    check_bounds = ctx.check_bounds and i_lo is not None
    bound_rows: list[int] = []
    bound_lo: list[Any] = []
    bound_hi: list[Any] = []
    counts, rows = [0, 0, 0], [0, 0, 0]
    min_live_seq = None
    nfields = len(spec) if spec is not None else 0
    part_vals: list[list[Any]] = [[] for _ in range(nfields)]
    data_out, deletes_out = scan.data, scan.deletes
    relative_ok = fv >= 4
    for n, rec in enumerate(records):
        status = rec[i_status]
        df = rec[i_df]
        content = df[i_content] if i_content is not None else 0
        content = 0 if content is None else content
        path = df[i_path]
        rc, size = df[i_rc], df[i_size]
        if status not in (0, 1, 2):
            out.add("ENTRY_STATUS", f"status {status} (0 existing, 1 added, 2 deleted)", n)
            counts = None  # the manifest list's counts cannot be checked
            continue
        if counts is not None:
            counts[status] += 1
            rows[status] += rc
        snap = rec[i_snap] if i_snap is not None else None
        seq = rec[i_seq] if i_seq is not None else None
        fseq = rec[i_fseq] if i_fseq is not None else None
        if status == 1:
            if snap is not None and m_snap is not None and snap != m_snap:
                out.add("ENTRY_INHERITANCE", f"an ADDED entry of snapshot {snap} in a manifest added by {m_snap}", n)
            if fseq is not None and mfv >= 2 and fseq != m_seq:
                out.add("ENTRY_INHERITANCE", f"an ADDED entry with file_sequence_number {fseq}; the manifest's is "
                        f"{m_seq}", n)
            seq = m_seq if seq is None else seq
            fseq = m_seq if fseq is None else fseq
        else:
            if status == 2 and snap is not None and m_snap is not None and snap != m_snap:
                out.add("ENTRY_INHERITANCE", f"a DELETED entry of snapshot {snap} in a manifest added by {m_snap}", n)
            if mfv >= 2 and (seq is None or fseq is None):
                out.add("ENTRY_INHERITANCE", f"a {'DELETED' if status == 2 else 'EXISTING'} entry without explicit "
                        "sequence numbers", n)
                seq = fseq = None  # unknown: the manifest's sequence rules cannot use it
            else:
                seq = 0 if seq is None else seq
                fseq = 0 if fseq is None else fseq
        if seq is None:
            pass
        elif seq > m_seq or fseq > m_seq:
            out.add("ENTRY_INHERITANCE", f"sequence numbers {seq}/{fseq} are above the manifest's {m_seq}", n)
        elif seq > fseq:
            out.add("ENTRY_INHERITANCE", f"data sequence number {seq} is above file sequence number {fseq}", n)
        if rc < 0 or size < 0:
            out.add("ENTRY_VALUES", f"record_count {rc}, file_size_in_bytes {size}", n)
        fmt = str(df[i_fmt]).lower()
        if fmt not in FORMATS:
            out.add("FILE_FORMAT_UNKNOWN", f"file_format {df[i_fmt]!r}", n)
        if content not in (0, 1, 2):
            out.add("ENTRY_VALUES", f"content {content} (0 data, 1 position deletes, 2 equality deletes)", n)
        elif (content == 0) != (m_content == 0):
            out.add("MANIFEST_CONTENT_MISMATCH", f"a {'data' if content == 0 else 'delete'} file in a "
                    f"{'data' if m_content == 0 else 'delete'} manifest", n)
        # Paths: full URIs before v4; v4 paths may be relative but must stay inside the location.
        abs_path = _path(path, relative_ok, ctx, out, n, "file_path")
        is_dv = content == 1 and fmt == "puffin"
        refd = df[i_ref] if i_ref is not None else None
        if refd is not None:
            refd = _path(refd, relative_ok, ctx, out, n, "referenced_data_file")
        if content != 0:
            _delete_rules(df, content, is_dv, status, fmt, mfv, ctx, out, n, i_eq, i_off, i_csize, refd, size, types)
        elif i_eq is not None and df[i_eq]:
            out.add("EQUALITY_IDS", "equality_ids on a data file (should be null unless content is 2)", n,
                    severity=Severity.WARNING)
        if i_frid is not None and df[i_frid] is not None:
            frid = df[i_frid]
            if fv < 3:
                out.add("LINEAGE_BEFORE_V3", f"first_row_id {frid} in a format version {fv} table", n)
            elif content != 0:
                out.add("LINEAGE_FILE", f"a delete file with first_row_id {frid} (must be null)", n)
            elif ctx.next_row_id is not None and frid + rc > ctx.next_row_id:
                out.add("LINEAGE_FILE", f"row ids {frid} to {frid + rc - 1} reach past next-row-id {ctx.next_row_id}", n)
        if check_bounds:
            lo, hi = df[i_lo], df[i_hi] if i_hi is not None else None
            if lo or hi:
                bound_rows.append(n)
                bound_lo.append(lo)
                bound_hi.append(hi)
        if status != 2:
            if seq is not None and (min_live_seq is None or seq < min_live_seq):
                min_live_seq = seq
            if nfields:
                pv = df[i_part]
                for i in range(nfields):
                    part_vals[i].append(pv[i])
            if abs_path is None:
                pass
            elif content == 0:
                data_out.append((abs_path, n, rc, size, fmt))
            else:
                lf = LiveFile(abs_path, content, is_dv, refd, n, fmt, rc, size)
                if is_dv and i_off is not None and i_csize is not None:
                    lf.content_offset, lf.content_size_in_bytes = df[i_off], df[i_csize]
                deletes_out.append(lf)
    if counts is not None:
        _check_counts(ref, counts, rows, min_live_seq, out)
    if spec is not None:
        _check_partition_summary(ref, spec, part_vals, out)
    if bound_rows:
        check_bounds_columns(bound_rows, bound_lo, bound_hi, types, out)


def _path(path: str, relative_ok: bool, ctx: ScanContext, out: _Out, n: int, what: str) -> str | None:
    if path[:1] == "/" or SCHEME.match(path):
        return path
    if not relative_ok:
        out.add("PATH_RELATIVE_BEFORE_V4", f"{what} {path!r} is relative; format version {ctx.format_version} stores "
                "full URIs", n)
        return None
    from icectl.io import resolve_path

    try:
        return resolve_path(ctx.location, path, 4)
    except InvalidMetadataError as e:
        out.add("PATH_ESCAPES_LOCATION", f"{what}: {e.message}", n)
        return None


def _delete_rules(df: tuple, content: int, is_dv: bool, status: int, fmt: str, mfv: int, ctx: ScanContext,
                  out: _Out, n: int, i_eq: int | None, i_off: int | None, i_csize: int | None, refd: str | None,
                  size: int, types: dict[int, str]) -> None:
    fv = ctx.format_version
    if fv == 1:
        out.add("DELETE_FILE_IN_V1", "row-level deletes are not supported in format version 1", n)
    if content == 2:
        eq = df[i_eq] if i_eq is not None else None
        if not eq:
            out.add("EQUALITY_IDS", "an equality delete file without equality_ids", n)
        else:
            for fid in eq:
                t = types.get(fid)
                if t is None:
                    out.add("EQUALITY_IDS", f"equality id {fid} is in no schema of the table", n)
                elif t in ("float", "double"):
                    out.add("EQUALITY_IDS", f"equality id {fid} is a {t} column; float and double columns cannot be "
                            "delete columns", n)
        if status == 1 and mfv >= 3:
            out.add("V3_EQUALITY_DELETE", "an equality delete file added by a v3 manifest: its rows lose lineage", n)
        return
    if i_eq is not None and df[i_eq]:
        out.add("EQUALITY_IDS", "equality_ids on a position delete file (should be null unless content is 2)", n,
                severity=Severity.WARNING)
    if is_dv:
        if fv < 3:
            out.add("DV_BEFORE_V3", f"a deletion vector (Puffin position deletes) in a format version {fv} table", n)
        off = df[i_off] if i_off is not None else None
        csize = df[i_csize] if i_csize is not None else None
        missing = [name for name, v in (("referenced_data_file", refd), ("content_offset", off),
                                        ("content_size_in_bytes", csize)) if v is None]
        if missing:
            out.add("DV_FIELDS", f"a deletion vector without {', '.join(missing)}", n)
        elif off < 0 or csize <= 0 or off + csize > size:
            out.add("DV_FIELDS", f"content_offset {off} + content_size_in_bytes {csize} lie outside the file's "
                    f"{size} bytes", n)
    elif status == 1 and mfv >= 3:
        out.add("V3_NEW_POSITION_DELETE_FILE", "a v3 manifest adds a position delete file; v3 writers add deletion "
                "vectors", n)


def _check_counts(ref: ManifestRef, counts: list[int], rows: list[int], min_live_seq: int | None, out: _Out) -> None:
    pairs = (("added_files_count", ref.added_files, counts[1]), ("existing_files_count", ref.existing_files, counts[0]),
             ("deleted_files_count", ref.deleted_files, counts[2]), ("added_rows_count", ref.added_rows, rows[1]),
             ("existing_rows_count", ref.existing_rows, rows[0]), ("deleted_rows_count", ref.deleted_rows, rows[2]))
    wrong = [f"{name} {listed} (entries: {actual})" for name, listed, actual in pairs
             if listed is not None and listed != actual]
    if wrong:
        out.add("MANIFEST_COUNTS", "the manifest list says " + ", ".join(wrong))
    if min_live_seq is not None and ref.min_sequence_number > min_live_seq:
        out.add("MANIFEST_SEQUENCE", f"min_sequence_number {ref.min_sequence_number} is above the lowest live data "
                f"sequence number {min_live_seq}")


def _partition_key(type_name: str, value: Any) -> Any:
    base = type_name.split("(")[0].split("[")[0]
    if base == "decimal":
        if isinstance(value, (bytes, bytearray)):
            return int.from_bytes(value, "big", signed=True)
        from icectl.engine.conversions import unscaled
        from icectl.engine.types import primitive

        return unscaled(primitive(type_name), value)
    if base in ("geometry", "geography", "uuid", "variant", "unknown"):
        return None
    return value


def _check_partition_summary(ref: ManifestRef, spec: Any, values: list[list[Any]], out: _Out) -> None:
    if ref.partitions is None:
        return
    if len(ref.partitions) != len(spec):
        out.add("PARTITION_SUMMARY", f"{len(ref.partitions)} field summaries for spec {ref.spec_id}'s {len(spec)} "
                "partition fields")
        return
    from icectl.engine.conversions import from_bytes

    for (fid, name, t), (contains_null, contains_nan, lower, upper), vals in zip(spec, ref.partitions, values):
        if not vals:
            continue
        base = t.split("(")[0].split("[")[0]
        has_null = any(v is None for v in vals)
        nans = base in ("float", "double") and any(isinstance(v, float) and v != v for v in vals)
        if has_null and not contains_null:
            out.add("PARTITION_SUMMARY", f"partition field {name!r}: contains_null is false but a live file has a "
                    "null value")
        if nans and contains_nan is False:
            out.add("PARTITION_SUMMARY", f"partition field {name!r}: contains_nan is false but a live file has NaN")
        keys = [_partition_key(t, v) for v in vals if v is not None and not (isinstance(v, float) and v != v)]
        keys = [k for k in keys if k is not None]
        if not keys:
            continue
        if lower is None or upper is None:
            out.add("PARTITION_SUMMARY", f"partition field {name!r}: no {'lower' if lower is None else 'upper'} bound "
                    "but live files have values")
            continue
        try:
            if base == "decimal":
                lb, ub = int.from_bytes(lower, "big", signed=True), int.from_bytes(upper, "big", signed=True)
            else:
                lb, ub = _partition_key(t, from_bytes(t, lower)), _partition_key(t, from_bytes(t, upper))
        except (IcectlError, ValueError, TypeError) as e:
            out.add("PARTITION_SUMMARY", f"partition field {name!r}: a bound is not a {t} value ({e})")
            continue
        if lb is None:
            continue
        try:
            lo, hi = min(keys), max(keys)
            if lb > lo or ub < hi:
                out.add("PARTITION_SUMMARY", f"partition field {name!r}: summary [{show(lb)}, {show(ub)}] does not "
                        f"bound the live values [{show(lo)}, {show(hi)}]")
        except TypeError:
            out.add("PARTITION_SUMMARY", f"partition field {name!r}: values are not all {t}")
