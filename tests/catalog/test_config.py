"""Catalog configuration: which file is read, which catalog is chosen, flags, the local default,
and the errors a bad configuration gives (through the CLI: exit code and a one-line message)."""
from __future__ import annotations

import io
import json
import os

import pytest
import yaml

from icectl.catalog import build_catalog, resolve_catalog_config
from icectl.catalog.hadoop import HadoopCatalog
from icectl.catalog.sql import SqlCatalog
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.errors import UsageError


def cli(args: list[str]) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run(args, env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("icectl: error:")]


def write_yaml(path, data) -> str:
    path.write_text(yaml.safe_dump(data))
    return str(path)


@pytest.fixture
def home(tmp_path, monkeypatch):
    """An empty HOME, no ICECTL_CONFIG/ICECTL_CATALOG, and the working directory in tmp_path/work."""
    h = tmp_path / "home"
    h.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.chdir(work)
    return h


def sql_catalog(tmp_path, name: str) -> dict[str, str]:
    return {"type": "sql", "uri": f"sqlite:///{tmp_path / (name + '.db')}", "warehouse": str(tmp_path / f"wh-{name}")}


# -- which file --------------------------------------------------------------------------------

def test_icectl_config_beats_icectl_yaml_beats_pyiceberg_yaml(home, tmp_path, monkeypatch):
    write_yaml(home / ".pyiceberg.yaml", {"catalog": {"from_pyiceberg": sql_catalog(tmp_path, "p")}})
    cfg = resolve_catalog_config(None)
    assert cfg.name == "from_pyiceberg"
    assert cfg.source == str(home / ".pyiceberg.yaml")

    write_yaml(home / ".icectl.yaml", {"catalog": {"from_icectl": sql_catalog(tmp_path, "i")}})
    cfg = resolve_catalog_config(None)
    assert cfg.name == "from_icectl"
    assert cfg.source == str(home / ".icectl.yaml")

    env_file = write_yaml(tmp_path / "explicit.yaml", {"catalog": {"from_env": sql_catalog(tmp_path, "e")}})
    monkeypatch.setenv("ICECTL_CONFIG", env_file)
    cfg = resolve_catalog_config(None)
    assert cfg.name == "from_env"
    assert cfg.source == env_file
    # Files are not merged: a catalog of a lower-precedence file is not visible.
    with pytest.raises(UsageError):
        resolve_catalog_config("from_icectl")


def test_precedence_through_the_cli(home, tmp_path, monkeypatch):
    write_yaml(home / ".pyiceberg.yaml", {"catalog": {"p": sql_catalog(tmp_path, "p")}})
    write_yaml(home / ".icectl.yaml", {"catalog": {"i": sql_catalog(tmp_path, "i")}})
    code, out, err = cli(["create", "--yes", "db.t", "--schema", "id:long", "--output", "json"])
    assert code == 0, err
    assert json.loads(out)["location"] == str(tmp_path / "wh-i" / "db" / "t")
    assert (tmp_path / "i.db").exists() and not (tmp_path / "p.db").exists()

    monkeypatch.setenv("ICECTL_CONFIG", write_yaml(tmp_path / "x.yaml", {"catalog": {"x": sql_catalog(tmp_path, "x")}}))
    code, out, err = cli(["create", "--yes", "db.u", "--schema", "id:long", "--output", "json"])
    assert code == 0, err
    code, out, err = cli(["list", "--output", "json"])
    assert code == 0, err
    assert json.loads(out) == {"catalog": "x", "namespaces": ["db"], "tables": ["db.u"], "views": []}
    assert (tmp_path / "x.db").exists()


def test_icectl_config_naming_a_missing_file_is_a_usage_error(home, tmp_path, monkeypatch):
    monkeypatch.setenv("ICECTL_CONFIG", str(tmp_path / "nope.yaml"))
    code, out, err = cli(["list"])
    assert code == 2
    lines = error_lines(err)
    assert len(lines) == 1 and "nope.yaml" in lines[0]


def test_icectl_config_naming_a_directory_is_a_usage_error(home, tmp_path, monkeypatch):
    monkeypatch.setenv("ICECTL_CONFIG", str(tmp_path))
    code, out, err = cli(["list"])
    assert code == 2, err
    lines = error_lines(err)
    assert len(lines) == 1 and str(tmp_path) in lines[0]


# -- which catalog -----------------------------------------------------------------------------

def test_default_catalog_selection(home, tmp_path, monkeypatch):
    cats = {"a": sql_catalog(tmp_path, "a"), "b": sql_catalog(tmp_path, "b")}
    path = home / ".icectl.yaml"
    # A single catalog (or the first) when nothing says otherwise.
    write_yaml(path, {"catalog": {"a": cats["a"]}})
    assert resolve_catalog_config(None).name == "a"
    write_yaml(path, {"catalog": cats})
    assert resolve_catalog_config(None).name == "a"
    # A catalog named "default" wins over the first.
    write_yaml(path, {"catalog": {**cats, "default": sql_catalog(tmp_path, "d")}})
    assert resolve_catalog_config(None).name == "default"
    # default-catalog wins over both.
    write_yaml(path, {"default-catalog": "b", "catalog": {**cats, "default": sql_catalog(tmp_path, "d")}})
    assert resolve_catalog_config(None).name == "b"
    # ICECTL_CATALOG beats default-catalog; an explicit name beats both.
    monkeypatch.setenv("ICECTL_CATALOG", "default")
    assert resolve_catalog_config(None).name == "default"
    assert resolve_catalog_config("a").name == "a"


def test_catalog_flag_selects_and_properties_are_strings(home, tmp_path):
    write_yaml(home / ".icectl.yaml", {"catalog": {
        "a": sql_catalog(tmp_path, "a"),
        "b": {**sql_catalog(tmp_path, "b"), "s3.path-style-access": True, "commit.retries": 3}}})
    cfg = resolve_catalog_config("b")
    assert cfg.properties["s3.path-style-access"] == "True"
    assert cfg.properties["commit.retries"] == "3"
    code, out, err = cli(["--catalog", "b", "create", "--yes", "db.t", "--schema", "id:long", "--output", "json"])
    assert code == 0, err
    assert json.loads(out)["location"] == str(tmp_path / "wh-b" / "db" / "t")
    code, out, err = cli(["list", "-c", "b", "--output", "json"])
    assert json.loads(out)["tables"] == ["db.t"]
    code, out, err = cli(["list", "-c", "a", "--output", "json"])
    assert code == 3 and json.loads(err)["error"]["message"] == \
        f"SQL catalog database {tmp_path / 'a.db'} does not exist"


def test_unknown_catalog_is_a_usage_error(home, tmp_path):
    write_yaml(home / ".icectl.yaml", {"catalog": {"a": sql_catalog(tmp_path, "a"), "b": sql_catalog(tmp_path, "b")}})
    code, out, err = cli(["--catalog", "nope", "list"])
    assert code == 2
    assert out == ""
    lines = error_lines(err)
    assert len(lines) == 1
    assert "nope" in lines[0] and ".icectl.yaml" in lines[0]
    assert "a, b" in err  # the hint lists what is configured

    code, out, err = cli(["list", "--catalog", "nope", "--output", "json"])
    assert code == 2
    e = json.loads(err.strip())["error"]
    assert e["type"] == "UsageError" and e["exit_code"] == 2 and "nope" in e["message"]


def test_unknown_catalog_without_any_configuration_is_a_usage_error(home, tmp_path):
    """``--catalog prod`` with no configuration file must not silently open ./warehouse."""
    code, out, err = cli(["--catalog", "prod", "create", "--yes", "db.t", "--schema", "id:long"])
    assert code == 2, err
    lines = error_lines(err)
    assert len(lines) == 1 and "prod" in lines[0]
    assert "None" not in lines[0]
    assert not (tmp_path / "work" / "warehouse").exists()


def test_catalog_named_default_without_configuration_is_the_local_default(home, tmp_path):
    code, out, err = cli(["--catalog", "default", "list", "--output", "json"])
    assert code == 0, err
    assert json.loads(out)["catalog"] == "default"
    # Reading an empty local default writes nothing; the first create makes the database.
    assert not (tmp_path / "work" / "warehouse" / "icectl_catalog.db").exists()
    code, out, err = cli(["--catalog", "default", "create", "--yes", "db.t", "--schema", "id:long"])
    assert code == 0, err
    assert (tmp_path / "work" / "warehouse" / "icectl_catalog.db").is_file()


def test_catalog_named_default_must_exist_when_catalogs_are_configured(home, tmp_path):
    write_yaml(home / ".icectl.yaml", {"catalog": {"a": sql_catalog(tmp_path, "a")}})
    code, out, err = cli(["--catalog", "default", "list"])
    assert code == 2
    assert "'default'" in error_lines(err)[0]


def test_unknown_default_catalog_is_a_usage_error(home, tmp_path):
    write_yaml(home / ".icectl.yaml", {"default-catalog": "gone", "catalog": {"a": sql_catalog(tmp_path, "a")}})
    code, out, err = cli(["list"])
    assert code == 2
    assert "gone" in error_lines(err)[0]


def test_icectl_catalog_env_var(home, tmp_path, monkeypatch):
    write_yaml(home / ".icectl.yaml", {"catalog": {"a": sql_catalog(tmp_path, "a"), "b": sql_catalog(tmp_path, "b")}})
    monkeypatch.setenv("ICECTL_CATALOG", "b")
    code, out, err = cli(["create", "--yes", "db.t", "--schema", "id:long", "--output", "json"])
    assert code == 0, err
    code, out, err = cli(["list", "--output", "json"])
    assert code == 0, err
    assert json.loads(out)["catalog"] == "b"


# -- flags ---------------------------------------------------------------------------------------

def test_uri_and_warehouse_flags_override_the_file(home, tmp_path):
    write_yaml(home / ".icectl.yaml", {"catalog": {"a": sql_catalog(tmp_path, "a")}})
    other_db = tmp_path / "other.db"
    other_wh = tmp_path / "other-wh"
    cfg = resolve_catalog_config(None, uri=f"sqlite:///{other_db}", warehouse=str(other_wh))
    assert cfg.name == "a"
    assert cfg.properties["uri"] == f"sqlite:///{other_db}"
    assert cfg.properties["warehouse"] == str(other_wh)
    assert cfg.properties["type"] == "sql"

    code, out, err = cli(["--uri", f"sqlite:///{other_db}", "--warehouse", str(other_wh), "create", "--yes", "db.t",
                          "--schema", "id:long", "--output", "json"])
    assert code == 0, err
    assert json.loads(out)["location"] == str(other_wh / "db" / "t")
    assert other_db.exists() and not (tmp_path / "a.db").exists()
    # Flags after the command work too.
    code, out, err = cli(["list", "--uri", f"sqlite:///{other_db}", "--output", "json"])
    assert code == 0, err
    assert json.loads(out)["tables"] == ["db.t"]


def test_warehouse_flag_alone_opens_a_file_system_catalog(home, tmp_path):
    wh = tmp_path / "fs-wh"
    code, out, err = cli(["--warehouse", str(wh), "create", "--yes", "db.t", "--schema", "id:long", "--output", "json"])
    assert code == 0, err
    assert json.loads(out)["metadata_location"] == str(wh / "db" / "t" / "metadata" / "v1.metadata.json")
    assert (wh / "db" / "t" / "metadata" / "version-hint.text").read_text().strip() == "1"
    assert isinstance(build_catalog(resolve_catalog_config(None, warehouse=str(wh))), HadoopCatalog)


def test_uri_flag_alone_opens_a_sql_catalog(home, tmp_path):
    db = tmp_path / "only-uri.db"
    cfg = resolve_catalog_config(None, uri=f"sqlite:///{db}")
    cat = build_catalog(cfg)
    assert isinstance(cat, SqlCatalog)
    assert cat.warehouse is None
    # Without a warehouse, create needs --location.
    code, out, err = cli(["--uri", f"sqlite:///{db}", "create", "--yes", "db.t", "--schema", "id:long"])
    assert code == 2
    assert "warehouse" in error_lines(err)[0]
    code, out, err = cli(["--uri", f"sqlite:///{db}", "create", "--yes", "db.t", "--schema", "id:long",
                          "--location", str(tmp_path / "somewhere"), "--output", "json"])
    assert code == 0, err
    assert json.loads(out)["location"] == str(tmp_path / "somewhere")


def test_catalog_flag_with_uri_needs_no_configuration(home, tmp_path):
    db = tmp_path / "named.db"
    code, out, err = cli(["--catalog", "named", "--uri", f"sqlite:///{db}", "--warehouse", str(tmp_path / "w"),
                          "create", "--yes", "db.t", "--schema", "id:long"])
    assert code == 0, err
    import sqlite3

    rows = sqlite3.connect(db).execute("SELECT catalog_name, table_namespace, table_name FROM iceberg_tables").fetchall()
    assert rows == [("named", "db", "t")]


# -- the local default ---------------------------------------------------------------------------

def test_no_configuration_means_sqlite_catalog_in_dot_warehouse(home, tmp_path):
    work = tmp_path / "work"
    cfg = resolve_catalog_config(None)
    assert cfg.name == "default"
    assert cfg.properties["type"] == "sql"
    assert cfg.properties["warehouse"] == str(work / "warehouse")
    assert cfg.properties["uri"] == f"sqlite:///{work / 'warehouse' / 'icectl_catalog.db'}"

    code, out, err = cli(["create", "--yes", "db.t", "--schema", "id:long!, name:string", "--output", "json"])
    assert code == 0, err
    created = json.loads(out)
    assert created["location"] == str(work / "warehouse" / "db" / "t")
    db = work / "warehouse" / "icectl_catalog.db"
    assert db.is_file()
    import sqlite3

    rows = sqlite3.connect(db).execute(
        "SELECT catalog_name, table_namespace, table_name, metadata_location FROM iceberg_tables").fetchall()
    assert rows == [("default", "db", "t", created["metadata_location"])]
    assert os.path.isfile(created["metadata_location"])
    code, out, err = cli(["describe", "db.t", "--output", "json"])
    assert code == 0, err
    assert json.loads(out)["metadata_location"] == created["metadata_location"]


def test_empty_configuration_file_means_the_local_default(home, tmp_path):
    (home / ".icectl.yaml").write_text("")
    cfg = resolve_catalog_config(None)
    assert cfg.properties["uri"].endswith("/work/warehouse/icectl_catalog.db")


def test_catalog_without_uri_or_warehouse_gets_the_local_default_location(home, tmp_path):
    write_yaml(home / ".icectl.yaml", {"catalog": {"bare": {}}})
    cfg = resolve_catalog_config(None)
    assert cfg.name == "bare"
    assert cfg.properties["uri"].endswith("/work/warehouse/icectl_catalog.db")


# -- bad configuration ---------------------------------------------------------------------------

def test_malformed_yaml_is_a_usage_error_naming_the_file(home, tmp_path):
    path = home / ".icectl.yaml"
    path.write_text("catalog:\n  a: {uri: [unclosed\n  b: : :\n")
    code, out, err = cli(["list"])
    assert code == 2
    lines = error_lines(err)
    assert len(lines) == 1
    assert str(path) in lines[0] and "YAML" in lines[0]
    assert "Traceback" not in err


def test_malformed_yaml_in_icectl_config(home, tmp_path, monkeypatch):
    path = tmp_path / "bad.yaml"
    path.write_text("\tcatalog: x\n")
    monkeypatch.setenv("ICECTL_CONFIG", str(path))
    code, out, err = cli(["describe", "db.t", "--output", "json"])
    assert code == 2
    e = json.loads(err.strip())["error"]
    assert str(path) in e["message"]


@pytest.mark.parametrize("text", ["- just\n- a list\n", "catalog: [a, b]\n", "catalog:\n  a: [1, 2]\n"])
def test_wrong_shape_is_a_usage_error(home, text):
    (home / ".icectl.yaml").write_text(text)
    code, out, err = cli(["list"])
    assert code == 2, err
    assert str(home / ".icectl.yaml") in error_lines(err)[0]


def test_unknown_catalog_type_is_a_usage_error(home, tmp_path):
    # (glue was the unknown type here until icectl had a Glue catalog; DynamoDB is Java's, not icectl's)
    write_yaml(home / ".icectl.yaml", {"catalog": {"r": {"type": "dynamodb", "uri": "http://127.0.0.1:1"}}})
    code, out, err = cli(["list"])
    assert code == 2
    assert "dynamodb" in error_lines(err)[0]


def test_rest_catalog_that_refuses_the_connection_is_one_line_naming_the_uri(home, tmp_path):
    write_yaml(home / ".icectl.yaml", {"catalog": {"r": {"type": "rest", "uri": "http://127.0.0.1:1"}}})
    code, out, err = cli(["list"])
    assert code == 10, err
    assert error_lines(err) == ["icectl: error: cannot reach the REST catalog r at http://127.0.0.1:1: connection refused"]
