"""Real Parquet inputs for the compaction job's tests: data files whose columns carry Iceberg
field ids, and position delete files with the spec's reserved ids 2147483546 / 2147483545."""
from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq

from icectl.ops.evolve.create import load_schema_argument

FID = b"PARQUET:field_id"


def fld(name, typ, fid, nullable=True):
    return pa.field(name, typ, nullable=nullable, metadata={FID: str(fid).encode()})


def write_parquet(path, table: pa.Table) -> str:
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    pq.write_table(table, str(path))
    return str(path)


SIMPLE = load_schema_argument("id:long!, name:string")


def simple_file(path, ids, names=None, *, extra_fields=()) -> str:
    names = names if names is not None else [f"n{i}" for i in ids]
    fields = [fld("id", pa.int64(), 1, False), fld("name", pa.string(), 2)]
    cols = [pa.array(ids, pa.int64()), pa.array(names, pa.string())]
    for f, values in extra_fields:
        fields.append(f)
        cols.append(pa.array(values, f.type))
    return write_parquet(path, pa.Table.from_arrays(cols, schema=pa.schema(fields)))


def position_delete_file(path, pairs) -> str:
    """A Parquet position delete file: (file_path, pos) rows with the spec's reserved field ids."""
    schema = pa.schema([fld("file_path", pa.string(), 2147483546, False), fld("pos", pa.int64(), 2147483545, False)])
    return write_parquet(path, pa.table({"file_path": [p for p, _ in pairs], "pos": [n for _, n in pairs]},
                                        schema=schema))
