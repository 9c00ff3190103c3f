"""``repair --duplicates`` on real tables (SQL and file-system catalogs, no Java): a data file or a
delete file live twice in main's head (two manifests, twice in one manifest), entries that
disagree, two deletion vectors for one data file; which entry is kept, the commit, its summary
totals, ``validate`` before (the finding names the fix) and after, and the CLI."""
from __future__ import annotations

import dataclasses
import io
import json
import os
import pathlib
import sys

import pytest

from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.errors import ExitCode
from icectl.formats.manifest import DataFile, EntryStatus, FileContent, ManifestEntry
from icectl.ops.recover.repair_duplicates import apply_duplicates_repair, keep_index, plan_duplicates_repair
from icectl.validate.codes import fix_command
from icectl.validate.findings import ValidateOptions
from icectl.validate.run import validate_table
from helpers import append_files, live_entry_rows

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from validate_corpus import tables  # noqa: E402

pytestmark = pytest.mark.usefixtures("no_user_config")


def findings(t, deep: bool = False) -> list:
    report = validate_table(t.catalog, t.identifier, ValidateOptions(deep=deep))
    return [(f.code, fix_command(f.code, "db.t")) for f in report.findings if f.severity.value != "note"]


def entry(seq: int, content: FileContent = FileContent.DATA) -> ManifestEntry:
    return ManifestEntry(EntryStatus.EXISTING, 1, seq, seq, DataFile("s3://b/f", "parquet", (), 1, 1, content))


def test_keep_rule_lowest_sequence_for_data_highest_for_deletes():
    # a delete applies to a data entry by sequence number: the data entry with the lowest number
    # is reached by every delete that reached any copy, the delete entry with the highest
    # reaches every data file any copy reached; the first in list order on a tie
    assert keep_index([entry(5), entry(2), entry(2), entry(9)]) == 1
    deletes = [entry(s, FileContent.POSITION_DELETES) for s in (4, 7, 7, 1)]
    assert keep_index(deletes) == 1
    assert keep_index([entry(3), entry(3)]) == 0


@pytest.mark.parametrize("version", [2, 3])
def test_data_file_added_again_keeps_the_entry_its_deletes_apply_to(tmp_path, version):
    base = tables.build(str(tmp_path), version)
    f1 = base.data_files[0]  # its position delete (v2) / deletion vector (v3) is at sequence number 4
    before = live_entry_rows(base.table)
    t = append_files(base.table, [f1])  # a retried commit: f1 again, at sequence number 5
    assert ("DUPLICATE_LIVE_FILE", "icectl repair db.t --duplicates --dry-run") in findings(t)
    assert ("DUPLICATE_FILE_CONFLICT", "icectl repair db.t --duplicates --dry-run") in findings(t)
    assert t.metadata.current_snapshot.summary["total-records"] == "13"
    plan = plan_duplicates_repair(t)
    [d] = plan.duplicates
    assert (d.path, d.kind, d.conflicts, d.records_counted_twice, d.unrepairable) == (
        f1.file_path, "data", ["data sequence number"], 3, None)
    assert sorted((e.data_sequence_number, e.kept) for e in d.entries) == [(1, True), (5, False)]
    result = apply_duplicates_repair(t, plan)
    after = result.committed.table
    snap = after.metadata.current_snapshot
    assert snap.operation == "replace" and snap.parent_snapshot_id == t.metadata.current_snapshot_id
    assert snap.sequence_number == t.metadata.last_sequence_number + 1
    assert live_entry_rows(after) == before  # f1 once, with its first entry's sequence numbers (and v3 row ids)
    s = snap.summary
    assert (s["total-records"], s["total-data-files"]) == ("10", "4")
    assert s["total-delete-files"] == str(len(base.delete_files))
    assert findings(after, deep=True) == []
    assert plan_duplicates_repair(after).changes is False


def test_delete_file_twice_keeps_its_highest_sequence_number(tmp_path):
    base = tables.build(str(tmp_path), 2)
    pos = base.delete_files[0]
    t = append_files(base.table, [pos])
    plan = plan_duplicates_repair(t)
    [d] = plan.duplicates
    assert d.kind == "position-deletes" and d.records_counted_twice == 0
    assert sorted((e.data_sequence_number, e.kept) for e in d.entries) == [(4, False), (5, True)]
    after = apply_duplicates_repair(t, plan).committed.table
    got = [e for e in after.live_entries(after.metadata.current_snapshot) if e.data_file.file_path == pos.file_path]
    assert [e.sequence_number for e in got] == [5]
    assert after.metadata.current_snapshot.summary["total-delete-files"] == "2"
    assert findings(after) == []


def test_twice_in_one_manifest_rewrites_that_manifest(tmp_path):
    base = tables.build(str(tmp_path), 2, deletes=False)
    f2 = base.data_files[1]
    t = append_files(base.table, [f2, f2])
    plan = plan_duplicates_repair(t)
    [d] = plan.duplicates  # three entries: the first append's and two at sequence number 4
    assert sorted((e.data_sequence_number, e.kept) for e in d.entries) == [(1, True), (4, False), (4, False)]
    assert d.records_counted_twice == 4
    after = apply_duplicates_repair(t, plan).committed.table
    manifests = after.manifests(after.metadata.current_snapshot)
    assert len(manifests) == 3  # the manifest that only held the two repeats is gone
    assert after.metadata.current_snapshot.summary["total-records"] == "10"
    assert findings(after) == []


def test_entries_in_two_partitions_and_two_deletion_vectors_are_refused(tmp_path):
    base = tables.build(str(tmp_path), 3)
    f2 = base.data_files[1]
    other = dataclasses.replace(f2, partition=(tables.day_of("2026-01-05"),))
    t = append_files(base.table, [other, tables.write_dv(base.table, base.data_files[0], [1])])
    codes = [c for c, _ in findings(t)]
    assert {"DUPLICATE_LIVE_FILE", "DUPLICATE_FILE_CONFLICT", "DV_DUPLICATE"} <= set(codes)
    plan = plan_duplicates_repair(t)
    assert plan.changes is False
    assert len(plan.unrepairable) == 2
    assert "name different partitions" in plan.unrepairable[0]
    assert "2 deletion vectors" in plan.unrepairable[1] and "Iceberg Java refuses" in plan.unrepairable[1]


def cli(root, *args: str) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
    code = run(["--warehouse", str(root / "warehouse"), *args], env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def test_cli_duplicates_kind_and_the_default_set(tmp_path):
    base = tables.build(str(tmp_path), 2, catalog="hadoop")
    append_files(base.table, [base.data_files[0]])
    code, out, err = cli(tmp_path, "repair", "db.t", "--duplicates", "--dry-run")
    assert code == 0 and "dry run" in out and "dropped" in out and "kept" in out and base.data_files[0].file_path in out
    code, out, err = cli(tmp_path, "-o", "json", "repair", "db.t", "--dry-run")  # the default set shows it too
    doc = json.loads(out)
    assert code == 0 and doc["kinds"] == ["files", "duplicates", "metrics"] and len(doc["duplicates"]) == 1
    assert [u["action"] for u in doc["commits"][0]["updates"]] == ["add-snapshot", "set-snapshot-ref"]
    code, out, err = cli(tmp_path, "-o", "json", "repair", "db.t", "--yes")
    doc = json.loads(out)
    assert code == 0 and doc["applied"] and doc["duplicates_snapshot_id"] and doc["metadata_location"]
    assert findings(base.table) == []
    code, out, err = cli(tmp_path, "repair", "db.t", "--duplicates")
    assert code == 0 and "every live file is listed once" in out
    code, out, err = cli(tmp_path, "repair", "db.t", "--duplicates", "--metrics", "--dry-run")
    assert code == ExitCode.USAGE and err.startswith("icectl: error: --metrics and --duplicates")
    # two deletion vectors for one data file: one error line that says why, nothing written
    base3 = tables.build(str(tmp_path / "v3"), 3, catalog="hadoop")
    append_files(base3.table, [tables.write_dv(base3.table, base3.data_files[0], [1])])
    code, out, err = cli(tmp_path / "v3", "repair", "db.t", "--duplicates", "--yes")
    assert code == ExitCode.INVALID_METADATA and "deletion vectors" in err and "Traceback" not in err
