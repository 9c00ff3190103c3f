#!/usr/bin/env python
"""Benchmark ``icectl validate`` (metadata checks) and ``icectl validate --deep`` in entries per second.

- Metadata checks: on the table from ``bench/gen_large_table.py`` (``bench.large`` in --data,
  generated there first if missing: metadata only, so ``--deep`` would only find missing files).
  The target is 100,000 manifest entries per second, bounds included.
- ``--deep``: on a table of real files this script builds with icectl itself (``--deep-files``,
  200,000 by default, small Parquet files in ``--deep-snapshots`` appends, v3, one deletion vector
  per 10 files; about 80 s and 1 GB of disk the first time), as ``bench.deep`` in a SQLite catalog
  under ``--data/validate-deep-<N>``. The metadata checks are timed on it too.

Each command runs as a subprocess (the wall clock and CPU of the whole command, median of
``--runs`` after one warm-up). For reference it also times fastavro decoding every entry of the
same manifests (what a fastavro-based reader pays) and the engine alone in-process, with one
thread and with threads, and compares ``icectl validate`` with Iceberg Java scanning the ``files``
metadata table of the same table (bench_expire's copy; ``--no-java`` skips it). Results go to
bench/RESULTS.md between markers (other sections are kept).

    python bench/bench_validate.py
    python bench/bench_validate.py --runs 5 --deep-files 20000 --deep-snapshots 20
"""
from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import os
import platform
import statistics
import tempfile
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
BEGIN, END = "<!-- bench-validate:begin -->", "<!-- bench-validate:end -->"


def run_cmd(cmd: list[str], env: dict[str, str]) -> tuple[float, float, bytes, int]:
    """(wall seconds, CPU seconds, stdout, exit code) of one run, timed by bench_read's run_once."""
    from bench_read import run_once

    with tempfile.TemporaryFile() as out:
        wall, cpu, code, _ = run_once(cmd, env, out)
        out.seek(0)
        return wall, cpu, out.read(), code


MAX_LOAD = 1.5  # wait (up to a minute) for a 1-minute load average below this before each run


def quiet() -> None:
    from harness import wait_for_quiet

    wait_for_quiet(MAX_LOAD, 60)


def measure(cmd: list[str], env: dict[str, str], runs: int) -> dict:
    run_cmd(cmd, env)  # warm-up (page cache, .pyc)
    walls, cpus, out, code = [], [], b"", 0
    for _ in range(runs):
        quiet()
        w, c, out, code = run_cmd(cmd, env)
        walls.append(w)
        cpus.append(c)
    report = json.loads(out) if out.strip() else {}
    return {"wall": statistics.median(walls), "cpu": statistics.median(cpus), "report": report, "code": code}


def ensure_large(data: str, args: argparse.Namespace) -> dict:
    import gen_large_table as gen

    if not gen.table_exists(data):
        gen.main(["--out", data, "--snapshots", str(args.snapshots), "--files-per-snapshot", str(args.files_per_snapshot),
                  "--quiet"])
    with open(os.path.join(data, "gen_info.json")) as f:
        return json.load(f)


def build_deep(root: str, files: int, snapshots: int) -> str:
    """A v3 table of real Parquet files and deletion vectors, written by icectl (once)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from icectl.catalog.sql import SqlCatalog
    from icectl.spec.conversions import to_bytes
    from icectl.formats.manifest import DataFile, FileContent
    from icectl.formats.puffin import deletion_vector_file
    from tests.helpers import append_files, create_table
    from icectl.table.loaded import load_table
    from icectl.errors import NoSuchTableError
    from icectl.io import FileIO

    wh = os.path.join(root, "warehouse")
    os.makedirs(wh, exist_ok=True)
    uri = f"sqlite:///{os.path.join(root, 'catalog.db')}"
    cat = SqlCatalog("bench", uri, wh, FileIO())
    with open(os.path.join(root, "icectl.yaml"), "w") as f:
        f.write(f"catalog:\n  bench:\n    type: sql\n    uri: {uri}\n    warehouse: {wh}\n")
    try:
        load_table(cat, ("bench", "deep"))
        return root
    except NoSuchTableError:
        pass
    t = create_table(cat, ("bench", "deep"), schema_text="id:long!, name:string, day:int", partition_by="day",
                     format_version=3)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False, metadata={"PARQUET:field_id": "1"}),
                        pa.field("name", pa.string(), metadata={"PARQUET:field_id": "2"}),
                        pa.field("day", pa.int32(), metadata={"PARQUET:field_id": "3"})])
    per = max(1, files // snapshots)
    n = 0
    for s in range(snapshots):
        batch = []
        for _ in range(per):
            day = n % 30
            ids = list(range(n * 10, n * 10 + 10))
            path = os.path.join(t.location, "data", f"day={day}", f"f{n:06d}.parquet")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            pq.write_table(pa.table({"id": ids, "name": [f"n{i}" for i in ids], "day": [day] * 10}, schema=schema), path)
            batch.append(DataFile(path, "parquet", (day,), 10, os.path.getsize(path),
                                  value_counts={1: 10, 2: 10, 3: 10}, null_value_counts={1: 0, 2: 0, 3: 0},
                                  lower_bounds={1: to_bytes("long", ids[0]), 2: to_bytes("string", f"n{ids[0]}"),
                                                3: to_bytes("int", day)},
                                  upper_bounds={1: to_bytes("long", ids[-1]), 2: to_bytes("string", f"n{ids[-1]}"),
                                                3: to_bytes("int", day)}))
            n += 1
        t = append_files(t, batch)
        dvs = batch[::10]
        if dvs:
            data, blobs = deletion_vector_file({f.file_path: [0, 3] for f in dvs})
            path = os.path.join(t.location, "data", f"dv-{s:04d}.puffin")
            with open(path, "wb") as fh:
                fh.write(data)
            t = append_files(t, [DataFile(path, "puffin", f.partition, b.cardinality, len(data),
                                          content=FileContent.POSITION_DELETES, referenced_data_file=f.file_path,
                                          content_offset=b.offset, content_size_in_bytes=b.length)
                                 for f, b in zip(dvs, blobs)])
    return root


def fastavro_rate(config: str) -> dict:
    """fastavro decoding every entry of the current snapshot's manifests (one process)."""
    import fastavro

    os.environ["ICECTL_CONFIG"] = config
    from icectl.catalog import build_catalog, resolve_catalog_config
    from icectl.table.loaded import load_table

    t = load_table(build_catalog(resolve_catalog_config("bench")), ("bench", "large"))
    manifests = t.manifests(t.metadata.current_snapshot)
    blobs = [t.io.read(m.manifest_path) for m in manifests]
    t0 = time.process_time()
    n = sum(1 for b in blobs for _ in fastavro.reader(io.BytesIO(b)))
    return {"entries": n, "cpu": time.process_time() - t0}


def engine_rate(config: str, workers: int | None, bounds: bool = True) -> dict:
    os.environ["ICECTL_CONFIG"] = config
    from icectl.catalog import build_catalog, resolve_catalog_config
    from icectl.validate.findings import ValidateOptions
    from icectl.validate.run import validate_table

    cat = build_catalog(resolve_catalog_config("bench"))
    quiet()
    t0 = time.perf_counter()
    r = validate_table(cat, ("bench", "large"), ValidateOptions(workers=workers, check_bounds=bounds))
    return {"entries": r.checked.entries, "wall": time.perf_counter() - t0, "errors": len(r.errors)}


JAVA_SQL = ("SELECT count(*) AS entries, sum(record_count) AS records, sum(size(lower_bounds)) AS lower_bounds, "
            "sum(size(upper_bounds)) AS upper_bounds FROM hc.bench.large.files")


def java_comparison(a: argparse.Namespace) -> dict:
    """The same table for both: bench_expire's Hadoop-layout copy of the generated table
    (generated there first if missing), restored from its pristine copy. icectl validates it;
    Iceberg Java (local Spark, the oracle) scans its ``files`` metadata table three times in one
    session (every entry of the current snapshot, bounds included), after the JVM has started."""
    import bench_expire as be
    from harness import java_env, restore, write_java_call

    info = be.prepare(be.parse_args(["--snapshots", str(a.snapshots), "--files-per-snapshot",
                                     str(a.files_per_snapshot)]))
    restore(info["pristine"], info["work"])
    icectl = measure([sys.executable, "-m", "icectl", "--warehouse", info["warehouse"], "-o", "json", "validate",
                      "bench.large"], dict(os.environ), a.runs)
    argv = [sys.executable, write_java_call(info["data"]), info["warehouse"], JAVA_SQL, JAVA_SQL, JAVA_SQL]
    quiet()
    wall, cpu, out, code = run_cmd(argv, java_env("4g"))
    if code != 0:
        raise SystemExit(f"Iceberg Java failed (exit {code})")
    j = json.loads(out.decode().strip().splitlines()[-1])
    scans = [st["seconds"] for st in j["statements"]]
    return {"icectl": icectl, "java_scans": scans, "java_rows": j["statements"][-1]["rows"][0],
            "java_session": j["session_seconds"], "java_wall": wall, "java_cpu": cpu}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=os.path.join(HERE, "data"), help="folder of bench.large (default bench/data)")
    p.add_argument("--snapshots", type=int, default=2000, help="when generating bench.large (default 2000)")
    p.add_argument("--files-per-snapshot", type=int, default=100, help="when generating bench.large (default 100)")
    p.add_argument("--deep-files", type=int, default=200000, help="real files in bench.deep (default 200000)")
    p.add_argument("--deep-snapshots", type=int, default=100, help="appends in bench.deep (default 100)")
    p.add_argument("--runs", type=int, default=3, help="timed runs per command (default 3)")
    p.add_argument("--results", default=os.path.join(HERE, "RESULTS.md"), help="file to update (default bench/RESULTS.md)")
    p.add_argument("--no-write", action="store_true", help="print the results only")
    p.add_argument("--no-java", action="store_true", help="skip the comparison with Iceberg Java")
    a = p.parse_args(argv)

    # As an installed package is: byte-compiled (pip compiles on install; an editable install
    # under PYTHONDONTWRITEBYTECODE=1 would compile icectl's modules from source on every run).
    import compileall

    compileall.compile_dir(os.path.join(os.path.dirname(HERE), "icectl"), quiet=1)
    load_before = os.getloadavg()
    info = ensure_large(a.data, a)
    large_cfg = os.path.join(os.path.abspath(a.data), "icectl.yaml")
    name = f"validate-deep-{a.deep_files // 1000}k" if a.deep_files % 1000 == 0 else f"validate-deep-{a.deep_files}"
    deep_root = build_deep(os.path.join(os.path.abspath(a.data), name), a.deep_files, a.deep_snapshots)
    deep_cfg = os.path.join(deep_root, "icectl.yaml")
    icectl = [sys.executable, "-m", "icectl", "-c", "bench", "-o", "json", "validate"]
    env = dict(os.environ)
    rows = []
    for label, cfg, args in (
        ("`validate bench.large` (metadata checks, bounds included)", large_cfg, ["bench.large"]),
        ("`validate bench.large --no-bounds`", large_cfg, ["bench.large", "--no-bounds"]),
        ("`validate bench.deep`", deep_cfg, ["bench.deep"]),
        ("`validate bench.deep --deep`", deep_cfg, ["bench.deep", "--deep"]),
    ):
        runs = min(a.runs, 3) if "--deep" in args else a.runs  # ~35 s each on 200,000 files
        m = measure(icectl + args, {**env, "ICECTL_CONFIG": cfg}, runs)
        r = m["report"]
        entries = r.get("checked", {}).get("entries", 0)
        files = r.get("checked", {}).get("files", 0)
        rows.append((label, entries, files, m["wall"], m["cpu"], r.get("errors"), m["code"]))
    fa = fastavro_rate(large_cfg)
    one = engine_rate(large_cfg, workers=1)
    auto = engine_rate(large_cfg, workers=None)
    java = None if a.no_java else java_comparison(a)
    load_after = os.getloadavg()

    lines = [f"## validate: run of {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC", "",
             f"- machine: {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}; load average "
             f"{'/'.join(f'{x:.1f}' for x in load_before)} before, {'/'.join(f'{x:.1f}' for x in load_after)} after "
             "(other processes share the cores: a load above ~1 inflates the wall clock)",
             f"- `bench.large`: {info.get('live_data_files', '?'):,} live entries in "
             f"{info.get('manifests_in_current_snapshot', '?')} manifests ({info.get('manifest_bytes_in_current_snapshot', 0) / 1e6:.1f} MB), "
             "metrics for 8 columns, from bench/gen_large_table.py (metadata only)",
             f"- `bench.deep`: {a.deep_files:,} real Parquet files (page cache warm) in {a.deep_snapshots} appends (v3) plus a deletion "
             "vector for every 10th file, built by this script with icectl",
             f"- wall clock of the whole command (subprocess, interpreter start included; icectl byte-compiled first, as "
             f"an installed package is), median of {a.runs} runs ({min(a.runs, 3)} with `--deep`) after a warm-up, each after the 1-minute load average "
             f"fell below {MAX_LOAD} (or a minute passed); CPU = user + system of the command and its threads", "",
             "| command | entries | files | wall (s) | entries/s (wall) | CPU (s) | errors | exit |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for label, entries, files, wall, cpu, errors, code in rows:
        lines.append(f"| {label} | {entries:,} | {files:,} | {wall:.2f} | {entries / wall:,.0f} | {cpu:.2f} | "
                     f"{errors} | {code} |")
    lines += ["", "In-process, the engine alone on `bench.large` (no interpreter start):", "",
              "| what | entries | seconds | entries/s |", "| --- | ---: | ---: | ---: |",
              f"| fastavro decoding every entry (CPU, 1 process) | {fa['entries']:,} | {fa['cpu']:.2f} | "
              f"{fa['entries'] / fa['cpu']:,.0f} |",
              f"| validate_table, 1 process (wall) | {one['entries']:,} | {one['wall']:.2f} | "
              f"{one['entries'] / one['wall']:,.0f} |",
              f"| validate_table, threads (wall) | {auto['entries']:,} | {auto['wall']:.2f} | "
              f"{auto['entries'] / auto['wall']:,.0f} |", ""]
    if java is not None:
        ic = java["icectl"]
        n = ic["report"].get("checked", {}).get("entries", 0)
        jn = java["java_rows"]["entries"]
        warm = min(java["java_scans"][1:])
        lines += ["Against Iceberg Java on one table (bench_expire's Hadoop-layout copy of the same generator's "
                  "table, restored from its pristine copy):", "",
                  "| what | entries | seconds | entries/s | its seconds ÷ icectl's |",
                  "| --- | ---: | ---: | ---: | ---: |",
                  f"| `icectl validate` (whole command, median of {a.runs}) | {n:,} | {ic['wall']:.2f} | "
                  f"{n / ic['wall']:,.0f} | 1 |",
                  f"| Java `files` scan, first in its session (JVM started) | {jn:,} | {java['java_scans'][0]:.2f} | "
                  f"{jn / java['java_scans'][0]:,.0f} | {java['java_scans'][0] / ic['wall'] * n / jn:.2f} |",
                  f"| Java `files` scan, warm (best of the next {len(java['java_scans']) - 1}) | {jn:,} | {warm:.2f} | "
                  f"{jn / warm:,.0f} | {warm / ic['wall'] * n / jn:.2f} |",
                  f"| Java, whole process (JVM start, session, 3 scans) | {jn:,} | {java['java_wall']:.2f} | | |", "",
                  f"Java's query: `{JAVA_SQL}`. icectl's command checks every rule and bound of those entries; "
                  "Java's scan only reads them.", ""]
    lines += ["Target: >= 100,000 manifest entries/s for the metadata checks.", ""]
    block = "\n".join(lines)
    print(block)
    if not a.no_write:
        from bench_expire import update_results  # the benchmarks' shared harness

        update_results(a.results, BEGIN, END, block, "# Validate benchmark\n\nWritten by "
                       "`python bench/bench_validate.py`; the block between the markers is replaced on each run.")


if __name__ == "__main__":
    main()
