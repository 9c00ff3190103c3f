"""Orphan files: files under the table location that nothing reaches, as Iceberg Java's
DeleteOrphanFilesSparkAction finds them.

Reachable: every content file, manifest and manifest list of every snapshot of the current
metadata; the current metadata file and every metadata file in its metadata log; statistics and partition-statistics files; and
``version-hint.text``. Hidden files and folders (a name starting with ``.`` or ``_``, except a
partition folder such as ``_key=value``) are never listed, as Java's hidden-path filter does.

Symbolic links are never followed (:meth:`icectl.io.FileIO.list_files` lists a link as itself):
a link to a folder outside would otherwise bring that folder's files in as orphans. A link that
nothing reaches is *skipped for safety* and reported, with its target; with ``remove_symlinks`` it
is an orphan like any other file and goes as a link, never its target. Every orphan is asked of
the table's :class:`icectl.io.safety.PathGuard` while planning, and again when deleted: one it
refuses (its real location outside the table location, a mount point in between) is skipped for
safety with the guard's reason.

Paths are compared after normalising scheme and authority (``s3a://`` and ``s3n://`` are
``s3://``; ``file:/x`` is ``/x``). A listed file whose path matches a reachable file except for
its scheme or authority is a *prefix mismatch*: an error by default, never a silent delete.
"""
from __future__ import annotations

import json
import time
from collections.abc import Set as AbcSet
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator
from urllib.parse import urlsplit

from icectl.table.reachability import PathKeys, key_array, live_content_batches, metadata_reach
from icectl.table.loaded import Table
from icectl.errors import ExitCode, IcectlError, InvalidMetadataError, NotFoundError, UsageError
from icectl.io import FileInfo, join, local_path, scheme_of
from icectl.io.safety import table_guard

DEFAULT_OLDER_THAN_MS = 3 * 24 * 60 * 60 * 1000
# At the table location: the quarantine folders ``remove-orphans --quarantine`` moved files to
# (:mod:`icectl.ops.maintain.quarantine`), never listed here. Hidden, so never an orphan itself.
POINTER = ".icectl-quarantine.json"
_EQUAL_SCHEMES = {"s3a": "s3", "s3n": "s3", "file": "file"}


class PrefixMismatchError(IcectlError):
    """Listed files match reachable files only after ignoring scheme or authority."""

    exit_code = ExitCode.REFUSED


@dataclass
class OrphanPlan:
    table: str
    location: str
    older_than_ms: int
    listed: int
    orphans: list[FileInfo] = field(default_factory=list)
    too_new: int = 0
    prefix_mismatches: list[tuple[str, str]] = field(default_factory=list)  # (listed, reachable)
    skipped_for_safety: list[tuple[str, str]] = field(default_factory=list)  # (path, why), never deleted
    remove_symlinks: bool = False  # orphan symbolic links are planned (and removed as links)


def split_path(path: str) -> tuple[str, str, str]:
    """(scheme, authority, path) with equal schemes folded; local paths get scheme ``file``."""
    s = scheme_of(path)
    if s == "file":
        return "file", "", local_path(path).rstrip("/") or "/"
    u = urlsplit(path)
    return _EQUAL_SCHEMES.get(s, s), u.netloc, u.path.rstrip("/")


def _hidden(rel_parts: list[str], partition_names: set[str]) -> bool:
    for part in rel_parts:
        if part.startswith((".", "_")):
            if "=" in part and part.split("=", 1)[0] in partition_names:
                continue
            return True
    return False


def quarantine_roots(table: Table) -> list[str]:
    """The quarantine folders recorded at the table location (none when there is no record)."""
    loc = table.metadata.location
    if not loc:
        return []
    path = join(loc, POINTER)
    try:
        doc = json.loads(table.io.read(path))
    except NotFoundError:
        return []
    except ValueError as e:
        raise InvalidMetadataError(f"cannot read {path}: {e}") from None
    return [str(r) for r in doc.get("quarantine", [])] if isinstance(doc, dict) else []


def reachable_metadata_files(table: Table) -> set[str]:
    """The current metadata file and the files its metadata log names (not recursively: an old
    file that fell off the log is an orphan, as Iceberg Java's remove_orphan_files counts it)."""
    out = {table.metadata_location}
    for e in table.metadata.metadata_log:
        out.add(table.resolve(e.metadata_file))
    return out


class ReachableIndex(AbcSet):
    """The reachable files of a table as 64-bit keys of their normalised paths
    (:func:`split_path`), and of their paths alone (with their scheme and authority, for the
    prefix-mismatch check): tens of MB for millions of files instead of GB of strings. A set for
    ``in``, ``<=`` and ``&`` (it cannot list its paths). "Not reachable" is exact; "reachable"
    may, with a probability of about 1 in 10**13 a file, be a key collision, which keeps the file
    (see :class:`icectl.table.reachability.PathKeys`)."""

    def __init__(self, location: str | None):
        self.location = location
        self.full = PathKeys()
        self.path_keys = _np().zeros(0, dtype=_np().uint64)
        self.path_owner = _np().zeros(0, dtype=_np().uint32)  # index into self.owners
        self.owners: list[tuple[str, str]] = []
        self._pending: list[tuple[Any, Any, Any]] = []
        self._rows = 0

    @classmethod
    def of_paths(cls, paths: Iterable[str], location: str | None = None) -> "ReachableIndex":
        index = cls(location)
        index.add(list(paths))
        return index.done()

    def add(self, paths: Any) -> None:
        """Add a chunk of paths (a polars Series or a list)."""
        np = _np()
        frame = normalized(paths, self.location)
        if not len(frame):
            return
        codes = {sa: i for i, sa in enumerate(self.owners)}
        owner = []
        for sa in frame.select("scheme", "auth").unique(maintain_order=True).rows():
            if sa not in codes:
                codes[sa] = len(self.owners)
                self.owners.append(sa)
        owner = frame.select(_owner_expr(codes).alias("o")).get_column("o").to_numpy()
        self._pending.append((key_array(full_key(frame)), key_array(frame.get_column("path")), owner))
        self._rows += len(frame)
        if self._rows > 4_000_000:
            self.done()
        del np

    def done(self) -> "ReachableIndex":
        np = _np()
        if not self._pending:
            return self
        full = np.concatenate([self.full.keys] + [p[0] for p in self._pending])
        self.full = PathKeys(full)
        keys = np.concatenate([self.path_keys] + [p[1] for p in self._pending])
        owner = np.concatenate([self.path_owner] + [p[2].astype(np.uint32) for p in self._pending])
        order = np.lexsort((owner, keys))
        keys, owner = keys[order], owner[order]
        keep = np.ones(len(keys), dtype=bool)
        keep[1:] = (keys[1:] != keys[:-1]) | (owner[1:] != owner[:-1])
        self.path_keys, self.path_owner = keys[keep], owner[keep]
        self._pending, self._rows = [], 0
        return self

    def owner_of(self, path_part: str) -> tuple[str, str] | None:
        """The (scheme, authority) of a reachable file with this path part, if any."""
        return self.owners_of([path_part])[0]

    def owners_of(self, path_parts: list[str]) -> list[tuple[str, str] | None]:
        """:meth:`owner_of` of many path parts at once (a key costs ~1 ms alone)."""
        np = _np()
        if not path_parts:
            return []
        k = key_array(path_parts)
        if not len(self.path_keys):
            return [None] * len(path_parts)
        i = np.searchsorted(self.path_keys, k)
        i[i == len(self.path_keys)] = 0
        hit = self.path_keys[i] == k
        return [self.owners[int(self.path_owner[j])] if h else None for j, h in zip(i, hit)]

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and bool(self.full.contains(full_key(normalized([path], self.location)))[0])

    def __len__(self) -> int:
        return len(self.full)

    def __iter__(self) -> Iterator[str]:
        raise TypeError("a ReachableIndex holds the keys of paths, not the paths")

    @classmethod
    def _from_iterable(cls, it: Iterable[str]) -> set[str]:
        return set(it)


def _np() -> Any:
    import numpy

    return numpy


def _owner_expr(codes: dict[tuple[str, str], int]) -> Any:
    import polars as pl

    expr = pl.lit(0, dtype=pl.UInt32)
    for (scheme, auth), i in codes.items():
        expr = pl.when((pl.col("scheme") == scheme) & (pl.col("auth") == auth)).then(pl.lit(i, dtype=pl.UInt32)) \
            .otherwise(expr)
    return expr


def normalized(paths: Any, location: str | None) -> Any:
    """:func:`split_path` of each path, as a polars DataFrame (scheme, auth, path). Paths under
    ``location`` (as written, the usual case: millions of them) are split as columns; any other
    path, or one with ``?`` or ``#`` after the location (which URL parsing treats specially),
    by :func:`split_path` itself."""
    import polars as pl

    s = paths if isinstance(paths, pl.Series) else pl.Series("path", list(paths), dtype=pl.String)
    frame = pl.DataFrame([s.alias("path")]).with_row_index("_i")
    schema = {"_i": pl.UInt32, "scheme": pl.String, "auth": pl.String, "path": pl.String}
    if location:
        prefix = location.rstrip("/") + "/"
        scheme, auth, head = split_path(prefix)
        head = "" if head == "/" else head
        rest = pl.col("path").str.slice(len(prefix))
        fast = pl.col("path").str.starts_with(prefix) & ~rest.str.contains(r"[?#]")
        quick = frame.filter(fast).select(
            "_i", pl.lit(scheme).alias("scheme"), pl.lit(auth).alias("auth"),
            (pl.lit(head + "/") + rest.str.strip_chars_end("/")).alias("path"))
        slow = frame.filter(~fast)
    else:
        quick, slow = frame.clear().select("_i", pl.lit("").alias("scheme"), pl.lit("").alias("auth"), "path"), frame
    if not len(slow):
        return quick.drop("_i")
    split = pl.DataFrame([(i, *split_path(p)) for i, p in slow.iter_rows()], schema=schema, orient="row")
    return pl.concat([quick.cast(schema), split]).sort("_i").drop("_i")


def full_key(frame: Any) -> Any:
    import polars as pl

    return frame.select(pl.concat_str("scheme", "auth", "path", separator="\x1f").alias("k")).get_column("k")


REACHABLE_BATCH = 100_000


def all_reachable(table: Table) -> ReachableIndex:
    """Every file a snapshot of the table reaches (content files, manifests, manifest lists,
    statistics), the metadata files, and ``version-hint.text``, as a :class:`ReachableIndex`:
    each manifest is read, keyed and dropped, a few at a time."""
    import polars as pl

    md = table.metadata
    index = ReachableIndex(md.location)
    lists, manifests = metadata_reach(table, list(md.snapshots))
    others = lists + list(manifests)
    others += [table.resolve(st.statistics_path) for st in md.statistics + md.partition_statistics]
    others += sorted(reachable_metadata_files(table))
    if md.location:
        others.append(join(md.location, "metadata", "version-hint.text"))
    index.add(pl.Series("path", others, dtype=pl.String))
    batch: list[Any] = []
    rows = 0
    for frame in live_content_batches(table, list(manifests.values())):
        paths = frame.get_column("path")
        # Keyed in batches: each add costs a few polars queries whatever its size, and its string
        # columns (the paths split and joined again) are the command's peak: 500,000 paths a batch
        # peaked at 905 MB at 10x the bench, 100,000 at 660 MB for the same time.
        batch.append(paths)
        rows += len(paths)
        if rows >= REACHABLE_BATCH:
            index.add(pl.concat(batch))
            batch, rows = [], 0
    if batch:
        index.add(pl.concat(batch))
    return index.done()


LISTING_BATCH = 100_000


def plan_orphans(table: Table, *, older_than_ms: int | None = None, location: str | None = None,
                 prefix_mismatch: str = "error", now_ms: int | None = None,
                 remove_symlinks: bool = False) -> OrphanPlan:
    import polars as pl

    md = table.metadata
    if not md.location:
        raise UsageError("the table has no location to list")
    now = now_ms if now_ms is not None else int(time.time() * 1000)
    cutoff = older_than_ms if older_than_ms is not None else now - DEFAULT_OLDER_THAN_MS
    root = location or md.location
    r_scheme, r_auth, r_path = split_path(root)
    t_scheme, t_auth, t_path = split_path(md.location)
    if (r_scheme, r_auth) != (t_scheme, t_auth) or not (r_path == t_path or r_path.startswith(t_path + "/")):
        raise UsageError(f"--location {root} is not inside the table location {md.location}")
    if prefix_mismatch not in ("error", "ignore", "delete"):
        raise UsageError("--prefix-mismatch must be error, ignore or delete")
    reachable = all_reachable(table)
    if not isinstance(reachable, ReachableIndex):
        reachable = ReachableIndex.of_paths(reachable, md.location)
    partition_names = {f.name for s in md.partition_specs for f in s.fields}
    plan = OrphanPlan(table.name, root, cutoff, 0, remove_symlinks=remove_symlinks)
    guard = table_guard(table.io, md.location, allow_symlinks=remove_symlinks)
    listing = iter(table.io.list_files(root))
    # Quarantined files are the table's no more than orphans are, and never listed as orphans.
    quarantine = tuple(q.rstrip("/") + "/" for q in quarantine_roots(table))
    while True:
        raw = [f for _, f in zip(range(LISTING_BATCH), listing)]
        if not raw:
            break
        batch = [f for f in raw if not f.path.startswith(quarantine)] if quarantine else raw
        if not batch:
            continue
        frame = normalized([f.path for f in batch], md.location)
        rel = pl.col("path").str.slice(len(t_path)).str.strip_chars("/")
        flags = frame.select(rel.str.contains(r"(^|/)[._]").alias("maybe_hidden"))
        maybe_hidden = flags.get_column("maybe_hidden").to_numpy()
        reached = reachable.full.contains(full_key(frame))
        unreached: list[tuple[FileInfo, str]] = []
        for i in _np().flatnonzero(maybe_hidden | ~reached):
            f = batch[i]
            sch, auth, p = split_path(f.path)
            rel_parts = p[len(t_path):].strip("/").split("/")
            if maybe_hidden[i] and _hidden(rel_parts, partition_names):
                plan.listed -= 1  # counted below with the batch
                continue
            if not reached[i]:
                unreached.append((f, p))
        for (f, p), owner in zip(unreached, reachable.owners_of([p for _, p in unreached])):
            if owner is not None:
                rs, ra = owner
                plan.prefix_mismatches.append((f.path, f"{rs}://{ra}{p}"))
                if prefix_mismatch != "delete":
                    continue
            if f.symlink is not None and not remove_symlinks:
                plan.skipped_for_safety.append((f.path, f"a symbolic link (to {f.symlink}): never followed; "
                                                        f"--remove-symlinks removes the link, never its target"))
                continue
            if f.modified_ms is not None and f.modified_ms >= cutoff:
                plan.too_new += 1
                continue
            # On an object store the listing itself is the location (no links, no mounts); the
            # guard still decides again when the file is deleted.
            why = guard.refusal(f.path) if guard.local else None
            if why is not None:
                plan.skipped_for_safety.append((f.path, why))
                continue
            plan.orphans.append(f)
        plan.listed += len(batch)
    plan.orphans.sort(key=lambda f: f.path)
    plan.skipped_for_safety.sort()
    if plan.prefix_mismatches and prefix_mismatch == "error":
        listed, reach = plan.prefix_mismatches[0]
        raise PrefixMismatchError(
            f"{len(plan.prefix_mismatches)} listed files match reachable files only after ignoring scheme or "
            f"authority (e.g. {listed} vs {reach}); refusing to decide which is an orphan",
            hint="--prefix-mismatch ignore keeps them; --prefix-mismatch delete treats them as orphans")
    return plan


def still_orphans(table: Table, plan: OrphanPlan, *, prefix_mismatch: str = "error") -> list[FileInfo]:
    """The planned orphans that the table's newest metadata still does not reach: checked right
    before deleting, since a commit after planning may have made a listed file reachable. When
    the table has not moved, the plan stands as it is; otherwise the reachable set is computed
    again from the new metadata (the listing is not repeated: a file written since is not in the
    plan anyway)."""
    fresh = table.refresh()
    if fresh.metadata_location == table.metadata_location:
        return list(plan.orphans)
    reachable = all_reachable(fresh)
    if not isinstance(reachable, ReachableIndex):
        reachable = ReachableIndex.of_paths(reachable, fresh.metadata.location)
    if not plan.orphans:
        return []
    frame = normalized([f.path for f in plan.orphans], fresh.metadata.location)
    reached = reachable.full.contains(full_key(frame))
    unreached = [f for f, r in zip(plan.orphans, reached) if not r]
    owners = reachable.owners_of([split_path(f.path)[2] for f in unreached])
    return [f for f, owner in zip(unreached, owners) if owner is None or prefix_mismatch == "delete"]

