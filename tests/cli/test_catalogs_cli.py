"""``icectl catalogs``, ``--verbose``'s catalog line, ``list`` on an empty catalog, and ``--uri``
by scheme (an unknown scheme is refused and nothing is created)."""
from __future__ import annotations

import io
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

from icectl import secrets
from icectl.cli.context import Env
from icectl.cli.main import run

SECRETS = ("CLIENT-SECRET-9f8e7d", "tkn-5a4b3c2d1e", "s3-secret-AbCdEf123", "pg-pass-778899")


def cli(*args: str) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run(list(args), env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


@pytest.fixture
def home(tmp_path, monkeypatch):
    for var in list(os.environ):
        if var.lower().startswith("pyiceberg_") or var in ("ICECTL_CONFIG", "ICECTL_CATALOG"):
            monkeypatch.delenv(var)
    (tmp_path / "home").mkdir()
    (tmp_path / "work").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path / "work")
    return tmp_path / "home"


CONFIG = f"""\
default-catalog: lake
catalog:
  lake:
    type: sql
    uri: sqlite:///{{root}}/lake.db
    warehouse: {{root}}/wh
    s3.secret-access-key: {SECRETS[2]}
  rest:
    uri: https://rest.example.com/api
    credential: client-id:{SECRETS[0]}
    token: {SECRETS[1]}
  pg:
    uri: postgresql://iceberg:{SECRETS[3]}@db.example.com/lake
"""


def configure(home) -> str:
    """The configuration above, and catalog lake's (empty) database."""
    path = home / ".icectl.yaml"
    path.write_text(CONFIG.format(root=home.parent))
    for args in (("namespace", "create", "scratch", "--yes"), ("namespace", "drop", "scratch", "--yes")):
        assert cli(*args)[0] == 0
    return str(path)


def test_catalogs_text_names_each_catalog_and_its_source(home):
    path = configure(home)
    code, out, err = cli("catalogs")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"configuration file: {path}"
    rows = {line.split()[1] if line.startswith("*") else line.split()[0]: line for line in lines[2:5]}
    assert rows["lake"].startswith("*") and f"{path}:3" in rows["lake"]
    assert f"sqlite:///{home.parent}/lake.db" in rows["lake"] and " sql " in rows["lake"]
    assert " rest " in rows["rest"] and f"{path}:8" in rows["rest"]
    assert "postgresql://iceberg:***@db.example.com/lake" in rows["pg"]
    assert lines[-1] == f"commands use catalog lake, from {path}:3"


def test_catalogs_json_with_a_flag_and_an_environment_variable(home, monkeypatch):
    path = configure(home)
    monkeypatch.setenv("PYICEBERG_CATALOG__REST__WAREHOUSE", "analytics")
    code, out, err = cli("-o", "json", "-c", "rest", "catalogs")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["config_file"] == path and doc["resolved"] == "rest"
    by_name = {c["name"]: c for c in doc["catalogs"]}
    assert list(by_name) == ["lake", "rest", "pg"]
    assert by_name["rest"] == {"name": "rest", "type": "rest", "uri": "https://rest.example.com/api",
                               "warehouse": "analytics", "source": f"{path}:8, PYICEBERG_CATALOG__REST__WAREHOUSE",
                               "resolved": True,
                               "properties": {"uri": "https://rest.example.com/api", "credential": "****",
                                              "token": "****", "warehouse": "analytics"}}
    assert by_name["lake"]["resolved"] is False and by_name["lake"]["properties"]["s3.secret-access-key"] == "****"
    # --uri alone (no configured catalog of that name): the catalog the flags make.
    code, out, err = cli("-o", "json", "-c", "adhoc", "--warehouse", str(home.parent / "fs"), "catalogs")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["resolved"] == "adhoc"
    assert doc["catalogs"][-1] == {"name": "adhoc", "type": "hadoop", "uri": None,
                                   "warehouse": str(home.parent / "fs"), "source": "--warehouse", "resolved": True,
                                   "properties": {"warehouse": str(home.parent / "fs")}}


def test_catalogs_without_configuration_is_the_local_default(home):
    code, out, err = cli("-o", "json", "catalogs")
    assert code == 0, err
    work = home.parent / "work"
    assert json.loads(out) == {"config_file": None, "resolved": "default", "catalogs": [
        {"name": "default", "type": "sql", "uri": f"sqlite:///{work}/warehouse/icectl_catalog.db",
         "warehouse": f"{work}/warehouse", "source": "local default: nothing configured, SQLite in ./warehouse",
         "resolved": True, "properties": {"type": "sql", "warehouse": f"{work}/warehouse",
                                          "uri": f"sqlite:///{work}/warehouse/icectl_catalog.db"}}]}
    assert not (work / "warehouse").exists()


def test_catalogs_naming_an_unknown_catalog_shows_them_and_exits_2(home):
    configure(home)
    code, out, err = cli("-c", "nope", "-o", "json", "catalogs")
    assert code == 2
    doc = json.loads(out)
    assert doc["resolved"] is None and [c["name"] for c in doc["catalogs"]] == ["lake", "rest", "pg"]
    assert "nope" in json.loads(err)["error"]["message"]


@pytest.mark.parametrize("args", [("catalogs",), ("-o", "json", "catalogs"), ("-v", "list"), ("-c", "pg", "catalogs"),
                                  ("-v", "-c", "pg", "-o", "json", "catalogs"), ("-v", "-c", "rest", "catalogs")])
def test_secrets_never_appear(home, args, monkeypatch):
    configure(home)
    monkeypatch.setattr(secrets, "_VALUES", set())  # nothing remembered by earlier tests: this run must learn them
    monkeypatch.setattr(secrets, "_PATTERN", None)
    code, out, err = cli(*args)
    assert code == 0, err
    for s in SECRETS:
        assert s not in out and s not in err


def test_verbose_names_the_catalog_and_its_source_in_one_line(home, monkeypatch):
    path = configure(home)
    code, out, err = cli("-v", "list", "-o", "json")
    assert code == 0, err
    assert json.loads(out) == {"catalog": "lake", "namespaces": [], "tables": [], "views": []}
    assert err.splitlines() == [f"icectl: catalog lake (sql, sqlite:///{home.parent}/lake.db, warehouse "
                                f"{home.parent}/wh) from {path}:3"]
    monkeypatch.setenv("PYICEBERG_CATALOG__ENVCAT__URI", f"sqlite:///{home.parent}/env.db")
    code, out, err = cli("--verbose", "-c", "envcat", "namespace", "create", "x", "--yes")
    assert code == 0, err
    assert [line for line in err.splitlines() if line.startswith("icectl: catalog")] == [
        f"icectl: catalog envcat (sql, sqlite:///{home.parent}/env.db) from PYICEBERG_CATALOG__ENVCAT__URI"]
    code, out, err = cli("list")  # without --verbose: nothing on stderr
    assert err == ""


def test_list_on_an_empty_catalog_says_which_catalog_and_from_where(home, monkeypatch):
    code, out, err = cli("list")
    assert code == 0, err
    work = home.parent / "work"
    assert out == (f"no namespaces or tables in catalog default (sql, sqlite:///{work}/warehouse/icectl_catalog.db, "
                   f"warehouse {work}/warehouse) from local default: nothing configured, SQLite in ./warehouse\n")
    pyhome = home.parent / "etc-iceberg"
    pyhome.mkdir()
    (pyhome / ".pyiceberg.yaml").write_text(f"catalog:\n  prod:\n    type: hadoop\n    warehouse: {pyhome}/wh\n")
    (pyhome / "wh").mkdir()
    monkeypatch.setenv("PYICEBERG_HOME", str(pyhome))
    code, out, err = cli("list")
    assert code == 0, err
    assert out == (f"no namespaces or tables in catalog prod (hadoop, warehouse {pyhome}/wh) from "
                   f"{pyhome}/.pyiceberg.yaml:2\n")


# -- --uri by scheme -----------------------------------------------------------------------------------

@pytest.mark.parametrize("uri", ["mysql://foo/bar", "jdbc:mysql://h/db", "s3://b/c",
                                 "MYSQL://x"])
@pytest.mark.parametrize("command", [("namespace", "create", "x", "--yes"), ("list",),
                                     ("create", "db.t", "--schema", "id:long", "--yes")])
def test_unknown_uri_scheme_is_refused_and_nothing_is_created(home, uri, command):
    work = home.parent / "work"
    code, out, err = cli("--uri", uri, *command)
    assert code == 2, err
    assert out == ""
    first = err.splitlines()[0]
    assert first.startswith(f"icectl: error: --uri {uri}: catalog URIs with the scheme ")
    for scheme in ("http://", "https://", "sqlite:", "postgresql://", "postgresql+psycopg://"):
        assert scheme in first
    assert os.listdir(work) == [] and os.listdir(home) == []


def test_unknown_scheme_in_a_configured_catalog_is_refused(home):
    (home / ".icectl.yaml").write_text("catalog:\n  m:\n    uri: mysql://foo/bar\n    warehouse: wh\n")
    code, out, err = cli("namespace", "create", "x", "--yes")
    assert code == 2
    assert "catalog m: uri mysql://foo/bar" in err and "supported" in err
    assert os.listdir(home.parent / "work") == []


@pytest.mark.parametrize(("uri", "kind"), [("https://rest.example.com", "rest"), ("http://127.0.0.1:1", "rest"),
                                           ("sqlite:///x.db", "sql"), ("postgresql://h/db", "sql"),
                                           ("postgresql+psycopg://h/db", "sql"), ("jdbc:sqlite:/x.db", "sql"),
                                           ("jdbc:postgresql://h/db", "sql")])
def test_supported_uri_schemes_pick_the_catalog_type(home, uri, kind):
    code, out, err = cli("--uri", uri, "-o", "json", "catalogs")
    assert code == 0, err
    assert json.loads(out)["catalogs"][-1]["type"] == kind


def test_docs_configuration_examples_run(tmp_path, home):
    """The shell block of docs/configuration.md that shows `icectl catalogs` runs as shown."""
    text = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text()
    section = text.split("\n## ", 1)[0]
    block = next(b for b in re.findall(r"```sh\n(.*?)```", section, re.S) if "icectl catalogs" in b)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "icectl").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m icectl "$@"\n')
    (bindir / "icectl").chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}"}
    for line in block.splitlines():
        done = subprocess.run(["bash", "-c", line], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (line, done.stderr)
        assert "catalog" in done.stdout + done.stderr


def test_readme_catalog_examples_resolve(tmp_path, home, monkeypatch):
    """README's "Connect to your catalog" configuration names a catalog of each kind, and icectl
    reads each as that kind."""
    text = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = text.split("\n## Connect to your catalog\n", 1)[1].split("\n## ", 1)[0]
    example = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    (tmp_path / "readme.yaml").write_text(example)
    monkeypatch.setenv("ICECTL_CONFIG", str(tmp_path / "readme.yaml"))
    code, out, err = cli("-o", "json", "catalogs")
    assert code == 0, err
    doc = json.loads(out)
    assert {c["name"]: c["type"] for c in doc["catalogs"]} == {
        "prod": "sql", "polaris": "rest", "lake": "hadoop", "onprem": "hive", "glue": "glue"}
    assert doc["resolved"] == "prod"  # default-catalog
    assert "CLIENT_SECRET" not in out
