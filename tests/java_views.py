"""Iceberg Java's views, seen through py4j, and the round trip every view catalog test makes: Spark
SQL creates (and replaces) a view; icectl lists and describes it with Java's SQL and schema,
validates it, refuses it as a table; icectl drops it and Java no longer sees it; icectl registers
its metadata file again and Java reads the view's rows. Used by tests/interop/test_views_java.py
(REST, JDBC) and tests/hive/test_hive_views.py (Hive Metastore)."""
from __future__ import annotations

import json
from typing import Any, Callable

from icectl.io import FileIO
from icectl.table.metadata_io import read_metadata_bytes

Cli = Callable[..., "tuple[int, str, str]"]


def iceberg_catalog(spark, catalog: str) -> Any:
    """The org.apache.iceberg.catalog.Catalog behind Spark catalog ``catalog`` (a ViewCatalog)."""
    return spark._jsparkSession.sessionState().catalogManager().catalog(catalog).icebergCatalog()


def java_view(spark, catalog: str, name: str) -> dict[str, Any]:
    """What Iceberg Java reads of view ``name``: uuid, current version, its SQL per dialect,
    default namespace and catalog, schema columns, history length, and the metadata file."""
    jvm = spark._jvm
    view = iceberg_catalog(spark, catalog).loadView(jvm.org.apache.iceberg.catalog.TableIdentifier.parse(name))
    v = view.currentVersion()
    reps = [r for r in v.representations()]
    return {
        "uuid": str(view.uuid()),
        "current_version_id": v.versionId(),
        "sql": {r.dialect(): r.sql() for r in reps},
        "default_namespace": list(v.defaultNamespace().levels()),
        "default_catalog": v.defaultCatalog(),
        "columns": [(c.fieldId(), c.name(), str(c.type()), c.doc()) for c in view.schema().columns()],
        "history": view.history().size(),
        "metadata_location": view.operations().current().metadataFileLocation(),
        "properties": dict(view.properties()),
    }


def java_view_exists(spark, catalog: str, name: str) -> bool:
    jvm = spark._jvm
    return iceberg_catalog(spark, catalog).viewExists(jvm.org.apache.iceberg.catalog.TableIdentifier.parse(name))


def round_trip(spark, cli: Cli, icectl_catalog: Callable[[], Any], spark_catalog: str, ns: str, *,
               keeps_file: bool) -> None:
    """The whole proof on one catalog (``ns`` a fresh namespace). ``keeps_file``: whether
    ``register_view`` points the catalog at the dropped view's file itself (SQL, Hive), or a
    REST server without register-view makes a view of its own from the file."""
    view, table = f"{ns}.big_events", f"{ns}.events"
    s = spark_catalog
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {s}.{ns}")
    spark.sql(f"CREATE TABLE {s}.{table} (id bigint, kind string, amount double) USING iceberg")
    spark.sql(f"INSERT INTO {s}.{table} VALUES (1, 'a', 1.5), (2, 'b', 2.5), (3, 'c', 3.5)")
    spark.sql(f"CREATE VIEW {s}.{view} (id COMMENT 'event id', kind) COMMENT 'the big ones' AS "
              f"SELECT id, kind FROM {s}.{table} WHERE amount > 2")
    spark.sql(f"CREATE OR REPLACE VIEW {s}.{view} (id COMMENT 'event id', kind, amount) COMMENT 'the big ones' AS "
              f"SELECT id, kind, amount FROM {s}.{table} WHERE amount > 3")
    java = java_view(spark, s, view)
    assert java["current_version_id"] == 2 and "spark" in java["sql"]

    # icectl lists the view apart from the table.
    code, out, err = cli("-o", "json", "list", ns)
    assert code == 0, err
    listing = json.loads(out)
    assert listing["views"] == [view] and listing["tables"] == [table], listing

    # ... and describes it with Java's SQL and schema.
    code, out, err = cli("-o", "json", "describe", view)
    assert code == 0, err
    d = json.loads(out)
    assert d["kind"] == "view" and d["view_uuid"] == java["uuid"]
    assert d["metadata_location"] == java["metadata_location"]
    assert d["current_version_id"] == java["current_version_id"] == 2
    assert {r["dialect"]: r["sql"] for r in d["sql"]} == java["sql"]
    assert [(f["id"], f["name"], f["type"], f.get("doc")) for f in d["schema"]["fields"]] == java["columns"]
    assert java["columns"][0][3] == "event id"
    assert d["default_namespace"] == java["default_namespace"] and d["default_catalog"] == java["default_catalog"]
    assert len(d["version_log"]) == java["history"] and [v["version_id"] for v in d["versions"]] == [1, 2]
    assert d["properties"].get("comment") == java["properties"].get("comment") == "the big ones"
    code, out, err = cli("describe", view)
    assert code == 0 and java["sql"]["spark"].splitlines()[0] in out, err

    code, out, err = cli("-o", "json", "validate", view)
    assert code == 0 and json.loads(out)["findings"] == [], out + err
    code, _, err = cli("snapshots", view)
    assert code == 3 and "is a view" in err.splitlines()[0]

    # A copy of the current metadata file (plain JSON), to register again after the drop.
    io = FileIO({})
    copy = java["metadata_location"].rsplit("/", 1)[0] + "/00099-copy.metadata.json"
    io.write(copy, read_metadata_bytes(io, java["metadata_location"]))

    # icectl drops the view: Java no longer sees it, and the table is still there.
    code, _, err = cli("drop", view, "--yes")
    assert code == 0, err
    assert not java_view_exists(spark, s, view)
    assert [r[1] for r in spark.sql(f"SHOW VIEWS IN {s}.{ns}").collect()] == []
    assert spark.sql(f"SELECT count(*) FROM {s}.{table}").collect()[0][0] == 3
    # icectl's SQL and Hive catalogs keep the view's files; Iceberg Java's catalog behind the REST
    # server deletes the current metadata file (CatalogUtil.dropViewMetadata, gc.enabled).
    assert io.exists(java["metadata_location"]) == keeps_file

    # register_view (what migrate calls) brings it back from the file; Java reads its rows.
    state = icectl_catalog().register_view(tuple(view.split(".")), copy)
    again = java_view(spark, s, view)
    assert again["sql"] == java["sql"] and again["columns"] == java["columns"]
    assert again["properties"].get("comment") == "the big ones"
    if keeps_file:
        assert state.metadata_location == again["metadata_location"] == copy
        assert again["uuid"] == java["uuid"] and again["history"] == java["history"]
    else:
        assert again["metadata_location"] not in (copy, java["metadata_location"]) and again["history"] == 1
    assert sorted(tuple(r) for r in spark.sql(f"SELECT * FROM {s}.{view}").collect()) == [(3, "c", 3.5)]
