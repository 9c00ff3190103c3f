"""FileIO on local disk goes to the operating system directly (not through fsspec): the same
answers and errors for plain paths and ``file:`` URIs, for files, missing files and folders."""
from __future__ import annotations

import functools
import os

import pytest

from icectl.errors import IcectlError, NotFoundError, StorageError
from icectl.io import FileIO
from icectl.io.safety import PathGuard


@pytest.fixture
def fio():
    return FileIO()


@pytest.mark.parametrize("form", ["plain", "file:", "file://"])
def test_read_size_exists_delete_a_file(fio, tmp_path, form):
    p = tmp_path / "a.bin"
    p.write_bytes(b"hello")
    path = {"plain": str(p), "file:": f"file:{p}", "file://": f"file://{p}"}[form]
    assert fio.exists(path)
    assert fio.size(path) == 5
    assert fio.read(path) == b"hello"
    assert fio.read_range(path, 1, 3) == b"ell"
    assert fio.local_file(path) == str(p)
    fio.delete(path, guard=PathGuard(str(tmp_path)))
    assert not p.exists() and not fio.exists(path)


def test_missing_files_and_folders_are_not_found(fio, tmp_path):
    missing = str(tmp_path / "nope.bin")
    for call in (fio.read, fio.size, functools.partial(fio.delete, guard=PathGuard(str(tmp_path)))):
        with pytest.raises(NotFoundError):
            call(missing)
    with pytest.raises(NotFoundError):
        fio.read(str(tmp_path))  # a folder is not a file
    (tmp_path / "f").write_bytes(b"x")
    with pytest.raises(NotFoundError):
        fio.size(str(tmp_path / "f" / "child"))  # a parent that is a file
    assert not fio.exists(missing)


def test_delete_takes_hadoop_checksum_files_along(fio, tmp_path):
    p = tmp_path / "part-0.parquet"
    p.write_bytes(b"x")
    crc = tmp_path / ".part-0.parquet.crc"
    crc.write_bytes(b"c")
    fio.delete(str(p), guard=PathGuard(str(tmp_path)))
    assert not p.exists() and not crc.exists()


def test_write_refuses_to_overwrite_and_replaces_atomically(fio, tmp_path):
    path = str(tmp_path / "sub" / "m.json")
    fio.write(path, b"1")
    with pytest.raises(IcectlError, match="refusing to overwrite existing file") as e:
        fio.write(path, b"2")
    assert e.value.exit_code == 5  # already exists: a conflict, not an internal error
    fio.write(path, b"3", overwrite=True)
    assert fio.read(path) == b"3"
    assert [n for n in os.listdir(tmp_path / "sub") if n.endswith(".tmp")] == []


def test_object_store_paths_are_not_local(fio):
    assert fio.local_file("s3://bucket/key") is None


@pytest.mark.parametrize("form", ["plain", "file:", "file://"])
def test_open_streams_to_and_from_a_local_file(fio, tmp_path, form):
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = tmp_path / "new" / "dir" / "t.parquet"  # missing parents are created, as write() does
    path = {"plain": str(p), "file:": f"file:{p}", "file://": f"file://{p}"}[form]
    with fio.open(path, "wb") as sink:
        pq.write_table(pa.table({"x": [1, 2, 3]}), sink)
    with fio.open(path, "rb") as fh:
        assert pq.read_table(fh).column("x").to_pylist() == [1, 2, 3]
    with fio.open(path, "wb") as sink:  # an existing file is replaced
        sink.write(b"two")
    assert p.read_bytes() == b"two"


def test_open_maps_errors_as_read_does(fio, tmp_path):
    missing = str(tmp_path / "nope.bin")
    with pytest.raises(NotFoundError, match="file not found: .*nope.bin"):
        fio.open(missing, "rb")
    with pytest.raises(NotFoundError, match="is a directory"):
        fio.open(str(tmp_path), "rb")
    (tmp_path / "f").write_bytes(b"x")
    with pytest.raises(NotFoundError, match="a parent is not a directory"):
        fio.open(str(tmp_path / "f" / "child"), "rb")
    with pytest.raises(StorageError, match="cannot write .*: a parent is not a directory"):
        fio.open(str(tmp_path / "f" / "child"), "wb")
    with pytest.raises(ValueError):
        fio.open(missing, "r+b")


def test_folders_made_listed_and_removed(fio, tmp_path):
    root = str(tmp_path / "wh")
    fio.makedirs(f"{root}/b/inner")
    fio.makedirs(f"file:{root}/a")
    fio.makedirs(f"{root}/a")  # exists: nothing happens
    fio.write(f"{root}/file.txt", b"x")
    assert fio.subdirectories(root) == ["a", "b"]  # sorted, folders only
    assert fio.subdirectories(f"file://{root}/b") == ["inner"]
    assert fio.subdirectories(f"{root}/missing") == [] and fio.subdirectories(f"{root}/file.txt") == []
    fio.rmdir(f"{root}/a")
    assert fio.subdirectories(root) == ["b"]
    with pytest.raises(OSError):
        fio.rmdir(f"{root}/b")  # not empty


def test_delete_many_reports_each_file_it_could_not_delete(fio, tmp_path):
    files = [tmp_path / f"d{i}" / "f.bin" for i in range(3)]
    for f in files:
        f.parent.mkdir()
        f.write_bytes(b"x")
    (tmp_path / "d0" / ".f.bin.crc").write_bytes(b"c")
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "g.bin").write_bytes(b"x")
    done = []
    paths = [str(f) for f in files] + [str(tmp_path / "gone.bin"), f"file:{locked / 'g.bin'}"]
    os.chmod(locked, 0o500)
    try:
        failed = fio.delete_many(paths, guard=PathGuard(str(tmp_path)), progress=done.append)
    finally:
        os.chmod(locked, 0o700)
    assert not any(f.exists() for f in files)
    assert not (tmp_path / "d0" / ".f.bin.crc").exists()  # the Hadoop checksum goes along
    assert failed[str(tmp_path / "gone.bin")] == "already gone"
    if os.geteuid() != 0:  # root may delete in a read-only folder
        assert "ermission" in failed[f"file:{locked / 'g.bin'}"]
        assert (locked / "g.bin").exists()
    assert set(failed) <= {str(tmp_path / "gone.bin"), f"file:{locked / 'g.bin'}"}
    assert sum(done) == len(paths)
    assert fio.delete_many([], guard=PathGuard(str(tmp_path))) == {}
