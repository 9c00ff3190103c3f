"""Google Cloud Storage (``gs://``) through gcsfs and Azure storage (``abfs://``, ``abfss://``,
``wasb://``, ``wasbs://``) through adlfs: fsspec's own packages, in the extras ``icectl[gcs]`` and
``icectl[adls]``. Storage properties use PyIceberg's names (and Iceberg Java's where they differ).

GCS: ``gcs.project-id``, ``gcs.oauth2.token`` (an access token), ``gcs.service.host`` (an endpoint
such as an emulator's; ``gcs.endpoint`` is read too), ``gcs.default-bucket-location``,
``gcs.version-aware``, ``gcs.requester-pays``, ``gcs.access``, ``gcs.no-auth`` (Java's, for an
emulator: anonymous). Without a token, gcsfs finds credentials as Google's libraries do
(``GOOGLE_APPLICATION_CREDENTIALS``, gcloud's login, the metadata server). icectl uses gcsfs's
JSON-API file system (``gcsfs.core.GCSFileSystem``), never its experimental gRPC one.

ADLS: ``adls.account-name``, ``adls.account-key``, ``adls.sas-token``, ``adls.connection-string``,
``adls.tenant-id`` / ``adls.client-id`` / ``adls.client-secret`` (a service principal),
``adls.account-host``, ``adls.anon``; Java's per-account forms ``adls.sas-token.<account host>``
and ``adls.connection-string.<account host>`` and ``adls.auth.shared-key.account.name`` /
``.key``. Without an account name, the account is the first label of the location's host
(``abfss://container@account.dfs.core.windows.net/...``). A location's path in the file system
is ``container/path``.

Deletes: ``fs.rm`` of many paths at once, ``gcs.delete.batch-size`` (default 100, the most one GCS
batch request holds) or ``adls.delete.batch-size`` (default 256) paths a call, several calls in
flight (``*.delete.in-flight``, default 8). gcsfs sends each call as one batch request to
Google (to an emulator it deletes object by object: emulators do not answer batches); adlfs
deletes a call's blobs concurrently. A call that fails is retried path by path, so each failure
is reported with its path. A path with glob characters (``*?[``) is always deleted alone, through
``rm_file``: ``rm`` would expand it as a pattern. Listings go by prefix in parallel, as on S3.

Every secret property is registered with :mod:`icectl.secrets`, so no output shows it.
"""
from __future__ import annotations

import json
import logging
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable
from urllib.parse import urlsplit

from icectl import secrets
from icectl.errors import UnsupportedError, UsageError, install_hint
from icectl.io.endpoint import check_endpoint

log = logging.getLogger("icectl.io")

GCS_SCHEMES = ("gs", "gcs")
ADLS_SCHEMES = ("abfs", "abfss", "wasb", "wasbs")
GCS_DELETE_BATCH = 100  # the most operations one GCS batch request carries
ADLS_DELETE_BATCH = 256  # the most sub-requests one Azure blob batch carries
DEFAULT_DELETE_IN_FLIGHT = 8
_GLOB = frozenset("*?[")

# The secret properties of each store, by PyIceberg's and Java's names (prefixes for per-account forms).
_SECRET_PREFIXES = ("gcs.oauth2.token", "adls.account-key", "adls.sas-token", "adls.connection-string",
                    "adls.client-secret", "adls.token", "adls.credential", "adls.auth.shared-key.account.key")


def missing_extra(extra: str, package: str, scheme: str) -> UnsupportedError:
    return UnsupportedError(f"{scheme}:// paths need the {package} package, in the extra icectl[{extra}]",
                            hint=install_hint(extra))


def remember_secrets(props: dict[str, str]) -> None:
    """Register every secret storage property, and the key inside a connection string."""
    found: list[str] = []
    for k, v in props.items():
        if not isinstance(v, str) or not k.startswith(_SECRET_PREFIXES):
            continue
        found.append(v)
        if k.startswith("adls.connection-string"):
            for part in v.split(";"):
                name, _, value = part.partition("=")
                if name.strip().lower() in ("accountkey", "sharedaccesssignature"):
                    found.append(value.strip())
    secrets.remember(*found)


def _bool(props: dict[str, str], name: str, default: bool = False) -> bool:
    raw = props.get(name)
    if raw in (None, ""):
        return default
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    raise UsageError(f"{name} must be true or false, not {raw!r}")


# -- GCS -------------------------------------------------------------------------------------------

def gcs_kwargs(props: dict[str, str]) -> dict[str, Any]:
    """gcsfs's ``GCSFileSystem`` arguments for PyIceberg-named properties (as PyIceberg passes them)."""
    kwargs: dict[str, Any] = {
        "project": props.get("gcs.project-id"),
        "access": props.get("gcs.access", "full_control"),
        "consistency": props.get("gcs.consistency", "none"),
        "requester_pays": _bool(props, "gcs.requester-pays"),
        "version_aware": _bool(props, "gcs.version-aware"),
        # No listings cache: a file another process wrote since would look missing (as on S3).
        "use_listings_cache": False,
    }
    endpoint = props.get("gcs.service.host") or props.get("gcs.endpoint")
    if endpoint:
        if not endpoint.startswith(("http://", "https://")):
            raise UsageError(f"gcs.service.host must be an http:// or https:// URL, not {endpoint!r}")
        kwargs["endpoint_url"] = endpoint.rstrip("/")
    if props.get("gcs.default-bucket-location"):
        kwargs["default_location"] = props["gcs.default-bucket-location"]
    if props.get("gcs.oauth2.token"):
        kwargs["token"] = props["gcs.oauth2.token"]
    elif _bool(props, "gcs.no-auth"):
        kwargs["token"] = "anon"
    if props.get("gcs.session-kwargs"):
        try:
            kwargs["session_kwargs"] = json.loads(props["gcs.session-kwargs"])
        except ValueError:
            raise UsageError("gcs.session-kwargs must be a JSON object") from None
    return kwargs


def _quiet(*loggers: str) -> None:
    """The libraries' own log lines (gcsfs logs a traceback for each request its retries gave up
    on) only with ``--verbose``: icectl reports the failure itself, in one line."""
    level = logging.NOTSET if log.isEnabledFor(logging.INFO) else logging.CRITICAL
    for name in loggers:
        logging.getLogger(name).setLevel(level)


def make_gcs_filesystem(props: dict[str, str]) -> Any:
    remember_secrets(props)
    kwargs = gcs_kwargs(props)
    try:
        # gcsfs's JSON-API file system; gcsfs.GCSFileSystem may be its experimental gRPC subclass,
        # which first asks a storage-control service (that emulators lack) for each bucket's layout.
        from gcsfs.core import GCSFileSystem
    except ImportError:
        raise missing_extra("gcs", "gcsfs", "gs") from None
    check_endpoint(kwargs.get("endpoint_url") or "https://storage.googleapis.com", service="GCS",
                   hint="check gcs.service.host and that the object store is up")
    _quiet("gcsfs")
    with warnings.catch_warnings():  # "GCS project not set - cannot list or create buckets": icectl does neither
        warnings.simplefilter("ignore", UserWarning)
        return GCSFileSystem(**kwargs)


def gcs_fs_path(path: str) -> str:
    """``bucket/key`` of a ``gs://bucket/key`` path."""
    return path.split("://", 1)[1]


# -- ADLS ------------------------------------------------------------------------------------------

def adls_account(props: dict[str, str], host: str) -> str | None:
    """The storage account for a location whose authority's host is ``host``."""
    return (props.get("adls.account-name") or props.get("adls.auth.shared-key.account.name")
            or (host.split(".", 1)[0] if host else None))


def adls_kwargs(props: dict[str, str], host: str = "") -> dict[str, Any]:
    """adlfs's ``AzureBlobFileSystem`` arguments for PyIceberg- and Java-named properties."""
    account = adls_account(props, host)
    per_host = [host, account] if host else [account]
    sas = props.get("adls.sas-token")
    conn = props.get("adls.connection-string")
    for h in per_host:
        if h:
            sas = sas or props.get(f"adls.sas-token.{h}")
            conn = conn or props.get(f"adls.connection-string.{h}")
    kwargs: dict[str, Any] = {
        "account_name": account,
        "account_key": props.get("adls.account-key") or props.get("adls.auth.shared-key.account.key"),
        "sas_token": sas,
        "connection_string": conn,
        "tenant_id": props.get("adls.tenant-id"),
        "client_id": props.get("adls.client-id"),
        "client_secret": props.get("adls.client-secret"),
        "account_host": props.get("adls.account-host"),
    }
    if props.get("adls.anon"):
        kwargs["anon"] = _bool(props, "adls.anon")
    kwargs = {k: v for k, v in kwargs.items() if v not in (None, "")}
    # No listings cache (as on S3 and GCS).
    kwargs["use_listings_cache"] = False
    return kwargs


def make_adls_filesystem(props: dict[str, str], host: str = "") -> Any:
    remember_secrets(props)
    kwargs = adls_kwargs(props, host)
    if not any(k in kwargs for k in ("account_name", "connection_string")):
        raise UsageError("an ADLS location needs its account: adls.account-name, adls.connection-string, "
                         "or a location such as abfss://container@account.dfs.core.windows.net/path")
    try:
        from adlfs import AzureBlobFileSystem
    except ImportError:
        raise missing_extra("adls", "adlfs", "abfs") from None
    check_endpoint(_adls_endpoint(kwargs), service="ADLS",
                   hint="check the account (adls.account-name, or the location's host), adls.account-host or "
                        "adls.connection-string, and that the object store is up")
    _quiet("adlfs", "azure")
    return AzureBlobFileSystem(**kwargs)


def _adls_endpoint(kwargs: dict[str, Any]) -> str:
    """The blob endpoint adlfs will talk to."""
    for part in (kwargs.get("connection_string") or "").split(";"):
        name, _, value = part.partition("=")
        if name.strip().lower() == "blobendpoint" and value.strip():
            return value.strip()
    if kwargs.get("connection_string"):
        conn = dict(p.split("=", 1) for p in kwargs["connection_string"].split(";") if "=" in p)
        account, suffix = conn.get("AccountName", ""), conn.get("EndpointSuffix", "core.windows.net")
        return f"{conn.get('DefaultEndpointsProtocol', 'https')}://{account}.blob.{suffix}"
    if kwargs.get("account_host"):
        return f"https://{kwargs['account_host']}"
    return f"https://{kwargs.get('account_name')}.blob.core.windows.net"


def adls_host(path: str) -> str:
    """The host of an ADLS location's authority (``account.dfs.core.windows.net``), or ``""``."""
    netloc = urlsplit(path).netloc
    return netloc.split("@", 1)[1] if "@" in netloc else ""


def adls_fs_path(path: str) -> str:
    """``container/path`` of ``abfss://container@account.dfs.core.windows.net/path`` (or of
    ``abfs://container/path``)."""
    u = urlsplit(path)
    container = u.netloc.split("@", 1)[0]
    return container + u.path


# -- deletes ---------------------------------------------------------------------------------------

def batch_rm(fs: Any, names: list[str], *, batch_size: int, in_flight: int = DEFAULT_DELETE_IN_FLIGHT,
             progress: Callable[[int], None] | None = None, **rm_kwargs: Any) -> dict[str, str]:
    """Delete ``names`` (paths as ``fs`` names them) with ``fs.rm`` of up to ``batch_size`` paths a
    call, ``in_flight`` calls at once; ``{name: why}`` for each one not deleted (a missing file is
    reported ``"already gone"``). ``rm_kwargs`` go to each ``fs.rm`` (adlfs: ``expand_path=False``).
    Never raises for a path or a call."""
    plain = [n for n in names if not (_GLOB & set(n))]
    alone = [n for n in names if _GLOB & set(n)]
    chunks = [plain[i:i + batch_size] for i in range(0, len(plain), batch_size)] + [[n] for n in alone]
    failed: dict[str, str] = {}

    def one(name: str) -> str | None:
        try:
            fs.rm_file(name)
            return None
        except FileNotFoundError:
            return "already gone"
        except Exception as e:  # noqa: BLE001 - a failure is reported per path, never fatal
            first = str(e).splitlines()[0] if str(e) else ""
            return f"{type(e).__name__}: {first}" if first else type(e).__name__

    def chunk(paths: list[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        if len(paths) > 1:
            try:
                fs.rm(paths, **rm_kwargs)
                return out
            except Exception as e:  # noqa: BLE001 - retried path by path below
                log.info("deleting %d files in one call failed (%s): retrying them one by one", len(paths), e)
        for p in paths:
            why = one(p)
            if why is not None:
                out[p] = why
        return out

    with ThreadPoolExecutor(max_workers=max(1, in_flight)) as pool:
        for paths, result in zip(chunks, pool.map(chunk, chunks)):
            failed.update(result)
            if progress is not None:
                progress(len(paths))
    return failed
