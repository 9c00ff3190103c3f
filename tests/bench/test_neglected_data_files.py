"""bench/gen_neglected_table.py --data-files: every data file entry has a real Parquet file whose
rows, size, column metrics and partition values are what the entry says (as Iceberg Java's
Parquet writer would describe the file), so `validate --deep` is clean and the proof of
bench/prove_rescue.py can read rows; without the option no data file is written. Also the
proof's own checks (a lost or resized file, a differing final state) are seen."""
from __future__ import annotations

import datetime as dt
import io
import os

import pyarrow.parquet as pq
from pyiceberg.conversions import from_bytes
from pyiceberg.table import StaticTable

from bench_modules import load_bench_module

EPOCH = dt.date(1970, 1, 1)

gen = load_bench_module("gen_neglected_table")
prove = load_bench_module("prove_rescue")


def _run(*argv: str) -> tuple[int, str]:
    from icectl.cli.context import Env
    from icectl.cli.main import run

    buf, err = io.StringIO(), io.StringIO()
    rc = run(list(argv), Env(stdout=buf, stderr=err))
    return rc, buf.getvalue() + err.getvalue()


def test_data_files_match_their_entries(tmp_path):
    out = tmp_path / "n"
    info = gen.main(["--out", str(out), "--snapshots", "120", "--metadata-log", "10", "--data-files", "--quiet"])
    assert info["data_files_written"] == info["live_data_files"] == 240
    table = StaticTable.from_metadata(info["metadata_location"])
    schema = table.schema()
    types = {f.field_id: f.field_type for f in schema.fields}
    entries = [e for m in table.current_snapshot().manifests(table.io)
               for e in m.fetch_manifest_entry(table.io, discard_deleted=True)]
    assert len(entries) == 240 and sum(e.data_file.record_count for e in entries) == info["total_records"]
    specs = table.metadata.specs()
    by_spec = {0: 0, 1: 0}
    for e in entries:
        f = e.data_file
        assert os.path.getsize(f.file_path) == f.file_size_in_bytes
        pf = pq.ParquetFile(f.file_path)
        rows = pf.read().to_pylist()
        assert len(rows) == f.record_count and 1 <= len(rows) <= 20
        names = pf.schema_arrow.names
        field_ids = [int(fld.metadata[b"PARQUET:field_id"]) for fld in pf.schema_arrow]
        assert field_ids == list(range(1, len(names) + 1))
        rg = pf.metadata.row_group(0)
        assert f.column_sizes == {k + 1: rg.column(k).total_compressed_size for k in range(len(names))}
        assert f.value_counts == {k + 1: len(rows) for k in range(len(names))}
        assert f.nan_value_counts == {5: 0}
        for k, name in enumerate(names):
            col = [r[name] for r in rows]
            assert f.null_value_counts[k + 1] == sum(v is None for v in col)
            present = [v for v in col if v is not None]
            if not present:
                assert k + 1 not in f.lower_bounds and k + 1 not in f.upper_bounds
                continue
            lo = from_bytes(types[k + 1], f.lower_bounds[k + 1])
            hi = from_bytes(types[k + 1], f.upper_bounds[k + 1])
            want_lo, want_hi = min(present), max(present)
            if isinstance(want_lo, dt.datetime):
                want_lo = round((want_lo - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)).total_seconds() * 1e6)
                want_hi = round((want_hi - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)).total_seconds() * 1e6)
            if isinstance(want_lo, str):  # truncate(16): the upper bound's last character incremented
                assert lo == want_lo[:16] and hi >= want_hi[:16]
                assert hi == want_hi if len(want_hi) <= 16 else hi == want_hi[:15] + chr(ord(want_hi[15]) + 1)
            else:
                assert (lo, hi) == (want_lo, want_hi)
        # Partition values from the rows: day(ts), and event_type under spec 1.
        spec = specs[f.spec_id]
        by_spec[f.spec_id] += 1
        days = {(r["ts"].date() - EPOCH).days for r in rows}
        assert days == {f.partition[0]}
        if len(spec.fields) == 2:
            assert {r["event_type"] for r in rows} == {f.partition[1]}
        assert f.split_offsets == [4]
    assert by_spec[0] and by_spec[1]  # files of both specs, and of both schemas
    rc, text = _run("--warehouse", str(out / "warehouse"), "validate", "bench.neglected", "--deep",
                    "--all-snapshots")
    assert rc == 0, text


def test_without_the_option_no_data_file_is_written(tmp_path):
    out = tmp_path / "n"
    info = gen.main(["--out", str(out), "--snapshots", "30", "--metadata-log", "5", "--quiet"])
    assert info["data_files_written"] == 0 and not info["data_files"]
    assert not (out / "warehouse" / "bench" / "neglected" / "data").exists()


def test_the_proof_sees_a_lost_file_and_a_different_state(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"12345")
    b.write_bytes(b"1")
    reach = {str(a): 5, str(b): 5, str(tmp_path / "gone"): None}
    assert prove.missing(reach) == [f"size 1 != 5: {b}", f"missing: {tmp_path / 'gone'}"]
    assert prove.missing({str(a): 5, str(a) + "x": None})  # a manifest list (size not recorded) that is gone
    s = {"snapshots": [1, 2], "refs": {"main": 2}, "files": {"m/v3.metadata.json": 10, "data/x.parquet": 7}}
    assert prove.same_state(s, dict(s)) == []
    assert prove.same_state(s, {**s, "files": {"m/v3.metadata.json": 11, "data/x.parquet": 7}}) == []
    assert prove.same_state(s, {**s, "files": {"m/v3.metadata.json": 10, "data/x.parquet": 8}})
    assert prove.same_state(s, {**s, "files": {"m/v3.metadata.json": 10}})
    assert prove.same_state(s, {**s, "snapshots": [2]})
    assert prove.same_state(s, {**s, "refs": {"main": 1}})
    # A temporary file of an interrupted write is reported apart, not as a difference of the table.
    tmp = {**s, "files": {**s["files"], "bench/t/metadata/version-hint.text.0a1b.tmp": 1}}
    assert prove.same_state(s, tmp) == [] and prove.leftovers(s, tmp) == ["bench/t/metadata/version-hint.text.0a1b.tmp"]
    assert prove.same_state(s, {**s, "files": {**s["files"], "data/y.parquet.tmp": 1}})
