#!/usr/bin/env python
"""The rescue proof of issue 26: expire a neglected table with real data files, then show that
nothing a kept snapshot reaches was lost, that Iceberg Java reads the same rows from every kept
ref, and that a kill during the expiry leaves a valid table that a re-run finishes.

On a table made by ``gen_neglected_table.py --data-files`` (``--generate`` makes it), with a
file-system (Hadoop) layout that icectl (``--warehouse``) and Iceberg Java's HadoopCatalog (the
oracle, ``ICECTL_ORACLE_DIR`` / ``ICEBERG_ORACLE_DIR``) read alike:

1. **Before**: the cut-off keeping the newest ``--keep`` snapshots; with PyIceberg (an
   independent reader), the files reachable from every snapshot the expiry could keep (the
   snapshots at or after the cut-off and each ref's head with its ``--ancestors`` nearest
   ancestors): manifest lists, manifests, live data files with their sizes; Iceberg Java's read
   of each ref of ``--java-refs`` (``count(*)``, ``sum(id)``, ``sum(hash(*))``, ``min(ts)``,
   ``max(ts)`` with ``VERSION AS OF '<ref>'``, aggregate push-down off so every data file is
   opened and its rows read).
2. **Expire**: ``icectl -o json expire T --older-than CUT --yes`` (wall, CPU and peak RSS from
   ``os.wait4``) on the table where it is, a hard-linked pristine copy kept beside it.
3. **After**: the kept snapshots are among the candidates of step 1; every file they reached
   still exists with its size; ``validate --deep`` exits 0; Java reads the same results from
   every kept ref it read before.
4. **Kills** (``--kill planning,commit,deleting``): from the pristine copy each time, the expiry
   is SIGKILLed while it reads the expired manifest lists (a progress line on stderr past
   ``--kill-at``), right after its commit (the new metadata file appears), or during its deletes
   (a tenth of a sample of the files it deletes gone); then the table loads (``describe``), ``validate``
   exits 0, the pending-deletes record is there when the kill followed the commit, a re-run exits
   0 and consumes it, and the final state equals the uninterrupted run's: same snapshots and
   refs, same files (path and size; metadata JSON files by path).

    python bench/prove_rescue.py --generate --snapshots 10000 --root .cache/neglected10k
    python bench/prove_rescue.py --root .cache/neglected --java-refs main,tag-00 --kill planning,commit \\
        --results bench/RESULTS.md --title "Rescue proof at full scale (proof26)"

The proof's facts go to ``<root>/prove_rescue.json`` (``--store``); ``--results`` appends a
section rendered from them to a Markdown file. The exit status is 1 when a check fails.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
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

from bench_scale import icectl_env, keep_pristine, restore_pristine, run_child  # noqa: E402
from harness import JAVA_CALL, java_env, walk  # noqa: E402

PENDING = "_icectl-expire-pending.json"  # icectl/ops/maintain/expire_pending.py's PENDING_NAME
JAVA_READ = ("SELECT count(*) AS records, sum(id) AS sum_id, sum(hash(*)) AS sum_hash, "
             "CAST(min(ts) AS STRING) AS min_ts, CAST(max(ts) AS STRING) AS max_ts "
             "FROM hc.{ident} VERSION AS OF '{ref}'")
NO_PUSH_DOWN = "SET `spark.sql.iceberg.aggregate-push-down.enabled`=false"
PLANNING_LINE = re.compile(r"reading the expired manifest lists: (\d+)/(\d+)")


def say(msg: str) -> None:
    print(f"[{dt.datetime.now(dt.timezone.utc):%H:%M:%S}] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# The table

def table_facts(root: str, keep: int) -> dict:
    """Where the table is, its refs, and the cut-off that keeps the newest ``keep`` snapshots."""
    from icectl.catalog.hadoop import HadoopCatalog
    from icectl.io import FileIO
    from icectl.table.loaded import load_table

    with open(os.path.join(root, "gen_info.json")) as fh:
        g = json.load(fh)
    if not g.get("data_files"):
        raise SystemExit(f"{root}: generated without --data-files (no Parquet files to read)")
    wh = os.path.join(root, "warehouse")
    table = load_table(HadoopCatalog("hc", wh, FileIO()), tuple(g["identifier"].split(".")))
    md = table.metadata
    snaps = sorted(md.snapshots, key=lambda s: s.timestamp_ms)
    cutoff_ms = (snaps[-keep].timestamp_ms + snaps[-keep - 1].timestamp_ms) // 2 // 1000 * 1000
    cutoff = dt.datetime.fromtimestamp(cutoff_ms / 1000, tz=dt.timezone.utc)
    return {"root": root, "warehouse": wh, "ident": g["identifier"], "metadata_location": table.metadata_location,
            "snapshots": len(md.snapshots), "data_files": g["live_data_files"], "records": g["total_records"],
            "metadata_json_bytes": os.path.getsize(table.metadata_location), "keep": keep, "cutoff_ms": cutoff_ms,
            "cutoff": cutoff.isoformat().replace("+00:00", "Z"),
            "refs": {name: r.snapshot_id for name, r in sorted(md.refs.items())}}


def local(path: str) -> str:
    return path[len("file:"):] if path.startswith("file:") else path


def reachable_candidates(facts: dict, ancestors: int) -> dict:
    """With PyIceberg: for every snapshot the expiry could keep, the files it reaches."""
    from pyiceberg.table import StaticTable

    t0 = time.perf_counter()
    table = StaticTable.from_metadata(facts["metadata_location"])
    md = table.metadata
    by_id = {s.snapshot_id: s for s in md.snapshots}
    ids = {s.snapshot_id for s in md.snapshots if s.timestamp_ms >= facts["cutoff_ms"]}
    for head in facts["refs"].values():
        s = by_id.get(head)
        for _ in range(ancestors + 1):
            if s is None:
                break
            ids.add(s.snapshot_id)
            s = by_id.get(s.parent_snapshot_id) if s.parent_snapshot_id is not None else None
    io = table.io
    lists: dict[int, tuple[str, list[str]]] = {}
    manifests: dict[str, list[tuple[str, int]]] = {}
    sizes: dict[str, int] = {}
    for sid in sorted(ids):
        s = by_id[sid]
        ms = s.manifests(io)
        lists[sid] = (local(s.manifest_list), [local(m.manifest_path) for m in ms])
        for m in ms:
            p = local(m.manifest_path)
            sizes[p] = m.manifest_length
            if p not in manifests:
                manifests[p] = [(local(e.data_file.file_path), e.data_file.file_size_in_bytes)
                                for e in m.fetch_manifest_entry(io, discard_deleted=True)]
    return {"snapshots": lists, "manifests": manifests, "manifest_sizes": sizes,
            "seconds": round(time.perf_counter() - t0, 1),
            "entries": sum(len(v) for v in manifests.values())}


def reached_by(cands: dict, kept: list[int]) -> dict[str, int | None]:
    """Path -> expected size (None: a manifest list, size not recorded) of every file ``kept`` reach."""
    out: dict[str, int | None] = {}
    for sid in kept:
        lst, ms = cands["snapshots"][sid]
        out[lst] = None
        for m in ms:
            out[m] = cands["manifest_sizes"][m]
            out.update(cands["manifests"][m])
    return out


def missing(files: dict[str, int | None]) -> list[str]:
    bad = []
    for p, size in files.items():
        try:
            st = os.stat(p)
        except FileNotFoundError:
            bad.append(f"missing: {p}")
            continue
        if size is not None and st.st_size != size:
            bad.append(f"size {st.st_size} != {size}: {p}")
    return bad


def state(facts: dict) -> dict:
    """The table after an expiry: its snapshots and refs (icectl), every file under the warehouse."""
    from icectl.catalog.hadoop import HadoopCatalog
    from icectl.io import FileIO
    from icectl.table.loaded import load_table

    table = load_table(HadoopCatalog("hc", facts["warehouse"], FileIO()), tuple(facts["ident"].split(".")))
    md = table.metadata
    return {"snapshots": sorted(s.snapshot_id for s in md.snapshots),
            "refs": {name: r.snapshot_id for name, r in sorted(md.refs.items())},
            "metadata_location": os.path.basename(table.metadata_location), "files": walk(facts["warehouse"])}


TEMPORARY = re.compile(r"/metadata/[^/]*\.tmp$")  # a write's temporary file (e.g. version-hint.text.<uuid>.tmp)


def leftovers(a: dict, b: dict) -> list[str]:
    """Temporary files of an interrupted write that ``b`` has and ``a`` has not: reported, not part
    of the table (no metadata names them; a kill between a write and its rename leaves one)."""
    return sorted(p for p in set(b["files"]) - set(a["files"]) if TEMPORARY.search("/" + p))


def same_state(a: dict, b: dict) -> list[str]:
    """How ``b`` differs from ``a``: snapshots, refs, files (by path; by size but for metadata
    JSON files), leaving out :func:`leftovers`."""
    diffs = []
    if a["snapshots"] != b["snapshots"]:
        diffs.append(f"snapshots differ: {len(a['snapshots'])} vs {len(b['snapshots'])}")
    if a["refs"] != b["refs"]:
        diffs.append(f"refs differ: {sorted(set(a['refs'].items()) ^ set(b['refs'].items()))}")
    fa, fb = a["files"], dict(b["files"])
    for p in leftovers(a, b):
        del fb[p]
    only_a, only_b = sorted(set(fa) - set(fb)), sorted(set(fb) - set(fa))
    if only_a or only_b:
        diffs.append(f"files only in the first: {len(only_a)} {only_a[:5]}; only in the second: {len(only_b)} "
                     f"{only_b[:5]}")
    sized = [p for p in set(fa) & set(fb) if fa[p] != fb[p] and not p.endswith(".metadata.json")]
    if sized:
        diffs.append(f"{len(sized)} files differ in size: {sorted(sized)[:5]}")
    return diffs


# ---------------------------------------------------------------------------------------------
# Iceberg Java and icectl as whole processes

def java_reads(facts: dict, refs: list[str], driver_memory: str, timeout: float) -> dict:
    """One oracle session reading each ref; ref -> its row and the seconds it took."""
    script = os.path.join(facts["root"], "java_call.py")
    with open(script, "w") as fh:
        fh.write(JAVA_CALL)
    sqls = [JAVA_READ.format(ident=facts["ident"], ref=r) for r in refs]
    env = java_env(driver_memory)
    if os.environ.get("ICECTL_ORACLE_DIR"):
        env["ICEBERG_ORACLE_DIR"] = os.environ["ICECTL_ORACLE_DIR"]
    with tempfile.TemporaryFile() as out:
        r = run_child([sys.executable, script, facts["warehouse"], NO_PUSH_DOWN, *sqls], env, stdout=out,
                      timeout=timeout)
        out.seek(0)
        text = out.read().decode().strip().splitlines()
    if r["rc"] != 0 or not text:
        raise SystemExit(f"Iceberg Java failed (exit {r['rc']}, timed out {r.get('timed_out')}): {r['stderr'][-800:]}")
    j = json.loads(text[-1])
    st = j["statements"][1:]
    return {"wall": r["wall"], "cpu": r["cpu"], "rss_mb": r["rss_mb"], "session": j["session_seconds"],
            "reads": {ref: {"row": s["rows"][0], "seconds": s["seconds"]} for ref, s in zip(refs, st)}}


def icectl(facts: dict, *args: str, timeout: float | None = None) -> dict:
    argv = [sys.executable, "-m", "icectl", "--warehouse", facts["warehouse"], "-o", "json", *args]
    with tempfile.TemporaryFile() as out:
        r = run_child(argv, icectl_env(ROOT), stdout=out, timeout=timeout)
        out.seek(0)
        text = out.read().decode()
    try:
        r["json"] = json.loads(text) if text.strip() else None
    except ValueError:
        r["json"] = None
    return r


def expire_argv(facts: dict) -> list[str]:
    return [sys.executable, "-m", "icectl", "--warehouse", facts["warehouse"], "-o", "json", "expire", facts["ident"],
            "--older-than", facts["cutoff"], "--yes"]


def next_metadata(facts: dict) -> str:
    d = os.path.dirname(facts["metadata_location"])
    v = int(re.match(r"v(\d+)\.metadata\.json", os.path.basename(facts["metadata_location"])).group(1))
    return os.path.join(d, f"v{v + 1}.metadata.json")


def killed_run(facts: dict, point: str, kill_at: float, sample: list[str]) -> dict:
    """Start the expiry and SIGKILL it at ``point``; what was seen."""
    nxt = next_metadata(facts)
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen(expire_argv(facts), env=icectl_env(ROOT), stdout=subprocess.DEVNULL, stderr=err,
                             stdin=subprocess.DEVNULL, start_new_session=True)
        seen, killed, pos = "", False, 0
        while p.poll() is None:
            if point == "planning":
                err.seek(pos)
                chunk = err.read().decode(errors="replace")
                pos += len(chunk.encode())
                for m in PLANNING_LINE.finditer(chunk):
                    if int(m.group(1)) >= kill_at * int(m.group(2)):
                        seen = m.group(0)
                if seen:
                    killed = True
            elif point == "commit":
                if os.path.exists(nxt):
                    killed, seen = True, f"{os.path.basename(nxt)} written"
            elif point == "deleting":
                if os.path.exists(nxt):
                    gone = sum(not os.path.exists(x) for x in sample)
                    if gone >= max(1, len(sample) // 10):
                        killed, seen = True, f"{gone}/{len(sample)} sampled expired files deleted"
            if killed:
                os.killpg(p.pid, signal.SIGKILL)
                break
            time.sleep(0.2 if point == "planning" else 0.001)
        p.wait()
        err.seek(0)
        tail = err.read().decode(errors="replace")[-2000:]
    return {"point": point, "killed": killed, "seen": seen, "rc": p.returncode,
            "seconds": round(time.perf_counter() - t0, 1), "stderr": tail.strip()[-600:]}


def after_kill(facts: dict, k: dict, before_walk: dict, timeout: float) -> tuple[dict, dict]:
    """What a kill left, into ``k``: the pending-deletes record, the commit, the files deleted;
    then ``describe`` and ``validate`` of the table (their results returned)."""
    k["pending_after_kill"] = os.path.exists(os.path.join(os.path.dirname(facts["metadata_location"]), PENDING))
    k["committed"] = os.path.exists(next_metadata(facts))
    k["deleted_before_kill"] = len(set(before_walk) - set(walk(facts["warehouse"])))
    d = icectl(facts, "describe", facts["ident"])
    v = icectl(facts, "validate", facts["ident"], timeout=timeout)
    k["describe_rc"], k["validate_rc"] = d["rc"], v["rc"]
    return d, v


def rerun(facts: dict, uninterrupted: dict, timeout: float, into: dict) -> dict:
    """The expiry run again to its end, into ``into``: its figures, whether the record is gone,
    and how the final state differs from ``uninterrupted`` (its result returned)."""
    r = icectl(facts, "expire", facts["ident"], "--older-than", facts["cutoff"], "--yes", timeout=timeout)
    into["rerun"] = {x: r[x] for x in ("wall", "cpu", "rss_mb", "rc")}
    into["pending_after_rerun"] = os.path.exists(os.path.join(os.path.dirname(facts["metadata_location"]), PENDING))
    final = state(facts)
    into["differs"] = same_state(uninterrupted, final)
    into["leftover_temporary_files"] = leftovers(uninterrupted, final)
    into["final_metadata"] = final["metadata_location"]
    return r


def kill_and_resume(facts: dict, point: str, kill_at: float, timeout: float, sample: list[str],
                    before_walk: dict, uninterrupted: dict, checks: dict, deletes: int) -> dict:
    """On the pristine table: the expiry killed at ``point``, the table checked, a re-run, the final
    state compared with ``uninterrupted``; the checks go into ``checks``, the facts are returned."""
    say(f"kill at {point}")
    k = killed_run(facts, point, kill_at, sample)
    d, v = after_kill(facts, k, before_walk, timeout)
    r = rerun(facts, uninterrupted, timeout, k)
    name = f"kill at {point}"
    checks[f"{name}: killed there"] = k["killed"] and (point != "deleting" or 0 < k["deleted_before_kill"] < deletes)
    checks[f"{name}: table loads and validates"] = d["rc"] == 0 and v["rc"] == 0
    if k["committed"]:
        checks[f"{name}: the pending-deletes record is left"] = k["pending_after_kill"]
    checks[f"{name}: re-run exits 0, record consumed"] = r["rc"] == 0 and not k["pending_after_rerun"]
    checks[f"{name}: final state equals the uninterrupted run's"] = not k["differs"]
    say(f"{name}: {k['seen'] or 'not reached'}; committed {k['committed']}, pending {k['pending_after_kill']}, "
        f"deleted {k['deleted_before_kill']}; describe {d['rc']} validate {v['rc']}; re-run rc {r['rc']} "
        f"{r['wall']} s; differs {k['differs']}; leftover temporary files {k['leftover_temporary_files']}")
    return k


def kill_chain(facts: dict, points: list[str], kill_at: float, timeout: float, sample: list[str],
               before_walk: dict, uninterrupted: dict, checks: dict, deletes: int) -> dict:
    """On the pristine table: the expiry killed at ``points[0]``, its re-run killed at ``points[1]``
    and so on (one full planning pays for every point), the table checked after each kill, then a
    last re-run and its final state compared with ``uninterrupted``."""
    out: dict = {"points": [], "chain": True}
    name = "chain " + " -> ".join(points)
    for point in points:
        say(f"kill at {point} ({name})")
        k = killed_run(facts, point, kill_at, sample)
        d, v = after_kill(facts, k, before_walk, timeout)
        out["points"].append(k)
        checks[f"{name}: killed at {point}"] = k["killed"] and (
            point != "deleting" or 0 < k["deleted_before_kill"] < deletes)
        checks[f"{name}: after the kill at {point} the table loads and validates"] = d["rc"] == 0 and v["rc"] == 0
        if k["committed"]:
            checks[f"{name}: after the kill at {point} the pending-deletes record is left"] = k["pending_after_kill"]
        say(f"kill at {point}: {k['seen'] or 'not reached'} after {k['seconds']} s; committed {k['committed']}, "
            f"pending {k['pending_after_kill']}, deleted {k['deleted_before_kill']}; describe {d['rc']} "
            f"validate {v['rc']}")
    r = rerun(facts, uninterrupted, timeout, out)
    checks[f"{name}: re-run exits 0, record consumed"] = r["rc"] == 0 and not out["pending_after_rerun"]
    checks[f"{name}: final state equals the uninterrupted run's"] = not out["differs"]
    say(f"{name}: re-run rc {r['rc']} {r['wall']} s; record left {out['pending_after_rerun']}; "
        f"differs {out['differs']}")
    return out


# ---------------------------------------------------------------------------------------------
# The proof

def prove(a: argparse.Namespace, save=lambda res: None) -> dict:
    """The proof's facts; ``save(res)`` is called after each step (a long run leaves what it saw)."""
    root = os.path.abspath(a.root)
    if a.generate:
        gen = [sys.executable, os.path.join(HERE, "gen_neglected_table.py"), "--out", root, "--force", "--data-files",
               "--snapshots", str(a.snapshots), "--metadata-log", str(a.metadata_log), "--quiet"]
        t0 = time.perf_counter()
        subprocess.run(gen, check=True)
        say(f"generated {a.snapshots} snapshots with data files in {time.perf_counter() - t0:.0f} s")
    facts = table_facts(root, a.keep)
    with open(os.path.join(root, "gen_info.json")) as fh:
        facts["gen"] = json.load(fh)
    res: dict = {"facts": facts, "checks": {}, "started": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
    checks = res["checks"]
    refs = sorted(facts["refs"]) if a.java_refs == "all" else [r for r in a.java_refs.split(",") if r]
    say(f"{facts['ident']}: {facts['snapshots']} snapshots, {len(facts['refs'])} refs, cut-off {facts['cutoff']}")

    cands = reachable_candidates(facts, a.ancestors)
    res["candidates"] = {"snapshots": len(cands["snapshots"]), "manifests": len(cands["manifests"]),
                         "entries": cands["entries"], "seconds": cands["seconds"]}
    say(f"PyIceberg: {len(cands['snapshots'])} candidate snapshots, {len(cands['manifests'])} manifests, "
        f"{cands['entries']} live entries in {cands['seconds']} s")
    save(res)
    before_walk = walk(facts["warehouse"])
    res["before_files"] = len(before_walk)
    if refs:
        res["java_before"] = java_reads(facts, refs, a.driver_memory, a.java_timeout)
        say(f"Java before: {len(refs)} refs in {res['java_before']['wall']} s")

    save(res)
    pristine = keep_pristine(facts)
    say("expire --yes")
    r = icectl(facts, "expire", facts["ident"], "--older-than", facts["cutoff"], "--yes", timeout=a.timeout)
    res["expire"] = {k: r[k] for k in ("wall", "cpu", "rss_mb", "rc", "load")}
    res["expire"]["result"] = {k: v for k, v in (r["json"] or {}).items() if not isinstance(v, (list, dict))}
    checks["expire exits 0"] = r["rc"] == 0
    say(f"expire: rc {r['rc']} {r['wall']} s wall {r['cpu']} s CPU {r['rss_mb']} MB")
    uninterrupted = state(facts)
    after_walk = uninterrupted["files"]
    res["after"] = {"snapshots": len(uninterrupted["snapshots"]), "refs": len(uninterrupted["refs"]),
                    "files": len(after_walk), "deleted": len(set(before_walk) - set(after_walk)),
                    "metadata_location": uninterrupted["metadata_location"],
                    "data_files_deleted": sum(1 for p in set(before_walk) - set(after_walk) if "/data/" in p)}
    outside = sorted(set(uninterrupted["snapshots"]) - set(cands["snapshots"]))
    checks["kept snapshots are among the candidates read before"] = not outside
    reach = reached_by(cands, [s for s in uninterrupted["snapshots"] if s in cands["snapshots"]])
    lost = missing(reach)
    res["reached"] = {"files": len(reach), "data_files": sum(1 for p in reach if "/data/" in p), "lost": lost[:20],
                      "lost_count": len(lost)}
    checks["no file a kept snapshot reaches was deleted"] = not lost
    say(f"{len(reach)} files reached by the {len(uninterrupted['snapshots'])} kept snapshots: {len(lost)} lost")
    save(res)
    r = icectl(facts, "validate", facts["ident"], "--deep", timeout=a.timeout)
    res["validate_deep"] = {k: r[k] for k in ("wall", "cpu", "rss_mb", "rc")}
    res["validate_deep"]["summary"] = {k: v for k, v in (r["json"] or {}).items() if not isinstance(v, (list, dict))}
    checks["validate --deep exits 0"] = r["rc"] == 0
    say(f"validate --deep: rc {r['rc']} {r['wall']} s")
    kept_refs = [x for x in refs if x in uninterrupted["refs"]]
    res["refs_removed"] = sorted(set(facts["refs"]) - set(uninterrupted["refs"]))
    res["refs_kept_unread"] = sorted(set(uninterrupted["refs"]) - set(refs))
    if kept_refs:
        res["java_after"] = java_reads(facts, kept_refs, a.driver_memory, a.java_timeout)
        before, after = res["java_before"]["reads"], res["java_after"]["reads"]
        res["java_differs"] = [x for x in kept_refs if before[x]["row"] != after[x]["row"]]
        checks["Java reads the same rows from every kept ref read"] = not res["java_differs"]
        say(f"Java after: {len(kept_refs)} refs, {len(res['java_differs'])} differ")

    save(res)
    res["kills"] = []
    points = [x for x in a.kill.split(",") if x]
    rng = random.Random(7)
    for point in points:
        restore_pristine(facts, pristine)
        pristine = keep_pristine(facts)
        gone = sorted(set(before_walk) - set(after_walk))
        sample = [os.path.join(facts["warehouse"], x) for x in rng.sample(gone, min(200, len(gone)))]
        k = kill_and_resume(facts, point, a.kill_at, a.timeout, sample, before_walk, uninterrupted, checks,
                            res["after"]["deleted"])
        res["kills"].append(k)
        save(res)
    save(res)
    if a.restore:
        restore_pristine(facts, pristine)
    else:
        shutil.rmtree(pristine)
    res["finished"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    res["ok"] = all(checks.values())
    return res


# ---------------------------------------------------------------------------------------------
# The section of RESULTS.md

def render(res: dict, title: str, command: str) -> str:
    f, g = res["facts"], res["facts"]["gen"]
    e, ad = res["expire"], res["after"]
    lines = [f"# {title}", "", f"Run {res['started']} to {res['finished']} UTC:", "", f"    {command}", "",
             f"Table: `gen_neglected_table.py --data-files` ({g['snapshots']:,} snapshots, {g['live_data_files']:,} "
             f"live data files written as Parquet ({g['total_records']:,} rows), {len(f['refs'])} refs, "
             f"{g['metadata_log']:,} logged versions, current metadata {f['metadata_json_bytes'] / 1e6:.1f} MB; "
             f"generated in {g['generate_seconds']:.0f} s). Cut-off `{f['cutoff']}` (keeps the newest {f['keep']}).",
             "", "| check | result |", "|---|---|"]
    lines += [f"| {name} | {'yes' if ok else '**NO**'} |" for name, ok in res["checks"].items()]
    rr = e.get("result", {})
    lines += ["", "| step | wall (s) | CPU (s) | peak RSS (MB) | exit | notes |", "|---|---:|---:|---:|---|---|",
              f"| PyIceberg: files reachable from the candidates | {res['candidates']['seconds']} | | | | "
              f"{res['candidates']['snapshots']} candidate snapshots, {res['candidates']['manifests']} manifests, "
              f"{res['candidates']['entries']:,} live entries |"]
    if "java_before" in res:
        j = res["java_before"]
        lines.append(f"| Java reads before ({len(j['reads'])} refs) | {j['wall']} | {j['cpu']} | {j['rss_mb']} | 0 | "
                     f"session {j['session']} s; per ref: "
                     + ", ".join(f"{r} {x['seconds']:.1f} s" for r, x in j["reads"].items()) + " |")
    lines.append(f"| `expire --older-than CUT --yes` | {e['wall']} | {e['cpu']} | {e['rss_mb']} | {e['rc']} | "
                 f"{ad['snapshots']} snapshots and {ad['refs']} refs kept, {ad['deleted']:,} files deleted "
                 f"({ad['data_files_deleted']} data files); "
                 + ", ".join(f"{k} {v}" for k, v in rr.items() if isinstance(v, (int, float)) and v) + " |")
    v = res["validate_deep"]
    lines.append(f"| `validate --deep` | {v['wall']} | {v['cpu']} | {v['rss_mb']} | {v['rc']} | "
                 + ", ".join(f"{k} {x}" for k, x in v["summary"].items()) + " |")
    if "java_after" in res:
        j = res["java_after"]
        lines.append(f"| Java reads after ({len(j['reads'])} kept refs) | {j['wall']} | {j['cpu']} | {j['rss_mb']} | 0 "
                     f"| differing: {res['java_differs'] or 'none'} |")
    for k in res["kills"]:
        r = k["rerun"]
        lines.append(f"| kill at {k['point']} ({k['seen'] or 'point not reached'}), then re-run | {r['wall']} | "
                     f"{r['cpu']} | {r['rss_mb']} | {r['rc']} | killed after {k['seconds']} s; committed "
                     f"{k['committed']}, record left {k['pending_after_kill']}, {k['deleted_before_kill']:,} files "
                     f"deleted before the kill; describe {k['describe_rc']}, validate {k['validate_rc']}; record "
                     f"after re-run {k['pending_after_rerun']}; differences from the uninterrupted run: "
                     f"{'; '.join(k['differs']) or 'none'}; leftover temporary files: "
                     f"{', '.join(k['leftover_temporary_files']) or 'none'} |")
    lines += ["", f"Files reached by the {ad['snapshots']} kept snapshots (listed by PyIceberg before the expiry): "
              f"{res['reached']['files']:,} ({res['reached']['data_files']:,} data files), "
              f"{res['reached']['lost_count']} missing or resized after it. Refs removed by the expiry (their "
              f"`max-ref-age-ms` passed): {', '.join(res['refs_removed']) or 'none'}."]
    if "java_after" in res:
        lines += ["", "Java's reads (`count(*)`, `sum(id)`, `sum(hash(*))`, `min(ts)`, `max(ts)`, aggregate "
                  "push-down off), before = after for each kept ref read:", "",
                  "| ref | rows | sum(id) | sum(hash(*)) | min(ts) | max(ts) | same after |", "|---|---:|---:|---:|---|---|---|"]
        for ref, x in res["java_before"]["reads"].items():
            row = x["row"]
            after = res["java_after"]["reads"].get(ref)
            same = "removed" if after is None else ("yes" if after["row"] == row else "**no**")
            lines.append(f"| {ref} | {row['records']:,} | {row['sum_id']} | {row['sum_hash']} | {row['min_ts']} | "
                         f"{row['max_ts']} | {same} |")
        if res["refs_kept_unread"]:
            lines += ["", f"Kept refs not read by Java in this run: {', '.join(res['refs_kept_unread'])}."]
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--root", default=os.path.join(ROOT, ".cache", "neglected"), help="the generated table's folder")
    p.add_argument("--generate", action="store_true", help="generate the table first (--data-files)")
    p.add_argument("--snapshots", type=int, default=100_000, help="with --generate (default 100000)")
    p.add_argument("--metadata-log", type=int, default=1000, help="with --generate (default 1000)")
    p.add_argument("--keep", type=int, default=100, help="the cut-off keeps this many newest snapshots (default 100)")
    p.add_argument("--ancestors", type=int, default=20,
                   help="ancestors of each ref's head counted as candidates (default 20)")
    p.add_argument("--java-refs", default="all", help="refs Java reads: all, or a comma list; '' for none")
    p.add_argument("--kill", default="", help="kill points, a comma list of planning, commit, deleting")
    p.add_argument("--kill-at", type=float, default=0.3, help="planning kill: fraction of the expired lists read")
    p.add_argument("--driver-memory", default="4g")
    p.add_argument("--java-timeout", type=float, default=3600)
    p.add_argument("--timeout", type=float, default=3600, help="per icectl command")
    p.add_argument("--restore", action="store_true", help="leave the table as it was before the expiry")
    p.add_argument("--store", help="the facts as JSON (default <root>/prove_rescue.json)")
    p.add_argument("--results", help="append the section to this Markdown file")
    p.add_argument("--title", default="Rescue proof (prove_rescue.py)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    a = parse_args(argv)
    store = a.store or os.path.join(os.path.abspath(a.root), "prove_rescue.json")

    def save(res: dict) -> None:
        with open(store, "w") as fh:
            json.dump(res, fh, indent=2, default=str)

    res = prove(a, save)
    save(res)
    command = "python bench/prove_rescue.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = render(res, a.title, command)
    if a.results:
        with open(a.results, "a") as fh:
            fh.write("\n" + text)
    print(text)
    for name, ok in res["checks"].items():
        if not ok:
            say(f"FAILED: {name}")
    return res


if __name__ == "__main__":
    sys.exit(0 if main()["ok"] else 1)
