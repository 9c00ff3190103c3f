"""Fixtures of the Spark tests.

  spark_cluster   (session) a Spark standalone cluster on loopback (tests/spark/standalone.py): a
                  master and two workers of 1 core and 1 GB each, started with the installed
                  pyspark's spark-class in an environment without our Python packages; stopped at
                  the end. Started only by the tests that use it (marked spark and slow).
  bare_python     (session) the path of a Python without any package of icectl's: a virtualenv
                  made without pip and without system site packages.
  icectl_cache    (session) ICECTL_CACHE_DIR for the packed executor environments: .cache/icectl
                  in the repository, so an archive is built once, not once a test.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import standalone


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory):
    cluster = standalone.start(str(tmp_path_factory.mktemp("spark-standalone")))
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("bare-python") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(prefix)], check=True)
    python = str(prefix / "bin" / "python")
    probe = subprocess.run([python, "-c", "import pyarrow"], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert probe.returncode != 0 and "No module named 'pyarrow'" in probe.stderr  # really bare
    return python


@pytest.fixture(scope="session")
def icectl_cache(repo_root):
    path = repo_root / ".cache" / "icectl"
    path.mkdir(parents=True, exist_ok=True)
    return str(path)
