"""Writing Parquet: the one place icectl turns an Arrow table into a Parquet file (data files of
``demo`` and the Spark rewrite job, position delete files of ``rewrite-deletes`` and
``rewrite-table-path``, partition statistics files).

Iceberg reads Parquet columns by field id, not by name (spec: "Parquet", "Column Projection"):
every column of what icectl writes carries its Iceberg field id in the Arrow field's metadata
(``PARQUET:field_id``, which pyarrow writes as the Parquet schema's field_id), built with
:func:`iceberg_field`. A file read back and rewritten (a position delete file) keeps the schema it
was read with.

pyarrow is imported here at the top: only commands that write Parquet load this module.
"""
from __future__ import annotations

from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

FIELD_ID = b"PARQUET:field_id"
DEFAULT_COMPRESSION = "zstd"  # Iceberg's default write.parquet.compression-codec


def field_id(field: Any) -> int | None:
    """The Iceberg field id an Arrow field carries, or None."""
    md = field.metadata or {}
    raw = md.get(FIELD_ID)
    return int(raw) if raw is not None else None


def iceberg_field(name: str, arrow_type: Any, fid: int, *, nullable: bool = True) -> Any:
    """An Arrow field that carries Iceberg field id ``fid``."""
    return pa.field(name, arrow_type, nullable=nullable, metadata={FIELD_ID: str(fid).encode()})


def write_to(sink: BinaryIO | Any, data: Any, *, compression: str = DEFAULT_COMPRESSION,
             row_group_rows: int | None = None) -> None:
    """Write Arrow table ``data`` as one Parquet file into an open binary ``sink`` with codec
    ``compression``; ``row_group_rows`` rows per row group (None: pyarrow's default; 0: the whole
    table in one row group)."""
    kwargs: dict[str, Any] = {}
    if row_group_rows is not None:
        kwargs["row_group_size"] = max(row_group_rows or data.num_rows, 1)
    pq.write_table(data, sink, compression=compression, **kwargs)


def write_parquet(io: Any, path: str, data: Any, *, compression: str = DEFAULT_COMPRESSION,
                  row_group_rows: int | None = None) -> int:
    """Write ``data`` as the Parquet file at ``path`` through FileIO ``io`` (:func:`write_to`);
    the file's size in bytes."""
    with io.open(path, "wb") as sink:
        write_to(sink, data, compression=compression, row_group_rows=row_group_rows)
    return io.size(path)


def parquet_bytes(data: Any, *, compression: str = DEFAULT_COMPRESSION, row_group_rows: int | None = None) -> bytes:
    """``data`` as the bytes of a Parquet file (:func:`write_to`)."""
    sink = pa.BufferOutputStream()
    write_to(sink, data, compression=compression, row_group_rows=row_group_rows)
    return sink.getvalue().to_pybytes()


def open_writer(sink: Any, schema: Any, *, compression: str = DEFAULT_COMPRESSION) -> Any:
    """A Parquet writer that takes ``schema``'s tables a row group at a time (a file written as
    its rows arrive)."""
    return pq.ParquetWriter(sink, schema, compression=compression)


__all__ = ["DEFAULT_COMPRESSION", "FIELD_ID", "field_id", "iceberg_field", "open_writer", "parquet_bytes",
           "write_parquet", "write_to"]
