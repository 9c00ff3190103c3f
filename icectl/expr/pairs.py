"""``LEFT=RIGHT`` pairs: table and namespace properties (``KEY=VALUE``), renames (``OLD=NEW``),
``COLUMN=TYPE`` and the like. The left side is stripped; the right side is kept as written (a
value may hold ``=`` and spaces)."""
from __future__ import annotations

from icectl.errors import UsageError


def parse_pair(text: str, what: str, form: str = "KEY=VALUE") -> tuple[str, str]:
    """One pair; ``what`` names the option, ``form`` says what it holds (``OLD=NEW``)."""
    left, sep, right = text.partition("=")
    if not sep:
        raise UsageError(f"{what} {text!r}: expected {form}; each {what} must be {form.split(',')[0]}")
    if not left.strip():
        raise UsageError(f"{what} {text!r} has nothing before '=': expected {form}")
    return left.strip(), right


def parse_properties(pairs: list[str] | None, what: str = "--property") -> dict[str, str]:
    """``KEY=VALUE`` pairs as a mapping (a key given twice: the last value)."""
    out: dict[str, str] = {}
    for p in pairs or []:
        key, value = parse_pair(p, what)
        out[key] = value
    return out
