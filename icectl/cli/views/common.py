"""Result parts and text pieces that several views share: refs, schemas as trees, specs and
sort orders as tables. No I/O beyond writing to the environment's streams."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from icectl.cli.context import Env
from icectl.cli.output import Line, Node, fmt_duration_ms, opt, print_table, print_tree, say, warn
from icectl.ops.inspect.describe import RefRow
from icectl.spec.types import ListType, MapType, StructType, type_label

if TYPE_CHECKING:
    from icectl.spec.metadata import TableMetadata
    from icectl.spec.types import IcebergType, NestedField, Schema


def print_refs(env: Env, refs: list[RefRow]) -> None:
    print_table(env, ["name", "type", "snapshot", "min snapshots to keep", "max snapshot age", "max ref age"],
                [[r.name, r.type, str(r.snapshot_id), opt(r.min_snapshots_to_keep),
                  fmt_duration_ms(r.max_snapshot_age_ms), fmt_duration_ms(r.max_ref_age_ms)] for r in refs],
                title="Refs", empty="none", ids={"name", "snapshot"},
                drop=["max ref age", "max snapshot age", "min snapshots to keep"])


# -- schemas ----------------------------------------------------------------------------------------------

def _field_line(f: NestedField) -> Line:
    line: Line = [(f.name, "bold"), (f" {type_label(f.field_type)} ", None),
                  ("required", "red") if f.required else ("optional", "dim"), (f" id={f.field_id}", "dim")]
    if f.has_initial_default:
        line.append((f" initial-default={f.initial_default!r}", None))
    if f.has_write_default:
        line.append((f" write-default={f.write_default!r}", None))
    if f.doc:
        line.append((f" {f.doc}", "italic"))
    return line


def _field_nodes(t: IcebergType) -> list[list[Node]]:
    if isinstance(t, StructType):
        fields = list(t.fields)
    elif isinstance(t, ListType):
        fields = [t.element_field]
    elif isinstance(t, MapType):
        fields = [t.key_field, t.value_field]
    else:
        return []
    return [[Node(_field_line(f), _field_nodes(f.field_type))] for f in fields]


def print_schema(env: Env, schema: Schema) -> None:
    ids = f" (identifier fields: {list(schema.identifier_field_ids)})" if schema.identifier_field_ids else ""
    print_tree(env, f"schema {schema.schema_id}{ids}", _field_nodes(schema.as_struct))


def print_specs_and_orders(env: Env, md: TableMetadata) -> None:
    """The partition specs and sort orders, source columns by name (as the current schema has them)."""
    rows = []
    for s in md.partition_specs:
        marker = f"{s.spec_id}{' (default)' if s.spec_id == md.default_spec_id else ''}"
        if not s.fields:
            rows.append([marker, "", "unpartitioned", "", ""])
        for f in s.fields:
            src = md.schema.column_name(f.source_id) or f"id {f.source_id} (dropped)"
            rows.append([marker, str(f.field_id), f.name, f.transform, src])
            marker = ""
    print_table(env, ["spec", "field id", "name", "transform", "source"], rows, title="Partition specs")
    say(env)
    rows = []
    for o in md.sort_orders:
        marker = f"{o.order_id}{' (default)' if o.order_id == md.default_sort_order_id else ''}"
        if not o.fields:
            rows.append([marker, "unsorted", "", ""])
        for f in o.fields:
            col = md.schema.column_name(f.source_id) or f"id {f.source_id}"
            term = col if f.transform == "identity" else f"{f.transform}({col})"
            rows.append([marker, term, f.direction, f.null_order])
            marker = ""
    print_table(env, ["order", "term", "direction", "nulls"], rows, title="Sort orders")


# -- failed deletes ---------------------------------------------------------------------------------------

FAILED_LISTED = 10  # failed deletes named one by one without --verbose


@dataclass
class SkippedForSafety:
    path: str  # a file under the table location that the command will not delete
    reason: str  # why (icectl.io.safety): a symbolic link, a real location outside the table, a mount point


def say_skipped_for_safety(env: Env, skipped: list[SkippedForSafety]) -> None:
    """The files a plan leaves alone for safety, each with its reason."""
    if skipped:
        say(env, (f"{len(skipped)} skipped for safety (never deleted):", "yellow"))
        print_table(env, ["skipped for safety", "reason"], [[s.path, s.reason] for s in skipped])


def warn_failed_deletes(env: Env, failed: list) -> None:
    """A warning for each file that could not be deleted (``.path``, ``.error``): all of them with
    --verbose, else the first few and a count (a bulk delete against a failing store can fail
    thousands; the JSON output always lists them all)."""
    shown = failed if env.verbose or len(failed) <= FAILED_LISTED else failed[:FAILED_LISTED]
    for f in shown:
        warn(env, f"could not delete {f.path}: {f.error}")
    if len(shown) < len(failed):
        warn(env, f"could not delete {len(failed) - len(shown)} more files ({len(failed)} in all; "
                  f"--verbose lists them, -o json too)")
