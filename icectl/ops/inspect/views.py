"""Views for the commands that take one: a view of the catalog by name, or a view metadata file
given by path (``describe path/v.metadata.json``, ``validate path/v.metadata.json``), and the
view checks of ``validate`` (the view spec, :mod:`icectl.validate.view`)."""
from __future__ import annotations

from icectl.catalog.base import Catalog, Identifier
from icectl.catalog.path import looks_like_path
from icectl.errors import IcectlError, NoSuchViewError
from icectl.io import FileIO
from icectl.ops.catalogs import LoadedView
from icectl.spec.view import is_view_metadata_json
from icectl.table.catalog_contract import ViewState
from icectl.table.identifier import ident_str
from icectl.table.metadata_io import read_metadata_bytes, read_view_metadata_file
from icectl.validate.findings import ValidationReport
from icectl.validate.run import validate_view_file

__all__ = ["check_view", "check_view_file", "is_view_metadata_file", "open_view_file"]


def is_view_metadata_file(name: str, io: FileIO) -> bool:
    """Whether ``name`` is a path to a JSON file holding view metadata (not table metadata)."""
    if not looks_like_path(name) or not name.endswith((".json", ".json.gz")):
        return False
    try:
        return is_view_metadata_json(read_metadata_bytes(io, name))
    except IcectlError:
        return False


def open_view_file(path: str, io: FileIO) -> LoadedView:
    """A view metadata file read by path (no catalog: read-only)."""
    return LoadedView((path,), "path", ViewState(path, read_view_metadata_file(io, path)))


def check_view(catalog: Catalog, identifier: Identifier) -> ValidationReport:
    """Validate the current metadata file of the catalog's view ``identifier`` (NoSuchViewError)."""
    if not catalog.supports_views:
        raise NoSuchViewError(f"view {ident_str(identifier)} does not exist: catalog {catalog.name} has no views")
    location = catalog.load_view_metadata_location(identifier)
    return validate_view_file(catalog.io, location, name=ident_str(identifier))


def check_view_file(path: str, io: FileIO) -> ValidationReport:
    """Validate a view metadata file given by path."""
    return validate_view_file(io, path, name=path)
