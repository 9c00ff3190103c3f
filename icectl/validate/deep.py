"""``validate --deep``: the files themselves. Every live data and delete file exists with its
recorded size; Parquet (and Avro, ORC) row counts equal ``record_count`` (footers only, never the
data); Puffin footers are valid and each deletion vector is a ``deletion-vector-v1`` blob for its
data file whose CRC and cardinality check out; snapshot summary totals equal what the manifests
say; statistics files exist with their recorded sizes. A Parquet data file's entry (read again
from its manifest, with its metrics) is compared with what its footer proves under the table's
metrics modes (:mod:`icectl.validate.file_metrics`): the footer is read once for both.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from icectl.errors import IcectlError, InvalidMetadataError, NotFoundError
from icectl.formats import puffin
from icectl.formats.avro import open_avro
from icectl.formats.manifest import DataFile, ManifestFile, read_manifest
from icectl.formats.parquet_footer import MetricsTarget, footer_metrics, metrics_target, read_footer
from icectl.validate.file_metrics import compare
from icectl.validate.entries import LiveFile
from icectl.validate.findings import Checked, Collector
from icectl.validate.manifests import ManifestScan

LOCAL_THREADS = 4  # local disk: more threads contend in the kernel (measured on 200,000 files)
REMOTE_THREADS = 16  # object stores: latency-bound


@dataclass
class _FileCheck:
    path: str
    size: int
    record_count: int
    file_format: str
    manifest: str
    entry: int
    snapshot_id: int
    data_file: DataFile | None = None  # a Parquet data file's entry, its metrics compared with the footer


def check_deep(table: Any, per_snapshot: list[tuple[Any, list[ManifestScan], bool]], out: Collector,
               checked: Checked) -> None:
    """The files of the checked snapshots: ``per_snapshot`` holds each snapshot, the scans of its
    manifests, and whether they are all of its manifests (a manifest whose path breaks the path
    rules is not scanned; its snapshot's summary totals are not checked)."""
    files: dict[str, _FileCheck] = {}
    dvs: dict[str, list[tuple[LiveFile, str, int]]] = {}
    listed: set[int] = set()  # scans whose data files are in ``files`` (the first snapshot listing one wins)
    for snap, scans, every_manifest in per_snapshot:
        for scan in scans:
            if id(scan) not in listed:
                listed.add(id(scan))
                for path, entry, records, size, fmt, *_ in scan.data:
                    if path not in files:
                        files[path] = _FileCheck(path, size, records, fmt, scan.path, entry, snap.snapshot_id)
            for f in scan.deletes:
                if f.is_dv:
                    dvs.setdefault(f.path, []).append((f, scan.path, snap.snapshot_id))
                elif f.path not in files:
                    files[f.path] = _FileCheck(f.path, f.file_size_in_bytes, f.record_count, f.file_format, scan.path,
                                               f.entry, snap.snapshot_id)
        if every_manifest:
            _check_summary(snap, scans, out)
    stats = [(table.resolve(s.statistics_path), s.file_size_in_bytes, s.snapshot_id, s.raw)
             for s in table.metadata.statistics + table.metadata.partition_statistics]
    local = table.io.local_file(table.location or "/") is not None
    target = metrics_target(table.metadata) if table.metadata.current_schema_or_none is not None else None
    with ThreadPoolExecutor(LOCAL_THREADS if local else REMOTE_THREADS) as pool:
        for batch in _batches(files) if target is not None else [list(files.values())]:
            if target is not None:
                _attach_entries(table.io, batch, pool)
            for findings in pool.map(lambda fc: _check_file(table.io, fc, target), batch):
                for code, msg, where in findings:
                    out.add(code, msg, **where)
            for fc in batch:
                fc.data_file = None  # the entries of one batch at a time in memory
        for findings in pool.map(lambda item: _check_puffin(table, item[0], item[1]), list(dvs.items())):
            for code, msg, where in findings:
                out.add(code, msg, **where)
        for findings in pool.map(lambda s: _check_statistics(table.io, s[0], size=s[1], snapshot_id=s[2], raw=s[3]),
                                 stats):
            for code, msg, where in findings:
                out.add(code, msg, **where)
    checked.files = len(files) + len(dvs) + len(stats)


Found = list[tuple[str, str, dict[str, Any]]]


BATCH_FILES = 20_000  # files whose entries (with their metrics) are held at once


def _batches(files: dict[str, _FileCheck]) -> list[list[_FileCheck]]:
    """The files in batches of whole manifests (a manifest's files together: it is read once),
    about BATCH_FILES files each."""
    by_manifest: dict[str, list[_FileCheck]] = {}
    for fc in files.values():
        by_manifest.setdefault(fc.manifest, []).append(fc)
    batches: list[list[_FileCheck]] = [[]]
    for group in by_manifest.values():
        if batches[-1] and len(batches[-1]) + len(group) > BATCH_FILES:
            batches.append([])
        batches[-1].extend(group)
    return batches


def _attach_entries(io: Any, files: list[_FileCheck], pool: ThreadPoolExecutor) -> None:
    """Each Parquet data file's entry (its metrics), read again from its manifest with stats."""
    wanted: dict[str, list[_FileCheck]] = {}
    for fc in files:
        if fc.file_format.lower() == "parquet":
            wanted.setdefault(fc.manifest, []).append(fc)

    def load(manifest: str) -> None:
        try:
            entries = read_manifest(io.read(manifest), ManifestFile(manifest, 0, 0))
        except IcectlError:
            return  # the manifest checks report it
        for fc in wanted[manifest]:
            df = entries[fc.entry].data_file if 0 <= fc.entry < len(entries) else None
            if df is not None and df.content == 0 and df.file_path == fc.path:
                fc.data_file = df

    list(pool.map(load, list(wanted)))


def _check_file(io: Any, fc: _FileCheck, target: MetricsTarget | None = None) -> Found:
    where = {"file": fc.path, "manifest": fc.manifest, "entry": fc.entry, "snapshot_id": fc.snapshot_id}
    try:
        size = io.size(fc.path)
    except NotFoundError:
        return [("FILE_MISSING", "the file does not exist", where)]
    except IcectlError as e:
        return [("FILE_MISSING", f"cannot stat the file: {e.message}", where)]
    found: Found = []
    if size != fc.size:
        found.append(("FILE_SIZE_MISMATCH", f"the file has {size} bytes, file_size_in_bytes is {fc.size}", where))
    try:
        meta = read_footer(io, fc.path) if fc.data_file is not None else None
        rows = int(meta.num_rows) if meta is not None else _row_count(io, fc.path, fc.file_format)
    except Exception as e:  # a corrupt footer: pyarrow raises many kinds (the Avro reader InvalidMetadataError)
        found.append(("FILE_UNREADABLE", f"cannot read the {fc.file_format} footer ({type(e).__name__}: "
                      f"{str(e).splitlines()[0] if str(e) else ''})", where))
        return found
    if rows is not None and rows != fc.record_count:
        found.append(("RECORD_COUNT_MISMATCH", f"the file holds {rows} rows, record_count is {fc.record_count}", where))
    if meta is not None and target is not None and fc.data_file is not None:
        try:
            fm = footer_metrics(meta, target.types, target.modes)
        except Exception as e:  # noqa: BLE001  # statistics pyarrow cannot give: the file is still read
            found.append(("FILE_UNREADABLE", f"cannot read the Parquet column statistics ({type(e).__name__}: "
                          f"{str(e).splitlines()[0] if str(e) else ''})", where))
            return found
        found.extend((code, msg, where) for code, msg in compare(fc.data_file, fm, target.names))
    return found


def _row_count(io: Any, path: str, file_format: str) -> int | None:
    local = io.local_file(path)  # pyarrow reads a local footer itself, without the GIL
    if file_format == "parquet":
        import pyarrow.parquet as pq

        if local is not None:
            import pyarrow as pa

            with pa.OSFile(local) as f:
                return int(pq.ParquetFile(f).metadata.num_rows)
        with io.open(path, "rb") as f:
            return int(pq.ParquetFile(f).metadata.num_rows)
    if file_format == "orc":
        import pyarrow.orc as orc

        if local is not None:
            return int(orc.ORCFile(local).nrows)
        with io.open(path, "rb") as f:
            return int(orc.ORCFile(f).nrows)
    if file_format == "avro":  # from the block headers: no block is decoded
        return open_avro(io.read(path), source=path).record_count()
    return None


def _check_puffin(table: Any, path: str, entries: list[tuple[LiveFile, str, int]]) -> Found:
    """Each DV in one Puffin file against the file's footer and its blob."""
    first, manifest, sid = entries[0]
    where = {"file": path, "manifest": manifest, "entry": first.entry, "snapshot_id": sid}
    try:
        data = table.io.read(path)
    except NotFoundError:
        return [("FILE_MISSING", "the deletion vector file does not exist", where)]
    except IcectlError as e:
        return [("FILE_MISSING", f"cannot read the deletion vector file: {e.message}", where)]
    found: Found = []
    sizes = {f.file_size_in_bytes for f, _, _ in entries}
    if sizes != {len(data)}:
        found.append(("FILE_SIZE_MISMATCH", f"the file has {len(data)} bytes, file_size_in_bytes is "
                      f"{', '.join(map(str, sorted(sizes)))}", where))
    try:
        footer = puffin.read_puffin_footer(data, source=path)
    except IcectlError as e:
        found.append(("PUFFIN_INVALID", e.message, where))
        return found
    blobs = {(b.offset, b.length): b for b in footer.blobs}
    for f, mpath, snap_id in entries:
        w = {"file": path, "manifest": mpath, "entry": f.entry, "snapshot_id": snap_id}
        blob = blobs.get((f.content_offset, f.content_size_in_bytes))
        if blob is None or blob.type != puffin.DELETION_VECTOR_V1:
            found.append(("DV_BLOB_MISMATCH", f"no deletion-vector-v1 blob at offset {f.content_offset} length "
                          f"{f.content_size_in_bytes}", w))
            continue
        target = blob.properties.get(puffin.REFERENCED_DATA_FILE)
        if target is not None and f.referenced_data_file is not None and target != f.referenced_data_file:
            try:
                resolved = table.resolve(target)
            except IcectlError:
                resolved = target
            if resolved != f.referenced_data_file:
                found.append(("DV_BLOB_MISMATCH", f"the blob is for {target}, the entry for {f.referenced_data_file}", w))
        try:
            puffin.read_deletion_vector(data, f.content_offset, f.content_size_in_bytes, record_count=f.record_count,
                                        source=path)
        except InvalidMetadataError as e:
            code = "DV_CARDINALITY" if "cardinality check failed" in e.message else "DV_CORRUPT"
            found.append((code, e.message, w))
    return found


def _check_statistics(io: Any, path: str, *, size: int, snapshot_id: int, raw: dict[str, Any]) -> Found:
    where = {"file": path, "snapshot_id": snapshot_id}
    try:
        actual = io.size(path)
    except NotFoundError:
        return [("FILE_MISSING", "the statistics file does not exist", where)]
    except IcectlError as e:
        return [("FILE_MISSING", f"cannot stat the statistics file: {e.message}", where)]
    if actual != size:
        return [("FILE_SIZE_MISMATCH", f"the statistics file has {actual} bytes, file-size-in-bytes is {size}", where)]
    footer_size = raw.get("file-footer-size-in-bytes")
    if footer_size is not None:  # a table statistics file is Puffin; partition statistics are not
        try:
            footer = puffin.read_puffin_footer(puffin.FileIOSource(io, path), source=path)
        except IcectlError as e:
            return [("PUFFIN_INVALID", e.message, where)]
        if footer.footer_size != footer_size:
            return [("PUFFIN_INVALID", f"the footer is {footer.footer_size} bytes, file-footer-size-in-bytes is "
                     f"{footer_size}", where)]
    return []


def _check_summary(snap: Any, scans: list[ManifestScan], out: Collector) -> None:
    """Iceberg Java's SnapshotSummary totals against the live files (a DV counts its blob's size)."""
    s = snap.summary
    if not any(k.startswith("total-") for k in s):
        return
    data_files = delete_files = records = size = pos = eq = 0
    for scan in scans:
        if not scan.readable:
            return  # the manifest was reported; its totals are unknown
        if scan.data_files is not None:  # column sums: a snapshot's manifests are summed again for each snapshot
            data_files += len(scan.data_files)
            records += int(scan.data_files.get_column("records").sum())
            size += int(scan.data_files.get_column("size").sum())
        for f in scan.deletes:
            delete_files += 1
            size += f.content_size_in_bytes if f.is_dv and f.content_size_in_bytes else f.file_size_in_bytes
            if f.content == 1:
                pos += f.record_count
            else:
                eq += f.record_count
    actual = {"total-data-files": data_files, "total-delete-files": delete_files, "total-records": records,
              "total-files-size": size, "total-position-deletes": pos, "total-equality-deletes": eq}
    wrong = []
    for key, value in actual.items():
        text = s.get(key)
        if text is not None and text.lstrip("-").isdigit() and int(text) != value:
            wrong.append(f"{key} {text} (manifests: {value})")
    if wrong:
        out.add("SUMMARY_TOTALS", "the summary says " + ", ".join(wrong), snapshot_id=snap.snapshot_id)
