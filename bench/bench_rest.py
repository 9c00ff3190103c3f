"""REST catalog benchmark: HTTP requests per icectl command, and ``describe`` wall time on loopback.

    python bench/bench_rest.py [--runs 7]

Starts the oracle's Iceberg REST server (``../shared/oracle/rest_server.py``, or
``$ICECTL_ORACLE_DIR``) and a counting proxy in front of it, builds ``icectl demo`` through it,
then runs each command as a subprocess (``python -m icectl``, so start-up is included) and
counts the requests the proxy forwarded. ``describe`` is then timed straight against the server
(median of ``--runs`` after one warm-up). Results replace the block between the
``bench-rest`` markers in bench/RESULTS.md.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "RESULTS.md")
BEGIN, END = "<!-- bench-rest:begin -->", "<!-- bench-rest:end -->"


class CountingProxy:
    """Forwards every request to the server and records (method, path)."""

    def __init__(self, upstream: str):
        self.seen: list[tuple[str, str]] = []
        session = requests.Session()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # noqa: ANN002
                pass

            def _any(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                proxy.seen.append((self.command, self.path.split("?")[0]))
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
                r = session.request(self.command, upstream + self.path, data=body or None, headers=headers)
                self.send_response(r.status_code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(r.content)))
                self.end_headers()
                self.wfile.write(r.content)

            do_GET = do_POST = do_DELETE = do_HEAD = _any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def icectl(uri: str, *args: str, cwd: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("ICECTL_CONFIG", None)
    return subprocess.run([sys.executable, "-m", "icectl", "--uri", uri, *args], cwd=cwd, env=env,
                          capture_output=True, text=True)


def kind(method: str, path: str) -> str:
    p = re.sub(r"^/v1/", "", path)
    if p == "config":
        return "config"
    if method == "GET" and re.fullmatch(r"namespaces/[^/]+/tables/[^/]+", p):
        return "load"
    if method == "POST" and re.fullmatch(r"namespaces/[^/]+/tables/[^/]+", p):
        return "commit"
    if method == "POST" and re.fullmatch(r"namespaces/[^/]+/tables", p):
        return "stage-create"
    if method == "GET" and p == "namespaces":
        return "list-namespaces"
    if method == "GET" and re.fullmatch(r"namespaces/[^/]+/tables", p):
        return "list-tables"
    return f"{method} {path}"


COMMANDS = [
    ("describe", ["describe", "{t}"]),
    ("snapshots", ["snapshots", "{t}"]),
    ("files", ["files", "{t}"]),
    ("refs", ["refs", "{t}"]),
    ("list", ["list"]),
    ("validate --deep", ["validate", "{t}", "--deep"]),
    ("expire --dry-run", ["expire", "{t}", "--older-than", "0s", "--retain-last", "2", "--dry-run"]),
    ("cherry-pick", ["cherry-pick", "{t}", "6807948677818654560", "--yes"]),
    ("rollback", ["rollback", "{t}", "--to-snapshot", "9115177490179072159", "--yes"]),
    ("branch create", ["branch", "create", "{t}", "nightly", "--yes"]),
    ("tag create", ["tag", "create", "{t}", "t1", "--yes"]),
    ("expire", ["expire", "{t}", "--older-than", "0s", "--retain-last", "2", "--yes"]),
    ("remove-orphans", ["remove-orphans", "{t}", "--yes"]),
    ("rewrite-deletes", ["rewrite-deletes", "{t}", "--yes"]),
    ("compact --dry-run", ["compact", "{t}", "--dry-run"]),
    ("upgrade-format --to 3", ["upgrade-format", "{t}", "--to", "3", "--yes"]),
    ("create", ["create", "bench.orders", "--schema", "id:long!, ts:timestamptz", "--partition-by", "day(ts)",
                "--yes"]),
]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    oracle = os.environ.get("ICECTL_ORACLE_DIR") or os.path.join(ROOT, "..", "shared", "oracle")
    sys.path.insert(0, oracle)
    import rest_server

    with tempfile.TemporaryDirectory() as root:
        url, stop = rest_server.start(root)
        try:
            proxy = CountingProxy(url)
            requests.post(url + "/v1/namespaces", json={"namespace": ["bench"], "properties": {}}, timeout=30)
            out = icectl(proxy.url, "demo", "bench", cwd=root)
            if out.returncode:
                raise SystemExit(out.stderr)
            rows = []
            for name, argv in COMMANDS:
                proxy.seen.clear()
                r = icectl(proxy.url, *[a.format(t="bench.events") for a in argv], cwd=root)
                if r.returncode:
                    raise SystemExit(f"{name}: {r.stderr}")
                counts = Counter(kind(m, p) for m, p in proxy.seen)
                rows.append((name, len(proxy.seen), ", ".join(f"{k} {v}" for k, v in counts.items())))
            icectl(url, "describe", "bench.events", cwd=root)  # warm-up
            walls = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                r = icectl(url, "describe", "bench.events", cwd=root)
                walls.append(time.perf_counter() - t0)
                assert r.returncode == 0, r.stderr
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            floor = time.perf_counter() - t0
        finally:
            stop()
    write_results(rows, walls, floor, args.runs)
    return 0


def write_results(rows: list[tuple[str, int, str]], walls: list[float], floor: float, runs: int) -> None:
    load = os.getloadavg()
    lines = [BEGIN, f"## REST catalog: run of {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC", "",
             f"Written by `python bench/bench_rest.py` against the oracle's REST server on loopback "
             f"(Iceberg Java 1.10.2 handlers, JdbcCatalog on SQLite), on the `icectl demo` table; each command "
             f"a fresh `python -m icectl` process (one catalog per process: `GET /v1/config` each time). "
             f"{os.cpu_count()} cores, load average {load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f} at the end.", "",
             "| command | requests | of which |", "| --- | ---: | --- |"]
    lines += [f"| `{name}` | {n} | {detail} |" for name, n, detail in rows]
    lines += ["", f"`describe` wall clock (the whole process, straight to the server): median "
                  f"{statistics.median(walls):.3f} s of {runs} runs (min {min(walls):.3f}, max {max(walls):.3f}); "
                  f"`python -c pass` takes {floor:.3f} s here.", END]
    block = "\n".join(lines)
    text = open(RESULTS).read() if os.path.exists(RESULTS) else ""
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    with open(RESULTS, "w") as f:
        f.write(text)
    print(block)


if __name__ == "__main__":
    sys.exit(main())
