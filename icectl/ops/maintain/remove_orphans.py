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
from icectl.io import FileIO, FileInfo, join, local_file_info, local_path, scheme_of
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
    (:func:`canonical_path` of :func:`split_path`): tens of MB for millions of files instead of
    GB of strings. For the prefix-mismatch check, the path alone (without scheme and authority)
    is also keyed for the files written other than under the location as it is spelt when
    normalised (the few others); the location's own are found by their full key. A set for ``in``,
    ``<=`` and ``&`` (it cannot list its paths). "Not reachable" is exact; "reachable" may, with
    a probability of about 1 in 10**13 a file, be a key collision, which keeps the file (see
    :class:`icectl.table.reachability.PathKeys`)."""

    def __init__(self, location: str | None):
        self.location = location
        self.home = split_path(location.rstrip("/") + "/")[:2] if location else None
        self.full = PathKeys()
        self.path_keys = _np().zeros(0, dtype=_np().uint64)
        self.path_owner = _np().zeros(0, dtype=_np().uint32)  # index into self.owners
        self.owners: list[tuple[str, str]] = []
        self._pending: list[Any] = []
        self._pending_paths: list[tuple[Any, Any]] = []
        self._rows = 0

    @classmethod
    def of_paths(cls, paths: Iterable[str], location: str | None = None) -> "ReachableIndex":
        index = cls(location)
        index.add(list(paths))
        return index.done()

    def add(self, paths: Any) -> None:
        """Add a chunk of paths (a polars Series or a list)."""
        keys, split = path_keys(paths, self.location)
        if not len(keys):
            return
        self._pending.append(keys)
        if len(split):
            codes = {sa: i for i, sa in enumerate(self.owners)}
            for sa in split.select("scheme", "auth").unique(maintain_order=True).rows():
                if sa not in codes:
                    codes[sa] = len(self.owners)
                    self.owners.append(sa)
            owner = split.select(_owner_expr(codes).alias("o")).get_column("o").to_numpy()
            self._pending_paths.append((key_array(split.get_column("path")), owner))
        self._rows += len(keys)
        if self._rows > 4_000_000:
            self.done()

    def done(self) -> "ReachableIndex":
        np = _np()
        if self._pending:
            self.full = PathKeys(np.concatenate([self.full.keys] + self._pending))
        if self._pending_paths:
            keys = np.concatenate([self.path_keys] + [p[0] for p in self._pending_paths])
            owner = np.concatenate([self.path_owner] + [p[1].astype(np.uint32) for p in self._pending_paths])
            order = np.lexsort((owner, keys))
            keys, owner = keys[order], owner[order]
            keep = np.ones(len(keys), dtype=bool)
            keep[1:] = (keys[1:] != keys[:-1]) | (owner[1:] != owner[:-1])
            self.path_keys, self.path_owner = keys[keep], owner[keep]
        self._pending, self._pending_paths, self._rows = [], [], 0
        return self

    def contains(self, paths: Any) -> Any:
        """A numpy bool array: whether each path (a polars Series or a list) is reachable."""
        return self.full.contains_keys(path_keys(paths, self.location)[0])

    def owner_of(self, path_part: str) -> tuple[str, str] | None:
        """The (scheme, authority) of a reachable file with this path part, if any."""
        return self.owners_of([path_part])[0]

    def owners_of(self, path_parts: list[str]) -> list[tuple[str, str] | None]:
        """:meth:`owner_of` of many path parts at once (a key costs ~1 ms alone): the location's
        own (scheme, authority) first, then any other."""
        np = _np()
        if not path_parts:
            return []
        out: list[tuple[str, str] | None] = [None] * len(path_parts)
        if self.home is not None:
            scheme, auth = self.home
            home = self.full.contains([canonical_path(scheme, auth, p) for p in path_parts])
            for j in np.flatnonzero(home):
                out[j] = self.home
        if len(self.path_keys):
            k = key_array(path_parts)
            i = np.searchsorted(self.path_keys, k)
            i[i == len(self.path_keys)] = 0
            hit = self.path_keys[i] == k
            for j in np.flatnonzero(hit):
                if out[j] is None:
                    out[j] = self.owners[int(self.path_owner[i[j]])]
        return out

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and bool(self.contains([path])[0])

    def __len__(self) -> int:
        return len(self.full)

    def __iter__(self) -> Iterator[str]:
        raise TypeError("a ReachableIndex holds the keys of paths, not the paths")

    @classmethod
    def _from_iterable(cls, it: Iterable[str]) -> set[str]:
        return set(it)


def canonical_path(scheme: str, auth: str, path: str) -> str:
    """One string for a normalised (scheme, authority, path) (:func:`split_path`): the path of
    a local file, ``scheme://authority/path`` otherwise; a path written under a location spelt so
    (``/x/...``, ``s3://b/x/...``: the usual case) is its own canonical path."""
    return path if scheme == "file" else f"{scheme}://{auth}{path}"


def canonical_prefix(location: str) -> str:
    """The canonical path of ``location`` with a ``/`` after it."""
    scheme, auth, head = split_path(location.rstrip("/") + "/")
    return canonical_path(scheme, auth, "" if head == "/" else head) + "/"


def path_keys(paths: Any, location: str | None) -> tuple[Any, Any]:
    """(keys, split): the 64-bit key of each path's :func:`canonical_path`, and the
    normalised (scheme, auth, path) of the paths that are not their own canonical path (not
    under the location as it is spelt when normalised, a ``?`` or ``#`` in them, a ``/`` at the
    end) as a polars DataFrame. Millions of paths written under the location are keyed as they
    are, one hash each; the others are split by :func:`normalized`."""
    import polars as pl

    np = _np()
    s = paths if isinstance(paths, pl.Series) else pl.Series("path", list(paths), dtype=pl.String)
    keys = key_array(s)
    if location:
        cp = canonical_prefix(location)
        plain = s.str.starts_with(cp) & ~s.str.contains_any(["?", "#"]) & ~s.str.ends_with("/")
        odd = np.flatnonzero(~plain.fill_null(False).to_numpy())
    else:
        odd = np.arange(len(s))
    if not len(odd):
        return keys, pl.DataFrame()
    split = normalized(s.gather(odd), location)
    canon = split.select(pl.when(pl.col("scheme") == "file").then(pl.col("path"))
                         .otherwise(pl.concat_str("scheme", pl.lit("://"), "auth", "path")).alias("k"))
    keys = keys.copy() if not keys.flags.writeable else keys
    keys[odd] = key_array(canon.get_column("k"))
    return keys, split


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


def _listing(io: Any, root: str) -> Iterator[tuple[list[str], list[FileInfo] | None]]:
    """The files under ``root`` in batches of about LISTING_BATCH paths, with their FileInfos
    when the listing gave them (an object store) or None (a local folder: its files' sizes and
    times are asked for only where needed, :func:`icectl.io.local_file_info`)."""
    source = io.list_paths(root, batch=LISTING_BATCH) if isinstance(io, FileIO) else _info_batches(io.list_files(root))
    paths: list[str] = []
    infos: list[FileInfo] = []
    with_infos = False
    for p, i in source:
        if not p:
            continue
        if paths and (i is not None) != with_infos:
            yield paths, infos if with_infos else None
            paths, infos = [], []
        with_infos = i is not None
        paths.extend(p)
        if i is not None:
            infos.extend(i)
        if len(paths) >= LISTING_BATCH:
            yield paths, infos if with_infos else None
            paths, infos = [], []
    if paths:
        yield paths, infos if with_infos else None


def _info_batches(files: Iterable[FileInfo]) -> Iterator[tuple[list[str], list[FileInfo]]]:
    it = iter(files)
    while True:
        chunk = [f for _, f in zip(range(LISTING_BATCH), it)]
        if not chunk:
            return
        yield [f.path for f in chunk], chunk


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
    # Quarantined files are the table's no more than orphans are, and never listed as orphans.
    quarantine = tuple(q.rstrip("/") + "/" for q in quarantine_roots(table))
    home = canonical_prefix(md.location)
    for paths, infos in _listing(table.io, root):
        if quarantine:
            keep = [i for i, p in enumerate(paths) if not p.startswith(quarantine)]
            paths = [paths[i] for i in keep]
            infos = [infos[i] for i in keep] if infos is not None else None
            if not paths:
                continue
        s = pl.Series("path", paths, dtype=pl.String)
        keys, split = path_keys(s, md.location)
        reached = reachable.full.contains_keys(keys)
        # A name starting with . or _ below the location: a hidden file, unless _key=value of a
        # partition (decided below for these few, and for the paths not written under the location).
        maybe_hidden = s.str.slice(len(home) - 1).str.contains("/[._]").fill_null(True).to_numpy()
        if len(split):
            maybe_hidden = maybe_hidden.copy() if not maybe_hidden.flags.writeable else maybe_hidden
            maybe_hidden[~s.str.starts_with(home).fill_null(False).to_numpy()] = True
        listed = len(paths)
        unreached: list[tuple[FileInfo, str]] = []
        for i in _np().flatnonzero(maybe_hidden | ~reached):
            sch, auth, p = split_path(paths[i])
            rel_parts = p[len(t_path):].strip("/").split("/")
            if maybe_hidden[i] and _hidden(rel_parts, partition_names):
                listed -= 1
                continue
            if not reached[i]:
                f = infos[i] if infos is not None else local_file_info(paths[i])
                if f is None:  # gone since it was listed: not listed
                    listed -= 1
                    continue
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
        plan.listed += listed
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
    reached = reachable.contains([f.path for f in plan.orphans])
    unreached = [f for f, r in zip(plan.orphans, reached) if not r]
    owners = reachable.owners_of([split_path(f.path)[2] for f in unreached])
    return [f for f, owner in zip(unreached, owners) if owner is None or prefix_mismatch == "delete"]

