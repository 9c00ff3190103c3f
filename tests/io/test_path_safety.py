"""The path guard (icectl.io.safety) and the listing that never follows a link, on local disk two
ways: ``file:`` paths, which FileIO sends to the operating system directly, and ``local://``
paths, which it sends through fsspec's LocalFileSystem (the code path of every scheme that is not
``file`` or S3). Object stores: the prefix rule on normalised paths."""
from __future__ import annotations

import os
import pathlib

import pytest

from icectl.errors import RefusedError
from icectl.io import SKIPPED_FOR_SAFETY, FileIO
from icectl.io.safety import PathGuard, table_guard


@pytest.fixture(params=["file", "fsspec"])
def way(request):
    """How a local path is spelled: ``file:/x`` (the OS fast path) or ``local:///x`` (fsspec)."""
    return request.param


def spell(way: str, p: os.PathLike | str) -> str:
    return f"file:{p}" if way == "file" else f"local://{p}"


@pytest.fixture
def tree(tmp_path):
    """A table location with links in it: to a folder and a file outside, to a folder and a file
    inside, a loop, and a folder under a linked parent."""
    loc = tmp_path / "wh" / "db" / "t"
    (loc / "data" / "part=1").mkdir(parents=True)
    (loc / "metadata").mkdir()
    (loc / "data" / "part=1" / "a.parquet").write_bytes(b"a")
    (loc / "metadata" / "v1.metadata.json").write_bytes(b"{}")
    out = tmp_path / "elsewhere"
    (out / "link-target" / "sub").mkdir(parents=True)
    (out / "link-target" / "precious-1.parquet").write_bytes(b"p1")
    (out / "link-target" / "sub" / "precious-2.txt").write_bytes(b"p2")
    (out / "precious.parquet").write_bytes(b"p")
    os.symlink(out / "link-target", loc / "data" / "linked-folder")
    os.symlink(out / "precious.parquet", loc / "data" / "linked-file.parquet")
    os.symlink(out / "link-target", loc / "metadata" / "linked-meta")
    os.symlink(loc / "data" / "part=1", loc / "data" / "inside-folder")
    os.symlink(loc / "data" / "part=1" / "a.parquet", loc / "data" / "inside-file.parquet")
    os.symlink(loc / "data" / "loop-b", loc / "data" / "loop-a")
    os.symlink(loc / "data" / "loop-a", loc / "data" / "loop-b")
    return loc, out


LINKS = ["data/inside-file.parquet", "data/inside-folder", "data/linked-file.parquet", "data/linked-folder",
         "data/loop-a", "data/loop-b", "metadata/linked-meta"]
FILES = ["data/part=1/a.parquet", "metadata/v1.metadata.json"]


def outside_files(out: pathlib.Path) -> dict[str, bytes]:
    return {os.path.join(d, f): pathlib.Path(d, f).read_bytes() for d, _, fs in os.walk(out) for f in fs}


def test_listing_never_follows_a_link(tree, way):
    loc, _ = tree
    fio = FileIO()
    listed = {f.path: f for f in fio.list_files(spell(way, loc))}
    assert sorted(listed) == sorted(spell(way, loc / rel) for rel in FILES + LINKS)
    for rel in LINKS:
        assert listed[spell(way, loc / rel)].symlink == os.readlink(loc / rel)
    for rel in FILES:
        assert listed[spell(way, loc / rel)].symlink is None


def test_listing_follows_a_location_that_is_itself_a_link(tree, tmp_path, way):
    loc, _ = tree
    os.symlink(loc, tmp_path / "t-link")
    listed = {f.path for f in FileIO().list_files(spell(way, tmp_path / "t-link"))}
    assert listed == {spell(way, tmp_path / "t-link" / rel) for rel in FILES + LINKS}


def test_guard_refuses_links_and_what_lies_outside(tree, way):
    loc, _ = tree
    guard = table_guard(FileIO(), spell(way, loc))
    assert guard.local
    for rel in FILES:
        assert guard.refusal(spell(way, loc / rel)) is None
    for rel in LINKS:
        assert guard.refusal(spell(way, loc / rel)).startswith("a symbolic link (to ")
    through = guard.refusal(spell(way, loc / "data" / "linked-folder" / "precious-1.parquet"))
    assert through.startswith("its real location ") and "outside the table location" in through
    assert "outside" in guard.refusal(spell(way, loc / "data" / "linked-folder" / "sub" / "precious-2.txt"))
    assert "outside" in guard.refusal(spell(way, loc / ".." / "t2" / "x.parquet"))
    assert "cannot be resolved" in guard.refusal(spell(way, loc / "data" / "loop-a" / "x"))  # a link loop
    assert guard.refusal(spell(way, loc / "data" / "inside-folder" / "a.parquet")) is None  # really inside
    assert guard.refusal(spell(way, loc / "data")) == "a folder, not a file"
    assert guard.refusal(spell(way, loc / "data" / "gone.parquet")) is None  # nothing there: reported gone
    allowed = table_guard(FileIO(), spell(way, loc), allow_symlinks=True)
    assert all(allowed.refusal(spell(way, loc / rel)) is None for rel in LINKS)
    assert "outside" in allowed.refusal(spell(way, loc / "data" / "linked-folder" / "precious-1.parquet"))


def test_guard_on_a_linked_location_and_a_linked_warehouse_parent(tree, tmp_path, way):
    loc, _ = tree
    os.symlink(loc, tmp_path / "t-link")
    os.symlink(tmp_path / "wh", tmp_path / "wh-link")
    for root in (tmp_path / "t-link", tmp_path / "wh-link" / "db" / "t"):
        guard = table_guard(FileIO(), spell(way, root))
        assert guard.refusal(spell(way, root / "data" / "part=1" / "a.parquet")) is None
        assert guard.refusal(spell(way, loc / "data" / "part=1" / "a.parquet")) is None  # the real spelling
        assert "outside" in guard.refusal(spell(way, root / "data" / "linked-folder" / "precious-1.parquet"))


def test_delete_many_removes_nothing_outside(tree, way):
    loc, out = tree
    before = outside_files(out)
    fio = FileIO()
    everything = [spell(way, loc / rel) for rel in FILES + LINKS] + [
        spell(way, loc / "data" / "linked-folder" / "precious-1.parquet"),
        spell(way, loc / "data" / "linked-folder" / "sub" / "precious-2.txt")]
    done = []
    failed = fio.delete_many(everything, guard=table_guard(fio, spell(way, loc)), progress=done.append)
    assert sum(done) == len(everything)
    assert set(failed) == set(everything) - {spell(way, loc / rel) for rel in FILES}
    assert all(why.startswith(f"{SKIPPED_FOR_SAFETY}: ") for why in failed.values())
    assert outside_files(out) == before
    assert all(os.path.islink(loc / rel) for rel in LINKS)
    assert not any(os.path.exists(loc / rel) for rel in FILES)
    with pytest.raises(RefusedError, match="a symbolic link"):
        fio.delete(spell(way, loc / "data" / "linked-folder"), guard=table_guard(fio, spell(way, loc)))


def test_allowed_links_go_as_links_never_their_targets(tree, way):
    loc, out = tree
    before = outside_files(out)
    fio = FileIO()
    failed = fio.delete_many([spell(way, loc / rel) for rel in LINKS],
                             guard=table_guard(fio, spell(way, loc), allow_symlinks=True))
    assert failed == {}
    assert not any(os.path.lexists(loc / rel) for rel in LINKS)
    assert outside_files(out) == before
    assert (loc / "data" / "part=1" / "a.parquet").read_bytes() == b"a"


def test_a_mount_point_inside_the_location_is_refused():
    if not os.path.ismount("/proc") or not os.path.exists("/proc/version"):
        pytest.skip("no /proc mount")
    why = PathGuard("/").refusal("/proc/version")
    assert why is not None and ("mount point /proc" in why or "another device" in why)


def test_object_store_paths_by_prefix():
    guard = PathGuard("s3://bucket/wh/db/t")
    assert not guard.local
    assert guard.refusal("s3://bucket/wh/db/t/data/a.parquet") is None
    assert guard.refusal("s3a://bucket/wh/db/t/data/a.parquet") is None  # s3a is s3
    assert "outside" in guard.refusal("s3://bucket/wh/db/t2/a.parquet")
    assert "outside" in guard.refusal("s3://other/wh/db/t/data/a.parquet")
    assert "outside" in guard.refusal("s3://bucket/wh/db/t")
    assert "'..'" in guard.refusal("s3://bucket/wh/db/t/data/../../t2/a.parquet")
    assert PathGuard(None).refusal("s3://bucket/wh/db/t/a") == "the table has no location"
    assert PathGuard(None).refusal("/tmp/x") == "the table has no location"
