"""`icectl maintain --all --yes` on the generated fleet (tests/ops/fleet.py) with its default policy,
every step included: compaction runs through the real spark-submit job (pyspark's, local[*]).
Every table ends with a clean `health` (orphans listed too), every table keeps exactly the rows it
had (read from the files, deletes applied), the tables validate clean, and a second run changes
nothing."""
from __future__ import annotations

import io
import json
import pathlib
import sys

import pytest

from icectl.catalog.sql import SqlCatalog
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.io import FileIO
from icectl.table.loaded import load_table

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/ for demo_rows
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "ops"))
from demo_rows import snapshot_rows  # noqa: E402
from fleet import NS, build_fleet, snapshot_state  # noqa: E402

pytestmark = pytest.mark.spark
COLUMNS = ("id", "name", "ts")


@pytest.fixture
def fleet(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    cat = build_fleet(str(tmp_path / "f"), small_files=True)
    return tmp_path / "f", cat


def _run(cat, *args) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run(["--uri", cat["uri"], "--warehouse", cat["warehouse"], *args], env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def _rows(cat) -> dict[str, list[tuple]]:
    c = SqlCatalog("default", cat["uri"], cat["warehouse"], FileIO())
    out = {}
    for ident in c.list_tables((NS,)):
        t = load_table(c, ident)
        out[".".join(ident)] = snapshot_rows(t, t.metadata.current_snapshot_id, columns=COLUMNS)
    return out


def test_maintain_brings_the_fleet_to_clean_health_through_spark(fleet):
    root, cat = fleet
    rows = _rows(cat)
    assert len(rows["fleet.deletes"]) == 4 and len(rows["fleet.dv"]) == 2 and len(rows["fleet.small_files"]) == 12
    code, out, _ = _run(cat, "-o", "json", "health", "--all", "--orphans")
    assert code == 13 or code == 14
    before = {t["table"]: t["steps"] for t in json.loads(out)["tables"]}
    assert before == {"fleet.deletes": ["rewrite-deletes", "compact"], "fleet.dv": ["rewrite-deletes", "compact"],
                      "fleet.healthy": [], "fleet.manifests": ["rewrite-manifests"],
                      "fleet.old_snapshots": ["expire"], "fleet.orphans": ["remove-orphans"],
                      "fleet.small_files": ["compact"]}

    code, out, err = _run(cat, "-o", "json", "maintain", "--all", "--yes")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["failed"] == [] and all(t["health_after"] == "healthy" for t in doc["tables"]), doc
    steps = {t["table"]: {s["step"]: s for s in t["steps"]} for t in doc["tables"]}
    assert steps["fleet.small_files"]["compact"]["summary"]["rewritten_data_files"] == 6
    assert steps["fleet.small_files"]["compact"]["summary"]["added_data_files"] == 1
    assert steps["fleet.deletes"]["compact"]["summary"]["removed_delete_files"] >= 1
    assert steps["fleet.dv"]["compact"]["status"] == "done"
    # compaction's own manifests do not call for a manifest rewrite: too few.
    assert "rewrite-manifests" not in steps["fleet.small_files"]

    code, out, err = _run(cat, "-o", "json", "health", "--all", "--orphans")
    assert code == 0, out
    health = json.loads(out)
    assert all(t["status"] == "healthy" and t["steps"] == [] for t in health["tables"])
    by_table = {t["table"]: t["metrics"] for t in health["tables"]}
    assert by_table["fleet.deletes"]["delete_files"] == 0 and by_table["fleet.dv"]["delete_files"] == 0
    assert by_table["fleet.small_files"]["data_files"] == 1
    assert _rows(cat) == rows, "maintenance changed what a reader sees"
    for name in rows:
        code, _, err = _run(cat, "validate", name, "--deep")
        assert code == 0, (name, err)

    state = snapshot_state(str(root))
    code, out, err = _run(cat, "-o", "json", "maintain", "--all", "--yes")
    assert code == 0, err
    again = json.loads(out)
    assert again["applied"] is False and all(t["status"] == "healthy" for t in again["tables"])
    assert snapshot_state(str(root)) == state, "a second run changed something"
