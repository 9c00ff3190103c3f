#!/usr/bin/env python
"""Scale benchmark: the read and plan commands at 1x, 10x and on the neglected table, against
the decode floor and the peers.

The tables: ``gen_large_table.py`` with ``--snapshots 2000 x SCALE`` and 100 files per append
(1x: 2,000 snapshots, 200,000 live files; 10x: 20,000 snapshots, 2,000,000 live files), and
``gen_neglected_table.py`` (``neglected``: 100,000 snapshots of 2 files, 24 refs, 1,000 logged
metadata versions, a metadata file over 100 MB). Each is generated once into ``--cache``
(``.cache/bench<SCALE>x``, ``.cache/neglected``, git-ignored) and reused, with a file-system
(Hadoop) layout next to its SQL catalog entry, so icectl (``--warehouse``) and Iceberg Java's
HadoopCatalog read the same files; the 1x and 10x tables get an empty placeholder for every live
data file (so ``remove-orphans`` lists as many files as a real table has).

Timed, each as a whole command in a subprocess (``python -m icectl``, the code of
``--icectl-root``), output to /dev/null: describe, snapshots, files, -o json files, -o json
validate, -o json expire --older-than CUT --dry-run (CUT keeps the newest 100 snapshots), -o json
remove-orphans --dry-run, -o json diff T S main (S: the 100th newest snapshot), -o json health.
Wall clock, CPU (user + system) and peak RSS of the child, from ``os.wait4``.

The decode floor of each command: a fresh process that parses the metadata file (orjson when
installed) and decodes with ``polars.read_avro``, once each, exactly the Avro files that command
opens: recorded by running the command once in-process with ``open`` wrapped (:data:`READ_SET`),
per command and table (see bench/README.md for what each command reads). Children get an
environment without ``PYTHONDONTWRITEBYTECODE`` and the timed icectl is byte-compiled first
(``python -m compileall``), as a pip install is; they run from ``/`` so that ``python -m icectl``
imports the code of ``--icectl-root``, not a checkout in the current folder. Peers: ``--pyiceberg`` (where PyIceberg has the command), ``--java`` (Iceberg Java,
the oracle: ``SELECT * FROM t.files`` rendered to JSON, cold and warm in one session),
``--expire-yes`` (``expire --yes`` on the table, restored afterwards, and with ``--java`` Java's
``expire_snapshots`` given the same wall time).

    python bench/bench_scale.py --label after            # 1x, 10x, neglected; every command
    python bench/bench_scale.py --scales neglected --commands describe,validate --pyiceberg
    python bench/bench_scale.py --scales neglected --commands "" --expire-yes --java

Results are kept per label in ``<cache>/bench_scale_results.json`` and the block between the
``bench-curve`` markers of bench/RESULTS.md shows every label recorded (e.g. ``before`` and
``after`` a change).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
BEGIN, END = "<!-- bench-curve:begin -->", "<!-- bench-curve:end -->"  # the older bench-scale block is kept as is
NAMESPACE, TABLE = "bench", "large"
IDENT = f"{NAMESPACE}.{TABLE}"
KEEP = 100  # snapshots the expire cut-off keeps

COMMANDS = {
    "describe": ["describe", "{ident}"],
    "snapshots": ["snapshots", "{ident}"],
    "files": ["files", "{ident}"],
    "files-json": ["-o", "json", "files", "{ident}"],
    "validate": ["-o", "json", "validate", "{ident}"],
    "expire-dry-run": ["-o", "json", "expire", "{ident}", "--older-than", "{cutoff}", "--dry-run"],
    "orphans-dry-run": ["-o", "json", "remove-orphans", "{ident}", "--dry-run"],
    "diff": ["-o", "json", "diff", "{ident}", "{diff_from}", "main"],
    "health": ["-o", "json", "health", "{ident}"],
}
# Exit codes that are answers, not failures: health's 13/14 (maintenance recommended / overdue).
ANSWER_CODES = {"health": (0, 13, 14)}
# Floors of results stored before the floors were per command (by kind: the metadata file; the
# current snapshot's list and manifests; every list and distinct manifest; diff's two lists and
# the manifests only one side has). New runs record what each command opens (READ_SET).
FLOOR_OF = {"describe": "metadata", "snapshots": "metadata", "files": "current", "files-json": "current",
            "validate": "current", "health": "current", "expire-dry-run": "all", "orphans-dry-run": "all",
            "diff": "diff", "expire-yes": "all"}
# PyIceberg's closest call, where it has one (run with PYICEBERG_HOME = the table's folder).
PYICEBERG = {
    "describe": "t = cat.load_table(IDENT); print(t.metadata.format_version, t.schema(), t.spec(), "
                "t.properties, t.current_snapshot())",
    "snapshots": "t = cat.load_table(IDENT); print(t.inspect.snapshots().num_rows)",
    "files-json": "t = cat.load_table(IDENT); print(t.inspect.files().num_rows)",
}
PYICEBERG_HEAD = "import sys; from pyiceberg.catalog import load_catalog; IDENT = sys.argv[1]; cat = load_catalog('bench'); "

# Run as ``python -c READ_SET OUT ARGV...`` with the timed icectl first on sys.path: the command
# runs in this process with every ``open`` of a file for reading counted; at exit OUT gets
# {path: times opened} of the Avro files and metadata files it opened.
READ_SET = """\
import atexit, builtins, io, json, sys, threading
real, seen, lock = io.open, {}, threading.Lock()
def counting(file, mode="r", *a, **k):
    if isinstance(file, (str, bytes, __import__("os").PathLike)) and "r" in mode and not any(c in mode for c in "wax+"):
        f = __import__("os").fsdecode(file)
        if f.endswith((".avro", ".metadata.json")):
            with lock:
                seen[f] = seen.get(f, 0) + 1
    return real(file, mode, *a, **k)
builtins.open = io.open = counting
out = sys.argv[1]
sys.argv = ["icectl"] + sys.argv[2:]
def dump():
    with real(out, "w") as fh:
        json.dump(seen, fh)
atexit.register(dump)
from icectl.cli.main import run
run()
"""

FLOOR_SCRIPT = """\
import json, sys, time
t0 = time.perf_counter()
try:
    import orjson
    loads, parser = orjson.loads, "orjson " + orjson.__version__
except ImportError:
    loads, parser = json.loads, "json"
import polars as pl
sets = json.load(open(sys.argv[1]))
kind = sys.argv[2]
for path in sets.get(kind + "_metadata", [sets["metadata_json"]]):
    with open(path, "rb") as fh:
        md = loads(fh.read())
t1 = time.perf_counter()
files = sets[kind + "_lists"] + sets[kind] if kind + "_lists" in sets else sets[kind]
rows = 0
for p in files:
    rows += pl.read_avro(p).height
print(json.dumps({"parser": parser, "polars": pl.__version__, "snapshots": len(md.get("snapshots", [])),
                  "avro_files": len(files), "rows": rows, "json_seconds": round(t1 - t0, 3),
                  "avro_seconds": round(time.perf_counter() - t1, 3)}))
"""

JAVA_FILES_JSON = ("SELECT count(*) AS entries, sum(length(to_json(struct(*)))) AS json_chars "
                   "FROM hc.{ident}.files")
JAVA_EXPIRE = ("CALL hc.system.expire_snapshots(table => '{ident}', older_than => TIMESTAMP '{cutoff_sql}', "
               "retain_last => 1)")


# ---------------------------------------------------------------------------------------------
# The tables

NEGLECTED = "neglected"


def table_root(cache: str, scale: str) -> str:
    return os.path.join(os.path.abspath(cache), NEGLECTED if scale == NEGLECTED else f"bench{scale}x")


def prepare(cache: str, scale: str) -> dict:
    """Generate (once) the table of this scale, its Hadoop layout and placeholders; its facts."""
    out = table_root(cache, scale)
    info_path = os.path.join(out, "prepared.json")
    if os.path.exists(info_path):
        with open(info_path) as fh:
            return json.load(fh)
    neglected = scale == NEGLECTED
    if not os.path.exists(os.path.join(out, "gen_info.json")):
        t0 = time.perf_counter()
        gen = ["gen_neglected_table.py"] if neglected else [
            "gen_large_table.py", "--snapshots", str(2000 * int(scale)), "--files-per-snapshot", "100"]
        subprocess.run([sys.executable, os.path.join(HERE, gen[0]), "--out", out, "--force", *gen[1:]], check=True)
        print(f"generated {scale} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    with open(os.path.join(out, "gen_info.json")) as fh:
        g = json.load(fh)
    ident = g["identifier"]
    mdir = os.path.dirname(g["metadata_location"])
    version = g.get("metadata_version", g["snapshots"])
    hadoop_md = os.path.join(mdir, f"v{version}.metadata.json")
    if not os.path.exists(hadoop_md):
        os.link(g["metadata_location"], hadoop_md)
    with open(os.path.join(mdir, "version-hint.text"), "w") as fh:
        fh.write(str(version))

    from icectl.catalog.hadoop import HadoopCatalog
    from icectl.io import FileIO
    from icectl.table.listing import manifest_frame
    from icectl.table.loaded import load_table
    import polars as pl

    t1 = time.perf_counter()
    warehouse = os.path.join(out, "warehouse")
    table = load_table(HadoopCatalog("hc", warehouse, FileIO()), tuple(ident.split(".")))
    md = table.metadata
    placeholders = 0
    made: set[str] = set()
    # Empty placeholders give remove-orphans a real listing; the neglected table has none (its
    # data files are not needed by any command timed here).
    for m in ([] if neglected else table.manifests(md.current_snapshot)):
        live = manifest_frame(table, m).filter(pl.col("status") != 2)  # a LazyFrame of the normalized entries
        paths = live.select("file_path").collect().get_column("file_path").to_list()
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
    cutoff = dt.datetime.fromtimestamp(cutoff_ms / 1000, tz=dt.timezone.utc)
    info = {
        "scale": scale, "root": out, "warehouse": warehouse, "ident": ident, "snapshots": len(md.snapshots),
        "live_data_files": g["live_data_files"], "placeholders": placeholders,
        "manifests_in_current_snapshot": g["manifests_in_current_snapshot"],
        "manifest_bytes_in_current_snapshot": g["manifest_bytes_in_current_snapshot"],
        "merges": g["merges"], "entries_rewritten_by_merges": g["entries_rewritten_by_merges"],
        "metadata_json_bytes": g["metadata_json_bytes"], "files_written": g["files_written"],
        "bytes_written": g["bytes_written"], "generate_seconds": g["generate_seconds"],
        "placeholders_seconds": round(time.perf_counter() - t1, 1),
        "metadata_location": hadoop_md, "refs": len(md.refs), "metadata_log": len(md.metadata_log),
        "cutoff": cutoff.isoformat().replace("+00:00", "Z"), "cutoff_sql": cutoff.strftime("%Y-%m-%d %H:%M:%S"),
        "diff_from": str(snaps[-KEEP].snapshot_id),
    }
    info.update(work_sets(info, md, cutoff_ms, os.path.join(out, "work_sets.json")))
    with open(info_path, "w") as fh:
        json.dump(info, fh, indent=2)
    return info


def work_sets(info: dict, md, cutoff_ms: int, path: str) -> dict:
    """The Avro files each kind of command must decode (written to ``path`` for the floor
    script), and how much that is: manifest-list entries and manifest entries (all snapshots, and
    what an expiry keeping the newest snapshots reads). Read with polars (100,000 manifest lists
    of the neglected table in about a minute)."""
    import polars as pl

    kept = {s.snapshot_id for s in md.snapshots if s.timestamp_ms >= cutoff_ms}
    by_id = {s.snapshot_id: s for s in md.snapshots}
    list_entries = 0
    every: dict[str, int] = {}
    valid: set[str] = set()
    of: dict[int, set[str]] = {}
    for s in md.snapshots:
        df = pl.read_avro(s.manifest_list, columns=["manifest_path", "added_files_count", "existing_files_count",
                                                    "deleted_files_count"])
        paths = df.get_column("manifest_path").to_list()
        counts = (df.get_column("added_files_count").fill_null(0) + df.get_column("existing_files_count").fill_null(0)
                  + df.get_column("deleted_files_count").fill_null(0)).to_list()
        list_entries += len(paths)
        for p, n in zip(paths, counts):
            every[p] = n
        if s.snapshot_id in kept:
            valid.update(paths)
        if s.snapshot_id in (md.current_snapshot_id, int(info["diff_from"])):
            of[s.snapshot_id] = set(paths)
    cur, base = of[md.current_snapshot_id], of[int(info["diff_from"])]
    sets = {"metadata_json": info["metadata_location"], "metadata_lists": [], "metadata": [],
            "current_lists": [md.current_snapshot.manifest_list], "current": sorted(cur),
            "all_lists": [s.manifest_list for s in md.snapshots], "all": sorted(every),
            "diff_lists": [md.current_snapshot.manifest_list, by_id[int(info["diff_from"])].manifest_list],
            "diff": sorted(cur ^ base)}
    with open(path, "w") as fh:
        json.dump(sets, fh)
    return {"manifest_list_entries": list_entries, "manifests_all_snapshots": len(every),
            "entries_all_snapshots": sum(every.values()),
            "entries_expired_only": sum(n for p, n in every.items() if p not in valid),
            "entries_kept": sum(n for p, n in every.items() if p in valid),
            "work_sets": path, "diff_manifests": len(cur ^ base)}


# ---------------------------------------------------------------------------------------------
# Timing

def run_child(argv: list[str], env: dict[str, str], stdout=None, timeout: float | None = None,
              cwd: str | None = None) -> dict:
    """Wall, CPU and peak RSS (MB) of one command. Without a timeout from its own rusage
    (``os.wait4``); with one, the command runs in its own process group, is sampled from /proc
    (CPU and the summed RSS of its process tree: a JVM under a Python parent) and is killed at
    the timeout (``timed_out``)."""
    from harness import TreeSampler

    with tempfile.TemporaryFile() as err, open(os.devnull, "wb") as devnull:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, env=env, stdout=stdout or devnull, stderr=err, stdin=subprocess.DEVNULL,
                             start_new_session=timeout is not None, cwd=cwd)
        sampler = TreeSampler(p.pid, interval=0.5) if timeout is not None else None
        timed_out = False
        if timeout is None:
            _, status, ru = os.wait4(p.pid, 0)
        else:
            while True:
                pid, status, ru = os.wait4(p.pid, os.WNOHANG)
                if pid:
                    break
                if time.perf_counter() - t0 > timeout:
                    timed_out = True
                    os.killpg(p.pid, signal.SIGKILL)
                    _, status, ru = os.wait4(p.pid, 0)
                    break
                time.sleep(0.5)
        wall = time.perf_counter() - t0
        err.seek(0)
        tail = err.read()[-4000:].decode(errors="replace")
    r = {"wall": round(wall, 2), "cpu": round(ru.ru_utime + ru.ru_stime, 2), "rss_mb": round(ru.ru_maxrss / 1024),
         "rc": os.waitstatus_to_exitcode(status), "stderr": tail.strip()[-1500:],
         "load": [round(x, 1) for x in os.getloadavg()]}
    if sampler is not None:
        user, system, _ = sampler.stop()
        r.update(cpu=round(max(r["cpu"], user + system), 2), rss_mb=max(r["rss_mb"], round(sampler.peak_rss / 2**20)),
                 timed_out=timed_out)
    return r


def user_env() -> dict[str, str]:
    """This environment as a user's would be: without PYTHONDONTWRITEBYTECODE (set on the bench
    machine), which makes every process compile each module it imports (~0.25 s CPU for icectl)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


_COMPILED: set[str] = set()


def icectl_env(root: str) -> dict[str, str]:
    """The environment of a timed icectl: ``root`` first on PYTHONPATH, its modules byte-compiled
    once (as ``pip install`` leaves them), no ICECTL_CONFIG. Run it with ``cwd="/"``: ``python -m``
    puts the current folder before PYTHONPATH."""
    if root not in _COMPILED:
        subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(root, "icectl")], check=True,
                       env=user_env())
        _COMPILED.add(root)
    env = user_env()
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("ICECTL_CONFIG", None)
    return env


def command_argv(name: str, info: dict) -> list[str]:
    return [a.format(ident=info["ident"], cutoff=info["cutoff"], diff_from=info["diff_from"]) for a in COMMANDS[name]]


def time_command(name: str, info: dict, runs: int, root: str, max_wait: float = 30,
                 timeout: float | None = None) -> dict:
    from harness import wait_for_quiet

    argv = [sys.executable, "-m", "icectl", "--warehouse", info["warehouse"], *command_argv(name, info)]
    results = []
    for _ in range(runs):
        wait_for_quiet(2.0, max_wait)
        r = run_child(argv, icectl_env(root), timeout=timeout, cwd="/")
        print(f"  {info['scale']:>9} {name:<16} {r['wall']:8.2f} s wall {r['cpu']:8.2f} s CPU "
              f"{r['rss_mb']:6} MB rc={r['rc']} load {r['load']}", file=sys.stderr, flush=True)
        if r["rc"] not in ANSWER_CODES.get(name, (0,)):
            print(f"     {r['stderr']}", file=sys.stderr)
        results.append(r)
    best = sorted(results, key=lambda r: r["cpu"])[len(results) // 2]
    return {**best, "runs": len(results), "walls": [r["wall"] for r in results], "cpus": [r["cpu"] for r in results]}


def record_reads(name: str, info: dict, root: str, folder: str, timeout: float | None = None) -> dict:
    """Run command ``name`` once with icectl's code from ``root``, counting the files it opens
    (:data:`READ_SET`); {"avro": [paths], "metadata": [paths], "opens": n, "rc": exit}."""
    os.makedirs(folder, exist_ok=True)
    out = os.path.join(folder, f"opened_{info['scale']}_{name}.json")
    argv = [sys.executable, "-c", READ_SET, out, "--warehouse", info["warehouse"], *command_argv(name, info)]
    r = run_child(argv, icectl_env(root), timeout=timeout, cwd="/")
    if r["rc"] not in ANSWER_CODES.get(name, (0,)) or not os.path.exists(out):
        raise SystemExit(f"recording what {name} reads failed (exit {r['rc']}): {r['stderr']}")
    with open(out) as fh:
        seen = json.load(fh)
    rec = {"avro": sorted(p for p in seen if p.endswith(".avro")),
           "metadata": sorted(p for p in seen if p.endswith(".metadata.json")),
           "opens": sum(seen.values()), "rc": r["rc"]}
    print(f"  {info['scale']:>9} {name:<16} opens {rec['opens']:,} files: {len(rec['avro']):,} distinct Avro files, "
          f"{len(rec['metadata'])} metadata files", file=sys.stderr, flush=True)
    return rec


def time_floor(name: str, info: dict, reads: dict, folder: str) -> dict:
    """A bare decode of what command ``name`` reads (``reads``: :func:`record_reads`): each
    metadata file it opened (orjson when installed; the current one when it opened none) and each
    Avro file it opened, once, with polars, one after another, in a fresh process."""
    os.makedirs(folder, exist_ok=True)
    script = os.path.join(folder, "floor_decode.py")
    with open(script, "w") as fh:
        fh.write(FLOOR_SCRIPT)
    sets = os.path.join(folder, f"floor_{info['scale']}_{name}.json")
    with open(sets, "w") as fh:
        json.dump({"metadata_json": info["metadata_location"], name: reads["avro"],
                   name + "_metadata": reads["metadata"] or [info["metadata_location"]]}, fh)
    with tempfile.TemporaryFile() as out:
        r = run_child([sys.executable, script, sets, name], user_env(), stdout=out, cwd="/")
        out.seek(0)
        text = out.read().decode().strip().splitlines()
    if r["rc"] != 0 or not text:
        raise SystemExit(f"the floor of {name} failed (exit {r['rc']}): {r['stderr']}")
    r.update(json.loads(text[-1]))
    r.update(opens=reads["opens"], metadata_files=len(reads["metadata"] or [info["metadata_location"]]))
    print(f"  {info['scale']:>9} floor {name:<16} {r['wall']:8.2f} s wall {r['cpu']:8.2f} s CPU {r['rss_mb']:6} MB "
          f"({r['avro_files']} Avro files, {r['rows']:,} rows)", file=sys.stderr, flush=True)
    return r


def time_pyiceberg(name: str, info: dict, timeout: float) -> dict:
    env = dict(os.environ)
    env["PYICEBERG_HOME"] = os.path.dirname(info["warehouse"])
    r = run_child([sys.executable, "-c", PYICEBERG_HEAD + PYICEBERG[name], info["ident"]], env, timeout=timeout)
    print(f"  {info['scale']:>9} pyiceberg {name:<12} {r['wall']:8.2f} s wall {r['cpu']:8.2f} s CPU {r['rss_mb']:6} MB "
          f"rc={r['rc']}{' (timed out)' if r.get('timed_out') else ''}", file=sys.stderr, flush=True)
    return r


def time_java(info: dict, driver_memory: str, timeout: float) -> dict:
    """Iceberg Java, one whole process: JVM and session start, then ``SELECT * FROM t.files``
    rendered to JSON twice (the first run and a warm one)."""
    from harness import java_env, write_java_call

    folder = os.path.dirname(info["warehouse"])
    q = JAVA_FILES_JSON.format(ident=info["ident"])
    with tempfile.TemporaryFile() as out:
        r = run_child([sys.executable, write_java_call(folder), info["warehouse"], q, q], java_env(driver_memory),
                      stdout=out, timeout=timeout)
        out.seek(0)
        text = out.read().decode().strip().splitlines()
    r["driver_memory"] = driver_memory
    if r["rc"] != 0 or not text:
        print(f"  {info['scale']:>9} java failed (exit {r['rc']}, timed out {r.get('timed_out')}): "
              f"{r['stderr'][-300:]}", file=sys.stderr)
        return r
    j = json.loads(text[-1])
    st = j["statements"]
    r.update({"session": j["session_seconds"], "files": [x["seconds"] for x in st], "files_rows": st[0]["rows"][0]})
    print(f"  {info['scale']:>9} java: files {r['files']} whole {r['wall']} s {r['cpu']} s CPU {r['rss_mb']} MB",
          file=sys.stderr, flush=True)
    return r


def keep_pristine(info: dict) -> str:
    """Tables hold absolute paths, so expiry runs on the table where it is: first keep a pristine
    copy beside it as hard links (expiry only deletes files and writes new ones), with a real copy
    of ``version-hint.text``, which a commit rewrites. :func:`restore_pristine` puts it back."""
    pristine = info["warehouse"] + ".pristine"
    if os.path.exists(pristine):
        shutil.rmtree(pristine)
    subprocess.run(["cp", "-al", info["warehouse"], pristine], check=True)
    hint = os.path.join(os.path.dirname(info["metadata_location"]), "version-hint.text")
    copy = pristine + hint[len(info["warehouse"]):]
    os.remove(copy)
    shutil.copy(hint, copy)
    return pristine


def restore_pristine(info: dict, pristine: str) -> None:
    shutil.rmtree(info["warehouse"])
    os.rename(pristine, info["warehouse"])


def time_expire_yes(info: dict, root: str, java: bool, driver_memory: str, java_timeout: float | None) -> dict:
    """``icectl expire --older-than CUT --yes`` and Iceberg Java's ``expire_snapshots`` (same
    cut-off, retain_last 1), each on the pristine table (restored after each); Java gets icectl's
    wall time (or ``java_timeout``) and is killed there if not done."""
    from harness import java_env, walk, write_java_call

    res: dict = {}
    wh = info["warehouse"]
    before = walk(wh)
    pristine = keep_pristine(info)
    try:
        argv = [sys.executable, "-m", "icectl", "--warehouse", wh, "-o", "json", "expire", info["ident"],
                "--older-than", info["cutoff"], "--yes"]
        r = run_child(argv, icectl_env(root), timeout=7200, cwd="/")
        r["deleted"] = len(set(before) - set(walk(wh)))
        res["icectl"] = r
        print(f"  {info['scale']:>9} expire --yes {r['wall']:8.2f} s wall {r['cpu']:8.2f} s CPU {r['rss_mb']:6} MB "
              f"rc={r['rc']} deleted {r['deleted']}", file=sys.stderr, flush=True)
    finally:
        restore_pristine(info, pristine)
    if java:
        pristine = keep_pristine(info)
        try:
            timeout = java_timeout or max(60.0, r["wall"])
            sql = JAVA_EXPIRE.format(ident=info["ident"], cutoff_sql=info["cutoff_sql"])
            with tempfile.TemporaryFile() as out:
                j = run_child([sys.executable, write_java_call(os.path.dirname(wh)), wh, sql], java_env(driver_memory),
                              stdout=out, timeout=timeout)
                out.seek(0)
                text = out.read().decode().strip().splitlines()
            j["deleted"] = len(set(before) - set(walk(wh)))
            j["timeout"] = timeout
            stages = re.findall(r"\[Stage \d+:[^\]]*\]", j["stderr"])
            j["where"] = stages[-1] if stages else j["stderr"].strip().splitlines()[-1:] and \
                j["stderr"].strip().splitlines()[-1][-200:]
            if j["rc"] == 0 and text:
                j["result"] = json.loads(text[-1])["statements"][0]["rows"]
            res["java"] = j
            print(f"  {info['scale']:>9} java expire {j['wall']:8.2f} s wall {j['cpu']:8.2f} s CPU {j['rss_mb']:6} MB "
                  f"rc={j['rc']} timed out {j.get('timed_out')} deleted {j['deleted']}", file=sys.stderr, flush=True)
        finally:
            restore_pristine(info, pristine)
    return res


# ---------------------------------------------------------------------------------------------
# Results

def _scale_name(s: str) -> str:
    return "neglected" if s == NEGLECTED else f"{s}x"


def _order(scales) -> list[str]:
    return sorted(scales, key=lambda s: (s == NEGLECTED, int(s) if s.isdigit() else 0))


def render(store: dict) -> str:
    lines = ["## Scale: 1x, 10x and the neglected table", "",
             "Written by `python bench/bench_scale.py` (see bench/README.md). CPU is user + system of the "
             "whole command (the steadier figure on this shared machine); \"x floor\" is the command's CPU "
             "over the CPU of a bare decode, in a fresh process, of the files it opens (orjson for the "
             "metadata file, polars for each Avro file, each once); peers are whole processes too.", ""]
    tables = store.get("tables", {})
    if tables:
        lines += ["| table | snapshots | live files | refs | metadata log | metadata.json | manifests (current) | "
                  "manifest-list entries (all snapshots) | manifests (all) | entries (all manifests) | generated in |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for s in _order(tables):
            t = tables[s]
            lines.append(f"| {_scale_name(s)} (`{t.get('ident', IDENT)}`) | {t['snapshots']:,} | "
                         f"{t['live_data_files']:,} | {t.get('refs', '')} | {t.get('metadata_log', '')} | "
                         f"{t['metadata_json_bytes'] / 1e6:.1f} MB | {t['manifests_in_current_snapshot']} | "
                         f"{t['manifest_list_entries']:,} | {t['manifests_all_snapshots']:,} | "
                         f"{t['entries_all_snapshots']:,} | {t['generate_seconds']:.0f} s |")
        lines.append("")
    floors = store.get("floors", {})
    if floors:
        lines += ["### Decode floor of each command (a fresh process: Python, polars, orjson, then the files it opens)",
                  "", "| table | command (or, older runs, what) | metadata files | Avro files (distinct) | files opened | "
                  "rows | wall (s) | CPU (s) | peak RSS (MB) | of which JSON (s) | Avro (s) |",
                  "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for s in _order(floors):
            for kind, f in floors[s].items():
                lines.append(f"| {_scale_name(s)} | {kind} | {f.get('metadata_files', 1)} | {f['avro_files']:,} | "
                             f"{f['opens']:,} | " if "opens" in f else f"| {_scale_name(s)} | {kind} | 1 | "
                             f"{f['avro_files']:,} | | ")
                lines[-1] += (f"{f['rows']:,} | {f['wall']:.2f} | {f['cpu']:.2f} | {f['rss_mb']:,} | "
                              f"{f['json_seconds']:.2f} | {f['avro_seconds']:.2f} |")
        lines.append("")
    pyi = store.get("pyiceberg", {})
    java = store.get("java", {})
    for label, runs in store.get("labels", {}).items():
        meta = runs.get("_meta", {})
        lines += [f"### `{label}` ({meta.get('when', '?')}, code {meta.get('commit', '?')}, load average "
                  f"{meta.get('load', '?')})", "",
                  "| command | table | wall (s) | CPU (s) | peak RSS (MB) | x floor (CPU) | PyIceberg CPU (s), "
                  "its / icectl's | Java (s), its / icectl's CPU |",
                  "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
        for name in COMMANDS:
            for s in _order([k for k in runs if k != "_meta"]):
                r = runs[s].get(name)
                if r is None:
                    continue
                flag = "" if r["rc"] in ANSWER_CODES.get(name, (0,)) else f" (exit {r['rc']})"
                if r.get("timed_out"):
                    flag = " (killed: not finished)"
                f = floors.get(s, {}).get(name) or floors.get(s, {}).get(FLOOR_OF[name])
                xf = f"{'> ' if r.get('timed_out') else ''}{r['cpu'] / f['cpu']:.1f}x" if f and f["cpu"] else ""
                p = pyi.get(s, {}).get(name)
                pc = ""
                if p:
                    pc = (f"> {p['cpu']:.1f} (killed at {p['wall']:.0f} s)" if p.get("timed_out") else
                          f"{p['cpu']:.2f}, {p['cpu'] / r['cpu']:.1f}x" if p["rc"] == 0 else f"exit {p['rc']}")
                jc = ""
                j = java.get(s)
                if name == "files-json" and j and j.get("files"):
                    jc = (f"whole {j['wall']:.1f} s / {j['cpu']:.1f} s CPU ({j['cpu'] / r['cpu']:.1f}x); "
                          f"warm query {min(j['files'][1:] or j['files']):.2f} s wall")
                cmd = " ".join(a.replace("{ident}", "T").replace("{cutoff}", "CUT").replace("{diff_from}", "S")
                               for a in COMMANDS[name])
                lines.append(f"| `icectl {cmd}` | {_scale_name(s)} | {r['wall']:.2f}{flag} | {r['cpu']:.2f} | "
                             f"{r['rss_mb']:,} | {xf} | {pc} | {jc} |")
        lines.append("")
    exp = store.get("expire_yes", {})
    if exp:
        lines += ["### `expire --older-than CUT --yes` against Iceberg Java's `expire_snapshots` (each on a copy)", "",
                  "| table | tool | wall (s) | CPU (s) | peak RSS (MB) | exit | files deleted | note |",
                  "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
        for s in _order(exp):
            for tool, r in exp[s].items():
                if tool == "_meta":
                    continue
                note = (f"killed at {r['timeout']:.0f} s (icectl's wall time), not finished; its last progress: "
                        f"`{r.get('where')}`" if r.get("timed_out") else "")
                lines.append(f"| {_scale_name(s)} | {tool} | {r['wall']:.1f} | {r['cpu']:.1f} | {r['rss_mb']:,} | "
                             f"{r['rc']} | {r['deleted']:,} | {note} |")
        lines.append("")
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cache", default=os.path.join(ROOT, ".cache"), help="where the tables live (default .cache)")
    p.add_argument("--scales", default="1,10,neglected",
                   help="comma-separated: multiples of the 1x table and/or `neglected` (default 1,10,neglected)")
    p.add_argument("--commands", default=",".join(COMMANDS), help=f"subset of {','.join(COMMANDS)}")
    p.add_argument("--runs", type=int, default=1, help="runs of each command; the median CPU is kept (default 1)")
    p.add_argument("--label", default="current", help="the name these results are kept under (default current)")
    p.add_argument("--icectl-root", default=ROOT, help="the checkout whose icectl runs (default: this one; e.g. an "
                   "unpacked `git archive` of an older commit for before/after figures)")
    p.add_argument("--max-wait", type=float, default=30,
                   help="wait up to this many seconds for a 1-minute load average below 2 before each run")
    p.add_argument("--command-timeout", type=float,
                   help="kill an icectl command after this many seconds (shown as killed; default: none)")
    p.add_argument("--no-floor", dest="floor", action="store_false", help="do not time the decode floors")
    p.add_argument("--record-reads", action="store_true",
                   help="record again which files each command opens (default: once, kept beside --store)")
    p.add_argument("--pyiceberg", action="store_true", help="also time PyIceberg where it has the command")
    p.add_argument("--java", action="store_true", help="also time Iceberg Java's SELECT * FROM t.files (oracle)")
    p.add_argument("--java-driver-memory", default="6g")
    p.add_argument("--peer-timeout", type=float, default=1800, help="kill a peer after this many seconds")
    p.add_argument("--expire-yes", action="store_true",
                   help="also time expire --yes on a copy, and with --java Iceberg Java's expire_snapshots on another")
    p.add_argument("--java-expire-timeout", type=float,
                   help="seconds Java's expire_snapshots may run (default: icectl's expire --yes wall time)")
    p.add_argument("--prepare-only", action="store_true", help="generate and prepare the tables, time nothing")
    p.add_argument("--store", help="the results file (default <cache>/bench_scale_results.json)")
    p.add_argument("--merge", action="append", default=[], help="also show the labels of this results file")
    p.add_argument("--no-write", action="store_true", help="do not update bench/RESULTS.md")
    p.add_argument("--results", default=os.path.join(HERE, "RESULTS.md"))
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    from harness import update_results

    a = parse_args(argv)
    scales = [s for s in a.scales.split(",") if s]
    bad = [s for s in scales if not (s.isdigit() or s == NEGLECTED)]
    if bad:
        raise SystemExit(f"unknown scales {bad}: integers or `{NEGLECTED}`")
    names = [c for c in a.commands.split(",") if c]
    unknown = [c for c in names if c not in COMMANDS]
    if unknown:
        raise SystemExit(f"unknown commands {unknown}; choose from {list(COMMANDS)}")
    store_path = a.store or os.path.join(os.path.abspath(a.cache), "bench_scale_results.json")
    store = json.load(open(store_path)) if os.path.exists(store_path) else {}
    for extra in a.merge:  # results of another run kept in another file (runs at the same time)
        with open(extra) as fh:
            other = json.load(fh)
        for k in ("tables", "java", "floors", "pyiceberg", "expire_yes"):
            store.setdefault(k, {}).update(other.get(k, {}))
        for label, runs in other.get("labels", {}).items():
            mine = store.setdefault("labels", {}).setdefault(label, {})
            for scale, commands in runs.items():
                if scale == "_meta":
                    mine.setdefault("_meta", commands)
                else:
                    mine.setdefault(scale, {}).update(commands)

    def save() -> None:
        with open(store_path, "w") as fh:
            json.dump(store, fh, indent=1)

    for scale in scales:
        info = prepare(a.cache, scale)
        store.setdefault("tables", {})[scale] = info
        if a.prepare_only:
            continue
        if a.floor:
            folder = os.path.join(os.path.dirname(os.path.abspath(store_path)), "floors")
            for name in names:
                opened = os.path.join(folder, f"opened_{scale}_{name}.json")
                if a.record_reads or not os.path.exists(opened):
                    reads = record_reads(name, info, a.icectl_root, folder, a.command_timeout)
                else:
                    with open(opened) as fh:
                        seen = json.load(fh)
                    reads = {"avro": sorted(p for p in seen if p.endswith(".avro")),
                             "metadata": sorted(p for p in seen if p.endswith(".metadata.json")),
                             "opens": sum(seen.values())}
                store.setdefault("floors", {}).setdefault(scale, {})[name] = time_floor(name, info, reads, folder)
                save()
        if names:
            label = store.setdefault("labels", {}).setdefault(a.label, {})
            commit = subprocess.run(["git", "-C", a.icectl_root, "rev-parse", "--short", "HEAD"], capture_output=True,
                                    text=True).stdout.strip()
            label["_meta"] = {"when": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                              "commit": commit or a.icectl_root,
                              "load": "/".join(f"{x:.1f}" for x in os.getloadavg()) + " at the start"}
            for name in names:
                label.setdefault(scale, {})[name] = time_command(name, info, a.runs, a.icectl_root, a.max_wait,
                                                                 a.command_timeout)
                save()
            label["_meta"]["load"] += ", " + "/".join(f"{x:.1f}" for x in os.getloadavg()) + " at the end"
        if a.pyiceberg:
            for name in [n for n in names if n in PYICEBERG]:
                store.setdefault("pyiceberg", {}).setdefault(scale, {})[name] = time_pyiceberg(name, info,
                                                                                             a.peer_timeout)
                save()
        if a.java:
            store.setdefault("java", {})[scale] = time_java(info, a.java_driver_memory, a.peer_timeout)
            save()
        if a.expire_yes:
            store.setdefault("expire_yes", {})[scale] = time_expire_yes(info, a.icectl_root, a.java,
                                                                        a.java_driver_memory, a.java_expire_timeout)
            save()
    block = render(store)
    print(block)
    if not a.no_write:
        update_results(a.results, BEGIN, END, block, "# Scale benchmark: the curve")


if __name__ == "__main__":
    main()
