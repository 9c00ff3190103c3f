"""Catalogs and their configuration.

Configuration is YAML in the shape of PyIceberg's ``.pyiceberg.yaml``::

    catalog:
      prod:
        type: sql            # sql (default) | hadoop | rest | hive | glue
        uri: sqlite:////var/lib/iceberg/catalog.db
        warehouse: s3://bucket/warehouse
        s3.endpoint: http://127.0.0.1:9000
      lake:
        type: rest           # an Iceberg REST catalog (see icectl.catalog.rest for its keys)
        uri: https://catalog.example.com/api/catalog
        credential: CLIENT_ID:CLIENT_SECRET
        warehouse: analytics
      onprem:
        type: hive           # a Hive Metastore (see icectl.catalog.hive for its keys)
        uri: thrift://metastore-1:9083,thrift://metastore-2:9083
        warehouse: s3://bucket/warehouse

Where it is read from (``$ICECTL_CONFIG``, ``$PYICEBERG_HOME``, ``~/.icectl.yaml``,
``~/.pyiceberg.yaml``, PyIceberg's ``PYICEBERG_CATALOG__<NAME>__<KEY>`` variables) and which
catalog a command opens: :mod:`icectl.catalog.config`. With no configuration at all, the local
default is a SQLite catalog in ``./warehouse``. ``--uri http(s)://...`` alone opens a REST catalog,
``--uri sqlite:...`` or ``postgresql://...`` a SQL one, ``--uri thrift://...`` a Hive one, ``--warehouse DIR`` alone a file-system one.

Secret values of the configuration (``credential``, ``token``, ``s3.secret-access-key`` ...) are
remembered as they are read, so that no output shows them (:mod:`icectl.secrets`).
"""
from __future__ import annotations

import os

from icectl.catalog.base import Catalog, Identifier, ident_str, parse_identifier
from icectl.catalog.config import CatalogConfig, catalog_kind, resolve_catalog_config, uri_catalog_type
from icectl.errors import UsageError
from icectl.io import FileIO, has_scheme


def _abs_warehouse(wh: str | None) -> str | None:
    if wh is None:
        return None
    return wh if has_scheme(wh) else os.path.abspath(os.path.expanduser(wh))


def _where(cfg: CatalogConfig) -> str:
    """The file and line of the catalog's entry (``~/.icectl.yaml:3``), else where it came from."""
    return f"{cfg.source}:{cfg.line}" if cfg.line is not None else cfg.origin


def build_catalog(cfg: CatalogConfig) -> Catalog:
    props = cfg.properties
    io = FileIO({k: v for k, v in props.items()})
    kind = catalog_kind(props, cfg.name)
    uri = props.get("uri")
    if kind == "rest":
        if not uri:
            raise UsageError(f"REST catalog {cfg.name} ({_where(cfg)}) needs a uri (e.g. https://catalog.example.com)")
        from icectl.catalog.rest import RestCatalog

        return RestCatalog(cfg.name, {k: v for k, v in props.items() if k != "type"})
    if kind == "glue":  # configured by its type and glue.* keys: Glue has no uri
        from icectl.catalog.glue import GlueCatalog

        return GlueCatalog(cfg.name, props, io, warehouse=_abs_warehouse(props.get("warehouse")))
    warehouse = _abs_warehouse(props.get("warehouse"))
    if kind == "hive":
        from icectl.catalog.hive import HiveCatalog

        return HiveCatalog(cfg.name, {**props, **({"warehouse": warehouse} if warehouse else {})}, io)
    if warehouse and not has_scheme(warehouse) and os.path.exists(warehouse) and not os.path.isdir(warehouse):
        raise UsageError(f"warehouse {warehouse} is not a directory")
    if kind in ("hadoop", "filesystem", "file-system"):
        if not warehouse:
            raise UsageError(f"file-system catalog {cfg.name} ({_where(cfg)}) needs a warehouse")
        from icectl.catalog.hadoop import HadoopCatalog

        return HadoopCatalog(cfg.name, warehouse, io)
    if kind in ("sql", "jdbc"):
        if not uri:
            raise UsageError(f"SQL catalog {cfg.name} ({_where(cfg)}) needs a uri (e.g. sqlite:///catalog.db)")
        from icectl.catalog.sql import SqlCatalog

        # mysql://... is refused, never taken for the name of a SQLite file.
        uri_kind = uri_catalog_type(uri, given_as=f"catalog {cfg.name}: uri")
        if uri_kind == "rest":
            raise UsageError(f"SQL catalog {cfg.name}: uri {uri} is a REST catalog's", hint="set type: rest")
        if uri_kind == "hive":
            raise UsageError(f"SQL catalog {cfg.name}: uri {uri} is a Hive Metastore's", hint="set type: hive")
        return SqlCatalog(cfg.name, uri, warehouse, io, local_default=cfg.local_default)
    raise UsageError(f"unknown catalog type {kind!r} for catalog {cfg.name} ({_where(cfg)}, key type): use sql, "
                     "hadoop, rest, hive or glue")


__all__ = ["Catalog", "CatalogConfig", "Identifier", "build_catalog", "ident_str", "parse_identifier",
           "resolve_catalog_config"]
