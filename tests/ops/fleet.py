"""A generated catalog of tables in different states of (ill) health, for ``health`` and
``maintain``: real Parquet data and delete files (tests/validate_corpus/tables.py's writers) in a
SQLite catalog, namespace ``fleet``, schema ``id:long!, name:string, ts:timestamptz`` partitioned by
``day(ts)``.

  healthy        one append of one small file, today: nothing can improve it
  old_snapshots  eight appends 20 to 13 days ago, one file in a new partition each: expire
  manifests      twelve appends today, one file in a new partition each: twelve small manifests
  orphans        one append, and three files nothing reaches, ten days old: remove-orphans
  deletes        (v2) two data files; two position-delete files for the first (merge) removing 2
                 of its 3 rows: rewrite-deletes, and deletes worth applying (compact, Spark)
  dv             (v3) a data file and two position-delete files for it: rewrite-deletes turns them
                 into a deletion vector
  small_files    (with ``small_files=True``) six appends today of one small file each in one
                 partition: compact (Spark)
"""
from __future__ import annotations

import os
import pathlib
import sys
import time
import uuid

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/ for validate_corpus

from validate_corpus import tables  # noqa: E402

DAY_MS = 86_400_000
NS = "fleet"
SCHEMA = "id:long!, name:string, ts:timestamptz"
BASE_DAY = tables.day_of("2026-01-01")


def _create(catalog, name: str, *, format_version: int = 2, created_ms: int | None = None, properties=None):
    from helpers import create_table

    return create_table(catalog, (NS, name), schema_text=SCHEMA, partition_by="day(ts)", format_version=format_version,
                        created_ms=created_ms, properties=properties)


def _file(table, ids: list[int], day: int):
    return tables.write_data_file(table, ids, [f"n{i}" for i in ids], BASE_DAY + day)


def build_fleet(root: str, *, small_files: bool = False, catalog_name: str = "default") -> dict[str, str]:
    """Build the fleet under ``root`` (as the SQL catalog ``catalog_name``); return the catalog options: ``{"uri": ..., "warehouse": ...}``."""
    from icectl.catalog.sql import SqlCatalog
    from icectl.io import FileIO
    from helpers import append_files

    wh = os.path.join(root, "warehouse")
    os.makedirs(wh, exist_ok=True)
    uri = f"sqlite:///{os.path.join(root, 'catalog.db')}"
    catalog = SqlCatalog(catalog_name, uri, wh, FileIO())
    catalog.create_namespace((NS,), {})
    now = int(time.time() * 1000)

    t = _create(catalog, "healthy")
    append_files(t, [_file(t, [1, 2, 3], 0)])

    start = now - 20 * DAY_MS
    t = _create(catalog, "old_snapshots", created_ms=start - 1000)
    for i in range(8):
        t = append_files(t, [_file(t, [i], i)], timestamp_ms=start + i * DAY_MS)

    t = _create(catalog, "manifests")
    for i in range(12):
        t = append_files(t, [_file(t, [i], i)])

    t = _create(catalog, "orphans")
    t = append_files(t, [_file(t, [1], 0)])
    old = time.time() - 10 * 86400
    for i in range(3):
        path = os.path.join(t.location, "data", f"ts_day={BASE_DAY}", f"orphan-{i}-{uuid.uuid4()}.parquet")
        with open(path, "wb") as f:
            f.write(b"left by a writer that died" * (i + 1))
        os.utime(path, (old, old))

    t = _create(catalog, "deletes")
    f1, f2 = _file(t, [1, 2, 3], 0), _file(t, [4, 5, 6], 1)
    t = append_files(t, [f1, f2])
    t = append_files(t, [tables.write_position_delete(t, f1, [0])])
    t = append_files(t, [tables.write_position_delete(t, f1, [1])])

    t = _create(catalog, "dv", format_version=3)
    f1 = _file(t, [1, 2, 3, 4], 0)
    t = append_files(t, [f1])
    t = append_files(t, [tables.write_position_delete(t, f1, [0])])
    t = append_files(t, [tables.write_position_delete(t, f1, [3])])

    if small_files:
        t = _create(catalog, "small_files")
        for i in range(6):
            t = append_files(t, [_file(t, [10 * i, 10 * i + 1], 0)])
    return {"uri": uri, "warehouse": wh}


RANKED_KINDS = ("snapshots", "small", "deletes", "fresh", "mixed")


def build_ranked_fleet(root: str, count: int = 30) -> dict[str, str]:
    """``count`` tables of varied need for the fleet ranking, in namespace ``fleet``: table ``tNN``
    is of kind ``RANKED_KINDS[NN % 5]`` at level ``NN // 5`` (more of its trouble at a higher level):

      snapshots  level+2 appends 20 days ago: level+1 snapshots to expire
      small      level+1 appends today of a 2-row file in one partition (compact wants 5)
      deletes    a 10-row data file, then level+1 position-delete files of one row each
      fresh      one append today of level+1 rows: nothing to do
      mixed      two appends 20 days ago, then level+1 position-delete files today

    Return the catalog options: ``{"uri": ..., "warehouse": ...}``."""
    from icectl.catalog.sql import SqlCatalog
    from icectl.io import FileIO
    from helpers import append_files

    wh = os.path.join(root, "warehouse")
    os.makedirs(wh, exist_ok=True)
    uri = f"sqlite:///{os.path.join(root, 'catalog.db')}"
    catalog = SqlCatalog("default", uri, wh, FileIO())
    catalog.create_namespace((NS,), {})
    old = int(time.time() * 1000) - 20 * DAY_MS
    for n in range(count):
        kind, level = RANKED_KINDS[n % 5], n // 5
        name = f"t{n:02d}"
        if kind in ("snapshots", "mixed"):
            t = _create(catalog, name, created_ms=old - 1000)
            for i in range(level + 2 if kind == "snapshots" else 2):
                t = append_files(t, [_file(t, [i], i)], timestamp_ms=old + i * 60_000)
        else:
            t = _create(catalog, name)
        if kind == "small":
            for i in range(level + 1):
                t = append_files(t, [_file(t, [2 * i, 2 * i + 1], 0)])
        elif kind == "fresh":
            t = append_files(t, [_file(t, list(range(level + 1)), 0)])
        if kind in ("deletes", "mixed"):
            data = _file(t, list(range(100, 110)), 3)
            t = append_files(t, [data])
            for i in range(level + 1):
                t = append_files(t, [tables.write_position_delete(t, data, [i])])
    return {"uri": uri, "warehouse": wh}


def snapshot_state(root: str) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` (but the catalog database) with its size and mtime."""
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            if f.startswith("catalog.db"):
                continue
            p = os.path.join(d, f)
            st = os.stat(p)
            out[p] = (st.st_size, st.st_mtime_ns)
    return out


__all__ = ["NS", "RANKED_KINDS", "build_fleet", "build_ranked_fleet", "snapshot_state"]
