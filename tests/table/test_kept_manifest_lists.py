"""Within Table.manifest_lists_kept(), Table.manifests keeps the last few manifest lists it read
(by path: those files never change): a list is read once however many callers ask, each caller
gets objects of its own to change, and no more than KEPT_MANIFEST_LISTS lists
(KEPT_MANIFEST_ENTRIES entries) are held. Outside it, and after it, every call reads the list (a
list deleted since is missing)."""
from __future__ import annotations

import os

import pytest

from helpers import append_files, create_table
from icectl.catalog import CatalogConfig, build_catalog
from icectl.formats.manifest import DataFile
from icectl.table import loaded


@pytest.fixture
def table(tmp_path):
    cat = build_catalog(CatalogConfig("t", {"type": "sql", "uri": f"sqlite:///{tmp_path}/c.db",
                                            "warehouse": str(tmp_path / "wh")}))
    t = create_table(cat, ("db", "t"), schema_text="id:long!", format_version=2)
    for i in range(6):
        path = f"{t.location}/data/{i}.parquet"
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(b"x")
        t = append_files(t, [DataFile(path, "parquet", (), 1, 1)])
    return t.refresh()


@pytest.fixture
def reads(file_reads):
    return file_reads


def test_a_list_is_read_once_and_callers_get_their_own_objects(table, reads):
    head = table.metadata.current_snapshot
    listing = table.resolve(head.manifest_list)
    with table.manifest_lists_kept():
        first = table.manifests(head)
        first[0].first_row_id = 12345  # a writer numbering inherited manifests, say
        first[0].manifest_path = "elsewhere"
        first.clear()
        with table.manifest_lists_kept():  # nested: the same lists
            again = table.manifests(head)
        assert len(again) == 6 and again[0].first_row_id is None and again[0].manifest_path != "elsewhere"
        assert reads.count(listing) == 1
        # a new load (after a commit, say) reads its lists itself
        table.refresh().manifests(head)
        assert reads.count(listing) == 2
    assert not table._kept_lists
    table.manifests(head)
    table.manifests(head)
    assert reads.count(listing) == 4 and not table._kept_lists


def test_outside_the_scope_a_deleted_list_is_missing(table):
    from icectl.errors import NotFoundError

    head = table.metadata.current_snapshot
    with table.manifest_lists_kept():
        table.manifests(head)
    os.unlink(table.resolve(head.manifest_list))
    with pytest.raises(NotFoundError):
        table.manifests(head)


def test_the_lists_kept_are_bounded(table, reads, monkeypatch):
    snaps = table.metadata.snapshots  # six lists of 1..6 manifests
    with table.manifest_lists_kept():
        for s in snaps:
            table.manifests(s)
        assert len(table._kept_lists) == loaded.KEPT_MANIFEST_LISTS
        table.manifests(snaps[-1])  # the newest are kept, the oldest read again
        table.manifests(snaps[0])
    assert [reads.count(table.resolve(s.manifest_list)) for s in snaps] == [2, 1, 1, 1, 1, 1]
    monkeypatch.setattr(loaded, "KEPT_MANIFEST_ENTRIES", 5)
    t = table.refresh()
    with t.manifest_lists_kept():
        t.manifests(snaps[-1])  # six entries: longer than what may be kept
        t.manifests(snaps[-1])
        assert reads.count(table.resolve(snaps[-1].manifest_list)) == 3 and not t._kept_lists
        for s in snaps[:3]:  # 1 + 2 + 3 entries: the oldest goes to stay within five
            t.manifests(s)
        assert sum(len(v) for v in t._kept_lists.values()) == 5
