"""Schema evolution with Iceberg Java's ``SchemaUpdate`` rules (the reference for every check and
every id): pending changes to the current schema (adds, drops, renames, type promotions,
nullability, docs, defaults, moves, identifier fields) applied in one pass.

New field ids come from ``last-column-id``: an added column takes the next id, then its nested
fields take the following ones, a struct's fields before their children (Java's
``assignFreshIds``). Names are full dotted names (``a.b``); a name not in the current schema may
name a column as this change renames or adds it.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from icectl.errors import InvalidMetadataError, UsageError
from icectl.expr.column import Literal
from icectl.spec.evolution import (
    column_names,
    identifier_field_error,
    index_by_name,
    index_parents,
    java_hash_set_order,
    promotion_error,
)
from icectl.spec.types import IcebergType, ListType, MapType, NestedField, PrimitiveType, Schema, StructType
from icectl.spec.conversions import from_json, to_json, MICROS_PER_DAY, NANOS_PER_DAY
from icectl.spec.evolution import partition_promotion_error, index_by_id, walk_names

ROOT = -1  # the parent id of top-level columns (Java's TABLE_ROOT_ID)


@dataclass(frozen=True)
class Move:
    field_id: int
    kind: str  # first | before | after
    reference_id: int | None = None


def shift_ids(t: IcebergType, offset: int) -> IcebergType:
    """``t`` with every field id moved by ``offset`` (ids keep their order)."""
    if isinstance(t, StructType):
        return StructType(tuple(replace(f, field_id=f.field_id + offset, field_type=shift_ids(f.field_type, offset))
                                for f in t.fields))
    if isinstance(t, ListType):
        return ListType(t.element_id + offset, shift_ids(t.element_type, offset), t.element_required)
    if isinstance(t, MapType):
        return MapType(t.key_id + offset, shift_ids(t.key_type, offset), t.value_id + offset,
                       shift_ids(t.value_type, offset), t.value_required)
    return t


def default_json(literal: Literal, t: IcebergType, column: str) -> Any:
    """A default value as written for a column of type ``t``, as its JSON single value (Appendix D)."""
    if not isinstance(t, PrimitiveType):
        raise UsageError(f"invalid default for {column}: a {t} column's default can only be null")
    base, text = t.base, literal.text
    obj: Any = text
    try:
        if base == "boolean" and text.lower() in ("true", "false"):
            obj = text.lower() == "true"
        elif base in ("int", "long"):
            obj = int(text)
        elif base in ("float", "double") and text not in ("NaN", "Infinity", "-Infinity"):
            obj = float(text)
        elif base.startswith("timestamp") and len(text) > 10 and text[10] == " ":
            obj = text[:10] + "T" + text[11:]
    except ValueError:
        raise UsageError(f"invalid default for {column}: {text!r} is not a {t} value") from None
    if base in ("unknown", "variant"):
        raise UsageError(f"invalid default for {column}: a {t} column has no default but null")
    try:
        return to_json(t, from_json(t, obj))
    except InvalidMetadataError as e:
        raise UsageError(f"invalid default for {column}: {e.message}") from None


def _convert_default(value: Any, old: IcebergType, new: IcebergType) -> Any:
    """A default of type ``old`` as a value of the promoted type ``new``."""
    if value is None:
        return None
    v = from_json(old, value)
    if isinstance(old, PrimitiveType) and old.base == "date" and isinstance(new, PrimitiveType):
        v = v * (NANOS_PER_DAY if new.base.endswith("_ns") else MICROS_PER_DAY)
    return to_json(new, v)


class SchemaUpdate:
    """Pending changes to ``schema``; :meth:`apply` gives the new schema."""

    def __init__(self, schema: Schema, last_column_id: int, *, format_version: int,
                 partition_sources: dict[int, list[str]] | None = None):
        self.schema = schema
        self.last_column_id = last_column_id
        self.format_version = format_version
        # field id -> the transforms of partition fields (of any spec) that use it as a source
        self.partition_sources = partition_sources or {}
        self._names = index_by_name(schema.as_struct)
        self._full = column_names(schema.as_struct)
        self.id_to_parent = index_parents(schema.as_struct)
        self.deletes: list[int] = []
        self.updates: dict[int, NestedField] = {}
        self.parent_to_added: dict[int, list[int]] = {}
        self.added_name_to_id: dict[str, int] = {}
        self.renamed_name_to_id: dict[str, int] = {}
        self.moves: dict[int, list[Move]] = {}
        # Java keeps identifier field names in a HashSet: the insertion order decides ties.
        self.identifier_names: list[str] = java_hash_set_order(
            [self._full[i] for i in schema.identifier_field_ids if i in self._full])

    # -- lookups ----------------------------------------------------------------------------------
    def _lookup(self, names: dict[str, int], name: str) -> int | None:
        if name in names:
            return names[name]
        matches = {i for n, i in names.items() if n.lower() == name.lower()}
        return matches.pop() if len(matches) == 1 else None

    def find(self, name: str) -> NestedField | None:
        """A field of the current schema by full or short name (exact, else the one match that
        differs only in case)."""
        fid = self._lookup(self._names, name)
        return self.schema.find_field(fid) if fid is not None else None

    def _missing(self, name: str, what: str) -> UsageError:
        return UsageError(f"cannot {what} {name}: there is no column {name!r}",
                          hint="columns: " + ", ".join(sorted(self._names)[:30]))

    def find_for_update(self, name: str, what: str) -> NestedField:
        existing = self.find(name)
        if existing is not None:
            return self.updates.get(existing.field_id, existing)
        for names in (self.added_name_to_id, self.renamed_name_to_id):
            fid = self._lookup(names, name)
            if fid is not None:
                return self.updates[fid]
        raise self._missing(name, what)

    def find_for_move(self, name: str) -> int:
        for names in (self.added_name_to_id, self._names, self.renamed_name_to_id):
            fid = self._lookup(names, name)
            if fid is not None:
                return fid
        raise self._missing(name, "move")

    def _not_deleted(self, f: NestedField, what: str) -> None:
        """Refuse to change a column that is dropped, or whose struct is (Java fails on the latter
        when it moves per-column properties; either way the change could not be seen)."""
        name = self._full.get(f.field_id, f.name)
        if f.field_id in self.deletes:
            raise UsageError(f"cannot {what} {name}: it is dropped in the same change")
        p = self.id_to_parent.get(f.field_id)
        while p is not None:
            if p in self.deletes:
                raise UsageError(f"cannot {what} {name}: {self._full[p]} is dropped in the same change")
            p = self.id_to_parent.get(p)

    def _assign_id(self) -> int:
        self.last_column_id += 1
        return self.last_column_id

    # -- changes ----------------------------------------------------------------------------------
    def add_column(self, parent: str | None, name: str, column_type: IcebergType, *, required: bool = False,
                   doc: str | None = None, default: Any = None) -> int:
        """Add ``name`` (to the struct ``parent``, or a list's element or map's value struct) with
        ``column_type`` (ids from 1, see :func:`icectl.expr.schema.parse_type`); ``default`` is the JSON value
        of both initial-default and write-default. Returns the new id."""
        parent_id = ROOT
        if not name:
            raise UsageError("cannot add a column with an empty name")
        if parent is not None:
            pf = self.find(parent)
            if pf is None:
                raise UsageError(f"cannot add {parent}.{name}: there is no struct {parent!r}")
            if isinstance(pf.field_type, MapType):
                pf = pf.field_type.value_field
            elif isinstance(pf.field_type, ListType):
                pf = pf.field_type.element_field
            if not isinstance(pf.field_type, StructType):
                raise UsageError(f"cannot add {name} to {parent}: it is {pf.field_type}, not a struct")
            parent_id = pf.field_id
            if parent_id in self.deletes:
                raise UsageError(f"cannot add {name} to {parent}: {parent} is dropped in the same change")
            full = f"{self._full[parent_id]}.{name}"
        else:
            full = name
        current = self.find(full)
        if current is not None and current.field_id not in self.deletes:
            same = "" if self._full[current.field_id] == full else f" ({self._full[current.field_id]}: names that " \
                "differ only in case confuse case-insensitive engines)"
            raise UsageError(f"cannot add column {full}: it already exists{same}")
        if self._lookup(self.added_name_to_id, full) is not None:
            raise UsageError(f"cannot add column {full} twice")
        if required and default is None:
            raise UsageError(f"cannot add required column {full} without a default value: rows written before have "
                             "no value for it", hint="add it as optional, or (format version 3) with DEFAULT value")
        if required and isinstance(column_type, PrimitiveType) and column_type.base == "unknown":
            raise UsageError(f"cannot add required column {full}: a column of type unknown is always null")
        if default is not None and not isinstance(column_type, PrimitiveType):
            raise UsageError(f"invalid default for {full}: a {column_type} column's default can only be null")
        new_id = self._assign_id()
        self.added_name_to_id[full] = new_id
        if parent is not None:
            self.added_name_to_id.setdefault(f"{parent}.{name}", new_id)  # as given: points.z for points.element.z
        if parent_id != ROOT:
            self.id_to_parent[new_id] = parent_id
        fresh = shift_ids(column_type, new_id)
        self.last_column_id = max(self.last_column_id, _highest_id(fresh))
        self.updates[new_id] = NestedField(new_id, name, fresh, required, doc, default, default,
                                           default is not None, default is not None)
        self.parent_to_added.setdefault(parent_id, []).append(new_id)
        return new_id

    def delete_column(self, name: str) -> None:
        f = self.find(name)
        if f is None:
            raise self._missing(name, "drop")
        if f.field_id in self.parent_to_added:
            raise UsageError(f"cannot drop {name}: columns are added to it in the same change")
        if f.field_id in self.updates:
            raise UsageError(f"cannot drop {name}: it is also changed in the same change")
        if f.field_id not in self.deletes:
            self.deletes.append(f.field_id)

    def rename_column(self, name: str, new_name: str) -> None:
        f = self.find(name)
        if f is None:
            raise self._missing(name, "rename")
        if not new_name:
            raise UsageError(f"cannot rename {name} to an empty name")
        self._not_deleted(f, "rename")
        fid = f.field_id
        self.updates[fid] = replace(self.updates.get(fid, f), name=new_name)
        old_full = self._full[fid]
        parent = self.id_to_parent.get(fid)
        new_full = f"{self._full[parent]}.{new_name}" if parent is not None else new_name
        self.renamed_name_to_id[new_full] = fid
        if old_full in self.identifier_names:
            self.identifier_names.remove(old_full)
            self.identifier_names.append(new_full)

    def update_column(self, name: str, new_type: IcebergType) -> None:
        f = self.find_for_update(name, "change the type of")
        self._not_deleted(f, "change the type of")
        if f.field_type == new_type:
            return
        full = self._full.get(f.field_id, name)
        why = promotion_error(full, f.field_type, new_type, self.format_version)
        if why is None:
            why = partition_promotion_error(full, f.field_type, new_type,  # type: ignore[arg-type]
                                            self.partition_sources.get(f.field_id, []))
        if why is not None:
            raise UsageError(why)
        self.updates[f.field_id] = replace(
            f, field_type=new_type,
            initial_default=_convert_default(f.initial_default, f.field_type, new_type),
            write_default=_convert_default(f.write_default, f.field_type, new_type))

    def set_required(self, name: str, required: bool) -> None:
        what = "make required" if required else "make optional"
        f = self.find_for_update(name, what)
        if f.required == required:
            return
        full = self._full.get(f.field_id, name)
        defaulted_add = f.field_id in self.added_name_to_id.values() and f.initial_default is not None
        if required and not defaulted_add:
            raise UsageError(f"cannot make {full} required: rows already written may hold nulls (only a column "
                             "added in the same change, with a default, can be required)")
        if required and isinstance(f.field_type, PrimitiveType) and f.field_type.base == "unknown":
            raise UsageError(f"cannot make {full} required: a column of type unknown is always null")
        self._not_deleted(f, what)
        self.updates[f.field_id] = replace(f, required=required)

    def update_doc(self, name: str, doc: str | None) -> None:
        f = self.find_for_update(name, "set the doc of")
        self._not_deleted(f, "set the doc of")
        if f.doc == doc:
            return
        self.updates[f.field_id] = replace(f, doc=doc)

    def update_default(self, name: str, default: Any) -> None:
        """Set (or with None, remove) the write-default; the initial-default never changes."""
        f = self.find_for_update(name, "set the default of")
        self._not_deleted(f, "set the default of")
        if default is not None and f.has_write_default and f.write_default == default:
            return
        self.updates[f.field_id] = replace(f, write_default=default, has_write_default=default is not None)

    def move(self, name: str, kind: str, reference: str | None = None) -> None:
        fid = self.find_for_move(name)
        ref = self.find_for_move(reference) if reference is not None else None
        if ref == fid:
            raise UsageError(f"cannot move {name} {kind} itself")
        for i, n in ((fid, name), (ref, reference)):
            if i is not None and i in self.deletes:
                raise UsageError(f"cannot move {name}: {n} is dropped in the same change")
        parent = self.id_to_parent.get(fid)
        if parent is not None:
            pf = self.schema.find_field(parent)
            if pf is None or not isinstance(pf.field_type, StructType):
                raise UsageError(f"cannot move {name}: only fields of a struct can move, and it is in a "
                                 f"{pf.field_type if pf else 'collection'}")
        if ref is not None and self.id_to_parent.get(ref) != parent:
            raise UsageError(f"cannot move {name} {kind} {reference}: they are in different structs")
        self.moves.setdefault(parent if parent is not None else ROOT, []).append(Move(fid, kind, ref))

    def set_identifier_fields(self, names: list[str]) -> None:
        self.identifier_names = java_hash_set_order(names, presized=True)

    # -- the new schema ---------------------------------------------------------------------------
    def apply(self) -> Schema:
        for name in self.identifier_names:
            f = self.find(name)
            if f is None:
                continue
            if f.field_id in self.deletes:
                raise UsageError(f"cannot drop {name}: it is an identifier field",
                                 hint="change the identifier fields in the same alter (--set-identifier-fields)")
            p = self.id_to_parent.get(f.field_id)
            while p is not None:
                if p in self.deletes:
                    raise UsageError(f"cannot drop {self._full[p]}: it holds the identifier field {name}",
                                     hint="change the identifier fields in the same alter (--set-identifier-fields)")
                p = self.id_to_parent.get(p)
        struct = _ApplyChanges(self).schema(self.schema.as_struct)
        _check_unique_names(struct)
        names = index_by_name(struct)
        ids = []
        for name in self.identifier_names:
            fid = self._lookup(names, name)
            if fid is None:
                raise UsageError(f"cannot make {name} an identifier field: there is no such column")
            ids.append(fid)
        ids = java_hash_set_order(ids)
        for fid in ids:
            why = identifier_field_error(fid, struct)
            if why is not None:
                raise UsageError(why)
        return Schema(struct.fields, 0, tuple(ids))


def _highest_id(t: IcebergType) -> int:
    return max(index_by_id(StructType((NestedField(0, "x", t),))), default=0)


def _check_unique_names(struct: StructType) -> None:
    seen: dict[str, int] = {}

    for full, _, f in walk_names(struct, (), ()):
        if full in seen:
            raise UsageError(f"two columns would be named {full} (ids {seen[full]} and {f.field_id})")
        seen[full] = f.field_id


class _ApplyChanges:
    """Java's ``SchemaUpdate.ApplyChanges`` visitor: deletes, updates, adds and moves, bottom up."""

    def __init__(self, u: SchemaUpdate):
        self.u = u

    def schema(self, struct: StructType) -> StructType:
        result = self._visit(struct)
        added = [self.u.updates[i] for i in self.u.parent_to_added.get(ROOT, [])]
        fields = _add_and_move(list(result.fields), added, self.u.moves.get(ROOT, []))  # type: ignore[union-attr]
        return StructType(tuple(fields)) if fields is not None else result  # type: ignore[return-value]

    def _visit(self, t: IcebergType) -> IcebergType:
        if isinstance(t, StructType):
            return self._struct(t, [self._field(f, self._visit(f.field_type)) for f in t.fields])
        if isinstance(t, ListType):
            return self._list(t, self._visit(t.element_type))
        if isinstance(t, MapType):
            return self._map(t, self._visit(t.key_type), self._visit(t.value_type))
        return t

    def _struct(self, struct: StructType, results: list[IcebergType | None]) -> StructType:
        changed = False
        fields = []
        for f, r in zip(struct.fields, results):
            if r is None:
                changed = True
                continue
            updated = replace(self.u.updates.get(f.field_id, f), field_type=r)
            if updated == f:
                fields.append(f)
            else:
                changed = True
                fields.append(updated)
        return StructType(tuple(fields)) if changed else struct

    def _field(self, f: NestedField, result: IcebergType) -> IcebergType | None:
        u = self.u
        if f.field_id in u.deletes:
            return None
        update = u.updates.get(f.field_id)
        if update is not None and update.field_type != f.field_type:
            return update.field_type
        added = [u.updates[i] for i in u.parent_to_added.get(f.field_id, [])]
        moves = u.moves.get(f.field_id, [])
        if added or moves:
            fields = _add_and_move(list(result.fields), added, moves)  # type: ignore[union-attr]
            if fields is not None:
                return StructType(tuple(fields))
        return result

    def _list(self, lt: ListType, element_result: IcebergType) -> ListType:
        element = self._field(lt.element_field, element_result)
        if element is None:
            raise UsageError(f"cannot drop the element of a list ({lt})")
        update = self.u.updates.get(lt.element_id)
        required = update.required if update is not None else lt.element_required
        if required == lt.element_required and element == lt.element_type:
            return lt
        return ListType(lt.element_id, element, required)

    def _map(self, mt: MapType, key_result: IcebergType, value_result: IcebergType) -> MapType:
        u = self.u
        if mt.key_id in u.deletes:
            raise UsageError(f"cannot drop the keys of a map ({mt})")
        if mt.key_id in u.updates:
            raise UsageError(f"cannot change the keys of a map ({mt})")
        if mt.key_id in u.parent_to_added:
            raise UsageError(f"cannot add fields to the keys of a map ({mt})")
        if key_result != mt.key_type:
            raise UsageError(f"cannot change the keys of a map ({mt})")
        value = self._field(mt.value_field, value_result)
        if value is None:
            raise UsageError(f"cannot drop the values of a map ({mt})")
        update = u.updates.get(mt.value_id)
        required = update.required if update is not None else mt.value_required
        if required == mt.value_required and value == mt.value_type:
            return mt
        return MapType(mt.key_id, mt.key_type, mt.value_id, value, required)


def _add_and_move(fields: list[NestedField], adds: list[NestedField], moves: list[Move]) -> list[NestedField] | None:
    if adds:
        fields = fields + adds
        return _move_fields(fields, moves) if moves else fields
    if moves:
        return _move_fields(fields, moves)
    return None


def _move_fields(fields: list[NestedField], moves: list[Move]) -> list[NestedField]:
    order = list(fields)

    def index(fid: int) -> int:
        return next(i for i, f in enumerate(order) if f.field_id == fid)

    for m in moves:
        moved = order.pop(index(m.field_id))
        if m.kind == "first":
            order.insert(0, moved)
        elif m.kind == "before":
            order.insert(index(m.reference_id), moved)  # type: ignore[arg-type]
        else:
            order.insert(index(m.reference_id) + 1, moved)  # type: ignore[arg-type]
    return order

