"""The expressions of ``icectl alter``, read as Spark DDL and Trino users write them, before they
meet a schema (syntax only: a bad expression is refused before the table is opened).

- a new column: ``NAME TYPE [NOT NULL] [DEFAULT v] [COMMENT 'doc'] [FIRST | AFTER col | BEFORE col]``
  (``NAME:TYPE`` and a trailing ``!`` for NOT NULL, as ``create --schema``, read too); ``a.b``
  adds ``b`` to the struct ``a``; a name in backquotes is taken literally;
- a move: ``a FIRST``, ``a AFTER b``, ``a BEFORE b``;
- a term: ``col``, ``bucket(16, col)``, ``truncate(4, col)``, ``year|month|day|hour(col)``,
  ``void(col)`` (Spark's plural names ``days(ts)`` and ``bucket(col, 16)`` read too), followed by
  ``AS name`` for a partition field, or by ``ASC|DESC`` and ``NULLS FIRST|LAST`` in a sort order;
- ``OLD=NEW``, ``COL=TYPE``, ``COL=TEXT``, ``KEY=VALUE`` pairs.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from icectl.errors import UsageError
from icectl.ops.create import split_top_level

KEYWORDS = ("not null", "null", "default", "comment", "doc", "first", "after", "before")
_TRANSFORM_ALIASES = {"years": "year", "months": "month", "days": "day", "hours": "hour", "date": "day",
                      "trunc": "truncate", "buckets": "bucket"}
_TRANSFORMS = "identity, bucket(N, col), truncate(W, col), year, month, day, hour, void"


@dataclass(frozen=True)
class Literal:
    """A default value as written: its text, and whether it was quoted."""

    text: str
    quoted: bool


@dataclass(frozen=True)
class NewColumn:
    parent: str | None  # the struct to add to (None: the table's top level)
    name: str
    type_text: str
    required: bool
    default: Literal | None
    doc: str | None
    position: tuple[str, str | None] | None  # ("first", None), ("after", col), ("before", col)

    @property
    def full_name(self) -> str:
        return f"{self.parent}.{self.name}" if self.parent else self.name


@dataclass(frozen=True)
class Term:
    """A transform of one or more columns: ``transform`` in the spec's JSON form (``bucket[16]``)."""

    transform: str
    columns: tuple[str, ...]
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class SortTerm:
    term: Term
    direction: str  # asc | desc
    null_order: str  # nulls-first | nulls-last


# -- tokens -------------------------------------------------------------------------------------------

def _read_quoted(text: str, i: int) -> tuple[str, int]:
    """The string starting at ``text[i]`` (a quote; doubled quotes and backslashes escape)."""
    q = text[i]
    out = []
    i += 1
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
            continue
        if c == q:
            if i + 1 < len(text) and text[i + 1] == q:
                out.append(q)
                i += 2
                continue
            return "".join(out), i + 1
        out.append(c)
        i += 1
    raise UsageError(f"unterminated {q}quote{q} in {text!r}")


def tokens(text: str) -> list[tuple[str, bool]]:
    """Words and quoted strings: (text, quoted). Backquoted names are quoted words."""
    out: list[tuple[str, bool]] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c.isspace():
            i += 1
        elif c in "'\"`":
            s, i = _read_quoted(text, i)
            out.append((s, True))
        else:
            j = i
            while j < len(text) and not text[j].isspace() and text[j] not in "'\"`":
                j += 1
            out.append((text[i:j], False))
            i = j
    return out


def column_name(text: str, what: str) -> str:
    """One column name: dotted segments (nested fields), each bare or in backquotes."""
    t = text.strip()
    if not t:
        raise UsageError(f"{what}: a column name is missing")
    try:
        segments, rest = _split_name(t)
    except UsageError:
        raise UsageError(f"{what}: {t!r} is not a column name") from None
    if rest.strip() or t.endswith(":"):
        raise UsageError(f"{what}: {t!r} is not one column name (put a name with spaces in `backquotes`)")
    return ".".join(segments)


def pair(text: str, what: str, example: str) -> tuple[str, str]:
    """``LEFT=RIGHT``: the left side is a column or key, the right side kept as written."""
    if "=" not in text:
        raise UsageError(f"{what} {text!r} must be {example}")
    left, _, right = text.partition("=")
    if not left.strip():
        raise UsageError(f"{what} {text!r} has nothing before '='")
    return left.strip(), right


# -- a new column ---------------------------------------------------------------------------------------

def _split_name(text: str) -> tuple[list[str], str]:
    """The dotted column name at the start of ``text`` (segments bare or in backquotes) and the rest."""
    t = text.lstrip()
    segments: list[str] = []
    i = 0
    while True:
        if t[i:i + 1] == "`":
            seg, i = _read_quoted(t, i)
        else:
            m = re.compile(r"[^\s:.`]+").match(t, i)
            if not m:
                raise UsageError(f"new column {text!r}: a name is missing")
            seg, i = m.group(0), m.end()
        segments.append(seg)
        if t[i:i + 1] != ".":
            break
        i += 1
    rest = t[i:]
    return segments, rest[1:] if rest.startswith(":") else rest


def _split_type(rest: str) -> tuple[str, str]:
    """The type at the start of ``rest`` (it may hold spaces inside brackets) and what follows."""
    depth = 0
    s = rest.strip()
    for i, c in enumerate(s):
        if c in "(<[":
            depth += 1
        elif c in ")>]":
            depth -= 1
        elif c.isspace() and depth == 0:
            tail = s[i:].lstrip()
            if any(re.match(rf"{k}\b", tail, re.I) for k in KEYWORDS):
                return s[:i].strip(), tail
    return s, ""


def parse_new_column(text: str) -> NewColumn:
    what = f"--add-column {text!r}"
    segments, rest = _split_name(text)
    parent, name = (".".join(segments[:-1]) or None), segments[-1]
    type_text, tail = _split_type(rest)
    if not type_text:
        raise UsageError(f"{what}: the column needs a type, e.g. 'note string'")
    required = type_text.endswith("!")
    if required:
        type_text = type_text[:-1].strip()
    default = doc = position = None
    toks = tokens(tail)
    i = 0

    def word(k: int) -> str:
        return toks[k][0].lower() if k < len(toks) and not toks[k][1] else ""

    def value(k: int, of: str) -> tuple[str, bool]:
        if k >= len(toks):
            raise UsageError(f"{what}: {of.upper()} needs a value")
        return toks[k]

    while i < len(toks):
        w = word(i)
        if w == "not" and word(i + 1) == "null":
            required, i = True, i + 2
        elif w == "null":
            i += 1
        elif w == "default":
            v, q = value(i + 1, "default")
            default, i = Literal(v, q), i + 2
        elif w in ("comment", "doc"):
            doc, _ = value(i + 1, w)
            i += 2
        elif w == "first":
            position, i = ("first", None), i + 1
        elif w in ("after", "before"):
            v, _ = value(i + 1, w)
            position, i = (w, v), i + 2
        else:
            raise UsageError(f"{what}: unexpected {toks[i][0]!r}",
                             hint="NAME TYPE [NOT NULL] [DEFAULT v] [COMMENT 'doc'] [FIRST | AFTER col | BEFORE col]")
    if default is not None and not default.quoted and default.text.lower() == "null":
        default = None
    return NewColumn(parent, name, type_text, required, default, doc, position)


def parse_move(text: str) -> tuple[str, str, str | None]:
    """``a FIRST``, ``a AFTER b``, ``a BEFORE b``: (column, first|after|before, reference)."""
    toks = tokens(text)
    if len(toks) == 2 and not toks[1][1] and toks[1][0].lower() == "first":
        return toks[0][0], "first", None
    if len(toks) == 3 and not toks[1][1] and toks[1][0].lower() in ("after", "before"):
        return toks[0][0], toks[1][0].lower(), toks[2][0]
    raise UsageError(f"--move-column {text!r} must be 'COL first', 'COL after OTHER' or 'COL before OTHER'")


# -- terms ----------------------------------------------------------------------------------------------

_CALL = re.compile(r"^([A-Za-z_]+)\s*\((.*)\)$", re.S)


def parse_term(text: str, what: str) -> Term:
    t = text.strip()
    if not t:
        raise UsageError(f"{what}: empty term")
    m = _CALL.match(t)
    if not m:
        return Term("identity", (column_name(t, what),), t)
    fn = _TRANSFORM_ALIASES.get(m.group(1).lower(), m.group(1).lower())
    args = [a for a in split_top_level(m.group(2))]
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
        raise UsageError(f"{what}: unknown transform {m.group(1)!r}", hint=f"transforms: {_TRANSFORMS}")
    if len(cols) > 1:
        # v3 partition fields may have source-ids for multi-argument transforms, but the spec
        # defines none: a writer must not commit a transform it does not know.
        raise UsageError(f"{what}: {fn} takes one column, not {len(cols)} (the spec defines no multi-argument "
                         f"transform: {_TRANSFORMS})")
    return Term(transform, (column_name(cols[0], what),), t)


def parse_partition_field(text: str) -> tuple[Term, str | None]:
    """``TERM [AS name]``."""
    what = f"--add-partition-field {text!r}"
    m = re.match(r"^(.*\S)\s+as\s+(`[^`]+`|\S+)$", text.strip(), re.I | re.S)
    if m:
        return parse_term(m.group(1), what), column_name(m.group(2), what)
    return parse_term(text, what), None


def parse_sort_order(text: str) -> list[SortTerm]:
    """``term [ASC|DESC] [NULLS FIRST|NULLS LAST], ...`` (nulls first when ascending, as Spark)."""
    out = []
    for part in split_top_level(text):
        if not part:
            raise UsageError(f"--sort-by {text!r}: empty term")
        rest, direction, nulls = part.strip(), "asc", None
        for suffix, value in ((" nulls first", "nulls-first"), (" nulls last", "nulls-last")):
            if rest.lower().endswith(suffix):
                nulls, rest = value, rest[: -len(suffix)].rstrip()
        for suffix, value in ((" asc", "asc"), (" desc", "desc")):
            if rest.lower().endswith(suffix):
                direction, rest = value, rest[: -len(suffix)].rstrip()
        term = parse_term(rest, f"--sort-by {text!r}")
        out.append(SortTerm(term, direction, nulls or ("nulls-first" if direction == "asc" else "nulls-last")))
    return out
