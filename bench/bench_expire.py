#!/usr/bin/env python
"""Time ``icectl expire`` against Iceberg Java's ``expire_snapshots`` on the large generated table.

The table is gen_large_table.py's (2,000 append snapshots, 200,000 live data files, manifests
merged as Iceberg Java's MergeAppend merges them), turned into a file-system (Hadoop) table that
Iceberg Java's HadoopCatalog reads (``metadata/v<N>.metadata.json`` + ``version-hint.text``), with
every file it references present: the generator writes all manifests and manifest lists, and this
script creates an empty placeholder for each of the 200,000 data files (expiry only deletes files,
so their content does not matter).

Two scenarios (``--scenarios``):

- ``appends``: the table as generated; the cut-off keeps the newest ``--keep`` (100) snapshots (a
  timestamp half-way between the 100th and the 101st newest, whole seconds). The table only ever
  appended, so every data file is still live: expiry deletes manifest lists and manifests only.
- ``retention-delete``: the table after Iceberg Java's ``DELETE FROM hc.bench.large WHERE ts <
  TIMESTAMP '2025-04-01 00:00:00'`` (whole day partitions, so a metadata-only delete of ~1/4 of
  the data files, committed now); the cut-off is that DELETE's timestamp, so every append
  snapshot expires and the deleted data files go too.

Both tools run on the same copy of the table, restored from the scenario's pristine copy before
each run (``cp -a``; metadata holds absolute paths, so the copy is restored at the same location
rather than placed next to it):

    icectl --warehouse WH -o json expire bench.large --older-than TS --yes
    python java_call.py WH "CALL hc.system.expire_snapshots(table => 'bench.large', older_than => TIMESTAMP 'TS')"

the second being a Python script that starts Iceberg Java 1.10.2 in local Spark (local[2]) with
/work/shared/oracle/iceberg_java.py, runs the CALL, prints its result and stops (the JVM start is
part of the command, as when a user runs it). Each is timed as a subprocess: wall clock, and CPU
as the user + system time of the whole process tree (this script makes itself a child subreaper,
so that a JVM outliving its Python parent is still reaped and counted; see ``run_timed``). The files each run deleted
are found by listing the table folder before and after (relative paths); the two sets must be
equal.

    python bench/bench_expire.py                  # generate (once, ~5 min), then time both scenarios
    python bench/bench_expire.py --runs 3         # alternate icectl/Java 3 times, report medians
    python bench/bench_expire.py --no-java        # icectl only
    python bench/bench_expire.py --profile        # also an untimed py-spy run of icectl (SVG)

Results: stdout, ``bench/data/expire/results.json``, and bench/RESULTS.md between the
``<!-- bench-expire:begin -->`` and ``<!-- bench-expire:end -->`` markers (the rest is kept).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

from harness import (  # the benchmarks' shared harness (bench/ is on sys.path)
    HERE, become_subreaper, fmt_load, icectl_cmd, java_env, restore, run_timed, update_results, versions,
    wait_for_quiet, walk, write_java_call,
)

RESULTS_MD = os.path.join(HERE, "RESULTS.md")
BEGIN, END = "<!-- bench-expire:begin -->", "<!-- bench-expire:end -->"
NAMESPACE, TABLE = "bench", "large"


# ---------------------------------------------------------------------------------------------
# The table

def table_dir(work: str) -> str:
    return os.path.join(work, "warehouse", NAMESPACE, TABLE)


def prepare(a: argparse.Namespace) -> dict:
    """Generate the table (Hadoop layout, placeholders for data files) and its pristine copy."""
    data = os.path.abspath(a.data)
    work, pristine = os.path.join(data, "work"), os.path.join(data, "pristine")
    info_path = os.path.join(data, "prepared.json")
    want = {"snapshots": a.snapshots, "files_per_snapshot": a.files_per_snapshot, "keep": a.keep}
    if not a.regen and os.path.exists(info_path) and os.path.isdir(pristine):
        with open(info_path) as fh:
            info = json.load(fh)
        if all(info.get(k) == v for k, v in want.items()):
            info.setdefault("scenarios", {"appends": {
                "pristine": pristine, "cutoff_iso": info["cutoff_iso"], "cutoff_sql": info["cutoff_sql"],
                "what": f"the {info['snapshots_total']:,} append snapshots; the cut-off keeps the newest {a.keep}"}})
            return info
    for d in (work, pristine):
        if os.path.exists(d):
            shutil.rmtree(d)
    os.makedirs(data, exist_ok=True)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, os.path.join(HERE, "gen_large_table.py"), "--out", work,
                    "--snapshots", str(a.snapshots), "--files-per-snapshot", str(a.files_per_snapshot)], check=True)
    gen_seconds = time.perf_counter() - t0
    with open(os.path.join(work, "gen_info.json")) as fh:
        gen = json.load(fh)
    # The SQL catalog the generator registered the table in is not used here.
    for name in ("catalog.db", "icectl.yaml", ".pyiceberg.yaml"):
        p = os.path.join(work, name)
        if os.path.exists(p):
            os.remove(p)
    shutil.move(os.path.join(work, "gen_info.json"), os.path.join(data, "gen_info.json"))
    # Hadoop layout: metadata/v<N>.metadata.json and version-hint.text.
    mdir = os.path.join(table_dir(work), "metadata")
    version = a.snapshots
    os.rename(gen["metadata_location"], os.path.join(mdir, f"v{version}.metadata.json"))
    with open(os.path.join(mdir, "version-hint.text"), "w") as fh:
        fh.write(str(version))

    from icectl.catalog.hadoop import HadoopCatalog
    from icectl.table.loaded import load_table
    from icectl.io import FileIO

    t1 = time.perf_counter()
    table = load_table(HadoopCatalog("hc", os.path.join(work, "warehouse"), FileIO()), (NAMESPACE, TABLE))
    md = table.metadata
    # Every file that any snapshot references must exist: manifest lists and manifests are the
    # generator's; data files (all still live: the table only ever appended) become placeholders.
    manifest_lists = [s.manifest_list for s in md.snapshots]
    manifests: set[str] = set()
    for s in md.snapshots:
        manifests.update(m.manifest_path for m in table.manifests(s))
    missing = [p for p in manifest_lists + sorted(manifests) if not os.path.exists(p)]
    if missing:
        raise SystemExit(f"{len(missing)} manifests or manifest lists are missing, e.g. {missing[0]}")
    data_files = [f.file_path for _, f in table.live_files(md.current_snapshot)]
    dirs = {os.path.dirname(p) for p in data_files}
    for d in dirs:
        os.makedirs(d, exist_ok=True)
    for p in data_files:
        os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644))
    placeholders_seconds = time.perf_counter() - t1

    snaps = sorted(md.snapshots, key=lambda s: s.timestamp_ms)
    if a.keep >= len(snaps):
        raise SystemExit(f"--keep {a.keep} keeps every one of the {len(snaps)} snapshots")
    newest_kept, oldest_expired = snaps[-a.keep].timestamp_ms, snaps[-a.keep - 1].timestamp_ms
    cutoff_ms = (newest_kept + oldest_expired) // 2 // 1000 * 1000
    assert oldest_expired < cutoff_ms <= newest_kept
    cutoff = dt.datetime.fromtimestamp(cutoff_ms / 1000, tz=dt.timezone.utc)
    t2 = time.perf_counter()
    subprocess.run(["cp", "-a", work, pristine], check=True)
    copy_seconds = time.perf_counter() - t2
    files = walk(table_dir(work))
    info = {
        **want,
        "data": data, "work": work, "pristine": pristine, "warehouse": os.path.join(work, "warehouse"),
        "table_dir": table_dir(work), "metadata_version": version,
        "snapshots_total": len(md.snapshots), "live_data_files": len(data_files),
        "data_file_dirs": len(dirs), "manifest_lists": len(manifest_lists), "manifests_total": len(manifests),
        "manifests_in_current_snapshot": len(table.manifests(md.current_snapshot)),
        "files_in_table_dir": len(files), "bytes_in_table_dir": sum(files.values()),
        "cutoff_ms": cutoff_ms, "cutoff_iso": cutoff.isoformat().replace("+00:00", "Z"),
        "cutoff_sql": cutoff.strftime("%Y-%m-%d %H:%M:%S"),
        "generator": {k: gen.get(k) for k in ("merges", "entries_rewritten_by_merges", "files_written",
                                               "bytes_written", "generate_seconds", "metadata_json_bytes")},
        "generate_seconds": round(gen_seconds, 1), "placeholders_seconds": round(placeholders_seconds, 1),
        "copy_seconds": round(copy_seconds, 1),
        "prepared_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }
    info["scenarios"] = {"appends": {
        "pristine": pristine, "cutoff_iso": info["cutoff_iso"], "cutoff_sql": info["cutoff_sql"],
        "what": f"the {len(md.snapshots):,} append snapshots; the cut-off keeps the newest {a.keep}"}}
    with open(info_path, "w") as fh:
        json.dump(info, fh, indent=2)
    return info


def prepare_retention_delete(info: dict, a: argparse.Namespace) -> dict:
    """A second pristine copy: the table after Iceberg Java's ``DELETE FROM ... WHERE ts < D``
    (whole day partitions: a metadata-only delete that removes ~1/4 of the data files), expired
    with the cut-off just before that delete, so expiry deletes data files too."""
    if "retention-delete" in info.get("scenarios", {}) and not a.regen \
            and os.path.isdir(info["scenarios"]["retention-delete"]["pristine"]):
        return info
    data, work = info["data"], info["work"]
    pristine2 = os.path.join(data, "pristine-after-delete")
    if os.path.exists(pristine2):
        shutil.rmtree(pristine2)
    restore(info["pristine"], work)
    sql = f"DELETE FROM hc.{NAMESPACE}.{TABLE} WHERE ts < TIMESTAMP '{a.delete_before} 00:00:00'"
    logs = os.path.join(data, "logs")
    os.makedirs(logs, exist_ok=True)
    r = run_timed([sys.executable, write_java_call(data), info["warehouse"], sql],
                  stdout_path=os.path.join(logs, "java-delete.out"), stderr_path=os.path.join(logs, "java-delete.err"),
                  env=java_env(a.java_driver_memory))
    if r["rc"] != 0:
        raise SystemExit(f"the Java DELETE failed: see {logs}/java-delete.err")
    from icectl.catalog.hadoop import HadoopCatalog
    from icectl.table.loaded import load_table
    from icectl.io import FileIO

    t = load_table(HadoopCatalog("hc", info["warehouse"], FileIO()), (NAMESPACE, TABLE))
    snap = t.metadata.current_snapshot
    cutoff_ms = snap.timestamp_ms // 1000 * 1000  # whole seconds: older than the DELETE, after every append
    cutoff = dt.datetime.fromtimestamp(cutoff_ms / 1000, tz=dt.timezone.utc)
    subprocess.run(["cp", "-a", work, pristine2], check=True)
    info["scenarios"]["retention-delete"] = {
        "pristine": pristine2, "cutoff_iso": cutoff.isoformat().replace("+00:00", "Z"),
        "cutoff_sql": cutoff.strftime("%Y-%m-%d %H:%M:%S"), "delete_sql": sql,
        "delete_summary": {k: snap.summary.get(k) for k in ("operation", "deleted-data-files", "total-data-files")},
        "delete_seconds": r["wall"],
        "what": (f"after Iceberg Java's `{sql}` (metadata-only: {snap.summary.get('deleted-data-files')} data files "
                 f"removed, {snap.summary.get('total-data-files')} left), every snapshot older than that DELETE "
                 f"(all {len(t.metadata.snapshots) - 1:,} appends)")}
    with open(os.path.join(data, "prepared.json"), "w") as fh:
        json.dump(info, fh, indent=2)
    return info


# ---------------------------------------------------------------------------------------------
# The runs

def run_tool(tool: str, info: dict, a: argparse.Namespace, run_no: int, scenario: str,
             profile: bool = False) -> dict:
    sc = info["scenarios"][scenario]
    work, pristine, tdir = info["work"], sc["pristine"], info["table_dir"]
    logs = os.path.join(info["data"], "logs")
    os.makedirs(logs, exist_ok=True)
    restore_s = restore(pristine, work)
    before = walk(tdir)
    load, waited = wait_for_quiet(a.max_load, a.max_wait)
    stem = os.path.join(logs, f"{scenario}-{tool}-{run_no}")
    if tool == "icectl":
        argv = icectl_cmd() + ["--warehouse", info["warehouse"], "-o", "json", "expire", f"{NAMESPACE}.{TABLE}",
                               "--older-than", sc["cutoff_iso"], "--yes"]
        if profile:
            argv = ["py-spy", "record", "--subprocesses", "--rate", "100", "-o", stem + "-profile.svg", "--"] + argv
        env = dict(os.environ)
    else:
        sql = (f"CALL hc.system.expire_snapshots(table => '{NAMESPACE}.{TABLE}', "
               f"older_than => TIMESTAMP '{sc['cutoff_sql']}')")
        argv = [sys.executable, write_java_call(info["data"]), info["warehouse"], sql]
        env = java_env(a.java_driver_memory)
    print(f"  {scenario}: {tool} run {run_no}: load {load:.2f} (waited {waited:.0f} s) ...", file=sys.stderr, flush=True)
    r = run_timed(argv, stdout_path=stem + ".out", stderr_path=stem + ".err", env=env)
    after = walk(tdir)
    deleted = sorted(set(before) - set(after))
    added = sorted(set(after) - set(before))
    r.update({"profile_svg": stem + "-profile.svg" if profile else None, "tool": tool, "run": run_no,
              "scenario": scenario, "restore_seconds": round(restore_s, 1), "waited_for_load": round(waited),
              "deleted": deleted, "added": added, "files_before": len(before), "files_after": len(after)})
    if r["rc"] != 0:
        tail = open(stem + ".err", errors="replace").read()[-3000:]
        raise SystemExit(f"{tool} failed (exit {r['rc']}):\n{tail}")
    if profile:
        return r  # py-spy writes to stdout too; the profile is the point
    out = open(stem + ".out", errors="replace").read()
    if tool == "icectl":
        j = json.loads(out)
        r["reported"] = {"expired_snapshots": len(j["expired_snapshot_ids"]),
                         "retained_snapshots": len(j["retained_snapshot_ids"]),
                         "deleted_files": len(j["deleted_files"]), "failed_deletes": len(j["failed_deletes"]),
                         **j["counts"]}
        r["metadata_location"] = j["metadata_location"]
    else:
        j = json.loads(out.strip().splitlines()[-1])
        r["reported"] = j["statements"][0]["rows"][0]
        r["java_session_seconds"] = j["session_seconds"]
        r["java_call_seconds"] = j["statements"][0]["seconds"]
    r["retained_snapshot_ids"] = retained_ids(info)
    print(f"  {scenario}: {tool} run {run_no}: {r['wall']:.1f} s wall, {r['cpu']:.1f} s CPU, {len(deleted)} files deleted, "
          f"load {fmt_load(r['load_before'])} -> {fmt_load(r['load_after'])}", file=sys.stderr, flush=True)
    return r


def retained_ids(info: dict) -> list[int]:
    from icectl.catalog.hadoop import HadoopCatalog
    from icectl.table.loaded import load_table
    from icectl.io import FileIO

    t = load_table(HadoopCatalog("hc", info["warehouse"], FileIO()), (NAMESPACE, TABLE))
    return sorted(s.snapshot_id for s in t.metadata.snapshots)


def kind_of(rel: str) -> str:
    name = rel.rsplit("/", 1)[-1]
    if rel.startswith("data/"):
        return "data"
    if name.startswith("snap-") and name.endswith(".avro"):
        return "manifest-list"
    if name.endswith(".avro"):
        return "manifest"
    if name.endswith(".metadata.json") or name == "version-hint.text":
        return "metadata"
    return "other"


def by_kind(paths: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in paths:
        k = kind_of(p)
        out[k] = out.get(k, 0) + 1
    return out


def summarize(runs: list[dict]) -> dict:
    def med(tool: str, key: str) -> float | None:
        xs = [r[key] for r in runs if r["tool"] == tool]
        return round(statistics.median(xs), 3) if xs else None

    sets = {}
    for r in runs:
        sets.setdefault(r["tool"], []).append(frozenset(r["deleted"]))
    ice, java = sets.get("icectl", []), sets.get("java", [])
    s = {"icectl_wall": med("icectl", "wall"), "icectl_cpu": med("icectl", "cpu"),
         "icectl_user": med("icectl", "user"), "icectl_sys": med("icectl", "sys"),
         "java_wall": med("java", "wall"), "java_cpu": med("java", "cpu"),
         "java_user": med("java", "user"), "java_sys": med("java", "sys"),
         "icectl_runs_consistent": len(set(ice)) <= 1, "java_runs_consistent": len(set(java)) <= 1}
    if ice and java:
        a, b = ice[0], java[0]
        s["same_deleted_files"] = a == b
        s["only_icectl_deleted"] = sorted(a - b)[:20]
        s["only_java_deleted"] = sorted(b - a)[:20]
        s["only_icectl_count"], s["only_java_count"] = len(a - b), len(b - a)
        ri = [r["retained_snapshot_ids"] for r in runs if r["tool"] == "icectl"][0]
        rj = [r["retained_snapshot_ids"] for r in runs if r["tool"] == "java"][0]
        s["same_retained_snapshots"] = ri == rj
        s["wall_ratio_java_over_icectl"] = round(s["java_wall"] / s["icectl_wall"], 2)
        s["cpu_ratio_java_over_icectl"] = round(s["java_cpu"] / s["icectl_cpu"], 2)
    for tool in ("icectl", "java"):
        first = next((r for r in runs if r["tool"] == tool), None)
        if first:
            s[f"{tool}_deleted_by_kind"] = by_kind(first["deleted"])
            s[f"{tool}_deleted_count"] = len(first["deleted"])
            s[f"{tool}_added"] = first["added"]
            s[f"{tool}_reported"] = first["reported"]
    return s


def render(info: dict, results: dict[str, tuple[list[dict], dict]], a: argparse.Namespace, started: str) -> str:
    lines = [f"## Expire: run of {started}", ""]
    v = versions()
    lines.append(f"- machine: {os.cpu_count()} cores (nproc), {platform.machine()}, Linux {platform.release()}, "
                 f"Python {platform.python_version()}; " + ", ".join(f"{k} {x}" for k, x in v.items()))
    lines.append(f"- table `{NAMESPACE}.{TABLE}` (file-system/Hadoop layout, format v2) from "
                 f"`gen_large_table.py --snapshots {info['snapshots']} --files-per-snapshot "
                 f"{info['files_per_snapshot']}`: {info['snapshots_total']:,} snapshots, "
                 f"{info['live_data_files']:,} live data files (empty placeholders in {info['data_file_dirs']} "
                 f"partition folders), {info['manifest_lists']:,} manifest lists, {info['manifests_total']:,} "
                 f"manifests over all snapshots ({info['manifests_in_current_snapshot']} in the current one); "
                 f"{info['files_in_table_dir']:,} files, {info['bytes_in_table_dir'] / 1e6:.0f} MB in the table folder")
    lines.append("- each run starts from a fresh `cp -a` of the scenario's pristine table (not timed); retain-last 1 "
                 "(both tools' default)")
    lines.append(f"- timing: the whole command as a subprocess, wall clock; CPU = user + system of the whole "
                 f"process tree (JVM included); {a.runs} run(s) of each, alternating, median shown; before each "
                 f"run the script waited up to {a.max_wait:.0f} s for a 1-minute load average below {a.max_load}")
    for scenario, (runs, s) in results.items():
        sc = info["scenarios"][scenario]
        lines += ["", f"### Scenario `{scenario}`: expire {sc['what']} (cut-off `{sc['cutoff_iso']}`)", ""]
        lines.append("| command | wall (s) | CPU user+sys (s) | load before (1/5/15) | load after | files deleted |")
        lines.append("| --- | ---: | ---: | --- | --- | ---: |")
        for r in runs:
            name = "`icectl expire`" if r["tool"] == "icectl" else \
                "Iceberg Java `expire_snapshots` (local[2], JVM start included)"
            lines.append(f"| {name} (run {r['run']}) | {r['wall']:.2f} | {r['cpu']:.2f} ({r['user']:.1f}+{r['sys']:.1f}) "
                         f"| {fmt_load(r['load_before'])} | {fmt_load(r['load_after'])} | {len(r['deleted']):,} |")
        lines.append("")
        if "wall_ratio_java_over_icectl" in s:
            met = s["wall_ratio_java_over_icectl"] > 1 and s["same_deleted_files"]
            lines.append(f"- **Java / icectl: {s['wall_ratio_java_over_icectl']:.2f}x wall, "
                         f"{s['cpu_ratio_java_over_icectl']:.2f}x CPU** (medians: icectl {s['icectl_wall']:.2f} s wall, "
                         f"{s['icectl_cpu']:.2f} s CPU; Java {s['java_wall']:.2f} s wall, {s['java_cpu']:.2f} s CPU). "
                         f"Target (icectl faster, same deleted files): **{'met' if met else 'not met'}**")
            lines.append(f"- deleted files (listing the table folder before and after): icectl "
                         f"{s['icectl_deleted_count']:,} {s['icectl_deleted_by_kind']}, Java {s['java_deleted_count']:,} "
                         f"{s['java_deleted_by_kind']}; **same set: {'yes' if s['same_deleted_files'] else 'NO'}**"
                         + ("" if s["same_deleted_files"] else
                            f" (only icectl: {s['only_icectl_count']}, only Java: {s['only_java_count']})")
                         + f"; same retained snapshots: {'yes' if s['same_retained_snapshots'] else 'NO'}; "
                         f"every run of a tool deleted the same set: icectl {s['icectl_runs_consistent']}, "
                         f"Java {s['java_runs_consistent']}")
            ir = s["icectl_reported"]
            lines.append(f"- reported: icectl expired {ir['expired_snapshots']}, retained {ir['retained_snapshots']}, "
                         f"deleted {ir['deleted_files']} ({ir['failed_deletes']} failed); counts as Java's columns: "
                         + ", ".join(f"{k.replace('deleted_', '').replace('_count', '')} {x}" for k, x in ir.items()
                                     if k.startswith("deleted_") and k != "deleted_files")
                         + "; Java's procedure: " + ", ".join(
                             f"{k.replace('deleted_', '').replace('_count', '')} {x}" for k, x in s["java_reported"].items()))
            jruns = [r for r in runs if r["tool"] == "java"]
            lines.append(f"- Java's wall split (median): session start (JVM, Spark, Iceberg) "
                         f"{statistics.median(r['java_session_seconds'] for r in jruns):.1f} s, the CALL "
                         f"{statistics.median(r['java_call_seconds'] for r in jruns):.1f} s, the rest Python start "
                         f"and JVM stop")
            lines.append(f"- files written: icectl {s['icectl_added']}, Java {s['java_added']}")
        else:
            lines.append(f"- icectl only: {s['icectl_wall']:.2f} s wall, {s['icectl_cpu']:.2f} s CPU, "
                         f"{s['icectl_deleted_count']:,} files deleted {s['icectl_deleted_by_kind']}")
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=os.path.join(HERE, "data", "expire"), help="work folder (default bench/data/expire)")
    p.add_argument("--snapshots", type=int, default=2000)
    p.add_argument("--files-per-snapshot", type=int, default=100)
    p.add_argument("--keep", type=int, default=100, help="snapshots the cut-off keeps (default 100)")
    p.add_argument("--runs", type=int, default=1, help="runs of each tool, alternating (default 1)")
    p.add_argument("--scenarios", default="appends,retention-delete",
                   help="appends (expire all but the newest --keep of the appends), retention-delete (expire "
                        "everything before a Java DELETE of whole old partitions); default both")
    p.add_argument("--delete-before", default="2025-04-01",
                   help="retention-delete: Java deletes the rows with ts before this date (default 2025-04-01)")
    p.add_argument("--regen", action="store_true", help="generate the table again")
    p.add_argument("--no-java", action="store_true", help="time icectl only")
    p.add_argument("--java-first", action="store_true", help="run Java before icectl in each round")
    p.add_argument("--java-driver-memory", default="4g", help="Spark driver memory for Java (default 4g)")
    p.add_argument("--max-load", type=float, default=2.0, help="wait for a 1-min load average below this")
    p.add_argument("--max-wait", type=float, default=600, help="seconds to wait for it at most (default 600)")
    p.add_argument("--profile", action="store_true", help="also an untimed icectl run under py-spy record (SVG in <data>/logs/)")
    p.add_argument("--no-write", action="store_true", help="do not update bench/RESULTS.md")
    p.add_argument("--results", default=RESULTS_MD)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    a = parse_args(argv)
    started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    become_subreaper()
    info = prepare(a)
    scenarios = a.scenarios.split(",")
    if "retention-delete" in scenarios:
        info = prepare_retention_delete(info, a)
    print(f"table: {info['snapshots_total']} snapshots, {info['live_data_files']} data files, "
          f"{info['files_in_table_dir']} files", file=sys.stderr)
    order = ["java", "icectl"] if a.java_first else ["icectl", "java"]
    if a.no_java:
        order = ["icectl"]
    results = {}
    for scenario in scenarios:
        runs = []
        for i in range(1, a.runs + 1):
            for tool in order:
                runs.append(run_tool(tool, info, a, i, scenario))
        results[scenario] = (runs, summarize(runs))
        if a.profile:  # one more icectl run under py-spy, not counted
            r = run_tool("icectl", info, a, 0, scenario, profile=True)
            print(f"  profile: {r['profile_svg']}", file=sys.stderr)
    block = render(info, results, a, started)
    print(block)
    with open(os.path.join(info["data"], "results.json"), "w") as fh:
        json.dump({"info": info, "scenarios": {k: {"summary": s, "runs": [
            {x: y for x, y in r.items() if x != "deleted"} for r in runs]} for k, (runs, s) in results.items()}},
            fh, indent=2, default=str)
    if not a.no_write:
        update_results(a.results, BEGIN, END, block, "# Expire benchmark: icectl vs Iceberg Java")
    return {k: s for k, (_, s) in results.items()}


if __name__ == "__main__":
    main()
