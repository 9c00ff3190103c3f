"""``icectl catalogs``: which catalogs are configured, and which one a command would open."""
from __future__ import annotations

import typer

from icectl import secrets
from icectl.cli.context import Env
from icectl.cli.output import render
from icectl.cli.session import catalog_config
from icectl.cli.views.catalogs import CatalogsReport, ConfiguredCatalog
from icectl.errors import UsageError
from icectl.ops.catalogs import CatalogConfig, configured_catalogs, redact_uri


def _row(cfg: CatalogConfig, *, resolved: bool) -> ConfiguredCatalog:
    try:
        kind = cfg.kind
    except UsageError:  # a uri of a scheme icectl cannot open: the catalog is listed all the same
        kind = "unknown"
    uri = cfg.properties.get("uri")
    return ConfiguredCatalog(cfg.name, kind, secrets.redact(redact_uri(uri)) if uri else None,
                             cfg.properties.get("warehouse") or None, cfg.origin, resolved,
                             secrets.redact_properties(cfg.properties))


def catalogs(ctx: typer.Context) -> None:
    """Show the configured catalogs, the one a command would open, and where each came from.

    Catalogs come from the configuration file and PYICEBERG_CATALOG__* variables; a source is a
    file and line, the variables, a flag or the local default. Secrets are masked. Exit 2 when the
    options name a catalog that is not configured."""
    env: Env = ctx.obj
    conf, configured = configured_catalogs()
    problem: UsageError | None = None
    try:
        chosen: CatalogConfig | None = catalog_config(env)
    except UsageError as e:
        chosen, problem = None, e
    key = conf.find(chosen.name) if chosen is not None else None
    rows = [_row(chosen if (chosen is not None and c.name == key) else c, resolved=c.name == key)
            for c in configured]
    if chosen is not None and key is None:  # the local default, or --uri/--warehouse alone
        rows.append(_row(chosen, resolved=True))
    render(env, CatalogsReport(conf.file, chosen.name if chosen is not None else None, rows))
    if problem is not None:
        raise problem
