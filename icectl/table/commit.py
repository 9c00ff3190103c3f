"""The commit protocol: an operation turns the table it read into requirements and updates, its
catalog applies them, and on a conflict the operation reads the table again and plans again
(spec: "Commit Conflict Resolution and Retry"), within ``commit.retry.num-retries``.

Files an attempt wrote (manifests, manifest lists) that no committed metadata references are
removed when the attempt fails with a conflict, as Iceberg Java cleans up after a failed attempt.
A commit whose outcome is unknown removes nothing.
"""
from __future__ import annotations

import dataclasses
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from icectl.errors import CommitConflictError, CommitStateUnknownError, ConflictingChangeError, IcectlError
from icectl.io.safety import table_guard
from icectl.table.requirements import TableRequirement, requirements_for
from icectl.spec.metadata import SnapshotRef, TableMetadata
from icectl.table.updates import SetSnapshotRef, TableUpdate, updates_json

if TYPE_CHECKING:
    from icectl.table.loaded import Table

DEFAULT_RETRIES = 4


@dataclass
class TableCommit:
    """What an operation sends: updates, and the requirements that make them safe (derived from
    the base the updates were planned against, unless the operation gives its own)."""

    updates: list[TableUpdate]
    requirements: list[TableRequirement] | None = None


@dataclass
class Committed:
    """The outcome of a commit: the table after it, the table the last attempt planned against,
    and what was sent."""

    table: Table
    base: Table
    requirements: list[TableRequirement]
    updates: list[TableUpdate]
    attempts: int = 1
    deleted_metadata_files: list[str] = field(default_factory=list)

    def sent_json(self) -> dict[str, list]:
        return sent_json(self.base.metadata, self.requirements, self.updates)


def sent_json(base: TableMetadata, requirements: list[TableRequirement], updates: list[TableUpdate]) -> dict[str, list]:
    """``{"requirements": [...], "updates": [...]}`` as the REST spec's JSON (what ``-o json`` shows)."""
    return {"requirements": [r.to_json() for r in requirements], "updates": updates_json(updates, base.format_version)}


def snapshot_commit_json(base: TableMetadata, branch: str) -> dict[str, list]:
    """What a commit that adds a snapshot to ``branch`` will send, before the snapshot exists (a
    dry run of compact, rewrite-deletes or a cherry-pick that re-applies a snapshot): its exact
    requirements, and its updates with the snapshot still null."""
    head = base.refs.get(branch)
    reqs = requirements_for(base, [SetSnapshotRef(branch, SnapshotRef(0, "branch"))])
    return {"requirements": [r.to_json() for r in reqs],
            "updates": [{"action": "add-snapshot", "snapshot": None},
                        {"action": "set-snapshot-ref", "ref-name": branch, "snapshot-id": None, "type": "branch",
                         **({k: v for k, v in head.to_json().items() if k not in ("snapshot-id", "type")} if head else {})}]}


def commit_once(table: Table, updates: list[TableUpdate], *, requirements: list[TableRequirement] | None = None,
                now_ms: int | None = None) -> Table:
    """Send one commit built against ``table``; return the table after it."""
    return send(table, TableCommit(updates, requirements), now_ms=now_ms).table


def send(table: Table, change: TableCommit, *, now_ms: int | None = None) -> Committed:
    """Send one commit built against ``table`` (no retry)."""
    reqs = change.requirements if change.requirements is not None else requirements_for(table.metadata, change.updates)
    state = table.catalog.commit(table.identifier, reqs, change.updates, now_ms=now_ms,
                                 base_location=table.metadata_location)
    _ATTEMPT.files = [] if _ATTEMPT.files is not None else None  # now referenced: never cleaned up
    after = dataclasses.replace(table, metadata=state.metadata, metadata_location=state.metadata_location)
    return Committed(after, table, reqs, change.updates,
                     deleted_metadata_files=list(state.deleted_metadata_files))


Build = Callable[["Table"], "TableCommit | list[TableUpdate]"]


def commit_table(table: Table, build: Build, *, retries: int | None = None, now_ms: int | None = None) -> Committed:
    """Build the commit from the current table and send it; on a conflict read the table again,
    build again (``build`` re-validates what it needs) and retry, within
    ``commit.retry.num-retries`` (default 4). A :class:`ConflictingChangeError` is not retried:
    reading again cannot fix it."""
    attempts = retries if retries is not None else _retries(table)
    current = table
    for attempt in range(attempts + 1):
        _ATTEMPT.files = []
        try:
            try:
                change = build(current)
            except BaseException:
                _remove_attempt_files(current)  # nothing was sent
                raise
            if not isinstance(change, TableCommit):
                change = TableCommit(list(change))
            try:
                committed = send(current, change, now_ms=now_ms)
            except CommitConflictError as e:
                _remove_attempt_files(current)  # refused: the attempt's files are referenced by nothing
                if isinstance(e, ConflictingChangeError) or attempt >= attempts:
                    raise
                time.sleep(min(0.1 * 2 ** attempt, 2.0))
                current = current.refresh()
                continue
            except CommitStateUnknownError:
                raise  # it may have been committed: keep every file
            except IcectlError:
                _remove_attempt_files(current)  # refused before anything was committed
                raise
            committed.attempts = attempt + 1
            return committed
        finally:
            _ATTEMPT.files = None
    raise AssertionError("unreachable")


def _retries(table: Table) -> int:
    try:
        return max(0, int(table.metadata.properties.get("commit.retry.num-retries", DEFAULT_RETRIES)))
    except ValueError:
        return DEFAULT_RETRIES


def _remove_attempt_files(table: Table) -> None:
    """Remove what the failed attempt wrote and no committed metadata references."""
    if _ATTEMPT.files:
        try:
            table.io.delete_many(list(_ATTEMPT.files),  # reports failures, never raises for a file
                                 guard=table_guard(table.io, table.metadata.location))
        except (IcectlError, OSError):
            pass


class _AttemptFiles(threading.local):
    files: list[str] | None = None


_ATTEMPT = _AttemptFiles()


def note_written(path: str) -> None:
    """Record a file written for the commit attempt in progress (if any), to be removed if the
    attempt fails."""
    if _ATTEMPT.files is not None:
        _ATTEMPT.files.append(path)
