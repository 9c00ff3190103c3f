"""Which files a set of snapshots reaches: manifest lists, manifests, content files (the live
entries of those manifests, as Iceberg Java's ReadManifest reads them), statistics and
partition-statistics files. Shared by expire and remove-orphans.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Iterable

from icectl.formats.manifest import (
    DATA,
    DELETION_VECTOR,
    EQUALITY_DELETES,
    POSITION_DELETES,
    ManifestFile,
    content_kind,
)
from icectl.spec.metadata import Snapshot, TableMetadata
from icectl.table.listing import ColumnarUnavailable, manifest_frame
from icectl.table.loaded import Table

# Kinds of files, as icectl reports them (and the Java expire_snapshots column each counts in):
# content files (icectl.formats.manifest.content_kind) and metadata files.
MANIFEST, MANIFEST_LIST, STATISTICS, PARTITION_STATISTICS, METADATA = (
    "manifest", "manifest-list", "statistics", "partition-statistics", "metadata")
KINDS = (DATA, POSITION_DELETES, EQUALITY_DELETES, DELETION_VECTOR, MANIFEST, MANIFEST_LIST, STATISTICS,
         PARTITION_STATISTICS, METADATA)


@dataclass
class Reachable:
    """Paths by kind, with sizes where the metadata records them."""

    files: dict[str, str] = field(default_factory=dict)  # path -> kind
    sizes: dict[str, int] = field(default_factory=dict)

    def add(self, path: str, kind: str, size: int | None = None) -> None:
        if path not in self.files:
            self.files[path] = kind
            if size is not None:
                self.sizes[path] = size

    def __contains__(self, path: str) -> bool:
        return path in self.files

    def paths(self) -> set[str]:
        return set(self.files)


def reachable_files(table: Table, md: TableMetadata, snapshots: Iterable[Snapshot], *,
                    skip_manifests: set[str] | None = None, workers: int = 8) -> Reachable:
    """Every file the given snapshots reach. Manifests in ``skip_manifests`` are listed but not
    read (their content files are known to be reachable elsewhere)."""
    snapshots = list(snapshots)
    view = Table(table.identifier, md, table.metadata_location, table.catalog, table.io)
    out = Reachable()
    ids = {s.snapshot_id for s in snapshots}
    manifests: dict[str, ManifestFile] = {}
    with_lists = [s for s in snapshots if s.manifest_list or s.manifests]

    def manifest_list(s: Snapshot) -> list[ManifestFile]:
        return view.manifests(s)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        for s, ms in zip(with_lists, pool.map(manifest_list, with_lists)):
            if s.manifest_list:
                out.add(view.resolve(s.manifest_list), MANIFEST_LIST)
            for m in ms:
                manifests.setdefault(m.manifest_path, m)
        for path, m in manifests.items():
            out.add(path, MANIFEST, m.manifest_length)
        to_read = [m for p, m in manifests.items() if not skip_manifests or p not in skip_manifests]

        def entries(m: ManifestFile):
            fast = _fast_live_files(view, m)
            if fast is not None:
                return fast
            return [(e.data_file.file_path, e.data_file.kind, e.data_file.file_size_in_bytes)
                    for e in view.read_entries(m, live_only=True, with_stats=False)]

        for rows in pool.map(entries, to_read):
            for path, kind, size in rows:
                out.add(path, kind, size)
    for st in md.statistics:
        if st.snapshot_id in ids:
            out.add(view.resolve(st.statistics_path), STATISTICS, st.file_size_in_bytes)
    for st in md.partition_statistics:
        if st.snapshot_id in ids:
            out.add(view.resolve(st.statistics_path), PARTITION_STATISTICS, st.file_size_in_bytes)
    return out


def _fast_live_files(view: Table, m: ManifestFile) -> list[tuple[str, str, int]] | None:
    """(path, kind, size) of a manifest's live entries, as ``read_entries(live_only=True)`` gives
    them, straight from polars' columns: no per-entry dicts or dataclasses, which cost ~3x the
    Avro decoding itself (a 2,000-snapshot expiry reads ~1.2 M entries). None when polars is
    missing, the table is v4 (paths to resolve), or anything looks off: then read_entries reads
    the manifest, with its validation and error messages."""
    if view.metadata.format_version >= 4:
        return None
    try:
        df = manifest_frame(view, m)
    except ColumnarUnavailable:
        return None
    try:
        status = df.get_column("status")
        d = df.select("data_file").unnest("data_file")  # direct column access, no query per field
        if not {"file_path", "file_format", "file_size_in_bytes"} <= set(d.columns):
            return None
        cols = [status, d.get_column("file_path"), d.get_column("file_format"), d.get_column("file_size_in_bytes")]
        content = d.get_column("content") if "content" in d.columns else None
        if any(c.null_count() for c in cols):
            return None  # read_entries rejects (or reads differently) what is null
        contents = content.fill_null(0).to_list() if content is not None else [0] * len(status)
        out = []
        for st, path, fmt, size, c in zip(status.to_list(), cols[1].to_list(), cols[2].to_list(), cols[3].to_list(),
                                          contents):
            if st == 2:
                continue
            if c not in (0, 1, 2) or st not in (0, 1):
                return None  # out of range: read_entries says so
            out.append((path, content_kind(c, str(fmt)), int(size)))
        return out
    except Exception:
        return None
