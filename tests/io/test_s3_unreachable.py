"""An S3 endpoint that refuses connections (a closed loopback port): every command ends with one
line, ``cannot reach the S3 endpoint ...``, exit 10 (storage), and no secret, within seconds;
before, the command ended in ``internal error: EndpointConnectionError``, and then, with
botocore's standard retries, after 20 to 35 s of retrying the refused connection."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

from icectl.errors import ExitCode, StorageError

SECRET = "verysecretvalue123"


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_fileio_read_from_a_closed_port_is_a_storage_error():
    from icectl.io import FileIO

    port = closed_port()
    # The default retries (6 attempts, for 503 SlowDown and resets): the endpoint is probed once
    # before the first request, so a refused connection is not retried with backoff.
    fio = FileIO({"s3.endpoint": f"http://127.0.0.1:{port}", "s3.access-key-id": "AKIAEXAMPLE",
                  "s3.secret-access-key": SECRET, "s3.region": "us-east-1"})
    import s3fs  # noqa: F401  (imported before the clock starts)
    started = time.monotonic()
    with pytest.raises(StorageError) as e:
        fio.read("s3://bucket/wh/db/t/metadata/v1.metadata.json")
    assert time.monotonic() - started < 3
    assert e.value.message == f"cannot reach the S3 endpoint http://127.0.0.1:{port} (connection refused)"
    with pytest.raises(StorageError, match="cannot reach the S3 endpoint"):
        fio.exists("s3://bucket/wh/x")


def test_an_endpoint_that_goes_away_after_the_probe_is_still_a_storage_error():
    """The probe passed (something listened), then the port closed: botocore's own error, retried
    and then said in one line (s3.retry.max-attempts 1 keeps the test short)."""
    from icectl.io import FileIO

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    port = s.getsockname()[1]
    fio = FileIO({"s3.endpoint": f"http://127.0.0.1:{port}", "s3.access-key-id": "AKIAEXAMPLE",
                  "s3.secret-access-key": SECRET, "s3.region": "us-east-1", "s3.retry.max-attempts": "1"})
    fio.filesystem("s3://bucket/x")
    s.close()
    with pytest.raises(StorageError) as e:
        fio.read("s3://bucket/wh/db/t/metadata/v1.metadata.json")
    assert e.value.message == (f"cannot reach the S3 endpoint http://127.0.0.1:{port} "
                               "(EndpointConnectionError reading s3://bucket/wh/db/t/metadata/v1.metadata.json)")


@pytest.mark.parametrize("endpoint, words", [
    ("http://no-such-host.invalid:9000", "cannot resolve no-such-host.invalid"),
    ("ftp://127.0.0.1:21", "s3.endpoint must be an http:// or https:// URL"),
    ("http://127.0.0.1:99999", "s3.endpoint is not a valid URL"),
])
def test_endpoint_that_cannot_be_used(endpoint, words):
    from icectl.io import FileIO

    fio = FileIO({"s3.endpoint": endpoint, "s3.region": "us-east-1"})
    with pytest.raises(Exception) as e:
        fio.read("s3://bucket/x")
    assert words in e.value.message and int(e.value.exit_code) in (2, 10)


@pytest.mark.slow  # a subprocess per command, ~5 s each
@pytest.mark.parametrize("args", [
    ["describe", "s3://bucket/wh/db/t/metadata/v1.metadata.json"],
    ["list"],
    ["validate", "db.t"],
    ["expire", "--dry-run", "db.t"],
])
def test_commands_against_a_closed_port(tmp_path, args):
    port = closed_port()
    cfg = tmp_path / "icectl.yaml"
    cfg.write_text("catalog:\n  lake:\n    type: hadoop\n    warehouse: s3://bucket/wh\n"
                   f"    s3.endpoint: http://127.0.0.1:{port}\n    s3.access-key-id: AKIAEXAMPLE\n"
                   f"    s3.secret-access-key: {SECRET}\n    s3.region: us-east-1\n")
    env = dict(os.environ, ICECTL_CONFIG=str(cfg), HOME=str(tmp_path))
    started = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "icectl", "-c", "lake", *args], capture_output=True, text=True,
                       env=env, timeout=120, stdin=subprocess.DEVNULL)
    seconds = time.monotonic() - started
    assert p.returncode == int(ExitCode.STORAGE), p.stderr
    lines = p.stderr.splitlines()
    assert lines[0] == f"icectl: error: cannot reach the S3 endpoint http://127.0.0.1:{port} (connection refused)", p.stderr
    assert len(lines) == 2 and lines[1].startswith("hint: "), p.stderr
    assert p.stdout == ""
    assert SECRET not in p.stderr
    # Interpreter start and imports included; before the probe, 20 to 35 s of retries.
    assert seconds < 15, f"{seconds:.1f} s"
