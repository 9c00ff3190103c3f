"""Partition evolution with Iceberg Java's ``BaseUpdatePartitionSpec`` rules (spec: "Partition
Evolution"); terms are parsed and bound by :mod:`icectl.expr.term`, sort orders by :mod:`icectl.expr.sort`.

Partition field ids come from ``last-partition-id``; from format version 2, a field added again
with the same source and transform gets the id it had in an earlier spec. A dropped field is
removed from the spec (v2+) or kept with the ``void`` transform (v1, whose field ids are
positions). Names are generated as Java generates them: ``id_bucket_16``, ``name_trunc_4``,
``ts_day``, the source's full name for identity.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from icectl.errors import UsageError
from icectl.expr.term import Bound, Term, bind
from icectl.spec.evolution import index_by_name
from icectl.spec.partitioning import PartitionField, PartitionSpec
from icectl.spec.transforms import UnknownTransform, parse_transform
from icectl.spec.types import Schema

_TIME = ("year", "month", "day", "hour")


def partition_name(b: Bound) -> str:
    """Java's ``PartitionNameGenerator`` (BaseUpdatePartitionSpec)."""
    base, _, arg = b.transform.partition("[")
    arg = arg.rstrip("]")
    if base == "identity":
        return b.source_name
    if base == "bucket":
        return f"{b.source_name}_bucket_{arg}"
    if base == "truncate":
        return f"{b.source_name}_trunc_{arg}"
    if base == "void":
        return f"{b.source_name}_null"
    return f"{b.source_name}_{base}"


def _key(source_id: int, transform: str) -> tuple[int, str]:
    return source_id, str(parse_transform(transform))


class PartitionSpecUpdate:
    """Pending changes to the default spec; :meth:`apply` gives the new spec (its id is the
    builder's: an identical earlier spec is reused)."""

    def __init__(self, spec: PartitionSpec, schema: Schema, *, history: tuple[PartitionSpec, ...],
                 last_partition_id: int, format_version: int):
        for f in spec.fields:
            if isinstance(parse_transform(f.transform), UnknownTransform) or len(f.source_ids) > 1:
                raise UsageError(f"cannot change a partition spec with the unknown transform {f.transform!r} "
                                 f"(field {f.name}): a writer must not commit a transform it does not know")
        self.spec, self.schema, self.history = spec, schema, history
        self.format_version = format_version
        self.last_partition_id = last_partition_id
        self.name_to_field = {f.name: f for f in spec.fields}
        self.transform_to_field = {_key(f.source_id, f.transform): f for f in spec.fields}
        self.adds: list[PartitionField] = []
        self.added_time_fields: dict[int, PartitionField] = {}
        self.transform_to_added: dict[tuple[int, str], PartitionField] = {}
        self.name_to_added: dict[str, PartitionField] = {}
        self.deletes: set[int] = set()
        self.renames: dict[str, str] = {}

    def _assign_id(self) -> int:
        self.last_partition_id += 1
        return self.last_partition_id

    def _recycle_or_create(self, b: Bound, name: str | None) -> PartitionField:
        """From v2, the field of an earlier spec with this source and transform (and name, if
        given). Java searches a hash set; among earlier fields that differ only in name, icectl
        takes the newest spec's."""
        if self.format_version >= 2:
            for s in reversed(self.history):
                for f in s.fields:
                    if f.source_id == b.source_id and _key(f.source_id, f.transform)[1] == b.transform \
                            and (name is None or f.name == name):
                        return f
        return PartitionField(b.source_id, self._assign_id(), name or "", b.transform)

    @staticmethod
    def _is_void(f: PartitionField) -> bool:
        return f.transform.lower() == "void"

    def add_field(self, term: Term, name: str | None = None) -> PartitionField:
        what = f"cannot add partition field {term}"
        if name is not None and name in self.name_to_added:
            raise UsageError(f"{what}: a partition field named {name} is already added")
        b = bind(term, self.schema, what)
        key = (b.source_id, b.transform)
        existing = self.transform_to_field.get(key)
        if existing is not None and existing.field_id in self.deletes:
            self.deletes.discard(existing.field_id)  # dropped and added again: kept as it was
            if name is not None and existing.name != name:
                self.rename_field(existing.name, name)
            return existing
        if existing is not None:
            raise UsageError(f"{what}: the spec already has it as {existing.name} ({existing.transform})")
        if key in self.transform_to_added:
            raise UsageError(f"{what}: it is added twice")
        new = self._recycle_or_create(b, name)
        if not new.name:
            new = replace(new, name=partition_name(b))
        if b.transform.split("[")[0] in _TIME:
            other = self.added_time_fields.get(b.source_id)
            if other is not None:
                raise UsageError(f"{what}: redundant with the added {other.name} ({other.transform}); one time "
                                 "transform per source column")
            self.added_time_fields[b.source_id] = new
        self.transform_to_added[key] = new
        same_name = self.name_to_field.get(new.name)
        if same_name is not None and same_name.field_id not in self.deletes:
            if self._is_void(same_name):
                self.rename_field(same_name.name, f"{same_name.name}_{same_name.field_id}")
            else:
                raise UsageError(f"{what}: the spec already has a field named {new.name}",
                                 hint="name it: --add-partition-field 'TERM AS name'")
        elif same_name is not None:
            self.renames[same_name.name] = f"{same_name.name}_{same_name.field_id}"
        self.name_to_added[new.name] = new
        self.adds.append(new)
        return new

    def remove_field(self, name: str | None = None, term: Term | None = None) -> PartitionField:
        if term is not None:
            what = f"cannot drop partition field {term}"
            b = bind(term, self.schema, what)
            key = (b.source_id, b.transform)
            if key in self.transform_to_added:
                raise UsageError(f"{what}: it is added in the same change")
            field = self.transform_to_field.get(key)
            if field is None:
                raise UsageError(f"{what}: the current spec has no such field",
                                 hint="fields: " + ", ".join(f"{f.name} ({f.transform})" for f in self.spec.fields))
        else:
            what = f"cannot drop partition field {name}"
            if name in self.name_to_added:
                raise UsageError(f"{what}: it is added in the same change")
            field = self.name_to_field.get(name)  # type: ignore[arg-type]
            if field is None:
                raise UsageError(f"{what}: the current spec has no field {name!r}",
                                 hint="fields: " + ", ".join(f.name for f in self.spec.fields) or "none")
        if self.renames.get(field.name):
            raise UsageError(f"{what}: it is also renamed in the same change")
        self.deletes.add(field.field_id)
        return field

    def rename_field(self, name: str, new_name: str) -> None:
        what = f"cannot rename partition field {name}"
        existing = self.name_to_field.get(new_name)
        if existing is not None and self._is_void(existing):
            self.rename_field(existing.name, f"{existing.name}_{existing.field_id}")
        if name in self.name_to_added:
            raise UsageError(f"{what}: it is added in the same change (name it with 'TERM AS name')")
        field = self.name_to_field.get(name)
        if field is None:
            raise UsageError(f"{what}: the current spec has no field {name!r}",
                             hint="fields: " + ", ".join(f.name for f in self.spec.fields) or "none")
        if field.field_id in self.deletes:
            raise UsageError(f"{what}: it is dropped in the same change")
        if not new_name:
            raise UsageError(f"{what}: the new name is empty")
        self.renames[name] = new_name

    def apply(self) -> PartitionSpec:
        fields: list[PartitionField] = []
        for f in self.spec.fields:
            name = self.renames.get(f.name, f.name)
            if f.field_id not in self.deletes:
                fields.append(replace(f, name=name))
            elif self.format_version < 2:
                fields.append(replace(f, name=name, transform="void"))
        fields.extend(self.adds)
        names = index_by_name(self.schema.as_struct)
        seen: set[str] = set()
        for f in fields:
            column = names.get(f.name)
            if column is not None and column != f.source_id:
                raise UsageError(f"partition field name {f.name} is the name of another column",
                                 hint="name it: --add-partition-field 'TERM AS name'")
            if f.name in seen:
                raise UsageError(f"two partition fields would be named {f.name}")
            seen.add(f.name)
        return PartitionSpec(self.spec.spec_id, tuple(fields))
