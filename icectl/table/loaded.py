"""A loaded table: its metadata, where it came from, and the reads every command shares
(manifest lists, manifests, live files of a snapshot). Commits: :mod:`icectl.table.transaction`.
"""
from __future__ import annotations

import contextlib
import copy
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Iterator

from icectl.errors import InvalidMetadataError
from icectl.formats.manifest import (
    DataFile,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
    partition_fields,
    read_manifest,
    read_manifest_header,
    read_manifest_list,
)
from icectl.io import FileIO, relativize_path, resolve_path
from icectl.spec.metadata import Snapshot, TableMetadata
from icectl.table.catalog_contract import CatalogContract
from icectl.table.identifier import Identifier, ident_str
from icectl.table.metadata_io import read_metadata_file

__all__ = ["Table", "load_table", "read_metadata_file"]

# Manifest lists a Table keeps once read within Table.manifest_lists_kept() (the newest few, and
# no more than this many entries in all: ~1 KB each), so that the checks of one command that each
# ask for the same snapshot's list (health: five) read it once; on an object store each read is a
# request. A list is keyed by its path: a manifest list (or an inline v1 manifest) is written once
# and never changed, so a list kept is the list a commit would read. A longer list is read again
# rather than held. Outside that scope nothing is kept: a command that looks for missing or
# unreadable files (repair, validate) sees the storage as it is.
KEPT_MANIFEST_LISTS = 4
KEPT_MANIFEST_ENTRIES = 20_000


@dataclass
class Table:
    identifier: Identifier
    metadata: TableMetadata
    metadata_location: str
    catalog: CatalogContract
    io: FileIO = field(repr=False, default=None)  # type: ignore[assignment]
    _kept_lists: OrderedDict = field(default_factory=OrderedDict, init=False, repr=False, compare=False)
    _kept_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)
    _keeping: int = field(default=0, init=False, repr=False, compare=False)

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
    @contextlib.contextmanager
    def manifest_lists_kept(self) -> Iterator[Table]:
        """Within it, a manifest list this table read is not read again (the last
        ``KEPT_MANIFEST_LISTS``); they are let go when it ends."""
        self._keeping += 1
        try:
            yield self
        finally:
            self._keeping -= 1
            if not self._keeping:
                with self._kept_lock:
                    self._kept_lists.clear()

    def manifests(self, snapshot: Snapshot) -> list[ManifestFile]:
        """The manifest-list entries of a snapshot (v1 inline ``manifests`` read from their headers),
        as new objects the caller may change (within :meth:`manifest_lists_kept`, a list read
        before is not read again)."""
        if snapshot.manifest_list is not None:
            key: str | tuple[str, ...] = self.resolve(snapshot.manifest_list)
        elif snapshot.manifests is not None:
            key = tuple(self.resolve(p) for p in snapshot.manifests)
        else:
            return []
        with self._kept_lock:
            kept = self._kept_lists.get(key)
            if kept is not None:
                self._kept_lists.move_to_end(key)
        if kept is None:
            kept = self._read_manifests(key, snapshot)
            self._keep(key, kept)
        return [copy.copy(m) for m in kept]

    def _read_manifests(self, key: str | tuple[str, ...], snapshot: Snapshot) -> list[ManifestFile]:
        if isinstance(key, tuple):
            return [self._inline_manifest(p, snapshot) for p in key]
        out = read_manifest_list(self.io.read(key), source=key)
        for m in out:
            m.manifest_path = self.resolve(m.manifest_path)
        return out

    def _keep(self, key: str | tuple[str, ...], listed: list[ManifestFile]) -> None:
        if not self._keeping or len(listed) > KEPT_MANIFEST_ENTRIES:
            return
        with self._kept_lock:
            kept = self._kept_lists
            kept[key] = listed
            kept.move_to_end(key)
            held = sum(len(v) for v in kept.values())
            while len(kept) > KEPT_MANIFEST_LISTS or held > KEPT_MANIFEST_ENTRIES:
                held -= len(kept.popitem(last=False)[1])

    def _inline_manifest(self, path: str, snapshot: Snapshot) -> ManifestFile:
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


def load_table(catalog: CatalogContract, identifier: Identifier) -> Table:
    """The table as its catalog has it now; its FileIO carries the storage properties the catalog
    handed out with it (a REST catalog's vended credentials)."""
    state = catalog.load(identifier)
    return Table(identifier, state.metadata, state.metadata_location, catalog, io=catalog.io_for(identifier))
