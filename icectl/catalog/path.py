"""A read-only "catalog" over a bare metadata file or a table location, for incident debugging
when no catalog is at hand.

For a location: ``metadata/version-hint.text`` when present, else the metadata file with the
highest version number (``vN.metadata.json`` or ``NNNNN-<uuid>.metadata.json``), newest first on
ties.
"""
from __future__ import annotations

import re

from icectl.catalog.base import Identifier, MetastoreCatalog, metadata_file_version
from icectl.errors import NoSuchTableError, UnsupportedError
from icectl.io import FileIO, join

_METADATA = re.compile(r".*\.metadata\.json(\.gz)?$|.*\.gz\.metadata\.json$")


def looks_like_path(text: str) -> bool:
    return "/" in text or text.endswith(".json") or "://" in text or text.startswith(".")


class PathCatalog(MetastoreCatalog):
    kind = "path"
    read_only = True

    def __init__(self, target: str, io: FileIO):
        self.name = "path"
        self.target = target.rstrip("/") if not target.endswith(".json") else target
        self.io = io

    def identifier(self) -> Identifier:
        t = self.target
        if t.endswith(".json"):
            t = t.rsplit("/metadata/", 1)[0] if "/metadata/" in t else t.rsplit("/", 1)[0]
        parts = [p for p in t.split("/") if p and ":" not in p]
        return tuple(parts[-2:]) if len(parts) >= 2 else ("path", parts[-1] if parts else "table")

    def load_metadata_location(self, ident: Identifier) -> str:
        t = self.target
        if _METADATA.match(t):
            if not self.io.exists(t):
                raise NoSuchTableError(f"metadata file not found: {t}")
            return t
        if not self.io.exists(t):
            raise NoSuchTableError(f"no table at {t}: the path does not exist")
        mdir = join(t, "metadata")
        hint = join(mdir, "version-hint.text")
        if self.io.exists(hint):
            text = self.io.read(hint).decode().strip()
            if text.isdigit():
                v = int(text)
                while self.io.exists(join(mdir, f"v{v + 1}.metadata.json")):
                    v += 1
                candidate = join(mdir, f"v{v}.metadata.json")
                if self.io.exists(candidate):
                    return candidate
        files = [f for f in self.io.list_files(mdir) if _METADATA.match(f.path)]
        if not files:
            raise NoSuchTableError(f"no table at {t}: no metadata files under {mdir}")
        best = max(files, key=lambda f: (metadata_file_version(f.path), f.modified_ms or 0))
        return best.path

    def default_table_location(self, ident: Identifier) -> str:
        """The table folder: for a metadata file, the folder above its ``metadata/`` folder."""
        t = self.target
        if _METADATA.match(t):
            folder = t.rsplit("/", 1)[0]
            return folder[: -len("/metadata")] if folder.endswith("/metadata") else folder
        return t

    def _create_pointer(self, ident, md, location):  # type: ignore[override]
        raise UnsupportedError("a table opened by path is read-only: use a catalog to change it")

    def _swap_pointer(self, ident, base_location, md, location):  # type: ignore[override]
        raise UnsupportedError("a table opened by path is read-only: use a catalog to change it",
                               hint="register the metadata file in a catalog first")
