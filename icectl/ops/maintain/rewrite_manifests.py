"""Rewriting manifests (metadata only), as Iceberg Java's ``rewrite_manifests`` procedure does
(RewriteManifestsSparkAction committing through BaseRewriteManifests, 1.10):

- the manifests of the current snapshot of ``main`` whose partition spec is the table's default
  spec (or ``--spec-id``) are candidates, data manifests and delete manifests separately;
- for each content, the candidates' live entries are written into
  ``ceil(total manifest bytes / commit.manifest.target-size-bytes)`` new manifests (default 8 MiB),
  clustered by partition: entries sorted by their partition tuple and cut into that many ranges
  (one partition never spans two), a manifest rolling over past 1.2 x the target size; nothing is
  done when that gives one manifest for one candidate;
- every entry is written as EXISTING with its snapshot id, data and file sequence numbers and (v3
  data files) its ``first_row_id``, so row lineage is kept; the new manifests get ``first_row_id``
  ranges in the manifest list as any new data manifest does (Java's ManifestListWriter);
- the commit is a ``replace`` snapshot on ``main`` that changes no live file: the new manifests
  first, then every other manifest of the current snapshot. On a conflict it is planned again on
  the new table (a concurrent append's manifests are kept) and refused when a rewritten manifest
  is no longer in the current snapshot (BaseRewriteManifests.validateDeletedManifests): a retry
  never rewrites more than the plan shown.

Java's ``commit.manifest.min-count-to-merge`` and ``commit.manifest-merge.enabled`` govern merging
on append, not this procedure, and are not read here either.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from icectl.errors import (CommitStateUnknownError, ConflictingChangeError, IcectlError, InvalidMetadataError,
                           NoSnapshotsError, UsageError)
from icectl.io.safety import table_guard
from icectl.formats.manifest import EntryStatus, FileContent, ManifestContent, ManifestEntry, ManifestFile
from icectl.spec.metadata import MAIN_BRANCH, Snapshot
from icectl.spec.properties import MANIFEST_TARGET_SIZE_BYTES
from icectl.table.transaction import Committed, Transaction, snapshot_commit_json
from icectl.table.loaded import Table
from icectl.table.snapshot_producer import new_snapshot_id, snapshot_from_manifests, write_manifest_file
from icectl.table.updates import TableUpdate

ROLL_FACTOR = 1.2  # "allow the actual size of manifests to be 20% higher as the estimation is not precise"
ROLL_CHECK_ROWS = 250  # RollingManifestWriter looks at the size every 250 entries
CONTENT_NAMES = {ManifestContent.DATA: "data", ManifestContent.DELETES: "deletes"}


@dataclass
class ContentGroup:
    """The candidates of one content (data or deletes) and what happens to them."""

    content: str  # data | deletes
    manifests: int
    bytes: int
    target_manifests: int
    rewrite: bool
    manifest_files: list[ManifestFile] = field(default_factory=list, repr=False)


@dataclass
class RewriteManifestsPlan:
    table: str
    base_metadata_location: str
    starting_snapshot_id: int | None
    spec_id: int
    target_size_bytes: int
    groups: list[ContentGroup]
    current_manifests: int  # in the starting snapshot, of every spec and content
    planned_commit: dict = field(default_factory=dict, repr=False)

    @property
    def rewritten(self) -> list[ManifestFile]:
        return [m for g in self.groups if g.rewrite for m in g.manifest_files]

    @property
    def changes(self) -> bool:
        return any(g.rewrite for g in self.groups)


@dataclass
class RewriteManifestsResult:
    plan: RewriteManifestsPlan
    committed: Committed | None
    snapshot_id: int | None
    added_manifests: list[str]
    kept_manifests: int
    entries: int


def main_head(table: Table) -> Snapshot | None:
    """The snapshot ``main`` points at (the current snapshot of a v1 file without refs), or None."""
    ref = table.metadata.refs.get(MAIN_BRANCH)
    sid = ref.snapshot_id if ref is not None else table.metadata.current_snapshot_id
    return table.metadata.snapshot_by_id(sid) if sid is not None else None


def plan_rewrite_manifests(table: Table, *, spec_id: int | None = None) -> RewriteManifestsPlan:
    md = table.metadata
    if spec_id is not None and spec_id not in md.specs_by_id:
        raise UsageError(f"invalid --spec-id {spec_id}: the table's partition specs are "
                         f"{', '.join(str(s.spec_id) for s in md.partition_specs)}")
    spec = spec_id if spec_id is not None else md.default_spec_id
    target = MANIFEST_TARGET_SIZE_BYTES.read(table.metadata.properties)
    head = main_head(table)
    if head is None and not md.snapshots:
        raise NoSnapshotsError()
    manifests = table.manifests(head) if head is not None else []
    groups = []
    for content in (ManifestContent.DATA, ManifestContent.DELETES):
        matching = [m for m in manifests if m.content == content and m.partition_spec_id == spec]
        if not matching:
            continue
        for m in matching:
            if m.added_files_count is None or m.existing_files_count is None or m.deleted_files_count is None:
                raise InvalidMetadataError(f"no file counts in manifest {m.manifest_path}: it cannot be rewritten",
                                           hint="the manifest list lacks added/existing/deleted file counts")
        total = sum(m.manifest_length for m in matching)
        n = (total + target - 1) // target
        groups.append(ContentGroup(CONTENT_NAMES[content], len(matching), total, n,
                                   rewrite=not (n == 1 and len(matching) == 1), manifest_files=matching))
    plan = RewriteManifestsPlan(table.name, table.metadata_location, head.snapshot_id if head else None, spec,
                                target, groups, len(manifests))
    if plan.changes:
        plan.planned_commit = snapshot_commit_json(md, MAIN_BRANCH)
    return plan


# -- writing -------------------------------------------------------------------------------------------------

def _partition_key(values: tuple) -> tuple:
    """Spark's ascending order of a partition struct: field by field, nulls first."""
    return tuple((0, 0) if v is None else (1, v) for v in values)


def cluster(entries: list[ManifestEntry], n: int, *, partitioned: bool) -> list[list[ManifestEntry]]:
    """Cut entries into at most ``n`` ranges as Spark's ``repartitionByRange(n, partition)``
    followed by ``sortWithinPartitions(partition)`` does: sorted by partition, a partition never
    split; unpartitioned, ``repartition(n)``: equal shares."""
    if not entries:
        return []
    n = max(1, min(n, len(entries)))
    if not partitioned:
        size = math.ceil(len(entries) / n)
        return [entries[i:i + size] for i in range(0, len(entries), size)]
    ordered = sorted(entries, key=lambda e: _partition_key(e.data_file.partition))
    ranges: list[list[ManifestEntry]] = [[]]
    per_range = len(ordered) / n
    done = 0
    for i, e in enumerate(ordered):
        new_key = i == 0 or _partition_key(e.data_file.partition) != _partition_key(ordered[i - 1].data_file.partition)
        if new_key and ranges[-1] and done >= per_range * len(ranges) and len(ranges) < n:
            ranges.append([])
        ranges[-1].append(e)
        done += 1
    return ranges


def _roll(chunk: list[ManifestEntry], *, bytes_per_entry: float, target: int) -> list[list[ManifestEntry]]:
    """RollingManifestWriter: a new file once the current one reaches 1.2 x the target, looked at
    every 250 entries."""
    limit = ROLL_FACTOR * target
    if bytes_per_entry <= 0 or len(chunk) * bytes_per_entry < limit:
        return [chunk]
    per_file = max(ROLL_CHECK_ROWS, math.ceil(limit / bytes_per_entry / ROLL_CHECK_ROWS) * ROLL_CHECK_ROWS)
    return [chunk[i:i + per_file] for i in range(0, len(chunk), per_file)]


def _existing(e: ManifestEntry) -> ManifestEntry:
    df = e.data_file
    if df.content != FileContent.DATA:
        df.first_row_id = None  # "The value of first_row_id for delete files is always null"
    return ManifestEntry(EntryStatus.EXISTING, e.snapshot_id, e.sequence_number, e.file_sequence_number, df)


def write_new_manifests(table: Table, plan: RewriteManifestsPlan, *, snapshot_id: int) -> tuple[list[ManifestFile], int]:
    """Write the new manifests of every group to rewrite; return them and the entries written."""
    md = table.metadata
    spec = md.spec_by_id(plan.spec_id)
    partitioned = bool(spec.fields)
    out: list[ManifestFile] = []
    count = 0
    for g in plan.groups:
        if not g.rewrite:
            continue
        content = ManifestContent.DATA if g.content == "data" else ManifestContent.DELETES
        entries = [_existing(e) for m in g.manifest_files for e in table.read_entries(m, live_only=True)]
        count += len(entries)
        bytes_per_entry = g.bytes / len(entries) if entries else 0
        for chunk in cluster(entries, g.target_manifests, partitioned=partitioned):
            for piece in _roll(chunk, bytes_per_entry=bytes_per_entry, target=plan.target_size_bytes):
                # Written once for every attempt: removed here if the commit fails for sure.
                m = write_manifest_file(table, piece, txn=None, spec_id=plan.spec_id, content=content,
                                        snapshot_id=snapshot_id, sequence_number=0)
                out.append(m)
    return out, count


# -- committing ----------------------------------------------------------------------------------------------

def _summary(parent: Snapshot | None, *, created: int, kept: int, replaced: int, entries: int) -> dict[str, str]:
    """BaseRewriteManifests.summary() (no partition summaries: the data did not change), and the
    totals SnapshotProducer carries over from the parent."""
    s = {"operation": "replace", "manifests-created": str(created), "manifests-kept": str(kept),
         "manifests-replaced": str(replaced), "entries-processed": str(entries)}
    for key in ("total-records", "total-files-size", "total-data-files", "total-delete-files",
                "total-position-deletes", "total-equality-deletes"):
        if parent is not None and key in parent.summary:
            s[key] = parent.summary[key]
    s["changed-partition-count"] = "0"
    return s


def apply_rewrite_manifests(table: Table, plan: RewriteManifestsPlan, *, timestamp_ms: int | None = None,
                            retries: int | None = None) -> RewriteManifestsResult:
    """Write the new manifests once, then commit (re-planned on conflict within
    ``commit.retry.num-retries``); the new manifests are removed when the commit fails for sure."""
    if not plan.changes:
        return RewriteManifestsResult(plan, None, None, [], plan.current_manifests, 0)
    snapshot_id = new_snapshot_id()
    new, entries = write_new_manifests(table, plan, snapshot_id=snapshot_id)
    rewritten = {m.manifest_path for m in plan.rewritten}
    state: dict[str, int] = {}

    def build(txn: Transaction) -> list[TableUpdate]:
        current = txn.table
        md = current.metadata
        head = main_head(current)
        if head is None or plan.spec_id not in md.specs_by_id:
            raise ConflictingChangeError(f"{plan.table} changed since the plan was shown: main has no snapshot "
                                         "or the spec is gone; nothing was committed")
        manifests = current.manifests(head)
        paths = {m.manifest_path for m in manifests}
        gone = sorted(rewritten - paths)
        if gone:
            raise ConflictingChangeError(
                f"{plan.table} changed since the plan was shown: manifest {gone[0]} is no longer in the latest "
                f"snapshot {head.snapshot_id}; nothing was committed", hint="run rewrite-manifests again")
        kept = [m for m in manifests if m.manifest_path not in rewritten]
        v = md.format_version
        seq = md.last_sequence_number + 1 if v >= 2 else 0
        listed = []
        for m in new:
            listed.append(ManifestFile(**{**m.__dict__, "sequence_number": seq,
                                          "min_sequence_number": min(m.min_sequence_number, seq) if v >= 2 else 0,
                                          "added_snapshot_id": snapshot_id, "first_row_id": None}))
        listed += kept
        state["kept"] = len(kept)
        return _snapshot_updates(txn, head, listed, snapshot_id=snapshot_id, sequence_number=seq,
                                 summary=_summary(head, created=len(new), kept=len(kept), replaced=len(rewritten),
                                                  entries=0),
                                 timestamp_ms=timestamp_ms)

    try:
        done = Transaction(table, retries=retries).commit(build)
    except IcectlError as e:
        if not isinstance(e, CommitStateUnknownError):
            try:
                table.io.delete_many([m.manifest_path for m in new],  # failures stay as orphans
                                     guard=table_guard(table.io, table.metadata.location))
            except (IcectlError, OSError):
                pass
        raise
    return RewriteManifestsResult(plan, done, snapshot_id, [m.manifest_path for m in new], state["kept"], entries)


def _snapshot_updates(txn: Transaction, parent: Snapshot, manifests: list[ManifestFile], *, snapshot_id: int,
                      sequence_number: int, summary: dict[str, str], timestamp_ms: int | None) -> list[TableUpdate]:
    return snapshot_from_manifests(txn, parent, manifests, snapshot_id=snapshot_id, sequence_number=sequence_number,
                                   summary=summary, ref_name=MAIN_BRANCH, timestamp_ms=timestamp_ms)


__all__ = ["ContentGroup", "RewriteManifestsPlan", "RewriteManifestsResult", "apply_rewrite_manifests", "cluster",
           "plan_rewrite_manifests"]
