"""Table (and view) metadata files: reading one (plain or gzip), naming and writing the next version."""
from __future__ import annotations

import re
import uuid

from icectl.errors import InvalidMetadataError, NotFoundError
from icectl.io import FileIO, join
from icectl.spec.metadata import TableMetadata, parse_table_metadata
from icectl.spec.properties import METADATA_COMPRESSION, METADATA_PATH
from icectl.spec.view import ViewMetadata, parse_view_metadata

_VERSION = re.compile(r"^(?:v)?(\d+)[-.]")


def is_gzip_location(location: str) -> bool:
    return location.endswith(".gz.metadata.json") or location.endswith(".metadata.json.gz")


def read_metadata_bytes(io: FileIO, location: str) -> bytes:
    """A metadata file's JSON bytes (a table's or a view's), gunzipped when its name says gzip."""
    try:
        data = io.read(location)
    except NotFoundError:
        raise NotFoundError(f"metadata file not found: {location}") from None
    if is_gzip_location(location):
        import gzip

        try:
            data = gzip.decompress(data)
        except OSError as e:
            raise InvalidMetadataError(f"{location}: not valid gzip: {e}") from None
    return data


def read_metadata_file(io: FileIO, location: str) -> TableMetadata:
    return parse_table_metadata(read_metadata_bytes(io, location), source=location)


def read_view_metadata_file(io: FileIO, location: str) -> ViewMetadata:
    """The view metadata file at ``location``, parsed (the view spec's "View Metadata")."""
    return parse_view_metadata(read_metadata_bytes(io, location), source=location)


def metadata_file_version(location: str | None) -> int:
    """The version number in ``00003-<uuid>.metadata.json`` or ``v3.metadata.json``; -1 if none."""
    if not location:
        return -1
    name = location.rsplit("/", 1)[-1]
    m = _VERSION.match(name)
    return int(m.group(1)) if m else -1


def metadata_folder(md: TableMetadata, table_location: str) -> str:
    """``write.metadata.path`` when the table sets it, else ``<location>/metadata``."""
    return (METADATA_PATH.read_if_set(md.properties) or join(table_location, "metadata")).rstrip("/")


def new_metadata_location(md: TableMetadata, table_location: str, previous: str | None) -> str:
    """``<metadata folder>/<NNNNN>-<uuid>.metadata.json``, numbered after the previous file (gzip when
    ``write.metadata.compression-codec`` is gzip), as Iceberg Java names them."""
    version = metadata_file_version(previous) + 1
    gz = METADATA_COMPRESSION.read(md.properties) == "gzip"
    return join(metadata_folder(md, table_location), f"{version:05d}-{uuid.uuid4()}{'.gz' if gz else ''}.metadata.json")


def metadata_bytes(md: TableMetadata, location: str) -> bytes:
    data = md.to_bytes()
    if is_gzip_location(location):
        import gzip

        data = gzip.compress(data)
    return data
