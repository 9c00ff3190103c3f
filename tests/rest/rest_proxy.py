"""A small HTTP proxy for the REST tests, between icectl and the real REST server.

It forwards every request to the server and can, on chosen requests:
- answer with an injected status (401, 403, 419, 429, 500, 503 ...) and a spec ErrorResponse,
  either instead of forwarding (``before``) or after the server applied it (``after``: the harsh
  case of a commit that happened but whose answer was lost);
- drop the connection without answering (again before or after forwarding);
- wait before answering (a timeout for a client with a short socket timeout).

It can also play the parts the test server does not: an OAuth2 token endpoint issuing
short-lived tokens for one client id and secret (and refusing requests whose bearer token is
missing, unknown or expired: 401, or 419 when expired), a SigV4 check of every request, a
``/v1/config`` with defaults, overrides, a prefix and an endpoint list of the test's choosing,
and vended credentials added to the ``config`` of load-table answers.

``log`` records every request as (method, path, status) in arrival order.
"""
from __future__ import annotations

import json
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import parse_qs, urlsplit

import requests


@dataclass
class Fault:
    """Inject ``action`` on the ``nth`` (1-based) request matching ``method`` and ``path`` (a
    regex on the path), ``times`` times in a row."""

    method: str
    path: str
    action: str  # "status", "drop", "delay", "hook" (call ``hook`` before forwarding)
    status: int = 500
    message: str | None = None
    error_type: str | None = None
    hook: Callable[[], None] | None = None
    when: str = "before"  # "before": the server never sees the request; "after": it applied it
    nth: int = 1
    times: int = 1
    delay_s: float = 0.0
    seen: int = 0
    fired: int = 0

    def matches(self, method: str, path: str) -> bool:
        if method != self.method or not re.search(self.path, path):
            return False
        self.seen += 1
        if self.seen >= self.nth and self.fired < self.times:
            self.fired += 1
            return True
        return False


ERROR_TYPES = {400: "BadRequestException", 401: "NotAuthorizedException", 403: "ForbiddenException",
               419: "AuthenticationTimeoutException", 429: "TooManyRequestsException",
               500: "InternalServerError", 502: "BadGateway", 503: "ServiceUnavailableException",
               504: "GatewayTimeout"}


@dataclass
class OAuth:
    client_id: str
    client_secret: str
    expires_in: float = 3600.0
    issued: dict[str, float] = field(default_factory=dict)  # token -> expiry (monotonic)
    grants: list[dict[str, str]] = field(default_factory=list)


class FaultProxy:
    def __init__(self, upstream: str):
        self.upstream = upstream.rstrip("/")
        self.faults: list[Fault] = []
        self.log: list[tuple[str, str, int]] = []
        self.arrived: list[tuple[str, str]] = []  # (method, path) as each request arrives
        self.headers_seen: list[dict[str, str]] = []
        self.oauth: OAuth | None = None
        self.static_token: str | None = None
        self.sigv4: tuple[str, str, str, str] | None = None  # (access key, secret, region, service)
        self.config: dict[str, Any] | None = None  # the /v1/config answer, when the test chooses it
        self.prefix: str | None = None  # strip /v1/<prefix>/ before forwarding
        self.vended: dict[str, str] | None = None  # added to load-table answers' config
        self.lock = threading.Lock()
        self._session = requests.Session()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _any(self) -> None:
                proxy._handle(self)

            do_GET = do_POST = do_DELETE = do_HEAD = do_PUT = _any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def reset(self) -> None:
        with self.lock:
            self.faults.clear()
            self.log.clear()
            self.arrived.clear()
            self.headers_seen.clear()
            self.oauth = None
            self.static_token = None
            self.sigv4 = None
            self.config = None
            self.prefix = None
            self.vended = None

    def inject(self, *faults: Fault) -> None:
        with self.lock:
            self.faults.extend(faults)

    def requests(self, method: str | None = None, path: str = "") -> list[tuple[str, str, int]]:
        return [e for e in self.log if (method is None or e[0] == method) and re.search(path, e[1])]

    # -- handling -----------------------------------------------------------------------------
    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        method = h.command
        split = urlsplit(h.path)
        path = split.path
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else b""
        headers = {k: v for k, v in h.headers.items()}
        with self.lock:
            self.arrived.append((method, path))
            self.headers_seen.append(headers)
            fired = [f for f in self.faults if f.matches(method, path)]  # every fault counts every request
            fault = fired[0] if fired else None

        def answer(status: int, payload: Any = None, extra: dict[str, str] | None = None) -> None:
            self.log.append((method, path, status))
            data = json.dumps(payload).encode() if payload is not None else b""
            h.send_response(status)
            for k, v in (extra or {}).items():
                h.send_header(k, v)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            if data and method != "HEAD":
                h.wfile.write(data)

        def error(status: int, message: str, etype: str | None = None) -> None:
            answer(status, {"error": {"message": message, "type": etype or ERROR_TYPES.get(status, "Error"),
                                      "code": status}},
                   {"Retry-After": "0"} if status in (429, 503) else None)

        def drop() -> None:
            self.log.append((method, path, -1))
            h.close_connection = True
            try:
                h.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

        if path == "/v1/oauth/tokens" and self.oauth is not None:
            form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
            self.oauth.grants.append(form)
            if (form.get("grant_type") != "client_credentials" or form.get("client_id") != self.oauth.client_id
                    or form.get("client_secret") != self.oauth.client_secret):
                answer(401, {"error": "invalid_client", "error_description": "bad client credentials"})
                return
            token = f"tok-{len(self.oauth.grants)}-{time.monotonic_ns()}"
            self.oauth.issued[token] = time.monotonic() + self.oauth.expires_in
            answer(200, {"access_token": token, "token_type": "bearer", "expires_in": self.oauth.expires_in,
                         "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"})
            return
        if fault is not None and fault.when == "before":
            if fault.action == "drop":
                drop()
                return
            if fault.action == "status":
                error(fault.status, fault.message or f"injected {fault.status}", fault.error_type)
                return
            if fault.action == "delay":
                time.sleep(fault.delay_s)
            if fault.action == "hook" and fault.hook is not None:
                fault.hook()
        refusal = self._check_auth(method, h.path, headers, body)
        if refusal is not None:
            error(*refusal)
            return
        if path == "/v1/config" and self.config is not None:
            answer(200, self.config)
            return
        upstream_path = path
        if self.prefix is not None and path != "/v1/config":
            want = f"/v1/{self.prefix}/"
            if not path.startswith(want):
                error(400, f"expected the prefix {self.prefix} in {path}")
                return
            upstream_path = "/v1/" + path[len(want):]
        fwd_headers = {k: v for k, v in headers.items() if k.lower() not in ("host", "content-length", "authorization",
                                                                              "connection")}
        r = self._session.request(method, self.upstream + upstream_path + (f"?{split.query}" if split.query else ""),
                                  data=body or None, headers=fwd_headers, timeout=120)
        payload = r.json() if r.content else None
        if (self.vended is not None and method == "GET" and re.search(r"/tables/[^/]+$", path) and r.status_code == 200
                and headers.get("X-Iceberg-Access-Delegation") == "vended-credentials"):
            payload["config"] = {**(payload.get("config") or {}), **self.vended}
        if fault is not None and fault.when == "after":
            if fault.action == "drop":
                drop()
                return
            if fault.action == "status":
                error(fault.status, f"injected {fault.status} after the server answered {r.status_code}")
                return
            if fault.action == "delay":
                time.sleep(fault.delay_s)
        answer(r.status_code, payload)

    def _check_auth(self, method: str, raw_path: str, headers: dict[str, str], body: bytes) -> tuple[int, str] | None:
        auth = headers.get("Authorization") or headers.get("Original-Authorization")
        if self.static_token is not None and auth != f"Bearer {self.static_token}":
            return 401, "missing or wrong bearer token"
        if self.oauth is not None:
            token = (auth or "").removeprefix("Bearer ")
            expiry = self.oauth.issued.get(token)
            if expiry is None:
                return 401, "unknown bearer token"
            if time.monotonic() >= expiry:
                return 419, "the token expired"
        if self.sigv4 is not None and not self._sigv4_ok(method, raw_path, headers, body):
            return 403, "the SigV4 signature does not match"
        return None

    def _sigv4_ok(self, method: str, raw_path: str, headers: dict[str, str], body: bytes) -> bool:
        """Recompute the signature with the known key (botocore's signer, the request's own
        X-Amz-Date) and compare with the one sent."""
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials

        key, secret, region, service = self.sigv4  # type: ignore[misc]
        sent = headers.get("Authorization", "")
        m = re.search(r"Credential=([^/]+)/\d{8}/([^/]+)/([^/]+)/aws4_request, SignedHeaders=([^,]+), "
                      r"Signature=([0-9a-f]+)", sent)
        if not m or m.group(1) != key or m.group(2) != region or m.group(3) != service:
            return False
        signed = m.group(4).split(";")
        lower = {k.lower(): v for k, v in headers.items()}
        req = AWSRequest(method=method, url=f"http://{lower['host']}{raw_path}", data=body,
                         headers={k: lower[k] for k in signed if k in lower})

        class FixedDate(SigV4Auth):
            def _modify_request_before_signing(self, request: Any) -> None:
                pass  # keep the request's X-Amz-Date and headers exactly as sent

        signer = FixedDate(Credentials(key, secret), service, region)
        req.context["timestamp"] = lower["x-amz-date"]
        string_to_sign = signer.string_to_sign(req, signer.canonical_request(req))
        return signer.signature(string_to_sign, req) == m.group(5)


def run_with(proxy: FaultProxy, fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    finally:
        proxy.reset()
