"""Iceberg Java's views on the Hive Metastore and icectl: a view made with Spark SQL ``CREATE VIEW``
on Java's HiveCatalog is listed and described by icectl with Java's SQL and schema, a view icectl
drops is gone for Java, and a view icectl registers (a VIRTUAL_VIEW with table_type ICEBERG-VIEW
pointing at the file) is read by Java (tests/java_views.py)."""
from __future__ import annotations

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/ for java_views

from java_views import round_trip  # noqa: E402
from migrate_tables import build_views  # noqa: E402

from icectl.errors import AlreadyExistsError  # noqa: E402

pytestmark = [pytest.mark.hive, pytest.mark.spark, pytest.mark.interop]


@pytest.fixture(scope="module")
def spark(hms):
    sys.path.insert(0, str(hms.module.__file__).rsplit("/", 1)[0])
    import iceberg_java

    s = iceberg_java.session(str(hms.warehouse), extra_conf=hms.module.spark_conf(hms.uri, str(hms.warehouse)))
    yield s
    s.stop()


def test_hive_metastore_views(hive_env, spark):
    env = hive_env
    round_trip(spark, env.cli, env.catalog, "hive", env.database, keeps_file=True)
    # The Hive table of the registered view is what HiveViewOperations makes.
    tbl = env.catalog().client.call(lambda c: c.get_table(env.database, "big_events"))
    assert tbl.tableType == "VIRTUAL_VIEW" and tbl.parameters["table_type"] == "ICEBERG-VIEW"
    assert "amount > 3" in tbl.viewOriginalText and [c.name for c in tbl.sd.cols] == ["id", "kind", "amount"]


def test_a_view_registered_where_the_name_is_taken_is_refused_as_already_existing(hive_env, tmp_path):
    """The metastore's AlreadyExistsException under the table lock is icectl's AlreadyExistsError
    (what migrate relies on when a create's answer was lost and its retry finds the view)."""
    catalog = hive_env.catalog()
    catalog.create_namespace((hive_env.database,))
    (view,) = build_views(catalog, hive_env.database, 1, str(tmp_path / "wh"))
    with pytest.raises(AlreadyExistsError, match="already exists"):
        catalog.register_view(view, catalog.load_view_metadata_location(view))
