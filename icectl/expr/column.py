"""A new column and a column move, as Spark DDL and Trino users write them:

- ``NAME TYPE [NOT NULL] [DEFAULT v] [COMMENT 'doc'] [FIRST | AFTER col | BEFORE col]`` (``NAME:TYPE``
  and a trailing ``!`` for NOT NULL, as the compact schema, read too); ``a.b`` adds ``b`` to the
  struct ``a``; a name in backquotes is taken literally;
- a move: ``a FIRST``, ``a AFTER b``, ``a BEFORE b``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from icectl.errors import UsageError
from icectl.expr.lexer import split_name, tokens

KEYWORDS = ("not null", "null", "default", "comment", "doc", "first", "after", "before")


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


def literal(text: str) -> Literal:
    """A value as written: one quoted string, or the text itself."""
    toks = tokens(text)
    return Literal(toks[0][0], toks[0][1]) if len(toks) == 1 else Literal(text.strip(), False)


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
    segments, rest = split_name(text, "new column")
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
