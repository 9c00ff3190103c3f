"""What ``alter``, ``properties set`` / ``unset`` and ``properties`` print: the changes asked
for, the schema, partition spec, sort order and properties before and after (side by side in
text, only the parts that change), and the updates sent."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from icectl.cli.context import Env
from icectl.cli.output import SpecJson, print_kv, print_table, say, text_renderer
from icectl.ops.evolve.alter import column_names
from icectl.spec.types import ListType, MapType, StructType

if TYPE_CHECKING:
    from icectl.spec.metadata import TableMetadata
    from icectl.spec.types import IcebergType, NestedField, Schema


@dataclass
class TableState:
    """A table's schema, default partition spec, default sort order (the spec's JSON) and properties."""

    schema: SpecJson
    partition_spec: SpecJson
    sort_order: SpecJson
    properties: dict[str, str]

    @classmethod
    def of(cls, md: TableMetadata) -> "TableState":
        return cls(md.schema.to_json(), md.spec.to_json(md.format_version), md.sort_order.to_json(),
                   dict(md.properties))


@dataclass
class AlterResult:
    """A planned (or committed) alter: the changes in words, the table before and after, and the
    commit (the REST spec's requirements and updates)."""

    table: str
    dry_run: bool
    applied: bool
    metadata_location: str | None  # the committed metadata file; None until committed
    changes: list[str]
    before: TableState
    after: TableState
    commits: list[dict] = field(default_factory=list)
    before_md: TableMetadata = field(repr=False, default=None)  # type: ignore[assignment]
    after_md: TableMetadata = field(repr=False, default=None)  # type: ignore[assignment]

    @classmethod
    def of(cls, name: str, before: TableMetadata, after: TableMetadata, changes: list[str], *, dry_run: bool,
           commit: dict | None, applied: bool = False, metadata_location: str | None = None) -> "AlterResult":
        return cls(name, dry_run, applied, metadata_location, changes, TableState.of(before), TableState.of(after),
                   [commit] if commit else [], before, after)


@dataclass
class PropertyList:
    """A table's properties."""

    table: str
    properties: dict[str, str]


@text_renderer(PropertyList)
def _properties_text(env: Env, p: PropertyList) -> None:
    if not p.properties:
        say(env, f"{p.table} has no properties")
        return
    print_kv(env, sorted(p.properties.items()), title=f"Properties of {p.table}")


# -- the side-by-side text --------------------------------------------------------------------------------

def _label(t: IcebergType) -> str:
    return "struct" if isinstance(t, StructType) else "list" if isinstance(t, ListType) else \
        "map" if isinstance(t, MapType) else str(t)


def _describe(name: str, f: NestedField) -> str:
    words = [name, _label(f.field_type), "required" if f.required else "optional"]
    if f.has_initial_default:
        words.append(f"initial-default={json.dumps(f.initial_default)}")
    if f.has_write_default:
        words.append(f"write-default={json.dumps(f.write_default)}")
    if f.doc:
        words.append(f"doc={f.doc!r}")
    return " ".join(words)


def _fields(schema: Schema) -> list[tuple[int, str]]:
    names = column_names(schema.as_struct)
    return [(fid, _describe(name, schema.find_field(fid))) for fid, name in names.items()]


def _diff_rows(before: list[tuple[Any, str]], after: list[tuple[Any, str]]) -> list[list[str]]:
    """Rows ``[mark, key, before, after]``: ``+`` added, ``-`` dropped, ``~`` changed."""
    old = dict(before)
    rows = []
    for key, text in after:
        was = old.get(key)
        mark = "+" if was is None else "~" if was != text else ""
        rows.append([mark, str(key), was or "", text])
    new_keys = {k for k, _ in after}
    rows += [["-", str(k), text, ""] for k, text in before if k not in new_keys]
    return rows


def _spec_rows(md: TableMetadata) -> list[tuple[int, str]]:
    schema = md.schema
    out = []
    for f in md.spec.fields:
        src = schema.column_name(f.source_id) or f"id {f.source_id}"
        out.append((f.field_id, f"{f.name} {f.transform}({src})"))
    return out


def _order_rows(md: TableMetadata) -> list[tuple[int, str]]:
    schema = md.schema
    return [(i, f"{f.transform}({schema.column_name(f.source_id) or f'id {f.source_id}'}) {f.direction} "
                f"{f.null_order}") for i, f in enumerate(md.sort_order.fields, 1)]


def _update_line(u: dict) -> str:
    a = u["action"]
    if a == "add-schema":
        return f"{a}: schema {u['schema']['schema-id']} (last-column-id {u.get('last-column-id')})"
    if a == "add-spec":
        return f"{a}: spec {u['spec']['spec-id']}"
    if a == "add-sort-order":
        return f"{a}: order {u['sort-order']['order-id']}"
    rest = {k: v for k, v in u.items() if k != "action"}
    return f"{a}: {json.dumps(rest, separators=(', ', ': '))}"


@text_renderer(AlterResult)
def _alter_text(env: Env, r: AlterResult) -> None:
    if r.applied:  # the plan was shown before asking
        say(env, f"altered {r.table}: committed {r.metadata_location}")
        return
    b, a = r.before_md, r.after_md
    if not r.commits:
        say(env, f"{r.table}: nothing to change (the table already is as asked)")
        return
    say(env, (f"Alter {r.table}", "bold"), " (dry run: nothing committed)" if r.dry_run else "")
    for c in r.changes:
        say(env, f"  - {c}")
    headers = ["", "id", "before", "after"]
    if a.current_schema_id != b.current_schema_id:
        say(env)
        print_table(env, headers, _diff_rows(_fields(b.schema), _fields(a.schema)),
                    title=f"Schema {b.current_schema_id} -> {a.current_schema_id} (last-column-id "
                          f"{b.last_column_id} -> {a.last_column_id}; identifier fields "
                          f"{list(b.schema.identifier_field_ids)} -> {list(a.schema.identifier_field_ids)})")
    if a.default_spec_id != b.default_spec_id:
        say(env)
        print_table(env, ["", "field id", "before", "after"], _diff_rows(_spec_rows(b), _spec_rows(a)),
                    title=f"Partition spec {b.default_spec_id} -> {a.default_spec_id} (last-partition-id "
                          f"{b.last_partition_id} -> {a.last_partition_id})")
    if a.default_sort_order_id != b.default_sort_order_id:
        say(env)
        print_table(env, ["", "#", "before", "after"], _diff_rows(_order_rows(b), _order_rows(a)),
                    title=f"Sort order {b.default_sort_order_id} -> {a.default_sort_order_id}")
    if a.properties != b.properties:
        say(env)
        keys = sorted(set(a.properties) | set(b.properties))
        print_table(env, ["", "key", "before", "after"],
                    [["+" if k not in b.properties else "-" if k not in a.properties else "~", k,
                      b.properties.get(k, ""), a.properties.get(k, "")]
                     for k in keys if a.properties.get(k) != b.properties.get(k)], title="Properties")
    say(env)
    say(env, ("Updates", "bold"), " (the REST catalog spec's TableUpdates, as sent)")
    for u in r.commits[0]["updates"]:
        say(env, f"  {_update_line(u)}")
