"""Shared pytest fixtures for the whole suite (nothing heavy is imported here).

Fixtures:
  repo_root      (session) pathlib.Path of the repository root.
  tmp_warehouse  (function) pathlib.Path of an empty, existing folder <tmp_path>/warehouse, for a
                 file-system warehouse that a test writes tables into.
  no_user_config (function) no ICECTL_CONFIG / ICECTL_CATALOG and HOME=<tmp_path>/home, so a
                 test sees no user's config (modules use it as `pytestmark = pytest.mark.usefixtures(...)`).
  postgres_server (session) a private PostgreSQL cluster on a loopback port (tests/pg_cluster.py:
                 Debian's initdb and pg_ctl in a temporary folder, password authentication),
                 stopped and removed at the end. Skips when PostgreSQL or psycopg is missing,
                 except under CI (CI=true), where .ci/run installs both and a missing one fails.
  postgres_db    (function) the name of a fresh, empty database on that server, dropped afterwards.

Markers (declared in pyproject.toml; --strict-markers is on): spark, s3, interop, slow, rest,
postgres, gcs, adls, browser, airflow (a real Airflow in its own virtualenv, .cache/airflow-venv, built
by the test on first use and kept). Every test under tests/interop/ is also given the `interop` and `spark` markers here at
collection, in case a module forgets its `pytestmark`, so that
`python -m pytest -m 'not spark and not s3 and not interop'` never starts a JVM. The fast inner
loop is `-m "not slow and not spark and not s3 and not interop and not rest and not postgres and not gcs and not adls and not browser and not airflow"`.
"""
from __future__ import annotations

import itertools
import os
import pathlib

import pytest
from hypothesis import HealthCheck, settings

from icectl.io import FileIO

# Property tests check the same examples on a loaded two-core machine as on an idle one: no
# per-example deadline, and slow data generation (regex strategies) is not a failure.
settings.register_profile("icectl", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("icectl")

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
INTEROP_DIR = REPO_ROOT / "tests" / "interop"


@pytest.fixture(scope="session")
def repo_root() -> pathlib.Path:
    return REPO_ROOT


@pytest.fixture
def tmp_warehouse(tmp_path: pathlib.Path) -> pathlib.Path:
    wh = tmp_path / "warehouse"
    wh.mkdir()
    return wh


@pytest.fixture
def no_user_config(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No ICECTL_CONFIG / ICECTL_CATALOG and an empty HOME: a test sees no user's icectl config."""
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.fixture
def file_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path read through ``FileIO.read`` while the test runs, in order (how often a file is
    read: on an object store each read is a request)."""
    out: list[str] = []
    read = FileIO.read

    def counted(self, path):
        out.append(path)
        return read(self, path)

    monkeypatch.setattr(FileIO, "read", counted)
    return out


@pytest.fixture(scope="session")
def postgres_server():
    import pg_cluster

    missing = None
    try:
        import psycopg  # noqa: F401
    except ImportError:
        missing = "psycopg is not installed (pip install -e '.[test]')"
    if missing is None and pg_cluster.find_bindir() is None:
        missing = "no PostgreSQL server under /usr/lib/postgresql (apt-get install postgresql)"
    if missing:
        if os.environ.get("CI"):
            pytest.fail(missing)
        pytest.skip(missing)
    cluster = pg_cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()
        cluster.remove()


_pg_databases = itertools.count(1)


@pytest.fixture
def postgres_db(postgres_server):
    name = postgres_server.create_database(f"t{next(_pg_databases)}")
    yield name
    postgres_server.drop_database(name)


@pytest.hookimpl(tryfirst=True)  # before -m deselects anything
def pytest_collection_modifyitems(config, items):
    for item in items:
        path = pathlib.Path(item.path).resolve()
        if INTEROP_DIR in path.parents:
            names = {m.name for m in item.iter_markers()}
            for marker in ("interop", "spark"):
                if marker not in names:
                    item.add_marker(getattr(pytest.mark, marker))
