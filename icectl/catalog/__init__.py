"""Catalogs and their configuration.

Configuration is YAML in the shape of PyIceberg's ``.pyiceberg.yaml``::

    catalog:
      prod:
        type: sql            # sql (default) | hadoop | rest
        uri: sqlite:////var/lib/iceberg/catalog.db
        warehouse: s3://bucket/warehouse
        s3.endpoint: http://127.0.0.1:9000
      lake:
        type: rest           # an Iceberg REST catalog (see icectl.catalog.rest for its keys)
        uri: https://catalog.example.com/api/catalog
        credential: CLIENT_ID:CLIENT_SECRET
        warehouse: analytics

It is read from ``$ICECTL_CONFIG``, else ``~/.icectl.yaml``, else ``~/.pyiceberg.yaml``. With no
configuration at all, the local default is a SQLite catalog in ``./warehouse``. ``--uri
http(s)://...`` alone opens a REST catalog, ``--warehouse DIR`` alone a file-system one.

Secret values of the configuration (``credential``, ``token``, ``s3.secret-access-key`` ...) are
remembered as they are read, so that no output shows them (:mod:`icectl.secrets`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from icectl import secrets
from icectl.catalog.base import Catalog, Identifier, ident_str, parse_identifier
from icectl.errors import UsageError
from icectl.io import FileIO, has_scheme

DEFAULT_CATALOG = "default"
LOCAL_WAREHOUSE = "warehouse"


@dataclass
class CatalogConfig:
    name: str
    properties: dict[str, str] = field(default_factory=dict)
    source: str = "built-in local default"
    local_default: bool = False  # the SQLite catalog in ./warehouse that needs no configuration


def config_file() -> str | None:
    env = os.environ.get("ICECTL_CONFIG")
    if env:
        if not os.path.exists(env):
            raise UsageError(f"ICECTL_CONFIG names {env}, which does not exist")
        return env
    for name in ("~/.icectl.yaml", "~/.pyiceberg.yaml"):
        p = os.path.expanduser(name)
        if os.path.exists(p):
            return p
    return None


def load_config(path: str | None) -> dict[str, Any]:
    if path is None:
        return {}
    import yaml

    try:
        with open(path) as f:
            data = yaml.safe_load(f) or {}
    except yaml.YAMLError as e:
        raise UsageError(f"{path}: invalid YAML: {str(e).splitlines()[0]}") from None
    except (OSError, UnicodeDecodeError) as e:  # a folder, no permission, not text
        raise UsageError(f"{path}: cannot read the configuration: {getattr(e, 'strerror', None) or e}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: the configuration must be a mapping")
    return data


def resolve_catalog_config(name: str | None, *, uri: str | None = None, warehouse: str | None = None,
                           catalog_type: str | None = None) -> CatalogConfig:
    path = config_file()
    data = load_config(path)
    catalogs = data.get("catalog") or {}
    if not isinstance(catalogs, dict):
        raise UsageError(f"{path}: 'catalog' must be a mapping of catalog names")
    chosen = name or os.environ.get("ICECTL_CATALOG") or data.get("default-catalog")
    if chosen is None:
        chosen = DEFAULT_CATALOG if DEFAULT_CATALOG in catalogs else (next(iter(catalogs)) if catalogs else None)
    if chosen is not None and chosen in catalogs:
        entry = catalogs[chosen] or {}
        if not isinstance(entry, dict):
            raise UsageError(f"{path}: catalog {chosen!r} must be a mapping of properties")
        props = {str(k): str(v) for k, v in entry.items()}
        cfg = CatalogConfig(chosen, props, path or "")
    elif chosen is not None and (catalogs or chosen != DEFAULT_CATALOG) and uri is None and warehouse is None:
        # A catalog asked for by name must exist: never fall back to the local default silently.
        if path is None:
            raise UsageError(f"catalog {chosen!r} is not configured: no configuration file "
                             "(ICECTL_CONFIG, ~/.icectl.yaml or ~/.pyiceberg.yaml)",
                             hint="add it under 'catalog:' in ~/.icectl.yaml, or pass --uri/--warehouse")
        raise UsageError(f"catalog {chosen!r} is not configured in {path}",
                         hint=("configured catalogs: " + ", ".join(sorted(map(str, catalogs))))
                         if catalogs else "the file configures no catalogs")
    else:
        cfg = CatalogConfig(chosen or DEFAULT_CATALOG, {})
    if uri:
        cfg.properties["uri"] = uri
        # A URI given on the command line says which kind of catalog it is.
        if uri.lower().startswith(("http://", "https://")):
            cfg.properties["type"] = "rest"
        elif uri.lower().startswith(("sqlite:", "jdbc:", "postgresql:", "postgres:", "postgresql+")):
            cfg.properties["type"] = "sql"
    if warehouse:
        cfg.properties["warehouse"] = warehouse
    if catalog_type:
        cfg.properties["type"] = catalog_type
    secrets.remember_properties(cfg.properties)
    if (not cfg.properties.get("uri") and not cfg.properties.get("warehouse")
            and cfg.properties.get("type") not in ("hadoop", "rest")):
        wh = os.path.abspath(LOCAL_WAREHOUSE)
        cfg.properties.setdefault("type", "sql")
        cfg.properties["warehouse"] = wh
        cfg.properties["uri"] = f"sqlite:///{os.path.join(wh, 'icectl_catalog.db')}"
        cfg.local_default = True
    return cfg


def _abs_warehouse(wh: str | None) -> str | None:
    if wh is None:
        return None
    return wh if has_scheme(wh) else os.path.abspath(os.path.expanduser(wh))


def build_catalog(cfg: CatalogConfig) -> Catalog:
    props = cfg.properties
    io = FileIO({k: v for k, v in props.items()})
    kind = props.get("type")
    uri = props.get("uri")
    if kind is None:
        kind = ("rest" if uri.lower().startswith(("http://", "https://")) else "sql") if uri else "hadoop"
    kind = kind.lower()
    if kind == "rest":
        if not uri:
            raise UsageError(f"REST catalog {cfg.name} needs a uri (e.g. https://catalog.example.com)")
        from icectl.catalog.rest import RestCatalog

        return RestCatalog(cfg.name, {k: v for k, v in props.items() if k != "type"})
    warehouse = _abs_warehouse(props.get("warehouse"))
    if warehouse and not has_scheme(warehouse) and os.path.exists(warehouse) and not os.path.isdir(warehouse):
        raise UsageError(f"warehouse {warehouse} is not a directory")
    if kind in ("hadoop", "filesystem", "file-system"):
        if not warehouse:
            raise UsageError(f"file-system catalog {cfg.name} needs a warehouse")
        from icectl.catalog.hadoop import HadoopCatalog

        return HadoopCatalog(cfg.name, warehouse, io)
    if kind in ("sql", "jdbc"):
        if not uri:
            raise UsageError(f"SQL catalog {cfg.name} needs a uri (e.g. sqlite:///catalog.db)")
        from icectl.catalog.sql import SqlCatalog

        return SqlCatalog(cfg.name, uri, warehouse, io, local_default=cfg.local_default)
    raise UsageError(f"unknown catalog type {kind!r} for catalog {cfg.name}: use sql, hadoop or rest")


__all__ = ["Catalog", "CatalogConfig", "Identifier", "build_catalog", "ident_str", "parse_identifier",
           "resolve_catalog_config"]
