"""Orphan files (icectl.ops.maintain.remove_orphans and ``icectl remove-orphans``) on a small real table in a
file-system catalog on local disk: planted orphans with old modification times are found; hidden
files, version-hint.text, metadata files in the metadata log and recent files are not; path forms
that only differ in how ``file:`` is spelled are the same file; a real scheme/authority mismatch
(only constructible on object stores) is checked with ``split_path`` and a fake listing.
"""
from __future__ import annotations

import io
import json
import os
import pathlib
import time

import pytest

from icectl.catalog import CatalogConfig, build_catalog
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.ops.maintain import remove_orphans as orphans
from icectl.formats.manifest import DataFile
from icectl.spec.metadata import TableMetadata
from helpers import create_table
from icectl.ops.maintain.remove_orphans import PrefixMismatchError, plan_orphans, split_path
from icectl.spec.partitioning import UNPARTITIONED
from icectl.expr.schema import parse_schema
from icectl.table.snapshot_producer import SnapshotChange
from helpers import append_files, commit_snapshot
from icectl.table.loaded import Table, load_table
from icectl.errors import ExitCode, NotFoundError, UsageError
from icectl.io import FileInfo

DAY = 86_400_000


def write_parquet(path: str, ids: list[int]) -> DataFile:
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids]}), path)
    return DataFile(path, "PARQUET", (), len(ids), os.path.getsize(path))


def plant(path: str, data: bytes = b"orphan", *, age_days: float = 10) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    age(path, age_days)
    return path


def age(path: str, days: float) -> None:
    t = time.time() - days * 86400
    os.utime(path, (t, t))


def age_tree(root: str, days: float = 10) -> None:
    for d, _, files in os.walk(root):
        for f in files:
            age(os.path.join(d, f), days)


def listing(root: str) -> set[str]:
    return {os.path.join(d, f) for d, _, files in os.walk(root) for f in files}


class Scene:
    """A file-system-catalog table: s1 append a, s2 append b, s3 overwrite a -> c; every file
    aged 10 days, then orphans planted."""

    def __init__(self, tmp_path: pathlib.Path, properties=None):
        self.warehouse = str(tmp_path / "wh")
        self.catalog = build_catalog(CatalogConfig("default", {"type": "hadoop", "warehouse": self.warehouse}))
        t = create_table(self.catalog, ("db", "t"), schema_text="id:long!, name:string", properties=properties or {})
        loc = t.location
        self.a = write_parquet(f"{loc}/data/a.parquet", [1, 2])
        t = append_files(t, [self.a])
        self.b = write_parquet(f"{loc}/data/b.parquet", [3])
        t = append_files(t, [self.b])
        self.c = write_parquet(f"{loc}/data/c.parquet", [1])
        e = next(e for e in t.live_entries(t.metadata.current_snapshot) if e.data_file.file_path == self.a.file_path)
        t = commit_snapshot(t, SnapshotChange("overwrite", added=[self.c], removed=[(e, e.data_file)]))
        self.table = t
        self.location = loc
        age_tree(loc)
        self.orphans = sorted([
            plant(f"{loc}/data/orphan1.parquet", b"x" * 100),
            plant(f"{loc}/metadata/stale-m0.avro", b"y" * 10),
            plant(f"{loc}/metadata/00042-stale.metadata.json", b"{}"),
            plant(f"{loc}/data/deep/er/orphan2.parquet", b"z"),
        ])
        self.hidden = [
            plant(f"{loc}/data/.a.parquet.crc"),
            plant(f"{loc}/data/_SUCCESS"),
            plant(f"{loc}/data/_temporary/0/part-0.parquet"),
            plant(f"{loc}/metadata/.v2.metadata.json.crc"),
        ]
        self.recent = plant(f"{loc}/data/new.parquet", age_days=0)

    def refresh(self) -> Table:
        self.table = load_table(self.catalog, ("db", "t"))
        return self.table


@pytest.fixture
def scene(tmp_path) -> Scene:
    return Scene(tmp_path)


@pytest.fixture
def cli_env(tmp_path, monkeypatch):
    """No user configuration leaks into the CLI runs."""
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def icectl(scene: Scene, *args: str) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
    code = run(["--warehouse", scene.warehouse, *args], env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


# ---------------------------------------------------------------------------------------- engine

def test_planted_orphans_are_found_and_nothing_else(scene):
    plan = plan_orphans(scene.table)
    assert [f.path for f in plan.orphans] == scene.orphans
    assert plan.too_new == 1  # data/new.parquet
    assert plan.prefix_mismatches == []
    assert {f.path: f.size for f in plan.orphans}[f"{scene.location}/data/orphan1.parquet"] == 100
    listed = listing(scene.location) - set(scene.hidden)
    assert plan.listed == len(listed)


def test_reachable_paths_keyed_in_small_batches_are_the_same(scene, monkeypatch):
    """The reachable paths are keyed REACHABLE_BATCH at a time (memory): a batch of one path
    finds the same orphans as one batch of all of them."""
    whole = [f.path for f in plan_orphans(scene.table).orphans]
    monkeypatch.setattr(orphans, "REACHABLE_BATCH", 1)
    assert [f.path for f in plan_orphans(scene.table).orphans] == whole == scene.orphans


def test_reachable_files_are_never_orphans(scene):
    reach = orphans.all_reachable(scene.table)
    loc = scene.location
    md_files = sorted(p for p in listing(f"{loc}/metadata") if p.endswith(".metadata.json") and "stale" not in p)
    assert len(md_files) == 4  # v1 .. v4: the current one and three in the metadata log
    assert set(md_files) <= reach
    assert f"{loc}/metadata/version-hint.text" in reach
    assert scene.a.file_path in reach  # removed from main, but s1 and s2 still reach it
    orphan_paths = {f.path for f in plan_orphans(scene.table).orphans}
    assert not orphan_paths & reach
    # Everything under the table is reachable, an orphan, hidden or too new.
    assert listing(loc) == (listing(loc) & reach) | orphan_paths | set(scene.hidden) | {scene.recent}


def test_metadata_files_that_fell_off_the_log_are_orphans(tmp_path):
    """Only the current metadata file and the files its own log names are reachable; older
    ones are orphans, as Iceberg Java's remove_orphan_files counts them (checked against Java in
    tests/interop/test_orphans_vs_java.py)."""
    s = Scene(tmp_path, properties={"write.metadata.previous-versions-max": "1"})
    md_files = sorted(p for p in listing(f"{s.location}/metadata") if p.endswith(".metadata.json") and "stale" not in p)
    assert len(s.table.metadata.metadata_log) == 1 and len(md_files) == 4
    reachable = {s.table.metadata_location, s.table.resolve(s.table.metadata.metadata_log[0].metadata_file)}
    plan = plan_orphans(s.table)
    assert {f.path for f in plan.orphans} == set(s.orphans) | (set(md_files) - reachable)


def test_recent_files_are_left_and_cutoff_is_explicit(scene):
    now = int(time.time() * 1000)
    plan = plan_orphans(scene.table, older_than_ms=now + 1000)
    assert scene.recent in {f.path for f in plan.orphans} and plan.too_new == 0
    plan = plan_orphans(scene.table, older_than_ms=now - 20 * DAY)
    assert plan.orphans == [] and plan.too_new == len(scene.orphans) + 1


def test_location_restricts_the_listing(scene):
    plan = plan_orphans(scene.table, location=f"{scene.location}/data")
    assert [f.path for f in plan.orphans] == [p for p in scene.orphans if "/data/" in p]
    plan = plan_orphans(scene.table, location=f"file:{scene.location}/metadata")
    assert sorted(split_path(f.path)[2] for f in plan.orphans) == [p for p in scene.orphans if "/metadata/" in p]
    for bad in (os.path.dirname(scene.location), scene.location + "x", "s3://bucket" + scene.location):
        with pytest.raises(UsageError, match="not inside the table location"):
            plan_orphans(scene.table, location=bad)
    with pytest.raises(UsageError):
        plan_orphans(scene.table, prefix_mismatch="maybe")


def test_file_scheme_forms_are_the_same_file(scene):
    """A manifest naming ``file:/x`` or ``file:///x`` while the listing gives ``/x`` is no
    mismatch: both normalise to the same local path."""
    loc = scene.location
    f1 = write_parquet(f"{loc}/data/f1.parquet", [7])
    f2 = write_parquet(f"{loc}/data/f2.parquet", [8])
    f1.file_path = "file:" + f1.file_path
    f2.file_path = "file://" + f2.file_path
    t = append_files(scene.table, [f1, f2])
    age_tree(loc)
    plan = plan_orphans(t)
    assert plan.prefix_mismatches == []
    assert [f.path for f in plan.orphans] == sorted(scene.orphans + [scene.recent])


def test_split_path_folds_equal_schemes_only():
    assert split_path("s3a://bucket/t/data/x.parquet") == ("s3", "bucket", "/t/data/x.parquet")
    assert split_path("s3n://bucket/t/data/x.parquet") == split_path("s3://bucket/t/data/x.parquet")
    assert split_path("s3://other/t/data/x.parquet") != split_path("s3a://bucket/t/data/x.parquet")
    assert split_path("s3://other/t/data/x.parquet")[2] == split_path("s3a://bucket/t/data/x.parquet")[2]
    assert split_path("gs://bucket/t/") == ("gs", "bucket", "/t")
    assert split_path("/tmp/t/x") == split_path("file:/tmp/t/x") == split_path("file:///tmp/t/x") == (
        "file", "", "/tmp/t/x")
    assert split_path("file:/tmp/t/") == ("file", "", "/tmp/t")


def test_hidden_paths_but_not_hidden_looking_partition_folders():
    assert orphans._hidden(["data", ".x.crc"], set())
    assert orphans._hidden(["data", "_SUCCESS"], set())
    assert orphans._hidden(["data", "_tmp", "a.parquet"], set())
    assert not orphans._hidden(["data", "_p=1", "a.parquet"], {"_p"})
    assert orphans._hidden(["data", "_q=1", "a.parquet"], {"_p"})
    assert not orphans._hidden(["data", "p=1", "a.parquet"], {"p"})


class _ListingIO:
    def __init__(self, files):
        self.files = files

    def list_files(self, prefix):
        return iter(self.files)

    def local_file(self, path):  # an object store: no local path
        return None

    def read(self, path):  # no quarantine record (.icectl-quarantine.json) on this store
        raise NotFoundError(f"file not found: {path}")


def _s3_table(listed: list[str]) -> Table:
    md = TableMetadata(format_version=2, table_uuid="u", location="s3://bucket/t", last_updated_ms=0,
                       last_column_id=2, schemas=(parse_schema("id:long!, name:string"),),
                       current_schema_id=0, partition_specs=(UNPARTITIONED,), default_spec_id=0,
                       last_partition_id=999)
    old = int(time.time() * 1000) - 10 * DAY
    io_ = _ListingIO([FileInfo(p, 1, old) for p in listed])
    return Table(("db", "t"), md, "s3://bucket/t/metadata/v1.metadata.json", None, io_)  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["error", "ignore", "delete"])
def test_scheme_or_authority_mismatch(monkeypatch, mode):
    monkeypatch.setattr(orphans, "all_reachable", lambda t: {
        "s3://bucket/t/data/a.parquet", "s3://bucket/t/data/b.parquet", "s3://bucket/t/metadata/v1.metadata.json"})
    t = _s3_table([
        "s3a://bucket/t/data/a.parquet",  # s3a == s3: the same file
        "s3://bucket.other/t/data/b.parquet",  # same path, another authority: a mismatch
        "s3://bucket/t/data/orphan.parquet",
        "s3://bucket/t/metadata/v1.metadata.json",
    ])
    if mode == "error":
        with pytest.raises(PrefixMismatchError, match="1 listed files") as e:
            plan_orphans(t, prefix_mismatch=mode)
        assert e.value.exit_code == ExitCode.REFUSED
        return
    plan = plan_orphans(t, prefix_mismatch=mode)
    assert plan.prefix_mismatches == [("s3://bucket.other/t/data/b.parquet", "s3://bucket/t/data/b.parquet")]
    expected = ["s3://bucket/t/data/orphan.parquet"]
    if mode == "delete":
        expected = ["s3://bucket.other/t/data/b.parquet"] + expected
    assert [f.path for f in plan.orphans] == expected


def test_still_orphans_drops_what_a_commit_since_planning_made_reachable(scene):
    from icectl.ops.maintain.remove_orphans import still_orphans

    plan = plan_orphans(scene.table)
    assert still_orphans(scene.table, plan) == plan.orphans  # the table did not move: the plan stands
    adopted = next(p for p in scene.orphans if p.endswith("orphan1.parquet"))
    append_files(scene.table, [DataFile(file_path=adopted, file_format="PARQUET", partition=(), record_count=1,
                                        file_size_in_bytes=100)])
    assert [f.path for f in still_orphans(scene.table, plan)] == [p for p in scene.orphans if p != adopted]
    # Paths compare as plan_orphans compares them: file:/x is /x.
    other = orphans.OrphanPlan(plan.table, plan.location, plan.older_than_ms, plan.listed,
                               [FileInfo("file:" + adopted, 100)])
    assert still_orphans(scene.table, other) == []


# ------------------------------------------------------------------------------------------- CLI

def test_cli_dry_run_then_delete(scene, cli_env):
    before = listing(scene.location)
    code, out, err = icectl(scene, "-o", "json", "remove-orphans", "db.t", "--dry-run")
    assert code == 0, err
    d = json.loads(out)
    assert d["dry_run"] is True and d["orphan_files"] == scene.orphans and d["deleted_files"] == []
    assert d["orphan_bytes"] == 100 + 10 + 2 + 1 and d["too_new"] == 1
    assert listing(scene.location) == before
    code, out, err = icectl(scene, "-o", "json", "remove-orphans", "db.t", "--yes")
    assert code == 0, err
    d = json.loads(out)
    assert d["dry_run"] is False and sorted(d["deleted_files"]) == scene.orphans and d["failed_deletes"] == []
    assert listing(scene.location) == before - set(scene.orphans)
    t = scene.refresh()
    assert len(list(t.live_entries(t.metadata.current_snapshot))) == 2
    # Nothing left to do.
    code, out, _ = icectl(scene, "-o", "json", "remove-orphans", "db.t", "--yes")
    assert code == 0 and json.loads(out)["orphan_files"] == []


def test_cli_human_output(scene, cli_env):
    code, out, err = icectl(scene, "remove-orphans", "db.t", "--dry-run")
    assert code == 0, err
    assert f"listed {len(listing(scene.location)) - len(scene.hidden)} files" in out
    assert f"{len(scene.orphans)} orphans" in out and "1 newer files left alone" in out
    for p in scene.orphans:
        assert p in out
    code, out, err = icectl(scene, "remove-orphans", "db.t", "--yes")
    assert code == 0, err
    assert f"deleted {len(scene.orphans)} orphan files" in out


def test_cli_refuses_without_yes_and_no_terminal(scene, cli_env):
    before = listing(scene.location)
    code, out, err = icectl(scene, "remove-orphans", "db.t")
    assert code == ExitCode.REFUSED
    assert "refusing to delete files without --yes" in err
    assert scene.orphans[0] in out  # the plan was shown first
    assert listing(scene.location) == before


def test_cli_short_older_than_needs_force(scene, cli_env):
    before = listing(scene.location)
    code, _, err = icectl(scene, "remove-orphans", "db.t", "--older-than", "1h", "--yes")
    assert code == ExitCode.REFUSED and "--force" in err
    assert listing(scene.location) == before
    code, out, err = icectl(scene, "-o", "json", "remove-orphans", "db.t", "--older-than", "1h", "--force", "--dry-run")
    assert code == 0, err
    assert json.loads(out)["orphan_files"] == scene.orphans  # new.parquet is younger than 1 hour


def test_cli_location_outside_the_table_is_a_usage_error(scene, cli_env):
    code, _, err = icectl(scene, "remove-orphans", "db.t", "--location", os.path.dirname(scene.location), "--yes")
    assert code == ExitCode.USAGE and "not inside the table location" in err
    code, out, err = icectl(scene, "-o", "json", "remove-orphans", "db.t", "--location",
                            scene.location + "/metadata", "--dry-run")
    assert code == 0, err
    assert json.loads(out)["orphan_files"] == [p for p in scene.orphans if "/metadata/" in p]


def test_cli_failed_delete_is_reported(scene, cli_env, monkeypatch):
    from icectl.io import FileIO

    real = FileIO._unlink  # the unlink under the path guard
    victim = scene.orphans[0]

    def flaky(self, path):
        if path == victim:
            raise PermissionError(13, "Permission denied", path)
        return real(self, path)

    monkeypatch.setattr(FileIO, "_unlink", flaky)
    code, out, err = icectl(scene, "-o", "json", "remove-orphans", "db.t", "--yes")
    assert code == 0, err
    d = json.loads(out)
    assert [f["path"] for f in d["failed_deletes"]] == [victim]
    assert sorted(d["deleted_files"]) == scene.orphans[1:]
    assert os.path.exists(victim)
