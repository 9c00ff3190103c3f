"""Where a catalog's configuration comes from, and which catalog a command opens.

Sources, first match wins for the file (files are never merged):

1. ``$ICECTL_CONFIG`` (must exist);
2. ``$PYICEBERG_HOME/.pyiceberg.yaml``;
3. ``~/.icectl.yaml``;
4. ``~/.pyiceberg.yaml``, then ``./.pyiceberg.yaml``.

Steps 2 and 4 are PyIceberg's own search (``pyiceberg/utils/config.py``: ``PYICEBERG_HOME``, the
home folder, the working folder). A ``.pyiceberg.yaml`` that holds nothing is skipped, as PyIceberg
skips a file that configures nothing (PyIceberg 0.12 fails on an empty file instead). An explicit environment
variable (1, 2) beats a file found in a default place; of two files in the same place, icectl's
beats PyIceberg's.

Then PyIceberg's environment variables are merged over the file, key by key, as PyIceberg merges
them: a variable whose name starts with ``PYICEBERG_`` (any case) is lower-cased, split on ``__``
into at most three levels, and ``_`` becomes ``-`` within a level (``__`` left in the third level
becomes ``.``): ``PYICEBERG_CATALOG__PROD__S3__SECRET_ACCESS_KEY`` sets ``s3.secret-access-key``
of catalog ``prod``, ``PYICEBERG_DEFAULT_CATALOG`` sets ``default-catalog``. A variable set to the
empty string sets the empty string. Finally ``--uri`` and ``--warehouse`` override both.

A ``.pyiceberg.yaml`` is read as PyIceberg reads it: every key lower-cased, values as their text
(``true`` stays ``true``). icectl's own file keeps the case of its keys (``header.X-Tenant``) and
YAML's values as Python spells them (``true`` is ``True``), as it always has; a catalog name is
matched exactly, else regardless of case (as PyIceberg matches it).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

import yaml

from icectl import secrets
from icectl.catalog.postgres import redact_uri
from icectl.errors import UsageError

DEFAULT_CATALOG = "default"
LOCAL_WAREHOUSE = "warehouse"
PYICEBERG_YAML = ".pyiceberg.yaml"
ICECTL_YAML = "~/.icectl.yaml"
ENV_PREFIX = "pyiceberg_"  # compared lower-cased, as PyIceberg does
LOCAL_DEFAULT_SOURCE = "built-in local default"

# --uri (and a configured uri without a type) by scheme. PyIceberg infers the same way
# (``infer_catalog_type``).
REST_SCHEMES = ("http", "https")
HIVE_SCHEMES = ("thrift",)
SQL_SCHEMES = ("sqlite", "postgresql", "postgres", "postgresql+psycopg", "postgresql+psycopg2", "jdbc:sqlite",
               "jdbc:postgresql")
SUPPORTED_URIS = "http:// or https:// (REST); sqlite:, postgresql://, postgresql+psycopg://, jdbc:sqlite: or " \
                 "jdbc:postgresql: (SQL); thrift:// (Hive)"
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")

Path = tuple[str, ...]


@dataclass
class CatalogConfig:
    name: str
    properties: dict[str, str] = field(default_factory=dict)
    # The file the catalog is configured in; "environment" when only PYICEBERG_ variables configure
    # it; "command line" for --uri/--warehouse without a configured catalog; or the local default.
    source: str = LOCAL_DEFAULT_SOURCE
    local_default: bool = False  # the SQLite catalog in ./warehouse that needs no configuration
    line: int | None = None  # the line of the catalog's name in ``source``
    env_vars: tuple[str, ...] = ()  # PYICEBERG_CATALOG__<NAME>__* variables that set its keys
    flags: tuple[str, ...] = ()  # --uri, --warehouse given on the command line

    @property
    def origin(self) -> str:
        """Where the catalog comes from, in one phrase: ``~/.icectl.yaml:3``, a variable, a flag,
        or the local default."""
        if self.line is not None:
            parts = [f"{self.source}:{self.line}"]
        elif self.source not in ("environment", "command line", LOCAL_DEFAULT_SOURCE):
            parts = [self.source]
        else:
            parts = []
        parts += list(self.env_vars) + list(self.flags)
        if self.local_default:
            parts.append(f"local default: SQLite in ./{LOCAL_WAREHOUSE}" if parts
                         else f"local default: nothing configured, SQLite in ./{LOCAL_WAREHOUSE}")
        return ", ".join(parts) or self.source

    @property
    def kind(self) -> str:
        return catalog_kind(self.properties, self.name)


@dataclass
class Configuration:
    """The configuration file that was found (if any) with PyIceberg's variables merged over it."""

    file: str | None
    catalogs: dict[str, dict[str, str]]
    default_catalog: str | None
    lines: dict[str, int]  # catalog name -> line of its name in the file
    env_vars: dict[str, list[str]]  # catalog name -> the variables that set its keys

    def find(self, name: str) -> str | None:
        """The configured name that ``name`` means: itself, else the one equal regardless of case."""
        if name in self.catalogs:
            return name
        low = name.lower()
        return next((k for k in self.catalogs if k.lower() == low), None)

    def catalog_config(self, name: str) -> CatalogConfig:
        key = self.find(name)
        assert key is not None
        env_vars = tuple(self.env_vars.get(key, ()))
        line = self.lines.get(key)
        source = self.file if (line is not None and self.file) else ("environment" if env_vars else self.file or "")
        return CatalogConfig(name, dict(self.catalogs[key]), source, line=line, env_vars=env_vars)


# -- the file ------------------------------------------------------------------------------------------

def _error(path: str, line: int | None, message: str, **kw: Any) -> UsageError:
    where = f"{path}:{line}" if line is not None else path
    return UsageError(f"{where}: {message}", **kw)


def read_yaml(path: str, *, pyiceberg: bool) -> tuple[Any, dict[Path, int]]:
    """The document of ``path`` with every scalar as a string, and the line of every key.

    ``pyiceberg``: as PyIceberg reads ``.pyiceberg.yaml`` (keys lower-cased, values as written);
    else as icectl reads its own file (keys as written, values as YAML types them, then ``str``)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:  # a folder, no permission, not text
        raise UsageError(f"{path}: cannot read the configuration: {getattr(e, 'strerror', None) or e}") from None
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        lines: dict[Path, int] = {}
        if node is None:
            return None, lines
        return _value(loader, node, (), lines, path, pyiceberg), lines
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        problem = e.problem or e.context or "malformed"
        raise _error(path, mark.line + 1 if mark else None, f"invalid YAML: {problem}") from None
    except yaml.YAMLError as e:
        raise UsageError(f"{path}: invalid YAML: {str(e).splitlines()[0]}") from None
    finally:
        loader.dispose()


def _value(loader: yaml.SafeLoader, node: yaml.Node, path: Path, lines: dict[Path, int], file: str,
           pyiceberg: bool) -> Any:
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        for knode, vnode in node.value:
            if not isinstance(knode, yaml.ScalarNode):
                raise _error(file, knode.start_mark.line + 1, f"a key under {'.'.join(path) or 'the top'} must be "
                             "a plain name")
            key = knode.value.lower() if pyiceberg else str(loader.construct_object(knode))
            if key in out:
                raise _error(file, knode.start_mark.line + 1, f"duplicate key {'.'.join(path + (key,))!r}")
            lines[path + (key,)] = knode.start_mark.line + 1
            out[key] = _value(loader, vnode, path + (key,), lines, file, pyiceberg)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_value(loader, n, path, lines, file, pyiceberg) for n in node.value]
    if pyiceberg:
        return node.value
    v = loader.construct_object(node)
    return "" if v is None else str(v)


def find_config() -> tuple[str | None, Any, dict[Path, int], bool]:
    """(file, document, key lines, read as PyIceberg's) of the first configuration file found."""
    env = os.environ.get("ICECTL_CONFIG")
    if env:
        if not os.path.exists(env):
            raise UsageError(f"ICECTL_CONFIG names {env}, which does not exist")
        return (env, *read_yaml(env, pyiceberg=False), False)
    home = os.path.expanduser("~")
    candidates = [(os.environ.get("PYICEBERG_HOME"), True), (os.path.expanduser(ICECTL_YAML), False),
                  (home, True), (os.getcwd(), True)]
    for place, pyiceberg in candidates:
        if not place:
            continue
        path = os.path.join(place, PYICEBERG_YAML) if pyiceberg else place
        if pyiceberg and not os.path.isfile(path):
            continue
        if not pyiceberg and not os.path.exists(path):
            continue
        data, lines = read_yaml(path, pyiceberg=pyiceberg)
        if pyiceberg and not data:  # PyIceberg skips a file that configures nothing
            continue
        return path, data, lines, pyiceberg
    return None, None, {}, False


# -- PyIceberg's environment variables ---------------------------------------------------------------

def environment_settings(environ: Mapping[str, str]) -> list[tuple[Path, str, str]]:
    """(key path, value, variable) of every ``PYICEBERG_`` variable, as PyIceberg maps it."""
    out = []
    for var in sorted(environ):
        low = var.lower()
        if low.startswith(ENV_PREFIX):
            parts = low[len(ENV_PREFIX):].split("__", 2)
            out.append((tuple(p.replace("__", ".").replace("_", "-") for p in parts), environ[var], var))
    return out


# -- the configuration -------------------------------------------------------------------------------

def load_configuration() -> Configuration:
    path, data, lines, _ = find_config()
    where = path or "the configuration"
    if data is None or data == "":
        data = {}
    if not isinstance(data, dict):
        raise UsageError(f"{where}: the configuration must be a mapping")
    catalogs = data.get("catalog")
    catalogs = {} if catalogs in (None, "") else catalogs
    if not isinstance(catalogs, dict):
        raise _error(where, lines.get(("catalog",)), "'catalog' must be a mapping of catalog names")
    catalogs = {k: ({} if v in (None, "") else v) for k, v in catalogs.items()}
    default = data.get("default-catalog")
    env_vars: dict[str, list[str]] = {}
    for key, value, var in environment_settings(os.environ):
        if key[0] == "default-catalog" and len(key) == 1:
            default = value
        elif key[0] == "catalog":
            if len(key) == 1:
                raise UsageError(f"{var}: 'catalog' must be a mapping of catalog names, not a value",
                                 hint="set one key of a catalog: PYICEBERG_CATALOG__<NAME>__<KEY>")
            name = next((k for k in catalogs if k.lower() == key[1]), key[1])
            if len(key) == 2:
                raise UsageError(f"{var}: catalog {name!r} must be a mapping of properties, not a value",
                                 hint=f"set one key: {var}__<KEY>")
            catalogs.setdefault(name, {})[key[2]] = value
            env_vars.setdefault(name, []).append(var)
    props: dict[str, dict[str, str]] = {}
    for name, entry in catalogs.items():
        if not isinstance(entry, dict):
            raise _error(where, lines.get(("catalog", name)), f"catalog {name!r} must be a mapping of properties")
        for k, v in entry.items():
            if not isinstance(v, str):
                kind = "mapping" if isinstance(v, dict) else "list"
                raise _error(where, lines.get(("catalog", name, k)), f"key 'catalog.{name}.{k}' must be a value, "
                             f"not a {kind}", hint="write nested keys with dots: s3.endpoint: ...")
        props[name] = {str(k): v for k, v in entry.items()}
    if default is not None and not isinstance(default, str):
        raise _error(where, lines.get(("default-catalog",)), "'default-catalog' must be a catalog name")
    return Configuration(path, props, default or None,
                         {name: lines[("catalog", name)] for name in props if ("catalog", name) in lines}, env_vars)


def configured_catalogs() -> tuple[Configuration, list[CatalogConfig]]:
    """The configuration and each catalog it configures (before any flag)."""
    conf = load_configuration()
    configs = [conf.catalog_config(name) for name in conf.catalogs]
    for cfg in configs:
        secrets.remember_properties(cfg.properties)
    return conf, configs


def resolve_catalog_config(name: str | None, *, uri: str | None = None, warehouse: str | None = None,
                           catalog_type: str | None = None) -> CatalogConfig:
    """The catalog a command opens: ``name`` (``--catalog``), else ``$ICECTL_CATALOG``, else
    ``default-catalog``, else the one named ``default``, else the first configured; with
    ``--uri``/``--warehouse`` over its properties; with nothing at all, the local default."""
    conf = load_configuration()
    catalogs = conf.catalogs
    chosen = name or os.environ.get("ICECTL_CATALOG") or conf.default_catalog
    if chosen is None:
        chosen = DEFAULT_CATALOG if DEFAULT_CATALOG in catalogs else (next(iter(catalogs)) if catalogs else None)
    flags = tuple(f for f, v in (("--uri", uri), ("--warehouse", warehouse)) if v)
    if chosen is not None and conf.find(chosen) is not None:
        cfg = conf.catalog_config(chosen)
    elif chosen is not None and (catalogs or chosen != DEFAULT_CATALOG) and uri is None and warehouse is None:
        # A catalog asked for by name must exist: never fall back to the local default silently.
        if conf.file is None:
            raise UsageError(f"catalog {chosen!r} is not configured: no configuration file (ICECTL_CONFIG, "
                             "PYICEBERG_HOME, ~/.icectl.yaml or ~/.pyiceberg.yaml) and no "
                             f"PYICEBERG_CATALOG__{chosen.upper()}__URI variable",
                             hint="add it under 'catalog:' in ~/.icectl.yaml, or pass --uri/--warehouse")
        raise UsageError(f"catalog {chosen!r} is not configured in {conf.file}",
                         hint=("configured catalogs: " + ", ".join(sorted(map(str, catalogs))))
                         if catalogs else "the file configures no catalogs")
    else:
        cfg = CatalogConfig(chosen or DEFAULT_CATALOG, {}, "command line" if flags else LOCAL_DEFAULT_SOURCE)
    cfg.flags = flags
    if uri:
        cfg.properties["uri"] = uri
        # A URI given on the command line says which kind of catalog it is; a scheme icectl cannot
        # open is refused here, before anything is opened or created.
        kind = uri_catalog_type(uri, given_as="--uri")
        if kind is not None:
            cfg.properties["type"] = kind
    if warehouse:
        cfg.properties["warehouse"] = warehouse
    if catalog_type:
        cfg.properties["type"] = catalog_type
    secrets.remember_properties(cfg.properties)
    if (not cfg.properties.get("uri") and not cfg.properties.get("warehouse")
            and cfg.properties.get("type") not in ("hadoop", "rest", "glue")):
        wh = os.path.abspath(LOCAL_WAREHOUSE)
        cfg.properties.setdefault("type", "sql")
        cfg.properties["warehouse"] = wh
        cfg.properties["uri"] = f"sqlite:///{os.path.join(wh, 'icectl_catalog.db')}"
        cfg.local_default = True
    return cfg


# -- the kind of catalog -----------------------------------------------------------------------------

def uri_catalog_type(uri: str, *, given_as: str) -> str | None:
    """``rest``, ``sql`` or ``hive`` by the URI's scheme; None for a bare path (a SQLite file). Any other
    scheme is a usage error that lists the supported ones."""
    m = _SCHEME.match(uri)
    if m is None:
        return None
    scheme = m.group(1).lower()
    if scheme == "jdbc":
        inner = _SCHEME.match(uri[len(m.group(0)):])
        scheme = f"jdbc:{inner.group(1).lower()}" if inner else "jdbc:"
    if scheme in REST_SCHEMES:
        return "rest"
    if scheme in SQL_SCHEMES:
        return "sql"
    if scheme in HIVE_SCHEMES:
        return "hive"
    raise UsageError(f"{given_as} {redact_uri(uri)}: catalog URIs with the scheme {scheme}: are not supported; "
                     f"supported: {SUPPORTED_URIS}",
                     hint="a file-system catalog takes --warehouse DIR; a SQLite file may also be a plain path")


def catalog_kind(props: Mapping[str, str], name: str) -> str:
    """The catalog type: ``type``, else inferred from ``uri`` (by scheme), else ``hadoop``."""
    kind = props.get("type")
    uri = props.get("uri")
    if kind:
        return kind.lower()
    if uri:
        return uri_catalog_type(uri, given_as=f"catalog {name}: uri") or "sql"
    return "hadoop"


__all__ = ["CatalogConfig", "Configuration", "DEFAULT_CATALOG", "LOCAL_WAREHOUSE", "SUPPORTED_URIS",
           "catalog_kind", "configured_catalogs", "environment_settings", "find_config", "load_configuration",
           "read_yaml", "resolve_catalog_config", "uri_catalog_type"]
