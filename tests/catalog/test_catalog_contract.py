"""The catalog contract (namespaces, list, rename, drop, register) on the SQL and file-system
catalogs; tests/rest/test_rest_catalog.py runs the same checks on the REST catalog."""
from __future__ import annotations

import pytest

from catalog_contract import check_catalog_contract, check_register_overwrite
from icectl.catalog.hadoop import HadoopCatalog
from icectl.catalog.sql import SqlCatalog
from icectl.errors import (AlreadyExistsError, NamespaceNotEmptyError, NoSuchNamespaceError, UnsupportedError)
from icectl.io import FileIO
from helpers import create_table

SCHEMA = "id:long!, name:string"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def sql(request, tmp_path):
    if request.param == "sqlite":
        uri = f"sqlite:///{tmp_path / 'cat.db'}"
    else:
        uri = request.getfixturevalue("postgres_server").uri(request.getfixturevalue("postgres_db"))
    return SqlCatalog("cat", uri, str(tmp_path / "wh"), FileIO())


def make(catalog):
    return lambda ident: create_table(catalog, ident, schema_text=SCHEMA).metadata_location


def test_sql_catalog_contract(sql):
    check_catalog_contract(sql, ("lake",), make(sql))


def test_sql_register_overwrite(sql):
    check_register_overwrite(sql, ("db", "t"), make(sql), ("db", "other"))


def test_sql_namespace_properties_are_jdbc_catalogs(sql, tmp_path):
    """As JdbcCatalog: the ``exists`` marker is not a property, and the location defaults to
    the warehouse folder of the namespace."""
    sql.create_namespace(("db",), {"comment": "raw events"})
    assert sql.load_namespace_properties(("db",)) == {"comment": "raw events",
                                                      "location": str(tmp_path / "wh" / "db")}
    # A namespace only implied by a table (written by another engine) exists too.
    create_table(sql, ("implied", "t"), schema_text=SCHEMA)
    sql._exec("DELETE FROM iceberg_namespace_properties WHERE namespace = ?", ("implied",))
    assert ("implied",) in sql.list_namespaces()
    assert sql.load_namespace_properties(("implied",))["location"].endswith("/wh/implied")


def test_sql_drop_table_keeps_the_files_even_when_purge_is_asked(sql, tmp_path):
    t = create_table(sql, ("db", "t"), schema_text=SCHEMA)
    sql.drop_table(("db", "t"), purge=True)
    assert (tmp_path / "wh" / "db" / "t" / "metadata").exists()
    assert sql.register_table(("db", "t"), t.metadata_location).metadata_location == t.metadata_location


def test_file_system_catalog_namespaces(tmp_path):
    wh = tmp_path / "wh"
    wh.mkdir()
    cat = HadoopCatalog("fs", str(wh), FileIO())
    cat.create_namespace(("lake",))
    cat.create_namespace(("lake", "raw"))
    with pytest.raises(AlreadyExistsError):
        cat.create_namespace(("lake",))
    with pytest.raises(UnsupportedError):
        cat.create_namespace(("other",), {"owner": "x"})
    create_table(cat, ("lake", "raw", "t"), schema_text=SCHEMA)
    assert cat.list_namespaces(()) == [("lake",)]
    assert cat.list_namespaces(("lake",)) == [("lake", "raw")]
    assert cat.list_namespaces(("lake", "raw")) == []  # a table is not a namespace
    assert cat.list_namespaces() == [("lake",), ("lake", "raw")]
    with pytest.raises(NoSuchNamespaceError):
        cat.list_namespaces(("lake", "raw", "t"))
    assert cat.list_tables(("lake", "raw")) == [("lake", "raw", "t")]
    assert cat.load_namespace_properties(("lake",)) == {"location": str(wh / "lake")}
    with pytest.raises(NamespaceNotEmptyError):
        cat.drop_namespace(("lake", "raw"))
    for refused in (lambda: cat.drop_table(("lake", "raw", "t")),
                    lambda: cat.rename_table(("lake", "raw", "t"), ("lake", "t")),
                    lambda: cat.update_namespace_properties(("lake",), updates={"a": "b"})):
        with pytest.raises(UnsupportedError):
            refused()
    cat.create_namespace(("empty",))
    cat.drop_namespace(("empty",))
    assert not (wh / "empty").exists()
    with pytest.raises(NoSuchNamespaceError):
        cat.drop_namespace(("empty",))
