"""Relocating a table: a rewritten copy of its metadata tree under another prefix
(``icectl rewrite-table-path``), as Iceberg Java's ``rewrite_table_path`` procedure
(RewriteTablePathSparkAction, RewriteTablePathUtil) does it, from a catalog's table or from a
bare metadata file when the catalog is gone.

- Version files: the end version (default: the current metadata file) and, going back through
  its ``metadata-log``, every earlier one down to (not including) the start version. Each is
  rewritten: ``location``, each snapshot's ``manifest-list`` (v1: ``manifests``), the
  ``metadata-log`` entries, statistics and partition-statistics paths, and the properties
  ``write.data.path``, ``write.metadata.path``, ``write.folder-storage.path``,
  ``write.object-storage.path``. The new files keep their names.
- Manifest lists of the end version's snapshots that the start version did not have; manifests
  they list that such a snapshot added (every manifest without a start version).
- Manifests: every entry's ``file_path``; a position delete file's ``file_path`` bounds and
  ``referenced_data_file``; entries keep their status, snapshot id and sequence numbers. They are
  read through the manifest-entry frame and the object view (inheritance applied once) and
  written by the one manifest writer in the manifest's own format version, schema and spec, as
  Java writes them with ManifestFiles.write; manifest lists likewise.
- Position delete files hold data file paths: Parquet position delete files are rewritten, and so
  are deletion vectors' Puffin files (the ``referenced-data-file`` blob property). Their new
  sizes (and blob offsets) go into the rewritten manifests, whose new lengths go into the
  rewritten manifest lists (Java writes the lists before the manifests and keeps the old
  lengths).
- Statistics files hold no paths: they are copied.

Everything is written directly at its target path (Java writes to a staging folder first); the
copy plan then lists what is left to copy: the data files and equality delete files that live
entries of the rewritten snapshots reference, one ``source,target`` line each, without a header,
as Java's ``file-list``. ``copy`` copies them through FileIO. A path that is not under the
source prefix is refused, as Java refuses it.

Format v4 stores paths under the table location relative to it: those stay as they are, only
absolute paths are rewritten, and a file with nothing to rewrite is copied byte for byte.
"""
from __future__ import annotations

import csv
import io as _io
import json
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

from icectl.errors import AlreadyExistsError, IcectlError, InvalidMetadataError, NotFoundError, RefusedError, \
    UnsupportedError, UsageError
from icectl.formats.avro import open_avro
from icectl.formats.avro_schemas import content_stats_schema
from icectl.formats.entries import inherited, read_entry_frame
from icectl.formats.manifest import EntryStatus, FileContent, ManifestContent, ManifestFile, ManifestHeader, \
    check_entry_schema, partition_fields, read_manifest, read_manifest_header, read_manifest_list, write_manifest, \
    write_manifest_list
from icectl.io import FileIO, has_scheme, join, normalize_location
from icectl.io.safety import table_guard
from icectl.spec.metadata import TableMetadata, parse_table_metadata
from icectl.spec.properties import PATH_PROPERTIES
from icectl.spec.types import Schema, schema_from_json
from icectl.table.loaded import Table
from icectl.table.metadata_io import is_gzip_location
from icectl.formats import puffin
from icectl.formats.parquet import field_id, write_parquet

SEP = "/"
DELETE_FILE_PATH_ID = 2147483546


# -- paths (RewriteTablePathUtil.newPath) --------------------------------------------------------------------

def _with_sep(p: str) -> str:
    return p if p.endswith(SEP) else p + SEP


def relativize(path: str, prefix: str) -> str:
    """The part of ``path`` after ``prefix`` ("" when they are the same folder); UsageError when
    ``path`` is not under ``prefix``."""
    base, full = _with_sep(prefix), _with_sep(path)
    if not full.startswith(base):
        raise UsageError(f"{path} is not under --from {prefix}",
                         hint="every path the table references must start with the source prefix")
    return "" if full == base else path[len(base):]


def new_path(path: str, source: str, target: str) -> str:
    rel = relativize(path, source)
    return target if not rel else _with_sep(target) + rel


def _is_relative(path: str) -> bool:
    return not has_scheme(path) and not path.startswith("/")


def _file_name(path: str) -> str:
    return path.rsplit(SEP, 1)[-1]


# -- the plan ------------------------------------------------------------------------------------------------

@dataclass
class _Version:
    source: str
    target: str
    raw: dict[str, Any] = field(repr=False)
    metadata: TableMetadata = field(repr=False)


@dataclass
class _ManifestTask:
    source: str
    target: str
    manifest: ManifestFile  # its manifest-list entry (v1 inline manifests: the snapshot's id), as stored


@dataclass
class RelocationPlan:
    table: str
    source_metadata_location: str  # the end version, as it is
    target_metadata_location: str
    source_prefix: str
    target_prefix: str
    format_version: int
    start_version: str | None
    end_version: str
    metadata_files: list[tuple[str, str]]
    manifest_lists: list[tuple[str, str]]
    manifests: list[tuple[str, str]]
    position_delete_files: list[tuple[str, str]]
    statistics_files: list[tuple[str, str]]
    copy_rows: list[tuple[str, str]]
    copy_bytes: int
    copied_as_is: list[str]
    absolute_paths: int  # stored paths rewritten (v4: the absolute ones only)
    note: str | None
    copy_plan_location: str
    _versions: list[_Version] = field(default_factory=list, repr=False)
    _manifest_tasks: list[_ManifestTask] = field(default_factory=list, repr=False)
    _location: tuple[str, str] = ("", "")  # source and target table locations
    _metadata: TableMetadata | None = field(default=None, repr=False)  # the end version
    _list_snapshots: dict[str, int] = field(default_factory=dict, repr=False)  # manifest list -> its snapshot


@dataclass
class RelocationResult:
    plan: RelocationPlan
    copy_plan: str
    copied_files: int
    copied_bytes: int
    skipped_existing: int


class _Rewriter:
    """Rewrites stored paths: absolute ones under the source prefix; v4 relative ones stay."""

    def __init__(self, source: str, target: str, format_version: int):
        self.source, self.target, self.v4 = source, target, format_version >= 4
        self.count = 0

    def stored(self, path: str) -> str:
        if self.v4 and _is_relative(path):
            return path
        self.count += 1
        return new_path(path, self.source, self.target)


def _read_json(io: FileIO, location: str) -> dict[str, Any]:
    try:
        data = io.read(location)
    except NotFoundError:
        raise NotFoundError(f"metadata file not found: {location}") from None
    if is_gzip_location(location):
        import gzip

        data = gzip.decompress(data)
    try:
        obj = json.loads(data)
    except ValueError as e:
        raise InvalidMetadataError(f"{location}: invalid JSON: {e}") from None
    if not isinstance(obj, dict):
        raise InvalidMetadataError(f"{location}: not a table metadata object")
    return obj


def _find_version(table: Table, name: str, option: str) -> str:
    """The metadata file called ``name`` (a file name or a full path) among the current one and its
    metadata log, as Java's validateVersion looks for it."""
    candidates = [table.metadata_location] + [e.metadata_file for e in table.metadata.metadata_log]
    found = [c for c in candidates if c == name or _file_name(c) == _file_name(name)]
    if not found:
        raise NotFoundError(f"{option} {name}: no such version in the metadata log of {table.name}",
                            hint=f"versions: {', '.join(_file_name(c) for c in candidates[:5])}"
                            + (" ..." if len(candidates) > 5 else ""))
    return found[-1] if len(found) > 1 else found[0]


def _rewrite_metadata_json(raw: dict[str, Any], rw: _Rewriter) -> dict[str, Any]:
    out = json.loads(json.dumps(raw))
    out["location"] = new_path(raw["location"], rw.source, rw.target)
    for s in out.get("snapshots") or []:
        if s.get("manifest-list"):
            s["manifest-list"] = rw.stored(s["manifest-list"])
        if s.get("manifests"):
            s["manifests"] = [rw.stored(p) for p in s["manifests"]]
    for e in out.get("metadata-log") or []:
        e["metadata-file"] = rw.stored(e["metadata-file"])
    for key in ("statistics", "partition-statistics"):
        for s in out.get(key) or []:
            s["statistics-path"] = rw.stored(s["statistics-path"])
    props = out.get("properties") or {}
    for key in (p.name for p in PATH_PROPERTIES):
        if key in props and _with_sep(props[key]).startswith(_with_sep(rw.source)):
            props[key] = new_path(props[key], rw.source, rw.target)
    return out


def _resolve(location: str, stored: str, v4: bool) -> str:
    return join(location, stored) if v4 and _is_relative(stored) else stored


def plan_relocation(table: Table, *, source_prefix: str, target_prefix: str, start_version: str | None = None,
                    end_version: str | None = None, copy_plan: str | None = None) -> RelocationPlan:
    """Read everything that is to be rewritten and check it; write nothing."""
    if not source_prefix or not target_prefix:
        raise UsageError("--from and --to must not be empty")
    if _with_sep(source_prefix) == _with_sep(target_prefix):
        raise UsageError(f"--from and --to are the same prefix ({source_prefix})")
    io = table.io
    end = _find_version(table, end_version, "--end-version") if end_version else table.metadata_location
    start = _find_version(table, start_version, "--start-version") if start_version else None
    if start is not None and start == end:
        raise UsageError("--start-version and --end-version are the same version: nothing to rewrite")
    end_raw = _read_json(io, end)
    end_md = parse_table_metadata(end_raw, source=end)
    v = end_md.format_version
    rw = _Rewriter(source_prefix, target_prefix, v)
    src_location = end_md.location or ""
    tgt_location = new_path(src_location, source_prefix, target_prefix)
    v4 = v >= 4
    versions = [_Version(end, new_path(end, source_prefix, target_prefix), end_raw, end_md)]
    start_md = None
    for e in reversed(end_md.metadata_log):
        if start is not None and e.metadata_file == start:
            break
        if not io.exists(e.metadata_file):
            raise NotFoundError(f"version file {e.metadata_file} in the metadata log does not exist",
                                hint="relocate only the newer versions with --start-version")
        raw = _read_json(io, e.metadata_file)
        versions.append(_Version(e.metadata_file, new_path(e.metadata_file, source_prefix, target_prefix), raw,
                                 parse_table_metadata(raw, source=e.metadata_file)))
    if start is not None:
        start_md = parse_table_metadata(_read_json(io, start), source=start)
    start_ids = {s.snapshot_id for s in start_md.snapshots} if start_md else set()
    for ver in versions:  # every path check (and the count of rewritten paths) before anything is written
        _rewrite_metadata_json(ver.raw, rw)
    if io.exists(versions[0].target):
        raise AlreadyExistsError(f"{versions[0].target} already exists: the table was relocated there already",
                                 hint="relocate newer versions with --start-version, or choose another --to")
    delta = {s.snapshot_id for ver in versions for s in ver.metadata.snapshots} - start_ids
    valid = [s for s in end_md.snapshots if s.snapshot_id not in start_ids]
    lists, tasks, seen = [], [], set()
    list_snapshots: dict[str, int] = {}
    for snap in valid:
        stored = snap.manifest_list
        if stored is None:
            for p in snap.manifests or []:
                src = _resolve(src_location, p, v4)
                if src not in seen:
                    seen.add(src)
                    tasks.append(_ManifestTask(src, _resolve(tgt_location, rw.stored(p), v4),
                                               ManifestFile(p, 0, 0, added_snapshot_id=snap.snapshot_id)))
            continue
        src = _resolve(src_location, stored, v4)
        lists.append((src, _resolve(tgt_location, rw.stored(stored), v4)))
        list_snapshots[src] = snap.snapshot_id
        for m in _manifest_list(io, src):
            p = m.manifest_path
            m_src = _resolve(src_location, p, v4)
            if m_src in seen or (start is not None and m.added_snapshot_id not in delta):
                rw.stored(p)
                continue
            seen.add(m_src)
            tasks.append(_ManifestTask(m_src, _resolve(tgt_location, rw.stored(p), v4), m))
    copy_rows: dict[str, str] = {}
    copy_bytes = 0
    rewrite_deletes: dict[str, str] = {}
    for t in tasks:
        for path, ref, content, fmt, size, status, snapshot_id in _entries(io, t.source, t.manifest):
            src = _resolve(src_location, path, v4)
            tgt = _resolve(tgt_location, rw.stored(path), v4)
            if ref:
                rw.stored(ref)
            if status == 2 or (start is not None and snapshot_id not in delta):
                continue
            if content == 1:
                if fmt not in ("parquet", "puffin"):
                    raise UnsupportedError(f"position delete file {src} is {fmt.upper()}: only Parquet position "
                                           "delete files and deletion vectors can be rewritten")
                rewrite_deletes[src] = tgt
            elif src not in copy_rows:
                copy_rows[src] = tgt
                copy_bytes += int(size)
    stats = []
    for s in list(end_md.statistics) + list(end_md.partition_statistics):
        src = _resolve(src_location, s.statistics_path, v4)
        if not io.exists(src):
            raise NotFoundError(f"statistics file {src} does not exist")
        stats.append((src, _resolve(tgt_location, rw.stored(s.statistics_path), v4)))
    note = None
    if v4:
        note = (f"format v{v}: paths under the table location are stored relative to it and stay as they are; "
                f"only the {rw.count} absolute paths are rewritten")
    plan_file = copy_plan or join(tgt_location, "metadata", f"copy-plan-{uuid.uuid4()}.csv")
    plan = RelocationPlan(
        table=table.name, source_metadata_location=end, target_metadata_location=versions[0].target,
        source_prefix=source_prefix, target_prefix=target_prefix, format_version=v,
        start_version=_file_name(start) if start else None, end_version=_file_name(end),
        metadata_files=[(x.source, x.target) for x in versions], manifest_lists=lists,
        manifests=[(t.source, t.target) for t in tasks], position_delete_files=sorted(rewrite_deletes.items()),
        statistics_files=stats, copy_rows=sorted(copy_rows.items()), copy_bytes=copy_bytes, copied_as_is=[],
        absolute_paths=rw.count, note=note, copy_plan_location=plan_file, _versions=versions,
        _manifest_tasks=tasks, _location=(src_location, tgt_location), _list_snapshots=list_snapshots,
        _metadata=end_md)
    return plan


def _read(io: FileIO, path: str) -> bytes:
    try:
        return io.read(path)
    except NotFoundError:
        raise NotFoundError(f"file not found: {path} (a snapshot of the version being relocated references it)") \
            from None


def _manifest_list(io: FileIO, path: str) -> list[ManifestFile]:
    """A manifest list's entries, paths as stored."""
    return read_manifest_list(_read(io, path), source=path)


def _entries(io: FileIO, path: str, m: ManifestFile) -> list[tuple]:
    """(file_path as stored, referenced_data_file, content, file_format in lower case,
    file_size_in_bytes, status, snapshot id) of each entry of a manifest, from the manifest-entry
    frame with inheritance applied."""
    import polars as pl

    data = _read(io, path)
    avro = open_avro(data, source=path)
    check_entry_schema(avro.schema, source=path, text=avro.schema_text)
    header = read_manifest_header(data, source=path)
    try:
        frame = read_entry_frame(avro, with_bounds=False)
    except InvalidMetadataError as e:
        raise InvalidMetadataError(f"{path}: {e.message}") from None
    frame = frame.with_columns(**inherited(manifest_sequence_number=m.sequence_number,
                                           added_snapshot_id=m.added_snapshot_id, first_row_id=None,
                                           format_version=header.format_version))
    return frame.select("file_path", "referenced_data_file", pl.col("content").fill_null(0),
                        pl.col("file_format").str.to_lowercase(), "file_size_in_bytes", "status",
                        "snapshot_id").rows()


# -- writing -------------------------------------------------------------------------------------------------

def _rewrite_bound(value: Any, rw: _Rewriter) -> Any:
    if not isinstance(value, (bytes, bytearray)):
        return value
    try:
        text = bytes(value).decode()
    except UnicodeDecodeError:
        return value
    if rw.v4 and _is_relative(text):
        return value
    if _with_sep(text).startswith(_with_sep(rw.source)):
        return new_path(text, rw.source, rw.target).encode()
    return value


def _rewrite_position_deletes(io: FileIO, src: str, tgt: str, rw: _Rewriter) -> int:
    """A Parquet position delete file with its ``file_path`` column rewritten; its new size."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    with io.open(src, "rb") as fh:
        t = pq.read_table(fh)
    for i, f in enumerate(t.schema):
        fid = field_id(f)
        if fid == DELETE_FILE_PATH_ID or (fid is None and f.name == "file_path"):
            paths = [rw.stored(p) for p in t.column(i).to_pylist()]
            t = t.set_column(i, f, pa.array(paths, type=f.type))
    return write_parquet(io, tgt, t)


def _rewrite_puffin(io: FileIO, src: str, tgt: str, rw: _Rewriter) -> tuple[int, dict[int, tuple[int, int]]]:
    """A Puffin file with each blob's ``referenced-data-file`` rewritten; its new size and where
    each blob (by old offset) now lies."""
    data = io.read(src)
    footer = puffin.read_puffin_footer(data, source=src)
    blobs = []
    for b in footer.blobs:
        props = dict(b.properties)
        if props.get(puffin.REFERENCED_DATA_FILE):
            props[puffin.REFERENCED_DATA_FILE] = rw.stored(props[puffin.REFERENCED_DATA_FILE])
        blobs.append((puffin.PuffinBlob(b.type, tuple(b.fields), b.snapshot_id, b.sequence_number,
                                        b.compression_codec, props), data[b.offset:b.offset + b.length]))
    out, written = puffin.write_puffin(blobs, footer.properties)
    io.write(tgt, out, overwrite=True)
    return len(out), {old.offset: (new.offset, new.length) for old, new in zip(footer.blobs, written)}


def _rewrite_manifest(io: FileIO, t: _ManifestTask, rw: _Rewriter, sizes: dict[str, int],
                      blobs: dict[str, dict[int, tuple[int, int]]], location: tuple[str, str],
                      deltas: dict[str, dict[int | None, int]], md: TableMetadata) -> tuple[int, bool]:
    """Write the manifest's rewritten copy; its length and whether anything in it changed. A
    rewritten position delete file's change of size goes into ``deltas[manifest]``: under None for
    a live entry, under its snapshot id for an added one (the snapshot summaries' sizes).

    The copy is written by the one manifest writer (:func:`icectl.formats.manifest.write_manifest`)
    in the manifest's own format version, with the schema and partition spec of its header, as
    Iceberg Java's RewriteTablePathUtil writes it with ManifestFiles.write: entries keep their
    status, snapshot id and sequence numbers (written out as inherited)."""
    data = io.read(t.source)
    header = read_manifest_header(data, source=t.source)
    m = t.manifest
    if m.manifest_length == 0 and header.partition_spec_id is not None:  # a v1 inline manifest
        m.partition_spec_id = header.partition_spec_id
    spec = md.spec_by_id(m.partition_spec_id)
    schema = _header_schema(header, md)
    types = [ty for _, _, ty in partition_fields(spec, lambda fid: schema.find_type(fid) or md.find_type(fid))]
    entries = read_manifest(data, m, partition_types=types, source=t.source)
    before = rw.count
    for e in entries:
        df = e.data_file
        src = _resolve(location[0], df.file_path, rw.v4)
        df.file_path = rw.stored(df.file_path)
        if df.referenced_data_file:
            df.referenced_data_file = rw.stored(df.referenced_data_file)
        if df.content == FileContent.POSITION_DELETES:
            for bounds in (df.lower_bounds, df.upper_bounds):
                if bounds and DELETE_FILE_PATH_ID in bounds:
                    new = _rewrite_bound(bounds[DELETE_FILE_PATH_ID], rw)
                    rw.count += new != bounds[DELETE_FILE_PATH_ID]
                    bounds[DELETE_FILE_PATH_ID] = new
            if src in sizes:
                grown = sizes[src] - df.file_size_in_bytes
                rw.count += grown != 0
                df.file_size_in_bytes = sizes[src]
                if grown and not df.is_deletion_vector:  # a DV counts its blob
                    d = deltas.setdefault(t.source, {})
                    if e.status != EntryStatus.DELETED:
                        d[None] = d.get(None, 0) + grown
                    if e.status == EntryStatus.ADDED:
                        d[e.snapshot_id] = d.get(e.snapshot_id, 0) + grown
            moved = blobs.get(src, {}).get(df.content_offset)
            if moved is not None:
                df.content_offset, df.content_size_in_bytes = moved
    if rw.count == before:
        io.write(t.target, data, overwrite=True)
        return len(data), False
    out = write_manifest(entries, format_version=header.format_version, spec=spec, schema=schema,
                         content=header.content,
                         content_stats_schema=content_stats_schema(schema) if header.format_version >= 4 else None)
    io.write(t.target, out, overwrite=True)
    return len(out), True


def _header_schema(header: ManifestHeader, md: TableMetadata) -> Schema:
    """The table schema a manifest's header holds (the schema it was written with), else the
    table's current one."""
    if header.schema_json:
        try:
            return schema_from_json(json.loads(header.schema_json))
        except (ValueError, InvalidMetadataError):
            pass
    return md.schema


def _rewrite_manifest_list(data: bytes, src: str, manifests: list[ManifestFile]) -> bytes:
    """A manifest list written again by the one writer
    (:func:`icectl.formats.manifest.write_manifest_list`) with its header's snapshot id, parent,
    sequence number and first row id."""
    meta = open_avro(data, source=src).metadata

    def number(key: str) -> int | None:
        v = meta.get(key)
        return int(v) if v not in (None, "", "null") else None

    try:
        return write_manifest_list(manifests, format_version=number("format-version") or 1,
                                   snapshot_id=number("snapshot-id") or 0,
                                   parent_snapshot_id=number("parent-snapshot-id"),
                                   sequence_number=number("sequence-number") or 0,
                                   first_row_id=number("first-row-id"))
    except ValueError as e:
        raise InvalidMetadataError(f"{src}: invalid manifest list key-value metadata: {e}") from None


def apply_relocation(table: Table, plan: RelocationPlan, *, copy: bool = False,
                     progress: Callable[[int, int, int], None] | None = None) -> RelocationResult:
    """Write the rewritten tree (delete files, manifests, manifest lists, statistics, then the
    metadata files, the end version last), the copy plan, and with ``copy`` copy the content files
    (a file already at its target with the same size is skipped, so a copy can be resumed)."""
    io = table.io
    rw = _Rewriter(plan.source_prefix, plan.target_prefix, plan.format_version)
    src_location, tgt_location = plan._location
    _check_targets(io, plan, tgt_location, copy=copy)
    sizes: dict[str, int] = {}
    blobs: dict[str, dict[int, tuple[int, int]]] = {}
    for src, tgt in plan.position_delete_files:
        if src.lower().endswith(".puffin") or _is_puffin(io, src):
            sizes[src], blobs[src] = _rewrite_puffin(io, src, tgt, rw)
        else:
            sizes[src] = _rewrite_position_deletes(io, src, tgt, rw)
    lengths: dict[str, int] = {}
    deltas: dict[str, dict[int | None, int]] = {}
    as_is = []
    for t in plan._manifest_tasks:
        lengths[t.source], changed = _rewrite_manifest(io, t, rw, sizes, blobs, plan._location, deltas,
                                                       plan._metadata)
        if not changed:
            as_is.append(t.source)
    grown: dict[int, tuple[int, int]] = {}  # snapshot id -> (total size change, added size change)
    for src, tgt in plan.manifest_lists:
        data = io.read(src)
        manifests = read_manifest_list(data, source=src)
        changed = False
        for m in manifests:
            m_src = _resolve(src_location, m.manifest_path, rw.v4)
            new = rw.stored(m.manifest_path)
            length = lengths.get(m_src)
            if length is None:  # relocated by an earlier run (--start-version): its copy's length
                m_tgt = _resolve(tgt_location, new, rw.v4)
                length = io.size(m_tgt) if io.exists(m_tgt) else m.manifest_length
            changed |= new != m.manifest_path or length != m.manifest_length
            sid = plan._list_snapshots[src]
            if m_src not in lengths and m.content == ManifestContent.DELETES and m_src not in deltas:
                deltas[m_src] = _earlier_deltas(io, m_src, m, rw, plan._location)
            d = deltas.get(m_src, {})
            total, added = grown.get(sid, (0, 0))
            grown[sid] = (total + d.get(None, 0), added + d.get(sid, 0))
            m.manifest_path, m.manifest_length = new, length
        if changed:
            io.write(tgt, _rewrite_manifest_list(data, src, manifests), overwrite=True)
        else:
            io.write(tgt, data, overwrite=True)
            as_is.append(src)
    for src, tgt in plan.statistics_files:
        _copy(io, src, tgt)
    for ver in reversed(plan._versions):  # the end version last: it is what a catalog registers
        data = json.dumps(_with_sizes(_rewrite_metadata_json(ver.raw, rw), grown), separators=(",", ":")).encode()
        if is_gzip_location(ver.target):
            import gzip

            data = gzip.compress(data)
        io.write(ver.target, data, overwrite=ver is not plan._versions[0])
    plan.copied_as_is = as_is
    buf = _io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerows(plan.copy_rows)
    io.write(plan.copy_plan_location, buf.getvalue().encode(), overwrite=True)
    copied = copied_bytes = skipped = 0
    if copy:
        total = len(plan.copy_rows)
        for i, (src, tgt) in enumerate(plan.copy_rows):
            n = _copy(io, src, tgt, skip_same_size=True)
            if n is None:
                skipped += 1
            else:
                copied += 1
                copied_bytes += n
            if progress is not None:
                progress(i + 1, total, copied_bytes)
    return RelocationResult(plan, plan.copy_plan_location, copied, copied_bytes, skipped)


def _check_targets(io: FileIO, plan: RelocationPlan, tgt_location: str, *, copy: bool) -> None:
    """Refuse (nothing written) when a target under the target location would be written through
    a symbolic link: a link at the target's name, or a linked folder leading outside the target
    location (the table's :class:`icectl.io.safety.PathGuard` for the target location decides)."""
    if not tgt_location:
        return
    targets = [t for _, t in plan.position_delete_files] + [t.target for t in plan._manifest_tasks]
    targets += [t for _, t in plan.manifest_lists] + [t for _, t in plan.statistics_files]
    targets += [v.target for v in plan._versions] + ([t for _, t in plan.copy_rows] if copy else [])
    root = normalize_location(tgt_location) + "/"
    guard = table_guard(io, tgt_location)
    _, refused = guard.split(t for t in targets if normalize_location(t).startswith(root))
    if refused:
        path, why = next(iter(refused.items()))
        raise RefusedError(f"{len(refused)} target files would be written through a symbolic link or outside the "
                           f"target location {tgt_location} (e.g. {path}: {why}); nothing was written",
                           hint="remove the links under the target location, or choose another --to")


def _earlier_deltas(io: FileIO, manifest: str, m: ManifestFile, rw: _Rewriter,
                    location: tuple[str, str]) -> dict[int | None, int]:
    """For a delete manifest relocated by an earlier run: how the sizes of its live position
    delete files changed (their rewritten copies are at the target)."""
    out: dict[int | None, int] = {}
    for path, _, content, fmt, size, status, sid in _entries(io, manifest, m):
        if status == 2 or content != 1 or fmt == "puffin":
            continue
        tgt = _resolve(location[1], rw.stored(path), rw.v4)
        if io.exists(tgt):
            grown = io.size(tgt) - int(size)
            out[None] = out.get(None, 0) + grown
            if status == 1:
                out[sid] = out.get(sid, 0) + grown
    return out


def _with_sizes(obj: dict[str, Any], grown: dict[int, tuple[int, int]]) -> dict[str, Any]:
    """Snapshot summaries whose sizes count rewritten position delete files, corrected."""
    for snap in obj.get("snapshots") or []:
        total, added = grown.get(snap.get("snapshot-id"), (0, 0))
        summary = snap.get("summary") or {}
        for key, change in (("total-files-size", total), ("added-files-size", added)):
            if change and str(summary.get(key, "")).lstrip("-").isdigit():
                summary[key] = str(int(summary[key]) + change)
    return obj


def _is_puffin(io: FileIO, path: str) -> bool:
    try:
        return io.read_range(path, 0, 4) == b"PFA1"
    except IcectlError:
        return False


def _copy(io: FileIO, src: str, tgt: str, *, skip_same_size: bool = False) -> int | None:
    """Copy a file through FileIO, streaming; None when skipped (already there, same size)."""
    import shutil

    size = io.size(src)
    if skip_same_size and io.exists(tgt) and io.size(tgt) == size:
        return None
    with io.open(src, "rb") as fin, io.open(tgt, "wb") as fout:
        shutil.copyfileobj(fin, fout, 8 * 1024 * 1024)
    return size


__all__ = ["RelocationPlan", "RelocationResult", "apply_relocation", "new_path", "plan_relocation", "relativize"]
