#!/usr/bin/env python
"""Object-store deletes and listings: icectl's bulk ``DeleteObjects`` against its old one request
per file and against Iceberg Java's S3FileIO, on an S3-compatible server on loopback behind a
latency-injecting proxy.

The server is moto's (``ThreadedMotoServer``, as tests/s3 use) in this process, which only waits
while a command runs; in front of it, tools/s3proxy.py adds ``--latency`` (20 ms) to every
request, in its own process. icectl and Java talk to the proxy only; the tables are built against
the server and restored through moto's backend (not timed). Scenarios (``--scenarios``):

- ``expire``: a table of ``--expire-files`` (20,000) data files in appends of
  ``--files-per-append`` (1,000) over ``--partitions`` (16) partition folders, then a delete of
  every one of them and an append of 10 files; ``icectl expire --older-than <future>
  --retain-last 1`` deletes the 20,000 data files and the manifests and manifest lists of the
  expired snapshots.
- ``orphans``: ``--orphan-objects`` (50,000) objects under the table location: the table's
  reachable data files (``--reachable-fraction``, 40%) and orphans in the same partition folders;
  ``icectl remove-orphans --older-than <future> --force`` lists all of them and deletes the
  orphans.
- ``delete``: the delete step alone, ``icectl.ops.maintain.expire.delete_files`` on ``--expire-files``
  objects (``--delete-kept`` more objects beside them are not in the list), timed inside the
  process.

Each scenario runs icectl as of this tree ("new") and icectl as of ``--old-rev`` ("old", one
delete request per file from 8 threads, unpartitioned listing; ``--no-old`` skips it), each on an
identical copy restored before the run (the same objects at the same keys, the same catalog file).
Each run is a whole command (``python -m icectl ...``) timed from outside; the proxy counts its
requests. After each run the objects left are listed: all tools must leave the same set (the new
metadata file's name aside).

Iceberg Java (``--java``, the default; ``--no-java`` skips it): Iceberg 0.14.1's
``org.apache.iceberg.aws.s3.S3FileIO`` with the AWS SDK for Java 2.18.32, both shaded under
``smfs.shaded.`` in the fat jar of the PyPI sdist sagemaker-feature-store-pyspark-3.3 1.1.3
(bench/java_s3fileio.py fetches it with ``pip download``, pinned by sha256, into ``--java-cache``
and compiles bench/java/S3FileIOBench.java against it; never a dependency of icectl). Iceberg
1.10.2's S3FileIO (what the oracle runs) cannot be run: its AWS SDK (iceberg-aws-bundle) is on
Maven Central only, which this machine cannot reach. On identical restored copies:

- ``delete``: ``S3FileIO.deleteFiles`` over the same paths as icectl's delete step, three ways:
  its defaults (0.14.1: ``s3.delete.batch-size`` 250, one ``DeleteObjects`` at a time in the
  calling thread; its ``s3.delete.num-threads`` pool, ``availableProcessors()`` threads, only
  tags objects), ``s3.delete.batch-size=1000``, and batches of 250 sent ``os.cpu_count()`` at a
  time by the bench program (the shape of Iceberg 1.1+ up to 1.10.2, which submits each batch to
  that pool);
- ``orphans``: ``S3FileIO.listPrefix`` of the table location (one ``ListObjectsV2`` stream)
  against ``FileIO.list_files`` (``icectl.io.s3.list_objects``, listing by prefix in parallel, as
  remove-orphans lists): both must list the same set, every object there.

Both sides are timed inside their process after the same warm-up (a HEAD that builds the client,
then the operation on nothing: 2 requests, in the proxy's counts); the JVM's start is excluded and
its whole life reported apart.

    python bench/bench_s3.py                          # full size (~25 min on 2 busy cores)
    python bench/bench_s3.py --scale 0.25             # a quarter of every size
    python bench/bench_s3.py --scenarios delete,orphans --no-old   # the Java comparison only
    python bench/bench_s3.py --scenarios delete --no-java --no-write

Results: stdout, ``bench/data/s3/results.json``, and bench/RESULTS.md between the
``<!-- bench-s3:begin -->`` and ``<!-- bench-s3:end -->`` markers.
"""
from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import time

from harness import HERE, ROOT, fmt_load, update_results, versions  # bench/ is on sys.path

sys.path.insert(0, ROOT)
from tools.s3proxy import control, start_proxy  # noqa: E402

RESULTS_MD = os.path.join(HERE, "RESULTS.md")
BEGIN, END = "<!-- bench-s3:begin -->", "<!-- bench-s3:end -->"
BUCKET = "bench"
AWS_ENV = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
           "AWS_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": os.devnull,
           "AWS_SHARED_CREDENTIALS_FILE": os.devnull, "NO_PROXY": "127.0.0.1,localhost",
           "no_proxy": "127.0.0.1,localhost"}
OLD_REV = "ebabc03"  # the cluster branch before bulk deletes: one delete request per file


# ---------------------------------------------------------------------------------------------
# Servers

def run_timed(argv: list[str], *, stdout_path: str, stderr_path: str, env: dict[str, str], cwd: str) -> dict:
    """Wall clock and CPU (user + system, from wait4) of one command. (harness.run_timed reaps
    every child as a subreaper, and the proxy is a child that stays.)"""
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        p = subprocess.Popen(argv, stdout=out, stderr=err, env=env, cwd=cwd, stdin=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    return {"argv": argv, "rc": p.returncode, "wall": round(wall, 3), "cpu": round(ru.ru_utime + ru.ru_stime, 3),
            "max_rss_mb": round(ru.ru_maxrss / 1024, 1), "load_before": [round(x, 2) for x in load_before],
            "load_after": [round(x, 2) for x in os.getloadavg()]}


class Moto:
    """moto's S3 server in this process (a thread, as tests/s3 run it): the commands reach it over
    loopback HTTP; the benchmark seeds and restores objects through moto's backend directly
    (thousands a second, where HTTP PUTs to moto manage about a hundred)."""

    def __init__(self) -> None:
        import logging

        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # a line per request otherwise
        self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self.server.start()
        host, port = self.server.get_host_and_port()
        self.url = f"http://{host}:{port}"
        s3_client(self.url).create_bucket(Bucket=BUCKET)

    @property
    def backend(self):
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.s3.models import s3_backends

        return s3_backends[DEFAULT_ACCOUNT_ID]["aws"]

    def keys(self, prefix: str) -> list[str]:
        return [k for k in list(self.backend.get_bucket(BUCKET).keys.keys()) if k.startswith(prefix)]

    def put_all(self, objects: dict[str, bytes]) -> None:
        b = self.backend
        for k, v in objects.items():
            b.put_object(BUCKET, k, v)

    def get_all(self, keys: list[str]) -> dict[str, bytes]:
        b = self.backend
        return {k: bytes(b.get_object(BUCKET, k).value) for k in keys}

    def delete_all(self, keys: list[str]) -> None:
        b = self.backend
        for k in keys:
            b.delete_object(BUCKET, k)

    def stop(self) -> None:
        self.server.stop()


def s3_client(endpoint: str):
    import boto3
    from botocore.config import Config

    return boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="testing",
                        aws_secret_access_key="testing", config=Config(max_pool_connections=64))


def props(endpoint: str) -> dict[str, str]:
    return {"s3.endpoint": endpoint, "s3.access-key-id": "testing", "s3.secret-access-key": "testing",
            "s3.region": "us-east-1"}


# ---------------------------------------------------------------------------------------------
# Tables: built against the server directly; saved and restored as objects + catalog file

class Scene:
    def __init__(self, work: str, name: str, moto: Moto) -> None:
        self.work, self.name, self.moto, self.direct = work, name, moto, moto.url
        self.folder = os.path.join(work, name)
        shutil.rmtree(self.folder, ignore_errors=True)  # a catalog file left by an earlier run
        os.makedirs(self.folder)
        self.prefix = f"{name}/wh"
        self.location = f"s3://{BUCKET}/{self.prefix}/db/t"
        self.catalog_db = os.path.join(self.folder, "catalog.db")
        self.saved: dict[str, bytes] = {}

    def config(self, endpoint: str) -> str:
        import yaml

        path = os.path.join(self.folder, f"icectl-{'direct' if endpoint == self.direct else 'proxy'}.yaml")
        cat = {"type": "sql", "uri": f"sqlite:///{self.catalog_db}", "warehouse": f"s3://{BUCKET}/{self.prefix}",
               **props(endpoint)}
        with open(path, "w") as fh:
            yaml.safe_dump({"catalog": {"bench": cat}, "default-catalog": "bench"}, fh)
        return path

    def catalog(self):
        os.environ["ICECTL_CONFIG"] = self.config(self.direct)
        from icectl.catalog import build_catalog, resolve_catalog_config

        return build_catalog(resolve_catalog_config("bench"))

    def save(self) -> None:
        """Every object under the table location (bytes) and the catalog file: the pristine copy."""
        self.saved = self.moto.get_all(self.moto.keys(self.prefix + "/"))
        shutil.copy(self.catalog_db, self.catalog_db + ".pristine")

    def restore(self) -> float:
        t0 = time.perf_counter()
        self.moto.delete_all(self.moto.keys(self.prefix + "/"))
        self.moto.put_all(self.saved)
        shutil.copy(self.catalog_db + ".pristine", self.catalog_db)
        return time.perf_counter() - t0

    def objects(self) -> set[str]:
        return set(self.moto.keys(self.prefix + "/"))

    def delete_paths(self) -> list[str]:
        """``delete``: every object but the kept ones, as s3:// paths."""
        kept = f"{self.prefix}/kept/"
        return [f"s3://{BUCKET}/{k}" for k in sorted(self.saved) if not k.startswith(kept)]


def parquet_row(i: int, p: int) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([pa.field("id", pa.int64(), nullable=False, metadata={"PARQUET:field_id": "1"}),
                        pa.field("p", pa.int32(), nullable=False, metadata={"PARQUET:field_id": "2"})])
    buf = io.BytesIO()
    pq.write_table(pa.table({"id": [i], "p": [p]}, schema=schema), buf)
    return buf.getvalue()


def build_table(scene: Scene, *, files: int, per_append: int, partitions: int, extra_orphans: int) -> dict:
    """Appends of ``files`` data files (real one-row Parquet objects, one per partition value
    shared), then for ``expire`` a delete of all of them and a last append; orphans uploaded into
    the partition folders."""
    from icectl.formats.manifest import DataFile
    from icectl.table.snapshot_producer import SnapshotChange
    from tests.helpers import append_files, commit_snapshot, create_table

    t0 = time.perf_counter()
    catalog = scene.catalog()
    t = create_table(catalog, ("db", "t"), schema_text="id:long!, p:int!", partition_by="p", format_version=2)
    blobs = {p: parquet_row(p, p) for p in range(partitions)}
    objects: dict[str, bytes] = {}

    def data_file(n: int, tag: str = "f") -> DataFile:
        p = n % partitions
        key = f"{scene.prefix}/db/t/data/p={p}/{tag}-{n:07d}.parquet"
        objects[key] = blobs[p]
        return DataFile(file_path=f"s3://{BUCKET}/{key}", file_format="PARQUET", partition=(p,), record_count=1,
                        file_size_in_bytes=len(blobs[p]))

    n = 0
    while n < files:
        batch = [data_file(i) for i in range(n, min(files, n + per_append))]
        t = append_files(t, batch)
        n += len(batch)
    info = {"data_files": files, "appends": -(-files // per_append)}
    if scene.name == "expire":
        live = list(t.live_entries(t.metadata.current_snapshot))
        t = commit_snapshot(t, SnapshotChange("delete", removed=[(e, e.data_file) for e in live]))
        t = append_files(t, [data_file(files + i, "kept") for i in range(10)])
        info["kept_files"] = 10
    orphans = {f"{scene.prefix}/db/t/data/p={i % partitions}/orphan-{i:07d}.parquet": blobs[i % partitions]
               for i in range(extra_orphans)}
    scene.moto.put_all({**objects, **orphans})
    info["orphans"] = len(orphans)
    scene.save()
    info["objects"] = len(scene.saved)
    info["build_seconds"] = round(time.perf_counter() - t0, 1)
    return info


# ---------------------------------------------------------------------------------------------
# Runs

def old_tree(work: str, rev: str) -> str:
    """icectl as of ``rev``, unpacked from git (the one-request-per-file delete path)."""
    out = os.path.join(work, f"icectl-{rev}")
    if not os.path.isdir(os.path.join(out, "icectl")):
        os.makedirs(out, exist_ok=True)
        blob = subprocess.run(["git", "-C", ROOT, "archive", rev, "icectl"], check=True, capture_output=True).stdout
        with tarfile.open(fileobj=io.BytesIO(blob)) as tf:
            tf.extractall(out)
    return out


def env_for(tree: str, config: str) -> dict[str, str]:
    env = {**os.environ, **AWS_ENV, "PYTHONPATH": tree, "ICECTL_CONFIG": config}
    env.pop("ICECTL_CATALOG", None)
    return env


DELETE_SCRIPT = """
import json, sys, time
from icectl.io import FileIO
from icectl.ops.maintain.expire import FileToDelete, delete_files
props, paths = json.load(open(sys.argv[1]))
io = FileIO(props)
files = [FileToDelete(p, "data", None) for p in paths]
# warm-up outside the clock, as the Java leg does (2 requests): build the client, delete nothing
io.exists(paths[0])
delete_files(io, [FileToDelete(paths[0].rsplit("/", 1)[0] + "/__warmup__", "data", None)])
t0 = time.perf_counter()
deleted, failed = delete_files(io, files)
print(json.dumps({"seconds": time.perf_counter() - t0, "deleted": len(deleted), "failed": len(failed)}))
"""

LIST_SCRIPT = """
import json, sys, time
from icectl.io import FileIO
props, location, out = json.load(open(sys.argv[1]))
io = FileIO(props)
# warm-up outside the clock, as the Java leg does (2 requests): build the client, list nothing
io.exists(location)
assert not list(io.list_files(location + "/__warmup__"))
t0 = time.perf_counter()
n = 0
with open(out, "w") as fh:
    for f in io.list_files(location):  # what remove-orphans lists: icectl.io.s3.list_objects
        fh.write(f.path + "\\n")
        n += 1
print(json.dumps({"seconds": time.perf_counter() - t0, "listed": n}))
"""


def run_leg(scene: Scene, label: str, argv: list[str], proxy: str, a: argparse.Namespace, *, env: dict[str, str],
            cwd: str) -> dict:
    """One timed run on a freshly restored copy: wall/CPU from outside, the proxy's request count,
    what was deleted and what is left (``left``, popped by the caller)."""
    restore_s = scene.restore()
    before = scene.objects()
    control(proxy, latency=a.latency)  # resets the request counters
    logs = os.path.join(scene.folder, "logs")
    os.makedirs(logs, exist_ok=True)
    out, err = os.path.join(logs, f"{label}.out"), os.path.join(logs, f"{label}.err")
    r = run_timed(argv, stdout_path=out, stderr_path=err, env=env, cwd=cwd)
    r["requests"] = control(proxy)
    r["restore_seconds"] = round(restore_s, 1)
    after = scene.objects()
    r["deleted_objects"] = len(before - after)
    r["left"] = sorted(k for k in after if not k.endswith(".metadata.json"))
    r["out"] = out
    if r["rc"] != 0:
        r["error"] = open(err).read()[-2000:]
    return r


def run_one(scene: Scene, tool: str, tree: str, proxy: str, a: argparse.Namespace, future: str) -> dict:
    config = scene.config(proxy)
    base = [sys.executable, "-m", "icectl", "-c", "bench", "-o", "json"]
    if scene.name == "expire":
        argv = base + ["expire", "db.t", "--older-than", future, "--retain-last", "1", "--yes"]
    elif scene.name == "orphans":
        argv = base + ["remove-orphans", "db.t", "--older-than", future, "--force", "--yes"]
    else:
        job = os.path.join(scene.folder, "delete-job.json")
        with open(job, "w") as fh:
            json.dump([props(proxy), scene.delete_paths()], fh)
        script = os.path.join(scene.folder, "delete_job.py")
        with open(script, "w") as fh:
            fh.write(DELETE_SCRIPT)
        argv = [sys.executable, script, job]
    r = run_leg(scene, tool, argv, proxy, a, env=env_for(tree, config), cwd=scene.folder)
    if r["rc"] != 0:
        return r
    doc = json.loads(open(r.pop("out")).read())
    if scene.name == "delete":
        r["inner_seconds"] = round(doc["seconds"], 3)
        r["failed"] = doc["failed"]
    else:
        r["failed"] = len(doc.get("failed_deletes", []))
    return r


def scenario(name: str, a: argparse.Namespace, moto: Moto, proxy: str, trees: dict[str, str], future: str,
             classpath: str | None) -> dict:
    scene = Scene(a.work, name, moto)
    s = a.scale
    if name == "orphans":
        total = int(a.orphan_objects * s)
        reachable = int(total * a.reachable_fraction)
        info = build_table(scene, files=reachable, per_append=a.files_per_append, partitions=a.partitions,
                           extra_orphans=total - reachable)
    elif name == "expire":
        info = build_table(scene, files=int(a.expire_files * s), per_append=a.files_per_append,
                           partitions=a.partitions, extra_orphans=0)
    else:
        n = int(a.expire_files * s)
        blob = parquet_row(0, 0)
        scene.saved = {f"{scene.prefix}/data/p={i % a.partitions}/f-{i:07d}.parquet": blob for i in range(n)}
        # objects not in the delete list: both tools must leave exactly these
        scene.saved.update({f"{scene.prefix}/kept/k-{i:04d}.parquet": blob for i in range(a.delete_kept)})
        scene.catalog_db = os.path.join(scene.folder, "none.db")
        open(scene.catalog_db + ".pristine", "wb").close()
        info = {"objects": len(scene.saved), "to_delete": n, "kept": a.delete_kept}
    print(f"[{name}] built: {info}", flush=True)
    runs: dict[str, dict] = {}
    for tool, tree in trees.items():
        runs[tool] = report(name, tool, run_one(scene, tool, tree, proxy, a, future))
    java = java_legs(scene, a, proxy, classpath) if classpath and name in ("delete", "orphans") else {}
    listed_same = java.pop("listed_same", None)
    lefts = {tool: r.pop("left") for tool, r in {**runs, **java}.items() if "left" in r}
    same = len({tuple(v) for v in lefts.values()}) == 1
    result = {"info": info, "runs": runs, "same_objects_left": same}
    if java:
        result["java"] = java
    if listed_same is not None:
        result["same_objects_listed"] = listed_same
    return result


def report(scenario_name: str, label: str, r: dict) -> dict:
    """One line a run on stdout (and its error's tail on stderr)."""
    extra = "".join(f" {k}={r[k]}" for k in ("failed", "listed", "inner_seconds") if k in r)
    print(f"[{scenario_name}] {label}: rc={r['rc']} wall={r['wall']}s cpu={r['cpu']}s "
          f"deleted={r['deleted_objects']} requests={r['requests']['requests']}{extra}", flush=True)
    if r["rc"] != 0:
        print(r.get("error", ""), file=sys.stderr)
    return r


def java_legs(scene: Scene, a: argparse.Namespace, proxy: str, classpath: str) -> dict:
    """Iceberg Java's S3FileIO on the same restored copy: ``delete``: deleteFiles over the same
    paths (S3FileIO's defaults; s3.delete.batch-size=1000; and batches of the default size sent
    ``os.cpu_count()`` at a time, the shape of Iceberg 1.1+); ``orphans``: listPrefix of the table
    location against icectl's listing (FileIO.list_files, as remove-orphans lists), both in
    process."""
    import java_s3fileio as js

    env = {**os.environ, **AWS_ENV}
    legs: dict = {}

    if scene.name == "delete":
        paths_file = os.path.join(scene.folder, "delete-paths.txt")
        with open(paths_file, "w") as fh:
            fh.write("\n".join(scene.delete_paths()) + "\n")
        variants = {"java": {}, "java-batch1000": {"batch_size": 1000},
                    "java-parallel": {"parallel": os.cpu_count() or 1}}
        for label, kw in variants.items():
            argv = js.command(classpath, "delete", paths_file, endpoint=proxy, **kw)
            r = run_leg(scene, label, argv, proxy, a, env=env, cwd=scene.folder)
            if r["rc"] == 0:
                r["java"] = js.parse(r.pop("out"))
                r["inner_seconds"] = round(r["java"]["seconds"], 3)
                r["failed"] = r["java"]["failed"]
            legs[label] = report(scene.name, label, r)
        return legs
    listed: dict[str, set[str]] = {}
    job = os.path.join(scene.folder, "list-job.json")
    out = os.path.join(scene.folder, "listed-icectl.txt")
    with open(job, "w") as fh:
        json.dump([props(proxy), scene.location, out], fh)
    script = os.path.join(scene.folder, "list_job.py")
    with open(script, "w") as fh:
        fh.write(LIST_SCRIPT)
    for label, argv, out in (
            ("icectl-list", [sys.executable, script, job], out),
            ("java-list", js.command(classpath, "list", scene.location, endpoint=proxy,
                                     out=os.path.join(scene.folder, "listed-java.txt")),
             os.path.join(scene.folder, "listed-java.txt"))):
        r = run_leg(scene, label, argv, proxy, a, env=env_for(ROOT, scene.config(proxy)) if label == "icectl-list"
                    else env, cwd=scene.folder)
        r.pop("left")
        if r["rc"] == 0:
            doc = js.parse(r.pop("out"))
            if label == "java-list":
                r["java"] = doc
            r["inner_seconds"] = round(doc["seconds"], 3)
            r["listed"] = doc["listed"]
            listed[label] = set(open(out).read().split())
        legs[label] = report(scene.name, label, r)
    present = {f"s3://{BUCKET}/{k}" for k in scene.saved}
    legs["listed_same"] = len(listed) == 2 and listed["icectl-list"] == listed["java-list"] == present
    return legs


# ---------------------------------------------------------------------------------------------
# Report

def _secs(r: dict | None) -> float | None:
    if r is None or r["rc"] != 0:
        return None
    return r.get("inner_seconds", r["wall"])


JAVA_LABELS = {
    "java": "delete step: Java `deleteFiles`, its defaults ({batch} keys a request, one request at a time)",
    "java-batch1000": "delete step: Java `deleteFiles`, `s3.delete.batch-size=1000` (one request at a time)",
    "java-parallel": "delete step: Java `deleteFiles` per batch of {batch} keys, {threads} in flight "
                     "(Iceberg 1.1+'s shape, driven by the bench)",
    "java-list": "orphan listing: icectl `FileIO.list_files` (prefix-parallel) vs Java `listPrefix` (one stream)",
}


def render(results: dict, a: argparse.Namespace, started: str) -> str:
    lines = [f"Run {started} on {platform.machine()} ({os.cpu_count()} cores), Python {platform.python_version()}, "
             f"moto server behind tools/s3proxy.py adding {a.latency * 1000:.0f} ms to every request; "
             f"scale {a.scale} of the full size. icectl new = this tree; old = `{a.old_rev}` (one delete request "
             f"per file from 8 threads, one listing stream).", ""]
    lines += ["| scenario | objects | deleted | icectl new | icectl old (per file) | old / new | requests new / old |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, res in results.items():
        runs = res["runs"]
        new, old = runs.get("new"), runs.get("old")
        sn, so = _secs(new), _secs(old)
        ratio = f"{so / sn:.1f}x" if sn and so else "n/a"
        req = f"{new['requests']['requests'] if new else '-'} / {old['requests']['requests'] if old else '-'}"
        label = {"expire": "expire (whole command)", "orphans": "remove-orphans (whole command)",
                 "delete": "delete step alone (in process)"}[name]
        lines.append(f"| {label} | {res['info']['objects']:,} | {new['deleted_objects'] if new else '-':,} | "
                     f"{sn if sn is not None else 'failed'} s | {so if so is not None else 'n/a'} s | {ratio} | {req} |")
    lines += render_java(results)
    lines.append("")
    for name, res in results.items():
        listed = (f"; icectl and Java listed the same objects (all of them): {res['same_objects_listed']}"
                  if "same_objects_listed" in res else "")
        lines.append(f"- {name}: all tools left the same objects: {res['same_objects_left']}{listed}; "
                     f"table: {res['info']}; load before/after (new): "
                     f"{fmt_load(res['runs']['new']['load_before'])} / {fmt_load(res['runs']['new']['load_after'])}")
    return "\n".join(lines) + "\n"


def render_java(results: dict) -> list[str]:
    """icectl against Iceberg Java's S3FileIO, both timed inside their process (the client built
    before the clock starts)."""
    rows = []
    for name, res in results.items():
        for label, r in res.get("java", {}).items():
            if label == "icectl-list":
                continue
            ice = res["java"].get("icectl-list") if label == "java-list" else res["runs"].get("new")
            si, sj = _secs(ice), _secs(r)
            doc = r.get("java", {})
            what = JAVA_LABELS[label].format(batch=doc.get("batch_size", "?"), threads=doc.get("parallel", "?"))
            count = f"{r['listed']:,} listed" if label == "java-list" else f"{r['deleted_objects']:,} deleted"
            ratio = f"{si / sj:.2f}" if si and sj else "n/a"
            req = f"{ice['requests']['requests'] if ice else '-'} / {r['requests']['requests']}"
            rows.append(f"| {what} | {res['info']['objects']:,} | {count} | {si if si is not None else 'n/a'} s | "
                        f"{sj if sj is not None else 'failed'} s | {ratio} | {req} | {doc.get('jvm_seconds', '-')} s |")
    if not rows:
        return []
    version = next((r["java"].get("iceberg_version") for res in results.values() for r in res.get("java", {}).values()
                    if isinstance(r, dict) and "java" in r), "?")
    return ["", f"Against Iceberg Java's S3FileIO (Iceberg {version}, shaded in sagemaker-feature-store-spark-sdk.jar; "
            "both sides timed inside their process, client built before the clock; icectl / Java below 1: icectl "
            "faster):", "",
            "| step | objects | result (Java) | icectl | Java S3FileIO | icectl / Java | requests icectl / Java "
            "| Java JVM total |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |", *rows]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--work", default=os.path.join(HERE, "data", "s3"))
    p.add_argument("--scenarios", default="delete,expire,orphans")
    p.add_argument("--scale", type=float, default=1.0, help="fraction of the full sizes (default 1: full size)")
    p.add_argument("--expire-files", type=int, default=20000)
    p.add_argument("--orphan-objects", type=int, default=50000)
    p.add_argument("--reachable-fraction", type=float, default=0.4)
    p.add_argument("--files-per-append", type=int, default=1000)
    p.add_argument("--partitions", type=int, default=16)
    p.add_argument("--latency", type=float, default=0.02, help="seconds the proxy adds to each request")
    p.add_argument("--old-rev", default=OLD_REV, help=f"icectl before bulk deletes (default {OLD_REV})")
    p.add_argument("--no-old", action="store_true")
    p.add_argument("--java", action=argparse.BooleanOptionalAction, default=True,
                   help="also run Iceberg Java's S3FileIO (delete, orphans; needs java/javac and PyPI)")
    p.add_argument("--java-cache", default=os.path.join(ROOT, ".cache", "s3fileio"),
                   help="where the S3FileIO jar is downloaded and the bench class compiled")
    p.add_argument("--delete-kept", type=int, default=100,
                   help="delete: objects next to the deleted ones that are not in the list")
    p.add_argument("--no-write", action="store_true", help="do not update bench/RESULTS.md")
    p.add_argument("--results", default=RESULTS_MD)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    a = parse_args(argv)
    started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    os.environ.update(AWS_ENV)
    os.makedirs(a.work, exist_ok=True)
    moto = Moto()
    proxy, stop_proxy = start_proxy(moto.url, latency=a.latency)
    try:
        trees = {"new": ROOT}
        if not a.no_old:
            trees["old"] = old_tree(a.work, a.old_rev)
        future = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)).isoformat()
        classpath = None
        if a.java:
            import java_s3fileio

            classpath = java_s3fileio.ensure_classes(a.java_cache)
        results = {name: scenario(name, a, moto, proxy, trees, future, classpath)
                   for name in a.scenarios.split(",")}
    finally:
        stop_proxy()
        moto.stop()
    doc = {"started": started, "args": vars(a), "versions": versions(), "results": results}
    with open(os.path.join(a.work, "results.json"), "w") as fh:
        json.dump(doc, fh, indent=1, default=str)
    block = render(results, a, started)
    print(block)
    if not a.no_write:
        update_results(a.results, BEGIN, END, block, "# S3 benchmark: bulk deletes and listings (bench_s3.py)")
    return doc


if __name__ == "__main__":
    main()
