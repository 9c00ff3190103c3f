"""The REST catalog's configuration and HTTP edge, without a server (no Java): which URI opens
which catalog, one-line errors for a server that cannot be reached (refused, DNS, TLS), and the
secret registry that keeps tokens and keys out of every output. The REST server tests are in
tests/rest."""
from __future__ import annotations

import http.server
import io
import threading

import pytest

from icectl import secrets
from icectl.catalog import resolve_catalog_config
from icectl.cli.context import Env
from icectl.cli.main import run


def cli(args: list[str]) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run(args, env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


@pytest.fixture(autouse=True)
def _no_config(tmp_path, monkeypatch):
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)


def test_the_uri_says_which_catalog():
    assert resolve_catalog_config(None, uri="https://cat.example.com/api").properties["type"] == "rest"
    assert resolve_catalog_config(None, uri="http://127.0.0.1:8181").properties["type"] == "rest"
    assert resolve_catalog_config(None, uri="sqlite:///x.db").properties["type"] == "sql"
    cfg = resolve_catalog_config(None, uri="http://127.0.0.1:8181")
    assert not cfg.local_default and "warehouse" not in cfg.properties


def test_refused_connection_is_one_line_naming_the_uri():
    code, out, err = cli(["--uri", "http://127.0.0.1:1", "describe", "db.t"])
    assert code == 10
    assert err.splitlines() == ["icectl: error: cannot reach the REST catalog default at http://127.0.0.1:1: "
                                "connection refused",
                                "hint: check the catalog's uri, the network, and that the server is up"]


def test_unknown_host_is_one_line_naming_the_uri():
    code, out, err = cli(["--uri", "http://no-such-host.invalid:8181", "list"])
    assert code == 10, err
    first = err.splitlines()[0]
    assert first.startswith("icectl: error: cannot reach the REST catalog default at http://no-such-host.invalid:8181")
    assert "Traceback" not in err


def test_tls_to_a_plain_http_server_is_one_line_naming_the_uri():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        uri = f"https://127.0.0.1:{server.server_address[1]}"
        code, out, err = cli(["--uri", uri, "list"])
    finally:
        server.shutdown()
        server.server_close()
    assert code == 10, err
    assert err.splitlines()[0].startswith(f"icectl: error: cannot reach the REST catalog default at {uri}: TLS error")


def test_a_non_json_answer_is_a_clear_error():
    class Html(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            body = b"<html>not a catalog</html>"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Html)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        code, out, err = cli(["--uri", f"http://127.0.0.1:{server.server_address[1]}", "list"])
    finally:
        server.shutdown()
        server.server_close()
    assert code == 10 and "not JSON" in err and "Traceback" not in err, err


def test_secret_properties_are_remembered_and_masked():
    secrets.remember_properties({"credential": "client-id-1:the-client-secret-1", "token": "tok-abcdef-1",
                                 "s3.secret-access-key": "sk-0123456789", "uri": "postgresql://u:pw-4242x@h/db",
                                 "warehouse": "s3://bucket/wh", "header.Authorization": "Bearer hdr-token-77"})
    text = ("id:secret client-id-1:the-client-secret-1 the-client-secret-1 tok-abcdef-1 sk-0123456789 "
            "pw-4242x hdr-token-77 s3://bucket/wh")
    assert secrets.redact(text) == "id:secret **** **** **** **** **** **** s3://bucket/wh"
    assert secrets.redact_properties({"s3.secret-access-key": "x", "s3.endpoint": "http://e"}) == {
        "s3.secret-access-key": "****", "s3.endpoint": "http://e"}
    assert secrets.is_secret_key("s3.session-token") and secrets.is_secret_key("credential")
    assert not secrets.is_secret_key("s3.endpoint") and not secrets.is_secret_key("oauth2-server-uri")


def test_everything_the_cli_writes_is_redacted():
    """Errors (and their --verbose tracebacks) that carry a secret show it masked."""
    secrets.remember("leaked-in-a-message-99")
    code, out, err = cli(["--verbose", "--uri", "http://127.0.0.1:1", "describe", "leaked-in-a-message-99.t"])
    assert code == 10
    code, out, err = cli(["--verbose", "describe", "/nonexistent/leaked-in-a-message-99/t"])
    assert code == 3 and "leaked-in-a-message-99" not in err and "****" in err, err
