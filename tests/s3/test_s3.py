"""FileIO and catalogs on S3, against a moto S3 server on loopback (see conftest.py)."""
from __future__ import annotations

import io
import json

import pytest

from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.errors import IcectlError, NotFoundError
from icectl.io import FileIO
from icectl.io.safety import PathGuard

pytestmark = pytest.mark.s3


# -- helpers -----------------------------------------------------------------------------------

def parquet_bytes(ids: list[int], names: list[str | None]) -> bytes:
    """A Parquet file with Iceberg field ids (id=1, name=2), as an Iceberg writer produces."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([
        pa.field("id", pa.int64(), nullable=False, metadata={"PARQUET:field_id": "1"}),
        pa.field("name", pa.string(), nullable=True, metadata={"PARQUET:field_id": "2"}),
    ])
    buf = io.BytesIO()
    pq.write_table(pa.table({"id": ids, "name": names}, schema=schema), buf)
    return buf.getvalue()


def upload_data_file(fio: FileIO, path: str, ids: list[int], names: list[str | None]):
    from icectl.formats.manifest import DataFile

    data = parquet_bytes(ids, names)
    fio.write(path, data)
    return DataFile(file_path=path, file_format="PARQUET", partition=(), record_count=len(ids),
                    file_size_in_bytes=len(data))


def cli(args: list[str]) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run(args, env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def write_config(path, catalogs: dict[str, dict[str, str]], default: str | None = None):
    import yaml

    data: dict = {"catalog": catalogs}
    if default:
        data["default-catalog"] = default
    path.write_text(yaml.safe_dump(data))
    return str(path)


# -- FileIO ------------------------------------------------------------------------------------

def test_fileio_write_read_exists_size(moto_s3, s3_prefix):
    fio = FileIO(dict(moto_s3))
    p = f"{s3_prefix}/a/b/file.bin"
    assert not fio.exists(p)
    fio.write(p, b"hello s3")
    assert fio.exists(p)
    assert fio.read(p) == b"hello s3"
    assert fio.size(p) == 8
    assert fio.read_range(p, 6, 2) == b"s3"


def test_fileio_open_streams_through_s3fs(moto_s3, s3_prefix):
    import pyarrow as pa
    import pyarrow.parquet as pq

    fio = FileIO(dict(moto_s3))
    p = f"{s3_prefix}/stream/t.parquet"
    with fio.open(p, "wb") as sink:
        pq.write_table(pa.table({"x": [1, 2, 3]}), sink)
    assert fio.size(p) > 0
    with fio.open(p.replace("s3://", "s3a://", 1), "rb") as fh:
        assert pq.read_table(fh).column("x").to_pylist() == [1, 2, 3]
    with pytest.raises(NotFoundError):
        fio.open(f"{s3_prefix}/stream/missing.parquet", "rb")


def test_fileio_subdirectories_on_s3(moto_s3, s3_prefix):
    fio = FileIO(dict(moto_s3))
    for p in ("wh/b/x/f.bin", "wh/a/f.bin", "wh/top.bin"):
        fio.write(f"{s3_prefix}/{p}", b"x")
    assert fio.subdirectories(f"{s3_prefix}/wh") == ["a", "b"]
    assert fio.subdirectories(f"{s3_prefix}/wh/b".replace("s3://", "s3a://", 1)) == ["x"]
    assert fio.subdirectories(f"{s3_prefix}/nothing") == []


def test_fileio_write_refuses_overwrite_unless_asked(moto_s3, s3_prefix):
    fio = FileIO(dict(moto_s3))
    p = f"{s3_prefix}/x.txt"
    fio.write(p, b"one")
    with pytest.raises(IcectlError, match="refusing to overwrite"):
        fio.write(p, b"two")
    fio.write(p, b"two", overwrite=True)
    assert fio.read(p) == b"two"


def test_fileio_missing_file_is_not_found(moto_s3, s3_prefix):
    fio = FileIO(dict(moto_s3))
    p = f"{s3_prefix}/missing.bin"
    with pytest.raises(NotFoundError):
        fio.read(p)
    with pytest.raises(NotFoundError):
        fio.size(p)


def test_fileio_list_files_and_delete(moto_s3, s3_prefix):
    fio = FileIO(dict(moto_s3))
    paths = [f"{s3_prefix}/t/metadata/v1.metadata.json", f"{s3_prefix}/t/data/a.parquet",
             f"{s3_prefix}/t/data/part=1/b.parquet"]
    for i, p in enumerate(paths):
        fio.write(p, b"x" * (i + 1))
    listed = {f.path: f.size for f in fio.list_files(f"{s3_prefix}/t")}
    assert listed == {p: i + 1 for i, p in enumerate(paths)}
    assert all(f.modified_ms and f.modified_ms > 0 for f in fio.list_files(f"{s3_prefix}/t"))

    fio.delete(paths[1], guard=PathGuard(f"{s3_prefix}/t"))
    assert not fio.exists(paths[1])
    assert {f.path for f in fio.list_files(f"{s3_prefix}/t")} == {paths[0], paths[2]}
    assert list(fio.list_files(f"{s3_prefix}/nothing-here")) == []


def test_s3a_paths_reach_the_same_objects(moto_s3, s3_prefix):
    fio = FileIO(dict(moto_s3))
    s3 = f"{s3_prefix}/same/obj.bin"
    s3a = s3.replace("s3://", "s3a://", 1)
    fio.write(s3a, b"via s3a")
    assert fio.exists(s3)
    assert fio.read(s3) == b"via s3a"
    assert fio.size(s3a) == 7
    # Listing keeps the scheme the caller used.
    assert [f.path for f in fio.list_files(s3a.rsplit("/", 1)[0])] == [s3a]
    assert [f.path for f in fio.list_files(s3.rsplit("/", 1)[0])] == [s3]
    # A fresh FileIO (a new process would have one) sees the object too.
    assert FileIO(dict(moto_s3)).read(s3a) == b"via s3a"
    fio.delete(s3, guard=PathGuard(s3.rsplit("/", 1)[0]))
    assert not fio.exists(s3a)


def test_fileio_objects_are_really_in_the_bucket(moto_s3, s3_prefix, s3_bucket):
    import boto3

    fio = FileIO(dict(moto_s3))
    fio.write(f"{s3_prefix}/real.txt", b"42")
    client = boto3.client("s3", endpoint_url=moto_s3["s3.endpoint"], region_name="us-east-1",
                          aws_access_key_id="testing", aws_secret_access_key="testing")
    key = s3_prefix.split(f"s3://{s3_bucket}/", 1)[1] + "/real.txt"
    assert client.get_object(Bucket=s3_bucket, Key=key)["Body"].read() == b"42"


def test_fileio_sees_changes_made_by_another_writer(moto_s3, s3_prefix, s3_bucket):
    """After listing a folder, a file written or overwritten by someone else is seen as it is now
    (regression: s3fs's listings cache made it look missing, or failed the read with FileExpired)."""
    import boto3

    fio = FileIO(dict(moto_s3))
    fio.write(f"{s3_prefix}/m/version-hint.text", b"9")
    fio.write(f"{s3_prefix}/m/v9.metadata.json", b"{}")
    assert len(list(fio.list_files(f"{s3_prefix}/m"))) == 2
    assert fio.exists(f"{s3_prefix}/m/version-hint.text")

    client = boto3.client("s3", endpoint_url=moto_s3["s3.endpoint"], region_name="us-east-1",
                          aws_access_key_id="testing", aws_secret_access_key="testing")
    key = s3_prefix.split(f"s3://{s3_bucket}/", 1)[1]
    client.put_object(Bucket=s3_bucket, Key=f"{key}/m/v10.metadata.json", Body=b"{}")
    client.put_object(Bucket=s3_bucket, Key=f"{key}/m/version-hint.text", Body=b"10")

    assert fio.exists(f"{s3_prefix}/m/v10.metadata.json")
    assert fio.size(f"{s3_prefix}/m/version-hint.text") == 2
    assert fio.read(f"{s3_prefix}/m/version-hint.text") == b"10"
    assert len(list(fio.list_files(f"{s3_prefix}/m"))) == 3


def test_path_style_access_property(moto_s3, s3_prefix):
    fio = FileIO({**moto_s3, "s3.path-style-access": "true"})
    fio.write(f"{s3_prefix}/ps.txt", b"ps")
    assert fio.read(f"{s3_prefix}/ps.txt") == b"ps"


# -- SQL catalog with an S3 warehouse, through the CLI -------------------------------------------

@pytest.fixture
def s3_sql_config(moto_s3, s3_prefix, tmp_path, monkeypatch):
    """An ICECTL_CONFIG with catalog ``s3cat``: SQLite locally, warehouse on S3."""
    props = {"type": "sql", "uri": f"sqlite:///{tmp_path / 'catalog.db'}", "warehouse": f"{s3_prefix}/wh", **moto_s3}
    cfg = write_config(tmp_path / "icectl.yaml", {"s3cat": props})
    monkeypatch.setenv("ICECTL_CONFIG", cfg)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.chdir(tmp_path)
    return props


def _catalog(name: str | None = None):
    from icectl.catalog import build_catalog, resolve_catalog_config

    return build_catalog(resolve_catalog_config(name))


def test_sql_catalog_s3_warehouse_create_append_inspect(s3_sql_config):
    from helpers import append_files
    from icectl.table.loaded import load_table

    wh = s3_sql_config["warehouse"]
    code, out, err = cli(["create", "--yes", "db.t", "--schema", "id:long!, name:string", "--output", "json"])
    assert code == 0, err
    created = json.loads(out)
    assert created["location"] == f"{wh}/db/t"
    assert created["metadata_location"].startswith(f"{wh}/db/t/metadata/00000-")

    catalog = _catalog()
    assert catalog.name == "s3cat"
    assert catalog.io.exists(created["metadata_location"])
    table = load_table(catalog, ("db", "t"))
    df = upload_data_file(catalog.io, f"{wh}/db/t/data/00000-0.parquet", [1, 2, 3], ["a", "b", None])
    table = append_files(table, [df])
    assert table.metadata_location.startswith(f"{wh}/db/t/metadata/00001-")

    code, out, err = cli(["describe", "db.t", "--output", "json"])
    assert code == 0, err
    d = json.loads(out)
    assert d["location"] == f"{wh}/db/t"
    assert d["metadata_location"] == table.metadata_location
    assert d["totals"]["data_files"] == 1
    assert d["totals"]["records"] == 3
    assert d["totals"]["data_bytes"] == df.file_size_in_bytes

    code, out, err = cli(["describe", "db.t"])  # human output works on S3 too
    assert code == 0, err
    assert "db.t" in out

    code, out, err = cli(["snapshots", "db.t", "--output", "json"])
    assert code == 0, err
    snaps = json.loads(out)
    assert len(snaps) == 1
    assert snaps[0]["snapshot_id"] == table.metadata.current_snapshot_id
    assert snaps[0]["operation"] == "append"

    code, out, err = cli(["files", "db.t", "--output", "json"])
    assert code == 0, err
    files = json.loads(out)
    assert [(f["file_path"], f["record_count"], f["file_size_in_bytes"], f["content"]) for f in files] == [
        (df.file_path, 3, df.file_size_in_bytes, "data")]

    # The manifest list and manifest are on S3 beside the metadata.
    names = [f.path.rsplit("/", 1)[-1] for f in catalog.io.list_files(f"{wh}/db/t/metadata")]
    assert sum(n.endswith(".metadata.json") for n in names) == 2
    assert any(n.startswith("snap-") and n.endswith(".avro") for n in names)

    # The data file is really Parquet on S3.
    import pyarrow.parquet as pq

    assert pq.read_table(io.BytesIO(catalog.io.read(df.file_path))).num_rows == 3


def test_sql_catalog_s3_explicit_catalog_flag_and_list(s3_sql_config):
    code, _, err = cli(["--catalog", "s3cat", "create", "--yes", "db.a", "--schema", "id:long"])
    assert code == 0, err
    code, _, err = cli(["create", "--yes", "db.b", "--schema", "id:long", "--catalog", "s3cat"])
    assert code == 0, err
    code, out, err = cli(["list", "--output", "json"])
    assert code == 0, err
    assert json.loads(out)["tables"] == ["db.a", "db.b"]


def test_table_by_s3_location_path(s3_sql_config):
    """The read-only path catalog opens ``s3://bucket/wh/db/t`` with the config's S3 properties."""
    from helpers import append_files
    from icectl.table.loaded import load_table

    wh = s3_sql_config["warehouse"]
    assert cli(["create", "--yes", "db.t", "--schema", "id:long!, name:string", "--format-version", "1"])[0] == 0
    catalog = _catalog()
    table = load_table(catalog, ("db", "t"))
    table = append_files(table, [upload_data_file(catalog.io, f"{wh}/db/t/data/a.parquet", [1], ["x"])])
    table = append_files(table, [upload_data_file(catalog.io, f"{wh}/db/t/data/b.parquet", [2, 3], ["y", "z"])])

    for target in (f"{wh}/db/t", f"{wh}/db/t/", table.metadata_location,
                   f"{wh}/db/t".replace("s3://", "s3a://", 1)):
        code, out, err = cli(["describe", target, "--output", "json"])
        assert code == 0, (target, err)
        d = json.loads(out)
        assert d["format_version"] == 1
        assert d["totals"]["records"] == 3, target
        assert d["current_snapshot"]["snapshot_id"] == table.metadata.current_snapshot_id

    code, out, err = cli(["snapshots", f"{wh}/db/t", "--output", "json"])
    assert code == 0, err
    assert len(json.loads(out)) == 2
    code, out, err = cli(["files", f"{wh}/db/t", "--output", "json"])
    assert code == 0, err
    assert sorted(f["file_path"].rsplit("/", 1)[-1] for f in json.loads(out)) == ["a.parquet", "b.parquet"]

    code, _, err = cli(["describe", f"{wh}/db/nope"])
    assert code == 3, err


def test_hadoop_catalog_on_s3_create_append_describe(moto_s3, s3_prefix, tmp_path, monkeypatch):
    from helpers import append_files
    from icectl.table.loaded import load_table

    wh = f"{s3_prefix}/hwh"
    cfg = write_config(tmp_path / "icectl.yaml", {"fs": {"type": "hadoop", "warehouse": wh, **moto_s3}})
    monkeypatch.setenv("ICECTL_CONFIG", cfg)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.chdir(tmp_path)

    code, out, err = cli(["create", "--yes", "db.t", "--schema", "id:long!, name:string", "--output", "json"])
    assert code == 0, err
    assert json.loads(out)["metadata_location"] == f"{wh}/db/t/metadata/v1.metadata.json"

    catalog = _catalog()
    assert catalog.kind == "file-system"
    assert catalog.io.read(f"{wh}/db/t/metadata/version-hint.text").decode().strip() == "1"
    table = load_table(catalog, ("db", "t"))
    table = append_files(table, [upload_data_file(catalog.io, f"{wh}/db/t/data/a.parquet", [1, 2], ["a", "b"])])
    assert table.metadata_location == f"{wh}/db/t/metadata/v2.metadata.json"
    assert catalog.io.read(f"{wh}/db/t/metadata/version-hint.text").decode().strip() == "2"
    # No temporary metadata files left behind by the copy-and-delete "rename".
    names = sorted(f.path.rsplit("/", 1)[-1] for f in catalog.io.list_files(f"{wh}/db/t/metadata")
                   if f.path.endswith(".metadata.json"))
    assert names == ["v1.metadata.json", "v2.metadata.json"]

    code, out, err = cli(["describe", "db.t", "--output", "json"])
    assert code == 0, err
    d = json.loads(out)
    assert d["metadata_location"] == f"{wh}/db/t/metadata/v2.metadata.json"
    assert d["totals"]["records"] == 2

    code, out, err = cli(["list", "--output", "json"])
    assert code == 0, err
    assert json.loads(out)["tables"] == ["db.t"]

    # A stale writer loses.
    from icectl.errors import CommitConflictError

    stale = load_table(catalog, ("db", "t"))
    append_files(load_table(catalog, ("db", "t")), [upload_data_file(catalog.io, f"{wh}/db/t/data/b.parquet", [3], ["c"])])
    with pytest.raises(CommitConflictError):
        append_files(stale, [upload_data_file(catalog.io, f"{wh}/db/t/data/c.parquet", [4], ["d"])])


# -- validate on S3 ------------------------------------------------------------------------------

def test_validate_on_s3_clean_then_a_missing_and_a_resized_file(s3_sql_config):
    """`validate` and `validate --deep` read the manifests and the files from S3 (threads for
    the object store): clean at first; a data file deleted and another rewritten with other bytes
    are FILE_MISSING and FILE_SIZE_MISMATCH (and a row-count mismatch), nothing else."""
    from helpers import append_files
    from icectl.table.loaded import load_table

    wh = s3_sql_config["warehouse"]
    code, _, err = cli(["create", "--yes", "db.v", "--schema", "id:long!, name:string", "--format-version", "2"])
    assert code == 0, err
    catalog = _catalog()
    table = load_table(catalog, ("db", "v"))
    files = [upload_data_file(catalog.io, f"{wh}/db/v/data/{i:05d}.parquet", [i * 10 + k for k in range(3)],
                              ["x", "y", None]) for i in range(6)]
    for i in range(0, 6, 2):
        table = append_files(table, files[i:i + 2])

    code, out, err = cli(["-o", "json", "validate", "db.v", "--deep", "--all-snapshots"])
    assert code == 0, out + err
    report = json.loads(out)
    # the test's files carry no column metrics: notes (METRIC_MISSING), never errors or warnings
    assert {f["code"] for f in report["findings"]} <= {"METRIC_MISSING"}
    assert all(f["severity"] == "note" for f in report["findings"])
    assert report["checked"]["entries"] == 6  # each manifest read once
    assert report["checked"]["files"] == 6

    catalog.io.delete(files[1].file_path, guard=PathGuard(f"{wh}/db/v"))
    catalog.io.write(files[4].file_path, parquet_bytes([1, 2, 3, 4], ["a", "b", "c", "d"]), overwrite=True)
    code, out, err = cli(["-o", "json", "validate", "db.v", "--deep"])
    assert code == 8, out + err
    found = sorted((f["code"], f["file"]) for f in json.loads(out)["findings"] if f["severity"] != "note")
    assert found == [("FILE_MISSING", files[1].file_path), ("FILE_SIZE_MISMATCH", files[4].file_path),
                     ("RECORD_COUNT_MISMATCH", files[4].file_path)]
    code, out, err = cli(["-o", "json", "validate", "db.v"])  # metadata only: the manifests are fine
    assert code == 0, out + err
