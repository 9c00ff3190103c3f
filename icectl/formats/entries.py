"""The manifest-entry frame: a manifest's entries as one polars DataFrame of normalized columns,
and the spec's inheritance rules applied to it once (:func:`inherited`).

The columns are the top-level entry fields, data_file's fields and the partition values as
``p0``, ``p1``, ... in Iceberg's internal form, each with one polars type whatever the writer
wrote. The entries come from polars' Avro reader (:func:`entry_frame`) or, when polars cannot
read a file, from the lean decoder's tuples (:func:`frame_from_records`), both behind the one
Avro read path (:mod:`icectl.formats.avro`; :func:`read_entry_frame` takes either). A field whose
Avro type is not its own is a ValueError naming the field (the lean decoder's tuples are checked
value by value, polars' columns by their types).

Built on it: ``files`` (:mod:`icectl.table.listing`), ``validate``
(:mod:`icectl.validate.entries`, which checks the raw values before inheriting), ``rewrite-table-
path`` (:mod:`icectl.ops.recover.rewrite_table_path`), and the object view (:func:`icectl.formats.manifest.read_manifest`),
which takes its inherited values from :func:`inherit_values`.
"""
from __future__ import annotations

import re
from typing import Any

from icectl.errors import InvalidMetadataError
from icectl.formats.avro import AvroFile, failures, field_index, internal_struct, read_frame, record_type

# Normalized entry columns and their polars types (top-level entry fields, then data_file's).
TOP_FIELDS = ("status", "snapshot_id", "sequence_number", "file_sequence_number")
FILE_FIELDS = ("content", "file_path", "file_format", "record_count", "file_size_in_bytes", "lower_bounds",
               "upper_bounds", "equality_ids", "first_row_id", "referenced_data_file", "content_offset",
               "content_size_in_bytes")
INT_FIELDS = frozenset({"status", "snapshot_id", "sequence_number", "file_sequence_number", "content", "record_count",
                        "file_size_in_bytes", "first_row_id", "content_offset", "content_size_in_bytes"})
PARTITION_COLUMN = re.compile(r"p\d+")  # partition values: p0, p1, ...


def _dtypes() -> dict[str, Any]:
    import polars as pl

    bounds = pl.List(pl.Struct({"key": pl.Int64, "value": pl.Binary}))
    out: dict[str, Any] = {name: pl.Int64 for name in INT_FIELDS}
    out.update(file_path=pl.String, file_format=pl.String, referenced_data_file=pl.String, lower_bounds=bounds,
               upper_bounds=bounds, equality_ids=pl.List(pl.Int64))
    return out


def entry_frame(raw: Any, *, with_bounds: bool, lazy: bool = False) -> Any:
    """Normalize a manifest read by polars (columns ``status``, ``data_file``, ...) into the
    columns the checks use, partition values as ``p0``, ``p1``, ... in Iceberg's internal form.
    Raises ValueError (naming the field) when a field's Avro type is not its own: such a manifest
    goes to the lean decoder, which reports it (polars would convert a string or a double).
    ``lazy``: a LazyFrame, so a reader that selects a few columns converts only those (a value
    polars cannot convert then fails when it is collected). The expressions depend on the
    frame's schema only: they are built once per schema (keyed by its text)."""
    exprs = _cached_exprs(raw, repr(raw.schema).encode(), with_bounds)
    if lazy:
        return raw.lazy().select(exprs).with_row_index("n")
    try:
        return raw.select(exprs).with_row_index("n")
    except failures() as e:
        raise ValueError(_first_line(str(e))) from None


# A writer schema's normalizing expressions (or why there are none), by its text and whether
# with the bounds: polars reads every file of one schema text into the same column types, so
# the expressions are built once per schema (a table's thousand manifests have a few).
_EXPRS: dict[tuple[bytes, bool], list[Any] | ValueError] = {}


def _cached_exprs(raw: Any, schema_text: bytes | None, with_bounds: bool) -> list[Any]:
    if not schema_text:
        return _column_exprs(raw.schema, with_bounds)
    key = (schema_text, with_bounds)
    known = _EXPRS.get(key)
    if known is None:
        if len(_EXPRS) >= 256:
            _EXPRS.clear()
        try:
            known = _column_exprs(raw.schema, with_bounds)
        except ValueError as e:
            known = e
        _EXPRS[key] = known
    if isinstance(known, ValueError):
        raise ValueError(*known.args)
    return known


def _column_exprs(schema: Any, with_bounds: bool) -> list[Any]:
    """The expressions of :func:`entry_frame` for a raw frame of this schema; ValueError (naming
    the field) when a field's type is not its own."""
    import polars as pl

    types = _dtypes()
    df_type = schema["data_file"]
    inner = {f.name: f.dtype for f in getattr(df_type, "fields", [])}
    exprs = []
    for name in TOP_FIELDS + FILE_FIELDS:
        if name in ("lower_bounds", "upper_bounds") and not with_bounds:
            continue
        if name in TOP_FIELDS:
            e, dtype = (pl.col(name), schema[name]) if name in schema else (None, None)
        else:
            e, dtype = (pl.col("data_file").struct.field(name), inner[name]) if name in inner else (None, None)
        if e is not None:
            e = _checked(name, e, dtype)
        exprs.append((name, pl.lit(None, dtype=types[name]) if e is None else e.cast(types[name])))
    part = inner.get("partition")
    if part is not None and getattr(part, "fields", None):
        converted = internal_struct(pl, pl.col("data_file").struct.field("partition"), part)
        for i, f in enumerate(part.fields):
            exprs.append((f"p{i}", converted.struct.field(f.name)))
    return [e.alias(name) for name, e in exprs]


def _checked(name: str, e: Any, dtype: Any) -> Any:
    """``e`` when polars decoded field ``name`` as a type of its own (the bound maps' records
    renamed to key/value by position, as Avro reads them); ValueError otherwise."""
    import polars as pl

    if dtype == pl.Null:
        return e
    if name in INT_FIELDS:
        if not dtype.is_integer():
            raise ValueError(f"{name} is not an integer")
    elif name in ("file_path", "file_format", "referenced_data_file"):
        if dtype not in (pl.String, pl.Categorical) and not isinstance(dtype, (pl.Categorical, pl.Enum)):
            raise ValueError(f"{name} is not a string")
    elif name == "equality_ids":
        if not (isinstance(dtype, pl.List) and (dtype.inner.is_integer() or dtype.inner == pl.Null)):
            raise ValueError(f"{name} is not a list of integers")
    elif name in ("lower_bounds", "upper_bounds"):
        item = dtype.inner if isinstance(dtype, pl.List) else None
        fields = getattr(item, "fields", None)
        if not fields or len(fields) != 2 or not (fields[0].dtype.is_integer() or fields[0].dtype == pl.String) \
                or fields[1].dtype not in (pl.Binary, pl.Null):
            raise ValueError(f"{name} is not a map of field ids to bytes")
        if [f.name for f in fields] != ["key", "value"]:
            e = e.list.eval(pl.element().struct.rename_fields(["key", "value"]))
    return e


def frame_from_records(records: list[tuple], *, top: dict[str, int], idx: dict[str, int], nparts: int,
                       with_bounds: bool) -> Any:
    """The same columns from the lean decoder's tuples (``top``/``idx``: field positions in an
    entry and in its data_file; bounds decoded as dicts; partition values in their Avro form,
    which is Iceberg's internal form)."""
    import polars as pl

    types = _dtypes()
    cols: dict[str, Any] = {}
    i_df = top["data_file"]
    for name in TOP_FIELDS + FILE_FIELDS:
        if name in ("lower_bounds", "upper_bounds") and not with_bounds:
            continue
        if name in TOP_FIELDS:
            i = top.get(name)
            values = [r[i] for r in records] if i is not None else [None] * len(records)
        else:
            i = idx.get(name)
            values = [r[i_df][i] for r in records] if i is not None else [None] * len(records)
        if name in INT_FIELDS:
            cols[name] = _ints(name, values)
            continue
        if name in ("lower_bounds", "upper_bounds"):
            values = [_map_entries(name, d) for d in values]
        elif name == "equality_ids":
            if any(v is not None and not (isinstance(v, list) and all(isinstance(x, int) for x in v)) for v in values):
                raise ValueError(f"{name} is not a list of integers")
        elif any(v is not None and not isinstance(v, str) for v in values):
            raise ValueError(f"{name} is not a string")
        cols[name] = pl.Series(name, values, dtype=types[name])
    i_part = idx["partition"]
    for j in range(nparts):
        values = [r[i_df][i_part][j] if r[i_df][i_part] is not None else None for r in records]
        try:
            cols[f"p{j}"] = pl.Series(f"p{j}", values, strict=False)
        except (TypeError, ValueError, OverflowError, pl.exceptions.PolarsError):
            cols[f"p{j}"] = pl.Series(f"p{j}", values, dtype=pl.Object)  # values of several types
    return pl.DataFrame(cols).with_row_index("n")


def _ints(name: str, values: list[Any]) -> Any:
    import polars as pl

    if any(v is not None and (not isinstance(v, int) or isinstance(v, bool)) for v in values):
        raise ValueError(f"{name} is not an integer")
    return pl.Series(name, values, dtype=pl.Int64)


def _map_entries(name: str, m: Any) -> list[dict[str, Any]]:
    """A bound map (a dict, or a list of key-value pairs) as the key/value records polars holds."""
    items = m.items() if isinstance(m, dict) else (m or ())
    out = []
    for kv in items:
        k, v = kv if isinstance(kv, (tuple, list)) and len(kv) == 2 else (None, None)
        if isinstance(k, str) and k.lstrip("-").isdigit():
            k = int(k)
        if not isinstance(k, int) or isinstance(k, bool) or not isinstance(v, (bytes, type(None))):
            raise ValueError(f"{name} is not a map of field ids to bytes")
        out.append({"key": k, "value": v})
    return out


def _first_line(s: str) -> str:
    return s.strip().splitlines()[0] if s.strip() else s


# ---------------------------------------------------------------------------------------------
# Reading a manifest into the frame

# data_file fields no frame column holds: the lean decoder skips them.
SKIP_FIELDS = frozenset({"column_sizes", "value_counts", "null_value_counts", "nan_value_counts", "distinct_counts",
                         "split_offsets", "key_metadata", "content_stats", "block_size_in_bytes", "file_ordinal",
                         "sort_columns"})
BOUND_FIELDS = frozenset({"lower_bounds", "upper_bounds"})


def read_entry_frame(avro: AvroFile, *, with_bounds: bool, idx: dict[str, int] | None = None,
                     nparts: int | None = None) -> Any:
    """A manifest's entries as the normalized frame: read by polars when it can and its row count
    is what the blocks say, else by the lean decoder (``idx``: data_file's field positions;
    ``nparts``: the partition struct's field count; both from the writer schema when not given).
    InvalidMetadataError when neither can read it."""
    raw = read_frame(avro)  # block framing checked; raises for truncated or unsynced files
    if raw is not None and "data_file" in raw.columns:
        try:
            exprs = _cached_exprs(raw, avro.schema_text, with_bounds)
        except ValueError:
            exprs = None
        if exprs is not None:
            try:
                return raw.select(exprs).with_row_index("n")
            except failures():  # a value polars cannot convert (entry_frame's ValueError)
                pass
    top = avro.schema if isinstance(avro.schema, dict) else {}
    if idx is None or nparts is None:
        i_df = field_index(top, "data_file")
        df_schema = record_type(top["fields"][i_df]["type"]) if i_df is not None else None
        if df_schema is None:
            raise InvalidMetadataError("wrong Avro schema: a manifest entry needs 'data_file'")
        idx = {f["name"]: i for i, f in enumerate(df_schema["fields"])}
        if "partition" not in idx:
            raise InvalidMetadataError("wrong Avro schema: data_file has no partition")
        part_schema = record_type(df_schema["fields"][idx["partition"]]["type"])
        nparts = len(part_schema.get("fields", [])) if part_schema is not None else 0
    skip = SKIP_FIELDS if with_bounds else SKIP_FIELDS | BOUND_FIELDS
    records = list(avro.records(skip, as_dict=BOUND_FIELDS))
    positions = {name: field_index(top, name) for name in TOP_FIELDS + ("data_file",)}
    try:
        return frame_from_records(records, top={k: v for k, v in positions.items() if v is not None},
                                  idx=idx, nparts=nparts, with_bounds=with_bounds)
    except (ValueError, TypeError) as e:
        raise InvalidMetadataError(f"wrong Avro schema: {e}") from None


# ---------------------------------------------------------------------------------------------
# Inheritance

def positions(members: list[int], sizes: list[int]) -> Any:
    """The column ``m`` of frames stacked in this order: ``members[i]`` on each of the
    ``sizes[i]`` rows of the i-th (a polars UInt32 Series)."""
    import polars as pl

    kept = [(m, n) for m, n in zip(members, sizes) if n]  # an empty list explodes to a null
    return pl.DataFrame({"m": [m for m, _ in kept], "k": [n for _, n in kept]},
                        schema={"m": pl.UInt32, "k": pl.UInt32}).select(pl.col("m").repeat_by("k").explode()) \
        .get_column("m")


def inherited(*, manifest_sequence_number: Any, added_snapshot_id: Any, first_row_id: Any,
              format_version: Any, by: str | None = None) -> dict[str, Any]:
    """The inherited values of a frame's entries, as polars expressions over its normalized
    columns, keyed by the column each replaces (spec: "Manifest Entry Fields", "Sequence Number
    Inheritance", "First Row ID Inheritance"; Appendix E for v1). The manifest's values (from its
    manifest-list entry; ``format_version`` from its header) are plain values or expressions
    (``validate`` stacks many manifests, each with its values as columns).

    - ``snapshot_id`` null: the manifest's ``added_snapshot_id``.
    - ``sequence_number`` / ``file_sequence_number`` null on an ADDED entry: the manifest's
      ``sequence_number``. Null on another entry of a v1 manifest or of a manifest whose sequence
      number is 0 (written before sequence numbers existed): 0. Null on another entry of a v2+
      manifest: stays null; a writer must not do that, and ``validate`` reports it.
    - ``first_row_id`` null on an ADDED data file of a manifest with a ``first_row_id``: the
      manifest's ``first_row_id`` plus the ``record_count`` of the ADDED data files before it
      that inherit too. A plain ``first_row_id`` (a frame of one manifest), or with ``by`` (the
      column that numbers the stacked manifests, each manifest's rows together and in order) an
      expression of each manifest's value (null: the manifest has none), the count restarting
      at each manifest.
    """
    import polars as pl

    def value(v: Any, dtype: Any = pl.Int64) -> Any:
        return v if isinstance(v, pl.Expr) else pl.lit(v, dtype=dtype)

    col = pl.col
    mseq, msnap, mfv = value(manifest_sequence_number), value(added_snapshot_id), value(format_version)
    added = col("status") == 1
    legacy = (mfv < 2) | (mseq == 0)

    def sequence(name: str) -> Any:
        c = col(name)
        return pl.when(c.is_null() & added).then(mseq).when(c.is_null() & legacy).then(pl.lit(0, dtype=pl.Int64)) \
            .otherwise(c)

    out = {"snapshot_id": col("snapshot_id").fill_null(msnap), "sequence_number": sequence("sequence_number"),
           "file_sequence_number": sequence("file_sequence_number")}
    stacked = isinstance(first_row_id, pl.Expr) and by is not None
    if first_row_id is not None and (stacked or not isinstance(first_row_id, pl.Expr)):
        frid = col("first_row_id")
        inherits = (col("content").fill_null(0) == 0) & frid.is_null() & added
        if stacked:
            inherits = inherits & first_row_id.is_not_null()
        counts = pl.when(inherits).then(col("record_count")).otherwise(0)
        before = counts.cum_sum().over(by) if stacked else counts.cum_sum()
        assigned = value(first_row_id) + before - counts
        out["first_row_id"] = pl.when(inherits).then(assigned).otherwise(frid)
    return out


INHERITED_INPUTS = ("status", "snapshot_id", "sequence_number", "file_sequence_number", "content", "record_count",
                    "first_row_id")


def inherit_values(columns: dict[str, list[Any]], *, manifest_sequence_number: int | None,
                   added_snapshot_id: int | None, first_row_id: int | None,
                   format_version: int) -> dict[str, list[Any]]:
    """:func:`inherited` over the entries of one manifest held as Python values (``columns``: a
    list per name of :data:`INHERITED_INPUTS`): the inherited columns as lists. TypeError or
    ValueError when a value is not a 64-bit integer.

    The same rules as :func:`inherited`, written over Python values because the object view
    (``describe``, ``snapshots``, a small manifest) must not import polars (a quarter of a second
    of start-up); ``tests/formats/test_entries.py`` checks on generated entries that both give the
    same values, so the rules stay one."""
    n = len(columns["status"])
    for name in INHERITED_INPUTS:
        for v in columns[name]:
            if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                raise TypeError(f"{name} is not an integer: {v!r}")
            if v is not None and not -2**63 <= v < 2**63:
                raise ValueError(f"{name} does not fit in 64 bits: {v}")
    legacy = format_version < 2 or manifest_sequence_number == 0
    status = columns["status"]

    def sequence(values: list[Any]) -> list[Any]:
        return [manifest_sequence_number if v is None and status[i] == 1 else 0 if v is None and legacy else v
                for i, v in enumerate(values)]

    out: dict[str, list[Any]] = {
        "snapshot_id": [added_snapshot_id if v is None else v for v in columns["snapshot_id"]],
        "sequence_number": sequence(columns["sequence_number"]),
        "file_sequence_number": sequence(columns["file_sequence_number"])}
    if first_row_id is not None:
        rows, before = [], 0  # the record counts of the inheriting ADDED data files before this one
        for i in range(n):
            frid, count = columns["first_row_id"][i], columns["record_count"][i]
            if (columns["content"][i] or 0) == 0 and frid is None and status[i] == 1:
                rows.append(None if count is None else first_row_id + before)
                before += count or 0
            else:
                rows.append(frid)
        out["first_row_id"] = rows
    return out
