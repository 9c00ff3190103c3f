"""The pieces that keep large tables in bounded memory: path normalisation as columns (orphans),
64-bit path keys (expire, orphans), the bounded map that streams manifests, and the local
listing that walks a folder as it is consumed."""
from __future__ import annotations

import os
import threading
import time

import pytest

from icectl.io import FileIO, local_file_info
from icectl.ops.maintain.remove_orphans import ReachableIndex, canonical_path, normalized, path_keys, split_path
from icectl.table.listing import bounded_map
from icectl.table.reachability import PathKeys, key_array

PATHS = [
    "/wh/db/t/data/a.parquet",
    "/wh/db/t/data/x=1/b.parquet",
    "/wh/db/t/data/trailing/",
    "/wh/db/t//double/slash.parquet",
    "file:/wh/db/t/data/c.parquet",
    "file:///wh/db/t/data/d.parquet",
    "/wh/db/other/e.parquet",
    "/wh/db/t/data/odd?name#frag.parquet",
    "s3a://bucket/t/data/f.parquet",
    "s3://bucket/t/data/g.parquet",
    "s3n://other/t/h.parquet",
    "gs://b/t/i.parquet",
    "/wh/db/t",
]


@pytest.mark.parametrize("location", ["/wh/db/t", "/wh/db/t/", "file:/wh/db/t", "s3://bucket/t", "s3a://bucket/t/",
                                      None])
def test_normalized_equals_split_path_row_by_row(location):
    frame = normalized(PATHS, location)
    assert frame.rows() == [split_path(p) for p in PATHS]


@pytest.mark.parametrize("location", ["/wh/db/t", "/wh/db/t/", "file:/wh/db/t", "s3://bucket/t", "s3a://bucket/t/",
                                      "s3://bucket", None])
def test_path_keys_are_the_keys_of_the_canonical_paths(location):
    """Paths written under the location as it is spelt when normalised are keyed as they are;
    every other path through split_path: the same key either way."""
    keys, split = path_keys(PATHS, location)
    assert list(keys) == list(key_array([canonical_path(*split_path(p)) for p in PATHS]))
    # The paths written under the canonical location were not split (/wh/db/t/data/a.parquet ...).
    plain = {"/wh/db/t": 3, "file:/wh/db/t": 3, "s3://bucket": 1, "s3://bucket/t": 1, "s3a://bucket/t": 1}
    assert len(split) == len(PATHS) - plain.get((location or "").rstrip("/"), 0)


def test_path_keys_membership():
    keys = PathKeys.of([["/a", "/b", "/a"], ["/c"]])
    assert len(keys) == 3
    assert list(keys.contains(["/a", "/z", "/c", "/b"])) == [True, False, True, True]
    assert "/b" in keys and "/y" not in keys
    assert list(PathKeys().contains(["/a"])) == [False]


def test_reachable_index_is_a_set_of_normalised_paths():
    index = ReachableIndex.of_paths(["/wh/db/t/data/a.parquet", "s3://bucket/t/data/g.parquet"], "/wh/db/t")
    assert "file:///wh/db/t/data/a.parquet" in index  # file:// and / are one path
    assert "s3a://bucket/t/data/g.parquet" in index  # s3a is s3
    assert "/wh/db/t/data/b.parquet" not in index
    assert index.owner_of("/t/data/g.parquet") == ("s3", "bucket")
    assert index.owner_of("/t/data/nope.parquet") is None
    assert {"/wh/db/t/data/a.parquet"} <= index
    assert {"/wh/db/t/data/a.parquet", "/x"} & index == {"/wh/db/t/data/a.parquet"}
    assert len(index) == 2
    # Many chunks (compacted as they come) give the same answers as one.
    big = ReachableIndex("/wh")
    for i in range(5):
        big.add([f"/wh/f{j}" for j in range(i * 1000, (i + 1) * 1000)])
    big.done()
    assert len(big) == 5000 and "/wh/f4999" in big and "/wh/f5000" not in big
    # A path written under the location is its own canonical path: keyed as it is.
    assert canonical_path(*split_path("/wh/f1")) == "/wh/f1"
    assert list(path_keys(["/wh/f1", "file:/wh/f1"], "/wh")[0]) == list(path_keys(["/wh/f1"] * 2, None)[0])


def test_bounded_map_keeps_order_and_stays_ahead_by_at_most_the_window():
    started: list[int] = []
    lock = threading.Lock()

    def fn(i: int) -> int:
        with lock:
            started.append(i)
        time.sleep(0.001)
        return i * i

    out = []
    for i, r in enumerate(bounded_map(fn, list(range(50)), workers=2, ahead=4)):
        out.append(r)
        with lock:
            assert len(started) <= i + 1 + 4  # never more than the window beyond what was consumed
    assert out == [i * i for i in range(50)]
    assert list(bounded_map(fn, [3], workers=2)) == [9]


def test_bounded_map_keeps_the_weight_started_within_the_budget():
    """With a budget, the items computed at once weigh at most the budget together; an item
    heavier than the budget is computed alone; the results stay in order."""
    lock = threading.Lock()
    running: list[int] = []
    seen: list[tuple[int, int]] = []  # (weight running, items running) as each item starts
    sizes = [1, 1, 1, 1, 9, 1, 5, 5, 1, 1, 12, 1, 1, 1, 3, 3, 3, 3]

    def fn(i: int) -> int:
        with lock:
            running.append(sizes[i])
            seen.append((sum(running), len(running)))
        time.sleep(0.003)
        with lock:
            running.remove(sizes[i])
        return i * i

    out = list(bounded_map(fn, list(range(len(sizes))), workers=2, ahead=4, weight=lambda i: sizes[i], budget=10))
    assert out == [i * i for i in range(len(sizes))]
    assert all(w <= 10 or n == 1 for w, n in seen)
    assert (12, 1) in seen and max(n for _, n in seen) == 2  # the light ones still two at a time


def test_bounded_map_stops_early_without_running_everything():
    ran: list[int] = []
    gen = bounded_map(lambda i: ran.append(i) or i, list(range(1000)), workers=2, ahead=3)
    assert next(gen) == 0
    gen.close()
    assert len(ran) < 10


def test_local_listing_matches_fsspec(tmp_path):
    import fsspec

    for rel in ("a.txt", "d1/b.txt", "d1/d2/c.txt", ".hidden/x", "d3/_y=1/z.parquet", "empty/", "b/c.txt", "b.txt",
                "a/a/x.txt", "z.txt"):
        p = tmp_path / rel
        if rel.endswith("/"):
            p.mkdir(parents=True, exist_ok=True)
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"x" * len(rel))
    fio = FileIO()
    ours = {(f.path, f.size, f.modified_ms) for f in fio.list_files(str(tmp_path))}
    fs = fsspec.filesystem("file")
    theirs = {(p, int(i["size"]), int(i["mtime"] * 1000)) for p, i in fs.find(str(tmp_path), detail=True).items()}
    assert ours == theirs
    # In the same order as fsspec's (sorted full paths).
    assert [f.path for f in fio.list_files(str(tmp_path))] == list(fs.find(str(tmp_path)))
    assert {f.path for f in fio.list_files(f"file:{tmp_path}")} == {"file:" + p for p, _, _ in theirs}
    assert [f.path for f in fio.list_files(str(tmp_path / "a.txt"))] == [str(tmp_path / "a.txt")]
    assert list(fio.list_files(str(tmp_path / "nowhere"))) == []
    # list_paths: the same paths in the same order, a folder at a time, nothing asked per file;
    # local_file_info gives what list_files gave.
    for prefix in (str(tmp_path), f"file:{tmp_path}", str(tmp_path / "a.txt"), str(tmp_path / "nowhere")):
        batches = list(fio.list_paths(prefix))
        assert all(infos is None for _, infos in batches)
        assert [p for paths, _ in batches for p in paths] == [f.path for f in fio.list_files(prefix)]
    assert [local_file_info(f.path) for f in fio.list_files(str(tmp_path))] == list(fio.list_files(str(tmp_path)))
    assert local_file_info(str(tmp_path / "gone.txt")) is None
    assert os.path.exists(tmp_path / "empty")
