"""Human (rich) and JSON renderings of the read-only views. No I/O beyond writing to streams."""
from __future__ import annotations

from typing import Any

from icectl.cli.context import Env
from icectl.cli.output import fmt_bytes, fmt_duration_ms, fmt_ts, iso_ts, num, to_jsonable
from icectl.ops.inspect import Description, FileRow, SnapshotRow, SnapshotTree, ref_rows
from icectl.spec.metadata import SnapshotRef, TableMetadata
from icectl.spec.types import IcebergType, ListType, MapType, NestedField, StructType


# -- describe --------------------------------------------------------------------------------------

def ref_json(name: str, r: SnapshotRef) -> dict[str, Any]:
    return {"name": name, "type": r.ref_type, "snapshot_id": r.snapshot_id,
            "min_snapshots_to_keep": r.min_snapshots_to_keep, "max_snapshot_age_ms": r.max_snapshot_age_ms,
            "max_ref_age_ms": r.max_ref_age_ms}


def describe_json(d: Description) -> dict[str, Any]:
    md = d.metadata
    v = md.format_version
    snap = d.current_snapshot
    return {
        "name": d.name,
        "table_uuid": d.table_uuid,
        "location": d.location,
        "metadata_location": d.metadata_location,
        "format_version": v,
        "last_updated_ms": d.last_updated_ms,
        "last_sequence_number": d.last_sequence_number,
        "last_column_id": d.last_column_id,
        "next_row_id": d.next_row_id,
        "current_schema_id": md.current_schema_id,
        "schema": md.schema.to_json(),
        "schemas": len(md.schemas),
        "default_spec_id": md.default_spec_id,
        "partition_specs": [s.to_json(v) for s in md.partition_specs],
        "default_sort_order_id": md.default_sort_order_id,
        "sort_orders": [o.to_json() for o in md.sort_orders],
        "properties": dict(md.properties),
        "refs": [ref_json(n, r) for n, r in ref_rows(md)],
        "current_snapshot": None if snap is None else {
            "snapshot_id": snap.snapshot_id, "parent_snapshot_id": snap.parent_snapshot_id,
            "sequence_number": snap.sequence_number, "timestamp_ms": snap.timestamp_ms,
            "committed_at": iso_ts(snap.timestamp_ms), "operation": snap.operation, "schema_id": snap.schema_id,
            "manifest_list": snap.manifest_list, "summary": dict(snap.summary),
            "first_row_id": snap.first_row_id, "added_rows": snap.added_rows},
        "totals": {
            "data_files": d.totals.data_files, "delete_files": d.totals.delete_files,
            "position_delete_files": d.totals.position_delete_files,
            "equality_delete_files": d.totals.equality_delete_files,
            "deletion_vectors": d.totals.deletion_vectors, "records": d.totals.records,
            "position_delete_records": d.totals.position_delete_records,
            "equality_delete_records": d.totals.equality_delete_records,
            "data_bytes": d.totals.data_bytes, "delete_bytes": d.totals.delete_bytes},
        "snapshots": d.snapshot_count,
        "snapshot_log_size": d.snapshot_log_size,
        "metadata_log_size": d.metadata_log_size,
    }


def _type_label(t: IcebergType) -> str:
    if isinstance(t, StructType):
        return "struct"
    if isinstance(t, ListType):
        return "list"
    if isinstance(t, MapType):
        return "map"
    return str(t)


def _field_label(f: NestedField) -> str:
    from rich.markup import escape

    parts = [f"[bold]{escape(f.name)}[/bold] {escape(_type_label(f.field_type))}",
             "[red]required[/red]" if f.required else "[dim]optional[/dim]", f"[dim]id={f.field_id}[/dim]"]
    if f.has_initial_default:
        parts.append(f"initial-default={escape(repr(f.initial_default))}")
    if f.has_write_default:
        parts.append(f"write-default={escape(repr(f.write_default))}")
    if f.doc:
        parts.append(f"[italic]{escape(f.doc)}[/italic]")
    return " ".join(parts)


def _add_fields(node: Any, t: IcebergType) -> None:
    if isinstance(t, StructType):
        for f in t.fields:
            _add_fields(node.add(_field_label(f)), f.field_type)
    elif isinstance(t, ListType):
        _add_fields(node.add(_field_label(t.element_field)), t.element_type)
    elif isinstance(t, MapType):
        _add_fields(node.add(_field_label(t.key_field)), t.key_type)
        _add_fields(node.add(_field_label(t.value_field)), t.value_type)


def schema_tree(md: TableMetadata) -> Any:
    from rich.tree import Tree

    s = md.schema
    tree = Tree(f"schema {s.schema_id}" + (f" (identifier fields: {list(s.identifier_field_ids)})"
                                           if s.identifier_field_ids else ""))
    _add_fields(tree, s.as_struct)
    return tree


def _kv_table(title: str, rows: list[tuple[str, Any]]) -> Any:
    from rich.table import Table

    t = Table(title=title, show_header=False, title_justify="left", box=None, pad_edge=False)
    t.add_column(style="bold")
    t.add_column(overflow="fold")  # long locations wrap; never cut to "…"
    for k, v in rows:
        t.add_row(k, "" if v is None else str(v))
    return t


def render_description(env: Env, d: Description) -> None:
    from rich.table import Table

    md = d.metadata
    c = env.console()
    c.print(_kv_table(f"Table {d.name}", [
        ("uuid", d.table_uuid), ("location", d.location), ("metadata", d.metadata_location),
        ("format version", d.format_version), ("last updated", fmt_ts(d.last_updated_ms)),
        ("last sequence number", d.last_sequence_number), ("last column id", d.last_column_id),
        *([("next row id", d.next_row_id)] if d.format_version >= 3 else []),
    ]))
    c.print()
    c.print(schema_tree(md))
    if len(md.schemas) > 1:
        c.print(f"[dim]{len(md.schemas)} schemas in history; current is {md.current_schema_id}[/dim]")
    c.print()
    specs = Table(title="Partition specs", title_justify="left")
    for col in ("spec", "field id", "name", "transform", "source"):
        specs.add_column(col)
    for s in md.partition_specs:
        marker = f"{s.spec_id}{' (default)' if s.spec_id == md.default_spec_id else ''}"
        if not s.fields:
            specs.add_row(marker, "", "[dim]unpartitioned[/dim]", "", "")
        for f in s.fields:
            src = md.schema.column_name(f.source_id) or f"id {f.source_id} (dropped)"
            specs.add_row(marker, str(f.field_id), f.name, f.transform, src)
            marker = ""
    c.print(specs)
    orders = Table(title="Sort orders", title_justify="left")
    for col in ("order", "term", "direction", "nulls"):
        orders.add_column(col)
    for o in md.sort_orders:
        marker = f"{o.order_id}{' (default)' if o.order_id == md.default_sort_order_id else ''}"
        if not o.fields:
            orders.add_row(marker, "[dim]unsorted[/dim]", "", "")
        for f in o.fields:
            col = md.schema.column_name(f.source_id) or f"id {f.source_id}"
            term = col if f.transform == "identity" else f"{f.transform}({col})"
            orders.add_row(marker, term, f.direction, f.null_order)
            marker = ""
    c.print(orders)
    if md.properties:
        c.print(_kv_table("Properties", sorted(md.properties.items())))
        c.print()
    render_refs(env, md)
    snap = d.current_snapshot
    t = d.totals
    rows: list[tuple[str, Any]] = []
    if snap is None:
        rows.append(("current snapshot", "none (empty table)"))
    else:
        rows += [("current snapshot", snap.snapshot_id), ("committed at", fmt_ts(snap.timestamp_ms)),
                 ("operation", snap.operation), ("sequence number", snap.sequence_number)]
    rows += [("data files", num(t.data_files)), ("records", num(t.records)), ("data size", fmt_bytes(t.data_bytes)),
             ("delete files", f"{num(t.delete_files)} (position {t.position_delete_files}, equality "
                              f"{t.equality_delete_files}, deletion vectors {t.deletion_vectors})"),
             ("deleted rows recorded", f"position {num(t.position_delete_records)}, equality {num(t.equality_delete_records)}"),
             ("snapshots", d.snapshot_count), ("snapshot log", d.snapshot_log_size), ("metadata log", d.metadata_log_size)]
    c.print(_kv_table("Current state", rows))


def render_refs(env: Env, md: TableMetadata) -> None:
    from rich.table import Table

    c = env.console()
    refs = Table(title="Refs", title_justify="left")
    for col in ("name", "type", "snapshot", "min snapshots to keep", "max snapshot age", "max ref age"):
        refs.add_column(col)
    for name, r in ref_rows(md):
        refs.add_row(name, r.ref_type, str(r.snapshot_id), "" if r.min_snapshots_to_keep is None else str(r.min_snapshots_to_keep),
                     fmt_duration_ms(r.max_snapshot_age_ms), fmt_duration_ms(r.max_ref_age_ms))
    if not md.all_refs:
        refs.add_row("[dim]none[/dim]", "", "", "", "", "")
    c.print(refs)


def render_created(env: Env, result: Any, md: TableMetadata) -> None:
    c = env.console()
    c.print(f"created {result.name} (format version {result.format_version})")
    c.print(_kv_table("", [("location", result.location), ("metadata", result.metadata_location),
                           ("uuid", result.table_uuid)]))
    c.print(schema_tree(md))


# -- snapshots ---------------------------------------------------------------------------------------

def snapshot_json(r: SnapshotRow) -> dict[str, Any]:
    d = to_jsonable(r)
    d["committed_at"] = iso_ts(r.timestamp_ms)
    return d


SNAPSHOT_COLUMNS = ["snapshot", "parent", "committed at", "operation", "seq", "schema", "+files", "-files",
                    "+deletes", "-deletes", "+records", "-records", "refs", "main"]


def render_snapshots(env: Env, rows: list[SnapshotRow]) -> None:
    from icectl.cli.output import plain_table, use_plain

    if not rows:
        env.console().print("no snapshots")
        return
    cells = [[str(r.snapshot_id), "" if r.parent_snapshot_id is None else str(r.parent_snapshot_id),
              fmt_ts(r.timestamp_ms), r.operation or "", str(r.sequence_number),
              "" if r.schema_id is None else str(r.schema_id), num(r.added_data_files), num(r.removed_data_files),
              num(r.added_delete_files), num(r.removed_delete_files), num(r.added_records), num(r.removed_records),
              ", ".join(r.refs), "yes" if r.in_main else "no"] for r in rows]
    right = {c for c in SNAPSHOT_COLUMNS if c.startswith(("+", "-", "seq", "schema"))}
    if use_plain(env, len(rows)):
        plain_table(env, SNAPSHOT_COLUMNS, cells, right)
        return
    from rich.table import Table

    t = Table()
    for col in SNAPSHOT_COLUMNS:
        t.add_column(col, justify="right" if col in right else "left")
    for row in cells:
        t.add_row(*row)
    env.console().print(t)


def tree_json(st: SnapshotTree) -> dict[str, Any]:
    def node(sid: int) -> dict[str, Any]:
        r = st.rows[sid]
        return {"snapshot_id": sid, "operation": r.operation, "committed_at": iso_ts(r.timestamp_ms),
                "refs": r.refs, "children": [node(c) for c in st.children.get(sid, [])]}

    return {"roots": [node(r) for r in st.roots]}


def render_tree(env: Env, st: SnapshotTree) -> None:
    from rich.markup import escape
    from rich.tree import Tree

    c = env.console()
    if not st.roots:
        c.print("no snapshots")
        return
    root = Tree("snapshots")

    def label(sid: int) -> str:
        r = st.rows[sid]
        refs = " ".join(f"[bold cyan]({escape(n)})[/bold cyan]" for n in r.refs)
        return f"{sid} {r.operation or ''} {fmt_ts(r.timestamp_ms)} {refs}".rstrip()

    # Long linear histories stay readable: a chain of single children continues at the same depth.
    def add(parent: Any, sid: int) -> None:
        node = parent.add(label(sid))
        kids = st.children.get(sid, [])
        while len(kids) == 1:
            sid = kids[0]
            node = parent.add(label(sid))
            kids = st.children.get(sid, [])
        for k in kids:
            add(node, k)

    for r in st.roots:
        add(root, r)
    c.print(root)


# -- files -------------------------------------------------------------------------------------------

def emit_files_json(env: Env, rows: list[FileRow]) -> None:
    """One compact JSON object per line inside a list: the C encoder, so 200,000 files print fast."""
    import json

    out = env.stdout
    out.write("[")
    for i, r in enumerate(rows):
        out.write(",\n" if i else "\n")
        out.write(json.dumps({
            "content": r.content, "file_path": r.file_path, "file_format": r.file_format, "spec_id": r.spec_id,
            "partition": r.partition_values, "record_count": r.record_count,
            "file_size_in_bytes": r.file_size_in_bytes, "data_sequence_number": r.data_sequence_number,
            "file_sequence_number": r.file_sequence_number, "snapshot_id": r.snapshot_id, "status": r.status,
            "first_row_id": r.first_row_id, "referenced_data_file": r.referenced_data_file,
            "content_offset": r.content_offset, "content_size_in_bytes": r.content_size_in_bytes,
            "equality_ids": r.equality_ids}, default=str))
    out.write("\n]\n" if rows else "]\n")


FILE_COLUMNS = ["content", "path", "partition", "records", "size", "data seq", "file seq"]


def render_files(env: Env, rows: list[FileRow]) -> None:
    from icectl.cli.output import plain_table, use_plain

    c = env.console()
    if not rows:
        c.print("no live files")
        return
    cells = [[r.content, r.file_path, ", ".join(f"{k}={v}" for k, v in r.partition.items()), num(r.record_count),
              fmt_bytes(r.file_size_in_bytes), "" if r.data_sequence_number is None else str(r.data_sequence_number),
              "" if r.file_sequence_number is None else str(r.file_sequence_number)] for r in rows]
    right = {"records", "size", "data seq", "file seq"}
    if use_plain(env, len(rows)):
        plain_table(env, FILE_COLUMNS, cells, right)
    else:
        from rich.table import Table

        t = Table()
        for col in FILE_COLUMNS:
            t.add_column(col, justify="right" if col in right else "left")
        for row in cells:
            t.add_row(*row)
        c.print(t)
    total = sum(r.file_size_in_bytes for r in rows)
    env.stdout.write(f"{len(rows):,} files, {sum(r.record_count for r in rows if r.content == 'data'):,} data "
                     f"records, {fmt_bytes(total)}\n")
