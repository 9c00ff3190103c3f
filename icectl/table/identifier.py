"""Table identifiers: a namespace (one or more levels) and a table name."""
from __future__ import annotations

from icectl.errors import UsageError

Identifier = tuple[str, ...]


def parse_identifier(text: str) -> Identifier:
    """``ns.table`` or ``ns1.ns2.table``; a table needs a namespace."""
    parts = tuple(p for p in text.strip().split("."))
    if len(parts) < 2 or any(not p for p in parts):
        raise UsageError(f"invalid table name {text!r}: expected NAMESPACE.TABLE, e.g. db.events")
    return parts


def ident_str(ident: Identifier) -> str:
    return ".".join(ident)
