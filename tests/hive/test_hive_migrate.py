"""``migrate`` from a SQL catalog to a Hive Metastore (tests/migrate_java.py): 20 tables and 2 views
Java made (their uuid and history kept), a Java commit to a source table during the run (left in the
source, moved by the re-run); Iceberg Java's HiveCatalog reads every table and queries both views
afterwards, and the source lists none."""
from __future__ import annotations

import pathlib
import sys
import uuid

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from migrate_java import build_source, java_session, prove, write_config  # noqa: E402

pytestmark = [pytest.mark.hive, pytest.mark.spark, pytest.mark.interop]


def test_a_namespace_moves_to_the_metastore_and_java_reads_it(hms, tmp_path, monkeypatch):
    pytest.importorskip("pyspark")
    source_db, source_wh = tmp_path / "source.db", tmp_path / "source-wh"
    namespace = "m" + uuid.uuid4().hex[:8]
    idents = build_source(source_db, source_wh, namespace)
    config = tmp_path / "icectl.yaml"
    write_config(config, source_db, source_wh, {"type": "hive", "uri": hms.uri, "warehouse": str(hms.warehouse)})
    monkeypatch.setenv("ICECTL_CONFIG", str(config))
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    spark = java_session(source_db, source_wh, hms.module.spark_conf(hms.uri, str(hms.warehouse)))
    try:
        prove(spark, namespace, idents, "hive")
    finally:
        spark.stop()
