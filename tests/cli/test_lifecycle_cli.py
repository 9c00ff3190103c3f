"""The snapshot-lifecycle commands through the CLI, in process (``run(argv, Env(...))``): JSON
shapes and human output of ``expire``, ``remove-orphans``, ``refs``, ``rollback``,
``cherry-pick``, ``branch ...`` and ``tag ...``; the plan-then-ask protocol (no terminal and no
``--yes``: exit 6, nothing changed); and expire's file cleanup options end to end on a small real
table in a file-system catalog on local disk (``--warehouse`` alone).

History (:class:`Hist`, timestamps one day apart from T0, 20+ days in the future so that the
real clock never expires anything by itself):

    s1 append a -- s2 append b -- s3 overwrite a -> c -- s4 append d        main
                                      \\
                                       d1 append x                           dev
"""
from __future__ import annotations

import io
import json
import os
import pathlib
import time
from dataclasses import dataclass
from typing import Any

import pytest

from icectl.catalog import CatalogConfig, build_catalog
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.ops.recover import refs
from icectl.formats.manifest import DataFile
from icectl.spec.metadata import SnapshotRef
from helpers import create_table
from icectl.table.snapshot_producer import SnapshotChange
from helpers import append_files, commit_snapshot
from icectl.table.loaded import Table, load_table
from icectl.errors import ExitCode
from icectl.io import FileIO
from icectl.table.transaction import commit

pytestmark = pytest.mark.usefixtures("no_user_config")

DAY = 86_400_000


def force_metadata(t, md):
    """Write ``md`` as the table's next metadata without the builder (to plant broken metadata)."""
    from dataclasses import replace

    location = t.catalog.replace_metadata(t.identifier, t.metadata_location, md).metadata_location
    return replace(t, metadata=md, metadata_location=location)

EXPIRE_KEYS = {"table", "dry_run", "applied", "explain", "expired_snapshot_ids", "retained_snapshot_ids", "removed_refs",
               "removed_schema_ids", "removed_spec_ids", "metadata_location", "deleted_files", "failed_deletes",
               "skipped_outside_location", "skipped_for_safety", "counts", "bytes", "older_than_ms", "older_than",
               "commits"}
COUNT_KEYS = {"deleted_data_files_count", "deleted_position_delete_files_count",
              "deleted_equality_delete_files_count", "deleted_manifest_files_count", "deleted_manifest_lists_count",
              "deleted_statistics_files_count"}
ORPHAN_KEYS = {"table", "location", "dry_run", "applied", "older_than_ms", "listed_files", "too_new", "orphan_files",
               "orphan_bytes", "deleted_files", "failed_deletes", "prefix_mismatches", "skipped_for_safety", "commits"}
REF_CHANGE_KEYS = {"table", "action", "dry_run", "applied", "metadata_location", "refs_before", "refs_after",
                   "current_snapshot_id", "impact", "commits"}
IMPACT_KEYS = {"branch", "from_snapshot_id", "to_snapshot_id", "leaving_history", "joining_history",
               "data_files_added", "data_files_removed", "records_added", "records_removed"}


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def json(self) -> Any:
        return json.loads(self.out)


def write_parquet(path: str, ids: list[int]) -> DataFile:
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids]}), path)
    return DataFile(path, "PARQUET", (), len(ids), os.path.getsize(path))


def listing(root: str) -> dict[str, int]:
    return {os.path.join(d, f): os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs}


class Hist:
    def __init__(self, tmp_path: pathlib.Path, properties: dict[str, str] | None = None):
        self.warehouse = str(tmp_path / "wh")
        self.catalog = build_catalog(CatalogConfig("default", {"type": "hadoop", "warehouse": self.warehouse}))
        self.T0 = (int(time.time() * 1000) // DAY + 20) * DAY
        t = create_table(self.catalog, ("db", "t"), schema_text="id:long!, name:string", properties=properties or {})
        self.location = t.location
        self.a = self.file("a", [1, 2])
        t = append_files(t, [self.a], timestamp_ms=self.T0)
        self.b = self.file("b", [3])
        t = append_files(t, [self.b], timestamp_ms=self.T0 + DAY)
        self.c = self.file("c", [1])
        t = self.overwrite(t, [self.a.file_path], [self.c], self.T0 + 2 * DAY)
        t = commit(t, refs.create_ref(t.metadata, "dev", ref_type="branch"))
        self.x = self.file("x", [10, 11])
        t = append_files(t, [self.x], branch="dev", timestamp_ms=self.T0 + 2 * DAY + 1000)
        self.d = self.file("d", [4])
        t = append_files(t, [self.d], timestamp_ms=self.T0 + 3 * DAY)
        main = [s.snapshot_id for s in reversed(t.metadata.ancestors_of(t.metadata.current_snapshot_id))]
        self.s1, self.s2, self.s3, self.s4 = main
        self.d1 = t.metadata.refs["dev"].snapshot_id
        self.table = t

    def file(self, name: str, ids: list[int]) -> DataFile:
        return write_parquet(f"{self.location}/data/{name}.parquet", ids)

    @staticmethod
    def overwrite(t: Table, remove: list[str], add: list[DataFile], ts: int) -> Table:
        live = {e.data_file.file_path: e for e in t.live_entries(t.metadata.current_snapshot)}
        change = SnapshotChange("overwrite", added=add, removed=[(live[p], live[p].data_file) for p in remove])
        return commit_snapshot(t, change, timestamp_ms=ts)

    def load(self) -> Table:
        return load_table(self.catalog, ("db", "t"))

    def manifest_list(self, sid: int) -> str:
        return self.table.metadata.snapshot_by_id(sid).manifest_list

    def manifests(self, *sids: int) -> set[str]:
        md = self.table.metadata
        return {m.manifest_path for s in sids for m in self.table.manifests(md.snapshot_by_id(s))}

    def cli(self, *args: str, stdin: str = "", tty: bool = False) -> Result:
        cls = _Tty if tty else io.StringIO
        env = Env(stdout=io.StringIO(), stderr=cls(), stdin=cls(stdin))
        code = run(["--warehouse", self.warehouse, *map(str, args)], env)
        return Result(code, env.stdout.getvalue(), env.stderr.getvalue())

    def ok(self, *args: str, **kw) -> Result:
        r = self.cli(*args, **kw)
        assert r.code == 0, f"icectl {' '.join(map(str, args))} -> {r.code}\n{r.err}\n{r.out}"
        return r

    # s1 and s2 are older than this cutoff; s3, d1 and s4 are not.
    @property
    def cutoff(self) -> str:
        return str(self.T0 + 2 * DAY)

    def expected_expiry(self) -> set[str]:
        return ({self.a.file_path, self.manifest_list(self.s1), self.manifest_list(self.s2)}
                | (self.manifests(self.s1, self.s2) - self.manifests(self.s3, self.s4, self.d1)))


@pytest.fixture
def h(tmp_path) -> Hist:
    return Hist(tmp_path)


# ------------------------------------------------------------------------------------------ expire

def test_expire_dry_run_reports_what_the_real_run_deletes(h):
    before = listing(h.location)
    dry = h.ok("-o", "json", "expire", "db.t", "--older-than", h.cutoff, "--dry-run").json
    assert set(dry) == EXPIRE_KEYS
    assert dry["table"] == "db.t" and dry["dry_run"] is True and dry["metadata_location"] is None
    assert dry["applied"] is False and dry["explain"] is None
    assert dry["expired_snapshot_ids"] == [h.s1, h.s2]
    assert dry["retained_snapshot_ids"] == [h.s3, h.d1, h.s4]
    assert dry["removed_refs"] == [] and dry["failed_deletes"] == [] and dry["skipped_outside_location"] == []
    expected = h.expected_expiry()
    assert len(expected) == 4
    assert {f["path"] for f in dry["deleted_files"]} == expected
    assert all(set(f) == {"path", "kind", "size"} and f["size"] == before[f["path"]] for f in dry["deleted_files"])
    assert set(dry["counts"]) == COUNT_KEYS
    assert dry["counts"]["deleted_data_files_count"] == 1 and dry["counts"]["deleted_manifest_lists_count"] == 2
    by_kind: dict[str, int] = {}
    for f in dry["deleted_files"]:
        by_kind[f["kind"]] = by_kind.get(f["kind"], 0) + before[f["path"]]
    assert dry["bytes"] == by_kind and set(by_kind) == {"data", "manifest", "manifest-list"}
    assert listing(h.location) == before  # the dry run deleted nothing ...
    assert h.load().metadata_location == h.table.metadata_location  # ... and committed nothing

    real = h.ok("-o", "json", "expire", "db.t", "--older-than", h.cutoff, "--yes").json
    assert real["dry_run"] is False and real["applied"] is True
    assert {f["path"] for f in real["deleted_files"]} == expected
    assert real["bytes"] == dry["bytes"] and real["counts"] == dry["counts"]
    assert real["metadata_location"] == h.load().metadata_location != h.table.metadata_location
    after = listing(h.location)
    assert set(before) - set(after) == expected
    assert [p for p in set(after) - set(before)] == [real["metadata_location"]]
    assert {s.snapshot_id for s in h.load().metadata.snapshots} == {h.s3, h.d1, h.s4}


def test_expire_explain(h):
    d = h.ok("-o", "json", "expire", "db.t", "--older-than", h.cutoff, "--dry-run", "--explain").json
    assert set(d) == EXPIRE_KEYS
    reasons = {e["snapshot_id"]: e["reasons"] for e in d["explain"]}
    assert list(reasons) == d["retained_snapshot_ids"]
    assert reasons[h.s4][0] == "head of branch main"
    assert reasons[h.d1][0] == "head of branch dev"
    assert [r.split(" (")[0] for r in reasons[h.s3]] == [
        "younger than the cutoff of branch dev", "younger than the cutoff of branch main"]
    r = h.ok("expire", "db.t", "--older-than", h.cutoff, "--dry-run", "--explain")
    assert "Why each retained snapshot stays" in r.out and "head of branch dev" in r.out


def test_expire_human_output(h):
    r = h.ok("expire", "db.t", "--older-than", h.cutoff, "--dry-run")
    assert "db.t: 2 snapshots to expire, 3 retained" in r.out
    assert "Files that would go" in r.out
    for kind in ("data", "manifest", "manifest-list"):
        assert kind in r.out
    r = h.ok("expire", "db.t", "--older-than", h.cutoff, "--yes")
    assert "db.t: 2 snapshots expired, 3 retained" in r.out and "Files that did go" in r.out
    assert f"committed {h.load().metadata_location}" in r.out
    r = h.ok("expire", "db.t", "--older-than", h.cutoff, "--yes")
    assert "nothing to expire" in r.out


def test_expire_nothing_to_do_is_not_reported_as_a_dry_run(h):
    d = h.ok("-o", "json", "expire", "db.t", "--yes").json  # default cutoff: 5 days before now
    assert d["expired_snapshot_ids"] == [] and d["deleted_files"] == [] and d["dry_run"] is False
    assert d["applied"] is False
    assert d["metadata_location"] is None


def test_expire_no_delete_files(h):
    before = listing(h.location)
    d = h.ok("-o", "json", "expire", "db.t", "--older-than", h.cutoff, "--no-delete-files", "--yes").json
    assert d["expired_snapshot_ids"] == [h.s1, h.s2] and d["deleted_files"] == []
    assert d["counts"] == dict.fromkeys(COUNT_KEYS, 0) and d["bytes"] == {}
    after = listing(h.location)
    assert set(after) - set(before) == {d["metadata_location"]} and set(before) <= set(after)


def test_expire_gc_disabled(tmp_path):
    h = Hist(tmp_path, {"gc.enabled": "false"})
    before = listing(h.location)
    for extra in ([], ["--dry-run"]):
        r = h.cli("expire", "db.t", "--older-than", h.cutoff, "--yes", *extra)
        assert r.code == ExitCode.REFUSED and "gc.enabled is false" in r.err and "--no-delete-files" in r.err
    assert listing(h.location) == before and h.load().metadata_location == h.table.metadata_location
    d = h.ok("-o", "json", "expire", "db.t", "--older-than", h.cutoff, "--no-delete-files", "--yes").json
    assert d["expired_snapshot_ids"] == [h.s1, h.s2] and d["deleted_files"] == []
    assert set(before) <= set(listing(h.location))


def test_expire_refuses_without_terminal_after_showing_the_plan(h):
    before = listing(h.location)
    r = h.cli("expire", "db.t", "--older-than", h.cutoff)
    assert r.code == ExitCode.REFUSED
    assert "db.t: 2 snapshots to expire, 3 retained" in r.out and "Files that would go" in r.out
    assert "refusing to change the table without --yes" in r.err and "hint:" in r.err
    assert listing(h.location) == before and h.load().metadata_location == h.table.metadata_location
    r = h.cli("-o", "json", "expire", "db.t", "--older-than", h.cutoff)
    assert r.code == ExitCode.REFUSED
    plan = r.json  # the plan, as --dry-run prints it, but neither a dry run nor applied
    assert set(plan) == EXPIRE_KEYS and plan["dry_run"] is False and plan["applied"] is False
    assert plan["expired_snapshot_ids"] == [h.s1, h.s2] and plan["metadata_location"] is None
    assert {f["path"] for f in plan["deleted_files"]} == h.expected_expiry()
    err = json.loads(r.err)["error"]
    assert err["type"] == "RefusedError" and err["exit_code"] == 6
    assert "review the plan above" not in err["hint"] and "JSON document on stdout" in err["hint"]
    assert listing(h.location) == before


def test_expire_asks_on_a_terminal(h):
    before = listing(h.location)
    expected = h.expected_expiry()
    r = h.cli("expire", "db.t", "--older-than", h.cutoff, stdin="n\n", tty=True)
    assert r.code == ExitCode.REFUSED and "[y/N]" in r.err and "not confirmed" in r.err
    assert listing(h.location) == before
    r = h.cli("expire", "db.t", "--older-than", h.cutoff, stdin="y\n", tty=True)
    assert r.code == 0, r.err
    assert set(before) - set(listing(h.location)) == expected


def test_expire_json_asks_on_a_terminal_with_one_document_on_stdout(h):
    """`icectl -o json expire ... | jq` at a terminal: the plan as text on stderr, the question;
    stdout gets exactly one document: the plan when the answer is no, the result when yes."""
    before = listing(h.location)
    r = h.cli("-o", "json", "expire", "db.t", "--older-than", h.cutoff, stdin="n\n", tty=True)
    assert r.code == ExitCode.REFUSED
    assert "db.t: 2 snapshots to expire, 3 retained" in r.err and "[y/N]" in r.err
    plan = r.json
    assert plan["applied"] is False and plan["expired_snapshot_ids"] == [h.s1, h.s2]
    assert listing(h.location) == before
    r = h.cli("-o", "json", "expire", "db.t", "--older-than", h.cutoff, stdin="y\n", tty=True)
    assert r.code == 0, r.err
    done = r.json
    assert done["applied"] is True and done["metadata_location"] == h.load().metadata_location


def test_expire_failed_delete_is_reported_and_succeeds(h, monkeypatch):
    real = FileIO._unlink  # the unlink under the path guard

    def flaky(self, path):
        if path == h.a.file_path:
            raise PermissionError(13, "Permission denied", path)
        return real(self, path)

    monkeypatch.setattr(FileIO, "_unlink", flaky)
    expected = h.expected_expiry()
    d = h.ok("-o", "json", "expire", "db.t", "--older-than", h.cutoff, "--yes").json
    assert [f["path"] for f in d["failed_deletes"]] == [h.a.file_path]
    assert set(d["failed_deletes"][0]) == {"path", "error"} and "Permission denied" in d["failed_deletes"][0]["error"]
    assert {f["path"] for f in d["deleted_files"]} == expected - {h.a.file_path}
    assert d["counts"]["deleted_data_files_count"] == 0  # counts what was deleted
    assert os.path.exists(h.a.file_path)


def test_expire_failed_delete_human_warning(h, monkeypatch):
    real = FileIO._unlink  # the unlink under the path guard
    monkeypatch.setattr(FileIO, "_unlink", lambda self, p: (_ for _ in ()).throw(OSError("disk says no"))
                        if p == h.a.file_path else real(self, p))
    r = h.ok("expire", "db.t", "--older-than", h.cutoff, "--yes")
    assert f"icectl: warning: could not delete {h.a.file_path}: disk says no" in r.err


def test_expire_never_deletes_outside_the_table_location(h, tmp_path):
    outside = write_parquet(str(tmp_path / "elsewhere" / "o.parquet"), [99])
    t = append_files(h.table, [outside], timestamp_ms=h.T0 + 4 * DAY)
    Hist.overwrite(t, [outside.file_path], [], h.T0 + 5 * DAY)
    cutoff = str(h.T0 + 5 * DAY)
    d = h.ok("-o", "json", "expire", "db.t", "--older-than", cutoff, "--dry-run").json
    assert d["skipped_outside_location"] == [outside.file_path]
    assert outside.file_path not in {f["path"] for f in d["deleted_files"]}
    r = h.ok("expire", "db.t", "--older-than", cutoff, "--yes")
    assert "1 unreferenced files lie outside the table location and are left alone" in r.out
    assert os.path.exists(outside.file_path) and not os.path.exists(h.a.file_path)


def test_expire_delete_after_commit_reports_metadata_files(tmp_path):
    h = Hist(tmp_path, {"write.metadata.delete-after-commit.enabled": "true",
                        "write.metadata.previous-versions-max": "2"})
    mdir = os.path.join(h.location, "metadata")
    before = sorted(f for f in os.listdir(mdir) if f.endswith(".metadata.json"))
    assert before == ["v5.metadata.json", "v6.metadata.json", "v7.metadata.json"]
    d = h.ok("-o", "json", "expire", "db.t", "--older-than", h.cutoff, "--yes").json
    meta = [f for f in d["deleted_files"] if f["kind"] == "metadata"]
    assert meta == [{"path": os.path.join(mdir, "v5.metadata.json"), "kind": "metadata", "size": None}]
    assert sorted(f for f in os.listdir(mdir) if f.endswith(".metadata.json")) == [
        "v6.metadata.json", "v7.metadata.json", "v8.metadata.json"]


def test_expire_snapshot_id_option(h):
    r = h.cli("expire", "db.t", "--snapshot-id", h.s4, "--yes")
    assert r.code == ExitCode.USAGE and "still referenced by refs ['main']" in r.err
    r = h.cli("expire", "db.t", "--snapshot-id", 12345, "--yes")
    assert r.code == ExitCode.NOT_FOUND
    d = h.ok("-o", "json", "expire", "db.t", "--snapshot-id", h.s3, "--snapshot-id", h.s1, "--yes").json
    assert d["expired_snapshot_ids"] == [h.s1, h.s3]  # s3 is young, but named
    assert {s.snapshot_id for s in h.load().metadata.snapshots} == {h.s2, h.d1, h.s4}


def test_expire_retain_last_and_removed_refs(h):
    md = h.table.metadata
    # Metadata another writer left broken (a tag to a snapshot that does not exist): written
    # around the builder, which refuses such a ref.
    h.table = force_metadata(h.table, md.replace(refs={**md.refs, "ghost": SnapshotRef(777, "tag")}))
    late = str(h.T0 + 10 * DAY)  # every snapshot is older than this
    d = h.ok("-o", "json", "expire", "db.t", "--older-than", late, "--retain-last", "2", "--dry-run").json
    assert d["removed_refs"] == ["ghost"]  # a ref to a snapshot that does not exist
    assert d["expired_snapshot_ids"] == [h.s1, h.s2]  # main keeps s4, s3; dev keeps d1, s3
    d = h.ok("-o", "json", "expire", "db.t", "--older-than", late, "--retain-last", "1", "--yes").json
    assert d["expired_snapshot_ids"] == [h.s1, h.s2, h.s3] and d["removed_refs"] == ["ghost"]
    md = h.load().metadata
    assert set(md.refs) == {"main", "dev"} and {s.snapshot_id for s in md.snapshots} == {h.d1, h.s4}
    assert {e.data_file.file_path for e in h.load().live_entries(md.snapshot_by_id(h.d1))} == {
        h.b.file_path, h.c.file_path, h.x.file_path}
    assert all(os.path.exists(p) for p in (h.b.file_path, h.x.file_path, h.c.file_path, h.d.file_path))
    assert not os.path.exists(h.a.file_path)


def test_expire_usage_errors(h):
    assert h.cli("expire", "db.t", "--retain-last", "0").code == ExitCode.USAGE
    assert h.cli("expire", "db.t", "--older-than", "yesterday-ish").code == ExitCode.USAGE
    assert h.cli("expire", "db.nope", "--yes").code == ExitCode.NOT_FOUND


# ------------------------------------------------------------------------------- remove-orphans

def _age_and_plant_orphan(location: str, data: bytes) -> str:
    """Every file of the table 10 days old, and an orphan file as old in its data folder."""
    old = time.time() - 10 * 86400
    for d, _, fs in os.walk(location):
        for f in fs:
            os.utime(os.path.join(d, f), (old, old))
    orphan = os.path.join(location, "data", "orphan.parquet")
    with open(orphan, "wb") as f:
        f.write(data)
    os.utime(orphan, (old, old))
    return orphan


def test_remove_orphans_json_shape(h):
    orphan = _age_and_plant_orphan(h.location, b"1234")
    d = h.ok("-o", "json", "remove-orphans", "db.t", "--dry-run").json
    assert set(d) == ORPHAN_KEYS
    assert d["table"] == "db.t" and d["location"] == h.location and d["dry_run"] is True
    assert d["orphan_files"] == [orphan] and d["orphan_bytes"] == 4 and d["too_new"] == 0
    assert d["listed_files"] == len(listing(h.location))
    d = h.ok("-o", "json", "remove-orphans", "db.t", "--yes").json
    assert d["dry_run"] is False and d["deleted_files"] == [orphan] and not os.path.exists(orphan)
    d = h.ok("-o", "json", "remove-orphans", "db.t", "--yes").json
    assert d["orphan_files"] == [] and d["dry_run"] is False


# ------------------------------------------------------------------------------------ refs and rollback

def test_refs_json_and_human(h):
    commit(h.table, refs.create_ref(h.table.metadata, "v1", ref_type="tag", snapshot_id=h.s2, max_ref_age_ms=DAY))
    d = h.ok("-o", "json", "refs", "db.t").json
    assert [r["name"] for r in d] == ["main", "dev", "v1"]
    assert d[0] == {"name": "main", "type": "branch", "snapshot_id": h.s4, "min_snapshots_to_keep": None,
                    "max_snapshot_age_ms": None, "max_ref_age_ms": None}
    assert d[2]["type"] == "tag" and d[2]["snapshot_id"] == h.s2 and d[2]["max_ref_age_ms"] == DAY
    out = h.ok("refs", "db.t").out
    for fact in ("main", "dev", "v1", str(h.s4), str(h.d1), "tag", "1 day"):
        assert fact in out


def test_rollback_json_shape_and_dry_run(h):
    d = h.ok("-o", "json", "rollback", "db.t", "--to-snapshot", h.s2, "--dry-run").json
    assert set(d) == REF_CHANGE_KEYS and set(d["impact"]) == IMPACT_KEYS
    assert d["dry_run"] is True and d["metadata_location"] is None
    assert d["refs_before"]["main"] == h.s4 and d["refs_after"]["main"] == h.s2 and d["current_snapshot_id"] == h.s2
    assert d["impact"]["leaving_history"] == [h.s4, h.s3]
    assert d["impact"]["data_files_removed"] == 2 and d["impact"]["data_files_added"] == 1  # c, d out; a back
    assert h.load().metadata_location == h.table.metadata_location
    d = h.ok("-o", "json", "rollback", "db.t", "--to-snapshot", h.s2, "--yes").json
    assert d["dry_run"] is False and d["metadata_location"] == h.load().metadata_location
    assert d["refs_after"] == {"main": h.s2, "dev": h.d1} and d["current_snapshot_id"] == h.s2
    md = h.load().metadata
    assert md.current_snapshot_id == h.s2 and md.snapshot_log[-1].snapshot_id == h.s2


def test_rollback_human_output(h):
    r = h.ok("rollback", "db.t", "--to-snapshot", h.s2, "--dry-run")
    assert f"db.t: roll back main to snapshot {h.s2} (dry run: nothing committed)" in r.out
    assert f"main: {h.s4} -> {h.s2}" in r.out
    assert f"snapshots leaving main's history: 2 ({h.s4}, {h.s3})" in r.out
    assert "data files: +1 / -2; records: +2 / -2" in r.out
    r = h.ok("rollback", "db.t", "--to-snapshot", h.s2, "--yes")
    assert f"main: {h.s4} -> {h.s2}" in r.out and f"committed {h.load().metadata_location}" in r.out


def test_rollback_options(h):
    assert h.cli("rollback", "db.t", "--yes").code == ExitCode.USAGE
    assert h.cli("rollback", "db.t", "--to-snapshot", h.s1, "--set-current", h.s1, "--yes").code == ExitCode.USAGE
    r = h.cli("rollback", "db.t", "--to-snapshot", h.d1, "--yes")
    assert r.code == ExitCode.USAGE and "not an ancestor" in r.err and "--set-current" in r.err
    assert h.cli("rollback", "db.t", "--to-snapshot", 12345, "--yes").code == ExitCode.NOT_FOUND
    # --to-timestamp: the latest ancestor strictly older (s3 is exactly at T0 + 2 days).
    d = h.ok("-o", "json", "rollback", "db.t", "--to-timestamp", str(h.T0 + 2 * DAY), "--yes").json
    assert d["current_snapshot_id"] == h.s2
    d = h.ok("-o", "json", "rollback", "db.t", "--set-current", h.d1, "--yes").json
    assert d["current_snapshot_id"] == h.d1 and d["impact"]["joining_history"] == [h.d1, h.s3]
    d = h.ok("-o", "json", "rollback", "db.t", "--set-current", h.s4, "--branch", "dev", "--yes").json
    assert d["refs_after"] == {"main": h.d1, "dev": h.s4}
    log = [e.snapshot_id for e in h.load().metadata.snapshot_log]
    assert log[-2:] == [h.s2, h.d1]  # moving dev added nothing


def test_setting_a_branch_to_its_own_head_commits_nothing(h):
    r = h.ok("rollback", "db.t", "--set-current", h.s4)  # no --yes needed: nothing would change
    assert f"set main to snapshot {h.s4}: nothing to change" in r.out
    d = h.ok("-o", "json", "rollback", "db.t", "--set-current", h.s4, "--yes").json
    assert d["metadata_location"] is None and d["refs_after"] == d["refs_before"]
    assert h.load().metadata_location == h.table.metadata_location


def test_cherry_pick_cli(h):
    before = listing(h.location)
    r = h.ok("cherry-pick", "db.t", h.d1, "--dry-run")
    assert f"cherry-pick snapshot {h.d1} onto main (dry run: nothing committed)" in r.out
    assert f"main: {h.s4} -> (a new snapshot)" in r.out and "dev:" not in r.out
    d = h.ok("-o", "json", "cherry-pick", "db.t", h.d1, "--dry-run").json
    assert set(d) == REF_CHANGE_KEYS and d["refs_after"] == {"main": None, "dev": h.d1} and d["dry_run"] is True
    assert h.load().metadata_location == h.table.metadata_location
    assert listing(h.location) == before  # planning a pick writes no manifests
    d = h.ok("-o", "json", "cherry-pick", "db.t", h.d1, "--yes").json
    new = d["current_snapshot_id"]
    assert new not in (h.s4, h.d1) and d["refs_after"]["main"] == new
    s = h.load().metadata.snapshot_by_id(new)
    assert s.parent_snapshot_id == h.s4 and s.summary["source-snapshot-id"] == str(h.d1)
    # Exactly one new manifest, one manifest list and one metadata file: nothing orphaned.
    added = sorted(os.path.basename(p) for p in set(listing(h.location)) - set(before))
    assert len(added) == 3 and added[0].endswith("-m0.avro") and added[1].startswith(f"snap-{new}-")
    assert added[2].endswith(".metadata.json")
    for extra in ("--yes", "--dry-run"):
        r = h.cli("cherry-pick", "db.t", h.d1, extra)
        assert r.code == ExitCode.USAGE and "already picked" in r.err
    r = h.cli("cherry-pick", "db.t", h.s2, "--dry-run")
    assert r.code == ExitCode.USAGE and "already an ancestor" in r.err
    assert h.cli("cherry-pick", "db.t", 12345, "--dry-run").code == ExitCode.NOT_FOUND


def test_cherry_pick_fast_forward_cli(h):
    t = commit(h.table, refs.create_ref(h.table.metadata, "ff", ref_type="branch"))
    t = append_files(t, [h.file("f", [5])], branch="ff", timestamp_ms=h.T0 + 4 * DAY)
    f1 = t.metadata.refs["ff"].snapshot_id
    r = h.ok("cherry-pick", "db.t", f1, "--dry-run")
    assert f"main: {h.s4} -> {f1}" in r.out
    d = h.ok("-o", "json", "cherry-pick", "db.t", f1, "--yes").json
    assert d["current_snapshot_id"] == f1 and d["refs_after"]["main"] == f1
    assert len(h.load().metadata.snapshots) == len(t.metadata.snapshots)


def test_branch_and_tag_commands(h):
    d = h.ok("-o", "json", "branch", "create", "db.t", "b1", "--snapshot", h.s1, "--max-ref-age", "7d",
             "--max-snapshot-age", "2d", "--min-snapshots-to-keep", "3", "--yes").json
    assert d["refs_after"]["b1"] == h.s1 and "b1" not in d["refs_before"]
    r = h.load().metadata.refs["b1"]
    assert (r.max_ref_age_ms, r.max_snapshot_age_ms, r.min_snapshots_to_keep) == (7 * DAY, 2 * DAY, 3)
    assert h.cli("branch", "create", "db.t", "b1", "--yes").code == ExitCode.CONFLICT
    h.ok("branch", "fast-forward", "db.t", "b1", "--to", "main", "--yes")
    assert h.load().metadata.refs["b1"].snapshot_id == h.s4
    assert h.cli("branch", "fast-forward", "db.t", "main", "--to", "dev", "--yes").code == ExitCode.USAGE
    h.ok("branch", "retain", "db.t", "b1", "--min-snapshots-to-keep", "5", "--yes")
    assert h.load().metadata.refs["b1"].min_snapshots_to_keep == 5
    h.ok("branch", "rename", "db.t", "b1", "b2", "--yes")
    assert set(h.load().metadata.refs) == {"main", "dev", "b2"}
    h.ok("branch", "drop", "db.t", "b2", "--yes")
    r = h.cli("branch", "drop", "db.t", "main", "--yes")
    assert r.code == ExitCode.USAGE and "main branch cannot be dropped" in r.err
    r = h.cli("branch", "rename", "db.t", "main", "trunk", "--yes")
    assert r.code == ExitCode.USAGE and "main branch cannot be renamed" in r.err
    d = h.ok("-o", "json", "tag", "create", "db.t", "v1", "--snapshot", h.s2, "--max-ref-age", "30d", "--yes").json
    assert d["refs_after"]["v1"] == h.s2
    assert h.cli("tag", "create", "db.t", "v2", "--snapshot", 12345, "--yes").code == ExitCode.NOT_FOUND
    assert h.cli("branch", "drop", "db.t", "v1", "--yes").code == ExitCode.NOT_FOUND
    h.ok("tag", "drop", "db.t", "v1", "--yes")
    assert set(h.load().metadata.refs) == {"main", "dev"}
    r = h.ok("branch", "create", "db.t", "b3", "--dry-run")
    assert "(dry run: nothing committed)" in r.out and f"b3: (none) -> {h.s4}" in r.out
    assert "b3" not in h.load().metadata.refs


# ------------------------------------------------------------- every mutating command asks first

MUTATING = {
    "expire": lambda h: ["expire", "db.t", "--older-than", h.cutoff],
    "expire-no-delete": lambda h: ["expire", "db.t", "--older-than", h.cutoff, "--no-delete-files"],
    "remove-orphans": lambda h: ["remove-orphans", "db.t"],
    "rollback": lambda h: ["rollback", "db.t", "--to-snapshot", h.s2],
    "rollback-ts": lambda h: ["rollback", "db.t", "--to-timestamp", str(h.T0 + DAY + 1)],
    "set-current": lambda h: ["rollback", "db.t", "--set-current", h.d1],
    "cherry-pick": lambda h: ["cherry-pick", "db.t", h.d1],
    "branch-create": lambda h: ["branch", "create", "db.t", "b1"],
    "branch-drop": lambda h: ["branch", "drop", "db.t", "dev"],
    "branch-rename": lambda h: ["branch", "rename", "db.t", "dev", "feature"],
    "branch-fast-forward": lambda h: ["branch", "fast-forward", "db.t", "old", "--to", "main"],
    "branch-retain": lambda h: ["branch", "retain", "db.t", "dev", "--min-snapshots-to-keep", "3"],
    "tag-create": lambda h: ["tag", "create", "db.t", "v1"],
    "tag-drop": lambda h: ["tag", "drop", "db.t", "v0"],
}


@pytest.mark.parametrize("output", ["table", "json"])
@pytest.mark.parametrize("name", sorted(MUTATING))
def test_mutating_commands_refuse_without_yes_and_terminal(h, name, output):
    md = h.table.metadata
    t = commit(h.table, refs.create_ref(md, "v0", ref_type="tag", snapshot_id=h.s1)
                       + refs.create_ref(md, "old", ref_type="branch", snapshot_id=h.s1))
    # An old orphan, so that remove-orphans has something to refuse to delete.
    _age_and_plant_orphan(h.location, b"x")
    before = listing(h.location)
    r = h.cli("-o", output, *MUTATING[name](h))
    assert r.code == ExitCode.REFUSED, r.err
    assert "without --yes" in r.err
    if output == "json":  # the plan on stdout, one document
        plan = r.json
        assert plan["dry_run"] is False and plan["applied"] is False
    else:
        assert r.out.strip() and "review the plan above" in r.err
    assert listing(h.location) == before
    assert h.load().metadata_location == t.metadata_location
    # The same command with --yes goes through.
    assert h.cli("-o", output, *MUTATING[name](h), "--yes").code == 0
    assert h.load().metadata_location != t.metadata_location or name == "remove-orphans"
