"""Which files a set of snapshots reaches: manifest lists, manifests, content files (the live
entries of those manifests, as Iceberg Java's ReadManifest reads them), statistics and
partition-statistics files. Shared by expire and remove-orphans.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

from icectl.formats.manifest import (
    DATA,
    DELETION_VECTOR,
    EQUALITY_DELETES,
    POSITION_DELETES,
    ManifestFile,
    content_kind,
)
from icectl.spec.metadata import Snapshot, TableMetadata
from icectl.table.listing import ColumnarUnavailable, bounded_map, decoded_manifest
from icectl.table.loaded import Table
from icectl.errors import IcectlError
from icectl.formats.avro import failures, open_avro, read_frame
from icectl.formats.manifest import check_field_types, manifest_file

# Kinds of files, as icectl reports them (and the Java expire_snapshots column each counts in):
# content files (icectl.formats.manifest.content_kind) and metadata files.
MANIFEST, MANIFEST_LIST, STATISTICS, PARTITION_STATISTICS, METADATA = (
    "manifest", "manifest-list", "statistics", "partition-statistics", "metadata")
KINDS = (DATA, POSITION_DELETES, EQUALITY_DELETES, DELETION_VECTOR, MANIFEST, MANIFEST_LIST, STATISTICS,
         PARTITION_STATISTICS, METADATA)


@dataclass
class Reachable:
    """Paths by kind, with sizes where the metadata records them."""

    files: dict[str, str] = field(default_factory=dict)  # path -> kind
    sizes: dict[str, int] = field(default_factory=dict)

    def add(self, path: str, kind: str, size: int | None = None) -> None:
        if path not in self.files:
            self.files[path] = kind
            if size is not None:
                self.sizes[path] = size

    def __contains__(self, path: str) -> bool:
        return path in self.files

    def paths(self) -> set[str]:
        return set(self.files)


def reachable_files(table: Table, md: TableMetadata, snapshots: Iterable[Snapshot], *,
                    skip_manifests: set[str] | None = None, workers: int = 2) -> Reachable:
    """Every file the given snapshots reach, as a dict of paths (for a table's few thousand
    files: purge, a re-check after a concurrent commit). Manifests in ``skip_manifests`` are
    listed but not read (their content files are known to be reachable elsewhere). For millions
    of files, :func:`metadata_reach` and :func:`live_content` stream the same facts."""
    snapshots = list(snapshots)
    view = Table(table.identifier, md, table.metadata_location, table.catalog, table.io)
    out = Reachable()
    lists, manifests = metadata_reach(view, snapshots, workers=workers)
    for path in lists:
        out.add(path, MANIFEST_LIST)
    for path, m in manifests.items():
        out.add(path, MANIFEST, m.manifest_length)
    to_read = [m for p, m in manifests.items() if not skip_manifests or p not in skip_manifests]
    for frame in bounded_map(lambda m: live_content(view, m), to_read, workers=workers):
        for path, kind, size in frame.select("path", "kind", "size").iter_rows():
            out.add(path, kind, size)
    ids = {s.snapshot_id for s in snapshots}
    for st in md.statistics:
        if st.snapshot_id in ids:
            out.add(view.resolve(st.statistics_path), STATISTICS, st.file_size_in_bytes)
    for st in md.partition_statistics:
        if st.snapshot_id in ids:
            out.add(view.resolve(st.statistics_path), PARTITION_STATISTICS, st.file_size_in_bytes)
    return out


def metadata_reach(view: Table, snapshots: list[Snapshot], *, workers: int = 2,
                   progress: Callable[[int, int], None] | None = None) -> tuple[list[str], dict[str, ManifestFile]]:
    """The manifest lists of the snapshots, and their distinct manifests (first listing wins),
    read a few lists ahead of the consumer. Thousands of snapshots list mostly the same
    manifests: each list is decoded as columns and only an entry whose manifest was not seen yet
    becomes a :class:`ManifestFile`. ``progress(done, total)`` is called after each list."""
    lists: list[str] = []
    manifests: dict[str, ManifestFile] = {}
    with_lists = [s for s in snapshots if s.manifest_list or s.manifests]
    for n, (s, (paths, make)) in enumerate(zip(with_lists, bounded_map(lambda s: _list_paths(view, s), with_lists,
                                                                       workers=workers, ahead=16)), 1):
        if s.manifest_list:
            lists.append(view.resolve(s.manifest_list))
        new = [i for i, p in enumerate(paths) if p not in manifests]
        if new:
            for m in make(new):
                manifests.setdefault(m.manifest_path, m)
        if progress is not None:
            progress(n, len(with_lists))
    return lists, manifests


def _list_paths(view: Table, s: Snapshot) -> tuple[list[str], Callable[[list[int]], list[ManifestFile]]]:
    """The manifest paths a snapshot lists, and a function giving the ManifestFiles of some of
    them (by position). Read by polars as columns; anything unusual through ``view.manifests``
    (with its checks and messages)."""
    if s.manifest_list is not None:
        path = view.resolve(s.manifest_list)
        try:
            avro = open_avro(view.io.read(path), source=path)
            # The writer's field types against the spec's, as read_manifest_list checks them.
            check_field_types(avro.schema, source=path, what="manifest list", text=avro.schema_text)
            df = read_frame(avro)
        except IcectlError:
            df = None  # view.manifests says what is wrong
        if df is not None and "manifest_path" in df.columns:
            try:
                column = df.get_column("manifest_path")
                paths = column.to_list()
                if view.metadata.format_version >= 4:  # before v4 a path is used as written
                    paths = [view.resolve(p) for p in paths]
                if column.null_count() == 0 and all(isinstance(p, str) for p in paths[:1]):
                    def make(rows: list[int]) -> list[ManifestFile]:
                        out = []
                        for i in rows:  # a row at a time: cheaper than a gather for the few new ones
                            m = manifest_file(df.row(i, named=True))
                            m.manifest_path = paths[i]
                            out.append(m)
                        return out

                    make(list(range(min(1, len(paths)))))  # the entry form is checked once per list
                    return paths, make
            except (KeyError, TypeError, ValueError, *failures()):
                pass
    full = view.manifests(s)
    return [m.manifest_path for m in full], lambda rows: [full[i] for i in rows]


CONTENT_SCHEMA = {"path": "String", "kind": "String", "size": "Int64"}


def live_content(view: Table, m: ManifestFile) -> Any:
    """A polars DataFrame (path, kind, size) of a manifest's live entries, as
    ``read_entries(live_only=True)`` gives them: straight from polars' columns when it can (no
    per-entry Python objects, which cost ~3x the Avro decoding itself), else entry by entry
    (polars missing or failing, v4 paths to resolve, nulls, an out-of-range status or content:
    then read_entries reads the manifest, with its validation and error messages)."""
    fast = _fast_live_files(view, m)
    if fast is not None:
        return fast
    return _entry_by_entry(view, m)


def live_content_batches(view: Table, manifests: list[ManifestFile], *, workers: int = 2,
                         done: Callable[[], None] | None = None, rows: int = 50_000,
                         most: int = 32) -> Iterator[Any]:
    """:func:`live_content` of the ``manifests``, in their order, as frames that each hold the
    live entries of a run of manifests (up to ``rows`` rows or ``most`` manifests). Each
    manifest is decoded by polars (a few ahead, by ``workers`` threads) and its columns are kept
    as they are; one polars query a run then checks and derives them. Thousands of small
    manifests (a table never maintained) cost a query each otherwise: ~0.3 ms a manifest, as
    much as decoding it. ``done()`` is called after each manifest is decoded."""
    if view.metadata.format_version >= 4:  # paths to resolve: entry by entry
        for m in manifests:
            frame = live_content(view, m)
            if done is not None:
                done()
            yield frame
        return
    run: list[tuple[ManifestFile, Any]] = []
    held = 0
    decoded = bounded_map(lambda m: _content_columns(view, m), manifests, workers=workers,
                          weight=lambda m: m.manifest_length or 0, budget=DECODING_BUDGET)
    for m, cols in zip(manifests, decoded):
        if done is not None:
            done()
        if cols is None:  # not a manifest polars reads as it is: its own way, in its place
            yield from _content_of_run(view, run)
            run, held = [], 0
            yield _entry_by_entry(view, m)
            continue
        run.append((m, cols))
        held += len(cols)
        if held >= rows or len(run) >= most:
            yield from _content_of_run(view, run)
            run, held = [], 0
    yield from _content_of_run(view, run)


CONTENT_COLUMNS = ("file_path", "file_format", "file_size_in_bytes")
# Bytes of manifests decoded at once (or decoded and not yet consumed) by live_content_batches:
# polars holds ~15x the bytes it decodes, so two large manifests decoded side by side were expire's
# peak at 10x the bench (an 8 MB manifest of 50,000 entries: +127 MB each; 623 MB); a larger
# manifest is decoded alone (and by parts of FRAME_PART_BYTES: see _content_columns), thousands of
# small ones still two at a time.
DECODING_BUDGET = 4 << 20


def _content_columns(view: Table, m: ManifestFile) -> Any | None:
    """A manifest's ``status`` and data_file's content, path, format and size as polars decoded
    them (nothing converted: eager column picks, no query), or None when polars cannot read it
    so (see :func:`icectl.table.listing.decoded_manifest`). A large manifest is decoded by parts,
    each part's other columns dropped as it is decoded."""
    try:
        return decoded_manifest(view, m, each=_content_part)[0]
    except ColumnarUnavailable:
        return None


def _content_part(df: Any) -> Any:
    fields = df.get_column("data_file").struct.unnest()  # not a struct: raises
    names = set(fields.columns)
    if not set(CONTENT_COLUMNS) <= names:
        raise ColumnarUnavailable("no " + ", ".join(sorted(set(CONTENT_COLUMNS) - names)))
    picked = fields[(["content"] if "content" in names else []) + list(CONTENT_COLUMNS)]
    return picked.hstack([df.get_column("status")])


def _content_of_run(view: Table, run: list[tuple[ManifestFile, Any]]) -> Iterator[Any]:
    """The live content of a run of manifests' columns: one query for all of them; a run whose
    columns do not concatenate (types differ) or do not pass the checks, a manifest at a time."""
    if not run:
        return
    if len(run) > 1:
        import polars as pl

        try:
            together = pl.concat([c for _, c in run], how="diagonal")
        except Exception:
            together = None
        got = _live_of_columns(together) if together is not None else None
        if got is not None:
            yield got
            return
    for m, cols in run:
        got = _live_of_columns(cols)
        yield got if got is not None else _entry_by_entry(view, m)


def _entry_by_entry(view: Table, m: ManifestFile) -> Any:
    import polars as pl

    rows = [(e.data_file.file_path, e.data_file.kind, e.data_file.file_size_in_bytes)
            for e in view.read_entries(m, live_only=True, with_stats=False)]
    return pl.DataFrame(rows, schema={k: getattr(pl, v) for k, v in CONTENT_SCHEMA.items()}, orient="row")


def _fast_live_files(view: Table, m: ManifestFile) -> Any | None:
    if view.metadata.format_version >= 4:
        return None
    cols = _content_columns(view, m)
    return _live_of_columns(cols) if cols is not None else None


def _live_of_columns(cols: Any) -> Any | None:
    """(path, kind, size) of the live entries in ``status``, ``content`` (absent: data), and
    data_file's path, format and size columns; None when a value is null or out of range
    (read_entries rejects it, or reads it otherwise). Checked and filtered by Series kernels
    (a query costs ~1 ms, as much as decoding a small manifest); the kind of each file by a
    query only when there are delete files."""
    try:
        import polars as pl

        status, path = cols.get_column("status"), cols.get_column("file_path")
        fmt, size = cols.get_column("file_format"), cols.get_column("file_size_in_bytes").cast(pl.Int64)
        fmt = fmt if fmt.dtype == pl.String else fmt.cast(pl.String)
        if status.null_count() or path.null_count() or fmt.null_count() or size.null_count():
            return None
        if len(status) and not (0 <= status.min() and status.max() <= 2):  # type: ignore[operator]
            return None
        content = cols.get_column("content").cast(pl.Int64) if "content" in cols.columns else None
        lo, hi = (content.min(), content.max()) if content is not None else (None, None)
        if lo is not None and not (0 <= lo and hi <= 2):  # type: ignore[operator]
            return None
        live = status != 2
        path, size = path.filter(live).alias("path"), size.filter(live).alias("size")
        if not hi:  # data files only (content 0 or null)
            kind = pl.Series("kind", [DATA], dtype=pl.String).new_from_index(0, len(path))
            return pl.DataFrame([path, kind, size])
        c = pl.col("content")
        kind = (pl.when(c == 0).then(pl.lit(DATA)).when(c == 2).then(pl.lit(EQUALITY_DELETES))
                .when(pl.col("format").str.to_lowercase() == "puffin").then(pl.lit(DELETION_VECTOR))
                .otherwise(pl.lit(POSITION_DELETES)))
        d = pl.DataFrame([content.fill_null(0).filter(live).alias("content"), fmt.filter(live).alias("format")])
        return pl.DataFrame([path, d.select(kind.alias("kind")).get_column("kind"), size])
    except Exception:
        return None


# -- compact sets of paths -----------------------------------------------------------------------------

KEY_SEED = 0x1CEC7


class PathKeys:
    """A set of paths as sorted 64-bit keys (polars' hash of the path, one seed): 8 bytes a path
    instead of ~150, so the millions of files of a large table fit in a few tens of MB.

    Membership is exact for "no": a path whose key is absent is not in the set. A path whose key
    is present is in the set, or (with a probability of about n / 2**64 for n paths: 1 in 10**13
    for two million) shares its key with one that is. Callers use it only where a wrong "yes"
    is the safe answer: a file taken as reachable is kept, never deleted."""

    def __init__(self, keys: Any = None):
        import numpy as np

        self.keys = np.unique(keys) if keys is not None and len(keys) else np.zeros(0, dtype=np.uint64)

    @classmethod
    def of(cls, chunks: Iterable[Any]) -> "PathKeys":
        """From polars Series (or lists) of paths."""
        import numpy as np

        parts = [key_array(c) for c in chunks]
        return cls(np.concatenate(parts) if parts else None)

    def __len__(self) -> int:
        return len(self.keys)

    def contains(self, paths: Any) -> Any:
        """A numpy bool array: whether each path (a polars Series or a list) is in the set."""
        return self.contains_keys(key_array(paths))

    def contains_keys(self, k: Any) -> Any:
        """:meth:`contains` of the paths whose keys (:func:`key_array`) are ``k``."""
        import numpy as np

        if not len(self.keys):
            return np.zeros(len(k), dtype=bool)
        i = np.searchsorted(self.keys, k)
        i[i == len(self.keys)] = 0
        return self.keys[i] == k

    def __contains__(self, path: str) -> bool:
        return bool(self.contains([path])[0])


def key_array(paths: Any) -> Any:
    import polars as pl

    s = paths if isinstance(paths, pl.Series) else pl.Series("path", list(paths), dtype=pl.String)
    return s.hash(seed=KEY_SEED).to_numpy()
