"""What ``icectl catalogs`` prints: the configured catalogs and the one a command would open."""
from __future__ import annotations

from dataclasses import dataclass

from icectl.cli.context import Env
from icectl.cli.output import print_table, say, text_renderer


@dataclass
class ConfiguredCatalog:
    """One catalog: what it is, where it is, where its configuration came from (secrets masked)."""

    name: str
    type: str
    uri: str | None  # a password in it masked
    warehouse: str | None
    source: str  # FILE:LINE, the PYICEBERG_ variables, --uri/--warehouse, or the local default
    resolved: bool  # the catalog a command run with the same options opens
    properties: dict[str, str]  # secret values masked


@dataclass
class CatalogsReport:
    """The configuration file read (if any), the catalog commands resolve to, and every catalog."""

    config_file: str | None
    resolved: str | None  # null when the options name a catalog that cannot be resolved
    catalogs: list[ConfiguredCatalog]


@text_renderer(CatalogsReport)
def _catalogs_text(env: Env, r: CatalogsReport) -> None:
    say(env, f"configuration file: {r.config_file}" if r.config_file else
        "configuration file: none (ICECTL_CONFIG, PYICEBERG_HOME, ~/.icectl.yaml, ~/.pyiceberg.yaml, "
        "./.pyiceberg.yaml)")
    rows = [["*" if c.resolved else "", c.name, c.type, c.uri or "-", c.warehouse or "-", c.source]
            for c in r.catalogs]
    print_table(env, ["", "name", "type", "uri", "warehouse", "source"], rows, empty="no catalogs",
                ids={"name", "type"}, paths={"uri", "warehouse"})
    chosen = next((c for c in r.catalogs if c.resolved), None)
    if chosen is not None:
        say(env, f"commands use catalog {chosen.name}, from {chosen.source}")
