"""The HTTP side of the REST catalog: one ``requests`` session (connection reuse), a timeout on
every request, authentication (a bearer ``token``, OAuth2 client credentials refreshed before
they expire, SigV4 through botocore), bounded retries, and the spec's ``ErrorResponse`` mapped
to icectl's errors and exit codes.

Why ``requests``: it is the HTTP library PyIceberg's REST catalog is built on, maintained for
over a decade, with pooled keep-alive connections (urllib3) per session, per-request
``(connect, read)`` timeouts, and a request object botocore's SigV4 signer can sign. Its own
retries are left off (urllib3's default of none): whether a failed request may be sent again
depends on what it was (a read, a commit), which only this module knows.

Retries (bounded, with exponential backoff and ``Retry-After``):
- a request that never reached the server (connection refused, DNS, TLS, connect timeout):
  any request, since nothing was applied;
- 429 and 503, which say the server did not process the request: any request;
- other 5xx, a read timeout, a dropped connection: reads only. On a commit these leave the
  outcome unknown (``CommitStateUnknownError``, exit 12): the operation stops and deletes nothing.
- 419 (authentication timeout): once, with a fresh token.
"""
from __future__ import annotations

import email.utils
import json
import random
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import quote

from icectl import __version__, secrets
from icectl.errors import (AlreadyExistsError, CommitConflictError, CommitStateUnknownError, IcectlError,
                           NamespaceNotEmptyError, NoSuchNamespaceError, NoSuchTableError, NoSuchViewError,
                           NotAuthorizedError, NotFoundError, StorageError, UnsupportedError, UsageError)

NAMESPACE_SEPARATOR = "\x1f"
DEFAULT_CONNECT_TIMEOUT_MS = 10_000
DEFAULT_SOCKET_TIMEOUT_MS = 60_000
DEFAULT_MAX_RETRIES = 4
MAX_BACKOFF_S = 5.0
TOKEN_REFRESH_MARGIN_S = 300  # refresh a token this long before it expires (less for short-lived ones)

READ, WRITE, COMMIT = "read", "write", "commit"


@dataclass(frozen=True)
class Response:
    status: int
    body: Any  # parsed JSON, or None (204)
    headers: dict[str, str]


def encode_namespace(namespace: tuple[str, ...]) -> str:
    """A namespace as one path segment: levels joined by the unit separator, URL-encoded."""
    return quote(NAMESPACE_SEPARATOR.join(namespace), safe="")


def encode_name(name: str) -> str:
    return quote(name, safe="")


class _Token:
    """A bearer token and when to refresh it."""

    def __init__(self, value: str, expires_in: float | None):
        self.value = value
        now = time.monotonic()
        self.refresh_at = None if not expires_in else now + max(0.0, expires_in - min(TOKEN_REFRESH_MARGIN_S,
                                                                                      expires_in / 10))


class Auth:
    """Authentication for a catalog's requests: a static bearer ``token``, or OAuth2 client
    credentials (``credential: client_id:client_secret``) exchanged at ``oauth2-server-uri``
    (default ``{uri}/v1/oauth/tokens``) for a token that is refreshed before it expires; and,
    with ``rest.sigv4-enabled``, each request signed with SigV4."""

    def __init__(self, client: RestClient, properties: dict[str, str]):
        self.client = client
        self.properties = properties
        self.credential = properties.get("credential")
        self._lock = threading.Lock()
        self._token: _Token | None = None
        if properties.get("token"):
            self._token = _Token(properties["token"], None)
        self.sigv4 = properties.get("rest.sigv4-enabled", "false").lower() == "true"
        self._signer: Any = None

    def token_endpoint(self) -> str:
        return self.properties.get("oauth2-server-uri") or self.client.uri + "/v1/oauth/tokens"

    def header(self) -> str | None:
        """The ``Authorization`` header value, fetching or refreshing a token when needed."""
        with self._lock:
            if self.credential and (self._token is None or (self._token.refresh_at is not None
                                                            and time.monotonic() >= self._token.refresh_at)):
                self._token = self._fetch_token()
            return f"Bearer {self._token.value}" if self._token else None

    def can_refresh(self) -> bool:
        return bool(self.credential)

    def refresh(self) -> None:
        with self._lock:
            self._token = self._fetch_token()

    def adopt(self, token: str | None, expires_in: float | None = None) -> None:
        """Use a token the server handed out (a ``token`` in /v1/config)."""
        if token:
            secrets.remember(token)
            with self._lock:
                self._token = _Token(token, expires_in)

    def _fetch_token(self) -> _Token:
        """OAuth2 client credentials grant (RFC 6749 section 4.4), as Iceberg's OAuth2Util sends it."""
        cred = self.credential or ""
        client_id, _, client_secret = cred.rpartition(":") if ":" in cred else ("", "", cred)
        form = {"grant_type": "client_credentials", "client_secret": client_secret,
                "scope": self.properties.get("scope", "catalog")}
        if client_id:
            form["client_id"] = client_id
        for key in ("audience", "resource"):
            if self.properties.get(key):
                form[key] = self.properties[key]
        endpoint = self.token_endpoint()
        resp = self.client.send("POST", endpoint, kind=WRITE, form=form, authenticate=False,
                                what=f"give an OAuth2 token ({endpoint})", retry_writes=True)
        body = resp.body if isinstance(resp.body, dict) else {}
        token = body.get("access_token")
        if not token:
            raise NotAuthorizedError(f"catalog {self.client.name}: the token endpoint {endpoint} answered without "
                                     "an access_token", hint=self.client.auth_hint())
        secrets.remember(token)
        try:
            expires_in = float(body["expires_in"]) if body.get("expires_in") is not None else None
        except (TypeError, ValueError):
            expires_in = None
        return _Token(token, expires_in)

    def sign(self, method: str, url: str, headers: dict[str, str], body: bytes | None) -> None:
        """Sign the request in place with SigV4 (``rest.signing-region``, ``rest.signing-name``
        default ``execute-api``), credentials from ``client.access-key-id`` /
        ``client.secret-access-key`` / ``client.session-token`` or botocore's default chain. A
        bearer header moves to ``Original-Authorization``, as PyIceberg and Iceberg Java do."""
        if not self.sigv4:
            return
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        if self._signer is None:
            creds = self._aws_credentials()
            region = self.properties.get("rest.signing-region") or self.properties.get("client.region")
            if not region:
                raise UsageError(f"catalog {self.client.name}: rest.sigv4-enabled needs rest.signing-region")
            self._signer = SigV4Auth(creds, self.properties.get("rest.signing-name", "execute-api"), region)
        if "Authorization" in headers:
            headers["Original-Authorization"] = headers.pop("Authorization")
        req = AWSRequest(method=method, url=url, data=body or b"", headers=dict(headers))
        self._signer.add_auth(req)
        headers.update(dict(req.headers.items()))

    def _aws_credentials(self) -> Any:
        import botocore.session
        from botocore.credentials import Credentials

        p = self.properties
        if p.get("client.access-key-id"):
            return Credentials(p["client.access-key-id"], p.get("client.secret-access-key", ""),
                               p.get("client.session-token"))
        creds = botocore.session.Session().get_credentials()
        if creds is None:
            raise NotAuthorizedError(f"catalog {self.client.name}: rest.sigv4-enabled but no AWS credentials "
                                     "were found", hint="set client.access-key-id and client.secret-access-key, or "
                                     "the AWS environment variables or profile")
        return creds


class RestClient:
    """Requests to one REST catalog server: base URI, headers, timeouts, retries, auth."""

    def __init__(self, name: str, uri: str, properties: dict[str, str], *,
                 sleep: Callable[[float], None] = time.sleep):
        import requests

        self.name = name
        self.uri = uri.rstrip("/")
        self.session = requests.Session()
        self.session.headers.update({"Content-Type": "application/json", "Accept": "application/json",
                                     "User-Agent": _user_agent(), "X-Client-Version": "icectl"})
        self.requests_sent = 0  # every HTTP request, retries included (the benchmark counts them)
        self._sleep = sleep
        self.configure(properties)

    def configure(self, properties: dict[str, str]) -> None:
        """(Re)read the HTTP settings from the catalog's (merged) properties."""
        self.properties = properties
        self.connect_timeout = _ms(properties, "rest.client.connection-timeout-ms", DEFAULT_CONNECT_TIMEOUT_MS)
        self.read_timeout = _ms(properties, "rest.client.socket-timeout-ms", DEFAULT_SOCKET_TIMEOUT_MS)
        try:
            self.max_retries = max(0, int(properties.get("rest.client.max-retries", DEFAULT_MAX_RETRIES)))
        except ValueError:
            raise UsageError(f"catalog {self.name}: rest.client.max-retries must be an integer") from None
        self.backoff = _ms(properties, "rest.client.retry-backoff-ms", 100)
        for k, v in properties.items():
            if k.startswith("header."):
                self.session.headers[k[len("header."):]] = v
        if not hasattr(self, "auth"):
            self.auth = Auth(self, properties)
        else:
            self.auth.properties = properties
            self.auth.credential = properties.get("credential") or self.auth.credential

    def auth_hint(self) -> str:
        return (f"check the credential or token of catalog {self.name} in the configuration "
                "(and that it may use this catalog)")

    # -- requests -----------------------------------------------------------------------------
    def send(self, method: str, url: str, *, kind: str, body: Any = None, params: dict[str, str] | None = None,
             headers: dict[str, str] | None = None, form: dict[str, str] | None = None, authenticate: bool = True,
             what: str, retry_writes: bool = False) -> Response:
        """Send one logical request (with its retries); map failures to icectl errors.

        ``kind``: READ (retried on 5xx, timeouts, dropped connections), WRITE (a change that is not
        a table commit) or COMMIT (a table commit: an unknown outcome is CommitStateUnknownError).
        ``what`` names the operation in error messages."""
        import requests

        data = json.dumps(body).encode() if body is not None else None
        attempt = 0
        refreshed = False
        while True:
            h = dict(headers or {})
            if form is not None:
                h["Content-Type"] = "application/x-www-form-urlencoded"
            if authenticate:
                bearer = self.auth.header()
                if bearer:
                    h["Authorization"] = bearer
            payload: Any = data
            if form is not None:
                from urllib.parse import urlencode

                payload = urlencode(form).encode()
            if authenticate and self.auth.sigv4:
                full = requests.Request(method, url, params=params).prepare().url or url
                merged = {**{k: str(v) for k, v in self.session.headers.items()}, **h}
                self.auth.sign(method, full, merged, payload)
                h = merged
            self.requests_sent += 1
            try:
                r = self.session.request(method, url, params=params, data=payload, headers=h,
                                         timeout=(self.connect_timeout, self.read_timeout))
            except requests.exceptions.RequestException as e:
                sent = _maybe_sent(e)
                retry = (not sent) or kind == READ or retry_writes
                if retry and attempt < self.max_retries:
                    attempt += 1
                    self._sleep(self._backoff(attempt, None))
                    continue
                raise self._transport_error(e, sent=sent, kind=kind, what=what) from None
            status = r.status_code
            if status < 400:
                return Response(status, _json(r), dict(r.headers))
            if status == 419 and authenticate and not refreshed and self.auth.can_refresh():
                refreshed = True
                self.auth.refresh()
                continue
            retriable = status in (429, 503) or (status >= 500 and (kind == READ or retry_writes))
            if retriable and attempt < self.max_retries:
                attempt += 1
                self._sleep(self._backoff(attempt, r.headers.get("Retry-After")))
                continue
            raise self.http_error(status, _json(r, quiet=True), kind=kind, what=what, text=r.text)

    def _backoff(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(MAX_BACKOFF_S, max(0.0, float(retry_after)))
            except ValueError:
                when = email.utils.parsedate_to_datetime(retry_after) if retry_after else None
                if when is not None:
                    return min(MAX_BACKOFF_S, max(0.0, when.timestamp() - time.time()))
        base = self.backoff * 2 ** (attempt - 1)
        return min(MAX_BACKOFF_S, base * (0.5 + random.random() / 2))

    # -- errors -------------------------------------------------------------------------------
    def _transport_error(self, e: Exception, *, sent: bool, kind: str, what: str) -> IcectlError:
        import requests

        if isinstance(e, requests.exceptions.SSLError):
            reason = "TLS error: " + _first_reason(e)
        elif isinstance(e, requests.exceptions.Timeout):
            reason = "no answer within " + (f"{self.connect_timeout:g} s (connect)" if not sent
                                            else f"{self.read_timeout:g} s")
        else:
            reason = _first_reason(e)
        if kind == COMMIT and sent:
            return self.unknown_state(f"the connection to the REST catalog {self.name} at {self.uri} failed "
                                      f"after the commit was sent ({reason})")
        if sent and kind == WRITE:
            return StorageError(f"cannot {what}: the REST catalog {self.name} at {self.uri} did not answer "
                                f"({reason}); the change may or may not have been applied")
        return StorageError(f"cannot reach the REST catalog {self.name} at {self.uri}: {reason}",
                            hint="check the catalog's uri, the network, and that the server is up")

    def unknown_state(self, message: str) -> CommitStateUnknownError:
        return CommitStateUnknownError(
            f"commit state unknown: {message}; no file was deleted",
            hint="check the table (icectl describe NAMESPACE.TABLE: its metadata location and current snapshot) "
                 "before trying again")

    def http_error(self, status: int, body: Any, *, kind: str, what: str, text: str = "") -> IcectlError:
        err = body.get("error") if isinstance(body, dict) else None
        err = err if isinstance(err, dict) else {}
        etype = str(err.get("type") or "")
        message = str(err.get("message") or (text.strip().splitlines()[0][:300] if text.strip() else ""))
        detail = f"{etype}: {message}" if etype and message else (message or etype or f"HTTP {status}")
        where = f"REST catalog {self.name}"
        if status in (401, 403, 419):
            word = {401: "not authorized", 403: "forbidden", 419: "authentication expired"}[status]
            return NotAuthorizedError(f"{where} refused to {what}: {word} (HTTP {status}: {detail})",
                                      hint=self.auth_hint())
        if status == 404:
            if "Namespace" in etype:
                return NoSuchNamespaceError(message or f"{where}: no such namespace")
            if "Table" in etype:
                return NoSuchTableError(message or f"{where}: no such table")
            if "View" in etype:
                return NoSuchViewError(message or f"{where}: no such view")
            return NotFoundError(f"{where}: cannot {what}: {detail}")
        if status == 409:
            if "NotEmpty" in etype:
                return NamespaceNotEmptyError(message or detail)
            if "AlreadyExists" in etype:
                return AlreadyExistsError(message or detail)
            return CommitConflictError(f"{where} refused the commit: {detail}")
        if status == 406:
            return UnsupportedError(f"{where} cannot {what}: {detail}")
        if status in (400, 422):
            return UsageError(f"{where} refused to {what}: {detail}")
        if status >= 500 and kind == COMMIT and status not in (503, 429):
            return self.unknown_state(f"the REST catalog {self.name} answered HTTP {status} ({detail}) to the commit")
        if status in (429, 503):
            return StorageError(f"{where} is unavailable (HTTP {status}: {detail}); gave up after "
                                f"{self.max_retries} retries", hint="try again later")
        return StorageError(f"{where} failed to {what} (HTTP {status}: {detail})")


def _maybe_sent(e: Exception) -> bool:
    """False when the request certainly never reached the server: connection refused, DNS
    failure, connect timeout, TLS handshake."""
    import requests

    if isinstance(e, (requests.exceptions.ConnectTimeout, requests.exceptions.SSLError,
                      requests.exceptions.InvalidURL, requests.exceptions.MissingSchema,
                      requests.exceptions.InvalidSchema)):
        return False
    if isinstance(e, requests.exceptions.ConnectionError):
        seen: set[int] = set()
        stack: list[Any] = [e]
        while stack:
            x = stack.pop()
            if x is None or id(x) in seen:
                continue
            seen.add(id(x))
            name = type(x).__name__
            if name in ("NewConnectionError", "NameResolutionError", "ConnectionRefusedError", "gaierror"):
                return False
            stack += [getattr(x, "reason", None), x.__cause__, x.__context__]
            stack += [a for a in getattr(x, "args", ()) if isinstance(a, BaseException)]
    return True


def _first_reason(e: Exception) -> str:
    """The innermost reason of a requests/urllib3 error, in a few words."""
    x: Any = e
    for _ in range(6):
        inner = getattr(x, "reason", None)
        if inner is None and getattr(x, "args", None) and isinstance(x.args[0], BaseException):
            inner = x.args[0]
        if inner is None:
            break
        x = inner
    text = str(x)
    for marker in ("Connection refused", "Name or service not known", "Temporary failure in name resolution",
                   "nodename nor servname", "Connection reset by peer", "Remote end closed connection",
                   "certificate verify failed", "timed out"):
        if marker in text or marker in str(e):
            return marker[0].lower() + marker[1:]
    text = text.split(": ", 1)[-1] if "object at 0x" in text else text
    return text.splitlines()[0][:200] if text else type(x).__name__


def _json(r: Any, *, quiet: bool = False) -> Any:
    if r.status_code == 204 or not r.content:
        return None
    try:
        return r.json()
    except ValueError:
        if quiet:
            return None
        raise StorageError(f"the REST catalog answered HTTP {r.status_code} with a body that is not JSON: "
                           f"{r.text[:200]!r}") from None


def _ms(properties: dict[str, str], key: str, default: int) -> float:
    try:
        return max(1, int(properties.get(key, default))) / 1000.0
    except ValueError:
        raise UsageError(f"{key} must be a number of milliseconds, not {properties.get(key)!r}") from None


def _user_agent() -> str:
    return f"icectl/{__version__}"
