"""View metadata: the model (parse, write, read back) and ``validate`` of a view against the view
spec, on the view metadata files of Iceberg Java's and PyIceberg's own tests (view_fixtures/, with
their sources in its README), each judged as those implementations judge it, and on defects made
one at a time from a valid file (each reported with exactly its code)."""
from __future__ import annotations

import copy
import io
import json
import pathlib

import pytest

from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.errors import InvalidMetadataError, UnsupportedFormatVersionError
from icectl.spec.view import is_view_metadata, parse_view_metadata
from icectl.validate.codes import CODES, VIEW_CODES, Severity
from icectl.validate.findings import Collector
from icectl.validate.view import check_view_metadata

FIXTURES = pathlib.Path(__file__).resolve().parent / "view_fixtures"
REPO = pathlib.Path(__file__).resolve().parents[2]

# What Iceberg Java (TestViewMetadataParser) and PyIceberg (tests/test_view.py) say of each file,
# as the error codes icectl must report: none for a file they read.
JUDGED = {
    "java/ValidViewMetadata.json": set(),
    "java/ViewMetadataInvalidCurrentSchema.json": {"VIEW_VERSION_SCHEMA_MISSING"},
    "java/ViewMetadataInvalidCurrentVersion.json": {"VIEW_CURRENT_VERSION_MISSING"},
    "java/ViewMetadataMissingCurrentVersion.json": {"VIEW_FIELD_MISSING"},
    "java/ViewMetadataMissingLocation.json": {"VIEW_FIELD_MISSING"},
    "java/ViewMetadataMultipleSQLsForDialect.json": {"VIEW_DIALECT_DUPLICATE"},
    "pyiceberg/example_view_metadata_v1.json": set(),
    "pyiceberg/example_view_metadata_v1_multiple_versions.json": set(),
}


def check(raw: bytes | dict, location: str = "v.metadata.json") -> tuple[Collector, object]:
    out = Collector()
    data = json.dumps(raw).encode() if isinstance(raw, dict) else raw
    return out, check_view_metadata(data, location, out)


def errors(out: Collector) -> set[str]:
    return {f.code for f in out.findings if f.severity == Severity.ERROR}


def test_every_fixture_is_judged():
    assert sorted(str(p.relative_to(FIXTURES)) for p in FIXTURES.rglob("*.json")) == sorted(JUDGED)


@pytest.mark.parametrize("name", sorted(JUDGED))
def test_fixture_is_judged_as_its_implementation_judges_it(name):
    out, md = check((FIXTURES / name).read_bytes(), name)
    assert errors(out) == JUDGED[name], [(f.code, f.message) for f in out.findings]
    assert all(f.file == name for f in out.findings)
    if name.endswith(("MissingCurrentVersion.json", "MissingLocation.json")):
        assert md is None  # Java's parser fails on them too
        with pytest.raises(InvalidMetadataError, match="current-version-id|location"):
            parse_view_metadata((FIXTURES / name).read_bytes(), source=name)
    else:
        assert md is not None  # Java parses the others


def test_java_valid_view_is_read_as_java_reads_it():
    md = parse_view_metadata((FIXTURES / "java/ValidViewMetadata.json").read_bytes())
    assert md.view_uuid == "fa6506c3-7681-40c8-86dc-e36561f83385" and md.location == "s3://bucket/test/location"
    assert md.current_version_id == 2 and [v.version_id for v in md.versions] == [1, 2]
    v = md.current_version
    assert v.sql_for("SPARK-SQL") == "select 1 id, 'abc' data" and v.default_catalog == "some-catalog"
    assert v.default_namespace == () and v.summary == {"user": "some-user"} and v.timestamp_ms == 5555
    assert [f.name for f in md.schema.fields] == ["x", "y", "z"] and md.schema.fields[1].doc == "comment"
    assert [(e.timestamp_ms, e.version_id) for e in md.version_log] == [(4353, 1), (5555, 2)]
    assert md.properties == {"some-key": "some-value", "comment": "some-comment"}
    assert dict(md.extra) == {"current-schema-id": 0}  # not a view field: kept, as it was


def test_current_version_and_schema_fail_as_java_fails():
    md = parse_view_metadata((FIXTURES / "java/ViewMetadataInvalidCurrentVersion.json").read_bytes())
    with pytest.raises(InvalidMetadataError, match=r"cannot find current version 1234 in view versions: \[1, 2\]"):
        md.current_version
    md = parse_view_metadata((FIXTURES / "java/ViewMetadataInvalidCurrentSchema.json").read_bytes())
    with pytest.raises(InvalidMetadataError, match=r"cannot find current schema with id 1234 in schemas: \[1\]"):
        md.schema


@pytest.mark.parametrize("name", sorted(n for n, e in JUDGED.items() if "Missing" not in n))
def test_written_json_reads_back_the_same(name):
    md = parse_view_metadata((FIXTURES / name).read_bytes())
    again = parse_view_metadata(md.to_bytes())
    assert again == md
    src, written = json.loads((FIXTURES / name).read_bytes()), json.loads(md.to_bytes())
    if not src.get("properties"):
        src.pop("properties", None)  # Java's writer leaves out empty properties
    assert set(written) == set(src)
    for key in ("view-uuid", "location", "current-version-id", "versions", "version-log", "properties"):
        assert written.get(key) == src.get(key), key
    assert list(md.to_json())[:3] == ["view-uuid", "format-version", "location"]  # Java's order


def test_is_view_metadata_tells_views_from_tables():
    assert is_view_metadata(json.loads((FIXTURES / "java/ValidViewMetadata.json").read_bytes()))
    assert not is_view_metadata({"format-version": 2, "table-uuid": "x", "location": "/t", "metadata-log": []})


def test_a_format_version_other_than_1_is_refused():
    obj = json.loads((FIXTURES / "java/ValidViewMetadata.json").read_bytes())
    obj["format-version"] = 2
    with pytest.raises(UnsupportedFormatVersionError, match="view format-version 2"):
        parse_view_metadata(obj)


# -- one defect at a time -------------------------------------------------------------------------------

def _valid() -> dict:
    return json.loads((FIXTURES / "pyiceberg/example_view_metadata_v1_multiple_versions.json").read_bytes())


def _set(path: str, value):
    def apply(obj: dict) -> None:
        *parents, last = path.split("/")
        for p in parents:
            obj = obj[int(p)] if isinstance(obj, list) else obj[p]
        if value is _DELETE:
            del obj[last]
        elif isinstance(obj, list) and int(last) == len(obj):
            obj.append(value)
        else:
            obj[int(last) if isinstance(obj, list) else last] = value
    return apply


_DELETE = object()
DEFECTS = {
    "format version 2": (_set("format-version", 2), "VIEW_FORMAT_VERSION"),
    "format version a string": (_set("format-version", "1"), "VIEW_FORMAT_VERSION"),
    "no view-uuid": (_set("view-uuid", _DELETE), "VIEW_FIELD_MISSING"),
    "view-uuid not a uuid": (_set("view-uuid", "not-a-uuid"), "VIEW_UUID"),
    "location a number": (_set("location", 7), "VIEW_FIELD_TYPE"),
    "no versions": (_set("versions", _DELETE), "VIEW_FIELD_MISSING"),
    "no version-log": (_set("version-log", _DELETE), "VIEW_FIELD_MISSING"),
    "no schemas": (_set("schemas", _DELETE), "VIEW_FIELD_MISSING"),
    "version without summary": (_set("versions/0/summary", _DELETE), "VIEW_FIELD_MISSING"),
    "summary value a number": (_set("versions/0/summary", {"engine-name": 3}), "VIEW_FIELD_TYPE"),
    "version without default-namespace": (_set("versions/1/default-namespace", _DELETE), "VIEW_FIELD_MISSING"),
    "default-namespace not strings": (_set("versions/1/default-namespace", [1]), "VIEW_FIELD_TYPE"),
    "default-catalog a number": (_set("versions/1/default-catalog", 5), "VIEW_FIELD_TYPE"),
    "duplicate version id": (_set("versions/2", {"version-id": 1, "timestamp-ms": 1602638573874, "schema-id": 1,
                                                 "summary": {}, "default-namespace": ["default"],
                                                 "representations": [{"type": "sql", "sql": "SELECT 0",
                                                                      "dialect": "spark"}]}),
                             "VIEW_VERSION_ID_DUPLICATE"),
    "duplicate schema id": (_set("schemas/2", {"type": "struct", "schema-id": 1, "fields": []}),
                            "VIEW_SCHEMA_ID_DUPLICATE"),
    "schema not a struct": (_set("schemas/0/type", "list"), "VIEW_SCHEMA_INVALID"),
    "field id twice in a schema": (_set("schemas/0/fields", [{"id": 1, "name": "a", "required": True, "type": "long"},
                                                            {"id": 1, "name": "b", "required": True, "type": "long"}]),
                                   "FIELD_ID_DUPLICATE"),
    "version schema missing": (_set("versions/0/schema-id", 9), "VIEW_VERSION_SCHEMA_MISSING"),
    "current version missing": (_set("current-version-id", 3), "VIEW_CURRENT_VERSION_MISSING"),
    "representation without type": (_set("versions/1/representations/0", {"sql": "SELECT 2", "dialect": "spark"}),
                                    "VIEW_REPRESENTATION_INVALID"),
    "sql representation without dialect": (_set("versions/1/representations/0", {"type": "sql", "sql": "SELECT 2"}),
                                           "VIEW_REPRESENTATION_INVALID"),
    "representation of another type": (_set("versions/1/representations/1", {"type": "substrait", "plan": "x"}),
                                       "VIEW_REPRESENTATION_UNKNOWN"),
    "dialect twice, case apart": (_set("versions/1/representations/1", {"type": "sql", "sql": "SELECT 3",
                                                                        "dialect": "Spark"}), "VIEW_DIALECT_DUPLICATE"),
    "log names an unknown version": (_set("version-log/0/version-id", 7), "VIEW_VERSION_LOG_UNKNOWN"),
    "log goes back in time": (_set("version-log/1/timestamp-ms", 1), "VIEW_VERSION_LOG_ORDER"),
    "log does not end at the current version": (_set("current-version-id", 1), "VIEW_VERSION_LOG_CURRENT"),
    "history size not positive": (_set("properties", {"version.history.num-entries": "0"}), "VIEW_PROPERTY"),
}


def test_the_valid_base_has_no_findings():
    out, md = check(_valid())
    assert out.findings == [] and md is not None


@pytest.mark.parametrize("name", sorted(DEFECTS))
def test_each_defect_is_reported_with_its_code(name):
    obj = copy.deepcopy(_valid())
    apply, code = DEFECTS[name]
    apply(obj)
    out, _ = check(obj)
    assert {f.code for f in out.findings} == {code}, [(f.code, f.message) for f in out.findings]


def test_every_view_code_is_exercised():
    exercised = {code for _, code in DEFECTS.values()} | {c for cs in JUDGED.values() for c in cs}
    assert set(VIEW_CODES) - exercised == {"VIEW_UNREADABLE", "VIEW_INVALID_JSON"}


@pytest.mark.parametrize("raw", [b"", b"[1, 2]", b"{not json", b"\xff\xfe"])
def test_malformed_files_are_findings(raw):
    out, md = check(raw)
    assert md is None and {f.code for f in out.findings} == {"VIEW_INVALID_JSON"}


def test_view_codes_are_documented_in_the_views_page():
    page = (REPO / "docs" / "views.md").read_text()
    for code in VIEW_CODES:
        sev, _, _ = CODES[code]
        assert f"| `{code}` | {sev.value} |" in page, code


# -- validate on the command line ---------------------------------------------------------------------

def cli(*args: str) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run(list(args), env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


@pytest.mark.parametrize("name", sorted(JUDGED))
def test_validate_a_view_metadata_file_by_path(name, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    path = str(FIXTURES / name)
    code, out, err = cli("-o", "json", "validate", path)
    report = json.loads(out)
    assert code == (8 if JUDGED[name] else 0), err
    assert report["table"] == path and report["metadata_location"] == path and report["ok"] == (not JUDGED[name])
    assert {f["code"] for f in report["findings"] if f["severity"] == "error"} == JUDGED[name]
    code, out, err = cli("validate", path)
    assert f"view {path}: view format version 1" in out
    if JUDGED[name]:
        assert "docs/reference/validation-codes.md" in err and err.count("\n") <= 2
