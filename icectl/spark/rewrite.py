"""The data plane of compaction, without Spark: rewrite one task's input files into new Parquet
files and describe them. The PySpark job (``job.py``) runs :func:`rewrite_task` in executors;
tests can run it directly.

For each input data file, a batch at a time: read it by field id (columns renamed since it was
written still match), apply the deletes that apply (positions from Parquet delete files and deletion vectors,
equality deletes by value, null matching null), materialise row lineage in v3+ (``_row_id`` =
``first_row_id`` + position and ``_last_updated_sequence_number`` = the file's data sequence
number where the file has none), then write rows into files of about the target size and
return each file's metrics: counts, column sizes, and lower and upper bounds serialized as the
spec's Appendix D single values (strings and binary truncated to 16, as Iceberg Java's default
``truncate(16)`` metrics mode), gathered as each row group is written. Memory holds about one
input batch and one output row group, whatever the sizes of the files; a task with a sort order
sorts in memory (:func:`sort_in_memory`), which the Spark job leaves to Spark
(:mod:`icectl.spark.sort`).

pyarrow and numpy (and :mod:`icectl.formats.parquet`, which imports pyarrow at its top) are
imported inside the functions that use them, the executors' path: the job's driver imports this
module and refuses a plan of another protocol version before it loads either, and the client
imports it for its schema helpers (``arrow_type``, ``output_schema``).
"""
from __future__ import annotations

import dataclasses
import uuid
from typing import Any, Iterator
from urllib.parse import quote

from icectl.formats.puffin import deserialize_deletion_vector
from icectl.io import FileIO
from icectl.spark.metrics import ColumnMetrics, column_metrics
from icectl.spark.protocol import (EqualityDelete, InputFile, PartitionField, PositionDelete, RewritePlan,
                                   RewriteTask, SortField, WrittenFile)
from icectl.spec.conversions import from_json, to_internal, to_json
from icectl.spec.transforms import parse_transform
from icectl.spec.types import ListType, MapType, PrimitiveType, StructType, primitive, schema_from_json

ROW_ID = 2147483540  # Iceberg Java 1.10 MetadataColumns.ROW_ID (Integer.MAX_VALUE - 107)
LAST_UPDATED_SEQ = 2147483539  # MetadataColumns.LAST_UPDATED_SEQUENCE_NUMBER (Integer.MAX_VALUE - 108)
DELETE_FILE_PATH = 2147483546
DELETE_POS = 2147483545
FIELD_ID = b"PARQUET:field_id"


def arrow_type(t: Any) -> Any:
    import pyarrow as pa

    if isinstance(t, PrimitiveType):
        b = t.base
        simple = {"boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(),
                  "double": pa.float64(), "date": pa.date32(), "time": pa.time64("us"),
                  "timestamp": pa.timestamp("us"), "timestamptz": pa.timestamp("us", tz="UTC"),
                  "timestamp_ns": pa.timestamp("ns"), "timestamptz_ns": pa.timestamp("ns", tz="UTC"),
                  "string": pa.large_string(), "binary": pa.large_binary(), "uuid": pa.binary(16),
                  "unknown": pa.null(), "variant": pa.large_binary(), "geometry": pa.large_binary(),
                  "geography": pa.large_binary()}
        if b in simple:
            return simple[b]
        if b == "fixed":
            return pa.binary(t.length)
        if b == "decimal":
            return pa.decimal128(t.precision, t.scale)
    if isinstance(t, StructType):
        return pa.struct([arrow_field(f) for f in t.fields])
    if isinstance(t, ListType):
        return pa.large_list(arrow_field(t.element_field))
    if isinstance(t, MapType):
        return pa.map_(arrow_field(t.key_field), arrow_field(t.value_field))
    raise ValueError(f"no Arrow type for {t}")


def arrow_field(f: Any) -> Any:
    import pyarrow as pa

    return pa.field(f.name, arrow_type(f.field_type), nullable=not f.required,
                    metadata={FIELD_ID: str(f.field_id).encode()})


def output_schema(schema: Any, row_lineage: bool) -> Any:
    import pyarrow as pa

    fields = [arrow_field(f) for f in schema.fields]
    if row_lineage:
        fields += [pa.field("_row_id", pa.int64(), metadata={FIELD_ID: str(ROW_ID).encode()}),
                   pa.field("_last_updated_sequence_number", pa.int64(),
                            metadata={FIELD_ID: str(LAST_UPDATED_SEQ).encode()})]
    return pa.schema(fields)


def _field_id(field: Any) -> int | None:
    md = field.metadata or {}
    v = md.get(FIELD_ID)
    return int(v) if v is not None else None


def _project(table: Any, schema: Any, target: Any) -> Any:
    """Columns of ``table`` in the order of the Iceberg ``schema``, matched by field id."""
    import pyarrow as pa

    by_id = {}
    for i, f in enumerate(table.schema):
        fid = _field_id(f)
        if fid is not None:
            by_id[fid] = i
    by_name = {f.name: i for i, f in enumerate(table.schema)}
    columns = []
    for f, tf in zip(schema.fields, target):
        idx = by_id.get(f.field_id)
        if idx is None and not by_id:
            idx = by_name.get(f.name)  # a file written without field ids (e.g. migrated): names
        if idx is None:
            default = f.initial_default if f.has_initial_default else None
            col = pa.nulls(table.num_rows, type=tf.type) if default is None else \
                pa.array([_default_value(f, default)] * table.num_rows, type=tf.type)
        else:
            col = table.column(idx)
            if col.type != tf.type:
                col = col.cast(tf.type)
        columns.append(col)
    return columns


def _default_value(f: Any, default: Any) -> Any:
    return from_json(f.field_type, default)


def _deleted_positions(io: Any, data_path: str, deletes: list[PositionDelete]) -> Any:
    import numpy as np
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    parts = []
    for d in deletes:
        if d.format == "puffin":
            blob = io.read_range(d.path, d.offset, d.length)
            bitmap = deserialize_deletion_vector(blob, source=d.path)
            parts.append(np.fromiter(iter(bitmap), dtype=np.int64, count=len(bitmap)))
        else:
            with io.open(d.path, "rb") as fh:
                t = pq.read_table(fh)
            path_col = pos_col = None
            for i, f in enumerate(t.schema):
                fid = _field_id(f)
                if fid == DELETE_FILE_PATH or (fid is None and f.name == "file_path"):
                    path_col = t.column(i)
                if fid == DELETE_POS or (fid is None and f.name == "pos"):
                    pos_col = t.column(i)
            mask = pc.equal(path_col, data_path)
            for candidate in d.path_aliases:
                mask = pc.or_(mask, pc.equal(path_col, candidate))
            parts.append(pos_col.filter(mask).to_numpy())
    if not parts:
        return None
    return np.unique(np.concatenate(parts))


def _equality_deletes(io: Any, eq_deletes: list[EqualityDelete]) -> list[tuple[list[int], Any]]:
    """Each equality delete file's field ids and deleted values (an Arrow array for one column,
    a set of tuples for several), read once per input file."""
    import pyarrow.parquet as pq

    out = []
    for d in eq_deletes:
        with io.open(d.path, "rb") as fh:
            dt = pq.read_table(fh)
        cols_by_id = {_field_id(f): i for i, f in enumerate(dt.schema)}
        ids = list(d.equality_ids)
        if len(ids) == 1:
            out.append((ids, dt.column(cols_by_id[ids[0]]).combine_chunks()))
        else:
            out.append((ids, set(zip(*(dt.column(cols_by_id[fid]).to_pylist() for fid in ids)))))
    return out


def _equality_mask(table: Any, *, schema: Any, deletes: list[tuple[list[int], Any]]) -> Any:
    """True for rows NOT deleted by the equality deletes (null matches null)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    keep = pa.array([True] * table.num_rows)
    names = {f.field_id: f.name for f in schema.fields}
    for ids, values in deletes:
        if len(ids) == 1:
            target = table.column(names[ids[0]])
            if values.type != target.type:
                values = values.cast(target.type)
            hit = pc.is_in(target, value_set=values, skip_nulls=False)
        else:
            rows = zip(*(table.column(names[fid]).to_pylist() for fid in ids))
            hit = pa.array([r in values for r in rows], pa.bool_())
        keep = pc.and_(keep, pc.invert(pc.fill_null(hit, False)))
    return keep


def iter_input(io: Any, inp: InputFile, *, schema: Any, target: Any, row_lineage: bool,
               batch_rows: int = 65536, prune: bool = False) -> Iterator[Any]:
    """One input data file as Arrow tables of at most ``batch_rows`` rows in the output schema,
    deletes applied, read a batch at a time (a file larger than the memory is never whole in it).
    ``prune``: read only the file's columns whose field ids the schema's top-level fields have
    (when every top-level column of the file has a field id; otherwise all of them)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    positions = _deleted_positions(io, inp.path, inp.position_deletes)
    eq_deletes = _equality_deletes(io, inp.equality_deletes) if inp.equality_deletes else []
    fields = [target.field(i) for i in range(len(schema.fields))]
    first = inp.first_row_id
    offset = 0
    with io.open(inp.path, "rb") as fh:
        pf = pq.ParquetFile(fh)
        columns = _pruned_columns(pf.schema_arrow, schema) if prune and not row_lineage else None
        for batch in pf.iter_batches(batch_size=batch_rows, use_threads=False, columns=columns):
            raw = pa.Table.from_batches([batch])
            n = raw.num_rows
            columns = _project(raw, schema, fields)
            if row_lineage:
                columns += _lineage(raw, n, offset, first, inp.data_sequence_number)
            t = pa.Table.from_arrays(columns, schema=target)
            if positions is not None and len(positions):
                lo, hi = np.searchsorted(positions, [offset, offset + n])
                if hi > lo:
                    keep = np.ones(n, dtype=bool)
                    keep[positions[lo:hi] - offset] = False
                    t = t.filter(pa.array(keep))
            if eq_deletes and t.num_rows:
                t = t.filter(_equality_mask(t, schema=schema, deletes=eq_deletes))
            offset += n
            yield t


def _pruned_columns(file_schema: Any, schema: Any) -> list[str] | None:
    """The file's top-level columns that hold the schema's fields, by field id (None: read all)."""
    ids = [_field_id(f) for f in file_schema]
    if not ids or any(i is None for i in ids):
        return None  # a file without field ids is matched by name: read it whole
    wanted = {f.field_id for f in schema.fields}
    names = [f.name for f, i in zip(file_schema, ids) if i in wanted]
    return names or None  # no column to read still needs the row count: read them all


def _lineage(raw: Any, n: int, offset: int, first: int | None, sequence_number: int) -> list[Any]:
    """``_row_id`` (first_row_id + position where the file has none) and
    ``_last_updated_sequence_number`` (the file's data sequence number where it has none)."""
    import numpy as np
    import pyarrow as pa

    existing_ids = {_field_id(f): i for i, f in enumerate(raw.schema)}
    base = pa.array(np.arange(offset, offset + n, dtype=np.int64) + first) if first is not None \
        else pa.nulls(n, pa.int64())
    if ROW_ID in existing_ids:
        col = raw.column(existing_ids[ROW_ID]).combine_chunks()
        base = pa.array(np.where(col.is_null().to_numpy(zero_copy_only=False), base.to_numpy(zero_copy_only=False),
                                 col.fill_null(0).to_numpy()), type=pa.int64()) if first is not None else col
    seq = pa.array(np.full(n, sequence_number, dtype=np.int64))
    if LAST_UPDATED_SEQ in existing_ids:
        col = raw.column(existing_ids[LAST_UPDATED_SEQ]).combine_chunks()
        seq = pa.array(np.where(col.is_null().to_numpy(zero_copy_only=False), seq.to_numpy(),
                                col.fill_null(0).to_numpy()), type=pa.int64())
    return [base, seq]


def read_input(io: Any, inp: InputFile, *, schema: Any, target: Any, row_lineage: bool) -> Any:
    """One input data file as one Arrow table in the output schema, deletes applied."""
    import pyarrow as pa

    parts = list(iter_input(io, inp, schema=schema, target=target, row_lineage=row_lineage))
    return pa.concat_tables(parts) if parts else target.empty_table()


# -- the task --------------------------------------------------------------------------------------

class _RollingWriter:
    """Parquet files of about ``target`` bytes each, written straight to storage, with row
    groups of up to ``row_group_bytes`` (write.parquet.row-group-size-bytes, resolved by the client):
    rows are buffered and written a row group at a time, not one row group per input file. At
    most one row group is in memory: each file's metrics are gathered as its row groups go."""

    def __init__(self, io: Any, out_dir: str, *, schema: Any, target: Any, target_size: int, compression: str,
                 row_group_bytes: int):
        self.io, self.out_dir, self.schema, self.target = io, out_dir, schema, target
        self.target_size, self.compression = target_size, compression
        self.row_group_bytes = row_group_bytes
        self.files: list[WrittenFile] = []
        self._open = None
        self._pending: list[Any] = []
        self._pending_bytes = 0
        self._written_arrow = 0  # Arrow bytes in the open file, to learn the compression ratio

    def _start(self) -> None:
        from icectl.formats.parquet import open_writer  # pyarrow: loaded by the executors' path only (see above)

        path = f"{self.out_dir.rstrip('/')}/{uuid.uuid4().hex}-icectl-compact.parquet"
        sink = self.io.open(path, "wb")
        writer = open_writer(sink, self.target, compression=self.compression)
        self._open = (path, sink, writer, ColumnMetrics(self.schema))
        self._rows = 0
        self._written_arrow = 0

    def _flush_at(self) -> int:
        """Arrow bytes to buffer before the next row group: a full row group, or what still fits
        in the file at the compression ratio seen so far."""
        if self._open is None or not self._written_arrow:
            return min(self.row_group_bytes, self.target_size)
        written = self._open[1].tell()
        ratio = max(written / self._written_arrow, 0.01)
        room = max(self.target_size - written, 0) / ratio
        return int(max(1 << 20, min(self.row_group_bytes, room)))

    def write(self, table: Any) -> None:
        for batch in table.to_batches(max_chunksize=65536):
            self._pending.append(batch)
            self._pending_bytes += batch.nbytes
            if self._pending_bytes >= self._flush_at():
                self._flush()

    def _flush(self) -> None:
        import pyarrow as pa

        if not self._pending:
            return
        if self._open is None:
            self._start()
        path, sink, writer, metrics = self._open
        t = pa.Table.from_batches(self._pending, schema=self.target)
        self._pending, self._pending_bytes, written = [], 0, self._pending_bytes
        writer.write_table(t, row_group_size=max(t.num_rows, 1))
        metrics.add(t)
        self._rows += t.num_rows
        self._written_arrow += written
        del t
        if sink.tell() >= self.target_size * 0.95:
            self._finish()

    def close(self) -> None:
        self._flush()
        self._finish()

    def _finish(self) -> None:
        if self._open is None:
            return
        path, sink, writer, metrics = self._open
        writer.close()
        sink.close()
        self._open = None
        self.files.append(_describe(self.io, path, record_count=self._rows, arrow_schema=self.target,
                                     metrics=metrics.result()))

    def abort(self) -> None:
        """Remove every file this writer wrote or began."""
        paths = [f.path for f in self.files]
        if self._open is not None:
            path, sink, writer, _ = self._open
            paths.append(path)
            for c in (writer.close, sink.close):
                try:
                    c()
                except Exception:
                    pass
            self._open = None
        for path in paths:  # best effort: what is left is an orphan
            try:
                self.io.delete_own_file(path)  # the files this task wrote moments ago, under names it chose
            except Exception:  # noqa: BLE001
                pass


def describe_parquet_file(io: Any, path: str, *, data: Any, schema: Any) -> WrittenFile:
    """What a manifest needs of a Parquet file just written from ``data`` (an Arrow table in
    :func:`output_schema`): size, record count, column sizes and split offsets from the footer,
    value and null counts and Appendix D bounds (hex) from the rows."""
    return _describe(io, path, record_count=data.num_rows, arrow_schema=data.schema,
                     metrics=column_metrics(data, schema))


def _describe(io: Any, path: str, *, record_count: int, arrow_schema: Any, metrics: dict[str, Any]) -> WrittenFile:
    import pyarrow.parquet as pq

    with io.open(path, "rb") as fh:
        meta = pq.ParquetFile(fh).metadata
    sizes: dict[int, int] = {}
    offsets = []
    ids_by_name = {f.name: _field_id(f) for f in arrow_schema}
    for rg in range(meta.num_row_groups):
        g = meta.row_group(rg)
        first = g.column(0)
        offsets.append(first.dictionary_page_offset if first.has_dictionary_page else first.data_page_offset)
        for c in range(g.num_columns):
            fid = ids_by_name.get(g.column(c).path_in_schema.split(".")[0])
            if fid is not None and fid < ROW_ID - 100:
                sizes[fid] = sizes.get(fid, 0) + g.column(c).total_compressed_size
    return WrittenFile(path=path, size=io.size(path), record_count=record_count, column_sizes=sizes,
                       split_offsets=sorted(offsets), **metrics)


def write_parquet_file(io: Any, path: str, *, data: Any, schema: Any, compression: str) -> WrittenFile:
    """Write ``data`` (an Arrow table in :func:`output_schema`) as one Parquet file with one row
    group, and describe it as :func:`describe_parquet_file` does."""
    from icectl.formats.parquet import write_parquet  # pyarrow: loaded by the writing path only (see above)

    write_parquet(io, path, data, compression=compression, row_group_rows=0)
    return describe_parquet_file(io, path, data=data, schema=schema)


def partitioner(spec: list[PartitionField]):
    """Rows -> the current spec's partition tuple (for files of older specs)."""
    fields = [(parse_transform(f.transform), primitive(f.source_type), f.column, f.name) for f in spec]

    def split(table: Any) -> dict[tuple, Any]:
        import pyarrow as pa

        columns = [table.column(c).to_pylist() for _, _, c, _ in fields]
        groups: dict[tuple, list[int]] = {}
        for i in range(table.num_rows):
            key = tuple(tr.apply(st, to_internal(st, col[i])) for (tr, st, _, _), col in zip(fields, columns))
            groups.setdefault(key, []).append(i)
        return {k: table.take(pa.array(v, pa.int64())) for k, v in groups.items()}

    def path(key: tuple) -> str:
        return "/".join(f"{name}={quote(tr.human(v, st) if v is not None else 'null', safe='')}"
                        for (tr, st, _, name), v in zip(fields, key))

    def as_json(key: tuple) -> list[Any]:
        return [None if v is None else to_json(tr.result_type(st), v) for (tr, st, _, _), v in zip(fields, key)]

    return split, path, as_json


class TaskWriter:
    """The files of one task: rows go to rolling writers under the task's output folder, one per
    partition of the current spec when the task repartitions files of older specs."""

    def __init__(self, io: Any, task: RewriteTask, *, plan: RewritePlan, schema: Any, target: Any):
        self.io, self.task, self.plan, self.schema, self.target = io, task, plan, schema, target
        self.writers: dict[Any, _RollingWriter] = {}
        self.split = self.path_of = self.as_json = None
        if task.repartition:
            self.split, self.path_of, self.as_json = partitioner(task.repartition)

    def write(self, data: Any) -> None:
        parts = self.split(data) if self.split else {None: data}
        for key, part in parts.items():
            w = self.writers.get(key)
            if w is None:
                out_dir = self.task.output_dir
                if key is not None:
                    out_dir = out_dir.rstrip("/") + "/" + self.path_of(key)
                w = self.writers[key] = _RollingWriter(
                    self.io, out_dir, schema=self.schema, target=self.target,
                    # The client resolved these from the table properties: no defaults of the job's own.
                    target_size=self.plan.target_file_size, compression=self.plan.compression,
                    row_group_bytes=self.plan.row_group_bytes)
            w.write(part)

    def close(self) -> list[WrittenFile]:
        """Finish every file and describe them (on failure, remove them all and raise)."""
        try:
            for w in self.writers.values():
                w.close()
        except BaseException:
            self.abort()
            raise
        out = []
        for key, w in self.writers.items():
            for f in w.files:
                out.append(dataclasses.replace(f, task_id=self.task.task_id, group_id=self.task.group_id,
                                               sorted=bool(self.plan.sort),
                                               partition=self.as_json(key) if self.as_json else None))
        return out

    def abort(self) -> None:
        for w in self.writers.values():
            w.abort()


def sort_in_memory(data: Any, sort: list[SortField]) -> Any:
    """Rows in the sort order (each field with its own direction and null order; NaN above every
    other value as the spec orders floating point: "-NaN < -Infinity < ... < Infinity < NaN")."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not data.num_rows:
        return data
    keyed = data
    keys = []
    for i, s in enumerate(sort):
        col = data.column(s.column)
        asc = s.direction == "asc"
        keyed = keyed.append_column(f"__null_{i}", pc.is_null(col))
        keys.append((f"__null_{i}", "descending" if s.null_order == "nulls-first" else "ascending"))
        if pa.types.is_floating(col.type):
            keyed = keyed.append_column(f"__nan_{i}", pc.fill_null(pc.is_nan(col), False))
            keys.append((f"__nan_{i}", "ascending" if asc else "descending"))
        keys.append((s.column, "ascending" if asc else "descending"))
    return data.take(pc.sort_indices(keyed, sort_keys=keys))


def rewrite_task(task: RewriteTask, plan: RewritePlan) -> list[WrittenFile]:
    """Rewrite one task (a group, or a slice of one) and return the files it wrote.

    Input files are read a batch at a time. With a sort order the task's rows are sorted in
    memory; the Spark job sorts large groups with Spark instead (:mod:`icectl.spark.sort`)."""
    io = FileIO(dict(plan.io_properties))
    schema = schema_from_json(plan.schema)
    row_lineage = plan.row_lineage
    target = output_schema(schema, row_lineage)
    writer = TaskWriter(io, task, plan=plan, schema=schema, target=target)
    try:
        if plan.sort:
            tables = [read_input(io, inp, schema=schema, target=target, row_lineage=row_lineage)
                      for inp in task.inputs]
            import pyarrow as pa

            data = pa.concat_tables(tables) if tables else target.empty_table()
            writer.write(sort_in_memory(data, plan.sort))
        else:
            for inp in task.inputs:
                for part in iter_input(io, inp, schema=schema, target=target, row_lineage=row_lineage):
                    writer.write(part)
    except BaseException:
        writer.abort()
        raise
    return writer.close()
