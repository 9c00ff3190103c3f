#!/usr/bin/env python
"""Generate a neglected table (metadata only): 100,000 small appends never expired.

The shape of a streaming job that nobody maintained (issue 26): every micro-batch appends a few
small files (``--files-per-snapshot``, default 2) with Iceberg Java's ``MergeAppend``
(``table.newAppend()``: what Spark's batch ``writeTo(...).append()`` inside ``foreachBatch``,
Flink's and Kafka Connect's sinks commit; Spark's own streaming sink commits fast appends, which
at 100,000 commits would put 100,000 manifests in every manifest list), for ``--snapshots``
commits (default 100,000) over ``--days`` days, with:

- full snapshot summaries with every key Iceberg Java (main, 1.11) writes for such an append
  (``SnapshotSummary.Builder``: added-data-files, added-records, added-files-size,
  changed-partition-count, partition-summaries-included and ``partitions.<path>`` as
  ``write.summary.partition-limit`` (set to ``--partition-summary-limit``, 10) asks;
  ``SnapshotProducer``: manifests-created, manifests-kept, manifests-replaced, total-records,
  total-files-size, total-data-files, total-delete-files, total-position-deletes,
  total-equality-deletes; ``spark.app.id`` from Spark's write; engine-name, engine-version,
  iceberg-version from ``EnvironmentContext``); the Spark application id changes every
  ``--restart-every`` commits, as a restarted job gets a new one;
- a schema change (``ADD COLUMN device string``, schema 1) at 40% of the commits and a partition
  spec change (``day(ts)`` -> ``day(ts), event_type``, spec 1) at 60%;
- 3 branches and 20 tags besides ``main`` on older snapshots, some with retention settings
  (``max-ref-age-ms``, ``min-snapshots-to-keep``, ``max-snapshot-age-ms``);
- a metadata log of the ``--metadata-log`` (1,000) previous versions, each a real, readable
  metadata file in the metadata folder (``write.metadata.previous-versions-max`` is set to the
  same number, as Java trims the log to it). To keep them small, each previous version holds only
  the snapshots its refs point to (as if expired), with the schemas, specs and refs of its time;
- the current metadata file (compact JSON, as Java writes it) of over 100 MB at full size.

Manifests are merged by the rules of ``gen_large_table.py`` (``ManifestMergeManager``: bins of
``commit.manifest.target-size-bytes`` packed from the oldest, the bin with the new manifest merged
at ``min-count-to-merge`` manifests), per partition spec as Java groups them. To make 100,000
commits practical, a merged manifest copies the compressed Avro blocks of the manifest it
replaces whose entries are all EXISTING (they encode the same in any manifest): only the new
ADDED entries and the entries of the small one-commit manifests are encoded again, so all
manifests of the table share one Avro sync marker. Entries of a merged manifest come in the order
ADDED, then the re-encoded EXISTING, then the copied blocks (Java writes the bin's manifests in
order; no reader depends on the order).

Layout: a file-system (Hadoop) table, ``metadata/v<N>.metadata.json`` and ``version-hint.text``,
that the SQL catalog ``bench`` (``<out>/catalog.db``) also registers as ``bench.neglected``:
``icectl --warehouse <out>/warehouse`` and ``icectl -c bench`` (``ICECTL_CONFIG=<out>/icectl.yaml``)
read the same files, as do Iceberg Java's HadoopCatalog and JdbcCatalog. By default data files do
not exist (no command measured reads one, and an append-only table's expiry deletes none).

``--data-files`` writes a real, small Parquet file (1-20 rows, zstd, field ids in the Parquet
schema, pyarrow) for every data file entry, as Iceberg Java's Parquet writer would describe it:
record_count and file_size_in_bytes of the file written, column_sizes (the column chunks'
compressed sizes), value_counts, null_value_counts, nan_value_counts (``amount``), lower and
upper bounds of the rows written (strings truncated to 16 characters, the upper bound's last
character incremented, as ``write.metadata.metrics.default=truncate(16)``), split_offsets (the
row group's start) and partition values from the rows (``day(ts)``; ``event_type`` after the
spec change). Then ``validate --deep`` finds every file and a Java scan reads real rows (the
rescue proof, ``bench/prove_rescue.py``). About 1.7 ms per file: 200,000 files add ~6 minutes.

    python bench/gen_neglected_table.py                    # full size into .cache/neglected (~5-10 min)
    python bench/gen_neglected_table.py --out /tmp/n --snapshots 200 --metadata-log 20
    python bench/gen_neglected_table.py --out /tmp/n --snapshots 300 --data-files --force
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gen_large_table as g  # noqa: E402  (bench/ is not a package)

from icectl.expr.partition import partition_spec  # noqa: E402
from icectl.expr.schema import parse_schema  # noqa: E402
from icectl.formats import avro_schemas  # noqa: E402
from icectl.formats.manifest import partition_fields  # noqa: E402
from icectl.spec.conversions import to_bytes  # noqa: E402
from icectl.spec.metadata import (  # noqa: E402
    MetadataLogEntry,
    Snapshot,
    SnapshotLogEntry,
    SnapshotRef,
    TableMetadata,
)
from icectl.spec.partitioning import UNSORTED  # noqa: E402

NAMESPACE, TABLE_NAME = "bench", "neglected"
IDENTIFIER = f"{NAMESPACE}.{TABLE_NAME}"
SCHEMA1_TEXT = g.SCHEMA_TEXT + ", device:string"
SPEC1_TEXT = "day(ts), event_type"
DEVICES = ["android", "ios", "tv", "web"]
DAY_MS = 86_400_000
ICEBERG_VERSION = "Apache Iceberg 1.11.0 (commit 7f879b11366e17a676a03f15247a821751415529)"
# Parquet zstd bytes per column and row, roughly (as gen_large_table); column 9 is `device`.
PER_COL = {1: 1.2, 2: 2.1, 3: 4.6, 4: 0.4, 5: 6.8, 6: 0.6, 7: 17.5, 8: 1.9, 9: 0.3}
BRANCHES = (  # name, position in the history, retention
    ("audit", 0.50, {"min_snapshots_to_keep": 10, "max_snapshot_age_ms": 7 * DAY_MS}),
    ("backfill", 0.90, {}),
    ("staging", 0.99, {"max_ref_age_ms": 30 * DAY_MS}),
)
# --data-files: the Parquet schema of each table schema (field ids as Iceberg Java writes them).
ARROW_FIELDS = [("id", pa.int64(), False), ("ts", pa.timestamp("us", tz="UTC"), False), ("user_id", pa.int64(), True),
                ("event_type", pa.string(), True), ("amount", pa.float64(), True), ("country", pa.string(), True),
                ("session_id", pa.string(), True), ("payload_size", pa.int32(), True), ("device", pa.string(), True)]
ARROW_SCHEMAS = [pa.schema([pa.field(name, t, nullable=nullable, metadata={"PARQUET:field_id": str(k + 1)})
                            for k, (name, t, nullable) in enumerate(ARROW_FIELDS[:ncols])]) for ncols in (8, 9)]
NULLABLE = {3, 5, 6, 9}  # columns with some nulls in the rows written
TRUNCATE = 16  # write.metadata.metrics.default: truncate(16)


@dataclass
class Block:
    """One compressed Avro block of a manifest and what it holds."""

    data: bytes  # count, size, deflated records, sync
    reusable: bool  # every entry EXISTING: the block is the same in any manifest of its spec
    files: list[int]
    rows: int
    min_seq: int
    min_day: int
    max_day: int
    min_evt: str | None
    max_evt: str | None


class NeglectedGenerator(g.Generator):
    def __init__(self, args: argparse.Namespace):
        args.format_version = 2
        args.merge = True
        super().__init__(args)
        self.location = os.path.join(self.out, "warehouse", NAMESPACE, TABLE_NAME)
        self.metadata_dir = os.path.join(self.location, "metadata")
        schema1 = parse_schema(SCHEMA1_TEXT)
        self.schemas = [self.schema, dataclasses.replace(schema1, schema_id=1)]
        self.specs = [self.spec, partition_spec(SPEC1_TEXT, self.schemas[1], spec_id=1)]
        self.types = {f.field_id: f.field_type for f in self.schemas[1].fields}
        self.entry_schemas = [avro_schemas.manifest_entry_schema(2, avro_schemas.partition_record(
            partition_fields(sp, self.schemas[1]))) for sp in self.specs]
        self.sync = self.rng.getrandbits(128).to_bytes(16, "little")
        self.schema_id = 0
        self.spec_id = 0
        self.evt: list[str] = []
        self._headers: dict[tuple[int, int], bytes] = {}
        self._dirs: set[str] = set()
        self.data_files_written = 0

    # -- data files -------------------------------------------------------------------------------
    def small_file(self, day: int, task: int, write_uuid: str, snapshot_id: int, seq: int) -> int:
        """One small data file of the current schema and spec; its index."""
        if self.args.data_files:
            return self.parquet_file(day, task, write_uuid, snapshot_id, seq)
        rng = self.rng
        t = self.types
        cols = list(range(1, 9 + (self.schema_id >= 1)))
        n = rng.randint(2_000, 60_000)
        col_sizes = {c: int(n * PER_COL[c] * rng.uniform(0.9, 1.1)) + 40 for c in cols}
        size = sum(col_sizes.values()) + rng.randint(4_000, 12_000)
        nulls = {c: (rng.randint(0, n // 50) if c in (3, 5, 6, 9) else 0) for c in cols}
        evt = g.EVENT_TYPES[rng.randrange(len(g.EVENT_TYPES))]
        first_id = self.next_id
        self.next_id += n
        day_start = day * g.MICROS_PER_DAY
        ts_lo = day_start + rng.randint(0, 3_600_000_000)
        ts_hi = ts_lo + rng.randint(1_000_000, 1_800_000_000)
        s_lo = "00" + self.new_uuid()[2:16]
        s_hi = "ff" + self.new_uuid()[2:15] + "g"  # truncated to 16 characters, last one incremented
        by_spec = self.spec_id == 1
        lower = {1: first_id, 2: ts_lo, 3: rng.randint(1, 5_000), 4: evt if by_spec else g.EVENT_TYPES[0],
                 5: rng.uniform(0.0, 1.0), 6: g.COUNTRIES[rng.randint(0, 2)], 7: s_lo, 8: rng.randint(0, 64),
                 9: DEVICES[0]}
        upper = {1: first_id + n - 1, 2: ts_hi, 3: rng.randint(9_990_000, 9_999_999),
                 4: evt if by_spec else g.EVENT_TYPES[-1], 5: rng.uniform(9_000.0, 10_000.0),
                 6: g.COUNTRIES[rng.randint(-3, -1)], 7: s_hi, 8: rng.randint(60_000, 65_535), 9: DEVICES[-1]}
        folder = f"ts_day={g._iso_day(day)}" + (f"/event_type={evt}" if by_spec else "")
        path = f"{self.location}/data/{folder}/{task:05d}-{seq}-{write_uuid}-0-00001.parquet"
        partition = g.SOME + g.zz(day) + (g.SOME + g.enc_str(evt) if by_spec else b"")
        k = g.zz(len(cols))
        nc = g.zz(n)
        parts = [b"\x00", g.enc_str(path), g.enc_str("PARQUET"), partition, nc, g.zz(size),
                 g.SOME + k + b"".join(g._key(c) + g.zz(col_sizes[c]) for c in cols) + b"\x00",
                 g.SOME + k + b"".join(g._key(c) + nc for c in cols) + b"\x00",
                 g.SOME + k + b"".join(g._key(c) + g.zz(nulls[c]) for c in cols) + b"\x00",
                 g.SOME + b"\x02" + g._key(5) + b"\x00" + b"\x00",
                 g.SOME + k + b"".join(g._key(c) + g.enc_bytes(to_bytes(t[c], lower[c])) for c in cols) + b"\x00",
                 g.SOME + k + b"".join(g._key(c) + g.enc_bytes(to_bytes(t[c], upper[c])) for c in cols) + b"\x00",
                 g.NULL, g.SOME + b"\x02" + g.zz(4) + b"\x00", g.NULL, g.SOME + g.zz(0), g.NULL]
        self.evt.append(evt if by_spec else "")
        return self.store_file(parts, snapshot_id, seq, n, size, day)

    def parquet_file(self, day: int, task: int, write_uuid: str, snapshot_id: int, seq: int) -> int:
        """One small data file written as Parquet (``--data-files``), its entry from its rows."""
        rng = self.rng
        t = self.types
        ncols = 8 + (self.schema_id >= 1)
        cols = range(1, ncols + 1)
        n = rng.randint(1, 20)
        by_spec = self.spec_id == 1
        evt = g.EVENT_TYPES[rng.randrange(len(g.EVENT_TYPES))]
        first_id = self.next_id
        self.next_id += n
        day_start = day * g.MICROS_PER_DAY

        def maybe(v):
            return None if rng.random() < 0.05 else v

        values = {
            1: list(range(first_id, first_id + n)),
            2: sorted(day_start + rng.randrange(g.MICROS_PER_DAY) for _ in range(n)),
            3: [maybe(rng.randint(1, 9_999_999)) for _ in range(n)],
            4: [evt if by_spec else g.EVENT_TYPES[rng.randrange(len(g.EVENT_TYPES))] for _ in range(n)],
            5: [maybe(round(rng.uniform(0.0, 10_000.0), 2)) for _ in range(n)],
            6: [maybe(g.COUNTRIES[rng.randrange(len(g.COUNTRIES))]) for _ in range(n)],
            7: [self.new_uuid() for _ in range(n)],
            8: [rng.randint(0, 65_535) for _ in range(n)],
            9: [maybe(DEVICES[rng.randrange(len(DEVICES))]) for _ in range(n)],
        }
        schema = ARROW_SCHEMAS[ncols - 8]
        table = pa.Table.from_arrays([pa.array(values[c], type=schema.field(c - 1).type) for c in cols], schema=schema)
        buf = pa.BufferOutputStream()
        footers: list = []
        pq.write_table(table, buf, compression="zstd", metadata_collector=footers)
        data = buf.getvalue().to_pybytes()
        rg = footers[0].row_group(0)
        col_sizes = {c: rg.column(c - 1).total_compressed_size for c in cols}
        split = min(rg.column(0).dictionary_page_offset or rg.column(0).data_page_offset,
                    rg.column(0).data_page_offset)
        nulls = {c: sum(v is None for v in values[c]) for c in cols}
        lower, upper = {}, {}
        for c in cols:
            present = [v for v in values[c] if v is not None]
            if not present:
                continue
            lo, hi = min(present), max(present)
            if isinstance(lo, str) and len(lo) > TRUNCATE:
                lo = lo[:TRUNCATE]
            if isinstance(hi, str) and len(hi) > TRUNCATE:
                hi = hi[:TRUNCATE - 1] + chr(ord(hi[TRUNCATE - 1]) + 1)
            lower[c], upper[c] = lo, hi
        folder = f"ts_day={g._iso_day(day)}" + (f"/event_type={evt}" if by_spec else "")
        directory = f"{self.location}/data/{folder}"
        if directory not in self._dirs:
            os.makedirs(directory, exist_ok=True)
            self._dirs.add(directory)
        path = f"{directory}/{task:05d}-{seq}-{write_uuid}-0-00001.parquet"
        self._write(path, data)
        self.data_files_written += 1
        partition = g.SOME + g.zz(day) + (g.SOME + g.enc_str(evt) if by_spec else b"")
        size = len(data)

        def int_map(m: dict[int, int]) -> bytes:
            return g.SOME + g.zz(len(m)) + b"".join(g._key(c) + g.zz(x) for c, x in m.items()) + b"\x00"

        def bound_map(m: dict) -> bytes:
            return (g.SOME + g.zz(len(m)) + b"".join(g._key(c) + g.enc_bytes(to_bytes(t[c], x)) for c, x in m.items())
                    + b"\x00")

        parts = [b"\x00", g.enc_str(path), g.enc_str("PARQUET"), partition, g.zz(n), g.zz(size),
                 int_map(col_sizes), int_map({c: n for c in cols}), int_map(nulls), int_map({5: 0}),
                 bound_map(lower), bound_map(upper),
                 g.NULL, g.SOME + b"\x02" + g.zz(split) + b"\x00", g.NULL, g.SOME + g.zz(0), g.NULL]
        self.evt.append(evt if by_spec else "")
        return self.store_file(parts, snapshot_id, seq, n, size, day)

    # -- manifests from blocks --------------------------------------------------------------------
    def _header(self, spec_id: int) -> bytes:
        key = (spec_id, self.schema_id)
        if key not in self._headers:
            schema, spec = self.schemas[self.schema_id], self.specs[spec_id]
            meta = {"avro.schema": json.dumps(self.entry_schemas[spec_id], separators=(",", ":")),
                    "avro.codec": "deflate", "schema": json.dumps(schema.to_json()),
                    "schema-id": str(schema.schema_id), "partition-spec": json.dumps(spec.fields_json(2)),
                    "partition-spec-id": str(spec_id), "format-version": "2", "content": "data"}
            parts = [b"Obj\x01", g.zz(len(meta))]
            for k, v in meta.items():
                parts += [g.enc_str(k), g.enc_str(v)]
            self._headers[key] = b"".join(parts + [b"\x00", self.sync])
        return self._headers[key]

    def _encode(self, files: list[int], snapshot_id: int, reusable: bool, spec_id: int) -> list[Block]:
        out: list[Block] = []
        f = self.files
        start, size, records = 0, 0, []
        for k, i in enumerate(files):
            r = self.entry(i, snapshot_id)
            records.append(r)
            size += len(r)
            if size >= g.AVRO_SYNC_INTERVAL or k == len(files) - 1:
                chunk = files[start:k + 1]
                evts = [self.evt[j] for j in chunk] if spec_id == 1 else None
                days = [f.day[j] for j in chunk]
                out.append(Block(g._block(records, -1, self.sync), reusable, chunk, sum(f.rows[j] for j in chunk),
                                 min(f.seq[j] for j in chunk), min(days), max(days),
                                 min(evts) if evts else None, max(evts) if evts else None))
                start, size, records = k + 1, 0, []
        return out

    def _emit(self, spec_id: int, blocks: list[Block], snapshot_id: int, seq: int, n: int) -> g.Manifest:
        path = f"{self.metadata_dir}/{self._commit_uuid}-m{n}.avro"
        data = self._header(spec_id) + b"".join(b.data for b in blocks)
        self._write(path, data)
        added = [b for b in blocks if not b.reusable]
        existing = [b for b in blocks if b.reusable]
        m = g.Manifest(
            path=path, length=len(data), files=[i for b in blocks for i in b.files], added_snapshot_id=snapshot_id,
            sequence_number=seq, min_sequence_number=min([b.min_seq for b in existing] + [seq]),
            added_files=sum(len(b.files) for b in added), existing_files=sum(len(b.files) for b in existing),
            added_rows=sum(b.rows for b in added), existing_rows=sum(b.rows for b in existing),
            min_day=min(b.min_day for b in blocks), max_day=max(b.max_day for b in blocks))
        m.spec_id = spec_id
        m.blocks = blocks
        evts = [e for b in blocks for e in (b.min_evt, b.max_evt) if e is not None]
        m.evt_range = (min(evts), max(evts)) if evts else None
        return m

    def write_merged(self, bin_: list[g.Manifest], snapshot_id: int, seq: int) -> g.Manifest:
        added, fresh, reused = [], [], []
        for m in bin_:
            for b in m.blocks:
                if b.reusable:
                    reused.append(b)
                    continue
                for i in b.files:
                    (added if self.files.snapshot_id[i] == snapshot_id else fresh).append(i)
        spec_id = bin_[0].spec_id
        blocks = (self._encode(added, snapshot_id, False, spec_id) + self._encode(fresh, snapshot_id, True, spec_id)
                  + reused)
        return self._emit(spec_id, blocks, snapshot_id, seq, self._manifest_counter)

    def manifest_list_record(self, m: g.Manifest) -> bytes:
        def field_summary(lo: bytes, hi: bytes) -> bytes:
            return g.FALSE + g.SOME + g.FALSE + g.SOME + g.enc_bytes(lo) + g.SOME + g.enc_bytes(hi)

        sums = [field_summary(to_bytes("date", m.min_day), to_bytes("date", m.max_day))]
        if m.spec_id == 1:
            lo, hi = m.evt_range
            sums.append(field_summary(lo.encode(), hi.encode()))
        summary = g.SOME + g.zz(len(sums)) + b"".join(sums) + b"\x00"
        return b"".join([g.enc_str(m.path), g.zz(m.length), g.zz(m.spec_id), b"\x00", g.zz(m.sequence_number),
                         g.zz(m.min_sequence_number), g.zz(m.added_snapshot_id), g.zz(m.added_files),
                         g.zz(m.existing_files), g.zz(0), g.zz(m.added_rows), g.zz(m.existing_rows), g.zz(0),
                         summary, g.NULL])

    # -- the history ------------------------------------------------------------------------------
    def run(self) -> dict:  # noqa: C901 (one linear history)
        a = self.args
        rng = self.rng
        t0 = time.perf_counter()
        os.makedirs(self.metadata_dir, exist_ok=True)
        n = a.snapshots
        start_ms = int(dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc).timestamp() * 1000)
        step_ms = a.days * DAY_MS / n
        start_day = start_ms // DAY_MS
        schema_at, spec_at = int(n * a.schema_change_at), int(n * a.spec_change_at)
        ref_at: dict[int, list[tuple[str, str, dict]]] = {}
        for name, pos, retention in BRANCHES[:a.branches]:
            ref_at.setdefault(min(n - 1, int(n * pos)), []).append((name, "branch", retention))
        for k in range(a.tags):
            s = min(n - 1, int(n * (k + 1) / (a.tags + 1)))
            retention = {"max_ref_age_ms": 90 * DAY_MS} if k % 2 else {}
            ref_at.setdefault(s, []).append((f"tag-{k:02d}", "tag", retention))
        manifests: list[g.Manifest] = []
        snapshots: list[Snapshot] = []
        log: list[SnapshotLogEntry] = []
        refs: list[tuple[str, SnapshotRef]] = []
        # One row per metadata version, v1 (the create) first: (timestamp, current snapshot index,
        # schemas, specs, refs) as of that version.
        versions: list[tuple[int, int, int, int, int]] = [(start_ms, -1, 1, 1, 0)]
        totals = {"records": 0, "size": 0, "files": 0}
        parent: Snapshot | None = None
        for s in range(n):
            seq = s + 1
            ts_ms = start_ms + int(s * step_ms) + rng.randint(0, max(1, int(step_ms) // 2))
            if s == schema_at:
                self.schema_id = 1
                versions.append((ts_ms - 2, s - 1, 2, 1 + self.spec_id, len(refs)))
            if s == spec_at:
                self.spec_id = 1
                versions.append((ts_ms - 1, s - 1, 2, 2, len(refs)))
            snapshot_id = rng.getrandbits(63) or 1
            day = start_day + int(s * step_ms) // DAY_MS
            self._commit_uuid = self.new_uuid()
            self._manifest_counter = 0
            write_uuid = self.new_uuid()
            new = [self.small_file(day - 1 if rng.random() < 0.1 and day > start_day else day, k, write_uuid,
                                   snapshot_id, seq) for k in range(a.files_per_snapshot)]
            new_m = self._emit(self.spec_id, self._encode(new, snapshot_id, False, self.spec_id), snapshot_id, seq, 0)
            prev = manifests
            groups: dict[int, list[g.Manifest]] = {}
            for m in [new_m] + manifests:
                groups.setdefault(m.spec_id, []).append(m)
            manifests = [m for sp in sorted(groups, reverse=True)
                         for m in self.merge(groups[sp], snapshot_id, seq, first=new_m)]
            for m in manifests:
                if m.encoded is None:
                    m.encoded = self.manifest_list_record(m)
            list_meta = {"snapshot-id": str(snapshot_id),
                         "parent-snapshot-id": str(parent.snapshot_id) if parent else "null",
                         "sequence-number": str(seq), "format-version": "2"}
            list_path = f"{self.metadata_dir}/snap-{snapshot_id}-1-{self._commit_uuid}.avro"
            self._write(list_path, g.container(self.list_schema, list_meta, [m.encoded for m in manifests], rng=rng))
            f = self.files
            added_records = sum(f.rows[i] for i in new)
            added_size = sum(f.size[i] for i in new)
            totals["records"] += added_records
            totals["size"] += added_size
            totals["files"] += len(new)
            created = sum(1 for m in manifests if m.added_snapshot_id == snapshot_id)
            kept = len(manifests) - created
            parts: dict[str, list[int]] = {}
            for i in new:
                key = f"ts_day={g._iso_day(f.day[i])}" + (f"/event_type={self.evt[i]}" if self.evt[i] else "")
                c = parts.setdefault(key, [0, 0, 0])
                c[0] += 1
                c[1] += f.rows[i]
                c[2] += f.size[i]
            summary = {
                "operation": "append",
                "spark.app.id": f"application_{start_ms + (s // a.restart_every) * 3_600_000}_{s // a.restart_every:04d}",
                "added-data-files": str(len(new)),
                "added-records": str(added_records),
                "added-files-size": str(added_size),
                "changed-partition-count": str(len(parts)),
                **({"partition-summaries-included": "true"} if len(parts) <= a.partition_summary_limit else {}),
                **{f"partitions.{k}": f"added-data-files={c[0]},added-records={c[1]},added-files-size={c[2]}"
                   for k, c in (parts.items() if len(parts) <= a.partition_summary_limit else ())},
                "manifests-created": str(created),
                "manifests-kept": str(kept),
                "manifests-replaced": str(len(prev) + 1 - kept - any(m is new_m for m in manifests)),
                "total-records": str(totals["records"]),
                "total-files-size": str(totals["size"]),
                "total-data-files": str(totals["files"]),
                "total-delete-files": "0",
                "total-position-deletes": "0",
                "total-equality-deletes": "0",
                "engine-version": "3.5.3",
                "engine-name": "spark",
                "iceberg-version": ICEBERG_VERSION,
            }
            snap = Snapshot(snapshot_id=snapshot_id, timestamp_ms=ts_ms,
                            parent_snapshot_id=parent.snapshot_id if parent else None, sequence_number=seq,
                            manifest_list=list_path, summary=summary, schema_id=self.schema_id)
            snapshots.append(snap)
            log.append(SnapshotLogEntry(ts_ms, snapshot_id))
            versions.append((ts_ms, s, 1 + self.schema_id, 1 + self.spec_id, len(refs)))
            parent = snap
            for name, kind, retention in ref_at.get(s, ()):
                refs.append((name, SnapshotRef(snapshot_id, kind, **retention)))
                versions.append((ts_ms + 1, s, 1 + self.schema_id, 1 + self.spec_id, len(refs)))
            if a.progress and (s + 1) % max(1, n // 20) == 0:
                print(f"  {s + 1:>7} snapshots, {len(f.body):>7} files, {len(manifests):>4} manifests, "
                      f"{self.merges} merges, {self.bytes_written / 1e6:8.0f} MB, {time.perf_counter() - t0:6.1f} s",
                      file=sys.stderr, flush=True)
        t_manifests = time.perf_counter() - t0

        props = {"write.parquet.compression-codec": "zstd", "owner": "streaming-job",
                 "write.metadata.previous-versions-max": str(a.metadata_log)}
        if a.partition_summary_limit:
            props["write.summary.partition-limit"] = str(a.partition_summary_limit)
        current = len(versions)  # v1 is the create, so the last version is v<len>
        first_logged = max(1, current - a.metadata_log)

        def metadata(version: int, every: bool) -> TableMetadata:
            ts, s, nschemas, nspecs, nrefs = versions[version - 1]
            cur = snapshots[s] if s >= 0 else None
            ref_map = {name: r for name, r in refs[:nrefs]}
            if cur is not None:
                ref_map = {"main": SnapshotRef(cur.snapshot_id, "branch"), **ref_map}
            if every:
                snaps, slog = tuple(snapshots), tuple(log)
                mlog = tuple(MetadataLogEntry(versions[k - 1][0], self.version_path(k))
                             for k in range(first_logged, version))
            else:
                keep = {r.snapshot_id for r in ref_map.values()}
                snaps = tuple(sorted((by_id[i] for i in keep), key=lambda x: x.sequence_number))
                slog, mlog = ((SnapshotLogEntry(cur.timestamp_ms, cur.snapshot_id),) if cur else ()), ()
            schemas, specs = tuple(self.schemas[:nschemas]), tuple(self.specs[:nspecs])
            return TableMetadata(
                format_version=2, table_uuid=self.table_uuid, location=self.location, last_updated_ms=ts,
                last_column_id=schemas[-1].highest_field_id, schemas=schemas, current_schema_id=nschemas - 1,
                partition_specs=specs, default_spec_id=nspecs - 1, last_partition_id=specs[-1].last_field_id,
                last_sequence_number=cur.sequence_number if cur else 0, properties=props,
                current_snapshot_id=cur.snapshot_id if cur else None, snapshots=snaps, snapshot_log=slog,
                metadata_log=mlog, sort_orders=(UNSORTED,), default_sort_order_id=0, refs=ref_map)

        self.table_uuid = self.new_uuid()
        by_id = {x.snapshot_id: x for x in snapshots}
        for k in range(first_logged, current):
            self._write(self.version_path(k), compact(metadata(k, every=False)))
        t_json = time.perf_counter()
        current_bytes = compact(metadata(current, every=True))
        md_path = self.version_path(current)
        self._write(md_path, current_bytes)
        with open(os.path.join(self.metadata_dir, "version-hint.text"), "w") as fh:
            fh.write(str(current))
        t_json = time.perf_counter() - t_json
        register(self.out, md_path)
        g.write_configs(self.out)
        info = {
            "identifier": IDENTIFIER, "catalog": g.CATALOG_NAME, "format_version": 2, "snapshots": len(snapshots),
            "live_data_files": sum(len(m.files) for m in manifests), "files_per_snapshot": a.files_per_snapshot,
            "days": a.days, "seed": a.seed, "schemas": 2, "specs": 2, "refs": 1 + len(refs),
            "branches": 1 + sum(1 for _, r in refs if r.is_branch), "tags": sum(1 for _, r in refs if not r.is_branch),
            "metadata_version": current, "metadata_log": current - first_logged,
            "manifests_in_current_snapshot": len(manifests),
            "manifest_bytes_in_current_snapshot": sum(m.length for m in manifests),
            "merges": self.merges, "entries_rewritten_by_merges": self.merged_entries,
            "min_count_to_merge": a.min_count_to_merge, "target_size_bytes": a.target_size_bytes,
            "metadata_location": md_path, "metadata_json_bytes": len(current_bytes),
            "data_files": a.data_files, "data_files_written": self.data_files_written,
            "total_records": totals["records"],
            "files_written": self.files_written, "bytes_written": self.bytes_written,
            "generate_seconds": round(time.perf_counter() - t0, 2), "manifests_seconds": round(t_manifests, 2),
            "metadata_json_seconds": round(t_json, 2),
            "generated_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "python": sys.version.split()[0], "nproc": os.cpu_count(),
        }
        with open(os.path.join(self.out, "gen_info.json"), "w") as fh:
            json.dump(info, fh, indent=2)
        return info

    def version_path(self, version: int) -> str:
        return f"{self.metadata_dir}/v{version}.metadata.json"


def compact(md: TableMetadata) -> bytes:
    """The metadata as Iceberg Java writes it: compact JSON."""
    return json.dumps(md.to_json(), separators=(",", ":")).encode()


def register(out: str, metadata_location: str) -> None:
    from icectl.catalog.sql import SqlCatalog
    from icectl.io import FileIO

    cat = SqlCatalog(g.CATALOG_NAME, g.catalog_uri(out), os.path.join(os.path.abspath(out), "warehouse"), FileIO())
    try:
        cat.register_table((NAMESPACE, TABLE_NAME), metadata_location)
    finally:
        cat._conn.close()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=os.path.join(os.path.dirname(HERE), ".cache", "neglected"),
                   help="output folder (default .cache/neglected)")
    p.add_argument("--snapshots", type=int, default=100_000, help="append commits (default 100000)")
    p.add_argument("--files-per-snapshot", type=int, default=2, help="data files per append (default 2)")
    p.add_argument("--days", type=int, default=70, help="days the commits span (default 70: one a minute)")
    p.add_argument("--metadata-log", type=int, default=1000, help="previous metadata versions logged (default 1000)")
    p.add_argument("--branches", type=int, default=3, choices=range(0, 4), help="branches besides main (default 3)")
    p.add_argument("--tags", type=int, default=20, help="tags (default 20)")
    p.add_argument("--schema-change-at", type=float, default=0.4, help="fraction of the commits (default 0.4)")
    p.add_argument("--spec-change-at", type=float, default=0.6, help="fraction of the commits (default 0.6)")
    p.add_argument("--partition-summary-limit", type=int, default=10,
                   help="write.summary.partition-limit: per-partition summaries of commits changing at most "
                        "this many partitions (default 10; 0: none, Java's default)")
    p.add_argument("--restart-every", type=int, default=5000, help="commits per Spark application id (default 5000)")
    p.add_argument("--min-count-to-merge", type=int, default=g.DEFAULT_MIN_COUNT_TO_MERGE)
    p.add_argument("--target-size-bytes", type=int, default=g.DEFAULT_TARGET_SIZE_BYTES)
    p.add_argument("--seed", type=int, default=20250101)
    p.add_argument("--data-files", action="store_true",
                   help="write a real, small Parquet file (1-20 rows) for every data file entry (~1.7 ms a file)")
    p.add_argument("--force", action="store_true", help="replace a table generated in --out before")
    p.add_argument("--quiet", dest="progress", action="store_false")
    a = p.parse_args(argv)
    if a.snapshots < 10 or a.files_per_snapshot < 1:
        p.error("--snapshots must be at least 10 and --files-per-snapshot at least 1")
    return a


def main(argv: list[str] | None = None) -> dict:
    a = parse_args(argv)
    out = os.path.abspath(a.out)
    table_dir = os.path.join(out, "warehouse", NAMESPACE, TABLE_NAME)
    if os.path.exists(table_dir) or os.path.exists(g.catalog_db(out)):
        if not a.force:
            raise SystemExit(f"{out} already has a table: pass --force to replace it")
        shutil.rmtree(table_dir, ignore_errors=True)
        for name in ("catalog.db", "gen_info.json", "icectl.yaml", ".pyiceberg.yaml"):
            if os.path.exists(os.path.join(out, name)):
                os.remove(os.path.join(out, name))
    os.makedirs(out, exist_ok=True)
    if a.progress:
        print(f"generating {IDENTIFIER}: {a.snapshots} snapshots x {a.files_per_snapshot} files into {out}",
              file=sys.stderr)
    info = NeglectedGenerator(a).run()
    if a.progress:
        print(f"done in {info['generate_seconds']:.0f} s: {info['snapshots']} snapshots, {info['live_data_files']} "
              f"live files in {info['manifests_in_current_snapshot']} manifests, {info['merges']} merges, "
              f"v{info['metadata_version']}.metadata.json {info['metadata_json_bytes'] / 1e6:.1f} MB, "
              f"{info['files_written']} files ({info['bytes_written'] / 1e6:.0f} MB)", file=sys.stderr)
    return info


if __name__ == "__main__":
    main()
