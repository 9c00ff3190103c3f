"""The proof of issue 20 item 2: a bare number where a unit is needed is a usage error (exit 2,
one line naming the units) from every command that takes a duration, a time or a size; nothing is
committed. Plans show the resolved cutoff and retention in words and in milliseconds."""
from __future__ import annotations

import io
import json

import pytest

from icectl.errors import ExitCode

DURATION_UNITS = "ms, s, m, h, d or w"


@pytest.fixture
def ws(tmp_path, monkeypatch):
    """A SQL catalog under tmp_path with table demo.events (v2, one snapshot)."""
    from icectl.catalog import build_catalog, parse_identifier, resolve_catalog_config
    from icectl.cli.context import Env
    from icectl.cli.main import run
    from icectl.formats.manifest import DataFile
    from icectl.table.loaded import load_table
    from helpers import append_files

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.chdir(tmp_path)

    class Workspace:
        root = tmp_path
        uri = f"sqlite:///{tmp_path}/catalog.db"
        warehouse = str(tmp_path / "warehouse")

        def run(self, *args: str) -> tuple[int, str, str]:
            env = Env(stdout=io.StringIO(), stderr=io.StringIO())
            code = run(["--uri", self.uri, "--warehouse", self.warehouse, *args], env)
            return code, env.stdout.getvalue(), env.stderr.getvalue()

        def catalog(self):
            return build_catalog(resolve_catalog_config(None, uri=self.uri, warehouse=self.warehouse))

        def table(self):
            return load_table(self.catalog(), parse_identifier("demo.events"))

    w = Workspace()
    code, _, err = w.run("create", "--yes", "demo.events", "--schema", "id:long!, ts:timestamptz")
    assert code == 0, err
    t = w.table()
    append_files(t, [DataFile(f"{t.location}/data/a.parquet", "parquet", (), 3, 100)])
    return w


def refused(ws, *args: str) -> str:
    before = ws.table().metadata_location
    code, out, err = ws.run(*args)
    assert code == ExitCode.USAGE == 2, err
    assert out == "" and "Traceback" not in err
    lines = err.splitlines()
    assert lines[0].startswith("icectl: error: ") and len(lines) <= 2, err
    assert ws.table().metadata_location == before, "a refused command must commit nothing"
    return lines[0]


def test_expire_older_than_bare_number(ws):
    line = refused(ws, "expire", "demo.events", "--older-than", "7", "--dry-run")
    assert line == (f"icectl: error: --older-than '7' has no unit: an age needs one ({DURATION_UNITS}, e.g. 7d), "
                    "epoch milliseconds have 13 digits")


@pytest.mark.parametrize("option", ["--max-snapshot-age", "--max-ref-age"])
def test_branch_create_bare_number(ws, option):
    line = refused(ws, "branch", "create", "demo.events", "b", option, "3", "--yes")
    assert line == f"icectl: error: {option} '3' has no unit: write e.g. 3d or 3h (a duration's unit is one of " \
                   f"{DURATION_UNITS})"
    assert "b" not in ws.table().metadata.refs


def test_branch_retain_and_tag_create_bare_number(ws):
    assert DURATION_UNITS in refused(ws, "branch", "retain", "demo.events", "main", "--max-snapshot-age", "3", "--yes")
    assert DURATION_UNITS in refused(ws, "tag", "create", "demo.events", "t", "--max-ref-age", "30", "--yes")


def test_compact_target_file_size_bare_number(ws):
    line = refused(ws, "compact", "demo.events", "--target-file-size", "12", "--dry-run")
    assert line.startswith("icectl: error: --target-file-size '12' has no unit: write e.g. 12MB (units: B, KB, MB, GB, "
                           "TB (binary: 1 KB = 1 KiB = 1024 B")
    assert "units: B, KB" in refused(ws, "compact", "demo.events", "--max-file-group-size", "100", "--dry-run")


@pytest.mark.parametrize("args", [
    ["rollback", "demo.events", "--to-timestamp", "60", "--yes"],
    ["snapshots", "demo.events", "--since", "36"],
    ["remove-orphans", "demo.events", "--older-than", "3", "--dry-run"],
    ["maintain", "demo.events", "--budget", "30", "--dry-run"],
])
def test_other_bare_numbers(ws, args):
    assert DURATION_UNITS in refused(ws, *args)


@pytest.mark.parametrize("command", ["health", "maintain"])
def test_policy_file_bare_number(ws, command):
    policy = ws.root / "policy.yaml"
    policy.write_text("defaults:\n  orphans-older-than: 3\n")
    extra = ["--dry-run"] if command == "maintain" else []
    line = refused(ws, command, "demo.events", "--policy", str(policy), *extra)
    assert f"{policy}" in line and "orphans-older-than '3' has no unit" in line and DURATION_UNITS in line


def test_expire_plan_shows_the_cutoff_in_words_and_milliseconds(ws):
    code, out, err = ws.run("-o", "json", "expire", "demo.events", "--older-than", "2025-11-19T22:00:00Z", "--dry-run")
    assert code == 0, err
    d = json.loads(out)
    assert d["older_than_ms"] == 1763589600000
    assert d["older_than"] == "before 2025-11-19 22:00:00 UTC (1763589600000)"
    code, out, err = ws.run("expire", "demo.events", "--older-than", "7d", "--dry-run")
    assert code == 0, err
    assert "cutoff: older than 7d (604800000 ms): before " in out and " UTC (" in out
    code, out, err = ws.run("-o", "json", "expire", "demo.events", "--dry-run")  # the table's default, 5 days
    assert json.loads(out)["older_than"].startswith("older than 5d (432000000 ms): before ")
    assert json.loads(out)["older_than"].endswith("(history.expire.max-snapshot-age-ms)")


def test_branch_plan_shows_the_retention_in_words_and_milliseconds(ws):
    code, out, err = ws.run("-o", "json", "branch", "create", "demo.events", "b", "--max-snapshot-age", "3d",
                            "--max-ref-age", "36h", "--min-snapshots-to-keep", "2", "--dry-run")
    assert code == 0, err
    assert json.loads(out)["action"] == ("create branch b (max ref age 36h (129600000 ms), max snapshot age 3d "
                                         "(259200000 ms), min snapshots to keep 2)")
    code, out, err = ws.run("-o", "json", "branch", "create", "demo.events", "b", "--max-snapshot-age", "3d", "--yes")
    assert code == 0, err
    assert ws.table().metadata.refs["b"].max_snapshot_age_ms == 259_200_000


def test_orphans_plan_shows_the_cutoff_in_words_and_milliseconds(ws):
    code, out, err = ws.run("remove-orphans", "demo.events", "--older-than", "2025-11-19T22:00:00Z", "--dry-run")
    assert code == 0, err
    assert "older than the cutoff (2025-11-19 22:00:00 UTC, 1763589600000 ms)" in out
