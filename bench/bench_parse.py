#!/usr/bin/env python
"""Loading a big metadata.json (issue 26 item 2): the JSON parsers alone, icectl's parse of the
same bytes, and whole ``describe`` / ``snapshots`` processes, for main's code and this checkout's.

    python bench/gen_big_metadata.py --out /tmp/big.metadata.json         # 100,000 snapshots, ~100 MB
    git archive main icectl | tar -x -C /tmp/main-code
    python bench/bench_parse.py /tmp/big.metadata.json --code main=/tmp/main-code --code new=.
    # with a table (gen_big_metadata.py --like): also describe and snapshots as whole processes
    python bench/bench_parse.py /tmp/wh/demo/events/metadata/v99.metadata.json --code main=/tmp/main-code \\
        --code new=. --warehouse /tmp/wh --table demo.events

Each in-process figure is the least CPU time (user + system, ``time.process_time``) of --runs
runs in a fresh process per parser (so one parser's garbage does not slow the next); each whole
process its CPU time from ``os.wait4``, the median of --runs, code versions interleaved.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

PARSERS = {
    "json (stdlib)": "import json; f = json.loads",
    "orjson": "import orjson; f = orjson.loads",
    "msgspec": "import msgspec; f = msgspec.json.Decoder().decode",
    "icectl parse_table_metadata": "from icectl.spec.metadata import parse_table_metadata as f",
}

TIMER = """
import gc, sys, time
{setup}
data = open(sys.argv[1], "rb").read()
best = 1e9
for _ in range(int(sys.argv[2])):
    gc.collect()
    t = time.process_time()
    r = f(data)
    best = min(best, time.process_time() - t)
    del r
print(best)
"""


def in_process(code: str, path: str, runs: int, env: dict[str, str]) -> float | None:
    p = subprocess.run([sys.executable, "-c", TIMER.format(setup=code), path, str(runs)], capture_output=True,
                       text=True, env=env, cwd="/")
    return float(p.stdout) if p.returncode == 0 else None  # orjson not installed: None


def whole(cmd: list[str], env: dict[str, str]) -> tuple[float, int]:
    with open(os.devnull, "wb") as null:
        p = subprocess.Popen(cmd, stdout=null, stderr=subprocess.DEVNULL, env=env, cwd="/")
        _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed")
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss // 1024


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("metadata")
    p.add_argument("--code", action="append", default=[], help="NAME=DIR: icectl's source tree")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--warehouse")
    p.add_argument("--table")
    a = p.parse_args()
    codes = [c.split("=", 1) for c in a.code] or [["this", os.path.dirname(HERE)]]
    envs = {label: dict(os.environ, PYTHONPATH=os.path.abspath(d)) for label, d in codes}
    print(f"{a.metadata}: {os.path.getsize(a.metadata) / 1e6:.1f} MB; load average {os.getloadavg()[0]:.1f}\n")
    print("| parse | code | CPU s (least of runs) |")
    print("|---|---|---|")
    first = next(iter(envs.values()))
    for name, setup in PARSERS.items():
        for label, env in (envs.items() if name.startswith("icectl") else [("", first)]):
            t = in_process(setup, a.metadata, a.runs, env)
            print(f"| {name} | {label} | {'not installed' if t is None else f'{t:.3f}'} |")
    if a.warehouse and a.table:
        print("\n| command | code | CPU s (median) | peak RSS MB |")
        print("|---|---|---|---|")
        res: dict[tuple[str, str], list[tuple[float, int]]] = {}
        for _ in range(a.runs):
            for cmd in ("describe", "snapshots"):
                for label, env in envs.items():
                    res.setdefault((cmd, label), []).append(whole(
                        [sys.executable, "-m", "icectl", "--warehouse", a.warehouse, cmd, a.table], env))
        for (cmd, label), rs in res.items():
            print(f"| {cmd} | {label} | {statistics.median(r[0] for r in rs):.2f} | "
                  f"{statistics.median(r[1] for r in rs)} |")
        print(f"\nload average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
