"""Manifest lists and the rules of one snapshot, for ``validate``: which snapshots to check, their
manifest lists (spec: "Manifest Lists", "First Row ID Assignment"), the scan of each distinct
manifest (:mod:`icectl.validate.manifests`, in threads) and the rules across a snapshot's
manifests ("Scan Planning": a live file once; "Deletion Vectors": one per data file, for a live
data file); with ``--deep``, :mod:`icectl.validate.deep`.
"""
from __future__ import annotations

import gc
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from icectl.errors import IcectlError, InvalidMetadataError, NotFoundError
from icectl.formats.avro import open_avro, read_records
from icectl.formats.entries import positions
from icectl.formats.manifest import ManifestFile, check_field_types, manifest_file, partition_fields, read_manifest_header
from icectl.spec.metadata import Snapshot
from icectl.spec.types import IcebergType, walk_fields
from icectl.validate.deep import check_deep
from icectl.validate.entries import ScanContext
from icectl.validate.findings import Checked, Collector, Finding, ValidateOptions
from icectl.validate.manifests import ManifestScan, compact_scans, finish_scans, path_key, scan_manifest_pending
from icectl.validate.metadata import check_path

REQUIRED_LIST_V2 = ("content", "sequence_number", "min_sequence_number", "added_snapshot_id", "added_files_count",
                    "existing_files_count", "deleted_files_count", "added_rows_count", "existing_rows_count",
                    "deleted_rows_count")


def scan_context(table: Any, options: ValidateOptions) -> ScanContext:
    md = table.metadata
    types: dict[int, IcebergType] = {}
    current = md.current_schema_or_none
    for s in (*md.schemas, *((current,) if current is not None else ())):  # the current schema last: its types win
        for _, f in walk_fields(s.fields):
            types[f.field_id] = f.field_type
    specs = {spec.spec_id: tuple(partition_fields(spec, md.find_type)) for spec in md.partition_specs}
    return ScanContext(md.format_version, md.location, md.next_row_id, specs, types,
                       check_bounds=options.check_bounds, deep=options.deep)


def selected_snapshots(md: Any, all_snapshots: bool) -> list[Snapshot]:
    if all_snapshots:
        return list(md.snapshots)
    ids: list[int] = []
    for ref in md.all_refs.values():
        ids.append(ref.snapshot_id)
    if md.current_snapshot_id is not None:
        ids.append(md.current_snapshot_id)
    out, seen = [], set()
    for sid in ids:
        s = md.snapshot_by_id(sid)
        if s is not None and sid not in seen:
            seen.add(sid)
            out.append(s)
    return sorted(out, key=lambda s: (s.sequence_number, s.timestamp_ms))


@dataclass
class Listed:
    """A snapshot's manifest-list entries (with paths resolved), and those whose path can be
    read (a path that breaks the path rules is reported and not scanned)."""

    snapshot: Snapshot
    manifests: list[ManifestFile]
    readable: list[ManifestFile]

    @property
    def all_readable(self) -> bool:
        return len(self.readable) == len(self.manifests)


def read_manifest_refs(table: Any, snap: Snapshot, out: Collector) -> Listed | None:
    """The manifest-list entries of a snapshot, with the manifest list's own rules checked."""
    md = table.metadata
    fv = md.format_version
    sid = snap.snapshot_id
    if snap.manifest_list is None:
        refs = _inline_refs(table, snap, out)
        return Listed(snap, refs, refs)
    path = check_path(md, snap.manifest_list, out, snapshot_id=sid)
    if path is None:
        return None
    try:
        data = table.io.read(path)
    except NotFoundError:
        out.add("MANIFEST_LIST_UNREADABLE", "manifest list not found", file=path, snapshot_id=sid)
        return None
    except IcectlError as e:
        out.add("MANIFEST_LIST_UNREADABLE", e.message, file=path, snapshot_id=sid)
        return None
    try:
        avro = open_avro(data, source=path)
        check_field_types(avro.schema, source=path, what="manifest list", text=avro.schema_text)
        names = {f["name"] for f in avro.schema.get("fields", [])} if isinstance(avro.schema, dict) else set()
        records = read_records(avro)
    except InvalidMetadataError as e:
        msg = e.message[len(path) + 2:] if e.message.startswith(path + ": ") else e.message
        out.add("MANIFEST_LIST_UNREADABLE", msg, file=path, snapshot_id=sid)
        return None
    need = ["manifest_path", "manifest_length", "partition_spec_id"]
    if fv >= 2 and snap.sequence_number > 0:
        need += list(REQUIRED_LIST_V2)
    missing = [n for n in need if n not in names]
    if missing:
        out.add("MANIFEST_LIST_UNREADABLE", f"the manifest list lacks required fields {', '.join(missing)}", file=path,
                snapshot_id=sid)
        if any(n in missing for n in ("manifest_path", "manifest_length", "partition_spec_id")):
            return None
    refs: list[ManifestFile] = []
    readable: list[ManifestFile] = []
    seen: set[str] = set()
    for i, r in enumerate(records):
        where = {"file": path, "snapshot_id": sid, "entry": i}
        mpath = check_path(md, r["manifest_path"], out, **where)
        usable = mpath is not None
        mpath = mpath or str(r["manifest_path"])
        if mpath in seen:
            out.add("MANIFEST_LIST_DUPLICATE", f"manifest {mpath} is listed twice", manifest=mpath, **where)
            continue
        seen.add(mpath)
        ref = manifest_file(r, strict=False)
        ref.manifest_path = mpath
        _check_ref(table, snap, ref, out, where=where)
        refs.append(ref)
        if usable:
            readable.append(ref)
    _check_lineage_refs(md, snap, refs, out, list_path=path)
    return Listed(snap, refs, readable)


def _inline_refs(table: Any, snap: Snapshot, out: Collector) -> list[ManifestFile]:
    """v1 snapshots may list manifests inline: no list entry, so counts and sequence numbers are unknown."""
    refs = []
    for p in snap.manifests or ():
        path = check_path(table.metadata, p, out, snapshot_id=snap.snapshot_id)
        if path is None:
            continue
        spec_id = 0
        try:
            header = read_manifest_header(table.io.read(path), source=path)
            spec_id = header.partition_spec_id or 0
        except IcectlError:
            pass  # the scan reports it
        refs.append(ManifestFile(path, None, spec_id, added_snapshot_id=snap.snapshot_id))  # type: ignore[arg-type]
    return refs


def _check_ref(table: Any, snap: Snapshot, ref: ManifestFile, out: Collector, *, where: dict[str, Any]) -> None:
    md = table.metadata
    fv = md.format_version
    w = {**where, "manifest": ref.manifest_path}
    if ref.partition_spec_id not in md.specs_by_id:
        out.add("MANIFEST_SPEC_UNKNOWN", f"partition_spec_id {ref.partition_spec_id} is not a spec of the table", **w)
    if ref.content not in (0, 1):
        out.add("MANIFEST_CONTENT_MISMATCH", f"content {ref.content} (0 data, 1 deletes)", **w)
    elif ref.content == 1 and fv == 1:
        out.add("DELETE_FILE_IN_V1", "a delete manifest in a format version 1 table", **w)
    if fv >= 2 and snap.sequence_number > 0:
        if ref.sequence_number > snap.sequence_number:
            out.add("MANIFEST_SEQUENCE", f"sequence_number {ref.sequence_number} is above the snapshot's "
                    f"{snap.sequence_number}", **w)
        elif ref.added_snapshot_id == snap.snapshot_id and ref.sequence_number != snap.sequence_number:
            out.add("MANIFEST_SEQUENCE", f"a manifest added by this snapshot has sequence_number "
                    f"{ref.sequence_number}, the snapshot's is {snap.sequence_number}", **w)
        if ref.min_sequence_number > ref.sequence_number:
            out.add("MANIFEST_SEQUENCE", f"min_sequence_number {ref.min_sequence_number} is above sequence_number "
                    f"{ref.sequence_number}", **w)


def _check_lineage_refs(md: Any, snap: Snapshot, refs: list[ManifestFile], out: Collector, *, list_path: str) -> None:
    fv = md.format_version
    sid = snap.snapshot_id
    if fv < 3:
        for i, r in enumerate(refs):
            if r.first_row_id is not None:
                out.add("LINEAGE_BEFORE_V3", f"first_row_id {r.first_row_id} in a format version {fv} table",
                        file=list_path, snapshot_id=sid, manifest=r.manifest_path, entry=i)
        return
    for i, r in enumerate(refs):
        if r.content == 1 and r.first_row_id is not None:
            out.add("LINEAGE_MANIFEST", "a delete manifest with a first_row_id (must be null)", file=list_path,
                    snapshot_id=sid, manifest=r.manifest_path, entry=i)
    if snap.first_row_id is None or snap.added_rows is None:
        return
    first, end = snap.first_row_id, snap.first_row_id + snap.added_rows
    assigned = []
    for i, r in enumerate(refs):
        if r.content != 0:
            continue
        if r.first_row_id is None:
            out.add("LINEAGE_MANIFEST", "a data manifest without first_row_id in a snapshot with row lineage",
                    file=list_path, snapshot_id=sid, manifest=r.manifest_path, entry=i)
        elif r.first_row_id >= first:
            n = (r.added_rows_count or 0) + (r.existing_rows_count or 0)
            assigned.append((r.first_row_id, r.first_row_id + n, i, r.manifest_path))
    total = 0
    prev_end = first
    for start, stop, i, mpath in sorted(assigned):
        total += stop - start
        if stop > end:
            out.add("LINEAGE_MANIFEST", f"row ids {start} to {stop - 1} are outside the snapshot's {first} to {end - 1}",
                    file=list_path, snapshot_id=sid, manifest=mpath, entry=i)
        elif start < prev_end and stop > start:
            out.add("LINEAGE_MANIFEST", f"row ids from {start} overlap the manifest before it (to {prev_end - 1})",
                    file=list_path, snapshot_id=sid, manifest=mpath, entry=i)
        prev_end = max(prev_end, stop)
    if total != snap.added_rows:
        out.add("LINEAGE_ADDED_ROWS", f"added-rows is {snap.added_rows}, the manifests assigned row ids in this "
                f"snapshot hold {total} rows", file=list_path, snapshot_id=sid)


def _workers(options: ValidateOptions, n: int, local: bool) -> int:
    """Threads for the manifests: a core each on local disk (decoding is the work), more for an
    object store (waiting for reads is)."""
    if options.workers is not None:
        return max(1, options.workers)
    return max(1, min(os.cpu_count() or 1, n, 8) if local else min(n, 16))


def _read_or_why(fio: Any, path: str) -> tuple[bytes | None, str | None]:
    """A manifest's bytes, or why they cannot be read (not found, a storage or scheme error)."""
    try:
        return fio.read(path), None
    except NotFoundError:
        return None, "manifest file not found"
    except IcectlError as e:
        return None, e.message


def scan_key(m: ManifestFile) -> tuple:
    """Manifest-list entries that say the same thing (one manifest listed by many snapshots) are
    scanned once."""
    return (m.manifest_path, m.manifest_length, m.partition_spec_id, int(m.content), m.sequence_number,
            m.min_sequence_number, m.added_snapshot_id, m.added_files_count, m.existing_files_count,
            m.deleted_files_count, m.added_rows_count, m.existing_rows_count, m.deleted_rows_count,
            None if m.partitions is None else tuple(m.partitions), m.key_metadata, m.first_row_id)


def scan_manifests(table: Any, refs: list[ManifestFile], ctx: ScanContext,
                   options: ValidateOptions) -> dict[tuple, ManifestScan]:
    """Scan each distinct manifest (by :func:`scan_key`) once, in threads: polars decodes and
    checks with the GIL released, so the threads use every core (and object stores are read
    concurrently)."""
    def one(ref: ManifestFile) -> ManifestScan:
        data, why = _read_or_why(table.io, ref.manifest_path)
        return scan_manifest_pending(data, ref, ctx, unreadable=why)

    def again(ref: ManifestFile) -> Any:
        return lambda: finish_scans([one(ref)], ctx)[0]

    distinct: dict[tuple, ManifestFile] = {}
    for r in refs:
        distinct.setdefault(scan_key(r), r)
    workers = _workers(options, len(distinct), all(table.io.local_file(r.manifest_path) is not None
                                                   for r in distinct.values()))
    order = sorted(distinct.items(), key=lambda kr: -(kr[1].manifest_length or 0))  # big ones first: better balance
    found: dict[tuple, ManifestScan] = {}
    enabled = gc.isenabled()
    gc.disable()  # many small objects and no cycles: collections would cost more than the work
    try:
        with ThreadPoolExecutor(workers) as pool:
            for chunk in _chunks(order, CHUNK_BYTES):  # decoded entries wait in memory: a bounded batch
                refs_ = [r for _, r in chunk]
                scans = list(pool.map(one, refs_)) if workers > 1 else list(map(one, refs_))
                finish_scans(scans, ctx)
                if not ctx.deep:  # --deep reads every file anyway: it keeps the paths
                    compact_scans(scans, [again(r) for r in refs_])
                found.update(zip((k for k, _ in chunk), scans))
    finally:
        if enabled:
            gc.enable()
    return {k: found[k] for k in distinct}


# Of manifest files checked together (~50,000 entries of 8 columns). Twice this (two of the
# largest manifests, one per core) held 130-170 MB more at 1x, 10x and on the neglected table,
# and cost 0.2-1.9 s more CPU (fresh pages for the decoded frames: system time) than decoding
# them in parallel saved.
CHUNK_BYTES = 8 * 1024 * 1024


def _chunks(refs: list[tuple[tuple, ManifestFile]], limit: int) -> list[list[tuple[tuple, ManifestFile]]]:
    out: list[list[tuple[tuple, ManifestFile]]] = [[]]
    size = 0
    for kr in refs:
        length = kr[1].manifest_length or 0
        if out[-1] and size + length > limit:
            out.append([])
            size = 0
        out[-1].append(kr)
        size += length
    return out


class LiveIndex:
    """The live data files of many manifests, indexed once for the rules of every snapshot that
    lists them: which manifests list a path live twice, which pairs of manifests share a live
    path (only a snapshot that holds such a manifest or pair can list a path twice), and where
    the paths that delete files name are live."""

    def __init__(self, scans: list[ManifestScan]):
        import polars as pl

        self.position = {id(s): i for i, s in enumerate(scans)}

        def keyed(run: list[int]) -> Any:  # manifests whose live files are all compact, or all not
            f = pl.concat([scans[i].data_files for i in run], how="vertical_relaxed", rechunk=False)
            key = pl.col("key") if "key" in f.columns else path_key(pl.col("path")).alias("key")
            m = positions(run, [len(scans[i].data_files) for i in run])
            return f.select(key, pl.col("entry").cast(pl.UInt32)).with_columns(m)

        # Paths by their 64-bit keys (compact scans keep no paths): a repeated key sends a
        # snapshot to the path-by-path check, which reports only real repeats. Over all manifests
        # at once: one stable sort of the keys (a key's rows then in manifest order) gives the
        # keys a manifest lists twice and the keys in more than one manifest (none in a healthy
        # table). A polars group-by and self-join over every live key (2 M at 10x the bench) held
        # ~400 MB more at its peak than the scans themselves; the sort holds a copy of the two
        # columns. (In polars, not NumPy: importing NumPy costs a tenth of a second of start-up.)
        runs: list[list[int]] = []  # in manifest order (the sort below relies on it)
        for i, s in enumerate(scans):
            if s.data_files is None or not len(s.data_files):
                continue
            if runs and ("key" in s.data_files.columns) == ("key" in scans[runs[-1][0]].data_files.columns):
                runs[-1].append(i)
            else:
                runs.append([i])
        frames = [keyed(run) for run in runs]
        data = pl.concat(frames) if frames else pl.DataFrame(schema={"key": pl.UInt64, "entry": pl.UInt32,
                                                                     "m": pl.UInt32})
        del frames
        self.self_duplicates: set[int] = set()
        shared_pairs: set[tuple[int, int]] = set()
        if len(data) > 1:
            key, m = pl.col("key"), pl.col("m")
            same = (key == key.shift(1)).fill_null(False)
            s = data.select(key, m).sort("key", maintain_order=True).with_columns(same.alias("same")) \
                .with_columns((pl.col("same") & (m == m.shift(1))).fill_null(False).alias("twice"))
            # a key listed again by the same manifest
            self.self_duplicates = set(s.filter("twice").get_column("m").unique().to_list())
            if s.select(pl.col("same") & ~pl.col("twice")).to_series().any():
                s = s.filter(~pl.col("twice")).select(key, m)  # each (key, manifest) once
                s = s.filter(same | same.shift(-1).fill_null(False))  # the rows of keys in more than one manifest
                # within a key's rows the manifests ascend: row i and row i + d of one key are a pair
                pairs, d = [], 1
                while d < len(s):
                    hit = s.select(m.alias("a"), m.shift(-d).alias("b"), (key == key.shift(-d)).alias("hit")) \
                        .filter("hit")
                    if not len(hit):
                        break  # no key is in more than d manifests
                    pairs.append(hit.select("a", "b"))
                    d += 1
                shared_pairs = set(pl.concat(pairs).unique().rows())
            del s
        self.partners: dict[int, set[int]] = {}
        for a, b in shared_pairs:
            self.partners.setdefault(a, set()).add(b)
        named = sorted({p for s in scans for f in s.deletes for p in (f.path, f.referenced_data_file) if p is not None})
        self.where: dict[str, list[tuple[int, int]]] = {}
        if named:
            keys = pl.DataFrame({"name": named}).with_columns(path_key(pl.col("name")).alias("key"))
            for name, entry, m in keys.join(data, on="key").select("name", "entry", "m").rows():
                self.where.setdefault(name, []).append((m, entry))

    def may_repeat(self, members: set[int]) -> bool:
        """Whether the manifests ``members`` (positions) can list a live path twice."""
        return any(m in self.self_duplicates or not self.partners.get(m, set()).isdisjoint(members) for m in members)


def check_snapshots(table: Any, options: ValidateOptions, out: Collector, checked: Checked) -> None:
    """Manifest lists, manifests and snapshot-level rules of the selected snapshots (and --deep)."""
    md = table.metadata
    snaps = selected_snapshots(md, options.all_snapshots)
    ctx = scan_context(table, options)
    listed: list[Listed] = []
    for snap in snaps:
        one = read_manifest_refs(table, snap, out)
        checked.snapshots += 1
        if one is None:
            continue
        checked.manifest_lists += 1 if snap.manifest_list is not None else 0
        listed.append(one)
    scans = scan_manifests(table, [r for one in listed for r in one.readable], ctx, options)
    checked.manifests = len(scans)
    checked.entries = sum(s.entries for s in scans.values())
    index = LiveIndex(list(scans.values()))
    per_snapshot: list[tuple[Snapshot, list[ManifestScan], bool]] = []
    for one in listed:
        snap = one.snapshot
        mine = [scans[scan_key(r)] for r in one.readable]
        for s in mine:
            out.extend([_with_snapshot(f, snap.snapshot_id) for f in s.findings])
        complete = one.all_readable and all(s.readable for s in mine)
        check_snapshot_files(snap, mine, out, complete=complete, index=index)
        per_snapshot.append((snap, mine, one.all_readable))
    if options.deep:
        check_deep(table, per_snapshot, out, checked)


def _with_snapshot(f: Finding, sid: int) -> Finding:
    return f if f.snapshot_id is not None else replace(f, snapshot_id=sid)


def check_snapshot_files(snap: Snapshot, scans: list[ManifestScan], out: Collector, *, complete: bool = True,
                         index: LiveIndex | None = None) -> None:
    """Rules across the manifests of one snapshot: each live file once, deletion vectors. When a
    manifest could not be read (``complete`` False), "not a live data file" cannot be told.
    ``index`` is the :class:`LiveIndex` of (at least) these manifests, made once for many
    snapshots; without it one is made here."""
    index = index if index is not None else LiveIndex(scans)
    sid = snap.snapshot_id
    seen: dict[Any, tuple[str, int]] = {}
    members = {index.position[id(s)] for s in scans}
    if index.may_repeat(members):  # every live path, in order, to say where each repeat is
        values: dict[Any, tuple] = {}
        for scan in scans:
            for path, entry, records, size, _, *known in scan.data:
                prev = seen.setdefault(path, (scan.path, entry))
                seq, part = known if known else (None, None)  # (a frame without them: not compared)
                first = values.setdefault(path, (seq, part, records, size))
                if prev[1] != entry or prev[0] != scan.path:
                    out.add("DUPLICATE_LIVE_FILE", f"{path} is live in {prev[0]} (entry {prev[1]}) and again here",
                            snapshot_id=sid, manifest=scan.path, entry=entry, file=path)
                    differ = [f"{name} {a} there, {b} here" if name != "partition" else "another partition"
                              for name, a, b in zip(("data sequence number", "partition", "record_count",
                                                     "file_size_in_bytes"), first, (seq, part, records, size))
                              if a != b]
                    if differ:
                        out.add("DUPLICATE_FILE_CONFLICT", f"{path}'s entries disagree with its entry in {prev[0]} "
                                f"(entry {prev[1]}): " + "; ".join(differ), snapshot_id=sid, manifest=scan.path,
                                entry=entry, file=path)
    else:  # each path once: only the data files the delete files name are looked up
        by_position = {index.position[id(s)]: s.path for s in scans}
        for f in (f for scan in scans for f in scan.deletes):
            for path in (f.path, f.referenced_data_file):
                for m, entry in index.where.get(path, ()) if path is not None else ():
                    if m in by_position:
                        seen.setdefault(path, (by_position[m], entry))
    data_paths = set(seen)
    dvs: dict[str, tuple[str, int]] = {}
    for scan in scans:
        for f in scan.deletes:
            # Several DVs share one Puffin file: a DV is its (file, blob) pair.
            key = (f.path, f.content_offset, f.referenced_data_file) if f.is_dv else f.path
            prev = seen.setdefault(key, (scan.path, f.entry))
            duplicate = prev[1] != f.entry or prev[0] != scan.path
            if duplicate:
                out.add("DUPLICATE_LIVE_FILE", f"{f.path} is live in {prev[0]} (entry {prev[1]}) and again here",
                        snapshot_id=sid, manifest=scan.path, entry=f.entry, file=f.path)
            if f.is_dv and f.referenced_data_file is not None:
                first = dvs.setdefault(f.referenced_data_file, (scan.path, f.entry))
                if first != (scan.path, f.entry) and not duplicate:
                    out.add("DV_DUPLICATE", f"a second deletion vector for {f.referenced_data_file} (the first is in "
                            f"{first[0]}, entry {first[1]})", snapshot_id=sid, manifest=scan.path, entry=f.entry,
                            file=f.path)
            if complete and f.referenced_data_file is not None and f.referenced_data_file not in data_paths:
                code = "DV_REFERENCED_FILE_NOT_LIVE" if f.is_dv else "REFERENCED_FILE_NOT_LIVE"
                out.add(code, f"references {f.referenced_data_file}, which is not a live data file of the snapshot",
                        snapshot_id=sid, manifest=scan.path, entry=f.entry, file=f.path)
