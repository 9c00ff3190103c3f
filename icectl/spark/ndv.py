"""The data plane of ``compute-stats``: theta sketches of column values, as Iceberg Java's
``ThetaSketchAgg`` builds them for the ``apache-datasketches-theta-v1`` blob (Puffin spec), through
Apache DataSketches' Python binding (``datasketches``).

What Java hashes: each non-null value converted by ``Conversions.toByteBuffer`` to its Iceberg
single-value serialization (spec Appendix D), as Spark hands it over: a ``uuid`` column is a
Spark string, so its 36-character text is hashed; every other type is Appendix D (int and date 4
bytes, long/time/timestamps 8 bytes little-endian, float and double their raw IEEE bits, decimals
the minimal big-endian two's complement of the unscaled value, strings UTF-8, fixed and binary
as they are, booleans one byte). Null and empty values are not counted. The sketch is DataSketches'
default: ``lg_k`` 12 (4,096 nominal entries), seed 9001; sketches of different tasks are merged
with a union of the same size, and the blob is the ordered compact sketch, serialized
uncompressed (serial version 3), as ``CompactSketch.toByteArray()`` writes it.

The binding hashes an int64 (its 8 little-endian bytes) and a str (its UTF-8 bytes) itself; those
cover long-like values, doubles (their bits as an int64) and strings. For the other types the
binding has no byte-buffer update, so the value bytes are hashed here with MurmurHash3_x64_128 and
that seed (``mmh3``; DataSketches keeps ``h1 >>> 1``) and handed to the binding as an exact-mode
compact sketch (the layout the binding itself serializes, checked byte for byte by the tests),
which its union merges like any other.

datasketches, numpy and pyarrow are imported inside the functions that use them (the executors'
path): compute-stats' planning imports this module on the client for :func:`supported` and
:data:`SEED` only.
"""
from __future__ import annotations

import base64
import struct
import uuid
from typing import Any, Iterable

import mmh3

from icectl.io import FileIO
from icectl.spark.protocol import NdvPlan, NdvResult, NdvTask, NdvTaskResult
from icectl.spark.rewrite import iter_input, output_schema
from icectl.spec.conversions import decimal_min_bytes, unscaled
from icectl.spec.types import primitive, schema_from_json

LG_K = 12  # DataSketches' default nominal entries 4096 (UpdateSketch.builder(), SetOperationBuilder())
SEED = 9001  # DataSketches' DEFAULT_UPDATE_SEED

# Iceberg types whose values the job can sketch (ThetaSketchAgg's Conversions.toByteBuffer); the
# rest (variant, geometry, geography, unknown) have no value Java would hash.
INT64_TYPES = ("long", "time", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns")
STRING_TYPES = ("string", "uuid")
BYTES_TYPES = ("boolean", "int", "date", "float", "decimal", "fixed", "binary")
SUPPORTED_TYPES = INT64_TYPES + STRING_TYPES + BYTES_TYPES + ("double",)

_PREAMBLE_FLAGS = 0x1A  # read-only | compact | ordered (DataSketches theta serial version 3)


def supported(type_name: str) -> bool:
    base = type_name.split("(", 1)[0].split("[", 1)[0]
    return base in SUPPORTED_TYPES


def _base(type_name: str) -> str:
    return type_name.split("(", 1)[0].split("[", 1)[0]


def seed_hash() -> int:
    import datasketches

    return datasketches.update_theta_sketch(lg_k=LG_K, seed=SEED).get_seed_hash()


def exact_compact_sketch(hashes: Iterable[int], *, seed_hash_value: int) -> bytes:
    """An exact-mode (theta 1.0) ordered compact theta sketch holding ``hashes`` (63-bit, distinct
    or not), in DataSketches' serial version 3 layout: preamble (longs, serial version 3, family 3
    "compact", two unused bytes, flags, seed hash), the entry count, then the entries ascending."""
    entries = sorted(set(int(h) for h in hashes if h))
    if not entries:
        return struct.pack("<BBBBBBH", 1, 3, 3, 0, 0, _PREAMBLE_FLAGS | 0x04, seed_hash_value)  # empty
    if len(entries) == 1:
        return struct.pack("<BBBBBBHQ", 1, 3, 3, 0, 0, _PREAMBLE_FLAGS, seed_hash_value, entries[0])
    head = struct.pack("<BBBBBBHII", 2, 3, 3, 0, 0, _PREAMBLE_FLAGS, seed_hash_value, len(entries), 0)
    return head + struct.pack(f"<{len(entries)}Q", *entries)


def value_hashes(values: Iterable[bytes]) -> list[int]:
    """DataSketches' hash of each byte string (empty ones are not counted, as Java rejects them)."""
    return [mmh3.hash64(v, seed=SEED, signed=False)[0] >> 1 for v in values if v]


def _single_value_bytes(type_name: str, arrow_values: Any) -> list[bytes]:
    """The Appendix D bytes of the distinct non-null values of an Arrow array of a BYTES_TYPES type."""
    import numpy as np

    base = _base(type_name)
    values = arrow_values.drop_null() if hasattr(arrow_values, "drop_null") else arrow_values
    if base == "boolean":
        return [b"\x01" if v else b"\x00" for v in values.to_pylist()]
    if base in ("int", "date"):
        arr = values.cast("int32").to_numpy(zero_copy_only=False).astype("<i4")
        raw = arr.tobytes()
        return [raw[i:i + 4] for i in range(0, len(raw), 4)]
    if base == "float":
        arr = np.asarray(values.to_numpy(zero_copy_only=False), dtype="<f4")
        raw = arr.tobytes()
        return [raw[i:i + 4] for i in range(0, len(raw), 4)]
    if base == "decimal":
        t = primitive(type_name)
        return [decimal_min_bytes(unscaled(t, v)) for v in values.to_pylist()]
    return [bytes(v) for v in values.to_pylist()]  # fixed, binary


class ColumnSketch:
    """The sketch of one column, fed Arrow arrays a batch at a time."""

    def __init__(self, type_name: str):
        import datasketches

        self.type_name = type_name
        self.base = _base(type_name)
        if not supported(type_name):
            raise ValueError(f"cannot sketch values of type {type_name}")
        self._sketch = datasketches.update_theta_sketch(lg_k=LG_K, seed=SEED)
        self._union = None
        self._seed_hash = self._sketch.get_seed_hash()

    def update(self, array: Any) -> None:
        """Add the values of an Arrow array (nulls skipped); each distinct value is hashed once."""
        import pyarrow.compute as pc

        if len(array) == 0:
            return
        distinct = pc.unique(array)
        distinct = distinct.drop_null()
        if len(distinct) == 0:
            return
        update = self._sketch.update
        if self.base in INT64_TYPES:
            for v in distinct.cast("int64").to_numpy(zero_copy_only=False).tolist():
                update(v)
        elif self.base == "double":
            import numpy as np

            bits = np.asarray(distinct.to_numpy(zero_copy_only=False), dtype="<f8").view("<i8")
            for v in bits.tolist():  # the raw bits (Java's putDouble), not the binding's canonical double
                update(v)
        elif self.base in STRING_TYPES:
            if self.base == "uuid":
                values = [str(uuid.UUID(bytes=bytes(b))) for b in distinct.to_pylist()]
            else:
                values = distinct.to_pylist()
            for v in values:
                update(v)  # empty strings are ignored by the binding, as Java ignores them
        else:
            self._merge(exact_compact_sketch(value_hashes(_single_value_bytes(self.type_name, distinct)),
                                             seed_hash_value=self._seed_hash))

    def _merge(self, compact: bytes) -> None:
        import datasketches

        if self._union is None:
            self._union = datasketches.theta_union(lg_k=LG_K, seed=SEED)
        self._union.update(datasketches.compact_theta_sketch.deserialize(compact, seed=SEED))

    def to_bytes(self) -> bytes:
        """The ordered compact sketch, serialized uncompressed."""
        if self._union is None:
            return self._sketch.compact(ordered=True).serialize()
        self._union.update(self._sketch)
        return self._union.get_result(ordered=True).serialize()


def union_sketches(sketches: Iterable[bytes]) -> bytes:
    """The union of serialized compact sketches (lg_k 12, seed 9001), ordered and compact."""
    import datasketches

    union = datasketches.theta_union(lg_k=LG_K, seed=SEED)
    for s in sketches:
        union.update(datasketches.compact_theta_sketch.deserialize(s, seed=SEED))
    return union.get_result(ordered=True).serialize()


def estimate(sketch: bytes) -> float:
    import datasketches

    return datasketches.compact_theta_sketch.deserialize(sketch, seed=SEED).get_estimate()


def column_values(table: Any, path: tuple[str, ...]) -> Any:
    """The Arrow array of a (possibly struct-nested) column of an Arrow table, by field names."""
    import pyarrow.compute as pc

    col = table.column(path[0])
    for name in path[1:]:
        col = pc.struct_field(col, name)
    return col.combine_chunks() if hasattr(col, "combine_chunks") else col


def sketch_task(task: NdvTask, plan: NdvPlan) -> NdvTaskResult:
    """Sketch the plan's columns over one task's input files (deletes applied, read a batch at a
    time); return the rows read and each column's serialized sketch (base64), keyed by field id."""
    io = FileIO(dict(plan.io_properties))
    schema = schema_from_json(plan.schema)
    target = output_schema(schema, False)
    columns = [(c.field_id, c.path, ColumnSketch(c.type)) for c in plan.columns]
    rows = 0
    for inp in task.inputs:
        for part in iter_input(io, inp, schema=schema, target=target, row_lineage=False, prune=True):
            rows += part.num_rows
            for _, path, sketch in columns:
                sketch.update(column_values(part, path))
    return NdvTaskResult(task.task_id, rows=rows,
                         sketches={fid: base64.b64encode(s.to_bytes()).decode() for fid, path, s in columns})


def merge_task_results(results: Iterable[NdvTaskResult], field_ids: Iterable[int]) -> NdvResult:
    """The tasks' sketches united per column (base64 in and out) and the rows they read."""
    results = list(results)
    merged = {}
    for fid in field_ids:
        merged[fid] = base64.b64encode(union_sketches(
            base64.b64decode(r.sketches[fid]) for r in results)).decode()
    return NdvResult(rows=sum(r.rows for r in results), sketches=merged)
