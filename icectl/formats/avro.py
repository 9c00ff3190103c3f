"""Reading Avro object container files: the one entry point of every Avro read in icectl
(manifest lists, manifests, file listings, ``validate``, ``--deep``'s Avro row counts). Writing is
fastavro's (:mod:`icectl.formats.manifest`).

Two decoders, polars first:

- polars' Rust reader decodes manifests several times faster than a Python decoder, into
  columns, and releases the GIL, so manifests decode in parallel threads;
- the lean decoder of :mod:`icectl.formats.avro_lean` reads every schema, and words what is wrong
  with a corrupt file.

polars does not read every writer schema: an Avro ``map`` makes it panic (a Rust panic, raised as
``PanicException``, which is a ``BaseException``), and it refuses unions of several non-null
branches. So polars is used only when it is installed and wanted (``ICECTL_AVRO_READER=lean``
turns it off, to exercise the fallback), when the schema is one it reads, and when it reads as
many records as the blocks hold; any failure of it, a panic included, falls back to the lean
decoder, and every failure of that is an :class:`~icectl.errors.InvalidMetadataError` naming the
file.
"""
from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
from typing import Any, Callable, Iterator

from icectl.formats.avro_lean import AvroFile, field_index, open_avro, record_type

__all__ = ["AvroFile", "failures", "field_index", "internal_struct", "open_avro", "panics_silenced",
           "polars_supports", "polars_wanted", "read_frame", "read_records", "record_type"]

READER_ENV = "ICECTL_AVRO_READER"  # "lean": never polars
# Below this size (a manifest list, a small manifest) the lean decoder reads a file faster than
# polars is imported (~0.25 s): read_records uses polars for it only when polars is loaded already.
SMALL_FILE_BYTES = 256 * 1024
# The bytes of blocks read_frame decodes at once for a reader that keeps a few columns (``each``).
FRAME_PART_BYTES = 1 << 20


def failures() -> tuple[type[BaseException], ...]:
    """What a polars call can raise: any Exception, and a Rust panic (``PanicException``, a
    ``BaseException``). Use as ``except failures():``; Ctrl-C and exit still pass."""
    try:
        from polars.exceptions import PanicException
    except ImportError:
        return (Exception,)
    return (Exception, PanicException)


_quiet_lock = threading.Lock()
_quiet_users = 0
_quiet_saved: int | None = None
_quiet_devnull: int | None = None


@contextlib.contextmanager
def panics_silenced() -> Iterator[None]:
    """While polars decodes, file descriptor 2 (stderr) points to /dev/null: a Rust panic's hook
    writes its message and backtrace there directly, before polars raises ``PanicException``, and
    a command must print one error line, not that. Threads share the redirection (a count); icectl
    writes nothing to stderr while it reads. Nothing is redirected where stderr cannot be
    duplicated."""
    global _quiet_users, _quiet_saved, _quiet_devnull
    with _quiet_lock:
        if _quiet_users == 0:
            try:
                if _quiet_devnull is None:
                    _quiet_devnull = os.open(os.devnull, os.O_WRONLY)
                _quiet_saved = os.dup(2)
                os.dup2(_quiet_devnull, 2)
            except OSError:
                _quiet_saved = None
        _quiet_users += 1
    try:
        yield
    finally:
        with _quiet_lock:
            _quiet_users -= 1
            if _quiet_users == 0 and _quiet_saved is not None:
                os.dup2(_quiet_saved, 2)
                os.close(_quiet_saved)
                _quiet_saved = None


def polars_wanted() -> bool:
    """Whether polars may decode (installed, and not turned off by ``ICECTL_AVRO_READER=lean``)."""
    if os.environ.get(READER_ENV) == "lean":
        return False
    try:
        import polars  # noqa: F401
    except ImportError:
        return False
    return True


def polars_supports(schema: Any, named: dict[str, Any] | None = None) -> bool:
    """Whether polars' Avro reader can decode a writer schema (no maps; unions only of null and
    one other type)."""
    named = {} if named is None else named
    if isinstance(schema, str):
        return True
    if isinstance(schema, list):
        other = [t for t in schema if t != "null"]
        return len(other) <= 1 and len(schema) <= 2 and all(polars_supports(t, named) for t in other)
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    if kind == "map":
        return False
    if kind == "record":
        if schema.get("name") in named:
            return True
        named[schema.get("name")] = schema
        return all(polars_supports(f.get("type"), named) for f in schema.get("fields", []))
    if kind == "array":
        return polars_supports(schema.get("items"), named)
    if isinstance(kind, (dict, list)):
        return polars_supports(kind, named)
    return True


def read_frame(avro: AvroFile, *, each: Callable[[Any], Any] | None = None,
               part_bytes: int | None = None) -> Any | None:
    """The file's records decoded by polars into a DataFrame, or None when polars is not wanted,
    cannot read this writer schema, fails, or reads another number of records than the blocks
    hold: then read it with :func:`read_records` or :meth:`AvroFile.records`.
    InvalidMetadataError when the block framing is broken (truncated, a sync marker missing).

    With ``each`` (a reader that keeps a few columns of the frame): a file of more than
    ``part_bytes`` (default :data:`FRAME_PART_BYTES`) is decoded a run of blocks at a time, each
    run's frame goes through ``each`` as soon as it is decoded, and the answer is their results
    put together (None when ``each`` raises). polars holds ~15x the bytes it decodes while it decodes them: an 8 MB manifest read
    at once holds ~130 MB, read by parts of 1 MB ~35 MB."""
    if not polars_wanted() or not _polars_reads(avro):
        return None
    expected = avro.record_count()
    if not avro.plausible_counts():
        return None  # the lean decoder says what is wrong
    import polars as pl

    try:
        with panics_silenced():
            runs = list(avro.block_runs(part_bytes or FRAME_PART_BYTES)) if each is not None else []
            if len(runs) <= 1:
                df = pl.read_avro(io.BytesIO(avro.data))
                return (df if each is None else each(df)) if len(df) == expected else None
            head = avro.data[:avro.start]
            parts = []
            for count, start, end in runs:
                part = pl.read_avro(io.BytesIO(head + avro.data[start:end]))
                if len(part) != count:
                    return None
                parts.append(each(part))
                del part
            return pl.concat(parts, how="vertical", rechunk=False)
    except failures():
        return None


_SUPPORTED: dict[bytes, bool] = {}  # polars_supports by the header's schema text


def _polars_reads(avro: AvroFile) -> bool:
    if not avro.schema_text:
        return polars_supports(avro.schema)
    known = _SUPPORTED.get(avro.schema_text)
    if known is None:
        if len(_SUPPORTED) >= 256:
            _SUPPORTED.clear()
        known = _SUPPORTED[avro.schema_text] = polars_supports(avro.schema)
    return known


def read_records(avro: AvroFile, *, skip: frozenset[str] = frozenset(),
                 prepare: Callable[[Any], Any] | None = None) -> list[dict[str, Any]]:
    """Every record as a dict (nested records too), read by polars when it can and else by the
    lean decoder; InvalidMetadataError naming the file when neither can.

    Values are the decoders' own: polars converts Avro logical types (``date`` to a ``date``,
    ``timestamp-micros`` to a ``datetime``, ``decimal`` to a ``Decimal``), the lean decoder does
    not (:func:`icectl.spec.conversions.to_internal` takes either to Iceberg's form). Fields in
    ``skip`` may be read as None; ``prepare`` turns polars' frame into the columns to return (a
    frame expression that fails falls back to the lean decoder as well). A small file is read by
    the lean decoder unless polars is loaded already (:data:`SMALL_FILE_BYTES`)."""
    small = len(avro.data) < SMALL_FILE_BYTES and "polars" not in sys.modules
    df = None if small else read_frame(avro)
    if df is not None:
        try:
            with panics_silenced():
                return (prepare(df) if prepare is not None else df).to_dicts()
        except failures():
            pass
    return list(avro.records(skip, dicts=True))


def internal_struct(pl: Any, expr: Any, dtype: Any) -> Any:
    """A polars struct of values that polars converted from Avro logical types, converted back to
    Iceberg's internal form (dates as days, timestamps and times as micro- or nanoseconds), so
    the per-row Python work is only building tuples."""
    parts = []
    for f in getattr(dtype, "fields", []):
        e = expr.struct.field(f.name)
        if f.dtype == pl.Date:
            e = e.cast(pl.Int32)
        elif isinstance(f.dtype, pl.Datetime):
            e = e.dt.epoch(f.dtype.time_unit if f.dtype.time_unit in ("us", "ns") else "us")
        elif f.dtype == pl.Time:
            e = e.cast(pl.Int64) // 1000
        parts.append(e.alias(f.name))
    if not parts:
        return expr
    return pl.struct(parts).alias("partition")
