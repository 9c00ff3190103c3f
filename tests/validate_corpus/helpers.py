"""Helpers of the validation corpus: the case registry and the corruptions' tools (edit the
metadata JSON, rewrite a manifest list or a manifest in place)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from icectl.formats.manifest import (
    DataFile,
    EntryStatus,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
    read_manifest_list,
    write_manifest,
    write_manifest_list,
)

from . import tables
from .tables import Base


@dataclass(frozen=True)
class Case:
    name: str
    fv: int
    expected: frozenset[str]
    corrupt: Callable[[Base], None]
    deep: bool = False
    catalog: str = "sql"
    deletes: bool = True
    description: str = ""


CASES: dict[str, Case] = {}


def case(name: str, fv: int, *expected: str, deep: bool = False, catalog: str = "sql", deletes: bool = True):
    def register(fn: Callable[[Base], None]) -> Callable[[Base], None]:
        CASES[name] = Case(name, fv, frozenset(expected), fn, deep, catalog, deletes, (fn.__doc__ or "").strip())
        return fn

    return register


def build_case(c: Case, root: Any) -> Base:
    base = tables.build(str(root), c.fv, catalog=c.catalog, deletes=c.deletes)
    c.corrupt(base)
    return base


# -- helpers -------------------------------------------------------------------------------------

def edit_json(base: Base, fn: Callable[[dict], Any]) -> None:
    path = base.metadata_location
    with open(path) as f:
        obj = json.load(f)
    fn(obj)
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)


def write_raw(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def snapshots(obj: dict) -> list[dict]:
    return obj["snapshots"]


def current_list_path(base: Base) -> str:
    t = base.table
    return t.resolve(t.metadata.current_snapshot.manifest_list)


def rewrite_list(base: Base, fn: Callable[[list[ManifestFile]], Any], snapshot_id: int | None = None) -> None:
    """Rewrite a snapshot's manifest list (default: the current one) in place."""
    t = base.table
    md = t.metadata
    snap = md.snapshot_by_id(snapshot_id) if snapshot_id is not None else md.current_snapshot
    path = t.resolve(snap.manifest_list)
    manifests = read_manifest_list(t.io.read(path))
    fn(manifests)
    t.io.write(path, write_manifest_list(manifests, format_version=md.format_version, snapshot_id=snap.snapshot_id,
                                         parent_snapshot_id=snap.parent_snapshot_id,
                                         sequence_number=snap.sequence_number, first_row_id=snap.first_row_id),
               overwrite=True)


def rewrite_manifest(base: Base, pick: Callable[[ManifestFile], bool], fn: Callable[[list[ManifestEntry]], Any],
                     *, recount: bool = True, data: bytes | None = None) -> str:
    """Rewrite one manifest of the current snapshot in place (entries changed by ``fn``, or the
    bytes ``data``), then fix manifest_length (and, with ``recount``, the counts) in every manifest
    list that lists it, as a writer would."""
    t = base.table
    md = t.metadata
    m = next(x for x in t.manifests(md.current_snapshot) if pick(x))
    entries = t.read_entries(m)
    if data is None:
        fn(entries)
        data = write_manifest(entries, format_version=md.format_version, spec=md.spec_by_id(m.partition_spec_id),
                              schema=md.schema, content=m.content)
    t.io.write(m.manifest_path, data, overwrite=True)

    def fix(manifests: list[ManifestFile]) -> None:
        for x in manifests:
            if t.resolve(x.manifest_path) == m.manifest_path:
                x.manifest_length = len(data)
                if recount:
                    for status, files, rows in ((EntryStatus.ADDED, "added_files_count", "added_rows_count"),
                                                (EntryStatus.EXISTING, "existing_files_count", "existing_rows_count"),
                                                (EntryStatus.DELETED, "deleted_files_count", "deleted_rows_count")):
                        group = [e for e in entries if e.status == status]
                        setattr(x, files, len(group))
                        setattr(x, rows, sum(e.data_file.record_count for e in group))

    for s in md.snapshots:
        if any(t.resolve(x.manifest_path) == m.manifest_path for x in t.manifests(s)):
            rewrite_list(base, fix, s.snapshot_id)
    return m.manifest_path


def data_manifest(m: ManifestFile) -> bool:
    return m.content == ManifestContent.DATA


def delete_manifest(m: ManifestFile) -> bool:
    return m.content == ManifestContent.DELETES


def newest_data_manifest(base: Base) -> Callable[[ManifestFile], bool]:
    sid = base.table.metadata.current_snapshot_id
    t = base.table
    target = [m for m in t.manifests(t.metadata.current_snapshot) if m.content == ManifestContent.DATA]
    newest = max(target, key=lambda m: m.sequence_number)
    return lambda m: m.manifest_path == newest.manifest_path and sid is not None


def commit_extra(base: Base, files: list[DataFile]) -> None:
    from helpers import append_files

    append_files(base.table, files)
