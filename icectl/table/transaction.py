"""The one way to commit a change to a table: a :class:`Transaction`.

A transaction holds the table it was planned against (its base), the updates staged for it, the
requirements that make them safe (derived from the updates against the base, as Iceberg Java's
``UpdateRequirements`` does, unless the operation states its own), and the files its attempt wrote
(manifests, manifest lists, registered by the code that writes them). It commits through the
catalog contract, ``Catalog.commit(identifier, requirements, updates)``.

Spec, "Commit Conflict Resolution and Retry": when the catalog refuses a commit because the table
moved, an operation that can plan again (it gave a ``plan`` callback) reads the table again, plans
again on it (the callback re-validates what it needs) and retries, within the table's
``commit.retry.*`` properties (:class:`RetryPolicy`). A :class:`ConflictingChangeError` is not
retried: reading again cannot fix it. The files a failed attempt wrote and no committed metadata
references are removed (as Iceberg Java cleans up after a failed attempt); a commit whose outcome is
unknown (a timeout, a 5xx answer) removes nothing.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

from icectl.errors import CommitConflictError, CommitStateUnknownError, ConflictingChangeError, IcectlError
from icectl.spec.metadata import SnapshotRef, TableMetadata
from icectl.table.builder import MetadataBuilder
from icectl.table.catalog_contract import CatalogContract
from icectl.table.identifier import Identifier
from icectl.table.loaded import Table
from icectl.table.requirements import TableRequirement, requirements_for, validate_requirements
from icectl.spec.properties import (COMMIT_MAX_RETRY_WAIT_MS, COMMIT_MIN_RETRY_WAIT_MS, COMMIT_NUM_RETRIES,
                                    COMMIT_TOTAL_RETRY_TIME_MS)
from icectl.io.safety import table_guard
from icectl.table.updates import RemoveProperties, SetLocation, SetProperties, SetSnapshotRef, TableUpdate, updates_json

__all__ = ["Committed", "Plan", "RetryPolicy", "Transaction", "commit", "sent_json", "snapshot_commit_json"]


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a conflicting commit is retried: the table's ``commit.retry.*``
    properties, with Iceberg Java's defaults. The wait before retry ``n`` (0-based) is
    ``min_wait_ms * 2**n``, at most ``max_wait_ms``; no retry starts after ``total_timeout_ms``."""

    num_retries: int = 4
    min_wait_ms: int = 100
    max_wait_ms: int = 60_000
    total_timeout_ms: int = 1_800_000

    @classmethod
    def from_properties(cls, properties: Mapping[str, str]) -> RetryPolicy:
        """The policy a table's properties ask for: the one reader of ``commit.retry.*``, through
        the table-properties registry (a bad value is an error naming it, never a default)."""
        return cls(num_retries=COMMIT_NUM_RETRIES.read(properties),
                   min_wait_ms=COMMIT_MIN_RETRY_WAIT_MS.read(properties),
                   max_wait_ms=COMMIT_MAX_RETRY_WAIT_MS.read(properties),
                   total_timeout_ms=COMMIT_TOTAL_RETRY_TIME_MS.read(properties))

    @classmethod
    def for_commit(cls, properties: Mapping[str, str], updates: Iterable[TableUpdate]) -> RetryPolicy:
        """The policy as the commit leaves the properties: a commit that sets or removes a
        ``commit.retry.*`` property (the way to repair a bad value) is retried under its new value."""
        after = dict(properties)
        for u in updates:
            if isinstance(u, SetProperties):
                after.update(u.updates)
            elif isinstance(u, RemoveProperties):
                for k in u.removals:
                    after.pop(k, None)
        return cls.from_properties(after)

    def wait_ms(self, retry: int) -> int:
        return min(self.min_wait_ms * 2 ** retry, self.max_wait_ms)

    def may_retry(self, retry: int, elapsed_ms: float) -> bool:
        return retry < self.num_retries and elapsed_ms < self.total_timeout_ms


@dataclass
class Committed:
    """The outcome of a commit: the table after it, the table the last attempt planned against,
    and what was sent."""

    table: Table
    base: Table | None  # None: the commit created the table
    requirements: list[TableRequirement]
    updates: list[TableUpdate]
    attempts: int = 1
    deleted_metadata_files: list[str] = field(default_factory=list)

    def sent_json(self) -> dict[str, list]:
        return sent_json((self.base or self.table).metadata, self.requirements, self.updates)


# A plan callback stages the change on the transaction (or returns its updates) for the table in
# ``txn.table``; it runs again on the re-read table after a conflict.
Plan = Callable[["Transaction"], "Iterable[TableUpdate] | None"]


class Transaction:
    """One change to one table, committed through its catalog (see the module docstring)."""

    def __init__(self, table: Table, *, now_ms: int | None = None, retries: int | None = None,
                 policy: RetryPolicy | None = None):
        # Without a policy given, it is read at the first attempt, from the properties as the
        # staged updates leave them (see RetryPolicy.for_commit).
        self._retries = retries
        if policy is not None and retries is not None:
            policy = dataclasses.replace(policy, num_retries=retries)
        self._setup(table, table.catalog, table.identifier, now_ms=now_ms, policy=policy)

    @classmethod
    def create(cls, catalog: CatalogContract, identifier: Identifier, *, now_ms: int | None = None) -> Transaction:
        """A transaction that creates table ``identifier``: its requirement is ``assert-create``
        (the catalog checks that the name is free)."""
        txn = cls.__new__(cls)
        txn._retries = None
        txn._setup(None, catalog, identifier, now_ms=now_ms, policy=RetryPolicy())
        return txn

    def _setup(self, table: Table | None, catalog: CatalogContract, identifier: Identifier, *, now_ms: int | None,
               policy: RetryPolicy | None) -> None:
        self.table = table  # the base the current attempt plans against; None: a create
        self.catalog = catalog
        self.identifier = identifier
        self.now_ms = now_ms  # the commit time where the catalog applies the updates itself
        self.policy = policy
        self.updates: list[TableUpdate] = []
        self.written: list[str] = []  # files this attempt wrote
        self._requirements: list[TableRequirement] | None = None

    # -- staging ------------------------------------------------------------------------------
    def stage(self, updates: Iterable[TableUpdate]) -> Transaction:
        self.updates.extend(updates)
        return self

    def require(self, requirements: Iterable[TableRequirement]) -> Transaction:
        """State the requirements instead of deriving them (an operation that was planned, and
        shown, against exactly the base: every ref and default as read)."""
        self._requirements = list(requirements)
        return self

    def wrote(self, path: str) -> None:
        """Register a file this attempt wrote (or is about to write): removed if the attempt fails
        for sure, kept once a commit references it or its outcome is unknown."""
        self.written.append(path)

    @property
    def requirements(self) -> list[TableRequirement]:
        """The stated requirements, or those the staged updates call for against the base; each
        once."""
        reqs = self._requirements if self._requirements is not None else \
            requirements_for(self.table.metadata if self.table is not None else None, self.updates)
        return list(dict.fromkeys(reqs))

    # -- committing ---------------------------------------------------------------------------
    def commit(self, plan: Plan | None = None) -> Committed:
        """Commit what is staged, or what ``plan`` stages on the base; with ``plan``, a conflict
        re-reads the table, plans again and retries within the retry policy. Without it there is
        one attempt: what was staged was planned against this base only."""
        started = time.monotonic()
        retry = 0
        while True:
            if plan is not None:
                self._restart()
                try:
                    staged = plan(self)
                    if staged is not None:
                        self.stage(staged)
                except BaseException:
                    self._remove_written()  # nothing was sent
                    raise
            if self.policy is None:
                try:
                    policy = RetryPolicy.for_commit(self._base().metadata.properties, self.updates)
                except BaseException:
                    self._remove_written()  # a bad commit.retry.* value: nothing was sent
                    raise
                self.policy = policy if self._retries is None else dataclasses.replace(policy, num_retries=self._retries)
            try:
                committed = self._send()
            except CommitConflictError as e:
                self._remove_written()  # refused: the attempt's files are referenced by nothing
                elapsed_ms = (time.monotonic() - started) * 1000
                if plan is None or isinstance(e, ConflictingChangeError) or not self.policy.may_retry(retry, elapsed_ms):
                    raise
                time.sleep(self.policy.wait_ms(retry) / 1000)
                retry += 1
                self.table = self._base().refresh()
                continue
            except CommitStateUnknownError:
                raise  # it may have been committed: keep every file
            except IcectlError:
                self._remove_written()  # refused before anything was committed
                raise
            committed.attempts = retry + 1
            return committed

    def replace_metadata(self, base: TableMetadata) -> str:
        """Commit a table state that updates cannot express: the staged updates applied here, by the
        builder, to ``base`` (today's metadata with what no update can add, such as snapshots an
        expire removed, added back), made current through the catalog's
        :meth:`~icectl.catalog.base.Catalog.replace_metadata`, from exactly this transaction's base
        file. One attempt; return the new metadata file."""
        t = self._base()
        validate_requirements(self.requirements, t.metadata)
        md = MetadataBuilder(base, now_ms=self.now_ms if self.now_ms is not None else int(time.time() * 1000)) \
            .apply(self.updates).build(previous_location=t.metadata_location)
        return t.catalog.replace_metadata(t.identifier, t.metadata_location, md).metadata_location

    def _base(self) -> Table:
        if self.table is None:
            raise TypeError("a create has no base table")
        return self.table

    def _send(self) -> Committed:
        t = self.table
        reqs = self.requirements
        state = self.catalog.commit(self.identifier, reqs, self.updates, now_ms=self.now_ms,
                                    base_location=t.metadata_location if t is not None else None)
        self.written = []  # now referenced: never cleaned up
        if t is None:
            after = Table(self.identifier, state.metadata, state.metadata_location, self.catalog,
                          io=self.catalog.io_for(self.identifier))
        else:
            after = dataclasses.replace(t, metadata=state.metadata, metadata_location=state.metadata_location)
        return Committed(after, t, reqs, list(self.updates), deleted_metadata_files=list(state.deleted_metadata_files))

    def _restart(self) -> None:
        self.updates = []
        self.written = []
        self._requirements = None

    def _remove_written(self) -> None:
        """Remove what the failed attempt wrote and no committed metadata references."""
        written, self.written = self.written, []
        if written:
            try:
                io = self.table.io if self.table is not None else self.catalog.io_for(self.identifier)
                io.delete_many(written, guard=table_guard(io, self._location()))  # reports failures, never raises
            except (IcectlError, OSError):
                pass

    def _location(self) -> str:
        """The table location the attempt's files must lie in: the base's, or for a create the
        location it sets (else the catalog's default for the name)."""
        if self.table is not None:
            return self.table.metadata.location
        for u in self.updates:
            if isinstance(u, SetLocation):
                return u.location
        return self.catalog.default_table_location(self.identifier)


def commit(table: Table, updates: Iterable[TableUpdate], *, requirements: Iterable[TableRequirement] | None = None,
           now_ms: int | None = None) -> Table:
    """The short form of ``Transaction(table).stage(updates).commit()``, for updates that write no
    file: commit them once against ``table`` and return the table after it."""
    txn = Transaction(table, now_ms=now_ms).stage(updates)
    if requirements is not None:
        txn.require(requirements)
    return txn.commit().table


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
