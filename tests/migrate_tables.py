"""Tables for the ``migrate`` tests: a namespace of small real tables (one Parquet data file each,
some with a tag) in a catalog, views with a history of two versions (Iceberg Java's
``ValidViewMetadata.json`` test resource, tests/validate/view_fixtures), and where each entry is
afterwards (source, target, both, neither)."""
from __future__ import annotations

import json
import os
import pathlib
import sys
import uuid
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


VIEW_FIXTURE = (pathlib.Path(__file__).resolve().parent / "validate" / "view_fixtures" / "java"
                / "ValidViewMetadata.json")


def build_views(catalog: Any, namespace: str, n: int, root: str) -> list[Identifier]:
    """``n`` views ``NAMESPACE.v0`` ... registered in ``catalog`` at metadata files written under
    ``root`` (Java's two-version view; each its own uuid, location and SQL)."""
    out = []
    for i in range(n):
        ident = (namespace, f"v{i}")
        doc = json.loads(VIEW_FIXTURE.read_text())
        location = os.path.join(root, namespace, ident[1])
        doc.update({"view-uuid": str(uuid.uuid4()), "location": location})
        doc["versions"][1]["representations"][0]["sql"] = f"SELECT {i} AS id, 'abc' AS data"
        path = os.path.join(location, "metadata", f"00001-{uuid.uuid4()}.metadata.json")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(doc, f)
        catalog.register_view(ident, path)
        out.append(ident)
    return out


def location_in(catalog: Any, ident: Identifier) -> str | None:
    """The table's (or view's) metadata location in ``catalog``; None when it has neither."""
    try:
        return catalog.load_metadata_location(ident)
    except NotFoundError:
        pass
    if not catalog.supports_views:
        return None
    try:
        return catalog.load_view_metadata_location(ident)
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
