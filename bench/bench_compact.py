#!/usr/bin/env python
"""Time ``icectl compact`` against Iceberg Java's ``rewrite_data_files``, and against the floor.

The table ``bench.small`` (format v2, unpartitioned, file-system/Hadoop layout) holds ``--files``
(1,000) small Parquet files of ``--rows-per-file`` rows of random-ish, hardly compressible data
(random longs, doubles, timestamps, hex strings; zstd), about 0.55 MB each, 550 MB in all,
written with pyarrow (field ids in ``PARQUET:field_id``) and committed in one append with icectl's
engine (``create_table`` + ``append_files``). Each tool runs on the same copy of it, restored from
a pristine copy before each run (``cp -a``; metadata holds absolute paths, so the copy is restored
at the same location), with the same target file size (128 MB) and 2 cores:

    icectl --warehouse WH -o json compact bench.small --target-file-size 128MB --yes
        (its spark-submit: local[*], 2 cores here)
    python java_call.py WH "CALL hc.system.rewrite_data_files(table => 'bench.small',
        options => map('target-file-size-bytes', '134217728'))"
        (Iceberg Java 1.10.2 in local Spark, local[2], JVM start included)
    python floor.py ...   the floor: plain pyarrow reading every data file and writing its rows
        into files of 128 MB (zstd, as the table's codec), one process; and the same split over
        two processes (2 cores)

Each is timed as a subprocess, whole command: wall clock, and CPU as the user + system time of
the whole process tree (this script makes itself a child subreaper, so Spark's Python workers and
a JVM that outlive their parents are still reaped and counted). After each tool the table's live
rows are read back with pyarrow and compared with the input: same row count and the same digest
of the rows sorted by id.

    python bench/bench_compact.py                # generate (once, ~1 min), then time all three
    python bench/bench_compact.py --runs 3       # alternate 3 times, report medians
    python bench/bench_compact.py --profile      # also an untimed py-spy run of icectl (SVG)

Results: stdout, ``bench/data/compact/results.json``, and bench/RESULTS.md between the
``<!-- bench-compact:begin -->`` and ``<!-- bench-compact:end -->`` markers (the rest is kept).
"""
from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from harness import (  # noqa: E402
    become_subreaper, fmt_load, icectl_cmd, java_env, restore, run_timed, update_results, versions, wait_for_quiet,
    walk, write_java_call,
)

RESULTS_MD = os.path.join(HERE, "RESULTS.md")
BEGIN, END = "<!-- bench-compact:begin -->", "<!-- bench-compact:end -->"
NAMESPACE, TABLE = "bench", "small"
SCHEMA_TEXT = ("id:long!, ts:timestamptz, user_id:long, category:string, amount:double, "
               "session_id:string, payload:string")
TARGET = 128 * 1024 * 1024
FID = b"PARQUET:field_id"

# The floor: read every listed Parquet file with pyarrow, write the rows into files of the
# target size (a row group per input file, as icectl's writer does), zstd.
FLOOR = textwrap.dedent('''\
    import json, os, sys, time, uuid
    import pyarrow.parquet as pq

    listing, out_dir, target, part, parts, codec = sys.argv[1:7]
    target, part, parts = int(target), int(part), int(parts)
    paths = json.load(open(listing))[part::parts]
    os.makedirs(out_dir, exist_ok=True)
    state = {"writer": None, "sink": None}
    rows = 0
    outputs = []

    def close():
        if state["writer"] is not None:
            state["writer"].close()
            state["sink"].close()
            outputs.append(os.path.getsize(state["path"]))
            state["writer"] = None

    for p in paths:
        t = pq.read_table(p)
        rows += t.num_rows
        if state["writer"] is None:
            state["path"] = os.path.join(out_dir, f"{uuid.uuid4().hex}-floor.parquet")
            state["sink"] = open(state["path"], "wb")
            state["writer"] = pq.ParquetWriter(state["sink"], t.schema, compression=codec)
        state["writer"].write_table(t)
        if state["sink"].tell() >= target:
            close()
    close()
    print(json.dumps({"rows": rows, "inputs": len(paths), "outputs": outputs}))
    ''')


# ---------------------------------------------------------------------------------------------
# The table

def _batch(rng, start: int, n: int, day0_us: int):
    import numpy as np
    import pyarrow as pa

    def hex_strings(width: int):
        raw = rng.integers(0, 256, size=n * width // 2, dtype=np.uint8).tobytes().hex().encode()
        offsets = np.arange(0, n * width + 1, width, dtype=np.int32)
        return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(raw)])

    categories = pa.array([f"category_{i:03d}" for i in range(200)])
    cols = [
        pa.array(np.arange(start, start + n, dtype=np.int64)),
        pa.array(day0_us + rng.integers(0, 365 * 86_400_000_000, size=n), pa.timestamp("us", tz="UTC")),
        pa.array(rng.integers(1, 2**40, size=n, dtype=np.int64)),
        categories.take(pa.array(rng.integers(0, 200, size=n))),
        pa.array(np.round(rng.random(n) * 10_000, 2)),
        hex_strings(32),
        hex_strings(24),
    ]
    names = ["id", "ts", "user_id", "category", "amount", "session_id", "payload"]
    fields = [pa.field(nm, c.type, nullable=(nm != "id"), metadata={FID: str(i + 1).encode()})
              for i, (nm, c) in enumerate(zip(names, cols))]
    return pa.Table.from_arrays(cols, schema=pa.schema(fields))


def table_dir(work: str) -> str:
    return os.path.join(work, "warehouse", NAMESPACE, TABLE)


def prepare(a: argparse.Namespace) -> dict:
    import numpy as np
    import pyarrow.parquet as pq

    from icectl.catalog.hadoop import HadoopCatalog
    from icectl.formats.manifest import DataFile
    from tests.helpers import append_files, create_table
    from icectl.io import FileIO

    data = os.path.abspath(a.data)
    work, pristine = os.path.join(data, "work"), os.path.join(data, "pristine")
    info_path = os.path.join(data, "prepared.json")
    want = {"files": a.files, "rows_per_file": a.rows_per_file, "seed": a.seed}
    if not a.regen and os.path.exists(info_path) and os.path.isdir(pristine):
        with open(info_path) as fh:
            info = json.load(fh)
        if all(info.get(k) == v for k, v in want.items()):
            return info
    for d in (work, pristine):
        if os.path.exists(d):
            shutil.rmtree(d)
    os.makedirs(work)
    t0 = time.perf_counter()
    wh = os.path.join(work, "warehouse")
    cat = HadoopCatalog("hc", wh, FileIO())
    t = create_table(cat, (NAMESPACE, TABLE), schema_text=SCHEMA_TEXT, format_version=2,
                     properties={"write.parquet.compression-codec": "zstd"})
    ddir = os.path.join(t.location, "data")
    os.makedirs(ddir, exist_ok=True)
    rng = np.random.default_rng(a.seed)
    day0 = int(dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc).timestamp() * 1_000_000)
    files = []
    for i in range(a.files):
        tb = _batch(rng, i * a.rows_per_file, a.rows_per_file, day0)
        path = os.path.join(ddir, f"{i:05d}-0-{rng.integers(0, 2**63):016x}-00001.parquet")
        pq.write_table(tb, path, compression="zstd")
        files.append(DataFile(path, "parquet", (), tb.num_rows, os.path.getsize(path)))
    t = append_files(t, files)
    gen_seconds = time.perf_counter() - t0
    digest = table_digest(wh)
    t1 = time.perf_counter()
    subprocess.run(["cp", "-a", work, pristine], check=True)
    info = {
        **want, "data": data, "work": work, "pristine": pristine, "warehouse": wh, "table_dir": table_dir(work),
        "data_files": len(files), "data_bytes": sum(f.file_size_in_bytes for f in files),
        "min_file_bytes": min(f.file_size_in_bytes for f in files),
        "max_file_bytes": max(f.file_size_in_bytes for f in files),
        "rows": digest["rows"], "digest": digest["digest"], "metadata_location": t.metadata_location,
        "generate_seconds": round(gen_seconds, 1), "copy_seconds": round(time.perf_counter() - t1, 1),
        "prepared_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }
    with open(info_path, "w") as fh:
        json.dump(info, fh, indent=2)
    return info


def live_data_files(wh: str) -> list:
    from icectl.catalog.hadoop import HadoopCatalog
    from icectl.table.loaded import load_table
    from icectl.io import FileIO

    t = load_table(HadoopCatalog("hc", wh, FileIO()), (NAMESPACE, TABLE))
    return t, [f for _, f in t.live_files(t.metadata.current_snapshot)]


def _canonical(col):
    """A column's values as bytes that do not depend on the Parquet writer's types or chunking."""
    import numpy as np
    import pyarrow as pa

    col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if pa.types.is_timestamp(col.type):
        col = col.cast(pa.int64())
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type) or pa.types.is_binary(col.type):
        col = col.cast(pa.large_binary())
        offsets = np.frombuffer(col.buffers()[1], dtype=np.int64)[col.offset:col.offset + len(col) + 1]
        data = col.buffers()[2].to_pybytes()[offsets[0]:offsets[-1]]
        return np.diff(offsets).tobytes() + data
    if col.null_count:
        return np.asarray(col.is_null()).tobytes() + col.fill_null(0).to_numpy().tobytes()
    return col.to_numpy().tobytes()


def table_digest(wh: str) -> dict:
    """Row count and a digest of the live rows (all columns, sorted by id) of the table."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    t, files = live_data_files(wh)
    names = [f.name for f in t.metadata.schema.fields]
    parts = [pq.read_table(f.file_path, columns=names) for f in files]
    parts = [p.cast(pa.schema([pa.field(n, p.schema.field(n).type) for n in names])) for p in parts]
    whole = pa.concat_tables([p.replace_schema_metadata(None) for p in parts], promote_options="permissive")
    order = pc.sort_indices(whole, sort_keys=[("id", "ascending")])
    whole = whole.take(order)
    h = hashlib.sha256()
    for n in names:
        h.update(n.encode())
        h.update(_canonical(whole.column(n)))
    ids = whole.column("id")
    unique = pc.count_distinct(ids).as_py() == len(ids)
    sizes = [f.file_size_in_bytes for f in files]
    return {"rows": whole.num_rows, "digest": h.hexdigest(), "unique_ids": unique, "files": len(files),
            "bytes": sum(sizes), "file_sizes_mb": sorted(round(s / 2**20, 1) for s in sizes)[-10:],
            "snapshot_operation": t.metadata.current_snapshot.summary.get("operation")}


def row_groups(wh: str) -> list[int]:
    import pyarrow.parquet as pq

    _, files = live_data_files(wh)
    return [pq.ParquetFile(f.file_path).metadata.num_row_groups for f in files]


# ---------------------------------------------------------------------------------------------
# The runs

def run_tool(tool: str, info: dict, a: argparse.Namespace, run_no: int, profile: bool = False) -> dict:
    work, pristine, wh = info["work"], info["pristine"], info["warehouse"]
    logs = os.path.join(info["data"], "logs")
    os.makedirs(logs, exist_ok=True)
    restore_s = restore(pristine, work)
    before = walk(info["table_dir"])
    stem = os.path.join(logs, f"{tool}-{run_no}")
    floor_out = os.path.join(info["data"], "floor-out")
    if os.path.exists(floor_out):
        shutil.rmtree(floor_out)
    env = dict(os.environ)
    if tool == "icectl":
        argv = icectl_cmd() + ["--warehouse", wh, "-o", "json", "compact", f"{NAMESPACE}.{TABLE}",
                               "--target-file-size", "128MB", "--yes"]
        if profile:
            argv = ["py-spy", "record", "--subprocesses", "--rate", "50", "-o", stem + "-profile.svg", "--"] + argv
    elif tool == "java":
        sql = (f"CALL hc.system.rewrite_data_files(table => '{NAMESPACE}.{TABLE}', "
               f"options => map('target-file-size-bytes', '{TARGET}'))")
        argv = [sys.executable, write_java_call(info["data"]), wh, sql]
        env = java_env(a.java_driver_memory)
    else:  # floor-1 / floor-2: one or two processes
        nproc = 1 if tool == "floor-1" else 2
        listing = os.path.join(info["data"], "inputs.json")
        _, files = live_data_files(wh)
        with open(listing, "w") as fh:
            json.dump([f.file_path for f in files], fh)
        script = os.path.join(info["data"], "floor.py")
        with open(script, "w") as fh:
            fh.write(FLOOR)
        one = [sys.executable, script, listing, floor_out, str(TARGET)]
        if nproc == 1:
            argv = one + ["0", "1", "zstd"]
        else:  # the two halves at once, as one command
            import shlex

            q = " ".join(shlex.quote(x) for x in one)
            argv = ["bash", "-c", f"{q} 0 2 zstd & {q} 1 2 zstd & wait"]
    load, waited = wait_for_quiet(a.max_load, a.max_wait)
    print(f"  {tool} run {run_no}: load {load:.2f} (waited {waited:.0f} s) ...", file=sys.stderr, flush=True)
    r = run_timed(argv, stdout_path=stem + ".out", stderr_path=stem + ".err", env=env)
    r.update({"profile_svg": stem + "-profile.svg" if profile else None, "tool": tool, "run": run_no,
              "restore_seconds": round(restore_s, 1), "waited_for_load": round(waited)})
    if r["rc"] != 0:
        tail = open(stem + ".err", errors="replace").read()[-3000:]
        raise SystemExit(f"{tool} failed (exit {r['rc']}):\n{tail}")
    if profile:
        return r  # py-spy writes to stdout too; the profile is the point
    out = open(stem + ".out", errors="replace").read()
    if tool.startswith("floor"):
        res = [json.loads(line) for line in out.strip().splitlines()]
        outputs = [s for x in res for s in x["outputs"]]
        r["result"] = {"rows": sum(x["rows"] for x in res), "inputs": sum(x["inputs"] for x in res),
                       "output_files": len(outputs), "output_mb": sorted(round(s / 2**20, 1) for s in outputs)}
        r["check"] = {"rows": r["result"]["rows"], "rows_match": r["result"]["rows"] == info["rows"]}
        shutil.rmtree(floor_out, ignore_errors=True)
    else:
        after = walk(info["table_dir"])
        r["new_data_files"] = len([p for p in set(after) - set(before) if p.startswith("data/")])
        if tool == "icectl":
            r["result"] = json.loads(out)
        else:
            j = json.loads(out.strip().splitlines()[-1])
            r["result"] = j["statements"][0]["rows"][0]
            r["java_session_seconds"] = j["session_seconds"]
            r["java_call_seconds"] = j["statements"][0]["seconds"]
        d = table_digest(wh)
        r["check"] = {**d, "rows_match": d["rows"] == info["rows"], "digest_match": d["digest"] == info["digest"],
                      "row_groups": row_groups(wh)}
    print(f"  {tool} run {run_no}: {r['wall']:.1f} s wall, {r['cpu']:.1f} s CPU, load {fmt_load(r['load_before'])} -> "
          f"{fmt_load(r['load_after'])}; check {r['check'].get('rows')} rows, digest "
          f"{r['check'].get('digest_match', 'n/a')}", file=sys.stderr, flush=True)
    return r


def summarize(runs: list[dict]) -> dict:
    s: dict = {}
    for tool in ("icectl", "java", "floor-1", "floor-2"):
        rs = [r for r in runs if r["tool"] == tool]
        if rs:
            for k in ("wall", "cpu", "user", "sys"):
                s[f"{tool}_{k}"] = round(statistics.median(r[k] for r in rs), 3)
            s[f"{tool}_checks_ok"] = all(r["check"].get("rows_match") and r["check"].get("digest_match", True)
                                         for r in rs)
    if "icectl_wall" in s and "java_wall" in s:
        s["wall_ratio_java_over_icectl"] = round(s["java_wall"] / s["icectl_wall"], 2)
        s["cpu_ratio_java_over_icectl"] = round(s["java_cpu"] / s["icectl_cpu"], 2)
    for f in ("floor-1", "floor-2"):
        if f"{f}_wall" in s and "icectl_wall" in s:
            s[f"icectl_over_{f}"] = round(s["icectl_wall"] / s[f"{f}_wall"], 2)
        if f"{f}_wall" in s and "java_wall" in s:
            s[f"java_over_{f}"] = round(s["java_wall"] / s[f"{f}_wall"], 2)
    return s


def render(info: dict, runs: list[dict], s: dict, a: argparse.Namespace, started: str) -> str:
    lines = [f"## Compact: run of {started}", ""]
    v = versions()
    lines.append(f"- machine: {os.cpu_count()} cores (nproc), {platform.machine()}, Linux {platform.release()}, "
                 f"Python {platform.python_version()}; " + ", ".join(f"{k} {x}" for k, x in v.items()))
    lines.append(f"- table `{NAMESPACE}.{TABLE}` (format v2, unpartitioned, file-system/Hadoop layout, zstd): "
                 f"{info['data_files']:,} data files, {info['data_bytes'] / 1e6:.0f} MB "
                 f"({info['min_file_bytes'] / 1e6:.2f}-{info['max_file_bytes'] / 1e6:.2f} MB each), "
                 f"{info['rows']:,} rows of random data (schema `{SCHEMA_TEXT}`); written by pyarrow, committed by "
                 f"icectl's engine in one append; each run starts from a fresh `cp -a` of the pristine table (not timed)")
    lines.append(f"- target file size 128 MB (134,217,728 bytes) for all; icectl's spark-submit runs `local[*]` "
                 f"(= {os.cpu_count()} cores, driver memory 1g, its default template), Java `local[2]` (driver memory "
                 f"{a.java_driver_memory}); the floor reads each file with `pq.read_table` and writes its rows with one "
                 f"`pq.ParquetWriter` per 128 MB output (zstd), in 1 process, or in 2 processes on the two halves")
    lines.append(f"- timing: the whole command as a subprocess, wall clock; CPU = user + system of the whole process "
                 f"tree (JVM and Python workers included); {a.runs} run(s) of each, in turn, median shown; before "
                 f"each run the script waited up to {a.max_wait:.0f} s for a 1-minute load average below {a.max_load}")
    lines.append("")
    lines.append("| command | wall (s) | CPU user+sys (s) | load before (1/5/15) | load after | output files | rows, same rows as input |")
    lines.append("| --- | ---: | ---: | --- | --- | ---: | --- |")
    names = {"icectl": "`icectl compact` (spark-submit local[*])",
             "java": "Iceberg Java `rewrite_data_files` (local[2], JVM start included)",
             "floor-1": "floor: pyarrow read + write, 1 process", "floor-2": "floor: pyarrow read + write, 2 processes"}
    for r in runs:
        c = r["check"]
        if r["tool"].startswith("floor"):
            nout = r["result"]["output_files"]
            same = f"{c['rows']:,}, count {'yes' if c['rows_match'] else 'NO'}"
        else:
            nout = c["files"]
            same = f"{c['rows']:,}, {'yes' if c['rows_match'] and c['digest_match'] else 'NO'}"
        lines.append(f"| {names[r['tool']]} (run {r['run']}) | {r['wall']:.2f} | {r['cpu']:.2f} "
                     f"({r['user']:.1f}+{r['sys']:.1f}) | {fmt_load(r['load_before'])} | {fmt_load(r['load_after'])} "
                     f"| {nout} | {same} |")
    lines.append("")
    if "wall_ratio_java_over_icectl" in s:
        met = s["wall_ratio_java_over_icectl"] >= 1
        lines.append(f"- **Java / icectl: {s['wall_ratio_java_over_icectl']:.2f}x wall, "
                     f"{s['cpu_ratio_java_over_icectl']:.2f}x CPU** (medians: icectl {s['icectl_wall']:.2f} s wall, "
                     f"{s['icectl_cpu']:.2f} s CPU; Java {s['java_wall']:.2f} s wall, {s['java_cpu']:.2f} s CPU). "
                     f"Target (icectl no slower than Java): **{'met' if met else 'not met'}**")
    for f in ("floor-1", "floor-2"):
        if f"icectl_over_{f}" in s:
            lines.append(f"- against the {f} floor ({s[f + '_wall']:.2f} s wall, {s[f + '_cpu']:.2f} s CPU): icectl "
                         f"{s[f'icectl_over_{f}']:.2f}x" + (f", Java {s[f'java_over_{f}']:.2f}x" if f"java_over_{f}" in s
                                                            else "") + " its wall time")
    for tool in ("icectl", "java"):
        r = next((r for r in runs if r["tool"] == tool), None)
        if r is None:
            continue
        c = r["check"]
        rg = c["row_groups"]
        if tool == "icectl":
            res = r["result"]
            rep = (f"rewrote {res['rewritten_data_files']} files ({res['rewritten_bytes'] / 1e6:.0f} MB) into "
                   f"{res['added_data_files']} ({res['added_bytes'] / 1e6:.0f} MB)")
        else:
            res = r["result"]
            rep = ", ".join(f"{k} {x}" for k, x in res.items())
            rep += (f"; session start {r['java_session_seconds']:.1f} s, the CALL {r['java_call_seconds']:.1f} s")
        lines.append(f"- {tool}: {rep}; output files (MiB) {c['file_sizes_mb']}, row groups per file {rg}; "
                     f"rows sorted by id give the input's digest: {'yes' if c['digest_match'] else 'NO'}")
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=os.path.join(HERE, "data", "compact"), help="work folder (default bench/data/compact)")
    p.add_argument("--files", type=int, default=1000)
    p.add_argument("--rows-per-file", type=int, default=10000)
    p.add_argument("--seed", type=int, default=20250101)
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--tools", default="icectl,java,floor-1,floor-2", help="comma-separated, in this order per round")
    p.add_argument("--regen", action="store_true")
    p.add_argument("--java-driver-memory", default="2g", help="Spark driver memory for Java (default 2g)")
    p.add_argument("--max-load", type=float, default=2.0)
    p.add_argument("--max-wait", type=float, default=600)
    p.add_argument("--profile", action="store_true", help="also an untimed icectl run under py-spy record (SVG in <data>/logs/)")
    p.add_argument("--no-write", action="store_true")
    p.add_argument("--results", default=RESULTS_MD)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    a = parse_args(argv)
    started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    become_subreaper()
    info = prepare(a)
    print(f"table: {info['data_files']} files, {info['data_bytes'] / 1e6:.0f} MB, {info['rows']} rows",
          file=sys.stderr)
    runs = []
    for i in range(1, a.runs + 1):
        for tool in a.tools.split(","):
            runs.append(run_tool(tool, info, a, i))
    if a.profile:  # one more icectl run under py-spy, not counted
        r = run_tool("icectl", info, a, 0, profile=True)
        print(f"  profile: {r['profile_svg']}", file=sys.stderr)
    s = summarize(runs)
    block = render(info, runs, s, a, started)
    print(block)
    with open(os.path.join(info["data"], "results.json"), "w") as fh:
        json.dump({"info": info, "summary": s, "runs": runs}, fh, indent=2, default=str)
    if not a.no_write:
        update_results(a.results, BEGIN, END, block, "# Compaction benchmark: icectl vs Iceberg Java")
    return s


if __name__ == "__main__":
    main()
