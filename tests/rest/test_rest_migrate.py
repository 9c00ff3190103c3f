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
