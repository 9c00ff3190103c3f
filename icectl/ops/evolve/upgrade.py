"""``upgrade-format``: planning (a pre-flight report that can be printed) and
applying. Upgrades change metadata only, one version at a time (1 to 2 to 3 to 4), never down.

- 1 to 2 (spec Appendix E, "Version 2"): the fields v2 requires (``table-uuid``,
  ``last-sequence-number``, the lists of schemas, specs and sort orders with their current ids,
  ``last-partition-id``); v1 files keep reading as sequence number 0; no file is rewritten.
- 2 to 3 (row lineage): ``next-row-id`` starts at 0; the next commit assigns row ids (its
  ``first-row-id`` is 0 and it assigns ranges to the existing data manifests too); existing
  position delete files stay valid, new deletes are deletion vectors.
- 3 to 4 (v4 walk-through): files written from then on are stored relative to the table location
  and carry ``content_stats``; ``location`` becomes optional; the table needs a metastore (SQL)
  catalog, so a file-system table must first be registered in one (``icectl register``).
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from icectl.spec.metadata import MAX_FORMAT_VERSION, TableMetadata
from icectl.table.builder import apply_updates
from icectl.table.transaction import Committed, Transaction, sent_json
from icectl.table.loaded import Table
from icectl.table.requirements import requirements_for
from icectl.table.updates import AssignUUID, TableUpdate, UpgradeFormatVersion
from icectl.errors import RefusedError, UnsupportedError, UsageError
from icectl.ops.inspect.describe import table_totals
from icectl.validate.findings import Collector
from icectl.validate.metadata import check_metadata


@dataclass
class ReaderSupport:
    """Whether a reader can read the table at the target version."""

    reader: str
    reads: bool
    note: str


@dataclass
class UpgradeStep:
    from_version: int
    to_version: int
    changes: list[str]
    allows: list[str]
    forbids: list[str]


@dataclass
class Blocker:
    code: str
    message: str
    hint: str | None = None


@dataclass
class UpgradePlan:
    table: str
    metadata_location: str
    catalog: str
    from_version: int
    to_version: int
    steps: list[UpgradeStep]
    found: list[str]  # what the table holds that the upgrade keeps or changes
    blockers: list[Blocker]
    readers: list[ReaderSupport]
    new_metadata: TableMetadata | None = field(default=None, repr=False)
    updates: list[TableUpdate] = field(default_factory=list, repr=False)
    # The commit to send, as the REST spec writes it ({"requirements": [...], "updates": [...]});
    # None when there is nothing to commit.
    planned_commit: dict[str, list] | None = field(default=None, repr=False)

    @property
    def can_apply(self) -> bool:
        return not self.blockers and self.to_version > self.from_version


# Readers and the highest format version each reads (as of the versions named).
READERS: list[tuple[str, int, str]] = [
    ("Iceberg Java 1.10 (Spark, Flink, Trino, ...)", 3,
     "reads v1 to v3; its format-version 4 writes v3-shaped files and does not resolve relative paths"),
    ("Iceberg Java 1.4 to 1.7", 2, "reads v1 and v2"),
    ("PyIceberg 0.12", 3, "reads v1 to v3 metadata; writes v1 and v2"),
    ("icectl", 4, "reads and writes v1 to v4"),
]

_STEPS: dict[int, UpgradeStep] = {
    2: UpgradeStep(1, 2, changes=[
        "writes the fields v2 requires: table-uuid, last-sequence-number (0), schemas, current-schema-id, "
        "partition-specs, default-spec-id, last-partition-id, sort-orders, default-sort-order-id",
        "stops writing v1's singular schema and partition-spec",
        "snapshots and manifests written as v1 keep reading as sequence number 0 (Appendix E); nothing is rewritten",
    ], allows=[
        "row-level deletes: position and equality delete files (merge-on-read)",
        "sequence numbers on every commit, and sequence number inheritance",
        "branches and tags with their own retention",
    ], forbids=[
        "partition field ids reused for different fields across specs",
        "snapshots without a manifest list (inline 'manifests')",
    ]),
    3: UpgradeStep(2, 3, changes=[
        "next-row-id starts at 0: row lineage is assigned from the next commit on (its first-row-id is 0 and it "
        "assigns row ids to the rows already in the table too)",
        "existing position delete files stay valid; readers merge them until they are rewritten as deletion vectors",
    ], allows=[
        "deletion vectors (Puffin) instead of position delete files",
        "new types: variant, geometry, geography, unknown, timestamp_ns, timestamptz_ns",
        "column defaults (initial-default, write-default) and multi-argument transforms",
        "table encryption keys",
    ], forbids=[
        "new position delete files: v3 writers add deletion vectors",
        "equality deletes with row lineage (they cannot carry the old row ids: replaced rows get new _row_ids)",
        "turning row lineage off",
    ]),
    4: UpgradeStep(3, 4, changes=[
        "files written from now on are stored relative to the table location; paths already stored stay absolute "
        "and keep working",
        "files written from now on carry typed content_stats instead of the metric maps",
        "location becomes optional (the catalog can supply it)",
    ], allows=[
        "moving the table by changing the catalog pointer (and location) only",
        "tight_bounds and avg_value_size_in_bytes in the statistics",
    ], forbids=[
        "the file-system catalog: a v4 table lives in a metastore (SQL) catalog",
        "relative paths that lead outside the table location",
    ]),
}


def readers_for(version: int) -> list[ReaderSupport]:
    return [ReaderSupport(name, version <= max_v, note) for name, max_v, note in READERS]


def plan_upgrade(table: Table, to_version: int) -> UpgradePlan:
    """The pre-flight report of upgrading ``table`` to ``to_version`` (and the new metadata)."""
    md = table.metadata
    start = md.format_version
    if not 1 <= to_version <= MAX_FORMAT_VERSION:
        raise UsageError(f"--to must be 2 to {MAX_FORMAT_VERSION}, not {to_version}")
    if to_version < start:
        raise UsageError(f"{table.name} is format version {start}: upgrade-format never downgrades (asked for "
                         f"{to_version})")
    steps = [_STEPS[v] for v in range(start + 1, to_version + 1)]
    blockers = _blockers(table, start, to_version)
    new = None
    updates: list[TableUpdate] = []
    if not blockers and steps:
        # One upgrade-format-version to the target (the report lists each step's rules); a v1
        # table without a uuid gets one, which v2 requires.
        updates = ([AssignUUID(str(uuid.uuid4()))] if md.table_uuid is None else []) + [UpgradeFormatVersion(to_version)]
        new = apply_updates(md, updates)
    return UpgradePlan(table=table.name, metadata_location=table.metadata_location, catalog=table.catalog.kind,
                       from_version=start, to_version=to_version, steps=steps, found=_found(table, start, to_version),
                       blockers=blockers, readers=readers_for(to_version), new_metadata=new,
                       updates=updates, planned_commit=sent_json(md, requirements_for(md, updates), updates)
                       if updates else None)


def _blockers(table: Table, start: int, to: int) -> list[Blocker]:
    out: list[Blocker] = []
    if to <= start:
        return out
    catalog = table.catalog
    if catalog.read_only:
        out.append(Blocker("READ_ONLY", f"{table.name} was opened by path, which is read-only",
                           "upgrade it through its catalog (or register the metadata file: icectl register)"))
    if to >= 4 and not catalog.supports_v4:
        out.append(Blocker("V4_FILESYSTEM_CATALOG", f"a format version 4 table cannot live in a {catalog.kind} "
                           "catalog (v4 walk-through: \"The file-system catalog is gone\")",
                           f"register it in a SQL catalog, then upgrade there: icectl -c SQLCATALOG register "
                           f"{table.name} {table.metadata_location}; icectl -c SQLCATALOG upgrade-format "
                           f"{table.name} --to {to} (and stop committing through the file-system catalog)"))
    if start == 1:
        seen: dict[int, tuple[int, str]] = {}
        for spec in table.metadata.partition_specs:
            for f in spec.fields:
                prev = seen.setdefault(f.field_id, (f.source_id, f.transform))
                if prev[0] != f.source_id:
                    out.append(Blocker("PARTITION_FIELD_ID_DUPLICATE", f"partition field id {f.field_id} names "
                                       f"different source columns in different specs; v2 requires one id per field",
                                       "rewrite the specs so each partition field keeps its own id"))
    # The table's own metadata must be valid: an upgrade would carry its errors forward.
    collector = Collector()
    try:
        raw = table.io.read(table.metadata_location)
        check_metadata(raw, table.metadata_location, collector, catalog_kind=catalog.kind,
                       supports_v4=catalog.supports_v4)
    except Exception:  # noqa: BLE001 - the table loaded; a failed re-read is not a blocker
        pass
    for f in collector.findings:
        if f.severity.value == "error" and f.code != "V4_FILESYSTEM_CATALOG":
            out.append(Blocker(f.code, f.message, "icectl validate shows every finding"))
    return out


def _found(table: Table, start: int, to: int) -> list[str]:
    md = table.metadata
    out = []
    try:
        t = table_totals(table, md.current_snapshot)
    except Exception:  # noqa: BLE001 - unreadable manifests are validate's to report
        t = None
    if t is not None:
        out.append(f"{t.data_files} data files, {t.records} records in the current snapshot")
        if start < 3 <= to and t.position_delete_files:
            out.append(f"{t.position_delete_files} position delete files stay valid (no new ones after the upgrade)")
        if start < 3 <= to and t.equality_delete_files:
            out.append(f"{t.equality_delete_files} equality delete files stay valid")
        if start < 3 <= to and t.records:
            out.append(f"the next commit assigns row ids 0 to {t.records - 1} to the rows already there "
                       "(and new ids to the rows it adds)")
    if start == 1 and to >= 2:
        out.append(f"{len(md.snapshots)} snapshots written as v1 keep sequence number 0")
        inline = sum(1 for s in md.snapshots if s.manifest_list is None)
        if inline:
            out.append(f"{inline} snapshots list their manifests inline (v1); they stay readable")
    if to >= 4:
        out.append(f"paths of files written from now on are stored relative to {md.location}")
    return out


def apply_upgrade(table: Table, to_version: int) -> Committed:
    """Commit the upgrade (re-planned against the current metadata on each attempt)."""
    def build(txn: Transaction) -> list[TableUpdate]:
        t = txn.table
        plan = plan_upgrade(t, to_version)
        if plan.blockers:
            b = plan.blockers[0]
            cls = UnsupportedError if b.code in ("V4_FILESYSTEM_CATALOG", "READ_ONLY") else RefusedError
            raise cls(f"cannot upgrade {t.name}: {b.message}", hint=b.hint)
        if not plan.updates:
            raise UsageError(f"{t.name} is already format version {plan.from_version}")
        return plan.updates

    return Transaction(table).commit(build)


__all__ = ["Blocker", "ReaderSupport", "UpgradePlan", "UpgradeStep", "apply_upgrade", "plan_upgrade", "readers_for"]
