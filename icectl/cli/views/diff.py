"""What ``diff`` prints (the result is :class:`icectl.ops.inspect.diff.TableDiff`; its JSON is the
standard form, its lists of files encoded by msgspec when they are plain)."""
from __future__ import annotations

import json
from typing import Any

from icectl.cli.context import Env
from icectl.cli.output import fmt_bytes, fmt_ts, num, plain_rows, print_kv, print_table, say, text_renderer
from icectl.ops.inspect.diff import DiffSide, FileChange, TableDiff


@plain_rows(FileChange)
def _plain_change(f: FileChange) -> dict[str, Any] | None:
    """A FileChange's JSON object (its fields), or None when a partition value is not a str, int,
    bool or None (see :func:`icectl.cli.output.plain_rows`)."""
    for v in f.partition.values():
        if v is not None and type(v) not in (str, int, bool):
            return None
    return f.__dict__


def side_text(s: DiffSide) -> str:
    snap = f"snapshot {s.snapshot_id}" if s.snapshot_id is not None else "no snapshot"
    when = f", {fmt_ts(s.snapshot_timestamp_ms)}" if s.snapshot_timestamp_ms is not None else ""
    via = f"; metadata {s.metadata_location.rsplit('/', 1)[-1]}" if s.kind in ("metadata", "time") else ""
    return f"{s.spec} ({s.kind}: {snap}{when}{via})"


def _partition_text(p: dict[str, Any]) -> str:
    if not p:
        return "(unpartitioned)"
    return ", ".join(f"{k}={'null' if v is None else v}" for k, v in p.items())


def _compact(v: Any) -> str:
    return "" if v is None else v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))


def print_diff(env: Env, d: TableDiff) -> None:
    say(env, f"{d.table}: from {side_text(d.a)}")
    say(env, f"{' ' * len(d.table)}    to {side_text(d.b)}")
    t = d.totals
    rows: list[tuple[str, Any]] = [
        ("data files", f"+{num(t.data_files_added)} / -{num(t.data_files_removed)}"),
        ("records", f"+{num(t.records_added)} / -{num(t.records_removed)}"),
        ("delete files", f"+{num(t.delete_files_added)} / -{num(t.delete_files_removed)}"),
        ("delete records", f"+{num(t.delete_records_added)} / -{num(t.delete_records_removed)}"),
        ("bytes", f"+{fmt_bytes(t.bytes_added)} / -{fmt_bytes(t.bytes_removed)}"),
        ("manifests", f"{d.manifests.a} / {d.manifests.b}, {d.manifests.shared} shared, {d.manifests.read} read"),
    ]
    print_kv(env, rows)
    if d.partitions:
        print_table(env, ["spec", "partition", "+data", "-data", "+deletes", "-deletes", "+records", "-records",
                          "+bytes", "-bytes"],
                    [[str(p.spec_id), _partition_text(p.partition), num(p.data_files_added), num(p.data_files_removed),
                      num(p.delete_files_added), num(p.delete_files_removed), num(p.records_added),
                      num(p.records_removed), fmt_bytes(p.bytes_added), fmt_bytes(p.bytes_removed)]
                     for p in d.partitions],
                    title="partitions", right={"+data", "-data", "+deletes", "-deletes", "+records", "-records",
                                               "+bytes", "-bytes"},
                    drop=["spec", "-deletes", "+deletes", "-bytes", "+bytes", "-records", "+records"])
    files: list[tuple[str, FileChange]] = [("+", f) for f in d.added_files or []] + \
        [("-", f) for f in d.removed_files or []]
    if files:
        print_table(env, ["", "content", "partition", "records", "size", "path"],
                    [[sign, f.content, _partition_text(f.partition), num(f.record_count), fmt_bytes(f.file_size_in_bytes),
                      f.file_path] for sign, f in files],
                    title="files", right={"records", "size"}, paths={"path"}, base=d.table_location,
                    ids={"content", "partition"}, drop=["records", "partition", "content"])
    if d.format_version:
        say(env, f"format version: {d.format_version.before} -> {d.format_version.after}")
    if d.schema:
        print_table(env, ["field id", "name", "change", "before", "after"],
                    [[str(c.field_id), c.name, c.change, _compact(c.before), _compact(c.after)] for c in d.schema.changes],
                    title=f"schema {d.schema.from_schema_id} -> {d.schema.to_schema_id}")
    for title, ch in (("partition spec", d.partition_spec), ("sort order", d.sort_order), ("location", d.location)):
        if ch:
            say(env, f"{title}: {_compact(ch.before)} -> {_compact(ch.after)}")
    if d.properties:
        print_table(env, ["property", "change", "before", "after"],
                    [[p.key, p.change, p.before or "", p.after or ""] for p in d.properties], title="properties")
    if d.refs:
        print_table(env, ["ref", "type", "change", "from", "to"],
                    [[r.name, r.type, r.change, "" if r.from_snapshot_id is None else str(r.from_snapshot_id),
                      "" if r.to_snapshot_id is None else str(r.to_snapshot_id)] for r in d.refs], title="refs",
                    ids={"ref", "from", "to"}, drop=["type"])
    if d.changes_nothing:
        say(env, "no changes")


@text_renderer(TableDiff)
def _diff_text(env: Env, d: TableDiff) -> None:
    print_diff(env, d)
