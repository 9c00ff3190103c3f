"""``icectl demo`` through the CLI, in the local default catalog (``./warehouse``, no
configuration): its JSON and text output, refusals that change nothing (exit 5 when the table
exists, exit 2 for bad options), a clean ``validate --deep``, and that the maintenance commands
find real work on the demo table with their defaults (asserted on their JSON): expire, remove-orphans,
compact, rewrite-deletes, rollback to the tag, cherry-pick of the staged WAP snapshot, branch create."""
from __future__ import annotations

import io
import json
import os
import pathlib
import sys
from typing import Any

import pytest

from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.errors import ExitCode

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/ for demo_rows
from demo_rows import RECORDS, S, SNAPSHOT_IDS  # noqa: E402

RESULT_KEYS = {"table", "location", "metadata_location", "format_version", "snapshots", "data_files", "delete_files",
               "records", "refs", "staged_snapshot_id", "wap_id", "schema_ids", "added_column", "orphan_files",
               "orphan_age_days", "try_commands", "commits"}
SNAPSHOT_KEYS = {"snapshot_id", "parent_snapshot_id", "operation", "timestamp_ms", "committed_at", "branch", "refs",
                 "records", "description"}


def icectl(*args: Any) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run([str(a) for a in args], env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def ok_json(*args: Any) -> Any:
    code, out, err = icectl("-o", "json", *args)
    assert code == 0, f"icectl {' '.join(map(str, args))} -> {code}: {err}"
    return json.loads(out)


def listing(root) -> dict[str, tuple[int, int]]:
    return {os.path.join(d, f): (os.path.getsize(os.path.join(d, f)), os.stat(os.path.join(d, f)).st_mtime_ns)
            for d, _, fs in os.walk(root) for f in fs}


@pytest.fixture
def cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    return tmp_path


@pytest.fixture(params=[2, 3], ids=["v2", "v3"])
def built(cwd, request) -> dict:
    d = ok_json("demo", "--format-version", request.param)
    assert d["location"] == str(cwd / "warehouse" / "demo" / "events")
    return d


def test_json_result(built):
    d = built
    assert set(d) == RESULT_KEYS
    assert all(set(s) == SNAPSHOT_KEYS for s in d["snapshots"])
    assert d["table"] == "demo.events" and d["metadata_location"].startswith(d["location"] + "/metadata/")
    assert [s["snapshot_id"] for s in d["snapshots"]] == SNAPSHOT_IDS
    assert [s["records"] for s in d["snapshots"]] == RECORDS
    assert (d["data_files"], d["delete_files"], d["records"]) == (14, 3 if d["format_version"] == 2 else 4, 664)
    assert d["refs"] == [
        {"name": "main", "type": "branch", "snapshot_id": S["s9"], "records": 664},
        {"name": "audit", "type": "branch", "snapshot_id": S["s10"], "records": 684},
        {"name": "before-overwrite", "type": "tag", "snapshot_id": S["s8"], "records": 668}]
    assert d["staged_snapshot_id"] == S["s11"] and d["orphan_age_days"] == 8 and len(d["orphan_files"]) == 1
    assert "rows_by_snapshot" not in d
    assert any(c["command"] == f"icectl cherry-pick demo.events {S['s11']} --dry-run" for c in d["try_commands"])
    described = ok_json("describe", "demo.events")
    assert described["current_snapshot"]["snapshot_id"] == S["s9"] and described["snapshots"] == 11


def test_validate_deep_is_clean(built):
    for extra in ([], ["--all-snapshots"]):
        v = ok_json("validate", "demo.events", "--deep", *extra)
        assert v["ok"] is True and v["errors"] == 0 and v["warnings"] == 0 and v["findings"] == [], v["findings"]
        assert v["format_version"] == built["format_version"]
    assert v["checked"]["snapshots"] == 11


def test_expire_dry_run_expires_the_old_snapshots(built):
    d = ok_json("expire", "demo.events", "--dry-run")
    assert d["dry_run"] is True and d["expired_snapshot_ids"] and len(d["deleted_files"]) >= 1
    assert sorted(d["expired_snapshot_ids"]) == sorted(SNAPSHOT_IDS[:6])
    assert sorted(d["retained_snapshot_ids"]) == sorted(SNAPSHOT_IDS[6:])
    kinds = {}
    for f in d["deleted_files"]:
        kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1
        assert f["path"].startswith(built["location"] + "/")
    assert kinds == {"data": 1, "manifest": 1, "manifest-list": 6}
    [data] = [f["path"] for f in d["deleted_files"] if f["kind"] == "data"]
    assert "ts_day=2026-03-02" in data  # the bot traffic file, removed whole by s4
    assert ok_json("expire", "demo.events", "--dry-run")["expired_snapshot_ids"] == d["expired_snapshot_ids"]


def test_remove_orphans_dry_run_finds_the_planted_orphan(built):
    d = ok_json("remove-orphans", "demo.events", "--dry-run")
    assert d["orphan_files"] == built["orphan_files"] and d["deleted_files"] == []
    assert os.path.exists(built["orphan_files"][0])


def test_compact_dry_run_groups_the_small_files(built):
    d = ok_json("compact", "demo.events", "--dry-run")
    assert d["live_data_files"] == 14 and len(d["groups"]) >= 1
    [g] = d["groups"]
    assert (g["partition"], g["files"], g["records"], g["delete_files"]) == ("ts_day=2026-03-01", 6, 240, 2)
    assert d["spark_submit"][0].endswith("spark-submit")


def test_rewrite_deletes_dry_run(built):
    d = ok_json("rewrite-deletes", "demo.events", "--dry-run")
    if built["format_version"] == 2:
        assert (d["position_delete_files_to_merge"], d["partitions_to_merge"]) == (2, 1)
    else:  # one deletion vector per data file already: nothing to rewrite
        assert (d["position_delete_files_to_merge"], d["position_delete_files_to_convert"],
                d["dangling_delete_files"]) == (0, 0, [])


def test_rollback_to_the_tag_dry_run(built):
    d = ok_json("rollback", "demo.events", "--to-snapshot", S["s8"], "--dry-run")
    assert d["dry_run"] is True and d["refs_after"]["main"] == S["s8"] and d["refs_before"]["main"] == S["s9"]
    imp = d["impact"]
    assert imp["leaving_history"] == [S["s9"]] and imp["joining_history"] == []
    assert (imp["data_files_added"], imp["data_files_removed"], imp["records_added"], imp["records_removed"]) == \
        (4, 1, 160, 156)


def test_cherry_pick_the_staged_snapshot_dry_run(built):
    d = ok_json("cherry-pick", "demo.events", S["s11"], "--dry-run")
    assert d["dry_run"] is True and d["refs_after"]["main"] == S["s11"] and d["current_snapshot_id"] == S["s11"]


def test_branch_create_dry_run(built):
    d = ok_json("branch", "create", "demo.events", "hotfix", "--dry-run")
    assert d["refs_after"]["hotfix"] == S["s9"] and "hotfix" not in d["refs_before"]
    assert set(ok_json("describe", "demo.events")["refs"][i]["name"] for i in range(3)) == {
        "main", "audit", "before-overwrite"}


def test_text_output(cwd):
    code, out, err = icectl("demo")
    assert code == 0, err
    assert out.startswith(f"Built demo.events (format version 2) at {cwd / 'warehouse' / 'demo' / 'events'}\n")
    assert "11 snapshots; main: 664 rows in 14 data files and 3 position delete files" in out
    for sid in SNAPSHOT_IDS:
        assert str(sid) in out
    assert "before-overwrite (tag) -> 9115177490179072159, 668 rows" in out
    assert "Orphan file (8 days old" in out and "Try these:" in out
    assert f"icectl cherry-pick demo.events {S['s11']} --dry-run" in out


def test_second_demo_exits_5_and_changes_nothing(cwd):
    ok_json("demo")
    before = listing(cwd / "warehouse")
    code, out, err = icectl("demo")
    assert code == ExitCode.CONFLICT and out == ""
    assert err.startswith("icectl: error: table demo.events already exists") and "hint:" in err
    assert listing(cwd / "warehouse") == before


@pytest.mark.parametrize("args", [["--format-version", "1"], ["--format-version", "4"], ["--format-version", "x"],
                                  ["a..b"], ["--nope"]])
def test_bad_options_exit_2_and_write_nothing(cwd, args):
    code, out, err = icectl("demo", *args)
    assert code == ExitCode.USAGE and out == "" and "Traceback" not in err
    assert not (cwd / "warehouse").exists()


def test_global_catalog_options_are_kept_in_suggestions(tmp_path, cwd):
    wh = tmp_path / "lake"
    d = ok_json("--warehouse", wh, "demo", "db")
    assert d["location"] == str(wh / "db" / "events")
    assert d["try_commands"][0]["command"] == f"icectl --warehouse {wh} snapshots db.events --tree"
    v = ok_json("--warehouse", wh, "validate", "db.events", "--deep")
    assert v["ok"] is True and v["findings"] == []
    assert not (cwd / "warehouse").exists()
