#!/usr/bin/env python
"""Read commands against the decode floor, and main's code against this checkout's (issue 26).

The floor of each command is a whole process that parses the metadata file (orjson) and decodes
with ``pl.read_avro``, once each, exactly the Avro files that command opens, converting nothing:
the files are recorded by running the command once in-process with ``open`` wrapped
(bench_scale.READ_SET; bench_scale.FLOOR_SCRIPT decodes them), with the first ``--code``.

Every measurement is a whole process (``python -m icectl``), stdout to /dev/null, its CPU time
(user + system, from ``os.wait4``: the machine is shared, so wall time says little) and peak
RSS; the median of --runs runs, code versions interleaved run by run. Children get an environment
without PYTHONDONTWRITEBYTECODE and each code tree is byte-compiled first, as a pip install is. ``--code DIR`` (repeatable,
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
sys.path.insert(0, HERE)
from bench_scale import FLOOR_SCRIPT, READ_SET, user_env  # noqa: E402  (the floors are measured alike)

IDENT = "bench.large"

LOAD = """
import sys
from icectl.catalog import build_catalog, parse_identifier, resolve_catalog_config
from icectl.table.loaded import load_table
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
    out = subprocess.run([sys.executable, "-c", LOAD + (
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
    base = dict(user_env(), ICECTL_CONFIG=os.path.join(a.data, "icectl.yaml"))
    cutoff, diff_from = cutoff_keeping(a.data)
    cmds = commands(cutoff, diff_from)
    if a.only:
        cmds = {k: v for k, v in cmds.items() if k in a.only.split(",")}
    jobs: list[tuple[str, str, list[str], dict[str, str]]] = []
    for _, code in codes:
        subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(os.path.abspath(code), "icectl")],
                       check=True, env=base)
    folder = os.path.join(a.data, "floors")
    os.makedirs(folder, exist_ok=True)
    script = os.path.join(folder, "floor_decode.py")
    with open(script, "w") as fh:
        fh.write(FLOOR_SCRIPT)
    first = dict(base, PYTHONPATH=os.path.abspath(codes[0][1]))
    for name, args in cmds.items():  # the files each command opens, its floor's input
        slug = name.replace(" ", "_").replace("-", "")
        opened = os.path.join(folder, f"opened_{slug}.json")
        run([sys.executable, "-c", READ_SET, opened, "-c", "bench", *args], first)
        with open(opened) as fh:
            seen = json.load(fh)
        sets = os.path.join(folder, f"floor_{slug}.json")
        metadata = sorted(p for p in seen if p.endswith(".metadata.json"))
        with open(sets, "w") as fh:
            json.dump({"metadata_json": metadata[0] if metadata else "", "cmd": sorted(p for p in seen if p.endswith(".avro")),
                       "cmd_metadata": metadata}, fh)
        print(f"{name}: opens {sum(seen.values())} files, {len(seen)} distinct", file=sys.stderr)
        jobs.append((f"floor {name}", "polars", [sys.executable, script, sets, "cmd"], base))
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
    floor = {name: statistics.median(r[0] for r in results[(f"floor {name}", "polars")]) for name in cmds}
    print(f"load average (1 min) during the runs: {min(load):.1f}-{max(load):.1f}; medians of {a.runs} runs\n")
    print("| command | code | CPU s (user+sys) | x floor | wall s | peak RSS MB |")
    print("|---|---|---|---|---|---|")
    for (name, label), rs in results.items():
        if None in rs:
            print(f"| {name} | {label} | n/a | | | |")
            continue
        cpu = statistics.median(r[0] for r in rs)
        of = name[len("floor "):] if name.startswith("floor ") else name
        print(f"| {name} | {label} | {cpu:.2f} | {cpu / floor[of]:.2f} | {statistics.median(r[1] for r in rs):.2f} "
              f"| {statistics.median(r[2] for r in rs)} |")
    print(json.dumps({"cutoff": cutoff, "diff_from": diff_from}))


if __name__ == "__main__":
    main()
