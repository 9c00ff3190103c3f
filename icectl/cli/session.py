"""The catalog and tables one command run opens, from the catalog options on its :class:`Env` (the
catalog is opened once per run and kept there)."""
from __future__ import annotations

import shlex

from icectl.cli.context import Env
from icectl.errors import EmptySelectionError
from icectl.ops import catalogs
from icectl.ops.catalogs import Catalog, CatalogConfig, CatalogOptions, FileIO, Identifier, Table


def catalog_options(env: Env) -> CatalogOptions:
    return CatalogOptions(env.catalog, uri=env.uri, warehouse=env.warehouse)


def catalog_config(env: Env) -> CatalogConfig:
    """The configuration of the catalog this run's options name (resolved once per run)."""
    if env.catalog_config is None:
        env.catalog_config = catalog_options(env).config()
    return env.catalog_config


def describe_catalog(cfg: CatalogConfig) -> str:
    """``prod (sql, sqlite:///..., warehouse s3://...) from ~/.icectl.yaml:3``: the catalog, its
    type and where it is, and where its configuration came from (a password in the URI masked)."""
    where = [cfg.kind]
    if cfg.properties.get("uri"):
        where.append(catalogs.redact_uri(cfg.properties["uri"]))
    if cfg.properties.get("warehouse"):
        where.append(f"warehouse {cfg.properties['warehouse']}")
    return f"{cfg.name} ({', '.join(where)}) from {cfg.origin}"


def open_catalog(env: Env) -> Catalog:
    if env.opened_catalog is None:
        cfg = catalog_config(env)
        if env.verbose:  # one line: which catalog this command works on, and why that one
            env.stderr.write(f"icectl: catalog {describe_catalog(cfg)}\n")
        env.opened_catalog = catalogs.open_catalog(catalog_options(env), cfg)
    return env.opened_catalog


def select_tables(env: Env, names: list[str], *, all_tables: bool,
                  allow_empty: bool) -> tuple[list[Identifier], str]:
    """The tables ``names`` (or ``--all``) mean in this run's catalog, and which catalog that is and
    where its configuration came from. ``--all`` over no table is an error (exit 17) unless
    ``allow_empty``: a wrong catalog name, URI or warehouse looks just like an empty catalog."""
    described = describe_catalog(catalog_config(env))
    idents = catalogs.resolve_targets(open_catalog(env), names, all_tables=all_tables)
    if all_tables and not idents and not allow_empty:
        raise EmptySelectionError(f"--all found no tables in catalog {described}",
                                  hint="check the catalog's name, URI and warehouse (icectl list shows what it "
                                       "sees); --allow-empty accepts an empty catalog")
    return idents, described


def locate_table(env: Env, name: str) -> tuple[Catalog, Identifier]:
    """(catalog, identifier) of ``NS.TABLE`` in the configured catalog, or of a table location or
    metadata file given as a path (a read-only path catalog)."""
    return catalogs.locate_table(name, catalog_options(env), catalog=lambda: open_catalog(env))


def view_file_io(env: Env, name: str) -> FileIO | None:
    """For a name that is a path, the FileIO to read it with (the configured catalog's storage
    settings, as for a table by path); None for NAMESPACE.NAME."""
    if not catalogs.looks_like_path(name):
        return None
    return catalogs.path_io(catalog_options(env))


def open_table(env: Env, name: str) -> Table:
    """A table by ``NS.TABLE`` in the configured catalog, or by path (read-only)."""
    return catalogs.open_table(*locate_table(env, name))


def spark_template(env: Env, given: str | None) -> str | None:
    """The spark-submit job template: ``--template`` if given, else the configured catalog's."""
    return given or catalogs.spark_template(catalog_options(env))


def command_prefix(env: Env) -> str:
    """``icectl`` with the catalog options this run was given, for the suggested commands (a
    password in the URI is shown as ``***``)."""
    parts = ["icectl"]
    if env.catalog:
        parts += ["-c", shlex.quote(env.catalog)]
    if env.uri:
        parts += ["--uri", shlex.quote(catalogs.redact_uri(env.uri))]
    if env.warehouse:
        parts += ["--warehouse", shlex.quote(env.warehouse)]
    return " ".join(parts)
