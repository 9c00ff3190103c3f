"""What ``list --all`` prints: the catalog's inventory, a line per table (then per view) as each is read.

Nothing here needs all the rows first: JSON is an array written element by element, JSON Lines an
object a line, and text a line per table whose columns do not depend on the other rows. On a
terminal the line has fixed columns sized to the terminal's width (a long name pushes the rest of
its own line, never cut; the metadata file is shortened on its left to fit); piped, it is
tab-separated with a header line, every value whole (``cut -f``, ``awk -F'\\t'``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Iterable, Iterator

from icectl.cli.context import Env
from icectl.cli.errors import one_line
from icectl.cli.output import iso_ts, opt, say, text_renderer
from icectl.spec.temporal import millis_to_iso

if TYPE_CHECKING:
    from icectl.ops.inspect.inventory import InventoryEntry


@dataclass
class Tally:
    """What went by: tables, views, and those whose metadata could not be read (their first names)."""

    tables: int = 0
    errors: int = 0
    failed: list[str] = field(default_factory=list)
    views: int = 0

    def count(self, entries: Iterable[InventoryEntry]) -> Iterator[InventoryEntry]:
        for e in entries:
            if e.kind == "view":
                self.views += 1
            else:
                self.tables += 1
            if e.error is not None:
                self.errors += 1
                if len(self.failed) < 5:
                    self.failed.append(e.name)
            yield e


@dataclass
class Inventory:
    """Every table and view of a catalog (``list --all``); as JSON, the array of its entries."""

    json_root: ClassVar[str] = "entries"
    json_stream: ClassVar[bool] = True  # each entry written as it is read
    entries: Iterable[InventoryEntry]
    catalog: str = field(default="", repr=False)
    described: str | None = field(default=None, repr=False)  # which catalog, from where (an empty one says it)
    tally: Tally = field(default_factory=Tally, repr=False)

    @classmethod
    def of(cls, entries: Iterable[InventoryEntry], catalog: str, described: str | None = None) -> "Inventory":
        tally = Tally()
        return cls(tally.count(entries), catalog, described, tally)


# A view's current version id and its time come last (a table leaves them empty; a view, the snapshot's).
TSV_COLUMNS = ["kind", "name", "format_version", "current_snapshot_id", "snapshot_time", "last_updated", "location",
               "metadata_location", "error", "current_version_id", "version_time"]


def _tsv(e: InventoryEntry) -> str:
    err = f"{e.error.kind}: {e.error.message}" if e.error else ""
    cells = [e.kind, e.name, opt(e.format_version), opt(e.current_snapshot_id),
             opt(iso_ts(e.current_snapshot_timestamp_ms)), opt(iso_ts(e.last_updated_ms)), opt(e.location),
             opt(e.metadata_location), err, opt(e.current_version_id), opt(iso_ts(e.current_version_timestamp_ms))]
    return "\t".join(one_line(c).replace("\t", "\\t") for c in cells)


def terminal_width(env: Env) -> int:
    """The terminal's width (``COLUMNS`` when the terminal does not say; 100 without either)."""
    try:
        columns = os.get_terminal_size(env.stdout.fileno()).columns
    except (AttributeError, OSError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        return int(os.environ.get("COLUMNS", "100"))
    except ValueError:
        return 100


def _fit_left(text: str, width: int) -> str:
    """``text`` in ``width`` characters, cut on its left (a path's end says the most)."""
    if len(text) <= width:
        return text
    return "\u2026" + text[len(text) - width + 1:] if width > 1 else text[-width:] if width > 0 else ""


class _Columns:
    """Fixed columns for a terminal ``width`` wide: name, v, snapshot id, snapshot time, metadata."""

    def __init__(self, width: int):
        self.width = max(width, 40)
        self.name = max(12, min(48, self.width // 3))

    def line(self, name: str, v: str, snapshot: str, when: str, rest: str) -> str:
        head = f"{name.ljust(self.name)}  {v.rjust(1)}  {snapshot.rjust(19)}  {when.ljust(16)}  "
        return (head + _fit_left(rest, max(self.width - len(head), 0))).rstrip()

    def error_line(self, name: str, message: str) -> str:
        head = f"{name.ljust(self.name)}  {'error'.rjust(24)}  "
        room = max(self.width - len(head), 0)
        return head + (message if len(message) <= room else message[:max(room - 1, 0)] + "\u2026")


@text_renderer(Inventory)
def _inventory_text(env: Env, inv: Inventory) -> None:
    entries = iter(inv.entries)
    first = next(entries, None)
    if first is None:
        say(env, f"no tables in catalog {inv.described or inv.catalog}")
        return
    out = env.stdout
    if not env.is_terminal():
        out.write("\t".join(TSV_COLUMNS) + "\n")
        for e in _chain(first, entries):
            out.write(_tsv(e) + "\n")
            out.flush()
        return
    cols = _Columns(terminal_width(env))
    say(env, (cols.line("NAME", "V", "SNAPSHOT", "SNAPSHOT TIME", "METADATA"), "bold"))
    for e in _chain(first, entries):
        if e.error is not None:
            say(env, (cols.error_line(e.name, one_line(f"{e.error.kind}: {e.error.message}")), "red"))
            continue
        if e.kind == "view":  # its current version where a table has its snapshot
            at, current, none = e.current_version_timestamp_ms, f"view version {opt(e.current_version_id)}", "-"
        else:
            at, current, none = e.current_snapshot_timestamp_ms, opt(e.current_snapshot_id), "no snapshot"
        when = millis_to_iso(at, sep=" ", zone="", timespec="seconds")[:16] if at is not None else none
        out.write(cols.line(e.name, opt(e.format_version), current, when, one_line(e.metadata_location or "")) + "\n")
        out.flush()
    t = inv.tally
    say(env, f"{t.tables:,} tables" + (f", {t.views:,} views" if t.views else "")
        + (f", {t.errors:,} could not be read" if t.errors else "")
        + f" (catalog {inv.catalog})")


def _chain(first: InventoryEntry, rest: Iterator[InventoryEntry]) -> Iterator[InventoryEntry]:
    yield first
    yield from rest
