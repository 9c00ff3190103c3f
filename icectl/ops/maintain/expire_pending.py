"""The deletes an expiry still owes, kept at the table location so that a killed run can be finished.

An expiry of a neglected table (100,000 snapshots) deletes hundreds of thousands of files after its
commit. Before that commit, :func:`write_pending` records every file the commit will unreference in
``metadata/_icectl-expire-pending.json`` (hidden: orphan removal, icectl's and Iceberg Java's, skips
names starting with ``_``); when every delete is done the record goes. A run killed anywhere in
between leaves a valid table (the commit either happened or not, and deletes only follow it) and
the record; the next ``expire`` (or ``maintain``'s expire step) finds it and, in
:func:`finish_pending`, deletes only the recorded files that the table's *current* metadata reaches
in no way: not a snapshot's manifest list, manifest or live content file, not a statistics file,
not the current metadata file or one in its metadata log, and only inside the table location (the
path guard asks again at each delete). So a record written before a commit that then failed deletes
nothing, and a file a writer added back since is kept.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Callable

from icectl.errors import IcectlError, NotFoundError
from icectl.io import join, normalize_location
from icectl.io.safety import table_guard
from icectl.table.listing import bounded_map
from icectl.table.loaded import Table
from icectl.table.reachability import PathKeys, live_content, metadata_reach

PENDING_NAME = "_icectl-expire-pending.json"
FORMAT = "icectl-expire-pending/1"

Progress = Callable[[str, int, int], None]  # (phase, done, total)


QUIET_BELOW = 1000  # a phase of fewer steps says nothing: it takes seconds


def progress_lines(say: Callable[[str], None], *, quiet_below: int = QUIET_BELOW) -> Progress:
    """A :data:`Progress` that says ``phase: done/total`` when a phase of ``quiet_below`` steps or
    more starts, at each tenth and when it ends (a log line, not one per manifest)."""
    tenths: dict[str, int] = {}

    def progress(phase: str, done: int, total: int) -> None:
        if total < quiet_below:
            return
        tenth = 10 * done // total
        if tenths.get(phase, -1) < tenth:
            tenths[phase] = tenth
            say(f"{phase}: {done}/{total}")
    return progress


@dataclass
class FileToDelete:
    path: str
    kind: str
    size: int | None


Deleter = Callable[[list[FileToDelete]], "tuple[list[FileToDelete], list[tuple[str, str]]]"]


@dataclass
class PendingDeletes:
    path: str
    base_metadata_location: str  # the metadata the expiry that wrote it planned against
    written_ms: int
    files: list[FileToDelete]
    unreadable: str | None = None  # cut short by a kill while it was written: its files are left to remove-orphans


@dataclass
class FinishedPending:
    """What :func:`finish_pending` did with an earlier expiry's record."""
    pending: int = 0
    deleted: list[FileToDelete] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # the current metadata reaches them again (or still)


def pending_path(table: Table) -> str | None:
    return join(table.location, "metadata", PENDING_NAME) if table.location else None


def write_pending(table: Table, base_metadata_location: str, files: list[FileToDelete]) -> None:
    """Record ``files`` (all inside the table location) as owed by an expiry planned on ``base_metadata_location``."""
    path = pending_path(table)
    if path is None:
        return
    doc = {"format": FORMAT, "table": table.name, "base_metadata_location": base_metadata_location,
           "written_ms": int(time.time() * 1000), "files": [[f.path, f.kind, f.size] for f in files]}
    table.io.write(path, json.dumps(doc, separators=(",", ":")).encode(), overwrite=True)


def read_pending(table: Table) -> PendingDeletes | None:
    path = pending_path(table)
    if path is None:
        return None
    try:
        raw = table.io.read(path)
    except NotFoundError:
        return None
    try:
        doc = json.loads(raw)
    except ValueError as e:
        return PendingDeletes(path, "", 0, [], unreadable=f"{path} is not whole JSON ({e})")
    try:
        if doc.get("format") != FORMAT:
            raise ValueError(f"format {doc.get('format')!r}")
        files = [FileToDelete(str(p), str(k), None if s is None else int(s)) for p, k, s in doc["files"]]
        return PendingDeletes(path, str(doc["base_metadata_location"]), int(doc["written_ms"]), files)
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise IcectlError(f"cannot read the pending deletes of an earlier expire in {path}: {e}",
                          hint="look at the file; remove it to forget those deletes (remove-orphans finds "
                          "the files later)") from e


def clear_pending(table: Table) -> None:
    path = pending_path(table)
    if path is not None:
        try:
            table.io.delete_own_file(path)
        except NotFoundError:
            pass


def still_unreachable(table: Table, files: list[FileToDelete], *,
                      progress: Progress | None = None) -> tuple[list[FileToDelete], list[str]]:
    """(the ``files`` that nothing the current metadata of ``table`` reaches, the paths it does
    reach). Content files are matched by 64-bit keys (:class:`PathKeys`): a key collision keeps a file."""
    md = table.metadata
    lists, manifests = metadata_reach(table, list(md.snapshots))
    valid = set(lists) | set(manifests)
    valid |= {table.resolve(st.statistics_path) for st in md.statistics + md.partition_statistics}
    valid |= {table.metadata_location} | {e.metadata_file for e in md.metadata_log}
    valid = {normalize_location(p) for p in valid}
    todo = list(manifests.values())
    done = [0]

    def paths(m):
        out = live_content(table, m).get_column("path")
        done[0] += 1
        if progress is not None:
            progress("checking the pending deletes against the table", done[0], len(todo))
        return out

    content = PathKeys.of(bounded_map(paths, todo))
    reached = content.contains([f.path for f in files]) if files else []
    ok, kept = [], []
    for f, hit in zip(files, reached):
        if hit or normalize_location(f.path) in valid:
            kept.append(f.path)
        else:
            ok.append(f)
    return ok, kept


def finish_pending(table: Table, pending: PendingDeletes, *, delete: Deleter,
                   progress: Progress | None = None) -> FinishedPending:
    """Delete what ``pending`` records and the current metadata does not reach; then forget the
    record (kept, with only the files that failed to delete, when some did)."""
    root = normalize_location(table.location or "") + "/"
    inside: list[FileToDelete] = []
    outside: list[str] = []  # never deleted: reported as kept
    for f in pending.files:
        if table.location and normalize_location(f.path).startswith(root):
            inside.append(f)
        else:
            outside.append(f.path)
    ok, kept = still_unreachable(table, inside, progress=progress)
    guard = table_guard(table.io, table.location)
    refused = [(f.path, why) for f in ok if (why := guard.refusal(f.path)) is not None]
    ok = [f for f in ok if guard.refusal(f.path) is None]
    deleted, failed = delete(ok)
    gone = {p for p, why in failed if why == "already gone"}  # deleted by the run that was killed
    failed = [(p, why) for p, why in failed if p not in gone] + [(p, why) for p, why in refused]
    deleted += [f for f in ok if f.path in gone]
    if failed:
        by_path = {f.path: f for f in pending.files}
        write_pending(table, pending.base_metadata_location, [by_path[p] for p, _ in failed if p in by_path])
    else:
        clear_pending(table)
    return FinishedPending(len(pending.files), deleted, failed, kept + outside)


__all__ = ["PENDING_NAME", "FileToDelete", "FinishedPending", "PendingDeletes", "clear_pending", "finish_pending", "pending_path", "progress_lines",
           "read_pending", "still_unreachable", "write_pending"]
