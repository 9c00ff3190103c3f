"""Small, valid tables built with icectl's own engine, for the validation corpus.

`build(tmp_path, format_version)` creates `db.t` in a SQLite catalog under tmp_path (or, with
`catalog="hadoop"`, a file-system catalog) with real Parquet data files written by pyarrow:

  snapshot 1: append two files, day 2026-01-01 (ids 1..3) and 2026-01-02 (ids 4..5)
  snapshot 2: append one file, day 2026-01-02 (ids 6..8)
  snapshot 3: append one file, day 2026-01-03 (ids 9..10, one null name)
  snapshot 4 (v2): a Parquet position delete file (row 0 of the first file) and an equality
              delete file (id = 7, equality_ids [1])
  snapshot 4 (v3): a deletion vector (rows 0 and 2 of the first file) in a Puffin file

The schema is `id:long!, name:string, ts:timestamptz`, partitioned by `day(ts)`. Every data and
delete file carries bounds and counts like Iceberg Java writes them. `Base` gives the handles the
corruptions in `cases.py` need.
"""
from __future__ import annotations

import datetime as dt
import os
import uuid
from dataclasses import dataclass, field
from typing import Any

from icectl.catalog.base import Catalog
from icectl.spec.conversions import to_bytes
from icectl.formats.manifest import DataFile, FileContent
from icectl.table.loaded import Table, load_table

IDENT = ("db", "t")
SCHEMA = "id:long!, name:string, ts:timestamptz"
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


@dataclass
class Base:
    root: str
    catalog: Catalog
    format_version: int
    data_files: list[DataFile] = field(default_factory=list)
    delete_files: list[DataFile] = field(default_factory=list)

    @property
    def table(self) -> Table:
        return load_table(self.catalog, IDENT)

    @property
    def metadata_location(self) -> str:
        return self.catalog.load_metadata_location(IDENT)


def make_catalog(root: str, kind: str = "sql") -> Catalog:
    from icectl.io import FileIO

    wh = os.path.join(root, "warehouse")
    os.makedirs(wh, exist_ok=True)
    if kind == "hadoop":
        from icectl.catalog.hadoop import HadoopCatalog

        return HadoopCatalog("corpus", wh, FileIO())
    from icectl.catalog.sql import SqlCatalog

    return SqlCatalog("corpus", f"sqlite:///{os.path.join(root, 'catalog.db')}", wh, FileIO())


def _micros(day: int, hour: int) -> int:
    return (day * 86400 + hour * 3600) * 1_000_000


def day_of(date: str) -> int:
    return (dt.date.fromisoformat(date) - dt.date(1970, 1, 1)).days


def write_data_file(table: Table, ids: list[int], names: list[str | None], day: int, *,
                    spec_id: int = 0) -> DataFile:
    """A Parquet data file (field ids in the Parquet schema) and its DataFile with metrics."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ts = [_micros(day, i % 24) for i in range(len(ids))]
    schema = pa.schema([
        pa.field("id", pa.int64(), nullable=False, metadata={"PARQUET:field_id": "1"}),
        pa.field("name", pa.string(), metadata={"PARQUET:field_id": "2"}),
        pa.field("ts", pa.timestamp("us", tz="UTC"), metadata={"PARQUET:field_id": "3"}),
    ])
    path = os.path.join(table.location, "data", f"ts_day={day}", f"{uuid.uuid4()}.parquet")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(pa.table({"id": ids, "name": names, "ts": pa.array(ts, pa.timestamp("us", tz="UTC"))},
                            schema=schema), path)
    present = [n for n in names if n is not None]
    lower = {1: to_bytes("long", min(ids)), 3: to_bytes("timestamptz", min(ts))}
    upper = {1: to_bytes("long", max(ids)), 3: to_bytes("timestamptz", max(ts))}
    if present:
        lower[2], upper[2] = to_bytes("string", min(present)), to_bytes("string", max(present))
    n = len(ids)
    return DataFile(path, "parquet", (day,), n, os.path.getsize(path), spec_id=spec_id,
                    value_counts={1: n, 2: n, 3: n}, null_value_counts={1: 0, 2: n - len(present), 3: 0},
                    lower_bounds=lower, upper_bounds=upper, sort_order_id=0)


def write_position_delete(table: Table, data: DataFile, positions: list[int]) -> DataFile:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([
        pa.field("file_path", pa.string(), nullable=False, metadata={"PARQUET:field_id": "2147483546"}),
        pa.field("pos", pa.int64(), nullable=False, metadata={"PARQUET:field_id": "2147483545"}),
    ])
    path = os.path.join(table.location, "data", f"ts_day={data.partition[0]}", f"{uuid.uuid4()}-deletes.parquet")
    pq.write_table(pa.table({"file_path": [data.file_path] * len(positions), "pos": positions}, schema=schema), path)
    return DataFile(path, "parquet", data.partition, len(positions), os.path.getsize(path),
                    content=FileContent.POSITION_DELETES, spec_id=data.spec_id,
                    lower_bounds={2147483546: data.file_path.encode(), 2147483545: to_bytes("long", min(positions))},
                    upper_bounds={2147483546: data.file_path.encode(), 2147483545: to_bytes("long", max(positions))},
                    referenced_data_file=data.file_path)


def write_equality_delete(table: Table, ids: list[int], day: int) -> DataFile:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([pa.field("id", pa.int64(), nullable=False, metadata={"PARQUET:field_id": "1"})])
    path = os.path.join(table.location, "data", f"ts_day={day}", f"{uuid.uuid4()}-eq-deletes.parquet")
    pq.write_table(pa.table({"id": ids}, schema=schema), path)
    return DataFile(path, "parquet", (day,), len(ids), os.path.getsize(path), content=FileContent.EQUALITY_DELETES,
                    equality_ids=[1], lower_bounds={1: to_bytes("long", min(ids))},
                    upper_bounds={1: to_bytes("long", max(ids))}, sort_order_id=0)


def write_dv(table: Table, data: DataFile, positions: list[int]) -> DataFile:
    from icectl.formats.puffin import deletion_vector_file

    blob_bytes, blobs = deletion_vector_file({data.file_path: positions})
    path = os.path.join(table.location, "data", f"{uuid.uuid4()}-dv.puffin")
    with open(path, "wb") as f:
        f.write(blob_bytes)
    b = blobs[0]
    return DataFile(path, "puffin", data.partition, b.cardinality, len(blob_bytes),
                    content=FileContent.POSITION_DELETES, spec_id=data.spec_id, referenced_data_file=data.file_path,
                    content_offset=b.offset, content_size_in_bytes=b.length)


def build(root: str, format_version: int, *, catalog: str = "sql", deletes: bool = True) -> Base:
    """The valid table described in the module docstring."""
    from helpers import create_table
    from helpers import append_files

    cat = make_catalog(str(root), catalog)
    t = create_table(cat, IDENT, schema_text=SCHEMA, partition_by="day(ts)", format_version=format_version)
    base = Base(str(root), cat, format_version)
    d1, d2, d3 = day_of("2026-01-01"), day_of("2026-01-02"), day_of("2026-01-03")
    f1 = write_data_file(t, [1, 2, 3], ["a", "b", "c"], d1)
    f2 = write_data_file(t, [4, 5], ["d", "e"], d2)
    t = append_files(t, [f1, f2])
    f3 = write_data_file(t, [6, 7, 8], ["f", "g", "h"], d2)
    t = append_files(t, [f3])
    f4 = write_data_file(t, [9, 10], ["i", None], d3)
    t = append_files(t, [f4])
    base.data_files = [f1, f2, f3, f4]
    if deletes and format_version == 2:
        pos = write_position_delete(t, f1, [0])
        eq = write_equality_delete(t, [7], d2)
        t = append_files(t, [pos, eq])
        base.delete_files = [pos, eq]
    elif deletes and format_version >= 3:
        dv = write_dv(t, f1, [0, 2])
        t = append_files(t, [dv])
        base.delete_files = [dv]
    return base


__all__ = ["Base", "IDENT", "build", "day_of", "make_catalog", "write_data_file", "write_dv", "write_equality_delete",
           "write_position_delete", "Any"]
