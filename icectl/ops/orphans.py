"""Orphan files: files under the table location that nothing reaches, as Iceberg Java's
DeleteOrphanFilesSparkAction finds them.

Reachable: every content file, manifest and manifest list of every snapshot of the current
metadata; the current metadata file and every metadata file in its metadata log; statistics and partition-statistics files; and
``version-hint.text``. Hidden files and folders (a name starting with ``.`` or ``_``, except a
partition folder such as ``_key=value``) are never listed, as Java's hidden-path filter does.

Paths are compared after normalising scheme and authority (``s3a://`` and ``s3n://`` are
``s3://``; ``file:/x`` is ``/x``). A listed file whose path matches a reachable file except for
its scheme or authority is a *prefix mismatch*: an error by default, never a silent delete.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from icectl.table.reachability import reachable_files
from icectl.table.loaded import Table
from icectl.errors import IcectlError, UsageError
from icectl.io import FileInfo, join, local_path, scheme_of

DEFAULT_OLDER_THAN_MS = 3 * 24 * 60 * 60 * 1000
_EQUAL_SCHEMES = {"s3a": "s3", "s3n": "s3", "file": "file"}


class PrefixMismatchError(IcectlError):
    """Listed files match reachable files only after ignoring scheme or authority."""

    from icectl.errors import ExitCode as _E

    exit_code = _E.REFUSED


@dataclass
class OrphanPlan:
    table: str
    location: str
    older_than_ms: int
    listed: int
    orphans: list[FileInfo] = field(default_factory=list)
    too_new: int = 0
    prefix_mismatches: list[tuple[str, str]] = field(default_factory=list)  # (listed, reachable)


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


def reachable_metadata_files(table: Table) -> set[str]:
    """The current metadata file and the files its metadata log names (not recursively: an old
    file that fell off the log is an orphan, as Iceberg Java's remove_orphan_files counts it)."""
    out = {table.metadata_location}
    for e in table.metadata.metadata_log:
        out.add(table.resolve(e.metadata_file))
    return out


def all_reachable(table: Table) -> set[str]:
    md = table.metadata
    reach = reachable_files(table, md, md.snapshots)
    paths = set(reach.paths())
    for st in md.statistics + md.partition_statistics:
        paths.add(table.resolve(st.statistics_path))
    paths |= reachable_metadata_files(table)
    if md.location:
        paths.add(join(md.location, "metadata", "version-hint.text"))
    return paths


def plan_orphans(table: Table, *, older_than_ms: int | None = None, location: str | None = None,
                 prefix_mismatch: str = "error", now_ms: int | None = None) -> OrphanPlan:
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
    by_full = {split_path(p) for p in reachable}
    by_path: dict[str, tuple[str, str]] = {}
    for sch, auth, p in by_full:
        by_path.setdefault(p, (sch, auth))
    partition_names = {f.name for s in md.partition_specs for f in s.fields}
    plan = OrphanPlan(table.name, root, cutoff, 0)
    for f in table.io.list_files(root):
        sch, auth, p = split_path(f.path)
        rel = p[len(t_path):].strip("/").split("/")
        if _hidden(rel, partition_names):
            continue
        plan.listed += 1
        if (sch, auth, p) in by_full:
            continue
        if p in by_path:
            rs, ra = by_path[p]
            plan.prefix_mismatches.append((f.path, f"{rs}://{ra}{p}"))
            if prefix_mismatch != "delete":
                continue
        if f.modified_ms is not None and f.modified_ms >= cutoff:
            plan.too_new += 1
            continue
        plan.orphans.append(f)
    plan.orphans.sort(key=lambda f: f.path)
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
    by_full = {split_path(p) for p in all_reachable(fresh)}
    by_path = {p for _, _, p in by_full}
    out = []
    for f in plan.orphans:
        key = split_path(f.path)
        if key in by_full or (key[2] in by_path and prefix_mismatch != "delete"):
            continue
        out.append(f)
    return out

