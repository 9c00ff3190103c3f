"""Every table Iceberg Java 1.10 writes validates clean: v1, v2 with position and equality deletes,
branches and tags, schema and partition evolution, v3 with deletion vectors and row lineage, with
`--deep` and `--all-snapshots` (no error and no warning)."""
from __future__ import annotations

import io
import json

import pytest

from icectl.cli.context import Env
from icectl.cli.main import run

pytestmark = [pytest.mark.interop, pytest.mark.spark]


def validate(warehouse, identifier: str, *extra: str) -> tuple[int, dict]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run(["--warehouse", str(warehouse), "-o", "json", "validate", identifier, *extra], env)
    return code, json.loads(env.stdout.getvalue())


def _findings(report: dict) -> list[str]:
    return [f"{f['severity']} {f['code']}: {f['message']} ({f['snapshot_id']}, {f['manifest']}, {f['entry']}, "
            f"{f['file']})" for f in report["findings"]]


@pytest.mark.parametrize("fixture", ["v1_table", "v2_table", "v3_table", "v2_unpartitioned_table"])
def test_java_tables_validate_clean_deep(request, oracle_warehouse, fixture):
    jt = request.getfixturevalue(fixture)
    code, report = validate(oracle_warehouse, jt.identifier, "--deep", "--all-snapshots")
    assert _findings(report) == []
    assert code == 0
    assert report["ok"] is True
    assert report["format_version"] == jt.format_version
    assert report["checked"]["snapshots"] == len(jt.snapshots)
    # Several deletion vectors may share one Puffin file: files are distinct paths.
    assert report["checked"]["files"] >= len(jt.data_files) + len({f.file_path for f in jt.delete_files})


@pytest.mark.parametrize("fixture", ["v1_table", "v2_table", "v3_table"])
def test_java_manifests_are_decoded_by_polars_as_by_the_lean_decoder(request, oracle_warehouse, fixture,
                                                                       monkeypatch):
    """Java's manifests take the polars path (the lean decoder is never needed), and the lean
    decoder, forced, checks the same entries clean."""
    import icectl.formats.entries as entry_frame

    jt = request.getfixturevalue(fixture)
    lean = entry_frame.frame_from_records

    def refuse(*a, **k):
        raise AssertionError("the lean decoder was used")
    monkeypatch.setattr(entry_frame, "frame_from_records", refuse)
    code, fast = validate(oracle_warehouse, jt.identifier, "--all-snapshots")
    assert code == 0 and _findings(fast) == []
    lean_calls: list[int] = []

    def counted(*a, **k):
        lean_calls.append(1)
        return lean(*a, **k)
    monkeypatch.setattr(entry_frame, "frame_from_records", counted)
    monkeypatch.setenv("ICECTL_AVRO_READER", "lean")
    code, slow = validate(oracle_warehouse, jt.identifier, "--all-snapshots")
    assert code == 0 and _findings(slow) == []
    assert lean_calls, "the forced run must decode with the lean decoder"
    assert fast["checked"] == slow["checked"]


def test_java_table_by_metadata_path_and_default_scope(v2_table):
    """By metadata file path (no catalog); default scope: heads of main, b1 and t1."""
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run(["-o", "json", "validate", v2_table.metadata_location], env)
    report = json.loads(env.stdout.getvalue())
    assert code == 0, _findings(report)
    heads = {r.snapshot_id for r in v2_table.refs}
    assert report["checked"]["snapshots"] == len(heads)


def test_java_v3_table_after_more_java_commits(java_table_factory, spark, oracle_warehouse):
    """A private v3 table after a compaction (rewrite_data_files) and an expiry stays valid."""
    jt = java_table_factory("v3")
    spark.sql(f"CALL hc.system.rewrite_data_files(table => '{jt.identifier}', options => map('min-input-files', '2'))")
    spark.sql(f"DELETE FROM {jt.name} WHERE id = 7")
    code, report = validate(oracle_warehouse, jt.identifier, "--deep", "--all-snapshots")
    assert _findings(report) == []
    assert code == 0
