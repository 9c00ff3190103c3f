"""Iceberg Java's views and icectl, on a JDBC (SQLite) catalog and on the REST server's catalog:
views made with Spark SQL ``CREATE VIEW`` are listed and described with Java's SQL and schema, a
view icectl drops is gone for Java, a view icectl registers again is read by Java
(tests/java_views.py). And the view metadata files of Java's and PyIceberg's tests
(tests/validate/view_fixtures) are judged by icectl's validator as Java's parser judges them."""
from __future__ import annotations

import io
import json
import pathlib
import sys
import uuid

import pytest
import yaml

from icectl.catalog import build_catalog, resolve_catalog_config
from icectl.catalog.sql import SqlCatalog
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.io import FileIO
from icectl.validate.findings import Collector
from icectl.validate.view import check_view_metadata

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/ for java_views

import java_tables  # noqa: E402
from java_views import round_trip  # noqa: E402

pytestmark = [pytest.mark.interop, pytest.mark.spark]

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "validate" / "view_fixtures"


def cli_for(config: pathlib.Path, catalog: str):
    def cli(*args: str) -> tuple[int, str, str]:
        env = Env(stdout=io.StringIO(), stderr=io.StringIO())
        code = run(["-c", catalog, *args], env)
        return code, env.stdout.getvalue(), env.stderr.getvalue()
    return cli


@pytest.fixture
def config(tmp_path, monkeypatch) -> pathlib.Path:
    cfg = tmp_path / "icectl.yaml"
    monkeypatch.setenv("ICECTL_CONFIG", str(cfg))
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    return cfg


def test_jdbc_catalog_views(spark, tmp_path, config):
    db, wh = tmp_path / "views.db", tmp_path / "wh"
    # icectl makes the tables first (with Java's V1 iceberg_type column); Java's JdbcCatalog then
    # detects V1 and holds views, without initialize's lock on the SQLite file.
    SqlCatalog("jv", f"sqlite:///{db}", str(wh), FileIO({})).create_namespace(("seed",))
    jdbc_uri = f"jdbc:sqlite:{db}"
    java_tables.ensure_jdbc_driver(spark, jdbc_uri)
    for k, v in {"spark.sql.catalog.jv": "org.apache.iceberg.spark.SparkCatalog", "spark.sql.catalog.jv.type": "jdbc",
                 "spark.sql.catalog.jv.uri": jdbc_uri, "spark.sql.catalog.jv.warehouse": str(wh),
                 "spark.sql.catalog.jv.jdbc.schema-version": "V1", "spark.sql.catalog.jv.cache-enabled": "false",
                 "spark.sql.catalog.jv.jdbc.init-catalog-tables": "false"}.items():
        spark.conf.set(k, v)
    config.write_text(yaml.safe_dump({"catalog": {"jv": {"type": "sql", "uri": f"sqlite:///{db}",
                                                         "warehouse": str(wh)}}}))
    round_trip(spark, cli_for(config, "jv"), lambda: build_catalog(resolve_catalog_config("jv")), "jv", "vdb",
               keeps_file=True)


@pytest.fixture(scope="module")
def rest_views_server(tmp_path_factory):
    """A REST server whose JdbcCatalog holds views (jdbc.schema-version=V1: the view routes)."""
    oracle = java_tables.oracle_module()
    sys.path.insert(0, str(pathlib.Path(oracle.__file__).parent))
    import rest_server

    url, stop = rest_server.start(str(tmp_path_factory.mktemp("rest-views")), props={"jdbc.schema-version": "V1"})
    try:
        yield url, rest_server
    finally:
        stop()


def test_rest_catalog_views(spark, rest_views_server, config):
    url, module = rest_views_server
    conf = module.spark_conf(url, "rv")
    # The session's JVM is running: the REST client's jars (the shaded HttpClient 5) are added to
    # the class loader that loaded Iceberg, as java_tables.ensure_jdbc_driver adds the JDBC driver.
    jvm = spark._jvm
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader().loadClass(
        "org.apache.iceberg.jdbc.JdbcCatalog").getClassLoader()
    for jar in conf.pop("spark.jars").split(","):
        loader.addURL(jvm.java.io.File(jar).toURI().toURL())
    for k, v in conf.items():
        spark.conf.set(k, v)
    config.write_text(yaml.safe_dump({"catalog": {"rv": {"type": "rest", "uri": url}}}))
    catalog = build_catalog(resolve_catalog_config("rv"))
    assert catalog.supports_views
    ns = "r" + uuid.uuid4().hex[:8]
    # Iceberg 1.10's REST spec has no register-view: register_view creates the view from the file.
    round_trip(spark, cli_for(config, "rv"), lambda: build_catalog(resolve_catalog_config("rv")), "rv", ns,
               keeps_file=False)


def _java_reads(spark, text: str) -> tuple[bool, str]:
    """Whether Iceberg Java reads this view metadata: ViewMetadataParser parses it, its current
    version and schema exist, and ViewMetadata.Builder would take its versions (one SQL per
    dialect, compared lower-cased as the builder compares them)."""
    jvm = spark._jvm
    try:
        md = jvm.org.apache.iceberg.view.ViewMetadataParser.fromJson(text)
        md.currentVersion()
        md.schema()
    except Exception as e:  # py4j.protocol.Py4JJavaError: Java refused it
        return False, str(e).splitlines()[0]
    for v in md.versions():
        dialects = [r.dialect().lower() for r in v.representations() if r.type() == "sql"]
        if len(dialects) != len(set(dialects)):
            return False, "Invalid view version: Cannot add multiple queries for one dialect"
    return True, ""


@pytest.mark.parametrize("name", sorted(str(p.relative_to(FIXTURES)) for p in FIXTURES.rglob("*.json")))
def test_fixtures_validate_as_java_reads_them(spark, name):
    text = (FIXTURES / name).read_text()
    java_ok, why = _java_reads(spark, text)
    out = Collector()
    md = check_view_metadata(text.encode(), name, out)
    errors = [f for f in out.findings if f.severity.value == "error"]
    assert (not errors) == java_ok, (name, why, [(f.code, f.message) for f in errors])
    if md is not None and java_ok:
        java = spark._jvm.org.apache.iceberg.view.ViewMetadataParser.fromJson(text)
        assert md.view_uuid == str(java.uuid()) and md.current_version_id == java.currentVersionId()
        assert md.current_version.sql_for("spark") == (java.currentVersion().representations()[0].sql()
                                                       if md.current_version.sql_for("spark") else None)
        # icectl's written JSON is read by Java as the same view.
        again = spark._jvm.org.apache.iceberg.view.ViewMetadataParser.fromJson(json.dumps(md.to_json()))
        assert again.uuid() == java.uuid() and again.schema().toString() == java.schema().toString()
        assert again.currentVersion().toString() == java.currentVersion().toString()
