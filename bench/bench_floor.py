#!/usr/bin/env python
"""Read commands against the decode floor, and main's code against this checkout's (issue 26).

The floor is a whole process that imports polars, finds the manifests a command must read with
icectl (metadata, manifest list) and decodes each with ``pl.read_avro``, converting nothing:

    floor-current  the current snapshot's manifests   (files, validate, health)
    floor-all      every manifest of every snapshot    (expire --dry-run, remove-orphans --dry-run)
    floor-diff     the manifests only one of the 100th newest snapshot and the current one has (diff)

Every measurement is a whole process (``python -m icectl``), stdout to /dev/null, its CPU time
(user + system, from ``os.wait4``: the machine is shared, so wall time says little) and peak
RSS; the median of --runs runs, code versions interleaved run by run. ``--code DIR`` (repeatable,
``name=DIR``) runs icectl from another source tree (e.g. ``git archive`` of main into DIR) by
putting DIR first on PYTHONPATH; the default is this checkout.

    python bench/gen_large_table.py --out /tmp/b                  # the 1x table (bench.large)
    git archive main icectl | tar -x -C /tmp/main-code
    python bench/bench_floor.py --data /tmp/b --code main=/tmp/main-code --code new=. --runs 3
    python bench/bench_floor.py --metadata-only WAREHOUSE IDENT   # describe / snapshots of a big metadata file
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
IDENT = "bench.large"

FLOOR = """
import sys, io, polars as pl
from icectl.catalog import build_catalog, parse_identifier, resolve_catalog_config
from icectl.table.loaded import load_table
t = load_table(build_catalog(resolve_catalog_config(sys.argv[1])), parse_identifier(sys.argv[2]))
scope = sys.argv[3]
if scope.startswith("diff:"):  # the manifests only one of the two snapshots has
    a = {m.manifest_path: m for m in t.manifests(t.metadata.snapshot_by_id(int(scope[5:])))}
    b = {m.manifest_path: m for m in t.manifests(t.metadata.current_snapshot)}
    snaps = [[m for p, m in {**a, **b}.items() if (p in a) != (p in b)]]
else:
    snaps = [t.manifests(s) for s in ([t.metadata.current_snapshot] if scope == "current" else t.metadata.snapshots)]
seen = set()
rows = 0
for ms in snaps:
    for m in ms:
        if m.manifest_path not in seen:
            seen.add(m.manifest_path)
            rows += pl.read_avro(io.BytesIO(t.io.read(m.manifest_path))).height
print(len(seen), rows)
"""


def commands(cutoff: int, diff_from: int) -> dict[str, list[str]]:
    return {
        "files -o json": ["-o", "json", "files", IDENT],
        "files -o jsonl": ["-o", "jsonl", "files", IDENT],
        "validate": ["-o", "json", "validate", IDENT],
        "health": ["-o", "json", "health", IDENT],
        "expire --dry-run": ["-o", "json", "expire", IDENT, "--older-than", str(cutoff), "--dry-run"],
        "remove-orphans --dry-run": ["-o", "json", "remove-orphans", IDENT, "--dry-run"],
        "diff": ["-o", "json", "diff", IDENT, str(diff_from), "main"],
    }


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float, int] | None:
    """(CPU seconds user + system, wall seconds, peak RSS in MB) of one child process; None when
    that code has no such command or option (exit 2, a usage error: main before ``-o jsonl``)."""
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as null:
        p = subprocess.Popen(cmd, stdout=null, stderr=subprocess.PIPE, env=env, cwd="/")
        _, status, ru = os.wait4(p.pid, 0)
        err = p.stderr.read()
        p.stderr.close()
        p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode == 2:
        return None
    if p.returncode not in (0, 8, 13, 14):  # validate exits 8 on findings, health 13/14 on warnings/criticals
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}): {err.decode()[-500:]}")
    return ru.ru_utime + ru.ru_stime, time.perf_counter() - t0, ru.ru_maxrss // 1024


def cutoff_keeping(data: str, keep: int = 100) -> tuple[int, int]:
    """A timestamp that keeps the newest ``keep`` snapshots (as bench_scale's expire), and the
    ``keep``-th newest snapshot's id (bench_scale's diff compares it with main)."""
    out = subprocess.run([sys.executable, "-c", FLOOR.split("t = load_table")[0] + (
        "t = load_table(build_catalog(resolve_catalog_config(sys.argv[1])), parse_identifier(sys.argv[2]))\n"
        "s = sorted(t.metadata.snapshots, key=lambda s: s.timestamp_ms)[-%d]\n"
        "print(s.timestamp_ms, s.snapshot_id)\n" % keep), "bench", IDENT], capture_output=True, text=True, check=True,
        env=dict(os.environ, ICECTL_CONFIG=os.path.join(data, "icectl.yaml")))
    ts, sid = out.stdout.split()
    return int(ts), int(sid)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True, help="gen_large_table.py's --out (icectl.yaml, catalog.db)")
    p.add_argument("--code", action="append", default=[], help="NAME=DIR: icectl's source tree to run")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--only", help="comma-separated commands (names as printed)")
    a = p.parse_args()
    codes = [c.split("=", 1) for c in a.code] or [["this", os.path.dirname(HERE)]]
    base = dict(os.environ, ICECTL_CONFIG=os.path.join(a.data, "icectl.yaml"))
    cutoff, diff_from = cutoff_keeping(a.data)
    cmds = commands(cutoff, diff_from)
    if a.only:
        cmds = {k: v for k, v in cmds.items() if k in a.only.split(",")}
    jobs: list[tuple[str, str, list[str], dict[str, str]]] = []
    for scope, arg in (("current", "current"), ("all", "all"), ("diff", f"diff:{diff_from}")):
        if scope == "diff" and "diff" not in cmds:
            continue
        if scope == "all" and not {"expire --dry-run", "remove-orphans --dry-run"} & set(cmds):
            continue
        jobs.append((f"floor-{scope}", "polars", [sys.executable, "-c", FLOOR, "bench", IDENT, arg], base))
    for name, args in cmds.items():
        for label, code in codes:
            env = dict(base, PYTHONPATH=os.path.abspath(code))
            jobs.append((name, label, [sys.executable, "-m", "icectl", "-c", "bench", *args], env))
    results: dict[tuple[str, str], list[tuple[float, float, int]]] = {}
    load = [os.getloadavg()[0]]
    for _ in range(a.runs):  # interleaved: every job once per round
        for name, label, cmd, env in jobs:
            results.setdefault((name, label), []).append(run(cmd, env))
        load.append(os.getloadavg()[0])
    floor = {s: statistics.median(r[0] for r in results[(f"floor-{s}", "polars")])
             for s in ("current", "all", "diff") if (f"floor-{s}", "polars") in results}
    print(f"load average (1 min) during the runs: {min(load):.1f}-{max(load):.1f}; medians of {a.runs} runs\n")
    print("| command | code | CPU s (user+sys) | x floor | wall s | peak RSS MB |")
    print("|---|---|---|---|---|---|")
    for (name, label), rs in results.items():
        if None in rs:
            print(f"| {name} | {label} | n/a | | | |")
            continue
        cpu = statistics.median(r[0] for r in rs)
        scope = ("all" if name in ("expire --dry-run", "remove-orphans --dry-run", "floor-all")
                 else "diff" if name in ("diff", "floor-diff") else "current")
        print(f"| {name} | {label} | {cpu:.2f} | {cpu / floor[scope]:.2f} | {statistics.median(r[1] for r in rs):.2f} "
              f"| {statistics.median(r[2] for r in rs)} |")
    print(json.dumps({"cutoff": cutoff, "diff_from": diff_from}))


if __name__ == "__main__":
    main()
