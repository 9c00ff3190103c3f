"""bench/prove_rescue.py end to end at a small scale (1,200 snapshots with real Parquet data files):
PyIceberg's list of the files the kept snapshots reach, Iceberg Java's reads of refs before and
after `expire --yes`, `validate --deep`, and two kills of the expiry (while it reads the expired
manifest lists, and right after its commit) each finished by a re-run, ending where the
uninterrupted run ended. The full-scale run of the same script is in bench/RESULTS.md."""
from __future__ import annotations

import importlib.util
import json
import pathlib
import sys

import pytest

pytestmark = [pytest.mark.interop, pytest.mark.spark, pytest.mark.slow]

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]


def _load(name: str):
    sys.path.insert(0, str(REPO_ROOT / "bench"))
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "bench" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def test_prove_rescue_small(tmp_path):
    prove = _load("prove_rescue")
    root, results = tmp_path / "n", tmp_path / "RESULTS.md"
    results.write_text("# Earlier section\n")
    res = prove.main(["--generate", "--root", str(root), "--snapshots", "1200", "--metadata-log", "20",
                      "--java-refs", "main,audit,tag-00,tag-01", "--kill", "planning,commit", "--driver-memory", "1g",
                      "--results", str(results), "--title", "Rescue proof (test)"])
    failed = [name for name, ok in res["checks"].items() if not ok]
    assert res["ok"] and not failed, (failed, json.dumps(res["kills"], indent=1, default=str))
    # 5 checks of the expiry, 4 of the kill before the commit (no record to find), 5 of the one after.
    assert len(res["checks"]) == 5 + 4 + 5
    assert "kill at planning: the pending-deletes record is left" not in res["checks"]
    # Java read real rows: main's are every row generated, and it read them again after the expiry.
    info = json.loads((root / "gen_info.json").read_text())
    reads = res["java_before"]["reads"]
    assert reads["main"]["row"]["records"] == info["total_records"] > 0
    assert set(res["java_after"]["reads"]) == {"main", "audit", "tag-00"}  # tag-01 has a max-ref-age: removed
    assert res["refs_removed"] and "tag-01" in res["refs_removed"]
    assert res["after"]["deleted"] > 1000 and res["after"]["data_files_deleted"] == 0
    assert res["reached"]["data_files"] == info["live_data_files"]
    planning, commit = res["kills"]
    assert planning["killed"] and not planning["committed"] and not planning["pending_after_kill"]
    assert commit["killed"] and commit["committed"] and commit["pending_after_kill"]
    text = results.read_text()
    assert text.startswith("# Earlier section\n") and "\n# Rescue proof (test)\n" in text
    assert "| validate --deep exits 0 | yes |" in text and "**NO**" not in text
    assert (root / "prove_rescue.json").exists()
