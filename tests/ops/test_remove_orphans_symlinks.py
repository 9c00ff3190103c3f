"""Nothing outside the table location is deleted through a symbolic link (issue 19), on the demo
table in a SQL catalog on local disk, as an operator runs the commands.

Links are planted inside ``data/`` and ``metadata/``, to a folder and to a file outside the table,
to a folder and to a file inside it, and a link loop; the table location itself may be a link, or
the warehouse's parent. ``remove-orphans``, ``expire``, ``drop --purge`` and the deletes after a
commit (``write.metadata.delete-after-commit.enabled``) must leave every file outside exactly as it
was, and still find and delete the files inside as before.
"""
from __future__ import annotations

import io
import json
import os
import pathlib
import time

import pytest

from icectl.catalog import CatalogConfig, build_catalog
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.ops import demo

pytestmark = pytest.mark.usefixtures("no_user_config")

DAY_S = 86_400


def age(path: str, days: float = 10) -> None:
    t = time.time() - days * DAY_S
    os.utime(path, (t, t), follow_symlinks=False)


def snapshot_tree(root: pathlib.Path) -> dict[str, bytes]:
    """Every file under ``root`` (links not followed) and its bytes."""
    return {os.path.join(d, f): pathlib.Path(d, f).read_bytes()
            for d, _, fs in os.walk(root) for f in fs if not os.path.islink(os.path.join(d, f))}


class Demo:
    """The demo table in a SQL catalog under ``warehouse`` (which may sit under a link)."""

    def __init__(self, root: pathlib.Path, warehouse: str, *, location_link_to: pathlib.Path | None = None):
        self.uri = f"sqlite:///{root}/catalog.db"
        self.warehouse = warehouse
        catalog = build_catalog(CatalogConfig("default", {"type": "sql", "uri": self.uri, "warehouse": warehouse}))
        loc = catalog.default_table_location(("demo", "events")).rstrip("/")
        if location_link_to is not None:  # the table location is a link to a real folder
            location_link_to.mkdir(parents=True)
            os.makedirs(os.path.dirname(loc), exist_ok=True)
            os.symlink(location_link_to, loc)
        self.result = demo.build_demo(catalog)
        self.location = pathlib.Path(self.result.location)
        assert str(self.location) == loc
        self.orphans = list(self.result.orphan_files)
        assert self.orphans and all(os.path.exists(p) for p in self.orphans)

    def icectl(self, *args: str) -> tuple[int, str, str]:
        env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
        code = run(["--uri", self.uri, "--warehouse", self.warehouse, *args], env)
        return code, env.stdout.getvalue(), env.stderr.getvalue()

    def json(self, *args: str) -> dict:
        code, out, err = self.icectl("-o", "json", *args)
        assert code == 0, err
        return json.loads(out)


class Planted:
    """Outside files and the links that point at them (and links that point inside)."""

    def __init__(self, d: Demo, outside: pathlib.Path):
        loc = d.location
        target = outside / "link-target"
        (target / "sub").mkdir(parents=True)
        (target / "precious-1.parquet").write_bytes(b"precious 1")
        (target / "sub" / "precious-2.txt").write_bytes(b"precious 2")
        (outside / "precious.parquet").write_bytes(b"precious file")
        (outside / "meta-target").mkdir()
        (outside / "meta-target" / "00099-precious.metadata.json").write_bytes(b"{}")
        for p in snapshot_tree(outside):
            age(p)
        data = loc / "data"
        some_data_file = next(p for p in sorted(data.rglob("*.parquet")) if str(p) not in d.orphans)
        some_data_folder = some_data_file.parent
        self.links = {
            data / "linked-folder": target,
            data / "linked-file.parquet": outside / "precious.parquet",
            loc / "metadata" / "linked-meta": outside / "meta-target",
            data / "inside-folder-link": some_data_folder,
            data / "inside-file-link.parquet": some_data_file,
            data / "loop-a": data / "loop-b",
            data / "loop-b": data / "loop-a",
        }
        for link, to in self.links.items():
            os.symlink(to, link)
            age(str(link))
        self.outside = outside
        self.outside_before = snapshot_tree(outside)
        self.inside_targets = {str(some_data_file): some_data_file.read_bytes()}

    def assert_outside_untouched(self) -> None:
        assert snapshot_tree(self.outside) == self.outside_before
        for p, data in self.inside_targets.items():
            assert pathlib.Path(p).read_bytes() == data


@pytest.fixture
def planted(tmp_path) -> tuple[Demo, Planted]:
    d = Demo(tmp_path, str(tmp_path / "warehouse"))
    return d, Planted(d, tmp_path / "elsewhere")


def test_remove_orphans_never_deletes_through_a_symlinked_folder(planted):
    """The issue's reproduction: it listed and deleted the files inside the linked folder."""
    d, p = planted
    code, out, err = d.icectl("remove-orphans", "demo.events", "--yes")
    assert code == 0, err
    p.assert_outside_untouched()
    assert not any(os.path.exists(o) for o in d.orphans)  # the real orphan still goes


def test_the_plan_lists_links_as_skipped_for_safety(planted):
    d, p = planted
    plan = d.json("remove-orphans", "demo.events", "--dry-run")
    assert plan["orphan_files"] == d.orphans
    skipped = {s["path"]: s["reason"] for s in plan["skipped_for_safety"]}
    assert set(skipped) == {str(link) for link in p.links}
    for link, to in p.links.items():
        assert skipped[str(link)].startswith(f"a symbolic link (to {to})")
    assert "--remove-symlinks" in skipped[str(d.location / "data" / "linked-folder")]
    assert not any("precious" in f for f in plan["orphan_files"])
    code, out, err = d.icectl("remove-orphans", "demo.events", "--dry-run")
    assert code == 0, err
    assert "skipped for safety" in out and str(d.location / "data" / "linked-folder") in out
    applied = d.json("remove-orphans", "demo.events", "--yes")
    assert applied["deleted_files"] == d.orphans and applied["failed_deletes"] == []
    assert all(os.path.islink(link) for link in p.links)  # links stay by default
    p.assert_outside_untouched()


def test_remove_symlinks_removes_the_links_never_their_targets(planted):
    d, p = planted
    done = d.json("remove-orphans", "demo.events", "--remove-symlinks", "--yes")
    assert done["skipped_for_safety"] == []
    assert sorted(done["deleted_files"]) == sorted(d.orphans + [str(link) for link in p.links])
    assert not any(os.path.lexists(link) for link in p.links)
    p.assert_outside_untouched()
    assert d.json("validate", "demo.events")["findings"] == []  # the data file a link pointed at is intact


def test_location_option_on_a_linked_folder_deletes_nothing_outside(planted):
    d, p = planted
    code, out, err = d.icectl("-o", "json", "remove-orphans", "demo.events", "--location",
                              str(d.location / "data" / "linked-folder"), "--yes")
    assert code == 0, err
    r = json.loads(out)
    assert r["orphan_files"] == [] and r["deleted_files"] == []
    assert {s["path"] for s in r["skipped_for_safety"]} == {
        str(d.location / "data" / "linked-folder" / "precious-1.parquet"),
        str(d.location / "data" / "linked-folder" / "sub" / "precious-2.txt")}
    assert all("outside the table location" in s["reason"] for s in r["skipped_for_safety"])
    p.assert_outside_untouched()


@pytest.mark.parametrize("layout", ["location-is-a-link", "warehouse-parent-is-a-link"])
def test_a_linked_location_still_finds_and_removes_its_orphans(tmp_path, layout):
    if layout == "location-is-a-link":
        d = Demo(tmp_path, str(tmp_path / "warehouse"), location_link_to=tmp_path / "real" / "events")
        assert os.path.islink(d.location)
    else:
        (tmp_path / "real-parent").mkdir()
        os.symlink(tmp_path / "real-parent", tmp_path / "parent-link")
        d = Demo(tmp_path, str(tmp_path / "parent-link" / "warehouse"))
    p = Planted(d, tmp_path / "elsewhere")
    done = d.json("remove-orphans", "demo.events", "--yes")
    assert done["deleted_files"] == d.orphans and done["failed_deletes"] == []
    assert not any(os.path.exists(o) for o in d.orphans)
    p.assert_outside_untouched()
    assert d.json("validate", "demo.events")["findings"] == []


def _move_out(folder: pathlib.Path, to: pathlib.Path) -> None:
    """Replace ``folder`` by a link to a copy of it at ``to``: its files now live outside."""
    os.rename(folder, to)
    os.symlink(to, folder)


def test_expire_deletes_nothing_through_a_linked_data_folder(tmp_path):
    d = Demo(tmp_path, str(tmp_path / "warehouse"))
    plan = d.json("expire", "demo.events", "--retain-last", "1", "--older-than", "0d", "--dry-run")
    data_files = [f["path"] for f in plan["deleted_files"] if "/data/" in f["path"]]
    meta_files = [f["path"] for f in plan["deleted_files"] if "/metadata/" in f["path"]]
    assert data_files and meta_files
    _move_out(d.location / "data", tmp_path / "outside-data")
    before = snapshot_tree(tmp_path / "outside-data")
    plan = d.json("expire", "demo.events", "--retain-last", "1", "--older-than", "0d", "--dry-run")
    skipped = {s["path"]: s["reason"] for s in plan["skipped_for_safety"]}
    assert set(skipped) == set(data_files)
    assert all(why.startswith("its real location") and "outside the table location" in why
               for why in skipped.values())
    assert {f["path"] for f in plan["deleted_files"]} == set(meta_files)
    code, out, err = d.icectl("expire", "demo.events", "--retain-last", "1", "--older-than", "0d", "--dry-run")
    assert code == 0, err
    assert f"{len(data_files)} skipped for safety" in out
    done = d.json("expire", "demo.events", "--retain-last", "1", "--older-than", "0d", "--yes")
    assert snapshot_tree(tmp_path / "outside-data") == before
    assert {s["path"] for s in done["skipped_for_safety"]} == set(data_files) and done["failed_deletes"] == []
    assert not any(os.path.exists(m) for m in meta_files)  # inside, deleted as before


def test_drop_purge_deletes_nothing_through_a_linked_metadata_folder(tmp_path):
    d = Demo(tmp_path, str(tmp_path / "warehouse"))
    every = {f["path"] for f in d.json("drop", "demo.events", "--purge", "--dry-run")["files"]}
    _move_out(d.location / "metadata", tmp_path / "outside-metadata")
    before = snapshot_tree(tmp_path / "outside-metadata")
    plan = d.json("drop", "demo.events", "--purge", "--dry-run")
    in_metadata = {p for p in every if "/metadata/" in p}
    assert in_metadata and {s["path"] for s in plan["skipped_for_safety"]} == in_metadata
    assert {f["path"] for f in plan["files"]} == every - in_metadata
    done = d.json("drop", "demo.events", "--purge", "--yes")
    assert snapshot_tree(tmp_path / "outside-metadata") == before
    assert done["failed_deletes"] == [] and {s["path"] for s in done["skipped_for_safety"]} == in_metadata
    assert not any(os.path.exists(p) for p in every - in_metadata)  # the data files inside went as before


def test_metadata_delete_after_commit_deletes_nothing_through_a_link(tmp_path):
    d = Demo(tmp_path, str(tmp_path / "warehouse"))
    _move_out(d.location / "metadata", tmp_path / "outside-metadata")
    before = snapshot_tree(tmp_path / "outside-metadata")
    code, out, err = d.icectl("properties", "demo.events", "set", "write.metadata.delete-after-commit.enabled=true",
                              "write.metadata.previous-versions-max=1", "--yes")
    assert code == 0, err
    code, out, err = d.icectl("properties", "demo.events", "set", "owner=me", "--yes")
    assert code == 0, err
    after = snapshot_tree(tmp_path / "outside-metadata")
    assert set(before) <= set(after) and all(after[p] == b for p, b in before.items())


@pytest.mark.parametrize("linked", ["metadata", "data"])
def test_rewrite_table_path_refuses_to_write_through_a_link_out_of_the_target(tmp_path, linked):
    from icectl.errors import RefusedError
    from icectl.ops.recover.rewrite_table_path import apply_relocation, plan_relocation
    from icectl.table.loaded import load_table

    d = Demo(tmp_path, str(tmp_path / "warehouse"))
    catalog = build_catalog(CatalogConfig("default", {"type": "sql", "uri": d.uri, "warehouse": d.warehouse}))
    t = load_table(catalog, ("demo", "events"))
    target = tmp_path / "moved" / "demo" / "events"
    target.mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "keep.txt").write_bytes(b"keep")
    os.symlink(tmp_path / "outside", target / linked)
    plan = plan_relocation(t, source_prefix=d.warehouse, target_prefix=str(tmp_path / "moved"))
    with pytest.raises(RefusedError, match="written through a symbolic link") as e:
        apply_relocation(t, plan, copy=True)
    assert "nothing was written" in e.value.message
    assert snapshot_tree(tmp_path / "outside") == {str(tmp_path / "outside" / "keep.txt"): b"keep"}
    assert sorted(os.listdir(target)) == [linked]
