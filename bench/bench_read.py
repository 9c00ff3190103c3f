#!/usr/bin/env python
"""Time icectl against PyIceberg on the table that gen_large_table.py generated, in one run.

Every measurement is a whole command run as a subprocess (interpreter start, imports, catalog,
metadata, manifests, output), wall clock, the median of --runs runs after --warmup untimed runs.

    icectl --help                               vs  pyiceberg --help
    icectl -c bench describe bench.large        vs  PyIceberg: load_table + metadata, schema, spec,
                                                    properties, current_snapshot() (printed)
    icectl -c bench snapshots bench.large       vs  PyIceberg: table.inspect.snapshots()
    icectl -c bench -o json files bench.large   vs  PyIceberg: table.inspect.files()
      (stdout to /dev/null)

plus, for reference, ``pyiceberg describe`` (PyIceberg's own CLI) and PyIceberg's
``table.scan().plan_files()``. The PyIceberg snippets build their Arrow tables but print only a
row count, so they do less output work than icectl.

Results go to stdout as a Markdown table and into bench/RESULTS.md, between the
``<!-- bench:begin -->`` and ``<!-- bench:end -->`` markers (the rest of the file is kept).

    python bench/gen_large_table.py          # once: the table in bench/data/
    python bench/bench_read.py               # then this
    python bench/bench_read.py --profile     # also cProfile `icectl files` (top functions)
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"

PYI_PRELUDE = textwrap.dedent("""\
    import os, sys
    from pyiceberg.catalog.sql import SqlCatalog
    data = os.environ["BENCH_DATA"]
    cat = SqlCatalog("bench", uri="sqlite:///" + os.path.join(data, "catalog.db"),
                     warehouse="file://" + os.path.join(data, "warehouse"), init_catalog_tables="false")
    t = cat.load_table("bench.large")
    """)

PYI_DESCRIBE = PYI_PRELUDE + textwrap.dedent("""\
    md = t.metadata
    s = t.current_snapshot()
    print(md.table_uuid, md.location, md.format_version, md.last_sequence_number, md.last_updated_ms)
    print(t.schema())
    print(t.spec())
    print(t.sort_order())
    print(md.properties)
    print(md.refs)
    print(s.snapshot_id, s.timestamp_ms, s.summary)
    print(len(md.snapshots), len(md.snapshot_log), len(md.metadata_log))
    """)

PYI_SNAPSHOTS = PYI_PRELUDE + "print(t.inspect.snapshots().num_rows)\n"
PYI_FILES = PYI_PRELUDE + "print(t.inspect.files().num_rows)\n"
PYI_PLAN = PYI_PRELUDE + "print(sum(1 for _ in t.scan().plan_files()))\n"


def script(name: str) -> list[str]:
    """A console script of this interpreter's environment (not a pyenv shim, which adds ~50 ms)."""
    p = os.path.join(os.path.dirname(sys.executable), name)
    if os.path.exists(p):
        return [p]
    if name == "icectl":
        return [sys.executable, "-m", "icectl"]
    return []


def run_once(cmd: list[str], env: dict[str, str], stdout) -> tuple[float, float, int, bytes]:
    """(wall seconds, CPU seconds of the child: user + system, exit code, stderr)."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, env=env, stdout=stdout, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        el = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        return el, ru.ru_utime + ru.ru_stime, p.returncode, err.read()


def measure(label: str, cmd: list[str], env: dict[str, str], runs: int, warmup: int,
            capture: bool = False) -> dict:
    times, cpus = [], []
    out = None
    for i in range(warmup + runs):
        if capture:
            with tempfile.TemporaryFile() as fh:
                el, cpu, rc, err = run_once(cmd, env, fh)
                fh.seek(0)
                out = fh.read()
        else:
            with open(os.devnull, "wb") as devnull:
                el, cpu, rc, err = run_once(cmd, env, devnull)
        if rc != 0:
            raise SystemExit(f"{label}: {' '.join(cmd)} failed with exit code {rc}:\n{err.decode(errors='replace')}")
        if i >= warmup:
            times.append(el)
            cpus.append(cpu)
    med = statistics.median(times)
    cpu_med = statistics.median(cpus)
    print(f"  {label:<36} median {med:7.3f} s (CPU {cpu_med:7.3f} s)  runs {', '.join(f'{x:.3f}' for x in times)}",
          file=sys.stderr, flush=True)
    return {"label": label, "cmd": cmd, "median": med, "cpu": cpu_med, "runs": times, "cpus": cpus, "stdout": out}


def versions() -> dict[str, str]:
    out = {}
    for mod in ("icectl", "pyiceberg", "fastavro", "pyarrow", "typer", "rich"):
        try:
            from importlib.metadata import version

            out[mod] = version(mod)
        except Exception:
            out[mod] = "not installed"
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=os.path.join(HERE, "data"), help="the generator's output folder")
    p.add_argument("--runs", type=int, default=3, help="timed runs per command (median; default 3)")
    p.add_argument("--warmup", type=int, default=1, help="untimed runs first (default 1)")
    p.add_argument("--results", default=os.path.join(HERE, "RESULTS.md"), help="Markdown file to update")
    p.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    p.add_argument("--no-pyiceberg", action="store_true", help="time icectl only")
    p.add_argument("--no-extra", action="store_true", help="skip the reference rows (pyiceberg describe, plan_files)")
    p.add_argument("--profile", action="store_true", help="also cProfile `icectl -o json files` and print the top")
    a = p.parse_args(argv)

    data = os.path.abspath(a.data)
    info_path = os.path.join(data, "gen_info.json")
    if not os.path.exists(info_path):
        raise SystemExit(f"{info_path} not found: run python bench/gen_large_table.py --out {a.data} first")
    with open(info_path) as fh:
        info = json.load(fh)
    ident, cat = info["identifier"], info["catalog"]
    env = dict(os.environ, ICECTL_CONFIG=os.path.join(data, "icectl.yaml"), PYICEBERG_HOME=data, BENCH_DATA=data)
    env.pop("ICECTL_CATALOG", None)
    icectl = script("icectl")
    pyiceberg_cli = script("pyiceberg")
    py = [sys.executable]
    have_pyiceberg = not a.no_pyiceberg and _importable("pyiceberg")

    print(f"table {ident}: {info['snapshots']} snapshots, {info['live_data_files']} live files, "
          f"{info['manifests_in_current_snapshot']} manifests; {a.runs} runs + {a.warmup} warm-up each",
          file=sys.stderr)

    load_before = os.getloadavg()
    # Correctness first (untimed): both read every live file.
    with tempfile.TemporaryFile() as fh:
        el, cpu, rc, err = run_once(icectl + ["-c", cat, "-o", "json", "files", ident], env, fh)
        if rc != 0:
            raise SystemExit(f"icectl files failed: {err.decode(errors='replace')}")
        fh.seek(0)
        n_icectl = len(json.load(fh))
    if n_icectl != info["live_data_files"]:
        raise SystemExit(f"icectl files listed {n_icectl} files, the generator wrote {info['live_data_files']}")

    rows = []
    floor = measure("python -c pass (interpreter start)", py + ["-c", "pass"], env, a.runs, a.warmup)

    def pair(name, ice_cmd, pyi_cmd, target, kind, capture_pyi=False):
        ice = measure(f"icectl {name}", ice_cmd, env, a.runs, a.warmup)
        pyi = None
        if have_pyiceberg and pyi_cmd:
            pyi = measure(f"PyIceberg {name}", pyi_cmd, env, a.runs, a.warmup, capture=capture_pyi)
        rows.append({"name": name, "icectl": ice, "pyiceberg": pyi, "target": target, "kind": kind})
        return ice, pyi

    pair("--help", icectl + ["--help"], (pyiceberg_cli + ["--help"]) if pyiceberg_cli else None, 0.3, "abs")
    pair("describe", icectl + ["-c", cat, "describe", ident], py + ["-c", PYI_DESCRIBE], 1.0, "abs")
    _, pyi_snap = pair("snapshots", icectl + ["-c", cat, "snapshots", ident], py + ["-c", PYI_SNAPSHOTS], 1.0,
                       "abs", capture_pyi=True)
    _, pyi_files = pair("files (all live files)", icectl + ["-c", cat, "-o", "json", "files", ident],
                        py + ["-c", PYI_FILES], 3.0, "ratio", capture_pyi=True)
    if pyi_files is not None:
        n_pyi = int(pyi_files["stdout"].split()[-1])
        if n_pyi != info["live_data_files"]:
            raise SystemExit(f"PyIceberg inspect.files() returned {n_pyi} rows, expected {info['live_data_files']}")
    extra = [floor]
    if have_pyiceberg and not a.no_extra:
        if pyiceberg_cli:
            extra.append(measure("pyiceberg describe (its CLI)", pyiceberg_cli + ["--catalog", cat, "describe", ident],
                                 env, a.runs, a.warmup))
        extra.append(measure("PyIceberg scan().plan_files()", py + ["-c", PYI_PLAN], env, a.runs, a.warmup))

    profile_text = None
    if a.profile:
        profile_text = profile_files(icectl, cat, ident, env, data)

    load = (load_before, os.getloadavg())
    md = render(rows, extra, info, a, n_icectl, pyiceberg_cli, profile_text, load)
    print(md)
    if not a.no_write:
        from harness import update_results

        update_results(a.results, BEGIN, END, md, "# Read benchmark: icectl vs PyIceberg\n\n"
                       "Written by `python bench/bench_read.py` on the table from `python bench/gen_large_table.py` "
                       "(see bench/README.md). The block between the markers is replaced on each run; notes outside "
                       "it are kept.")
        print(f"updated {a.results}", file=sys.stderr)


def _importable(mod: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(mod) is not None


def profile_files(icectl: list[str], cat: str, ident: str, env: dict[str, str], data: str) -> str:
    prof = os.path.join(data, "icectl_files.prof")
    code = ("import sys; from icectl.cli.main import run; "
            f"sys.argv = ['icectl', '-c', {cat!r}, '-o', 'json', 'files', {ident!r}]; run()")
    with open(os.devnull, "wb") as devnull:
        subprocess.run([sys.executable, "-m", "cProfile", "-o", prof, "-c", code], env=env, stdout=devnull,
                       check=False)
    import io
    import pstats

    buf = io.StringIO()
    st = pstats.Stats(prof, stream=buf)
    st.sort_stats("tottime").print_stats(20)
    text = buf.getvalue()
    print(text, file=sys.stderr)
    return text


def fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def render(rows, extra, info, a, n_icectl, pyiceberg_cli, profile_text, load) -> str:
    v = versions()
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"## Run of {now}",
        "",
        f"- machine: {os.cpu_count()} cores (nproc), {platform.machine()}, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}; load average (1, 5, 15 min) "
        f"{'/'.join(f'{x:.1f}' for x in load[0])} before, {'/'.join(f'{x:.1f}' for x in load[1])} after "
        f"(other processes share the 2 cores: a load above ~1 inflates every number)",
        f"- versions: " + ", ".join(f"{k} {val}" for k, val in v.items()),
        f"- table `{info['identifier']}` (format v{info['format_version']}, SQLite SQL catalog `{info['catalog']}`): "
        f"{info['snapshots']:,} snapshots, {info['live_data_files']:,} live data files "
        f"({info['files_per_snapshot']} per append, partitioned by day(ts) over {info['days']} days, "
        f"metrics for 8 columns), {info['manifests_in_current_snapshot']} manifests in the current snapshot "
        f"({info['manifest_bytes_in_current_snapshot'] / 1e6:.1f} MB, largest "
        f"{info['largest_manifest_bytes'] / 1e6:.1f} MB), metadata.json {info['metadata_json_bytes'] / 1e6:.2f} MB",
        f"- manifests merged as Iceberg Java's MergeAppend: merge "
        f"{'enabled' if info['merge_enabled'] else 'disabled'}, min-count-to-merge {info['min_count_to_merge']}, "
        f"target {info['target_size_bytes']:,} bytes; {info['merges']} merges rewrote "
        f"{info['entries_rewritten_by_merges']:,} entries",
        f"- generator: {info['generate_seconds']:.1f} s wall ({info['files_written']:,} files, "
        f"{info['bytes_written'] / 1e6:.0f} MB written) on {info['generated_at']}",
        f"- timing: wall clock of the whole command as a subprocess, median of {a.runs} runs after {a.warmup} "
        f"warm-up; CPU = the child's user + system time (median), less sensitive to other load than wall "
        f"clock, but it adds up threads; icectl files output (JSON, {n_icectl:,} files) to /dev/null",
        "",
        "| command | icectl wall (s) | PyIceberg wall (s) | PyIceberg / icectl | target | met | icectl CPU (s) "
        "| PyIceberg CPU (s) | CPU ratio |",
        "| --- | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: |",
    ]
    pyi_names = {"--help": "`pyiceberg --help`" if pyiceberg_cli else "",
                 "describe": "load_table + metadata + current_snapshot()",
                 "snapshots": "`inspect.snapshots()`",
                 "files (all live files)": "`inspect.files()`"}
    ice_names = {"--help": "`icectl --help`", "describe": "`icectl describe`",
                 "snapshots": "`icectl snapshots`", "files (all live files)": "`icectl -o json files`"}
    for r in rows:
        ice = r["icectl"]["median"]
        pyi = r["pyiceberg"]["median"] if r["pyiceberg"] else None
        ratio = pyi / ice if pyi is not None else None
        if r["kind"] == "abs":
            target = f"icectl < {r['target']:g} s"
            met = ice < r["target"]
        else:
            target = f">= {r['target']:g}x faster than PyIceberg"
            met = ratio is not None and ratio >= r["target"]
        pyi_label = f" vs {pyi_names[r['name']]}" if r["pyiceberg"] else ""
        ice_cpu = r["icectl"]["cpu"]
        pyi_cpu = r["pyiceberg"]["cpu"] if r["pyiceberg"] else None
        cpu_ratio = f"{pyi_cpu / ice_cpu:.2f}x" if pyi_cpu is not None and ice_cpu > 0 else "n/a"
        lines.append(f"| {ice_names[r['name']]}{pyi_label} | {fmt(ice)} | {fmt(pyi)} | "
                     f"{'n/a' if ratio is None else f'{ratio:.2f}x'} | {target} | {'yes' if met else '**no**'} | "
                     f"{fmt(ice_cpu)} | {fmt(pyi_cpu)} | {cpu_ratio} |")
    if extra:
        lines += ["", "Reference (the interpreter's start-up floor, and PyIceberg alone):", "",
                  "| command | wall (s) | CPU (s) |", "| --- | ---: | ---: |"]
        for e in extra:
            lines.append(f"| {e['label']} | {fmt(e['median'])} | {fmt(e['cpu'])} |")
    if profile_text:
        lines += ["", "cProfile of `icectl -o json files` (top 20 by own time):", "", "```",
                  profile_text.strip(), "```"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
