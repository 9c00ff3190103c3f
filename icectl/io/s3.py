"""S3 through s3fs: the file system with bounded retries, bulk deletes with ``DeleteObjects``, and
listings split by prefix.

Retries: botocore's ``standard`` retry mode (throttling such as 503 SlowDown, 500/502/503/504,
connection resets and timeouts, with exponential backoff and jitter), ``s3.retry.max-attempts``
attempts in all (default 6). Each retry is logged on the ``icectl.io`` logger (``--verbose``).

Deletes: ``DeleteObjects`` takes up to 1,000 keys a request (``s3.delete.batch-size``); several
requests are in flight at once (``s3.delete.in-flight``, default 8). A key that S3 reports as not
deleted, or a whole request that failed after its retries, is a per-key failure: reported, never
raised. S3 answers a key that does not exist as deleted (DeleteObjects is idempotent).
"""
from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable, Iterable
from icectl.errors import UsageError, IcectlError
from icectl.io.endpoint import CONNECT_TIMEOUT_S, check_endpoint

log = logging.getLogger("icectl.io")

DEFAULT_MAX_ATTEMPTS = 6  # the first try and up to 5 retries
DEFAULT_DELETE_BATCH = 1000  # the most DeleteObjects accepts
DEFAULT_DELETE_IN_FLIGHT = 8
MAX_POOL_CONNECTIONS = 32
# A per-key error S3 may answer inside a successful DeleteObjects response that is worth a retry.
_TRANSIENT_KEY_ERRORS = {"InternalError", "SlowDown", "ServiceUnavailable", "RequestTimeout"}
_KEY_ROUNDS = 3


def int_property(props: dict[str, str], name: str, default: int, *, lo: int = 1, hi: int | None = None) -> int:
    raw = props.get(name)
    if raw in (None, ""):
        return default
    try:
        v = int(raw)
    except ValueError:
        raise UsageError(f"{name} must be a whole number, not {raw!r}") from None
    if v < lo or (hi is not None and v > hi):
        raise UsageError(f"{name} must be between {lo} and {hi or 'any'}, not {v}")
    return v




def make_filesystem(props: dict[str, str]) -> Any:
    """An s3fs file system for PyIceberg-named storage properties."""
    try:
        import s3fs  # noqa: F401  (fsspec finds it by name)
    except ImportError:  # pragma: no cover - s3fs is a dependency

        raise IcectlError("S3 paths need s3fs: pip install s3fs") from None
    import fsspec

    client_kwargs: dict[str, Any] = {}
    if props.get("s3.endpoint"):
        client_kwargs["endpoint_url"] = props["s3.endpoint"]
    if props.get("s3.region") or props.get("client.region"):
        client_kwargs["region_name"] = props.get("s3.region") or props.get("client.region")
    config: dict[str, Any] = {
        "retries": {"max_attempts": int_property(props, "s3.retry.max-attempts", DEFAULT_MAX_ATTEMPTS, hi=20),
                    "mode": "standard"},
        # Concurrent reads and several DeleteObjects in flight share one client.
        "max_pool_connections": MAX_POOL_CONNECTIONS,
        # An endpoint that does not answer fails within seconds, not botocore's 60 s.
        "connect_timeout": int_property(props, "s3.connect-timeout", CONNECT_TIMEOUT_S, hi=600),
    }
    if props.get("s3.path-style-access", "").lower() == "true":
        config["s3"] = {"addressing_style": "path"}
    # No listings cache: s3fs would otherwise answer exists/info/open from a directory listing it
    # made earlier, so a file another process wrote or overwrote since (the next vN.metadata.json,
    # version-hint.text, a commit being retried) would look missing, or be read with a stale size
    # and ETag (s3fs FileExpired).
    kwargs: dict[str, Any] = {"client_kwargs": client_kwargs, "use_listings_cache": False,
                              "config_kwargs": config}
    if props.get("s3.access-key-id"):
        kwargs["key"] = props["s3.access-key-id"]
        kwargs["secret"] = props.get("s3.secret-access-key")
    if props.get("s3.session-token"):
        kwargs["token"] = props["s3.session-token"]
    if props.get("s3.endpoint"):
        check_endpoint(props["s3.endpoint"], service="S3", timeout=config["connect_timeout"], setting="s3.endpoint",
                       timeout_setting="s3.connect-timeout",
                       hint="check s3.endpoint (and s3.region) and that the object store is up")
    _log_retries()
    # s3fs keeps its own retry loop (5 passes) for what botocore does not retry: a connection
    # reset while the body of an answer is read.
    return fsspec.filesystem("s3", **kwargs)


class _RetryLog(logging.Handler):
    """Turns botocore's debug line about a retry into one line on ``icectl.io``."""

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.getMessage()
        if msg.startswith("Retry needed, retrying request after delay"):
            log.info("S3 request failed (throttled, 5xx or connection reset): retrying after %s s",
                     msg.rsplit(":", 1)[-1].strip())
        elif msg.startswith("Retry needed but retry quota reached"):
            log.info("S3 request failed and the retry quota is spent: not retried")


def _log_retries() -> None:
    """Listen to botocore's retry handler (it logs only at DEBUG) while someone listens to
    icectl.io (``--verbose``); botocore's own lines stay silent."""
    on = log.isEnabledFor(logging.INFO)
    for name in ("aiobotocore.retries.standard", "botocore.retries.standard"):
        lg = logging.getLogger(name)
        if not any(isinstance(h, _RetryLog) for h in lg.handlers):
            if not on:
                continue
            lg.addHandler(_RetryLog())
        lg.setLevel(logging.DEBUG if on else logging.NOTSET)
        lg.propagate = not on


# -- deletes ----------------------------------------------------------------------------------------------

def bulk_delete(fs: Any, keys: list[str], *, batch_size: int = DEFAULT_DELETE_BATCH,
                in_flight: int = DEFAULT_DELETE_IN_FLIGHT,
                progress: Callable[[int], None] | None = None) -> dict[str, str]:
    """Delete ``keys`` (``bucket/key`` as s3fs names them) with DeleteObjects, ``batch_size`` keys a
    request and ``in_flight`` requests at once. Returns the keys that were not deleted, each with
    why; never raises for a key or a request."""
    from fsspec.asyn import sync

    if not keys:
        return {}
    by_bucket: dict[str, list[str]] = {}
    for k in keys:
        bucket, _, key = k.partition("/")
        by_bucket.setdefault(bucket, []).append(key)
    return sync(fs.loop, _delete_all, fs, by_bucket, batch_size, in_flight, progress)


async def _delete_all(fs: Any, by_bucket: dict[str, list[str]], batch_size: int, in_flight: int,
                      progress: Callable[[int], None] | None) -> dict[str, str]:
    sem = asyncio.Semaphore(in_flight)
    failed: dict[str, str] = {}

    async def batch(bucket: str, keys: list[str]) -> None:
        todo = keys
        for rnd in range(_KEY_ROUNDS):
            async with sem:
                errors = await _delete_objects(fs, bucket, todo)
            retry = [k for k, (code, _) in errors.items() if code in _TRANSIENT_KEY_ERRORS]
            if rnd + 1 < _KEY_ROUNDS and retry:
                log.info("S3 DeleteObjects: %d keys failed with a transient error, retrying them", len(retry))
                for k, (code, msg) in errors.items():
                    if k not in retry:
                        failed[f"{bucket}/{k}"] = f"{code}: {msg}"
                await asyncio.sleep(0.2 * 2 ** rnd)
                todo = retry
                continue
            for k, (code, msg) in errors.items():
                failed[f"{bucket}/{k}"] = f"{code}: {msg}" if msg else code
            break
        if progress is not None:
            progress(len(keys))

    await asyncio.gather(*(batch(b, ks[i:i + batch_size]) for b, ks in by_bucket.items()
                           for i in range(0, len(ks), batch_size)))
    return failed


async def _delete_objects(fs: Any, bucket: str, keys: list[str]) -> dict[str, tuple[str, str]]:
    """One DeleteObjects request (with the client's retries); {key: (code, message)} for each key
    not deleted. A request that failed for good fails every key in it."""
    try:
        out = await fs._call_s3("delete_objects", Bucket=bucket,
                                Delete={"Objects": [{"Key": k} for k in keys], "Quiet": True})
    except Exception as e:  # noqa: BLE001 - a failed request is reported per key, never fatal
        log.info("S3 DeleteObjects of %d keys in %s failed: %s", len(keys), bucket, e)
        return {k: (type(e).__name__, str(e)) for k in keys}
    return {e.get("Key", ""): (e.get("Code", "Error"), e.get("Message", "")) for e in out.get("Errors", [])}


# -- listings ---------------------------------------------------------------------------------------------

def list_objects(fs: Any, root: str, *, workers: int = 8, min_prefixes: int = 16,
                 max_depth: int = 3) -> Iterable[tuple[str, dict[str, Any]]]:
    """Every object under ``root`` (``bucket/prefix``) as (name, info), listing sub-prefixes in
    parallel: the folders below ``root`` are found with delimiter listings (breadth first, until
    there are ``min_prefixes`` of them or ``max_depth`` levels), then each is listed recursively
    in its own request stream."""
    from fsspec.asyn import sync

    return sync(fs.loop, _list_all, fs, root.rstrip("/"), workers, min_prefixes, max_depth)


async def _list_all(fs: Any, root: str, workers: int, min_prefixes: int, max_depth: int) -> list[tuple[str, dict]]:
    files: list[tuple[str, dict]] = []
    level = [root]
    leaves: list[str] = []
    sem = asyncio.Semaphore(workers)

    async def ls(prefix: str) -> list[dict]:
        async with sem:
            try:
                return await fs._ls(prefix, detail=True, refresh=True)
            except FileNotFoundError:
                return []

    for _ in range(max_depth):
        found = await asyncio.gather(*(ls(p) for p in level))
        nxt: list[str] = []
        for prefix, entries in zip(level, found):
            for e in entries:
                name = e["name"].rstrip("/")
                if e.get("type") == "directory":
                    if name != prefix:
                        nxt.append(name)
                else:
                    files.append((name, e))
        level = nxt
        if len(level) >= min_prefixes or not level:
            break
    leaves = level

    async def find(prefix: str) -> dict[str, dict]:
        async with sem:
            try:
                return await fs._find(prefix, detail=True)
            except FileNotFoundError:
                return {}

    for found in await asyncio.gather(*(find(p) for p in leaves)):
        files.extend((n, i) for n, i in found.items() if i.get("type") != "directory")
    return files
