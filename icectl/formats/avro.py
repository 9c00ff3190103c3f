"""Reading an Avro container file into a polars DataFrame, safely.

polars' Rust Avro reader decodes Iceberg manifests several times faster than fastavro (and
releases the GIL, so manifests decode in parallel threads), but it does not support every Avro
schema: an Avro ``map`` makes it panic (a Rust panic, raised as ``PanicException``, which is not an
``Exception``), and unions of several non-null branches are refused. :func:`read_avro_frame`
checks the writer schema first and turns every failure into :class:`ColumnarUnavailable`, so the
caller can use its entry-by-entry reader instead (which also words the error for the user).
"""
from __future__ import annotations

import io
import os
from typing import Any


class ColumnarUnavailable(Exception):
    """polars is missing, not wanted, or cannot read this file: use the entry-by-entry reader."""


def failures() -> tuple[type[BaseException], ...]:
    """What a polars call can raise: any Exception, and a Rust panic (``PanicException``, a
    ``BaseException``). Use as ``except failures():``; Ctrl-C and exit still pass."""
    try:
        from polars.exceptions import PanicException
    except ImportError:
        return (Exception,)
    return (Exception, PanicException)


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


def read_avro_frame(data: bytes, schema: Any | None = None) -> Any:
    """The records of an Avro container file as a polars DataFrame. ``schema`` is the writer
    schema when the caller has parsed the header already. Raises ColumnarUnavailable when polars
    is missing or not wanted (``ICECTL_AVRO_READER=fastavro``), or cannot read the file."""
    if os.environ.get("ICECTL_AVRO_READER") == "fastavro":
        raise ColumnarUnavailable("fastavro requested")
    try:
        import polars as pl
    except ImportError:
        raise ColumnarUnavailable("polars is not installed") from None
    if schema is None:
        from icectl.formats.avro_lean import open_avro
        from icectl.errors import InvalidMetadataError

        try:
            schema = open_avro(data, source="avro").schema
        except InvalidMetadataError as e:
            raise ColumnarUnavailable(e.message) from None
    if not polars_supports(schema):
        raise ColumnarUnavailable("an Avro schema polars cannot read")
    try:
        return pl.read_avro(io.BytesIO(data))
    except failures() as e:
        raise ColumnarUnavailable(f"{type(e).__name__}: {e}") from None
