"""``files``: the live content files (data and deletes) of a snapshot or ref, streamed as rows with
their partition in human and JSON form."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from icectl.formats.manifest import content_kind
from icectl.spec.conversions import to_internal, to_json
from icectl.spec.metadata import Snapshot
from icectl.spec.transforms import parse_transform
from icectl.table.listing import live_file_rows
from icectl.table.loaded import Table
from icectl.errors import NotFoundError, UsageError


@dataclass
class FileRow:
    content: str  # data | position-deletes | equality-deletes | deletion-vector
    file_path: str
    file_format: str
    spec_id: int
    partition: dict[str, Any]  # partition field name -> JSON single value (Appendix D's JSON form)
    partition_display: dict[str, Any] = field(repr=False)  # name -> human value (the transform's)
    record_count: int
    file_size_in_bytes: int
    data_sequence_number: int | None
    file_sequence_number: int | None
    snapshot_id: int | None
    status: str
    first_row_id: int | None = None
    referenced_data_file: str | None = None
    content_offset: int | None = None
    content_size_in_bytes: int | None = None
    equality_ids: list[int] | None = None


def resolve_snapshot(table: Table, *, snapshot_id: int | None = None, ref: str | None = None) -> Snapshot | None:
    md = table.metadata
    if snapshot_id is not None and ref is not None:
        raise UsageError("give --snapshot or --ref, not both")
    if snapshot_id is not None:
        s = md.snapshot_by_id(snapshot_id)
        if s is None:
            raise NotFoundError(f"snapshot {snapshot_id} does not exist in {table.name}")
        return s
    if ref is not None:
        r = md.all_refs.get(ref)
        if r is None:
            raise NotFoundError(f"ref {ref!r} does not exist in {table.name}")
        s = md.snapshot_by_id(r.snapshot_id)
        if s is None:
            raise NotFoundError(f"ref {ref!r} points at snapshot {r.snapshot_id}, which does not exist")
        return s
    return md.current_snapshot


def list_files(table: Table, *, snapshot_id: int | None = None, ref: str | None = None,
               content: str | None = None) -> Iterator[FileRow]:
    """The live files of a snapshot (current, ``snapshot_id`` or ``ref``), streamed in manifest
    order: a bad snapshot or ref raises here; the manifests are read as the rows are consumed,
    a few at a time, so a table of millions of files is listed in bounded memory."""
    snap = resolve_snapshot(table, snapshot_id=snapshot_id, ref=ref)
    return _file_rows(table, snap, content)


def _file_rows(table: Table, snap: Snapshot | None, content: str | None) -> Iterator[FileRow]:
    md = table.metadata
    spec_info: dict[int, list[tuple[str, Any, Any]]] = {}
    for spec in md.partition_specs:
        info = []
        for f in spec.fields:
            src = md.find_type(f.source_id)
            try:
                tr = parse_transform(f.transform)
                rt = tr.result_type(src) if src is not None else None
            except Exception:
                tr, rt = None, None
            info.append((f.name, tr, rt, src))
        spec_info[spec.spec_id] = info
    # Tables have far fewer partitions than files: format each partition once.
    formatted: dict[tuple, tuple[dict[str, Any], dict[str, Any]]] = {}

    def partition_of(spec_id: int, values: tuple) -> tuple[dict[str, Any], dict[str, Any]]:
        key = (spec_id, values)
        done = formatted.get(key)
        if done is None:
            info = spec_info.get(spec_id, [])
            values = tuple(to_internal(rt, v) for (_, _, rt, _), v in zip(info, values))
            done = ({name: _human_partition(tr, src, v) for (name, tr, rt, src), v in zip(info, values)},
                    {name: json_partition(rt, v) for (name, tr, rt, src), v in zip(info, values)})
            formatted[key] = done
        return done

    kinds: dict[tuple[int, str], str] = {}  # (content, format) -> kind: one call per pair, not per row
    for (c, path, fmt, spec_id, values, rc, size, seq, fseq, sid, st, frid, ref, off, clen, eq) in \
            live_file_rows(table, snap):
        kind = kinds.get((c, fmt))
        if kind is None:
            kind = kinds[(c, fmt)] = content_kind(c, fmt)
        if content is not None and kind != content:
            continue
        done = formatted.get((spec_id, values))
        part, part_json = done if done is not None else partition_of(spec_id, values)
        # positional, in FileRow's field order (a keyword call costs twice as much per row)
        yield FileRow(kind, path, fmt, spec_id, part_json, part, rc, size, seq, fseq, sid, _STATUS[st], frid, ref,
                      off, clen, list(eq) if eq is not None else None)


_STATUS = {0: "existing", 1: "added", 2: "deleted"}


def _human_partition(tr: Any, source: Any, v: Any) -> Any:
    if v is None:
        return None
    try:
        return tr.human(v, source) if tr is not None else str(v)
    except Exception:
        return str(v)


def json_partition(rt: Any, v: Any) -> Any:
    """A partition value in Appendix D's JSON form for its result type ``rt`` (``str`` when it has none
    or it does not convert)."""
    if v is None or rt is None:
        return v if isinstance(v, (int, float, str, bool)) or v is None else str(v)
    try:
        return to_json(rt, v)
    except Exception:
        return str(v)
