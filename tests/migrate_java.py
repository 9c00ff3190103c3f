"""The ``migrate`` proof with Iceberg Java (tests/rest/test_rest_migrate.py, tests/hive/test_hive_migrate.py):
a SQL catalog ``jc`` (SQLite, Java's JdbcCatalog layout, shared with Spark's ``jc``) holds a
namespace of 20 tables and 2 views (made by Iceberg Java with Spark SQL ``CREATE VIEW``, one replaced
once: two versions) that icectl moves to a target catalog Spark also has. During the first run
Iceberg Java commits to one source table between the target's check and the re-read of the source's
location (the ``verified`` step): that table is reported ``changed`` and stays in the source with
Java's commit; the re-run moves it. Then Java reads every table from the target (its rows, its tag),
commits to one there, queries both views, and neither Java nor icectl finds a table or a view left
in the source. A target that points at the view's metadata file (Hive) keeps its uuid and history; a
REST server without register-view makes its own (the report says the history was not carried)."""
from __future__ import annotations

import io
import json
import pathlib
import sys
import uuid
from typing import Any

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from interop.java_tables import ensure_jdbc_driver, oracle_module  # noqa: E402
from java_views import java_view  # noqa: E402
from migrate_tables import build_namespace, where  # noqa: E402

from icectl.catalog import build_catalog, resolve_catalog_config  # noqa: E402
from icectl.cli.context import Env  # noqa: E402
from icectl.cli.main import run  # noqa: E402
from icectl.ops.migrate import VERIFIED, apply_migration, plan_migration  # noqa: E402

N = 20
# The source catalog's name (icectl's config, the SQL catalog's catalog_name and Spark's catalog): a
# new one per build_source, since getOrCreate hands back the test session's Spark, whose catalogs
# (`jc` among them) earlier tests loaded on other databases and without view support.
SRC = "jc"
CHANGED = 5  # the table Java commits to during the first run
VIEW_ROWS = {"v0": [(1, "one")], "v1": [(2, "two"), (3, "three")]}


def write_config(path: pathlib.Path, source_db: pathlib.Path, source_wh: pathlib.Path,
                 target: dict[str, str]) -> None:
    path.write_text(yaml.safe_dump({"catalog": {
        SRC: {"uri": f"sqlite:///{source_db}", "warehouse": str(source_wh)}, "dst": target}}))


def java_session(source_db: pathlib.Path, source_wh: pathlib.Path, conf: dict[str, str]) -> Any:
    """Spark with Iceberg Java: ``jc`` the JdbcCatalog on the source's SQLite file, plus ``conf``
    (the target catalog). The source's tables must exist first (no catalog-table initialisation:
    its read lock would fail icectl's commits)."""
    jdbc_uri = f"jdbc:sqlite:{source_db}"
    c = f"spark.sql.catalog.{SRC}"
    spark = oracle_module().session(str(source_wh), jdbc_uri=jdbc_uri, extra_conf={
        "spark.sql.session.timeZone": "UTC", "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
        c: "org.apache.iceberg.spark.SparkCatalog", f"{c}.type": "jdbc", f"{c}.uri": jdbc_uri,
        f"{c}.cache-enabled": "false", f"{c}.jdbc.init-catalog-tables": "false",
        f"{c}.jdbc.schema-version": "V1",  # Java's JdbcCatalog then holds views
        f"{c}.warehouse": str(source_wh), **conf})
    # The target's Spark catalog (`rc`, the Hive one) may also be loaded already, on another server:
    # load every catalog again from this conf (the callers stop this session when done).
    spark._jsparkSession.sessionState().catalogManager().reset()
    ensure_jdbc_driver(spark, jdbc_uri)
    return spark


def build_source(source_db: pathlib.Path, source_wh: pathlib.Path, namespace: str) -> list[tuple[str, ...]]:
    from icectl.catalog.sql import SqlCatalog
    from icectl.io import FileIO

    global SRC
    SRC = "jm" + uuid.uuid4().hex[:8]
    return build_namespace(SqlCatalog(SRC, f"sqlite:///{source_db}", str(source_wh), FileIO()), namespace, N)


def make_views(spark: Any, namespace: str) -> list[tuple[str, ...]]:
    """Two views in the source made by Iceberg Java (Spark SQL); ``v1`` replaced once (two versions)."""
    spark.sql(f"CREATE VIEW {SRC}.{namespace}.v0 AS SELECT 1 AS id, 'one' AS name")
    spark.sql(f"CREATE VIEW {SRC}.{namespace}.v1 (id, name) AS SELECT 2 AS id, 'two' AS name")
    spark.sql(f"CREATE OR REPLACE VIEW {SRC}.{namespace}.v1 (id COMMENT 'the id', name) COMMENT 'two rows' AS "
              f"SELECT id, name FROM VALUES (2, 'two'), (3, 'three') AS t(id, name)")
    return [(namespace, "v0"), (namespace, "v1")]


def cli(*args: str) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
    code = run(list(args), env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def prove(spark: Any, namespace: str, idents: list[tuple[str, ...]], java_target: str) -> None:
    """The whole proof, on catalogs ``jc`` and ``dst`` of the configuration in ``ICECTL_CONFIG``;
    ``java_target`` is Spark's name for the target catalog."""
    source = build_catalog(resolve_catalog_config(SRC))
    target = build_catalog(resolve_catalog_config("dst"))
    before = where(source, target, idents)
    views = make_views(spark, namespace)
    java_before = {v: java_view(spark, SRC, ".".join(v)) for v in views}
    assert java_before[views[1]]["history"] == 2
    changed = idents[CHANGED]
    java_commit: dict[str, str] = {}

    def commit_in_source(entry, step):
        if step == VERIFIED and entry.ident == changed:
            spark.sql(f"INSERT INTO {SRC}.{namespace}.{changed[1]} VALUES (999, 'java', TIMESTAMP '2026-01-03 00:00:00')")
            java_commit["at"] = source.load_metadata_location(changed)

    code, out, err = cli("-o", "json", "migrate", "--from", SRC, "--to", "dst", namespace, "--dry-run")
    assert code == 0, err
    assert json.loads(out)["counts"] == {"migrate": N + 2}
    plan = apply_migration(source, target, plan_migration(source, target, [namespace]), progress=commit_in_source)
    assert plan.counts() == {"changed": 1, "migrated": N + 1}, plan.counts()
    for e in plan.entries:
        if e.kind == "view":  # a target without register-view says the history was not carried
            assert ("not carried" in (e.detail or "")) is (not target.registers_view_files), (e.name, e.detail)
    entry = next(e for e in plan.entries if e.ident == changed)
    assert entry.outcome == "changed" and entry.source_metadata_location == java_commit["at"] != before[changed][0]
    assert where(source, target, [changed]) == {changed: (java_commit["at"], None)}, "Java's commit was lost"

    code, out, err = cli("-o", "json", "migrate", "--from", SRC, "--to", "dst", namespace, "--yes")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["counts"] == {"done": N + 1, "migrated": 1}
    expected = {i: (None, before[i][0]) for i in idents}
    expected[changed] = (None, java_commit["at"])
    assert where(source, target, idents) == expected
    assert source.list_tables((namespace,)) == [] and source.list_views((namespace,)) == []
    assert spark.sql(f"SHOW TABLES IN {SRC}.{namespace}").collect() == []
    assert spark.sql(f"SHOW VIEWS IN {SRC}.{namespace}").collect() == []

    for view in views:
        name = f"{java_target}.{namespace}.{view[1]}"
        rows = sorted(tuple(r) for r in spark.sql(f"SELECT id, name FROM {name}").collect())
        assert rows == VIEW_ROWS[view[1]], f"{name}: {rows}"
        was, now = java_before[view], java_view(spark, java_target, ".".join(view))
        kept = ["sql", "columns", "default_namespace", "default_catalog"]
        assert {k: now[k] for k in kept} == {k: was[k] for k in kept}, name
        if target.registers_view_files:  # the same file: uuid and history
            assert (now["uuid"], now["history"], now["metadata_location"]) == \
                (was["uuid"], was["history"], was["metadata_location"]), name
        else:
            assert now["history"] == 1 and now["metadata_location"] != was["metadata_location"], name

    for n, ident in enumerate(idents):
        name = f"{java_target}.{namespace}.{ident[1]}"
        rows = sorted(tuple(r) for r in spark.sql(f"SELECT id, name FROM {name}").collect())
        want = [(n * 10, "a"), (n * 10 + 1, "b"), (n * 10 + 2, None)] + ([(999, "java")] if ident == changed else [])
        assert rows == sorted(want, key=lambda r: r[0]), f"{name}: {rows}"
        tags = {r[0] for r in spark.sql(f"SELECT name FROM {name}.refs WHERE type = 'TAG'").collect()}
        assert tags == ({"v1"} if n % 3 == 0 else set()), f"{name}: tags {tags}"
    spark.sql(f"INSERT INTO {java_target}.{namespace}.t00 VALUES (7, 'after', TIMESTAMP '2026-01-04 00:00:00')")
    assert spark.sql(f"SELECT count(*) FROM {java_target}.{namespace}.t00").collect()[0][0] == 4

    code, out, err = cli("-o", "json", "migrate", "--from", SRC, "--to", "dst", namespace, "--yes")
    assert code == 0 and json.loads(out)["counts"] == {"done": N + 2}, err
