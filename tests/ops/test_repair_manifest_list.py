"""``repair`` rebuilds a head's lost manifest list (issue 25 item 2) on tables icectl writes (no
Java): from the parent's list and the manifests the head wrote, proven against the summary's
totals; the same files, sequence numbers and v3 row ids after the commit; an unproven rebuild
refused without ``--accept-loss`` (exit 19) and committed with it."""
from __future__ import annotations

import io
import json
import os
import pathlib
import sys

import pytest

from helpers import append_files, live_entry_rows
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.cli.session import open_table
from icectl.errors import ExitCode, IncompleteRebuildError
from icectl.ops.recover.repair import apply_repair, plan_repair
from icectl.validate.findings import ValidateOptions
from icectl.validate.run import validate_table
from validate_corpus import tables

pytestmark = pytest.mark.usefixtures("no_user_config")


def errors(t) -> list:
    return [(f.code, f.message) for f in validate_table(t.catalog, t.identifier, ValidateOptions(deep=True)).findings
            if f.severity == "error"]


def cli(tmp_path, *args: str) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
    code = run(["--warehouse", str(tmp_path / "warehouse"), *args], env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


@pytest.mark.parametrize("version", [1, 2, 3])
def test_lost_head_list_is_rebuilt_and_proven_complete(tmp_path, version):
    t = tables.build(str(tmp_path), version).table
    head = t.metadata.current_snapshot
    before = live_entry_rows(t)
    os.unlink(head.manifest_list)
    plan = plan_repair(t)
    [r] = plan.refs
    b = r.manifest_list
    assert r.unrepairable is None and r.operation == "replace" and b.complete, b.unaccounted
    assert b.parent_list == "read" and len(b.snapshot_manifests) == 1 and b.unaccounted == []
    keys = {c.key for c in b.checks}
    assert {"total-data-files", "total-records", "total-files-size", "total-delete-files"} <= keys
    assert all(c.matches for c in b.checks)
    after = apply_repair(t, plan).committed[0].table
    snap = after.metadata.current_snapshot
    assert snap.parent_snapshot_id == head.snapshot_id and snap.operation == "replace"
    assert after.metadata.snapshot_by_id(head.snapshot_id).manifest_list == head.manifest_list  # never mutated
    assert live_entry_rows(after) == before  # same files, snapshot ids, sequence numbers and first_row_ids
    for k in ("total-data-files", "total-records", "total-files-size", "total-delete-files"):
        assert snap.summary[k] == head.summary[k]
    if version >= 3:
        assert after.metadata.next_row_id == t.metadata.next_row_id and snap.added_rows == 0
    assert errors(after) == []
    assert plan_repair(after).changes is False


def test_a_head_that_rewrote_a_parent_manifest_replaces_it(tmp_path):
    # the head removes a data file: it rewrites the parent's manifest with a DELETED entry, which
    # replaces that manifest in the rebuilt list (Java's ManifestFilterManager does the same)
    base = tables.build(str(tmp_path), 2, deletes=False)
    t = base.table
    os.unlink(base.data_files[2].file_path)
    t = apply_repair(t, plan_repair(t)).committed[0].table
    head = t.metadata.current_snapshot
    assert head.operation == "delete"
    before = live_entry_rows(t)
    os.unlink(head.manifest_list)
    b = plan_repair(t).refs[0].manifest_list
    assert b.complete and b.parent_manifests_replaced == 1 and b.parent_manifests_kept == 2, b
    assert {c.key: c.rebuilt for c in b.checks}["deleted-data-files"] == 1
    after = apply_repair(t, plan_repair(t)).committed[0].table
    assert live_entry_rows(after) == before and errors(after) == []


@pytest.mark.parametrize("version", [2, 3])
def test_a_lost_manifest_of_the_head_is_reported_and_needs_accept_loss(tmp_path, version):
    t = tables.build(str(tmp_path), version).table
    kept = live_entry_rows(t)
    f5 = tables.write_data_file(t, [11, 12], ["x", "y"], tables.day_of("2026-01-04"))
    t = append_files(t, [f5])
    head = t.metadata.current_snapshot
    [m] = [m for m in t.manifests(head) if m.added_snapshot_id == head.snapshot_id]
    os.unlink(head.manifest_list)
    os.unlink(m.manifest_path)
    plan = plan_repair(t)
    [r] = plan.refs
    b = r.manifest_list
    assert not b.complete and r.operation == "overwrite" and r.records_lost == 2
    diffs = {c.key: c.rebuilt - c.recorded for c in b.checks if not c.matches}
    assert diffs["total-data-files"] == -1 and diffs["total-records"] == -2 and diffs["added-data-files"] == -1
    assert any(u.startswith("total-records: the summary says") for u in b.unaccounted)
    assert plan.incomplete_rebuilds and plan.incomplete_rebuilds[0].startswith("main: ")
    with pytest.raises(IncompleteRebuildError):
        apply_repair(t, plan)
    assert t.catalog.load_metadata_location(t.identifier) == t.metadata_location
    after = apply_repair(t, plan, accept_loss=True).committed[0].table
    assert after.metadata.current_snapshot.operation == "overwrite"
    assert [e[0] for e in live_entry_rows(after)] == [e[0] for e in kept]
    s = after.metadata.current_snapshot.summary
    assert s["total-records"] == str(sum(e[6] for e in kept if e[1] == 0))
    assert (s["deleted-data-files"], s["deleted-records"]) == ("1", "2")  # what the rebuild did not find
    assert errors(after) == []


def test_cli_plan_refusal_exit_19_and_accept_loss(tmp_path):
    t = tables.build(str(tmp_path), 2, catalog="hadoop").table
    f5 = tables.write_data_file(t, [11, 12], ["x", "y"], tables.day_of("2026-01-04"))
    t = append_files(t, [f5])
    head = t.metadata.current_snapshot
    [m] = [m for m in t.manifests(head) if m.added_snapshot_id == head.snapshot_id]
    os.unlink(head.manifest_list)
    code, out, err = cli(tmp_path, "repair", "db.t", "--dry-run")
    assert code == 0 and "proven complete" in out and "rebuild the manifest list of snapshot" in out, out
    os.unlink(m.manifest_path)
    code, out, err = cli(tmp_path, "repair", "db.t", "--dry-run")
    assert code == 0 and "not proven complete" in out and "total-records" in out and "--accept-loss" in out
    code, out, err = cli(tmp_path, "-o", "json", "repair", "db.t", "--yes")
    assert code == ExitCode.INCOMPLETE_REBUILD == 19
    doc = json.loads(out)
    assert doc["applied"] is False and doc["refs"][0]["manifest_list"]["complete"] is False
    assert json.loads(err)["error"]["message"].startswith("refused: the rebuilt manifest list of main")
    assert "Traceback" not in err
    code, out, err = cli(tmp_path, "-o", "json", "repair", "db.t", "--yes", "--accept-loss")
    doc = json.loads(out)
    assert code == 0 and doc["applied"] and doc["refs"][0]["operation"] == "overwrite"
    code, out, err = cli(tmp_path, "repair", "db.t")
    assert code == 0 and "nothing to repair" in out


def test_the_docs_section_runs(tmp_path, monkeypatch):
    """docs/incidents.md's "Rebuild a lost manifest list" block, in order, on the demo table whose
    head's manifest list was deleted: the dry run says the rebuild is proven complete, the repair
    commits, validate is clean, and the table has the rows it had."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "cli"))
    from test_readme import section_commands  # noqa: PLC0415 (a sibling test module, for its block parser)
    cmds = section_commands("docs/incidents.md", "Rebuild a lost manifest list")
    assert [c.split("#")[0].split()[:2] for c in cmds] == [["icectl", "repair"], ["icectl", "repair"],
                                                          ["icectl", "validate"]]
    monkeypatch.chdir(tmp_path)

    def icectl(argv: list[str]) -> tuple[int, str]:
        env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
        return run(argv, env), env.stdout.getvalue() + env.stderr.getvalue()

    assert icectl(["demo"])[0] == 0
    t = open_table(Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO()), "demo.events")
    before = live_entry_rows(t)
    os.unlink(t.resolve(t.metadata.current_snapshot.manifest_list))
    outs = []
    for cmd in cmds:
        code, out = icectl(cmd.split("#", 1)[0].split()[1:])
        assert code == 0, (cmd, out)
        outs.append(out)
    assert "proven complete" in outs[0] and "repaired main: replace snapshot" in outs[1], outs
    after = open_table(Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO()), "demo.events")
    assert live_entry_rows(after) == before and errors(after) == []
