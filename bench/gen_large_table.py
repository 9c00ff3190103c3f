#!/usr/bin/env python
"""Generate a large Iceberg table (metadata only) for benchmarking icectl against PyIceberg.

The table is what a streaming Spark job appending with Iceberg Java's default ``MergeAppend``
leaves behind: N snapshots (default 2,000), each appending F data files (default 100, so 200,000
live files), partitioned by ``day(ts)`` over about a year, with per-file metrics for 8 columns,
and with manifests merged as Iceberg Java's ``MergingSnapshotProducer`` / ``ManifestMergeManager``
merge them with the defaults ``commit.manifest-merge.enabled=true``,
``commit.manifest.min-count-to-merge=100`` and ``commit.manifest.target-size-bytes=8 MB``:

- each commit writes one manifest for its new files, placed first, before the parent's manifests;
- the manifests (one spec here) are packed into bins of at most the target size by
  ``ListPacker(target, lookback=1).packEnd``: greedily, starting from the oldest manifest, so the
  under-filled bin is the one with the newest manifests;
- a bin of one manifest is kept; a bin holding the new manifest is merged only when it has at
  least min-count-to-merge manifests; any other bin of two or more is merged;
- a merged manifest is written by this snapshot: this snapshot's files stay ADDED (sequence
  numbers inherited), every other live entry becomes EXISTING with its original snapshot id,
  data and file sequence numbers (and, v3, its first row id).

Only metadata is written: manifests, manifest lists and one metadata JSON (with the snapshot log
and a metadata log of 100 earlier versions, as Iceberg Java keeps by default), registered in a
SQLite SQL catalog named ``bench`` as ``bench.large``. Data files do not exist, but their sizes and
metrics are written as if they did. Avro files are encoded here directly (deflate codec, 64 KB
blocks as Java's DataFileWriter), because fastavro's generic writer is ~150 us per manifest entry
with these nested optional maps; the tests check that fastavro, icectl and PyIceberg read them.

    python bench/gen_large_table.py                       # full size into bench/data/
    python bench/gen_large_table.py --out /tmp/t --snapshots 20 --files-per-snapshot 10

Outputs in the folder: ``catalog.db``, ``icectl.yaml`` (point ICECTL_CONFIG at it),
``.pyiceberg.yaml`` (point PYICEBERG_HOME at the folder), ``gen_info.json`` (sizes, timings),
and the table under ``warehouse/bench/large``.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import shutil
import sqlite3
import sys
import time
import uuid
import zlib
from dataclasses import dataclass, field

from icectl.formats import avro_schemas
from icectl.spec.conversions import to_bytes
from icectl.expr.partition import partition_spec
from icectl.expr.schema import parse_schema
from icectl.formats.manifest import partition_fields
from icectl.spec.metadata import (
    MetadataLogEntry,
    Snapshot,
    SnapshotLogEntry,
    SnapshotRef,
    TableMetadata,
)
from icectl.spec.partitioning import UNSORTED

CATALOG_NAME = "bench"
NAMESPACE = "bench"
TABLE_NAME = "large"
IDENTIFIER = f"{NAMESPACE}.{TABLE_NAME}"

SCHEMA_TEXT = ("id:long!, ts:timestamptz!, user_id:long, event_type:string, amount:double, "
               "country:string, session_id:string, payload_size:int")
PARTITION_TEXT = "day(ts)"

# Iceberg Java defaults (TableProperties).
DEFAULT_MIN_COUNT_TO_MERGE = 100
DEFAULT_TARGET_SIZE_BYTES = 8 * 1024 * 1024
AVRO_SYNC_INTERVAL = 64000  # org.apache.avro.file.DataFileConstants.DEFAULT_SYNC_INTERVAL
PREVIOUS_VERSIONS_MAX = 100  # write.metadata.previous-versions-max

EVENT_TYPES = ["add_to_cart", "click", "login", "logout", "page_view", "purchase", "search", "view"]
COUNTRIES = ["AD", "AE", "AF", "AR", "AT", "AU", "BE", "BR", "CA", "CH", "CN", "DE", "DK", "ES", "FI",
             "FR", "GB", "IE", "IN", "IT", "JP", "KR", "MX", "NL", "NO", "NZ", "PL", "PT", "SE", "US",
             "UY", "VN", "ZA", "ZM", "ZW"]
MICROS_PER_DAY = 86_400_000_000


# ---------------------------------------------------------------------------------------------
# Avro binary encoding (https://avro.apache.org/docs/current/specification/#binary-encoding)

def zz(n: int) -> bytes:
    """A long as a zig-zag varint."""
    n = (n << 1) ^ (n >> 63)
    if n < 0x80:
        return bytes((n,))
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def enc_bytes(b: bytes) -> bytes:
    return zz(len(b)) + b


def enc_str(s: str) -> bytes:
    return enc_bytes(s.encode())


NULL = b"\x00"  # union branch 0 (null)
SOME = b"\x02"  # union branch 1 (the value)
FALSE, TRUE = b"\x00", b"\x01"


def container(schema: dict, meta: dict[str, str], records: list[bytes], *, rng: random.Random,
              level: int = -1) -> bytes:
    """An Avro object container file of pre-encoded records, deflate codec, ~64 KB blocks."""
    header_meta = {"avro.schema": json.dumps(schema, separators=(",", ":")), "avro.codec": "deflate", **meta}
    sync = rng.getrandbits(128).to_bytes(16, "little")
    parts = [b"Obj\x01", zz(len(header_meta))]
    for k, v in header_meta.items():
        parts.append(enc_str(k))
        parts.append(enc_str(v))
    parts.append(b"\x00")
    parts.append(sync)
    block: list[bytes] = []
    size = 0
    for r in records:
        block.append(r)
        size += len(r)
        if size >= AVRO_SYNC_INTERVAL:
            parts.append(_block(block, level, sync))
            block, size = [], 0
    if block:
        parts.append(_block(block, level, sync))
    return b"".join(parts)


def _block(records: list[bytes], level: int, sync: bytes) -> bytes:
    c = zlib.compressobj(level, zlib.DEFLATED, -15)  # Avro's deflate is raw deflate
    data = c.compress(b"".join(records)) + c.flush()
    return zz(len(records)) + zz(len(data)) + data + sync


# ---------------------------------------------------------------------------------------------
# The table being built

@dataclass
class Files:
    """Column store of every data file ever added (none is removed here)."""

    body: list[bytes] = field(default_factory=list)  # encoded data_file record (v3: up to sort_order_id)
    snapshot_id: list[int] = field(default_factory=list)
    seq: list[int] = field(default_factory=list)
    rows: list[int] = field(default_factory=list)
    size: list[int] = field(default_factory=list)
    day: list[int] = field(default_factory=list)
    first_row_id: list[int | None] = field(default_factory=list)


@dataclass
class Manifest:
    path: str
    length: int
    files: list[int]  # indexes into Files, in entry order
    added_snapshot_id: int
    sequence_number: int
    min_sequence_number: int
    added_files: int
    existing_files: int
    added_rows: int
    existing_rows: int
    min_day: int
    max_day: int
    first_row_id: int | None = None
    encoded: bytes | None = None  # its manifest-list record, once final


class Generator:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.v = args.format_version
        self.rng = random.Random(args.seed)
        self.out = os.path.abspath(args.out)
        self.location = os.path.join(self.out, "warehouse", NAMESPACE, TABLE_NAME)
        self.metadata_dir = os.path.join(self.location, "metadata")
        self.schema = parse_schema(SCHEMA_TEXT)
        self.spec = partition_spec(PARTITION_TEXT, self.schema)
        pfields = partition_fields(self.spec, self.schema)
        self.partition_name = pfields[0][1]  # ts_day
        self.entry_schema = avro_schemas.manifest_entry_schema(self.v, avro_schemas.partition_record(pfields))
        self.list_schema = avro_schemas.manifest_file_schema(self.v)
        self._check_layout()
        self.manifest_meta = {
            "schema": json.dumps(self.schema.to_json()),
            "schema-id": str(self.schema.schema_id),
            "partition-spec": json.dumps(self.spec.fields_json(self.v)),
            "partition-spec-id": str(self.spec.spec_id),
            "format-version": str(self.v),
        }
        if self.v >= 2:
            self.manifest_meta["content"] = "data"
        self.files = Files()
        self.types = {f.field_id: f.field_type for f in self.schema.fields}
        self.next_id = 0
        self.bytes_written = 0
        self.files_written = 0
        self.merges = 0
        self.merged_entries = 0

    def _check_layout(self) -> None:
        """The hand encoders below follow these field orders; fail loudly if icectl's schemas move."""
        names = [f["name"] for f in self.entry_schema["fields"]]
        want = ["status", "snapshot_id"] + (["sequence_number", "file_sequence_number"] if self.v >= 2 else [])
        assert names == want + ["data_file"], names
        df = [f["name"] for f in self.entry_schema["fields"][-1]["type"]["fields"]]
        want_df = (["content"] if self.v >= 2 else []) + [
            "file_path", "file_format", "partition", "record_count", "file_size_in_bytes"] + (
            ["block_size_in_bytes"] if self.v == 1 else []) + [
            "column_sizes", "value_counts", "null_value_counts", "nan_value_counts", "lower_bounds",
            "upper_bounds", "key_metadata", "split_offsets"] + (["equality_ids"] if self.v >= 2 else []) + [
            "sort_order_id"] + (["first_row_id", "referenced_data_file", "content_offset", "content_size_in_bytes"]
                                if self.v >= 3 else ["referenced_data_file"] if self.v == 2 else [])
        assert df == want_df, df
        ml = [f["name"] for f in self.list_schema["fields"]]
        want_ml = ["manifest_path", "manifest_length", "partition_spec_id"] + (
            ["content", "sequence_number", "min_sequence_number"] if self.v >= 2 else []) + [
            "added_snapshot_id", "added_files_count", "existing_files_count", "deleted_files_count",
            "added_rows_count", "existing_rows_count", "deleted_rows_count", "partitions", "key_metadata"] + (
            ["first_row_id"] if self.v >= 3 else [])
        assert ml == want_ml, ml

    # -- data files -------------------------------------------------------------------------------
    def new_uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def data_file(self, day: int, task: int, write_uuid: str, snapshot_id: int, seq: int) -> int:
        """Make one data file's metrics, encode its data_file record, return its index."""
        rng = self.rng
        t = self.types
        n = rng.randint(150_000, 1_500_000)
        # Parquet zstd bytes per column and row, roughly: ids delta-encode well, strings less.
        per_col = {1: 1.2, 2: 2.1, 3: 4.6, 4: 0.4, 5: 6.8, 6: 0.6, 7: 17.5, 8: 1.9}
        col_sizes = {c: int(n * w * rng.uniform(0.9, 1.1)) for c, w in per_col.items()}
        size = sum(col_sizes.values()) + rng.randint(4_000, 12_000)  # footer, page headers
        nulls = {1: 0, 2: 0, 3: rng.randint(0, n // 200), 4: 0, 5: rng.randint(0, n // 50),
                 6: rng.randint(0, n // 100), 7: 0, 8: 0}
        first_id = self.next_id
        self.next_id += n
        day_start = day * MICROS_PER_DAY
        ts_lo = day_start + rng.randint(0, 3_600_000_000)
        ts_hi = day_start + MICROS_PER_DAY - 1 - rng.randint(0, 3_600_000_000)
        s_lo = self.new_uuid()
        s_lo = "00" + s_lo[2:16]
        s_hi = "ff" + self.new_uuid()[2:15]
        s_hi = s_hi + chr(ord(s_hi[-1]) + 1) if len(s_hi) < 16 else s_hi  # truncated upper bound, incremented
        lower = {1: first_id, 2: ts_lo, 3: rng.randint(1, 5_000), 4: EVENT_TYPES[rng.randint(0, 1)],
                 5: rng.uniform(0.0, 1.0), 6: COUNTRIES[rng.randint(0, 2)], 7: s_lo, 8: rng.randint(0, 64)}
        upper = {1: first_id + n - 1, 2: ts_hi, 3: rng.randint(9_990_000, 9_999_999),
                 4: EVENT_TYPES[rng.randint(6, 7)], 5: rng.uniform(9_000.0, 10_000.0),
                 6: COUNTRIES[rng.randint(-3, -1)], 7: s_hi, 8: rng.randint(60_000, 65_535)}
        path = (f"{self.location}/data/{self.partition_name}={_iso_day(day)}/"
                f"{task:05d}-{task + 1000 * (seq % 100)}-{write_uuid}-0-00001.parquet")
        v = self.v
        parts = []
        if v >= 2:
            parts.append(b"\x00")  # content: data
        parts += [enc_str(path), enc_str("PARQUET"), SOME + zz(day), zz(n), zz(size)]
        if v == 1:
            parts.append(zz(67108864))
        nc = zz(n)
        parts.append(SOME + b"\x10" + b"".join(_key(c) + zz(s) for c, s in col_sizes.items()) + b"\x00")
        parts.append(SOME + b"\x10" + b"".join(_key(c) + nc for c in col_sizes) + b"\x00")
        parts.append(SOME + b"\x10" + b"".join(_key(c) + zz(k) for c, k in nulls.items()) + b"\x00")
        parts.append(SOME + b"\x02" + _key(5) + b"\x00" + b"\x00")  # nan_value_counts: amount -> 0
        parts.append(SOME + b"\x10" + b"".join(_key(c) + enc_bytes(to_bytes(t[c], x)) for c, x in lower.items())
                     + b"\x00")
        parts.append(SOME + b"\x10" + b"".join(_key(c) + enc_bytes(to_bytes(t[c], x)) for c, x in upper.items())
                     + b"\x00")
        parts.append(NULL)  # key_metadata
        parts.append(SOME + b"\x02" + zz(4) + b"\x00")  # split_offsets: [4]
        if v >= 2:
            parts.append(NULL)  # equality_ids
        parts.append(SOME + zz(0))  # sort_order_id 0 (unsorted)
        if v == 2:
            parts.append(NULL)  # referenced_data_file
        return self.store_file(parts, snapshot_id, seq, n, size, day)

    def store_file(self, parts: list[bytes], snapshot_id: int, seq: int, n: int, size: int, day: int) -> int:
        """Keep an encoded data file (its Avro fields, ``parts``) and its columns; its index."""
        f = self.files
        f.body.append(b"".join(parts))
        f.snapshot_id.append(snapshot_id)
        f.seq.append(seq)
        f.rows.append(n)
        f.size.append(size)
        f.day.append(day)
        f.first_row_id.append(None)
        return len(f.body) - 1

    # -- manifests --------------------------------------------------------------------------------
    def entry(self, i: int, snapshot_id: int) -> bytes:
        """A manifest entry: ADDED (inheriting) if file i is this snapshot's, else EXISTING."""
        f = self.files
        v = self.v
        added = f.snapshot_id[i] == snapshot_id
        if v == 1:
            head = (b"\x02" if added else b"\x00") + zz(f.snapshot_id[i])
        elif added:
            head = b"\x02" + SOME + zz(snapshot_id) + NULL + NULL
        else:
            s = zz(f.seq[i])
            head = b"\x00" + SOME + zz(f.snapshot_id[i]) + SOME + s + SOME + s
        tail = b""
        if v >= 3:
            fr = f.first_row_id[i]
            tail = (NULL if added or fr is None else SOME + zz(fr)) + NULL + NULL + NULL
        return head + f.body[i] + tail

    def write_manifest(self, files: list[int], snapshot_id: int, seq: int, commit_uuid: str, n: int) -> Manifest:
        f = self.files
        records = [self.entry(i, snapshot_id) for i in files]
        data = container(self.entry_schema, self.manifest_meta, records, rng=self.rng)
        path = f"{self.metadata_dir}/{commit_uuid}-m{n}.avro"
        self._write(path, data)
        added = [i for i in files if f.snapshot_id[i] == snapshot_id]
        existing = [i for i in files if f.snapshot_id[i] != snapshot_id]
        days = [f.day[i] for i in files]
        return Manifest(
            path=path, length=len(data), files=files, added_snapshot_id=snapshot_id, sequence_number=seq,
            min_sequence_number=min([f.seq[i] for i in existing] + [seq]) if self.v >= 2 else 0,
            added_files=len(added), existing_files=len(existing),
            added_rows=sum(f.rows[i] for i in added), existing_rows=sum(f.rows[i] for i in existing),
            min_day=min(days), max_day=max(days))

    def merge(self, manifests: list[Manifest], snapshot_id: int, seq: int,
              first: Manifest | None = None) -> list[Manifest]:
        """Iceberg Java's ManifestMergeManager.mergeGroup for one spec; ``first`` is this commit's new
        manifest (default ``manifests[0]``; a spec group without it has none)."""
        first = manifests[0] if first is None else first
        target = self.args.target_size_bytes
        # ListPacker(target, lookback=1, largestBinFirst=false).packEnd: greedy from the oldest.
        bins: list[list[Manifest]] = []
        cur: list[Manifest] = []
        weight = 0
        for m in reversed(manifests):
            if cur and weight + m.length <= target:
                cur.append(m)
                weight += m.length
            else:
                if cur:
                    bins.append(cur)
                cur, weight = [m], m.length
        bins.append(cur)
        bins = [list(reversed(b)) for b in reversed(bins)]
        out: list[Manifest] = []
        for b in bins:
            if len(b) == 1:
                out.append(b[0])
            elif any(m is first for m in b) and len(b) < self.args.min_count_to_merge:
                out.extend(b)
            else:
                self.merges += 1
                self.merged_entries += sum(len(m.files) for m in b)
                self._manifest_counter += 1
                out.append(self.write_merged(b, snapshot_id, seq))
        return out

    def write_merged(self, bin_: list[Manifest], snapshot_id: int, seq: int) -> Manifest:
        """The manifest replacing the manifests of one bin, written by this snapshot."""
        files = [i for m in bin_ for i in m.files]
        return self.write_manifest(files, snapshot_id, seq, self._commit_uuid, self._manifest_counter)

    def manifest_list_record(self, m: Manifest) -> bytes:
        v = self.v
        lo = to_bytes("date", m.min_day)
        hi = to_bytes("date", m.max_day)
        summary = SOME + b"\x02" + FALSE + SOME + FALSE + SOME + enc_bytes(lo) + SOME + enc_bytes(hi) + b"\x00"
        parts = [enc_str(m.path), zz(m.length), zz(self.spec.spec_id)]
        if v >= 2:
            parts += [b"\x00", zz(m.sequence_number), zz(m.min_sequence_number)]
        counts = [zz(m.added_snapshot_id), zz(m.added_files), zz(m.existing_files), zz(0),
                  zz(m.added_rows), zz(m.existing_rows), zz(0)]
        parts += [SOME + c for c in counts] if v == 1 else counts
        parts += [summary, NULL]
        if v >= 3:
            parts.append(SOME + zz(m.first_row_id) if m.first_row_id is not None else NULL)
        return b"".join(parts)

    def _write(self, path: str, data: bytes) -> None:
        with open(path, "wb") as fh:
            fh.write(data)
        self.bytes_written += len(data)
        self.files_written += 1

    # -- snapshots --------------------------------------------------------------------------------
    def run(self) -> dict:
        a = self.args
        rng = self.rng
        v = self.v
        t0 = time.perf_counter()
        os.makedirs(self.metadata_dir, exist_ok=True)
        start_ms = int(dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc).timestamp() * 1000)
        span_ms = a.days * 86_400_000
        start_day = start_ms // 86_400_000
        step_ms = span_ms / max(a.snapshots, 1)
        manifests: list[Manifest] = []
        snapshots: list[Snapshot] = []
        log: list[SnapshotLogEntry] = []
        parent: Snapshot | None = None
        next_row_id = 0
        totals = {"total-records": 0, "total-files-size": 0, "total-data-files": 0}
        app_id = f"application_{start_ms}_0001"
        for s in range(a.snapshots):
            seq = s + 1 if v >= 2 else 0
            snapshot_id = rng.getrandbits(63) or 1
            ts_ms = start_ms + int(s * step_ms) + rng.randint(0, 60_000)
            day = start_day + int(s * step_ms) // 86_400_000
            self._commit_uuid = self.new_uuid()
            self._manifest_counter = 0
            write_uuid = self.new_uuid()
            new = []
            for k in range(a.files_per_snapshot):
                late = rng.random() < 0.1 and day > start_day  # late data lands in yesterday's partition
                new.append(self.data_file(day - 1 if late else day, k, write_uuid, snapshot_id, seq))
            new.sort(key=lambda i: self.files.day[i])
            new_manifest = self.write_manifest(new, snapshot_id, seq, self._commit_uuid, 0)
            unmerged = [new_manifest] + manifests
            manifests = self.merge(unmerged, snapshot_id, seq) if a.merge else unmerged
            # v3 row lineage: data manifests without a first_row_id get one (ManifestListWriter v3).
            first_row_id = added_rows = None
            if v >= 3:
                first_row_id = next_row_id
                cursor = next_row_id
                for m in manifests:
                    if m.first_row_id is None:
                        m.first_row_id = cursor
                        r = cursor
                        for i in m.files:
                            if self.files.snapshot_id[i] == snapshot_id and self.files.first_row_id[i] is None:
                                self.files.first_row_id[i] = r
                                r += self.files.rows[i]
                        cursor += m.added_rows + m.existing_rows
                added_rows = cursor - next_row_id
                next_row_id = cursor
            for m in manifests:
                if m.encoded is None:
                    m.encoded = self.manifest_list_record(m)
            list_meta = {"snapshot-id": str(snapshot_id),
                         "parent-snapshot-id": str(parent.snapshot_id) if parent else "null",
                         "format-version": str(v)}
            if v >= 2:
                list_meta["sequence-number"] = str(seq)
            if v >= 3:
                list_meta["first-row-id"] = str(first_row_id)
            list_path = f"{self.metadata_dir}/snap-{snapshot_id}-1-{self._commit_uuid}.avro"
            self._write(list_path, container(self.list_schema, list_meta, [m.encoded for m in manifests], rng=rng))
            added_records = sum(self.files.rows[i] for i in new)
            added_size = sum(self.files.size[i] for i in new)
            totals["total-records"] += added_records
            totals["total-files-size"] += added_size
            totals["total-data-files"] += len(new)
            summary = {
                "operation": "append",
                "spark.app.id": app_id,
                "added-data-files": str(len(new)),
                "added-records": str(added_records),
                "added-files-size": str(added_size),
                "changed-partition-count": str(len({self.files.day[i] for i in new})),
                "total-records": str(totals["total-records"]),
                "total-files-size": str(totals["total-files-size"]),
                "total-data-files": str(totals["total-data-files"]),
                "total-delete-files": "0",
                "total-position-deletes": "0",
                "total-equality-deletes": "0",
                "engine-version": "3.5.3",
                "app-id": app_id,
                "engine-name": "spark",
                "iceberg-version": "Apache Iceberg 1.7.1 (icectl bench generator)",
            }
            snap = Snapshot(snapshot_id=snapshot_id, timestamp_ms=ts_ms,
                            parent_snapshot_id=parent.snapshot_id if parent else None, sequence_number=seq,
                            manifest_list=list_path, summary=summary, schema_id=self.schema.schema_id,
                            first_row_id=first_row_id, added_rows=added_rows)
            snapshots.append(snap)
            log.append(SnapshotLogEntry(ts_ms, snapshot_id))
            parent = snap
            if a.progress and (s + 1) % max(1, a.snapshots // 20) == 0:
                el = time.perf_counter() - t0
                print(f"  {s + 1:>6} snapshots, {len(self.files.body):>8} files, {len(manifests):>4} manifests, "
                      f"{self.merges} merges, {el:6.1f} s", file=sys.stderr, flush=True)
        t_manifests = time.perf_counter() - t0

        # The metadata file: version N (create + one per commit), with the 100 previous versions logged.
        version = a.snapshots  # 00000 was the create
        mlog = []
        for k in range(max(0, version - PREVIOUS_VERSIONS_MAX), version):
            ts = start_ms if k == 0 else snapshots[k - 1].timestamp_ms
            mlog.append(MetadataLogEntry(ts, f"{self.metadata_dir}/{k:05d}-{self.new_uuid()}.metadata.json"))
        props = {"write.parquet.compression-codec": "zstd", "owner": "bench"}
        if not a.merge:
            props["commit.manifest-merge.enabled"] = "false"
        if a.min_count_to_merge != DEFAULT_MIN_COUNT_TO_MERGE:
            props["commit.manifest.min-count-to-merge"] = str(a.min_count_to_merge)
        if a.target_size_bytes != DEFAULT_TARGET_SIZE_BYTES:
            props["commit.manifest.target-size-bytes"] = str(a.target_size_bytes)
        last = snapshots[-1] if snapshots else None
        md = TableMetadata(
            format_version=v, table_uuid=self.new_uuid(), location=self.location,
            last_updated_ms=last.timestamp_ms if last else start_ms, last_column_id=self.schema.highest_field_id,
            schemas=(self.schema,), current_schema_id=self.schema.schema_id, partition_specs=(self.spec,),
            default_spec_id=self.spec.spec_id, last_partition_id=self.spec.last_field_id,
            last_sequence_number=last.sequence_number if last else 0, properties=props,
            current_snapshot_id=last.snapshot_id if last else None, snapshots=tuple(snapshots),
            snapshot_log=tuple(log), metadata_log=tuple(mlog), sort_orders=(UNSORTED,), default_sort_order_id=0,
            refs={"main": SnapshotRef(last.snapshot_id, "branch")} if last else {},
            next_row_id=next_row_id if v >= 3 else None,
        )
        metadata_bytes = md.to_bytes()
        metadata_location = f"{self.metadata_dir}/{version:05d}-{self.new_uuid()}.metadata.json"
        self._write(metadata_location, metadata_bytes)
        register(self.out, metadata_location)
        write_configs(self.out)
        elapsed = time.perf_counter() - t0
        live_bytes = sum(m.length for m in manifests)
        info = {
            "identifier": IDENTIFIER, "catalog": CATALOG_NAME, "format_version": v,
            "snapshots": len(snapshots), "live_data_files": sum(len(m.files) for m in manifests),
            "files_per_snapshot": a.files_per_snapshot, "days": a.days, "seed": a.seed,
            "manifests_in_current_snapshot": len(manifests),
            "manifest_bytes_in_current_snapshot": live_bytes,
            "largest_manifest_bytes": max((m.length for m in manifests), default=0),
            "merges": self.merges, "entries_rewritten_by_merges": self.merged_entries,
            "merge_enabled": a.merge, "min_count_to_merge": a.min_count_to_merge,
            "target_size_bytes": a.target_size_bytes,
            "metadata_location": metadata_location, "metadata_json_bytes": len(metadata_bytes),
            "files_written": self.files_written, "bytes_written": self.bytes_written,
            "generate_seconds": round(elapsed, 2), "manifests_seconds": round(t_manifests, 2),
            "generated_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "python": sys.version.split()[0], "nproc": os.cpu_count(),
        }
        with open(os.path.join(self.out, "gen_info.json"), "w") as fh:
            json.dump(info, fh, indent=2)
        return info


_KEYS = {c: zz(c) for c in range(1, 200)}


def _key(c: int) -> bytes:
    return _KEYS[c]


def _iso_day(day: int) -> str:
    return (dt.date(1970, 1, 1) + dt.timedelta(days=day)).isoformat()


# ---------------------------------------------------------------------------------------------
# Catalog and configuration files

def catalog_db(out: str) -> str:
    return os.path.join(os.path.abspath(out), "catalog.db")


def catalog_uri(out: str) -> str:
    return f"sqlite:///{catalog_db(out)}"


def register(out: str, metadata_location: str) -> None:
    from icectl.catalog.sql import SqlCatalog
    from icectl.io import FileIO

    cat = SqlCatalog(CATALOG_NAME, catalog_uri(out), os.path.join(os.path.abspath(out), "warehouse"), FileIO())
    try:
        cat.register_table((NAMESPACE, TABLE_NAME), metadata_location)
    finally:
        cat._conn.close()


def write_configs(out: str) -> None:
    out = os.path.abspath(out)
    body = (f"catalog:\n  {CATALOG_NAME}:\n    type: sql\n    uri: {catalog_uri(out)}\n"
            f"    warehouse: {os.path.join(out, 'warehouse')}\n")
    with open(os.path.join(out, "icectl.yaml"), "w") as fh:
        fh.write(body)
    # PyIceberg reads $PYICEBERG_HOME/.pyiceberg.yaml; its SQL catalog takes the same uri.
    with open(os.path.join(out, ".pyiceberg.yaml"), "w") as fh:
        fh.write(body.replace("    type: sql\n", "    type: sql\n    init_catalog_tables: false\n"))


def clear(out: str) -> None:
    """Remove a previous table and catalog database from ``out`` (only what this script writes)."""
    out = os.path.abspath(out)
    table_dir = os.path.join(out, "warehouse", NAMESPACE, TABLE_NAME)
    if os.path.isdir(table_dir):
        shutil.rmtree(table_dir)
    for name in ("catalog.db", "gen_info.json", "icectl.yaml", ".pyiceberg.yaml"):
        p = os.path.join(out, name)
        if os.path.exists(p):
            os.remove(p)


def table_exists(out: str) -> bool:
    db = catalog_db(out)
    if not os.path.exists(db):
        return False
    try:
        with sqlite3.connect(db) as conn:
            row = conn.execute("SELECT 1 FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? "
                               "AND table_name = ?", (CATALOG_NAME, NAMESPACE, TABLE_NAME)).fetchone()
        return row is not None
    except sqlite3.Error:
        return False


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=os.path.join(here, "data"), help="output folder (default: bench/data)")
    p.add_argument("--snapshots", type=int, default=2000, help="number of append snapshots (default 2000)")
    p.add_argument("--files-per-snapshot", type=int, default=100, help="data files per append (default 100)")
    p.add_argument("--days", type=int, default=365, help="days the snapshots and partitions span (default 365)")
    p.add_argument("--format-version", type=int, default=2, choices=(1, 2, 3), help="table format version (default 2)")
    p.add_argument("--min-count-to-merge", type=int, default=DEFAULT_MIN_COUNT_TO_MERGE,
                   help="commit.manifest.min-count-to-merge (default 100)")
    p.add_argument("--target-size-bytes", type=int, default=DEFAULT_TARGET_SIZE_BYTES,
                   help="commit.manifest.target-size-bytes (default 8388608)")
    p.add_argument("--no-merge", dest="merge", action="store_false",
                   help="commit.manifest-merge.enabled=false (fast appends: one manifest per snapshot)")
    p.add_argument("--seed", type=int, default=20250101, help="random seed (default 20250101)")
    p.add_argument("--force", action="store_true", help="replace a table already generated in --out")
    p.add_argument("--quiet", dest="progress", action="store_false", help="no progress lines")
    a = p.parse_args(argv)
    if a.snapshots < 1 or a.files_per_snapshot < 1:
        p.error("--snapshots and --files-per-snapshot must be at least 1")
    return a


def main(argv: list[str] | None = None) -> dict:
    a = parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    if table_exists(a.out) or os.path.isdir(os.path.join(os.path.abspath(a.out), "warehouse", NAMESPACE, TABLE_NAME)):
        if not a.force:
            raise SystemExit(f"{a.out} already has {IDENTIFIER}: pass --force to replace it")
        clear(a.out)
    if a.progress:
        print(f"generating {IDENTIFIER} (v{a.format_version}): {a.snapshots} snapshots x "
              f"{a.files_per_snapshot} files into {os.path.abspath(a.out)}", file=sys.stderr)
    info = Generator(a).run()
    if a.progress:
        print(f"done in {info['generate_seconds']:.1f} s: {info['snapshots']} snapshots, "
              f"{info['live_data_files']} live data files in {info['manifests_in_current_snapshot']} manifests "
              f"({info['manifest_bytes_in_current_snapshot'] / 1e6:.1f} MB), {info['merges']} merges "
              f"rewriting {info['entries_rewritten_by_merges']} entries, metadata.json "
              f"{info['metadata_json_bytes'] / 1e6:.2f} MB, {info['files_written']} files "
              f"({info['bytes_written'] / 1e6:.0f} MB) written", file=sys.stderr)
        print(f"ICECTL_CONFIG={os.path.join(os.path.abspath(a.out), 'icectl.yaml')} "
              f"icectl -c {CATALOG_NAME} describe {IDENTIFIER}", file=sys.stderr)
    return info


if __name__ == "__main__":
    main()
