"""A catalog's inventory: every table of every namespace (nested ones too) with what its current
metadata says (format version, location, current snapshot, metadata file, last update), then every
view (format version, location, current version, metadata file), streamed.

The walk is a pipeline of generators: the catalog's listing (:meth:`Catalog.walk_tables`, a page
at a time), the metadata reads (a few threads, since reading a metadata file from object storage or
loading a table from a REST server is I/O), and the entries, in the listing's order, handed to the
caller as each is ready. At most ``window`` reads are in flight or waiting to be handed on, so
memory stays flat whatever the catalog's size, and the first entry is out long before the last
table is read. A table or view whose metadata cannot be read is an entry with its error, never left
out.
"""
from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from itertools import chain
from typing import Callable, Iterable, Iterator, TypeVar

from icectl.catalog.base import Catalog, Identifier, ListedTable
from icectl.errors import ExitCode, IcectlError
from icectl.table.catalog_contract import TableState, ViewState

T = TypeVar("T")
R = TypeVar("R")

WORKERS = 8  # metadata reads at once
WINDOW = 64  # reads started ahead of the entry being handed on


def ordered_map(fn: Callable[[T], R], items: Iterable[T], *, workers: int = WORKERS,
                window: int = WINDOW) -> Iterator[R]:
    """``map(fn, items)`` on ``workers`` threads, in the order of ``items``, lazily: ``items`` is
    read only ``window`` ahead of the result handed out, so a stream of any length is mapped in
    bounded memory and the first result comes as soon as it is ready. ``fn`` should not raise
    (an exception is raised here, at its item's turn). When ``items`` raises, the results of the
    items it gave before are handed out first, then its exception."""
    window = max(window, workers, 1)
    it = iter(items)
    pending: deque[Future[R]] = deque()
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="icectl-read") as pool:
        try:
            while True:
                try:
                    item = next(it)
                except StopIteration:
                    break
                except Exception:  # the items broke off (a listing that failed): what they gave comes first
                    while pending:
                        yield pending.popleft().result()
                    raise
                pending.append(pool.submit(fn, item))
                if len(pending) >= window:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:  # a consumer that stops early (a closed pipe): do not start what is queued
            for f in pending:
                f.cancel()


@dataclass(frozen=True)
class EntryError:
    """Why a listed table's metadata could not be read."""

    kind: str  # the exit code's name, lower case with dashes: invalid-metadata, not-found, storage, ... (internal: a bug)
    type: str  # the icectl error class (as in the JSON error on stderr)
    message: str  # one line
    exit_code: int  # what a command on this table alone would exit with


@dataclass(frozen=True)
class InventoryEntry:
    """One table or view of the inventory. Everything but ``kind``, ``name`` and ``namespace`` is
    null when the metadata could not be read (``error`` says why). A table has no current version,
    a view no snapshot (those fields are null)."""

    kind: str  # "table" or "view"
    name: str  # NAMESPACE.TABLE
    namespace: str
    format_version: int | None = None
    location: str | None = None
    current_snapshot_id: int | None = None
    current_snapshot_timestamp_ms: int | None = None
    metadata_location: str | None = None
    last_updated_ms: int | None = None  # a view: its version log's last change
    error: EntryError | None = None
    current_version_id: int | None = None  # a view's
    current_version_timestamp_ms: int | None = None


def error_of(e: BaseException) -> EntryError:
    """``e`` as an entry's error: an icectl error by its exit code, anything else as internal."""
    if isinstance(e, IcectlError):
        code = e.exit_code
        message = e.message
    else:
        code = ExitCode.ERROR
        message = f"internal error: {type(e).__name__}: {e}"
    first = message.splitlines()[0] if message else type(e).__name__
    kind = "internal" if code == ExitCode.ERROR else code.name.lower().replace("_", "-")
    return EntryError(kind, type(e).__name__, first, int(code))


def entry_of(listed: ListedTable, state: TableState) -> InventoryEntry:
    md = state.metadata
    snap = md.current_snapshot
    ident = listed.identifier
    return InventoryEntry("table", ".".join(ident), ".".join(ident[:-1]), md.format_version, md.location,
                          snap.snapshot_id if snap else None, snap.timestamp_ms if snap else None,
                          state.metadata_location or None, md.last_updated_ms)


def read_entry(catalog: Catalog, listed: ListedTable) -> InventoryEntry:
    """The entry of one listed table; its error when its metadata cannot be read."""
    try:
        return entry_of(listed, catalog.load_listed(listed))
    except Exception as e:  # noqa: BLE001 - one unreadable table never ends the inventory
        ident = listed.identifier
        return InventoryEntry("table", ".".join(ident), ".".join(ident[:-1]),
                              metadata_location=listed.metadata_location, error=error_of(e))


def view_entry_of(ident: Identifier, state: ViewState) -> InventoryEntry:
    md = state.metadata
    version = md.version(md.current_version_id)
    changed = max((h.timestamp_ms for h in md.version_log), default=version.timestamp_ms if version else None)
    return InventoryEntry("view", ".".join(ident), ".".join(ident[:-1]), md.format_version, md.location,
                          metadata_location=state.metadata_location or None, last_updated_ms=changed,
                          current_version_id=md.current_version_id,
                          current_version_timestamp_ms=version.timestamp_ms if version else None)


def read_view_entry(catalog: Catalog, ident: Identifier) -> InventoryEntry:
    """The entry of one listed view; its error when its metadata cannot be read."""
    try:
        return view_entry_of(ident, catalog.load_view(ident))
    except Exception as e:  # noqa: BLE001 - one unreadable view never ends the inventory
        return InventoryEntry("view", ".".join(ident), ".".join(ident[:-1]), error=error_of(e))


def inventory(catalog: Catalog, *, workers: int = WORKERS, window: int = WINDOW) -> Iterator[InventoryEntry]:
    """Every table of ``catalog``, then every view, with its metadata read, in the listings' order,
    streamed. An error of a listing itself (the catalog cannot be reached) is raised; an error of one
    table's or view's metadata is its entry."""
    listed: Iterator[ListedTable | Identifier] = chain(catalog.walk_tables(), catalog.walk_views())

    def read(item: ListedTable | Identifier) -> InventoryEntry:
        return read_entry(catalog, item) if isinstance(item, ListedTable) else read_view_entry(catalog, item)

    return ordered_map(read, listed, workers=workers, window=window)


__all__ = ["EntryError", "InventoryEntry", "entry_of", "error_of", "inventory", "ordered_map", "read_entry",
           "read_view_entry", "view_entry_of"]
