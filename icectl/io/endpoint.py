"""The endpoint probe every remote client shares (S3 through s3fs, GCS through gcsfs, ADLS through
adlfs, the Glue catalog through botocore): one TCP connection before the first request, so that an
endpoint that cannot be reached at all fails within seconds with one line, not after the
client's retries with backoff (botocore's standard mode treats a refused connection as
transient; gcsfs and the Azure SDK retry for a minute or more, and Azure's default credential
chain first tries every source it knows). A refusal, an unknown host or no answer within the
connect timeout is rarely transient at a command's start; later failures (a reset, a 503) are
still the clients' to retry."""
from __future__ import annotations

from urllib.parse import urlsplit

from icectl.errors import StorageError, UsageError

CONNECT_TIMEOUT_S = 5  # seconds; s3.connect-timeout and glue.connect-timeout default to it

_REACHED: set[tuple[str, int]] = set()


def check_endpoint(url: str, *, service: str, hint: str, timeout: float = CONNECT_TIMEOUT_S,
                   setting: str | None = None, timeout_setting: str | None = None) -> None:
    """Fail fast (:class:`StorageError`, ``cannot reach the SERVICE endpoint ...``) when ``url``'s
    host cannot be resolved or connected to within ``timeout`` seconds. Skipped when a proxy
    carries the requests; done once a process for each host and port.

    ``setting``: the property ``url`` came from; then a URL that is not http(s) is a usage error
    naming it (without, such a URL is left to the client). ``timeout_setting`` is named when
    the connection times out."""
    # Here, not at the top: icectl.io (every command that opens a file) imports this module, and
    # urllib.request costs some 17 ms of start-up; only a remote endpoint needs it.
    import socket
    import urllib.request

    try:
        u = urlsplit(url)
        host, port = u.hostname, u.port or (443 if u.scheme == "https" else 80)
    except ValueError as e:
        if setting is None:
            return
        raise UsageError(f"{setting} is not a valid URL ({e}): {url}") from None
    if u.scheme not in ("http", "https") or not host:
        if setting is None:
            return
        raise UsageError(f"{setting} must be an http:// or https:// URL, not {url!r}")
    if (host, port) in _REACHED:
        return
    if urllib.request.getproxies().get(u.scheme) and not urllib.request.proxy_bypass(host):
        return
    shown = f"{u.scheme}://{u.netloc.rsplit('@', 1)[-1]}"
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except ConnectionRefusedError:
        why = "connection refused"
    except socket.gaierror as e:
        why = f"cannot resolve {host}: {e.strerror or e}"
    except (socket.timeout, TimeoutError):
        why = f"no answer within {timeout:g} s" + (f" ({timeout_setting})" if timeout_setting else "")
    except OSError as e:
        why = e.strerror or str(e)
    else:
        _REACHED.add((host, port))
        return
    raise StorageError(f"cannot reach the {service} endpoint {shown} ({why})", hint=hint)
