"""The catalog contract: where a table's current-metadata pointer lives and how it is swapped.

Catalogs deal in metadata locations and bytes, never in parsed metadata: the engine parses and
builds metadata, a catalog stores it and moves the pointer with a compare-and-set.
"""
from __future__ import annotations

import re
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass

from icectl.errors import UsageError
from icectl.io import FileIO, join

Identifier = tuple[str, ...]


def parse_identifier(text: str) -> Identifier:
    """``ns.table`` or ``ns1.ns2.table``; a table needs a namespace."""
    parts = tuple(p for p in text.strip().split("."))
    if len(parts) < 2 or any(not p for p in parts):
        raise UsageError(f"invalid table name {text!r}: expected NAMESPACE.TABLE, e.g. db.events")
    return parts


def ident_str(ident: Identifier) -> str:
    return ".".join(ident)


_VERSION = re.compile(r"^(?:v)?(\d+)[-.]")


def metadata_file_version(location: str | None) -> int:
    """The version number in ``00003-<uuid>.metadata.json`` or ``v3.metadata.json``; -1 if none."""
    if not location:
        return -1
    name = location.rsplit("/", 1)[-1]
    m = _VERSION.match(name)
    return int(m.group(1)) if m else -1


def new_metadata_location(table_location: str, previous: str | None, codec_suffix: str = "") -> str:
    """``<location>/metadata/<NNNNN>-<uuid>.metadata.json``, numbered after the previous file."""
    version = metadata_file_version(previous) + 1
    return join(table_location, "metadata", f"{version:05d}-{uuid.uuid4()}{codec_suffix}.metadata.json")


@dataclass(frozen=True)
class TableEntry:
    identifier: Identifier
    metadata_location: str


class Catalog(ABC):
    """A named catalog with a warehouse and a file IO."""

    name: str
    io: FileIO
    supports_v4: bool = True
    read_only: bool = False
    kind: str = "catalog"

    @abstractmethod
    def load_metadata_location(self, ident: Identifier) -> str:
        """The current metadata file of a table; NoSuchTableError if there is none."""

    @abstractmethod
    def default_table_location(self, ident: Identifier) -> str: ...

    @abstractmethod
    def create_table(self, ident: Identifier, *, table_location: str, metadata: bytes, format_version: int) -> str:
        """Write the first metadata file and register the table; return its location."""

    @abstractmethod
    def commit(self, ident: Identifier, *, base_location: str, table_location: str, metadata: bytes,
               format_version: int) -> str:
        """Write ``metadata`` as the next version and swap the pointer from ``base_location``.

        Raises CommitConflictError when the pointer moved since ``base_location`` was read.
        """

    def list_namespaces(self) -> list[Identifier]:
        raise UsageError(f"the {self.kind} catalog cannot list namespaces")

    def list_tables(self, namespace: Identifier | None) -> list[Identifier]:
        raise UsageError(f"the {self.kind} catalog cannot list tables")

    def create_namespace(self, namespace: Identifier) -> None:
        pass

    def register_table(self, ident: Identifier, metadata_location: str) -> None:
        raise UsageError(f"the {self.kind} catalog cannot register tables")

    def drop_table(self, ident: Identifier) -> None:
        raise UsageError(f"the {self.kind} catalog cannot drop tables")
