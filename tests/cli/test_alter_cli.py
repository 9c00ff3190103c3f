"""``icectl alter`` and ``icectl properties`` from the command line: the plan shown side by side
with the updates, one commit with ``--yes``, and bad input refused in one line with its exit code
and nothing written."""
from __future__ import annotations

import io
import json
import os

import pytest

from icectl.errors import ExitCode


@pytest.fixture
def ws(tmp_path, monkeypatch):
    from icectl.cli.context import Env
    from icectl.cli.main import run

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.chdir(tmp_path)

    class Workspace:
        def run(self, *args: str) -> tuple[int, str, str]:
            env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
            code = run(["--warehouse", str(tmp_path / "wh"), *args], env)
            return code, env.stdout.getvalue(), env.stderr.getvalue()

        def files(self) -> dict[str, int]:
            return {os.path.join(d, f): os.path.getsize(os.path.join(d, f))
                    for d, _, fs in os.walk(tmp_path / "wh") for f in fs}

    w = Workspace()
    code, _, err = w.run("create", "db.t", "--schema", "id:long!, name:string, qty:int, ts:timestamptz",
                         "--partition-by", "day(ts)", "--property", "k2=old", "--yes")
    assert code == 0, err
    return w


EXAMPLE = ["--add-column", "note string", "--rename-column", "qty=quantity", "--set-type", "quantity=long",
           "--add-partition-field", "truncate(4, name)", "--set-property", "k=v", "--remove-property", "k2"]


def test_dry_run_shows_before_and_after_side_by_side_and_the_updates(ws):
    before = ws.files()
    code, out, err = ws.run("alter", "db.t", *EXAMPLE, "--dry-run")
    assert code == 0, err
    assert ws.files() == before
    lines = out.splitlines()
    assert lines[0] == "Alter db.t (dry run: nothing committed)"
    assert "  - rename column qty to quantity" in lines
    assert "Schema 0 -> 1 (last-column-id 4 -> 5; identifier fields [] -> [])" in lines
    assert any(line.split() == ["~", "3", "qty", "int", "optional", "quantity", "long", "optional"] for line in lines)
    assert any(line.split() == ["+", "5", "note", "string", "optional"] for line in lines)
    assert "Partition spec 0 -> 1 (last-partition-id 1000 -> 1001)" in lines
    assert any(line.split() == ["+", "1001", "name_trunc_4", "truncate[4](name)"] for line in lines)
    assert any(line.split() == ["-", "k2", "old"] for line in lines)
    assert lines[lines.index("Updates (the REST catalog spec's TableUpdates, as sent)") + 1:] == [
        "  add-schema: schema 1 (last-column-id 5)", '  set-current-schema: {"schema-id": -1}',
        "  add-spec: spec 1", '  set-default-spec: {"spec-id": -1}', '  set-properties: {"updates": {"k": "v"}}',
        '  remove-properties: {"removals": ["k2"]}']


def test_yes_commits_once_and_json_shows_what_was_sent(ws):
    code, out, err = ws.run("-o", "json", "alter", "db.t", *EXAMPLE, "--yes")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["applied"] is True and doc["dry_run"] is False
    assert doc["metadata_location"].endswith("v2.metadata.json")
    assert [f["name"] for f in doc["after"]["schema"]["fields"]] == ["id", "name", "quantity", "ts", "note"]
    assert [f["name"] for f in doc["before"]["schema"]["fields"]] == ["id", "name", "qty", "ts"]
    assert doc["after"]["properties"] == {"k": "v"} and doc["before"]["properties"] == {"k2": "old"}
    commit = doc["commits"][0]
    assert [u["action"] for u in commit["updates"]] == ["add-schema", "set-current-schema", "add-spec",
                                                        "set-default-spec", "set-properties", "remove-properties"]
    assert commit["requirements"][1:] == [{"type": "assert-last-assigned-field-id", "last-assigned-field-id": 4},
                                          {"type": "assert-current-schema-id", "current-schema-id": 0},
                                          {"type": "assert-last-assigned-partition-id",
                                           "last-assigned-partition-id": 1000},
                                          {"type": "assert-default-spec-id", "default-spec-id": 0}]
    # the same again: nothing to change, nothing committed
    files = ws.files()
    code, out, err = ws.run("alter", "db.t", "--set-property", "k=v", "--yes")
    assert code == 0 and "nothing to change" in out and ws.files() == files


def test_properties_list_set_unset(ws):
    code, out, _ = ws.run("properties", "db.t")
    assert code == 0 and out.split() == ["Properties", "of", "db.t", "k2", "old"]
    code, out, err = ws.run("properties", "db.t", "set", "a=1", "b=x=y", "--yes")
    assert code == 0, err
    assert "set property b=x=y" in out and "committed" in out
    code, out, err = ws.run("-o", "json", "properties", "db.t", "unset", "a", "k2", "--yes")
    assert code == 0, err
    assert json.loads(out)["after"]["properties"] == {"b": "x=y"}
    code, out, _ = ws.run("-o", "json", "properties", "db.t")
    assert json.loads(out) == {"table": "db.t", "properties": {"b": "x=y"}}


BAD = [
    (["alter", "db.t", "--drop-column", "nope"], ExitCode.USAGE, "there is no column 'nope'"),
    (["alter", "db.t", "--add-column", "x varchar2"], ExitCode.USAGE, "unknown type 'varchar2'"),
    (["alter", "db.t", "--add-column", "x"], ExitCode.USAGE, "needs a type"),
    (["alter", "db.t", "--add-column", "x int sometimes"], ExitCode.USAGE, "unknown type 'int sometimes'"),
    (["alter", "db.t", "--add-column", "x int not null comment 'c' foo"], ExitCode.USAGE, "unexpected 'foo'"),
    (["alter", "db.t", "--set-type", "qty=string"], ExitCode.USAGE, "the spec allows only int to long"),
    (["alter", "db.t", "--set-type", "qty"], ExitCode.USAGE, "must be COLUMN=TYPE"),
    (["alter", "db.t", "--add-partition-field", "bucket(16, ts, name)"], ExitCode.USAGE, "one column, not 2"),
    (["alter", "db.t", "--add-partition-field", "hour(name)"], ExitCode.USAGE, "hour does not apply to name"),
    (["alter", "db.t", "--add-partition-field", "zorder(name)"], ExitCode.USAGE, "unknown transform 'zorder'"),
    (["alter", "db.t", "--add-partition-field", "bucket(0, id)"], ExitCode.USAGE, "width must be positive"),
    (["alter", "db.t", "--set-property", "format-version=3"], ExitCode.USAGE, "format-version is reserved"),
    (["alter", "db.t", "--set-property", "snapshot-count=3"], ExitCode.USAGE, "reserved property"),
    (["alter", "db.t", "--set-property", "=3"], ExitCode.USAGE, "nothing before '='"),
    (["alter", "db.t", "--add-column", "d int default 1"], ExitCode.USAGE, "column defaults need format version 3"),
    (["alter", "db.t", "--make-required", "name"], ExitCode.USAGE, "rows already written may hold nulls"),
    (["alter", "db.t", "--drop-column", "ts"], ExitCode.USAGE, "partition field ts_day of the current spec uses it"),
    (["alter", "db.t", "--move-column", "id sideways"], ExitCode.USAGE, "must be 'COL first'"),
    (["alter", "db.t", "--sort-by", "id", "--unsorted"], ExitCode.USAGE, "not both"),
    (["alter", "db.t"], ExitCode.USAGE, "nothing to change"),
    (["alter", "db.nope", "--add-column", "x int"], ExitCode.NOT_FOUND, "db.nope"),
    (["properties", "db.t", "frobnicate", "a"], ExitCode.USAGE, "unknown action 'frobnicate'"),
    (["properties", "db.t", "set"], ExitCode.USAGE, "needs at least one KEY=VALUE"),
    (["properties", "db.t", "set", "novalue"], ExitCode.USAGE, "must be KEY=VALUE"),
    (["properties", "db.t", "set", "format-version=3"], ExitCode.USAGE, "upgrade"),
]


@pytest.mark.parametrize("args,code,message", BAD, ids=[" ".join(a[2:]) or "empty" for a, _, _ in BAD])
def test_bad_input_one_line_exit_code_nothing_written(ws, args, code, message):
    before = ws.files()
    rc, out, err = ws.run(*args, "--yes")
    assert rc == code, err
    assert out == ""
    lines = err.splitlines()
    assert lines[0].startswith("icectl: error: ") and message in lines[0], err
    assert len(lines) == 1 or (len(lines) == 2 and lines[1].startswith("hint: ")), err
    assert "Traceback" not in err
    assert ws.files() == before
    rc, out, err = ws.run("-o", "json", *args, "--yes")
    assert rc == code and out == "" and message in json.loads(err)["error"]["message"]
