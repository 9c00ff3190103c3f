"""remove-orphans and expire on S3 (moto server on loopback): exactly the planted orphans are
found and removed; expire deletes only what expired snapshots alone reach."""
from __future__ import annotations

import datetime as dt
import json

import pytest

from test_s3 import cli, upload_data_file, write_config  # noqa: E402  (same folder)

pytestmark = pytest.mark.s3


@pytest.fixture
def s3_table(moto_s3, s3_prefix, tmp_path, monkeypatch):
    from icectl.catalog import build_catalog, resolve_catalog_config
    from helpers import create_table
    from helpers import append_files

    props = {"type": "sql", "uri": f"sqlite:///{tmp_path / 'catalog.db'}", "warehouse": f"{s3_prefix}/wh", **moto_s3}
    monkeypatch.setenv("ICECTL_CONFIG", write_config(tmp_path / "icectl.yaml", {"s3cat": props}))
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    catalog = build_catalog(resolve_catalog_config("s3cat"))
    t = create_table(catalog, ("db", "t"), schema_text="id:long!, name:string", partition_by="id",
                     format_version=2)
    for i in range(3):
        f = upload_data_file(catalog.io, f"{t.location}/data/id={i}/f{i}.parquet", [i], [f"n{i}"])
        t = append_files(t, [f.__class__(**{**f.__dict__, "partition": (i,)})])
    return catalog, t


def _future() -> str:
    # moto stamps objects with the upload time: a cut-off in the future makes reachability alone
    # decide (and needs --force, as any cut-off under 3 days does).
    return (dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1)).isoformat()


def test_remove_orphans_on_s3_finds_exactly_the_planted_ones(s3_table):
    catalog, t = s3_table
    io = catalog.io
    planted = [f"{t.location}/data/orphan-1.parquet", f"{t.location}/data/id=9/orphan-2.parquet",
               f"{t.location}/metadata/stale-manifest.avro", f"{t.location}/metadata/00099-stale.metadata.json"]
    for p in planted:
        io.write(p, b"x")
    io.write(f"{t.location}/data/.hidden-crc", b"x")  # hidden: never listed
    before = {f.path for f in io.list_files(t.location)}

    code, out, err = cli(["-c", "s3cat", "remove-orphans", "db.t", "--dry-run", "--older-than", _future(), "--force",
                          "-o", "json"])
    assert code == 0, err
    assert sorted(json.loads(out)["orphan_files"]) == sorted(planted)
    assert {f.path for f in io.list_files(t.location)} == before  # a dry run deletes nothing

    code, out, err = cli(["-c", "s3cat", "remove-orphans", "db.t", "--older-than", _future(), "--force", "--yes",
                          "-o", "json"])
    assert code == 0, err
    assert sorted(json.loads(out)["deleted_files"]) == sorted(planted)
    assert {f.path for f in io.list_files(t.location)} == before - set(planted)
    code, out, err = cli(["-c", "s3cat", "files", "db.t", "-o", "json"])
    assert code == 0, err
    assert len(json.loads(out)) == 3
    # s3a:// names the same objects: the same table through an s3a location finds no orphans left.
    code, out, err = cli(["-c", "s3cat", "remove-orphans", "db.t", "--dry-run", "--older-than", _future(), "--force",
                          "-o", "json"])
    assert json.loads(out)["orphan_files"] == []


def test_expire_on_s3_deletes_only_expired_files(s3_table):
    from icectl.table.snapshot_producer import SnapshotChange
    from helpers import commit_snapshot

    catalog, t = s3_table
    io = catalog.io
    # An overwrite removes f0: after expiring the older snapshots, only f0 and old manifest lists go.
    entry = next(e for e in t.live_entries(t.metadata.current_snapshot) if e.data_file.file_path.endswith("f0.parquet"))
    t = commit_snapshot(t, SnapshotChange("overwrite", removed=[(entry, entry.data_file)]))
    before = {f.path for f in io.list_files(t.location)}
    code, out, err = cli(["-c", "s3cat", "expire", "db.t", "--older-than", _future(), "--retain-last", "1",
                          "--yes", "-o", "json"])
    assert code == 0, err
    result = json.loads(out)
    assert len(result["expired_snapshot_ids"]) == 3
    deleted = {f["path"] for f in result["deleted_files"]}
    assert entry.data_file.file_path in deleted
    assert {f["kind"] for f in result["deleted_files"]} <= {"data", "manifest", "manifest-list"}
    after = {f.path for f in io.list_files(t.location)}
    assert after == (before - deleted) | {result["metadata_location"]}  # the commit's new metadata file
    code, out, err = cli(["-c", "s3cat", "files", "db.t", "-o", "json"])
    live = {f["file_path"] for f in json.loads(out)}
    assert len(live) == 2 and live <= after
