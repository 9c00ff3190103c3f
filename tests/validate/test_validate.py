"""``validate``: the corpus of broken tables (each defect reported with exactly its codes), valid
tables of every format version reported clean, malformed input reported as findings (never a
traceback), the CLI's text and JSON output and exit codes, and the polars and lean decoders
finding the same (the lean decoder against fastavro: tests/formats/test_avro.py)."""
from __future__ import annotations

import io
import json
import os
import pathlib
import random
import sys

import pytest

from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.validate.codes import CODES, Severity
from icectl.validate.findings import Collector, ValidateOptions
from icectl.validate.metadata import check_metadata
from icectl.validate.run import validate_table

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/ for validate_corpus

from validate_corpus import tables  # noqa: E402
from validate_corpus.cases import CASES, build_case  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]


def codes(report, severity=None) -> set[str]:
    return {f.code for f in report.findings if severity is None or f.severity == severity}


def describe(report) -> str:
    return "\n".join(f"{f.severity.value} {f.code}: {f.message} [{f.where}]" for f in report.findings)


# -- the corpus ----------------------------------------------------------------------------------

def test_corpus_has_at_least_30_defects_with_known_codes():
    assert len(CASES) >= 30
    for c in CASES.values():
        assert c.expected, c.name
        assert c.expected <= set(CODES), (c.name, c.expected - set(CODES))
        assert c.description, f"case {c.name} needs a docstring naming its defect"


@pytest.mark.parametrize("name", sorted(CASES))
def test_corpus_case_reports_exactly_its_codes(name, tmp_path):
    c = CASES[name]
    base = build_case(c, tmp_path)
    report = validate_table(base.catalog, tables.IDENT, ValidateOptions(deep=c.deep))
    assert c.expected <= codes(report), describe(report)
    assert codes(report, Severity.ERROR) <= c.expected, describe(report)
    expected_errors = {code for code in c.expected if CODES[code][0] == Severity.ERROR}
    assert report.ok == (not expected_errors)


@pytest.mark.parametrize("fv", [1, 2, 3, 4])
def test_valid_tables_are_clean_deep_all_snapshots(fv, tmp_path):
    base = tables.build(tmp_path, fv)
    report = validate_table(base.catalog, tables.IDENT, ValidateOptions(deep=True, all_snapshots=True))
    assert report.findings == [], describe(report)
    assert report.ok
    assert report.checked.snapshots == len(base.table.metadata.snapshots)
    assert report.checked.files == len(base.data_files) + len(base.delete_files)
    assert report.checked.entries >= len(base.data_files)


def test_default_scope_is_the_heads_of_refs(tmp_path):
    from icectl.ops.recover.refs import create_ref
    from icectl.table.transaction import Transaction

    base = tables.build(tmp_path, 2)
    t = base.table
    first = t.metadata.snapshots[0].snapshot_id
    Transaction(t).commit(lambda txn: create_ref(txn.table.metadata, "t0", ref_type="tag", snapshot_id=first)).table
    report = validate_table(base.catalog, tables.IDENT)
    assert report.checked.snapshots == 2  # main and the tag
    report = validate_table(base.catalog, tables.IDENT, ValidateOptions(all_snapshots=True))
    assert report.checked.snapshots == 4


def test_a_defect_in_an_old_snapshot_shows_only_with_all_snapshots(tmp_path):
    base = tables.build(tmp_path, 2)
    t = base.table
    old = t.metadata.snapshots[0]
    os.remove(t.resolve(old.manifest_list))
    assert validate_table(base.catalog, tables.IDENT).ok
    report = validate_table(base.catalog, tables.IDENT, ValidateOptions(all_snapshots=True))
    assert codes(report) == {"MANIFEST_LIST_UNREADABLE"}
    assert report.findings[0].snapshot_id == old.snapshot_id


def test_findings_say_where(tmp_path):
    c = CASES["bound-order"]
    base = build_case(c, tmp_path)
    f = next(f for f in validate_table(base.catalog, tables.IDENT).findings if f.code == "BOUND_ORDER")
    assert f.severity == Severity.ERROR
    assert f.rule == CODES["BOUND_ORDER"][1]
    assert f.manifest and f.manifest.endswith(".avro") and f.entry == 0
    assert f.snapshot_id == base.table.metadata.current_snapshot_id


def test_floods_are_capped_per_manifest(tmp_path):
    from validate_corpus.helpers import newest_data_manifest, rewrite_manifest

    base = tables.build(tmp_path, 2, deletes=False)
    t = base.table
    extra = [tables.write_data_file(t, [i], ["x"], tables.day_of("2026-01-05")) for i in range(30)]
    from helpers import append_files

    append_files(t, extra)

    def corrupt(entries):
        for e in entries:
            e.data_file.lower_bounds[1] = b"\x01"
    rewrite_manifest(base, newest_data_manifest(base), corrupt)
    report = validate_table(base.catalog, tables.IDENT)
    bound = [f for f in report.findings if f.code == "BOUND_TYPE"]
    assert len(bound) == 21  # 20 findings, then one that counts the rest
    assert "and 10 more" in bound[-1].message


# -- malformed input: findings, never a traceback ---------------------------------------------------

def _flip_bytes(path: str, seed: int, n: int = 3) -> None:
    data = bytearray(open(path, "rb").read())
    rng = random.Random(seed)
    for _ in range(n):
        i = rng.randrange(len(data))
        data[i] = rng.randrange(256)
    open(path, "wb").write(bytes(data))


@pytest.mark.parametrize("seed", range(12))
def test_random_corruption_is_reported_not_raised(seed, tmp_path):
    base = tables.build(tmp_path, 3)
    t = base.table
    snap = t.metadata.current_snapshot
    targets = [t.resolve(snap.manifest_list)] + [m.manifest_path for m in t.manifests(snap)] + \
              [base.delete_files[0].file_path, base.metadata_location]
    target = targets[seed % len(targets)]
    _flip_bytes(target, seed)
    report = validate_table(base.catalog, tables.IDENT, ValidateOptions(deep=True, all_snapshots=True))
    assert all(f.code in CODES for f in report.findings)
    # Every seed's damage is found, as an error that names the damaged file.
    errors = [f for f in report.findings if f.severity == Severity.ERROR]
    assert not report.ok and errors, describe(report)
    assert any(target in (f.file or "", f.manifest or "") or target in f.message for f in errors), describe(report)


@pytest.mark.parametrize("cut", [0, 1, 10, 100, 1000])
def test_truncated_files_are_reported(cut, tmp_path):
    base = tables.build(tmp_path, 2)
    t = base.table
    snap = t.metadata.current_snapshot
    for path in [t.resolve(snap.manifest_list), t.manifests(snap)[0].manifest_path]:
        data = open(path, "rb").read()
        open(path, "wb").write(data[:min(cut, len(data) - 1)])
    report = validate_table(base.catalog, tables.IDENT, ValidateOptions(deep=True))
    assert not report.ok
    assert codes(report, Severity.ERROR) <= {"MANIFEST_LIST_UNREADABLE", "MANIFEST_UNREADABLE"}


def test_unreadable_metadata_cli_reports_findings_exit_8(tmp_path):
    base = tables.build(tmp_path, 2)
    open(base.metadata_location, "wb").write(b"{\"format-version\": 2, ")
    code, out, err = cli(tmp_path, "-o", "json", "validate", "db.t")
    assert code == 8
    assert "Traceback" not in err
    report = json.loads(out)
    assert [f["code"] for f in report["findings"]] == ["META_INVALID_JSON"]
    assert report["format_version"] is None


def test_v4_table_in_a_file_system_catalog_is_a_finding_not_a_refusal(tmp_path):
    base = build_case(CASES["v4-in-file-system-catalog"], tmp_path)
    code, out, err = cli(tmp_path, "-o", "json", "--warehouse", str(tmp_path / "warehouse"), "validate", "db.t",
                         catalog=False)
    assert code == 8, err
    assert [f["code"] for f in json.loads(out)["findings"]] == ["V4_FILESYSTEM_CATALOG"]
    assert base.format_version == 3


# -- the CLI ----------------------------------------------------------------------------------------

def cli(tmp_path, *args: str, catalog: bool = True) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    pre = ["-c", "corpus", "--uri", f"sqlite:///{tmp_path}/catalog.db", "--warehouse", f"{tmp_path}/warehouse"] \
        if catalog else []
    code = run([*pre, *args], env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


@pytest.fixture
def no_config(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)


def test_cli_json_shape_clean(tmp_path, no_config):
    base = tables.build(tmp_path, 3)
    code, out, err = cli(tmp_path, "-o", "json", "validate", "db.t", "--deep")
    assert code == 0, err
    report = json.loads(out)
    assert set(report) == {"table", "metadata_location", "format_version", "deep", "all_snapshots", "ok", "errors",
                           "warnings", "checked", "seconds", "findings"}
    report.pop("seconds")
    assert report == {
        "table": "db.t", "metadata_location": base.metadata_location, "format_version": 3, "deep": True,
        "all_snapshots": False, "ok": True, "errors": 0, "warnings": 0,
        "checked": {"snapshots": 1, "manifest_lists": 1, "manifests": 4, "entries": 5, "files": 5},
        "findings": []}


def test_cli_json_findings_and_exit_8(tmp_path, no_config):
    build_case(CASES["ref-to-missing-snapshot"], tmp_path)
    code, out, err = cli(tmp_path, "-o", "json", "validate", "db.t")
    assert code == 8
    assert json.loads(err)["error"]["exit_code"] == 8
    f = json.loads(out)["findings"][0]
    assert set(f) == {"severity", "code", "rule", "message", "file", "snapshot_id", "manifest", "entry", "fix"}
    assert (f["severity"], f["code"], f["rule"], f["snapshot_id"]) == (
        "error", "REF_MISSING_SNAPSHOT", "Snapshot Reference", 123456789)
    assert f["fix"] is None  # no command fixes a ref to a missing snapshot


def test_cli_text_groups_by_severity_and_warnings_exit_0(tmp_path, no_config):
    build_case(CASES["forbidden-schema-field"], tmp_path)
    code, out, err = cli(tmp_path, "validate", "db.t")
    assert code == 0, err
    assert "Warnings (1)" in out and "Errors" not in out
    assert "META_FIELD_FORBIDDEN" in out and "valid, with 1 warnings" in out
    edit = CASES["ref-to-missing-snapshot"].corrupt
    edit(tables.Base(str(tmp_path), tables.make_catalog(str(tmp_path)), 2))
    code, out, err = cli(tmp_path, "validate", "db.t")
    assert code == 8
    assert out.index("Errors (1)") < out.index("Warnings (1)")
    assert err.startswith("icectl: error: db.t: validation found 1 errors")


def test_cli_validates_a_metadata_file_path(tmp_path, no_config):
    base = tables.build(tmp_path, 1)
    code, out, err = cli(tmp_path, "validate", base.metadata_location, "--all-snapshots", catalog=False)
    assert code == 0, err
    assert "valid: no findings" in out


def test_cli_missing_table_is_exit_3(tmp_path, no_config):
    tables.build(tmp_path, 2)
    code, out, err = cli(tmp_path, "validate", "db.nope")
    assert code == 3 and out == ""


# -- docs ----------------------------------------------------------------------------------------------

def test_every_code_is_documented_in_the_reference():
    section = (REPO / "docs" / "reference" / "validation-codes.md").read_text()
    for code, (sev, _, _) in CODES.items():
        assert f"| `{code}` | {sev.value} |" in section, code


def test_codes_are_stable_names():
    for code, (sev, rule, meaning) in CODES.items():
        assert code.isupper() and " " not in code
        assert isinstance(sev, Severity) and rule and meaning


def _findings(report) -> list[tuple]:
    return [(f.code, f.severity, f.message, f.where) for f in report.findings]


@pytest.mark.slow  # every corpus case validated twice (~20 s)
@pytest.mark.parametrize("name", sorted(CASES))
def test_polars_and_lean_decoders_find_the_same(name, tmp_path, monkeypatch):
    """Manifests are decoded by polars when it can, else by the lean decoder; the checks run on
    either's columns. Every corpus case gives the same findings, word for word, both ways."""
    c = CASES[name]
    base = build_case(c, tmp_path)
    opts = ValidateOptions(deep=c.deep, all_snapshots=True)
    fast = validate_table(base.catalog, tables.IDENT, opts)
    monkeypatch.setenv("ICECTL_AVRO_READER", "lean")  # no polars: the lean decoder
    lean = validate_table(base.catalog, tables.IDENT, opts)
    assert _findings(fast) == _findings(lean)
    assert fast.checked == lean.checked


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_split_metadata_file_and_a_whole_parse_find_the_same(name, tmp_path, monkeypatch):
    """The metadata file is checked split at its top level (each snapshot parsed as it is
    checked, issue 26) or, where the split does not take it, parsed whole: every corpus case
    gives the same findings, word for word, both ways."""
    c = CASES[name]
    base = build_case(c, tmp_path)
    opts = ValidateOptions(deep=c.deep)
    split = validate_table(base.catalog, tables.IDENT, opts)
    monkeypatch.setattr("icectl.validate.metadata.split_metadata", lambda raw, *visit: None)
    whole = validate_table(base.catalog, tables.IDENT, opts)
    assert _findings(split) == _findings(whole)
    assert split.checked == whole.checked


@pytest.mark.parametrize("seed", range(24))
def test_polars_and_lean_decoders_agree_on_corrupt_manifests(seed, tmp_path, monkeypatch):
    """Bytes flipped in a manifest: whatever polars accepts, the lean decoder reads the same
    (or polars refuses and the lean decoder decides)."""
    base = tables.build(tmp_path, 3)
    t = base.table
    manifests = [m.manifest_path for m in t.manifests(t.metadata.current_snapshot)]
    _flip_bytes(manifests[seed % len(manifests)], seed, n=1 + seed % 3)
    opts = ValidateOptions(all_snapshots=True)
    fast = validate_table(base.catalog, tables.IDENT, opts)
    monkeypatch.setenv("ICECTL_AVRO_READER", "lean")
    lean = validate_table(base.catalog, tables.IDENT, opts)
    assert _findings(fast) == _findings(lean)


def _raw_rewrite(base, fn, *, recount: bool = False) -> None:
    """Rewrite the current snapshot's first data manifest through fastavro, its writer schema,
    records and key-value metadata changed by ``fn`` (for defects icectl's writer cannot make)."""
    import fastavro
    from validate_corpus.helpers import data_manifest, rewrite_manifest

    t = base.table
    m = next(x for x in t.manifests(t.metadata.current_snapshot) if data_manifest(x))
    reader = fastavro.reader(io.BytesIO(t.io.read(m.manifest_path)))
    meta = {k: v.decode() if isinstance(v, bytes) else v for k, v in reader.metadata.items()
            if not k.startswith("avro.")}
    schema, records = json.loads(reader.metadata["avro.schema"]), list(reader)
    fn(schema, records, meta)
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), records, metadata=meta, codec="deflate")
    rewrite_manifest(base, data_manifest, lambda entries: None, recount=recount, data=buf.getvalue())


def _field(record_schema, name):
    return next(f for f in record_schema["fields"] if f["name"] == name)


def _data_file_schema(schema):
    t = _field(schema, "data_file")["type"]
    return t if isinstance(t, dict) else next(x for x in t if x != "null")


def _huge_format_version(schema, records, meta):
    meta["format-version"] = "99999999999999999999"


def _status_as_double(schema, records, meta):
    _field(schema, "status")["type"] = "double"
    for r in records:
        r["status"] = r["status"] + 0.5


def _format_as_int(schema, records, meta):
    _field(_data_file_schema(schema), "file_format")["type"] = "int"
    for r in records:
        r["data_file"]["file_format"] = 7


def _rows_past_64_bits(schema, records, meta):
    """Three ADDED entries whose rows add up to 2**64, which a 64-bit sum would take for 0."""
    import copy

    first = records[0]
    records[:] = [copy.deepcopy(first) for _ in range(3)]
    for i, (r, rc) in enumerate(zip(records, (2**63 - 1, 2**63 - 1, 2))):
        r["status"] = 1
        r["data_file"]["record_count"] = rc
        r["data_file"]["file_path"] += f".{i}"


def _list_says_three_files_and_no_rows(manifests):
    from icectl.formats.manifest import ManifestContent

    m = next(x for x in manifests if x.content == ManifestContent.DATA)
    m.added_files_count, m.existing_files_count, m.deleted_files_count = 3, 0, 0
    m.added_rows_count, m.existing_rows_count, m.deleted_rows_count = 0, 0, 0


def _bound_records_renamed(schema, records, meta):
    """The bound maps' key/value records with other field names (Avro reads them by position)."""
    for name in ("lower_bounds", "upper_bounds"):
        t = _field(_data_file_schema(schema), name)["type"]
        arr = next(x for x in t if x != "null") if isinstance(t, list) else t
        arr["items"]["fields"][0]["name"], arr["items"]["fields"][1]["name"] = "k", "v"
        arr["items"]["name"] = f"{arr['items']['name']}_renamed"
    for r in records:
        df = r["data_file"]
        lo = {kv["key"]: kv["value"] for kv in df["lower_bounds"] or []}
        hi = {kv["key"]: kv["value"] for kv in df["upper_bounds"] or []}
        lo[1], hi[1] = (1_000_000).to_bytes(8, "little"), (10).to_bytes(8, "little")
        df["lower_bounds"] = [{"k": k, "v": v} for k, v in lo.items()]
        df["upper_bounds"] = [{"k": k, "v": v} for k, v in hi.items()]


@pytest.mark.parametrize("defect, fv, expected", [
    (_huge_format_version, 2, "MANIFEST_HEADER"),
    (_status_as_double, 2, "MANIFEST_UNREADABLE"),
    (_format_as_int, 2, "MANIFEST_UNREADABLE"),
    (_rows_past_64_bits, 2, "MANIFEST_COUNTS"),
    (_bound_records_renamed, 2, "BOUND_ORDER"),
], ids=lambda x: getattr(x, "__name__", str(x)))
def test_odd_avro_is_reported_alike_by_both_decoders(defect, fv, expected, tmp_path, monkeypatch):
    """Values past 64 bits, fields of the wrong Avro type, renamed map records: each is one
    finding (never a traceback, never a silent conversion), the same from polars and the lean
    decoder."""
    from validate_corpus.helpers import rewrite_list

    base = tables.build(tmp_path, fv, deletes=False)
    _raw_rewrite(base, defect)
    if defect is _rows_past_64_bits:
        rewrite_list(base, _list_says_three_files_and_no_rows)
    fast = validate_table(base.catalog, tables.IDENT)
    assert codes(fast, Severity.ERROR) == {expected}, describe(fast)
    if defect is _rows_past_64_bits:
        assert "added_rows_count 0 (entries: 18446744073709551616)" in describe(fast)
    monkeypatch.setenv("ICECTL_AVRO_READER", "lean")
    lean = validate_table(base.catalog, tables.IDENT)
    assert _findings(fast) == _findings(lean)


def test_entries_that_cannot_be_checked_are_one_finding_for_their_manifest(tmp_path, monkeypatch):
    """Should the checks fail on one manifest (a bug, a polars panic), that manifest gets a
    MANIFEST_UNREADABLE finding and the others are still checked: never a traceback."""
    import icectl.validate.entries as entries
    from helpers import append_files

    base = tables.build(tmp_path, 2, deletes=False)
    t = append_files(base.table, [tables.write_data_file(base.table, [99], ["x"], tables.day_of("2026-01-05"))])
    victim = t.manifests(t.metadata.current_snapshot)[0].manifest_path
    real = entries.check_entries

    def flaky(pending, ctx):
        if any(p.ref.manifest_path == victim for p in pending):
            raise RuntimeError("boom")
        return real(pending, ctx)
    monkeypatch.setattr(entries, "check_entries", flaky)
    report = validate_table(base.catalog, tables.IDENT)
    unreadable = [f for f in report.findings if f.code == "MANIFEST_UNREADABLE"]
    assert [(f.manifest, f.message) for f in unreadable] == [(victim, "its entries cannot be checked (RuntimeError: boom)")]
    assert report.checked.manifests == len(t.manifests(t.metadata.current_snapshot))


@pytest.mark.parametrize("fv", [1, 2, 3, 4])
def test_icectl_manifests_are_decoded_by_polars(fv, tmp_path, monkeypatch):
    """The fast path is the one taken: clean manifests of every version never need the lean
    decoder."""
    import icectl.formats.entries as entry_frame

    def refuse(*a, **k):
        raise AssertionError("the lean decoder was used")
    monkeypatch.setattr(entry_frame, "frame_from_records", refuse)
    base = tables.build(tmp_path, fv)
    report = validate_table(base.catalog, tables.IDENT, ValidateOptions(deep=True, all_snapshots=True))
    assert report.ok and report.checked.entries > 0, describe(report)


@pytest.mark.parametrize("name", ["bound-order", "duplicate-live-file", "second-deletion-vector", "manifest-garbage"])
def test_worker_threads_find_the_same(name, tmp_path):
    base = build_case(CASES[name], tmp_path)
    one = validate_table(base.catalog, tables.IDENT, ValidateOptions(workers=1, all_snapshots=True))
    two = validate_table(base.catalog, tables.IDENT, ValidateOptions(workers=2, all_snapshots=True))
    assert [(f.code, f.message, f.where) for f in one.findings] == [(f.code, f.message, f.where) for f in two.findings]
    assert one.checked == two.checked


def test_live_index_tells_which_manifest_sets_can_repeat_a_path():
    """A path live in two manifests (a merged manifest and one it replaced) repeats only in a
    snapshot that lists both; a manifest listing a path twice repeats it wherever it is listed."""
    import polars as pl

    from icectl.spec.metadata import Snapshot
    from icectl.validate.findings import Collector
    from icectl.validate.manifests import ManifestScan
    from icectl.validate.snapshots import LiveIndex, check_snapshot_files

    def scan(name, paths):
        s = ManifestScan(name)
        s.data_files = pl.DataFrame({"path": paths, "entry": list(range(len(paths))), "records": [1] * len(paths),
                                     "size": [1] * len(paths), "format": ["parquet"] * len(paths)},
                                    schema_overrides={"entry": pl.UInt32})
        return s

    a, b, c, d = scan("A", ["/p1", "/p2"]), scan("B", ["/p2", "/p3"]), scan("C", ["/p4"]), scan("D", ["/p5", "/p5"])
    e = scan("E", ["/p6", "/p2"])  # /p2 in three manifests: every pair of them can repeat it
    index = LiveIndex([a, b, c, d, e])
    pos = index.position
    assert not index.may_repeat({pos[id(a)], pos[id(c)]})
    assert index.may_repeat({pos[id(a)], pos[id(b)]})
    assert index.may_repeat({pos[id(b)], pos[id(e)]}) and index.may_repeat({pos[id(a)], pos[id(e)]})
    assert not index.may_repeat({pos[id(c)], pos[id(e)]})
    assert index.self_duplicates == {pos[id(d)]}
    assert index.may_repeat({pos[id(c)], pos[id(d)]})
    for members, expected in (([a, c], []), ([a, b, c], [("B", 0, "/p2")]), ([c, d], [("D", 1, "/p5")])):
        out = Collector()
        check_snapshot_files(Snapshot(1, 0), members, out, index=index)
        assert [(f.manifest, f.entry, f.file) for f in out.findings] == expected


def test_a_finding_a_command_fixes_names_it_in_text_and_json(tmp_path, no_config):
    build_case(CASES["missing-data-file"], tmp_path)
    code, out, err = cli(tmp_path, "-o", "json", "validate", "db.t", "--deep")
    assert code == 8
    f = next(f for f in json.loads(out)["findings"] if f["code"] == "FILE_MISSING")
    assert f["fix"] == "icectl repair db.t --dry-run"
    code, out, err = cli(tmp_path, "validate", "db.t", "--deep")
    assert "fix: icectl repair db.t --dry-run (FILE_MISSING)" in out


def test_a_broken_current_metadata_file_names_restore(tmp_path, no_config):
    build_case(CASES["truncated-json"], tmp_path)
    code, out, err = cli(tmp_path, "-o", "json", "validate", "db.t")
    assert code == 8
    f = json.loads(out)["findings"][0]
    assert (f["code"], f["fix"]) == ("META_INVALID_JSON", "icectl restore db.t --dry-run")


def test_every_fix_names_a_known_code_and_a_real_command():
    from icectl.cli.main import COMMANDS
    from icectl.validate.codes import FIXES

    names = set(COMMANDS)
    for code, template in FIXES.items():
        assert code in CODES
        words = template.format(table="db.t").split()
        assert words[0] == "icectl" and words[1] in names and words[2] == "db.t", template


def _mutated_snapshot(rng: random.Random, i: int) -> dict:
    s = {"snapshot-id": 1000 + i, "parent-snapshot-id": 999 + i if i else None, "sequence-number": i + 1,
         "timestamp-ms": 1_700_000_000_000 + i, "manifest-list": f"s3://b/t/metadata/snap-{i}.avro",
         "summary": {"operation": "append", "added-data-files": "1"}, "schema-id": 0}
    if s["parent-snapshot-id"] is None:
        del s["parent-snapshot-id"]
    odd = [True, False, None, "x", "", 0, -1, 1.5, [], {}, [1], {"operation": "append"}]
    for _ in range(rng.choice((0, 0, 1, 2))):
        key = rng.choice(list(s) + ["manifests", "first-row-id", "added-rows", "key-id", "extra", "summary",
                                    "sequence-number", "manifest-list"])
        what = rng.random()
        if what < 0.2:
            s.pop(key, None)
        elif what < 0.6:
            s[key] = rng.choice(odd)
        elif key == "summary":
            s[key] = {"operation": rng.choice(["append", "replace", "overwrite", "delete", "Append", "", None])}
        elif key == "manifest-list":
            s[key] = rng.choice(["relative/snap.avro", "/abs/snap.avro", ""])
        else:
            s[key] = rng.choice([0, -5, 7, 2**70])
    return s


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_the_usual_snapshot_shortcut_finds_what_every_rule_finds(version, monkeypatch):
    """Snapshots every writer writes skip the raw snapshot rules (issue 26: 100,000 of them); on
    snapshots with fields missing, of other JSON types or values, the findings are those of every
    rule, word for word, whether the file is split or parsed whole."""
    rng = random.Random(version)
    doc = {"format-version": version, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
           "location": "s3://b/t", "last-sequence-number": 500, "last-updated-ms": 1_800_000_000_000,
           "last-column-id": 1, "current-schema-id": 0,
           "schemas": [{"type": "struct", "schema-id": 0, "fields": [
               {"id": 1, "name": "x", "required": False, "type": "long"}]}],
           "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}], "last-partition-id": 999,
           "default-sort-order-id": 0, "sort-orders": [{"order-id": 0, "fields": []}],
           "snapshots": [_mutated_snapshot(rng, i) for i in range(400)], "next-row-id": 10**6}
    raw = json.dumps(doc).encode()

    def findings():
        out = Collector()
        check_metadata(raw, "s3://b/t/metadata/v1.metadata.json", out)
        return [(f.code, f.message, f.snapshot_id) for f in out.findings]

    with_shortcut = findings()
    monkeypatch.setattr("icectl.validate.metadata._usual_snapshot", lambda s, v: False)
    assert findings() == with_shortcut
    assert len({code for code, _, _ in with_shortcut}) >= 3  # the mutations break rules
