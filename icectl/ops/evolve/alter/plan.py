"""``icectl alter`` and ``icectl properties``: any number of schema, partition, sort order and
property changes, planned against the loaded table and committed as one commit.

The changes apply in a fixed order, as one Iceberg Java transaction would make them: the schema
(drops, adds, renames, type promotions, nullability, docs, defaults, moves, identifier fields;
then the properties that follow the schema, see :mod:`.mapping`), the partition spec (drops,
renames, adds, against the new schema), the sort order, the properties. The updates are what a
client's metadata builder records (``add-schema`` only when the schema is new, ``-1`` for the
one just added), so every catalog applies exactly these. A change the spec forbids is refused
(exit code 2) before anything is written.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from icectl.errors import UnsupportedError, UsageError
from icectl.expr.column import Literal, NewColumn, literal, parse_move, parse_new_column
from icectl.expr.lexer import column_name
from icectl.expr.pairs import parse_pair
from icectl.expr.partition import parse_partition_field
from icectl.expr.schema import parse_type
from icectl.expr.sort import SortTerm, bind_sort_order, parse_sort_order
from icectl.expr.term import Term, parse_term
from icectl.ops.evolve.alter.mapping import (METRICS_COLUMN, NAME_MAPPING, column_property_changes,
                                      update_name_mapping)
from icectl.ops.evolve.alter.schema_update import SchemaUpdate, default_json
from icectl.ops.evolve.alter.spec_update import PartitionSpecUpdate
from icectl.spec.metadata import TableMetadata
from icectl.spec.properties import check_setting
from icectl.table.builder import MetadataBuilder
from icectl.table.transaction import Committed, Transaction, sent_json
from icectl.table.loaded import Table
from icectl.table.requirements import TableRequirement, requirements_for
from icectl.table.updates import RemoveProperties, SetProperties, TableUpdate

# Iceberg Java's TableProperties.RESERVED_PROPERTIES: never stored; format-version is a request to
# upgrade, which icectl makes with its own command and pre-flight report.
RESERVED_PROPERTIES = ("format-version", "uuid", "snapshot-count", "current-snapshot-summary", "current-snapshot-id",
                       "current-snapshot-timestamp-ms", "current-schema", "default-partition-spec",
                       "default-sort-order")


@dataclass
class AlterRequest:
    """What to change, as given on the command line. Names of columns refer to the table's
    current schema, or to a column as this change adds or renames it."""

    add_columns: list[str] = field(default_factory=list)  # NAME TYPE [NOT NULL] [DEFAULT v] [COMMENT 'doc'] [pos]
    first: bool = False  # position of the one added column
    after: str | None = None
    drop_columns: list[str] = field(default_factory=list)
    rename_columns: list[str] = field(default_factory=list)  # OLD=NEW
    set_types: list[str] = field(default_factory=list)  # COL=TYPE
    make_optional: list[str] = field(default_factory=list)
    make_required: list[str] = field(default_factory=list)
    set_docs: list[str] = field(default_factory=list)  # COL=TEXT
    set_defaults: list[str] = field(default_factory=list)  # COL=VALUE (write-default)
    drop_defaults: list[str] = field(default_factory=list)
    move_columns: list[str] = field(default_factory=list)  # 'a after b' | 'a before b' | 'a first'
    identifier_fields: str | None = None  # 'id, region'; '' for none
    add_partition_fields: list[str] = field(default_factory=list)  # TERM [AS name]
    drop_partition_fields: list[str] = field(default_factory=list)  # name or TERM
    rename_partition_fields: list[str] = field(default_factory=list)  # OLD=NEW
    sort_by: str | None = None
    unsorted: bool = False
    set_properties: list[str] = field(default_factory=list)  # KEY=VALUE
    remove_properties: list[str] = field(default_factory=list)

    def check(self) -> "_Parsed":
        """Parse every expression (syntax only): a bad one is refused before the table is read."""
        return _Parsed.of(self)


@dataclass
class _Parsed:
    new_columns: list[NewColumn]
    drops: list[str]
    renames: list[tuple[str, str]]
    types: list[tuple[str, str]]
    optional: list[str]
    required: list[str]
    docs: list[tuple[str, str | None]]
    defaults: list[tuple[str, Literal | None]]
    moves: list[tuple[str, str, str | None]]
    identifier_fields: list[str] | None
    add_fields: list[tuple[Term, str | None]]
    drop_fields: list[tuple[str | None, Term | None]]
    rename_fields: list[tuple[str, str]]
    sort: list[SortTerm] | None
    set_props: dict[str, str]
    remove_props: list[str]

    @classmethod
    def of(cls, r: AlterRequest) -> "_Parsed":
        cols = [parse_new_column(t) for t in r.add_columns]
        if r.first or r.after is not None:
            if len(cols) != 1:
                raise UsageError("--first and --after place the one --add-column; with several, give each its "
                                 "position: --add-column 'c int after b'")
            if r.first and r.after is not None:
                raise UsageError("give --first or --after, not both")
            c = cols[0]
            pos = ("first", None) if r.first else ("after", column_name(r.after or "", "--after"))
            cols = [NewColumn(c.parent, c.name, c.type_text, c.required, c.default, c.doc, pos)]
        renames = [parse_pair(t, "--rename-column", "OLD=NEW") for t in r.rename_columns]
        types = [parse_pair(t, "--set-type", "COLUMN=TYPE, e.g. qty=long") for t in r.set_types]
        docs = [(c, d or None) for c, d in (parse_pair(t, "--set-doc", "COLUMN=TEXT") for t in r.set_docs)]
        defaults: list[tuple[str, Literal | None]] = []
        for t in r.set_defaults:
            c, v = parse_pair(t, "--set-default", "COLUMN=VALUE")
            lit = literal(v)
            defaults.append((c, None if not lit.quoted and lit.text.lower() == "null" else lit))
        defaults += [(column_name(c, "--drop-default"), None) for c in r.drop_defaults]
        ident = None
        if r.identifier_fields is not None:
            ident = [column_name(n, "--set-identifier-fields") for n in r.identifier_fields.split(",")
                     if n.strip()]
        drop_fields: list[tuple[str | None, Term | None]] = []
        for t in r.drop_partition_fields:
            what = f"--drop-partition-field {t!r}"
            drop_fields.append((None, parse_term(t, what)) if "(" in t else (column_name(t, what), None))
        if r.sort_by is not None and r.unsorted:
            raise UsageError("give --sort-by or --unsorted, not both")
        sort = parse_sort_order(r.sort_by) if r.sort_by is not None else ([] if r.unsorted else None)
        set_props: dict[str, str] = {}
        for t in r.set_properties:
            k, v = parse_pair(t, "property", "KEY=VALUE")
            set_props[k] = v
        remove_props = [k.strip() for k in r.remove_properties]
        for k in list(set_props) + remove_props:
            if not k:
                raise UsageError("a property key is empty")
            if k == "format-version":
                raise UsageError("format-version is reserved: the format version changes only through an upgrade",
                                 hint="icectl upgrade-format TABLE --to N (it shows what changes first)")
            if k in RESERVED_PROPERTIES:
                raise UsageError(f"{k} is a reserved property: Iceberg derives it from the metadata and never "
                                 "stores it")
            if k in set_props:
                check_setting(k, set_props[k])
        both = sorted(set(set_props) & set(remove_props))
        if both:
            raise UsageError(f"cannot set and remove the same property: {both[0]}")
        return cls(cols, [column_name(c, "--drop-column") for c in r.drop_columns], renames, types,
                   [column_name(c, "--make-optional") for c in r.make_optional],
                   [column_name(c, "--make-required") for c in r.make_required], docs, defaults,
                   [parse_move(m) for m in r.move_columns], ident,
                   [parse_partition_field(t) for t in r.add_partition_fields], drop_fields,
                   [parse_pair(t, "--rename-partition-field", "OLD=NEW") for t in r.rename_partition_fields],
                   sort, set_props, remove_props)

    @property
    def schema_changes(self) -> bool:
        return any((self.new_columns, self.drops, self.renames, self.types, self.optional, self.required, self.docs,
                    self.defaults, self.moves, self.identifier_fields is not None))

    @property
    def spec_changes(self) -> bool:
        return any((self.add_fields, self.drop_fields, self.rename_fields))

    @property
    def empty(self) -> bool:
        return not (self.schema_changes or self.spec_changes or self.sort is not None or self.set_props
                    or self.remove_props)


@dataclass
class AlterPlan:
    """The changes as asked (``changes``, in words), the updates planned against ``table`` and the
    metadata they give."""

    table: Table
    request: AlterRequest
    changes: list[str]
    updates: list[TableUpdate]
    before: TableMetadata
    after: TableMetadata

    @property
    def changes_nothing(self) -> bool:
        return not self.updates

    def requirements(self) -> list[TableRequirement]:
        return requirements_for(self.before, self.updates)

    @property
    def planned_commit(self) -> dict[str, list] | None:
        """The commit to send, as the REST spec writes it; None when there is nothing to commit."""
        return sent_json(self.before, self.requirements(), self.updates) if self.updates else None


def _v3_defaults(md: TableMetadata, table: str) -> None:
    if md.format_version < 3:
        raise UsageError(f"column defaults need format version 3 ({table} is v{md.format_version})",
                         hint=f"icectl upgrade-format {table} --to 3")


def _schema_changes(table: Table, p: _Parsed, builder: MetadataBuilder, changes: list[str]) -> None:
    md = table.metadata
    sources: dict[int, list[str]] = {}
    for s in md.partition_specs:
        for f in s.fields:
            sources.setdefault(f.source_id, []).append(f.transform)
    su = SchemaUpdate(md.schema, md.last_column_id, format_version=md.format_version, partition_sources=sources)
    for name in p.drops:
        su.delete_column(name)
        changes.append(f"drop column {name}")
    for c in p.new_columns:
        what = f"--add-column {c.full_name}"
        column_type = parse_type(c.type_text, what)
        default = None
        if c.default is not None:
            _v3_defaults(md, table.name)
            default = default_json(c.default, column_type, c.full_name)
        su.add_column(c.parent, c.name, column_type, required=c.required, doc=c.doc, default=default)
        words = [f"add column {c.full_name} {c.type_text}"] + (["not null"] if c.required else []) + \
            ([f"default {c.default.text}"] if c.default else []) + ([f"comment {c.doc!r}"] if c.doc else [])
        changes.append(" ".join(words))
        if c.position is not None:
            kind, ref = c.position
            su.move(c.full_name, kind, _sibling(su, c.full_name, ref))
            changes.append(f"move {c.full_name} {kind}{' ' + ref if ref else ''}")
    for old, new in p.renames:
        su.rename_column(old, _leaf(old, new))
        changes.append(f"rename column {old} to {_leaf(old, new)}")
    for name, type_text in p.types:
        su.update_column(name, parse_type(type_text, f"--set-type {name}"))
        changes.append(f"change the type of {name} to {type_text.strip()}")
    for name in p.optional:
        su.set_required(name, False)
        changes.append(f"make {name} optional")
    for name in p.required:
        su.set_required(name, True)
        changes.append(f"make {name} required")
    for name, doc in p.docs:
        su.update_doc(name, doc)
        changes.append(f"set the doc of {name}" if doc else f"remove the doc of {name}")
    for name, literal in p.defaults:
        if literal is None:
            su.update_default(name, None)
            changes.append(f"remove the write-default of {name}")
            continue
        _v3_defaults(md, table.name)
        f = su.find_for_update(name, "set the default of")
        su.update_default(name, default_json(literal, f.field_type, name))
        changes.append(f"set the write-default of {name} to {literal.text}")
    for name, kind, ref in p.moves:
        su.move(name, kind, _sibling(su, name, ref))
        changes.append(f"move {name} {kind}{' ' + ref if ref else ''}")
    if p.identifier_fields is not None:
        su.set_identifier_fields(p.identifier_fields)
        changes.append("set the identifier fields to " + (", ".join(p.identifier_fields) or "none"))
    new_schema = su.apply()
    builder.set_current_schema(new_schema)
    # What Java's SchemaUpdate changes in the properties after the schema (applyChangesToMetadata).
    mapping = builder.properties.get(NAME_MAPPING)
    if mapping is not None:
        updated = update_name_mapping(mapping, su.updates, su.parent_to_added)
        if updated is not None and not _same_mapping(updated, mapping):
            builder.apply([SetProperties({NAME_MAPPING: updated})])
    to_set, removed = column_property_changes(builder.properties, md.schema, builder._current_schema,
                                              deletes=su.deletes, updates=su.updates,
                                              added=set(su.added_name_to_id.values()))
    builder.apply([SetProperties(to_set), RemoveProperties(tuple(sorted(removed)))])


def _sibling(su: SchemaUpdate, name: str, ref: str | None) -> str | None:
    """A position names a column of the moved column's struct: ``info.zip before city`` means
    ``info.city`` (as Spark's ``ALTER COLUMN info.zip AFTER city``), unless no such column exists."""
    parent = name.rpartition(".")[0]
    if ref is None or not parent or ref.startswith(parent + "."):
        return ref
    try:
        su.find_for_move(f"{parent}.{ref}")
    except UsageError:
        return ref
    return f"{parent}.{ref}"


def _leaf(old: str, new: str) -> str:
    """``a.b=c`` and ``a.b=a.c`` both rename ``a.b`` to ``a.c`` (the new name is the leaf's)."""
    parent = old.rpartition(".")[0]
    return new[len(parent) + 1:] if parent and new.startswith(parent + ".") else new


def _same_mapping(a: str, b: str) -> bool:
    import json

    def norm(x: Any) -> Any:
        if isinstance(x, list):
            return [norm(i) for i in x]
        if isinstance(x, dict):
            return {k: (sorted(v) if k == "names" else norm(v)) for k, v in x.items()}
        return x

    try:
        return norm(json.loads(a)) == norm(json.loads(b))
    except ValueError:
        return False


def _spec_changes(table: Table, p: _Parsed, builder: MetadataBuilder, changes: list[str]) -> None:
    md = table.metadata
    u = PartitionSpecUpdate(md.spec, builder._current_schema, history=md.partition_specs,
                            last_partition_id=md.last_partition_id, format_version=md.format_version)
    for name, term in p.drop_fields:
        f = u.remove_field(name=name, term=term)
        changes.append(f"drop partition field {f.name}" + (" (v1: kept as void)" if md.format_version == 1 else ""))
    for old, new in p.rename_fields:
        u.rename_field(old, new)
        changes.append(f"rename partition field {old} to {new}")
    for term, name in p.add_fields:
        f = u.add_field(term, name)
        changes.append(f"add partition field {f.name}: {f.transform}({', '.join(term.columns)})")
    builder.set_default_spec(u.apply())


def _check_sources(builder: MetadataBuilder, before: TableMetadata) -> None:
    """Say which column a dropped source leaves the default spec or sort order without."""
    schema = builder._current_schema
    spec = next(s for s in builder.specs if s.spec_id == builder.default_spec_id)
    for f in spec.fields:
        if f.transform.lower() != "void" and schema.find_field(f.source_id) is None:
            name = before.schema.column_name(f.source_id) or f"field {f.source_id}"
            raise UsageError(f"cannot drop {name}: partition field {f.name} of the current spec uses it",
                             hint=f"drop the partition field in the same alter: --drop-partition-field {f.name}")
    order = next(o for o in builder.sort_orders if o.order_id == builder.default_sort_order_id)
    for sf in order.fields:
        if schema.find_field(sf.source_id) is None:
            name = before.schema.column_name(sf.source_id) or f"field {sf.source_id}"
            raise UsageError(f"cannot drop {name}: the table's sort order uses it",
                             hint="change the sort order in the same alter: --sort-by ... or --unsorted")


def plan_alter(table: Table, request: AlterRequest) -> AlterPlan:
    """Plan every change against ``table`` (nothing is written)."""
    p = request.check()
    md = table.metadata
    if table.catalog.read_only:
        raise UnsupportedError("a table opened by path is read-only: use a catalog to change it",
                               hint="register the metadata file in a catalog first")
    if p.empty:
        raise UsageError("nothing to change: give at least one change (see icectl alter --help)")
    builder = MetadataBuilder(md)
    changes: list[str] = []
    if p.schema_changes:
        _schema_changes(table, p, builder, changes)
    if p.spec_changes:
        _spec_changes(table, p, builder, changes)
    if p.sort is not None:
        builder.set_default_sort_order(bind_sort_order(p.sort, builder._current_schema))
        changes.append("sort by " + ", ".join(f"{t.term} {t.direction} {t.null_order.replace('-', ' ')}"
                                              for t in p.sort) if p.sort else "unsorted")
    schema = builder._current_schema
    for k, v in p.set_props.items():
        if k.startswith(METRICS_COLUMN) and schema.field_by_name(k[len(METRICS_COLUMN):], case_sensitive=True) is None:
            raise UsageError(f"invalid metrics config {k}: there is no column {k[len(METRICS_COLUMN):]!r}")
        changes.append(f"set property {k}={v}")
    changes += [f"remove property {k}" + ("" if k in builder.properties else " (not set)") for k in p.remove_props]
    builder.apply([SetProperties({k: v for k, v in p.set_props.items() if builder.properties.get(k) != v}),
                   RemoveProperties(tuple(k for k in p.remove_props if k in builder.properties))])
    _check_sources(builder, md)
    after = builder.build() if builder.changes else md
    return AlterPlan(table, request, changes, list(builder.changes), md, after)


def commit_alter(plan: AlterPlan) -> Committed:
    """Commit the plan; on a conflict, plan the same request again against the table as it is now
    (as a Java transaction re-applies its changes), refusing what is no longer valid."""
    def build(txn: Transaction) -> list[TableUpdate]:
        t = txn.table
        if t.metadata_location == plan.table.metadata_location:
            return plan.updates
        return plan_alter(t, plan.request).updates

    return Transaction(plan.table).commit(build)


def properties_request(action: str, items: list[str]) -> AlterRequest:
    """``properties TABLE set K=V ...`` / ``unset K ...`` as an alter."""
    if not items:
        raise UsageError(f"properties {action} needs at least one {'KEY=VALUE' if action == 'set' else 'KEY'}")
    if action == "set":
        return AlterRequest(set_properties=list(items))
    if action == "unset":
        return AlterRequest(remove_properties=list(items))
    raise UsageError(f"unknown action {action!r}: use set KEY=VALUE ... or unset KEY ...")
