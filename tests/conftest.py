"""Shared pytest fixtures for the whole suite (nothing heavy is imported here).

Fixtures:
  repo_root      (session) pathlib.Path of the repository root.
  test_data_dir  (session) pathlib.Path of tests/data (small files shipped with the tests).
  tmp_warehouse  (function) pathlib.Path of an empty, existing folder <tmp_path>/warehouse, for a
                 file-system warehouse that a test writes tables into.

Markers (declared in pyproject.toml; --strict-markers is on): spark, s3, interop, slow.
Every test under tests/interop/ is also given the `interop` and `spark` markers here at
collection, in case a module forgets its `pytestmark`, so that
`python -m pytest -m 'not spark and not s3 and not interop'` never starts a JVM.
"""
from __future__ import annotations

import pathlib

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
INTEROP_DIR = REPO_ROOT / "tests" / "interop"


@pytest.fixture(scope="session")
def repo_root() -> pathlib.Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def test_data_dir() -> pathlib.Path:
    return REPO_ROOT / "tests" / "data"


@pytest.fixture
def tmp_warehouse(tmp_path: pathlib.Path) -> pathlib.Path:
    wh = tmp_path / "warehouse"
    wh.mkdir()
    return wh


@pytest.hookimpl(tryfirst=True)  # before -m deselects anything
def pytest_collection_modifyitems(config, items):
    for item in items:
        path = pathlib.Path(item.path).resolve()
        if INTEROP_DIR in path.parents:
            names = {m.name for m in item.iter_markers()}
            for marker in ("interop", "spark"):
                if marker not in names:
                    item.add_marker(getattr(pytest.mark, marker))
