"""A sort order: ``term [ASC|DESC] [NULLS FIRST|NULLS LAST], ...`` (see :mod:`icectl.expr.term`);
nulls come first when ascending and last when descending unless said, as in Spark and Iceberg Java
(spec: "Sorting"). Parsing gives unbound :class:`SortTerm`s; :func:`bind_sort_order` makes the
spec's sort order against a schema."""
from __future__ import annotations

from dataclasses import dataclass

from icectl.errors import UsageError
from icectl.expr.lexer import split_top_level
from icectl.expr.term import Term, bind, parse_term, term_text
from icectl.spec.evolution import column_names
from icectl.spec.partitioning import UNSORTED, SortField, SortOrder
from icectl.spec.types import Schema


@dataclass(frozen=True)
class SortTerm:
    term: Term
    direction: str  # asc | desc
    null_order: str  # nulls-first | nulls-last


def parse_sort_order(text: str, what: str = "--sort-by") -> list[SortTerm]:
    """The terms of a sort order, in order (at least one)."""
    out = []
    w = f"{what} {text!r}"
    for part in split_top_level(text):
        if not part:
            raise UsageError(f"{w}: empty term")
        # The term may contain spaces: the modifiers are taken from the end.
        rest, direction, nulls = part.strip(), "asc", None
        for suffix, value in ((" nulls first", "nulls-first"), (" nulls last", "nulls-last")):
            if rest.lower().endswith(suffix):
                nulls, rest = value, rest[: -len(suffix)].rstrip()
        for suffix, value in ((" asc", "asc"), (" desc", "desc")):
            if rest.lower().endswith(suffix):
                direction, rest = value, rest[: -len(suffix)].rstrip()
        term = parse_term(rest, w)
        out.append(SortTerm(term, direction, nulls or ("nulls-first" if direction == "asc" else "nulls-last")))
    return out


def bind_sort_order(terms: list[SortTerm], schema: Schema, *, order_id: int = 1) -> SortOrder:
    """The sort order of ``terms`` against ``schema`` (Java's SortOrder.Builder); no terms: unsorted."""
    if not terms:
        return UNSORTED
    fields = []
    for st in terms:
        b = bind(st.term, schema, f"cannot sort by {st.term}")
        fields.append(SortField(b.source_id, b.transform, st.direction, st.null_order))
    return SortOrder(order_id, tuple(fields))


def sort_order(text: str | None, schema: Schema, *, order_id: int = 1) -> SortOrder:
    """Parse and bind in one step (``None`` or empty: unsorted)."""
    if not text or not text.strip():
        return UNSORTED
    return bind_sort_order(parse_sort_order(text), schema, order_id=order_id)


def sort_order_text(order: SortOrder, schema: Schema) -> str:
    """``order`` as :func:`parse_sort_order` reads it, every direction and null order spelled out."""
    names = column_names(schema.as_struct)
    return ", ".join(f"{term_text(f.transform, names.get(f.source_id, f'id {f.source_id}'))} {f.direction} "
                     f"{f.null_order.replace('-', ' ')}" for f in order.fields)
