"""Partition specs and sort orders (spec: "Partitioning", "Sorting", Appendix C).

Transforms are kept as their JSON strings here; :mod:`icectl.spec.transforms` interprets them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from icectl.errors import InvalidMetadataError
from icectl.spec.types import json_int

# "Partition field IDs ... start at 1000" (spec: "Partitioning"; v1 assigned them sequentially).
PARTITION_DATA_ID_START = 1000
_PF_KEYS = {"source-id", "source-ids", "field-id", "name", "transform"}


@dataclass(frozen=True)
class PartitionField:
    source_id: int
    field_id: int
    name: str
    transform: str
    source_ids: tuple[int, ...] = ()  # v3 multi-argument transforms
    extra: tuple[tuple[str, Any], ...] = ()

    def to_json(self, format_version: int) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "transform": self.transform}
        if self.source_ids and len(self.source_ids) > 1:
            # v3: "source-ids" for multi-argument transforms; single-argument ones keep source-id.
            d["source-ids"] = list(self.source_ids)
        else:
            d["source-id"] = self.source_id
        d["field-id"] = self.field_id
        for k, v in self.extra:
            d.setdefault(k, v)
        return d


@dataclass(frozen=True)
class PartitionSpec:
    spec_id: int
    fields: tuple[PartitionField, ...] = ()
    extra: tuple[tuple[str, Any], ...] = ()

    @property
    def is_unpartitioned(self) -> bool:
        return all(f.transform == "void" for f in self.fields)

    def to_json(self, format_version: int) -> dict[str, Any]:
        d: dict[str, Any] = {"spec-id": self.spec_id, "fields": [f.to_json(format_version) for f in self.fields]}
        for k, v in self.extra:
            d.setdefault(k, v)
        return d

    def fields_json(self, format_version: int) -> list[dict[str, Any]]:
        return [f.to_json(format_version) for f in self.fields]

    @property
    def last_field_id(self) -> int:
        return max((f.field_id for f in self.fields), default=PARTITION_DATA_ID_START - 1)


def partition_field_from_json(obj: dict[str, Any], *, fallback_id: int) -> PartitionField:
    try:
        source_ids = tuple(json_int(i, "partition field source-ids") for i in obj.get("source-ids") or ())
        source_id = json_int(obj["source-id"], "partition field source-id") if "source-id" in obj else (source_ids[0] if source_ids else None)
        if source_id is None:
            raise KeyError("source-id")
        return PartitionField(
            source_id=source_id,
            field_id=json_int(obj.get("field-id", fallback_id), "partition field field-id"),
            name=str(obj["name"]),
            transform=str(obj["transform"]),
            source_ids=source_ids,
            extra=tuple((k, v) for k, v in obj.items() if k not in _PF_KEYS),
        )
    except KeyError as e:
        raise InvalidMetadataError(f"partition field is missing {e.args[0]!r}: {obj!r}") from None


def spec_from_json(obj: Any, *, spec_id: int | None = None, next_field_id: int = PARTITION_DATA_ID_START) -> PartitionSpec:
    """A spec object, or (v1's singular ``partition-spec``) a bare list of fields."""
    if isinstance(obj, list):
        raw_fields, sid, extra = obj, spec_id or 0, ()
    elif isinstance(obj, dict):
        raw_fields = obj.get("fields", [])
        sid = json_int(obj.get("spec-id", spec_id or 0), "spec-id")
        extra = tuple((k, v) for k, v in obj.items() if k not in ("spec-id", "fields"))
    else:
        raise InvalidMetadataError(f"invalid partition spec {obj!r}")
    fields = []
    for i, f in enumerate(raw_fields):
        fields.append(partition_field_from_json(f, fallback_id=next_field_id + i))
    return PartitionSpec(sid, tuple(fields), extra)


UNPARTITIONED = PartitionSpec(0, ())

_SF_KEYS = {"transform", "source-id", "source-ids", "direction", "null-order"}


@dataclass(frozen=True)
class SortField:
    source_id: int
    transform: str
    direction: str  # "asc" | "desc"
    null_order: str  # "nulls-first" | "nulls-last"
    source_ids: tuple[int, ...] = ()
    extra: tuple[tuple[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"transform": self.transform}
        if self.source_ids and len(self.source_ids) > 1:
            d["source-ids"] = list(self.source_ids)
        else:
            d["source-id"] = self.source_id
        d["direction"] = self.direction
        d["null-order"] = self.null_order
        for k, v in self.extra:
            d.setdefault(k, v)
        return d


@dataclass(frozen=True)
class SortOrder:
    order_id: int
    fields: tuple[SortField, ...] = ()
    extra: tuple[tuple[str, Any], ...] = ()

    @property
    def is_unsorted(self) -> bool:
        return not self.fields

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"order-id": self.order_id, "fields": [f.to_json() for f in self.fields]}
        for k, v in self.extra:
            d.setdefault(k, v)
        return d


UNSORTED = SortOrder(0, ())


def sort_order_from_json(obj: dict[str, Any]) -> SortOrder:
    try:
        fields = []
        for f in obj.get("fields", []):
            source_ids = tuple(json_int(i, "sort field source-ids") for i in f.get("source-ids") or ())
            fields.append(SortField(
                source_id=json_int(f["source-id"], "sort field source-id") if "source-id" in f else source_ids[0],
                transform=str(f.get("transform", "identity")),
                direction=str(f["direction"]),
                null_order=str(f["null-order"]),
                source_ids=source_ids,
                extra=tuple((k, v) for k, v in f.items() if k not in _SF_KEYS),
            ))
        return SortOrder(json_int(obj["order-id"], "order-id"), tuple(fields),
                         tuple((k, v) for k, v in obj.items() if k not in ("order-id", "fields")))
    except (KeyError, IndexError) as e:
        raise InvalidMetadataError(f"invalid sort order {obj!r}: missing {e}") from None
