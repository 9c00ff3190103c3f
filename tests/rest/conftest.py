"""Fixtures for the REST catalog tests: one real Iceberg REST server (Iceberg Java's own
handlers, ``../shared/oracle/rest_server.py``) per test session, and the fault proxy in front of it.

Session fixtures:
  rest_server -> RestServer   url, warehouse, sqlite path and log of the running server.
  proxy       -> FaultProxy   forwards to the server; reset after each test that uses it.

Function fixtures:
  rest_env    -> RestEnv      a configuration file with catalog "rc" on the server (``cli`` runs
                              icectl in-process with it) and a fresh namespace for the test.

Every test here is marked ``rest`` (and ``spark``, since the server is a JVM built from the
oracle's jars, so the fast suite without Java skips it).
"""
from __future__ import annotations

import os
import pathlib
import sys
import uuid
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # works with any --import-mode

from oracle_servers import CatalogEnv, add_folder_markers, catalog_env, oracle_dir  # noqa: E402
from rest_proxy import FaultProxy  # noqa: E402


@pytest.hookimpl(tryfirst=True)  # before -m deselects anything
def pytest_collection_modifyitems(config, items):
    add_folder_markers(items, HERE, "rest", "spark")


@dataclass
class RestServer:
    url: str
    root: pathlib.Path
    warehouse: pathlib.Path
    sqlite: pathlib.Path
    log: pathlib.Path
    module: Any


@pytest.fixture(scope="session")
def rest_server(tmp_path_factory):
    d = oracle_dir()
    if not (d / "rest_server.py").exists():
        pytest.skip(f"no REST server oracle at {d}")
    sys.path.insert(0, str(d))
    import rest_server as module  # noqa: E402

    root = tmp_path_factory.mktemp("rest-server")
    url, stop = module.start(str(root))
    try:
        yield RestServer(url, root, pathlib.Path(stop.warehouse), pathlib.Path(stop.sqlite), pathlib.Path(stop.log),
                         module)
    finally:
        stop()


@pytest.fixture(scope="session")
def rest_views_server(tmp_path_factory):
    """A second server whose JdbcCatalog holds views (``jdbc.schema-version=V1``: the /views routes
    in its /v1/config; no register-view, as Iceberg 1.10's REST spec has none)."""
    d = oracle_dir()
    if not (d / "rest_server.py").exists():
        pytest.skip(f"no REST server oracle at {d}")
    sys.path.insert(0, str(d))
    import rest_server as module  # noqa: E402

    root = tmp_path_factory.mktemp("rest-views-server")
    url, stop = module.start(str(root), props={"jdbc.schema-version": "V1"})
    try:
        yield RestServer(url, root, pathlib.Path(stop.warehouse), pathlib.Path(stop.sqlite), pathlib.Path(stop.log),
                         module)
    finally:
        stop()


@pytest.fixture(scope="session")
def proxy(rest_server):
    p = FaultProxy(rest_server.url)
    yield p
    p.close()


@pytest.fixture(autouse=True)
def _reset_proxy(request):
    yield
    if "proxy" in request.fixturenames:
        request.getfixturevalue("proxy").reset()


@dataclass(kw_only=True)
class RestEnv(CatalogEnv):
    catalog_name: ClassVar[str] = "rc"
    catalog_type: ClassVar[str] = "rest"
    server: RestServer


@pytest.fixture
def rest_env(rest_server, tmp_path, monkeypatch) -> RestEnv:
    env = catalog_env(RestEnv, tmp_path, monkeypatch, namespace="t" + uuid.uuid4().hex[:10], server=rest_server)
    env.write(uri=rest_server.url, **{"rest.client.retry-backoff-ms": "10"})
    return env


class SparkRest:
    """Spark as a REST client (tests/rest/spark_rest_client.py in its own process)."""

    def __init__(self, proc):
        self.proc = proc

    def sql(self, text: str) -> list[list[Any]]:
        import json

        self.proc.stdin.write(json.dumps({"sql": text}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the Spark REST client exited")
        out = json.loads(line)
        if "error" in out:
            raise RuntimeError(out["error"])
        return out["rows"]


@pytest.fixture(scope="session")
def spark_rest(rest_server, tmp_path_factory):
    """One Spark session per test session, with catalog ``rc`` on the REST server."""
    import json
    import subprocess

    pytest.importorskip("pyspark")
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    log = open(tmp_path_factory.mktemp("spark-rest") / "spark.log", "w")
    proc = subprocess.Popen([sys.executable, str(HERE / "spark_rest_client.py"), str(oracle_dir()), rest_server.url,
                             str(tmp_path_factory.mktemp("spark-rest-wh"))],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True, env=env)
    try:
        line = proc.stdout.readline()
        if not line or not json.loads(line).get("ready"):
            raise RuntimeError(f"the Spark REST client did not start; see {log.name}")
        yield SparkRest(proc)
    finally:
        proc.stdin.close()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
