"""``icectl list --all``: the catalog's inventory, streamed.

The catalog (:func:`big`): a SQLite SQL catalog of 2,000 tables in namespaces at two depths
(``ns0`` .. ``ns4`` and ``ns0.deep`` .. ``ns4.deep``), each table its own copy of one real
metadata file (a table with one append: format version, location, a current snapshot), registered
straight in ``iceberg_tables``; plus ``bad.corrupt`` (its metadata file is not JSON) and
``bad.missing`` (its metadata file does not exist).

Streaming is proved twice, each by a test that a non-streaming implementation fails:
- in-process, the number of metadata files read when the first line reaches stdout is far below
  2,000;
- end to end, icectl in a subprocess: once its first line is read, the metadata files of the last
  1,000 tables are deleted; those tables are then listed with a not-found error (icectl read them
  after it printed its first line), and the first ones in full.
"""
from __future__ import annotations

import io
import json
import os
import pathlib
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tracemalloc
from dataclasses import dataclass

import pytest

from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.errors import ExitCode

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/ for validate_corpus
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # tests/cli for output_shapes

from output_shapes import DOCS_SHAPES, INVENTORY_ENTRY, check_shape  # noqa: E402
from validate_corpus import tables  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]


@dataclass
class Catalog:
    root: pathlib.Path
    uri: str
    warehouse: str
    names: list[str]  # the good tables, in the listing's order (namespace, then name)
    metadata: dict[str, str]  # name -> its metadata file
    snapshot_id: int
    location: str

    def args(self, *more: str) -> list[str]:
        return ["--uri", self.uri, "--warehouse", self.warehouse, *more]

    def run(self, *args: str, stdout=None) -> tuple[int, str, str]:
        env = Env(stdout=stdout or io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
        code = run(self.args(*args), env)
        out = env.stdout.getvalue() if hasattr(env.stdout, "getvalue") else ""
        return code, out, env.stderr.getvalue()


def build(root: pathlib.Path, n: int, *, broken: bool = True) -> Catalog:
    """``n`` tables (copies of one real metadata file), spread over ten namespaces at two depths."""
    from helpers import append_files, create_table

    from icectl.catalog.sql import SqlCatalog
    from icectl.io import FileIO

    wh = root / "warehouse"
    wh.mkdir(parents=True)
    uri = f"sqlite:///{root / 'catalog.db'}"
    catalog = SqlCatalog("default", uri, str(wh), FileIO({}))
    seed = create_table(catalog, ("seed", "t"), schema_text="id:long!, name:string, ts:timestamptz",
                        partition_by="day(ts)")
    seed = append_files(seed, [tables.write_data_file(seed, [1, 2], ["a", "b"], tables.day_of("2026-01-01"))])
    catalog.drop_table(("seed", "t"))
    source = seed.metadata_location
    files = wh / "copies"
    files.mkdir()
    namespaces = [f"ns{i}" for i in range(5)] + [f"ns{i}.deep" for i in range(5)]
    rows, metadata = [], {}
    for i in range(n):
        ns = namespaces[i % len(namespaces)]
        name = f"t{i:05d}"
        path = str(files / f"{i:05d}.metadata.json")
        shutil.copyfile(source, path)
        rows.append(("default", ns, name, path, None, "TABLE"))
        metadata[f"{ns}.{name}"] = path
    if broken:
        corrupt = wh / "corrupt.metadata.json"
        corrupt.write_text('{"format-version": 2, "table-uuid": ')
        rows.append(("default", "bad", "corrupt", str(corrupt), None, "TABLE"))
        rows.append(("default", "bad", "missing", str(wh / "missing.metadata.json"), None, "TABLE"))
    with sqlite3.connect(root / "catalog.db") as db:
        db.executemany("INSERT INTO iceberg_tables VALUES (?, ?, ?, ?, ?, ?)", rows)
    names = sorted(metadata, key=lambda q: (q.rsplit(".", 1)[0], q.rsplit(".", 1)[1]))
    return Catalog(root, uri, str(wh), names, metadata, seed.metadata.current_snapshot_id, seed.location)


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Catalog:
    return build(tmp_path_factory.mktemp("inventory"), 2000)


@pytest.fixture(autouse=True)
def _no_config(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)


# -- what is listed ---------------------------------------------------------------------------------------

def test_jsonl_lists_every_table_with_its_metadata_and_the_broken_ones_with_their_error(big):
    code, out, err = big.run("-o", "jsonl", "list", "--all")
    assert code == ExitCode.PARTIAL_FAILURE, err
    lines = out.splitlines()
    rows = [json.loads(line) for line in lines]  # every line is one JSON object
    for r in rows:
        check_shape(r, INVENTORY_ENTRY)
    assert len(rows) == 2002
    by_name = {r["name"]: r for r in rows}
    # The order is the catalog's: by namespace, then name; nested namespaces are walked too.
    assert [r["name"] for r in rows if not r["name"].startswith("bad.")] == big.names
    assert [r["name"] for r in rows[:2]] == ["bad.corrupt", "bad.missing"]
    good = by_name["ns3.deep.t00008"]
    assert good == {"kind": "table", "name": "ns3.deep.t00008", "namespace": "ns3.deep", "format_version": 2,
                    "location": big.location, "current_snapshot_id": big.snapshot_id,
                    "current_snapshot_timestamp_ms": good["current_snapshot_timestamp_ms"],
                    "metadata_location": big.metadata["ns3.deep.t00008"],
                    "last_updated_ms": good["last_updated_ms"], "error": None, "current_version_id": None,
                    "current_version_timestamp_ms": None}
    assert good["current_snapshot_timestamp_ms"] > 1_700_000_000_000 and good["last_updated_ms"] >= \
        good["current_snapshot_timestamp_ms"]
    corrupt, missing = by_name["bad.corrupt"], by_name["bad.missing"]
    assert corrupt["error"]["kind"] == "invalid-metadata" and corrupt["error"]["exit_code"] == 4
    assert corrupt["error"]["type"] == "InvalidMetadataError"
    assert "corrupt.metadata.json" in corrupt["error"]["message"] and "\n" not in corrupt["error"]["message"]
    assert corrupt["metadata_location"].endswith("corrupt.metadata.json") and corrupt["format_version"] is None
    assert missing["error"]["kind"] == "not-found" and missing["error"]["exit_code"] == 3
    # The run says that some entries had errors: exit 16, and one JSON error on stderr naming them.
    error = json.loads(err)["error"]
    assert error["exit_code"] == 16 and error["type"] == "PartialFailureError"
    assert "2 of 2002 tables could not be read (bad.corrupt, bad.missing)" in error["message"]


def test_json_is_one_document_of_the_same_entries(big):
    code, out, err = big.run("-o", "json", "list", "--all")
    assert code == ExitCode.PARTIAL_FAILURE
    doc = json.loads(out)
    check_shape(doc, DOCS_SHAPES["list --all"][0])
    _, jsonl, _ = big.run("-o", "jsonl", "list", "--all")
    assert doc == [json.loads(line) for line in jsonl.splitlines()]


def test_text_piped_is_tab_separated_a_line_a_table(big):
    code, out, err = big.run("list", "--all")
    assert code == ExitCode.PARTIAL_FAILURE
    assert err.startswith("icectl: error: 2 of 2002 tables could not be read")
    lines = out.splitlines()
    assert lines[0].split("\t") == ["kind", "name", "format_version", "current_snapshot_id", "snapshot_time",
                                    "last_updated", "location", "metadata_location", "error", "current_version_id",
                                    "version_time"]
    assert len(lines) == 2003 and all(line.count("\t") == 10 for line in lines)
    cells = dict((line.split("\t")[1], line.split("\t")) for line in lines[1:])
    row = cells["ns0.t00000"]
    assert row[0] == "table" and row[2] == "2" and row[3] == str(big.snapshot_id) and row[6] == big.location
    assert row[4].endswith("Z") and row[7] == big.metadata["ns0.t00000"] and row[8] == ""
    assert cells["bad.corrupt"][8].startswith("invalid-metadata: ") and cells["bad.corrupt"][2] == ""
    assert cells["bad.missing"][8].startswith("not-found: ")


def test_views_are_listed_after_the_tables_and_an_unreadable_one_with_its_error(tmp_path):
    from migrate_tables import build_views

    from icectl.catalog.sql import SqlCatalog
    from icectl.io import FileIO

    cat = build(tmp_path, 3, broken=False)
    sql = SqlCatalog("default", cat.uri, cat.warehouse, FileIO())
    good, bad = build_views(sql, "ns0", 2, cat.warehouse)
    view_md = sql.load_view(good)
    pathlib.Path(sql.load_view_metadata_location(bad)).write_text("{not json")
    code, out, err = cat.run("-o", "jsonl", "list", "--all")
    assert code == ExitCode.PARTIAL_FAILURE, err
    rows = [json.loads(line) for line in out.splitlines()]
    for r in rows:
        check_shape(r, INVENTORY_ENTRY)
    assert [r["kind"] for r in rows] == ["table"] * 3 + ["view"] * 2, "views come after the tables"
    assert rows[3] == {"kind": "view", "name": "ns0.v0", "namespace": "ns0", "format_version": 1,
                       "location": view_md.metadata.location, "current_snapshot_id": None,
                       "current_snapshot_timestamp_ms": None, "metadata_location": view_md.metadata_location,
                       "last_updated_ms": 5555, "error": None, "current_version_id": 2,
                       "current_version_timestamp_ms": 5555}
    assert rows[4]["name"] == "ns0.v1" and rows[4]["error"]["kind"] == "invalid-metadata"
    assert "1 of 5 tables and views could not be read (ns0.v1)" in json.loads(err)["error"]["message"]
    code, out, err = cat.run("list", "--all")
    view = [line.split("\t") for line in out.splitlines() if line.startswith("view\t")]
    assert [v[1] for v in view] == ["ns0.v0", "ns0.v1"] and view[0][9:] == ["2", "1970-01-01T00:00:05.555Z"]


def test_text_on_a_terminal_is_a_fixed_width_line_a_table(tmp_path, monkeypatch):
    cat = build(tmp_path, 12)
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("NO_COLOR", "1")

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    code, out, _ = cat.run("list", "--all", stdout=Tty())
    assert code == ExitCode.PARTIAL_FAILURE
    lines = re.sub("\x1b\\[[0-9;]*m", "", out).splitlines()  # bold header, red errors
    assert lines[0].split() == ["NAME", "V", "SNAPSHOT", "SNAPSHOT", "TIME", "METADATA"]
    body = lines[1:-1]
    assert len(body) == 14 and all(len(line) <= 100 for line in lines)
    good = [line for line in body if " error " not in line]
    # The columns line up without knowing the other rows: the snapshot id ends at one column.
    assert len({line.index(str(cat.snapshot_id)) for line in good}) == 1
    assert all(line.endswith(".metadata.json") for line in good)
    assert any(line.startswith("bad.corrupt ") and "invalid-metadata" in line for line in body)
    assert lines[-1] == "14 tables, 2 could not be read (catalog default)"


def test_an_empty_catalog_and_usage_errors(tmp_path):
    empty = build(tmp_path, 0, broken=False)
    assert empty.run("-o", "json", "list", "--all")[:2] == (0, "[]\n")
    assert empty.run("-o", "jsonl", "list", "--all")[:2] == (0, "")
    code, out, _ = empty.run("list", "--all")
    assert code == 0 and out.startswith("no tables in catalog default")
    code, _, err = empty.run("list", "ns0", "--all")
    assert code == ExitCode.USAGE and "not both" in err
    # jsonl is an output of list --all; the other commands refuse it before they run.
    code, _, err = empty.run("-o", "jsonl", "list")
    assert code == ExitCode.USAGE and "list --all" in json.loads(err)["error"]["message"]
    code, _, err = empty.run("-o", "jsonl", "describe", "ns0.t")
    assert code == ExitCode.USAGE and "describe prints table or json, not jsonl" in json.loads(err)["error"]["message"]


def test_a_file_system_catalog_is_walked_through_its_namespaces(tmp_path):
    wh = tmp_path / "wh"
    for name in ("a.t1", "a.b.t2", "c.t3"):
        env = Env(stdout=io.StringIO(), stderr=io.StringIO())
        assert run(["--warehouse", str(wh), "create", name, "--schema", "id:long", "--yes"], env) == 0, \
            env.stderr.getvalue()
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    assert run(["--warehouse", str(wh), "-o", "json", "list", "--all"], env) == 0, env.stderr.getvalue()
    rows = json.loads(env.stdout.getvalue())
    assert [(r["name"], r["format_version"], r["current_snapshot_id"]) for r in rows] == \
        [("a.t1", 2, None), ("a.b.t2", 2, None), ("c.t3", 2, None)]
    assert all(r["metadata_location"].endswith("v1.metadata.json") for r in rows)


# -- streaming ---------------------------------------------------------------------------------------------

class FirstWrite(io.StringIO):
    """A stdout that notes how many metadata files had been read when its first text came."""

    def __init__(self, counter: list[int]):
        super().__init__()
        self.counter = counter
        self.reads_at_first_write: int | None = None

    def write(self, text: str) -> int:
        if self.reads_at_first_write is None and text:
            self.reads_at_first_write = self.counter[0]
        return super().write(text)


@pytest.mark.parametrize("output", ["jsonl", "json", "table"])
def test_the_first_line_is_out_before_most_metadata_files_are_read(big, monkeypatch, output):
    import icectl.catalog.base as base

    reads = [0]
    real = base.read_metadata_file

    def counting(io_, location, *a, **kw):
        reads[0] += 1
        return real(io_, location, *a, **kw)

    monkeypatch.setattr(base, "read_metadata_file", counting)
    out = FirstWrite(reads)
    code, _, _ = big.run("-o", output, "list", "--all", stdout=out)
    assert code == ExitCode.PARTIAL_FAILURE
    assert reads[0] == 2002  # every table once
    assert out.reads_at_first_write is not None and out.reads_at_first_write < 200, out.reads_at_first_write


def test_a_subprocess_prints_its_first_line_before_it_reads_the_last_tables(big, tmp_path):
    """The metadata files of the last 1,000 tables are deleted right after icectl's first line
    arrives: icectl had not read them yet, so it lists them as not found."""
    cat = build(tmp_path, 2000, broken=False)
    late = cat.names[1000:]
    env = {**os.environ, "HOME": str(tmp_path / "home"), "PYTHONUNBUFFERED": "0"}
    env.pop("ICECTL_CONFIG", None)
    proc = subprocess.Popen([sys.executable, "-m", "icectl", *cat.args("-o", "jsonl", "list", "--all")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        first = json.loads(proc.stdout.readline())
        for name in late:
            os.unlink(cat.metadata[name])
        rest = [json.loads(line) for line in proc.stdout]
        code = proc.wait(timeout=120)
    finally:
        proc.kill()
        proc.wait()
    rows = [first] + rest
    assert [r["name"] for r in rows] == cat.names
    assert first["error"] is None and first["format_version"] == 2
    by_name = {r["name"]: r for r in rows}
    assert all(by_name[n]["error"]["kind"] == "not-found" for n in late)
    assert all(by_name[n]["error"] is None for n in cat.names[:10])
    assert code == ExitCode.PARTIAL_FAILURE
    assert "1000 of 2000 tables could not be read" in proc.stderr.read()


class Sink(io.TextIOBase):
    def write(self, text: str) -> int:
        return len(text)


def test_memory_stays_flat_with_the_catalog_size(tmp_path):
    small = build(tmp_path / "small", 200, broken=False)
    large = build(tmp_path / "large", 2000, broken=False)

    def peak(cat: Catalog) -> int:
        tracemalloc.start()
        try:
            code, _, err = cat.run("-o", "jsonl", "list", "--all", stdout=Sink())
            assert code == 0, err
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    peak(small)  # warm: modules and caches loaded once
    a, b = peak(small), peak(large)
    assert b < 2 * a, (a, b)  # ten times the tables, not ten times the memory


# -- documentation -----------------------------------------------------------------------------------------

def test_the_docs_page_documents_the_shape_and_the_exit_code():
    """docs/inventory.md gives the entry's shape in the README's notation, with exactly the keys
    the output has, and exit code 16 with the meaning errors.py gives it."""
    shape, page = DOCS_SHAPES["list --all"]
    text = (REPO / page).read_text()
    documented = re.search(r"^- `list --all`: `\[\{(.+?)\}\]`", text, re.M | re.S)
    assert documented, "docs/inventory.md lacks the shape line of list --all"
    inner = documented.group(1)
    error_keys = re.search(r"error: \{(.+?)\} \| null", inner, re.S)
    assert error_keys
    outer = inner.replace(error_keys.group(0), "error")
    assert [k.strip() for k in outer.split(",")] == list(shape[0])
    assert [k.strip() for k in error_keys.group(1).split(",")] == list(INVENTORY_ENTRY["error"].spec)
    assert re.search(r"^\| 16 \| some tables could not be read", text, re.M)
    assert ExitCode.PARTIAL_FAILURE == 16


def test_the_docs_page_examples_run(tmp_path, monkeypatch):
    """Every command of the page's ``sh`` blocks runs as shown (the local default catalog in
    ./warehouse; docs/inventory.md names this test as their runner)."""
    monkeypatch.chdir(tmp_path)
    text = (REPO / "docs" / "inventory.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    assert len(blocks) == 2
    outputs = []
    for line in blocks[0].splitlines():
        assert line.startswith("icectl ")
        env = Env(stdout=io.StringIO(), stderr=io.StringIO())
        assert run(shlex.split(line)[1:], env) == 0, (line, env.stderr.getvalue())
        outputs.append(env.stdout.getvalue())
    names = [json.loads(x)["name"] for x in outputs[3].splitlines()]
    assert names == ["demo.events", "lake.sales.events"]
    assert json.loads(outputs[4]) == [json.loads(x) for x in outputs[3].splitlines()]
    # The second block, through a shell (jq and awk), once lake.sales.events' metadata file is gone:
    # jq names it with its error; awk finds no format-version-1 table (the demo's are version 2).
    os.remove(json.loads(outputs[3].splitlines()[1])["metadata_location"].removeprefix("file://"))
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "icectl").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m icectl "$@"\n')
    (bindir / "icectl").chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    lines = [x for x in blocks[1].splitlines() if x and not x.startswith("#")]
    got = [subprocess.run(["bash", "-o", "pipefail", "-c", x], env=env, capture_output=True, text=True, timeout=120)
           for x in lines]
    assert got[0].stdout.startswith("lake.sales.events\tnot-found\t"), got[0]
    assert got[0].returncode == 16  # pipefail: icectl's exit code, some tables could not be read
    assert got[1].stdout == "" and got[1].returncode == 16, got[1]


def test_a_listing_that_fails_midway_keeps_what_it_printed_one_document(big, monkeypatch):
    from icectl.catalog.sql import SqlCatalog
    from icectl.errors import StorageError

    real = SqlCatalog.walk_tables

    def failing(self):
        for i, t in enumerate(real(self)):
            if i == 300:
                raise StorageError("SQL catalog database catalog.db: disk I/O error")
            yield t

    monkeypatch.setattr(SqlCatalog, "walk_tables", failing)
    code, out, err = big.run("-o", "json", "list", "--all")
    assert code == ExitCode.STORAGE and "disk I/O error" in json.loads(err)["error"]["message"]
    assert len(json.loads(out)) == 300
