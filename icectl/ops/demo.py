"""``icectl demo``: a small table with a history worth administering, written without Spark.

``NS.events`` (id long required, user_id, category, amount decimal(10,2), ts timestamptz;
partitioned by ``day(ts)``) gets real Parquet files with Iceberg metrics and field ids, written
and committed by the code the maintenance commands use (``icectl.spark.rewrite`` writes and
describes the Parquet files, ``snapshot_writer.build_snapshot`` commits). The history, oldest
first (ages relative to now; event days are fixed, 2026-03-01 to 2026-03-04):

    s1  -14d  append     3 files on 03-01                           ids 1..120
    s2  -13d  append     3 files on 03-01, 2 on 03-02               ids 121..320
    s3  -12d  append     3 files on 03-02 (one of bot traffic)      ids 321..430
    s4  -11d  delete     the bot traffic file, whole
    s5  -10d  delete     row-level deletes on 03-01 and 03-02 (9 rows)
    s6   -9d  append     4 files on 03-03                           ids 431..590
        -6d              schema 1: column ``country`` added (older files lack it)
    s7   -4d  append     3 files on 03-04, with country             ids 591..710
    s8   -3d  delete     row-level deletes on 03-01 (3 rows)        <- tag before-overwrite
    s9   -2d  overwrite  03-03 restated: 4 files replaced by 1 (QA rows dropped, country filled)
    s10  -1d  append     on branch ``audit`` (from s9)              ids 711..730
    s11  -6h  append     staged for write-audit-publish (wap.id), on no branch  ids 731..760

Row-level deletes are Parquet position delete files in v2 and deletion vectors (Puffin) in v3,
where a second delete of a file's rows replaces its vector with a merged one. Then a Parquet
file that nothing references is left in the data folder, 8 days old (an orphan).

What the maintenance commands then find with their defaults: ``expire`` (snapshots older than
the table's 5 days) expires s1 to s6 and deletes the bot traffic file and their manifests;
``remove-orphans`` (older than 3 days) finds the orphan; ``compact`` groups the six small files
of 03-01; ``rewrite-deletes`` (v2) merges the two position delete files of 03-01;
``cherry-pick`` publishes s11; ``rollback`` can return to the tag.

Rows and snapshot ids come from a fixed seed: every demo table has the same ones.
"""
from __future__ import annotations

import datetime as dt
import random
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Sequence
from icectl.catalog.base import Catalog, Identifier, ident_str
from icectl.formats.manifest import DataFile, FileContent, ManifestEntry
from icectl.spec.metadata import MAIN_BRANCH
from icectl.spec.properties import PARQUET_COMPRESSION
from icectl.spec.temporal import millis_to_iso
from icectl.table.builder import MetadataBuilder
from icectl.table.loaded import Table
from icectl.table.transaction import Transaction
from icectl.table.updates import TableUpdate
from icectl.errors import AlreadyExistsError, UsageError
from icectl.ops.evolve.create import apply_create, existing_metadata_location, plan_create
from icectl.io import join
from icectl.formats.parquet import write_parquet
from icectl.ops.inspect.describe import ref_rows
from icectl.ops.maintain.compact import data_file_from_output, repartition_spec
from icectl.ops.maintain.rewrite_deletes import write_deletion_vectors, write_position_delete_file
from icectl.ops.recover import refs
from icectl.spark.rewrite import output_schema, partitioner, write_parquet_file
from icectl.spec.types import NestedField, PrimitiveType, Schema
from icectl.table.snapshot_producer import SnapshotChange, build_snapshot

TABLE_NAME = "events"
DEFAULT_NAMESPACE = "demo"
SCHEMA = "id:long!, user_id:string, category:string, amount:decimal(10,2), ts:timestamptz"
PARTITION_BY = "day(ts)"
ADDED_COLUMN = "country"
COLUMNS = ("id", "user_id", "category", "amount", "ts", ADDED_COLUMN)
FORMAT_VERSIONS = (2, 3)
DEFAULT_FORMAT_VERSION = 2
TAG = "before-overwrite"
BRANCH = "audit"
WAP_ID = "events-2026-03-04-late"
SEED = "icectl-demo-1"
ORPHAN_AGE_MS = 8 * 86_400_000

DAY_MS = 86_400_000
EVENT_DAYS = [dt.date(2026, 3, d) for d in (1, 2, 3, 4)]
USERS = [f"u{i:04d}" for i in range(1, 51)]
CATEGORIES = ["books", "electronics", "garden", "grocery", "toys"]
COUNTRIES = ["BR", "DE", "FR", "GB", "JP", "US"]
BOT_USER = "bot-crawler"
QA_USER = "qa-test"


@dataclass
class DemoSnapshot:
    snapshot_id: int
    parent_snapshot_id: int | None
    operation: str
    timestamp_ms: int
    committed_at: str
    branch: str | None  # None: staged, on no branch
    refs: list[str]
    records: int  # rows a reader of this snapshot sees
    description: str


@dataclass
class DemoRef:
    name: str
    type: str
    snapshot_id: int
    records: int


@dataclass
class DemoCommand:
    command: str
    why: str


@dataclass
class DemoResult:
    table: str
    location: str
    metadata_location: str
    format_version: int
    snapshots: list[DemoSnapshot]
    data_files: int  # live in main
    delete_files: int  # live in main: position delete files (v2) or deletion vectors (v3)
    records: int  # rows of main, deletes applied
    refs: list[DemoRef]
    staged_snapshot_id: int
    wap_id: str
    schema_ids: list[int]
    added_column: str  # by the last schema
    orphan_files: list[str]
    orphan_age_days: int | None  # None: the storage could not back-date it (only local files can be)
    try_commands: list[DemoCommand]
    # Every snapshot's rows (COLUMNS order, deletes applied), as the generator made them: what a
    # reader must return. Not part of the JSON output.
    rows_by_snapshot: dict[int, list[tuple]] = field(default_factory=dict, repr=False)
    # Each commit sent, oldest first: {"requirements": [...], "updates": [...]}.
    commits: list[dict] = field(default_factory=list)


def check_demo_arguments(namespace: str, *, format_version: int) -> Identifier:
    """The demo table's identifier; UsageError for a bad namespace or format version (before
    any catalog is opened, so a bad call writes nothing)."""
    if format_version not in FORMAT_VERSIONS:
        raise UsageError(f"the demo is built in format version 2 or 3, not {format_version}")
    parts = tuple(namespace.strip().split("."))
    if any(not p for p in parts):
        raise UsageError(f"invalid namespace {namespace!r}: expected e.g. demo or lake.demo")
    return parts + (TABLE_NAME,)


def build_demo(catalog: Catalog, namespace: str = DEFAULT_NAMESPACE, *, format_version: int = DEFAULT_FORMAT_VERSION,
               now_ms: int | None = None, command_prefix: str = "icectl") -> DemoResult:
    """Create ``NAMESPACE.events`` and write its history (see the module docstring).

    Refuses (AlreadyExistsError, nothing written) when the table exists or its location holds
    files."""
    import time

    ident = check_demo_arguments(namespace, format_version=format_version)
    if catalog.read_only:
        raise UsageError("cannot build the demo through a path: configure a catalog")
    name = ident_str(ident)
    if existing_metadata_location(catalog, ident) is not None:
        raise AlreadyExistsError(f"table {name} already exists in catalog {catalog.name}",
                                 hint=f"build it in another namespace: {command_prefix} demo {namespace}2")
    location = catalog.default_table_location(ident).rstrip("/")
    if next(iter(catalog.io.list_files(location)), None) is not None:
        raise AlreadyExistsError(f"the demo's location {location} already holds files",
                                 hint=f"remove them, or build it in another namespace: "
                                      f"{command_prefix} demo {namespace}2")
    now = int(time.time() * 1000) if now_ms is None else now_ms
    return _Builder(catalog, ident, location=location, format_version=format_version, now=now).build(command_prefix)


# -- the history -------------------------------------------------------------------------------------

class _Builder:
    def __init__(self, catalog: Catalog, ident: Identifier, *, location: str, format_version: int, now: int):
        self.catalog, self.ident, self.location, self.v, self.now = catalog, ident, location, format_version, now
        self.rows_rng = random.Random(SEED + "-rows")
        self.ids_rng = random.Random(SEED + "-snapshots")
        self.next_id = 1
        self.file_rows: dict[str, list[tuple]] = {}  # data file path -> rows in file order
        # Per snapshot: live data files -> deleted positions.
        self.states: dict[int, dict[str, frozenset[int]]] = {}
        self.notes: dict[int, str] = {}
        self.table: Table = None  # type: ignore[assignment]
        self.commits: list[dict] = []

    def at(self, days: float) -> int:
        return self.now - int(days * DAY_MS)

    def build(self, command_prefix: str) -> DemoResult:
        plan = plan_create(self.catalog, self.ident, schema_text=SCHEMA, partition_by=PARTITION_BY,
                           format_version=self.v, location=self.location, created_ms=self.at(15))
        self.table = apply_create(self.catalog, plan, now_ms=self.at(15))
        self.commits.append(plan.commit_json())
        d1, d2, d3, d4 = EVENT_DAYS
        a1 = [self.data_file(d1, 40) for _ in range(3)]
        self.commit("append", f"3 files of {d1}", added=a1, days=14)
        a2 = [self.data_file(d1, 40) for _ in range(3)] + [self.data_file(d2, 40) for _ in range(2)]
        self.commit("append", f"3 files of {d1}, 2 of {d2}", added=a2, days=13)
        bot = self.data_file(d2, 30, user=BOT_USER)
        a3 = [self.data_file(d2, 40) for _ in range(2)] + [bot]
        self.commit("append", f"3 files of {d2}, one of them bot traffic", added=a3, days=12)
        self.commit("delete", f"the bot traffic file of {d2}, whole", removed=[bot], days=11)
        self.row_deletes([(a1[0], [3, 17, 25]), (a2[0], [0, 9]), (a2[3], [5, 6, 7, 30])], days=10)
        a6 = [self.data_file(d3, 40, qa_rows=1) for _ in range(4)]
        self.commit("append", f"4 files of {d3}", added=a6, days=9)
        self.add_column(days=6)
        a7 = [self.data_file(d4, 40, country=True) for _ in range(3)]
        self.commit("append", f"3 files of {d4}, with {ADDED_COLUMN}", added=a7, days=4)
        s8 = self.row_deletes([(a1[0], [30, 31]), (a2[1], [12])], days=3)
        self.metadata_commit(refs.create_ref(self.table.metadata, TAG, ref_type="tag", snapshot_id=s8), days=2.1)
        restated = self.restate(a6)
        s9 = self.commit("overwrite", f"{d3} restated: {len(a6)} files replaced by 1 ({QA_USER} rows dropped, "
                         f"{ADDED_COLUMN} filled)", added=[restated], removed=a6, days=2)
        self.metadata_commit(refs.create_ref(self.table.metadata, BRANCH, ref_type="branch", snapshot_id=s9),
                             days=1.5)
        self.commit("append", f"1 file of {d4} on branch {BRANCH}", added=[self.data_file(d4, 20, country=True)],
                    days=1, branch=BRANCH)
        staged = self.commit("append", f"1 file of {d4}, staged (wap.id {WAP_ID})",
                             added=[self.data_file(d4, 30, country=True)], days=0.25, stage_only=True,
                             extra={"wap.id": WAP_ID})
        orphan, aged = self.plant_orphan(d2)
        return self.result(staged, orphans=[orphan], aged=aged, prefix=command_prefix)

    # -- data --------------------------------------------------------------------------------------

    def rows(self, day: dt.date, n: int, *, user: str | None, qa_rows: int, country: bool) -> list[tuple]:
        rng = self.rows_rng
        start = dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone.utc)
        seconds = sorted(rng.randrange(86_400) for _ in range(n))
        qa = set(rng.sample(range(n), qa_rows)) if qa_rows else set()
        out = []
        for i, s in enumerate(seconds):
            who = QA_USER if i in qa else (user or rng.choice(USERS))
            out.append((self.next_id, who, rng.choice(CATEGORIES), Decimal(rng.randrange(100, 50_000)).scaleb(-2),
                        start + dt.timedelta(seconds=s), rng.choice(COUNTRIES) if country else None))
            self.next_id += 1
        return out

    def data_file(self, day: dt.date, n: int, *, user: str | None = None, qa_rows: int = 0,
                  country: bool = False) -> DataFile:
        return self.write_rows(self.rows(day, n, user=user, qa_rows=qa_rows, country=country))

    def write_rows(self, rows: list[tuple]) -> DataFile:
        """One Parquet data file of ``rows`` in the current schema (a column it lacks is not
        written), in its partition's folder, described by the compaction job's code."""
        import pyarrow as pa

        md = self.table.metadata
        schema = md.schema
        target = output_schema(schema, False)
        columns = [[r[COLUMNS.index(f.name)] for r in rows] for f in schema.fields]
        data = pa.Table.from_arrays([pa.array(c, type=t.type) for c, t in zip(columns, target)], schema=target)
        split, path_of, _ = partitioner(repartition_spec(self.table))
        parts = split(data)
        if len(parts) != 1:
            raise AssertionError("a demo file holds the rows of one partition")
        (key, part), = parts.items()
        path = join(self.location, "data", path_of(key), f"00000-{len(self.file_rows)}-{uuid.uuid4()}-00001.parquet")
        desc = write_parquet_file(self.table.io, path, data=part, schema=schema,
                                  compression=PARQUET_COMPRESSION.read(md.properties))
        self.file_rows[path] = rows
        return data_file_from_output(desc, spec_id=md.default_spec_id, partition=key)

    def restate(self, files: list[DataFile]) -> DataFile:
        rng = self.rows_rng
        rows = [r for f in files for r in self.file_rows[f.file_path] if r[1] != QA_USER]
        rows = [r[:5] + (rng.choice(COUNTRIES),) for r in sorted(rows, key=lambda r: (r[4], r[0]))]
        return self.write_rows(rows)

    # -- commits -----------------------------------------------------------------------------------

    def head(self, branch: str) -> int | None:
        ref = self.table.metadata.all_refs.get(branch)
        return ref.snapshot_id if ref else None

    def commit(self, operation: str, note: str, *, days: float, added: Sequence[DataFile] = (),
               removed: Sequence[DataFile] = (), removed_entries: Sequence[ManifestEntry] = (),
               branch: str = MAIN_BRANCH,
               stage_only: bool = False, extra: dict[str, str] | None = None,
               deleted_positions: dict[str, list[int]] | None = None) -> int:
        t = self.table
        parent = self.head(branch)
        live = {e.data_file.file_path: e for e in t.live_entries(t.metadata.snapshot_by_id(parent))} \
            if removed else {}
        change = SnapshotChange(operation, added=list(added),
                                removed=[(live[f.file_path], f) for f in removed] +
                                [(e, e.data_file) for e in removed_entries],
                                extra_summary=dict(extra or {}))
        sid = self.ids_rng.getrandbits(63) or 1
        ts = self.at(days)
        txn = Transaction(t, now_ms=ts)
        self.send(txn.stage(build_snapshot(txn, change, branch=branch, timestamp_ms=ts, snapshot_id=sid,
                                           stage_only=stage_only)))
        state = dict(self.states.get(parent, {})) if parent is not None else {}
        for f in removed:
            del state[f.file_path]
        for f in added:
            if f.content == FileContent.DATA:
                state[f.file_path] = frozenset()
        for p, pos in (deleted_positions or {}).items():
            state[p] = state[p] | frozenset(pos)
        self.states[sid] = state
        self.notes[sid] = note
        return sid

    def row_deletes(self, positions: list[tuple[DataFile, list[int]]], *, days: float) -> int:
        """Delete rows of main: a position delete file per partition (v2), or a deletion vector
        per data file (v3), merged with the file's vector from an earlier delete."""
        by_path = {f.file_path: sorted(pos) for f, pos in positions}
        files = {f.file_path: f for f, _ in positions}
        removed: list[ManifestEntry] = []
        if self.v >= 3:
            head = self.head(MAIN_BRANCH)
            merged = {p: set(pos) for p, pos in by_path.items()}
            for p in merged:
                merged[p] |= self.states[head][p]
            t = self.table
            removed = [e for e in t.live_entries(t.metadata.snapshot_by_id(head))
                       if e.data_file.is_deletion_vector and e.data_file.referenced_data_file in merged]
            added = write_deletion_vectors(t, merged, files)
        else:
            per_part: dict[tuple, dict[str, list[int]]] = {}
            for p, pos in by_path.items():
                per_part.setdefault((files[p].spec_id, files[p].partition), {})[p] = pos
            added = [write_position_delete_file(self.table, rows, spec_id=spec_id, partition=partition)
                     for (spec_id, partition), rows in per_part.items()]
        days_of = sorted({str(_day_of(f)) for f, _ in positions})
        n = sum(len(p) for p in by_path.values())
        kind = "deletion vector" if self.v >= 3 else "position delete file"
        note = f"{n} rows of {', '.join(days_of)} deleted ({_count(len(added), kind)})"
        return self.commit("delete", note, added=added, removed_entries=removed, days=days, deleted_positions=by_path)

    def metadata_commit(self, updates: list[TableUpdate], *, days: float) -> None:
        """Commit updates that add no snapshot, as of ``days`` ago."""
        ts = self.at(days)
        self.send(Transaction(self.table, now_ms=ts).stage(updates))

    def send(self, txn: Transaction) -> None:
        done = txn.commit()
        self.table = done.table
        self.commits.append(done.sent_json())

    def add_column(self, *, days: float) -> None:
        """Schema evolution: an optional ``country`` string column in a new schema."""
        md = self.table.metadata
        old = md.schema
        new = Schema(old.fields + (NestedField(md.last_column_id + 1, ADDED_COLUMN, PrimitiveType("string")),),
                     schema_id=old.schema_id, identifier_field_ids=old.identifier_field_ids)
        # The updates a client's builder records: add-schema (a new id) and set-current-schema.
        self.metadata_commit(MetadataBuilder(md).set_current_schema(new).changes, days=days)

    def plant_orphan(self, day: dt.date) -> tuple[str, bool]:
        """A Parquet file that no snapshot references (as a failed write leaves one), 8 days old."""
        import os

        import pyarrow as pa

        t = self.table
        path = join(self.location, "data", f"ts_day={day}", f"00000-0-{uuid.uuid4()}-00001-failed-job.parquet")
        target = output_schema(t.metadata.schema_by_id(0), False)
        rows = self.rows(day, 5, user=None, qa_rows=0, country=False)
        data = pa.Table.from_arrays([pa.array([r[i] for r in rows], type=f.type) for i, f in enumerate(target)],
                                    schema=target)
        write_parquet(t.io, path, data)
        local = t.io.local_file(path)
        if local is None:
            return path, False
        old = (self.now - ORPHAN_AGE_MS) / 1000
        os.utime(local, (old, old))
        return path, True

    # -- the result --------------------------------------------------------------------------------

    def rows_of(self, snapshot_id: int) -> list[tuple]:
        out = []
        for path, deleted in self.states[snapshot_id].items():
            out += [r for i, r in enumerate(self.file_rows[path]) if i not in deleted]
        return sorted(out)

    def result(self, staged: int, *, orphans: list[str], aged: bool, prefix: str) -> DemoResult:
        t = self.table
        md = t.metadata
        name = ident_str(self.ident)
        rows = {sid: self.rows_of(sid) for sid in self.states}
        refs = [DemoRef(n, r.ref_type, r.snapshot_id, len(rows[r.snapshot_id])) for n, r in ref_rows(md)]
        by_snapshot: dict[int, list[str]] = {}
        for r in refs:
            by_snapshot.setdefault(r.snapshot_id, []).append(r.name)
        branch_of = {}
        for r in refs:
            if r.type == "branch":
                for s in md.ancestors_of(r.snapshot_id):
                    branch_of.setdefault(s.snapshot_id, r.name)
        snapshots = [DemoSnapshot(s.snapshot_id, s.parent_snapshot_id, s.operation or "", s.timestamp_ms,
                                  _iso(s.timestamp_ms), branch_of.get(s.snapshot_id),
                                  by_snapshot.get(s.snapshot_id, []), len(rows[s.snapshot_id]),
                                  self.notes[s.snapshot_id])
                     for s in sorted(md.snapshots, key=lambda s: s.timestamp_ms)]
        main = [f for _, f in t.live_files(md.current_snapshot)]
        tag = md.refs[TAG].snapshot_id
        first_day = f"ts_day={EVENT_DAYS[0]}"
        commands = [
            DemoCommand(f"{prefix} snapshots {name} --tree", "the history, with branches and tags"),
            DemoCommand(f"{prefix} files {name}", "live data and delete files of main"),
            DemoCommand(f"{prefix} expire {name} --dry-run --explain",
                        "snapshots older than 5 days, files only they reach"),
            DemoCommand(f"{prefix} remove-orphans {name} --dry-run", "files older than 3 days that nothing references"),
            DemoCommand(f"{prefix} compact {name} --dry-run", f"the small files of {first_day}"),
            DemoCommand(f"{prefix} rewrite-deletes {name} --dry-run",
                        f"merge the position delete files of {first_day}" if self.v == 2
                        else "deletion vectors are already one per data file: nothing to do"),
            DemoCommand(f"{prefix} cherry-pick {name} {staged} --dry-run", "publish the staged WAP snapshot"),
            DemoCommand(f"{prefix} rollback {name} --to-snapshot {tag} --dry-run", f"back to tag {TAG}"),
            DemoCommand(f"{prefix} validate {name} --deep", "every layer checked, files too"),
        ]
        return DemoResult(
            table=name, location=self.location, metadata_location=t.metadata_location, format_version=self.v,
            snapshots=snapshots, data_files=sum(1 for f in main if f.content == FileContent.DATA),
            delete_files=sum(1 for f in main if f.content != FileContent.DATA),
            records=len(rows[md.current_snapshot_id]), refs=refs, staged_snapshot_id=staged, wap_id=WAP_ID,
            schema_ids=[s.schema_id for s in md.schemas], added_column=ADDED_COLUMN, orphan_files=orphans,
            orphan_age_days=ORPHAN_AGE_MS // DAY_MS if aged else None,
            try_commands=commands, rows_by_snapshot=rows, commits=self.commits)


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _day_of(f: DataFile) -> dt.date:
    return dt.date(1970, 1, 1) + dt.timedelta(days=f.partition[0])


def _iso(ms: int) -> str:
    return millis_to_iso(ms)


__all__ = ["DemoCommand", "DemoRef", "DemoResult", "DemoSnapshot", "build_demo", "check_demo_arguments"]
