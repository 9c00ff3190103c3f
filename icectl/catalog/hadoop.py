"""The file-system ("hadoop") catalog: ``<warehouse>/<ns>/<table>/metadata/v<N>.metadata.json``
with ``version-hint.text``, committed by an atomic no-replace rename as Iceberg Java's
HadoopTableOperations does. Format version 4 removes file-system tables (v4 walk-through:
"The file-system catalog is gone"), so this catalog refuses them.
"""
from __future__ import annotations

import re
import uuid

from icectl.catalog.base import Identifier, MetastoreCatalog, ident_str
from icectl.spec.metadata import TableMetadata
from icectl.errors import (AlreadyExistsError, CommitConflictError, InvalidMetadataError, NoSuchTableError,
                           NotFoundError, UnsupportedError)
from icectl.io import FileIO, join

_V = re.compile(r"^v(\d+)(?:\.gz)?\.metadata\.json$")
HINT = "version-hint.text"


class HadoopCatalog(MetastoreCatalog):
    kind = "file-system"
    supports_v4 = False

    def __init__(self, name: str, warehouse: str, io: FileIO):
        self.name = name
        self.warehouse = warehouse.rstrip("/")
        self.io = io

    def default_table_location(self, ident: Identifier) -> str:
        return join(self.warehouse, *ident)

    def _metadata_dir(self, ident: Identifier) -> str:
        return join(self.default_table_location(ident), "metadata")

    def _version_path(self, ident: Identifier, version: int) -> str:
        return join(self._metadata_dir(ident), f"v{version}.metadata.json")

    def current_version(self, ident: Identifier) -> int | None:
        mdir = self._metadata_dir(ident)
        version: int | None = None
        hint = join(mdir, HINT)
        if self.io.exists(hint):
            text = self.io.read(hint).decode().strip()
            try:
                version = int(text)
            except ValueError:
                version = None
        if version is None:
            # No (or an unreadable) hint: the highest vN in the folder, as HadoopTableOperations does.
            versions = [int(m.group(1)) for f in self.io.list_files(mdir)
                        if (m := _V.match(f.path.rsplit("/", 1)[-1]))]
            version = max(versions) if versions else None
        if version is None:
            return None
        while self.io.exists(self._version_path(ident, version + 1)):
            version += 1  # a writer renamed vN+1 but has not updated the hint yet
        return version

    def load_metadata_location(self, ident: Identifier) -> str:
        version = self.current_version(ident)
        if version is None:
            raise NoSuchTableError(f"table {ident_str(ident)} does not exist in warehouse {self.warehouse}")
        path = self._version_path(ident, version)
        if not self.io.exists(path):
            gz = join(self._metadata_dir(ident), f"v{version}.gz.metadata.json")
            if self.io.exists(gz):
                return gz
            raise InvalidMetadataError(f"{HINT} names version {version} but {path} does not exist")
        return path

    def _check(self, table_location: str, ident: Identifier, format_version: int) -> None:
        if format_version >= 4:
            raise UnsupportedError(
                "a file-system catalog cannot hold a format version 4 table (v4 requires a metastore catalog)",
                hint="register the table in a SQL catalog: icectl register")
        expected = self.default_table_location(ident)
        if table_location.rstrip("/") != expected:
            raise UnsupportedError(f"a file-system catalog table must live at {expected}, not {table_location}")

    def _create_pointer(self, ident: Identifier, md: TableMetadata, location: str) -> str:
        self._check(md.location or "", ident, md.format_version)
        if self.current_version(ident) is not None:
            raise AlreadyExistsError(f"table {ident_str(ident)} already exists")
        return self._write_version(ident, 1, md.to_bytes())

    def _swap_pointer(self, ident: Identifier, base_location: str, md: TableMetadata, location: str) -> str:
        # Files are named vN.metadata.json here, whatever name the caller proposed.
        self._check(md.location or "", ident, md.format_version)
        current = self.current_version(ident)
        base = _V.match(base_location.rsplit("/", 1)[-1])
        if current is None or base is None or int(base.group(1)) != current:
            raise CommitConflictError(f"table {ident_str(ident)} changed: the current version is v{current}")
        return self._write_version(ident, current + 1, md.to_bytes())

    def _write_version(self, ident: Identifier, version: int, metadata: bytes) -> str:
        mdir = self._metadata_dir(ident)
        tmp = join(mdir, f"{uuid.uuid4()}.metadata.json")
        final = self._version_path(ident, version)
        self.io.write(tmp, metadata)
        if not self.io.rename_no_replace(tmp, final):
            self.io.delete(tmp)
            raise CommitConflictError(f"table {ident_str(ident)} changed: {final} was written by another commit")
        self.io.write(join(mdir, HINT), str(version).encode(), overwrite=True)
        return final

    def _check_warehouse(self) -> None:
        if not self.io.exists(self.warehouse):
            raise NotFoundError(f"warehouse {self.warehouse} does not exist",
                                hint="check --warehouse or the catalog's warehouse in the configuration")

    def list_namespaces(self) -> list[Identifier]:
        self._check_warehouse()
        out = set()
        for f in self.io.list_files(self.warehouse):
            rel = _rel(self.warehouse, f.path)
            if len(rel) >= 4 and rel[-2] == "metadata" and rel[-1] == HINT:
                out.add(tuple(rel[:-3]))
        return sorted(out)

    def list_tables(self, namespace: Identifier | None) -> list[Identifier]:
        self._check_warehouse()
        out = []
        for f in self.io.list_files(self.warehouse):
            rel = _rel(self.warehouse, f.path)
            if len(rel) >= 4 and rel[-2] == "metadata" and rel[-1] == HINT:
                ident = tuple(rel[:-2])
                if namespace is None or ident[:-1] == namespace:
                    out.append(ident)
        return sorted(out)

    def drop_table(self, ident: Identifier) -> None:
        raise UnsupportedError("dropping file-system tables is not supported; delete the folder")


def _rel(root: str, path: str) -> list[str]:
    from icectl.io import local_path

    r, p = local_path(root).rstrip("/"), local_path(path)
    if not p.startswith(r):
        return []
    return p[len(r):].strip("/").split("/")
