"""`icectl compact demo.events --yes` on the table `icectl demo` builds, end to end through a real
spark-submit (pyspark's, local[*]) in the local default catalog: the six small files of
2026-03-01 become one, the deletes that applied only to them go, every row stays (read back from
the files, deletes applied), and the table still validates clean."""
from __future__ import annotations

import io
import json
import pathlib
import sys

import pytest

from icectl.catalog import resolve_catalog_config, build_catalog
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.formats.manifest import FileContent
from icectl.table.loaded import load_table

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/ for demo_rows
from demo_rows import S, snapshot_rows  # noqa: E402

pytestmark = pytest.mark.spark


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))  # spark work folders land under tmp_path
    (tmp_path / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)


def icectl(*args) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run([str(a) for a in args], env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


@pytest.mark.parametrize("version", [2, 3])
def test_compact_the_demo_table(version):
    code, out, err = icectl("-o", "json", "demo", "--format-version", version)
    assert code == 0, err
    built = json.loads(out)
    table = load_table(build_catalog(resolve_catalog_config(None)), ("demo", "events"))
    rows = snapshot_rows(table, S["s9"])
    assert len(rows) == built["records"] == 664

    code, out, err = icectl("-o", "json", "compact", "demo.events", "--yes")
    assert code == 0, err
    res = json.loads(out)
    assert res["failed_groups"] == [] and len(res["committed"]) == 1
    assert (res["rewritten_data_files"], res["added_data_files"], res["removed_delete_files"]) == (
        6, 1, 2 if version == 2 else 3)

    after = table.refresh()
    head = after.metadata.current_snapshot
    assert head.parent_snapshot_id == S["s9"] and head.operation == "replace"
    assert snapshot_rows(after, head.snapshot_id) == rows  # the same rows, deletes applied
    files = [f for _, f in after.live_files(head)]
    assert sum(1 for f in files if f.content == FileContent.DATA) == 14 - 6 + 1
    assert sum(1 for f in files if f.content != FileContent.DATA) == 1  # the one of 2026-03-02
    code, out, err = icectl("-o", "json", "validate", "demo.events", "--deep")
    assert code == 0, err
    assert json.loads(out)["findings"] == []
