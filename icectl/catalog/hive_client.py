"""The Thrift connection to a Hive Metastore (for :mod:`icectl.catalog.hive`): the first reachable
of several ``thrift://`` URIs (Hive's ``hive.metastore.uris`` fail-over), reopened after a break,
and Iceberg Java's exponential back-off for the table lock's retries."""
from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable, Iterator, TypeVar

try:  # the hive extra (icectl.catalog.hive names it when it is missing)
    from hive_metastore.ThriftHiveMetastore import Client
    from thrift.protocol import TBinaryProtocol
    from thrift.Thrift import TException
    from thrift.transport import TSocket, TTransport
except ImportError:  # pragma: no cover - HiveCatalog refuses to start without them
    pass

T = TypeVar("T")

# thrift logs a refused connection at ERROR before raising it; icectl reports the error itself, as
# one line (Python's last-resort handler would print thrift's line too). --verbose still shows it.
logging.getLogger("thrift").addHandler(logging.NullHandler())


def backoff(min_ms: int, max_ms: int, timeout_ms: int, scale: float) -> Iterator[None]:
    """Yield before each attempt, sleeping between them as Iceberg Java's Tasks.exponentialBackoff:
    min * scale^(attempt-1), capped at max, until the total timeout has passed."""
    start = time.monotonic()
    attempt = 0
    while True:
        yield
        attempt += 1
        delay = min(min_ms * scale ** (attempt - 1), max_ms) / 1000
        if (time.monotonic() - start) * 1000 + delay * 1000 > timeout_ms:
            return
        time.sleep(delay)


class MetastoreUnreachable(Exception):
    """The connection broke (or could not be made): the call may or may not have reached the server."""

    def __init__(self, where: str, reason: str):
        super().__init__(f"{where}: {reason}")
        self.where = where
        self.reason = reason


class MetastoreClient:
    """One Thrift connection to the first reachable metastore of ``uris``, reopened after a break."""

    def __init__(self, uris: list[str], *, ugi: str | None = None, timeout_s: float = 600.0):
        self.uris = uris
        self.ugi = ugi
        self.timeout_s = timeout_s
        self._transport: Any = None
        self._client: Any = None
        self.connected_to: str | None = None
        self._lock = threading.RLock()

    def _open(self) -> Any:
        reasons = []
        for uri in self.uris:
            host, _, port = uri.split("://", 1)[1].rstrip("/").rpartition(":")
            sock = TSocket.TSocket(host or "localhost", int(port or 9083))
            sock.setTimeout(self.timeout_s * 1000)
            transport = TTransport.TBufferedTransport(sock)
            try:
                transport.open()
            except (TException, OSError) as e:
                reasons.append(f"{uri}: {thrift_reason(e)}" if len(self.uris) > 1 else thrift_reason(e))
                continue
            client = Client(TBinaryProtocol.TBinaryProtocol(transport))
            if self.ugi:
                user, _, groups = self.ugi.partition(":")
                client.set_ugi(user, [g for g in groups.split(",") if g])
            self._transport, self._client, self.connected_to = transport, client, uri
            return client
        raise MetastoreUnreachable(", ".join(self.uris), "; ".join(reasons) or "no metastore URI")

    def close(self) -> None:
        with self._lock:
            if self._transport is not None:
                try:
                    self._transport.close()
                except (TException, OSError):
                    pass
            self._transport = self._client = None

    def call(self, fn: Callable[[Any], T], *, reconnect: bool = True) -> T:
        """``fn(client)``; a broken connection is reopened and the call made once more (as Java's
        RetryingMetaStoreClient) when ``reconnect``; else, or when that fails too, MetastoreUnreachable."""
        with self._lock:
            for attempt in (1, 2):
                client = self._client or self._open()
                try:
                    return fn(client)
                except (TTransport.TTransportException, OSError, EOFError) as e:
                    self.close()
                    if attempt == 2 or not reconnect:
                        where = self.connected_to or ", ".join(self.uris)
                        raise MetastoreUnreachable(where, thrift_reason(e)) from None
            raise AssertionError("unreachable")


def thrift_reason(e: BaseException) -> str:
    text = " ".join(str(getattr(e, "message", None) or e).split())
    return text or type(e).__name__


__all__ = ["MetastoreClient", "MetastoreUnreachable", "backoff", "thrift_reason"]
