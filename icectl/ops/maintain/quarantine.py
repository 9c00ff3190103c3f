"""Orphans moved to a quarantine folder first, put back, or purged later
(``remove-orphans --quarantine`` / ``--restore-quarantine`` / ``--purge-quarantine``).

A quarantine folder lies inside the table location but outside its ``data/`` and ``metadata/``
folders. Each run moves its orphans to ``<quarantine>/<run id>/<path under the location>`` and
writes, beside them, manifests ``manifest-NNNNN.jsonl``: one JSON object a line per file
(``original``, ``quarantine``, ``size``, ``mtime_ms``, ``moved_at_ms``, ``run_id``, ``state``).
The table location's ``.icectl-quarantine.json`` names every quarantine folder, so that orphan
listing (:func:`icectl.ops.maintain.remove_orphans.plan_orphans`) never lists what lies in one.

Crash safety: a batch's manifest is written (its entries ``moving``) before any of its files
moves and rewritten (``moved``) after; a restore marks its entries ``restoring`` before moving them
back. A local move is ``link`` then ``unlink``; an object store's a copy, then one batched delete.
So after a kill each file is at its original path, in quarantine with an entry, or (a copy whose
delete never came) at both; restore and purge settle each case: an entry whose file never left
is dropped, a copy beside an intact original is deleted, and a file that is back at its
original path and still in quarantine after a ``moved`` entry is a conflict, never overwritten.
Every move and delete goes through the table's :class:`icectl.io.safety.PathGuard`.
"""
from __future__ import annotations

import json
import re
import time
import uuid
from dataclasses import asdict, dataclass, field
from typing import Iterable

from icectl.errors import IcectlError, NotFoundError, UsageError
from icectl.io import FileInfo, FileIO, has_scheme, join
from icectl.io.safety import PathGuard, table_guard
from icectl.ops.maintain.remove_orphans import POINTER, quarantine_roots, split_path
from icectl.table.loaded import Table

BATCH = 1000  # files a manifest (one write before and one after the batch moves)
_MANIFEST = re.compile(r"manifest-\d{5}\.jsonl$")
SCANNED = ("data", "metadata")  # the folders whose files are the table's own


@dataclass
class QuarantineEntry:
    """One file in quarantine: where it was, where it is, and when it moved."""

    original: str
    quarantine: str
    size: int
    mtime_ms: int | None
    moved_at_ms: int
    run_id: str
    state: str = "moving"  # moving (written before the move), moved, restoring (before the move back)


@dataclass
class QuarantineOutcome:
    """What one quarantine, restore or purge did (or would do, in a dry run)."""

    root: str
    run_id: str | None
    files: list[QuarantineEntry] = field(default_factory=list)  # moved, restored or purged
    conflicts: list[tuple[str, str]] = field(default_factory=list)  # (path, why), left in quarantine
    failed: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    settled: int = 0  # restore: entries a kill left (a file that never moved, a copy beside its original), tidied


def quarantine_root(table: Table, prefix: str) -> str:
    """The quarantine folder ``prefix`` names for ``table`` (relative to the table location, or
    a full path inside it); UsageError for a folder outside the location, the location itself,
    or a folder inside or above its ``data/`` and ``metadata/`` folders (their files are listed
    as the table's own)."""
    loc = table.metadata.location
    if not loc:
        raise UsageError("the table has no location to quarantine files in")
    path = prefix.rstrip("/") if (has_scheme(prefix) or prefix.startswith("/")) else join(loc, prefix.strip("/"))
    scheme, auth, p = split_path(path)
    t_scheme, t_auth, t_path = split_path(loc)
    if (scheme, auth) != (t_scheme, t_auth) or not p.startswith(t_path.rstrip("/") + "/"):
        raise UsageError(f"--quarantine {prefix} is not inside the table location {loc}")
    rel = p[len(t_path.rstrip("/")) + 1:]
    if not rel or any(seg in ("", ".", "..") for seg in rel.split("/")):
        raise UsageError(f"--quarantine {prefix} must name a folder inside the table location {loc}")
    if rel.split("/")[0] in SCANNED:
        raise UsageError(f"--quarantine {prefix} is inside the table's {rel.split('/')[0]}/ folder",
                         hint="choose a folder beside them, e.g. --quarantine quarantine")
    return path


def _record_root(table: Table, root: str) -> None:
    roots = quarantine_roots(table)
    if root not in roots:
        table.io.write(join(table.metadata.location, POINTER),
                       json.dumps({"quarantine": roots + [root]}, indent=1).encode(), overwrite=True)


def _write_manifest(io: FileIO, path: str, entries: list[QuarantineEntry]) -> None:
    io.write(path, "".join(json.dumps(asdict(e)) + "\n" for e in entries).encode(), overwrite=True)


def _manifests(io: FileIO, root: str, run_id: str | None) -> list[str]:
    where = join(root, run_id) if run_id else root
    return sorted(f.path for f in io.list_files(where) if _MANIFEST.search(f.path))


def read_manifest(io: FileIO, path: str) -> list[QuarantineEntry]:
    try:
        return [QuarantineEntry(**json.loads(line)) for line in io.read(path).decode().splitlines() if line.strip()]
    except (ValueError, TypeError) as e:
        raise UsageError(f"cannot read the quarantine manifest {path}: {e}") from None


def quarantined(table: Table, root: str, run_id: str | None = None) -> list[tuple[str, list[QuarantineEntry]]]:
    """Each manifest under ``root`` (of one run, or all) with its entries."""
    return [(m, read_manifest(table.io, m)) for m in _manifests(table.io, root, run_id)]


def new_run_id(now_ms: int) -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now_ms / 1000)) + "-" + uuid.uuid4().hex[:8]


def quarantine_path(table: Table, root: str, run_id: str, original: str) -> str:
    _, _, t_path = split_path(table.metadata.location)
    rel = split_path(original)[2][len(t_path.rstrip("/")) + 1:]
    return join(root, run_id, rel)


def plan_quarantine(table: Table, orphans: Iterable[FileInfo], root: str, *, now_ms: int,
                    run_id: str | None = None) -> QuarantineOutcome:
    """The entries a quarantine of ``orphans`` would write (nothing moves)."""
    run = run_id or new_run_id(now_ms)
    files = [QuarantineEntry(f.path, quarantine_path(table, root, run, f.path), f.size, f.modified_ms, now_ms, run)
             for f in orphans]
    return QuarantineOutcome(root, run, files)


def apply_quarantine(table: Table, plan: QuarantineOutcome, *, batch: int | None = None,
                     guard: PathGuard | None = None) -> QuarantineOutcome:
    """Move the planned files, a batch at a time: its manifest first (``moving``), then the
    files, then the manifest again (``moved``; a file that did not move leaves it)."""
    guard = guard or table_guard(table.io, table.metadata.location)
    out = QuarantineOutcome(plan.root, plan.run_id)
    if not plan.files:
        return out
    _record_root(table, plan.root)
    batch = batch or BATCH
    for n, start in enumerate(range(0, len(plan.files), batch)):
        entries = plan.files[start:start + batch]
        manifest = join(plan.root, plan.run_id or "", f"manifest-{n:05d}.jsonl")
        _write_manifest(table.io, manifest, entries)
        failed = table.io.move_many([(e.original, e.quarantine) for e in entries], guard=guard)
        done = [e for e in entries if e.original not in failed]
        for e in done:
            e.state = "moved"
        # A failed move whose copy was made (its original's delete failed) keeps its entry, still
        # "moving": a restore deletes that copy, which is beside its intact original.
        halfway = [e for e in entries if e.original in failed and table.io.exists(e.quarantine)]
        _finish_manifest(table.io, manifest, done + halfway, guard)
        out.files += done
        out.failed += sorted(failed.items())
    return out


def _settle(io: FileIO, entries: list[QuarantineEntry]) -> dict[str, list[QuarantineEntry]]:
    """Entries by where their file is: ``quarantine`` only, ``original`` only (never moved, or
    already back), ``both``, or ``neither``."""
    out: dict[str, list[QuarantineEntry]] = {"quarantine": [], "original": [], "both": [], "neither": []}
    for e in entries:
        q, o = io.exists(e.quarantine), io.exists(e.original)
        out["both" if q and o else "quarantine" if q else "original" if o else "neither"].append(e)
    return out


def restore_quarantine(table: Table, root: str, *, run_id: str | None = None, dry_run: bool = False,
                       guard: PathGuard | None = None) -> QuarantineOutcome:
    """Put quarantined files back where they were. A path that exists again is never
    overwritten: it is a conflict, and its entry stays. An entry whose file never left (a kill
    before its move) is dropped; a copy beside its intact original (a kill between copy and
    delete, either way) is deleted."""
    io = table.io
    guard = guard or table_guard(io, table.metadata.location)
    out = QuarantineOutcome(root, run_id)
    for manifest, entries in quarantined(table, root, run_id):
        where = _settle(io, entries)
        keep: list[QuarantineEntry] = []
        stray = []
        for e in where["both"]:
            if e.state in ("moving", "restoring") and io.size(e.quarantine) == io.size(e.original):
                stray.append(e)
            else:
                keep.append(e)
                out.conflicts.append((e.original, f"exists again; its quarantined copy {e.quarantine} stays"))
        for e in where["neither"]:
            keep.append(e)
            out.conflicts.append((e.original, f"neither here nor in quarantine ({e.quarantine})"))
        movable = where["quarantine"]
        out.settled += len(where["original"]) + len(stray)
        if dry_run:
            out.files += movable
            continue
        if movable:
            for e in movable:
                e.state = "restoring"
            _write_manifest(io, manifest, keep + movable + stray)
        failed = io.move_many([(e.quarantine, e.original) for e in movable], guard=guard)
        if stray:
            failed.update(io.delete_many([e.quarantine for e in stray], guard=guard))
        for e in movable:
            if e.quarantine in failed:
                keep.append(e)
                out.failed.append((e.quarantine, failed[e.quarantine]))
            else:
                out.files.append(e)
        keep += [e for e in stray if e.quarantine in failed]
        _finish_manifest(io, manifest, keep, guard)  # where["original"]: never moved, or back; their entries go
    return out


def purge_quarantine(table: Table, root: str, *, moved_before_ms: int, run_id: str | None = None,
                     dry_run: bool = False, guard: PathGuard | None = None) -> QuarantineOutcome:
    """Delete for good the quarantined files moved before ``moved_before_ms``, and their entries
    (the files first: after a kill in between, an entry whose file is gone is dropped next time)."""
    io = table.io
    guard = guard or table_guard(io, table.metadata.location)
    out = QuarantineOutcome(root, run_id)
    for manifest, entries in quarantined(table, root, run_id):
        old = [e for e in entries if e.state == "moved" and e.moved_at_ms < moved_before_ms]
        keep = [e for e in entries if e not in old]
        if dry_run:
            out.files += old
            continue
        failed = {p: why for p, why in io.delete_many([e.quarantine for e in old], guard=guard).items()
                  if why != "already gone"}
        for e in old:
            if e.quarantine in failed:
                keep.append(e)
                out.failed.append((e.quarantine, failed[e.quarantine]))
            else:
                out.files.append(e)
        if len(keep) != len(entries):
            _finish_manifest(io, manifest, keep, guard)
    return out


def _finish_manifest(io: FileIO, manifest: str, keep: list[QuarantineEntry], guard: PathGuard) -> None:
    if keep:
        _write_manifest(io, manifest, keep)
        return
    try:
        io.delete(manifest, guard=guard)
    except NotFoundError:
        pass
