"""Configuration of the Hive catalog, without a metastore: ``--uri thrift://`` opens one, the
the example of docs/configuration.md builds one with its keys, and a missing extra is named."""
from __future__ import annotations

import io
import os
import pathlib
import re
import subprocess
import sys

import pytest
import yaml

from icectl.catalog import build_catalog, hive as hive_module, resolve_catalog_config
from icectl.catalog.hive import HiveCatalog
from icectl.cli.context import Env
from icectl.cli.main import run

CONFIGURATION = pathlib.Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in ("ICECTL_CONFIG", "ICECTL_CATALOG", "PYICEBERG_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def cli(*args: str) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run(list(args), env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def test_uri_thrift_opens_a_hive_catalog(home):
    pytest.importorskip("hive_metastore")
    cfg = resolve_catalog_config(None, uri="thrift://metastore:9083", warehouse="s3://b/wh")
    assert cfg.properties["type"] == "hive"
    cat = build_catalog(cfg)
    assert isinstance(cat, HiveCatalog) and cat.uri == "thrift://metastore:9083" and cat.warehouse == "s3://b/wh"


def test_the_docs_example_builds_a_hive_catalog(home):
    pytest.importorskip("hive_metastore")
    section = CONFIGURATION.read_text().split("\n## Hive Metastore\n", 1)[1]
    example = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    (home / ".icectl.yaml").write_text(example)
    cat = build_catalog(resolve_catalog_config("onprem"))
    assert isinstance(cat, HiveCatalog)
    assert cat.client.uris == ["thrift://metastore-1:9083", "thrift://metastore-2:9083"]
    assert cat.client.ugi == "etl:etl" and cat.client.timeout_s == 600
    assert cat.lock_ms["iceberg.hive.lock-timeout-ms"] == 180000
    assert yaml.safe_load(example)["catalog"]["onprem"]["type"] == "hive"


def test_a_bad_lock_setting_is_a_usage_error(home):
    pytest.importorskip("hive_metastore")
    (home / ".icectl.yaml").write_text("catalog:\n  h:\n    type: hive\n    uri: thrift://m:9083\n"
                                       "    iceberg.hive.lock-timeout-ms: soon\n")
    code, out, err = cli("-c", "h", "list")
    assert code == 2 and "iceberg.hive.lock-timeout-ms must be an integer" in err


def test_a_missing_extra_names_it(home, monkeypatch):
    monkeypatch.setattr(hive_module, "HAVE_THRIFT", False)
    code, out, err = cli("--uri", "thrift://metastore:9083", "list")
    assert code == 7, err
    assert "needs thrift and the Hive Metastore client" in err
    assert "pip install 'icectl[hive]'" in err and "pip install '.[hive]'" in err
    assert list(home.iterdir()) == []  # nothing created


def test_an_unreachable_metastore_is_one_line_and_exit_10(home):
    """In a real process (pytest's log capture would hide thrift's own log line)."""
    pytest.importorskip("hive_metastore")
    proc = subprocess.run([sys.executable, "-m", "icectl", "--uri", "thrift://127.0.0.1:1", "list"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(home)})
    assert proc.returncode == 10 and proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert lines[0].startswith("icectl: error: cannot reach the Hive Metastore thrift://127.0.0.1:1 of catalog "
                               "default (list databases): ")
    assert lines[1:] == ["hint: check that the metastore runs and the catalog's uri"]
