"""The data plane of compaction, without Spark: rewrite one task's input files into new Parquet
files and describe them. The PySpark job (``job.py``) runs :func:`rewrite_task` in executors;
tests can run it directly.

For each input data file: read it by field id (columns renamed since it was written still
match), apply the deletes that apply (positions from Parquet delete files and deletion vectors,
equality deletes by value, null matching null), materialise row lineage in v3+ (``_row_id`` =
``first_row_id`` + position and ``_last_updated_sequence_number`` = the file's data sequence
number where the file has none), then write rows into files of about the target size and
return each file's metrics: counts, column sizes, and lower and upper bounds serialized as the
spec's Appendix D single values (strings and binary truncated to 16, as Iceberg Java's default
``truncate(16)`` metrics mode).
"""
from __future__ import annotations

import uuid
from typing import Any, Iterator

ROW_ID = 2147483540  # Iceberg Java 1.10 MetadataColumns.ROW_ID (Integer.MAX_VALUE - 107)
LAST_UPDATED_SEQ = 2147483539  # MetadataColumns.LAST_UPDATED_SEQUENCE_NUMBER (Integer.MAX_VALUE - 108)
DELETE_FILE_PATH = 2147483546
DELETE_POS = 2147483545
TRUNCATE_LENGTH = 16
FIELD_ID = b"PARQUET:field_id"


def arrow_type(t: Any) -> Any:
    import pyarrow as pa

    from icectl.spec.types import ListType, MapType, PrimitiveType, StructType

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
    from icectl.spec.conversions import from_json

    return from_json(f.field_type, default)


def _deleted_positions(io: Any, data_path: str, deletes: list[dict[str, Any]]) -> Any:
    import numpy as np
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    parts = []
    for d in deletes:
        if d["format"] == "puffin":
            from icectl.formats.puffin import deserialize_deletion_vector

            blob = io.read_range(d["path"], d["offset"], d["length"])
            bitmap = deserialize_deletion_vector(blob, source=d["path"])
            parts.append(np.fromiter(iter(bitmap), dtype=np.int64, count=len(bitmap)))
        else:
            with io.open(d["path"], "rb") as fh:
                t = pq.read_table(fh)
            path_col = pos_col = None
            for i, f in enumerate(t.schema):
                fid = _field_id(f)
                if fid == DELETE_FILE_PATH or (fid is None and f.name == "file_path"):
                    path_col = t.column(i)
                if fid == DELETE_POS or (fid is None and f.name == "pos"):
                    pos_col = t.column(i)
            mask = pc.equal(path_col, data_path)
            for candidate in d.get("path_aliases", []):
                mask = pc.or_(mask, pc.equal(path_col, candidate))
            parts.append(pos_col.filter(mask).to_numpy())
    if not parts:
        return None
    return np.unique(np.concatenate(parts))


def _equality_mask(io: Any, table: Any, *, schema: Any, eq_deletes: list[dict[str, Any]]) -> Any:
    """True for rows NOT deleted by the equality deletes."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    keep = pa.array([True] * table.num_rows)
    names = {f.field_id: f.name for f in schema.fields}
    for d in eq_deletes:
        with io.open(d["path"], "rb") as fh:
            dt = pq.read_table(fh)
        cols_by_id = {_field_id(f): i for i, f in enumerate(dt.schema)}
        ids = d["equality_ids"]
        if len(ids) == 1:
            fid = ids[0]
            values = dt.column(cols_by_id[fid]).combine_chunks()
            target = table.column(names[fid])
            if values.type != target.type:
                values = values.cast(target.type)
            hit = pc.is_in(target, value_set=values, skip_nulls=False)
        else:
            keys = set(zip(*(dt.column(cols_by_id[fid]).to_pylist() for fid in ids)))
            rows = zip(*(table.column(names[fid]).to_pylist() for fid in ids))
            hit = pa.array([r in keys for r in rows])
        keep = pc.and_(keep, pc.invert(pc.fill_null(hit, False)))
    return keep


def read_input(io: Any, inp: dict[str, Any], *, schema: Any, target: Any, row_lineage: bool) -> Any:
    """One input data file as an Arrow table in the output schema, deletes applied."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    with io.open(inp["path"], "rb") as fh:
        raw = pq.read_table(fh)
    n = raw.num_rows
    columns = _project(raw, schema, [target.field(i) for i in range(len(schema.fields))])
    if row_lineage:
        existing_ids = {_field_id(f): i for i, f in enumerate(raw.schema)}
        first = inp.get("first_row_id")
        base = pa.array(np.arange(n, dtype=np.int64) + first) if first is not None else pa.nulls(n, pa.int64())
        if ROW_ID in existing_ids:
            col = raw.column(existing_ids[ROW_ID]).combine_chunks()
            base = pa.array(np.where(col.is_null().to_numpy(zero_copy_only=False), base.to_numpy(zero_copy_only=False),
                                     col.fill_null(0).to_numpy()), type=pa.int64()) if first is not None else col
        seq = pa.array(np.full(n, inp["data_sequence_number"], dtype=np.int64))
        if LAST_UPDATED_SEQ in existing_ids:
            col = raw.column(existing_ids[LAST_UPDATED_SEQ]).combine_chunks()
            seq = pa.array(np.where(col.is_null().to_numpy(zero_copy_only=False), seq.to_numpy(),
                                    col.fill_null(0).to_numpy()), type=pa.int64())
        columns += [base, seq]
    t = pa.Table.from_arrays(columns, schema=target)
    positions = _deleted_positions(io, inp["path"], inp.get("position_deletes", []))
    if positions is not None and len(positions):
        keep = np.ones(n, dtype=bool)
        keep[positions[(positions >= 0) & (positions < n)]] = False
        t = t.filter(pa.array(keep))
    if inp.get("equality_deletes"):
        t = t.filter(_equality_mask(io, t, schema=schema, eq_deletes=inp["equality_deletes"]))
    return t


# -- metrics ---------------------------------------------------------------------------------------

def _truncate_upper_str(s: str) -> str | None:
    """The smallest string above every string with this prefix, or None (no bound) if none."""
    chars = list(s[:TRUNCATE_LENGTH])
    while chars:
        c = ord(chars[-1])
        if c < 0x10FFFF and not (0xD7FF <= c < 0xDFFF):
            chars[-1] = chr(c + 1)
            return "".join(chars)
        chars.pop()
    return None


def _truncate_upper_bytes(b: bytes) -> bytes | None:
    arr = bytearray(b[:TRUNCATE_LENGTH])
    while arr:
        if arr[-1] < 0xFF:
            arr[-1] += 1
            return bytes(arr)
        arr.pop()
    return None


def column_metrics(table: Any, schema: Any) -> dict[str, dict[int, Any]]:
    import pyarrow as pa
    import pyarrow.compute as pc

    from icectl.spec.conversions import to_bytes
    from icectl.spec.conversions import to_internal
    from icectl.spec.types import PrimitiveType

    vc, nc, nan, lo, hi = {}, {}, {}, {}, {}
    for f in schema.fields:
        if not isinstance(f.field_type, PrimitiveType):
            continue
        col = table.column(f.name)
        t = f.field_type
        vc[f.field_id] = len(col)
        nc[f.field_id] = col.null_count
        if t.base in ("variant", "unknown", "geometry", "geography"):
            continue
        values = col
        if t.base in ("float", "double"):
            is_nan = pc.is_nan(col)
            nan[f.field_id] = pc.sum(pc.cast(pc.fill_null(is_nan, False), pa.int64())).as_py() or 0
            values = col.filter(pc.invert(pc.fill_null(is_nan, False)))
        if len(values) - values.null_count == 0:
            continue
        mm = pc.min_max(values)
        vmin, vmax = mm["min"].as_py(), mm["max"].as_py()
        if t.base in ("timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns", "time", "date"):
            ints = pc.min_max(values.cast(pa.int64() if t.base != "date" else pa.int32()))
            vmin, vmax = ints["min"].as_py(), ints["max"].as_py()
        elif t.base == "uuid":
            import uuid as _uuid

            vmin, vmax = _uuid.UUID(bytes=vmin), _uuid.UUID(bytes=vmax)
        if t.base == "string":
            lower, upper = vmin[:TRUNCATE_LENGTH], (vmax if len(vmax) <= TRUNCATE_LENGTH else _truncate_upper_str(vmax))
        elif t.base == "binary":
            lower, upper = vmin[:TRUNCATE_LENGTH], (vmax if len(vmax) <= TRUNCATE_LENGTH else _truncate_upper_bytes(vmax))
        else:
            lower, upper = to_internal(t, vmin), to_internal(t, vmax)
        lo[f.field_id] = to_bytes(t, lower).hex()
        if upper is not None:
            hi[f.field_id] = to_bytes(t, upper).hex()
    return {"value_counts": vc, "null_value_counts": nc, "nan_value_counts": nan, "lower_bounds": lo,
            "upper_bounds": hi}


# -- the task --------------------------------------------------------------------------------------

class _RollingWriter:
    """Parquet files of about ``target`` bytes each, written straight to storage, with row
    groups of up to ``row_group_bytes`` (Iceberg's write.parquet.row-group-size-bytes, 128 MB):
    rows are buffered and written a row group at a time, not one row group per input file."""

    def __init__(self, io: Any, out_dir: str, *, schema: Any, target: Any, target_size: int, compression: str,
                 row_group_bytes: int = 128 * 1024 * 1024):
        self.io, self.out_dir, self.schema, self.target = io, out_dir, schema, target
        self.target_size, self.compression = target_size, compression
        self.row_group_bytes = row_group_bytes
        self.files: list[dict[str, Any]] = []
        self._open = None
        self._pending: list[Any] = []
        self._pending_bytes = 0
        self._written_arrow = 0  # Arrow bytes in the open file, to learn the compression ratio

    def _start(self) -> None:
        import pyarrow.parquet as pq

        path = f"{self.out_dir.rstrip('/')}/{uuid.uuid4().hex}-icectl-compact.parquet"
        sink = self.io.open(path, "wb")
        writer = pq.ParquetWriter(sink, self.target, compression=self.compression)
        self._open = (path, sink, writer, [])
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
        path, sink, writer, parts = self._open
        t = pa.Table.from_batches(self._pending, schema=self.target)
        writer.write_table(t, row_group_size=max(t.num_rows, 1))
        parts.append(t)
        self._written_arrow += self._pending_bytes
        self._pending, self._pending_bytes = [], 0
        if sink.tell() >= self.target_size * 0.95:
            self._finish()

    def close(self) -> None:
        self._flush()
        self._finish()

    def _finish(self) -> None:
        if self._open is None:
            return
        import pyarrow as pa

        path, sink, writer, parts = self._open
        writer.close()
        sink.close()
        self._open = None
        data = pa.concat_tables(parts) if parts else self.target.empty_table()
        self.files.append(describe_parquet_file(self.io, path, data=data, schema=self.schema))


def describe_parquet_file(io: Any, path: str, *, data: Any, schema: Any) -> dict[str, Any]:
    """What a manifest needs of a Parquet file just written from ``data`` (an Arrow table in
    :func:`output_schema`): size, record count, column sizes and split offsets from the footer,
    value and null counts and Appendix D bounds (hex) from the rows."""
    import pyarrow.parquet as pq

    with io.open(path, "rb") as fh:
        meta = pq.ParquetFile(fh).metadata
    sizes: dict[int, int] = {}
    offsets = []
    ids_by_name = {f.name: _field_id(f) for f in data.schema}
    for rg in range(meta.num_row_groups):
        g = meta.row_group(rg)
        first = g.column(0)
        offsets.append(first.dictionary_page_offset if first.has_dictionary_page else first.data_page_offset)
        for c in range(g.num_columns):
            fid = ids_by_name.get(g.column(c).path_in_schema.split(".")[0])
            if fid is not None and fid < ROW_ID - 100:
                sizes[fid] = sizes.get(fid, 0) + g.column(c).total_compressed_size
    m = column_metrics(data, schema)
    return {"path": path, "size": io.size(path), "record_count": data.num_rows, "column_sizes": sizes,
            "split_offsets": sorted(offsets), **m}


def write_parquet_file(io: Any, path: str, *, data: Any, schema: Any, compression: str = "zstd") -> dict[str, Any]:
    """Write ``data`` (an Arrow table in :func:`output_schema`) as one Parquet file with one row
    group, and describe it as :func:`describe_parquet_file` does."""
    import pyarrow.parquet as pq

    with io.open(path, "wb") as sink:
        pq.write_table(data, sink, compression=compression, row_group_size=max(data.num_rows, 1))
    return describe_parquet_file(io, path, data=data, schema=schema)


def partitioner(spec: list[dict[str, Any]]):
    """Rows -> the current spec's partition tuple (for files of older specs)."""
    from icectl.spec.conversions import to_internal
    from icectl.spec.transforms import parse_transform
    from icectl.spec.types import primitive

    fields = [(parse_transform(f["transform"]), primitive(f["source_type"]), f["column"], f["name"]) for f in spec]

    def split(table: Any) -> dict[tuple, Any]:
        import pyarrow as pa

        columns = [table.column(c).to_pylist() for _, _, c, _ in fields]
        groups: dict[tuple, list[int]] = {}
        for i in range(table.num_rows):
            key = tuple(tr.apply(st, to_internal(st, col[i])) for (tr, st, _, _), col in zip(fields, columns))
            groups.setdefault(key, []).append(i)
        return {k: table.take(pa.array(v, pa.int64())) for k, v in groups.items()}

    def path(key: tuple) -> str:
        from urllib.parse import quote

        return "/".join(f"{name}={quote(tr.human(v, st) if v is not None else 'null', safe='')}"
                        for (tr, st, _, name), v in zip(fields, key))

    def as_json(key: tuple) -> list[Any]:
        from icectl.spec.conversions import to_json

        return [None if v is None else to_json(tr.result_type(st), v) for (tr, st, _, _), v in zip(fields, key)]

    return split, path, as_json


def rewrite_task(task: dict[str, Any], plan: dict[str, Any]) -> list[dict[str, Any]]:
    """Rewrite one task (a group, or a slice of one) and return the files it wrote."""
    from icectl.spec.types import schema_from_json
    from icectl.io import FileIO

    io = FileIO(dict(plan.get("io_properties") or {}))
    schema = schema_from_json(plan["schema"])
    row_lineage = bool(plan.get("row_lineage"))
    target = output_schema(schema, row_lineage)
    size = int(plan["target_file_size"])
    codec = plan.get("compression", "zstd")
    writers: dict[Any, _RollingWriter] = {}
    repartition = task.get("repartition")
    split = path_of = as_json = None
    if repartition:
        split, path_of, as_json = partitioner(repartition)

    def write(data: Any) -> None:
        parts = split(data) if split else {None: data}
        for key, part in parts.items():
            w = writers.get(key)
            if w is None:
                out_dir = task["output_dir"] if key is None else task["output_dir"].rstrip("/") + "/" + path_of(key)
                w = writers[key] = _RollingWriter(
                    io, out_dir, schema=schema, target=target, target_size=size, compression=codec,
                    row_group_bytes=int(plan.get("row_group_bytes") or 128 * 1024 * 1024))
            w.write(part)

    try:
        if plan.get("sort"):
            import pyarrow as pa
            import pyarrow.compute as pc

            tables = [read_input(io, inp, schema=schema, target=target, row_lineage=row_lineage)
                      for inp in task["inputs"]]
            data = pa.concat_tables(tables) if tables else target.empty_table()
            if data.num_rows:
                # Each field has its own null order: sort by "is null" first, then by the value.
                keyed = data
                keys = []
                for i, s in enumerate(plan["sort"]):
                    keyed = keyed.append_column(f"__null_{i}", pc.is_null(data.column(s["column"])))
                    keys += [(f"__null_{i}", "descending" if s["null_order"] == "nulls-first" else "ascending"),
                             (s["column"], "ascending" if s["direction"] == "asc" else "descending")]
                data = data.take(pc.sort_indices(keyed, sort_keys=keys))
            write(data)
        else:
            for inp in task["inputs"]:
                write(read_input(io, inp, schema=schema, target=target, row_lineage=row_lineage))
        for w in writers.values():
            w.close()
    except BaseException:
        for w in writers.values():
            for p in [f["path"] for f in w.files] + ([w._open[0]] if w._open is not None else []):
                try:
                    io.delete(p)
                except Exception:
                    pass
        raise
    out = []
    for key, w in writers.items():
        for f in w.files:
            f["task_id"] = task["task_id"]
            f["group_id"] = task["group_id"]
            f["sorted"] = bool(plan.get("sort"))
            f["partition"] = as_json(key) if as_json else None
            out.append(f)
    return out


def iter_tasks(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for g in plan["groups"]:
        yield from g["tasks"]
