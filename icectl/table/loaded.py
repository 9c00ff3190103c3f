"""A loaded table: its metadata, where it came from, and the reads every command shares
(manifest lists, manifests, live files of a snapshot), and the commit protocol.
"""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Iterator

from icectl.catalog.base import Catalog, Identifier, ident_str
from icectl.formats.manifest import (
    DataFile,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
    partition_fields,
    read_manifest,
    read_manifest_list,
)
from icectl.spec.metadata import MetadataLogEntry, Snapshot, TableMetadata, parse_table_metadata
from icectl.errors import CommitConflictError, InvalidMetadataError, NotFoundError
from icectl.io import FileIO, relativize_path, resolve_path

DEFAULT_PREVIOUS_VERSIONS_MAX = 100


@dataclass
class Table:
    identifier: Identifier
    metadata: TableMetadata
    metadata_location: str
    catalog: Catalog
    io: FileIO = field(repr=False, default=None)  # type: ignore[assignment]
    # Old metadata files this table's commit deleted (write.metadata.delete-after-commit.enabled).
    deleted_metadata_files: list[str] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        if self.io is None:
            self.io = self.catalog.io

    @property
    def name(self) -> str:
        return ident_str(self.identifier)

    @property
    def location(self) -> str | None:
        return self.metadata.location

    # -- paths (v4 relative paths) ------------------------------------------------------------
    def resolve(self, path: str) -> str:
        return resolve_path(self.metadata.location, path, self.metadata.format_version)

    def relativize(self, path: str) -> str:
        return relativize_path(self.metadata.location, path, self.metadata.format_version)

    # -- reading ------------------------------------------------------------------------------
    def manifests(self, snapshot: Snapshot) -> list[ManifestFile]:
        """The manifest-list entries of a snapshot (v1 inline ``manifests`` read from their headers)."""
        if snapshot.manifest_list is not None:
            path = self.resolve(snapshot.manifest_list)
            out = read_manifest_list(self.io.read(path), source=path)
            for m in out:
                m.manifest_path = self.resolve(m.manifest_path)
            return out
        if snapshot.manifests is not None:
            return [self._inline_manifest(self.resolve(p), snapshot) for p in snapshot.manifests]
        return []

    def _inline_manifest(self, path: str, snapshot: Snapshot) -> ManifestFile:
        from icectl.formats.manifest import read_manifest_header

        data = self.io.read(path)
        header = read_manifest_header(data, source=path)
        return ManifestFile(path, len(data), header.partition_spec_id or 0, added_snapshot_id=snapshot.snapshot_id)

    def partition_types(self, spec_id: int) -> list:
        spec = self.metadata.spec_by_id(spec_id)
        return [t for _, _, t in partition_fields(spec, self.metadata.find_type)]

    def read_entries(self, manifest: ManifestFile, *, live_only: bool = False,
                     with_stats: bool = True) -> list[ManifestEntry]:
        data = self.io.read(manifest.manifest_path)
        entries = read_manifest(data, manifest, partition_types=self._partition_types_cached(manifest.partition_spec_id),
                                source=manifest.manifest_path, live_only=live_only, with_stats=with_stats)
        fv = self.metadata.format_version
        if fv >= 4:
            for e in entries:
                df = e.data_file
                df.file_path = self.resolve(df.file_path)
                if df.referenced_data_file:
                    df.referenced_data_file = self.resolve(df.referenced_data_file)
        return entries

    def _partition_types_cached(self, spec_id: int) -> list:
        cache = self.__dict__.setdefault("_ptypes", {})
        if spec_id not in cache:
            try:
                cache[spec_id] = self.partition_types(spec_id)
            except InvalidMetadataError:
                cache[spec_id] = None
        return cache[spec_id]

    def live_entries(self, snapshot: Snapshot | None, *, with_stats: bool = False,
                     content: ManifestContent | None = None) -> Iterator[ManifestEntry]:
        """Every live (ADDED or EXISTING) entry reachable from a snapshot, in manifest order."""
        if snapshot is None:
            return iter(())
        manifests = [m for m in self.manifests(snapshot) if content is None or m.content == content]

        def load(m: ManifestFile) -> list[ManifestEntry]:
            return self.read_entries(m, live_only=True, with_stats=with_stats)

        return _flatten(_map_ordered(load, manifests))

    def live_files(self, snapshot: Snapshot | None, *, with_stats: bool = False) -> Iterator[tuple[ManifestEntry, DataFile]]:
        for e in self.live_entries(snapshot, with_stats=with_stats):
            yield e, e.data_file

    # -- committing ---------------------------------------------------------------------------
    def commit(self, new_metadata: TableMetadata, *, now_ms: int | None = None) -> Table:
        """Write ``new_metadata`` and swap the catalog pointer from this table's metadata file.

        The metadata log gains the file this table was read from, trimmed to
        ``write.metadata.previous-versions-max`` (spec: "Table Metadata", metadata-log).
        ``last-updated-ms`` is the clock (or ``now_ms``, for a history written as of past times)
        unless the new metadata is later.
        """
        now = int(time.time() * 1000) if now_ms is None else now_ms
        log = list(new_metadata.metadata_log) + [MetadataLogEntry(self.metadata.last_updated_ms, self.metadata_location)]
        keep = int(new_metadata.properties.get("write.metadata.previous-versions-max", DEFAULT_PREVIOUS_VERSIONS_MAX))
        log = log[-keep:] if keep > 0 else []
        md = new_metadata.replace(metadata_log=tuple(log),
                                  last_updated_ms=max(now, new_metadata.last_updated_ms))
        location = self.catalog.commit(self.identifier, base_location=self.metadata_location,
                                       table_location=md.location or "", metadata=md.to_bytes(),
                                       format_version=md.format_version)
        committed = Table(self.identifier, md, location, self.catalog, self.io)
        if _ATTEMPT.files is not None:
            _ATTEMPT.files = []  # what a successful commit references must never be cleaned up
        committed.deleted_metadata_files = self._delete_removed_metadata_files(md)
        return committed

    def _delete_removed_metadata_files(self, new: TableMetadata) -> list[str]:
        """With ``write.metadata.delete-after-commit.enabled``, delete the metadata files that
        fell off the metadata log, after the commit succeeded (as Iceberg Java's TableOperations)."""
        if new.properties.get("write.metadata.delete-after-commit.enabled", "false").lower() != "true":
            return []
        from icectl.io import normalize_location

        kept = {e.metadata_file for e in new.metadata_log}
        root = normalize_location(new.location or "") + "/"
        deleted = []
        for e in self.metadata.metadata_log:
            path = self.resolve(e.metadata_file)
            if e.metadata_file in kept or not normalize_location(path).startswith(root):
                continue
            try:
                self.io.delete(path)
                deleted.append(path)
            except Exception:  # an old metadata file that cannot be deleted becomes an orphan
                pass
        return deleted

    def refresh(self) -> Table:
        return load_table(self.catalog, self.identifier)


def _map_ordered(fn: Callable, items: list) -> Iterator:
    if len(items) <= 1:
        for i in items:
            yield fn(i)
        return
    with ThreadPoolExecutor(max_workers=8) as pool:
        yield from pool.map(fn, items)


def _flatten(chunks: Iterator[list]) -> Iterator:
    for c in chunks:
        yield from c


def read_metadata_file(io: FileIO, location: str) -> TableMetadata:
    try:
        data = io.read(location)
    except NotFoundError:
        raise NotFoundError(f"metadata file not found: {location}") from None
    if location.endswith(".gz.metadata.json") or location.endswith(".metadata.json.gz"):
        import gzip

        try:
            data = gzip.decompress(data)
        except OSError as e:
            raise InvalidMetadataError(f"{location}: not valid gzip: {e}") from None
    return parse_table_metadata(data, source=location)


def load_table(catalog: Catalog, identifier: Identifier) -> Table:
    location = catalog.load_metadata_location(identifier)
    md = read_metadata_file(catalog.io, location)
    if md.format_version >= 4 and not catalog.supports_v4:
        from icectl.errors import UnsupportedError

        raise UnsupportedError(f"{location}: format version 4 tables cannot live in a {catalog.kind} catalog",
                               hint="register the metadata file in a SQL catalog: icectl register")
    if md.location is None and md.format_version >= 4:
        # v4: "location ... becomes optional - the catalog can supply it".
        md = md.replace(location=catalog.default_table_location(identifier))
    return Table(identifier, md, location, catalog)


def commit_with_retry(table: Table, build: Callable[[Table], TableMetadata], *, retries: int | None = None) -> Table:
    """Build new metadata from the current table and commit; on conflict re-read and rebuild.

    Retries within ``commit.retry.num-retries`` (default 4), as the spec's "Commit Conflict
    Resolution and Retry" describes; ``build`` must re-validate what it needs on each attempt.
    """
    from icectl.errors import ConflictingChangeError

    attempts = retries if retries is not None else int(table.metadata.properties.get("commit.retry.num-retries", 4))
    current = table
    for attempt in range(attempts + 1):
        _ATTEMPT.files = []
        try:
            return current.commit(build(current))
        except CommitConflictError as e:
            # Manifests and manifest lists this attempt wrote are referenced by no committed
            # metadata: remove them, as Iceberg Java cleans up after a failed attempt.
            for path in _ATTEMPT.files:
                try:
                    current.io.delete(path)
                except Exception:
                    pass
            if isinstance(e, ConflictingChangeError) or attempt >= attempts:
                raise
            time.sleep(min(0.1 * 2 ** attempt, 2.0))
            current = current.refresh()
        finally:
            _ATTEMPT.files = None
    raise AssertionError("unreachable")


class _AttemptFiles(threading.local):
    files: list[str] | None = None


_ATTEMPT = _AttemptFiles()


def note_written(path: str) -> None:
    """Record a metadata file written for the commit attempt in progress (if any)."""
    if _ATTEMPT.files is not None:
        _ATTEMPT.files.append(path)
