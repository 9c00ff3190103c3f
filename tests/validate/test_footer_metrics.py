"""validate --deep against Parquet footers: each metric an icectl-written table's manifest gets
wrong is its own finding, under the table's metrics modes (none, counts, truncate(16), full), in
format versions 1, 2 and 3. The manifests' metrics are icectl's writer metrics
(:func:`icectl.spark.rewrite.describe_parquet_file`, computed from the rows, not the footer)."""
from __future__ import annotations

import dataclasses
import json
import os
import sys
import uuid

import io

import pyarrow as pa
import pytest

from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.errors import ConflictingChangeError
from icectl.formats.manifest import DataFile
from icectl.formats.parquet import iceberg_field, write_parquet
from icectl.ops.recover.repair_metrics import apply_metrics_repair, plan_metrics_repair
from icectl.formats.parquet_footer import footer_metrics, metrics_target, read_footer
from icectl.spark.rewrite import describe_parquet_file
from icectl.spec.conversions import from_bytes, to_bytes
from icectl.table.loaded import load_table
from icectl.validate.codes import Severity
from icectl.validate import deep
from icectl.validate.findings import ValidateOptions
from icectl.validate.run import validate_table

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from helpers import append_files, create_table  # noqa: E402
from validate_corpus.tables import IDENT, make_catalog  # noqa: E402

SCHEMA = "id:long!, name:string, score:double"
LONG_NAME = "abcdefghijklmnopqrstuvwxyz"  # 26 characters: truncate(16) cuts it


def _write(table, ids, names, scores) -> DataFile:
    data = pa.table({"id": pa.array(ids, pa.int64()), "name": pa.array(names, pa.string()),
                     "score": pa.array(scores, pa.float64())},
                    schema=pa.schema([iceberg_field("id", pa.int64(), 1, nullable=False),
                                      iceberg_field("name", pa.string(), 2), iceberg_field("score", pa.float64(), 3)]))
    path = os.path.join(table.location, "data", f"{uuid.uuid4()}.parquet")
    write_parquet(table.io, path, data)
    w = describe_parquet_file(table.io, path, data=data, schema=table.metadata.schema)
    return DataFile(path, "parquet", (), w.record_count, w.size, column_sizes=w.column_sizes,
                    value_counts=w.value_counts, null_value_counts=w.null_value_counts,
                    nan_value_counts=w.nan_value_counts,
                    lower_bounds={k: bytes.fromhex(v) for k, v in w.lower_bounds.items()},
                    upper_bounds={k: bytes.fromhex(v) for k, v in w.upper_bounds.items()})


def _table(tmp_path, fv, properties=None):
    cat = make_catalog(str(tmp_path))
    t = create_table(cat, IDENT, schema_text=SCHEMA, format_version=fv, properties=properties or {})
    return cat, t


def cli(tmp_path, *args: str) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    pre = ["-c", "corpus", "--uri", f"sqlite:///{tmp_path}/catalog.db", "--warehouse", f"{tmp_path}/warehouse"]
    code = run([*pre, *args], env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def _deep(cat):
    return validate_table(cat, IDENT, ValidateOptions(deep=True))


def _codes(report):
    return sorted({f.code for f in report.findings})


ROWS = ([1, 2, 3, 4], ["b", None, LONG_NAME, "c"], [0.5, float("nan"), -2.0, 9.25])


@pytest.mark.parametrize("fv", [1, 2, 3])
def test_an_icectl_written_table_is_clean(tmp_path, fv):
    cat, t = _table(tmp_path, fv)
    append_files(t, [_write(t, *ROWS)])
    report = _deep(cat)
    assert report.findings == [], [(f.code, f.message) for f in report.findings]


def _set(field, fid, value):
    def change(df: DataFile) -> DataFile:
        return dataclasses.replace(df, **{field: {**(getattr(df, field) or {}), fid: value}})
    return change


def _drop(field, fid):
    def change(df: DataFile) -> DataFile:
        return dataclasses.replace(df, **{field: {k: v for k, v in (getattr(df, field) or {}).items() if k != fid}})
    return change


DEFECTS = {
    "record-count": (lambda df: dataclasses.replace(df, record_count=3), "RECORD_COUNT_MISMATCH"),
    "file-size": (lambda df: dataclasses.replace(df, file_size_in_bytes=df.file_size_in_bytes + 7), "FILE_SIZE_MISMATCH"),
    "upper-below-max": (_set("upper_bounds", 1, to_bytes("long", 2)), "BOUND_HIDES_ROWS"),
    "lower-above-min": (_set("lower_bounds", 2, to_bytes("string", "bz")), "BOUND_HIDES_ROWS"),
    "double-upper-below-max": (_set("upper_bounds", 3, to_bytes("double", 1.0)), "BOUND_HIDES_ROWS"),
    "upper-loose": (_set("upper_bounds", 1, to_bytes("long", 99)), "BOUND_LOOSE"),
    "lower-loose-string": (_set("lower_bounds", 2, to_bytes("string", "a")), None),  # a prefix: a truncation
    "lower-loose": (_set("lower_bounds", 2, to_bytes("string", "B")), "BOUND_LOOSE"),
    "value-count": (_set("value_counts", 2, 5), "METRIC_VALUE_COUNT"),
    "null-count": (_set("null_value_counts", 2, 0), "METRIC_NULL_COUNT"),
    "nan-count": (_set("nan_value_counts", 3, 5), "METRIC_NAN_COUNT"),
    "column-size": (_set("column_sizes", 1, 1), "METRIC_COLUMN_SIZE"),
    "missing-bound": (_drop("upper_bounds", 1), "METRIC_MISSING"),
    "missing-count": (_drop("null_value_counts", 2), "METRIC_MISSING"),
}


@pytest.mark.parametrize("name", sorted(DEFECTS))
@pytest.mark.parametrize("fv", [1, 2, 3])
def test_each_wrong_metric_is_its_own_finding(tmp_path, fv, name):
    change, code = DEFECTS[name]
    cat, t = _table(tmp_path, fv)
    append_files(t, [change(_write(t, *ROWS))])
    report = _deep(cat)
    assert _codes(report) == ([code] if code else []), [(f.code, f.message) for f in report.findings]
    if code:
        f = report.findings[0]
        assert f.file and f.file.endswith(".parquet") and f.manifest
    if code == "METRIC_MISSING":
        assert report.findings[0].severity == Severity.NOTE and report.ok
    if code == "BOUND_HIDES_ROWS":
        assert not report.ok


def _footer(tmp_path, mode):
    props = {"write.metadata.metrics.default": mode} if mode else {}
    cat, t = _table(tmp_path, 2, props)
    df = _write(t, *ROWS)
    target = metrics_target(t.metadata)
    return footer_metrics(read_footer(t.io, df.file_path), target.types, target.modes), df


def test_mode_none_derives_nothing(tmp_path):
    fm, _ = _footer(tmp_path, "none")
    assert fm.record_count == 4
    assert (fm.column_sizes, fm.value_counts, fm.null_value_counts, fm.lower_bounds) == ({}, {}, {}, {})


def test_mode_counts_derives_counts_without_bounds(tmp_path):
    fm, df = _footer(tmp_path, "counts")
    assert fm.value_counts == {1: 4, 2: 4, 3: 4} and fm.null_value_counts == {1: 0, 2: 1, 3: 0}
    assert fm.column_sizes == df.column_sizes
    assert fm.lower_bounds == {} and fm.upper_bounds == {}


@pytest.mark.parametrize("mode", [None, "truncate(16)"])
def test_truncate_16_cuts_and_increments_strings(tmp_path, mode):
    fm, df = _footer(tmp_path, mode)
    assert from_bytes("string", fm.lower_bounds[2]) == LONG_NAME[:16]  # "abc..." is the minimum
    assert from_bytes("string", fm.upper_bounds[2]) == "c"
    assert fm.lower_bounds == df.lower_bounds and fm.upper_bounds == df.upper_bounds  # as icectl's writer


def test_truncate_4_increments_the_cut_maximum(tmp_path):
    fm, _ = _footer(tmp_path, "truncate(4)")
    assert from_bytes("string", fm.lower_bounds[2]) == "abcd"
    assert from_bytes("string", fm.upper_bounds[2]) == "c"


def test_full_keeps_whole_values(tmp_path):
    fm, _ = _footer(tmp_path, "full")
    assert from_bytes("string", fm.lower_bounds[2]) == LONG_NAME
    assert from_bytes("long", fm.upper_bounds[1]) == 4 and from_bytes("double", fm.lower_bounds[3]) == -2.0


def test_column_override_and_sort_order_promotion(tmp_path):
    cat = make_catalog(str(tmp_path))
    t = create_table(cat, IDENT, schema_text=SCHEMA, format_version=2, sort_by="score",
                     properties={"write.metadata.metrics.default": "none",
                                 "write.metadata.metrics.column.name": "full"})
    modes = metrics_target(t.metadata).modes
    assert modes == {1: "none", 2: "full", 3: "truncate(16)"}


def test_a_full_table_with_truncated_bounds_is_clean_but_missing_bounds_are_a_note(tmp_path):
    cat, t = _table(tmp_path, 2, {"write.metadata.metrics.default": "full"})
    append_files(t, [_write(t, *ROWS)])  # icectl's writer truncates to 16: safe, a truncation
    assert _deep(cat).findings == []
    cat2, t2 = _table(tmp_path / "b", 2, {"write.metadata.metrics.default": "counts"})
    append_files(t2, [_drop("lower_bounds", 2)(_drop("upper_bounds", 2)(_write(t2, *ROWS)))])
    assert _deep(cat2).findings == []  # counts: no bounds are expected


def _repair_table(tmp_path, fv):
    cat, t = _table(tmp_path, fv)
    good = _write(t, [10, 20], ["x", "y"], [1.0, 2.0])
    bad = _write(t, *ROWS)
    broken = dataclasses.replace(bad, record_count=3, file_size_in_bytes=bad.file_size_in_bytes + 5,
                                 upper_bounds={**bad.upper_bounds, 1: to_bytes("long", 2)})
    t = append_files(t, [good])
    t = append_files(t, [broken])
    return cat, t, good, bad


@pytest.mark.parametrize("fv", [1, 2, 3])
def test_repair_metrics_carries_the_footer_values_and_keeps_the_rest(tmp_path, fv):
    cat, t, good, bad = _repair_table(tmp_path, fv)
    before = {f.code for f in _deep(cat).findings}
    assert {"RECORD_COUNT_MISMATCH", "FILE_SIZE_MISMATCH", "BOUND_HIDES_ROWS"} <= before
    plan = plan_metrics_repair(t)
    assert [c.path for c in plan.changes] == [bad.file_path] and plan.files_checked == 2
    assert {d.code for d in plan.changes[0].differences} == {"RECORD_COUNT_MISMATCH", "FILE_SIZE_MISMATCH",
                                                                   "BOUND_HIDES_ROWS"}
    old = {e.data_file.file_path: e for m in t.manifests(t.metadata.current_snapshot)
           for e in t.read_entries(m, live_only=True)}
    result = apply_metrics_repair(t, plan)
    t2 = load_table(cat, IDENT)
    snap = t2.metadata.current_snapshot
    assert snap.snapshot_id == result.new_snapshot_id and snap.summary["operation"] == "replace"
    assert snap.summary["total-records"] == "6" and snap.summary["total-data-files"] == "2"
    new = {e.data_file.file_path: e for m in t2.manifests(snap) for e in t2.read_entries(m, live_only=True)}
    assert set(new) == set(old)
    for path, e in new.items():
        o = old[path]
        assert (e.snapshot_id, e.sequence_number, e.file_sequence_number, e.data_file.first_row_id) == \
            (o.snapshot_id, o.sequence_number, o.file_sequence_number, o.data_file.first_row_id)
    fixed = new[bad.file_path].data_file
    assert fixed.record_count == 4 and fixed.file_size_in_bytes == bad.file_size_in_bytes
    assert from_bytes("long", fixed.upper_bounds[1]) == 4
    assert _deep(cat).findings == []
    assert plan_metrics_repair(t2).changes == []


def test_repair_metrics_refuses_when_main_moved(tmp_path):
    cat, t, good, bad = _repair_table(tmp_path, 2)
    plan = plan_metrics_repair(t)
    append_files(t, [_write(t, [5], ["z"], [0.0])])
    with pytest.raises(ConflictingChangeError):
        apply_metrics_repair(load_table(cat, IDENT), plan)


def test_cli_repair_metrics_dry_run_then_yes(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    cat, t, good, bad = _repair_table(tmp_path, 2)
    before = t.metadata_location
    code, out, err = cli(tmp_path, "-o", "json", "repair", "db.t", "--metrics", "--dry-run")
    assert code == 0, err
    r = json.loads(out)
    assert r["metrics_files_checked"] == 2 and not r["applied"] and r["metrics_snapshot_id"] is None
    assert [c["path"] for c in r["metrics"]] == [bad.file_path]
    assert {d["code"] for d in r["metrics"][0]["differences"]} == {"RECORD_COUNT_MISMATCH", "FILE_SIZE_MISMATCH",
                                                                   "BOUND_HIDES_ROWS"}
    assert load_table(cat, IDENT).metadata_location == before
    code, out, err = cli(tmp_path, "repair", "db.t", "--metrics", "--dry-run")
    assert code == 0 and "BOUND_HIDES_ROWS" in out and "dry run" in out
    code, out, err = cli(tmp_path, "repair", "db.t", "--metrics", "--yes")
    assert code == 0, err
    assert "replace snapshot" in out
    assert _deep(cat).findings == []


def test_cli_text_shows_notes_and_exits_0(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    cat, t = _table(tmp_path, 2)
    append_files(t, [_drop("upper_bounds", 1)(_write(t, *ROWS))])
    code, out, err = cli(tmp_path, "validate", "db.t", "--deep")
    assert code == 0, err
    assert "Notes (1)" in out and "METRIC_MISSING" in out and "valid, with 1 notes" in out
    code, out, err = cli(tmp_path, "-o", "json", "validate", "db.t", "--deep")
    assert json.loads(out)["findings"][0]["severity"] == "note"


def test_files_are_checked_in_batches_of_whole_manifests(tmp_path, monkeypatch):
    monkeypatch.setattr(deep, "BATCH_FILES", 1)
    cat, t = _table(tmp_path, 2)
    t = append_files(t, [_write(t, [1, 2], ["a", "b"], [1.0, 2.0]), _write(t, [3], ["c"], [3.0])])
    t = append_files(t, [_set("upper_bounds", 1, to_bytes("long", 4))(_write(t, [4, 5], ["d", "e"], [4.0, 5.0]))])
    report = _deep(cat)
    assert _codes(report) == ["BOUND_HIDES_ROWS"] and report.checked.files == 3
