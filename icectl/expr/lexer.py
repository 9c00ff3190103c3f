"""The pieces the grammars share: top-level splitting, quoted strings, words, column names."""
from __future__ import annotations

import re

from icectl.errors import UsageError

_BARE_SEGMENT = re.compile(r"[^\s:.`]+")
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split on ``sep`` outside of (), [] and <>; the parts stripped."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([<":
            depth += 1
        elif ch in ")]>":
            depth -= 1
            if depth < 0:
                raise UsageError(f"unbalanced brackets in {text!r}")
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise UsageError(f"unbalanced brackets in {text!r}")
    parts.append("".join(cur))
    return [p.strip() for p in parts]


def read_quoted(text: str, i: int) -> tuple[str, int]:
    """The string starting at ``text[i]`` (a quote; doubled quotes and backslashes escape) and the
    index after its closing quote."""
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
            s, i = read_quoted(text, i)
            out.append((s, True))
        else:
            j = i
            while j < len(text) and not text[j].isspace() and text[j] not in "'\"`":
                j += 1
            out.append((text[i:j], False))
            i = j
    return out


def split_name(text: str, what: str = "column") -> tuple[list[str], str]:
    """The dotted column name at the start of ``text`` (segments bare or in backquotes) and the
    rest (a ``:`` right after the name is dropped: ``NAME:TYPE``)."""
    t = text.lstrip()
    segments: list[str] = []
    i = 0
    while True:
        if t[i:i + 1] == "`":
            seg, i = read_quoted(t, i)
        else:
            m = _BARE_SEGMENT.match(t, i)
            if not m:
                raise UsageError(f"{what} {text!r}: a name is missing")
            seg, i = m.group(0), m.end()
        segments.append(seg)
        if t[i:i + 1] != ".":
            break
        i += 1
    rest = t[i:]
    return segments, rest[1:] if rest.startswith(":") else rest


def column_name(text: str, what: str) -> str:
    """One column name: dotted segments (nested fields), each bare or in backquotes."""
    t = text.strip()
    if not t:
        raise UsageError(f"{what}: a column name is missing")
    try:
        segments, rest = split_name(t)
    except UsageError:
        raise UsageError(f"{what}: {t!r} is not a column name") from None
    if rest.strip() or t.endswith(":"):
        raise UsageError(f"{what}: {t!r} is not one column name (put a name with spaces in `backquotes`)")
    return ".".join(segments)


def quote_segment(name: str) -> str:
    """A name segment as a grammar reads it back: bare when it is a plain word, else in backquotes."""
    if _PLAIN_NAME.fullmatch(name):
        return name
    return "`" + name.replace("`", "``") + "`"


def quote_column(full_name: str) -> str:
    """A full dotted column name, each segment quoted as needed (a segment holding a dot cannot be
    told apart from nesting here: the caller passes segments it knows through :func:`quote_segment`)."""
    return ".".join(quote_segment(s) for s in full_name.split("."))
