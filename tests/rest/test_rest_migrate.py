"""``migrate`` from a SQL catalog to Iceberg Java's REST server with views (tests/migrate_java.py):
20 tables and 2 views Java made, a Java commit to a source table during the run (left in the source,
moved by the re-run); Java reads every table and queries both views from the REST catalog
afterwards, and the source lists none."""
from __future__ import annotations

import pathlib
import sys
import uuid

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from migrate_java import build_source, java_session, prove, write_config  # noqa: E402
from migrate_tables import build_views  # noqa: E402

from icectl.catalog import CatalogConfig, build_catalog  # noqa: E402
from icectl.catalog.sql import SqlCatalog  # noqa: E402
from icectl.io import FileIO  # noqa: E402
from icectl.ops.migrate import apply_migration, plan_migration  # noqa: E402

pytestmark = [pytest.mark.interop]


def test_a_namespace_moves_to_the_rest_server_and_java_reads_it(rest_views_server, tmp_path, monkeypatch):
    pytest.importorskip("pyspark")
    source_db, source_wh = tmp_path / "source.db", tmp_path / "source-wh"
    namespace = "m" + uuid.uuid4().hex[:8]
    idents = build_source(source_db, source_wh, namespace)
    config = tmp_path / "icectl.yaml"
    write_config(config, source_db, source_wh, {"type": "rest", "uri": rest_views_server.url})
    monkeypatch.setenv("ICECTL_CONFIG", str(config))
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    spark = java_session(source_db, source_wh, rest_views_server.module.spark_conf(rest_views_server.url))
    try:
        prove(spark, namespace, idents, "rc")
    finally:
        spark.stop()


def test_a_view_of_the_rest_server_stays_there_when_the_target_would_share_its_file(rest_views_server, tmp_path):
    """Iceberg Java's REST server deletes a dropped view's current metadata file: a SQL target, which
    would point at that file, does not get the view; it stays in the server, its file in place."""
    rest = build_catalog(CatalogConfig("rv", {"type": "rest", "uri": rest_views_server.url}))
    sql = SqlCatalog("dst", f"sqlite:///{tmp_path / 'dst.db'}", str(tmp_path / "wh-dst"), FileIO())
    namespace = "m" + uuid.uuid4().hex[:8]
    rest.create_namespace((namespace,))
    (view,) = build_views(rest, namespace, 1, str(tmp_path / "wh"))
    at = rest.load_view_metadata_location(view)
    plan = apply_migration(rest, sql, plan_migration(rest, sql, [namespace]))
    (entry,) = plan.entries
    assert (entry.kind, entry.outcome) == ("view", "unsupported") and "deletes a view's current" in entry.detail
    assert rest.load_view_metadata_location(view) == at and pathlib.Path(at).exists()
    assert not sql.view_exists(view)
