#!/usr/bin/env python
"""Scale benchmark: the read-only commands at 1x and 10x the benchmark table, time and peak memory.

The tables come from ``gen_large_table.py`` (metadata only: manifests, manifest lists, metadata
JSON) with ``--snapshots 2000 x SCALE`` and 100 files per append: 1x is the usual benchmark table
(2,000 snapshots, 200,000 live files), 10x has 20,000 snapshots and 2,000,000 live files. Each is
generated once into ``--cache`` (``.cache/bench<SCALE>x``, git-ignored) and reused. The script then
gives each table a file-system (Hadoop) layout next to its SQL catalog entry (a hard link
``metadata/v<N>.metadata.json`` and ``version-hint.text``), so icectl (``--warehouse``) and Iceberg
Java's HadoopCatalog read the same files, and creates an empty placeholder for every live data file
(so ``remove-orphans`` lists as many files as a real table has; no command here reads data files).

Timed, each as a whole command in a subprocess (``python -m icectl``, this checkout's code), output
to /dev/null:

    describe, snapshots, files, -o json files, -o json validate,
    -o json expire --older-than CUT --dry-run     (CUT keeps the newest 100 snapshots)
    -o json remove-orphans --dry-run              (every snapshot's files against a listing)

Wall clock, CPU (user + system) and peak RSS of the child, from ``os.wait4`` (the child's own
rusage, not the maximum over every child this script ever had). With ``--java`` it also times
Iceberg Java (the oracle, local[2]) scanning the ``files`` and ``all_files`` metadata tables of
the same table, twice each in one session (the first pays the JVM's warm-up).

    python bench/bench_scale.py --label after            # both scales, every command, 1 run each
    python bench/bench_scale.py --scales 10 --commands validate,files-json --runs 1
    python bench/bench_scale.py --java --scales 1,10

Results are kept per label in ``<cache>/bench_scale_results.json`` and the block between the
``bench-scale`` markers of bench/RESULTS.md shows every label recorded (e.g. ``before`` and
``after`` a change).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
BEGIN, END = "<!-- bench-scale:begin -->", "<!-- bench-scale:end -->"
NAMESPACE, TABLE = "bench", "large"
IDENT = f"{NAMESPACE}.{TABLE}"
KEEP = 100  # snapshots the expire cut-off keeps

COMMANDS = {
    "describe": ["describe", IDENT],
    "snapshots": ["snapshots", IDENT],
    "files": ["files", IDENT],
    "files-json": ["-o", "json", "files", IDENT],
    "validate": ["-o", "json", "validate", IDENT],
    "expire-dry-run": ["-o", "json", "expire", IDENT, "--older-than", "{cutoff}", "--dry-run"],
    "orphans-dry-run": ["-o", "json", "remove-orphans", IDENT, "--dry-run"],
}

JAVA_FILES = ("SELECT count(*) AS entries, sum(record_count) AS records, sum(size(lower_bounds)) AS lower_bounds "
              "FROM hc.bench.large.files")
JAVA_ALL_FILES = ("SELECT count(*) AS entries, sum(record_count) AS records, sum(size(lower_bounds)) AS lower_bounds "
                  "FROM hc.bench.large.all_files")


# ---------------------------------------------------------------------------------------------
# The tables

def table_root(cache: str, scale: int) -> str:
    return os.path.join(os.path.abspath(cache), f"bench{scale}x")


def prepare(cache: str, scale: int) -> dict:
    """Generate (once) the table of this scale, its Hadoop layout and placeholders; its facts."""
    out = table_root(cache, scale)
    info_path = os.path.join(out, "prepared.json")
    if os.path.exists(info_path):
        with open(info_path) as fh:
            return json.load(fh)
    import gen_large_table as gen

    if not os.path.exists(os.path.join(out, "gen_info.json")):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, os.path.join(HERE, "gen_large_table.py"), "--out", out, "--force",
                        "--snapshots", str(2000 * scale), "--files-per-snapshot", "100"], check=True)
        print(f"generated {scale}x in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    with open(os.path.join(out, "gen_info.json")) as fh:
        g = json.load(fh)
    mdir = os.path.dirname(g["metadata_location"])
    version = g["snapshots"]
    hadoop_md = os.path.join(mdir, f"v{version}.metadata.json")
    if not os.path.exists(hadoop_md):
        os.link(g["metadata_location"], hadoop_md)
    with open(os.path.join(mdir, "version-hint.text"), "w") as fh:
        fh.write(str(version))

    from icectl.catalog.hadoop import HadoopCatalog
    from icectl.io import FileIO
    from icectl.table.listing import manifest_frame
    from icectl.table.loaded import load_table

    t1 = time.perf_counter()
    warehouse = os.path.join(out, "warehouse")
    table = load_table(HadoopCatalog("hc", warehouse, FileIO()), (NAMESPACE, TABLE))
    md = table.metadata
    placeholders = 0
    made: set[str] = set()
    for m in table.manifests(md.current_snapshot):
        df = manifest_frame(table, m)
        paths = df.filter(df.get_column("status") != 2).get_column("data_file").struct.field("file_path").to_list()
        for p in paths:
            d = os.path.dirname(p)
            if d not in made:
                os.makedirs(d, exist_ok=True)
                made.add(d)
            os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644))
        placeholders += len(paths)
    snaps = sorted(md.snapshots, key=lambda s: s.timestamp_ms)
    newest_kept, oldest_expired = snaps[-KEEP].timestamp_ms, snaps[-KEEP - 1].timestamp_ms
    cutoff_ms = (newest_kept + oldest_expired) // 2 // 1000 * 1000
    info = {
        "scale": scale, "root": out, "warehouse": warehouse, "snapshots": len(md.snapshots),
        "live_data_files": g["live_data_files"], "placeholders": placeholders,
        "manifests_in_current_snapshot": g["manifests_in_current_snapshot"],
        "manifest_bytes_in_current_snapshot": g["manifest_bytes_in_current_snapshot"],
        "merges": g["merges"], "entries_rewritten_by_merges": g["entries_rewritten_by_merges"],
        "metadata_json_bytes": g["metadata_json_bytes"], "files_written": g["files_written"],
        "bytes_written": g["bytes_written"], "generate_seconds": g["generate_seconds"],
        "placeholders_seconds": round(time.perf_counter() - t1, 1),
        "cutoff": dt.datetime.fromtimestamp(cutoff_ms / 1000, tz=dt.timezone.utc).isoformat().replace("+00:00", "Z"),
    }
    info.update(count_work(table, cutoff_ms))
    with open(info_path, "w") as fh:
        json.dump(info, fh, indent=2)
    return info


def count_work(table, cutoff_ms: int) -> dict:
    """How much each command has to read: manifest-list entries and manifest entries (all
    snapshots, and what an expiry keeping the newest snapshots reads), from the manifest lists."""
    md = table.metadata
    kept = {s.snapshot_id for s in md.snapshots if s.timestamp_ms >= cutoff_ms}
    list_entries = 0
    every: dict[str, int] = {}
    valid: set[str] = set()
    for s in md.snapshots:
        ms = table.manifests(s)
        list_entries += len(ms)
        for m in ms:
            every[m.manifest_path] = (m.added_files_count or 0) + (m.existing_files_count or 0) + \
                (m.deleted_files_count or 0)
            if s.snapshot_id in kept:
                valid.add(m.manifest_path)
    return {"manifest_list_entries": list_entries, "manifests_all_snapshots": len(every),
            "entries_all_snapshots": sum(every.values()),
            "entries_expired_only": sum(n for p, n in every.items() if p not in valid),
            "entries_kept": sum(n for p, n in every.items() if p in valid)}


# ---------------------------------------------------------------------------------------------
# Timing

def run_child(argv: list[str], env: dict[str, str], stdout=None) -> dict:
    """Wall, CPU and peak RSS (MB) of one command, from its own rusage."""
    with tempfile.TemporaryFile() as err, open(os.devnull, "wb") as devnull:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, env=env, stdout=stdout or devnull, stderr=err, stdin=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        err.seek(0)
        tail = err.read()[-2000:].decode(errors="replace")
    return {"wall": round(wall, 2), "cpu": round(ru.ru_utime + ru.ru_stime, 2), "rss_mb": round(ru.ru_maxrss / 1024),
            "rc": os.waitstatus_to_exitcode(status), "stderr": tail.strip()[-400:],
            "load": round(os.getloadavg()[0], 1)}


def icectl_env(root: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("ICECTL_CONFIG", None)
    return env


def time_command(name: str, info: dict, runs: int, root: str, max_wait: float = 30) -> dict:
    args = [a.format(cutoff=info["cutoff"]) for a in COMMANDS[name]]
    argv = [sys.executable, "-m", "icectl", "--warehouse", info["warehouse"], *args]
    results = []
    for _ in range(runs):
        from harness import wait_for_quiet

        wait_for_quiet(2.0, max_wait)
        r = run_child(argv, icectl_env(root))
        print(f"  {info['scale']:>3}x {name:<16} {r['wall']:8.2f} s wall {r['cpu']:8.2f} s CPU "
              f"{r['rss_mb']:6} MB rc={r['rc']} load {r['load']}", file=sys.stderr, flush=True)
        if r["rc"] not in (0,):
            print(f"     {r['stderr']}", file=sys.stderr)
        results.append(r)
    best = sorted(results, key=lambda r: r["wall"])[len(results) // 2]
    return {**best, "runs": len(results), "walls": [r["wall"] for r in results]}


def time_java(info: dict, driver_memory: str) -> dict:
    from harness import java_env, write_java_call

    folder = os.path.dirname(info["warehouse"])
    argv = [sys.executable, write_java_call(folder), info["warehouse"], JAVA_FILES, JAVA_FILES, JAVA_ALL_FILES,
            JAVA_ALL_FILES]
    with tempfile.TemporaryFile() as out:
        r = run_child(argv, java_env(driver_memory), stdout=out)
        out.seek(0)
        text = out.read().decode().strip().splitlines()
    if r["rc"] != 0 or not text:
        raise SystemExit(f"Iceberg Java failed (exit {r['rc']}): {r['stderr']}")
    j = json.loads(text[-1])
    st = j["statements"]
    r.update({"session": j["session_seconds"], "files": [s["seconds"] for s in st[:2]],
              "all_files": [s["seconds"] for s in st[2:]], "files_rows": st[0]["rows"][0],
              "all_files_rows": st[2]["rows"][0], "driver_memory": driver_memory})
    print(f"  {info['scale']:>3}x java: files {r['files']} all_files {r['all_files']} whole {r['wall']} s "
          f"{r['rss_mb']} MB", file=sys.stderr, flush=True)
    return r


# ---------------------------------------------------------------------------------------------
# Results

def render(store: dict) -> str:
    lines = ["## Scale: 1x and 10x the benchmark table", ""]
    tables = store.get("tables", {})
    if tables:
        lines += ["| table | snapshots | live files | manifests (current) | manifest-list entries (all snapshots) | "
                  "manifests (all) | entries (all manifests) | entries an expiry reads | generated in |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for s in sorted(tables, key=int):
            t = tables[s]
            lines.append(f"| {s}x | {t['snapshots']:,} | {t['live_data_files']:,} | "
                         f"{t['manifests_in_current_snapshot']} | {t['manifest_list_entries']:,} | "
                         f"{t['manifests_all_snapshots']:,} | {t['entries_all_snapshots']:,} | "
                         f"{t['entries_expired_only'] + t['entries_kept']:,} | {t['generate_seconds']:.0f} s |")
        lines.append("")
    for label, runs in store.get("labels", {}).items():
        meta = runs.get("_meta", {})
        lines += [f"### `{label}` ({meta.get('when', '?')}, commit {meta.get('commit', '?')})", "",
                  "| command | 1x wall (s) | 1x CPU (s) | 1x peak RSS (MB) | 10x wall (s) | 10x CPU (s) | "
                  "10x peak RSS (MB) | 10x / 1x wall | 10x / 1x CPU |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for name in COMMANDS:
            one, ten = runs.get("1", {}).get(name), runs.get("10", {}).get(name)
            if one is None and ten is None:
                continue

            def cells(r):
                if r is None:
                    return ["", "", ""]
                flag = "" if r["rc"] == 0 else f" (exit {r['rc']})"
                return [f"{r['wall']:.2f}{flag}", f"{r['cpu']:.2f}", f"{r['rss_mb']:,}"]

            ratio_w = f"{ten['wall'] / one['wall']:.1f}x" if one and ten and one["wall"] else ""
            ratio_c = f"{ten['cpu'] / one['cpu']:.1f}x" if one and ten and one["cpu"] else ""
            cmd = " ".join(a if a != "{cutoff}" else "CUT" for a in COMMANDS[name])
            lines.append(f"| `icectl {cmd}` | " + " | ".join(cells(one) + cells(ten) + [ratio_w, ratio_c]) + " |")
        lines.append("")
    java = store.get("java", {})
    if java:
        lines += ["### Iceberg Java metadata tables (oracle, local[2], one session per scale)", "",
                  "| scale | `.files` first (s) | `.files` warm (s) | `.all_files` first (s) | `.all_files` warm (s) | "
                  "rows `.files` / `.all_files` | session start (s) | whole process (s) | CPU, whole process (s) | "
                  "peak RSS (MB) |",
                  "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |"]
        for s in sorted(java, key=int):
            j = java[s]
            lines.append(f"| {s}x | {j['files'][0]:.2f} | {j['files'][1]:.2f} | {j['all_files'][0]:.2f} | "
                         f"{j['all_files'][1]:.2f} | {j['files_rows']['entries']:,} / "
                         f"{j['all_files_rows']['entries']:,} | {j['session']:.1f} | {j['wall']:.1f} | {j['cpu']:.1f} | "
                         f"{j['rss_mb']:,} |")
        lines.append("")
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cache", default=os.path.join(ROOT, ".cache"), help="where the tables live (default .cache)")
    p.add_argument("--scales", default="1,10", help="comma-separated multiples of the 1x table (default 1,10)")
    p.add_argument("--commands", default=",".join(COMMANDS), help=f"subset of {','.join(COMMANDS)}")
    p.add_argument("--runs", type=int, default=1, help="runs of each command; the median is kept (default 1)")
    p.add_argument("--label", default="current", help="the name these results are kept under (default current)")
    p.add_argument("--icectl-root", default=ROOT, help="the checkout whose icectl runs (default: this one; e.g. an "
                   "unpacked `git archive` of an older commit for before/after figures)")
    p.add_argument("--max-wait", type=float, default=30,
                   help="wait up to this many seconds for a 1-minute load average below 2 before each run")
    p.add_argument("--java", action="store_true", help="also time Iceberg Java's files/all_files metadata tables")
    p.add_argument("--java-driver-memory", default="6g")
    p.add_argument("--prepare-only", action="store_true", help="generate and prepare the tables, time nothing")
    p.add_argument("--store", help="the results file (default <cache>/bench_scale_results.json)")
    p.add_argument("--merge", action="append", default=[], help="also show the labels of this results file")
    p.add_argument("--no-write", action="store_true", help="do not update bench/RESULTS.md")
    p.add_argument("--results", default=os.path.join(HERE, "RESULTS.md"))
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    from harness import update_results

    a = parse_args(argv)
    scales = [int(s) for s in a.scales.split(",") if s]
    names = [c for c in a.commands.split(",") if c]
    unknown = [c for c in names if c not in COMMANDS]
    if unknown:
        raise SystemExit(f"unknown commands {unknown}; choose from {list(COMMANDS)}")
    store_path = a.store or os.path.join(os.path.abspath(a.cache), "bench_scale_results.json")
    store = json.load(open(store_path)) if os.path.exists(store_path) else {}
    for extra in a.merge:  # results of another run kept in another file (runs at the same time)
        with open(extra) as fh:
            other = json.load(fh)
        for k in ("tables", "java"):
            store.setdefault(k, {}).update(other.get(k, {}))
        for label, runs in other.get("labels", {}).items():
            mine = store.setdefault("labels", {}).setdefault(label, {})
            for scale, commands in runs.items():
                if scale == "_meta":
                    mine.setdefault("_meta", commands)
                else:
                    mine.setdefault(scale, {}).update(commands)
    for scale in scales:
        info = prepare(a.cache, scale)
        store.setdefault("tables", {})[str(scale)] = info
        if a.prepare_only:
            continue
        if a.java:
            store.setdefault("java", {})[str(scale)] = time_java(info, a.java_driver_memory)
            with open(store_path, "w") as fh:
                json.dump(store, fh, indent=1)
        if not names:
            continue
        label = store.setdefault("labels", {}).setdefault(a.label, {})
        commit = subprocess.run(["git", "-C", a.icectl_root, "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        label["_meta"] = {"when": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                          "commit": commit or a.icectl_root}
        for name in names:
            label.setdefault(str(scale), {})[name] = time_command(name, info, a.runs, a.icectl_root, a.max_wait)
            with open(store_path, "w") as fh:
                json.dump(store, fh, indent=1)
    block = render(store)
    print(block)
    if not a.no_write:
        update_results(a.results, BEGIN, END, block, "# Scale benchmark")


if __name__ == "__main__":
    main()
