"""Helpers for the snapshot-lifecycle interop tests (expire / rollback / cherry-pick / refs /
remove-orphans / concurrent expire): tables with a known history built by Iceberg Java, byte-for-
byte folder backups so that icectl and Iceberg Java can each run on the same starting state, and
readers for the resulting state (metadata JSON, files on disk, files the table reaches).

Nothing here imports pyspark or icectl at module level.

Builders (Iceberg Java through Spark, catalog `hc` unless the name says otherwise); each returns a
`LifecycleTable` whose `snap` maps a label to a snapshot id and `ts` a label to its commit time (ms):

  build_lifecycle_v2(spark, name)
      format 2, merge-on-read, PARTITIONED BY (category), 'write.wap.enabled'='true'; columns
      id bigint, data string, category string ('a'|'b'|'c' by id % 3) [+ note string later]:
        s1  append 1..20                 s2  append 21..40 (+ table and partition statistics)
        s3  DELETE id % 5 = 0 (position deletes)
        s4  equality delete of ids 3, 6 in category=a (Java API RowDelta)
            tag t_keep -> s2 (RETAIN 30 DAYS); tag t_old -> s1 (max-ref-age 1 ms: always expired)
            branch b -> s4 (RETAIN 7 DAYS WITH SNAPSHOT RETENTION 2 SNAPSHOTS)
        b1, b2, b3  appends on branch b (ids 201.., 204.., 207..)
            ADD COLUMN note (schema 1), ADD PARTITION FIELD bucket(2, id) (spec 1)
        s5  append 41..60                s6  append 61..70
            rollback_to_snapshot(s5): s6 stays in the table as a non-ancestor of main
        s7  append 71..80
        w1  staged WAP append 101..105 (parent s7)
        s8  append 81..90                s9  cherrypick_snapshot(w1) (parent s8; w1's data files)
        w2  staged WAP append 111..115 (parent s9)
        s10 copy-on-write DELETE in category 'b' (an overwrite: data files leave main) (+ table statistics)
        w3  staged WAP append 121..125 (parent s10: a fast-forward cherry-pick)
  build_lifecycle_v3(spark, name)
      format 3, merge-on-read, PARTITIONED BY (region):
        s1 append 1..30, s2 append 31..60, s3 DELETE id % 6 = 0 (deletion vectors),
        tag t3 -> s3, s4 DELETE id % 7 = 0 (DVs merged: s3's Puffin files are replaced),
        s5 UPDATE qty WHERE id % 10 = 1 (DVs + data files), s6 append 61..70
  build_lifecycle_v1(spark, name)
      format 1, PARTITIONED BY (bucket(2, id)): s1, s2, s3 appends, s4 overwrite of ids <= 10
      (copy-on-write DELETE), s5 append (rolled back), rollback to s4, s6 append; tag v1tag -> s2

Utilities: `icectl(...)` runs the CLI in process; `FolderBackup` copies a table folder and
restores it exactly; `tree(location)` maps every file to (size, sha1); `current_metadata(location)`
reads a Hadoop-catalog table's current metadata JSON; `java_expire(...)` calls
hc.system.expire_snapshots; `reachable_paths(spark, name)` lists every file the table reaches.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import io
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from typing import Any

import java_tables

UTC = _dt.timezone.utc
MOR = java_tables.MOR
DAY_MS = 24 * 3600 * 1000


# --------------------------------------------------------------------------- icectl in process


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        return json.loads(self.stdout) if self.stdout.strip() else None


def icectl(*args: str, expect: int | None = 0) -> Result:
    """Runs `icectl <args>` in this process (add "-o", "json" yourself). With `expect` (the
    default 0), asserts the exit code; pass expect=None to accept any code."""
    from icectl.cli.context import Env
    from icectl.cli.main import run

    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run([str(a) for a in args], env)
    res = Result(code, env.stdout.getvalue(), env.stderr.getvalue())
    if expect is not None:
        assert code == expect, f"icectl {' '.join(map(str, args))} exited {code} (wanted {expect}):\n{res.stderr}\n{res.stdout}"
    return res


# --------------------------------------------------------------------------- time


def now_ms() -> int:
    return int(time.time() * 1000)


def ms_to_sql(ms: int) -> str:
    """A Spark TIMESTAMP literal (the session time zone is UTC) for epoch milliseconds."""
    d = _dt.datetime.fromtimestamp(ms / 1000, tz=UTC)
    return f"TIMESTAMP '{d.strftime('%Y-%m-%d %H:%M:%S')}.{ms % 1000:03d}'"


def ms_to_iso(ms: int) -> str:
    """ISO 8601 with milliseconds and an explicit UTC offset: 2026-01-02T03:04:05.678+00:00."""
    return _dt.datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds")


def midpoint(a_ms: int, b_ms: int) -> int:
    assert b_ms - a_ms >= 2, f"commits {a_ms} and {b_ms} are not separated"
    return (a_ms + b_ms) // 2


# --------------------------------------------------------------------------- files on disk


def norm(path: str) -> str:
    """A local path without a file: scheme (file:/x, file:///x -> /x), normalised."""
    if path.startswith("file://"):
        path = path[len("file://"):]
    elif path.startswith("file:"):
        path = path[len("file:"):]
    return os.path.normpath(path)


def tree(location: str) -> dict[str, tuple[int, str]]:
    """Every file under `location`: absolute path -> (size, sha1 of the bytes)."""
    out = {}
    for root, _dirs, files in os.walk(location):
        for f in files:
            p = os.path.join(root, f)
            with open(p, "rb") as fh:
                out[p] = (os.path.getsize(p), hashlib.sha1(fh.read()).hexdigest())
    return out


def visible(paths) -> set[str]:
    """Paths without Hadoop checksum files (.crc) and other hidden names."""
    return {p for p in paths if not os.path.basename(p).startswith((".", "_"))}


class FolderBackup:
    """A byte-for-byte copy of a table folder (file times kept) that can be restored any number
    of times: restore() removes the folder and copies the backup back."""

    def __init__(self, location: str, backup_dir: str):
        self.location = location
        self.backup_dir = backup_dir
        if os.path.exists(backup_dir):
            shutil.rmtree(backup_dir)
        shutil.copytree(location, backup_dir, copy_function=shutil.copy2)
        self.tree = tree(backup_dir)

    def restore(self) -> None:
        shutil.rmtree(self.location)
        shutil.copytree(self.backup_dir, self.location, copy_function=shutil.copy2)

    def original_tree(self) -> dict[str, tuple[int, str]]:
        """The backed-up files, under their original (table folder) paths."""
        return {os.path.join(self.location, os.path.relpath(p, self.backup_dir)): v for p, v in self.tree.items()}


# --------------------------------------------------------------------------- metadata


def current_metadata_path(location: str) -> str:
    """The current metadata file of a Hadoop-catalog table (version-hint.text)."""
    meta = os.path.join(location, "metadata")
    with open(os.path.join(meta, "version-hint.text")) as f:
        v = int(f.read().strip())
    for name in (f"v{v}.metadata.json", f"v{v}.gz.metadata.json"):
        if os.path.exists(os.path.join(meta, name)):
            return os.path.join(meta, name)
    raise FileNotFoundError(f"v{v} metadata in {meta}")


def current_metadata(location: str) -> dict:
    path = current_metadata_path(location)
    if path.endswith(".gz.metadata.json"):
        import gzip

        with gzip.open(path) as f:
            return json.load(f)
    with open(path) as f:
        return json.load(f)


def refs_of(md: dict) -> dict[str, dict]:
    """name -> ref (type, snapshot-id, retention) as in the metadata JSON; "main" always included
    when the table has a current snapshot (v1 metadata may omit refs)."""
    refs = {k: dict(v) for k, v in (md.get("refs") or {}).items()}
    cur = md.get("current-snapshot-id")
    if "main" not in refs and cur not in (None, -1):
        refs["main"] = {"snapshot-id": cur, "type": "branch"}
    return refs


def snapshot_ids(md: dict) -> set[int]:
    return {s["snapshot-id"] for s in md.get("snapshots") or []}


def current_snapshot_id(md: dict) -> int | None:
    cur = md.get("current-snapshot-id")
    return None if cur in (None, -1) else cur


def snapshot_log(md: dict) -> list[int]:
    return [e["snapshot-id"] for e in md.get("snapshot-log") or []]


def snapshot_by_id(md: dict, sid: int) -> dict:
    for s in md.get("snapshots") or []:
        if s["snapshot-id"] == sid:
            return s
    raise KeyError(sid)


def statistics_snapshot_ids(md: dict) -> tuple[list[int], list[int]]:
    return (sorted(s["snapshot-id"] for s in md.get("statistics") or []),
            sorted(s["snapshot-id"] for s in md.get("partition-statistics") or []))


def ancestors(md: dict, sid: int | None) -> list[int]:
    by_id = {s["snapshot-id"]: s for s in md.get("snapshots") or []}
    out = []
    while sid is not None and sid in by_id:
        out.append(sid)
        sid = by_id[sid].get("parent-snapshot-id")
    return out


def state(location: str) -> dict:
    """The parts of the current metadata that expire / rollback / cherry-pick change."""
    md = current_metadata(location)
    stats, pstats = statistics_snapshot_ids(md)
    return {
        "current_snapshot_id": current_snapshot_id(md),
        "snapshot_ids": sorted(snapshot_ids(md)),
        "refs": refs_of(md),
        "snapshot_log": snapshot_log(md),
        "statistics": stats,
        "partition_statistics": pstats,
        "schema_ids": sorted(s["schema-id"] for s in md.get("schemas") or []),
        "current_schema_id": md.get("current-schema-id"),
        "spec_ids": sorted(s["spec-id"] for s in md.get("partition-specs") or []),
        "default_spec_id": md.get("default-spec-id"),
    }


# --------------------------------------------------------------------------- Iceberg Java


def java_expire(spark, identifier: str, *, catalog: str = "hc", older_than_ms: int | None = None,
                retain_last: int | None = None, snapshot_ids_: list[int] | None = None,
                clean_expired_metadata: bool | None = None) -> dict[str, int]:
    """CALL <catalog>.system.expire_snapshots(...); returns its output row (the deleted counts)."""
    args = [f"table => '{identifier}'"]
    if older_than_ms is not None:
        args.append(f"older_than => {ms_to_sql(older_than_ms)}")
    if retain_last is not None:
        args.append(f"retain_last => {retain_last}")
    if snapshot_ids_:
        args.append("snapshot_ids => array(" + ", ".join(f"{i}L" for i in snapshot_ids_) + ")")
    if clean_expired_metadata is not None:
        args.append(f"clean_expired_metadata => {'true' if clean_expired_metadata else 'false'}")
    row = spark.sql(f"CALL {catalog}.system.expire_snapshots({', '.join(args)})").collect()[0]
    return {k: int(v) for k, v in row.asDict().items()}


def java_orphans(spark, identifier: str, *, older_than_ms: int | None = None, location: str | None = None,
                 dry_run: bool = True, catalog: str = "hc") -> set[str]:
    """CALL <catalog>.system.remove_orphan_files(...): the orphan file paths (normalised)."""
    args = [f"table => '{identifier}'", f"dry_run => {'true' if dry_run else 'false'}"]
    if older_than_ms is not None:
        args.append(f"older_than => {ms_to_sql(older_than_ms)}")
    if location is not None:
        args.append(f"location => '{location}'")
    rows = spark.sql(f"CALL {catalog}.system.remove_orphan_files({', '.join(args)})").collect()
    return {norm(r["orphan_file_location"]) for r in rows}


def reachable_paths(spark, name: str, location: str | None = None) -> set[str]:
    """Every file the table's current metadata reaches (all snapshots): manifest lists,
    manifests, data and delete files (Spark's all_* metadata tables), statistics files."""
    paths = {norm(r[0]) for r in spark.sql(f"SELECT manifest_list FROM {name}.snapshots").collect()}
    paths |= {norm(r[0]) for r in spark.sql(f"SELECT DISTINCT path FROM {name}.all_manifests").collect()}
    paths |= {norm(r[0]) for r in spark.sql(f"SELECT DISTINCT file_path FROM {name}.all_files").collect()}
    if location is not None:
        md = current_metadata(location)
        for key in ("statistics", "partition-statistics"):
            for s in md.get(key) or []:
                paths.add(norm(s["statistics-path"]))
    return paths


def missing_reachable(spark, name: str, location: str | None = None) -> list[str]:
    """Files the table reaches that do not exist. Manifest lists are checked first (Spark fails
    to list the rest when one is gone); a Spark failure is reported as one "<...>" entry."""
    lists = {norm(r[0]) for r in spark.sql(f"SELECT manifest_list FROM {name}.snapshots").collect()}
    missing = sorted(p for p in lists if not os.path.exists(p))
    if missing:
        return missing
    try:
        paths = reachable_paths(spark, name, location)
    except Exception as e:  # a manifest is gone
        lines = [ln for ln in str(e).splitlines() if "Exception" in ln] or str(e).splitlines()
        return [f"<Spark cannot list the table's files: {lines[0][:400]}>"]
    return sorted(p for p in paths if not os.path.exists(p))


def spark_refs(spark, name: str) -> dict[str, int]:
    return {r["name"]: r["snapshot_id"] for r in spark.sql(f"SELECT name, snapshot_id FROM {name}.refs").collect()}


def rows_by_ref(spark, name: str, refs=None) -> dict[str, tuple]:
    """Sorted rows of main and of each other ref (time travel by ref name)."""
    refs = sorted(spark_refs(spark, name)) if refs is None else refs
    out = {"main": java_tables.read_rows(spark, name)[1]}
    for r in refs:
        if r != "main":
            out[r] = java_tables.read_rows(spark, f"SELECT * FROM {name} VERSION AS OF '{r}'")[1]
    return out


# --------------------------------------------------------------------------- builders


@dataclass
class LifecycleTable:
    name: str  # hc.db.x
    identifier: str  # db.x
    location: str  # local table folder
    warehouse: str  # the catalog's warehouse folder (icectl --warehouse)
    format_version: int
    snap: dict[str, int] = field(default_factory=dict)  # label -> snapshot id
    ts: dict[str, int] = field(default_factory=dict)  # label -> timestamp-ms
    wap: dict[str, str] = field(default_factory=dict)  # label -> wap.id

    def label(self, sid: int) -> str:
        for k, v in self.snap.items():
            if v == sid:
                return k
        return str(sid)

    def labels(self, ids) -> list[str]:
        return sorted(self.label(i) for i in ids)


def _jt(spark, name: str):
    t = java_tables.java_table(spark, name)
    t.refresh()
    return t


def _current(spark, name: str) -> tuple[int, int]:
    s = _jt(spark, name).currentSnapshot()
    return s.snapshotId(), s.timestampMillis()


def _latest(spark, name: str) -> tuple[int, int]:
    """The newest snapshot of the table (a staged or branch commit is not main's head)."""
    best = None
    for s in _jt(spark, name).snapshots():
        if best is None or (s.timestampMillis(), s.sequenceNumber()) > (best.timestampMillis(), best.sequenceNumber()):
            best = s
    return best.snapshotId(), best.timestampMillis()


def _gap() -> None:
    # commits must have distinct timestamps so that cut-offs can fall between them
    time.sleep(0.05)


def _record(t: LifecycleTable, spark, label: str, latest: bool = False) -> None:
    sid, ts = (_latest if latest else _current)(spark, t.name)
    assert sid not in t.snap.values(), f"{label}: no new snapshot"
    t.snap[label], t.ts[label] = sid, ts
    _gap()


def _new(spark, name: str, fv: int) -> LifecycleTable:
    java_tables._create_namespace(spark, name)
    _catalog, ns, tbl = name.split(".")
    return LifecycleTable(name, f"{ns}.{tbl}", "", "", fv)


def _finish(spark, t: LifecycleTable) -> LifecycleTable:
    location = _jt(spark, t.name).location()
    t.location = norm(location)
    t.warehouse = os.path.dirname(os.path.dirname(t.location))  # <warehouse>/<ns>/<table>
    return t


def _wap_insert(spark, t: LifecycleTable, label: str, select: str) -> None:
    wap_id = f"wap-{label}"
    spark.conf.set("spark.wap.id", wap_id)
    try:
        spark.sql(f"INSERT INTO {t.name} {select}")
    finally:
        spark.conf.unset("spark.wap.id")
    for s in _jt(spark, t.name).snapshots():
        if dict(s.summary()).get("wap.id") == wap_id:
            t.snap[label], t.ts[label], t.wap[label] = s.snapshotId(), s.timestampMillis(), wap_id
            break
    else:
        raise AssertionError(f"staged snapshot {wap_id} not found")
    _gap()


def build_lifecycle_v2(spark, name: str) -> LifecycleTable:
    t = _new(spark, name, 2)
    spark.sql(
        f"""CREATE TABLE {name} (id bigint, data string, category string) USING iceberg PARTITIONED BY (category)
            TBLPROPERTIES ('format-version'='2', {MOR}, 'write.wap.enabled'='true')"""
    )
    _finish(spark, t)

    def rows(lo: int, hi: int, note: bool = False) -> str:
        extra = ", concat('n', id)" if note else ""
        return (f"SELECT id, concat('d', id), CASE id % 3 WHEN 0 THEN 'a' WHEN 1 THEN 'b' ELSE 'c' END{extra} "
                f"FROM range({lo}, {hi + 1}) AS r(id)")

    spark.sql(f"INSERT INTO {name} {rows(1, 20)}")
    _record(t, spark, "s1")
    spark.sql(f"INSERT INTO {name} {rows(21, 40)}")
    _record(t, spark, "s2")
    spark.sql(f"CALL hc.system.compute_table_stats(table => '{t.identifier}', snapshot_id => {t.snap['s2']}L)").collect()
    spark.sql(f"CALL hc.system.compute_partition_stats(table => '{t.identifier}', snapshot_id => {t.snap['s2']}L)").collect()
    spark.sql(f"DELETE FROM {name} WHERE id % 5 = 0")
    _record(t, spark, "s3")
    java_tables._write_equality_delete(spark, name, [3, 6], "category=a")
    _record(t, spark, "s4")
    spark.sql(f"ALTER TABLE {name} CREATE TAG t_keep AS OF VERSION {t.snap['s2']} RETAIN 30 DAYS")
    _jt(spark, name).manageSnapshots().createTag("t_old", t.snap["s1"]).setMaxRefAgeMs("t_old", 1).commit()
    spark.sql(f"ALTER TABLE {name} CREATE BRANCH b AS OF VERSION {t.snap['s4']} RETAIN 7 DAYS "
              f"WITH SNAPSHOT RETENTION 2 SNAPSHOTS")
    for i, lo in enumerate((201, 204, 207), start=1):
        spark.sql(f"INSERT INTO {name}.branch_b {rows(lo, lo + 2)}")
        _record(t, spark, f"b{i}", latest=True)
    spark.sql(f"ALTER TABLE {name} ADD COLUMN note string")
    spark.sql(f"ALTER TABLE {name} ADD PARTITION FIELD bucket(2, id)")
    spark.sql(f"INSERT INTO {name} {rows(41, 60, True)}")
    _record(t, spark, "s5")
    spark.sql(f"INSERT INTO {name} {rows(61, 70, True)}")
    _record(t, spark, "s6")
    spark.sql(f"CALL hc.system.rollback_to_snapshot('{t.identifier}', {t.snap['s5']}L)").collect()
    spark.sql(f"INSERT INTO {name} {rows(71, 80, True)}")
    _record(t, spark, "s7")
    _wap_insert(spark, t, "w1", rows(101, 105, True))
    spark.sql(f"INSERT INTO {name} {rows(81, 90, True)}")
    _record(t, spark, "s8")
    spark.sql(f"CALL hc.system.cherrypick_snapshot('{t.identifier}', {t.snap['w1']}L)").collect()
    _record(t, spark, "s9")
    _wap_insert(spark, t, "w2", rows(111, 115, True))
    spark.sql(f"ALTER TABLE {name} SET TBLPROPERTIES ('write.delete.mode'='copy-on-write')")
    spark.sql(f"DELETE FROM {name} WHERE category = 'b' AND id % 4 = 1")  # rewrites data files of 'b'
    _record(t, spark, "s10")
    spark.sql(f"CALL hc.system.compute_table_stats(table => '{t.identifier}')").collect()
    _wap_insert(spark, t, "w3", rows(121, 125, True))
    return t


def build_lifecycle_v3(spark, name: str) -> LifecycleTable:
    t = _new(spark, name, 3)
    spark.sql(
        f"""CREATE TABLE {name} (id bigint, region string, qty int) USING iceberg PARTITIONED BY (region)
            TBLPROPERTIES ('format-version'='3', {MOR})"""
    )
    _finish(spark, t)

    def rows(lo: int, hi: int) -> str:
        return f"SELECT id, IF(id % 2 = 0, 'eu', 'us'), CAST(id * 10 AS int) FROM range({lo}, {hi + 1}) AS r(id)"

    spark.sql(f"INSERT INTO {name} {rows(1, 30)}")
    _record(t, spark, "s1")
    spark.sql(f"INSERT INTO {name} {rows(31, 60)}")
    _record(t, spark, "s2")
    spark.sql(f"DELETE FROM {name} WHERE id % 6 = 0")
    _record(t, spark, "s3")
    spark.sql(f"ALTER TABLE {name} CREATE TAG t3")
    spark.sql(f"DELETE FROM {name} WHERE id % 7 = 0")
    _record(t, spark, "s4")
    spark.sql(f"UPDATE {name} SET qty = qty + 100 WHERE id % 10 = 1")
    _record(t, spark, "s5")
    spark.sql(f"INSERT INTO {name} {rows(61, 70)}")
    _record(t, spark, "s6")
    return t


def build_lifecycle_v1(spark, name: str) -> LifecycleTable:
    t = _new(spark, name, 1)
    spark.sql(
        f"""CREATE TABLE {name} (id bigint, data string) USING iceberg PARTITIONED BY (bucket(2, id))
            TBLPROPERTIES ('format-version'='1')"""
    )
    _finish(spark, t)

    def rows(lo: int, hi: int) -> str:
        return f"SELECT id, concat('d', id) FROM range({lo}, {hi + 1}) AS r(id)"

    for i, (lo, hi) in enumerate(((1, 20), (21, 40), (41, 60)), start=1):
        spark.sql(f"INSERT INTO {name} {rows(lo, hi)}")
        _record(t, spark, f"s{i}")
    spark.sql(f"ALTER TABLE {name} CREATE TAG v1tag AS OF VERSION {t.snap['s2']}")
    spark.sql(f"DELETE FROM {name} WHERE id <= 10")  # v1: copy-on-write, rewrites data files
    _record(t, spark, "s4")
    spark.sql(f"INSERT INTO {name} {rows(61, 70)}")
    _record(t, spark, "s5")
    spark.sql(f"CALL hc.system.rollback_to_snapshot('{t.identifier}', {t.snap['s4']}L)").collect()
    spark.sql(f"INSERT INTO {name} {rows(71, 80)}")
    _record(t, spark, "s6")
    return t


def build_small_partitioned(spark, name: str) -> LifecycleTable:
    """Format 2, merge-on-read, PARTITIONED BY (category): two appends and a position delete."""
    t = _new(spark, name, 2)
    spark.sql(
        f"""CREATE TABLE {name} (id bigint, data string, category string) USING iceberg PARTITIONED BY (category)
            TBLPROPERTIES ('format-version'='2', {MOR})"""
    )
    _finish(spark, t)
    sel = "SELECT id, concat('d', id), IF(id % 2 = 0, 'a', 'b') FROM range({}, {}) AS r(id)"
    spark.sql(f"INSERT INTO {name} {sel.format(1, 21)}")
    _record(t, spark, "s1")
    spark.sql(f"INSERT INTO {name} {sel.format(21, 41)}")
    _record(t, spark, "s2")
    spark.sql(f"DELETE FROM {name} WHERE id % 4 = 0")
    _record(t, spark, "s3")
    return t


def set_tree_mtime(location: str, epoch_s: float) -> None:
    """Sets the modification time of every file under `location`."""
    for root, _dirs, files in os.walk(location):
        for f in files:
            os.utime(os.path.join(root, f), (epoch_s, epoch_s))
