"""Faults between icectl and the REST server, injected by the proxy (which also checks an OAuth2
bearer token on every request): each gives the documented behaviour, and after each the table
loads and validates with no file lost. No token or client secret appears in any output."""
from __future__ import annotations

import json
import os

import pytest

from rest_proxy import Fault, OAuth

CLIENT_ID, CLIENT_SECRET = "icectl-ops", "s3cr3t-Kp9vX2"
COMMIT = r"/tables/events$"


def files_under(root: str) -> set[str]:
    return {os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs}


@pytest.fixture
def setup(rest_env, proxy):
    """A demo table through the proxy, with OAuth2 client credentials the proxy checks."""
    proxy.oauth = OAuth(CLIENT_ID, CLIENT_SECRET)
    rest_env.write(uri=proxy.url, credential=f"{CLIENT_ID}:{CLIENT_SECRET}",
                   **{"rest.client.socket-timeout-ms": "1500"})
    code, out, err = rest_env.cli("-o", "json", "demo", rest_env.namespace)
    assert code == 0, err
    location = json.loads(out)["location"]
    proxy.log.clear()
    proxy.arrived.clear()
    return rest_env, proxy, location


def expire(env):
    return env.cli("--verbose", "-o", "json", "expire", env.table(), "--older-than", "0s", "--retain-last", "1", "--yes")


def check_table_intact(env, location: str, before: set[str]) -> None:
    code, out, err = env.cli("-o", "json", "validate", env.table(), "--deep", "--all-snapshots")
    assert code == 0 and json.loads(out)["ok"], out + err
    after = files_under(location)
    code, out, err = env.cli("-o", "json", "files", env.table())
    assert {f["file_path"] for f in json.loads(out)} <= after


def check_no_secret_printed(env, proxy) -> None:
    secrets = [CLIENT_SECRET, *proxy.oauth.issued]
    assert secrets[1:], "no token was issued"
    for text in env.outputs:
        for s in secrets:
            assert s not in text


# The server applied nothing: icectl retries (or refreshes its token) and the expire succeeds.
@pytest.mark.parametrize("fault", [
    Fault("POST", COMMIT, "status", 429),
    Fault("POST", COMMIT, "status", 503, times=2),
    Fault("POST", COMMIT, "status", 419),
    Fault("GET", COMMIT, "status", 500, times=2),
    Fault("GET", COMMIT, "drop"),
    Fault("GET", r"/v1/config$", "status", 503),
], ids=["429-commit", "503-commit", "419-commit", "500-load", "drop-load", "503-config"])
def test_retried_faults_succeed(setup, fault):
    env, proxy, location = setup
    before = files_under(location)
    grants = len(proxy.oauth.grants)
    proxy.inject(fault)
    code, out, err = expire(env)
    assert code == 0, err
    result = json.loads(out)
    assert result["applied"] and result["deleted_files"]
    assert fault.fired == fault.times
    if fault.status == 419:
        assert len(proxy.oauth.grants) == grants + 2  # one token, then a fresh one after the 419
    assert not {f["path"] for f in result["deleted_files"]} & files_under(location)
    check_table_intact(env, location, before)
    check_no_secret_printed(env, proxy)


# The commit may have been applied (the server saw it): exit 12, no file deleted.
@pytest.mark.parametrize("fault", [
    Fault("POST", COMMIT, "status", 500, when="after"),
    Fault("POST", COMMIT, "status", 502, when="after"),
    Fault("POST", COMMIT, "status", 504, when="after"),
    Fault("POST", COMMIT, "drop", when="after"),
    Fault("POST", COMMIT, "delay", when="after", delay_s=2.5),
], ids=["500", "502", "504", "dropped", "timeout"])
def test_commit_state_unknown_deletes_nothing(setup, fault):
    env, proxy, location = setup
    before = files_under(location)
    proxy.inject(fault)
    code, out, err = expire(env)
    assert code == 12, err
    message = [line for line in err.splitlines() if line.startswith("{")][-1]
    error = json.loads(message)["error"]
    assert error["type"] == "CommitStateUnknownError" and "no file was deleted" in error["message"]
    assert "icectl describe" in error["hint"]
    assert files_under(location) >= before  # nothing deleted (the server's new metadata file added)
    assert [m for m, p in proxy.arrived if m == "POST" and p.endswith("/events")] == ["POST"]  # never sent again
    check_table_intact(env, location, before)
    # The commit did land (the proxy failed only the answer): the expired snapshots are gone, and
    # their files are left for remove-orphans rather than deleted on a guess.
    code, out, err = env.cli("-o", "json", "expire", env.table(), "--older-than", "0s", "--retain-last", "1",
                             "--dry-run")
    assert code == 0 and json.loads(out)["expired_snapshot_ids"] == [], err
    check_no_secret_printed(env, proxy)


@pytest.mark.parametrize("status", [401, 403])
def test_not_authorized_is_exit_11_naming_the_catalog(setup, status):
    env, proxy, location = setup
    before = files_under(location)
    proxy.inject(Fault("POST", COMMIT, "status", status))
    code, out, err = env.cli("expire", env.table(), "--older-than", "0s", "--retain-last", "1", "--yes")
    assert code == 11, err
    lines = [line for line in err.splitlines() if line.startswith("icectl: error:")]
    assert len(lines) == 1 and "REST catalog rc refused" in lines[0] and f"HTTP {status}" in lines[0]
    assert files_under(location) == before
    check_table_intact(env, location, before)
    check_no_secret_printed(env, proxy)


def test_wrong_client_secret_is_exit_11_without_the_secret(setup):
    env, proxy, location = setup
    env.write(credential=f"{CLIENT_ID}:wrong-secret-value")
    code, out, err = env.cli("--verbose", "describe", env.table())
    assert code == 11, err
    assert "wrong-secret-value" not in err and "oauth/tokens" in err
    env.write(credential=f"{CLIENT_ID}:{CLIENT_SECRET}")


def test_a_server_that_stays_unavailable_is_exit_10_after_bounded_retries(setup):
    env, proxy, location = setup
    proxy.inject(Fault("GET", COMMIT, "status", 503, times=100))
    code, out, err = env.cli("describe", env.table())
    assert code == 10, err
    assert "unavailable" in err and len(proxy.requests("GET", COMMIT)) == 5  # 1 + 4 retries


def test_tokens_are_refreshed_before_they_expire(setup):
    env, proxy, location = setup
    proxy.oauth.expires_in = 2.0  # refreshed 10% before: after 1.8 s
    proxy.oauth.issued.clear()
    cat = env.catalog()
    import time

    for _ in range(3):
        cat.load((env.namespace, "events"))
        time.sleep(1.0)
    assert all(s != 419 for _, _, s in proxy.log)
    assert len(proxy.oauth.issued) >= 2
