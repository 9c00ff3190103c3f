"""A transform term, as Spark DDL and Trino users write it: ``col``, ``bucket(16, col)``,
``truncate(4, col)``, ``year|month|day|hour(col)``, ``void(col)``, ``identity(col)`` (Spark's
plural names ``days(ts)`` and the order ``bucket(col, 16)`` read too). Parsing gives an unbound
:class:`Term`; :func:`bind` finds its source column in a schema (spec: "Partition Transforms").
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from icectl.errors import UsageError
from icectl.expr.lexer import column_name, quote_column, split_top_level
from icectl.spec.evolution import column_names, index_by_name, index_parents
from icectl.spec.transforms import parse_transform
from icectl.spec.types import ListType, MapType, PrimitiveType, Schema

TRANSFORMS = "identity, bucket(N, col), truncate(W, col), year, month, day, hour, void"
_ALIASES = {"years": "year", "months": "month", "days": "day", "hours": "hour", "date": "day",
            "trunc": "truncate", "buckets": "bucket"}
_CALL = re.compile(r"^([A-Za-z_]+)\s*\((.*)\)$", re.S)


@dataclass(frozen=True)
class Term:
    """A transform of one column: ``transform`` in the spec's JSON form (``bucket[16]``)."""

    transform: str
    columns: tuple[str, ...]
    text: str  # as written (for messages)

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Bound:
    """A term bound to a schema: the source field id, the transform as Java's
    ``Transform.toString()``, and the source's full name."""

    source_id: int
    transform: str
    source_name: str


def parse_term(text: str, what: str) -> Term:
    """One term; ``what`` starts every error message (the option and its value)."""
    t = text.strip()
    if not t:
        raise UsageError(f"{what}: empty term")
    m = _CALL.match(t)
    if not m:
        return Term("identity", (column_name(t, what),), t)
    fn = _ALIASES.get(m.group(1).lower(), m.group(1).lower())
    args = split_top_level(m.group(2))
    if any(not a for a in args):
        raise UsageError(f"{what}: empty argument in {t!r}")
    if fn in ("bucket", "truncate"):
        widths = [a for a in args if a.isdigit()]
        cols = [a for a in args if not a.isdigit()]
        if len(widths) != 1 or not cols:
            raise UsageError(f"{what}: {fn} takes a width and a column, e.g. {fn}(16, id), not {t!r}")
        if int(widths[0]) <= 0:
            raise UsageError(f"{what}: the {fn} width must be positive in {t!r}")
        transform = f"{fn}[{int(widths[0])}]"
    elif fn in ("identity", "year", "month", "day", "hour", "void"):
        cols, transform = args, fn
    else:
        raise UsageError(f"{what}: unknown transform {m.group(1)!r}", hint=f"transforms: {TRANSFORMS}")
    if len(cols) > 1:
        # v3 partition fields may have source-ids for multi-argument transforms, but the spec
        # defines none: a writer must not commit a transform it does not know.
        raise UsageError(f"{what}: {fn} takes one column, not {len(cols)} (the spec defines no multi-argument "
                         f"transform: {TRANSFORMS})")
    return Term(transform, (column_name(cols[0], what),), t)


def term_text(transform: str, column: str) -> str:
    """The term that :func:`parse_term` reads as ``transform`` of ``column`` (a full dotted name)."""
    col = quote_column(column)
    base, _, arg = transform.partition("[")
    if base == "identity":
        return col
    if arg:
        return f"{base}({arg.rstrip(']')}, {col})"
    return f"{base}({col})"


def _lookup(names: dict[str, int], name: str) -> int | None:
    if name in names:
        return names[name]
    matches = {i for n, i in names.items() if n.lower() == name.lower()}
    return matches.pop() if len(matches) == 1 else None


def bind(term: Term, schema: Schema, what: str) -> Bound:
    """The source column and transform of ``term`` in ``schema``; refused when the column is not in
    the schema, is not a primitive reachable through structs, or the transform does not apply to
    its type."""
    col = term.columns[0]
    names = index_by_name(schema.as_struct)
    fid = _lookup(names, col)
    if fid is None:
        raise UsageError(f"{what}: there is no column {col!r} (it is not in the schema)",
                         hint="columns: " + ", ".join(sorted(names)[:30]))
    f = schema.find_field(fid)
    full = column_names(schema.as_struct)[fid]
    if not isinstance(f.field_type, PrimitiveType):
        raise UsageError(f"{what}: {full} is {f.field_type}, not a primitive type")
    parents = index_parents(schema.as_struct)
    p = parents.get(fid)
    while p is not None:
        if isinstance(schema.find_type(p), (ListType, MapType)):
            raise UsageError(f"{what}: {full} is inside a list or map (only fields reachable through structs can be "
                             "partition or sort sources)")
        p = parents.get(p)
    t = parse_transform(term.transform)
    if not t.can_transform(f.field_type):
        raise UsageError(f"{what}: {term.transform} does not apply to {full} of type {f.field_type} (spec: "
                         "\"Partition Transforms\", source types)")
    return Bound(fid, str(t), full)
