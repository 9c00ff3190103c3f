"""What ``describe`` and ``drop`` print for an Iceberg view (a catalog's view, not an output view):
its versions, the SQL of each dialect, the schema, default catalog and namespace, properties."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from icectl.cli.context import Env
from icectl.cli.output import SpecJson, fmt_ts, print_kv, print_table, say, text_renderer
from icectl.cli.views.common import print_schema
from icectl.errors import IcectlError
from icectl.ops.catalogs import LoadedView
from icectl.ops.evolve.views import ViewDropPlan
from icectl.spec.types import Schema
from icectl.spec.view import ViewVersion


@dataclass
class Representation:
    type: str  # sql (another type is shown as the file has it)
    dialect: str | None
    sql: str | None


@dataclass
class VersionView:
    """One version of the view (spec: "Versions")."""

    version_id: int
    timestamp_ms: int
    schema_id: int
    current: bool
    default_catalog: str | None  # null: the catalog that holds the view
    default_namespace: list[str]
    summary: dict[str, str]
    representations: list[Representation]


@dataclass
class VersionLogEntry:
    timestamp_ms: int
    version_id: int


@dataclass
class ViewDescription:
    """``describe NS.VIEW``: the view's identity, its current version (SQL per dialect, schema,
    default catalog and namespace), every version, the version log and the properties.
    ``schema`` is null when the current version's schema is missing from the metadata."""

    name: str
    kind: str  # "view": tells a view's description from a table's
    catalog: str
    view_uuid: str
    format_version: int
    location: str
    metadata_location: str
    current_version_id: int
    default_catalog: str | None
    default_namespace: list[str]
    sql: list[Representation]
    schema: SpecJson | None
    properties: dict[str, str]
    versions: list[VersionView]
    version_log: list[VersionLogEntry]
    parsed_schema: Schema | None = field(default=None, repr=False)


def _representations(v: ViewVersion) -> list[Representation]:
    return [Representation(r.type, r.dialect, r.sql) for r in v.representations]


def view_description(view: LoadedView) -> ViewDescription:
    md = view.state.metadata
    current = md.version(md.current_version_id)
    try:
        schema: Schema | None = md.schema
    except IcectlError:  # the current version or its schema is missing: validate says which
        schema = None
    versions = [VersionView(v.version_id, v.timestamp_ms, v.schema_id, v.version_id == md.current_version_id,
                            v.default_catalog, list(v.default_namespace), dict(v.summary), _representations(v))
                for v in md.versions]
    return ViewDescription(
        name=view.name, kind="view", catalog=view.catalog, view_uuid=md.view_uuid, format_version=md.format_version,
        location=md.location, metadata_location=view.state.metadata_location,
        current_version_id=md.current_version_id,
        default_catalog=current.default_catalog if current else None,
        default_namespace=list(current.default_namespace) if current else [],
        sql=_representations(current) if current else [], schema=schema.to_json() if schema else None,
        properties=dict(md.properties), versions=versions,
        version_log=[VersionLogEntry(e.timestamp_ms, e.version_id) for e in md.version_log], parsed_schema=schema)


@text_renderer(ViewDescription)
def _view_text(env: Env, d: ViewDescription) -> None:
    current = next((v for v in d.versions if v.current), None)
    print_kv(env, [
        ("uuid", d.view_uuid), ("location", d.location), ("metadata", d.metadata_location),
        ("format version", d.format_version),
        ("current version", d.current_version_id if current else f"{d.current_version_id} (missing)"),
        ("created", fmt_ts(current.timestamp_ms) if current else "?"),
        ("default catalog", d.default_catalog or "(the catalog that holds the view)"),
        ("default namespace", ".".join(d.default_namespace) or "(none)"),
        *([("engine", " ".join(x for x in (current.summary.get("engine-name"), current.summary.get("engine-version"))
                               if x))] if current and current.summary.get("engine-name") else []),
    ], title=f"View {d.name}")
    for r in d.sql:
        say(env)
        say(env, (f"SQL ({r.dialect})" if r.dialect else f"representation of type {r.type}", "bold"))
        for line in (r.sql or "").splitlines() or [""]:
            say(env, "  " + line)
    say(env)
    if d.parsed_schema is not None:
        print_schema(env, d.parsed_schema)
    else:
        say(env, ("schema: missing from the view's schemas (icectl validate names the problem)", "red"))
    if d.properties:
        say(env)
        print_kv(env, sorted(d.properties.items()), title="Properties")
    say(env)
    log = {e.version_id: e.timestamp_ms for e in d.version_log}  # the last time each was made current
    rows = [[f"{v.version_id}{' (current)' if v.current else ''}", fmt_ts(v.timestamp_ms), str(v.schema_id),
             ", ".join(r.dialect or r.type for r in v.representations), fmt_ts(log[v.version_id])
             if v.version_id in log else ""] for v in d.versions]
    print_table(env, ["version", "created", "schema", "dialects", "last made current"], rows,
                title=f"Versions ({len(d.versions)}; version log {len(d.version_log)} entries)")


@dataclass
class ViewDropReport:
    """``drop NS.VIEW``: the catalog entry goes; the metadata files stay (SQL, Hive; a REST server
    decides for itself)."""

    view: str
    kind: str  # "view"
    catalog: str
    location: str
    metadata_location: str
    dry_run: bool
    applied: bool
    commits: list[dict[str, Any]] = field(default_factory=list)  # a drop commits no metadata
    catalog_kind: str = field(default="", repr=False)


def view_drop_report(plan: ViewDropPlan, *, dry_run: bool, applied: bool) -> ViewDropReport:
    return ViewDropReport(plan.view, "view", plan.catalog, plan.location, plan.metadata_location, dry_run, applied,
                          catalog_kind=plan.catalog_kind)


@text_renderer(ViewDropReport)
def _view_drop_text(env: Env, r: ViewDropReport) -> None:
    files = ("the REST server decides whether its metadata files stay" if r.catalog_kind == "rest"
             else f"its metadata files stay under {r.location}")
    if r.applied:
        say(env, f"dropped view {r.view} from catalog {r.catalog}; {files}")
    else:
        say(env, f"would drop view {r.view} from catalog {r.catalog} (metadata {r.metadata_location}); {files}")
