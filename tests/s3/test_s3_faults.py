"""expire, remove-orphans and drop --purge against an S3 that fails: a proxy in front of the moto
server (tools/s3proxy.py) answers a fraction of requests ``503 SlowDown`` and resets the connection
of another fraction. Every command still finishes, and nothing a retained snapshot reaches is
deleted. The tables are built straight against the server; only the commands go through the proxy."""
from __future__ import annotations

import datetime as dt
import json

import pytest

from icectl.io.safety import PathGuard
from test_s3 import cli, upload_data_file, write_config  # noqa: E402  (same folder)

pytestmark = pytest.mark.s3

FAIL_503, DROP = 0.15, 0.05


@pytest.fixture(scope="module")
def proxy(moto_s3):
    from tools.s3proxy import start_proxy

    url, stop = start_proxy(moto_s3["s3.endpoint"], latency=0.0, seed=7)
    yield url
    stop()


@pytest.fixture
def scene(moto_s3, proxy, s3_prefix, tmp_path, monkeypatch):
    """A partitioned v2 table: A1 (12 files), D1 (removes 4 of them), A2 (12 files, tagged
    ``keep``), D2 (removes 4 of A2's), A3 (3 files). The catalog ``direct`` talks to moto, ``flaky``
    to the proxy (the same catalog name, so the same rows, in two configuration files)."""
    from icectl.catalog import build_catalog, resolve_catalog_config
    from helpers import create_table
    from icectl.table.snapshot_producer import SnapshotChange
    from helpers import append_files, commit_snapshot

    db = f"sqlite:///{tmp_path / 'catalog.db'}"
    wh = f"{s3_prefix}/wh"
    direct = {"type": "sql", "uri": db, "warehouse": wh, **moto_s3}
    # 10 attempts: a request fails for good only when 10 draws in a row fail (0.2**10), so the
    # test does not flake; the default of 6 is what users get.
    flaky = {**direct, "s3.endpoint": proxy, "s3.retry.max-attempts": "10"}
    configs = {"direct": write_config(tmp_path / "direct.yaml", {"s3cat": direct}),
               "flaky": write_config(tmp_path / "flaky.yaml", {"s3cat": flaky})}
    monkeypatch.setenv("ICECTL_CONFIG", configs["direct"])
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    catalog = build_catalog(resolve_catalog_config("s3cat"))
    t = create_table(catalog, ("db", "t"), schema_text="id:long!, p:int!", partition_by="p", format_version=2)

    def files(tag: str, n: int):
        out = []
        for i in range(n):
            f = upload_data_file(catalog.io, f"{t.location}/data/p={i % 3}/{tag}-{i}.parquet", [i], [None])
            out.append(f.__class__(**{**f.__dict__, "partition": (i % 3,)}))
        return out

    def remove(t, prefix: str, n: int):
        live = [e for e in t.live_entries(t.metadata.current_snapshot) if f"/{prefix}-" in e.data_file.file_path]
        return commit_snapshot(t, SnapshotChange("delete", removed=[(e, e.data_file) for e in live[:n]]))

    t = append_files(t, files("a1", 12))
    t = remove(t, "a1", 4)
    t = append_files(t, files("a2", 12))
    tagged = t.metadata.current_snapshot_id
    code, _, err = cli(["-c", "s3cat", "tag", "create", "db.t", "keep", "--snapshot", str(tagged), "--yes"])
    assert code == 0, err
    t = t.refresh()
    t = remove(t, "a2", 4)
    t = append_files(t, files("a3", 3))

    def flaky_cli(args: list[str]):
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("ICECTL_CONFIG", configs["flaky"])
            return cli(["-c", "s3cat", *args])

    return catalog, t.refresh(), proxy, flaky_cli


def _future() -> str:
    return (dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1)).isoformat()


def _objects(catalog, location: str) -> set[str]:
    return {f.path for f in catalog.io.list_files(location)}


def _reachable_by_retained(catalog) -> set[str]:
    """Every file a snapshot of the current metadata reaches (manifest lists, manifests, content
    files), and the current metadata file."""
    from icectl.table.loaded import load_table
    from icectl.table.reachability import reachable_files

    t = load_table(catalog, ("db", "t"))
    return reachable_files(t, t.metadata, t.metadata.snapshots).paths() | {t.metadata_location}


def _faults(url: str, on: bool) -> dict:
    from tools.s3proxy import control

    return control(url, fail_503=FAIL_503 if on else 0.0, drop=DROP if on else 0.0)


def test_expire_and_remove_orphans_finish_through_503s_and_resets(scene):
    from tools.s3proxy import control

    catalog, t, proxy, flaky_cli = scene
    loc = t.location
    planted = {f"{loc}/data/p={i % 3}/orphan-{i}.parquet" for i in range(30)}
    for p in planted:
        catalog.io.write(p, b"x")
    before = _objects(catalog, loc)
    reach_before = _reachable_by_retained(catalog)
    assert reach_before <= before

    _faults(proxy, True)
    code, out, err = flaky_cli(["-v", "-o", "json", "expire", "db.t", "--older-than", _future(),
                          "--retain-last", "1", "--yes"])
    stats = control(proxy)
    assert code == 0, err
    assert stats["injected_503"] > 0 and stats["dropped"] > 0, stats  # the faults really happened
    assert "retrying" in err  # --verbose names the retries
    expire = json.loads(out)
    assert expire["failed_deletes"] == []
    deleted = {f["path"] for f in expire["deleted_files"]}
    # A1's 4 removed files go; A2's 4 removed files stay: the tag still reaches them.
    deleted_data = {p for p in deleted if "/data/" in p}
    assert len(deleted_data) == 4 and all("/a1-" in p for p in deleted_data)

    _faults(proxy, False)
    after_expire = _objects(catalog, loc)
    reach = _reachable_by_retained(catalog)
    assert reach <= after_expire, sorted(reach - after_expire)[:5]  # every reachable file exists
    assert sum("/a2-" in p for p in reach) == 12 and not deleted_data & reach
    assert after_expire == (before - deleted) | {expire["metadata_location"]}

    _faults(proxy, True)
    code, out, err = flaky_cli(["-o", "json", "remove-orphans", "db.t", "--older-than", _future(),
                          "--force", "--yes"])
    stats = control(proxy)
    assert code == 0, err
    assert stats["injected_503"] + stats["dropped"] > 0, stats
    orphans = json.loads(out)
    assert orphans["failed_deletes"] == []
    assert set(orphans["deleted_files"]) == planted
    _faults(proxy, False)
    after = _objects(catalog, loc)
    assert _reachable_by_retained(catalog) <= after
    assert after == after_expire - planted


def test_drop_purge_finishes_through_503s_and_resets(scene):
    from tools.s3proxy import control

    catalog, t, proxy, flaky_cli = scene
    loc = t.location
    assert _objects(catalog, loc)
    _faults(proxy, True)
    code, out, err = flaky_cli(["-o", "json", "drop", "db.t", "--purge", "--yes"])
    stats = control(proxy)
    _faults(proxy, False)
    assert code == 0, err
    assert stats["injected_503"] + stats["dropped"] > 0, stats
    d = json.loads(out)
    failed = {f["path"] for f in d["failed_deletes"]}
    left = _objects(catalog, loc)
    assert left == failed  # whatever could not be deleted is reported, the rest is gone
    assert not failed  # and with bounded retries, 20% faults leave nothing behind


def test_bulk_delete_reports_per_key_failures_and_never_raises(moto_s3, proxy, s3_prefix):
    """A request that fails for good (every attempt answered 503) fails only its keys: they are
    reported with the reason; the call returns."""
    from icectl.io import FileIO
    from tools.s3proxy import control

    direct = FileIO(dict(moto_s3))
    paths = [f"{s3_prefix}/bulk/f{i}" for i in range(25)]
    for p in paths:
        direct.write(p, b"x")
    flaky = FileIO({**moto_s3, "s3.endpoint": proxy, "s3.retry.max-attempts": "2", "s3.delete.batch-size": "10"})
    control(proxy, fail_503=1.0, drop=0.0)
    try:
        failed = flaky.delete_many(paths, guard=PathGuard(s3_prefix))
    finally:
        control(proxy, fail_503=0.0, drop=0.0)
    assert set(failed) == set(paths)
    assert all("SlowDown" in why or "reduce your request rate" in why for why in failed.values()), failed
    assert {f.path for f in direct.list_files(f"{s3_prefix}/bulk")} == set(paths)
    assert flaky.delete_many(paths, guard=PathGuard(s3_prefix)) == {}
    assert list(direct.list_files(f"{s3_prefix}/bulk")) == []


@pytest.mark.parametrize("code, retried", [("InternalError", True), ("SlowDown", True), ("AccessDenied", False)])
def test_bulk_delete_keys_that_s3_fails_inside_a_successful_answer(moto_s3, proxy, s3_prefix, code, retried):
    """S3 may answer DeleteObjects 200 and still list keys it did not delete. A transient code
    (InternalError, SlowDown) is retried for those keys alone, in later rounds; any other code
    (AccessDenied) is reported at once. Either way what is reported is exactly what is left."""
    from icectl.io import FileIO
    from tools.s3proxy import control

    direct = FileIO(dict(moto_s3))
    paths = [f"{s3_prefix}/keys-{code}/f{i:03d}" for i in range(200)]
    for p in paths:
        direct.write(p, b"x")
    flaky = FileIO({**moto_s3, "s3.endpoint": proxy, "s3.delete.batch-size": "50"})
    control(proxy, key_error=0.3, key_error_code=code)
    try:
        failed = flaky.delete_many(paths, guard=PathGuard(s3_prefix))
        stats = control(proxy)
    finally:
        control(proxy, key_error=0.0)
    left = {f.path for f in direct.list_files(f"{s3_prefix}/keys-{code}")}
    assert stats["key_errors"] >= 30, stats  # about 60 of 200 keys in the first round
    assert set(failed) == left
    assert all(why.startswith(f"{code}: ") for why in failed.values()), failed
    if retried:
        # three rounds: a key is left only when it failed in each (0.3**3 of them, about 5)
        assert len(failed) < stats["key_errors"] / 2, (len(failed), stats)
        assert stats["by_method"]["POST"] > 4  # the 4 batches, then the retry rounds
    else:
        assert len(failed) == stats["key_errors"] and stats["by_method"]["POST"] == 4, stats
    assert flaky.delete_many(sorted(failed), guard=PathGuard(s3_prefix)) == {}
    assert list(direct.list_files(f"{s3_prefix}/keys-{code}")) == []
