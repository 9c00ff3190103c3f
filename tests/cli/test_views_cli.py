"""Views on the command line and through the SQL catalog's contract: ``list`` shows them apart from
tables, ``describe`` / ``drop`` / ``validate`` take one, a table command given one says it is a
view, every ``icectl`` line of docs/views.md runs, and the JSON documents have the shapes
docs/views.md gives (Iceberg Java's own views: tests/interop/test_views_java.py)."""
from __future__ import annotations

import io
import json
import pathlib
import re
import shlex
import sqlite3
import sys

import pytest
import yaml

from icectl.catalog import build_catalog, resolve_catalog_config
from icectl.catalog.hadoop import HadoopCatalog
from icectl.catalog.sql import SqlCatalog
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.errors import (AlreadyExistsError, NamespaceNotEmptyError, NoSuchNamespaceError, NoSuchViewError,
                           UnsupportedError)
from icectl.io import FileIO

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # tests/cli for output_shapes

from output_shapes import SHAPES, check_shape  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "validate" / "view_fixtures" / "java" / "ValidViewMetadata.json"
VIEW = "db.daily_events"


def cli(*args: str) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run(list(args), env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


@pytest.fixture
def lab(tmp_path, monkeypatch) -> SqlCatalog:
    """Catalog "lab" (SQLite) with table db.events and view db.daily_events (Java's ValidViewMetadata
    at a metadata file of its own; a copy in the working folder as ./daily_events.metadata.json)."""
    cfg = tmp_path / "icectl.yaml"
    cfg.write_text(yaml.safe_dump({"default-catalog": "lab", "catalog": {"lab": {
        "type": "sql", "uri": f"sqlite:///{tmp_path}/catalog.db", "warehouse": str(tmp_path / "wh")}}}))
    monkeypatch.setenv("ICECTL_CONFIG", str(cfg))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.chdir(tmp_path)
    assert cli("create", "db.events", "--schema", "id:long!, ts:timestamptz", "--yes")[0] == 0
    md = json.loads(FIXTURE.read_text())
    md["location"] = str(tmp_path / "wh" / "db" / "daily_events")
    folder = tmp_path / "wh" / "db" / "daily_events" / "metadata"
    folder.mkdir(parents=True)
    (folder / "00001-4a3c.metadata.json").write_text(json.dumps(md))
    (tmp_path / "daily_events.metadata.json").write_text(json.dumps(md))
    catalog = build_catalog(resolve_catalog_config("lab"))
    catalog.register_view(("db", "daily_events"), str(folder / "00001-4a3c.metadata.json"))
    return catalog


def test_docs_examples_run(lab):
    page = (REPO / "docs" / "views.md").read_text()
    lines = [ln for block in re.findall(r"```sh\n(.*?)```", page, re.S) for ln in block.splitlines()
             if ln.startswith("icectl ")]
    assert len(lines) >= 8
    for line in lines:
        command, _, comment = line.partition("#")
        m = re.search(r"exit (\d+)", comment)
        code, out, err = cli(*shlex.split(command)[1:])
        assert code == (int(m.group(1)) if m else 0), (line, out, err)
    assert not lab.view_exists(("db", "daily_events"))  # the last example dropped it


def test_list_shows_views_apart_from_tables(lab):
    code, out, err = cli("-o", "json", "list")
    assert code == 0, err
    doc = json.loads(out)
    check_shape(doc, SHAPES["list"])
    assert doc["tables"] == ["db.events"] and doc["views"] == [VIEW] and doc["namespaces"] == ["db"]
    code, out, _ = cli("list", "db")
    assert [ln.split() for ln in out.splitlines()[-3:]] == [["namespace", "db"], ["table", "db.events"],
                                                           ["view", VIEW]]
    assert "1 tables, 1 views" in out


def test_describe_a_view(lab):
    code, out, err = cli("-o", "json", "describe", VIEW)
    assert code == 0, err
    d = json.loads(out)
    check_shape(d, SHAPES["describe (a view)"])
    assert d["kind"] == "view" and d["view_uuid"] == "fa6506c3-7681-40c8-86dc-e36561f83385"
    assert d["current_version_id"] == 2 and [v["version_id"] for v in d["versions"]] == [1, 2]
    assert d["sql"] == [{"type": "sql", "dialect": "spark-sql", "sql": "select 1 id, 'abc' data"}]
    assert d["default_catalog"] == "some-catalog" and d["default_namespace"] == []
    assert [f["name"] for f in d["schema"]["fields"]] == ["x", "y", "z"]
    assert d["metadata_location"].endswith("/db/daily_events/metadata/00001-4a3c.metadata.json")
    code, out, err = cli("describe", VIEW)
    assert code == 0, err
    for fact in ("View db.daily_events", "SQL (spark-sql)", "select 1 id, 'abc' data", "some-catalog",
                 "2 (current)", "some-comment"):
        assert fact in out, fact
    code, out, _ = cli("-o", "json", "describe", "./daily_events.metadata.json")  # by path, no catalog
    assert code == 0 and json.loads(out)["view_uuid"] == d["view_uuid"]


def test_a_view_given_to_a_table_command_says_it_is_a_view(lab):
    for args in (["snapshots", VIEW], ["expire", VIEW, "--dry-run"], ["properties", VIEW]):
        code, out, err = cli(*args)
        assert code == 3 and out == ""
        assert err.splitlines()[0] == f"icectl: error: {VIEW} is a view of catalog lab, not a table", err
    code, _, err = cli("snapshots", "db.nothing")
    assert code == 3 and "is a view" not in err


def test_drop_a_view(lab):
    code, out, err = cli("-o", "json", "drop", VIEW, "--dry-run")
    assert code == 0, err
    doc = json.loads(out)
    check_shape(doc, SHAPES["drop (a view)"])
    assert doc["applied"] is False and lab.view_exists(("db", "daily_events"))
    code, out, err = cli("drop", VIEW)  # no terminal, no --yes: refused, nothing changed
    assert code == 6 and lab.view_exists(("db", "daily_events"))
    code, _, err = cli("drop", VIEW, "--purge", "--yes")
    assert code == 2 and "--purge is for tables" in err and lab.view_exists(("db", "daily_events"))
    code, out, err = cli("-o", "json", "drop", VIEW, "--yes")
    assert code == 0 and json.loads(out)["applied"] is True, err
    assert not lab.view_exists(("db", "daily_events")) and lab.list_tables(("db",)) == [("db", "events")]
    assert pathlib.Path(doc["metadata_location"]).exists()  # the files stay
    assert cli("describe", VIEW)[0] == 3


def test_validate_a_view_of_the_catalog(lab, tmp_path):
    code, out, err = cli("-o", "json", "validate", VIEW)
    assert code == 0, err
    assert json.loads(out)["ok"] is True
    bad = json.loads(FIXTURE.read_text())
    bad["versions"][1]["schema-id"] = 7
    path = tmp_path / "wh" / "db" / "daily_events" / "metadata" / "00002-bad.metadata.json"
    path.write_text(json.dumps(bad))
    lab.drop_view(("db", "daily_events"))
    lab.register_view(("db", "daily_events"), str(path))
    code, out, err = cli("-o", "json", "validate", VIEW)
    assert code == 8
    assert [f["code"] for f in json.loads(out)["findings"]] == ["VIEW_VERSION_SCHEMA_MISSING"]
    code, out, err = cli("describe", VIEW)  # still described: the schema is said to be missing
    assert code == 0 and "schema: missing" in out


# -- the SQL catalog's view methods -----------------------------------------------------------------

def test_sql_catalog_view_contract(lab, tmp_path):
    ident = ("db", "daily_events")
    state = lab.load_view(ident)
    assert state.metadata.current_version_id == 2 and lab.list_views(("db",)) == [ident]
    assert lab.list_views() == [ident] and lab.list_tables(("db",)) == [("db", "events")]
    with pytest.raises(AlreadyExistsError):
        lab.register_view(ident, state.metadata_location)
    with pytest.raises(AlreadyExistsError):  # one name for a table or a view
        lab.register_view(("db", "events"), state.metadata_location)
    with pytest.raises(NoSuchViewError):
        lab.load_view(("db", "events"))
    with pytest.raises(NoSuchNamespaceError):
        lab.list_views(("nope",))
    with pytest.raises(NamespaceNotEmptyError, match="1 views"):
        lab.drop_table(("db", "events"))
        lab.drop_namespace(("db",))
    lab.drop_view(ident)
    with pytest.raises(NoSuchViewError):
        lab.drop_view(ident)
    assert lab.register_view(("db", "again"), state.metadata_location).metadata == state.metadata
    row = sqlite3.connect(tmp_path / "catalog.db").execute(
        "SELECT catalog_name, table_namespace, table_name, metadata_location, iceberg_type FROM iceberg_tables "
        "WHERE table_name = 'again'").fetchone()
    assert row == ("lab", "db", "again", state.metadata_location, "VIEW")  # Java's JdbcViewOperations row


def test_java_v0_layout_has_no_views(tmp_path):
    db = tmp_path / "v0.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE iceberg_tables (catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT "
                "NULL, table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), previous_metadata_location "
                "VARCHAR(1000), PRIMARY KEY (catalog_name, table_namespace, table_name))")
    con.commit()
    c = SqlCatalog("v0", f"sqlite:///{db}", str(tmp_path / "wh"), FileIO({}))
    c.create_namespace(("db",))
    assert c.list_views(("db",)) == [] and not c.view_exists(("db", "v"))
    with pytest.raises(UnsupportedError, match="V0 layout"):
        c.register_view(("db", "v"), str(FIXTURE))


def test_a_catalog_without_views(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    c = HadoopCatalog("fs", str(tmp_path), FileIO({}))
    assert not c.supports_views and not c.view_exists(("db", "v"))
    with pytest.raises(UnsupportedError, match="^the file-system catalog fs has no views$"):
        c.list_views(("db",))
    with pytest.raises(UnsupportedError):
        c.register_view(("db", "v"), str(FIXTURE))
    assert cli("--warehouse", str(tmp_path), "create", "db.t", "--schema", "id:long", "--yes")[0] == 0
    code, out, _ = cli("--warehouse", str(tmp_path), "-o", "json", "list")
    assert code == 0 and json.loads(out)["views"] == [] and json.loads(out)["tables"] == ["db.t"]
