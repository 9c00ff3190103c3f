"""Authentication against the REST catalog: OAuth2 client credentials at the real server's token
endpoint, a static bearer token, extra headers, SigV4 (checked by the proxy with botocore), and
no secret in any output, dry-run JSON and --verbose tracebacks included."""
from __future__ import annotations

import json

from rest_proxy import Fault, OAuth


def test_oauth2_client_credentials_against_the_servers_token_endpoint(rest_env, rest_server):
    rest_env.write(credential="client:not-checked-by-this-server", scope="catalog")
    offset = rest_server.log.stat().st_size
    rest_env.catalog().create_namespace((rest_env.namespace,))
    code, out, err = rest_env.cli("-o", "json", "list")
    assert code == 0, err
    with open(rest_server.log) as f:
        f.seek(offset)
        lines = [line for line in f if " -> " in line]
    assert lines[0].startswith("POST /v1/oauth/tokens -> 200")


def test_oauth2_grant_carries_scope_audience_resource_and_the_token_is_used(rest_env, proxy):
    proxy.oauth = OAuth("id-1", "secret-AbC123")
    rest_env.write(uri=proxy.url, credential="id-1:secret-AbC123", scope="catalog:rw", audience="lake",
                   resource="urn:lake", **{"oauth2-server-uri": proxy.url + "/v1/oauth/tokens"})
    rest_env.catalog().create_namespace((rest_env.namespace,))
    assert proxy.oauth.grants == [{"grant_type": "client_credentials", "client_id": "id-1",
                                   "client_secret": "secret-AbC123", "scope": "catalog:rw", "audience": "lake",
                                   "resource": "urn:lake"}]
    token = next(iter(proxy.oauth.issued))
    assert all(h.get("Authorization") == f"Bearer {token}" for h in proxy.headers_seen[1:])


def test_static_bearer_token_and_extra_headers(rest_env, proxy):
    proxy.static_token = "tkn-9f8e7d6c"
    rest_env.write(uri=proxy.url, token="tkn-9f8e7d6c", **{"header.X-Tenant": "blue"})
    rest_env.catalog().create_namespace((rest_env.namespace,))
    assert all(h.get("X-Tenant") == "blue" for h in proxy.headers_seen)
    rest_env.write(token="tkn-wrong-000")
    code, out, err = rest_env.cli("--verbose", "list")
    assert code == 11 and "REST catalog rc refused" in err and "HTTP 401" in err
    assert "tkn-wrong-000" not in err and "tkn-9f8e7d6c" not in err


def test_sigv4_signed_requests(rest_env, proxy):
    proxy.sigv4 = ("AKIDEXAMPLE1", "sigv4-secret-key-xyz", "eu-west-1", "execute-api")
    rest_env.write(uri=proxy.url, **{"rest.sigv4-enabled": "true", "rest.signing-region": "eu-west-1",
                                     "client.access-key-id": "AKIDEXAMPLE1",
                                     "client.secret-access-key": "sigv4-secret-key-xyz"})
    cat = rest_env.catalog()
    cat.create_namespace((rest_env.namespace,))
    code, out, err = rest_env.cli("create", rest_env.table("t"), "--schema", "id:long", "--yes")
    assert code == 0, err
    assert all(s < 400 or s == 404 for _, _, s in proxy.log), proxy.log
    # A wrong key is refused by the signature check.
    rest_env.write(**{"client.secret-access-key": "another-secret-key"})
    code, out, err = rest_env.cli("--verbose", "describe", rest_env.table("t"))
    assert code == 11 and "HTTP 403" in err and "another-secret-key" not in err


def test_no_secret_in_any_output(rest_env, proxy):
    """Dry runs, JSON documents, errors and --verbose tracebacks: the client secret, the token and
    vended storage keys never appear."""
    proxy.oauth = OAuth("ops", "client-secret-QQQ")
    proxy.vended = {"s3.access-key-id": "VENDEDKEYID123", "s3.secret-access-key": "vended-secret-ZZZ",
                    "s3.session-token": "vended-session-TTT"}
    rest_env.write(uri=proxy.url, credential="ops:client-secret-QQQ")
    code, out, err = rest_env.cli("demo", rest_env.namespace)
    assert code == 0, err
    t = rest_env.table()
    for args in (["-o", "json", "compact", t, "--dry-run"], ["-o", "json", "expire", t, "--dry-run"],
                 ["-o", "json", "describe", t], ["--verbose", "rollback", t, "--to-snapshot", "1", "--yes"]):
        rest_env.cli(*args)
    proxy.inject(Fault("POST", r"/tables/events$", "status", 500, when="after"))
    code, out, err = rest_env.cli("--verbose", "-o", "json", "expire", t, "--older-than", "0s", "--yes")
    assert code == 12
    secrets = ["client-secret-QQQ", "VENDEDKEYID123", "vended-secret-ZZZ", "vended-session-TTT",
               *proxy.oauth.issued]
    printed = "\n".join(rest_env.outputs)
    assert "Traceback" in printed and "spark-submit" in printed
    for s in secrets:
        assert s not in printed, s
