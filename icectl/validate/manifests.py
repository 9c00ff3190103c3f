"""Manifests, for ``validate``: every manifest read once, every entry checked.

Each manifest is scanned once per run (manifests are immutable; one shared by many snapshots is
checked once) by :func:`scan_manifest`, a pure function of the manifest's bytes, its manifest-list
entry and a small :class:`~icectl.validate.entries.ScanContext`, so large tables scan manifests
in parallel threads. The scan checks the header and the partition struct here, and every entry
(status, inheritance, content, delete-file rules, bounds, paths, row lineage) in
:mod:`icectl.validate.entries`, and returns the few facts the snapshot-level rules need: its live
files.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from icectl.errors import IcectlError, InvalidMetadataError
from icectl.formats.avro import failures, field_index, open_avro, record_type
from icectl.formats.entries import read_entry_frame
from icectl.formats.manifest import ManifestFile, check_entry_schema
from icectl.spec.types import IcebergType, PrimitiveType, schema_from_json, walk_fields
from icectl.validate import entries
from icectl.validate.entries import LiveFile, ScanContext
from icectl.validate.findings import Finding
from icectl.validate.codes import Severity

MAX_PER_CODE = 20  # findings of one code per manifest; the rest are counted in one more finding


@dataclass
class ManifestScan:
    path: str
    readable: bool = True
    entries: int = 0
    findings: list[Finding] = field(default_factory=list)
    # Live data files: a polars DataFrame of path, entry, records, size, format, seq (the data
    # sequence number), part (a hash of the partition tuple); once compacted
    # (:meth:`compact`), of key (a 64-bit hash of the path), entry, records, size.
    data_files: Any = None
    deletes: list[LiveFile] = field(default_factory=list)
    # Until finish_scans: the findings so far and the decoded entries still to check.
    out: Any = field(default=None, repr=False)
    pending: Any = field(default=None, repr=False)
    # Scans the manifest again (the full data_files frame) once its paths were dropped.
    reload: Any = field(default=None, repr=False)

    @property
    def data(self) -> list[tuple[str, int, int, int, str, int | None, int]]:
        """The live data files as (path, entry, records, size, format, seq, part) tuples (read again from
        the manifest when the scan was compacted)."""
        frame = self.data_files
        if frame is not None and "path" not in frame.columns:
            frame = self.reload().data_files if self.reload is not None else None
        return frame.rows() if frame is not None else []

    def compact(self, reload: Any) -> None:
        """Keep only a 64-bit key per live data file instead of its path (8 bytes instead of
        ~100 a file, so that millions of files stay in bounded memory); ``reload`` gives the
        full scan again when a rule needs the paths. :func:`compact_scans` does it for many."""
        compact_scans([self], [reload])


def compact_scans(scans: list[ManifestScan], reloads: list[Any]) -> None:
    """:meth:`ManifestScan.compact` of many scans in one query over their stacked live files (a
    query per manifest cost more than the hashing: a neglected table's thousand manifests)."""
    import polars as pl

    todo = [(s, r) for s, r in zip(scans, reloads) if s.data_files is not None and "path" in s.data_files.columns]
    if not todo:
        return
    stacked = pl.concat([s.data_files for s, _ in todo], how="vertical_relaxed", rechunk=False)
    keyed = stacked.select(path_key(pl.col("path")).alias("key"), "entry", "records", "size")
    del stacked
    offset = 0
    for s, reload in todo:
        n = len(s.data_files)
        s.data_files = keyed.slice(offset, n)
        s.reload = reload
        offset += n


KEY_SEED = 0x1CEC7


def path_key(expr: Any) -> Any:
    """The 64-bit key of a path column (polars' hash, fixed seed: the same in one process).
    Two of n paths share a key with a probability of about n**2 / 2**65 (1 in 10**7 for two
    million files): a repeated key only sends a snapshot to the exact, path-by-path check; a
    path a delete file names that shares a key with another live path would be taken as live."""
    return expr.hash(seed=KEY_SEED)


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


def _header_types(header_schema: str | None, ctx: ScanContext) -> dict[int, IcebergType]:
    """The field types of the manifest's own schema (its header) over the table's; one dict per
    distinct header in a run, so manifests of one schema have their bounds checked together."""
    if not header_schema:
        return ctx.types
    cached = ctx.header_types.get(header_schema)
    if cached is not None:
        return cached
    try:
        s = schema_from_json(json.loads(header_schema))
        types = {f.field_id: f.field_type for _, f in walk_fields(s.fields) if isinstance(f.field_type, PrimitiveType)}
    except (ValueError, IcectlError, TypeError, AttributeError, RecursionError):
        return ctx.types
    return ctx.header_types.setdefault(header_schema, {**ctx.types, **types})


# -- one manifest -------------------------------------------------------------------------------------

def scan_manifest(data: bytes | None, ref: ManifestFile, ctx: ScanContext) -> ManifestScan:
    """Check one manifest against its manifest-list entry; never raises for bad input."""
    return finish_scans([scan_manifest_pending(data, ref, ctx)], ctx)[0]


def finish_scans(scans: list[ManifestScan], ctx: ScanContext) -> list[ManifestScan]:
    """Check the entries of many decoded manifests at once (per-operation costs are paid once,
    not per manifest: :func:`icectl.validate.entries.check_entries`), then close each
    manifest's findings."""
    waiting = [s for s in scans if s.pending is not None]
    pending = [s.pending for s in waiting]
    marks = [p.out.mark() for p in pending]
    try:
        entries.check_entries(pending, ctx)
    except failures():  # never a traceback: find the manifest that cannot be checked
        for s, p, mark in zip(waiting, pending, marks):
            p.out.reset(mark)
            p.deletes, p.data_files = [], None
            try:
                entries.check_entries([p], ctx)
            except failures() as e1:
                p.out.reset(mark)
                p.deletes, p.data_files, s.readable = [], None, False
                first = str(e1).strip().splitlines()[0] if str(e1).strip() else ""
                p.out.add("MANIFEST_UNREADABLE", f"its entries cannot be checked ({type(e1).__name__}: {first})")
    for s in waiting:
        s.data_files, s.deletes = s.pending.data_files, s.pending.deletes
    for s in scans:
        if s.out is not None:
            s.findings = s.out.close()
        s.out = s.pending = None
    return scans


def scan_manifest_pending(data: bytes | None, ref: ManifestFile, ctx: ScanContext, *,
                          unreadable: str | None = None) -> ManifestScan:
    """Decode one manifest and check its header and partition struct; its entries wait in
    ``scan.pending`` for :func:`finish_scans`.

    The entries are decoded by polars when it can read the file (its block framing checked
    first), else by the lean decoder, which also words what is wrong with a corrupt file; either
    way they are checked a column at a time by :func:`icectl.validate.entries.check_entries`."""
    path, length = ref.manifest_path, ref.manifest_length
    scan = ManifestScan(path)
    out = _Out(path)
    if data is None:  # ``unreadable`` says why
        out.add("MANIFEST_UNREADABLE", unreadable or "manifest file not found", file=path)
        scan.readable = False
        scan.findings = out.close()
        return scan
    if length is not None and len(data) != length:
        if len(data) < length:
            out.add("MANIFEST_UNREADABLE", f"truncated: {len(data)} bytes, but manifest_length is {length}")
            scan.readable = False
            scan.findings = out.close()
            return scan
        out.add("MANIFEST_LENGTH", f"manifest_length is {length}, the file has {len(data)} bytes")
    try:
        avro = open_avro(data, source=path)
        check_entry_schema(avro.schema, source=path, text=avro.schema_text)
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
        frame = read_entry_frame(avro, idx=idx, nparts=len(pf), with_bounds=ctx.check_bounds)
    except InvalidMetadataError as e:
        msg = e.message[len(path) + 2:] if e.message.startswith(path + ": ") else e.message
        out.add("MANIFEST_UNREADABLE", msg)
        scan.readable = False
        scan.findings = out.close()
        return scan
    scan.entries = len(frame)
    meta = avro.metadata
    mfv = _header_checks(meta, ref, ctx, out)
    spec_id = ref.partition_spec_id
    spec = ctx.specs.get(spec_id)
    if spec is not None and part_schema is not None:
        if len(pf) != len(spec):
            out.add("MANIFEST_PARTITION_TUPLE", f"the partition struct has {len(pf)} fields, spec {spec_id} has "
                    f"{len(spec)}")
            spec = None
        elif mfv >= 2 and any(f.get("field-id") is not None and int(f["field-id"]) != s[0] for f, s in zip(pf, spec)):
            out.add("MANIFEST_PARTITION_TUPLE", f"partition struct field ids {[f.get('field-id') for f in pf]} are "
                    f"not spec {spec_id}'s {[s[0] for s in spec]}")
    types = _header_types(meta.get("schema"), ctx) if ctx.check_bounds else ctx.types
    scan.out = out
    scan.pending = entries.Pending(out, frame, ref, mfv, spec, types)
    return scan


def _header_checks(meta: dict[str, str], ref: ManifestFile, ctx: ScanContext, out: _Out) -> int:
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
    if spec_id is not None and spec_id.strip().lstrip("-").isdigit() and int(spec_id) != ref.partition_spec_id:
        out.add("MANIFEST_HEADER", f"partition-spec-id is {spec_id}, the manifest list says {ref.partition_spec_id}")
    content = meta.get("content")
    if content is not None and content not in ("data", "deletes"):
        out.add("MANIFEST_HEADER", f"content is {content!r}, not 'data' or 'deletes'")
    elif content is not None and (content == "deletes") != (ref.content == 1):
        out.add("MANIFEST_CONTENT_MISMATCH", f"the manifest says its content is {content!r}, the manifest list says "
                f"{'deletes' if ref.content == 1 else 'data'}")
    return mfv
