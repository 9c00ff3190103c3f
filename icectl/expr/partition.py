"""A partition spec: terms separated by commas, each ``TERM [AS name]`` (see :mod:`icectl.expr.term`),
e.g. ``day(ts), bucket(16, id) AS shard``."""
from __future__ import annotations

import re
from typing import NamedTuple

from icectl.errors import UsageError
from icectl.expr.lexer import column_name, quote_segment, split_top_level
from icectl.expr.term import Bound, Term, bind, parse_term, term_text
from icectl.spec.evolution import column_names
from icectl.spec.partitioning import PARTITION_DATA_ID_START, PartitionField, PartitionSpec
from icectl.spec.types import Schema

_AS = re.compile(r"^(.*\S)\s+as\s+(`[^`]+`|\S+)$", re.I | re.S)
# Iceberg Java's PartitionSpec.Builder names (a new spec); BaseUpdatePartitionSpec, which alter
# follows, adds the width: id_bucket_16.
_SUFFIX = {"year": "year", "month": "month", "day": "day", "hour": "hour", "bucket": "bucket",
           "truncate": "trunc", "void": "null"}


class PartitionTerm(NamedTuple):
    term: Term
    name: str | None  # given with AS; None: the generated name


def parse_partition_field(text: str, what: str = "--add-partition-field") -> PartitionTerm:
    """``TERM [AS name]``."""
    w = f"{what} {text!r}"
    m = _AS.match(text.strip())
    if m:
        return PartitionTerm(parse_term(m.group(1), w), column_name(m.group(2), w))
    return PartitionTerm(parse_term(text, w), None)


def parse_partition_spec(text: str, what: str = "--partition-by") -> list[PartitionTerm]:
    """``TERM [AS name], ...``; an empty text is the unpartitioned spec."""
    if not text or not text.strip():
        return []
    out = []
    for part in split_top_level(text):
        if not part:
            raise UsageError(f"{what} {text!r}: empty term")
        out.append(parse_partition_field(part, what))
    return out


def default_name(b: Bound) -> str:
    """The name Java's ``PartitionSpec.Builder`` gives a field: the source's full name for
    identity, else the name with ``_`` for dots and the transform's suffix (``ts_day``, ``id_bucket``)."""
    base = b.transform.split("[")[0]
    if base == "identity":
        return b.source_name
    return f"{b.source_name.replace('.', '_')}_{_SUFFIX[base]}"


def bind_partition_spec(terms: list[PartitionTerm], schema: Schema, *, spec_id: int = 0,
                        next_field_id: int = PARTITION_DATA_ID_START, what: str = "--partition-by") -> PartitionSpec:
    """A new spec of ``terms`` against ``schema``, its field ids from ``next_field_id``."""
    fields: list[PartitionField] = []
    names: set[str] = set()
    for i, pt in enumerate(terms):
        b = bind(pt.term, schema, f"{what} {pt.term.text!r}")
        name = pt.name or default_name(b)
        if name in names:
            raise UsageError(f"{what}: partition field {name!r} appears twice")
        names.add(name)
        fields.append(PartitionField(b.source_id, next_field_id + i, name, b.transform))
    return PartitionSpec(spec_id, tuple(fields))


def partition_spec(text: str | None, schema: Schema, *, spec_id: int = 0,
                   next_field_id: int = PARTITION_DATA_ID_START) -> PartitionSpec:
    """Parse and bind in one step (``None`` or empty: unpartitioned)."""
    return bind_partition_spec(parse_partition_spec(text or ""), schema, spec_id=spec_id, next_field_id=next_field_id)


def partition_spec_text(spec: PartitionSpec, schema: Schema) -> str:
    """``spec`` as :func:`parse_partition_spec` reads it (``AS name`` where the name is not the
    generated one)."""
    names = column_names(schema.as_struct)
    parts = []
    for f in spec.fields:
        source = names.get(f.source_id, f"id {f.source_id}")
        text = term_text(f.transform, source)
        if f.name != default_name(Bound(f.source_id, f.transform, source)):
            text += f" AS {quote_segment(f.name)}"
        parts.append(text)
    return ", ".join(parts)
