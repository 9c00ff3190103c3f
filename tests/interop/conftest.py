"""Fixtures for interop tests against Apache Iceberg Java 1.10.2 (the oracle, in local Spark).

Every test module in tests/interop must set
    pytestmark = [pytest.mark.interop, pytest.mark.spark]
(tests/conftest.py adds both markers at collection too, as a safety net).

The oracle module is ../shared/oracle/iceberg_java.py relative to the repository root, or
$ICECTL_ORACLE_DIR (which .ci/run exports). Its jar cache is $ICEBERG_ORACLE_CACHE (.ci/run: .cache/
in the repo). Nothing heavy is imported at module level: pyspark is loaded by the `spark` fixture.

Session-scoped fixtures (one Spark session and one build of each table per pytest session; a
table is built the first time a test asks for it):

  oracle_warehouse -> pathlib.Path
      Warehouse folder of catalog `hc` (Iceberg HadoopCatalog): table hc.db.t lives in
      <oracle_warehouse>/db/t, metadata in <...>/db/t/metadata/vN.metadata.json + version-hint.text.
  jdbc_catalog_db -> pathlib.Path
      SQLite file of catalog `jc` (Iceberg JdbcCatalog, jdbc:sqlite:<path>; catalog_name 'jc' in
      its `iceberg_tables` table). It is created by Iceberg when the catalog is first used.
  jdbc_warehouse -> pathlib.Path
      Warehouse folder of catalog `jc` (separate from hc's, so names cannot collide).
  spark -> pyspark.sql.SparkSession
      The oracle session: catalogs `hc` and `jc`, Iceberg SQL extensions (CALL hc.system.*),
      spark.sql.session.timeZone=UTC, catalog caching disabled (cache-enabled=false) so that Spark
      re-reads metadata and sees commits made by icectl. `java_tables.java_table(spark, name)`
      gives the org.apache.iceberg.Table through py4j. It works even when another test module
      launched the JVM first with an oracle session of its own (stopped since): the SQLite JDBC
      driver is then added at run time by java_tables.ensure_jdbc_driver(). A SparkSession of
      another module that is still ACTIVE would be reused by getOrCreate() with its own catalogs;
      test_tables_are_in_the_session_warehouse catches that.
  v1_table, v2_table, v3_table, v2_unpartitioned_table -> java_tables.JavaTable
      hc.db.v1_table, hc.db.v2_table, hc.db.v3_table, hc.db.v2_unpartitioned, written as described
      in java_tables' docstring, with the expected answers Spark gives (snapshots, refs, live data
      and delete files, row count, sorted rows, rows per branch/tag, v3 row lineage).
      These tables are SHARED by the whole session: never change them (no CALL procedures, no
      icectl writes). To change a table, build a private one with `java_table_factory`.

Function-scoped:
  java_table_factory -> callable(kind, catalog="hc", namespace="db") -> JavaTable
      Builds a fresh table of `kind` ("v1", "v2", "v3", "v2_unpartitioned") under a new unique
      name (e.g. hc.db.v2_3) and returns its JavaTable; free to change. After a change, call
      java_tables.read_expected(spark, t.name) for Spark's new answers.
"""
from __future__ import annotations

import itertools
import os
import pathlib
import sys
from typing import Callable

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # works with any --import-mode

import java_tables  # noqa: E402  (imports nothing heavy)
from java_tables import JavaTable  # noqa: E402


@pytest.fixture(scope="session")
def _oracle_base(tmp_path_factory) -> pathlib.Path:
    return tmp_path_factory.mktemp("iceberg-oracle")


@pytest.fixture(scope="session")
def oracle_warehouse(_oracle_base) -> pathlib.Path:
    p = _oracle_base / "warehouse"
    p.mkdir(exist_ok=True)
    return p


@pytest.fixture(scope="session")
def jdbc_warehouse(_oracle_base) -> pathlib.Path:
    p = _oracle_base / "jdbc-warehouse"
    p.mkdir(exist_ok=True)
    return p


@pytest.fixture(scope="session")
def jdbc_catalog_db(_oracle_base) -> pathlib.Path:
    return _oracle_base / "catalog.db"


@pytest.fixture(scope="session")
def spark(oracle_warehouse, jdbc_warehouse, jdbc_catalog_db):
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    oracle = java_tables.oracle_module()
    jdbc_uri = f"jdbc:sqlite:{jdbc_catalog_db}"
    session = oracle.session(
        str(oracle_warehouse),
        jdbc_uri=jdbc_uri,
        extra_conf={
            "spark.sql.session.timeZone": "UTC",
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.sql.catalog.hc.cache-enabled": "false",
            "spark.sql.catalog.jc.cache-enabled": "false",
            "spark.sql.catalog.jc.warehouse": str(jdbc_warehouse),
        },
    )
    # A test elsewhere (e.g. tests/engine) may have launched the JVM with other jars first.
    java_tables.ensure_jdbc_driver(session, jdbc_uri)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def v1_table(spark) -> JavaTable:
    return java_tables.build_java_table(spark, "v1")


@pytest.fixture(scope="session")
def v2_table(spark) -> JavaTable:
    return java_tables.build_java_table(spark, "v2")


@pytest.fixture(scope="session")
def v3_table(spark) -> JavaTable:
    return java_tables.build_java_table(spark, "v3")


@pytest.fixture(scope="session")
def v2_unpartitioned_table(spark) -> JavaTable:
    return java_tables.build_java_table(spark, "v2_unpartitioned")


_counter = itertools.count(1)


@pytest.fixture
def java_table_factory(spark) -> Callable[..., JavaTable]:
    def make(kind: str, catalog: str = "hc", namespace: str = "db") -> JavaTable:
        if kind not in java_tables.BUILDERS:
            raise ValueError(f"unknown kind {kind!r}: one of {sorted(java_tables.BUILDERS)}")
        return java_tables.build_java_table(spark, kind, f"{catalog}.{namespace}.{kind}_{next(_counter)}")

    return make
