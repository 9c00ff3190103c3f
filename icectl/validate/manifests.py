"""Manifests, for ``validate``: every manifest read once, every entry checked.

Each manifest is scanned once per run (manifests are immutable; one shared by many snapshots is
checked once) by :func:`scan_manifest`, a pure function of the manifest's bytes, its manifest-list
entry and a small :class:`ScanContext`, so large tables scan manifests in parallel threads. The
scan checks the header, the partition struct and every entry (status, inheritance, content,
delete-file rules, bounds, paths, row lineage: :mod:`icectl.validate.entries`) and returns
the few facts the snapshot-level rules need: its live files.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from icectl.spec.types import base_type
from icectl.validate.core import Finding, Severity
from icectl.validate.bounds import show
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
    """A live delete file (live data files travel as a polars frame: there are many)."""

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
    data_files: Any = None  # live data files: a polars DataFrame of path, entry, records, size, format
    deletes: list[LiveFile] = field(default_factory=list)
    # Until finish_scans: the findings so far and the decoded entries still to check.
    out: Any = field(default=None, repr=False)
    pending: Any = field(default=None, repr=False)

    @property
    def data(self) -> list[tuple[str, int, int, int, str]]:
        """The live data files as (path, entry, records, size, format) tuples."""
        return self.data_files.rows() if self.data_files is not None else []


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

    def mark(self) -> tuple[int, dict[str, int]]:
        return len(self.findings), dict(self.counts)

    def reset(self, mark: tuple[int, dict[str, int]]) -> None:
        """Forget what was added since ``mark``."""
        del self.findings[mark[0]:]
        self.counts = dict(mark[1])

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
    from icectl.spec.types import PrimitiveType, schema_from_json, walk_fields

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
    """Check one manifest against its manifest-list entry; never raises for bad input."""
    return finish_scans([scan_manifest_pending(data, ref, ctx)], ctx)[0]


def finish_scans(scans: list[ManifestScan], ctx: ScanContext) -> list[ManifestScan]:
    """Check the entries of many decoded manifests at once (per-operation costs are paid once,
    not per manifest: :func:`icectl.validate.entries.check_entries`), then close each
    manifest's findings."""
    from icectl.formats.avro import failures
    from icectl.validate.entries import check_entries

    pending = [s.pending for s in scans if s.pending is not None]
    marks = [p.out.mark() for p in pending]
    try:
        check_entries(pending, ctx)
    except failures():  # never a traceback: find the manifest that cannot be checked
        for p, mark in zip(pending, marks):
            p.out.reset(mark)
            p.scan.deletes, p.scan.data_files = [], None
            try:
                check_entries([p], ctx)
            except failures() as e1:
                p.out.reset(mark)
                p.scan.deletes, p.scan.data_files, p.scan.readable = [], None, False
                first = str(e1).strip().splitlines()[0] if str(e1).strip() else ""
                p.out.add("MANIFEST_UNREADABLE", f"its entries cannot be checked ({type(e1).__name__}: {first})")
    for s in scans:
        if s.out is not None:
            s.findings = s.out.close()
        s.out = s.pending = None
    return scans


def scan_manifest_pending(data: bytes | None, ref: ManifestRef, ctx: ScanContext) -> ManifestScan:
    """Decode one manifest and check its header and partition struct; its entries wait in
    ``scan.pending`` for :func:`finish_scans`.

    The entries are decoded by polars when it can read the file (its block framing checked
    first), else by the lean decoder, which also words what is wrong with a corrupt file; either
    way they are checked a column at a time by :func:`icectl.validate.entries.check_entries`."""
    from icectl.formats.avro_lean import field_index, open_avro, record_type
    from icectl.validate.entries import Pending

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
        i_df = field_index(top, "data_file")
        df_schema = record_type(top["fields"][i_df]["type"]) if i_df is not None else None
        if field_index(top, "status") is None or df_schema is None:
            raise InvalidMetadataError("wrong Avro schema: a manifest entry needs 'status' and 'data_file'")
        idx = {f["name"]: i for i, f in enumerate(df_schema["fields"])}
        missing = [n for n in ("file_path", "file_format", "partition", "record_count", "file_size_in_bytes")
                   if n not in idx]
        if missing:
            raise InvalidMetadataError(f"wrong Avro schema: data_file has no {', '.join(missing)}")
        part_schema = record_type(df_schema["fields"][idx["partition"]]["type"])
        pf = part_schema.get("fields", []) if part_schema is not None else []
        frame = _entry_frame(avro, top, idx, len(pf), ctx.check_bounds)
    except InvalidMetadataError as e:
        msg = e.message[len(ref.path) + 2:] if e.message.startswith(ref.path + ": ") else e.message
        out.add("MANIFEST_UNREADABLE", msg)
        scan.readable = False
        scan.findings = out.close()
        return scan
    scan.entries = len(frame)
    meta = avro.metadata
    mfv = _header_checks(meta, ref, ctx, out)
    spec = ctx.specs.get(ref.spec_id)
    if spec is not None and part_schema is not None:
        if len(pf) != len(spec):
            out.add("MANIFEST_PARTITION_TUPLE", f"the partition struct has {len(pf)} fields, spec {ref.spec_id} has "
                    f"{len(spec)}")
            spec = None
        elif mfv >= 2 and any(f.get("field-id") is not None and int(f["field-id"]) != s[0] for f, s in zip(pf, spec)):
            out.add("MANIFEST_PARTITION_TUPLE", f"partition struct field ids {[f.get('field-id') for f in pf]} are "
                    f"not spec {ref.spec_id}'s {[s[0] for s in spec]}")
    types = _header_types(meta.get("schema"), ctx.types) if ctx.check_bounds else ctx.types
    scan.out = out
    scan.pending = Pending(scan, out, frame, ref, mfv, spec, types)
    return scan


def _entry_frame(avro: Any, top: dict[str, Any], idx: dict[str, int], nparts: int, with_bounds: bool) -> Any:
    """The manifest's entries as the normalized frame of :mod:`icectl.validate.entries`:
    read by polars when it can and its row count is what the blocks say, else by the lean
    decoder. InvalidMetadataError when neither can read it."""
    from icectl.formats.avro import ColumnarUnavailable, read_avro_frame
    from icectl.formats.avro_lean import field_index
    from icectl.validate.entries import entry_frame, frame_from_records

    expected = avro.record_count()  # block framing; raises for truncated or unsynced files
    try:
        raw = read_avro_frame(avro.data, avro.schema)
        if len(raw) == expected and "data_file" in raw.columns:
            return entry_frame(raw, with_bounds)
    except (ColumnarUnavailable, ValueError):
        pass
    skip = SKIP_FIELDS if with_bounds else SKIP_FIELDS | BOUND_FIELDS
    records = list(avro.records(skip, as_dict=BOUND_FIELDS))
    positions = {name: field_index(top, name) for name in ("status", "snapshot_id", "sequence_number",
                                                           "file_sequence_number", "data_file")}
    try:
        return frame_from_records(records, {k: v for k, v in positions.items() if v is not None}, idx, nparts,
                                  with_bounds)
    except (ValueError, TypeError) as e:
        raise InvalidMetadataError(f"wrong Avro schema: {e}") from None


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
    base = base_type(type_name)
    if base == "decimal":
        if isinstance(value, (bytes, bytearray)):
            return int.from_bytes(value, "big", signed=True)
        from icectl.spec.conversions import unscaled
        from icectl.spec.types import primitive

        return unscaled(primitive(type_name), value)
    if base in ("geometry", "geography", "uuid", "variant", "unknown"):
        return None
    return value


def _check_partition_summary(ref: ManifestRef, spec: Any, stats: list[tuple[bool, bool, Any, Any] | None],
                             out: Any) -> None:
    """Each field summary of the manifest list against its live values' ``stats``: (has a null,
    has a NaN, lowest, highest) per partition field, None when no live file (lowest and highest
    in :func:`_partition_key` form, None when no value orders, TypeError when they do not
    compare)."""
    if ref.partitions is None:
        return
    if len(ref.partitions) != len(spec):
        out.add("PARTITION_SUMMARY", f"{len(ref.partitions)} field summaries for spec {ref.spec_id}'s {len(spec)} "
                "partition fields")
        return
    from icectl.spec.conversions import from_bytes

    for (fid, name, t), (contains_null, contains_nan, lower, upper), st in zip(spec, ref.partitions, stats):
        if st is None:
            continue
        has_null, nans, lo, hi = st
        base = base_type(t)
        if has_null and not contains_null:
            out.add("PARTITION_SUMMARY", f"partition field {name!r}: contains_null is false but a live file has a "
                    "null value")
        if nans and contains_nan is False:
            out.add("PARTITION_SUMMARY", f"partition field {name!r}: contains_nan is false but a live file has NaN")
        if lo is None:
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
            if lo is TypeError:
                raise TypeError
            if lb > lo or ub < hi:
                out.add("PARTITION_SUMMARY", f"partition field {name!r}: summary [{show(lb)}, {show(ub)}] does not "
                        f"bound the live values [{show(lo)}, {show(hi)}]")
        except TypeError:
            out.add("PARTITION_SUMMARY", f"partition field {name!r}: values are not all {t}")
