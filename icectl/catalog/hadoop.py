"""The file-system ("hadoop") catalog: ``<warehouse>/<ns>/<table>/metadata/v<N>.metadata.json``
with ``version-hint.text``, committed by an atomic no-replace rename as Iceberg Java's
HadoopTableOperations does. Format version 4 removes file-system tables (v4 walk-through:
"The file-system catalog is gone"), so this catalog refuses them.
"""
from __future__ import annotations

import re
import uuid
from typing import Iterator

from icectl.catalog.base import Identifier, MetastoreCatalog, ident_str
from icectl.spec.metadata import TableMetadata
from icectl.errors import (AlreadyExistsError, CommitConflictError, IcectlError, InvalidMetadataError, NamespaceNotEmptyError,
                           NoSuchNamespaceError, NoSuchTableError, NotFoundError, UnsupportedError, UsageError)
from icectl.io import FileIO, join, local_path

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

    def pointer_location(self, ident: Identifier) -> str:
        try:
            return self.load_metadata_location(ident)
        except InvalidMetadataError:
            version = self.current_version(ident)
            assert version is not None  # load_metadata_location raised NoSuchTableError otherwise
            return self._version_path(ident, version)

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
            self.io.delete_own_file(tmp)  # the temporary file this commit wrote
            raise CommitConflictError(f"table {ident_str(ident)} changed: {final} was written by another commit")
        try:
            self.io.write(join(mdir, HINT), str(version).encode(), overwrite=True)
        except (IcectlError, OSError):
            # The rename committed: the hint is best effort (as HadoopTableOperations'), and a
            # reader finds vN+1 past a stale hint. Failing here would make the caller clean up
            # files the committed metadata references.
            pass
        return final

    def _check_warehouse(self) -> None:
        if not self.io.exists(self.warehouse):
            raise NotFoundError(f"warehouse {self.warehouse} does not exist",
                                hint="check --warehouse or the catalog's warehouse in the configuration")

    # -- namespaces: folders under the warehouse that are not tables (as Iceberg Java's HadoopCatalog)
    def _namespace_dir(self, namespace: Identifier) -> str:
        if not namespace or not all(namespace) or any(p in (".", "..") or "/" in p for p in namespace):
            raise UsageError(f"invalid namespace {'.'.join(namespace)!r}")
        return join(self.warehouse, *namespace)

    def _is_table_dir(self, path: str) -> bool:
        return self.io.exists(join(path, "metadata", HINT))

    def _walk(self, root: str) -> Iterator[tuple[tuple[str, ...], list[str]]]:
        """(relative folder, its subfolders) for every folder under ``root`` that is neither a
        table nor inside one."""
        todo = [()]
        while todo:
            rel = todo.pop()
            path = join(root, *rel)
            subdirs = [d for d in self.io.subdirectories(path) if not d.startswith(".")]
            namespaces = [d for d in subdirs if not self._is_table_dir(join(path, d))]
            yield rel, namespaces
            todo += [rel + (d,) for d in namespaces]

    def list_namespaces(self, parent: Identifier | None = None) -> list[Identifier]:
        self._check_warehouse()
        if parent is None:
            return sorted(rel + (d,) for rel, subdirs in self._walk(self.warehouse) for d in subdirs)
        root = self._namespace_dir(parent) if parent else self.warehouse
        if parent and (not self.io.exists(root) or self._is_table_dir(root)):
            raise NoSuchNamespaceError(f"namespace {'.'.join(parent)} does not exist in warehouse {self.warehouse}")
        for rel, subdirs in self._walk(root):
            return sorted(tuple(parent) + (d,) for d in subdirs)
        return []

    def create_namespace(self, namespace: Identifier, properties: dict[str, str] | None = None) -> None:
        if properties:
            raise UnsupportedError("a file-system catalog cannot store namespace properties")
        path = self._namespace_dir(namespace)
        if self.io.exists(path):
            raise AlreadyExistsError(f"namespace {'.'.join(namespace)} already exists in warehouse {self.warehouse}")
        self.io.makedirs(path)

    def drop_namespace(self, namespace: Identifier) -> None:
        path = self._namespace_dir(namespace)
        if not self.io.exists(path) or self._is_table_dir(path):
            raise NoSuchNamespaceError(f"namespace {'.'.join(namespace)} does not exist in warehouse {self.warehouse}")
        if next(iter(self.io.list_files(path)), None) is not None or self.list_namespaces(namespace):
            raise NamespaceNotEmptyError(f"namespace {'.'.join(namespace)} is not empty: its folder {path} holds "
                                         "tables, namespaces or files")
        self.io.rmdir(path)

    def load_namespace_properties(self, namespace: Identifier) -> dict[str, str]:
        path = self._namespace_dir(namespace)
        if not self.io.exists(path) or self._is_table_dir(path):
            raise NoSuchNamespaceError(f"namespace {'.'.join(namespace)} does not exist in warehouse {self.warehouse}")
        return {"location": path}

    def list_tables(self, namespace: Identifier | None = None) -> list[Identifier]:
        self._check_warehouse()
        if namespace is not None:
            root = self._namespace_dir(namespace)
            if not self.io.exists(root) or self._is_table_dir(root):
                raise NoSuchNamespaceError(f"namespace {'.'.join(namespace)} does not exist in warehouse "
                                           f"{self.warehouse}")
        out = []
        for f in self.io.list_files(self.warehouse):
            rel = _rel(self.warehouse, f.path)
            if len(rel) >= 4 and rel[-2] == "metadata" and rel[-1] == HINT:
                ident = tuple(rel[:-2])
                if namespace is None or ident[:-1] == namespace:
                    out.append(ident)
        return sorted(out)

    def drop_table(self, ident: Identifier, *, purge: bool = False) -> None:
        raise UnsupportedError("a file-system table is its folder: the catalog cannot drop it without deleting "
                               "its files", hint="register the table in a SQL catalog to manage it there")

    def rename_table(self, source: Identifier, destination: Identifier) -> None:
        raise UnsupportedError("a file-system catalog cannot rename tables: a table's name is its folder, and "
                               "its metadata names files by their full paths")


def _rel(root: str, path: str) -> list[str]:
    r, p = local_path(root).rstrip("/"), local_path(path)
    if not p.startswith(r):
        return []
    return p[len(r):].strip("/").split("/")
