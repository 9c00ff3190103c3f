"""Fixtures for the Hive catalog tests: ONE real Hive Metastore (Hive 2.3.9's own server from
pyspark's jars, ``../shared/oracle/hms_server.py``) per test session.

Session fixtures:
  hms      -> Metastore   uri, warehouse, the oracle module, and restart() (same port and database).
  spark    -> SparkSession  Iceberg Java (the oracle's Spark session) with HiveCatalog ``hive`` on it.
Function fixtures:
  hive_env -> HiveEnv     a configuration file with catalog "hv" on the metastore (``cli`` runs icectl
                          in-process with it) and a fresh database for the test.

Every test here is marked ``hive`` (and ``spark``: the metastore is a JVM, so the fast suite
without Java skips it).
"""
from __future__ import annotations

import pathlib
import sys
import uuid
from dataclasses import dataclass
from typing import Any, Callable, ClassVar

import pytest

from oracle_servers import CatalogEnv, add_folder_markers, catalog_env, oracle_dir

HERE = pathlib.Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before -m deselects anything
def pytest_collection_modifyitems(config, items):
    add_folder_markers(items, HERE, "hive", "spark")


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


@pytest.fixture(scope="session")
def spark(hms):
    sys.path.insert(0, str(pathlib.Path(hms.module.__file__).parent))
    import iceberg_java  # noqa: E402 - the oracle's, beside hms_server

    s = iceberg_java.session(str(hms.warehouse), extra_conf=hms.module.spark_conf(hms.uri, str(hms.warehouse)))
    yield s
    s.stop()


@dataclass(kw_only=True)
class HiveEnv(CatalogEnv):
    catalog_name: ClassVar[str] = "hv"
    catalog_type: ClassVar[str] = "hive"
    metastore: Metastore

    @property
    def database(self) -> str:
        return self.namespace


@pytest.fixture
def hive_env(hms, tmp_path, monkeypatch) -> HiveEnv:
    env = catalog_env(HiveEnv, tmp_path, monkeypatch, namespace="d" + uuid.uuid4().hex[:10], metastore=hms)
    env.write(uri=hms.uri, warehouse=str(hms.warehouse))
    return env
