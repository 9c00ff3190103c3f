"""Scan planning: the live data files of a snapshot, each with the delete files that apply to it
(spec: "Scan Planning"; v3 deletion vectors; the v4 walk-through's summary of the rules):

- a deletion vector applies to the data file it references when its data sequence number is
  greater than or equal to the data file's;
- a position delete file applies to data files in the same partition whose data sequence
  number is less than or equal to its own, but not to a data file that has a deletion vector;
- an equality delete file applies to data files in the same partition (or to every data file
  when its spec is unpartitioned) whose data sequence number is strictly less than its own.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from icectl.errors import NotFoundError, UsageError
from icectl.formats.manifest import DataFile, FileContent, ManifestContent, ManifestEntry
from icectl.spec.metadata import MAIN_BRANCH, Snapshot
from icectl.table.loaded import Table

DELETE_FILE_PATH_ID = 2147483546  # file_path of position delete files


def referenced_data_file(f: DataFile) -> str | None:
    """The one data file a position delete file or DV can apply to, or None (Iceberg Java's
    ContentFileUtil.referencedDataFile): ``referenced_data_file``, else equal lower and upper
    bounds on ``file_path`` (how Iceberg Java writes a file-scoped v2 position delete file)."""
    if f.content != FileContent.POSITION_DELETES:
        return None
    if f.referenced_data_file:
        return f.referenced_data_file
    lo = (f.lower_bounds or {}).get(DELETE_FILE_PATH_ID)
    hi = (f.upper_bounds or {}).get(DELETE_FILE_PATH_ID)
    if lo is not None and lo == hi:
        try:
            return bytes(lo).decode("utf-8")
        except UnicodeDecodeError:
            return None
    return None


@dataclass
class DeleteRef:
    """A delete file as it applies: the file, its data sequence number, its kind."""

    entry: ManifestEntry

    @property
    def file(self) -> DataFile:
        return self.entry.data_file

    @property
    def sequence_number(self) -> int:
        return self.entry.sequence_number or 0


@dataclass
class FileScanTask:
    entry: ManifestEntry
    deletes: list[DeleteRef] = field(default_factory=list)

    @property
    def file(self) -> DataFile:
        return self.entry.data_file

    @property
    def data_sequence_number(self) -> int:
        return self.entry.sequence_number or 0

    @property
    def length(self) -> int:
        return self.file.file_size_in_bytes


def _partition_key(table: Table, f: DataFile) -> tuple:
    return (f.spec_id, f.partition)


def branch_head(table: Table, branch: str, *, operation: str) -> Snapshot | None:
    """The snapshot ``branch`` points at, for an ``operation`` that rewrites what the branch
    reaches and commits to it: None for ``main`` of a table without snapshots (nothing to
    rewrite); an error for any other missing branch and for a tag."""
    ref = table.metadata.all_refs.get(branch)
    if ref is None and branch != MAIN_BRANCH:
        raise NotFoundError(f"branch {branch!r} does not exist in {table.name}")
    if ref is not None and not ref.is_branch:
        raise UsageError(f"{branch!r} is a tag; {operation} commits to a branch")
    return table.metadata.snapshot_by_id(ref.snapshot_id) if ref is not None else None


def plan_files(table: Table, snapshot: Snapshot | None, *,
               data_entries: Iterable[ManifestEntry] | None = None) -> tuple[list[FileScanTask], list[ManifestEntry]]:
    """(scan tasks of the live data files with their deletes, all live delete entries).
    ``data_entries``: the live entries of the snapshot's data manifests when the caller has
    read them (``health``, by column); read entry by entry otherwise."""
    if snapshot is None:
        return [], []
    data: list[ManifestEntry] = []
    deletes: list[ManifestEntry] = []
    if data_entries is None:
        data_entries = table.live_entries(snapshot, with_stats=False, content=ManifestContent.DATA)
    for e in data_entries:
        (data if e.data_file.content == FileContent.DATA else deletes).append(e)
    # Delete files with their bounds: a position delete file's file_path bounds may scope it
    # to one data file.
    deletes += list(table.live_entries(snapshot, with_stats=True, content=ManifestContent.DELETES))
    md = table.metadata
    unpartitioned_specs = {s.spec_id for s in md.partition_specs if s.is_unpartitioned}
    dvs: dict[str, list[ManifestEntry]] = {}
    pos_by_part: dict[tuple, list[ManifestEntry]] = {}
    eq_by_part: dict[tuple, list[ManifestEntry]] = {}
    eq_global: list[ManifestEntry] = []
    for d in deletes:
        f = d.data_file
        if f.is_deletion_vector:
            dvs.setdefault(f.referenced_data_file or "", []).append(d)
        elif f.content == FileContent.POSITION_DELETES:
            pos_by_part.setdefault(_partition_key(table, f), []).append(d)
        elif f.spec_id in unpartitioned_specs:
            eq_global.append(d)
        else:
            eq_by_part.setdefault(_partition_key(table, f), []).append(d)
    tasks = []
    for e in data:
        f = e.data_file
        seq = e.sequence_number or 0
        applied: list[DeleteRef] = []
        file_dvs = [d for d in dvs.get(f.file_path, []) if (d.sequence_number or 0) >= seq]
        if file_dvs:
            applied += [DeleteRef(d) for d in file_dvs]
        else:
            for d in pos_by_part.get(_partition_key(table, f), []):
                ref = referenced_data_file(d.data_file)
                if (d.sequence_number or 0) >= seq and (ref is None or ref == f.file_path):
                    applied.append(DeleteRef(d))
        for d in eq_by_part.get(_partition_key(table, f), []) + eq_global:
            if (d.sequence_number or 0) > seq:
                applied.append(DeleteRef(d))
        tasks.append(FileScanTask(e, applied))
    return tasks, deletes


def delete_applies(delete: ManifestEntry, data: ManifestEntry, *, unpartitioned_specs: set[int]) -> bool:
    """Whether a delete entry can apply to a data entry by the sequence-number and partition rules
    (without looking inside the files)."""
    d, f = delete.data_file, data.data_file
    dseq, fseq = delete.sequence_number or 0, data.sequence_number or 0
    if d.is_deletion_vector or referenced_data_file(d):
        return referenced_data_file(d) == f.file_path and dseq >= fseq
    if d.content == FileContent.POSITION_DELETES:
        return (d.spec_id, d.partition) == (f.spec_id, f.partition) and dseq >= fseq
    if d.spec_id in unpartitioned_specs:
        return dseq > fseq
    return (d.spec_id, d.partition) == (f.spec_id, f.partition) and dseq > fseq


__all__ = ["DeleteRef", "FileScanTask", "ManifestContent", "delete_applies", "plan_files", "referenced_data_file"]
