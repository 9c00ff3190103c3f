"""v4 relative paths (v4 walk-through: "Relative paths: move a table without rewriting it"):
how stored paths resolve and how a writer stores them, and a v4 table in a SQL catalog whose
manifests hold relative paths while icectl shows absolute ones."""
from __future__ import annotations

import io
import json
import os
import string

import fastavro
import pytest
from hypothesis import given, settings, strategies as st

from icectl.errors import InvalidMetadataError
from icectl.io import relativize_path, resolve_path

# The walk-through's table, plus the cases around it.
RESOLVE = [
    (4, "s3://bucket/db/table", "data/00000.parquet", "s3://bucket/db/table/data/00000.parquet"),
    (4, "s3://bucket/db/table", "hdfs://wh/x/00000.parquet", "hdfs://wh/x/00000.parquet"),
    (4, "s3://bucket/db/table", "s3://bucket/db/table/data/00000.parquet", "s3://bucket/db/table/data/00000.parquet"),
    (4, "s3://bucket/db/table/", "data/00000.parquet", "s3://bucket/db/table/data/00000.parquet"),
    (4, "s3://bucket/db/table", "metadata/snap-1-1-x.avro", "s3://bucket/db/table/metadata/snap-1-1-x.avro"),
    (4, "s3://bucket/db/table", "./data/a.parquet", "s3://bucket/db/table/data/a.parquet"),
    (4, "s3://bucket/db/table", "data/x/../a.parquet", "s3://bucket/db/table/data/a.parquet"),
    (4, "/tmp/wh/db/t", "data/a.parquet", "/tmp/wh/db/t/data/a.parquet"),
    (4, "/tmp/wh/db/t", "/elsewhere/a.parquet", "/elsewhere/a.parquet"),
    (4, "file:/tmp/wh/db/t", "data/a.parquet", "file:/tmp/wh/db/t/data/a.parquet"),
    (3, "s3://bucket/db/table", "s3://bucket/db/table/data/00000.parquet", "s3://bucket/db/table/data/00000.parquet"),
    (3, "s3://bucket/db/table", "data/00000.parquet", "data/00000.parquet"),  # v3 and earlier: unchanged
    (1, "s3://bucket/db/table", "../x.parquet", "../x.parquet"),
]


@pytest.mark.parametrize("version,location,stored,resolved", RESOLVE)
def test_resolve(version, location, stored, resolved):
    assert resolve_path(location, stored, version) == resolved


@pytest.mark.parametrize("stored", ["../x.parquet", "data/../../x.parquet", "..", ".", "./", "data/.."])
def test_escaping_the_location_is_rejected(stored):
    with pytest.raises(InvalidMetadataError, match="escapes the table location"):
        resolve_path("s3://bucket/db/table", stored, 4)


def test_relative_path_needs_a_location():
    with pytest.raises(InvalidMetadataError, match="no location"):
        resolve_path(None, "data/a.parquet", 4)
    assert resolve_path(None, "s3://b/a.parquet", 4) == "s3://b/a.parquet"


RELATIVIZE = [
    (4, "s3://bucket/db/table", "s3://bucket/db/table/data/00000.parquet", "data/00000.parquet"),
    (4, "s3://bucket/db/table/", "s3://bucket/db/table/data/00000.parquet", "data/00000.parquet"),
    (4, "s3://bucket/db/table", "s3://other/db/table/data/00000.parquet", "s3://other/db/table/data/00000.parquet"),
    # A sibling whose name starts with the location is not under it.
    (4, "s3://bucket/db/table", "s3://bucket/db/table2/data/a.parquet", "s3://bucket/db/table2/data/a.parquet"),
    (4, "/tmp/wh/t", "/tmp/wh/t/metadata/m.avro", "metadata/m.avro"),
    (4, None, "s3://bucket/db/table/data/a.parquet", "s3://bucket/db/table/data/a.parquet"),
    (3, "s3://bucket/db/table", "s3://bucket/db/table/data/00000.parquet", "s3://bucket/db/table/data/00000.parquet"),
    (2, "s3://bucket/db/table", "s3://bucket/db/table/data/00000.parquet", "s3://bucket/db/table/data/00000.parquet"),
]


@pytest.mark.parametrize("version,location,path,stored", RELATIVIZE)
def test_relativize(version, location, path, stored):
    assert relativize_path(location, path, version) == stored
    if location is not None:
        assert resolve_path(location, stored, version) == path


segment = st.text(alphabet=string.ascii_letters + string.digits + "-_=.", min_size=1, max_size=12).filter(
    lambda s: s not in (".", ".."))


@settings(max_examples=200, deadline=None)
@given(location=st.sampled_from(["s3://bucket/db/table", "s3a://b/wh/ns.db/t", "hdfs://nn:8020/wh/t",
                                 "gs://b/t", "/tmp/wh/t", "file:/tmp/wh/t", "abfss://c@acct.dfs.core.windows.net/t"]),
       parts=st.lists(segment, min_size=1, max_size=4))
def test_relativize_then_resolve_is_identity(location, parts):
    path = location + "/" + "/".join(parts)
    stored = relativize_path(location, path, 4)
    assert stored == "/".join(parts)
    assert resolve_path(location, stored, 4) == path
    # Moving the table: the same stored path resolves under the new location.
    assert resolve_path("s3://moved/db/t", stored, 4) == "s3://moved/db/t/" + "/".join(parts)


def test_relative_path_that_looks_like_a_scheme():
    location = "s3://bucket/db/table"
    path = location + "/part:1/a.parquet"
    assert resolve_path(location, relativize_path(location, path, 4), 4) == path


# -- end to end: a v4 table in a SQL catalog ------------------------------------------------------------

@pytest.fixture
def cli(tmp_path, monkeypatch):
    from icectl.cli.context import Env
    from icectl.cli.main import run

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.chdir(tmp_path)
    uri = f"sqlite:///{tmp_path}/catalog.db"
    warehouse = str(tmp_path / "warehouse")

    def call(*args: str) -> tuple[int, str, str]:
        env = Env(stdout=io.StringIO(), stderr=io.StringIO())
        code = run(["--uri", uri, "--warehouse", warehouse, *args], env)
        return code, env.stdout.getvalue(), env.stderr.getvalue()

    call.uri, call.warehouse = uri, warehouse  # type: ignore[attr-defined]
    return call


def _load(cli, name: str):
    from icectl.catalog import build_catalog, parse_identifier, resolve_catalog_config
    from icectl.table.loaded import load_table

    catalog = build_catalog(resolve_catalog_config(None, uri=cli.uri, warehouse=cli.warehouse))
    return load_table(catalog, parse_identifier(name))


def _avro(path: str) -> tuple[list[dict], dict]:
    with open(path, "rb") as f:
        r = fastavro.reader(f)
        return list(r), {k: v for k, v in r.metadata.items()}


def test_v4_table_stores_relative_paths(cli, tmp_path):
    from icectl.formats.manifest import DataFile, FileContent
    from helpers import append_files

    code, out, err = cli("create", "--yes", "db.events", "--schema", "id:long!, ts:timestamptz, name:string",
                         "--partition-by", "day(ts)", "--format-version", "4", "-o", "json")
    assert code == 0, err
    created = json.loads(out)
    location = created["location"]
    assert location == os.path.join(cli.warehouse, "db", "events")
    table = _load(cli, "db.events")
    assert table.metadata.format_version == 4
    inside = f"{location}/data/ts_day=2024-01-02/a.parquet"
    outside = "s3://backfill-bucket/old/b.parquet"
    dv = f"{location}/data/ts_day=2024-01-02/a-dv.puffin"
    table = append_files(table, [
        DataFile(inside, "parquet", (19724,), 10, 1000, value_counts={1: 10}, null_value_counts={1: 0},
                 lower_bounds={1: (1).to_bytes(8, "little")}, upper_bounds={1: (10).to_bytes(8, "little")}),
        DataFile(outside, "parquet", (19725,), 5, 500),
    ])
    table = append_files(table, [
        DataFile(dv, "puffin", (19724,), 2, 300, content=FileContent.POSITION_DELETES, referenced_data_file=inside,
                 content_offset=4, content_size_in_bytes=40),
    ])

    # The metadata file: manifest-list paths are relative.
    with open(table.metadata_location) as f:
        doc = json.load(f)
    assert doc["location"] == location
    assert len(doc["snapshots"]) == 2
    for snap in doc["snapshots"]:
        assert snap["manifest-list"].startswith("metadata/snap-"), snap["manifest-list"]
        assert os.path.exists(os.path.join(location, snap["manifest-list"]))

    # The manifest list: manifest paths are relative.
    current = next(s for s in doc["snapshots"] if s["snapshot-id"] == doc["current-snapshot-id"])
    manifests, _ = _avro(os.path.join(location, current["manifest-list"]))
    assert len(manifests) == 2
    stored_files = {}
    for m in manifests:
        assert m["manifest_path"].startswith("metadata/") and not m["manifest_path"].startswith("/")
        entries, meta = _avro(os.path.join(location, m["manifest_path"]))
        assert meta["format-version"] == "4"
        for e in entries:
            stored_files[e["data_file"]["file_path"]] = e["data_file"]
    # Data files: relative under the location, absolute outside it; so is referenced_data_file.
    rel_inside = "data/ts_day=2024-01-02/a.parquet"
    assert set(stored_files) == {rel_inside, outside, "data/ts_day=2024-01-02/a-dv.puffin"}
    assert stored_files["data/ts_day=2024-01-02/a-dv.puffin"]["referenced_data_file"] == rel_inside
    # v4 keeps metrics in content_stats, not the v3 maps.
    stats = stored_files[rel_inside]["content_stats"]
    assert stats["f1"]["value_count"] == 10 and stats["f1"]["lower_bound"] == 1 and stats["f1"]["upper_bound"] == 10
    assert "lower_bounds" not in stored_files[rel_inside]

    # What icectl shows: absolute paths.
    code, out, err = cli("files", "db.events", "-o", "json")
    assert code == 0, err
    rows = {r["file_path"]: r for r in json.loads(out)}
    assert set(rows) == {inside, outside, dv}
    assert rows[dv]["referenced_data_file"] == inside
    assert rows[dv]["content"] == "deletion-vector"
    assert rows[inside]["partition"] == {"ts_day": "2024-01-02"}
    code, out, err = cli("describe", "db.events", "-o", "json")
    assert code == 0, err
    d = json.loads(out)
    assert d["location"] == location and d["format_version"] == 4
    assert d["current_snapshot"]["manifest_list"].startswith("metadata/snap-")
    assert d["totals"]["data_files"] == 2 and d["totals"]["deletion_vectors"] == 1


def test_v4_table_moves_by_changing_its_location(cli, tmp_path):
    """Copy the whole folder elsewhere, point a new metadata file at the new location: every
    stored path still resolves (no manifest is rewritten)."""
    import shutil

    from icectl.formats.manifest import DataFile
    from helpers import append_files

    assert cli("create", "--yes", "db.t", "--schema", "id:long", "--format-version", "4")[0] == 0
    table = _load(cli, "db.t")
    old = table.location
    append_files(table, [DataFile(f"{old}/data/a.parquet", "parquet", (), 3, 30)])
    table = _load(cli, "db.t")
    new = str(tmp_path / "moved" / "t")
    shutil.copytree(old, new)
    moved_metadata = os.path.join(new, "metadata", "99999-moved.metadata.json")
    with open(table.metadata_location) as f:
        doc = json.load(f)
    doc["location"] = new
    with open(moved_metadata, "w") as f:
        json.dump(doc, f)
    code, out, err = cli("files", moved_metadata, "-o", "json")
    assert code == 0, err
    assert [r["file_path"] for r in json.loads(out)] == [f"{new}/data/a.parquet"]


@pytest.mark.parametrize("by", [
    "location",
    "metadata-file",
])
def test_v4_without_location_opened_by_path(cli, tmp_path, by):
    """v4: "location ... becomes optional - the catalog can supply it"; opened by path, the
    table's folder is the location."""
    from icectl.formats.manifest import DataFile
    from helpers import append_files

    assert cli("create", "--yes", "db.t", "--schema", "id:long", "--format-version", "4")[0] == 0
    table = _load(cli, "db.t")
    table = append_files(table, [DataFile(f"{table.location}/data/a.parquet", "parquet", (), 3, 30)])
    with open(table.metadata_location) as f:
        doc = json.load(f)
    del doc["location"]
    path = os.path.join(table.location, "metadata", "99999-noloc.metadata.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    code, out, err = cli("files", path if by == "metadata-file" else table.location, "-o", "json")
    assert code == 0, err
    assert [r["file_path"] for r in json.loads(out)] == [f"{table.location}/data/a.parquet"]
