"""Bad input gives one line on stderr (``icectl: error: ...``, at most one ``hint:`` line), the
documented exit code (icectl.errors.ExitCode), no traceback, nothing on stdout, and nothing
written; with ``--output json`` the error is one JSON object on stderr."""
from __future__ import annotations

import io
import json
import os

import pytest

from icectl.errors import ExitCode


@pytest.fixture
def ws(tmp_path, monkeypatch):
    """A workspace: a SQL catalog under tmp_path with table db.t (v2, one snapshot)."""
    from icectl.cli.context import Env
    from icectl.cli.main import run

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.chdir(tmp_path)

    class Workspace:
        root = tmp_path
        uri = f"sqlite:///{tmp_path}/catalog.db"
        warehouse = str(tmp_path / "warehouse")

        def run(self, *args: str, catalog: bool = True) -> tuple[int, str, str]:
            env = Env(stdout=io.StringIO(), stderr=io.StringIO())
            argv = (["--uri", self.uri, "--warehouse", self.warehouse] if catalog else []) + list(args)
            code = run(argv, env)
            return code, env.stdout.getvalue(), env.stderr.getvalue()

        def listing(self) -> dict[str, tuple[int, int]]:
            out = {}
            for d, _, files in os.walk(self.root):
                for f in files:
                    p = os.path.join(d, f)
                    st = os.stat(p)
                    out[os.path.relpath(p, self.root)] = (st.st_size, st.st_mtime_ns)
            return out

    w = Workspace()
    code, _, err = w.run("create", "--yes", "db.t", "--schema", "id:long!, ts:timestamptz, name:string", "--partition-by",
                         "day(ts)")
    assert code == 0, err
    from icectl.catalog import build_catalog, parse_identifier, resolve_catalog_config
    from icectl.formats.manifest import DataFile
    from helpers import append_files
    from icectl.table.loaded import load_table

    table = load_table(build_catalog(resolve_catalog_config(None, uri=w.uri, warehouse=w.warehouse)),
                       parse_identifier("db.t"))
    w.table = append_files(table, [DataFile(f"{table.location}/data/a.parquet", "parquet", (19000,), 3, 100)])
    return w


def assert_one_error(code: int, out: str, err: str, expected: ExitCode, *, contains: str | None = None) -> str:
    assert code == int(expected), (code, err)
    assert out == "", out
    assert "Traceback" not in err
    lines = err.splitlines()
    assert err.endswith("\n")
    assert 1 <= len(lines) <= 2, err
    assert lines[0].startswith("icectl: error: "), err
    assert len(lines[0]) > len("icectl: error: ")
    if len(lines) == 2:
        assert lines[1].startswith("hint: "), err
    if contains is not None:
        assert contains in lines[0], err
    return lines[0]


def check(ws, args, expected: ExitCode, *, contains: str | None = None, catalog: bool = True) -> str:
    before = ws.listing()
    code, out, err = ws.run(*args, catalog=catalog)
    line = assert_one_error(code, out, err, expected, contains=contains)
    assert ws.listing() == before, "a failed command must not write anything"
    return line


def _write(path, text: str | bytes) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(text.encode() if isinstance(text, str) else text)
    return str(path)


# -- malformed or unsupported metadata -------------------------------------------------------------------

@pytest.mark.parametrize("text", ["{not json", "", "[]", '{"format-version": 2}', '{"format-version": 2,'])
def test_malformed_metadata_json(ws, text):
    path = _write(ws.root / "bad" / "metadata" / "00000-x.metadata.json", text)
    for command in ("describe", "snapshots", "files"):
        check(ws, [command, path], ExitCode.INVALID_METADATA, contains=path)


def _metadata_doc(ws) -> dict:
    with open(ws.table.metadata_location) as f:
        return json.load(f)


def test_format_version_5(ws):
    doc = _metadata_doc(ws)
    doc["format-version"] = 5
    path = _write(ws.root / "future" / "metadata" / "v1.metadata.json", json.dumps(doc))
    line = check(ws, ["describe", path], ExitCode.INVALID_METADATA, contains="format-version 5")
    assert path in line
    # The hint says what to do.
    code, _, err = ws.run("describe", path)
    assert err.splitlines()[1].startswith("hint: ")


def test_truncated_manifest_list(ws):
    snap = ws.table.metadata.current_snapshot
    path = snap.manifest_list
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[: len(data) - 40])
    for args in (["files", "db.t"], ["describe", "db.t"], ["files", ws.table.metadata_location]):
        check(ws, args, ExitCode.INVALID_METADATA, contains=path)


def test_truncated_manifest(ws):
    [m] = ws.table.manifests(ws.table.metadata.current_snapshot)
    with open(m.manifest_path, "rb") as f:
        data = f.read()
    with open(m.manifest_path, "wb") as f:
        f.write(data[:-25])
    check(ws, ["files", "db.t"], ExitCode.INVALID_METADATA, contains=m.manifest_path)


def test_missing_manifest_list(ws):
    os.remove(ws.table.metadata.current_snapshot.manifest_list)
    check(ws, ["files", "db.t"], ExitCode.NOT_FOUND, contains=ws.table.metadata.current_snapshot.manifest_list)


def test_missing_metadata_file(ws):
    path = str(ws.root / "nowhere" / "metadata" / "00001-x.metadata.json")
    check(ws, ["describe", path], ExitCode.NOT_FOUND, contains=path)
    check(ws, ["files", str(ws.root / "nowhere")], ExitCode.NOT_FOUND)


def test_catalog_points_at_a_missing_metadata_file(ws):
    os.remove(ws.table.metadata_location)
    check(ws, ["describe", "db.t"], ExitCode.NOT_FOUND, contains=ws.table.metadata_location)


# -- tables, snapshots, refs that do not exist -----------------------------------------------------------

@pytest.mark.parametrize("args,contains", [
    (["describe", "db.nope"], "db.nope"),
    (["files", "db.nope"], "db.nope"),
    (["snapshots", "db.nope"], "db.nope"),
    (["describe", "other.t"], "other.t"),
    (["snapshots", "db.t", "--ref", "nope"], "nope"),
    (["files", "db.t", "--ref", "nope"], "nope"),
    (["files", "db.t", "--snapshot", "12345"], "12345"),
    (["list", "nons"], "nons"),
])
def test_not_found(ws, args, contains):
    check(ws, args, ExitCode.NOT_FOUND, contains=contains)


# -- bad arguments -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("schema", ["id:lng", "id long", "", "   ", "a:int, a:long", "m:map<string>", "s:struct<a:int",
                                    "l:list<>", "x:decimal(39,2)", "1bad:int", "a:int,,b:int", "a:", "@/no/such.json",
                                    "/no/such/schema.json"])
def test_bad_schema(ws, schema):
    check(ws, ["create", "--yes", "db.new", "--schema", schema], ExitCode.USAGE)


def test_bad_decimal_says_why(ws):
    check(ws, ["create", "--yes", "db.new", "--schema", "x:decimal(39,2)"], ExitCode.USAGE, contains="precision")


def test_bad_schema_json_file(ws):
    path = _write(ws.root / "schema.json", "{\"type\": \"struct\", \"fields\": [{\"id\": 1}]}")
    check(ws, ["create", "--yes", "db.new", "--schema", path], ExitCode.USAGE, contains=path)
    path = _write(ws.root / "broken.json", "{")
    check(ws, ["create", "--yes", "db.new", "--schema", path], ExitCode.USAGE, contains=path)


@pytest.mark.parametrize("expr", ["bucket(id)", "bucket(0, id)", "bucket(x, id)", "foo(id)", "day(id)", "hour(name)",
                                  "truncate(ts)", "day(ts", "id,", "year(ts), year(ts)", "void()"])
def test_bad_partition_expression(ws, expr):
    check(ws, ["create", "--yes", "db.new", "--schema", "id:long, ts:timestamp, name:string", "--partition-by", expr],
          ExitCode.USAGE)


@pytest.mark.parametrize("expr", ["nope", "day(nope)", "bucket(16, nope)", "ID2"])
def test_unknown_column_in_partition_by(ws, expr):
    check(ws, ["create", "--yes", "db.new", "--schema", "id:long, ts:timestamp", "--partition-by", expr], ExitCode.USAGE,
          contains="not in the schema")


@pytest.mark.parametrize("expr", ["id sideways", "nope desc", ",", "id desc,", "day(id)", "foo(id) asc"])
def test_bad_sort_expression(ws, expr):
    check(ws, ["create", "--yes", "db.new", "--schema", "id:long, ts:timestamp", "--sort-by", expr], ExitCode.USAGE)


def test_nested_column_cannot_be_partitioned(ws):
    check(ws, ["create", "--yes", "db.new", "--schema", "s:struct<a:int>", "--partition-by", "s"], ExitCode.USAGE)


@pytest.mark.parametrize("args", [
    ["--output", "xml", "describe", "db.t"],
    ["describe", "db.t", "-o", "yaml"],
    ["--output=csv", "list"],
])
def test_bad_output_value(ws, args):
    line = check(ws, args, ExitCode.USAGE)
    assert "output" in line.lower()


@pytest.mark.parametrize("args", [
    ["create", "--yes", "db.new", "--schema", "id:long", "--format-version", "5"],
    ["create", "--yes", "db.new", "--schema", "id:long", "--format-version", "0"],
    ["create", "--yes", "db.new", "--schema", "id:long", "--format-version", "two"],
    ["create", "--yes", "db.new"],  # no --schema
    ["create", "--yes", "nonamespace", "--schema", "id:long"],
    ["create", "--yes", "db.new", "--schema", "id:long", "--property", "novalue"],
    ["create", "--yes", "db.new", "--schema", "id:long", "--property", "=v"],
    ["create", "--yes", "db.new", "--schema", "v:variant", "--format-version", "2"],
    ["files", "db.t", "--content", "bogus"],
    ["files", "db.t", "--snapshot", "notanumber"],
    ["files", "db.t", "--snapshot", "1", "--ref", "main"],
    ["snapshots", "db.t", "--limit", "-1"],
    ["snapshots", "db.t", "--since", "last tuesday"],
    ["describe"],
    ["describe", "db.t", "extra"],
    ["nosuchcommand"],
    ["describe", "db.t", "--nosuchoption"],
])
def test_usage_errors(ws, args):
    check(ws, args, ExitCode.USAGE)


def test_table_already_exists(ws):
    check(ws, ["create", "--yes", "db.t", "--schema", "id:long"], ExitCode.CONFLICT, contains="db.t")


def test_v4_in_a_file_system_catalog(ws, tmp_path):
    fs_warehouse = tmp_path / "fswh"
    fs_warehouse.mkdir()
    check(ws, ["--warehouse", str(fs_warehouse), "create", "--yes", "db.v4", "--schema", "id:long", "--format-version", "4"],
          ExitCode.UNSUPPORTED, catalog=False)


def test_bad_create_in_an_empty_folder_writes_nothing(tmp_path, monkeypatch):
    """No catalog database, no folders: a create that fails on its arguments leaves none behind."""
    from icectl.cli.context import Env
    from icectl.cli.main import run

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.chdir(tmp_path)
    for args in (["create", "--yes", "db.t", "--schema", "id:lng"], ["create", "--yes", "db.t", "--schema", "id:long", "-p", "day(id)"],
                 ["create", "--yes", "db.t", "--schema", "id:long", "--sort-by", "nope"]):
        env = Env(stdout=io.StringIO(), stderr=io.StringIO())
        code = run(["--uri", f"sqlite:///{tmp_path}/cat/catalog.db", "--warehouse", str(tmp_path / "wh"), *args], env)
        assert_one_error(code, env.stdout.getvalue(), env.stderr.getvalue(), ExitCode.USAGE)
        assert os.listdir(tmp_path) == [], os.listdir(tmp_path)


# -- JSON errors ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("args,expected,kind", [
    (["-o", "json", "describe", "db.nope"], ExitCode.NOT_FOUND, "NoSuchTableError"),
    (["describe", "db.nope", "--output", "json"], ExitCode.NOT_FOUND, "NoSuchTableError"),
    (["-o", "json", "create", "--yes", "db.new", "--schema", "id:lng"], ExitCode.USAGE, "UsageError"),
    (["-o", "json", "files", "db.t", "--content", "bogus"], ExitCode.USAGE, "UsageError"),
    (["-o", "json", "create", "--yes", "db.t", "--schema", "id:long"], ExitCode.CONFLICT, "AlreadyExistsError"),
])
def test_json_errors_go_to_stderr(ws, args, expected, kind):
    before = ws.listing()
    code, out, err = ws.run(*args)
    assert code == int(expected)
    assert out == ""
    assert err.endswith("\n") and len(err.splitlines()) == 1
    obj = json.loads(err)
    assert set(obj) == {"error"}
    assert set(obj["error"]) == {"type", "message", "hint", "exit_code"}
    assert obj["error"]["exit_code"] == int(expected)
    assert obj["error"]["type"] == kind
    assert obj["error"]["message"] and not obj["error"]["message"].startswith("icectl:")
    assert ws.listing() == before


def test_json_error_for_invalid_metadata(ws):
    doc = _metadata_doc(ws)
    doc["format-version"] = 5
    path = _write(ws.root / "future" / "metadata" / "v1.metadata.json", json.dumps(doc))
    code, out, err = ws.run("-o", "json", "describe", path)
    assert code == int(ExitCode.INVALID_METADATA) and out == ""
    obj = json.loads(err)["error"]
    assert obj["type"] == "UnsupportedFormatVersionError" and "5" in obj["message"] and obj["hint"]


def test_json_usage_error_from_click(ws):
    code, out, err = ws.run("-o", "json", "files", "db.t", "--snapshot", "x")
    assert code == int(ExitCode.USAGE) and out == ""
    obj = json.loads(err)["error"]
    assert obj["exit_code"] == int(ExitCode.USAGE) and "--snapshot" in obj["message"]


# -- where the catalog is -------------------------------------------------------------------------------

def test_warehouse_that_is_a_file(ws):
    afile = _write(ws.root / "afile", "x")
    check(ws, ["--warehouse", afile, "create", "--yes", "db.u", "--schema", "id:long"], ExitCode.USAGE,
          contains=f"warehouse {afile} is not a directory", catalog=False)
    check_after_plan(ws, ["--warehouse", afile + "/sub", "create", "--yes", "db.u", "--schema", "id:long"],
                     ExitCode.STORAGE, contains="a parent is not a directory")


def test_warehouse_that_cannot_be_created(ws):
    check_after_plan(ws, ["--warehouse", "/proc/icectl-nope", "create", "--yes", "db.u", "--schema", "id:long"],
                     ExitCode.STORAGE, contains="cannot write /proc/icectl-nope/db/u/metadata/")


def check_after_plan(ws, args, expected: ExitCode, *, contains: str) -> None:
    """A create that fails when it writes: the plan was printed (text, --yes), then one error line;
    nothing was written."""
    before = ws.listing()
    code, out, err = ws.run(*args, catalog=False)
    assert "db.u: table to create" in out
    assert_one_error(code, "", err, expected, contains=contains)
    assert ws.listing() == before, "a failed command must not write anything"


def test_missing_warehouse_or_database_is_not_an_empty_catalog(ws):
    missing = str(ws.root / "nowhere")
    check(ws, ["--warehouse", missing, "list"], ExitCode.NOT_FOUND, contains=f"warehouse {missing} does not exist",
          catalog=False)
    db = str(ws.root / "nodir" / "x.db")
    check(ws, ["--uri", f"sqlite:///{db}", "list"], ExitCode.NOT_FOUND,
          contains=f"SQL catalog database {db} does not exist", catalog=False)
    check(ws, ["--uri", f"sqlite:///{db}", "describe", "db.t"], ExitCode.NOT_FOUND,
          contains=f"table db.t does not exist: the database {db}", catalog=False)
    assert not os.path.exists(ws.root / "nodir")


def test_a_folder_as_the_catalog_database(ws):
    check(ws, ["--uri", f"sqlite:///{ws.root}", "list"], ExitCode.STORAGE,
          contains=f"cannot open SQL catalog database {ws.root}", catalog=False)


@pytest.mark.parametrize("args,message", [
    (["-o", "json", "nosuch"], "No such command 'nosuch'."),
    (["nosuch", "--output", "json"], "No such command 'nosuch'."),
    (["-o", "json", "--nosuch", "list"], "No such option: --nosuch"),
    (["--output=json", "--nosuch", "list"], "No such option: --nosuch"),
    (["-o", "json"], "Missing command."),
])
def test_usage_errors_in_json(ws, args, message):
    before = ws.listing()
    code, out, err = ws.run(*args, catalog=False)
    assert code == 2 and out == ""
    assert json.loads(err) == {"error": {"type": "UsageError", "message": message,
                                         "hint": "run with --help for usage", "exit_code": 2}}
    assert ws.listing() == before


@pytest.mark.parametrize("edit,message", [
    (lambda d: d.pop("current-schema-id"), "'schemas' is given without 'current-schema-id'"),
    (lambda d: d["schemas"][0].pop("type"), "schema 0 is not a struct type"),
    (lambda d: d.update({"sort-orders": []}), "format version 2 requires a non-empty 'sort-orders'"),
])
def test_metadata_iceberg_java_refuses(ws, edit, message):
    """Metadata Iceberg Java refuses to load is refused (exit 4) by every reading command."""
    doc = _metadata_doc(ws)
    edit(doc)
    path = _write(ws.root / "refused" / "metadata" / "v1.metadata.json", json.dumps(doc))
    for command in ("describe", "snapshots", "files"):
        check(ws, [command, path], ExitCode.INVALID_METADATA, contains=message)


def test_describe_does_not_invent_main(ws):
    """refs given without main: describe lists the refs there are (Iceberg Java reads no main)."""
    doc = _metadata_doc(ws)
    sid = doc["current-snapshot-id"]
    doc["refs"] = {"audit": {"snapshot-id": sid, "type": "branch"}}
    path = _write(ws.root / "nomain" / "metadata" / "v1.metadata.json", json.dumps(doc))
    code, out, err = ws.run("-o", "json", "describe", path)
    assert code == 0, err
    assert [r["name"] for r in json.loads(out)["refs"]] == ["audit"]
    doc.pop("refs")  # no refs at all (v1 style): main is the current snapshot
    path = _write(ws.root / "norefs" / "metadata" / "v1.metadata.json", json.dumps(doc))
    code, out, err = ws.run("-o", "json", "describe", path)
    assert code == 0, err
    assert [(r["name"], r["snapshot_id"]) for r in json.loads(out)["refs"]] == [("main", sid)]


def test_one_message_for_a_table_without_snapshots(ws):
    """Every command that needs a snapshot says the same thing about an empty table (exit 3);
    those with nothing to do on it (compact, rewrite-deletes, expire) say so and succeed."""
    code, _, err = ws.run("create", "--yes", "db.empty", "--schema", "id:long")
    assert code == 0, err
    lines = set()
    for args in (["rollback", "db.empty", "--to-snapshot", "1", "--yes"],
                 ["rollback", "db.empty", "--to-timestamp", "1h", "--yes"],
                 ["rollback", "db.empty", "--set-current", "5", "--yes"],
                 ["branch", "create", "db.empty", "b", "--yes"],
                 ["tag", "create", "db.empty", "t", "--yes"],
                 ["cherry-pick", "db.empty", "1", "--yes"]):
        lines.add(check(ws, args, ExitCode.NOT_FOUND))
    assert lines == {"icectl: error: the table has no snapshots yet"}
    for args in (["rewrite-deletes", "db.empty", "--yes"], ["compact", "db.empty", "--yes"],
                 ["expire", "db.empty", "--yes"]):
        code, out, err = ws.run(*args)
        assert code == 0 and err == "" and "nothing to" in out, (args, out, err)


# -- a manifest no Iceberg reader reads -------------------------------------------------------------------

def _with_map_column_sizes(path: str) -> None:
    """Rewrite a manifest with fastavro, ``column_sizes`` written as an Avro map (string keys)
    instead of Iceberg's array of key/value records (spec: Avro "Maps with non-string keys").
    fastavro reads such a file; polars' Avro reader panics on it."""
    import fastavro

    with open(path, "rb") as f:
        reader = fastavro.reader(f)
        schema, meta = reader.writer_schema, dict(reader.metadata)
        records = list(reader)
    data_file = next(f for f in schema["fields"] if f["name"] == "data_file")["type"]
    sizes = next(f for f in data_file["fields"] if f["name"] == "column_sizes")
    sizes["type"] = ["null", {"type": "map", "values": "long"}]
    for r in records:
        cs = r["data_file"]["column_sizes"]
        r["data_file"]["column_sizes"] = None if cs is None else {str(kv["key"]): kv["value"] for kv in cs} or {"1": 7}
    codec = meta.pop("avro.codec", "null")
    meta.pop("avro.schema", None)
    with open(path, "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), records, metadata=meta, codec=codec)


@pytest.fixture
def ws_map(ws):
    """db.t with a position delete file (a second snapshot), both of its manifests rewritten with
    column_sizes as an Avro map."""
    from icectl.formats.manifest import DataFile, FileContent
    from helpers import append_files

    t = ws.table
    ws.table = append_files(t, [DataFile(f"{t.location}/data/d.parquet", "parquet", (19000,), 1, 50,
                                         content=FileContent.POSITION_DELETES, column_sizes={1: 10})])
    ws.manifests = [m.manifest_path for m in ws.table.manifests(ws.table.metadata.current_snapshot)]
    assert len(ws.manifests) == 2
    for path in ws.manifests:
        _with_map_column_sizes(path)
    for snap in ws.table.metadata.snapshots:  # the lists record the manifests' new lengths
        _fix_lengths(snap.manifest_list)
    return ws


def _fix_lengths(list_path: str) -> None:
    import fastavro

    with open(list_path, "rb") as f:
        reader = fastavro.reader(f)
        schema, meta = reader.writer_schema, dict(reader.metadata)
        records = list(reader)
    for r in records:
        r["manifest_length"] = os.path.getsize(r["manifest_path"])
    codec = meta.pop("avro.codec", "null")
    meta.pop("avro.schema", None)
    with open(list_path, "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), records, metadata=meta, codec=codec)


@pytest.mark.parametrize("args", [
    ["files", "db.t"],
    ["files", "db.t", "--output", "json"],
    ["describe", "db.t"],
    ["expire", "db.t", "--dry-run", "--older-than", "0s"],
    ["compact", "db.t", "--dry-run"],
    ["rewrite-deletes", "db.t", "--dry-run"],
    ["remove-orphans", "db.t", "--dry-run"],
])
@pytest.mark.parametrize("reader", ["polars", "lean"])
def test_manifest_with_an_avro_map_is_one_error_line(ws_map, args, reader, monkeypatch, capfd):
    """Every command that reads the manifest says which manifest and field is wrong (exit 4), with
    the polars reader and without it; no Rust panic, no traceback."""
    if reader == "lean":
        monkeypatch.setenv("ICECTL_AVRO_READER", "lean")
    if args[0] == "files" and "json" in args:
        code, out, err = ws_map.run(*args)
        assert code == int(ExitCode.INVALID_METADATA) and out == ""
        assert "column_sizes" in json.loads(err)["error"]["message"]
    else:
        line = check(ws_map, args, ExitCode.INVALID_METADATA, contains="'column_sizes' is an Avro map")
        assert any(m in line for m in ws_map.manifests), line
    assert "panicked" not in capfd.readouterr().err


def test_manifest_with_an_avro_map_is_a_validate_finding(ws_map):
    """validate reports each such manifest as MANIFEST_UNREADABLE (exit 8); snapshots reads no
    manifest and lists the table as before."""
    code, out, err = ws_map.run("-o", "json", "validate", "db.t")
    assert code == int(ExitCode.VALIDATION_FAILED), err
    found = [f for f in json.loads(out)["findings"] if f["code"] == "MANIFEST_UNREADABLE"]
    assert sorted(f["manifest"] for f in found) == sorted(ws_map.manifests)
    assert all("'column_sizes' is an Avro map" in f["message"] for f in found)
    code, out, err = ws_map.run("snapshots", "db.t")
    assert code == 0 and err == ""


# -- diff and restore --------------------------------------------------------------------------------------

@pytest.mark.parametrize("args,expected,contains", [
    (["diff", "db.t", "12345", "main"], ExitCode.NOT_FOUND, "12345"),
    (["diff", "db.t", "main", "nope"], ExitCode.NOT_FOUND, "nope"),
    (["diff", "db.t", "ref:nope", "main"], ExitCode.NOT_FOUND, "nope"),
    (["diff", "db.t", "snapshot:12x", "main"], ExitCode.USAGE, "12x"),
    (["diff", "db.t", "time:yesterday", "main"], ExitCode.USAGE, "yesterday"),
    (["diff", "db.t", "2026-02-30T00:00:00", "main"], ExitCode.USAGE, "2026-02-30"),
    (["diff", "db.t", "1000000000000", "main"], ExitCode.NOT_FOUND, "no snapshot"),
    (["diff", "db.t", "v99", "main"], ExitCode.NOT_FOUND, "version 99"),
    (["diff", "db.t", "/no/such/00001-x.metadata.json", "main"], ExitCode.NOT_FOUND, "/no/such/00001-x.metadata.json"),
    (["diff", "db.nope", "main", "main"], ExitCode.NOT_FOUND, "db.nope"),
    (["restore", "db.t", "--to-version", "99", "--yes"], ExitCode.NOT_FOUND, "version 99"),
    (["restore", "db.t", "--to-version", "x1", "--yes"], ExitCode.USAGE, "x1"),
    (["restore", "db.t", "--to-time", "tomorrow", "--yes"], ExitCode.USAGE, "tomorrow"),
    (["restore", "db.t", "--to-time", "1000000000000", "--yes"], ExitCode.NOT_FOUND, "1000000000000"),
    (["restore", "db.t", "--to-metadata", "/no/such/00001-x.metadata.json", "--yes"], ExitCode.NOT_FOUND,
     "/no/such/00001-x.metadata.json"),
    (["restore", "db.t", "--to-version", "1", "--to-time", "1", "--yes"], ExitCode.USAGE, "exactly one of"),
])
def test_diff_and_restore_bad_input(ws, args, expected, contains):
    check(ws, args, expected, contains=contains)
    # JSON: one error object on stderr, nothing on stdout.
    code, out, err = ws.run("-o", "json", *args)
    assert code == expected and out == "" and json.loads(err)["error"]["exit_code"] == expected


def test_restore_without_a_target_on_a_readable_table_changes_nothing(ws):
    """Issue 25 changed this: without --to-*, restore looks for a broken current metadata file
    (it was a usage error before); on a readable table it says there is nothing to recover."""
    before = ws.listing()
    code, out, err = ws.run("restore", "db.t", "--yes")
    assert code == 0 and "nothing to recover" in out, (out, err)
    assert ws.listing() == before


def test_restore_to_a_state_whose_files_are_gone(ws):
    """The ws table's data file was never written: a restore to a state that needs it is refused
    with exit code 3 and the list of what is gone (on stdout), and nothing is written."""
    code, _, err = ws.run("properties", "db.t", "set", "a=1", "--yes")
    assert code == 0, err
    before = ws.listing()
    code, out, err = ws.run("restore", "db.t", "--to-version", "1", "--yes")
    assert code == ExitCode.NOT_FOUND
    assert "files that are gone" in out and f"{ws.table.location}/data/a.parquet" in out
    assert err.startswith("icectl: error: cannot restore db.t") and len(err.splitlines()) <= 2
    assert ws.listing() == before
