"""Shared output helpers: JSON emission and value formatting for the human renderers."""
from __future__ import annotations

import dataclasses
import datetime as dt
import json
from enum import Enum
from typing import Any

from icectl.cli.context import Env


def to_jsonable(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.repr}
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, Enum):
        return obj.name.lower()
    if isinstance(obj, bytes):
        return obj.hex()
    return obj


def emit_json(env: Env, data: Any) -> None:
    env.stdout.write(json.dumps(to_jsonable(data), indent=2, default=str) + "\n")


def fmt_ts(ms: int | None) -> str:
    if ms is None:
        return ""
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"


def iso_ts(ms: int | None) -> str | None:
    if ms is None:
        return None
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def fmt_bytes(n: int | None) -> str:
    if n is None:
        return "?"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(size) < 1024 or unit == "TiB":
            return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def fmt_duration_ms(ms: int | None) -> str:
    if ms is None:
        return ""
    s = ms / 1000
    for unit, div in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= div and s % div == 0:
            return f"{int(s // div)}{unit}"
    if s >= 86400:
        return f"{s / 86400:.1f}d"
    return f"{int(s)}s" if s >= 1 else f"{ms}ms"


def num(n: int | None) -> str:
    return "" if n is None else f"{n:,}"


RICH_ROW_LIMIT = 300


def use_plain(env: Env, rows: int) -> bool:
    """Rich tables for a person at a terminal; plain columns for pipes and for long listings
    (drawing thousands of rows with rich takes seconds)."""
    return not env.is_terminal() or rows > RICH_ROW_LIMIT


def plain_table(env: Env, headers: list[str], rows: list[list[str]], right: set[str] = frozenset()) -> None:
    """Fixed-width columns, two spaces apart, header first: fast and easy to grep or cut."""
    widths = [len(h) for h in headers]
    for r in rows:
        for i, cell in enumerate(r):
            if len(cell) > widths[i]:
                widths[i] = len(cell)
    out = env.stdout

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if h in right else c.ljust(w)
                         for c, w, h in zip(cells, widths, headers)).rstrip()

    out.write(line(headers) + "\n")
    out.write("\n".join(line(r) for r in rows))
    if rows:
        out.write("\n")
