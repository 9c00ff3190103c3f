"""A table whose manifest lies about a data file's metrics, made honestly: the head's manifest
that lists the file is written again by icectl's own manifest writer with the entry changed, and
committed as a new ``replace`` snapshot (manifest list and metadata through the catalog), as a
buggy writer or a bad manual edit would leave it. Used by the fast tests, the crash suite and the
Iceberg Java proof of ``repair --metrics``."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

from icectl.formats.manifest import DataFile, EntryStatus, FileContent, ManifestEntry
from icectl.spec.metadata import MAIN_BRANCH
from icectl.table.loaded import Table, load_table
from icectl.table.snapshot_producer import (
    SnapshotChange,
    new_snapshot_id,
    snapshot_from_manifests,
    summarize_change,
    write_manifest_file,
)
from icectl.table.transaction import Transaction


def break_metrics(table: Table, pick: Callable[[DataFile], bool], change: Callable[[DataFile], DataFile]) -> str:
    """Commit a snapshot on main whose entry for the first live data file ``pick`` accepts is
    ``change(data_file)``; every other entry as it was (EXISTING, same sequence numbers). Returns
    the file's path."""
    head = table.metadata.current_snapshot
    target: list[str] = []
    sid = new_snapshot_id()
    before_sizes = [sum(f.file_size_in_bytes for _, f in table.live_files(head) if f.content == FileContent.DATA)]

    def build(txn: Transaction) -> list[Any]:
        t = txn.table
        md = t.metadata
        seq = md.last_sequence_number + 1 if md.format_version >= 2 else 0
        out = []
        live: list[DataFile] = []
        for m in t.manifests(head):
            entries = t.read_entries(m, live_only=True)
            live += [e.data_file for e in entries]
            hit = next((e for e in entries if not target and e.data_file.content == FileContent.DATA
                        and pick(e.data_file)), None)
            if hit is None:
                out.append(m)
                continue
            target.append(hit.data_file.file_path)
            live[-len(entries):] = [change(e.data_file) if e is hit else e.data_file for e in entries]
            rewritten = [ManifestEntry(EntryStatus.EXISTING, e.snapshot_id, e.sequence_number, e.file_sequence_number,
                                       change(e.data_file) if e is hit else e.data_file) for e in entries]
            out.append(write_manifest_file(t, rewritten, txn=txn, spec_id=m.partition_spec_id, content=m.content,
                                           snapshot_id=sid, sequence_number=seq))
        assert target, "no data file to break"
        summary = summarize_change(head, SnapshotChange("replace"))
        summary.update({k: v for k, v in head.summary.items() if k.startswith("total-")})
        data = [f for f in live if f.content == FileContent.DATA]  # the totals the lying entries add up to
        summary["total-records"] = str(sum(f.record_count for f in data))
        summary["total-files-size"] = str(int(head.summary.get("total-files-size", "0"))
                                          + sum(f.file_size_in_bytes for f in data) - before_sizes[0])
        return snapshot_from_manifests(txn, head, out, snapshot_id=sid, sequence_number=seq, summary=summary,
                                       ref_name=MAIN_BRANCH)

    Transaction(table).commit(build)
    return target[0]


def set_upper(fid: int, raw: bytes) -> Callable[[DataFile], DataFile]:
    return lambda df: dataclasses.replace(df, upper_bounds={**(df.upper_bounds or {}), fid: raw})


def reload(table: Table) -> Table:
    return load_table(table.catalog, table.identifier)


__all__ = ["break_metrics", "reload", "set_upper"]
