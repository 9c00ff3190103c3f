"""Fixtures for the Hive catalog tests: ONE real Hive Metastore (Hive 2.3.9's own server from
pyspark's jars, ``../shared/oracle/hms_server.py``) per test session.

Session fixtures:
  hms      -> Metastore   uri, warehouse, the oracle module, and restart() (same port and database).
Function fixtures:
  hive_env -> HiveEnv     a configuration file with catalog "hv" on the metastore (``cli`` runs icectl
                          in-process with it) and a fresh database for the test.

Every test here is marked ``hive`` (and ``spark``: the metastore is a JVM, so the fast suite
without Java skips it).
"""
from __future__ import annotations

import io
import os
import pathlib
import sys
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

import pytest
import yaml

HERE = pathlib.Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before -m deselects anything
def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in pathlib.Path(item.path).resolve().parents:
            names = {m.name for m in item.iter_markers()}
            for marker in ("hive", "spark"):
                if marker not in names:
                    item.add_marker(getattr(pytest.mark, marker))


def oracle_dir() -> pathlib.Path:
    env = os.environ.get("ICECTL_ORACLE_DIR")
    return pathlib.Path(env) if env else HERE.parents[2] / "shared" / "oracle"


@dataclass
class Metastore:
    uri: str
    root: pathlib.Path
    warehouse: pathlib.Path
    module: Any
    stop: Callable[[], None]

    def restart(self) -> None:
        """Start the metastore again on its port and database (after a test stopped it)."""
        self.stop()
        port = int(self.uri.rsplit(":", 1)[1])
        uri, self.stop = self.module.start(str(self.root), port=port)
        assert uri == self.uri


@pytest.fixture(scope="session")
def hms(tmp_path_factory):
    d = oracle_dir()
    if not (d / "hms_server.py").exists():
        pytest.skip(f"no Hive Metastore oracle at {d}")
    pytest.importorskip("hive_metastore")
    sys.path.insert(0, str(d))
    import hms_server as module  # noqa: E402

    root = tmp_path_factory.mktemp("hms")
    uri, stop = module.start(str(root))
    m = Metastore(uri, root, pathlib.Path(stop.warehouse), module, stop)
    try:
        yield m
    finally:
        m.stop()


@dataclass
class HiveEnv:
    config_path: pathlib.Path
    database: str
    metastore: Metastore
    properties: dict[str, str] = field(default_factory=dict)

    def write(self, **properties: str) -> None:
        self.properties.update(properties)
        self.config_path.write_text(yaml.safe_dump({"default-catalog": "hv",
                                                    "catalog": {"hv": {"type": "hive", **self.properties}}}))

    def catalog(self):
        from icectl.catalog import build_catalog, resolve_catalog_config

        return build_catalog(resolve_catalog_config("hv"))

    def cli(self, *args: str) -> tuple[int, str, str]:
        from icectl.cli.context import Env
        from icectl.cli.main import run

        env = Env(stdout=io.StringIO(), stderr=io.StringIO())
        code = run(list(args), env)
        return code, env.stdout.getvalue(), env.stderr.getvalue()

    def table(self, name: str = "events") -> str:
        return f"{self.database}.{name}"


@pytest.fixture
def hive_env(hms, tmp_path, monkeypatch) -> HiveEnv:
    cfg = tmp_path / "icectl.yaml"
    monkeypatch.setenv("ICECTL_CONFIG", str(cfg))
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.chdir(tmp_path)
    env = HiveEnv(cfg, "d" + uuid.uuid4().hex[:10], hms)
    env.write(uri=hms.uri, warehouse=str(hms.warehouse))
    return env
