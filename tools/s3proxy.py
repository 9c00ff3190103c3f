"""An HTTP proxy in front of an S3-compatible server on loopback that adds latency and faults, for
the S3 benchmark (bench/bench_s3.py) and the fault-injection tests (tests/s3/).

Every request waits ``latency`` seconds before it is forwarded (as a round trip to a real object
store would); then, drawn per request from a seeded generator, it is answered ``503 SlowDown``
(fraction ``fail_503``), or its connection is reset without an answer (``drop``), or it is
forwarded. A forwarded ``DeleteObjects`` may also lose some of its keys (fraction ``key_error``,
drawn per key): the proxy takes them out of the request (so the server keeps those objects) and
answers each as a per-key ``<Error>`` with code ``key_error_code`` (default ``InternalError``, one
S3 says to retry) inside the otherwise successful response, as S3 does under load. Two paths are
the proxy's own and never forwarded:

    GET  /__proxy/stats    {"requests": N, "injected_503": N, "dropped": N, "key_errors": N, "by_method": {...}}
    POST /__proxy/config   JSON body with any of latency, fail_503, drop, key_error, key_error_code
                           (and resets the stats)

Run it in its own process (it is CPU work in Python, like the server behind it):

    from tools.s3proxy import start_proxy
    url, stop = start_proxy("http://127.0.0.1:5000", latency=0.02)
    ...
    stop()

    python -m tools.s3proxy --upstream http://127.0.0.1:5000 --latency 0.02   # prints "listening <url>"
"""
from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import json
import os
import random
import subprocess
import sys
import urllib.request
import zlib
from typing import Any, Callable
from xml.etree import ElementTree
from xml.sax.saxutils import escape

_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade",
        "content-length", "host", "expect"}
_SLOWDOWN = (b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SlowDown</Code>"
             b"<Message>Please reduce your request rate.</Message></Error>")


class Proxy:
    def __init__(self, upstream: str, *, latency: float, fail_503: float, drop: float, seed: int) -> None:
        self.upstream = upstream.rstrip("/")
        self.latency, self.fail_503, self.drop = latency, fail_503, drop
        self.key_error, self.key_error_code = 0.0, "InternalError"
        self.rng = random.Random(seed)
        self.session: Any = None
        self.reset_stats()

    def reset_stats(self) -> None:
        self.stats: dict[str, Any] = {"requests": 0, "injected_503": 0, "dropped": 0, "key_errors": 0,
                                      "by_method": {}}

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = lines[0].split(" ", 2)
                headers: list[tuple[str, str]] = []
                for line in lines[1:]:
                    if line:
                        k, _, v = line.partition(":")
                        headers.append((k.strip(), v.strip()))
                hmap = {k.lower(): v for k, v in headers}
                if hmap.get("expect", "").lower() == "100-continue":
                    writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                    await writer.drain()
                body = await _read_body(reader, hmap)
                if target.startswith("/__proxy/"):
                    await self._control(writer, method, target, body)
                    continue
                if not await self._forward(writer, method, target, headers, body):
                    return
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            try:
                writer.close()
            except Exception:  # noqa: BLE001
                pass

    async def _control(self, writer: asyncio.StreamWriter, method: str, target: str, body: bytes) -> None:
        if target.startswith("/__proxy/config") and method == "POST":
            cfg = json.loads(body or b"{}")
            for k in ("latency", "fail_503", "drop", "key_error"):
                if k in cfg:
                    setattr(self, k, float(cfg[k]))
            if "key_error_code" in cfg:
                self.key_error_code = str(cfg["key_error_code"])
            self.reset_stats()
        out = json.dumps(self.stats).encode()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                     + str(len(out)).encode() + b"\r\n\r\n" + out)
        await writer.drain()

    async def _forward(self, writer: asyncio.StreamWriter, method: str, target: str,
                       headers: list[tuple[str, str]], body: bytes) -> bool:
        s = self.stats
        s["requests"] += 1
        s["by_method"][method] = s["by_method"].get(method, 0) + 1
        if self.latency:
            await asyncio.sleep(self.latency)
        r = self.rng.random()
        if r < self.fail_503:
            s["injected_503"] += 1
            writer.write(b"HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\nContent-Length: "
                         + str(len(_SLOWDOWN)).encode() + b"\r\n\r\n" + _SLOWDOWN)
            await writer.drain()
            return True
        if r < self.fail_503 + self.drop:
            s["dropped"] += 1
            writer.transport.abort()  # a connection reset with no answer
            return False
        fwd = [(k, v) for k, v in headers if k.lower() not in _HOP]
        failed: list[str] = []
        if self.key_error and method == "POST" and "delete" in target.split("?", 1)[-1].split("&"):
            body, fwd, failed = self._drop_keys(body, fwd)
            s["key_errors"] += len(failed)
            if body is None:  # every key failed: nothing to forward
                self._answer(writer, 200, _delete_result(failed, self.key_error_code))
                await writer.drain()
                return True
        async with self.session.request(method, self.upstream + target, headers=fwd, data=body or None,
                                        allow_redirects=False, auto_decompress=False) as resp:
            data = await resp.read()
            if failed and resp.status == 200:
                data = data.replace(b"</DeleteResult>", _errors_xml(failed, self.key_error_code) + b"</DeleteResult>")
            out = [f"HTTP/1.1 {resp.status} {resp.reason or ''}"]
            for k, v in resp.headers.items():
                if k.lower() not in _HOP or (method == "HEAD" and k.lower() == "content-length"):
                    out.append(f"{k}: {v}")
            if method != "HEAD":
                out.append(f"Content-Length: {len(data)}")
            writer.write(("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + (b"" if method == "HEAD" else data))
        await writer.drain()
        return True

    def _drop_keys(self, body: bytes, headers: list[tuple[str, str]]
                   ) -> tuple[bytes | None, list[tuple[str, str]], list[str]]:
        """Take a drawn fraction of the keys out of a DeleteObjects body: (the body to forward, or
        None when no key is left; the headers with its checksums recomputed; the keys taken)."""
        root = ElementTree.fromstring(body)
        ns = root.tag[:root.tag.index("}") + 1] if root.tag.startswith("{") else ""
        keys = [o.findtext(f"{ns}Key") or "" for o in root.iter(f"{ns}Object")]
        quiet = (root.findtext(f"{ns}Quiet") or "").strip().lower() == "true"
        failed = [k for k in keys if self.rng.random() < self.key_error]
        if not failed:
            return body, headers, []
        kept = [k for k in keys if k not in set(failed)]
        if not kept:
            return None, headers, failed
        new = ('<?xml version="1.0" encoding="UTF-8"?><Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
               + ("<Quiet>true</Quiet>" if quiet else "")
               + "".join(f"<Object><Key>{escape(k)}</Key></Object>" for k in kept) + "</Delete>").encode()
        out = []
        for k, v in headers:
            low = k.lower()
            if low == "content-md5":
                v = base64.b64encode(hashlib.md5(new).digest()).decode()
            elif low == "x-amz-checksum-crc32":
                v = base64.b64encode(zlib.crc32(new).to_bytes(4, "big")).decode()
            elif low.startswith("x-amz-checksum-") or low in ("x-amz-sdk-checksum-algorithm", "x-amz-content-sha256"):
                continue  # a checksum the proxy cannot recompute: the server checks none when absent
            out.append((k, v))
        return new, out, failed

    @staticmethod
    def _answer(writer: asyncio.StreamWriter, status: int, body: bytes) -> None:
        writer.write(f"HTTP/1.1 {status} OK\r\nContent-Type: application/xml\r\nContent-Length: {len(body)}\r\n\r\n"
                     .encode() + body)


def _errors_xml(keys: list[str], code: str) -> bytes:
    return "".join(f"<Error><Key>{escape(k)}</Key><Code>{escape(code)}</Code><Message>injected by the proxy"
                   f"</Message></Error>" for k in keys).encode()


def _delete_result(failed: list[str], code: str) -> bytes:
    return (b'<?xml version="1.0" encoding="UTF-8"?>\n<DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
            + _errors_xml(failed, code) + b"</DeleteResult>")


async def _read_body(reader: asyncio.StreamReader, h: dict[str, str]) -> bytes:
    if "content-length" in h:
        n = int(h["content-length"])
        return await reader.readexactly(n) if n else b""
    if h.get("transfer-encoding", "").lower() == "chunked":
        parts = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
            if size == 0:
                await reader.readuntil(b"\r\n")  # no trailers from botocore
                return b"".join(parts)
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)
    return b""


async def serve(upstream: str, *, port: int, latency: float, fail_503: float, drop: float, seed: int,
                ready: Callable[[int], None]) -> None:
    import aiohttp

    proxy = Proxy(upstream, latency=latency, fail_503=fail_503, drop=drop, seed=seed)
    conn = aiohttp.TCPConnector(limit=256, force_close=False)
    proxy.session = aiohttp.ClientSession(connector=conn, skip_auto_headers=("User-Agent", "Content-Type"),
                                          timeout=aiohttp.ClientTimeout(total=300))
    server = await asyncio.start_server(proxy.handle, "127.0.0.1", port, limit=1 << 20, backlog=512)
    ready(server.sockets[0].getsockname()[1])
    async with server:
        await server.serve_forever()


def start_proxy(upstream: str, *, latency: float = 0.02, fail_503: float = 0.0, drop: float = 0.0,
                seed: int = 1) -> tuple[str, Callable[[], None]]:
    """Start the proxy in a child process; return its URL and a function that stops it."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(x for x in (root, os.environ.get("PYTHONPATH")) if x)}
    p = subprocess.Popen([sys.executable, "-m", "tools.s3proxy", "--upstream", upstream, "--latency", str(latency),
                          "--fail-503", str(fail_503), "--drop", str(drop), "--seed", str(seed)],
                         stdout=subprocess.PIPE, text=True, env=env, cwd=root)
    line = p.stdout.readline() if p.stdout else ""
    if not line.startswith("listening "):
        p.kill()
        raise RuntimeError(f"the S3 proxy did not start: {line!r}")
    url = line.split()[1]

    def stop() -> None:
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()

    return url, stop


def control(url: str, **config: float | str) -> dict[str, Any]:
    """Change the proxy's latency or fault rates (and reset its counters); no argument: the stats."""
    req = urllib.request.Request(url.rstrip("/") + ("/__proxy/config" if config else "/__proxy/stats"),
                                 data=json.dumps(config).encode() if config else None,
                                 method="POST" if config else "GET")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(req, timeout=10) as r:
        return json.loads(r.read())


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--upstream", required=True)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--latency", type=float, default=0.02, help="seconds added to each request (default 0.02)")
    p.add_argument("--fail-503", type=float, default=0.0, help="fraction of requests answered 503 SlowDown")
    p.add_argument("--drop", type=float, default=0.0, help="fraction of requests whose connection is reset")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)

    def ready(port: int) -> None:
        print(f"listening http://127.0.0.1:{port}", flush=True)

    asyncio.run(serve(a.upstream, port=a.port, latency=a.latency, fail_503=a.fail_503, drop=a.drop, seed=a.seed,
                      ready=ready))


if __name__ == "__main__":
    main()
