"""``repair`` on real tables (file-system catalog, real Parquet and Puffin files, no Java): planted
missing data files, delete files and manifests; the plan (records and bytes lost), the commit
(operation, summary, sequence numbers, v3 row lineage), a clean ``validate --deep`` after it, and
the CLI's plan-then-ask protocol, JSON shape and bad input."""
from __future__ import annotations

import io
import json
import os
import pathlib
import sys

import pytest

from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.errors import ExitCode
from icectl.ops.recover.repair import apply_repair, plan_repair
from icectl.ops.maintain.rewrite_manifests import apply_rewrite_manifests, plan_rewrite_manifests
from helpers import append_files, live_entry_rows
from icectl.validate.findings import ValidateOptions
from icectl.validate.run import validate_table
from icectl.table.transaction import commit

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from validate_corpus import tables  # noqa: E402

pytestmark = pytest.mark.usefixtures("no_user_config")

REPORT_KEYS = {"table", "all_refs", "refs", "statistics", "records_lost", "bytes_lost", "unrepairable",
               "metadata_location", "dry_run", "applied", "commits", "metrics", "metrics_files_checked",
               "metrics_snapshot_id",  # the metrics kind (issue 25)
               "duplicates", "duplicates_entries_checked", "duplicates_snapshot_id", "kinds"}  # the duplicates kind
REF_KEYS = {"ref", "ref_type", "snapshot_id", "operation", "problems", "removed_files", "rebuilt_manifests",
            "records_lost", "bytes_lost", "delete_records_dropped", "unrepairable", "new_snapshot_id",
            "manifest_list"}  # a lost manifest list, rebuilt (issue 25 item 2)


def errors(t) -> list:
    report = validate_table(t.catalog, t.identifier, ValidateOptions(deep=True))
    return [(f.code, f.message) for f in report.findings]


def tree(root) -> dict[str, bytes]:
    return {os.path.join(d, f): open(os.path.join(d, f), "rb").read() for d, _, fs in os.walk(root) for f in fs}


@pytest.mark.parametrize("version", [2, 3])
def test_missing_data_file_and_the_delete_only_it_needed(tmp_path, version):
    base = tables.build(str(tmp_path), version)
    t = base.table
    f1 = base.data_files[0]  # the v2 position delete / v3 deletion vector points at it alone
    os.unlink(f1.file_path)
    before = live_entry_rows(t)
    plan = plan_repair(t)
    r = plan.refs[0]
    assert (r.ref, r.operation, r.unrepairable) == ("main", "delete", None)
    assert [(p.path, p.kind, p.problem) for p in r.problems] == [(f1.file_path, "data", "missing")]
    kinds = {(f.path, f.reason) for f in r.removed_files}
    assert kinds == {(f1.file_path, "missing"), (base.delete_files[0].file_path, "only-removed-data-files-need-it")}
    assert (r.records_lost, r.bytes_lost) == (3, f1.file_size_in_bytes)
    result = apply_repair(t, plan)
    after = result.committed[0].table
    snap = after.metadata.current_snapshot
    old = t.metadata
    assert snap.parent_snapshot_id == old.current_snapshot_id and snap.operation == "delete"
    assert snap.sequence_number == old.last_sequence_number + 1
    gone = {f1.file_path, base.delete_files[0].file_path}
    assert live_entry_rows(after) == [e for e in before if e[0] not in gone]
    s = snap.summary
    assert (s["deleted-data-files"], s["deleted-records"], s["removed-delete-files"]) == ("1", "3", "1")
    assert s["total-records"] == "7" and s["total-data-files"] == "3"
    if version >= 3:  # the rewritten manifest gets a new first_row_id range; kept files keep theirs
        assert snap.first_row_id == old.next_row_id and after.metadata.next_row_id == old.next_row_id + snap.added_rows
    assert errors(after) == []
    assert plan_repair(after).changes is False  # a second run finds nothing


@pytest.mark.parametrize("version", [1, 2, 3])
def test_lost_manifest_rebuilt_from_older_snapshots(tmp_path, version):
    base = tables.build(str(tmp_path), version)
    t = base.table
    rm = apply_rewrite_manifests(t, plan_rewrite_manifests(t))  # one manifest of EXISTING entries
    t = rm.committed.table
    before = live_entry_rows(t)
    for m in rm.added_manifests:
        os.unlink(m)
    plan = plan_repair(t)
    r = plan.refs[0]
    assert r.operation == "replace" and r.records_lost == 0
    [rebuilt] = r.rebuilt_manifests
    assert (rebuilt.recorded_files, rebuilt.recovered_files, rebuilt.lost_files) == (4, 4, 0)
    assert (rebuilt.recorded_records, rebuilt.recovered_records) == (10, 10)
    assert len(rebuilt.sources) == 3  # the three appends' manifests
    after = apply_repair(t, plan).committed[0].table
    assert live_entry_rows(after) == before  # same files, snapshot ids, sequence numbers, first_row_ids
    assert after.metadata.current_snapshot.operation == "replace"
    assert errors(after) == []


def test_lost_manifest_that_nothing_else_holds_loses_its_files(tmp_path):
    base = tables.build(str(tmp_path), 2)
    t = base.table
    before = live_entry_rows(t)
    f5 = tables.write_data_file(t, [11, 12], ["x", "y"], tables.day_of("2026-01-04"))
    t = append_files(t, [f5])
    [m] = [m for m in t.manifests(t.metadata.current_snapshot) if m.added_snapshot_id == t.metadata.current_snapshot_id]
    os.unlink(m.manifest_path)
    r = plan_repair(t).refs[0]
    [rebuilt] = r.rebuilt_manifests
    assert (rebuilt.recorded_files, rebuilt.recovered_files, rebuilt.lost_files, rebuilt.lost_records) == (1, 0, 1, 2)
    assert r.operation == "delete" and r.records_lost == 2
    after = apply_repair(t, plan_repair(t)).committed[0].table
    assert live_entry_rows(after) == before
    s = after.metadata.current_snapshot.summary
    assert (s["deleted-data-files"], s["deleted-records"], s["total-records"]) == ("1", "2", "10")
    assert errors(after) == []


def test_missing_delete_file_is_dropped_as_an_overwrite(tmp_path):
    base = tables.build(str(tmp_path), 2)
    t = base.table
    eq = base.delete_files[1]
    os.unlink(eq.file_path)
    r = plan_repair(t).refs[0]
    assert r.operation == "overwrite" and r.records_lost == 0 and r.delete_records_dropped == 1
    assert [(f.path, f.reason) for f in r.removed_files] == [(eq.file_path, "missing")]
    after = apply_repair(t, plan_repair(t)).committed[0].table
    assert after.metadata.current_snapshot.operation == "overwrite"
    assert errors(after) == []


def test_unreadable_data_file_and_missing_statistics(tmp_path):
    base = tables.build(str(tmp_path), 2, deletes=False)
    t = base.table
    f4 = base.data_files[3]
    with open(f4.file_path, "r+b") as f:  # same size, broken footer
        f.seek(-8, os.SEEK_END)
        f.write(b"\0" * 8)
    r = plan_repair(t).refs[0]
    assert [(p.path, p.problem.split(":")[0]) for p in r.problems] == [(f4.file_path, "unreadable")]
    after = apply_repair(t, plan_repair(t)).committed[0].table
    assert {e[0] for e in live_entry_rows(after)} == {f.file_path for f in base.data_files[:3]}


def test_missing_manifest_list_is_rebuilt_not_reported_unrepairable(tmp_path):
    # issue 25 item 2: this used to be "cannot repair"; tests/ops/test_repair_manifest_list.py has the rest
    base = tables.build(str(tmp_path), 2, catalog="hadoop")
    t = base.table
    os.unlink(t.metadata.current_snapshot.manifest_list)
    plan = plan_repair(t)
    assert plan.changes is True and plan.unrepairable == [] and plan.refs[0].manifest_list.complete
    code, out, err = cli(tmp_path, "repair", "db.t", "--yes", "-o", "json")
    assert code == 0 and json.loads(out)["applied"] is True and json.loads(out)["refs"][0]["operation"] == "replace"


def one_error(err: str) -> bool:
    """One error line (and at most a hint), no traceback."""
    lines = err.splitlines()
    return lines[0].startswith("icectl: error: ") and all(x.startswith("hint: ") for x in lines[1:]) \
        and "Traceback" not in err


def cli(tmp_path, *args: str) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
    code = run(["--warehouse", str(tmp_path / "warehouse"), *args], env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def test_cli_dry_run_refusal_json_and_bad_input(tmp_path):
    base = tables.build(str(tmp_path), 3, catalog="hadoop")
    f2 = base.data_files[1]
    os.unlink(f2.file_path)
    root = tmp_path / "warehouse"
    snapshot = tree(root)
    code, out, err = cli(tmp_path, "repair", "db.t", "--dry-run")
    assert code == 0 and "dry run" in out and "missing" in out and f2.file_path in out and "2 records" in out
    code, out, err = cli(tmp_path, "repair", "db.t")  # no terminal, no --yes
    assert code == ExitCode.REFUSED and "without --yes" in err
    assert tree(root) == snapshot  # nothing written
    for args, want in ((["repair", "db.nope", "--yes"], ExitCode.NOT_FOUND),
                       (["repair", "db.t", "--bogus"], ExitCode.USAGE)):
        code, out, err = cli(tmp_path, *args)
        assert code == want and one_error(err), err
    assert tree(root) == snapshot
    code, out, err = cli(tmp_path, "-o", "json", "repair", "db.t", "--all-refs", "--yes")
    doc = json.loads(out)
    assert code == 0 and set(doc) == REPORT_KEYS and doc["applied"] and doc["records_lost"] == 2
    [ref] = doc["refs"]
    assert set(ref) == REF_KEYS and ref["operation"] == "delete" and ref["new_snapshot_id"]
    assert doc["commits"][0]["updates"][0]["action"] == "add-snapshot"
    assert doc["metadata_location"].endswith(".metadata.json")
    code, out, err = cli(tmp_path, "repair", "db.t")
    assert code == 0 and "nothing to repair" in out


def test_equality_delete_goes_only_with_the_last_file_it_applies_to(tmp_path):
    base = tables.build(str(tmp_path), 2)
    t = base.table
    f1, f2, f3, f4 = base.data_files
    eq = base.delete_files[1]  # day 2026-01-02: applies to f2 and f3
    os.unlink(f3.file_path)
    r = plan_repair(t).refs[0]
    assert {f.path for f in r.removed_files} == {f3.file_path}  # f2 still needs it
    os.unlink(f2.file_path)
    r = plan_repair(t).refs[0]
    assert {(f.path, f.reason) for f in r.removed_files} == {
        (f2.file_path, "missing"), (f3.file_path, "missing"), (eq.file_path, "only-removed-data-files-need-it")}
    after = apply_repair(t, plan_repair(t)).committed[0].table
    assert errors(after) == []


def test_all_refs_repairs_each_branch_and_tag_head(tmp_path):
    from icectl.ops.recover import refs
    from icectl.table.updates import updates_json

    base = tables.build(str(tmp_path), 3)
    t = base.table
    md = t.metadata
    t = commit(t, refs.create_ref(md, "b1", ref_type="branch", snapshot_id=md.current_snapshot_id)
                 + refs.create_ref(md, "t1", ref_type="tag", snapshot_id=md.current_snapshot_id))
    os.unlink(base.data_files[0].file_path)
    assert [r.ref for r in plan_repair(t).refs] == ["main"]
    plan = plan_repair(t, all_refs=True)
    assert [(r.ref, r.ref_type, r.operation) for r in plan.refs] == [
        ("main", "branch", "delete"), ("b1", "branch", "delete"), ("t1", "tag", "delete")]
    result = apply_repair(t, plan)
    assert len(result.committed) == 1  # every ref in one commit: a crash leaves all or none repaired
    actions = [u["action"] for u in updates_json(result.committed[0].updates, 3)]
    assert actions == ["add-snapshot", "set-snapshot-ref"] * 3
    after = result.committed[-1].table
    new = sorted((after.metadata.snapshot_by_id(after.metadata.all_refs[n].snapshot_id) for n in ("main", "b1", "t1")),
                 key=lambda s: s.sequence_number)
    assert [s.sequence_number for s in new] == [t.metadata.last_sequence_number + i for i in (1, 2, 3)]
    for a, b in zip(new, new[1:]):  # v3 row ids: each snapshot's range after the one before
        assert b.first_row_id >= a.first_row_id + a.added_rows
    assert after.metadata.next_row_id == new[-1].first_row_id + new[-1].added_rows
    heads = {n: r for n, r in after.metadata.all_refs.items()}
    assert heads["t1"].ref_type == "tag" and len({heads[n].snapshot_id for n in ("main", "b1", "t1")}) == 3
    for name in ("main", "b1", "t1"):
        snap = after.metadata.snapshot_by_id(heads[name].snapshot_id)
        assert snap.parent_snapshot_id == t.metadata.current_snapshot_id
        assert base.data_files[0].file_path not in {e.data_file.file_path for e in after.live_entries(snap)}
    assert errors(after) == []
    assert not plan_repair(after, all_refs=True).changes


def test_lost_delete_manifest_brings_the_deleted_rows_back_as_an_overwrite(tmp_path):
    base = tables.build(str(tmp_path), 2)
    t = base.table
    [m] = [m for m in t.manifests(t.metadata.current_snapshot) if m.content == 1]
    os.unlink(m.manifest_path)
    r = plan_repair(t).refs[0]
    [rebuilt] = r.rebuilt_manifests
    assert (rebuilt.content, rebuilt.recorded_files, rebuilt.recovered_files, rebuilt.lost_files) == ("deletes", 2, 0, 2)
    assert (r.operation, r.records_lost, r.delete_records_dropped) == ("overwrite", 0, 2)
    after = apply_repair(t, plan_repair(t)).committed[0].table
    snap = after.metadata.current_snapshot
    assert snap.operation == "overwrite" and snap.summary["removed-delete-files"] == "2"
    assert snap.summary["total-delete-files"] == "0" and snap.summary["total-records"] == "10"
    assert errors(after) == []


def test_rebuilt_from_manifests_whose_files_were_added_by_expired_snapshots(tmp_path):
    base = tables.build(str(tmp_path), 3, catalog="hadoop", deletes=False)
    t = base.table
    t = apply_rewrite_manifests(t, plan_rewrite_manifests(t)).committed.table  # M1: EXISTING entries of s1..s3
    import time

    future = str(int(time.time() * 1000) + 86_400_000)
    code, out, err = cli(tmp_path, "expire", "db.t", "--older-than", future, "--retain-last", "1", "--yes")
    assert code == 0, err
    t = t.refresh()
    assert len(t.metadata.snapshots) == 1  # s1..s3 are gone; M1 holds their files
    t = append_files(t, [tables.write_data_file(t, [11], ["k"], tables.day_of("2026-01-04"))])
    before = live_entry_rows(t)
    rm = apply_rewrite_manifests(t, plan_rewrite_manifests(t))  # M2: all five files
    t = rm.committed.table
    for m in rm.added_manifests:
        os.unlink(m)
    r = plan_repair(t).refs[0]
    [rebuilt] = r.rebuilt_manifests
    assert (rebuilt.recorded_files, rebuilt.recovered_files, rebuilt.lost_files) == (5, 5, 0)
    after = apply_repair(t, plan_repair(t)).committed[0].table
    assert live_entry_rows(after) == before
    assert errors(after) == []
