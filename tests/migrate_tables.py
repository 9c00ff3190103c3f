"""Tables for the ``migrate`` tests: a namespace of small real tables (one Parquet data file each,
some with a tag) in a catalog, and where each table is afterwards (source, target, both, neither)."""
from __future__ import annotations

import os
import pathlib
import sys
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from helpers import append_files, create_table  # noqa: E402
from validate_corpus import tables  # noqa: E402

from icectl.errors import NotFoundError  # noqa: E402
from icectl.ops.recover import refs  # noqa: E402
from icectl.table.transaction import commit  # noqa: E402

Identifier = tuple[str, ...]


def build_namespace(catalog: Any, namespace: str, n: int, *, location_root: str | None = None) -> list[Identifier]:
    """``n`` tables ``NAMESPACE.t00`` ... in ``catalog`` (schema ``id, name, ts`` by ``day(ts)``), each
    with rows ``i*10 .. i*10+2``; every third one has a tag ``v1``. Returns their identifiers."""
    out = []
    for i in range(n):
        ident = (namespace, f"t{i:02d}")
        location = os.path.join(location_root, namespace, ident[1]) if location_root else None
        t = create_table(catalog, ident, schema_text=tables.SCHEMA, partition_by="day(ts)", location=location)
        t = append_files(t, [tables.write_data_file(t, [i * 10, i * 10 + 1, i * 10 + 2], ["a", "b", None],
                                                    tables.day_of("2026-01-02"))])
        if i % 3 == 0:
            md = t.metadata
            commit(t, refs.create_ref(md, "v1", ref_type="tag", snapshot_id=md.current_snapshot_id))
        out.append(ident)
    return out


def location_in(catalog: Any, ident: Identifier) -> str | None:
    try:
        return catalog.load_metadata_location(ident)
    except NotFoundError:
        return None


def where(source: Any, target: Any, idents: list[Identifier]) -> dict[Identifier, tuple[str | None, str | None]]:
    """Each table's metadata location in the source and in the target (None where it is not)."""
    return {i: (location_in(source, i), location_in(target, i)) for i in idents}


def files_under(root: str) -> dict[str, int]:
    """Every file under ``root`` with its size (nothing may be deleted or rewritten)."""
    out = {}
    for d, _, fs in os.walk(root):
        for f in fs:
            if not f.endswith((".db", ".db-journal", ".db-wal", ".db-shm")):
                out[os.path.join(d, f)] = os.path.getsize(os.path.join(d, f))
    return out
