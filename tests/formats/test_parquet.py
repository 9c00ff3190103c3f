"""The one Parquet writer helper (icectl.formats.parquet): field ids in the Parquet schema, the
codec and row groups asked for, the size returned."""
from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq

from icectl.formats.parquet import field_id, iceberg_field, parquet_bytes, write_parquet
from icectl.io import FileIO


def _table() -> pa.Table:
    schema = pa.schema([iceberg_field("id", pa.int64(), 1, nullable=False), iceberg_field("name", pa.string(), 7)])
    return pa.table({"id": list(range(1000)), "name": [str(i) for i in range(1000)]}, schema=schema)


def test_field_ids_codec_and_size(tmp_path):
    path = str(tmp_path / "f.parquet")
    size = write_parquet(FileIO(), path, _table(), compression="zstd", row_group_rows=0)
    assert size == os.path.getsize(path)
    f = pq.ParquetFile(path)
    assert [f.schema_arrow.field(i).metadata[b"PARQUET:field_id"] for i in range(2)] == [b"1", b"7"]
    assert [field_id(x) for x in f.schema_arrow] == [1, 7]
    assert "field_id=1" in str(f.schema) and "field_id=7" in str(f.schema)  # in the Parquet schema itself
    assert f.metadata.num_row_groups == 1
    assert f.metadata.row_group(0).column(0).compression == "ZSTD"


def test_row_groups_and_bytes(tmp_path):
    data = parquet_bytes(_table(), compression="snappy", row_group_rows=300)
    f = pq.ParquetFile(pa.BufferReader(data))
    assert f.metadata.num_row_groups == 4 and f.metadata.num_rows == 1000
    assert f.metadata.row_group(0).column(1).compression == "SNAPPY"
