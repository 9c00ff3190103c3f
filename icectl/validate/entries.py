"""The entries of manifests, for ``validate``: every entry-level rule, checked a column at a time.

Each manifest's entries arrive as a polars DataFrame of normalized columns
(:mod:`icectl.formats.entries`, from polars' Avro reader or the lean decoder; the checks are
the same either way). :func:`check_entries` stacks the entries of all the manifests of a run into
one frame and evaluates each rule as one column expression over all of them; only entries that
break a rule become Python values (to word their findings). A manifest's findings are added in
entry order (rules in a fixed order within an entry), so a code's first findings are its first
entries.

Rules: "Manifest Entry Fields", "Sequence Number Inheritance", "First Row ID Inheritance",
"Delete Formats", "Deletion Vectors", v4 relative paths; the counts of the manifest-list entry;
the bounds (:mod:`icectl.validate.bounds`) and partition summaries
(:mod:`icectl.validate.partitions`). What the snapshot-level rules need is kept: each manifest's
live data files and live delete files.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from icectl.errors import InvalidMetadataError
from icectl.formats.manifest import ManifestFile
from icectl.io import resolve_path
from icectl.spec.types import IcebergType, PrimitiveType
from icectl.validate.bounds import check_bounds_frame
from icectl.validate.codes import Severity
from icectl.formats.avro import failures
from icectl.formats.entries import PARTITION_COLUMN, inherited, positions
from icectl.validate.partitions import SpecFields, check_partition_summary, partition_stats, partition_stats_many

FORMATS = ("parquet", "avro", "orc", "puffin")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]+:")


@dataclass(frozen=True)
class ScanContext:
    """What the checks of a manifest need of its table."""

    format_version: int
    location: str | None
    next_row_id: int | None
    specs: dict[int, SpecFields]  # spec id -> (field id, name, result type) of each partition field
    types: dict[int, IcebergType]  # field id -> type, in the newest schema that has it
    check_bounds: bool = True
    deep: bool = False
    # header schema JSON -> its field types over ``types``: filled as manifests are read
    header_types: dict[str, dict[int, IcebergType]] = field(default_factory=dict, compare=False, repr=False)


@dataclass
class LiveFile:
    """A live delete file (live data files travel as a polars frame: there are many)."""

    path: str
    content: int
    is_dv: bool
    referenced_data_file: str | None
    entry: int
    file_format: str = ""
    record_count: int = 0
    file_size_in_bytes: int = 0
    content_offset: int | None = None
    content_size_in_bytes: int | None = None


@dataclass
class Pending:
    """One manifest decoded and ready for :func:`check_entries`: its findings so far (``out``),
    normalized entries, manifest-list entry, manifest format version, partition spec (None when
    it cannot be checked) and field types for bounds; :func:`check_entries` sets its live files."""

    out: Any
    frame: Any
    ref: ManifestFile
    mfv: int
    spec: SpecFields | None
    types: dict[int, IcebergType]
    data_files: Any = None  # live data files: a polars DataFrame of path, entry, records, size, format, seq, part
    deletes: list[LiveFile] = field(default_factory=list)


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


def check_entries(pending: list[Pending], ctx: ScanContext) -> None:
    """Every entry rule over the entries of many manifests at once; sets each one's
    ``data_files`` and ``deletes`` (its live files) and adds findings to each manifest's ``out``.

    The manifests' entries are stacked into one frame, each with its manifest's constants
    (sequence number, snapshot, content, format version) as columns, so every rule is one column
    expression over all of them; one aggregate pass per manifest answers "does any entry break
    this rule?" for every rule at once, with the file and row counts per status; only a rule that
    is broken reads its entries back. The bounds of all manifests are checked together
    (:func:`icectl.validate.bounds.check_bounds_frame`); partition summaries take one
    aggregate per manifest (:mod:`icectl.validate.partitions`)."""
    import polars as pl

    if not pending:
        return
    col, lit = pl.col, pl.lit
    fv = ctx.format_version
    found = [_Found() for _ in pending]
    core = [c for c in pending[0].frame.columns if not PARTITION_COLUMN.fullmatch(c)]
    # A manifest's constants; 128-bit when one is not a long (a v1 snapshot id in JSON can be anything).
    consts = [(p.ref.sequence_number, p.ref.added_snapshot_id, int(p.ref.content)) for p in pending]
    wide = pl.Int128 if any(x is not None and not -2**63 <= x < 2**63 for c in consts for x in c) else pl.Int64
    stacked = _stack(pending, core)
    m = stacked.get_column("m")
    constants = pl.DataFrame([pl.Series("mseq", [c[0] for c in consts], dtype=wide),
                              pl.Series("msnap", [c[1] for c in consts], dtype=wide),
                              pl.Series("mcontent", [c[2] for c in consts], dtype=wide),
                              pl.Series("mfv", [max(-1, min(p.mfv, 99)) for p in pending], dtype=pl.Int64)])
    stacked = stacked.with_columns(constants.get_column(name).gather(m) for name in constants.columns)

    # The rules check the values as written; the sequence rules check them after inheritance
    # (the one implementation, formats.entries.inherited). An EXISTING or DELETED entry of a v2+
    # manifest without explicit sequence numbers inherits nothing: it is reported (rule 4) and
    # its sequence numbers count as unknown (null) for the other rules.
    status, mseq, msnap = col("status"), col("mseq"), col("msnap")
    seq, fseq, snap = col("sequence_number"), col("file_sequence_number"), col("snapshot_id")
    added, v2 = status == 1, col("mfv") >= 2
    unknown = (seq.is_null() | fseq.is_null()) & v2
    inherit = inherited(manifest_sequence_number=mseq, added_snapshot_id=msnap, first_row_id=None,
                        format_version=col("mfv"))
    seq_eff = pl.when(~added & unknown).then(None).otherwise(inherit["sequence_number"])
    fseq_eff = pl.when(~added & unknown).then(None).otherwise(inherit["file_sequence_number"])
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
        for row in v.lazy().filter(conds[i]).select("m", "n", *cols).collect().rows():
            found[row[0]].rank = rank
            found[row[0]].add(code, message(*row[2:]), row[1], severity=severity)

    # Paths that are not full URIs (v4: relative, resolved against the location), entry by entry.
    resolved: dict[tuple[int, int], str | None] = {}
    resolved_ref: dict[tuple[int, int], str | None] = {}
    if any(row["rel"] for row in per.values()):
        for m, n, p in v.lazy().filter(~col("_abs") & valid).select("m", "n", "file_path").collect().rows():
            found[m].rank = 10
            resolved[(m, n)] = _resolve(p, found[m], n=n, what="file_path", ctx=ctx) if p is not None else None
    if any(row["ref_rel"] for row in per.values()):
        for m, n, p in v.lazy().filter(~col("_ref_abs") & valid).select("m", "n", "referenced_data_file").collect().rows():
            found[m].rank = 11
            resolved_ref[(m, n)] = _resolve(p, found[m], n=n, what="referenced_data_file", ctx=ctx)

    # Delete files (few): their rules entry by entry.
    for (m, n, st, cont, fm, size, rc, p, rd, eq, off, csize) in v.lazy().filter(valid & (c != 0)).select(
            "m", "n", "status", "_content", "_fmt", "file_size_in_bytes", "record_count", "file_path",
            "referenced_data_file", "equality_ids", "content_offset", "content_size_in_bytes").collect().rows():
        d = DeleteEntry(n, st, cont, fm, size, eq, off, csize, resolved_ref.get((m, n), rd))
        found[m].rank = 12
        _delete_rules(d, found[m], mfv=pending[m].mfv, ctx=ctx, types=pending[m].types)
        p = resolved.get((m, n), p)
        if st != 2 and p is not None:
            lf = LiveFile(p, cont, d.is_dv, d.referenced_data_file, n, fm, rc, size)
            if d.is_dv:
                lf.content_offset, lf.content_size_in_bytes = off, csize
            pending[m].deletes.append(lf)

    # lazily: only the selected columns are filtered (not the entries' bound lists)
    data = v.lazy().filter(live & (c == 0)).select("m", path.alias("path"), col("n").alias("entry"),
                                                   col("record_count").alias("records"),
                                                   col("file_size_in_bytes").alias("size"),
                                                   col("_fmt").alias("format"), col("_seq").alias("seq"),
                                                   col("_part").alias("part")).collect()
    if resolved:
        fixed = pl.Series("path", [resolved.get((m, n), p) for m, n, p in data.select("m", "entry", "path").rows()],
                          dtype=pl.String)
        data = data.with_columns(fixed).filter(pl.col("path").is_not_null())
    stats = _partition_stats(pending)
    data_by = data.partition_by("m", as_dict=True, include_key=False)
    empty = data.clear().drop("m")
    for i, p in enumerate(pending):
        p.data_files = data_by.get((i,), empty)
        row = per.get(i)
        if row is None:  # no entries
            _check_counts(p.ref, found[i], files=[0, 0, 0], rows=[0, 0, 0], min_live_seq=None)
        elif not row["r0"]:  # with an unknown status, the counts cannot be checked
            _check_counts(p.ref, found[i], files=[row[f"files{k}"] for k in range(3)],
                          rows=[row[f"rows{k}"] or 0 for k in range(3)], min_live_seq=row["min_seq"])
        if p.spec is not None:
            check_partition_summary(p.ref, p.spec, stats[i], found[i])
        found[i].flush(p.out)

    if ctx.check_bounds and "lower_bounds" in v.columns:
        bounds = v.lazy().filter(valid).select("m", "n", "lower_bounds", "upper_bounds").collect()
        by_types = same_types(pending)
        for ms in by_types:
            part = bounds if len(by_types) == 1 else bounds.filter(col("m").is_in(ms))
            check_bounds_frame(part, pending[ms[0]].types, [p.out for p in pending])


def same_types(pending: list[Pending]) -> list[list[int]]:
    """The positions of the manifests whose field types are equal (the bounds of each group are
    checked in one pass): manifests of different header schemas usually read their columns as
    the same types, and filtering the bound lists apart costs more than checking them."""
    groups: list[tuple[dict[int, IcebergType], list[int]]] = []
    known: dict[int, list[int]] = {}  # id of a types dict -> its group's positions
    for i, p in enumerate(pending):
        members = known.get(id(p.types))
        if members is None:
            members = next((ms for types, ms in groups if types == p.types), None)
            if members is None:
                members = []
                groups.append((p.types, members))
            known[id(p.types)] = members
        members.append(i)
    return [ms for _, ms in groups]


def _partition_stats(pending: list[Pending]) -> dict[int, list[Any]]:
    """:func:`icectl.validate.partitions.partition_stats` of each manifest with a spec, by its
    position: one query for the manifests of a spec whose partition columns have the same types
    (one per manifest when their frames cannot be stacked)."""
    import polars as pl

    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, p in enumerate(pending):
        if p.spec is not None:
            f = p.frame
            key = tuple((c, repr(f.get_column(c).dtype)) for c in f.columns if PARTITION_COLUMN.fullmatch(c))
            groups.setdefault((id(p.spec), key), []).append(i)
    out: dict[int, list[Any]] = {}
    for members in groups.values():
        frames = [pending[i].frame for i in members]
        spec = pending[members[0]].spec
        try:
            stacked = pl.concat(frames, rechunk=False).with_columns(positions(list(range(len(frames))),
                                                                              [len(f) for f in frames]))
            stats = partition_stats_many(stacked, spec, frames)
        except failures():  # frames of other column types: one by one, as before
            stats = [partition_stats(f, spec) for f in frames]
        out.update(zip(members, stats))
    return out


def _stack(pending: list[Pending], core: list[str]) -> Any:
    """The core columns of every manifest's entries in one frame, with ``_part`` (a hash of an
    entry's partition tuple: one file's entries must agree on it) and ``m`` (the manifest's
    position). Manifests whose partition columns have the same types are stacked and hashed
    together: a few frame operations per run, not per manifest. Each manifest's rows are together
    and in order (the rules read a manifest's entries in order; the manifests need not be)."""
    import polars as pl

    groups: dict[tuple[tuple[str, str], ...], list[int]] = {}
    for i, p in enumerate(pending):
        f = p.frame
        key = tuple((c, repr(f.get_column(c).dtype)) for c in f.columns if PARTITION_COLUMN.fullmatch(c))
        groups.setdefault(key, []).append(i)
    stacks = []
    for key, members in groups.items():
        names = core + [c for c, _ in key]
        frames = [f if f.columns == names else f.select(names) for f in (pending[i].frame for i in members)]
        m = positions(members, [len(f) for f in frames])
        part = pl.struct([c for c, _ in key]).hash(seed=0) if key else pl.lit(0, dtype=pl.UInt64)
        stacks.append(pl.concat(frames, rechunk=False).select(core + [part.alias("_part")]).with_columns(m))
    return pl.concat(stacks)


@dataclass(frozen=True)
class DeleteEntry:
    """A live or deleted delete file's entry, as the delete-file rules read it."""

    n: int  # its position in the manifest
    status: int
    content: int
    file_format: str
    file_size_in_bytes: int
    equality_ids: list[int] | None
    content_offset: int | None
    content_size_in_bytes: int | None
    referenced_data_file: str | None

    @property
    def is_dv(self) -> bool:
        return self.content == 1 and self.file_format == "puffin"


def _delete_rules(d: DeleteEntry, out: Any, *, mfv: int, ctx: ScanContext, types: dict[int, IcebergType]) -> None:
    """"Delete Formats", "Deletion Vectors" and the v3 writer rules for one delete file."""
    fv, n = ctx.format_version, d.n
    if fv == 1:
        out.add("DELETE_FILE_IN_V1", "row-level deletes are not supported in format version 1", n)
    if d.content == 2:
        if not d.equality_ids:
            out.add("EQUALITY_IDS", "an equality delete file without equality_ids", n)
        else:
            for fid in d.equality_ids:
                t = types.get(fid)
                if t is None:
                    out.add("EQUALITY_IDS", f"equality id {fid} is in no schema of the table", n)
                elif isinstance(t, PrimitiveType) and t.base in ("float", "double"):
                    out.add("EQUALITY_IDS", f"equality id {fid} is a {t} column; float and double columns cannot be "
                            "delete columns", n)
        if d.status == 1 and mfv >= 3:
            out.add("V3_EQUALITY_DELETE", "an equality delete file added by a v3 manifest: its rows lose lineage", n)
        return
    if d.equality_ids:
        out.add("EQUALITY_IDS", "equality_ids on a position delete file (should be null unless content is 2)", n,
                severity=Severity.WARNING)
    if d.is_dv:
        if fv < 3:
            out.add("DV_BEFORE_V3", f"a deletion vector (Puffin position deletes) in a format version {fv} table", n)
        off, csize, size = d.content_offset, d.content_size_in_bytes, d.file_size_in_bytes
        missing = [name for name, v in (("referenced_data_file", d.referenced_data_file), ("content_offset", off),
                                        ("content_size_in_bytes", csize)) if v is None]
        if missing:
            out.add("DV_FIELDS", f"a deletion vector without {', '.join(missing)}", n)
        elif off < 0 or csize <= 0 or off + csize > size:
            out.add("DV_FIELDS", f"content_offset {off} + content_size_in_bytes {csize} lie outside the file's "
                    f"{size} bytes", n)
    elif d.status == 1 and mfv >= 3:
        out.add("V3_NEW_POSITION_DELETE_FILE", "a v3 manifest adds a position delete file; v3 writers add deletion "
                "vectors", n)


def _resolve(path: str, out: Any, *, n: int, what: str, ctx: ScanContext) -> str | None:
    """A path that is not a full URI: resolved against the table location in v4, else a finding."""
    if path[:1] == "/" or SCHEME.match(path):
        return path
    if ctx.format_version < 4:
        out.add("PATH_RELATIVE_BEFORE_V4", f"{what} {path!r} is relative; format version {ctx.format_version} stores "
                "full URIs", n)
        return None
    try:
        return resolve_path(ctx.location, path, 4)
    except InvalidMetadataError as e:
        out.add("PATH_ESCAPES_LOCATION", f"{what}: {e.message}", n)
        return None


def _check_counts(ref: ManifestFile, out: Any, *, files: list[int], rows: list[int], min_live_seq: int | None) -> None:
    """The manifest list's file and row counts per status (existing, added, deleted) and
    min_sequence_number against the entries'."""
    pairs = (("added_files_count", ref.added_files_count, files[1]),
             ("existing_files_count", ref.existing_files_count, files[0]),
             ("deleted_files_count", ref.deleted_files_count, files[2]),
             ("added_rows_count", ref.added_rows_count, rows[1]),
             ("existing_rows_count", ref.existing_rows_count, rows[0]),
             ("deleted_rows_count", ref.deleted_rows_count, rows[2]))
    wrong = [f"{name} {listed} (entries: {actual})" for name, listed, actual in pairs
             if listed is not None and listed != actual]
    if wrong:
        out.add("MANIFEST_COUNTS", "the manifest list says " + ", ".join(wrong))
    if min_live_seq is not None and ref.min_sequence_number > min_live_seq:
        out.add("MANIFEST_SEQUENCE", f"min_sequence_number {ref.min_sequence_number} is above the lowest live data "
                f"sequence number {min_live_seq}")
