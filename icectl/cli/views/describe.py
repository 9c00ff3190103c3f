"""How ``describe`` prints a table's :class:`~icectl.ops.inspect.describe.Description` (its JSON is the
description itself)."""
from __future__ import annotations

from icectl.cli.context import Env
from icectl.cli.output import fmt_bytes, fmt_ts, num, print_kv, print_table, say, text_renderer
from icectl.cli.views.common import print_refs, print_schema, print_specs_and_orders
from icectl.ops.inspect.describe import Description, StatisticsBlob


@text_renderer(Description)
def _description_text(env: Env, d: Description) -> None:
    md = d.metadata
    print_kv(env, [
        ("uuid", d.table_uuid), ("location", d.location), ("metadata", d.metadata_location),
        ("format version", d.format_version), ("last updated", fmt_ts(d.last_updated_ms)),
        ("last sequence number", d.last_sequence_number), ("last column id", d.last_column_id),
        *([("next row id", d.next_row_id)] if d.format_version >= 3 else []),
    ], title=f"Table {d.name}", paths={"location", "metadata"})
    say(env)
    print_schema(env, md.schema)
    if len(md.schemas) > 1:
        say(env, (f"{len(md.schemas)} schemas in history; current is {md.current_schema_id}", "dim"))
    say(env)
    print_specs_and_orders(env, md)
    if d.properties:
        say(env)
        print_kv(env, sorted(d.properties.items()), title="Properties")
    say(env)
    print_refs(env, d.refs)
    say(env)
    snap = d.current_snapshot
    t = d.totals
    rows: list[tuple[str, object]] = []
    if snap is None:
        rows.append(("current snapshot", "none (empty table)"))
    else:
        rows += [("current snapshot", snap.snapshot_id), ("committed at", fmt_ts(snap.timestamp_ms)),
                 ("operation", snap.operation), ("sequence number", snap.sequence_number)]
    rows += [("data files", num(t.data_files)), ("records", num(t.records)), ("data size", fmt_bytes(t.data_bytes)),
             ("delete files", f"{num(t.delete_files)} (position {t.position_delete_files}, equality "
                              f"{t.equality_delete_files}, deletion vectors {t.deletion_vectors})"),
             ("deleted rows recorded", f"position {num(t.position_delete_records)}, equality "
                                       f"{num(t.equality_delete_records)}"),
             ("snapshots", d.snapshots), ("snapshot log", d.snapshot_log_size), ("metadata log", d.metadata_log_size)]
    print_kv(env, rows, title="Current state")
    _statistics_text(env, d)


def _statistics_text(env: Env, d: Description) -> None:
    if d.statistics:
        say(env)
        rows = []
        for st in d.statistics:
            for b in st.blobs or [StatisticsBlob("(no blobs)", None, None, [], [], {})]:
                cols = ", ".join(c or str(f) for f, c in zip(b.fields, b.columns))
                rows.append([str(st.snapshot_id), cols, b.type, b.properties.get("ndv", ""), st.statistics_path])
        print_table(env, ["snapshot", "columns", "blob type", "ndv", "file"], rows, right={"ndv"},
                    title=f"Statistics ({len(d.statistics)} files)", ids={"snapshot"}, paths={"file"},
                    base=d.location, drop=["blob type", "ndv"])
    if d.partition_statistics:
        say(env)
        print_table(env, ["snapshot", "size", "file"],
                    [[str(p.snapshot_id), fmt_bytes(p.file_size_in_bytes), p.statistics_path]
                     for p in d.partition_statistics], right={"size"},
                    title=f"Partition statistics ({len(d.partition_statistics)} files)", ids={"snapshot"},
                    paths={"file"}, base=d.location)
