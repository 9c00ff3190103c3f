"""PyIceberg's configuration sources resolve in icectl as in PyIceberg: ``PYICEBERG_HOME``, the
home and working folders' ``.pyiceberg.yaml``, and ``PYICEBERG_CATALOG__<NAME>__<KEY>`` variables.
Each case builds one environment and asks both PyIceberg's own ``pyiceberg.utils.config.Config``
and icectl's resolver for the catalog's properties."""
from __future__ import annotations

import os

import pytest

from icectl.catalog import resolve_catalog_config
from icectl.catalog.config import load_configuration
from icectl.errors import UsageError

pyiceberg_config = pytest.importorskip("pyiceberg.utils.config")


@pytest.fixture
def env(tmp_path, monkeypatch):
    """A temp HOME, a working folder, a PYICEBERG_HOME folder; no icectl or PyIceberg variables."""
    for var in list(os.environ):
        if var.lower().startswith("pyiceberg_") or var in ("ICECTL_CONFIG", "ICECTL_CATALOG"):
            monkeypatch.delenv(var)
    for d in ("home", "work", "pyhome"):
        (tmp_path / d).mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path / "work")
    return tmp_path


def pyiceberg_properties(name: str | None = None) -> tuple[str, dict]:
    config = pyiceberg_config.Config()
    name = name or config.get_default_catalog_name()
    return name, dict(config.get_catalog_config(name) or {})


def assert_same(name: str | None = None) -> dict:
    """PyIceberg and icectl resolve the same catalog to the same properties; returns them."""
    py_name, expected = pyiceberg_properties(name)
    cfg = resolve_catalog_config(name)
    assert cfg.name.lower() == py_name.lower()
    assert cfg.properties == expected
    return expected


def write(path, text: str) -> str:
    path.write_text(text)
    return str(path)


FILE = """\
default-catalog: prod
catalog:
  prod:
    uri: sqlite:////data/prod.db
    warehouse: s3://bucket/wh
    s3.endpoint: http://127.0.0.1:9000
    s3.path-style-access: true
  other:
    uri: https://rest.example.com
"""


def test_file_in_pyiceberg_home(env, monkeypatch):
    write(env / "pyhome" / ".pyiceberg.yaml", FILE)
    monkeypatch.setenv("PYICEBERG_HOME", str(env / "pyhome"))
    props = assert_same()
    assert props["s3.path-style-access"] == "true"  # values as written, as PyIceberg reads them
    assert assert_same("other") == {"uri": "https://rest.example.com"}
    assert resolve_catalog_config(None).source == str(env / "pyhome" / ".pyiceberg.yaml")


def test_environment_only(env, monkeypatch):
    monkeypatch.setenv("PYICEBERG_CATALOG__PROD__URI", "sqlite:////env/prod.db")
    monkeypatch.setenv("PYICEBERG_CATALOG__PROD__WAREHOUSE", "/env/wh")
    monkeypatch.setenv("PYICEBERG_CATALOG__PROD__S3__ENDPOINT", "http://minio:9000")
    monkeypatch.setenv("PYICEBERG_CATALOG__PROD__S3__SECRET_ACCESS_KEY", "env-secret-key")
    monkeypatch.setenv("PYICEBERG_DEFAULT_CATALOG", "prod")
    props = assert_same()
    assert props == {"uri": "sqlite:////env/prod.db", "warehouse": "/env/wh", "s3.endpoint": "http://minio:9000",
                     "s3.secret-access-key": "env-secret-key"}
    cfg = resolve_catalog_config(None)
    assert cfg.source == "environment" and not cfg.local_default
    assert "PYICEBERG_CATALOG__PROD__URI" in cfg.origin


def test_environment_over_the_file(env, monkeypatch):
    write(env / "home" / ".pyiceberg.yaml", FILE)
    monkeypatch.setenv("PYICEBERG_CATALOG__PROD__URI", "sqlite:////env/override.db")
    monkeypatch.setenv("PYICEBERG_CATALOG__PROD__CLIENT__REGION", "eu-west-1")
    monkeypatch.setenv("PYICEBERG_CATALOG__PROD__WAREHOUSE", "")  # the empty string overrides too
    monkeypatch.setenv("PYICEBERG_CATALOG__OTHER__TOKEN", "tok-123456")
    props = assert_same()
    assert props["uri"] == "sqlite:////env/override.db" and props["client.region"] == "eu-west-1"
    assert props["s3.endpoint"] == "http://127.0.0.1:9000" and props["warehouse"] == ""
    assert assert_same("other") == {"uri": "https://rest.example.com", "token": "tok-123456"}
    # The default catalog from the environment over the file's.
    monkeypatch.setenv("PYICEBERG_DEFAULT_CATALOG", "other")
    assert assert_same()["token"] == "tok-123456"


def test_nested_keys_and_underscores(env, monkeypatch):
    """``__`` separates levels (at most three), ``_`` becomes ``-``, ``__`` inside the key a dot."""
    monkeypatch.setenv("PYICEBERG_CATALOG__MY_LAKE__URI", "https://lake.example.com")
    monkeypatch.setenv("PYICEBERG_CATALOG__MY_LAKE__REST__SIGV4_ENABLED", "true")
    monkeypatch.setenv("PYICEBERG_CATALOG__MY_LAKE__HEADER__X_TENANT", "blue")
    monkeypatch.setenv("PYICEBERG_CATALOG__MY_LAKE__S3__DELETE__BATCH_SIZE", "500")
    props = assert_same("my-lake")
    assert props == {"uri": "https://lake.example.com", "rest.sigv4-enabled": "true", "header.x-tenant": "blue",
                     "s3.delete.batch-size": "500"}
    assert resolve_catalog_config("my-lake").kind == "rest"


def test_case_is_ignored_as_pyiceberg_ignores_it(env, monkeypatch):
    write(env / "home" / ".pyiceberg.yaml", "CATALOG:\n  Prod:\n    URI: sqlite:////x.db\n    S3.Endpoint: http://a\n")
    monkeypatch.setenv("pyiceberg_catalog__prod__warehouse", "/lower/wh")  # a lower-case variable counts too
    monkeypatch.setenv("PyIceberg_Catalog__PROD__S3__REGION", "us-east-1")
    for name in ("prod", "PROD", "Prod"):
        props = assert_same(name)
    assert props == {"uri": "sqlite:////x.db", "s3.endpoint": "http://a", "warehouse": "/lower/wh",
                     "s3.region": "us-east-1"}


@pytest.mark.parametrize("places", [("pyhome", "home", "work"), ("home", "work"), ("work",), ("pyhome", "work")])
def test_which_file_pyiceberg_home_then_home_then_working_folder(env, monkeypatch, places):
    for place in places:
        write(env / place / ".pyiceberg.yaml", f"catalog:\n  c:\n    uri: sqlite:////{place}.db\n")
    monkeypatch.setenv("PYICEBERG_HOME", str(env / "pyhome"))
    assert assert_same("c")["uri"] == f"sqlite:////{places[0]}.db"
    assert load_configuration().file == str(env / places[0] / ".pyiceberg.yaml")


def test_pyiceberg_home_without_the_file_falls_through(env, monkeypatch):
    write(env / "home" / ".pyiceberg.yaml", "catalog:\n  c:\n    uri: sqlite:////home.db\n")
    # PYICEBERG_HOME naming a folder without the file, or no folder at all: the next place.
    (env / "pyhome" / "other.yaml").write_text("catalog: {}\n")
    for home in (env / "pyhome", env / "nowhere"):
        monkeypatch.setenv("PYICEBERG_HOME", str(home))
        assert assert_same("c")["uri"] == "sqlite:////home.db"


def test_an_empty_pyiceberg_file_is_skipped(env, monkeypatch):
    """PyIceberg 0.12 fails on an empty file (its loader reads '' and expects a mapping); icectl
    skips it, as PyIceberg skips a file that configures nothing, and reads the next place."""
    write(env / "pyhome" / ".pyiceberg.yaml", "")
    write(env / "home" / ".pyiceberg.yaml", "catalog:\n  c:\n    uri: sqlite:////home.db\n")
    monkeypatch.setenv("PYICEBERG_HOME", str(env / "pyhome"))
    assert resolve_catalog_config("c").properties["uri"] == "sqlite:////home.db"


# -- icectl's own file among PyIceberg's ---------------------------------------------------------------

def test_precedence_of_icectl_and_pyiceberg_files(env, monkeypatch):
    """ICECTL_CONFIG, then PYICEBERG_HOME, then ~/.icectl.yaml, then ~/.pyiceberg.yaml, then ./.pyiceberg.yaml."""
    write(env / "work" / ".pyiceberg.yaml", "catalog:\n  c:\n    uri: sqlite:////cwd.db\n")
    assert resolve_catalog_config("c").properties["uri"] == "sqlite:////cwd.db"
    write(env / "home" / ".pyiceberg.yaml", "catalog:\n  c:\n    uri: sqlite:////home-py.db\n")
    assert resolve_catalog_config("c").properties["uri"] == "sqlite:////home-py.db"
    write(env / "home" / ".icectl.yaml", "catalog:\n  c:\n    uri: sqlite:////home-icectl.db\n")
    assert resolve_catalog_config("c").properties["uri"] == "sqlite:////home-icectl.db"
    write(env / "pyhome" / ".pyiceberg.yaml", "catalog:\n  c:\n    uri: sqlite:////pyhome.db\n")
    monkeypatch.setenv("PYICEBERG_HOME", str(env / "pyhome"))
    assert resolve_catalog_config("c").properties["uri"] == "sqlite:////pyhome.db"
    explicit = write(env / "explicit.yaml", "catalog:\n  c:\n    uri: sqlite:////explicit.db\n")
    monkeypatch.setenv("ICECTL_CONFIG", explicit)
    assert resolve_catalog_config("c").properties["uri"] == "sqlite:////explicit.db"
    # PyIceberg's variables apply over icectl's file as well; flags over everything.
    monkeypatch.setenv("PYICEBERG_CATALOG__C__WAREHOUSE", "/from/env")
    cfg = resolve_catalog_config("c")
    assert cfg.properties == {"uri": "sqlite:////explicit.db", "warehouse": "/from/env"}
    assert cfg.origin == f"{env / 'explicit.yaml'}:2, PYICEBERG_CATALOG__C__WAREHOUSE"
    cfg = resolve_catalog_config("c", warehouse="/flag")
    assert cfg.properties["warehouse"] == "/flag" and cfg.origin.endswith("--warehouse")


def test_icectl_file_keeps_its_key_case_and_value_spelling(env):
    write(env / "home" / ".icectl.yaml", "catalog:\n  c:\n    uri: https://r\n    header.X-Tenant: blue\n"
          "    s3.path-style-access: true\n")
    assert resolve_catalog_config("c").properties == {"uri": "https://r", "header.X-Tenant": "blue",
                                                      "s3.path-style-access": "True"}
    assert resolve_catalog_config("C").name == "C"  # matched regardless of case, as PyIceberg matches


# -- bad configurations name the file, line and key, or the variable --------------------------------------

@pytest.mark.parametrize(("text", "line", "words"), [
    ("catalog:\n  a:\n    uri: x\n    uri: y\n", 4, ["duplicate key", "catalog.a.uri"]),
    ("catalog:\n  a:\n    uri: x\n    s3:\n      endpoint: y\n", 4, ["catalog.a.s3", "mapping"]),
    ("catalog:\n  a: [1, 2]\n", 2, ["'a'"]),
    ("catalog: 3\n", 1, ["'catalog'"]),
    ("catalog:\n  a:\n    uri: [unclosed\n  b: 1\n", 4, ["invalid YAML"]),
])
def test_yaml_errors_name_file_line_and_key(env, text, line, words):
    path = write(env / "home" / ".icectl.yaml", text)
    with pytest.raises(UsageError) as e:
        resolve_catalog_config(None)
    assert e.value.message.startswith(f"{path}:{line}: "), e.value.message
    for w in words:
        assert w in e.value.message


def test_a_variable_that_cannot_merge_is_named(env, monkeypatch):
    monkeypatch.setenv("PYICEBERG_CATALOG__PROD", "sqlite:////x.db")
    with pytest.raises(UsageError) as e:
        resolve_catalog_config(None)
    assert "PYICEBERG_CATALOG__PROD" in e.value.message
    with pytest.raises(ValueError):  # PyIceberg refuses it too
        pyiceberg_config.Config().get_catalog_config("prod")

