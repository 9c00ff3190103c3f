"""``validate``: check every layer of a table against the rules of its format version and report
every finding, never stopping at the first. :func:`validate_table` is the entry point.

The checks form a one-way graph, each module importing only those above it in this list:

- :mod:`icectl.validate.codes` and :mod:`icectl.validate.findings`: the codes, a finding, the
  collector, the options and the report;
- :mod:`icectl.validate.bounds` (lower and upper bounds, a column at a time),
  :mod:`icectl.validate.partitions` (manifest-list partition summaries) and
  :mod:`icectl.validate.metadata` (table metadata, raw JSON and parsed) and
  :mod:`icectl.validate.view` (view metadata against the view spec);
- :mod:`icectl.formats.entries` (a manifest's entries as normalized columns) and
  :mod:`icectl.validate.entries` (every entry rule, over many manifests at once);
- :mod:`icectl.validate.manifests`: each manifest decoded once (:mod:`icectl.formats.avro`), its
  header and partition struct checked;
- :mod:`icectl.validate.deep` (``--deep``: the files themselves: existence and size, Parquet row
  counts, Puffin footers and deletion vectors, snapshot summary totals; each Parquet data file's
  manifest metrics against its footer by :mod:`icectl.validate.file_metrics`);
- :mod:`icectl.validate.snapshots`: manifest lists and the rules across a snapshot's manifests
  (a live path listed twice, deletion vectors);
- this module.

A finding has a severity, a stable code (:data:`icectl.validate.codes.CODES`, also in
docs/reference/validation-codes.md), the rule it breaks and where it is (file, snapshot, manifest, entry).
"""
from __future__ import annotations

import gzip
import json
import time
from typing import Any

from icectl.errors import IcectlError, NotFoundError
from icectl.spec.view import is_view_metadata_json
from icectl.table.identifier import ident_str
from icectl.table.loaded import Table
from icectl.validate.codes import Severity
from icectl.validate.findings import Checked, Collector, Finding, ValidateOptions, ValidationReport
from icectl.validate.metadata import check_metadata
from icectl.validate.snapshots import check_snapshots
from icectl.validate.view import check_view_metadata


def validate_table(catalog: Any, identifier: tuple[str, ...], options: ValidateOptions | None = None) -> ValidationReport:
    """Validate the table ``identifier`` of ``catalog`` (any catalog, a PathCatalog included).

    The table's metadata file is read here, not through ``load_table``: a table whose metadata
    cannot be parsed, or a v4 table in a file-system catalog, is reported, not refused. Raises
    NotFoundError only when the catalog has no such table.
    """
    opts = options or ValidateOptions()
    started = time.monotonic()
    location = catalog.load_metadata_location(identifier)
    out = Collector()
    checked = Checked()
    md = None
    io = catalog.io_for(identifier) if hasattr(catalog, "io_for") else catalog.io  # REST: vended credentials
    raw = _read_metadata_bytes(io, location, out)
    if raw is not None and is_view_metadata_json(raw):  # a view's metadata file given by path
        return validate_view_file(io, location, name=ident_str(identifier), raw=raw)
    if raw is not None:
        md = check_metadata(raw, location, out, catalog_kind=getattr(catalog, "kind", ""),
                            supports_v4=getattr(catalog, "supports_v4", True))
    if md is not None:
        if md.location is None and md.format_version >= 4:
            try:
                md = md.replace(location=catalog.default_table_location(identifier))
            except IcectlError:
                pass
        table = Table(identifier, md, location, catalog, io=io)
        check_snapshots(table, opts, out, checked)
    return ValidationReport(
        table=ident_str(identifier), metadata_location=location,
        format_version=md.format_version if md is not None else _raw_version(raw),
        deep=opts.deep, all_snapshots=opts.all_snapshots, checked=checked, findings=_ordered(out.findings),
        seconds=round(time.monotonic() - started, 3))


def validate_view_file(io: Any, location: str, *, name: str, raw: bytes | None = None) -> ValidationReport:
    """Validate the view metadata file at ``location`` against the view spec (``name``: the view's
    name, or the file's, in the report)."""
    started = time.monotonic()
    out = Collector()
    if raw is None:
        raw = _read_metadata_bytes(io, location, out, code="VIEW_UNREADABLE")
    md = check_view_metadata(raw, location, out) if raw is not None else None
    return ValidationReport(
        table=name, metadata_location=location,
        format_version=md.format_version if md is not None else _raw_version(raw),
        deep=False, all_snapshots=False, checked=Checked(), findings=_ordered(out.findings),
        seconds=round(time.monotonic() - started, 3), kind="view")


def _read_metadata_bytes(io: Any, location: str, out: Collector, *, code: str = "META_UNREADABLE") -> bytes | None:
    try:
        data = io.read(location)
    except NotFoundError:
        out.add(code, f"metadata file not found: {location}", file=location)
        return None
    except IcectlError as e:
        out.add(code, f"cannot read {location}: {e.message}", file=location)
        return None
    if location.endswith(".gz.metadata.json") or location.endswith(".metadata.json.gz"):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as e:
            out.add(code, f"{location}: not valid gzip: {e}", file=location)
            return None
    return data


def _raw_version(raw: bytes | None) -> int | None:
    if raw is None:
        return None
    try:
        v = json.loads(raw).get("format-version")
    except (ValueError, AttributeError, UnicodeDecodeError, RecursionError):
        return None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _ordered(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.severity != Severity.ERROR, f.code))
