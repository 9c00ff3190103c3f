"""The read and create commands end to end through ``icectl.cli.main.run``: ``create`` (compact
and JSON schemas, every partition transform, sort orders, properties, format versions 1-4,
--location), then ``describe``, ``snapshots``, ``files`` and ``list`` with exact JSON shapes and
the key facts in the human output."""
from __future__ import annotations

import io
import json
import os

import pytest

from icectl.table.updates import SetSnapshotRef

from icectl.errors import ExitCode
from icectl.table.transaction import commit

CREATED_KEYS = {"name", "location", "metadata_location", "format_version", "table_uuid", "schema", "partition_spec",
                "sort_order", "properties", "dry_run", "applied", "commits"}
DESCRIBE_KEYS = {"name", "table_uuid", "location", "metadata_location", "format_version", "last_updated_ms",
                 "last_sequence_number", "last_column_id", "next_row_id", "current_schema_id", "schema", "schemas",
                 "default_spec_id", "partition_specs", "default_sort_order_id", "sort_orders", "properties", "refs",
                 "current_snapshot", "totals", "snapshots", "snapshot_log_size", "metadata_log_size", "statistics",
                 "partition_statistics"}
CURRENT_SNAPSHOT_KEYS = {"snapshot_id", "parent_snapshot_id", "sequence_number", "timestamp_ms", "committed_at",
                         "operation", "schema_id", "manifest_list", "summary", "first_row_id", "added_rows"}
TOTALS_KEYS = {"data_files", "delete_files", "position_delete_files", "equality_delete_files", "deletion_vectors",
               "records", "position_delete_records", "equality_delete_records", "data_bytes", "delete_bytes"}
REF_KEYS = {"name", "type", "snapshot_id", "min_snapshots_to_keep", "max_snapshot_age_ms", "max_ref_age_ms"}
SNAPSHOT_KEYS = {"snapshot_id", "parent_snapshot_id", "timestamp_ms", "committed_at", "operation", "sequence_number",
                 "schema_id", "added_data_files", "removed_data_files", "added_delete_files", "removed_delete_files",
                 "added_records", "removed_records", "refs", "is_current", "in_main", "manifest_list", "summary",
                 "first_row_id", "added_rows"}
FILE_KEYS = {"content", "file_path", "file_format", "spec_id", "partition", "record_count", "file_size_in_bytes",
             "data_sequence_number", "file_sequence_number", "snapshot_id", "status", "first_row_id",
             "referenced_data_file", "content_offset", "content_size_in_bytes", "equality_ids"}


class Workspace:
    def __init__(self, root):
        self.root = root
        self.uri = f"sqlite:///{root}/catalog.db"
        self.warehouse = str(root / "warehouse")

    def run(self, *args: str) -> tuple[int, str, str]:
        from icectl.cli.context import Env
        from icectl.cli.main import run

        env = Env(stdout=io.StringIO(), stderr=io.StringIO())
        code = run(["--uri", self.uri, "--warehouse", self.warehouse, *args], env)
        return code, env.stdout.getvalue(), env.stderr.getvalue()

    def ok(self, *args: str) -> str:
        code, out, err = self.run(*args)
        assert code == 0, err
        assert err == ""
        return out

    def json(self, *args: str):
        return json.loads(self.ok(*args, "-o", "json"))

    def table(self, name: str):
        from icectl.catalog import build_catalog, parse_identifier, resolve_catalog_config
        from icectl.table.loaded import load_table

        catalog = build_catalog(resolve_catalog_config(None, uri=self.uri, warehouse=self.warehouse))
        return load_table(catalog, parse_identifier(name))


@pytest.fixture
def ws(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.chdir(tmp_path)
    return Workspace(tmp_path)


def _metadata_file(created: dict) -> dict:
    with open(created["metadata_location"]) as f:
        return json.load(f)


# -- create ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_create_compact_schema(ws, version):
    schema = "id:long!, name:string, tags:list<string>, attrs:map<string, int>, point:struct<x:double!, y:double>"
    created = ws.json("create", "--yes", "db.t", "--schema", schema, "--format-version", str(version))
    assert set(created) == CREATED_KEYS
    assert created["name"] == "db.t" and created["format_version"] == version
    assert created["location"] == os.path.join(ws.warehouse, "db", "t")
    assert created["metadata_location"].startswith(created["location"] + "/metadata/00000-")
    assert created["metadata_location"].endswith(".metadata.json")
    assert os.path.exists(created["metadata_location"])
    assert created["schema"] == {"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "name", "required": False, "type": "string"},
        {"id": 3, "name": "tags", "required": False,
         "type": {"type": "list", "element-id": 6, "element": "string", "element-required": False}},
        {"id": 4, "name": "attrs", "required": False,
         "type": {"type": "map", "key-id": 7, "key": "string", "value-id": 8, "value": "int", "value-required": False}},
        {"id": 5, "name": "point", "required": False, "type": {"type": "struct", "fields": [
            {"id": 9, "name": "x", "required": True, "type": "double"},
            {"id": 10, "name": "y", "required": False, "type": "double"}]}},
    ]}
    assert created["partition_spec"] == {"spec-id": 0, "fields": []}
    assert created["sort_order"] == {"order-id": 0, "fields": []}
    assert created["properties"] == {}

    doc = _metadata_file(created)
    assert doc["format-version"] == version and doc["table-uuid"] == created["table_uuid"]
    assert doc["last-column-id"] == 10 and doc["current-snapshot-id"] == -1 and doc["snapshots"] == []
    assert ("schema" in doc) == (version == 1) and ("partition-spec" in doc) == (version == 1)
    assert ("last-sequence-number" in doc) == (version >= 2)
    assert ("next-row-id" in doc) == (version >= 3)
    if version >= 3:
        assert doc["next-row-id"] == 0
    assert doc["location"] == created["location"]

    text = ws.ok("create", "--yes", "db.t2", "--schema", schema, "--format-version", str(version))
    assert "created db.t2" in text and f"format version {version}" in text
    for name in ("id", "name", "tags", "attrs", "point", "element", "key", "value", "x", "y"):
        assert name in text


def test_create_dry_run_writes_nothing(ws):
    """--dry-run shows what would be created; neither the SQLite catalog nor the folder appears."""
    args = ["create", "db.t", "--schema", "id:long!, ts:timestamptz", "--partition-by", "day(ts)", "--sort-by",
            "id desc", "-P", "owner=me", "--format-version", "3"]
    d = ws.json(*args, "--dry-run")
    assert set(d) == CREATED_KEYS and d["dry_run"] is True and d["applied"] is False
    assert d["metadata_location"] is None and d["table_uuid"] is None
    assert d["location"] == os.path.join(ws.warehouse, "db", "t") and d["format_version"] == 3
    assert [f["name"] for f in d["schema"]["fields"]] == ["id", "ts"]
    assert d["partition_spec"]["fields"][0]["transform"] == "day" and d["properties"] == {"owner": "me"}
    assert d["sort_order"]["fields"][0]["direction"] == "desc"
    text = ws.ok(*args, "--dry-run")
    for fact in ("db.t: table to create, format version 3 (dry run: nothing written)", d["location"], "ts_day",
                 "owner", "desc"):
        assert fact in text, fact
    assert sorted(os.listdir(ws.root)) == [], "a dry run wrote something"  # no catalog.db, no warehouse
    # Without --yes and without a terminal: the plan, then exit 6; still nothing written.
    code, out, err = ws.run(*args)
    assert code == ExitCode.REFUSED and "table to create" in out and "refusing to create the table" in err
    code, out, err = ws.run(*args, "-o", "json")
    assert code == ExitCode.REFUSED and json.loads(out)["applied"] is False
    assert sorted(os.listdir(ws.root)) == []
    created = ws.json(*args, "--yes")
    assert created["applied"] is True and created["dry_run"] is False and created["table_uuid"]
    assert _metadata_file(created)["table-uuid"] == created["table_uuid"]
    code, _, err = ws.run(*args, "--dry-run")  # a dry run checks the name too
    assert code == ExitCode.CONFLICT and "already exists" in err


@pytest.mark.parametrize("prefix", ["", "@"])
def test_create_from_json_schema_file(ws, prefix):
    schema = {"type": "struct", "schema-id": 7, "identifier-field-ids": [1], "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long", "doc": "the key"},
        {"id": 2, "name": "payload", "required": False, "type": {"type": "struct", "fields": [
            {"id": 3, "name": "v", "required": False, "type": "decimal(10, 3)"}]}},
        {"id": 4, "name": "seen", "required": False, "type": "timestamp_ns"},
    ]}
    path = ws.root / ("schema.json" if not prefix else "schema.txt")
    path.write_text(json.dumps(schema))
    created = ws.json("create", "--yes", "db.j", "--schema", prefix + str(path), "--format-version", "3")
    assert created["schema"]["schema-id"] == 0  # a new table's first schema
    assert created["schema"]["identifier-field-ids"] == [1]
    assert created["schema"]["fields"] == schema["fields"]
    assert _metadata_file(created)["last-column-id"] == 4


def test_create_partition_by_every_transform(ws):
    schema = "id:long!, name:string, ts1:timestamp, ts2:timestamptz, d:date, ts3:timestamp"
    expr = "id, bucket(16, id), truncate(4, name), year(ts1), month(ts2), day(d), hour(ts3), void(name)"
    created = ws.json("create", "--yes", "db.p", "--schema", schema, "--partition-by", expr)
    assert created["partition_spec"] == {"spec-id": 0, "fields": [
        {"name": "id", "transform": "identity", "source-id": 1, "field-id": 1000},
        {"name": "id_bucket", "transform": "bucket[16]", "source-id": 1, "field-id": 1001},
        {"name": "name_trunc", "transform": "truncate[4]", "source-id": 2, "field-id": 1002},
        {"name": "ts1_year", "transform": "year", "source-id": 3, "field-id": 1003},
        {"name": "ts2_month", "transform": "month", "source-id": 4, "field-id": 1004},
        {"name": "d_day", "transform": "day", "source-id": 5, "field-id": 1005},
        {"name": "ts3_hour", "transform": "hour", "source-id": 6, "field-id": 1006},
        {"name": "name_null", "transform": "void", "source-id": 2, "field-id": 1007},
    ]}
    doc = _metadata_file(created)
    assert doc["last-partition-id"] == 1007 and doc["default-spec-id"] == 0
    described = ws.json("describe", "db.p")
    assert described["partition_specs"] == [created["partition_spec"]]
    text = ws.ok("describe", "db.p")
    for fact in ("id_bucket", "bucket[16]", "truncate[4]", "ts3_hour", "name_null", "void"):
        assert fact in text


def test_create_partition_aliases(ws):
    created = ws.json("create", "--yes", "db.a", "--schema", "id:long, ts:timestamptz", "--partition-by",
                      "bucket(id, 8), days(ts)")
    assert [(f["name"], f["transform"]) for f in created["partition_spec"]["fields"]] == \
        [("id_bucket", "bucket[8]"), ("ts_day", "day")]


def test_create_sort_by(ws):
    created = ws.json("create", "--yes", "db.s", "--schema", "id:long!, ts:timestamptz, name:string", "--sort-by",
                      "id desc nulls last, ts, bucket(4, name) asc nulls last, day(ts) desc")
    assert created["sort_order"] == {"order-id": 1, "fields": [
        {"transform": "identity", "source-id": 1, "direction": "desc", "null-order": "nulls-last"},
        {"transform": "identity", "source-id": 2, "direction": "asc", "null-order": "nulls-first"},
        {"transform": "bucket[4]", "source-id": 3, "direction": "asc", "null-order": "nulls-last"},
        {"transform": "day", "source-id": 2, "direction": "desc", "null-order": "nulls-last"},
    ]}
    doc = _metadata_file(created)
    assert doc["default-sort-order-id"] == 1
    assert doc["sort-orders"] == [created["sort_order"]]
    text = ws.ok("describe", "db.s")
    assert "1 (default)" in text and "desc" in text and "nulls-last" in text and "bucket[4](name)" in text


def test_create_properties(ws):
    created = ws.json("create", "--yes", "db.pr", "--schema", "id:long", "-P", "owner=data-eng", "--property",
                      "write.format.default=parquet", "-P", "expr=a=b", "-P", "empty=")
    want = {"owner": "data-eng", "write.format.default": "parquet", "expr": "a=b", "empty": ""}
    assert created["properties"] == want
    assert _metadata_file(created)["properties"] == want
    assert ws.json("describe", "db.pr")["properties"] == want
    text = ws.ok("describe", "db.pr")
    assert "owner" in text and "data-eng" in text and "write.format.default" in text


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_create_with_location(ws, version):
    created = ws.json("create", "--yes", "db.l", "--schema", "id:long", "--location", "elsewhere/tbl",
                      "--format-version", str(version))
    location = str(ws.root / "elsewhere" / "tbl")
    assert created["location"] == location
    assert created["metadata_location"].startswith(location + "/metadata/")
    assert ws.json("describe", "db.l")["location"] == location
    assert not os.path.exists(os.path.join(ws.warehouse, "db", "l"))


def test_create_v3_types_and_defaults_from_json(ws):
    schema = {"type": "struct", "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "v", "required": False, "type": "variant"},
        {"id": 3, "name": "status", "required": True, "type": "string", "initial-default": "new",
         "write-default": "new"}]}
    path = ws.root / "s.json"
    path.write_text(json.dumps(schema))
    created = ws.json("create", "--yes", "db.v3", "--schema", str(path), "--format-version", "3")
    assert created["schema"]["fields"][2]["initial-default"] == "new"
    code, out, err = ws.run("create", "--yes", "db.v2", "--schema", str(path), "--format-version", "2")
    assert code == int(ExitCode.USAGE) and "format version 3" in err


# -- a table with history --------------------------------------------------------------------------------

DAY = 19723  # 2024-01-01


def _data(location: str, name: str, records: int, day: int = DAY):
    from icectl.formats.manifest import DataFile

    return DataFile(f"{location}/data/ts_day={day}/{name}.parquet", "parquet", (day,), records, records * 100)


@pytest.fixture(params=[2, 3])
def history(request, ws):
    """db.events: s1 (a, b) <- s2 (c) <- s4 (equality deletes + position deletes or a DV) on
    main; s1 <- s3 (d) on branch dev; tag t1 at s1."""
    from icectl.formats.manifest import DataFile, FileContent
    from icectl.spec.metadata import SnapshotRef
    from helpers import append_files

    version = request.param
    ws.ok("create", "--yes", "db.events", "--schema", "id:long!, ts:timestamptz, name:string", "--partition-by", "day(ts)",
          "--format-version", str(version))
    t = ws.table("db.events")
    loc = t.location
    files = {n: _data(loc, n, r) for n, r in (("a", 10), ("b", 20), ("c", 5), ("d", 7))}
    t = append_files(t, [files["a"], files["b"]])
    s1 = t.metadata.current_snapshot_id
    t = commit(t, [SetSnapshotRef("t1", SnapshotRef(s1, "tag", max_ref_age_ms=86_400_000)),
                  SetSnapshotRef("dev", SnapshotRef(s1, "branch", min_snapshots_to_keep=2))])
    t = append_files(t, [files["c"]])
    s2 = t.metadata.current_snapshot_id
    t = append_files(t, [files["d"]], branch="dev")
    s3 = t.metadata.refs["dev"].snapshot_id
    eq = DataFile(f"{loc}/data/ts_day={DAY}/eq.parquet", "parquet", (DAY,), 2, 200,
                  content=FileContent.EQUALITY_DELETES, equality_ids=[1])
    if version >= 3:
        pos = DataFile(f"{loc}/data/ts_day={DAY}/a-dv.puffin", "puffin", (DAY,), 3, 400,
                       content=FileContent.POSITION_DELETES, referenced_data_file=files["a"].file_path,
                       content_offset=4, content_size_in_bytes=44)
    else:
        pos = DataFile(f"{loc}/data/ts_day={DAY}/pos.parquet", "parquet", (DAY,), 3, 300,
                       content=FileContent.POSITION_DELETES)
    t = append_files(t, [eq, pos])
    s4 = t.metadata.current_snapshot_id
    files.update(eq=eq, pos=pos)
    return {"ws": ws, "version": version, "table": t, "s": [None, s1, s2, s3, s4], "files": files, "location": loc}


def test_describe(history):
    ws, v, (_, s1, s2, s3, s4) = history["ws"], history["version"], history["s"]
    t = history["table"]
    d = ws.json("describe", "db.events")
    assert set(d) == DESCRIBE_KEYS
    assert d["name"] == "db.events" and d["format_version"] == v and d["location"] == history["location"]
    assert d["metadata_location"] == t.metadata_location and d["table_uuid"] == t.metadata.table_uuid
    assert d["last_sequence_number"] == 4 and d["last_column_id"] == 3
    assert d["next_row_id"] == (42 if v >= 3 else None)  # 10 + 20 + 5 + 7 rows added
    assert d["current_schema_id"] == 0 and d["schemas"] == [d["schema"]] and d["schema"]["fields"][0]["name"] == "id"
    assert d["default_spec_id"] == 0 and d["partition_specs"][0]["fields"][0]["name"] == "ts_day"
    assert d["default_sort_order_id"] == 0 and d["sort_orders"] == [{"order-id": 0, "fields": []}]
    assert d["snapshots"] == 4 and d["snapshot_log_size"] == 3
    assert d["statistics"] == [] and d["partition_statistics"] == []
    assert d["metadata_log_size"] == 5  # create + 5 commits = 6 files; the log holds the 5 before
    for r in d["refs"]:
        assert set(r) == REF_KEYS
    assert [(r["name"], r["type"], r["snapshot_id"]) for r in d["refs"]] == \
        [("main", "branch", s4), ("dev", "branch", s3), ("t1", "tag", s1)]
    dev = d["refs"][1]
    assert dev["min_snapshots_to_keep"] == 2 and dev["max_ref_age_ms"] is None
    assert d["refs"][2]["max_ref_age_ms"] == 86_400_000
    cur = d["current_snapshot"]
    assert set(cur) == CURRENT_SNAPSHOT_KEYS
    assert cur["snapshot_id"] == s4 and cur["parent_snapshot_id"] == s2 and cur["sequence_number"] == 4
    assert cur["operation"] == "delete" and cur["schema_id"] == 0
    assert cur["committed_at"].endswith("Z") and cur["summary"]["operation"] == "delete"
    assert cur["summary"]["total-records"] == "35" and cur["summary"]["total-data-files"] == "3"
    assert cur["summary"]["added-delete-files"] == "2" and cur["summary"]["total-delete-files"] == "2"
    if v >= 3:
        assert cur["first_row_id"] == 42 and cur["added_rows"] == 0
    else:
        assert cur["first_row_id"] is None and cur["added_rows"] is None
    totals = d["totals"]
    assert set(totals) == TOTALS_KEYS
    assert totals["data_files"] == 3 and totals["records"] == 35
    assert totals["equality_delete_files"] == 1 and totals["equality_delete_records"] == 2
    assert totals["delete_files"] == 2 and totals["position_delete_records"] == 3
    if v >= 3:
        assert totals["deletion_vectors"] == 1 and totals["position_delete_files"] == 0
        assert totals["delete_bytes"] == 200 + 44  # a DV counts by its blob
    else:
        assert totals["deletion_vectors"] == 0 and totals["position_delete_files"] == 1
        assert totals["delete_bytes"] == 500
    assert totals["data_bytes"] == 3500

    text = ws.ok("describe", "db.events")
    for fact in ("db.events", history["location"], str(s4), "delete", "format version", str(v), "ts_day",
                 "main", "dev", "t1", "branch", "tag", "35"):
        assert fact in text, fact
    if v >= 3:
        assert "next row id" in text and "42" in text
    else:
        assert "next row id" not in text


def test_snapshots(history):
    ws, (_, s1, s2, s3, s4) = history["ws"], history["s"]
    rows = ws.json("snapshots", "db.events")
    for r in rows:
        assert set(r) == SNAPSHOT_KEYS
    assert [r["snapshot_id"] for r in rows] == [s4, s3, s2, s1]  # newest first
    by_id = {r["snapshot_id"]: r for r in rows}
    assert [by_id[s]["parent_snapshot_id"] for s in (s1, s2, s3, s4)] == [None, s1, s1, s2]
    assert [by_id[s]["sequence_number"] for s in (s1, s2, s3, s4)] == [1, 2, 3, 4]
    assert [by_id[s]["operation"] for s in (s1, s2, s3, s4)] == ["append", "append", "append", "delete"]
    assert [by_id[s]["refs"] for s in (s1, s2, s3, s4)] == [["t1"], [], ["dev"], ["main"]]
    assert [by_id[s]["in_main"] for s in (s1, s2, s3, s4)] == [True, True, False, True]
    assert [by_id[s]["is_current"] for s in (s1, s2, s3, s4)] == [False, False, False, True]
    assert [by_id[s]["added_data_files"] for s in (s1, s2, s3, s4)] == [2, 1, 1, None]
    assert [by_id[s]["added_records"] for s in (s1, s2, s3, s4)] == [30, 5, 7, None]
    assert by_id[s4]["added_delete_files"] == 2 and by_id[s1]["removed_data_files"] is None
    assert all(r["schema_id"] == 0 and r["committed_at"].endswith("Z") for r in rows)
    assert all(r["manifest_list"].endswith(".avro") for r in rows)
    if history["version"] >= 3:
        assert [by_id[s]["first_row_id"] for s in (s1, s2, s3)] == [0, 30, 35]
        assert [by_id[s]["added_rows"] for s in (s1, s2, s3)] == [30, 5, 7]
    # Timestamps never go backwards along the commit order.
    ts = [by_id[s]["timestamp_ms"] for s in (s1, s2, s3, s4)]
    assert ts == sorted(ts)

    assert [r["snapshot_id"] for r in ws.json("snapshots", "db.events", "--ref", "dev")] == [s3, s1]
    assert [r["snapshot_id"] for r in ws.json("snapshots", "db.events", "--ref", "main")] == [s4, s2, s1]
    assert [r["snapshot_id"] for r in ws.json("snapshots", "db.events", "--ref", "t1")] == [s1]
    assert [r["snapshot_id"] for r in ws.json("snapshots", "db.events", "--limit", "2")] == [s4, s3]
    assert [r["snapshot_id"] for r in ws.json("snapshots", "db.events", "-n", "1", "--ref", "dev")] == [s3]
    assert ws.json("snapshots", "db.events", "--limit", "0") == []
    since = str(by_id[s2]["timestamp_ms"])
    got = [r["snapshot_id"] for r in ws.json("snapshots", "db.events", "--since", since)]
    assert got[-1] == s2 and set(got) == {s2, s3, s4} - {s for s in (s3, s4) if by_id[s]["timestamp_ms"] < int(since)}
    assert ws.json("snapshots", "db.events", "--since", by_id[s2]["committed_at"]) == \
        ws.json("snapshots", "db.events", "--since", since)
    assert [r["snapshot_id"] for r in ws.json("snapshots", "db.events", "--since", "3650d")] == [s4, s3, s2, s1]
    assert ws.json("snapshots", "db.events", "--since", "2999-01-01") == []

    text = ws.ok("snapshots", "db.events")
    for fact in (str(s1), str(s2), str(s3), str(s4), "append", "delete", "dev", "t1", "main"):
        assert fact in text, fact


def test_snapshots_tree(history):
    ws, (_, s1, s2, s3, s4) = history["ws"], history["s"]
    tree = ws.json("snapshots", "db.events", "--tree")
    assert set(tree) == {"roots"}
    [root] = tree["roots"]

    def shape(run):
        assert set(run) == {"snapshots"}
        out = []
        for n in run["snapshots"]:
            assert set(n) == {"snapshot_id", "parent_snapshot_id", "sequence_number", "operation", "committed_at",
                              "branches", "tags", "forks"}
            out.append((n["snapshot_id"], n["branches"], n["tags"], [shape(f) for f in n["forks"]]))
        return out

    # main's history is the run; dev forks from s1
    assert shape(root) == [(s1, [], ["t1"], [[(s3, ["dev"], [], [])]]), (s2, [], [], []), (s4, ["main"], [], [])]
    text = ws.ok("snapshots", "db.events", "--tree")
    for fact in (str(s1), str(s2), str(s3), str(s4), "(branch main)", "(branch dev)", "(tag t1)"):
        assert fact in text, fact
    lines = text.splitlines()
    at = {s: next(i for i, line in enumerate(lines) if str(s) in line) for s in (s1, s2, s3, s4)}
    indent = {s: len(lines[at[s]]) - len(lines[at[s]].lstrip(" |`-")) for s in at}
    # Parents come before children; a run keeps its indentation, a fork is deeper.
    assert at[s1] < at[s3] < at[s2] < at[s4]
    assert indent[s1] == indent[s2] == indent[s4] < indent[s3]
    assert f"`-- {s3}" in text and not any(ch in text for ch in "\u2500\u2502\u2514\u251c")


def test_snapshots_tree_of_a_long_history_is_shallow(ws):
    """5,000 snapshots in a line: one run (the nested shape they replace overflowed json's
    recursion limit at a few hundred)."""
    from icectl.spec.metadata import Snapshot

    ws.ok("create", "--yes", "db.long", "--schema", "id:long")
    t = ws.table("db.long")
    snaps, parent = [], None
    for i in range(5000):
        sid = 1000 + i
        snaps.append(Snapshot(sid, 1_700_000_000_000 + i, parent_snapshot_id=parent, sequence_number=i + 1,
                              manifest_list=f"{t.location}/metadata/snap-{sid}.avro",
                              summary={"operation": "append"}, schema_id=0))
        parent = sid
    from icectl.spec.metadata import SnapshotRef

    from icectl.table.updates import AddSnapshot

    commit(t, [AddSnapshot(s) for s in snaps] + [SetSnapshotRef("main", SnapshotRef(parent, "branch"))])
    tree = ws.json("snapshots", "db.long", "--tree")
    [run] = tree["roots"]
    assert [n["snapshot_id"] for n in run["snapshots"]] == list(range(1000, 6000))
    assert run["snapshots"][-1]["branches"] == ["main"]
    text = ws.ok("snapshots", "db.long", "--tree")
    assert len(text.splitlines()) == 5001 and max(len(line) for line in text.splitlines()[1:]) < 80


def test_files(history):
    ws, v, (_, s1, s2, s3, s4) = history["ws"], history["version"], history["s"]
    f = history["files"]
    rows = ws.json("files", "db.events")
    for r in rows:
        assert set(r) == FILE_KEYS
    by_path = {r["file_path"]: r for r in rows}
    assert set(by_path) == {f[n].file_path for n in ("a", "b", "c", "eq", "pos")}
    for n, snap, seq in (("a", s1, 1), ("b", s1, 1), ("c", s2, 2)):
        r = by_path[f[n].file_path]
        assert (r["content"], r["file_format"], r["spec_id"], r["status"]) == ("data", "parquet", 0, "added")
        assert r["partition"] == {"ts_day": "2024-01-01"}
        assert (r["record_count"], r["file_size_in_bytes"]) == (f[n].record_count, f[n].file_size_in_bytes)
        assert (r["snapshot_id"], r["data_sequence_number"], r["file_sequence_number"]) == (snap, seq, seq)
        assert r["equality_ids"] is None and r["referenced_data_file"] is None
    if v >= 3:  # row lineage: inherited from the manifests' first_row_id
        assert [by_path[f[n].file_path]["first_row_id"] for n in ("a", "b", "c")] == [0, 10, 30]
    else:
        assert all(by_path[f[n].file_path]["first_row_id"] is None for n in ("a", "b", "c"))
    eq = by_path[f["eq"].file_path]
    assert (eq["content"], eq["equality_ids"], eq["record_count"]) == ("equality-deletes", [1], 2)
    assert (eq["snapshot_id"], eq["data_sequence_number"], eq["first_row_id"]) == (s4, 4, None)
    pos = by_path[f["pos"].file_path]
    if v >= 3:
        assert (pos["content"], pos["file_format"]) == ("deletion-vector", "puffin")
        assert (pos["referenced_data_file"], pos["content_offset"], pos["content_size_in_bytes"]) == \
            (f["a"].file_path, 4, 44)
    else:
        assert (pos["content"], pos["content_offset"]) == ("position-deletes", None)

    def paths(*args):
        return sorted(r["file_path"] for r in ws.json("files", "db.events", *args))

    def of(*names):
        return sorted(f[n].file_path for n in names)

    assert paths("--snapshot", str(s1)) == of("a", "b")
    assert paths("--snapshot", str(s2)) == of("a", "b", "c")
    assert paths("--ref", "t1") == of("a", "b")
    assert paths("--ref", "dev") == of("a", "b", "d")
    assert paths("--ref", "main") == paths()
    assert paths("--content", "data") == of("a", "b", "c")
    assert paths("--content", "equality-deletes") == of("eq")
    assert paths("--content", "deletion-vector") == (of("pos") if v >= 3 else [])
    assert paths("--content", "position-deletes") == ([] if v >= 3 else of("pos"))
    assert paths("--ref", "dev", "--content", "equality-deletes") == []
    d = next(r for r in ws.json("files", "db.events", "--ref", "dev") if r["file_path"] == f["d"].file_path)
    assert (d["snapshot_id"], d["data_sequence_number"]) == (s3, 3)
    if v >= 3:
        assert d["first_row_id"] == 35

    text = ws.ok("files", "db.events")
    for n in ("a", "b", "c", "eq"):
        assert os.path.basename(f[n].file_path) in text
    for fact in ("data", "equality-deletes", "deletion-vector" if v >= 3 else "position-deletes",
                 "ts_day=2024-01-01", "5 files", "35 data records"):
        assert fact in text, fact


def test_files_of_an_empty_table(ws):
    ws.ok("create", "--yes", "db.empty", "--schema", "id:long")
    assert ws.json("files", "db.empty") == []
    assert ws.json("snapshots", "db.empty") == []
    assert ws.json("snapshots", "db.empty", "--tree") == {"roots": []}
    assert "no snapshots" in ws.ok("snapshots", "db.empty", "--tree")
    assert "no live files" in ws.ok("files", "db.empty")
    assert "no snapshots" in ws.ok("snapshots", "db.empty")
    d = ws.json("describe", "db.empty")
    assert d["current_snapshot"] is None and d["refs"] == [] and d["snapshots"] == 0
    assert d["totals"]["data_files"] == 0 and d["totals"]["records"] == 0
    assert "none (empty table)" in ws.ok("describe", "db.empty")


def test_list(ws):
    # A catalog database that does not exist is an error naming it, not an empty listing.
    code, out, err = ws.run("list")
    assert code == 3 and out == "" and "SQL catalog database" in err and "does not exist" in err
    ws.ok("create", "--yes", "db.a", "--schema", "id:long")
    ws.ok("create", "--yes", "db.b", "--schema", "id:long")
    ws.ok("create", "--yes", "other.c", "--schema", "id:long")
    assert ws.json("list") == {"catalog": "default", "namespaces": ["db", "other"],
                               "tables": ["db.a", "db.b", "other.c"], "views": []}
    assert ws.json("list", "db") == {"catalog": "default", "namespaces": ["db"], "tables": ["db.a", "db.b"], "views": []}
    lines = ws.ok("list").splitlines()
    assert lines[0] == "catalog default: 2 namespaces, 3 tables"
    assert [line.split() for line in lines[2:]] == [["namespace", "db"], ["table", "db.a"], ["table", "db.b"],
                                                    ["namespace", "other"], ["table", "other.c"]]
    assert [line.split() for line in ws.ok("list", "db").splitlines()[2:]] == [
        ["namespace", "db"], ["table", "db.a"], ["table", "db.b"]]


def test_read_commands_by_path(history):
    """describe / snapshots / files take a metadata file or a table location as well as a name."""
    ws, t = history["ws"], history["table"]
    by_name = ws.json("files", "db.events")
    assert ws.json("files", t.metadata_location) == by_name
    assert ws.json("files", history["location"]) == by_name
    assert ws.json("describe", t.metadata_location)["current_snapshot"]["snapshot_id"] == history["s"][4]
    assert [r["snapshot_id"] for r in ws.json("snapshots", history["location"])] == \
        [r["snapshot_id"] for r in ws.json("snapshots", "db.events")]


def test_global_options_anywhere(history):
    ws = history["ws"]
    a = ws.ok("-o", "json", "snapshots", "db.events")
    b = ws.ok("snapshots", "db.events", "--output", "json")
    c = ws.ok("snapshots", "--output=json", "db.events")
    assert json.loads(a) == json.loads(b) == json.loads(c)


def test_files_partition_values_of_every_type(ws):
    """Partition values of each source type round-trip through a manifest and print as JSON
    single values (Appendix D); a nested column's partition field keeps its dotted name."""
    import uuid
    from decimal import Decimal

    import fastavro

    from icectl.formats.manifest import DataFile
    from helpers import append_files

    ws.ok("create", "--yes", "db.p", "--schema", "id:long!, u:uuid, d:decimal(9,2), dt:date, ts:timestamp, s:string, "
          "b:binary, n:struct<a:int>, f:fixed[3], t:time, bo:boolean", "--partition-by",
          "u, d, dt, ts, s, b, n.a, bucket(4, id), f, t, bo")
    t = ws.table("db.p")
    part = (uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"), Decimal("12.34"), DAY, 1704067200123456, "x y",
            b"\x01\x02", 5, 3, b"abc", 3_600_000_000, True)
    t = append_files(t, [DataFile(f"{t.location}/data/a.parquet", "parquet", part, 1, 10)])
    [row] = ws.json("files", "db.p")
    assert row["partition"] == {"u": "f79c3e09-677c-4bbd-a479-3f349cb785e7", "d": "12.34", "dt": "2024-01-01",
                                "ts": "2024-01-01T00:00:00.123456", "s": "x y", "b": "0102", "n.a": 5,
                                "id_bucket": 3, "f": "616263", "t": "01:00:00.000000", "bo": True}
    [m] = t.manifests(t.metadata.current_snapshot)
    with open(m.manifest_path, "rb") as fh:
        reader = fastavro.reader(fh)
        [entry] = list(reader)
    # The Avro field of "n.a" has an Avro-legal name, as Iceberg Java writes it.
    assert list(entry["data_file"]["partition"]) == ["u", "d", "dt", "ts", "s", "b", "n_x2Ea", "id_bucket", "f", "t",
                                                     "bo"]
    text = ws.ok("files", "db.p")
    for fact in ("u=f79c3e09-677c-4bbd-a479-3f349cb785e7", "d=12.34", "dt=2024-01-01", "n.a=5", "bo=true"):
        assert fact in text, fact
