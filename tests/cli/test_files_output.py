"""``files -o json`` / ``-o jsonl`` (issue 26 item 4): rows encoded a batch at a time to the text
the standard encoder writes, and ``-o jsonl`` streamed: its first row is on stdout before the
last manifest is read."""
from __future__ import annotations

import io
import json

import pytest

from helpers import append_files
from icectl.catalog import build_catalog, parse_identifier, resolve_catalog_config
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.formats.manifest import DataFile
from icectl.io import FileIO
from icectl.table.loaded import load_table

APPENDS = 9


class Recorder(io.StringIO):
    """stdout that notes in the shared event list what a flush hands on (what a reader of a pipe
    would see), not what is still buffered."""

    def __init__(self, events: list):
        super().__init__()
        self.events = events
        self.pending = ""

    def write(self, s: str) -> int:
        self.pending += s
        return super().write(s)

    def flush(self) -> None:
        if self.pending:
            self.events.append(("write", self.pending))
            self.pending = ""


@pytest.fixture
def ws(tmp_path):
    uri, warehouse = f"sqlite:///{tmp_path}/catalog.db", str(tmp_path / "warehouse")

    def cli(*args: str, stdout: io.StringIO | None = None) -> tuple[int, str, str]:
        env = Env(stdout=stdout or io.StringIO(), stderr=io.StringIO())
        code = run(["--uri", uri, "--warehouse", warehouse, *args], env)
        return code, env.stdout.getvalue(), env.stderr.getvalue()

    catalog = build_catalog(resolve_catalog_config(None, uri=uri, warehouse=warehouse))
    for name, schema, part in (("db.t", "id:long!, ts:timestamptz, name:string", "day(ts)"),
                               ("db.f", "id:long!, x:double", "x")):
        code, _, err = cli("create", "--yes", name, "--schema", schema, "--partition-by", part)
        assert code == 0, err
    t = load_table(catalog, parse_identifier("db.t"))
    for i in range(APPENDS):  # one manifest each (fast appends)
        name = "é" if i == 4 else "a"  # a non-ASCII path: the standard encoder's \\u00e9
        t = append_files(t, [DataFile(f"{t.location}/data/{name}-{i}-{j}.parquet", "parquet", (19000 + i,), 3 + j, 100)
                             for j in range(3)])
    f = load_table(catalog, parse_identifier("db.f"))
    for x in (1.5, 1e16, 1e-7):
        f = append_files(f, [DataFile(f"{f.location}/data/x-{x}.parquet", "parquet", (x,), 1, 10)])
    return cli


@pytest.mark.parametrize("table,rows", [("db.t", APPENDS * 3), ("db.f", 3)])
def test_rows_are_the_standard_encoders_text(ws, table, rows):
    code, out, err = ws("-o", "json", "files", table)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "[" and lines[-1] == "]" and len(lines) == rows + 2
    for line in lines[1:-1]:
        line = line.removesuffix(",")
        assert line == json.dumps(json.loads(line))  # ", " and ": ", \\u00e9, 1e+16 and 1e-07 as json writes them
    assert any("\\u00e9" in line for line in lines) or table == "db.f"
    assert any("1e+16" in line for line in lines) or table == "db.t"
    code, jsonl, err = ws("-o", "jsonl", "files", table)
    assert code == 0, err
    assert [json.loads(line) for line in jsonl.splitlines()] == json.loads(out)
    assert jsonl.splitlines() == [line.removesuffix(",") for line in lines[1:-1]]


def test_jsonl_writes_the_first_row_before_the_last_manifest_is_read(ws, monkeypatch):
    events: list = []
    read = FileIO.read

    def recording_read(self, path: str) -> bytes:
        if path.endswith(".avro") and "/snap-" not in path:
            events.append(("manifest", path))
        return read(self, path)

    monkeypatch.setattr(FileIO, "read", recording_read)
    code, out, err = ws("-o", "jsonl", "files", "db.t", stdout=Recorder(events))
    assert code == 0, err
    kinds = [k for k, _ in events]
    assert kinds.count("manifest") == APPENDS and len(out.splitlines()) == APPENDS * 3
    first_write = kinds.index("write")
    assert json.loads(events[first_write][1].splitlines()[0])["file_path"].endswith(".parquet")
    # at most the read-ahead window (a few manifests) is read before the first row is out
    assert kinds[:first_write].count("manifest") < APPENDS - 2
    assert "manifest" in kinds[first_write:]


def test_a_path_holding_the_row_boundary_is_cut_right(ws, tmp_path):
    """A batch is encoded as one array and cut where ``}, {`` sits between two rows: a path that
    holds ``}, {`` (or a quote) makes the cut ambiguous, and the batch is encoded row by row."""
    uri, warehouse = f"sqlite:///{tmp_path}/catalog.db", str(tmp_path / "warehouse")
    t = load_table(build_catalog(resolve_catalog_config(None, uri=uri, warehouse=warehouse)), parse_identifier("db.t"))
    append_files(t, [DataFile(f"{t.location}/data/{name}.parquet", "parquet", (19100,), 1, 10)
                     for name in ('odd}, {"content": "data"}, {', "plain")])
    code, out, err = ws("-o", "json", "files", "db.t")
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == APPENDS * 3 + 2 + 2
    for line in lines[1:-1]:
        line = line.removesuffix(",")
        assert line == json.dumps(json.loads(line))
    assert any('odd}, {\\"content\\"' in line for line in lines)
    code, jsonl, err = ws("-o", "jsonl", "files", "db.t")
    assert code == 0, err
    assert jsonl.splitlines() == [line.removesuffix(",") for line in lines[1:-1]]
