"""What a command opens: the catalog its options name, and a table by ``NAMESPACE.TABLE`` or by path
(a table location or metadata file, read through a read-only path catalog)."""
from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from typing import Callable

from icectl.catalog import CatalogConfig, build_catalog, parse_identifier, resolve_catalog_config
from icectl.catalog.base import Catalog, Identifier
from icectl.catalog.config import Configuration, configured_catalogs
from icectl.catalog.path import PathCatalog, looks_like_path
from icectl.catalog.postgres import redact_uri
from icectl.errors import (IcectlError, InvalidMetadataError, NoSuchNamespaceError, NoSuchTableError, NoSuchViewError,
                           NotFoundError, UnsupportedFormatVersionError, UsageError)
from icectl.io import FileIO
from icectl.ops.evolve.namespaces import parse_namespace
from icectl.table.catalog_contract import ViewState
from icectl.table.identifier import ident_str
from icectl.table.loaded import Table, load_table

__all__ = ["Catalog", "CatalogConfig", "CatalogOptions", "Configuration", "FileIO", "Identifier", "Table", "build_catalog",
           "catalog_properties", "configured_catalogs", "looks_like_path", "locate_table", "open_catalog",
           "open_table", "open_table_or_view", "parse_identifier", "path_io", "redact_uri", "resolve_targets",
           "spark_template", "LoadedView"]


@dataclass(frozen=True)
class CatalogOptions:
    """The catalog a command line names: ``--catalog`` (a configured name), ``--uri``, ``--warehouse``."""

    name: str | None = None
    uri: str | None = None
    warehouse: str | None = None

    def config(self) -> CatalogConfig:
        return resolve_catalog_config(self.name, uri=self.uri, warehouse=self.warehouse)


def open_catalog(opts: CatalogOptions, config: CatalogConfig | None = None) -> Catalog:
    """The catalog ``opts`` name (``config``: its configuration, when already resolved)."""
    return build_catalog(config if config is not None else opts.config())


def catalog_properties(opts: CatalogOptions) -> dict[str, str]:
    """The configured catalog's properties, or none when no catalog is configured (a table given by
    path needs no catalog; its storage settings, s3.endpoint..., come from the configured one if any)."""
    try:
        return opts.config().properties
    except UsageError:  # no such catalog configured: a path is read with the defaults
        return {}


def locate_table(name: str, opts: CatalogOptions, *,
                 catalog: Callable[[], Catalog] | None = None) -> tuple[Catalog, Identifier]:
    """(catalog, identifier) of ``NS.TABLE`` in the configured catalog (opened by ``catalog``, by
    default from ``opts``), or of a table location or metadata file given as a path (a read-only path catalog, with
    the storage settings of the catalog named by ``--catalog`` or ``ICECTL_CONFIG``, if any)."""
    if looks_like_path(name):
        pc = PathCatalog(name, path_io(opts))
        return pc, pc.identifier()
    return (catalog() if catalog is not None else open_catalog(opts)), parse_identifier(name)


def _namespace_tables(catalog: Catalog, ns: Identifier) -> list[Identifier]:
    out = list(catalog.list_tables(ns))
    for child in catalog.list_namespaces(ns):
        if tuple(child) != tuple(ns):
            out += _namespace_tables(catalog, tuple(child))
    return out


def resolve_targets(catalog: Catalog, names: list[str], *, all_tables: bool) -> list[Identifier]:
    """The tables ``names`` mean (health and maintain take several): each a table or a namespace
    (its tables, and those of the namespaces below it), or every table of the catalog; in order,
    each once. A name that is neither is an error (exit code 3) before any table is opened."""
    if all_tables and names:
        raise UsageError("give tables or namespaces, or --all, not both")
    if not all_tables and not names:
        raise UsageError("give a table or namespace (e.g. db.events or db), or --all")
    found: list[Identifier] = []
    if all_tables:
        namespaces = [tuple(n) for n in catalog.list_namespaces(None)]
        for ns in namespaces:
            found += list(catalog.list_tables(ns))
    for name in names:
        parts = parse_namespace(name)
        if len(parts) > 1:
            try:
                catalog.load_metadata_location(parts)
                found.append(parts)
                continue
            except NotFoundError:
                pass
        try:
            catalog.load_namespace_properties(parts)
        except NoSuchNamespaceError:
            raise NotFoundError(f"{name} is neither a table nor a namespace in catalog {catalog.name}") from None
        found += _namespace_tables(catalog, parts)
    seen: set[Identifier] = set()
    out = []
    for ident in found:
        ident = tuple(ident)
        if ident not in seen:
            seen.add(ident)
            out.append(ident)
    return out


@dataclass(frozen=True)
class LoadedView:
    """A view of a catalog: its name, the catalog's name and what the catalog gave for it."""

    identifier: Identifier
    catalog: str
    state: ViewState

    @property
    def name(self) -> str:
        return ident_str(self.identifier)


def path_io(opts: CatalogOptions) -> FileIO:
    """The FileIO for a table or view given by path: with the storage settings of the catalog
    named by ``--catalog`` or ``ICECTL_CONFIG``, if any."""
    configured = opts.name or os.environ.get("ICECTL_CONFIG")
    return FileIO(catalog_properties(opts) if configured else {})


def name_the_way_back(e: IcectlError, catalog: Catalog, identifier: Identifier) -> None:
    """The catalog has the table but its current metadata file is broken or gone: the error says
    so in one line, and its hint names the way back (restore finds the newest good file). A table
    by path has no catalog pointer to move, and a newer format version is not broken."""
    if catalog.read_only or isinstance(e, UnsupportedFormatVersionError):
        return
    name = ident_str(identifier)
    e.message = f"the current metadata file of {name} cannot be read: {e.message}"
    e.args = (e.message,)
    e.hint = f"icectl restore {name} --dry-run finds the newest readable metadata file of the table"


def open_table(catalog: Catalog, identifier: Identifier) -> Table:
    """The table ``identifier``; a name that is a view of the catalog is refused with one line
    (NoSuchTableError, exit 3) that says so, and a missing table's error suggests the nearest names
    of its namespace."""
    try:
        return load_table(catalog, identifier)
    except NoSuchTableError as e:
        if _is_view(catalog, identifier):
            raise NoSuchTableError(f"{ident_str(identifier)} is a view of catalog {catalog.name}, not a table",
                                   hint="describe, drop and validate take a view; the other commands work on "
                                        "tables") from None
        near = similar_tables(catalog, identifier)
        if near:
            e.hint = f"did you mean {' or '.join(near)}?" + (f" ({e.hint})" if e.hint else "")
        raise
    except (InvalidMetadataError, NotFoundError) as e:
        name_the_way_back(e, catalog, identifier)
        raise


def open_table_or_view(catalog: Catalog, identifier: Identifier) -> Table | LoadedView:
    """The table ``identifier`` or, when the catalog has no such table, its view of that name
    (NoSuchTableError when it has neither; its hint suggests the nearest table names)."""
    try:
        return load_table(catalog, identifier)
    except NoSuchTableError as e:
        if catalog.supports_views:
            try:
                return LoadedView(identifier, catalog.name, catalog.load_view(identifier))
            except NoSuchViewError:
                pass
        near = similar_tables(catalog, identifier)
        if near:
            e.hint = f"did you mean {' or '.join(near)}?" + (f" ({e.hint})" if e.hint else "")
        raise
    except (InvalidMetadataError, NotFoundError) as e:
        name_the_way_back(e, catalog, identifier)
        raise


def _is_view(catalog: Catalog, identifier: Identifier) -> bool:
    try:
        return catalog.view_exists(identifier)
    except IcectlError:  # the table's error is the one to report
        return False


def similar_tables(catalog: Catalog, identifier: Identifier, *, n: int = 3) -> list[str]:
    """The names of up to ``n`` tables of ``identifier``'s namespace closest to its name (difflib's
    ratio, as click suggests commands); none when the namespace cannot be listed."""
    if isinstance(catalog, PathCatalog) or len(identifier) < 2:
        return []
    namespace, name = tuple(identifier[:-1]), identifier[-1]
    try:
        tables = catalog.list_tables(namespace)
    except (IcectlError, OSError):  # no such namespace, a catalog that cannot list: no suggestion
        return []
    names = {t[-1]: t for t in tables}
    return [".".join(names[m]) for m in difflib.get_close_matches(name, list(names), n=n, cutoff=0.6)]


def spark_template(opts: CatalogOptions) -> str | None:
    """The spark-submit job template the configured catalog names (``spark.template``), if any."""
    return catalog_properties(opts).get("spark.template")
