"""What a demo table (``icectl demo``) must hold: its history as the fixed seed makes it
(snapshot ids oldest first, operations, rows per snapshot, ages in days), and the rows of any of
its snapshots read from its files with pyarrow: every live data file by field id (a column a file
lacks reads as null), minus the positions that the live position delete files (``file_path``,
``pos``) and deletion vectors name for it.

Independent of icectl's scan planning: the demo never re-adds a path, so every live delete that
names a live data file applies to it. Used by the tests of ``icectl demo`` (engine, CLI, Spark).
"""
from __future__ import annotations

from typing import Any

import pyarrow.parquet as pq

from icectl.ops.demo import COLUMNS
from icectl.formats.manifest import FileContent
from icectl.formats.puffin import FileIOSource, read_deletion_vector

# The fixed seed's snapshot ids, oldest first (the README may quote them).
SNAPSHOT_IDS = [8852063390317680141, 6797554710906927185, 9042463363757120097, 7200898967051927173,
                4516416676890743829, 8644264919713683325, 8191209973720033175, 9115177490179072159,
                3462374417965917499, 6821771905967939417, 6807948677818654560]
S = dict(zip(["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11"], SNAPSHOT_IDS))
OPERATIONS = ["append", "append", "append", "delete", "delete", "append", "append", "delete", "overwrite",
              "append", "append"]
RECORDS = [120, 320, 430, 400, 391, 551, 671, 668, 664, 684, 694]
AGES_DAYS = [14, 13, 12, 11, 10, 9, 4, 3, 2, 1, 0.25]

FIELD_ID = b"PARQUET:field_id"
DELETE_FILE_PATH, DELETE_POS = 2147483546, 2147483545


def _by_field_id(path: str) -> dict[int, list[Any]]:
    t = pq.read_table(path)
    return {int(f.metadata[FIELD_ID]): t.column(i).to_pylist() for i, f in enumerate(t.schema)
            if f.metadata and FIELD_ID in f.metadata}


def snapshot_rows(table: Any, snapshot_id: int, *, columns: tuple[str, ...] = COLUMNS) -> list[tuple]:
    """Sorted rows (``icectl.ops.demo.COLUMNS`` order, or ``columns``) a reader of the snapshot sees."""
    md = table.metadata
    ids = [md.schema.field_by_name(c).field_id for c in columns]
    files = [f for _, f in table.live_files(md.snapshot_by_id(snapshot_id))]
    deleted: dict[str, set[int]] = {}
    for f in files:
        if f.content != FileContent.POSITION_DELETES:
            assert f.content == FileContent.DATA, f"unexpected {f.kind} in a demo table"
            continue
        if f.is_deletion_vector:
            bitmap = read_deletion_vector(FileIOSource(table.io, f.file_path), f.content_offset,
                                          f.content_size_in_bytes, record_count=f.record_count, source=f.file_path)
            deleted.setdefault(f.referenced_data_file, set()).update(bitmap)
        else:
            cols = _by_field_id(f.file_path)
            for p, pos in zip(cols[DELETE_FILE_PATH], cols[DELETE_POS]):
                deleted.setdefault(p, set()).add(pos)
    rows = []
    for f in files:
        if f.content != FileContent.DATA:
            continue
        cols = _by_field_id(f.file_path)
        n = f.record_count
        gone = deleted.get(f.file_path, set())
        rows += [tuple(cols[i][r] if i in cols else None for i in ids) for r in range(n) if r not in gone]
    return sorted(rows)
