"""The entries of manifests, for ``validate``: every entry-level rule, checked a column at a time.

Each manifest's entries arrive as a polars DataFrame of normalized columns, decoded either by
polars' Avro reader (:func:`entry_frame`) or, when polars cannot read a file, by the lean decoder
of :mod:`icectl.formats.avro_lean` (:func:`frame_from_records`); the checks are the same either
way. :func:`check_entries` stacks the entries of all the manifests of a run into one frame and
evaluates each rule as one column expression over all of them; only entries that break a rule
become Python values (to word their findings). A manifest's findings are added in entry order
(rules in a fixed order within an entry), so a code's first findings are its first entries.

Rules ("Manifest Entry Fields", "Sequence Number Inheritance", "First Row ID Inheritance",
"Delete Formats", "Deletion Vectors", v4 relative paths) and the facts kept for the snapshot-level
rules (live data files, live delete files) are those of :mod:`icectl.validate.manifests`,
which decodes the manifests and calls :func:`check_entries`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from icectl.spec.types import base_type

# Normalized entry columns and their polars types (top-level entry fields, then data_file's).
TOP_FIELDS = ("status", "snapshot_id", "sequence_number", "file_sequence_number")
FILE_FIELDS = ("content", "file_path", "file_format", "record_count", "file_size_in_bytes", "lower_bounds",
               "upper_bounds", "equality_ids", "first_row_id", "referenced_data_file", "content_offset",
               "content_size_in_bytes")
INT_FIELDS = frozenset({"status", "snapshot_id", "sequence_number", "file_sequence_number", "content", "record_count",
                        "file_size_in_bytes", "first_row_id", "content_offset", "content_size_in_bytes"})
FORMATS = ("parquet", "avro", "orc", "puffin")
_PARTITION_COLUMN = re.compile(r"p\d+")


def _dtypes() -> dict[str, Any]:
    import polars as pl

    bounds = pl.List(pl.Struct({"key": pl.Int64, "value": pl.Binary}))
    out: dict[str, Any] = {name: pl.Int64 for name in INT_FIELDS}
    out.update(file_path=pl.String, file_format=pl.String, referenced_data_file=pl.String, lower_bounds=bounds,
               upper_bounds=bounds, equality_ids=pl.List(pl.Int64))
    return out


def entry_frame(raw: Any, with_bounds: bool) -> Any:
    """Normalize a manifest read by polars (columns ``status``, ``data_file``, ...) into the
    columns the checks use, partition values as ``p0``, ``p1``, ... in Iceberg's internal form.
    Raises ValueError (naming the field) when a field's Avro type is not its own: such a manifest
    goes to the lean decoder, which reports it (polars would convert a string or a double)."""
    import polars as pl

    from icectl.formats.manifest import _internal_partition

    types = _dtypes()
    df_type = raw.schema["data_file"]
    inner = {f.name: f.dtype for f in getattr(df_type, "fields", [])}
    exprs = []
    for name in TOP_FIELDS + FILE_FIELDS:
        if name in ("lower_bounds", "upper_bounds") and not with_bounds:
            continue
        if name in TOP_FIELDS:
            e, dtype = (pl.col(name), raw.schema[name]) if name in raw.columns else (None, None)
        else:
            e, dtype = (pl.col("data_file").struct.field(name), inner[name]) if name in inner else (None, None)
        if e is not None:
            e = _checked(name, e, dtype)
        exprs.append((name, pl.lit(None, dtype=types[name]) if e is None else e.cast(types[name])))
    part = inner.get("partition")
    if part is not None and getattr(part, "fields", None):
        converted = _internal_partition(pl, pl.col("data_file").struct.field("partition"), part)
        for i, f in enumerate(part.fields):
            exprs.append((f"p{i}", converted.struct.field(f.name)))
    from icectl.formats.avro import failures

    try:
        return raw.select([e.alias(name) for name, e in exprs]).with_row_index("n")
    except failures() as e:
        raise ValueError(_first_line(str(e))) from None


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


def frame_from_records(records: list[tuple], top: dict[str, int], idx: dict[str, int], nparts: int,
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


class _Found:
    """Findings of one manifest's entries, ordered by (entry, rule) before they reach ``out``."""

    def __init__(self) -> None:
        self.items: list[tuple[int, int, int, str, str, Any, str | None]] = []
        self.rank = 0

    def add(self, code: str, message: str, entry: int | None = None, severity: Any = None,
            file: str | None = None) -> None:
        self.items.append((entry if entry is not None else -1, self.rank, len(self.items), code, message, severity,
                           file))

    def flush(self, out: Any) -> None:
        for entry, _, _, code, message, severity, file in sorted(self.items):
            out.add(code, message, entry if entry >= 0 else None, severity=severity, file=file)


@dataclass
class Pending:
    """One manifest decoded and ready for :func:`check_entries`: its scan (with the findings so
    far in ``out``), normalized entries, manifest-list entry, manifest format version, partition
    spec (None when it cannot be checked) and field types for bounds."""

    scan: Any
    out: Any
    frame: Any
    ref: Any
    mfv: int
    spec: Any
    types: dict[int, str]


def check_entries(pending: list[Pending], ctx: Any) -> None:
    """Every entry rule over the entries of many manifests at once; sets each scan's
    ``data_files`` and ``deletes`` (its live files) and adds findings to each manifest's ``out``.

    The manifests' entries are stacked into one frame, each with its manifest's constants
    (sequence number, snapshot, content, format version) as columns, so every rule is one column
    expression over all of them; one aggregate pass per manifest answers "does any entry break
    this rule?" for every rule at once, with the file and row counts per status; only a rule that
    is broken reads its entries back. The bounds of all manifests are checked together
    (:func:`icectl.validate.bounds.check_bounds_frame`); partition summaries take one
    aggregate per manifest (its partition columns are its spec's own)."""
    import polars as pl

    from icectl.validate.core import Severity
    from icectl.validate.manifests import (
        SCHEME,
        LiveFile,
        _check_counts,
        _check_partition_summary,
        _delete_rules,
        _path,
    )

    if not pending:
        return
    col, lit = pl.col, pl.lit
    fv = ctx.format_version
    found = [_Found() for _ in pending]
    core = [c for c in pending[0].frame.columns if not _PARTITION_COLUMN.fullmatch(c)]
    # A manifest's constants; 128-bit when one is not a long (a v1 snapshot id in JSON can be anything).
    consts = [(p.ref.sequence_number, p.ref.added_snapshot_id, p.ref.content) for p in pending]
    wide = pl.Int128 if any(x is not None and not -2**63 <= x < 2**63 for c in consts for x in c) else pl.Int64
    stacked = pl.concat([p.frame.select(core).with_columns(
        lit(i, dtype=pl.UInt32).alias("m"), lit(seq_, dtype=wide).alias("mseq"), lit(snap_, dtype=wide).alias("msnap"),
        lit(content_, dtype=wide).alias("mcontent"), lit(max(-1, min(p.mfv, 99)), dtype=pl.Int64).alias("mfv"))
        for i, (p, (seq_, snap_, content_)) in enumerate(zip(pending, consts))])

    # Sequence numbers after inheritance; null where a v2+ entry lacks explicit ones (reported).
    status, mseq, msnap = col("status"), col("mseq"), col("msnap")
    seq, fseq, snap = col("sequence_number"), col("file_sequence_number"), col("snapshot_id")
    added, v2 = status == 1, col("mfv") >= 2
    unknown = (seq.is_null() | fseq.is_null()) & v2
    seq_eff = pl.when(added).then(seq.fill_null(mseq)).when(unknown).then(None).otherwise(seq.fill_null(0))
    fseq_eff = pl.when(added).then(fseq.fill_null(mseq)).when(unknown).then(None).otherwise(fseq.fill_null(0))
    path, refd = col("file_path"), col("referenced_data_file")
    v = stacked.lazy().with_columns(
        status.is_in([0, 1, 2]).fill_null(False).alias("_valid"),
        seq_eff.alias("_seq"), fseq_eff.alias("_fseq"), col("content").fill_null(0).alias("_content"),
        col("file_format").str.to_lowercase().alias("_fmt"),
        (path.str.starts_with("/") | path.str.contains(SCHEME.pattern)).fill_null(False).alias("_abs"),
        (refd.is_null() | refd.str.starts_with("/") | refd.str.contains(SCHEME.pattern)).fill_null(False)
        .alias("_ref_abs"),
    ).with_columns((col("_valid") & (status != 2)).alias("_live")).collect()
    valid, live, s, fs, c = col("_valid"), col("_live"), col("_seq"), col("_fseq"), col("_content")
    snap_differs = snap.is_not_null() & msnap.is_not_null() & (snap != msnap)
    delete_manifest = col("mcontent") != 0
    frid = col("first_row_id")
    # (rank in an entry's order of checks, code, condition, columns for the message, message)
    rules: list[tuple[int, str, Any, tuple[str, ...], Any]] = [
        (0, "ENTRY_STATUS", ~valid, ("status",), lambda st: f"status {st} (0 existing, 1 added, 2 deleted)"),
        (1, "ENTRY_INHERITANCE", added & snap_differs, ("snapshot_id", "msnap"),
         lambda sn, m: f"an ADDED entry of snapshot {sn} in a manifest added by {m}"),
        (2, "ENTRY_INHERITANCE", added & v2 & fseq.is_not_null() & (fseq != mseq), ("file_sequence_number", "mseq"),
         lambda x, m: f"an ADDED entry with file_sequence_number {x}; the manifest's is {m}"),
        (3, "ENTRY_INHERITANCE", (status == 2) & snap_differs, ("snapshot_id", "msnap"),
         lambda sn, m: f"a DELETED entry of snapshot {sn} in a manifest added by {m}"),
        (4, "ENTRY_INHERITANCE", ~added & unknown, ("status",),
         lambda st: f"a {'DELETED' if st == 2 else 'EXISTING'} entry without explicit sequence numbers"),
        (5, "ENTRY_INHERITANCE", s.is_not_null() & ((s > mseq) | (fs > mseq)), ("_seq", "_fseq", "mseq"),
         lambda a, b, m: f"sequence numbers {a}/{b} are above the manifest's {m}"),
        (6, "ENTRY_INHERITANCE", s.is_not_null() & (s <= mseq) & (fs <= mseq) & (s > fs), ("_seq", "_fseq"),
         lambda a, b: f"data sequence number {a} is above file sequence number {b}"),
        (7, "ENTRY_VALUES", (col("record_count") < 0) | (col("file_size_in_bytes") < 0),
         ("record_count", "file_size_in_bytes"), lambda rc, size: f"record_count {rc}, file_size_in_bytes {size}"),
        (8, "FILE_FORMAT_UNKNOWN", ~col("_fmt").is_in(list(FORMATS)).fill_null(False), ("file_format",),
         lambda x: f"file_format {x!r}"),
        (9, "ENTRY_VALUES", ~c.is_in([0, 1, 2]), ("_content",),
         lambda x: f"content {x} (0 data, 1 position deletes, 2 equality deletes)"),
        (9, "MANIFEST_CONTENT_MISMATCH", c.is_in([0, 1, 2]) & ((c == 0) == delete_manifest), ("_content",),
         lambda x: f"a {'data' if x == 0 else 'delete'} file in a {'delete' if x == 0 else 'data'} manifest"),
        (13, "EQUALITY_IDS", (c == 0) & (col("equality_ids").list.len().fill_null(0) > 0), (),
         lambda: "equality_ids on a data file (should be null unless content is 2)"),
    ]
    if fv < 3:
        rules.append((14, "LINEAGE_BEFORE_V3", frid.is_not_null(), ("first_row_id",),
                      lambda x: f"first_row_id {x} in a format version {fv} table"))
    else:
        rules.append((14, "LINEAGE_FILE", frid.is_not_null() & (c != 0), ("first_row_id",),
                      lambda x: f"a delete file with first_row_id {x} (must be null)"))
        if ctx.next_row_id is not None:
            nri = max(-2**127, min(ctx.next_row_id, 2**127 - 1))
            total = frid.cast(pl.Int128) + col("record_count").cast(pl.Int128)  # no 64-bit overflow
            rules.append((14, "LINEAGE_FILE", frid.is_not_null() & (c == 0) & (total > lit(nri, dtype=pl.Int128)),
                          ("first_row_id", "record_count"),
                          lambda x, rc: f"row ids {x} to {x + rc - 1} reach past next-row-id {nri}"))
    conds = [(e & valid if code != "ENTRY_STATUS" else e).fill_null(False) for _, code, e, _, _ in rules]
    aggs = [e.any().alias(f"r{i}") for i, e in enumerate(conds)]
    aggs += [(~col("_abs") & valid).any().alias("rel"), (~col("_ref_abs") & valid).any().alias("ref_rel"),
             s.filter(live).min().alias("min_seq")]
    for k in range(3):
        aggs += [(valid & (status == k)).sum().alias(f"files{k}"),
                 col("record_count").cast(pl.Int128).filter(valid & (status == k)).sum().alias(f"rows{k}")]
    per = {row["m"]: row for row in v.group_by("m").agg(aggs).rows(named=True)}
    broken = [i for i in range(len(rules)) if any(row[f"r{i}"] for row in per.values())]

    for i in broken:
        rank, code, _, cols, message = rules[i]
        severity = Severity.WARNING if code == "EQUALITY_IDS" else None
        for row in v.filter(conds[i]).select("m", "n", *cols).rows():
            found[row[0]].rank = rank
            found[row[0]].add(code, message(*row[2:]), row[1], severity=severity)

    # Paths that are not full URIs (v4: relative, resolved against the location), entry by entry.
    resolved: dict[tuple[int, int], str | None] = {}
    resolved_ref: dict[tuple[int, int], str | None] = {}
    if any(row["rel"] for row in per.values()):
        for m, n, p in v.filter(~col("_abs") & valid).select("m", "n", "file_path").rows():
            found[m].rank = 10
            resolved[(m, n)] = _path(p, fv >= 4, ctx, found[m], n, "file_path") if p is not None else None
    if any(row["ref_rel"] for row in per.values()):
        for m, n, p in v.filter(~col("_ref_abs") & valid).select("m", "n", "referenced_data_file").rows():
            found[m].rank = 11
            resolved_ref[(m, n)] = _path(p, fv >= 4, ctx, found[m], n, "referenced_data_file")

    # Delete files (few): their rules entry by entry.
    for (m, n, st, cont, fm, size, rc, p, rd, eq, off, csize) in v.filter(valid & (c != 0)).select(
            "m", "n", "status", "_content", "_fmt", "file_size_in_bytes", "record_count", "file_path",
            "referenced_data_file", "equality_ids", "content_offset", "content_size_in_bytes").rows():
        rd = resolved_ref.get((m, n), rd)
        is_dv = cont == 1 and fm == "puffin"
        found[m].rank = 12
        _delete_rules((eq, off, csize), cont, is_dv, st, fm, pending[m].mfv, ctx, found[m], n, 0, 1, 2, rd, size,
                      pending[m].types)
        p = resolved.get((m, n), p)
        if st != 2 and p is not None:
            lf = LiveFile(p, cont, is_dv, rd, n, fm, rc, size)
            if is_dv:
                lf.content_offset, lf.content_size_in_bytes = off, csize
            pending[m].scan.deletes.append(lf)

    data = v.filter(live & (c == 0)).select("m", path.alias("path"), col("n").alias("entry"),
                                            col("record_count").alias("records"),
                                            col("file_size_in_bytes").alias("size"), col("_fmt").alias("format"))
    if resolved:
        fixed = pl.Series("path", [resolved.get((m, n), p) for m, n, p in data.select("m", "entry", "path").rows()],
                          dtype=pl.String)
        data = data.with_columns(fixed).filter(pl.col("path").is_not_null())
    data_by = data.partition_by("m", as_dict=True, include_key=False)
    empty = data.clear().drop("m")
    for i, p in enumerate(pending):
        p.scan.data_files = data_by.get((i,), empty)
        row = per.get(i)
        if row is None:  # no entries
            _check_counts(p.ref, [0, 0, 0], [0, 0, 0], None, found[i])
        elif not row["r0"]:  # with an unknown status, the counts cannot be checked
            _check_counts(p.ref, [row[f"files{k}"] for k in range(3)], [row[f"rows{k}"] or 0 for k in range(3)],
                          row["min_seq"], found[i])
        if p.spec is not None:
            _check_partition_summary(p.ref, p.spec, _partition_stats(p.frame, p.spec), found[i])
        found[i].flush(p.out)

    if ctx.check_bounds and "lower_bounds" in v.columns:
        from icectl.validate.bounds import check_bounds_frame

        bounds = v.filter(valid).select("m", "n", "lower_bounds", "upper_bounds")
        by_types: dict[int, list[int]] = {}
        for i, p in enumerate(pending):
            by_types.setdefault(id(p.types), []).append(i)
        for ms in by_types.values():
            part = bounds if len(by_types) == 1 else bounds.filter(col("m").is_in(ms))
            check_bounds_frame(part, pending[ms[0]].types, [p.out for p in pending])


def _partition_stats(f: Any, spec: Any) -> list[tuple[bool, bool, Any, Any] | None]:
    """(has a null, has a NaN, lowest, highest) of each partition field's live values."""
    import polars as pl

    status = pl.col("status")
    live = status.is_in([0, 1]).fill_null(False)
    exprs = []
    for i, (_, _, t) in enumerate(spec):
        exprs += _stat_exprs(i, t, f.schema.get(f"p{i}"), live)
    if not exprs:
        return [None] * len(spec)
    agg = f.select(exprs).row(0, named=True)
    return [_field_stats(i, t, agg, f, live) for i, (_, _, t) in enumerate(spec)]


_ORDERED = frozenset({"int", "long", "date", "time", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns",
                      "float", "double", "string", "binary", "boolean"})
_UNORDERED = frozenset({"geometry", "geography", "uuid", "variant", "unknown"})


def _stat_exprs(i: int, t: str, dtype: Any, live: Any) -> list[Any]:
    """Aggregates for partition field ``p{i}`` over the live entries: how many, any null, any
    NaN, and (for a type polars orders as Iceberg does) the lowest and highest other value."""
    import polars as pl

    if dtype is None:
        return []
    p = pl.col(f"p{i}")
    base = base_type(t)
    out = [live.sum().alias(f"p{i}_live"), (live & p.is_null()).any().alias(f"p{i}_null")]
    value = live & p.is_not_null()
    if dtype.is_float():
        out.append((value & p.is_nan()).any().alias(f"p{i}_nan"))
        value = value & ~p.is_nan()
    if base in _ORDERED and (dtype.is_numeric() or dtype in (pl.String, pl.Binary, pl.Boolean)):
        out += [p.filter(value).min().alias(f"p{i}_min"), p.filter(value).max().alias(f"p{i}_max")]
    return out


def _field_stats(i: int, t: str, agg: dict[str, Any], f: Any, live: Any) -> tuple[bool, bool, Any, Any] | None:
    """(has a null, has a NaN, lowest, highest) of partition field ``p{i}``'s live values, in the
    form of :func:`icectl.validate.manifests._partition_key` (lowest/highest None when no
    value orders, TypeError when they do not compare); None when there are no live values."""
    import polars as pl

    from icectl.validate.manifests import _partition_key
    from icectl.errors import IcectlError

    if not agg.get(f"p{i}_live"):
        return None
    base = base_type(t)
    has_null, has_nan = bool(agg[f"p{i}_null"]), base in ("float", "double") and bool(agg.get(f"p{i}_nan"))
    if base in _UNORDERED:
        return has_null, has_nan, None, None
    if f"p{i}_min" in agg:
        return has_null, has_nan, agg[f"p{i}_min"], agg[f"p{i}_max"]
    p = pl.col(f"p{i}")
    column = f.filter(live & p.is_not_null()).get_column(f"p{i}")
    values = column.to_list()
    if isinstance(column.dtype, pl.Decimal):  # the unscaled integers the Avro bytes hold, as the lean decoder reads
        values = [int(x.scaleb(column.dtype.scale)) for x in values]
        t = "long"
    try:
        keys = [k for k in (_partition_key(t, x) for x in values if not (isinstance(x, float) and x != x))
                if k is not None]
        if not keys:
            return has_null, has_nan, None, None
        return has_null, has_nan, min(keys), max(keys)
    except (TypeError, ValueError, IcectlError):
        return has_null, has_nan, TypeError, TypeError
